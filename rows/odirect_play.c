// SPDX-License-Identifier: GPL-2.0
/*
 * Playing the O_DIRECT rows. Every byte the rows read is 'D'; the buffers start out 'p'. The
 * reads go through a gate of the play's own over the "odirect" disk (liblab/gate.c): held from
 * before the first read until the test lets it go, so that a read is in flight across the fork
 * however long the host keeps the guest waiting. A read is in flight once its thread is seen
 * waiting for its bio (LAB_WAITS_FOR_BIO): direct I/O takes the pages before it submits.
 *
 * One reader (the databases' form): a thread's O_DIRECT read of the disk, raw or through a file
 * on its ext4 file system; while it is held the process forks and the parent writes into the page
 * that also holds the read's last bytes.
 *
 * Eight readers (the 2009 report's form): eight threads, started one after the other, each read
 * one page-sized chunk into a buffer some bytes off a page boundary (the row's offset, as LTP's
 * dma_thread_diotest -a), so that neighbouring reads share a page, and the process forks (a child
 * that exits at once) between one reader's request and the next reader's start. No CPU write at all: where direct I/O takes its pages with FOLL_GET
 * (6.1's iov_iter_get_pages2(); FOLL_PIN since 920756a3306a, 6.4), or with the fork switch on, the
 * fork leaves the shared page write-protected in the parent, no longer PageAnonExclusive. The
 * child is reaped at once, but the previous read's reference keeps the page's refcount above its
 * mapcount, so the next reader's GUP (FOLL_WRITE) copies it (do_wp_page()) under that read's
 * DMA: the parent moves to the copy, and the read lands in a page only the read still holds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "odirect_obs.h"

#define MIB (1024 * 1024)
#define READ_LEN (MIB - 2048)	/* ends in the middle of a page */
#define BUF_LEN (MIB + LAB_PAGE)
#define DISK_BYTE 'D'
/* The raw rows' bytes: after the disk's 16 MiB ext4 file system (vm/guest.mk). */
#define RAW_OFFSET (16 * MIB)
#define PREFORK 'p'
#define PARENT 'P'

#define READERS 8
#define CHUNK 4096

/* The play's gate over the odirect disk, and what reads through it: the raw gate or a file. */
struct source {
	struct lab_gate gate;
	char mnt[64];		/* where the gate's ext4 is mounted, "" when not */
	int fd;
	off_t base;
};

static void source_close(struct source *s)
{
	if (s->fd >= 0)
		close(s->fd);
	if (s->mnt[0]) {
		umount(s->mnt);
		rmdir(s->mnt);
	}
	lab_gate_remove(&s->gate);
}

static int source_open(const struct row *r, struct record *rec, struct source *s)
{
	static atomic_int plays;
	char disk[32], name[48], path[80];

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	errno = 0;
	if (lab_disk_by_serial("odirect", disk, sizeof(disk)))
		return row_fail(rec, "no disk with serial odirect (vm/boot --disk IMAGE,odirect)");
	snprintf(name, sizeof(name), "lab-odirect-%d-%d", getpid(), atomic_fetch_add(&plays, 1));
	snprintf(path, sizeof(path), "/dev/%s", disk);
	if (lab_gate_disk(&s->gate, name, path, true))
		return row_fail(rec, "a gate over %s", path);
	if (r->odirect.ext4) {
		snprintf(s->mnt, sizeof(s->mnt), "/tmp/%s", name);
		if (mkdir(s->mnt, 0700) || mount(s->gate.path, s->mnt, "ext4", MS_RDONLY, "noload")) {
			row_fail(rec, "mounting %s's ext4 on %s", s->gate.path, s->mnt);
			rmdir(s->mnt);
			s->mnt[0] = 0;
			goto fail;
		}
		snprintf(path, sizeof(path), "%s/data", s->mnt);
	} else {
		snprintf(path, sizeof(path), "%s", s->gate.path);
		s->base = RAW_OFFSET;
	}
	s->fd = open(path, O_RDONLY | O_DIRECT);
	if (s->fd < 0) {
		row_fail(rec, "open %s", path);
		goto fail;
	}
	return 0;
fail:
	source_close(s);
	return -1;
}

/*
 * Read the disk once through the open gate, so that nothing the held reads need besides their
 * data is still to be read (ext4's extents of the file): a held read then waits for its bio only.
 */
static int warm(struct record *rec, struct source *s)
{
	char *b = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ssize_t got = b == MAP_FAILED ? -1 : pread(s->fd, b, CHUNK, s->base);

	if (b != MAP_FAILED)
		munmap(b, CHUNK);
	return got == CHUNK ? 0 : row_fail(rec, "the O_DIRECT read before the gate was held");
}

