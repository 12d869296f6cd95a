// SPDX-License-Identifier: GPL-2.0
/*
 * repro.c: does fork() take an RDMA memory region away from its process?
 *
 * A buffer is registered with ibv_reg_mr(): the kernel pins its page for the HCA. The process
 * forks; parent and child may then share that page write-protected. The parent writes to it: if
 * they shared it, copy-on-write gives the parent a fresh page and the HCA keeps the old one, now
 * the child's. The HCA and the process it serves silently stop sharing memory ("orphaned").
 * MADV_DONTFORK keeps the range out of the child, so no copy-on-write happens; kernels since 5.9
 * copy a DMA-pinned page for the child at fork instead of sharing it.
 *
 * This program plays it once on one device, through an RC queue pair connected to itself:
 *   1. an RDMA WRITE before the fork, which the process must see (else nothing is proved);
 *   2. fork; the child waits on a pipe, keeping its copy of the address space;
 *   3. the parent writes to the buffer;
 *   4. an RDMA READ of the buffer (does the HCA see the parent's write?) and an RDMA WRITE into it
 *      (does the parent see the HCA's?); then the child says what it finds at that address.
 *
 * Build: cc repro.c -libverbs -o repro     (rdma-core's libibverbs and a provider: any HCA, or
 *        Soft-RoCE: rdma link add rxe0 type rxe netdev lo)
 * Run:   ./repro [-d] [-f] [-g GID_INDEX] [-i PORT] [DEVICE]   (default: the first device, port 1)
 *   -d   madvise(MADV_DONTFORK) the buffer before registering it
 *   -f   ibv_fork_init() first (RDMAV_FORK_SAFE=1 in the environment does the same)
 * Prints what it ran on, what each party saw and the verdict with its reason, in three lines.
 * Exit status: 0 coherent, 1 orphaned, 2 could not tell (a setup error, or observations that
 * prove neither), with the reason on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LEN 16			/* bytes of each message */
#define AT_PARENT 0		/* where the parent writes after the fork */
#define AT_HCA 256		/* where the HCA writes after the fork */
#define AT_CONTROL 512		/* where the HCA writes before the fork */

static const char PREFORK[LEN] = "before the fork";
static const char PARENT[LEN] = "parent wrote";
static const char HCA[LEN] = "the HCA wrote";
static const char CONTROL[LEN] = "HCA, pre-fork";

static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	fprintf(stderr, "repro: could not tell: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, err ? ": %s\n" : "\n", strerror(err));
	exit(2);
}

static struct ibv_context *ctx;
static struct ibv_cq *cq;
static struct ibv_qp *qp;

/* One RDMA READ or WRITE of LEN bytes between local (in lmr) and remote (in rmr), waited for. */
static void rdma(enum ibv_wr_opcode op, struct ibv_mr *lmr, char *local, struct ibv_mr *rmr,
		 char *remote, const char *what)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = LEN, .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)remote, .rkey = rmr->rkey },
	}, *bad;
	struct timespec start, now;
	struct ibv_wc wc;
	int n;

	errno = 0;
	if (ibv_post_send(qp, &wr, &bad))
		fail("posting the %s", what);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!(n = ibv_poll_cq(cq, 1, &wc))) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* A hang guard, not a window: a loopback transfer takes microseconds. */
		if (now.tv_sec - start.tv_sec > 60) {
			errno = 0;
			fail("the %s did not complete in 60 s", what);
		}
		usleep(100);
	}
	if (n < 0)
		fail("polling the CQ for the %s", what);
	if (wc.status != IBV_WC_SUCCESS) {
		errno = 0;
		fail("the %s completed with %s", what, ibv_wc_status_str(wc.status));
	}
}

/*
 * The GID a RoCE port addresses itself with: the one asked for, else the first IPv4-mapped one
 * (RoCE v2 over IPv4 reaches its own address on every provider, Soft-RoCE on lo included), else
 * the first that is set.
 */
static int pick_gid(uint8_t port, int len, int asked)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	int first = -1;
	union ibv_gid gid;

	if (asked >= 0)
		return asked;
	for (int i = 0; i < len; i++) {
		if (ibv_query_gid(ctx, port, i, &gid) || !(gid.global.subnet_prefix ||
							   gid.global.interface_id))
			continue;
		if (!memcmp(gid.raw, v4mapped, sizeof(v4mapped)))
			return i;
		if (first < 0)
			first = i;
	}
	return first;
}

