// SPDX-License-Identifier: GPL-2.0
/*
 * Playing the O_DIRECT rows. Every byte the rows read is 'D'; the buffers start out 'p'.
 *
 * One reader (the databases' form): a thread's O_DIRECT read of the "odirect" disk (reads
 * throttled to 1 MiB/s), raw or through a file on its ext4 file system; while it is in flight the
 * process forks and the parent writes into the page that also holds the read's last bytes.
 *
 * Eight readers (the 2009 report's form): the same image attached again at 4 reads a second
 * ("odirect-iops"); eight threads, started 30 ms apart, each read one page-sized chunk into a
 * buffer 512 bytes off a page boundary, so that neighbouring reads share a page, while another
 * thread forks and reaps children in a loop. No CPU write at all: the next reader's GUP breaks
 * copy-on-write under the previous read's DMA.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "row.h"

#define MIB (1024 * 1024)
#define READ_LEN (MIB - 2048)	/* ends in the middle of a page */
#define BUF_LEN (MIB + LAB_PAGE)
#define DISK_BYTE 'D'
/* The raw rows' bytes: after the disk's 16 MiB ext4 file system (vm/guest.mk). */
#define RAW_OFFSET (16 * MIB)
#define PREFORK 'p'
#define PARENT 'P'
#define MAX_TRIES 5

#define READERS 8
#define CHUNK 4096
#define MISALIGN 512
#define ROUNDS 2
#define FORK_GAP_US 4000

/* The vdX whose serial is want, or -1. */
static int find_disk(const char *want, char *name, size_t size)
{
	char path[300], serial[32];
	DIR *dir = opendir("/sys/block");
	struct dirent *d;
	int ret = -1;

	while (dir && (d = readdir(dir))) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/block/%s/serial", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(serial, sizeof(serial), f)) {
			serial[strcspn(serial, "\n")] = 0;
			if (!strcmp(serial, want) && strlen(d->d_name) < size) {
				strcpy(name, d->d_name);
				ret = 0;
			}
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return ret;
}

/* Reads in flight on the disk, from /sys/block/NAME/inflight; -1 on error. */
static long reads_in_flight(const char *disk)
{
	char path[300];
	long reads = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/inflight", disk);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &reads) != 1)
			reads = -1;
		fclose(f);
	}
	return reads;
}

static int open_source(const struct row *r, struct record *rec, const char *serial, char *disk,
		       size_t size, off_t *base)
{
	char path[80];
	int fd;

	errno = 0;
	if (find_disk(serial, disk, size))
		return row_fail(rec, "no disk with serial %s (vm/run --disk IMAGE,%s)", serial,
				serial);
	if (r->odirect.ext4)
		snprintf(path, sizeof(path), "/mnt/%s/data", serial);
	else
		snprintf(path, sizeof(path), "/dev/%s", disk);
	*base = r->odirect.ext4 ? 0 : RAW_OFFSET;
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return row_fail(rec, "open %s", path);
	return fd;
}

/* One reader. */

struct reader {
	int fd;
	off_t off;
	char *pre;		/* MIB: the read before the row's, into a buffer of its own */
	char *buf;
	size_t len;
	ssize_t pre_got, got;
	int err;
	volatile bool pre_done, done;
};

/*
 * QEMU's throttling lets a request through while the disk's budget is not spent and charges it
 * afterwards, so a read on an idle disk is not slowed at all. A first read spends the budget; the
 * row's read, issued right after it by the same thread, is the one that waits. Any delay between
 * the two (the host stalling the guest) would let the budget refill: hence one thread, back to back.
 */
static void *reader_main(void *arg)
{
	struct reader *rd = arg;

	rd->pre_got = pread(rd->fd, rd->pre, MIB, rd->off);
	rd->pre_done = true;
	if (rd->pre_got == MIB) {
		rd->got = pread(rd->fd, rd->buf, rd->len, rd->off);
		rd->err = errno;
	}
	rd->done = true;
	return NULL;
}

struct child_report {
	uint64_t pfn;
	int pfn_errno;
	bool has_data;
};

struct child_arg {
	const char *last;
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
	r.has_data = !r.pfn_errno && r.pfn && a->last[0] == DISK_BYTE;
	return lab_child_report(c, &r, sizeof(r)) ? 1 : 0;
}

/*
 * One play. The read's pages are held from before the request is submitted until after it
 * completes, so a read seen in flight before fork() and still in flight once it returned was held
 * during the whole fork. A play that misses that window (a loaded host may stall the parent until
 * the read is over) sets *missed and proves nothing.
 */
