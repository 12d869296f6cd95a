// SPDX-License-Identifier: GPL-2.0
/*
 * pindma's bounds: pins are charged to the caller's pinned_vm (VmPin) against RLIMIT_MEMLOCK, as
 * ib_umem charges them, and to the user, as io_uring charges user->locked_vm, so that no fork, exec
 * or inherited file gives a fresh budget, a large folio costing all its pages; CAP_IPC_LOCK lifts
 * the limit, and what it lets over is charged to no user. A file holds at most
 * PINDMA_MAX_HANDLES handles, and no pin may leave a page with more than PINDMA_MAX_PAGE_REFS
 * references. Each bound is judged by the kernel's counters (FOLL_PIN, MemAvailable, VmPin), not
 * the driver's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

static int pin_as_nobody(void *arg)
{
	char *buf = arg;
	uint32_t h, h2;
	int fd;

	fd = nobody_opens_pindma(16);
	if (fd < 0)
		return 11;
	if (pindma_pin(fd, buf, 17 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h) != -ENOMEM)
		return 12;
	if (pindma_pin(fd, buf, 16 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h))
		return 13;
	/* The limit counts what is already pinned. */
	if (pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h2) != -ENOMEM)
		return 14;
	if (lab_status_kb("VmPin") != 64)
		return 15;
	if (pindma_unpin(fd, h) || lab_status_kb("VmPin") != 0)
		return 16;
	return 0;
}

/* An unprivileged user is held to RLIMIT_MEMLOCK, as ib_umem holds it. */
TEST(unprivileged_user_is_held_to_rlimit_memlock)
{
	EXPECT_STEPS_PASS_ON_ANON(pin_as_nobody, 32);
}

static int pin_over_the_limit(void *arg)
{
	struct rlimit lim = { 16 * LAB_PAGE, 16 * LAB_PAGE };
	char *buf = arg;
	uint32_t h, h2;
	int fd = pindma_open();

	if (fd < 0 || setrlimit(RLIMIT_MEMLOCK, &lim))
		return 10;
	/* Twice the limit, and the kernel's counters see all of it. */
	if (pindma_pin(fd, buf, 32 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h))
		return 11;
	if (lab_status_kb("VmPin") != 128)
		return 12;
	if (drop_effective(CAP_IPC_LOCK))
		return 13;
	if (pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_GUP, 0, &h2) != -ENOMEM)
		return 14;
	if (pindma_unpin(fd, h) || lab_status_kb("VmPin") != 0)
		return 15;
	close(fd);
	return 0;
}

/* CAP_IPC_LOCK lifts RLIMIT_MEMLOCK, as for ib_umem; without it the limit holds again. */
TEST(cap_ipc_lock_pins_over_rlimit_memlock)
{
	char *buf = lab_map_anon(32 * LAB_PAGE);

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (CAP_IPC_LOCK)");
	EXPECT_STEPS_PASS(pin_over_the_limit, buf);
	munmap(buf, 32 * LAB_PAGE);
}

/*
 * The pins of a file outlive the process that made them while the file is open. Each child of a
 * process that keeps the file pins all it may and exits: charged to each child's own address
 * space, every child had a fresh RLIMIT_MEMLOCK (seen: many times the limit within seconds),
 * pinned memory that no live task's RSS shows; charged to the user, they hold the limit at most.
 */
#define LOOP_LIMIT 2048		/* nobody's RLIMIT_MEMLOCK, in pages */
#define LOOP_CHILDREN 16

struct loop {
	long *pinned;		/* shared: pages the children pinned, as they saw it */
};

/* A child: pin LOOP_LIMIT pages of its own in one call, or one by one once that is refused. */
static int pin_all_it_may(int fd, long *pinned)
{
	char *buf = lab_map_anon(LOOP_LIMIT * LAB_PAGE);
	uint32_t h;
	long n = 0;
	int ret;

	if (buf == MAP_FAILED)
		return 1;
	ret = pindma_pin(fd, buf, LOOP_LIMIT * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM,
			 PINDMA_PIN_WRITE, &h);
	if (!ret)
		n = LOOP_LIMIT;
	else if (ret != -ENOMEM)
		return 2;
	while (n < LOOP_LIMIT && !(ret = pindma_pin(fd, buf + n * LAB_PAGE, LAB_PAGE,
						    PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h)))
		n++;
	__atomic_add_fetch(pinned, n, __ATOMIC_SEQ_CST);
	/* Exits holding them: they are the file's. */
	return n < LOOP_LIMIT && ret != -ENOMEM ? 3 : 0;
}

