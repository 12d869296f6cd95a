// SPDX-License-Identifier: GPL-2.0
/*
 * A short pindma_fuzz run inside make test (the long one is make fuzz): a fixed seed, so
 * that a finding replays with `make fuzz FUZZ_SEED=...`, several processes and threads with
 * forks, and the fuzzer's own checks: every answer's errno, every child's exit, VmPin, the
 * FOLL_PIN counters, the LRU pages nothing owns and the driver's counters, and a floor on the
 * share of the pins every budget allows that the driver granted.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "harness.h"

#define SEED "20061402"

FIXTURE(fuzz)
{
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, short_run_finds_nothing, 600)
{
	char cmd[PATH_MAX + 64];
	int status;

	/*
	 * Four processes of three threads each at the driver at once. --floor: at least 95% of
	 * the pins of the threads' own pages granted (about 600 before the own-page checks, 400
	 * before a fork), where every budget allows each and 0 is the only right answer: a driver
	 * refusing what it should grant would skip the checks that follow, and pass them. A count
	 * as the floor (250) stayed green with one such pin in three refused (381 and 251 made).
	 */
	LAB_NEEDS_CPUS(2);
	snprintf(cmd, sizeof(cmd), "%s/bin/pindma_fuzz --seed " SEED " --ops 20000 --procs 4 "
		 "--threads 3 --floor 95", lab_root());
	status = system(cmd);

	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("replay: make fuzz FUZZ_SEED=" SEED);
}

LAB_HARNESS_MAIN
