// SPDX-License-Identifier: GPL-2.0
/*
 * A short pindma_fuzz run inside make test (the long one is make fuzz): a fixed seed, so
 * that a finding replays with `make fuzz FUZZ_SEED=...`, several processes and threads with
 * forks, and the fuzzer's own checks: every answer's errno, every child's exit, VmPin, the
 * FOLL_PIN counters, the LRU pages nothing owns and the driver's counters, and a floor of the
 * checks that only a granted pin allows.
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
	 * Four processes of three threads each at the driver at once. --floor: this seed makes
	 * about 600 own-page checks and 400 children's EPERM checks; a driver refusing what it
	 * should grant would skip them, and pass every check it skipped (one refusing every pin
	 * once a file holds 8 handles left 211 and 116).
	 */
	LAB_NEEDS_CPUS(2);
	snprintf(cmd, sizeof(cmd), "%s/bin/pindma_fuzz --seed " SEED " --ops 20000 --procs 4 "
		 "--threads 3 --floor 250", lab_root());
	status = system(cmd);

	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("replay: make fuzz FUZZ_SEED=" SEED);
}

LAB_HARNESS_MAIN