/* nobody, keeping one open file while its children pin through it and exit; then it waits. */
static int keep_the_file(struct lab_child *c, void *arg)
{
	struct loop *l = arg;
	int fd = nobody_opens_pindma(LOOP_LIMIT), status;
	long *pinned = l->pinned;

	if (fd < 0)
		return 10;
	for (int i = 0; i < LOOP_CHILDREN; i++) {
		pid_t pid = fork();

		if (!pid)
			_exit(pin_all_it_may(fd, pinned));
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return 11;
	}
	if (lab_child_report(c, pinned, sizeof(*pinned)))
		return 12;
	/* The file stays open, holding what the children left, until the test has looked. */
	if (lab_child_wait(c) < 0)
		return 13;
	/* Its close gives the user's charge back: the whole limit pins again, in one call. */
	close(fd);
	fd = pindma_open();
	*pinned = 0;
	return fd < 0 || pin_all_it_may(fd, pinned) || *pinned != LOOP_LIMIT ? 14 : 0;
}

/*
 * MemAvailable with the page cache dropped and the per-CPU free lists drained (compaction drains
 * them): freed pages still on those lists count as used.
 */
static long settled_available(void)
{
	lab_write_str("/proc/sys/vm/drop_caches", "3");
	lab_write_str("/proc/sys/vm/compact_memory", "1");
	return lab_meminfo_kb("MemAvailable");
}

TEST(children_that_pin_and_exit_hold_at_most_the_users_limit)
{
	struct lab_child c;
	struct loop l;
	long foll = lab_foll_pins(), avail, held, seen;

	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (nobody's children, vm.stat_refresh)");
	l.pinned = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, l.pinned);
	*l.pinned = 0;
	avail = settled_available();
	ASSERT_EQ(0, lab_child_start(&c, keep_the_file, &l));
	ASSERT_EQ(0, lab_child_read(&c, &seen, sizeof(seen)))
		TH_LOG("the process keeping the file failed: %d", lab_child_reap(&c));
	held = lab_foll_pins() - foll;
	avail -= settled_available();
	TH_LOG("%d children, each limited to %d pages, pinned %ld: FOLL_PIN outstanding %ld pages "
	       "more, MemAvailable %ld kB lower", LOOP_CHILDREN, LOOP_LIMIT, seen, held, avail);
	/* The first child pins the whole limit, and no later one gets a page. */
	EXPECT_EQ(LOOP_LIMIT, held) TH_LOG("FOLL_PIN outstanding");
	if (lab_memfree_is_exact())
		EXPECT_GT(4 * LOOP_LIMIT * (long)(LAB_PAGE / 1024), avail)
			TH_LOG("MemAvailable fell by more than 4 times the limit");
	ASSERT_EQ(0, lab_child_go(&c, 'x'));
	EXPECT_EQ(0, lab_child_reap(&c)) TH_LOG("step 14: the limit did not pin again once closed");
	EXPECT_EQ(foll, lab_foll_pins()) TH_LOG("the files' close released everything");
	munmap(l.pinned, LAB_PAGE);
}

/*
 * A pin of one page of a THP holds the whole 2 MiB folio: unmapped, the folio stays, mapped by no
 * one, for as long as the pin. Charged as the one page pinned, nobody limited to THP_LIMIT pages
 * could hold THP_LIMIT folios; charged as the folio's 512 pages, it holds THP_LIMIT pages.
 */
#define THP_SIZE (2UL << 20)
#define THP_LIMIT 2048		/* nobody's RLIMIT_MEMLOCK, in pages: 4 THPs */
#define THP_FIT ((long)(THP_LIMIT * LAB_PAGE / THP_SIZE))
#define THP_TRIES 32

struct thp_report {
	int pinned;	/* THPs pinned (a page each) and unmapped */
	int err;	/* what the PIN after them returned */
	int not_huge;	/* a buffer that AnonHugePages did not see become a THP */
};

