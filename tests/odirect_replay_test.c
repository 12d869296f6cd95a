// SPDX-License-Identifier: GPL-2.0
/*
 * The O_DIRECT single-reader rows play again a play whose outcome proves nothing raced (the read
 * was over by the parent's write: a host that stalled the parent), up to five plays, and count
 * those plays (late_plays). The rule itself, on made-up observations: each of its conditions alone
 * keeps a play from being late. Then odirect_demo's odirect-fork row with N of its plays made late
 * (LAB_ODIRECT_LATE=N: a play that saw the read in flight across its fork waits for it to end
 * before the parent's write), on the "odirect" disk, where this kernel's table expects ORPHANED
 * (the child keeps the page the read fills): two late plays are played again and counted, and a
 * later one gives the verdict; every play late, the row stops at five plays and could not run,
 * saying so. Where the child gets a copy at fork (6.12's table) no play can be late: those two
 * skip, listed in the skip budget.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "row.h"

#define ROW "odirect-fork"
#define MAX_TRIES 5
/* The row's read-throttled disk (serial odirect), which /init mounts there. */
#define ODIRECT_DISK "/mnt/odirect/data"
#define NO_DISK "no read-throttled disk with serial odirect on /mnt/odirect: the lab attaches one " \
	"(vm/run --disk IMAGE,odirect)"

/* A late play: the parent moved to a full copy, the child kept the page the read filled. */
static const struct odirect_obs late_play = {
	.pfn_before = 0x1000, .pfn_after = 0x2000, .pfn_child = 0x1000, .child_has_data = true,
	/* Signs the rule does not read: the disk had counted none of it before the write. */
	.unread_before_write = 2044, .filled_before_write = false,
};

TEST(the_late_rule_wants_every_one_of_its_conditions)
{
	struct odirect_obs o;

	EXPECT_TRUE(odirect_play_late(&late_play));
	o = late_play;
	o.missing = 1;
	EXPECT_FALSE(odirect_play_late(&o)) TH_LOG("a byte missing: the race happened");
	o = late_play;
	o.child_has_data = false;
	EXPECT_FALSE(odirect_play_late(&o)) TH_LOG("the child lacks the read's bytes");
	o = late_play;
	o.pfn_after = o.pfn_before;
	EXPECT_FALSE(odirect_play_late(&o)) TH_LOG("the parent did not move");
	o = late_play;
	o.pfn_child = 0x3000;
	EXPECT_FALSE(odirect_play_late(&o)) TH_LOG("the child's page is not the read's");
}

/*
 * odirect_demo's ROW with N of its plays made late: its one record in rec, the demo's exit status
 * in *status; 0, or -1 when no single record of ROW came.
 */
static int play_late(struct __test_metadata *_metadata, int n, struct record *rec, int *status)
{
	char cmd[PATH_MAX + 96], line[8192];
	struct record r;
	int records = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "LAB_ODIRECT_LATE=%d %s/demo/odirect_demo --only %s --json", n,
		 lab_root(), ROW);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (record_parse_json(line, &r)) {
			TH_LOG("unreadable record: %s: %.120s", r.reason, line);
			continue;
		}
		if (r.row && !strcmp(r.row->name, ROW)) {
			*rec = r;
			records++;
		}
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

#define NO_LATE_PLAY "odirect-fork's child gets a copy at fork on this kernel (direct I/O pins " \
	"with FOLL_PIN since 920756a3306a, 6.4): no play can be late"

/* A fixture for its timeout: a play takes 2 to 4 s under TCG, and a case plays up to 15. */
FIXTURE(late)
{
	struct record rec;
	int status;
};

FIXTURE_SETUP(late)
{
}

FIXTURE_TEARDOWN(late)
{
}

static void log_record(struct __test_metadata *_metadata, const struct record *rec)
{
	TH_LOG("%s: %s, observed %s, expected %s, late plays %lld of %lld; %s", ROW,
	       record_status_name(rec->status), rec->observed, rec->expected,
	       (long long)rec->odirect.late_plays, (long long)rec->odirect.tries, rec->reason);
}

/*
 * A play that did not see the read in flight (the first after boot may not: QEMU's throttle has
 * its budget) is played again too, out of the same five: a row whose plays missed that way is
 * played again, at most three times, before it is judged.
 */
TEST_F_TIMEOUT(late, two_late_plays_are_played_again_and_counted, 300)
{
	if (!child_keeps_page())
		SKIP(return, NO_LATE_PLAY);
	LAB_NEEDS(!access(ODIRECT_DISK, R_OK), NO_DISK);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, play_late(_metadata, 2, &self->rec, &self->status));
		log_record(_metadata, &self->rec);
		/* Could not run with plays that were not late: some missed the read's window. */
		if (self->rec.status != REC_COULD_NOT_RUN ||
		    self->rec.odirect.tries == self->rec.odirect.late_plays)
			break;
	}
	EXPECT_EQ(REC_OK, (int)self->rec.status);
	EXPECT_EQ(0, self->status);
	EXPECT_STREQ("ORPHANED", self->rec.observed);
	/* Two late, played again; the play judged was not late (a host's own stall adds one). */
	EXPECT_LE(2, self->rec.odirect.late_plays);
	EXPECT_GT(self->rec.odirect.tries, self->rec.odirect.late_plays);
}

TEST_F_TIMEOUT(late, all_plays_late_the_row_could_not_run, 300)
{
	char want[64];

	if (!child_keeps_page())
		SKIP(return, NO_LATE_PLAY);
	LAB_NEEDS(!access(ODIRECT_DISK, R_OK), NO_DISK);
	/* Every play late: a row one of whose plays missed the read's window is played again. */
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, play_late(_metadata, MAX_TRIES, &self->rec, &self->status));
		log_record(_metadata, &self->rec);
		if (self->rec.odirect.late_plays == self->rec.odirect.tries)
			break;
	}
	EXPECT_EQ(REC_COULD_NOT_RUN, (int)self->rec.status);
	EXPECT_EQ(2, self->status);
	EXPECT_EQ(MAX_TRIES, self->rec.odirect.tries);
	EXPECT_EQ(MAX_TRIES, self->rec.odirect.late_plays);
	snprintf(want, sizeof(want), "race not exercised in %d of %d plays", MAX_TRIES, MAX_TRIES);
	EXPECT_NE(NULL, strstr(self->rec.reason, want));
}

LAB_HARNESS_MAIN
