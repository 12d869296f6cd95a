// SPDX-License-Identifier: GPL-2.0
/*
 * fadvise_dax: the guest half of tests/host/fadvise_dax.sh. LINUX_FADV_ASYNC_WRITE and
 * LINUX_FADV_WRITE_WAIT (kernel-patches/0001) on a DAX file, against sync_file_range().
 *
 * The guest boots with an emulated pmem region (memmap=SIZE!START: /dev/pmem0); the host's
 * ext4 image, attached as the virtio disk with serial "dax", is copied onto it and mounted
 * with -o dax. A store through a shared mapping of a DAX file dirties the mapping's entry
 * for that page; writing it back is dax_writeback_mapping_range() flushing the CPU cache for
 * each dirty entry, which it does for data-integrity writeback (WB_SYNC_ALL) only. The
 * oracle, from tracefs and not from the patch: ext4_writepages events (each ->writepages
 * call, with its sync_mode) and dax_writeback_one events (the pages flushed, as pglen).
 * Following sync_file_range(), ASYNC_WRITE reaches ->writepages with WB_SYNC_NONE and
 * flushes nothing, exactly as sync_file_range(SYNC_FILE_RANGE_WRITE) does; the arguments
 * are checked on DAX files too; the oracle itself is shown to see a flush. Prints TAP.
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab.h"

#define PMEM "/dev/pmem0"
#define MNT "/mnt/dax"
#define FILE_PATH MNT "/file"
#define TRACING "/sys/kernel/tracing"
#define NPAGES 16
#define CASES 5

static int n;

static void result(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++n, what);
	fflush(stdout);
}

static int die(const char *what)
{
	printf("# fadvise_dax: %s: %s\n", what, strerror(errno));
	while (n < CASES)
		result(0, "not run: the setup failed");
	return 1;
}

/* /dev/vdX of the virtio disk with this serial, or -1. */
static int find_disk(const char *want, char *dev, size_t size)
{
	char name[32];

	if (lab_disk_by_serial(want, name, sizeof(name)))
		return -1;
	snprintf(dev, size, "/dev/%s", name);
	return 0;
}

static int copy_image(const char *from, const char *to)
{
	static char buf[1 << 20];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY);
	ssize_t r = -1;

	while (in >= 0 && out >= 0 && (r = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, r) != r) {
			r = -1;
			break;
		}
	if (out >= 0 && fsync(out))
		r = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return r == 0 ? 0 : -1;
}

struct wb {
	long calls, sync_all, pages;	/* ->writepages calls, of them WB_SYNC_ALL; pages flushed */
};

