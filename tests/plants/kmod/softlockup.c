// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a soft lockup, which the kernel's soft-lockup detector reports
 * ("BUG: soft lockup"): the loading task spins in the kernel without scheduling until the detector
 * has reported it (watch.h; the plant's boot sets kernel.watchdog_thresh=1: 2 s). Loading then
 * succeeds.
 */
#include <linux/module.h>
#include <linux/processor.h>
#include "watch.h"

static int __init plant_softlockup_init(void)
{
	unsigned long end = jiffies + PLANT_WATCH_MAX;

	pr_info("dontfork-lab plant: spinning without scheduling until a soft lockup is reported\n");
	plant_watch("soft lockup");
	while (!plant_watched() && time_before(jiffies, end))
		cpu_relax();
	plant_unwatch();
	return 0;
}
module_init(plant_softlockup_init);

MODULE_DESCRIPTION("dontfork-lab plant: a soft lockup at load");
MODULE_LICENSE("GPL");
