// SPDX-License-Identifier: GPL-2.0
/*
 * Playing one row, the same for every family: what the row needs, the fork switch (set, read back
 * and restored, under a lock so that rows and tests running beside each other never see it change
 * under them), the family's play, then the verdict from the observations alone and the expectation
 * for this kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "row.h"


int row_fail(struct record *rec, const char *fmt, ...)
{
	int e = errno;
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rec->reason, sizeof(rec->reason), fmt, ap);
	va_end(ap);
	n = strlen(rec->reason);
	if (e && n < sizeof(rec->reason))
		snprintf(rec->reason + n, sizeof(rec->reason) - n, ": %s", strerror(e));
	return -1;
}

int row_child_end(struct record *rec, struct lab_child *c, int cmd, int want)
{
	char how[48];
	int status;

	if (cmd >= 0 && lab_child_go(c, (char)cmd))
		return row_fail(rec, "telling the child to go on");
	status = lab_child_reap(c);
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == want)
		return 0;
	errno = 0;
	return row_fail(rec, "the child was to exit with %d: %s", want,
			lab_wait_status(status, how, sizeof(how)));
}

void record_judge(struct record *rec)
{
	if (rec->status == REC_COULD_NOT_RUN || rec->status == REC_SKIPPED)
		return;
	rec->status = REC_OK;
	if (!rec->expected[0]) {
		rec->status = REC_MISMATCH;
		snprintf(rec->reason, sizeof(rec->reason), "no expectation for %s in the %s table",
			 rec->row->name, rec->table);
	} else if (strcmp(rec->observed, rec->expected)) {
		rec->status = REC_MISMATCH;
		snprintf(rec->reason, sizeof(rec->reason), "observed %s, expected %s", rec->observed,
			 rec->expected);
	}
}

/* The lab patches a row needs, with what they give, for the reason a row cannot play. */
static const struct {
	unsigned int need;
	const char *number, *what;
} patch_needs[] = {
	{ NEED_0001, "0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT" },
	{ NEED_0002, "0002", "vm.fork_share_pinned" },
};

static bool switch_set(struct record *rec, int value)
{
	errno = 0;
	if (lab_write_str(LAB_SWITCH, value ? "1" : "0"))
		return row_fail(rec, "writing %d to " LAB_SWITCH, value), false;
	if (lab_read_int(LAB_SWITCH) != value) {
		errno = 0;
		return row_fail(rec, LAB_SWITCH " does not read back %d", value), false;
	}
	return true;
}

static int play_with_switch(const struct row *r, const struct play_opts *o, struct record *rec,
			    row_play_fn *play)
{
	int lock, old, ret = -1;

	/*
	 * The switch acts on fork() and on what RDMA netlink reports to rdma-core: a row that never
	 * forks, of a family that does not read it, plays whatever it is, without holding it (a
	 * fadvise row held it 2 s, keeping every row that sets it waiting).
	 */
	if (r->fork_switch == SWITCH_LEAVE && !r->fork && !families[r->family]->reads_switch)
		return play(r, o, rec);
	lock = lab_lock(LAB_LOCK_SWITCH, r->fork_switch != SWITCH_LEAVE);
	if (lock < 0)
		return row_fail(rec, "locking the fork switch%s", errno == ETIMEDOUT ?
				" (held past LAB_LOCK_TIMEOUT)" : "");
	old = lab_read_int(LAB_SWITCH);
	if (r->fork_switch == SWITCH_LEAVE) {
		/* Where the switch exists it must be off, as the kernel boots. */
		if (old > 0) {
			errno = 0;
			row_fail(rec, LAB_SWITCH " is %d; the row needs it off", old);
		} else {
			ret = play(r, o, rec);
		}
		close(lock);
		return ret;
	}
	if (old < 0) {
		row_fail(rec, "reading " LAB_SWITCH);
	} else if ((r->fork_switch != SWITCH_OFF || switch_set(rec, 1)) &&
		   switch_set(rec, r->fork_switch == SWITCH_ON)) {
		/* "Off again" is only that after the switch was on: on, then off, in this row. */
		ret = play(r, o, rec);
	}
	if (old >= 0 && lab_write_str(LAB_SWITCH, old ? "1" : "0") && !ret) {
		ret = row_fail(rec, "restoring " LAB_SWITCH " to %d", old);
	}
	close(lock);
	return ret;
}

void row_play(const struct row *r, const struct play_opts *o, struct record *rec)
{
	const struct row_family *fam = families[r->family];
	struct play_opts opts = *o;
	const char *lacks, *verdict;
	char why[WHY_LEN];

	memset(rec, 0, sizeof(*rec));
	rec->row = r;
	snprintf(rec->kernel, sizeof(rec->kernel), "%s", kernel_release());
	snprintf(rec->table, sizeof(rec->table), "%s", expect_table_name());
	/*
	 * The device the record names: the family's, or pindma's engine asked, which names the
	 * demo's run even for an mlock row that has no device.
	 */
	opts.why = o->why && fam->why;
	snprintf(rec->device, sizeof(rec->device), "%s", fam->device ? fam->device : o->engine);
	snprintf(rec->expected, sizeof(rec->expected), "%s",
		 expect_verdict(r->name) ? expect_verdict(r->name) : "");
	rec->status = REC_COULD_NOT_RUN;

	/* From what the kernel was built with, never from probing it: a broken patch must fail. */
	for (unsigned int i = 0; i < sizeof(patch_needs) / sizeof(patch_needs[0]); i++) {
		if (!(r->needs & patch_needs[i].need))
			continue;
		lacks = lab_lacks_patch(patch_needs[i].number);
		if (!lacks)
			continue;
		snprintf(rec->reason, sizeof(rec->reason), "%s (%s)%s", lacks, patch_needs[i].what,
			 lab_is_user_tree() ? "" : "; the lab's own kernels carry their whole series");
		if (lab_is_user_tree())
			rec->status = REC_SKIPPED;
		return;
	}
	if (!fam->play) {
		snprintf(rec->reason, sizeof(rec->reason), "this program does not play %s rows",
			 fam->name);
		return;
	}
	errno = 0;
	if (play_with_switch(r, &opts, rec, fam->play))
		return;
	verdict = fam->verdict(rec, why, sizeof(why));
	if (!verdict) {
		snprintf(rec->reason, sizeof(rec->reason), "the observations prove no verdict: %s", why);
		return;
	}
	snprintf(rec->observed, sizeof(rec->observed), "%s", verdict);
	rec->status = REC_OK;
	record_judge(rec);
}
