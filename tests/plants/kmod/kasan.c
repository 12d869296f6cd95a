// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh (debug flavour: KASAN): a read of freed memory, which KASAN
 * reports ("BUG: KASAN: ...use-after-free"). Loading then succeeds.
 */
#include <linux/compiler.h>
#include <linux/module.h>
#include <linux/slab.h>

static int __init plant_kasan_init(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("dontfork-lab plant: read a freed byte: %d\n", READ_ONCE(p[8]));
	return 0;
}
module_init(plant_kasan_init);

MODULE_DESCRIPTION("dontfork-lab plant: a use-after-free at load");
MODULE_LICENSE("GPL");
