// SPDX-License-Identifier: GPL-2.0
/*
 * O_DIRECT + fork rows: a reader thread's direct read of the "odirect" disk (reads throttled
 * to 1 MiB/s), of its raw bytes or of a file on its ext4 file system, every byte 'D', into an
 * anonymous buffer; while it is in flight the process
 * forks and the parent writes into the page that also holds the read's last bytes. Observed:
 * which bytes of the read reach the parent, the read's last page's PFN for both processes,
 * and what the child finds there.
 */
#define _GNU_SOURCE
#include "odirect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"

#define MIB (1024 * 1024)
#define READ_LEN (MIB - 2048)	/* ends in the middle of a page */
#define BUF_LEN (MIB + LAB_PAGE)
#define DISK_BYTE 'D'		/* every byte the rows read */
/* The raw rows' bytes: after the disk's 16 MiB ext4 file system (vm/guest.mk). */
#define ODIRECT_RAW_OFFSET (16 * MIB)
#define ODIRECT_FILE "/mnt/odirect/data"	/* on that file system (vm/init mounts it) */
#define PREFORK 'p'
#define PARENT 'P'

const struct odirect_row odirect_rows[] = {
	{
		.name = "odirect-no-fork",
		.title = "O_DIRECT read, no fork (the control)",
		.note = "every byte of the read arrives in the parent's buffer",
	},
	{
		.name = "odirect-fork",
		.title = "O_DIRECT read in flight, fork, parent writes the same page",
		.fork = true,
		.note = "the parent's write copies the page; the read lands in the old one, now the child's",
	},
	{
		.name = "odirect-dontfork",
		.title = "the same with MADV_DONTFORK on the buffer",
		.fork = true,
		.dontfork = true,
		.note = "the child has no such range, so fork shares nothing and nothing is copied",
	},
	{
		.name = "odirect-own-page",
		.title = "the same, the read fills whole pages, the parent writes another",
		.fork = true,
		.own_page = true,
		.note = "open(2)'s workaround: no page holds both the read's bytes and the parent's data",
	},
	{
		.name = "odirect-ext4-no-fork",
		.title = "the control again, reading a file on ext4 (iomap direct I/O)",
		.ext4 = true,
		.note = "the file system hands the same user pages to the block layer",
	},
	{
		.name = "odirect-ext4-fork",
		.title = "ext4: read in flight, fork, parent writes the same page",
		.fork = true,
		.ext4 = true,
		.note = "the file system changes nothing: the pages are taken the way the raw device takes them",
	},
	{
		.name = "odirect-ext4-dontfork",
		.title = "ext4: the same with MADV_DONTFORK on the buffer",
		.fork = true,
		.dontfork = true,
		.ext4 = true,
		.note = "as on the raw device, the child has no such range",
	},
	{
		.name = "odirect-ext4-own-page",
		.title = "ext4: the read fills whole pages, the parent writes another",
		.fork = true,
		.own_page = true,
		.ext4 = true,
		.note = "the workaround holds through the file system as well",
	},
};

const unsigned int n_odirect_rows = sizeof(odirect_rows) / sizeof(odirect_rows[0]);

__attribute__((format(printf, 2, 3)))
static bool fail(struct odirect_obs *obs, const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vsnprintf(obs->error, sizeof(obs->error), fmt, ap);
	va_end(ap);
	if (e)
		snprintf(obs->error + strlen(obs->error), sizeof(obs->error) - strlen(obs->error),
			 ": %s", strerror(e));
	return false;
}

