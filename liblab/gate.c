// SPDX-License-Identifier: GPL-2.0
/*
 * Gates: I/O held in flight until the test lets it go. A gate is a device-mapper device mapping
 * parts of disks linearly; held (suspended without a flush and without freezing a file system on
 * it), every bio submitted to it waits inside device-mapper, and released (resumed) they go on.
 * A throttled disk only slows I/O down, at a rate a stalled guest can outlast; a held gate keeps
 * a read or a write-out in flight for as long as the test needs, however loaded the host is.
 *
 * Suspending waits for the I/O already in flight, so a hold returns with nothing on its way to
 * the disk and every later bio queued. Read-ahead bios are failed rather than queued while held
 * (dm_submit_bio()): a page fault then reads its page synchronously, and that read waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"

#define DM_CONTROL "/dev/mapper/control"

/* One DM ioctl on a device named name, with room for the table's targets after the header. */
struct dm_request {
	struct dm_ioctl io;
	char data[1024];
} __attribute__((aligned(8)));

static void dm_init(struct dm_request *rq, const char *name, unsigned int flags)
{
	memset(rq, 0, sizeof(*rq));
	rq->io.version[0] = DM_VERSION_MAJOR;
	rq->io.data_size = sizeof(*rq);
	rq->io.data_start = sizeof(rq->io);
	rq->io.flags = flags;
	snprintf(rq->io.name, sizeof(rq->io.name), "%s", name);
}

static int dm_call(unsigned long cmd, struct dm_request *rq)
{
	int fd = open(DM_CONTROL, O_RDWR | O_CLOEXEC), ret, e;

	if (fd < 0)
		return -1;
	ret = ioctl(fd, cmd, rq);
	e = errno;
	close(fd);
	errno = e;
	return ret ? -1 : 0;
}

/* g named name, and cmd asked of device-mapper for that name: 0, or -1 with errno. */
static int gate_call(struct lab_gate *g, const char *name, unsigned long cmd,
		     struct dm_request *rq)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->path, sizeof(g->path), "/dev/mapper/%s", g->name);
	dm_init(rq, name, 0);
	return dm_call(cmd, rq);
}

static int node_of(struct lab_gate *g, dev_t dev)
{
	g->dev = dev;
	unlink(g->path);
	return mknod(g->path, S_IFBLK | 0600, dev);
}

int lab_disk_sectors(const char *path, unsigned long long *sectors)
{
	unsigned long long bytes;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret, e;

	if (fd < 0)
		return -1;
	ret = ioctl(fd, BLKGETSIZE64, &bytes);
	e = errno;
	close(fd);
	errno = e;
	if (ret)
		return -1;
	*sectors = bytes / 512;
	return 0;
}

int lab_gate_make(struct lab_gate *g, const char *name, const struct lab_gate_part *parts,
		  unsigned int n, bool ro)
{
	struct dm_request rq;
	unsigned int off = 0;
	struct stat st;

	if (gate_call(g, name, DM_DEV_CREATE, &rq))
		return -1;
	dm_init(&rq, name, ro ? DM_READONLY_FLAG : 0);
	rq.io.target_count = n;
	for (unsigned int i = 0; i < n; i++) {
		struct dm_target_spec *t = (void *)(rq.data + off);
		char *params = (char *)(t + 1);
		size_t room = sizeof(rq.data) - off - sizeof(*t);

		if (stat(parts[i].dev, &st) || !S_ISBLK(st.st_mode)) {
			errno = errno ? errno : ENOTBLK;
			goto remove;
		}
		if (sizeof(rq.data) < off + sizeof(*t) + 64) {
			errno = E2BIG;
			goto remove;
		}
		t->sector_start = parts[i].at;
		t->length = parts[i].len;
		snprintf(t->target_type, sizeof(t->target_type), "linear");
		snprintf(params, room, "%u:%u %llu", major(st.st_rdev), minor(st.st_rdev),
			 parts[i].start);
		/* The next spec starts 8-aligned after this one's parameters. */
		t->next = (sizeof(*t) + strlen(params) + 1 + 7) & ~7u;
		off += t->next;
	}
	if (dm_call(DM_TABLE_LOAD, &rq))
		goto remove;
	dm_init(&rq, name, 0);
	if (dm_call(DM_DEV_SUSPEND, &rq))
		goto remove;
	if (!node_of(g, (dev_t)rq.io.dev))
		return 0;
remove:
	{
		int e = errno;

		dm_init(&rq, name, 0);
		dm_call(DM_DEV_REMOVE, &rq);
		errno = e;
	}
	return -1;
}

