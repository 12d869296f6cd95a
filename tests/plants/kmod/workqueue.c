// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a stuck workqueue, which the workqueue watchdog reports ("BUG:
 * workqueue lockup", then the busy pools with each work in flight): a work item that runs
 * without sleeping until the watchdog has reported it (watch.h; it yields the CPU, so that
 * neither a soft lockup nor an RCU stall is reported), with a second one queued behind it on the
 * same CPU's pool, which cannot start while the first runs. The plant's boot sets the watchdog's
 * threshold to 1 s. The loading task waits for the first, killably (a wait the hung-task detector
 * skips). Loading then succeeds.
 */
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/workqueue.h>
#include "watch.h"

static DECLARE_COMPLETION(plant_done);

static void plant_workqueue_spin(struct work_struct *work)
{
	unsigned long end = jiffies + PLANT_WATCH_MAX;

	while (!plant_watched() && time_before(jiffies, end))
		cond_resched();
	complete(&plant_done);
}

static void plant_workqueue_behind(struct work_struct *work)
{
}

static DECLARE_WORK(plant_spin, plant_workqueue_spin);
static DECLARE_WORK(plant_behind, plant_workqueue_behind);

static int __init plant_workqueue_init(void)
{
	int cpu = raw_smp_processor_id();

	pr_info("dontfork-lab plant: a work item running on CPU %d until a lockup is reported\n",
		cpu);
	plant_watch("plant_workqueue_spin");
	queue_work_on(cpu, system_wq, &plant_spin);
	queue_work_on(cpu, system_wq, &plant_behind);
	if (wait_for_completion_killable(&plant_done)) {
		plant_unwatch();
		return -EINTR;
	}
	plant_unwatch();
	return 0;
}
module_init(plant_workqueue_init);

MODULE_DESCRIPTION("dontfork-lab plant: a stuck workqueue at load");
MODULE_LICENSE("GPL");