/* The QP, connected to itself: INIT, RTR (its own QPN, its own address), RTS. */
static void connect_to_self(uint8_t port, int gid_index)
{
	struct ibv_port_attr pa;
	struct ibv_qp_attr a;

	errno = 0;
	if (ibv_query_port(ctx, port, &pa))
		fail("querying port %u", port);
	if (pa.state != IBV_PORT_ACTIVE) {
		errno = 0;
		fail("port %u is %s, not active", port, ibv_port_state_str(pa.state));
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		fail("moving the QP to INIT");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = port;
	a.ah_attr.dlid = pa.lid;
	if (pa.link_layer == IBV_LINK_LAYER_ETHERNET) {
		gid_index = pick_gid(port, pa.gid_tbl_len, gid_index);
		if (gid_index < 0 || ibv_query_gid(ctx, port, gid_index, &a.ah_attr.grh.dgid)) {
			errno = 0;
			fail("port %u has no GID to address itself with (try -g)", port);
		}
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.sgid_index = gid_index;
		a.ah_attr.grh.hop_limit = 1;
	}
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		fail("moving the QP to RTR");

	/* Ready to send: the usual retries, one RDMA READ in flight at a time. */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				  .rnr_retry = 7, .max_rd_atomic = 1 };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		fail("moving the QP to RTS");
}

/* What a buffer holds at p, in words. */
static const char *which(const char *p)
{
	return !memcmp(p, HCA, LEN) ? "the HCA's write" :
	       !memcmp(p, PARENT, LEN) ? "the parent's write" :
	       !memcmp(p, PREFORK, LEN) ? "the pre-fork bytes" : "other bytes";
}

/* Whether this process maps addr, from /proc/self/maps. */
static int mapped(const void *addr)
{
	unsigned long start, end;
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%lx-%lx", &start, &end) == 2 &&
			(uintptr_t)addr >= start && (uintptr_t)addr < end;
	if (f)
		fclose(f);
	return found;
}

static const char *fork_status(void)
{
	switch (ibv_is_fork_initialized()) {
	case IBV_FORK_ENABLED:
		return "ENABLED";
	case IBV_FORK_UNNEEDED:
		return "UNNEEDED";
	default:
		return "DISABLED";
	}
}