int lab_gate_disk(struct lab_gate *g, const char *name, const char *disk, bool ro)
{
	struct lab_gate_part part = { .dev = disk };

	if (lab_disk_sectors(disk, &part.len))
		return -1;
	return lab_gate_make(g, name, &part, 1, ro);
}

int lab_gate_find(struct lab_gate *g, const char *name)
{
	struct dm_request rq;

	if (gate_call(g, name, DM_DEV_STATUS, &rq))
		return -1;
	g->dev = (dev_t)rq.io.dev;
	return 0;
}

int lab_gate_held(struct lab_gate *g)
{
	struct dm_request rq;

	dm_init(&rq, g->name, 0);
	if (dm_call(DM_DEV_STATUS, &rq))
		return -1;
	return !!(rq.io.flags & DM_SUSPEND_FLAG);
}

int lab_gate_hold(struct lab_gate *g)
{
	struct dm_request rq;

	/* No flush of what is queued, no freeze of a file system on it: held, not drained. */
	dm_init(&rq, g->name, DM_SUSPEND_FLAG | DM_SKIP_LOCKFS_FLAG | DM_NOFLUSH_FLAG);
	return dm_call(DM_DEV_SUSPEND, &rq);
}

int lab_gate_release(struct lab_gate *g)
{
	struct dm_request rq;

	dm_init(&rq, g->name, 0);
	return dm_call(DM_DEV_SUSPEND, &rq);
}

int lab_gate_remove(struct lab_gate *g)
{
	struct dm_request rq;

	if (!g->name[0])
		return 0;
	/* A held gate keeps what it queued: let it go first. */
	lab_gate_release(g);
	dm_init(&rq, g->name, 0);
	if (dm_call(DM_DEV_REMOVE, &rq))
		return -1;
	unlink(g->path);
	g->name[0] = 0;
	return 0;
}

/*
 * Whether thread tid of this process sleeps uninterruptibly (state D) in one of fns: one of the
 * innermost frames of its kernel stack (which leaves out the scheduler's own functions) names one
 * of them. Only the innermost: an outer frame, such as the direct I/O call that is still taking
 * its pages, may sleep for something else. 1, 0, or -1.
 */
#define WAIT_FRAMES 3

/* /proc/self/task/TID/NAME into buf, NUL-terminated: its length, or -1. */
static ssize_t task_file(pid_t tid, const char *name, char *buf, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, name);
	return lab_read_file(path, buf, size);
}

ssize_t lab_thread_stack(pid_t tid, char *buf, size_t size)
{
	return task_file(tid, "stack", buf, size);
}

int lab_thread_waits_in(pid_t tid, const char *const *fns)
{
	char buf[4096], *p;

	if (task_file(tid, "stat", buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	if (p[2] != 'D')
		return 0;
	if (task_file(tid, "stack", buf, sizeof(buf)) < 0)
		return -1;
	/* Lines "[<0>] name+0xoff/0xlen": the name between "] " and "+". */
	p = buf;
	for (int frame = 0; frame < WAIT_FRAMES && (p = strstr(p, "] ")); frame++, p += 2) {
		for (const char *const *f = fns; *f; f++) {
			size_t len = strlen(*f);

			if (!strncmp(p + 2, *f, len) && p[2 + len] == '+')
				return 1;
		}
	}
	return 0;
}

int lab_wait_thread_in(pid_t tid, const char *const *fns, const volatile bool *done)
{
	struct timespec t0, t;

	/*
	 * A bound for a thread that never gets there (a hang guard, not a window): 120 s by the
	 * clock, not by a count of polls, which a loaded guest makes far longer.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (t = t0; t.tv_sec - t0.tv_sec < 120; clock_gettime(CLOCK_MONOTONIC, &t)) {
		int w;

		if (done && *done)
			return 0;
		w = lab_thread_waits_in(tid, fns);
		/* A thread that ended is gone from /proc: its done says so. */
		if (w < 0 && done && *done)
			return 0;
		if (w)
			return w;
		usleep(1000);
	}
	errno = ETIMEDOUT;
	return -1;
}