static int pin_a_page_of_each_thp(struct lab_child *c, void *arg)
{
	struct thp_report r = { 0 };
	int fd = nobody_opens_pindma(THP_LIMIT);

	(void)arg;
	if (fd < 0)
		return 10;
	while (r.pinned < THP_TRIES && !r.err) {
		/* Twice the size, for a 2 MiB-aligned 2 MiB inside. */
		char *map = mmap(NULL, 2 * THP_SIZE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *buf = (char *)(((uintptr_t)map + THP_SIZE - 1) & ~(THP_SIZE - 1));
		long huge = lab_meminfo_kb("AnonHugePages");
		uint32_t h;

		if (map == MAP_FAILED || madvise(buf, THP_SIZE, MADV_HUGEPAGE))
			return 11;
		memset(buf, 1, THP_SIZE);
		if (lab_meminfo_kb("AnonHugePages") < huge + (long)(THP_SIZE / 1024))
			r.not_huge++;
		r.err = pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h);
		munmap(map, 2 * THP_SIZE);
		if (!r.err)
			r.pinned++;
	}
	if (lab_child_report(c, &r, sizeof(r)) || lab_child_wait(c) < 0)
		return 12;
	close(fd);
	return 0;
}

TEST(a_pinned_thp_is_charged_as_the_whole_folio)
{
	struct thp_report r;
	struct lab_child c;
	long foll = lab_foll_pins(), avail, held;

	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (nobody's child, vm.stat_refresh)");
	avail = settled_available();
	ASSERT_EQ(0, lab_child_start(&c, pin_a_page_of_each_thp, NULL));
	ASSERT_EQ(0, lab_child_read(&c, &r, sizeof(r)))
		TH_LOG("the pinning process failed: %d", lab_child_reap(&c));
	held = lab_foll_pins() - foll;
	avail -= settled_available();
	TH_LOG("limit %d pages: %d THPs pinned a page each and unmapped, then %s; FOLL_PIN "
	       "outstanding %ld more, MemAvailable %ld kB lower", THP_LIMIT, r.pinned,
	       r.err ? strerror(-r.err) : "no refusal", held, avail);
	ASSERT_EQ(0, r.not_huge) TH_LOG("buffers that did not become THPs: nothing measured");
	EXPECT_EQ(-ENOMEM, r.err);
	EXPECT_EQ(THP_FIT, held) TH_LOG("FOLL_PIN outstanding: one pin a THP");
	if (lab_memfree_is_exact())
		EXPECT_GT(4 * THP_LIMIT * (long)(LAB_PAGE / 1024), avail)
			TH_LOG("MemAvailable fell by more than 4 times the limit");
	ASSERT_EQ(0, lab_child_go(&c, 'x'));
	EXPECT_EQ(0, lab_child_reap(&c));
	EXPECT_EQ(foll, lab_foll_pins()) TH_LOG("the file's close released everything");
}

/*
 * What CAP_IPC_LOCK pins past the limit is charged to no user: the user's locked_vm is what
 * io_uring, perf and XDP charge too, and a pin over it would leave the uid's processes without
 * CAP_IPC_LOCK none. io_uring's buffer registration, charged to the user by the kernel's own
 * __io_account_mem(), says whether any is left.
 */
static int io_uring_registers_a_page(char *page)
{
	struct iovec iov = { .iov_base = page, .iov_len = LAB_PAGE };
	struct io_uring_params p = { 0 };
	int ring = syscall(__NR_io_uring_setup, 1, &p), ret;

	if (ring < 0)
		return -errno;
	ret = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1);
	ret = ret < 0 ? -errno : 0;
	/* Its pin goes now, not with the ring's teardown, which the kernel defers to a worker. */
	if (!ret && syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0))
		ret = -errno;
	close(ring);
	return ret;
}

