// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_demo: the 2006 bug through the real RDMA stack. A buffer is registered with
 * ibv_reg_mr() on a Soft-RoCE (rxe) device, so the kernel pins it with FOLL_PIN as
 * every RDMA driver does; the process forks and the parent writes; then the HCA reads
 * the MR (RDMA READ) and writes into it (RDMA WRITE) through a loopback RC QP. The
 * verdict comes from what the HCA and the parent saw.
 *
 * Rows: vm.fork_share_pinned off; on; on with ibv_fork_init(); on with RDMAV_FORK_SAFE=1.
 * Then what rdma-core's fork support costs, with the switch on and off (it acts either way,
 * though ibv_is_fork_initialized() says UNNEEDED while the kernel copies): a 2 KiB MR marks
 * its whole page MADV_DONTFORK, so a child touching another variable in that page gets
 * SIGSEGV; ibv_fork_init() after a registration is EINVAL; a buffer freed before its MR is
 * deregistered stays MADV_DONTFORK, so what the heap puts there next is missing in a child;
 * every MR splits its mapping, until vm.max_map_count makes registration fail.
 * Each row runs in a fresh process (fork support is process-wide in rdma-core).
 *
 *   verbs_demo [--only NAME]...     all rows (or the named ones); exit 0 when all matched
 *   verbs_demo --row NAME           one row, in this process (used by the above)
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"
#include "lab.h"
#include "lab_verbs.h"

#define KNOB "/proc/sys/vm/fork_share_pinned"
#define PAGE 4096
#define TAG 16
#define OFF_HCA 256

static const char PREFORK[TAG] = "pre-fork bytes";
static const char PARENT[TAG] = "parent wrote";
static const char HCA[TAG] = "hca wrote";

struct row {
	const char *name;
	int knob;		/* vm.fork_share_pinned during the row */
	int fork_init;		/* call ibv_fork_init() */
	int fork_safe_env;	/* run with RDMAV_FORK_SAFE=1 */
	int hugepages_safe_env;	/* run with RDMAV_HUGEPAGES_SAFE=1 */
	int (*cost)(const struct row *r);	/* a fork-support cost row, not an HCA row */
};

static int subpage_mr(const struct row *r);
static int fork_init_after_reg(const struct row *r);
static int free_before_dereg(const struct row *r);
static int mr_splits_vmas(const struct row *r);
static int hugetlb_mr(const struct row *r);

