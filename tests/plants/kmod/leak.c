// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: one unreferenced object, which kmemleak must
 * report and make test must turn into a failed run (debug kernel only).
 */
#include <linux/module.h>
#include <linux/slab.h>

static int __init plant_leak_init(void)
{
	void *p = kmalloc(512, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	/* No pointer to it is kept anywhere: kmemleak must report it. */
	pr_info("dontfork-lab plant: leaked 512 bytes at %p\n", p);
	return 0;
}
module_init(plant_leak_init);

static void __exit plant_leak_exit(void)
{
}
module_exit(plant_leak_exit);

MODULE_DESCRIPTION("dontfork-lab plant: leaks one object at load");
MODULE_LICENSE("GPL");