/* A reader thread: one pread, its thread id published first. */
struct reader {
	int fd;
	off_t off;
	char *buf;
	size_t len;
	ssize_t got;
	int err;
	atomic_int tid;
	volatile bool done;
};

static void *reader_main(void *arg)
{
	struct reader *rd = arg;

	atomic_store(&rd->tid, gettid());
	rd->got = pread(rd->fd, rd->buf, rd->len, rd->off);
	rd->err = errno;
	rd->done = true;
	return NULL;
}

/*
 * Start rd and wait until it waits for its bio at the held gate: 0, or -1 with the reason (its
 * read ended while the disk was held: the gate failed, nothing was in flight).
 */
static int start_held(struct record *rec, struct reader *rd, pthread_t *t, const char *who)
{
	int tid, seen;

	atomic_store(&rd->tid, 0);
	errno = pthread_create(t, NULL, reader_main, rd);
	if (errno)
		return row_fail(rec, "starting %s", who);
	while (!(tid = atomic_load(&rd->tid)))
		sched_yield();
	seen = lab_wait_thread_in(tid, LAB_WAITS_FOR_BIO, &rd->done);
	if (seen == 1)
		return 0;
	if (!seen)
		errno = 0;
	pthread_join(*t, NULL);
	return row_fail(rec, seen ? "watching %s wait for its bio" :
			"%s's read ended while the gate held the disk: nothing was in flight", who);
}

struct child_report {
	uint64_t pfn;
	int pfn_errno;
	int64_t bytes;		/* of the read's bytes in its last page, how many it holds */
};

struct child_arg {
	const char *last, *end;	/* the read's last page, and where the read ends */
};

/* The child: once the read is over, its PFN for the read's last page and what it holds there. */
static int child_main(struct lab_child *c, void *arg)
{
	const struct child_arg *a = arg;
	struct child_report r = { 0 };

	if (lab_child_wait(c) < 0)
		return 1;
	r.pfn_errno = lab_pfn_read(a->last, &r.pfn) ? errno : 0;
	/* Touch it only when there is a page: under MADV_DONTFORK there is no range at all. */
	for (const char *p = a->last; !r.pfn_errno && r.pfn && p < a->end; p++)
		r.bytes += *p == DISK_BYTE;
	return lab_child_report(c, &r, sizeof(r)) ? 1 : 0;
}

/* One reader: held across the fork and the parent's write, then let go. */
static int play_single(const struct row *r, struct record *rec, struct source *s, char *buf)
{
	struct odirect_obs *o = ROW_OBS(rec, struct odirect_obs);
	struct reader rd = { .fd = s->fd, .off = s->base, .buf = buf,
			     .len = r->odirect.own_page ? MIB : READ_LEN };
	char *last = buf + (rd.len - 1) / LAB_PAGE * LAB_PAGE;
	char *parent_at = r->odirect.own_page ? buf + rd.len : buf + READ_LEN;
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	struct child_arg ca = { .last = last, .end = buf + rd.len };
	struct child_report cr;
	pthread_t thread;
	int ret = -1;

	if (lab_pfn_read(last, &o->pfn_before) || !o->pfn_before)
		return row_fail(rec, "the parent's page is not present");
	if (lab_gate_hold(&s->gate))
		return row_fail(rec, "holding the gate");
	if (start_held(rec, &rd, &thread, "the reader")) {
		lab_gate_release(&s->gate);
		return -1;
	}
	o->held = true;
	if (r->fork && lab_child_start(&child, child_main, &ca)) {
		row_fail(rec, "fork");
		goto release;
	}
	/* The parent writes its own data, in the read's last page or (workaround) another. */
	memset(parent_at, PARENT, 64);
	o->done_while_held = rd.done;
	ret = 0;
release:
	if (lab_gate_release(&s->gate) && !ret)
		ret = row_fail(rec, "releasing the gate");
	pthread_join(thread, NULL);
	if (ret)
		goto out;
	ret = -1;
	errno = 0;
	if (rd.got != (ssize_t)rd.len) {
		errno = rd.got < 0 ? rd.err : 0;
		row_fail(rec, "the O_DIRECT read returned %zd of %zu bytes", rd.got, rd.len);
		goto out;
	}
	o->read_bytes = rd.got;
	if (lab_pfn_read(last, &o->pfn_after) || !o->pfn_after) {
		row_fail(rec, "the parent's page after the read is not present");
		goto out;
	}
	for (size_t i = 0; i < rd.len; i++)
		o->missing += buf[i] != DISK_BYTE;
	if (child.pid > 0) {
		if (lab_child_go(&child, 'r') || lab_child_read(&child, &cr, sizeof(cr))) {
			row_fail(rec, "asking the child");
			goto out;
		}
		if (row_child_end(rec, &child, -1, 0))
			goto out;
		if (cr.pfn_errno) {
			errno = cr.pfn_errno;
			row_fail(rec, "reading the child's PFN from pagemap");
			goto out;
		}
		o->pfn_child = cr.pfn;
		o->child_has_data = cr.bytes == buf + rd.len - last;
	}
	ret = 0;
out:
	lab_child_end(&child);
	return ret;
}

