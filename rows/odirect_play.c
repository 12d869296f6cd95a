// SPDX-License-Identifier: GPL-2.0
/*
 * Playing the O_DIRECT rows. Every byte the rows read is 'D'; the buffers start out 'p'.
 *
 * One reader (the databases' form): a thread's O_DIRECT read of the "odirect" disk (reads
 * throttled to 1 MiB/s), raw or through a file on its ext4 file system; while it is in flight the
 * process forks and the parent writes into the page that also holds the read's last bytes.
 *
 * Eight readers (the 2009 report's form): the same image attached again at 4 reads a second
 * ("odirect-iops"); eight threads, started one after the other, each read one page-sized chunk
 * into a buffer 512 bytes off a page boundary, so that neighbouring reads share a page, and the
 * process forks (a child that exits at once) between one reader's request and the next reader's
 * start. No CPU write at all: where direct I/O takes its pages with FOLL_GET (6.1's
 * iov_iter_get_pages2(); FOLL_PIN since 920756a3306a, 6.4), or with the fork switch on, the fork
 * leaves the shared page write-protected in the parent, no longer PageAnonExclusive. The child is
 * reaped at once, but the previous read's reference keeps the page's refcount above its mapcount,
 * so the next reader's GUP (FOLL_WRITE) copies it (do_wp_page()) under that read's DMA: the
 * parent moves to the copy, and the read lands in a page only the read still holds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * Sectors of the WANT the plays' reads ask for that the disk has not read since it had read
 * SECTORS0; -1 when unknown, or when it read more than that (other reads of the disk: nothing
 * then says the play's reads are over).
 */
static long long unread(const char *disk, long long sectors0, long long want)
{
	long long sectors = lab_sectors_read(disk);

	if (sectors < 0 || sectors - sectors0 > want)
		return -1;
	return want - (sectors - sectors0);
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
	int64_t bytes;		/* of the read's bytes in its last page, how many it holds */
};

/* LAB_ODIRECT_LATE: how many of a row's plays are made late (0: none; tests only). */
static long late_knob(void)
{
	const char *v = getenv("LAB_ODIRECT_LATE");

	return v ? strtol(v, NULL, 10) : 0;
}

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

/*
 * One play. The read's pages are held from before the request is submitted until after it
 * completes, so a read seen in flight before fork() and still in flight once it returned was held
 * during the whole fork. A play that misses that window (a loaded host may stall the parent until
 * the read is over, or until the read's last page is filled) sets *missed and proves nothing.
 */
static int play_once(const struct row *r, struct record *rec, const char *disk,
		     struct reader *rd, bool *missed)
{
	struct odirect_obs *o = &rec->odirect;
	char *last = rd->buf + (rd->len - 1) / LAB_PAGE * LAB_PAGE;
	char *parent_at = r->odirect.own_page ? rd->buf + rd->len : rd->buf + READ_LEN;
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	struct child_arg ca = { .last = last, .end = rd->buf + rd->len };
	struct child_report cr;
	bool started = false, joined = false;
	long long sectors0, want = (long long)(MIB + rd->len) / 512;
	pthread_t thread;
	int ret = -1;

