// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh (debug flavour: DEBUG_LIST): a list_add() on a corrupted list,
 * which the list debugging reports ("list_add corruption") and refuses. Loading then succeeds.
 */
#include <linux/list.h>
#include <linux/module.h>

static int __init plant_listcorrupt_init(void)
{
	struct list_head head, other, entry;

	/* head's next says other, but other's prev does not say head. */
	INIT_LIST_HEAD(&other);
	head.next = &other;
	head.prev = &other;
	list_add(&entry, &head);
	return 0;
}
module_init(plant_listcorrupt_init);

MODULE_DESCRIPTION("dontfork-lab plant: a list corruption at load");
MODULE_LICENSE("GPL");
