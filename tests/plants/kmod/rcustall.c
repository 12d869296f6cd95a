// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: an RCU CPU stall, which RCU's stall detector reports ("rcu: INFO:
 * rcu_sched self-detected stall on CPU", or "detected stalls on CPUs/tasks" from another CPU): a
 * grace period is asked for, and the loading task then spins with preemption off, a quiescent
 * state of none, until RCU has reported the stall (watch.h; the plant's boot sets the stall timeout
 * to 3 s). The grace period
 * starts on another CPU: the plant's boot has two. The soft-lockup watchdog is touched, so that
 * only RCU reports. Loading then succeeds.
 */
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/nmi.h>
#include <linux/preempt.h>
#include <linux/processor.h>
#include <linux/rcupdate.h>
#include "watch.h"

static int __init plant_rcustall_init(void)
{
	unsigned long end = jiffies + PLANT_WATCH_MAX;

	pr_info("dontfork-lab plant: holding a grace period off until a stall is reported\n");
	plant_watch("plant_rcustall_init");
	start_poll_synchronize_rcu();
	preempt_disable();
	while (!plant_watched() && time_before(jiffies, end)) {
		touch_softlockup_watchdog();
		cpu_relax();
	}
	preempt_enable();
	plant_unwatch();
	return 0;
}
module_init(plant_rcustall_init);

MODULE_DESCRIPTION("dontfork-lab plant: an RCU CPU stall at load");
MODULE_LICENSE("GPL");
