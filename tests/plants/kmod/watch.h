/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A plant's gate on the report it causes: a console of the plant's own (enabled without matching
 * the command line, as netconsole's is) sees every line the kernel prints to its consoles, and
 * marks the one holding the plant's needle: where another task or CPU takes the stack after the
 * report's header (an RCU stall, a workqueue lockup, a hung task), the plant's own function,
 * which only that stack names, so that the plant is not let go before it; where the report's own
 * CPU prints it all from an interrupt the plant cannot leave (a soft lockup), the header. The
 * plant keeps its fault up until the kernel has reported it, however slowly the host runs the
 * guest, not for a number of seconds; a bound far past any report (PLANT_WATCH_MAX) only keeps a
 * detector that never reports from hanging the boot, and the run then fails on the report's
 * absence.
 */
#ifndef PLANT_WATCH_H
#define PLANT_WATCH_H

#include <linux/console.h>
#include <linux/jiffies.h>
#include <linux/string.h>
#include <linux/wait.h>

#define PLANT_WATCH_MAX (120 * HZ)

static const char *plant_needle;
static bool plant_seen;
static DECLARE_WAIT_QUEUE_HEAD(plant_seen_wq);

static void plant_watch_write(struct console *con, const char *s, unsigned int n)
{
	if (!READ_ONCE(plant_seen) && strnstr(s, plant_needle, n)) {
		WRITE_ONCE(plant_seen, true);
		wake_up(&plant_seen_wq);
	}
}

static struct console plant_watch_console = {
	.name = "plantwatch",
	.write = plant_watch_write,
	.flags = CON_ENABLED,
	.index = -1,
};

/* From now on, the kernel's lines are looked through for needle. */
static inline void plant_watch(const char *needle)
{
	plant_needle = needle;
	register_console(&plant_watch_console);
}

static inline bool plant_watched(void)
{
	return READ_ONCE(plant_seen);
}

static inline void plant_unwatch(void)
{
	unregister_console(&plant_watch_console);
}

#endif