/* Fork a child that exits at once, and reap it: 0, or -1 with the reason. */
static int fork_and_reap(struct record *rec)
{
	char wsbuf[48];
	int status = 0;
	pid_t pid = fork(), got;

	if (pid < 0)
		return row_fail(rec, "fork");
	if (!pid)
		_exit(0);
	do
		got = waitpid(pid, &status, 0);
	while (got < 0 && errno == EINTR);
	if (got != pid)
		return row_fail(rec, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		errno = 0;
		return row_fail(rec, "a forked child %s", lab_wait_status(status, wsbuf, sizeof(wsbuf)));
	}
	return 0;
}

/*
 * Eight readers, each started once the one before waits at the held gate, with a fork in between:
 * every fork comes after the previous read took its pages and before the next reader takes its
 * own, the previous read held all the while.
 */
static int play_multi(const struct row *r, struct record *rec, struct source *s, char *map,
		      size_t maplen)
{
	struct odirect_obs *o = ROW_OBS(rec, struct odirect_obs);
	unsigned int off = r->odirect.offset;
	char *buf = map + off;
	struct reader rd[READERS];
	pthread_t t[READERS];
	int started = 0, ret = 0;
	char who[16];

	memset(map, PREFORK, maplen);
	if (lab_gate_hold(&s->gate))
		return row_fail(rec, "holding the gate");
	for (; started < READERS; started++) {
		rd[started] = (struct reader){ .fd = s->fd, .off = s->base + started * CHUNK,
					       .buf = buf + started * CHUNK, .len = CHUNK };
		snprintf(who, sizeof(who), "reader %d", started);
		ret = start_held(rec, &rd[started], &t[started], who);
		if (ret)
			break;
		/* After the last reader no GUP follows: a fork would change nothing. */
		if (started < READERS - 1) {
			ret = fork_and_reap(rec);
			if (ret) {
				started++;
				break;
			}
			o->forks++;
		}
	}
	o->held = !ret;
	for (int i = 0; i < started; i++)
		o->done_while_held |= rd[i].done;
	if (lab_gate_release(&s->gate) && !ret)
		ret = row_fail(rec, "releasing the gate");
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	if (ret)
		return ret;
	for (int i = 0; i < READERS; i++) {
		if (rd[i].got != CHUNK) {
			errno = rd[i].got < 0 ? rd[i].err : 0;
			return row_fail(rec, "reader %d's O_DIRECT read returned %zd of %d bytes", i,
					rd[i].got, CHUNK);
		}
		o->read_bytes += rd[i].got;
	}
	/*
	 * Where bytes can go missing: the tail of a read a fork followed, the offset's bytes it has
	 * in the page it shares with the next read, whose GUP broke copy-on-write under it. Aligned,
	 * no page is shared.
	 */
	for (int k = 0; k < READERS; k++) {
		long tail_lost = 0;

		for (int i = 0; i < CHUNK; i++) {
			bool lost = buf[k * CHUNK + i] != DISK_BYTE;
			bool tail = off && k < READERS - 1 && i >= CHUNK - (int)off;

			o->missing += lost;
			o->missing_elsewhere += lost && !tail;
			tail_lost += lost && tail;
		}
		o->tails_lost += off && tail_lost == off;
	}
	return 0;
}

int play_odirect(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	size_t len = r->odirect.multi ? (READERS + 2) * LAB_PAGE : BUF_LEN;
	struct source s;
	char *map;
	int ret;

	(void)opts;
	if (source_open(r, rec, &s))
		return -1;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		source_close(&s);
		return row_fail(rec, "mmap");
	}
	memset(map, PREFORK, len);
	if (r->dontfork && madvise(map, len, MADV_DONTFORK))
		ret = row_fail(rec, "MADV_DONTFORK");
	else
		ret = warm(rec, &s);
	if (!ret)
		ret = r->odirect.multi ? play_multi(r, rec, &s, map, len) :
		      play_single(r, rec, &s, map);
	munmap(map, len);
	source_close(&s);
	return ret;
}