	if (lab_pfn_read(last, &o->pfn_before) || !o->pfn_before)
		return row_fail(rec, "the parent's page is not present");
	sectors0 = lab_sectors_read(disk);
	if (sectors0 < 0)
		return row_fail(rec, "reading /sys/block/%s/stat", disk);
	errno = pthread_create(&thread, NULL, reader_main, rd);
	if (errno)
		return row_fail(rec, "starting the reader thread");
	started = true;
	/* Fork as soon as the disk shows the row's read in flight after the first one. */
	for (int i = 0; i < 4000 && !rd->done; i++) {
		if (rd->pre_done) {
			o->inflight = lab_reads_in_flight(disk);
			if (o->inflight > 0)
				break;
		}
		usleep(5 * 1000);
	}
	o->unread_after_fork = -1;	/* no fork: not sampled */
	if (r->fork) {
		if (lab_child_start(&child, child_main, &ca)) {
			row_fail(rec, "fork");
			goto out;
		}
		o->inflight_after = lab_reads_in_flight(disk);
		o->unread_after_fork = unread(disk, sectors0, want);
	}
	/*
	 * LAB_ODIRECT_LATE=N (tests/odirect_replay_test.c): until N of the row's plays were late,
	 * a forking play that saw the read in flight across its fork waits for it to end before
	 * the parent's write, as a host that stalls the parent would.
	 */
	if (r->fork && !r->dontfork && o->inflight > 0 && o->inflight_after > 0 &&
	    o->late_plays < late_knob()) {
		while (!rd->done)
			usleep(1000);
	}
	/*
	 * Whether the read had filled its last page already (loads: the page stays shared and
	 * write-protected, nothing is copied), and what of both reads the disk had still to read.
	 */
	o->filled_before_write = true;
	for (const volatile char *p = last; p < rd->buf + rd->len; p++)
		o->filled_before_write &= *p == DISK_BYTE;
	o->unread_before_write = unread(disk, sectors0, want);
	/* The parent writes its own data, in the read's last page or (workaround) another. */
	memset(parent_at, PARENT, 64);
	o->unread_after_write = unread(disk, sectors0, want);
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
		row_fail(rec, "the read was not seen in flight %s (is the disk slow? "
			 "queue/iostats on?)",
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
		o->child_has_data = cr.bytes == rd->buf + rd->len - last;
		/*
		 * The parent moved to a copy that holds every byte of the read, and the child kept
		 * the page the read filled, every byte of it. The device wrote only into that page
		 * (taken before the request went out), so the write copied it once the data was in:
		 * a host that stalled the parent, or a read the throttle let through. Nothing raced
		 * the copy; play again. The page's bytes just before the write and the disk's own
		 * count of sectors read are kept for the record (a sign, not the proof: the count
		 * moves only once the completion is handled). Any other such play is judged as it is.
		 */
		if (odirect_play_late(o)) {
			*missed = true;
			o->late_plays++;
			row_fail(rec, "race not exercised in %lld of %lld plays: the read's data was "
				 "in its last page before the parent's write%s (page full before it: %s; "
				 "sectors unread after fork %lld, before the write %lld, after %lld, of "
				 "%lld); parent %llx->%llx, child kept %llx",
				 (long long)o->late_plays, (long long)o->tries,
				 late_knob() ? ", made late (LAB_ODIRECT_LATE)" : "",
				 o->filled_before_write ? "yes" : "no", (long long)o->unread_after_fork,
				 (long long)o->unread_before_write, (long long)o->unread_after_write,
				 want, (unsigned long long)o->pfn_before,
				 (unsigned long long)o->pfn_after, (unsigned long long)o->pfn_child);
			goto out;
		}
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
	int64_t late = 0;	/* plays voided by the read's being over by the parent's write */
	char disk[64];
	off_t base;
	int fd, ret = -1;

	for (int i = 1; missed && i <= MAX_TRIES; i++) {
		memset(o, 0, sizeof(*o));
		rec->reason[0] = 0;
		o->tries = i;
		o->late_plays = late;
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
			late = o->late_plays;
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
	long long completed_base; /* the disk's completed reads before the round's first reader */
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
	return NULL;
}

/*
 * Reader k was started: wait until the disk shows its request, so that its pages are taken (its
 * GUP done: a request is built after it). Each reader makes one request, and nothing else reads
 * the disk in a round (the mount is read-only, noload, its file's extents read before the
 * round), so once the requests completed in the round plus those in flight number k + 1, reader
 * k's exists. The completed count is read first: a request leaves "inflight" before it is counted
 * completed, so a completion between the two reads only makes the sum fall short for one poll;
 * read the other way round, it could count one request twice and see reader k's too early. Up to
 * 2000 polls 1 ms apart. Returns the requests completed in the round when seen, -1 if not.
 */
static long long seen_in_flight(struct multi *m, int k)
{
	for (int polls = 0; polls < 2000; polls++) {
		long long done = lab_reads_completed(m->disk);
		long long inflight = lab_reads_in_flight(m->disk);

		if (done >= m->completed_base && inflight >= 0 &&
		    done - m->completed_base + inflight == k + 1)
			return done - m->completed_base;
		usleep(1000);
	}
	return -1;
}

/* The read's last MISALIGN bytes, as the parent sees them, are still the buffer's. */
static bool tail_untouched(const char *tail)
{
	for (int i = 0; i < MISALIGN; i++)
		if (tail[i] != PREFORK)
			return false;
	return true;
}

/*
 * One round: the eight readers started one after the other. Once reader k's request is seen
 * the process forks a child that exits at once and reaps it; reader k + 1 starts only then. The
 * fork counts once reader k + 1's request is seen (its GUP, FOLL_WRITE, on the page it shares
 * with reader k, came after the fork) while read k is still in flight: it held its pages from
 * before the fork until after that GUP, the window in which the bug is. Still in flight, by two
 * signs: fewer than k + 1 requests completed (QEMU's throttle queue is FIFO, but two virtqueues
 * may hand it requests out of order, so this alone is not proof), and read k's last bytes are not
 * in the parent's page yet (where the read reaches the parent, they would be once it ended; where
 * the GUP copied the page, the copy was made before they came). A round in which no fork
 * counted and no byte went missing proves nothing either way (on the debug kernel under a loaded
 * host a read can end before the next one starts): it is played again, up to MAX_TRIES times for
 * the row, each replay counted in tries. A round that missed bytes is kept.
 */
static int play_round(const struct row *r, struct record *rec, struct multi *m, char *map,
		      size_t maplen)
{
	struct odirect_obs *o = &rec->odirect;
	struct chunk chunks[READERS];
	pthread_t readers[READERS];
	int started = 0, ret = 0, status = 0;
	unsigned int forked = 0, counted = 0;
	long missing = 0, elsewhere = 0, forks = 0, kept = 0, bytes = 0;
	long long done;
	char wsbuf[48], warm[CHUNK] __attribute__((aligned(4096)));
	pid_t pid, got;

	memset(map, PREFORK, maplen);
	/*
	 * The round's requests are counted from here: pread() returns at the bio's completion, a
	 * little before the request is counted completed, so the count is taken before the read
	 * that spends the throttle's budget (so that the readers' requests wait), and that read
	 * counted in, once it shows. The 1 ms first lets an earlier read (the file's open) be
	 * counted; should one still come in, the round proves nothing yet and is played again.
	 */
	usleep(1000);
	done = lab_reads_completed(m->disk);
	if (done < 0 || lab_reads_in_flight(m->disk) < 0)
		return row_fail(rec, "reading /sys/block/%s/stat and inflight", m->disk);
	m->completed_base = done + 1;
	if (pread(m->fd, warm, CHUNK, m->base) != CHUNK)
		return row_fail(rec, "the O_DIRECT read before the round");
	for (int polls = 0;
	     polls < 2000 && lab_reads_completed(m->disk) < m->completed_base; polls++)
		usleep(1000);
	if (lab_reads_completed(m->disk) != m->completed_base) {
		errno = 0;
		if (o->tries < MAX_TRIES) {
			o->tries++;
			return 0;
		}
		return row_fail(rec, "the read before the round made %lld requests, not 1",
				lab_reads_completed(m->disk) - done);
	}
	for (; started < READERS; started++) {
		chunks[started] = (struct chunk){ .m = m, .i = started };
		errno = pthread_create(&readers[started], NULL, chunk_reader, &chunks[started]);
		if (errno) {
			ret = row_fail(rec, "starting reader %d", started);
			break;
		}
		done = seen_in_flight(m, started);
		/* The fork before this reader counts if the one before is still in flight. */
		if (started && (forked & 1u << (started - 1)) && done >= 0 && done < started &&
		    tail_untouched(m->buf + started * CHUNK - MISALIGN)) {
			counted |= 1u << (started - 1);
			forks++;
		}
		/* After the last reader no GUP follows: a fork would change nothing. */
		if (done < 0 || started == READERS - 1)
			continue;
		pid = fork();
		if (pid < 0) {
			ret = row_fail(rec, "fork");
			started++;
			break;
		}
		if (!pid)
			_exit(0);
		do
			got = waitpid(pid, &status, 0);
		while (got < 0 && errno == EINTR);
		if (got != pid) {
			ret = row_fail(rec, "waitpid");
			started++;
			break;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			errno = 0;
			ret = row_fail(rec, "a forked child %s",
				       lab_wait_status(status, wsbuf, sizeof(wsbuf)));
			started++;
			break;
		}
		forked |= 1u << started;
	}
	for (int i = 0; i < started; i++)
		pthread_join(readers[i], NULL);
	if (ret)
		return ret;
	for (int i = 0; i < READERS; i++) {
		if (m->got[i] != CHUNK) {
			errno = m->got[i] < 0 ? m->err[i] : 0;
			return row_fail(rec, "reader %d's O_DIRECT read returned %zd of %d bytes", i,
					m->got[i], CHUNK);
		}
		bytes += m->got[i];
	}
	/* The last completion counted too (see above), then exactly eight. */
	for (int polls = 0; polls < 2000; polls++) {
		done = lab_reads_completed(m->disk) - m->completed_base;
		if (done >= READERS)
			break;
		usleep(1000);
	}
	if (done != READERS) {
		errno = 0;
		return row_fail(rec, "the round's %d reads made %lld requests: its counts are "
				"not the readers'", READERS, done);
	}
	/*
	 * Where bytes can go missing: the tail of a read that a fork followed, the MISALIGN bytes it
	 * has in the page it shares with the next read, whose GUP broke copy-on-write under it.
	 * Aligned, no page is shared. Every counted fork must have cost its read's tail (checked on
	 * an ORPHANED row): that is what counting it claims.
	 */
	for (int k = 0; k < READERS; k++) {
		long tail_lost = 0;

		for (int i = 0; i < CHUNK; i++) {
			bool lost = m->buf[k * CHUNK + i] != DISK_BYTE;
			bool tail = !r->odirect.aligned && (forked & 1u << k) && i >= CHUNK - MISALIGN;

			missing += lost;
			elsewhere += lost && !tail;
			tail_lost += lost && tail;
		}
		kept += (counted & 1u << k) && tail_lost != MISALIGN;
	}
	if (!forks && !missing && o->tries < MAX_TRIES) {
		o->tries++;
		return 0;
	}
	o->read_bytes += bytes;
	o->missing += missing;
	o->missing_elsewhere += elsewhere;
	o->tails_kept += kept;
	o->stale_rounds += missing > 0;
	o->forkless_rounds += !forks;
	o->forks += forks;
	o->rounds++;
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
	/* Until a round misses bytes, or all were played (a replayed round is not counted). */
	while (!ret && rec->odirect.rounds < ROUNDS && !rec->odirect.stale_rounds)
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