static int play_once(const struct row *r, struct record *rec, const char *disk,
		     struct reader *rd, bool *missed)
{
	struct odirect_obs *o = &rec->odirect;
	char *last = rd->buf + (rd->len - 1) / LAB_PAGE * LAB_PAGE;
	char *parent_at = r->odirect.own_page ? rd->buf + rd->len : rd->buf + READ_LEN;
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	struct child_arg ca = { .last = last };
	struct child_report cr;
	bool started = false, joined = false;
	pthread_t thread;
	int ret = -1;

	if (lab_pfn_read(last, &o->pfn_before) || !o->pfn_before)
		return row_fail(rec, "the parent's page is not present");
	errno = pthread_create(&thread, NULL, reader_main, rd);
	if (errno)
		return row_fail(rec, "starting the reader thread");
	started = true;
	/* Fork as soon as the disk shows the row's read in flight after the first one. */
	for (int i = 0; i < 4000 && !rd->done; i++) {
		if (rd->pre_done) {
			o->inflight = reads_in_flight(disk);
			if (o->inflight > 0)
				break;
		}
		usleep(5 * 1000);
	}
	if (r->fork) {
		if (lab_child_start(&child, child_main, &ca)) {
			row_fail(rec, "fork");
			goto out;
		}
		o->inflight_after = reads_in_flight(disk);
	}
	/* The parent writes its own data, in the read's last page or (workaround) another. */
	memset(parent_at, PARENT, 64);
	pthread_join(thread, NULL);
	joined = true;
	errno = 0;
	if (rd->pre_got != MIB) {
		errno = rd->pre_got < 0 ? rd->err : 0;
		row_fail(rec, "the O_DIRECT read before the row returned %zd of %d bytes",
			 rd->pre_got, MIB);
		goto out;
	}
	if (rd->got != (ssize_t)rd->len) {
		errno = rd->got < 0 ? rd->err : 0;
		row_fail(rec, "the O_DIRECT read returned %zd of %zu bytes", rd->got, rd->len);
		goto out;
	}
	o->read_bytes = rd->got;
	if (o->inflight < 1 || (r->fork && o->inflight_after < 1)) {
		*missed = true;
		row_fail(rec, "the read was not seen in flight %s (is the disk slow?)",
			 o->inflight < 1 ? "before it ended" : "once fork() returned");
		goto out;
	}
	if (lab_pfn_read(last, &o->pfn_after) || !o->pfn_after) {
		row_fail(rec, "the parent's page after the read is not present");
		goto out;
	}
	for (size_t i = 0; i < rd->len; i++)
		o->missing += rd->buf[i] != DISK_BYTE;
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
		o->child_has_data = cr.has_data;
	}
	ret = 0;
out:
	if (started && !joined)
		pthread_join(thread, NULL);
	lab_child_end(&child);
	return ret;
}

static int play_single(const struct row *r, struct record *rec)
{
	struct odirect_obs *o = &rec->odirect;
	struct reader rd;
	bool missed = true;
	char disk[64];
	off_t base;
	int fd, ret = -1;

	for (int i = 1; missed && i <= MAX_TRIES; i++) {
		memset(o, 0, sizeof(*o));
		o->tries = i;
		missed = false;
		fd = open_source(r, rec, "odirect", disk, sizeof(disk), &base);
		if (fd < 0)
			return -1;
		memset(&rd, 0, sizeof(rd));
		rd.fd = fd;
		rd.off = base;
		rd.len = r->odirect.own_page ? MIB : READ_LEN;
		rd.buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
		rd.pre = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rd.buf == MAP_FAILED || rd.pre == MAP_FAILED) {
			ret = row_fail(rec, "mmap");
		} else {
			memset(rd.buf, PREFORK, BUF_LEN);
			ret = r->dontfork && madvise(rd.buf, BUF_LEN, MADV_DONTFORK) ?
			      row_fail(rec, "MADV_DONTFORK") : play_once(r, rec, disk, &rd, &missed);
		}
		if (rd.buf != MAP_FAILED)
			munmap(rd.buf, BUF_LEN);
		if (rd.pre != MAP_FAILED)
			munmap(rd.pre, MIB);
		close(fd);
	}
	return ret;
}

/* Eight readers. */

struct multi {
	int fd;
	off_t base;
	char *buf;
	const char *disk;
	ssize_t got[READERS];
	int err[READERS];
	volatile int running;	/* readers not done */
	volatile bool go;
	long forks;		/* forks made while a read was in flight */
	int child_failed;	/* a forked child's wait status, when it did not exit 0 */
};

struct chunk {
	struct multi *m;
	int i;
};

