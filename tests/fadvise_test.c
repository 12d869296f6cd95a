// SPDX-License-Identifier: GPL-2.0
/*
 * LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT (kernel-patches/0001) on a real block
 * device: the guest's virtio-blk disk, ext4 on /mnt/disk. Page state is read per page from
 * /proc/self/pagemap + /proc/kpageflags through a shared mapping of the file, and I/O from
 * the disk's written-sector count. The periodic flusher is stopped from the first test's setup
 * to the program's end, so that every write-out seen is one the test asked for.
 *
 * The file system lies on a gate (liblab/gate.c, "lab-disk", made by guest/init): a test holds
 * it, makes a call, and looks at what the call left while every write it started is still held,
 * then lets the writes go. A call that waits for write-out is seen waiting (its kernel stack) and
 * cannot return before the gate opens; one that does not wait returns while it is held. Neither
 * depends on how fast the disk is or how loaded the host.
 */
#define _GNU_SOURCE
/*
 * The tree's installed uapi header, read before liblab's linux_fadvise.h, whose fallback values
 * would otherwise stand in for a header that lacks the commands.
 */
#include <linux/fadvise.h>
#ifdef LINUX_FADV_ASYNC_WRITE
#define UAPI_HAS_COMMANDS 1
enum { uapi_async_write = LINUX_FADV_ASYNC_WRITE, uapi_write_wait = LINUX_FADV_WRITE_WAIT };
#else
#define UAPI_HAS_COMMANDS 0
#endif
#include "linux_fadvise.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"

#define DIR "/mnt/disk"
#define MIB (1024 * 1024UL)
#define SIZE (8 * MIB)
#define NPAGES (SIZE / LAB_PAGE)

/* Every test writes a file on the lab's scratch disk, /dev/vda, which /init mounts on DIR through a gate. */
static const char *lacks_disk(void)
{
	struct stat st;

	return !stat(DIR, &st) && lab_sectors_written("vda") >= 0 ? NULL :
		"no scratch disk /dev/vda on " DIR ": the lab attaches one (vm/boot --disk IMAGE)";
}

FIXTURE(file)
{
	char path[64];
	int fd;
	char *map;
	struct lab_gate gate;
};

FIXTURE_SETUP(file)
{
	struct stat st;
	int dirty, wb;
	char *buf;

	ASSERT_EQ(0, stat(DIR, &st));
	ASSERT_LE(0, lab_sectors_written("vda")) TH_LOG("no /dev/vda: vm/boot --disk attaches it");
	ASSERT_EQ(0, lab_gate_find(&self->gate, "lab-disk"))
		TH_LOG("no gate lab-disk under " DIR " (guest/init makes it)");
	/* A test that failed while it held the gate must not keep the next one waiting. */
	ASSERT_EQ(0, lab_gate_release(&self->gate));
	/* Only what the tests start may reach the disk. */
	ASSERT_EQ(0, lab_quiet_writeback(true));
	/*
	 * One file for every test, allocated and on disk once (a fresh one per test cost 2 s of
	 * the slow disk each): the tests then only overwrite data in place. What a test left
	 * dirty or in flight is written and waited for here, so each starts with every page clean.
	 */
	snprintf(self->path, sizeof(self->path), DIR "/fadvise_test.data");
	self->fd = open(self->path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fstat(self->fd, &st));
	if (st.st_size != (off_t)SIZE || st.st_blocks * 512 < (blkcnt_t)SIZE) {
		buf = malloc(SIZE);
		ASSERT_NE(NULL, buf);
		memset(buf, 'o', SIZE);
		ASSERT_EQ(0, ftruncate(self->fd, 0));
		ASSERT_EQ((ssize_t)SIZE, pwrite(self->fd, buf, SIZE, 0));
		free(buf);
	}
	ASSERT_EQ(0, fsync(self->fd));
	self->map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	ASSERT_EQ(0, dirty + wb) TH_LOG("%d pages dirty, %d in flight after fsync", dirty, wb);
}

FIXTURE_TEARDOWN(file)
{
	lab_gate_release(&self->gate);
	munmap(self->map, SIZE);
	close(self->fd);
}

