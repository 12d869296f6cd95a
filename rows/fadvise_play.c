// SPDX-License-Identifier: GPL-2.0
/*
 * Playing a fadvise row: a fresh 8 MiB file on the guest's disk (/mnt/disk), allocated and on disk
 * first, dirtied through a shared mapping; then the row's call, made while the disk's gate
 * (liblab/gate.c, "lab-disk", which guest/init mounts /mnt/disk through) holds every write the
 * call starts. What the call leaves is read from the range's pages (kpageflags) as it returns, or
 * once it is seen waiting for the held write-out: no host load can end that write-out before it
 * is looked at. Then the gate lets it go. The periodic flusher is stopped from the first row to
 * the demo's end, so that only the calls start write-out; each row holds the writeback lock.
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lab.h"
#include "fadvise_obs.h"

#define SIZE (8 * 1024 * 1024UL)
#define NPAGES (SIZE / LAB_PAGE)

struct sample {
	int dirty, writeback;
	long dirty_kb;
	long long sectors;
};

static int sample(struct record *rec, const char *map, struct sample *s)
{
	errno = 0;
	s->sectors = lab_sectors_written("vda");
	if (lab_page_states(map, 0, NPAGES, &s->dirty, &s->writeback))
		return row_fail(rec, "reading the range's page flags");
	s->dirty_kb = lab_meminfo_kb("Dirty");
	if (s->dirty_kb < 0 || s->sectors < 0)
		return row_fail(rec, "reading meminfo Dirty or vda's sectors written");
	return 0;
}

/* The row's call, in a thread of its own: it may wait for the write-out the gate holds. */
struct call {
	enum fadvise_how how;
	int fd;
	char *map;
	int ret, err;
	atomic_int tid;
	volatile bool done;
};

static void *call_main(void *arg)
{
	struct call *c = arg;
	int fd = c->fd;

	atomic_store(&c->tid, gettid());
	switch (c->how) {
	case FADV_ASYNC_WRITE:
		c->ret = posix_fadvise(fd, 0, SIZE, LINUX_FADV_ASYNC_WRITE);
		break;
	case FADV_WRITE_WAIT:
		c->ret = posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT);
		break;
	case FADV_WAIT_WRITE_WAIT:
		c->ret = posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT);
		if (!c->ret)
			c->ret = posix_fadvise(fd, 0, SIZE, LINUX_FADV_ASYNC_WRITE);
		if (!c->ret)
			c->ret = posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT);
		break;
	case FADV_SYNC_FILE_RANGE:
		c->ret = sync_file_range(fd, 0, SIZE, SYNC_FILE_RANGE_WRITE);
		break;
	case FADV_MSYNC_ASYNC:
		c->ret = msync(c->map, SIZE, MS_ASYNC);
		break;
	default:
		c->ret = 0;
	}
	c->err = errno;
	c->done = true;
	return NULL;
}

/*
 * Every page of the range dirty, none under writeback: the stage every row needs. fsync() waited
 * for the file's earlier write-out, so a page still in flight is a finding, not a wait.
 */
static int dirty_all(struct record *rec, char *map, struct sample *before)
{
	memset(map, 'a', SIZE);
	if (sample(rec, map, before))
		return -1;
	if (before->dirty == (int)NPAGES && !before->writeback)
		return 0;
	errno = 0;
	return row_fail(rec, "%d of %lu pages dirty and %d in flight before the call",
			before->dirty, NPAGES, before->writeback);
}

static int play_file(const struct row *r, struct record *rec, int fd, char *map,
		     struct lab_gate *gate)
{
	struct fadvise_obs *o = ROW_OBS(rec, struct fadvise_obs);
	struct call c = { .how = r->fadvise.how, .fd = fd, .map = map };
	struct sample a, b, after;
	pthread_t t;
	int seen, tid, ret = -1;

