// SPDX-License-Identifier: GPL-2.0
/*
 * Playing a verbs row. rdma-core's fork support is process-wide, so each row plays in a fresh
 * process: play_verbs() runs this program again as `--row-child NAME` with the row's environment,
 * while the switch is held where the row wants it (play.c), reads the record that process prints,
 * and adds what RDMA netlink says of copy-on-fork meanwhile (as `rdma system show` prints it).
 *
 * An HCA row registers a page with ibv_reg_mr() on Soft-RoCE (the kernel pins it with FOLL_PIN, as
 * every RDMA driver does), shows the HCA writing into it before the fork (the control), forks, lets
 * the parent write, then lets the HCA read the MR (RDMA READ) and write into it (RDMA WRITE)
 * through a loopback RC QP, and read back what it wrote. The cost rows show what rdma-core's fork
 * support does to a program: an outcome (SIGSEGV in a child, an errno, all-ok).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "lab_verbs.h"
#include "verbs_obs.h"

#define PAGE 4096
#define TAG 16
#define OFF_HCA 256
#define OFF_CONTROL 512

static const char PREFORK[TAG] = "pre-fork bytes";
static const char PARENT[TAG] = "parent wrote";
static const char HCA[TAG] = "hca wrote";
static const char CONTROL[TAG] = "hca control";

static const char *fork_status(enum ibv_fork_status s)
{
	return s == IBV_FORK_ENABLED ? "ENABLED" : s == IBV_FORK_UNNEEDED ? "UNNEEDED" : "DISABLED";
}

/* What the child of a fork around an MR has at the MR's page (its own view, pagemap as root). */
struct child_view {
	uint64_t pfn;		/* 0: no page there (the range is not the child's) */
	bool sees_writes;	/* it reads the parent's or the HCA's post-fork write */
};

/* The child: on 'r', report its view of the page at arg; then wait to be let go ('x'). */
static int report_view(struct lab_child *c, void *arg)
{
	struct child_view cv = { 0 };
	char *page = arg;
	int cmd = lab_child_wait(c);

	if (cmd == 'r') {
		if (lab_maps_covers(0, page)) {
			cv.pfn = lab_pfn(page);
			cv.sees_writes = !memcmp(page, PARENT, TAG) ||
					 !memcmp(page + OFF_HCA, HCA, TAG);
		}
		if (lab_child_report(c, &cv, sizeof(cv)))
			return 1;
		cmd = lab_child_wait(c);
	}
	return cmd == 'x' ? 0 : 1;
}

#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)

/*
 * The HCA and the parent around a fork, through mr over page (registered MR_ACCESS): the HCA writes
 * into the page before the fork (the control); after it the parent writes, and the HCA reads the
 * page (RDMA READ), writes into it (RDMA WRITE) and reads back what it wrote, each from a staging
 * page that stays the parent's alone, through a loopback RC QP; then the child says which page it
 * has there and what it reads. 0, or -1 with the record failed.
 */
