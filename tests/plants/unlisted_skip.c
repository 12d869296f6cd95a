// SPDX-License-Identifier: GPL-2.0
/* Plant, on the tree's kselftest_harness.h: a case that skips, with a reason, that no skip budget lists. */
#include "harness.h"

TEST(skips_unlisted)
{
	SKIP(return, "a plant's skip");
}

LAB_HARNESS_MAIN