int main(int argc, char **argv)
{
	int dontfork = 0, fork_init = 0, gid_index = -1, port = 1, opt, n, status, share = -1;
	int go[2], back[2], parent_sees, hca_sees, child_has;
	struct ibv_mr *mr, *lmr;
	struct ibv_device **list;
	const char *name = NULL;
	char child_sees[32];
	struct utsname u;
	struct ibv_pd *pd;
	size_t page = sysconf(_SC_PAGESIZE);
	char *buf, *local;
	FILE *f;
	pid_t pid;

	while ((opt = getopt(argc, argv, "dfg:i:")) != -1) {
		switch (opt) {
		case 'd':
			dontfork = 1;
			break;
		case 'f':
			fork_init = 1;
			break;
		case 'g':
			gid_index = atoi(optarg);
			break;
		case 'i':
			port = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-d] [-f] [-g GID_INDEX] [-i PORT] [DEVICE]\n",
				argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		name = argv[optind];
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Fork support must be asked for before anything is registered. */
	errno = fork_init ? ibv_fork_init() : 0;
	if (errno)
		fail("ibv_fork_init()");
	errno = 0;
	list = ibv_get_device_list(&n);
	if (!list || !n)
		fail("no RDMA device (load a provider, or: rdma link add rxe0 type rxe netdev lo)");
	for (int i = 0; i < n && !ctx; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx && name) {
		errno = 0;
		fail("no device %s, or it would not open", name);
	}
	if (!ctx)
		fail("could not open %s", ibv_get_device_name(list[0]));
	name = ibv_get_device_name(ctx->device);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	if (!cq)
		fail("a PD and a CQ on %s", name);
	qp = ibv_create_qp(pd, &(struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	});
	if (!qp)
		fail("an RC QP on %s", name);
	connect_to_self(port, gid_index);

	/*
	 * buf is the MR under test, one page of its own. local is the other end of each transfer,
	 * MADV_DONTFORK always, so that the only page fork can take from the HCA is buf's.
	 */
	buf = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	local = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || local == MAP_FAILED)
		fail("mmap");
	if (madvise(local, page, MADV_DONTFORK) || (dontfork && madvise(buf, page, MADV_DONTFORK)))
		fail("madvise(MADV_DONTFORK)");
	memcpy(buf + AT_PARENT, PREFORK, LEN);
	memcpy(buf + AT_HCA, PREFORK, LEN);
	mr = ibv_reg_mr(pd, buf, page, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE);
	lmr = mr ? ibv_reg_mr(pd, local, page, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!lmr)
		fail("ibv_reg_mr");

	/* 1. The control: before the fork the HCA's write reaches the process's buffer. */
	memcpy(local, CONTROL, LEN);
	rdma(IBV_WR_RDMA_WRITE, lmr, local, mr, buf + AT_CONTROL, "RDMA WRITE before the fork");
	if (memcmp(buf + AT_CONTROL, CONTROL, LEN)) {
		errno = 0;
		fail("the RDMA WRITE before the fork did not reach the buffer: %s's loopback does "
		     "not work (try -g)", name);
	}

	/* 2. Fork; the child keeps its copy of everything until told, then says what it sees. */
	if (pipe(go) || pipe(back))
		fail("pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (!pid) {
		char c;

		if (read(go[0], &c, 1) != 1)
			_exit(1);
		snprintf(child_sees, sizeof(child_sees), "%s",
			 mapped(buf) ? which(buf + AT_HCA) : "no page there");
		_exit(write(back[1], child_sees, sizeof(child_sees)) != sizeof(child_sees));
	}

	/* 3. The parent writes: copy-on-write, if fork left the page shared. */
	memcpy(buf + AT_PARENT, PARENT, LEN);

	/* 4. The HCA reads what the parent wrote, and writes next to it. */
	rdma(IBV_WR_RDMA_READ, lmr, local, mr, buf + AT_PARENT, "RDMA READ after the fork");
	hca_sees = !memcmp(local, PARENT, LEN);
	memcpy(local + AT_HCA, HCA, LEN);
	rdma(IBV_WR_RDMA_WRITE, lmr, local + AT_HCA, mr, buf + AT_HCA, "RDMA WRITE after the fork");
	parent_sees = !memcmp(buf + AT_HCA, HCA, LEN);
	if (write(go[1], "x", 1) != 1 || read(back[0], child_sees, sizeof(child_sees)) !=
	    sizeof(child_sees) || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("the child did not say what it sees");
	child_sees[sizeof(child_sees) - 1] = 0;
	child_has = strcmp(child_sees, "no page there");

	/* What it ran on; the lab kernel's switch that brings back fork's sharing, if present. */
	f = fopen("/proc/sys/vm/fork_share_pinned", "r");
	if (f && fscanf(f, "%d", &share) != 1)
		share = -1;
	if (f)
		fclose(f);
	uname(&u);
	printf("repro: %s port %d on Linux %s%s; rdma-core fork support %s; MADV_DONTFORK %s\n",
	       name, port, u.release, share < 0 ? "" : share ? ", vm.fork_share_pinned=1" :
	       ", vm.fork_share_pinned=0", fork_status(), dontfork ? "yes (-d)" : "no");
	printf("after fork and a parent write: the parent sees %s, the HCA reads %s, the child "
	       "sees %s\n", which(buf + AT_HCA), which(local), child_sees);
	if (parent_sees && hca_sees) {
		printf("COHERENT: %s\n", !child_has ? dontfork ?
		       "the buffer is MADV_DONTFORK, so the child has no copy and the parent's "
		       "write copied nothing" :
		       "rdma-core's fork support marked the MR MADV_DONTFORK, so the child has no "
		       "copy and the parent's write copied nothing" :
		       !strcmp(child_sees, "the pre-fork bytes") ?
		       "fork gave the child its own copy of the pinned page (as Linux does since "
		       "5.9), so the parent's write found its page its own" :
		       "the parent and the HCA kept one page, but the child's view is not a copy "
		       "made at the fork");
		return 0;
	}
	if (!parent_sees && !hca_sees) {
		printf("ORPHANED: fork left the pinned page shared with the child; the parent's "
		       "write gave the parent a copy and the HCA kept the old page, now %s\n",
		       !strcmp(child_sees, "the HCA's write") ? "the child's" : "no one's");
		return 1;
	}
	errno = 0;
	fail("the parent %s the HCA's write but the HCA %s the parent's: neither verdict",
	     parent_sees ? "sees" : "does not see", hca_sees ? "sees" : "does not see");
}
