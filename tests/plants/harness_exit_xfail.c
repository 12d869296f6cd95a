// SPDX-License-Identifier: GPL-2.0
/*
 * Plant, on the tree's kselftest_harness.h: a test's child that exits 2, which 6.12's harness
 * records as KSFT_XFAIL ("ok N name # XFAIL unknown") and 6.1's as a failure. tests/ktap.py must
 * fail it either way: an XFAIL is not a pass the lab asked for.
 */
#include <unistd.h>

#include "harness.h"

TEST(exits_2)
{
	_exit(2);
}

LAB_HARNESS_MAIN
