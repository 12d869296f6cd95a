// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a kernel panic at load, which vm/boot's console check must turn
 * into a failed run even in a boot that resets by design (--expect-reset), where no exit marker
 * is due.
 */
#include <linux/kernel.h>
#include <linux/module.h>

static int __init plant_panic_init(void)
{
	panic("dontfork-lab plant: a panic at load");
	return 0;
}
module_init(plant_panic_init);

MODULE_DESCRIPTION("dontfork-lab plant: a kernel panic at load");
MODULE_LICENSE("GPL");
