// SPDX-License-Identifier: GPL-2.0
/*
 * Plant, on the tree's kselftest_harness.h: an expectation fails, then SKIP() runs, which sets the
 * test's result afresh: the harness reports a skip, and the failure is gone.
 */
#include "harness.h"

TEST(fails_then_skips)
{
	EXPECT_EQ(1, 2);
	SKIP(return, "skipped after a failed expectation");
}

LAB_HARNESS_MAIN