static int pin_over_the_limit_then_io_uring(void *arg)
{
	struct rlimit lim = { 16 * LAB_PAGE, 16 * LAB_PAGE };
	char *buf = arg;
	uint32_t h;
	int fd = pindma_open();

	if (fd < 0 || setrlimit(RLIMIT_MEMLOCK, &lim))
		return 10;
	/* Without CAP_IPC_LOCK, a pin of the whole limit leaves io_uring nothing. */
	if (drop_effective(CAP_IPC_LOCK) ||
	    pindma_pin(fd, buf, 16 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h))
		return 11;
	if (io_uring_registers_a_page(buf + 32 * LAB_PAGE) != -ENOMEM)
		return 12;
	if (pindma_unpin(fd, h))
		return 13;
	/* Now over the limit with CAP_IPC_LOCK, then without it again. */
	if (raise_effective(CAP_IPC_LOCK) ||
	    pindma_pin(fd, buf, 32 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h) ||
	    drop_effective(CAP_IPC_LOCK))
		return 14;
	if (io_uring_registers_a_page(buf + 32 * LAB_PAGE))
		return 15;
	close(fd);
	return 0;
}

TEST(cap_ipc_lock_pins_charge_no_user)
{
	char *buf = lab_map_anon(33 * LAB_PAGE);

	long foll = lab_foll_pins();

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (CAP_IPC_LOCK)");
	EXPECT_STEPS_PASS(pin_over_the_limit_then_io_uring, buf);
	EXPECT_EQ(foll, lab_foll_pins()) TH_LOG("FOLL_PIN left by the child");
	munmap(buf, 33 * LAB_PAGE);
}

/*
 * Each kernel uid is a user_struct with a locked_vm of its own: a user with subordinate uids
 * would get a fresh RLIMIT_MEMLOCK in each user namespace it maps, so pindma refuses every pin
 * from a namespace other than the initial one.
 */
static int pin_from_a_user_namespace(void *arg)
{
	char *buf = arg, map[32];
	uint32_t h;
	int fd;

	/* The kernel has the namespace type when /proc names it for every task. */
	if (access("/proc/self/ns/user", F_OK))
		return 4;
	fd = nobody_opens_pindma(16);
	if (fd < 0)
		return 10;
	if (unshare(CLONE_NEWUSER))
		return 11;
	/*
	 * Dropping to nobody made the process undumpable, which leaves its /proc files root's:
	 * its own uid_map would not open.
	 */
	if (prctl(PR_SET_DUMPABLE, 1))
		return 14;
	snprintf(map, sizeof(map), "0 %u 1", 65534U);
	if (lab_write_str("/proc/self/uid_map", map))
		return 12;
	if (pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h) != -EPERM)
		return 13;
	return 0;
}

TEST(a_pin_from_a_user_namespace_is_eperm)
{
	char *buf = lab_map_anon(LAB_PAGE);
	long foll = lab_foll_pins();
	int status;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (nobody's child)");
	status = lab_in_child(pin_from_a_user_namespace, buf);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "this kernel has no user namespaces (CONFIG_USER_NS)");
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed", WEXITSTATUS(status));
	EXPECT_EQ(foll, lab_foll_pins()) TH_LOG("FOLL_PIN outstanding after the child");
	munmap(buf, LAB_PAGE);
}

/*
 * The same loop with a file of each child's own: a child of nobody opens /dev/pindma, pins all
 * it may, hands the file to a keeper (SCM_RIGHTS) and exits. Every pin is then charged to the
 * mm of the process that opened its file, and that mm is gone: a charge to the opener's mm, or
 * to the pinner's, gives each child a fresh limit; one to the user holds them all to one limit.
 * With the keeper holding the user's limit, a process of nobody's that shares nothing with them
 * may pin nothing.
 */
struct passed {
	int sock;		/* the keeper's end */
	long *pinned;
};

/* A child: a file of its own, pinned as far as its limit allows, handed to the keeper. */
static int pin_and_pass(int sock, long *pinned)
{
	int fd = nobody_opens_pindma(LOOP_LIMIT), ret;

	if (fd < 0)
		return 20;
	ret = pin_all_it_may(fd, pinned);
	if (ret)
		return ret;
	return lab_send_fd(sock, fd) ? 21 : 0;
}

/*
 * nobody, keeping every file it is handed until the test has looked. It closes its copy of the
 * senders' end first: once the test and its children are gone (killed under fault_test's faults),
 * its receive then ends (a SOCK_SEQPACKET pair), and it exits with the files, rather than waiting
 * for ever with them.
 */