static void *chunk_reader(void *arg)
{
	struct chunk *c = arg;
	struct multi *m = c->m;

	m->got[c->i] = pread(m->fd, m->buf + c->i * CHUNK, CHUNK, m->base + c->i * CHUNK);
	m->err[c->i] = errno;
	__atomic_sub_fetch(&m->running, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Forks and reaps children, each exiting at once, while any reader runs. */
static void *forker(void *arg)
{
	struct multi *m = arg;
	int status;
	pid_t pid;

	while (!m->go)
		usleep(1000);
	while (__atomic_load_n(&m->running, __ATOMIC_SEQ_CST) > 0) {
		bool inflight = reads_in_flight(m->disk) > 0;

		pid = fork();
		if (pid < 0) {
			m->child_failed = -1;
			break;
		}
		if (!pid)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			m->child_failed = status ? status : -1;
			break;
		}
		m->forks += inflight;
		/*
		 * A fork every few milliseconds lands in every reader's 30 ms window; back to back
		 * they only burnt the guest's CPU (10 of the rows' CPU-seconds under TCG).
		 */
		usleep(FORK_GAP_US);
	}
	return NULL;
}

static int play_round(const struct row *r, struct record *rec, struct multi *m, char *map,
		      size_t maplen)
{
	struct odirect_obs *o = &rec->odirect;
	struct chunk chunks[READERS];
	pthread_t readers[READERS], fork_thread;
	int started = 0, ret = 0;
	long missing = 0;
	char wsbuf[48], warm[CHUNK] __attribute__((aligned(4096)));

	memset(map, PREFORK, maplen);
	m->running = READERS;
	m->go = false;
	m->forks = 0;
	m->child_failed = 0;
	/* Spend the throttle's budget first, so that the readers' requests wait. */
	if (pread(m->fd, warm, CHUNK, m->base) != CHUNK)
		return row_fail(rec, "the O_DIRECT read before the round");
	errno = pthread_create(&fork_thread, NULL, forker, m);
	if (errno)
		return row_fail(rec, "starting the forking thread");
	for (; started < READERS; started++) {
		chunks[started] = (struct chunk){ .m = m, .i = started };
		errno = pthread_create(&readers[started], NULL, chunk_reader, &chunks[started]);
		if (errno) {
			ret = row_fail(rec, "starting reader %d", started);
			__atomic_sub_fetch(&m->running, READERS - started, __ATOMIC_SEQ_CST);
			break;
		}
		m->go = true;
		usleep(30 * 1000);
	}
	m->go = true;
	for (int i = 0; i < started; i++)
		pthread_join(readers[i], NULL);
	pthread_join(fork_thread, NULL);
	if (ret)
		return ret;
	if (m->child_failed) {
		errno = 0;
		return row_fail(rec, "a child of the forking thread %s",
				lab_wait_status(m->child_failed, wsbuf, sizeof(wsbuf)));
	}
	for (int i = 0; i < READERS; i++) {
		if (m->got[i] != CHUNK) {
			errno = m->got[i] < 0 ? m->err[i] : 0;
			return row_fail(rec, "reader %d's O_DIRECT read returned %zd of %d bytes", i,
					m->got[i], CHUNK);
		}
		o->read_bytes += CHUNK;
	}
	for (size_t i = 0; i < READERS * CHUNK; i++)
		missing += m->buf[i] != DISK_BYTE;
	o->missing += missing;
	o->stale_rounds += missing > 0;
	o->forkless_rounds += m->forks == 0;
	o->forks += m->forks;
	o->rounds++;
	(void)r;
	return 0;
}

static int play_multi(const struct row *r, struct record *rec)
{
	size_t maplen = (READERS + 2) * LAB_PAGE;
	struct multi m = { 0 };
	char disk[64], *map;
	int ret = 0;

	m.fd = open_source(r, rec, "odirect-iops", disk, sizeof(disk), &m.base);
	if (m.fd < 0)
		return -1;
	m.disk = disk;
	map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		close(m.fd);
		return row_fail(rec, "mmap");
	}
	m.buf = map + (r->odirect.aligned ? 0 : MISALIGN);
	if (r->dontfork && madvise(map, maplen, MADV_DONTFORK))
		ret = row_fail(rec, "MADV_DONTFORK");
	/* Until a round misses bytes, or all were played. */
	for (int i = 0; !ret && i < ROUNDS && !rec->odirect.stale_rounds; i++)
		ret = play_round(r, rec, &m, map, maplen);
	munmap(map, maplen);
	close(m.fd);
	return ret;
}

int play_odirect(const struct row *r, const char *engine, struct record *rec)
{
	(void)engine;
	return r->odirect.multi ? play_multi(r, rec) : play_single(r, rec);
}