static int across_fork(struct record *rec, struct lab_verbs *v, struct ibv_mr *mr, char *page)
{
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	struct verbs_obs *o = ROW_OBS(rec, struct verbs_obs);
	struct ibv_mr *smr = NULL;
	struct child_view cv;
	char *stage;
	int ret = -1;

	stage = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stage == MAP_FAILED)
		return row_fail(rec, "mmap of the staging page");
	if (madvise(stage, PAGE, MADV_DONTFORK)) {
		row_fail(rec, "MADV_DONTFORK of the staging page");
		goto out;
	}
	if (lab_verbs_loopback_qp(v) ||
	    !(smr = ibv_reg_mr(v->pd, stage, PAGE, IBV_ACCESS_LOCAL_WRITE))) {
		row_fail(rec, "a loopback QP and the staging MR on rxe0");
		goto out;
	}
	memcpy(stage + OFF_CONTROL, CONTROL, TAG);
	if (lab_verbs_rdma(v, IBV_WR_RDMA_WRITE, smr, stage + OFF_CONTROL, mr, page + OFF_CONTROL,
			   TAG)) {
		row_fail(rec, "RDMA WRITE (control)");
		goto out;
	}
	o->control_moved = !memcmp(page + OFF_CONTROL, CONTROL, TAG);
	o->par_pfn_before = lab_pfn(page);
	if (lab_child_start(&child, report_view, page)) {
		row_fail(rec, "fork");
		goto out;
	}
	memcpy(page, PARENT, TAG);	/* the parent's write: copy-on-write if shared */
	if (lab_verbs_rdma(v, IBV_WR_RDMA_READ, smr, stage, mr, page, TAG)) {
		row_fail(rec, "RDMA READ");
		goto out;
	}
	o->hca_sees_parent = !memcmp(stage, PARENT, TAG);
	memcpy(stage + OFF_HCA, HCA, TAG);
	if (lab_verbs_rdma(v, IBV_WR_RDMA_WRITE, smr, stage + OFF_HCA, mr, page + OFF_HCA, TAG)) {
		row_fail(rec, "RDMA WRITE");
		goto out;
	}
	o->parent_sees_hca = !memcmp(page + OFF_HCA, HCA, TAG);
	memset(stage + 2 * OFF_HCA, 0, TAG);
	if (lab_verbs_rdma(v, IBV_WR_RDMA_READ, smr, stage + 2 * OFF_HCA, mr, page + OFF_HCA, TAG)) {
		row_fail(rec, "RDMA READ (back)");
		goto out;
	}
	o->hca_reads_own = !memcmp(stage + 2 * OFF_HCA, HCA, TAG);
	o->par_pfn_after = lab_pfn(page);
	if (lab_child_go(&child, 'r') || lab_child_read(&child, &cv, sizeof(cv))) {
		row_fail(rec, "the child's view of the page");
		goto out;
	}
	o->child_pfn = cv.pfn;
	o->child_sees_writes = cv.sees_writes;
	if (row_child_end(rec, &child, 'x', 0))
		goto out;
	ret = 0;
out:
	lab_child_end(&child);
	if (smr)
		ibv_dereg_mr(smr);
	munmap(stage, PAGE);
	return ret;
}

static int hca_row(struct record *rec)
{
	struct verbs_obs *o = ROW_OBS(rec, struct verbs_obs);
	struct ibv_mr *mr = NULL;
	struct lab_verbs v;
	int ret = -1;
	char *buf;

	if (lab_verbs_open(&v))
		return row_fail(rec, "verbs setup on rxe0");
	buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		row_fail(rec, "mmap");
		goto out;
	}
	memset(buf, 0, PAGE);
	memcpy(buf, PREFORK, TAG);
	memcpy(buf + OFF_HCA, PREFORK, TAG);
	mr = ibv_reg_mr(v.pd, buf, PAGE, MR_ACCESS);
	if (!mr) {
		row_fail(rec, "ibv_reg_mr");
		goto out;
	}
	ret = across_fork(rec, &v, mr, buf);
	snprintf(o->fork_status, sizeof(o->fork_status), "%s",
		 fork_status(ibv_is_fork_initialized()));
out:
	if (mr)
		ibv_dereg_mr(mr);
	lab_verbs_close(&v);
	return ret;
}

/* Fork; the child reads *var. SIGSEGV when the child has no such page. */
static const char *child_reads(volatile char *var, char want)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return "fork-failed";
	if (!pid)
		_exit(*var == want ? 0 : 1);
	if (waitpid(pid, &status, 0) != pid)
		return "wait-failed";
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV ? "SIGSEGV" :
	       WIFEXITED(status) && !WEXITSTATUS(status) ? "read-ok" : "other";
}

static void outcome(struct record *rec, const char *detail, const void *page, const char *what)
{
	struct verbs_obs *o = ROW_OBS(rec, struct verbs_obs);

	snprintf(o->detail, sizeof(o->detail), "%s", detail);
	snprintf(o->outcome, sizeof(o->outcome), "%s", what);
	o->page_dc = page && lab_has_vmflag(page, "dc");
	snprintf(o->fork_status, sizeof(o->fork_status), "%s",
		 fork_status(ibv_is_fork_initialized()));
}