static const struct row rows[] = {
	{ "switch-off", 0, 0, 0, 0, NULL },
	{ "switch-on", 1, 0, 0, 0, NULL },
	{ "switch-on-ibv_fork_init", 1, 1, 0, 0, NULL },
	{ "switch-on-RDMAV_FORK_SAFE", 1, 0, 1, 0, NULL },
	{ "switch-on-subpage-mr", 1, 1, 0, 0, subpage_mr },
	{ "switch-off-subpage-mr", 0, 1, 0, 0, subpage_mr },
	{ "switch-on-fork_init-after-reg", 1, 0, 0, 0, fork_init_after_reg },
	{ "switch-off-fork_init-after-reg", 0, 0, 0, 0, fork_init_after_reg },
	{ "switch-off-free-before-dereg", 0, 1, 0, 0, free_before_dereg },
	{ "switch-off-mr-splits-vmas", 0, 1, 0, 0, mr_splits_vmas },
	{ "switch-off-mr-splits-vmas-no-init", 0, 0, 0, 0, mr_splits_vmas },
	{ "switch-off-hugetlb-mr", 0, 1, 0, 0, hugetlb_mr },
	{ "switch-off-hugetlb-mr-hp-safe", 0, 1, 0, 1, hugetlb_mr },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static const struct row *find_row(const char *name)
{
	for (unsigned int i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

static int die(const char *what)
{
	fprintf(stderr, "verbs_demo: %s: %s\n", what, strerror(errno));
	return 2;
}

struct verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int gid_index;
};

static int open_verbs(struct verbs *v)
{
	union ibv_gid gid;

	v->ctx = lab_rxe_open();
	if (!v->ctx)
		return -1;
	/* The GID of lo's IPv4 address: an IPv4-mapped IPv6 address, ::ffff:127.0.0.1. */
	v->gid_index = -1;
	for (int i = 0; i < 16 && v->gid_index < 0; i++) {
		static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };

		if (!ibv_query_gid(v->ctx, 1, i, &gid) && !memcmp(gid.raw, mapped, 12) &&
		    gid.raw[12] == 127)
			v->gid_index = i;
	}
	v->pd = ibv_alloc_pd(v->ctx);
	v->cq = v->pd ? ibv_create_cq(v->ctx, 16, NULL, NULL, 0) : NULL;
	return v->gid_index < 0 || !v->cq ? -1 : 0;
}

/* An RC QP connected to itself. */
static int loopback_qp(struct verbs *v)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = v->cq, .recv_cq = v->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a;
	union ibv_gid gid;

	v->qp = ibv_create_qp(v->pd, &ia);
	if (!v->qp || ibv_query_gid(v->ctx, 1, v->gid_index, &gid))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = v->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = v->gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* One RDMA READ or WRITE between local (lmr) and the MR under test (rmr); wait for it. */
static int rdma(struct verbs *v, enum ibv_wr_opcode op, struct ibv_mr *lmr, void *local,
		struct ibv_mr *rmr, void *remote, unsigned int len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = len, .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)remote, .rkey = rmr->rkey },
	}, *bad;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(v->qp, &wr, &bad))
		return -1;
	for (int i = 0; i < 5000000; i++) {
		n = ibv_poll_cq(v->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n)
			return wc.status == IBV_WC_SUCCESS ? 0 : -1;
		if (i > 1000)
			usleep(100);
	}
	errno = ETIMEDOUT;
	return -1;
}

static const char *fork_status(enum ibv_fork_status s)
{
	return s == IBV_FORK_ENABLED ? "ENABLED" : s == IBV_FORK_UNNEEDED ? "UNNEEDED" : "DISABLED";
}

/* A cost row's line: name, switch, fork support, is_fork_init(), a detail, page dc, observed, expected. */
static int cost_line(const struct row *r, const char *detail, const void *page, const char *observed)
{
	const char *expect = lab_expect(r->name);
	bool ok = expect && !strcmp(observed, expect);

	printf("%-33s %-6d %-15s %-15s %-6s %-8s %-8s %-8s %s\n", r->name, lab_read_int(KNOB),
	       r->hugepages_safe_env ? "HUGEPAGES_SAFE" : r->fork_init ? "ibv_fork_init" : "-",
	       fork_status(ibv_is_fork_initialized()), detail,
	       page && lab_has_vmflag(page, "dc") ? "yes" : "no", observed,
	       expect ? expect : "none", ok ? "ok" : "MISMATCH");
	fflush(stdout);
	return ok ? 0 : 1;
}

/* A cost row's start: rxe0 opened (PD and CQ) and one fresh page; NULL on error (said why). */
static char *verbs_and_page(struct verbs *v)
{
	char *page;

	if (open_verbs(v)) {
		die("verbs setup on rxe0");
		return NULL;
	}
	page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		die("mmap");
		return NULL;
	}
	return page;
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

/*
 * A 2 KiB MR at the start of a page, a variable in the page's second half, a fork: the child
 * reads the variable. rdma-core rounds the MR to whole pages for MADV_DONTFORK, so with fork
 * support active the child has no such page.
 */