static int keep_passed_files(struct lab_child *c, void *arg)
{
	int *sv = arg, sock = sv[1], fds[LOOP_CHILDREN], n;

	close(sv[0]);
	if (lab_become_nobody(0))
		return 30;
	for (n = 0; n < LOOP_CHILDREN; n++) {
		fds[n] = lab_recv_fd(sock);
		if (fds[n] < 0)
			return 31;
	}
	if (lab_child_report(c, &n, sizeof(n)) || lab_child_wait(c) < 0)
		return 32;
	while (n--)
		close(fds[n]);
	return 0;
}

/* A process of nobody's that shares nothing with the others: what one page's PIN answers. */
static int one_more_page(void *arg)
{
	char *buf = lab_map_anon(LAB_PAGE);
	int fd = nobody_opens_pindma(LOOP_LIMIT);
	uint32_t h;

	(void)arg;
	if (fd < 0 || buf == MAP_FAILED)
		return 255;
	return -pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h);
}

TEST(children_with_files_of_their_own_hold_at_most_the_users_limit)
{
	long foll = lab_foll_pins(), avail, held, *pinned;
	int sv[2], files = 0, status;
	struct lab_child c;

	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (nobody's children, vm.stat_refresh)");
	pinned = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pinned);
	*pinned = 0;
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));
	avail = settled_available();
	ASSERT_EQ(0, lab_child_start(&c, keep_passed_files, sv));
	for (int i = 0; i < LOOP_CHILDREN; i++) {
		pid_t pid = fork();

		if (!pid)
			_exit(pin_and_pass(sv[0], pinned));
		ASSERT_LT(0, pid);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("child %d: wait status %#x", i, status);
	}
	ASSERT_EQ(0, lab_child_read(&c, &files, sizeof(files)))
		TH_LOG("the keeper failed: %d", lab_child_reap(&c));
	held = lab_foll_pins() - foll;
	avail -= settled_available();
	TH_LOG("%d children with files of their own, each limited to %d pages, pinned %ld, the "
	       "keeper holds %d files: FOLL_PIN outstanding %ld pages more, MemAvailable %ld kB lower",
	       LOOP_CHILDREN, LOOP_LIMIT, *pinned, files, held, avail);
	EXPECT_EQ(LOOP_LIMIT, held) TH_LOG("FOLL_PIN outstanding");
	if (lab_memfree_is_exact())
		EXPECT_GT(4 * LOOP_LIMIT * (long)(LAB_PAGE / 1024), avail)
			TH_LOG("MemAvailable fell by more than 4 times the limit");
	status = lab_in_child(one_more_page, NULL);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 255)
		TH_LOG("the unrelated process: wait status %#x", status);
	EXPECT_EQ(ENOMEM, WEXITSTATUS(status))
		TH_LOG("an unrelated process of nobody's pinned a page while the keeper held nobody's "
		       "limit: PIN answered %s", strerror(WEXITSTATUS(status)));
	ASSERT_EQ(0, lab_child_go(&c, 'x'));
	EXPECT_EQ(0, lab_child_reap(&c));
	EXPECT_EQ(foll, lab_foll_pins()) TH_LOG("the keeper's close released everything");
	close(sv[0]);
	close(sv[1]);
	munmap(pinned, LAB_PAGE);
}

/*
 * One page that many users may map (a tmpfs file's, read-only for nobody), pinned read-only again
 * and again: each FOLL_PIN of a small page adds 1024 to its reference count, which overflows at
 * 2^31 (6.1's try_grab_page() and 6.12's try_grab_folio() WARN there). The page is mapped at
 * SHARED_MAPS addresses, so that one PIN adds SHARED_MAPS pins of it; nobody's limit is raised
 * far enough that only the bound can refuse.
 */
#define SHARED_MAPS 512
#define SHARED_FILE "/tmp/pindma-shared-page"
/* The reference count one PIN adds, and the PINs that fit under the bound (the page's own >= 1). */
#define PER_PIN ((long)SHARED_MAPS * 1024)
#define FIT ((PINDMA_MAX_PAGE_REFS - 1) / PER_PIN)

struct bound_report {
	int fits;	/* PINs that succeeded */
	int err;	/* what the next one returned */
	int again;	/* a PIN after one UNPIN */
};

