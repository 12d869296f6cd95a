// SPDX-License-Identifier: GPL-2.0
/*
 * repro/repro.c, the one-file reproducer a user attaches to a bug report, played as a user plays
 * it (the binary built as its header says, lab_root()/repro/repro) on the stage of a row of the
 * lab's table: the row sets the switch, -d (MADV_DONTFORK), -f (ibv_fork_init()) and
 * RDMAV_FORK_SAFE=1, and this kernel's expectation for the row gives the exit status the
 * reproducer must end with. Only rows the reproducer can play are taken: a base page, a fork
 * whose child lives, a parent write, the pin an MR makes (FOLL_PIN | FOLL_LONGTERM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma.h"
#include "row.h"


struct run {
	int status;		/* the wait status */
	char out[2048], err[2048];
	int lines;		/* of out */
	long pins;		/* FOLL_PIN pages the kernel counted as acquired meanwhile */
};

static void slurp(int fd, char *buf, size_t n)
{
	ssize_t got = pread(fd, buf, n - 1, 0);

	buf[got > 0 ? got : 0] = 0;
	close(fd);
}

/* Run the reproducer with args, RDMAV_FORK_SAFE=1 when fork_safe; -1 when it could not start. */
static int run_repro(struct run *r, bool fork_safe, char *const args[])
{
	char path[256], *argv[8] = { path };
	int out = memfd_create("repro-out", 0), err = memfd_create("repro-err", 0);
	long before = lab_vmstat("nr_foll_pin_acquired");
	pid_t pid;

	lab_path(path, sizeof(path), "repro/repro");
	for (int i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	if (out < 0 || err < 0 || before < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (fork_safe)
			setenv("RDMAV_FORK_SAFE", "1", 1);
		else
			unsetenv("RDMAV_FORK_SAFE");
		if (dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(125);
		execv(path, argv);
		_exit(127);
	}
	if (waitpid(pid, &r->status, 0) != pid)
		return -1;
	r->pins = lab_vmstat("nr_foll_pin_acquired") - before;
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
	r->lines = 0;
	for (const char *p = r->out; (p = strchr(p, '\n')); p++)
		r->lines++;
	return 0;
}

/* Soft-RoCE on lo, as verbs_demo has it (liblab/verbs.c); NULL, or what is missing. */
static const char *rxe_up(void)
{
	if (!access("/sys/class/infiniband/rxe0", F_OK))
		return NULL;
	return system("ip link set lo up && rdma link add rxe0 type rxe netdev lo") ?
	       "no Soft-RoCE: rdma link add rxe0 type rxe netdev lo failed" : NULL;
}

FIXTURE(repro)
{
	int lock;	/* LAB_LOCK_SWITCH */
	int old;	/* the switch before the test, -1: none */
};

FIXTURE_VARIANT(repro)
{
	const char *row;
};

/* The verbs rows whose HCA is the device, as the reproducer's is. */
FIXTURE_VARIANT_ADD(repro, switch_off) { .row = "verbs-switch-off" };
FIXTURE_VARIANT_ADD(repro, switch_on) { .row = "verbs-switch-on" };
FIXTURE_VARIANT_ADD(repro, switch_on_ibv_fork_init) { .row = "verbs-switch-on-ibv_fork_init" };
FIXTURE_VARIANT_ADD(repro, switch_on_rdmav_fork_safe) { .row = "verbs-switch-on-RDMAV_FORK_SAFE" };
/* MADV_DONTFORK on a FOLL_PIN | FOLL_LONGTERM pin, which the verbs rows leave to rdma-core. */
FIXTURE_VARIANT_ADD(repro, dontfork) { .row = "pin-dontfork" };
FIXTURE_VARIANT_ADD(repro, switch_on_dontfork) { .row = "pin-switch-on-dontfork" };

FIXTURE_SETUP(repro)
{
	self->lock = -1;
	self->old = -1;
}

FIXTURE_TEARDOWN(repro)
{
	if (self->old >= 0)
		lab_write_str(LAB_SWITCH, self->old ? "1" : "0");
	if (self->lock >= 0)
		close(self->lock);
}

/* Whether the reproducer plays row r's stage: otherwise the row's verdict says nothing of it. */
static bool playable(const struct row *r)
{
	if (!r->fork || r->dofork || r->wipeonfork || r->child != CHILD_LIVES || r->mem != MEM_PAGE)
		return false;
	if (r->family == FAM_VERBS)
		return r->verbs.kind == VERBS_HCA && !r->verbs.hugepages_safe_env;
	return r->family == FAM_PINDMA && r->pindma.mode == PINDMA_MODE_PIN_LONGTERM &&
	       !r->pindma.repin_ro;
}

TEST_F(repro, plays_the_row_as_expected)
{
	const struct row *r = row_find(variant->row);
	bool verbs = r && r->family == FAM_VERBS;
	const char *expected, *why;
	char *args[4] = { NULL };
	int n = 0, want;
	struct run run;

	ASSERT_TRUE(r && playable(r)) TH_LOG("no row %s the reproducer can play", variant->row);
	expected = expect_verdict(r->name);
	ASSERT_TRUE(expected && (!strcmp(expected, "COHERENT") || !strcmp(expected, "ORPHANED")))
		TH_LOG("the %s table has no COHERENT or ORPHANED for %s", expect_table_name(),
		       r->name);
	want = !strcmp(expected, "ORPHANED");
	if (r->fork_switch != SWITCH_LEAVE)
		LAB_NEEDS_PATCH("0002", "vm.fork_share_pinned");
	why = rxe_up();
	LAB_NEEDS(!why, "%s", why);

	/* The switch as the row sets it, held against other programs as rows/play.c holds it. */
	self->lock = lab_lock(LAB_LOCK_SWITCH, r->fork_switch != SWITCH_LEAVE);
	ASSERT_LE(0, self->lock) TH_LOG("the switch's lock: %s", strerror(errno));
	if (r->fork_switch == SWITCH_LEAVE) {
		ASSERT_GE(0, lab_read_int(LAB_SWITCH)) TH_LOG("the row needs the switch off");
	} else {
		self->old = lab_read_int(LAB_SWITCH);
		ASSERT_LE(0, self->old);
		ASSERT_EQ(0, lab_write_str(LAB_SWITCH, r->fork_switch == SWITCH_ON ? "1" : "0"));
		ASSERT_EQ(r->fork_switch == SWITCH_ON, lab_read_int(LAB_SWITCH));
	}

	if (r->dontfork)
		args[n++] = "-d";
	if (verbs && r->verbs.fork_init)
		args[n++] = "-f";
	ASSERT_EQ(0, run_repro(&run, verbs && r->verbs.fork_safe_env, args));
	TH_LOG("repro%s%s%s%s (row %s, expected %s on the %s table; %ld pages pinned):\n%s%s",
	       n ? " " : "", n ? args[0] : "", n > 1 ? " " : "", n > 1 ? args[1] : "", r->name,
	       expected, expect_table_name(), run.pins, run.out, run.err);
	ASSERT_TRUE(WIFEXITED(run.status)) TH_LOG("it did not exit");
	EXPECT_EQ(want, WEXITSTATUS(run.status));
	EXPECT_EQ(3, run.lines);
	/* The verdict it prints is the one its status says. */
	EXPECT_NE(NULL, strstr(run.out, want ? "\nORPHANED: " : "\nCOHERENT: "));
	/* The kernel pinned the MR's page and the transfers' (ib_umem, FOLL_PIN): by its count. */
	EXPECT_LE(2, run.pins);
}

/* A setup error is neither verdict: status 2, saying what failed, and no verdict printed. */
TEST(an_unknown_device_is_a_setup_error)
{
	char *args[] = { "no-such-device", NULL };
	const char *why = rxe_up();
	struct run run;

	LAB_NEEDS(!why, "%s", why);
	ASSERT_EQ(0, run_repro(&run, false, args));
	ASSERT_TRUE(WIFEXITED(run.status));
	EXPECT_EQ(2, WEXITSTATUS(run.status));
	EXPECT_NE(NULL, strstr(run.err, "no device no-such-device")) TH_LOG("stderr: %s", run.err);
	EXPECT_EQ(0, run.lines) TH_LOG("stdout: %s", run.out);
	/* The other side of the pin count above: nothing registered, nothing pinned. */
	EXPECT_EQ(0, run.pins);
}

LAB_HARNESS_MAIN