static int subpage_mr(const struct row *r)
{
	struct verbs v = { 0 };
	struct ibv_mr *mr;
	volatile char *var;
	char *page;
	int ret;

	page = verbs_and_page(&v);
	if (!page)
		return 2;
	var = page + PAGE - 64;
	*var = 42;
	mr = ibv_reg_mr(v.pd, page, PAGE / 2, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return die("ibv_reg_mr");
	ret = cost_line(r, "2048", page, child_reads(var, 42));
	ibv_dereg_mr(mr);
	return ret;
}

/*
 * A page-aligned heap buffer registered, then freed before ibv_dereg_mr(): the heap reuses
 * it for new data, which a child then lacks, since the page is still MADV_DONTFORK.
 */
static int free_before_dereg(const struct row *r)
{
	struct verbs v = { 0 };
	struct ibv_mr *mr;
	char *buf, *again, *page;
	int ret;

	if (open_verbs(&v))
		return die("verbs setup on rxe0");
	/* 64 KiB: under malloc's mmap threshold, so from the heap, and handed out again. */
	buf = malloc(16 * PAGE);
	if (!buf)
		return die("malloc");
	page = (char *)(((uintptr_t)buf + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	memset(buf, 1, 16 * PAGE);
	mr = ibv_reg_mr(v.pd, page, PAGE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return die("ibv_reg_mr");
	free(buf);
	again = malloc(16 * PAGE);
	if (again != buf) {
		errno = 0;
		return die("the heap did not hand the freed buffer out again");
	}
	memset(again, 7, 16 * PAGE);
	ret = cost_line(r, "4096", page, child_reads(page, 7));
	ibv_dereg_mr(mr);
	free(again);
	return ret;
}

#define MAP_COUNT "/proc/sys/vm/max_map_count"
#define SPLIT_PAGES 512

/*
 * One-page MRs on every other page of one mapping, with vm.max_map_count 64 above what the
 * process maps: with fork support each MR splits the mapping (two more VMAs), until
 * madvise(MADV_DONTFORK), and so ibv_reg_mr(), fails. Observed: the errno, or all-ok.
 */
static int mr_splits_vmas(const struct row *r)
{
	struct ibv_mr *mrs[SPLIT_PAGES / 2] = { 0 };
	int n = 0, before = lab_read_int(MAP_COUNT), err = 0, ret;
	struct verbs v = { 0 };
	char limit[32], detail[16];
	const char *observed;
	char *map;

	if (open_verbs(&v))
		return die("verbs setup on rxe0");
	map = mmap(NULL, SPLIT_PAGES * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || before < 0)
		return die("mmap or " MAP_COUNT);
	memset(map, 0, SPLIT_PAGES * PAGE);
	snprintf(limit, sizeof(limit), "%d", lab_maps_count(NULL, ~(size_t)0) + 64);
	if (lab_write_str(MAP_COUNT, limit))
		return die(MAP_COUNT);
	for (; n < SPLIT_PAGES / 2; n++) {
		mrs[n] = ibv_reg_mr(v.pd, map + 2 * n * PAGE, PAGE, IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[n]) {
			err = errno;
			break;
		}
	}
	snprintf(limit, sizeof(limit), "%d", before);
	if (lab_write_str(MAP_COUNT, limit))
		return die(MAP_COUNT);
	observed = !err ? "all-ok" : err == EAGAIN ? "EAGAIN" : err == ENOMEM ? "ENOMEM" :
		   strerror(err);
	snprintf(detail, sizeof(detail), "n=%d", n);
	ret = cost_line(r, detail, map, observed);
	while (n--)
		ibv_dereg_mr(mrs[n]);
	munmap(map, SPLIT_PAGES * PAGE);
	return ret;
}

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define FREE_HUGEPAGES "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
#define HPAGE (2 << 20)

/*
 * A 4 KiB MR at the start of a 2 MiB hugetlb page, with fork support. rdma-core rounds the
 * range for MADV_DONTFORK to the system page size unless RDMAV_HUGEPAGES_SAFE=1 makes it ask
 * smaps for the mapping's page size; a hugetlb VMA cannot be split inside a huge page
 * (hugetlb_vm_op_split()), so madvise(), and so the registration, fails with EINVAL.
 * With the variable set the whole huge page is DONTFORK: registered, and a child reading
 * the MR's page (or anything else in those 2 MiB) gets SIGSEGV.
 */
static int hugetlb_mr(const struct row *r)
{
	int nr = lab_read_int(NR_HUGEPAGES), ret;
	struct verbs v = { 0 };
	char count[16];
	struct ibv_mr *mr;
	char *huge;

	if (open_verbs(&v))
		return die("verbs setup on rxe0");
	if (nr < 0)
		return die(NR_HUGEPAGES);
	snprintf(count, sizeof(count), "%d", nr + 1);
	if (lab_read_int(FREE_HUGEPAGES) < 1 && lab_write_str(NR_HUGEPAGES, count))
		return die("reserving a huge page");
	huge = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (huge == MAP_FAILED)
		return die("mmap(MAP_HUGETLB)");
	memset(huge, 9, HPAGE);
	mr = ibv_reg_mr(v.pd, huge, PAGE, IBV_ACCESS_LOCAL_WRITE);
	ret = cost_line(r, "4096", huge, mr ? child_reads(huge, 9) :
			errno == EINVAL ? "EINVAL" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	munmap(huge, HPAGE);
	snprintf(count, sizeof(count), "%d", nr);
	lab_write_str(NR_HUGEPAGES, count);
	return ret;
}

/* ibv_fork_init() called once a buffer is registered: what it returns. */
static int fork_init_after_reg(const struct row *r)
{
	struct verbs v = { 0 };
	struct ibv_mr *mr;
	char *page;
	int ret;

	page = verbs_and_page(&v);
	if (!page)
		return 2;
	mr = ibv_reg_mr(v.pd, page, PAGE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		return die("ibv_reg_mr");
	ret = ibv_fork_init();
	ret = cost_line(r, "4096", page, !ret ? "0" : ret == EINVAL ? "EINVAL" : strerror(ret));
	ibv_dereg_mr(mr);
	return ret;
}

/* One row, in this process; prints one line and returns 0 (matched), 1 (not) or 2 (error). */
static int run_row(const struct row *r)
{
	struct verbs v = { 0 };
	struct ibv_mr *mr, *smr;
	int cmd[2], status;
	bool hca_sees_parent, parent_sees_hca;
	char *buf, *stage;
	const char *verdict, *expect;
	bool ok;
	pid_t pid;

	if (r->fork_init && ibv_fork_init())
		return die("ibv_fork_init");
	if (r->cost)
		return r->cost(r);
	if (open_verbs(&v) || loopback_qp(&v))
		return die("verbs setup on rxe0");
	buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return die("mmap");
	memset(buf, 0, PAGE);
	memcpy(buf, PREFORK, TAG);
	memcpy(buf + OFF_HCA, PREFORK, TAG);
	mr = ibv_reg_mr(v.pd, buf, PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		return die("ibv_reg_mr");

	if (pipe(cmd))
		return die("pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (!pid) {
		char c;

		close(cmd[1]);
		_exit(read(cmd[0], &c, 1) == 1 ? 0 : 1);
	}
	close(cmd[0]);

	memcpy(buf, PARENT, TAG);	/* the parent's write: copy-on-write if shared */

	/* Registered after the fork, so the staging buffer is the parent's alone. */
	stage = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stage == MAP_FAILED)
		return die("mmap");
	smr = ibv_reg_mr(v.pd, stage, PAGE, IBV_ACCESS_LOCAL_WRITE);
	if (!smr)
		return die("ibv_reg_mr (staging)");
	if (rdma(&v, IBV_WR_RDMA_READ, smr, stage, mr, buf, TAG))
		return die("RDMA READ");
	hca_sees_parent = !memcmp(stage, PARENT, TAG);
	memcpy(stage + OFF_HCA, HCA, TAG);
	if (rdma(&v, IBV_WR_RDMA_WRITE, smr, stage + OFF_HCA, mr, buf + OFF_HCA, TAG))
		return die("RDMA WRITE");
	parent_sees_hca = !memcmp(buf + OFF_HCA, HCA, TAG);
	verdict = hca_sees_parent && parent_sees_hca ? "COHERENT" : "ORPHANED";
	expect = lab_expect(r->name);
	ok = expect && !strcmp(verdict, expect);

	if (write(cmd[1], "x", 1) != 1 || waitpid(pid, &status, 0) != pid)
		return die("child");
	printf("%-26s %-6d %-15s %-15s %-10s %-10s %-8s %-8s %s\n", r->name, lab_read_int(KNOB),
	       r->fork_init ? "ibv_fork_init" : r->fork_safe_env ? "RDMAV_FORK_SAFE" : "-",
	       fork_status(ibv_is_fork_initialized()), hca_sees_parent ? "yes" : "no",
	       parent_sees_hca ? "yes" : "no", verdict, expect ? expect : "none",
	       ok ? "ok" : "MISMATCH");
	fflush(stdout);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(mr);
	ibv_destroy_qp(v.qp);
	ibv_destroy_cq(v.cq);
	ibv_dealloc_pd(v.pd);
	ibv_close_device(v.ctx);
	return ok ? 0 : 1;
}

/* What `rdma system show` says after a row, printed when it differs from the row before. */
static void report_rdma_system(void)
{
	static char last[256];
	char now[256] = "(failed)";
	FILE *p = popen("rdma system show 2>&1", "r");

	if (p) {
		if (!fgets(now, sizeof(now), p))
			snprintf(now, sizeof(now), "(no output)");
		if (pclose(p))
			snprintf(now, sizeof(now), "(failed)");
	}
	now[strcspn(now, "\n")] = 0;
	if (strcmp(now, last))
		printf("  rdma system show: %s\n", now);
	snprintf(last, sizeof(last), "%s", now);
	fflush(stdout);
}

/* Run a row in a fresh process with the switch and environment it asks for. */
static int spawn_row(const char *self, const struct row *r)
{
	const char *lacks = lab_lacks_patch("0002");
	int before = lab_read_int(KNOB), status;
	pid_t pid;

	/* A kernel built without the switch forks as with it off; a row that wants it on is skipped. */
	if (lacks && r->knob) {
		printf("%-26s skipped: %s (vm.fork_share_pinned)\n", r->name, lacks);
		return 0;
	}
	if (!lacks && (before < 0 || lab_write_str(KNOB, r->knob ? "1" : "0")))
		return die(KNOB " (a kernel with kernel-patches/0002?)");
	fflush(NULL);
	pid = fork();
	if (!pid) {
		if (r->fork_safe_env)
			setenv("RDMAV_FORK_SAFE", "1", 1);
		else
			unsetenv("RDMAV_FORK_SAFE");
		if (r->hugepages_safe_env)
			setenv("RDMAV_HUGEPAGES_SAFE", "1", 1);
		else
			unsetenv("RDMAV_HUGEPAGES_SAFE");
		execl(self, self, "--row", r->name, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = 2 << 8;
	report_rdma_system();
	if (!lacks)
		lab_write_str(KNOB, before ? "1" : "0");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

int main(int argc, char **argv)
{
	const struct row *only[NROWS + 1];
	unsigned int n = 0, worst = 0;
	int c, rc;

	static const struct option opts[] = {
		{ "row", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'o' },
		{ 0 },
	};
	while ((c = getopt_long(argc, argv, "r:o:", opts, NULL)) != -1) {
		const struct row *r = find_row(optarg);

		if (!r) {
			fprintf(stderr, "verbs_demo: no row %s\n", optarg);
			return 2;
		}
		if (c == 'r')
			return run_row(r);
		if (c != 'o' || n == NROWS)
			return 2;
		only[n++] = r;
	}
	if (lab_rxe_setup())
		return die("creating rxe0 on lo");
	if (!n)
		for (; n < NROWS; n++)
			only[n] = &rows[n];
	printf("verbs_demo on Linux %s (expectations: the %s table)\n", lab_kernel_release(),
	       lab_expect_table());
	printf("%-26s %-6s %-15s %-15s %-10s %-10s %-8s %s\n", "row", "switch", "fork support",
	       "is_fork_init()", "hca->par", "par->hca", "observed", "expected");
	for (unsigned int i = 0; i < n; i++) {
		if (only[i]->cost && (!i || !only[i - 1]->cost))
			printf("%-33s %-6s %-15s %-15s %-6s %-8s %-8s %s\n", "what fork support costs",
			       "switch", "fork support", "is_fork_init()", "detail", "page dc",
			       "observed", "expected");
		rc = spawn_row("/proc/self/exe", only[i]);
		if ((unsigned int)rc > worst)
			worst = rc;
	}
	return worst;
}
