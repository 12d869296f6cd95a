// SPDX-License-Identifier: GPL-2.0
/*
 * Playing a fadvise row: a fresh 8 MiB file on the guest's slow disk (/mnt/disk, 8 MiB/s writes),
 * allocated and on disk first, dirtied through a shared mapping; then the row's call, with the
 * range's pages (kpageflags), meminfo and the disk's written sectors sampled right before and right
 * after it. The periodic flusher is stopped from the first row to the demo's end, so that only the
 * calls start write-out; each row holds the writeback lock.
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"
#include "row.h"

#define SIZE (8 * 1024 * 1024UL)
#define NPAGES (SIZE / LAB_PAGE)
#define TRIES 3
/*
 * A call that only starts write-out, played again when the disk had it all written before the
 * page states were read (a vCPU held off the host's cores for a second): on one vCPU beside three
 * busy guests, async-write missed three plays in a row once in about 20 warm runs. A kernel whose
 * call writes it all itself shows WRITTEN in every play, and the row still fails.
 */
#define PLAYS 5

struct sample {
	int dirty, writeback;
	long dirty_kb;
	long long sectors;
};

/*
 * The disk's sectors first: they say what it had written when the call returned. Read after the
 * 2048 pages' flags, they counted whatever it wrote while those were read (a second, beside two
 * other guests on two cores: seen as a row IN FLIGHT by its flags whose disk had "written it all").
 */
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

static int call(enum fadvise_how how, int fd, char *map)
{
	switch (how) {
	case FADV_ASYNC_WRITE:
		return posix_fadvise(fd, 0, SIZE, LINUX_FADV_ASYNC_WRITE);
	case FADV_WRITE_WAIT:
		return posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT);
	case FADV_WAIT_WRITE_WAIT:
		return posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT) ||
		       posix_fadvise(fd, 0, SIZE, LINUX_FADV_ASYNC_WRITE) ||
		       posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT);
	case FADV_SYNC_FILE_RANGE:
		return sync_file_range(fd, 0, SIZE, SYNC_FILE_RANGE_WRITE);
	case FADV_MSYNC_ASYNC:
		return msync(map, SIZE, MS_ASYNC);
	default:
		return 0;
	}
}

/*
 * Dirty every page of the range, none under writeback: the stage every row needs. Until it holds
 * (a page can still be in flight from the file's first fsync), up to TRIES times.
 */
static int dirty_all(struct record *rec, char *map, struct sample *before)
{
	struct fadvise_obs *o = &rec->fadvise;

	for (o->tries = 1; o->tries <= TRIES; o->tries++) {
		memset(map, 'a' + (int)o->tries, SIZE);
		if (sample(rec, map, before))
			return -1;
		if (before->dirty == (int)NPAGES && !before->writeback)
			return 0;
		usleep(200 * 1000);
	}
	o->tries = TRIES;
	errno = 0;
	return row_fail(rec, "after %d tries %d of %lu pages dirty and %d in flight before the call",
			TRIES, before->dirty, NPAGES, before->writeback);
}

static int play_file(const struct row *r, struct record *rec, int fd, char *map)
{
	struct fadvise_obs *o = &rec->fadvise;
	enum fadvise_how how = r->fadvise.how;
	/* A call that only starts write-out can find it done on a disk that kept up: played again. */
	bool starts = how == FADV_ASYNC_WRITE || how == FADV_SYNC_FILE_RANGE;
	struct timespec t0, t1;
	struct sample a, b;

	for (int play = 1; play <= PLAYS; play++) {
		if (dirty_all(rec, map, &a))
			return -1;
		o->dirty_before = a.dirty;
		o->wb_before = a.writeback;
		o->dirty_kb_before = a.dirty_kb;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		errno = 0;
		if (call(how, fd, map))
			return row_fail(rec, "%s", r->title);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (sample(rec, map, &b))
			return -1;
		o->dirty_after = b.dirty;
		o->wb_after = b.writeback;
		o->dirty_kb_after = b.dirty_kb;
		o->sectors = b.sectors - a.sectors;
		o->took_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (fsync(fd))
			return row_fail(rec, "fsync after the call");
		if (!starts || b.dirty || b.writeback)
			return 0;
	}
	return 0;
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

int play_fadvise(const struct row *r, const char *engine, struct record *rec)
{
	struct fadvise_obs *o = &rec->fadvise;
	char path[64];
	int lock, fd = -1, ret = -1;
	char *map = MAP_FAILED;

	(void)engine;
	/* Nothing read yet: printed as "-", never as a number. */
	o->dirty_before = o->dirty_after = o->wb_before = o->wb_after = -1;
	o->dirty_kb_before = o->dirty_kb_after = o->sectors = -1;
	o->took_ms = -1;
	if (lab_sectors_written("vda") < 0)
		return errno = 0, row_fail(rec, "no /dev/vda (vm/run --disk)");
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
	ret = play_file(r, rec, fd, map);
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