/*
 * The periodic flusher comes back once, when the program ends (the harness's process; each test
 * runs in a child that leaves with _exit()). Turned back on, the flusher is woken to write back
 * everything dirty, later, from a workqueue (dirty_writeback_centisecs_handler()): from a test's
 * teardown, that write-back landed in the next test after it had dirtied its pages (seen on a
 * fresh boot's first run: up to nearly all of them already clean right after the write).
 */
static void __attribute__((destructor)) writeback_back_on(void)
{
	/* What the last test left dirty is written first, not left to the flusher after us. */
	struct lab_gate gate;
	int fd;

	if (!lab_gate_find(&gate, "lab-disk"))
		lab_gate_release(&gate);
	fd = open(DIR "/fadvise_test.data", O_RDWR);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	lab_quiet_writeback(false);
}

static void dirty_all(FIXTURE_DATA(file) *self, char c)
{
	char *buf = malloc(SIZE);

	memset(buf, c, SIZE);
	if (pwrite(self->fd, buf, SIZE, 0) != (ssize_t)SIZE)
		abort();
	free(buf);
}

/* A call, in a thread of its own: it may wait for write-out the gate holds. */
struct call {
	int fd;
	off_t off, len;
	int advice;		/* LINUX_FADV_*, or -1 for msync(MS_ASYNC) of map */
	char *map;
	int ret;
	atomic_int tid;
	volatile bool done;
	pthread_t thread;
};

static void *call_main(void *arg)
{
	struct call *c = arg;

	atomic_store(&c->tid, gettid());
	if (c->advice < 0)
		c->ret = msync(c->map, SIZE, MS_ASYNC) ? errno : 0;
	else
		c->ret = posix_fadvise(c->fd, c->off, c->len, c->advice);
	c->done = true;
	return NULL;
}

/*
 * Make the call while the gate holds the disk: 1 when it returned, 0 when it was seen waiting for
 * write-out (it returns only once the gate opens: call_join()), -1 on error.
 */
static int call_held(struct call *c)
{
	int tid, seen;

	if (pthread_create(&c->thread, NULL, call_main, c))
		return -1;
	while (!(tid = atomic_load(&c->tid)))
		sched_yield();
	seen = lab_wait_thread_in(tid, LAB_WAITS_FOR_WRITEBACK, &c->done);
	if (seen < 0)
		return -1;
	if (!seen)
		pthread_join(c->thread, NULL);
	return !seen;
}

/* Open the gate and wait for a call that waited; its result. */
static int call_join(FIXTURE_DATA(file) *self, struct call *c)
{
	lab_gate_release(&self->gate);
	pthread_join(c->thread, NULL);
	return c->ret;
}

#define CALL(fadv, o, l) ((struct call){ .fd = self->fd, .off = (o), .len = (l), .advice = (fadv) })

/* The values in the tree's own <linux/fadvise.h>, and the kernel accepting exactly those. */
TEST_F(file, constants_have_their_2006_values)
{
	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");
	ASSERT_TRUE(UAPI_HAS_COMMANDS) TH_LOG("the tree's <linux/fadvise.h> lacks the commands");
#if UAPI_HAS_COMMANDS
	EXPECT_EQ(32, uapi_async_write);
	EXPECT_EQ(33, uapi_write_wait);
#endif
	EXPECT_EQ(EINVAL, posix_fadvise(self->fd, 0, LAB_PAGE, 31));
	EXPECT_EQ(0, posix_fadvise(self->fd, 0, LAB_PAGE, 32));
	EXPECT_EQ(0, posix_fadvise(self->fd, 0, LAB_PAGE, 33));
	EXPECT_EQ(EINVAL, posix_fadvise(self->fd, 0, LAB_PAGE, 34));
}

/*
 * ASYNC_WRITE starts I/O on the range's dirty pages and returns while it is held; the rest of the
 * file stays dirty. Once let go, the disk writes the range.
 */