static int pin_the_shared_page(struct lab_child *c, void *arg)
{
	struct bound_report r = { .err = 1 };
	uint32_t h[FIT + 2];
	char *map;
	int fd, file = open(SHARED_FILE, O_RDONLY);

	(void)arg;
	fd = nobody_opens_pindma((FIT + 2) * SHARED_MAPS);
	map = mmap(NULL, SHARED_MAPS * LAB_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || file < 0 || map == MAP_FAILED)
		return 10;
	for (int i = 0; i < SHARED_MAPS; i++)
		if (mmap(map + i * LAB_PAGE, LAB_PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, file, 0) ==
		    MAP_FAILED)
			return 11;
	while (r.fits < FIT + 2) {
		r.err = pindma_pin(fd, map, SHARED_MAPS * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0,
				   &h[r.fits]);
		if (r.err)
			break;
		r.fits++;
	}
	if (lab_child_report(c, &r, sizeof(r)) || lab_child_wait(c) < 0)
		return 12;
	if (r.fits && !pindma_unpin(fd, h[0]))
		r.again = pindma_pin(fd, map, SHARED_MAPS * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0,
				     &h[0]);
	return lab_child_report(c, &r, sizeof(r)) || lab_child_wait(c) < 0 ? 13 : 0;
}

TEST(one_shared_page_is_pinned_until_the_bound_refuses)
{
	struct bound_report r;
	struct lab_child c;
	long foll = lab_foll_pins();
	int file;

	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (vm.stat_refresh)");
	file = open(SHARED_FILE, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, file);
	ASSERT_EQ((ssize_t)LAB_PAGE, write(file, calloc(1, LAB_PAGE), LAB_PAGE));
	ASSERT_EQ(0, lab_child_start(&c, pin_the_shared_page, NULL));
	ASSERT_EQ(0, lab_child_read(&c, &r, sizeof(r)))
		TH_LOG("the pinning process failed: %d", lab_child_reap(&c));
	TH_LOG("%d PINs of %d pins each before: %s", r.fits, SHARED_MAPS, strerror(-r.err));
	EXPECT_EQ(-ETOOMANYREFS, r.err);
	EXPECT_EQ(FIT, r.fits) TH_LOG("PINs that fit under PINDMA_MAX_PAGE_REFS");
	EXPECT_EQ(r.fits * SHARED_MAPS, lab_foll_pins() - foll)
		TH_LOG("FOLL_PIN outstanding: the refused PIN must hold nothing");
	ASSERT_EQ(0, lab_child_go(&c, 'u'));
	ASSERT_EQ(0, lab_child_read(&c, &r, sizeof(r)));
	EXPECT_EQ(0, r.again) TH_LOG("a PIN once one was unpinned");
	ASSERT_EQ(0, lab_child_go(&c, 'x'));
	EXPECT_EQ(0, lab_child_reap(&c));
	EXPECT_EQ(foll, lab_foll_pins()) TH_LOG("the file's close released everything");
	close(file);
	unlink(SHARED_FILE);
}

/*
 * A file holds at most PINDMA_MAX_HANDLES handles; an UNPIN frees a place, and another file may
 * hold as many again. The handle table's lock is global: the release of a full file must not hold
 * it for its whole list. Count through the kernel's own tracer how many handles are erased from
 * the table (__xa_erase()) in one hold of its lock (_raw_spin_lock() on the xarray whose entries
 * those erases remove; its lock is the xarray's first member): kprobe events, for this process
 * only, in a tracefs instance of its own.
 */
#define TRACEFS "/sys/kernel/tracing"
static const char *const hold_probes[] = {
	"p:lab_limit/lock _raw_spin_lock lock=%di:x64",
	"p:lab_limit/erase __xa_erase xa=%di:x64",
};

/* The probes are the test's oracle: defined and removed without injected faults (faults.c). */
static int kprobes(bool define)
{
	int faults = lab_faults_off(), fd, ret = 0;
	char line[96];

	fd = open(TRACEFS "/kprobe_events", O_WRONLY | O_APPEND);
	if (fd < 0) {
		lab_faults_restore(faults);
		return -1;
	}
	for (unsigned int i = 0; i < sizeof(hold_probes) / sizeof(hold_probes[0]); i++) {
		if (define)
			snprintf(line, sizeof(line), "%s\n", hold_probes[i]);
		else
			snprintf(line, sizeof(line), "-:%.*s\n",
				 (int)strcspn(hold_probes[i] + 2, " "), hold_probes[i] + 2);
		if (write(fd, line, strlen(line)) < 0 && !(define && errno == EEXIST))
			ret = -1;
	}
	close(fd);
	return lab_faults_restore(faults) ? -1 : ret;
}