static const char *errno_name(int e)
{
	return e == EINVAL ? "EINVAL" : e == EAGAIN ? "EAGAIN" : e == ENOMEM ? "ENOMEM" :
	       strerror(e);
}

/*
 * A 2 KiB MR at the start of a page, a variable in the page's second half, a fork: the child reads
 * the variable. rdma-core rounds the MR to whole pages for MADV_DONTFORK.
 */
static int subpage_mr(struct record *rec, struct lab_verbs *v)
{
	char *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *var = page + PAGE - 64;
	struct ibv_mr *mr;

	if (page == MAP_FAILED)
		return row_fail(rec, "mmap");
	*var = 42;
	mr = ibv_reg_mr(v->pd, page, PAGE / 2, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return row_fail(rec, "ibv_reg_mr");
	outcome(rec, "2048", page, child_reads(var, 42));
	ibv_dereg_mr(mr);
	return 0;
}

/*
 * A page-aligned heap buffer registered, then freed before ibv_dereg_mr(): the heap reuses it for
 * new data, which a child then lacks, since the page is still MADV_DONTFORK.
 */
static int free_before_dereg(struct record *rec, struct lab_verbs *v)
{
	char *buf, *again, *page;
	struct ibv_mr *mr;

	/* 64 KiB: under malloc's mmap threshold, so from the heap, and handed out again. */
	buf = malloc(16 * PAGE);
	if (!buf)
		return row_fail(rec, "malloc");
	page = (char *)(((uintptr_t)buf + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	memset(buf, 1, 16 * PAGE);
	mr = ibv_reg_mr(v->pd, page, PAGE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return row_fail(rec, "ibv_reg_mr");
	free(buf);
	again = malloc(16 * PAGE);
	if (again != buf) {
		errno = 0;
		return row_fail(rec, "the heap did not hand the freed buffer out again");
	}
	memset(again, 7, 16 * PAGE);
	outcome(rec, "4096", page, child_reads(page, 7));
	ibv_dereg_mr(mr);
	free(again);
	return 0;
}

#define MAP_COUNT "/proc/sys/vm/max_map_count"
#define SPLIT_PAGES 512
#define ROOM 64
/*
 * vm.max_map_count for the row: low enough that filling the process's VMAs to ROOM below it is
 * cheap (near the default 65530, the debug kernel took minutes over the maps, the smaps reads and
 * the fork), and far above what any other process of the guest maps (a few hundred at most), so
 * that the rows played beside this one are not touched.
 */
#define ROW_MAP_COUNT 1024

/*
 * The process's VMAs raised to ROOM below vm.max_map_count, by splitting a PROT_NONE mapping
 * (mprotect() of every other page: two VMAs each, no memory). The filler, or MAP_FAILED.
 */
static char *fill_vmas(long limit, size_t *len)
{
	long have = lab_maps_count(NULL, ~(size_t)0), added = 1;
	char *m;

	if (have < 0 || limit - ROOM < have + 1)
		return MAP_FAILED;
	*len = (size_t)(limit - ROOM - have + 2) * PAGE;
	m = mmap(NULL, *len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	for (size_t i = 1; m != MAP_FAILED && have + added + 2 <= limit - ROOM; i += 2, added += 2)
		if (mprotect(m + i * PAGE, PAGE, PROT_READ)) {
			munmap(m, *len);
			return MAP_FAILED;
		}
	return m;
}

/*
 * One-page MRs on every other page of one mapping, vm.max_map_count at ROW_MAP_COUNT and the
 * process ROOM VMAs below it (fill_vmas()): with fork support each MR splits the mapping (two more VMAs; one for the first,
 * at its start), until madvise(MADV_DONTFORK), and so ibv_reg_mr(), fails. Observed: the errno,
 * and the process's VMAs before and when it stopped (/proc/self/maps: the kernel's count); or,
 * every MR registered, a fork with the first MR's page: whether it stays the parent's and the
 * HCA's while the child has a copy of its own.
 */
static int mr_splits_vmas(struct record *rec, struct lab_verbs *v)
{
	struct ibv_mr *mrs[SPLIT_PAGES / 2] = { 0 };
	int n = 0, err = 0, ret = 0, was = lab_read_int(MAP_COUNT);
	struct verbs_obs *o = ROW_OBS(rec, struct verbs_obs);
	char *map, *filler = MAP_FAILED;
	char detail[16], limit[16];
	size_t filler_len = 0;
	const char *what;

	map = mmap(NULL, SPLIT_PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (map == MAP_FAILED || was < ROW_MAP_COUNT)
		return row_fail(rec, "mmap, or " MAP_COUNT " below %d", ROW_MAP_COUNT);
	memset(map, 0, SPLIT_PAGES * PAGE);
	snprintf(limit, sizeof(limit), "%d", ROW_MAP_COUNT);
	if (lab_write_str(MAP_COUNT, limit))
		return row_fail(rec, "writing " MAP_COUNT);
	/* The limit as the kernel holds it, not as meant. */
	o->max_map_count = lab_read_int(MAP_COUNT);
	filler = fill_vmas(o->max_map_count, &filler_len);
	if (filler == MAP_FAILED) {
		ret = row_fail(rec, "raising the process's VMAs near " MAP_COUNT);
		goto out;
	}
	o->vmas_before = lab_maps_count(NULL, ~(size_t)0);
	for (; n < SPLIT_PAGES / 2; n++) {
		mrs[n] = ibv_reg_mr(v->pd, map + 2 * n * PAGE, PAGE, MR_ACCESS);
		if (!mrs[n]) {
			err = errno;
			break;
		}
	}
	o->vmas = lab_maps_count(NULL, ~(size_t)0);
	o->mrs = n;
	snprintf(detail, sizeof(detail), "n=%d", n);
	what = err ? errno_name(err) : "all-ok";
	/* Every MR registered: the fork (the verdict, verbs.c, asks the observations). */
	if (!err)
		ret = across_fork(rec, v, mrs[0], map);
	if (!ret)
		outcome(rec, detail, map, what);
out:
	snprintf(limit, sizeof(limit), "%d", was);
	if (lab_write_str(MAP_COUNT, limit) && !ret)
		ret = row_fail(rec, "putting " MAP_COUNT " back");
	while (n--)
		ibv_dereg_mr(mrs[n]);
	if (filler != MAP_FAILED)
		munmap(filler, filler_len);
	munmap(map, SPLIT_PAGES * PAGE);
	return ret;
}

#define HPAGE (2 << 20)

/*
 * A 4 KiB MR at the start of a 2 MiB hugetlb page, with fork support. rdma-core rounds the range
 * for MADV_DONTFORK to the system page size unless RDMAV_HUGEPAGES_SAFE=1 makes it ask smaps for
 * the mapping's page size; a hugetlb VMA cannot be split inside a huge page (hugetlb_vm_op_split()),
 * so madvise(), and so the registration, fails with EINVAL. With the variable set the whole huge
 * page is DONTFORK: registered, and a child reading the MR's page gets SIGSEGV.
 */
static int hugetlb_mr(struct record *rec, struct lab_verbs *v)
{
	struct ibv_mr *mr;
	char *huge;

	if (lab_reserve_hugepages(1))
		return row_fail(rec, "reserving a hugetlb page");
	huge = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
		    -1, 0);
	if (huge == MAP_FAILED)
		return row_fail(rec, "mmap(MAP_HUGETLB)");
	memset(huge, 9, HPAGE);
	mr = ibv_reg_mr(v->pd, huge, PAGE, IBV_ACCESS_LOCAL_WRITE);
	outcome(rec, "4096", huge, mr ? child_reads(huge, 9) : errno_name(errno));
	if (mr)
		ibv_dereg_mr(mr);
	munmap(huge, HPAGE);
	return 0;
}

/* ibv_fork_init() called once a buffer is registered: what it returns. */
static int fork_init_after_reg(struct record *rec, struct lab_verbs *v)
{
	char *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;
	int ret;

	if (page == MAP_FAILED)
		return row_fail(rec, "mmap");
	mr = ibv_reg_mr(v->pd, page, PAGE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return row_fail(rec, "ibv_reg_mr");
	ret = ibv_fork_init();
	outcome(rec, "4096", page, !ret ? "0" : errno_name(ret));
	ibv_dereg_mr(mr);
	return 0;
}

/* In the fresh process: play the row and print its record (observations and reason). */
int verbs_row_child(const char *name)
{
	const struct row *r = row_find(name);
	struct record rec = { 0 };
	struct lab_verbs v;
	int ret;

	if (!r || r->family != FAM_VERBS) {
		fprintf(stderr, "no verbs row %s\n", name);
		return 2;
	}
	rec.row = r;
	errno = 0;
	if (r->verbs.fork_init && ibv_fork_init()) {
		ret = row_fail(&rec, "ibv_fork_init");
	} else if (r->verbs.kind == VERBS_HCA) {
		ret = hca_row(&rec);
	} else if (lab_verbs_open(&v)) {
		ret = row_fail(&rec, "verbs setup on rxe0");
	} else {
		switch (r->verbs.kind) {
		case VERBS_SUBPAGE_MR:
			ret = subpage_mr(&rec, &v);
			break;
		case VERBS_FORK_INIT_AFTER_REG:
			ret = fork_init_after_reg(&rec, &v);
			break;
		case VERBS_FREE_BEFORE_DEREG:
			ret = free_before_dereg(&rec, &v);
			break;
		case VERBS_MR_SPLITS_VMAS:
			ret = mr_splits_vmas(&rec, &v);
			break;
		default:
			ret = hugetlb_mr(&rec, &v);
			break;
		}
		lab_verbs_close(&v);
	}
	rec.status = ret ? REC_COULD_NOT_RUN : REC_OK;
	record_print_json(stdout, &rec);
	return 0;
}

int play_verbs(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	char cmd[160], line[4096];
	struct record child;
	struct verbs_obs *o;
	bool got = false;
	FILE *p;
	int status;

	(void)opts;
	errno = 0;
	if (lab_rxe_setup())
		return row_fail(rec, "creating rxe0 on lo");
	if (r->verbs.fork_safe_env)
		setenv("RDMAV_FORK_SAFE", "1", 1);
	if (r->verbs.hugepages_safe_env)
		setenv("RDMAV_HUGEPAGES_SAFE", "1", 1);
	snprintf(cmd, sizeof(cmd), "/proc/%d/exe --row-child %s", getpid(), r->name);
	p = popen(cmd, "r");
	unsetenv("RDMAV_FORK_SAFE");
	unsetenv("RDMAV_HUGEPAGES_SAFE");
	if (!p)
		return row_fail(rec, "running %s", cmd);
	while (fgets(line, sizeof(line), p))
		if (line[0] == '{' && !record_parse_json(line, &child) && child.row == r)
			got = true;
	status = pclose(p);
	o = ROW_OBS(rec, struct verbs_obs);
	*o = *ROW_OBS(&child, struct verbs_obs);
	o->fork_switch = lab_read_int(LAB_SWITCH);
	o->copy_on_fork = lab_rdma_copy_on_fork();
	if (o->copy_on_fork < 0)
		return row_fail(rec, "asking RDMA netlink for copy-on-fork");
	errno = 0;
	if (!got || status)
		return row_fail(rec, "the row's process %s without its record",
				status ? "failed" : "ended");
	if (child.status != REC_OK) {
		snprintf(rec->reason, sizeof(rec->reason), "%s", child.reason);
		return -1;
	}
	return 0;
}
