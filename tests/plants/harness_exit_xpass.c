// SPDX-License-Identifier: GPL-2.0
/*
 * Plant, on the tree's kselftest_harness.h: a test's child that exits 3, which 6.12's harness
 * records as KSFT_XPASS ("ok N name # XPASS unknown") and 6.1's as a failure. tests/ktap.py must
 * fail it either way: an XPASS is not a pass the lab asked for.
 */
#include <unistd.h>

#include "harness.h"

TEST(exits_3)
{
	_exit(3);
}

LAB_HARNESS_MAIN