TEST_F_TIMEOUT(file, async_write_starts_io_on_the_range_only, 120)
{
	struct call c = CALL(LINUX_FADV_ASYNC_WRITE, 0, SIZE / 2);
	long long before;
	int dirty, wb;

	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");

	dirty_all(self, 'a');
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	ASSERT_EQ((int)NPAGES, dirty) TH_LOG("the write should have dirtied every page");
	ASSERT_EQ(0, lab_gate_hold(&self->gate));
	before = lab_sectors_written("vda");
	ASSERT_EQ(1, call_held(&c)) TH_LOG("ASYNC_WRITE waited for the write-out it started");
	ASSERT_EQ(0, c.ret);
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES / 2, &dirty, &wb));
	EXPECT_EQ(0, dirty) TH_LOG("%d pages of the range still dirty", dirty);
	EXPECT_EQ((int)NPAGES / 2, wb) TH_LOG("%d pages of the range in flight", wb);
	ASSERT_EQ(0, lab_page_states(self->map, NPAGES / 2, NPAGES / 2, &dirty, &wb));
	EXPECT_EQ((int)NPAGES / 2, dirty) TH_LOG("pages outside the range were written");
	EXPECT_EQ(0, wb);
	EXPECT_EQ(before, lab_sectors_written("vda")) TH_LOG("a write passed the held gate");
	ASSERT_EQ(0, lab_gate_release(&self->gate));
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, SIZE / 2, LINUX_FADV_WRITE_WAIT));
	EXPECT_LE(before + (long long)(SIZE / 2 / 512), lab_sectors_written("vda"));
}

/* Through a shared mapping too: the dirtied PTEs are found and written. */
TEST_F_TIMEOUT(file, async_write_covers_mmap_writes, 120)
{
	struct call c = CALL(LINUX_FADV_ASYNC_WRITE, 0, 0);
	int dirty, wb;

	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");

	for (unsigned long i = 0; i < SIZE; i += LAB_PAGE)
		self->map[i] = 'm';
	ASSERT_EQ(0, lab_gate_hold(&self->gate));
	ASSERT_EQ(1, call_held(&c)) TH_LOG("ASYNC_WRITE waited for the write-out it started");
	ASSERT_EQ(0, c.ret) TH_LOG("len 0: to EOF");
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	EXPECT_EQ(0, dirty);
	EXPECT_EQ((int)NPAGES, wb);
}

/*
 * WRITE_WAIT starts nothing: with every write held, dirty pages stay dirty, none is in flight,
 * and it returns (nothing was in flight to wait for).
 */
TEST_F_TIMEOUT(file, write_wait_starts_nothing, 120)
{
	struct call c = CALL(LINUX_FADV_WRITE_WAIT, 0, SIZE);
	long long before;
	int dirty, wb;

	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");

	dirty_all(self, 'b');
	ASSERT_EQ(0, lab_gate_hold(&self->gate));
	before = lab_sectors_written("vda");
	ASSERT_EQ(1, call_held(&c)) TH_LOG("WRITE_WAIT waited with nothing in flight");
	ASSERT_EQ(0, c.ret);
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	EXPECT_EQ((int)NPAGES, dirty);
	EXPECT_EQ(0, wb);
	EXPECT_EQ(before, lab_sectors_written("vda"));
}

/*
 * ASYNC_WRITE returns with the range in flight: every page under writeback and none dirty, the
 * writes still held. len 0 means to the end of the file.
 */
static void async_write_returns_in_flight(struct __test_metadata *_metadata,
					  FIXTURE_DATA(file) *self, off_t len)
{
	struct call c = CALL(LINUX_FADV_ASYNC_WRITE, 0, len);
	int dirty, wb;

	dirty_all(self, 'f');
	ASSERT_EQ(0, lab_gate_hold(&self->gate));
	ASSERT_EQ(1, call_held(&c)) TH_LOG("ASYNC_WRITE (len %lld) waited for the write-out it "
					   "started", (long long)len);
	ASSERT_EQ(0, c.ret);
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	EXPECT_EQ(0, dirty) TH_LOG("%d pages not started", dirty);
	EXPECT_EQ((int)NPAGES, wb);
}

/*
 * WRITE_WAIT waits for the write-out in flight: with the writes ASYNC_WRITE started held, it is
 * seen waiting for them and does not return; once they are let go it returns with nothing of the
 * range dirty or in flight. len 0 means to the end of the file; 0001 once passed it on as an
 * empty range, and WRITE_WAIT then waited for nothing.
 */