/* The trace's events this test reads at most: the release's locks and erases, and more. */
#define MAX_EVENTS (1 << 18)

TEST(a_file_holds_max_handles_and_releases_each_in_a_hold_of_its_own)
{
	char *buf = lab_map_anon(LAB_PAGE);
	static struct { unsigned long long addr; bool erase; } ev[MAX_EVENTS];
	int fd = pindma_open(), fd2 = pindma_open(), ret = 0, pinned = 0;
	int erased = 0, run = 0, most = 0, holds = 0, n = 0;
	long foll = lab_foll_pins(), acquired;
	unsigned long long xa = 0;
	char inst[64], path[128], line[256];
	uint32_t h = 0, h2;
	FILE *f;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (tracefs)");
	while (pinned < PINDMA_MAX_HANDLES &&
	       !(ret = pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h)))
		pinned++;
	EXPECT_EQ(PINDMA_MAX_HANDLES, pinned);
	/* A full file is refused before anything is pinned: the kernel counts no pin taken. */
	acquired = lab_vmstat("nr_foll_pin_acquired");
	EXPECT_EQ(-ENOSPC, pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h2));
	EXPECT_EQ(acquired, lab_vmstat("nr_foll_pin_acquired"))
		TH_LOG("FOLL_PIN acquired by the refused PIN");
	EXPECT_EQ(PINDMA_MAX_HANDLES, lab_foll_pins() - foll) TH_LOG("FOLL_PIN outstanding");
	EXPECT_EQ(0, pindma_unpin(fd, h));
	EXPECT_EQ(0, pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h));
	EXPECT_EQ(0, pindma_pin(fd2, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h));
	close(fd2);
	ASSERT_EQ(0, kprobes(true));
	snprintf(line, sizeof(line), "lab-limit-%d", getpid());
	ASSERT_EQ(0, lab_trace_make(inst, sizeof(inst), line));
	snprintf(line, sizeof(line), "common_pid == %d", getpid());
	ASSERT_EQ(0, lab_trace_set(inst, "events/lab_limit/filter", line));
	ASSERT_EQ(0, lab_trace_set(inst, "buffer_size_kb", "4096"));
	ASSERT_EQ(0, lab_trace_set(inst, "events/lab_limit/enable", "1"));
	close(fd);
	lab_trace_set(inst, "events/lab_limit/enable", "0");
	snprintf(path, sizeof(path), "%s/trace", inst);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	/* The table is the xarray the first erase names: a hold of it begins at each lock of it. */
	while (fgets(line, sizeof(line), f) && n < MAX_EVENTS) {
		char *p = strstr(line, " xa=0x"), *q = strstr(line, " lock=0x");

		if (p && sscanf(p, " xa=0x%llx", &ev[n].addr) == 1)
			ev[n++].erase = true;
		else if (q && sscanf(q, " lock=0x%llx", &ev[n].addr) == 1)
			ev[n++].erase = false;
	}
	for (int i = 0; i < n && !xa; i++)
		xa = ev[i].erase ? ev[i].addr : 0;
	for (int i = 0; i < n; i++) {
		if (ev[i].addr != xa)
			continue;
		if (!ev[i].erase) {
			holds++;
			run = 0;
			continue;
		}
		erased++;
		most = ++run > most ? run : most;
	}
	fclose(f);
	lab_trace_remove(inst);
	kprobes(false);
	TH_LOG("%d handles erased from the table at release, in %d holds of its lock; at most %d "
	       "in one", erased, holds, most);
	EXPECT_EQ(PINDMA_MAX_HANDLES, erased) TH_LOG("the trace did not see every erase");
	EXPECT_LT(0, holds) TH_LOG("the trace saw no lock of the table");
	EXPECT_EQ(1, most);
	EXPECT_EQ(foll, lab_foll_pins()) TH_LOG("closing released everything");
	munmap(buf, LAB_PAGE);
}

LAB_HARNESS_MAIN
