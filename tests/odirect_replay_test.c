// SPDX-License-Identifier: GPL-2.0
/*
 * The O_DIRECT single-reader rows play again a play whose outcome proves nothing raced (the read
 * was over by the parent's write: a host that stalled the parent), up to five plays, and count
 * those plays (late_plays). The rule itself, on made-up observations: each of its conditions alone
 * keeps a play from being late. Then odirect_demo's odirect-fork row with N of its plays made late
 * (LAB_ODIRECT_LATE=N: they wait for the read to end before the parent's write), on the "odirect"
 * disk: where this kernel's table expects ORPHANED (the child keeps the page the read fills), two
 * late plays are played again and counted, and the next gives the verdict; every play late, the
 * row stops at five plays, could not run, and says how many were late (a play that did not see the
 * read in flight, as the first after boot may not, is played again too). Where the child gets a
 * copy at fork, no play is late and the verdict is the table's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "row.h"

#define ROW "odirect-fork"
#define MAX_TRIES 5

/* A late play: the parent moved to a full copy, the child kept the page the read filled. */
static const struct odirect_obs late = {
	.pfn_before = 0x1000, .pfn_after = 0x2000, .pfn_child = 0x1000,
	.missing = 0, .child_has_data = true,
};

TEST(the_late_rule_wants_every_one_of_its_conditions)
{
	struct odirect_obs o;

	EXPECT_TRUE(odirect_play_late(&late));
	o = late;
	o.missing = 1;
	EXPECT_FALSE(odirect_play_late(&o)) TH_LOG("a byte missing: the race happened");
	o = late;
	o.child_has_data = false;
	EXPECT_FALSE(odirect_play_late(&o)) TH_LOG("the child lacks the read's bytes");
	o = late;
	o.pfn_after = o.pfn_before;
	EXPECT_FALSE(odirect_play_late(&o)) TH_LOG("the parent did not move");
	o = late;
	o.pfn_child = 0x3000;
	EXPECT_FALSE(odirect_play_late(&o)) TH_LOG("the child's page is not the read's");
}

/*
 * odirect_demo's ROW with its first N plays late: its one record in rec, the demo's exit status
 * in *status; 0, or -1 when no single record of ROW came.
 */
static int play_late(struct __test_metadata *_metadata, int n, struct record *rec, int *status)
{
	char cmd[160], line[8192];
	int records = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "LAB_ODIRECT_LATE=%d /lab/demo/odirect_demo --only %s --json", n,
		 ROW);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (record_parse_json(line, rec)) {
			TH_LOG("unreadable record: %s: %.120s", rec->reason, line);
			continue;
		}
		records += rec->row && !strcmp(rec->row->name, ROW);
	}
	*status = pclose(p);
	*status = WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
	if (records != 1)
		TH_LOG("%d records of %s", records, ROW);
	return records == 1 ? 0 : -1;
}

/* Whether this kernel's table has the child keep the page the read fills (ORPHANED). */
static bool child_keeps_page(void)
{
	const char *want = expect_verdict(ROW);

	return want && !strcmp(want, "ORPHANED");
}

TEST(two_late_plays_are_played_again_and_counted)
{
	struct record rec;
	int status;

	ASSERT_EQ(0, play_late(_metadata, 2, &rec, &status));
	TH_LOG("%s: %s, observed %s, expected %s, late plays %lld of %lld; %s", ROW,
	       record_status_name(rec.status), rec.observed, rec.expected,
	       (long long)rec.odirect.late_plays, (long long)rec.odirect.tries, rec.reason);
	EXPECT_EQ(REC_OK, (int)rec.status);
	EXPECT_EQ(0, status);
	EXPECT_STREQ(expect_verdict(ROW), rec.observed);
	if (child_keeps_page()) {
		EXPECT_EQ(2, rec.odirect.late_plays);
		/* Plays that missed the read's window otherwise are played again too. */
		EXPECT_LE(3, rec.odirect.tries);
	} else {
		EXPECT_EQ(0, rec.odirect.late_plays) TH_LOG("the child gets a copy at fork here");
	}
}

TEST(all_plays_late_the_row_could_not_run)
{
	struct record rec;
	int status;

	ASSERT_EQ(0, play_late(_metadata, MAX_TRIES, &rec, &status));
	TH_LOG("%s: %s, late plays %lld of %lld; %s", ROW, record_status_name(rec.status),
	       (long long)rec.odirect.late_plays, (long long)rec.odirect.tries, rec.reason);
	if (!child_keeps_page()) {
		/* Nothing to void: the first play that saw the read in flight gives the verdict. */
		EXPECT_EQ(REC_OK, (int)rec.status);
		EXPECT_EQ(0, rec.odirect.late_plays) TH_LOG("the child gets a copy at fork here");
		return;
	}
	EXPECT_EQ(REC_COULD_NOT_RUN, (int)rec.status);
	EXPECT_EQ(2, status);
	EXPECT_EQ(MAX_TRIES, rec.odirect.tries);
	/* Every play that saw the read in flight was late; one that did not is played again too. */
	EXPECT_LE(1, rec.odirect.late_plays);
	EXPECT_GE(MAX_TRIES, rec.odirect.late_plays);
	if (strstr(rec.reason, "race not exercised")) {
		char want[64];

		snprintf(want, sizeof(want), "race not exercised in %lld of %d plays",
			 (long long)rec.odirect.late_plays, MAX_TRIES);
		EXPECT_NE(NULL, strstr(rec.reason, want)) TH_LOG("not: %s", want);
	} else {
		EXPECT_NE(NULL, strstr(rec.reason, "not seen in flight"));
	}
}

TEST_HARNESS_MAIN