/* The vdX whose serial is "odirect" (vm/run --disk IMAGE,serial=odirect), or -1. */
static int find_disk(char *name, size_t size)
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
		if (fgets(serial, sizeof(serial), f) && !strncmp(serial, "odirect", 7) &&
		    strlen(d->d_name) < size) {
			strcpy(name, d->d_name);
			ret = 0;
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
 * afterwards, so a read on an idle disk is not slowed at all. A first read spends the budget;
 * the row's read, issued right after it by the same thread, is the one that waits. Any delay
 * between the two (the host stalling the guest) would let the budget refill: hence one thread,
 * back to back.
 */
static void *reader_main(void *arg)
{
	struct reader *r = arg;

	r->pre_got = pread(r->fd, r->pre, MIB, r->off);
	r->pre_done = true;
	if (r->pre_got == MIB) {
		r->got = pread(r->fd, r->buf, r->len, r->off);
		r->err = errno;
	}
	r->done = true;
	return NULL;
}

struct child_report {
	uint64_t pfn;
	int pfn_errno;
	bool has_data;
};

/* The child: once the read is over, its PFN for the read's last page and what it holds there. */
static void child_main(const char *last, int cmd, int rep)
{
	struct child_report r = { 0 };
	char c;

	if (read(cmd, &c, 1) != 1)
		_exit(1);
	r.pfn_errno = lab_pfn_read(last, &r.pfn) ? errno : 0;
	/* Touch it only when there is a page: under MADV_DONTFORK there is no range at all. */
	r.has_data = !r.pfn_errno && r.pfn && last[0] == DISK_BYTE;
	_exit(write(rep, &r, sizeof(r)) == sizeof(r) ? 0 : 1);
}

/*
 * One play of a row. The read's pages are pinned from before the request is submitted until
 * after it completes, so a read seen in flight before fork() and still in flight once it
 * returned was pinned during the whole fork. A play that misses that window (a loaded host
 * may stall the parent until the read is over) sets *missed and proves nothing.
 */
static bool play(const struct odirect_row *row, struct odirect_obs *obs, const char *disk,
		 struct reader *rd, bool *missed)
{
	char *last = rd->buf + (rd->len - 1) / LAB_PAGE * LAB_PAGE;
	char *parent_at = row->own_page ? rd->buf + rd->len : rd->buf + READ_LEN;
	int cmd[2] = { -1, -1 }, rep[2] = { -1, -1 }, status;
	struct child_report r;
	bool ok = false, started = false, joined = false;
	pthread_t thread;
	pid_t pid = -1;

	if (lab_pfn_read(last, &obs->pfn_before))
		return fail(obs, "reading the parent's PFN from pagemap");
	if (row->fork && (pipe(cmd) || pipe(rep)))
		return fail(obs, "pipe");
	errno = pthread_create(&thread, NULL, reader_main, rd);
	if (errno) {
		fail(obs, "starting the reader thread");
		goto out;
	}
	started = true;
	/*
	 * At 1 MiB/s the row's read stays in flight for about half a second once submitted: fork
	 * as soon as the disk shows it after the first read (a loaded host may take a while to get
	 * the thread that far; the loop ends when the reader does).
	 */
	for (int i = 0; i < 4000 && !rd->done; i++) {
		if (rd->pre_done) {
			obs->inflight = reads_in_flight(disk);
			if (obs->inflight > 0)
				break;
		}
		usleep(5 * 1000);
	}
	if (row->fork) {
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			fail(obs, "fork");
			goto out;
		}
		if (!pid) {
			close(cmd[1]);
			close(rep[0]);
			child_main(last, cmd[0], rep[1]);
		}
		obs->inflight_after = reads_in_flight(disk);
	}
	/* The parent writes its own data, in the read's last page or (workaround) another. */
	memset(parent_at, PARENT, 64);
	pthread_join(thread, NULL);
	joined = true;
	if (rd->pre_got != MIB) {
		errno = rd->pre_got < 0 ? rd->err : 0;
		fail(obs, "the O_DIRECT read before the row returned %zd of %d bytes", rd->pre_got,
		     MIB);
		goto out;
	}
	if (rd->got != (ssize_t)rd->len) {
		errno = rd->got < 0 ? rd->err : 0;
		fail(obs, "the O_DIRECT read returned %zd of %zu bytes", rd->got, rd->len);
		goto out;
	}
	if (obs->inflight < 1 || (row->fork && obs->inflight_after < 1)) {
		errno = 0;
		*missed = true;
		fail(obs, "the read was not seen in flight %s (is the disk slow?)",
		     obs->inflight < 1 ? "before it ended" : "once fork() returned");
		goto out;
	}
	if (lab_pfn_read(last, &obs->pfn_after)) {
		fail(obs, "reading the parent's PFN from pagemap");
		goto out;
	}
	for (size_t i = 0; i < rd->len; i++)
		obs->missing += rd->buf[i] != DISK_BYTE;
	if (pid > 0) {
		if (write(cmd[1], "r", 1) != 1 || read(rep[0], &r, sizeof(r)) != sizeof(r)) {
			fail(obs, "asking the child");
			goto out;
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			errno = 0;
			fail(obs, "the child ended with status %#x", status);
			goto out;
		}
		pid = -1;
		if (r.pfn_errno) {
			errno = r.pfn_errno;
			fail(obs, "reading the child's PFN from pagemap");
			goto out;
		}
		obs->pfn_child = r.pfn;
		obs->child_has_data = r.has_data;
	}
	obs->verdict = obs->missing ? "ORPHANED" : "COHERENT";
	ok = true;
out:
	if (started && !joined)
		pthread_join(thread, NULL);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (cmd[i] >= 0)
			close(cmd[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	return ok;
}

/* Set the stage on a fresh buffer and play the row once. */
static bool attempt(const struct odirect_row *row, struct odirect_obs *obs, const char *disk,
		    bool *missed)
{
	struct reader rd = {
		.len = row->own_page ? MIB : READ_LEN,
		.off = row->ext4 ? 0 : ODIRECT_RAW_OFFSET,
	};
	char path[80];
	bool ok;

	memset(obs, 0, sizeof(*obs));
	if (row->ext4)
		snprintf(path, sizeof(path), "%s", ODIRECT_FILE);
	else
		snprintf(path, sizeof(path), "/dev/%s", disk);
	rd.fd = open(path, O_RDONLY | O_DIRECT);
	if (rd.fd < 0)
		return fail(obs, "open %s", path);
	rd.buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rd.pre = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rd.buf == MAP_FAILED || rd.pre == MAP_FAILED) {
		ok = fail(obs, "mmap");
		goto out;
	}
	memset(rd.buf, PREFORK, BUF_LEN);
	ok = (!row->dontfork || !madvise(rd.buf, BUF_LEN, MADV_DONTFORK) || fail(obs, "DONTFORK")) &&
	     play(row, obs, disk, &rd, missed);
out:
	if (rd.buf != MAP_FAILED)
		munmap(rd.buf, BUF_LEN);
	if (rd.pre != MAP_FAILED)
		munmap(rd.pre, MIB);
	close(rd.fd);
	return ok;
}

#define MAX_TRIES 5

bool odirect_run(const struct odirect_row *row, struct odirect_obs *obs)
{
	char disk[64];
	bool ok = false, missed = true;

	memset(obs, 0, sizeof(*obs));
	if (find_disk(disk, sizeof(disk)))
		return errno = 0, fail(obs, "no disk with serial odirect (vm/run --disk IMAGE,serial=odirect)");
	for (unsigned int i = 1; !ok && missed && i <= MAX_TRIES; i++) {
		missed = false;
		ok = attempt(row, obs, disk, &missed);
		obs->tries = i;
	}
	return ok;
}
