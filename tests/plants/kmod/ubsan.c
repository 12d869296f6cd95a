// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh (debug flavour: UBSAN_SHIFT): a shift past the width of int,
 * which UBSAN reports ("UBSAN: shift-out-of-bounds"). Loading then succeeds.
 */
#include <linux/compiler.h>
#include <linux/module.h>

static int __init plant_ubsan_init(void)
{
	int shift = 40, one = 1;

	OPTIMIZER_HIDE_VAR(shift);
	pr_info("dontfork-lab plant: 1 << 40 as an int: %d\n", one << shift);
	return 0;
}
module_init(plant_ubsan_init);

MODULE_DESCRIPTION("dontfork-lab plant: an out-of-bounds shift at load");
MODULE_LICENSE("GPL");