/* What was written back since the last call (read from the trace, which is then cleared). */
static int written_back(struct wb *w)
{
	char line[512];
	FILE *f = fopen(TRACING "/trace", "r");
	int fd;

	memset(w, 0, sizeof(*w));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if ((p = strstr(line, "ext4_writepages:")) && (p = strstr(p, " sync_mode "))) {
			w->calls++;
			w->sync_all += strtol(p + 11, NULL, 10) == 1;	/* WB_SYNC_ALL */
		} else if ((p = strstr(line, "dax_writeback_one:")) && (p = strstr(p, " pglen "))) {
			w->pages += strtol(p + 7, NULL, 16);
		}
	}
	fclose(f);
	/* Opened for writing with O_TRUNC, the trace buffer is cleared. */
	fd = open(TRACING "/trace", O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* The call's return (0 or an errno) and what it wrote back. */
static int fadvise_wb(int fd, off_t offset, off_t len, int advice, struct wb *w)
{
	int ret = posix_fadvise(fd, offset, len, advice);

	return written_back(w) ? -1 : ret;
}

static int sync_file_range_wb(int fd, off_t offset, off_t len, unsigned int flags, struct wb *w)
{
	int ret = sync_file_range(fd, offset, len, flags) ? errno : 0;

	return written_back(w) ? -1 : ret;
}

static void dirty(char *map, int first, int count)
{
	for (int i = first; i < first + count; i++)
		map[(size_t)i * LAB_PAGE] ^= 1;
}

int main(void)
{
	static char zeros[NPAGES * LAB_PAGE];
	char dev[300], what[300];
	struct statx stx;
	struct wb a, b;
	int fd, ra, rb;
	char *map;

	printf("TAP version 13\n1..%d\n", CASES);
	if (find_disk("dax", dev, sizeof(dev))) {
		errno = ENODEV;
		return die("no virtio disk with serial dax");
	}
	if (copy_image(dev, PMEM))
		return die("copying the image onto " PMEM " (memmap= on the command line?)");
	if ((mkdir(MNT, 0755) && errno != EEXIST) || mount(PMEM, MNT, "ext4", 0, "dax"))
		return die("mount -t ext4 -o dax " PMEM);
	if ((mkdir(TRACING, 0755) && errno != EEXIST) ||
	    (mount("tracefs", TRACING, "tracefs", 0, NULL) && errno != EBUSY))
		return die("mounting tracefs");
	if (lab_write_str(TRACING "/events/fs_dax/dax_writeback_one/enable", "1") ||
	    lab_write_str(TRACING "/events/ext4/ext4_writepages/enable", "1"))
		return die("enabling the tracepoints");
	/* Only the calls below may write back: the periodic flusher would clean entries too. */
	if (lab_quiet_writeback(true))
		return die("stopping the flusher");
	fd = open(FILE_PATH, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || pwrite(fd, zeros, sizeof(zeros), 0) != (ssize_t)sizeof(zeros) || fsync(fd))
		return die(FILE_PATH);
	map = mmap(NULL, sizeof(zeros), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx))
		return die("mmap or statx");
	if (written_back(&a))
		return die("reading the trace");

	result(!!(stx.stx_attributes & STATX_ATTR_DAX), "ext4 on the emulated pmem serves the file with DAX");

	dirty(map, 0, NPAGES);
	ra = fadvise_wb(fd, 0, 0, LINUX_FADV_ASYNC_WRITE, &a);
	rb = sync_file_range_wb(fd, 0, 0, SYNC_FILE_RANGE_WRITE, &b);
	snprintf(what, sizeof(what), "ASYNC_WRITE calls ->writepages (WB_SYNC_NONE: no flush) as "
		 "sync_file_range(SYNC_FILE_RANGE_WRITE) does: %d/%d, calls %ld/%ld, sync-all "
		 "%ld/%ld, pages %ld/%ld", ra, rb, a.calls, b.calls, a.sync_all, b.sync_all,
		 a.pages, b.pages);
	result(!ra && !rb && a.calls == 1 && b.calls == 1 && !a.sync_all && !b.sync_all &&
	       !a.pages && !b.pages, what);

	ra = fadvise_wb(fd, 0, 0, LINUX_FADV_WRITE_WAIT, &a);
	snprintf(what, sizeof(what), "WRITE_WAIT writes back nothing: %d, calls %ld, pages %ld",
		 ra, a.calls, a.pages);
	result(!ra && !a.calls && !a.pages, what);

	ra = fadvise_wb(fd, -4096, 4096, LINUX_FADV_ASYNC_WRITE, &a);
	rb = fadvise_wb(fd, INT64_MAX, 1, LINUX_FADV_WRITE_WAIT, &b);
	snprintf(what, sizeof(what), "a negative offset and an overflowing range are EINVAL on DAX "
		 "too: %d, %d", ra, rb);
	result(ra == EINVAL && rb == EINVAL, what);

	/* The oracle sees a flush: the pages are still dirty, and an integrity sync flushes them. */
	ra = sync_file_range_wb(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
				SYNC_FILE_RANGE_WAIT_AFTER, &a);
	rb = fsync(fd) ? errno : written_back(&b);
	snprintf(what, sizeof(what), "the %d pages are still dirty, and sync_file_range with all "
		 "three flags (WB_SYNC_ALL) flushes them: %d, pages %ld, then fsync %ld",
		 NPAGES, ra, a.pages, b.pages);
	result(!ra && !rb && a.pages == NPAGES && !b.pages, what);

	munmap(map, sizeof(zeros));
	close(fd);
	lab_quiet_writeback(false);
	umount(MNT);
	return 0;
}