static void write_wait_waits_for_held_io(struct __test_metadata *_metadata,
					 FIXTURE_DATA(file) *self, off_t len)
{
	struct call start = CALL(LINUX_FADV_ASYNC_WRITE, 0, SIZE);
	struct call c = CALL(LINUX_FADV_WRITE_WAIT, 0, len);
	int dirty, wb, returned;

	dirty_all(self, 'g');
	ASSERT_EQ(0, lab_gate_hold(&self->gate));
	ASSERT_EQ(1, call_held(&start));
	ASSERT_EQ(0, start.ret);
	returned = call_held(&c);
	if (returned == 1 && !lab_page_states(self->map, 0, NPAGES, &dirty, &wb))
		TH_LOG("WRITE_WAIT (len %lld) returned with %d pages in flight, the gate held",
		       (long long)len, wb);
	ASSERT_EQ(0, returned);
	ASSERT_EQ(0, call_join(self, &c));
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	EXPECT_EQ(0, wb) TH_LOG("WRITE_WAIT (len %lld) returned with %d pages in flight",
				(long long)len, wb);
	EXPECT_EQ(0, dirty);
}

TEST_F_TIMEOUT(file, async_write_returns_with_io_in_flight, 120)
{
	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");
	async_write_returns_in_flight(_metadata, self, SIZE);
}

TEST_F_TIMEOUT(file, async_write_len_0_returns_with_io_in_flight, 120)
{
	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");
	async_write_returns_in_flight(_metadata, self, 0);
}

TEST_F_TIMEOUT(file, write_wait_waits_for_writeback_in_flight, 120)
{
	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");
	write_wait_waits_for_held_io(_metadata, self, SIZE);
}

TEST_F_TIMEOUT(file, write_wait_len_0_waits_for_writeback_in_flight, 120)
{
	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");
	write_wait_waits_for_held_io(_metadata, self, 0);
}

/*
 * Pages already under writeback are not waited for (SYNC_FILE_RANGE_WRITE without WAIT_BEFORE):
 * with the first half's write-out held in flight, ASYNC_WRITE of the whole file starts the second
 * half and returns, the gate still held.
 */
TEST_F_TIMEOUT(file, async_write_does_not_wait_for_writeback_in_flight, 120)
{
	struct call first = CALL(LINUX_FADV_ASYNC_WRITE, 0, SIZE / 2);
	struct call c = CALL(LINUX_FADV_ASYNC_WRITE, 0, SIZE);
	int dirty, wb;

	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");

	dirty_all(self, 'h');
	ASSERT_EQ(0, lab_gate_hold(&self->gate));
	ASSERT_EQ(1, call_held(&first));
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES / 2, &dirty, &wb));
	ASSERT_EQ((int)NPAGES / 2, wb) TH_LOG("the first half is not in flight");
	ASSERT_EQ(1, call_held(&c)) TH_LOG("ASYNC_WRITE waited for the write-out already in flight");
	ASSERT_EQ(0, c.ret);
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	EXPECT_EQ(0, dirty);
	EXPECT_EQ((int)NPAGES, wb);
}

/* wait, write, wait: nothing of the range is left dirty or in flight. */
TEST_F_TIMEOUT(file, wait_write_wait_leaves_nothing_dirty, 120)
{
	int dirty, wb;

	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");

	dirty_all(self, 'd');
	for (unsigned long i = 0; i < SIZE; i += 3 * LAB_PAGE)
		self->map[i + 1] = 'D';
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, SIZE, LINUX_FADV_WRITE_WAIT));
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, SIZE, LINUX_FADV_ASYNC_WRITE));
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, SIZE, LINUX_FADV_WRITE_WAIT));
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	EXPECT_EQ(0, dirty);
	EXPECT_EQ(0, wb);
}

/* The article's complaint, still true on 6.1: msync(MS_ASYNC) starts no I/O. */
TEST_F_TIMEOUT(file, msync_async_starts_no_io, 120)
{
	struct call c = { .advice = -1, .map = self->map };
	long long before;
	int dirty, wb;

	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");

	for (unsigned long i = 0; i < SIZE; i += LAB_PAGE)
		self->map[i] = 's';
	ASSERT_EQ(0, lab_gate_hold(&self->gate));
	before = lab_sectors_written("vda");
	ASSERT_EQ(1, call_held(&c)) TH_LOG("msync(MS_ASYNC) waited for write-out");
	ASSERT_EQ(0, c.ret);
	ASSERT_EQ(0, lab_page_states(self->map, 0, NPAGES, &dirty, &wb));
	EXPECT_EQ((int)NPAGES, dirty);
	EXPECT_EQ(0, wb);
	EXPECT_EQ(before, lab_sectors_written("vda"));
}

