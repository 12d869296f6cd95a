// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a kernel WARN, which vm/boot's console check must turn into a
 * failed run. Loading succeeds, so that only the console check can.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init plant_warn_init(void)
{
	WARN(1, "dontfork-lab plant: a planted WARN\n");
	return 0;
}
module_init(plant_warn_init);

MODULE_DESCRIPTION("dontfork-lab plant: one kernel WARN at load");
MODULE_LICENSE("GPL");
