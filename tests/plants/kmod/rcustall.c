// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: an RCU CPU stall, which RCU's stall detector reports ("rcu: INFO:
 * rcu_sched self-detected stall on CPU", or "detected stalls on CPUs/tasks" from another CPU): a
 * grace period is asked for, and the loading task then spins with preemption off, a quiescent
 * state of none, for @seconds (past the stall timeout the plant's boot sets). The grace period
 * starts on another CPU: the plant's boot has two. The soft-lockup watchdog is touched, so that
 * only RCU reports. Loading then succeeds.
 */
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/nmi.h>
#include <linux/preempt.h>
#include <linux/processor.h>
#include <linux/rcupdate.h>

static unsigned int seconds = 10;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "how long to hold the grace period off");

static int __init plant_rcustall_init(void)
{
	unsigned long end;

	pr_info("dontfork-lab plant: holding a grace period off for %u s\n", seconds);
	start_poll_synchronize_rcu();
	end = jiffies + seconds * HZ;
	preempt_disable();
	while (time_before(jiffies, end)) {
		touch_softlockup_watchdog();
		cpu_relax();
	}
	preempt_enable();
	return 0;
}
module_init(plant_rcustall_init);

MODULE_DESCRIPTION("dontfork-lab plant: an RCU CPU stall at load");
MODULE_LICENSE("GPL");