TEST_F_TIMEOUT(file, bad_arguments, 120)
{
	int pipefd[2], tmp;

	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");

	EXPECT_EQ(EINVAL, posix_fadvise(self->fd, 0, -1, LINUX_FADV_ASYNC_WRITE));
	EXPECT_EQ(EINVAL, posix_fadvise(self->fd, 0, -4096, LINUX_FADV_WRITE_WAIT));
	EXPECT_EQ(EINVAL, posix_fadvise(self->fd, 0, SIZE, 34));
	EXPECT_EQ(EBADF, posix_fadvise(-1, 0, SIZE, LINUX_FADV_ASYNC_WRITE));
	ASSERT_EQ(0, pipe(pipefd));
	EXPECT_EQ(ESPIPE, posix_fadvise(pipefd[0], 0, 0, LINUX_FADV_ASYNC_WRITE));
	EXPECT_EQ(ESPIPE, posix_fadvise(pipefd[1], 0, 0, LINUX_FADV_WRITE_WAIT));
	close(pipefd[0]);
	close(pipefd[1]);
	/* tmpfs has no writeback (noop backing_dev_info): accepted and ignored, as the others. */
	tmp = open("/tmp", O_TMPFILE | O_RDWR, 0600);
	ASSERT_LE(0, tmp);
	EXPECT_EQ(0, posix_fadvise(tmp, 0, 0, LINUX_FADV_ASYNC_WRITE));
	EXPECT_EQ(0, posix_fadvise(tmp, 0, 0, LINUX_FADV_WRITE_WAIT));
	EXPECT_EQ(0, posix_fadvise(tmp, 0, 0, POSIX_FADV_WILLNEED));
	close(tmp);
}

/*
 * offset and len are checked as sync_file_range() checks them: a negative offset, and an end
 * past LLONG_MAX, are EINVAL; a range past the end of the file is accepted. Each case is also
 * asked of sync_file_range() itself, the oracle outside the patch.
 */
TEST_F_TIMEOUT(file, arguments_are_checked_like_sync_file_range, 120)
{
	static const struct {
		long long offset, len;
		int err;
	} cases[] = {
		{ -4096, 4096, EINVAL },
		{ -1, 0, EINVAL },
		{ INT64_MAX - 4095, 8192, EINVAL },
		{ 1LL << 62, 1LL << 62, EINVAL },
		{ INT64_MAX, 1, EINVAL },
		{ 0, INT64_MAX, 0 },
		{ INT64_MAX - 4096, 4096, 0 },
		{ 1LL << 62, 1LL << 61, 0 },
		{ 1LL << 62, 0, 0 },
		{ SIZE, 4096, 0 },
	};
	static const struct {
		int advice;
		unsigned int flags;
	} cmds[] = {
		{ LINUX_FADV_ASYNC_WRITE, SYNC_FILE_RANGE_WRITE },
		{ LINUX_FADV_WRITE_WAIT, SYNC_FILE_RANGE_WAIT_AFTER },
	};

	LAB_NEEDS_PATCH("0001", "LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT");

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (unsigned int c = 0; c < 2; c++) {
			long long off = cases[i].offset, len = cases[i].len;
			int srf = sync_file_range(self->fd, off, len, cmds[c].flags) ? errno : 0;

			EXPECT_EQ(cases[i].err, srf)
				TH_LOG("sync_file_range(%lld, %lld, %u)", off, len, cmds[c].flags);
			EXPECT_EQ(cases[i].err, posix_fadvise(self->fd, off, len, cmds[c].advice))
				TH_LOG("posix_fadvise(%lld, %lld, %d)", off, len, cmds[c].advice);
		}
	}
}

LAB_HARNESS_MAIN_NEEDS(lacks_disk)