	if (dirty_all(rec, map, &a))
		return -1;
	o->dirty_before = a.dirty;
	o->wb_before = a.writeback;
	o->dirty_kb_before = a.dirty_kb;
	if (lab_gate_hold(gate))
		return row_fail(rec, "holding the disk's gate");
	if (sample(rec, map, &a))
		goto release;
	errno = pthread_create(&t, NULL, call_main, &c);
	if (errno) {
		row_fail(rec, "starting the call");
		goto release;
	}
	while (!(tid = atomic_load(&c.tid)))
		sched_yield();
	seen = lab_wait_thread_in(tid, LAB_WAITS_FOR_WRITEBACK, &c.done);
	if (seen >= 0 && !sample(rec, map, &b)) {
		o->waited = seen == 1;
		o->dirty_held = b.dirty;
		o->wb_held = b.writeback;
		o->dirty_kb_held = b.dirty_kb;
		o->sectors_held = b.sectors - a.sectors;
		ret = 0;
	} else if (seen < 0) {
		row_fail(rec, "watching the call wait");
	}
	if (lab_gate_release(gate) && !ret)
		ret = row_fail(rec, "releasing the disk's gate");
	pthread_join(t, NULL);
	if (!ret && c.ret) {
		errno = c.how == FADV_MSYNC_ASYNC || c.how == FADV_SYNC_FILE_RANGE ? c.err : c.ret;
		ret = row_fail(rec, "%s", r->title);
	}
	/* A call that waited is over only once its write-out is: what it left, then. */
	if (!ret && o->waited) {
		if (sample(rec, map, &after))
			ret = -1;
		o->dirty_after = after.dirty;
		o->wb_after = after.writeback;
		o->sectors_after = after.sectors - a.sectors;
	}
	if (fsync(fd) && !ret)
		ret = row_fail(rec, "fsync after the call");
	return ret;
release:
	lab_gate_release(gate);
	return -1;
}

/* The file's 8 MiB, written once, so that the rows only overwrite data in place. */
static int fill(int fd)
{
	static char buf[SIZE];

	memset(buf, 'o', SIZE);
	return pwrite(fd, buf, SIZE, 0) == (ssize_t)SIZE ? 0 : -1;
}

/*
 * The periodic flusher stays off from the first row to the demo's end, and comes back once, when
 * the demo's process exits: turned back on, the flusher is woken to write back everything dirty,
 * later, from a workqueue (dirty_writeback_centisecs_handler()), which after one row could land
 * in the next one's call.
 */
static bool flusher_off;

static void __attribute__((destructor)) flusher_back_on(void)
{
	if (flusher_off)
		lab_quiet_writeback(false);
}

int play_fadvise(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	struct fadvise_obs *o = ROW_OBS(rec, struct fadvise_obs);
	struct lab_gate gate;
	char path[64];
	int lock, fd = -1, ret = -1;
	char *map = MAP_FAILED;

	(void)opts;
	/* Nothing read yet: printed as "-", never as a number. */
	o->dirty_before = o->dirty_held = o->dirty_after = -1;
	o->wb_before = o->wb_held = o->wb_after = -1;
	o->dirty_kb_before = o->dirty_kb_held = o->sectors_held = o->sectors_after = -1;
	if (lab_sectors_written("vda") < 0)
		return errno = 0, row_fail(rec, "no /dev/vda (vm/boot --disk)");
	if (lab_gate_find(&gate, "lab-disk"))
		return row_fail(rec, "no gate lab-disk under /mnt/disk (guest/init makes it)");
	lock = lab_lock(LAB_LOCK_WRITEBACK, true);
	if (lock < 0)
		return row_fail(rec, "locking writeback%s", errno == ETIMEDOUT ?
				" (held past LAB_LOCK_TIMEOUT)" : "");
	flusher_off = true;
	if (lab_quiet_writeback(true)) {
		row_fail(rec, "stopping the flusher");
		goto out;
	}
	/*
	 * Written, not fallocate()d: the first write-out into unwritten extents ends in ext4's
	 * conversion work, after the disk has counted the sectors (6.12's dioread_nolock), so a
	 * row could see the whole 8 MiB written while its pages were still under writeback.
	 */
	snprintf(path, sizeof(path), "/mnt/disk/fadvise-row.%d", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || fill(fd) || fsync(fd)) {
		row_fail(rec, "%s", path);
		goto out;
	}
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		row_fail(rec, "mmap");
		goto out;
	}
	ret = play_file(r, rec, fd, map, &gate);
out:
	if (map != MAP_FAILED)
		munmap(map, SIZE);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	close(lock);
	return ret;
}
