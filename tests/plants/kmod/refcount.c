// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a reference count taken below zero, which refcount_t reports
 * ("refcount_t: underflow; use-after-free.") and saturates. Loading then succeeds.
 */
#include <linux/module.h>
#include <linux/refcount.h>

static int __init plant_refcount_init(void)
{
	refcount_t ref = REFCOUNT_INIT(1);

	if (refcount_dec_and_test(&ref))
		pr_info("dontfork-lab plant: the last reference put; putting it again\n");
	if (refcount_dec_and_test(&ref))
		pr_info("dontfork-lab plant: refcount_t let it reach zero twice\n");
	return 0;
}
module_init(plant_refcount_init);

MODULE_DESCRIPTION("dontfork-lab plant: a refcount_t underflow at load");
MODULE_LICENSE("GPL");
