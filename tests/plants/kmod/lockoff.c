// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: turns lock debugging off at load, silently,
 * as a report or an unreliable taint does. Lockdep then checks nothing for the
 * rest of the run, and make test must say so (debug kernel only).
 */
#include <linux/module.h>
#include <linux/debug_locks.h>

static int __init plant_lockoff_init(void)
{
	debug_locks_off();
	pr_info("dontfork-lab plant: lock debugging turned off (debug_locks %d)\n",
		debug_locks);
	return 0;
}
module_init(plant_lockoff_init);

static void __exit plant_lockoff_exit(void)
{
}
module_exit(plant_lockoff_exit);

MODULE_DESCRIPTION("dontfork-lab plant: turns lock debugging off at load");
MODULE_LICENSE("GPL");
