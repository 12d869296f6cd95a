// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a hung task, which the kernel's hung-task detector reports
 * ("blocked for more than"): the loading task sleeps uninterruptibly, in one sleep (a task that
 * woke in between would not count as hung), until the detector has reported it (watch.h; the
 * plant's boot sets kernel.hung_task_timeout_secs=2). Loading then succeeds.
 */
#include <linux/module.h>
#include "watch.h"

static int __init plant_hungtask_init(void)
{
	pr_info("dontfork-lab plant: sleeping uninterruptibly until a hung task is reported\n");
	plant_watch("plant_hungtask_init");
	wait_event_timeout(plant_seen_wq, plant_watched(), PLANT_WATCH_MAX);
	plant_unwatch();
	return 0;
}
module_init(plant_hungtask_init);

MODULE_DESCRIPTION("dontfork-lab plant: a hung task at load");
MODULE_LICENSE("GPL");
