// SPDX-License-Identifier: GPL-2.0
/*
 * Every O_DIRECT + fork row (demo/odirect.c), asserted: the verdict from the bytes the parent
 * finds must be the one this kernel is expected to give, and the observations that make the
 * row's point must agree with it (whose page the read landed in, the child's copy).
 */
#define _GNU_SOURCE
#include <string.h>

#include "harness.h"
#include "expect.h"
#include "lab.h"
#include "odirect.h"

FIXTURE(row)
{
	struct odirect_obs obs;
	const struct odirect_row *r;
};

FIXTURE_VARIANT(row)
{
	const char *name;
};

FIXTURE_VARIANT_ADD(row, no_fork) { .name = "odirect-no-fork" };
FIXTURE_VARIANT_ADD(row, fork) { .name = "odirect-fork" };
FIXTURE_VARIANT_ADD(row, dontfork) { .name = "odirect-dontfork" };
FIXTURE_VARIANT_ADD(row, own_page) { .name = "odirect-own-page" };
FIXTURE_VARIANT_ADD(row, ext4_no_fork) { .name = "odirect-ext4-no-fork" };
FIXTURE_VARIANT_ADD(row, ext4_fork) { .name = "odirect-ext4-fork" };
FIXTURE_VARIANT_ADD(row, ext4_dontfork) { .name = "odirect-ext4-dontfork" };
FIXTURE_VARIANT_ADD(row, ext4_own_page) { .name = "odirect-ext4-own-page" };

FIXTURE_SETUP(row)
{
	for (unsigned int i = 0; i < n_odirect_rows; i++)
		if (!strcmp(odirect_rows[i].name, variant->name))
			self->r = &odirect_rows[i];
	ASSERT_NE(NULL, self->r);
	ASSERT_TRUE(odirect_run(self->r, &self->obs))
		TH_LOG("%s could not run: %s", variant->name, self->obs.error);
}

FIXTURE_TEARDOWN(row)
{
}

TEST_F_TIMEOUT(row, verdict_is_the_expected_one, 60)
{
	const struct odirect_obs *o = &self->obs;
	const char *want = lab_expect(self->r->name);

	ASSERT_NE(NULL, want) TH_LOG("no expectation for %s on %s", self->r->name,
				     lab_kernel_release());
	EXPECT_STREQ(want, o->verdict) TH_LOG("on Linux %s", lab_kernel_release());
	EXPECT_LT(0, o->inflight);
	TH_LOG("%s: %s after %u play(s)", self->r->name, o->verdict, o->tries);
	ASSERT_NE(0ULL, o->pfn_before);

	if (!strcmp(o->verdict, "ORPHANED")) {
		/* The read's bytes in the last page went to the page the child kept. */
		EXPECT_EQ(2048, o->missing);
		EXPECT_NE(o->pfn_before, o->pfn_after);
		EXPECT_EQ(o->pfn_before, o->pfn_child);
		EXPECT_TRUE(o->child_has_data);
	} else {
		EXPECT_EQ(0, o->missing);
		EXPECT_EQ(o->pfn_before, o->pfn_after) TH_LOG("the parent's page moved");
	}
	if (self->r->dontfork) {
		EXPECT_EQ(0ULL, o->pfn_child) TH_LOG("the child has the range");
		EXPECT_FALSE(o->child_has_data);
	}
	if (!self->r->fork)
		EXPECT_EQ(0ULL, o->pfn_child);
}

LAB_HARNESS_MAIN
