// SPDX-License-Identifier: GPL-2.0
/*
 * Plant, on the tree's kselftest_harness.h: a diagnostic of several lines, one of them a result line
 * of its own ("ok 2 ..."), as a test logging another program's output would print. The lab's
 * harness.h puts "# " before every line of a TH_LOG(), so the program still reports exactly its one
 * case; without that, the runner would read a second result.
 */
#include "harness.h"

TEST(logs_a_result_line)
{
	TH_LOG("the demo printed:\nok 2 injected by a diagnostic\n1..2");
}

LAB_HARNESS_MAIN
