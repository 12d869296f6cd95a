// SPDX-License-Identifier: GPL-2.0
/*
 * Every row of the demo, asserted: the verdict derived from the observed data and PFNs
 * must be the one this kernel is expected to give, and the observations that make the
 * row's point must be there (the SIGSEGV, the child's new page, the leak).
 */
#define _GNU_SOURCE
#include <string.h>

#include "harness.h"
#include "expect.h"
#include "lab.h"
#include "pindma_lib.h"
#include "scenario.h"

FIXTURE(row)
{
	struct observation obs;
	const struct scenario *s;
};

FIXTURE_VARIANT(row)
{
	const char *name;
	uint32_t engine;
};

#define ROW(id, row_name, eng) \
	FIXTURE_VARIANT_ADD(row, id) { .name = row_name, .engine = PINDMA_ENGINE_##eng }

ROW(gup_cpu, "gup", CPU);
ROW(gup_edu, "gup", EDU);
ROW(gup_child_exited_cpu, "gup-child-exited", CPU);
ROW(gup_child_exited_edu, "gup-child-exited", EDU);
ROW(gup_dontfork_cpu, "gup-dontfork", CPU);
ROW(gup_dontfork_edu, "gup-dontfork", EDU);
ROW(gup_dontfork_dofork_cpu, "gup-dontfork-dofork", CPU);
ROW(gup_dontfork_dofork_edu, "gup-dontfork-dofork", EDU);
ROW(pin_cpu, "pin", CPU);
ROW(pin_edu, "pin", EDU);
ROW(pin_dontfork_cpu, "pin-dontfork", CPU);
ROW(pin_dontfork_edu, "pin-dontfork", EDU);
ROW(gup_leak_cpu, "gup-leak", CPU);
ROW(gup_leak_edu, "gup-leak", EDU);
ROW(pin_switch_on_cpu, "pin-switch-on", CPU);
ROW(pin_switch_on_edu, "pin-switch-on", EDU);
ROW(pin_switch_on_dontfork_cpu, "pin-switch-on-dontfork", CPU);
ROW(pin_switch_on_dontfork_edu, "pin-switch-on-dontfork", EDU);
ROW(pin_switch_off_cpu, "pin-switch-off", CPU);
ROW(pin_switch_off_edu, "pin-switch-off", EDU);
ROW(mlock, "mlock", AUTO);
ROW(mlock_dontfork, "mlock-dontfork", AUTO);

FIXTURE_SETUP(row)
{
	self->s = scenario_find(variant->name);
	ASSERT_NE(NULL, self->s);
	if (!scenario_run(self->s, variant->engine, &self->obs) && !self->obs.skipped)
		ASSERT_TRUE(false) TH_LOG("%s could not run: %s", variant->name, self->obs.error);
}

/* A row the kernel's series cannot play (scenario_run() says why) is skipped, never passed. */
#define SKIP_UNPLAYED() do { \
	if (self->obs.skipped) \
		SKIP(return, "%s: vm.fork_share_pinned", self->obs.skipped); \
} while (0)

FIXTURE_TEARDOWN(row)
{
}

TEST_F(row, verdict_is_the_expected_one)
{
	const struct observation *o = &self->obs;

	SKIP_UNPLAYED();

	if (self->s->mode && variant->engine != PINDMA_ENGINE_AUTO)
		EXPECT_EQ(variant->engine, o->engine) TH_LOG("served by the wrong engine");
	/* PFNs come from pagemap and the driver: both must have answered. */
	ASSERT_NE(0ULL, o->par_before);
	if (self->s->mode) {
		ASSERT_EQ(o->drv_before, o->par_before);
		ASSERT_NE(0ULL, o->drv_after);
	}
	ASSERT_NE(NULL, lab_expect(self->s->name))
		TH_LOG("no expectation for %s on %s", self->s->name, lab_kernel_release());
	EXPECT_STREQ(lab_expect(self->s->name), o->verdict)
		TH_LOG("dev->par %d par->dev %d pfn drv %lx->%lx par %lx->%lx->%lx child %lx->%lx",
		       o->device_write_seen, o->parent_write_seen, (long)o->drv_before,
		       (long)o->drv_after, (long)o->par_before, (long)o->par_fork,
		       (long)o->par_after, (long)o->child_fork, (long)o->child_after);
}

TEST_F(row, observations_make_the_point)
{
	const struct observation *o = &self->obs;
	const char *n = self->s->name;

	SKIP_UNPLAYED();

	if (self->s->dontfork && !self->s->dofork) {
		/* The range is not in the child: no PFN, and touching it kills the child. */
		EXPECT_EQ(0ULL, o->child_fork);
		EXPECT_EQ((int)CHILD_SEGV, (int)o->child);
		EXPECT_EQ(o->par_before, o->par_after);
	}
	if (!strcmp(n, "gup") || !strcmp(n, "gup-leak") || !strcmp(n, "gup-dontfork-dofork") ||
	    !strcmp(n, "pin-switch-on")) {
		/* Shared at fork, then the parent's write moved the parent only. */
		EXPECT_EQ(o->drv_before, o->child_fork);
		EXPECT_NE(o->drv_after, o->par_after);
		EXPECT_EQ(o->drv_after, o->child_after);
		EXPECT_FALSE(o->device_write_seen);
		EXPECT_FALSE(o->parent_write_seen);
	}
	if (!strcmp(n, "gup-leak"))
		EXPECT_EQ((int)CHILD_DEVICE, (int)o->child) TH_LOG("the child should read the device's bytes");
	if (!strcmp(n, "gup-child-exited")) {
		EXPECT_EQ((int)CHILD_EXITED, (int)o->child);
		EXPECT_NE(o->drv_after, o->par_after);
	}
	if (!strcmp(n, "pin") || !strcmp(n, "pin-switch-off")) {
		/* Fork gave the child its own copy with the pre-fork bytes. */
		EXPECT_NE(0ULL, o->child_fork);
		EXPECT_NE(o->drv_before, o->child_fork);
		EXPECT_TRUE(o->child_prefork);
		EXPECT_EQ(o->par_before, o->par_after);
	}
	if (!strcmp(n, "mlock"))
		EXPECT_NE(o->par_before, o->par_after);
}

LAB_HARNESS_MAIN
