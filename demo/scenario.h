/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fork/write scenarios of the demo, shared with the tests that assert them.
 * A scenario only sets the stage; the verdict is derived from what was observed.
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

enum child_view {
	CHILD_NONE,		/* not asked */
	CHILD_OLD,		/* reads the pre-fork bytes */
	CHILD_PARENT,		/* reads the parent's post-fork write */
	CHILD_DEVICE,		/* reads the device's post-fork write: the leak */
	CHILD_OTHER,		/* reads something else */
	CHILD_SEGV,		/* touching the range killed it (not inherited) */
	CHILD_EXITED,		/* exited before the parent wrote */
};

/* vm.fork_share_pinned (kernel-patches/0002) during a scenario. */
enum knob { KNOB_LEAVE, KNOB_ON, KNOB_OFF };

struct scenario {
	const char *name;	/* short id, used by tests and --only */
	const char *title;
	uint32_t mode;		/* PINDMA_MODE_*, or 0: no driver, mlock() only */
	bool dontfork;		/* MADV_DONTFORK before the fork */
	bool dofork;		/* then MADV_DOFORK, still before the fork */
	bool child_exits;	/* the child exits before the parent writes */
	bool child_reads_device;/* the child reads where the device wrote */
	const char *note;	/* printed under the row */
	enum knob knob;		/* the fork switch, restored afterwards */
};

struct observation {
	/* Page frame numbers: 0 when the party has no page there. */
	uint64_t drv_before, par_before;	/* before the fork */
	uint64_t par_fork, child_fork;		/* after the fork, before the write */
	uint64_t drv_after, par_after, child_after; /* after the parent's write */
	bool device_write_seen;	/* the parent reads what the device wrote */
	bool parent_write_seen;	/* the device reads what the parent wrote */
	bool child_prefork;	/* the child reads the pre-fork bytes */
	enum child_view child;	/* what the child saw at the end */
	uint32_t engine;	/* the engine that served the DMA */
	const char *verdict;	/* ORPHANED or COHERENT, from the above */
	char error[160];	/* set when the scenario could not run */
	const char *skipped;	/* why it was not played: the kernel lacks a lab patch it needs */
};

extern const struct scenario scenarios[];
extern const unsigned int n_scenarios;

const struct scenario *scenario_find(const char *name);
/* Play one scenario with the given engine; false (and obs->error) when it could not run. */
bool scenario_run(const struct scenario *s, uint32_t engine, struct observation *obs);
const char *child_view_name(enum child_view v);

#endif
