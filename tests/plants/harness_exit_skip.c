// SPDX-License-Identifier: GPL-2.0
/*
 * Plant, on the tree's kselftest_harness.h: a test's child that exits with the harness's skip
 * code (PLANT_SKIP_EXIT, read from the tree's harness by tests/host/plants.sh) without SKIP(), which
 * the harness records as a skip, reason "unknown".
 */
#include <unistd.h>

#include "harness.h"

TEST(dies_with_the_skip_code)
{
	_exit(PLANT_SKIP_EXIT);
}

LAB_HARNESS_MAIN
