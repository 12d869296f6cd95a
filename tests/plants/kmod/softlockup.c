// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a soft lockup, which the kernel's soft-lockup detector reports
 * ("BUG: soft lockup"): the loading task spins in the kernel without scheduling for 6 s, three
 * times the threshold of the plant's boot (kernel.watchdog_thresh=1: 2 s). Loading then succeeds.
 */
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/processor.h>

static int __init plant_softlockup_init(void)
{
	unsigned long end = jiffies + 6 * HZ;

	pr_info("dontfork-lab plant: spinning for 6 s without scheduling\n");
	while (time_before(jiffies, end))
		cpu_relax();
	return 0;
}
module_init(plant_softlockup_init);

MODULE_DESCRIPTION("dontfork-lab plant: a soft lockup at load");
MODULE_LICENSE("GPL");
