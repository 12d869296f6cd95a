// SPDX-License-Identifier: GPL-2.0
/*
 * fadvise_demo: what each way of asking for write-out does to the same 8 MiB of dirty
 * file data on the guest's disk: the range's dirty and under-writeback pages (kpageflags),
 * Dirty and Writeback from /proc/meminfo, and the disk's written sectors, right before
 * and right after the call, and how long the call took. The periodic flusher is stopped.
 * The observed state of the range after the call (NOTHING started, IN FLIGHT, WRITTEN) stands
 * next to the expectation from liblab/expect.c; the lab's slow disk keeps write-out in flight.
 * Exit status: 0 all as expected (rows a kernel without kernel-patches/.../0001 cannot play are
 * skipped, saying so), 1 a mismatch, 2 an observation failed.
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "expect.h"
#include "lab.h"

#define PATH "/mnt/disk/fadvise-demo"
#define SIZE (8 * 1024 * 1024UL)
#define NPAGES (SIZE / LAB_PAGE)

enum how { ASYNC_WRITE, WRITE_WAIT, WAIT_WRITE_WAIT, SYNC_FILE_RANGE, MSYNC_ASYNC, NOTHING };

static const char *const names[] = {
	[ASYNC_WRITE] = "posix_fadvise(LINUX_FADV_ASYNC_WRITE)",
	[WRITE_WAIT] = "posix_fadvise(LINUX_FADV_WRITE_WAIT)",
	[WAIT_WRITE_WAIT] = "WRITE_WAIT, ASYNC_WRITE, WRITE_WAIT",
	[SYNC_FILE_RANGE] = "sync_file_range(SYNC_FILE_RANGE_WRITE)",
	[MSYNC_ASYNC] = "msync(MS_ASYNC)",
	[NOTHING] = "(no call: the control)",
};

/* The rows' names in the expectation tables. */
static const char *const rows[] = {
	[ASYNC_WRITE] = "fadvise-async-write",
	[WRITE_WAIT] = "fadvise-write-wait",
	[WAIT_WRITE_WAIT] = "fadvise-wait-write-wait",
	[SYNC_FILE_RANGE] = "fadvise-sync-file-range",
	[MSYNC_ASYNC] = "fadvise-msync-async",
	[NOTHING] = "fadvise-control",
};

struct sample {
	int dirty, writeback;
	long dirty_kb, writeback_kb;
	long long sectors;
};

/* One sample of every observation; false when any of them could not be read. */
static bool sample(const char *map, struct sample *s)
{
	if (lab_page_states(map, 0, NPAGES, &s->dirty, &s->writeback))
		return false;
	s->dirty_kb = lab_meminfo_kb("Dirty");
	s->writeback_kb = lab_meminfo_kb("Writeback");
	s->sectors = lab_sectors_written("vda");
	return s->dirty_kb >= 0 && s->writeback_kb >= 0 && s->sectors >= 0;
}

/* What the call left of the range, from the page flags alone. */
static const char *verdict(const struct sample *after)
{
	if (after->dirty == (int)NPAGES && !after->writeback)
		return "NOTHING";
	if (!after->dirty && after->writeback)
		return "IN FLIGHT";
	if (!after->dirty && !after->writeback)
		return "WRITTEN";
	return "PARTIAL";
}

static int call(enum how how, int fd, char *map)
{
	switch (how) {
	case ASYNC_WRITE:
		return posix_fadvise(fd, 0, SIZE, LINUX_FADV_ASYNC_WRITE);
	case WRITE_WAIT:
		return posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT);
	case WAIT_WRITE_WAIT:
		return posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT) ||
		       posix_fadvise(fd, 0, SIZE, LINUX_FADV_ASYNC_WRITE) ||
		       posix_fadvise(fd, 0, SIZE, LINUX_FADV_WRITE_WAIT);
	case SYNC_FILE_RANGE:
		return sync_file_range(fd, 0, SIZE, SYNC_FILE_RANGE_WRITE);
	case MSYNC_ASYNC:
		return msync(map, SIZE, MS_ASYNC);
	default:
		return 0;
	}
}

int main(void)
{
	struct sample a, b;
	struct timespec t0, t1;
	int fd, mismatched = 0, failed = 0, skipped = 0;
	const char *lacks = lab_lacks_patch("0001");
	char *map;

	if (lab_sectors_written("vda") < 0) {
		fprintf(stderr, "fadvise_demo: no /dev/vda (vm/run --disk)\n");
		return 2;
	}
	if (lab_quiet_writeback(true))
		return perror("stopping the flusher"), 2;
	fd = open(PATH, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, SIZE) || fallocate(fd, 0, 0, SIZE) || fsync(fd))
		return perror(PATH), 2;
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return perror("mmap"), 2;

	printf("on Linux %s (expectations: the %s table)\n", lab_kernel_release(), lab_expect_table());
	printf("8 MiB (%lu pages) dirtied through a shared mapping before each call; range pages "
	       "dirty/writeback, meminfo Dirty/Writeback kB, sectors written, before -> after\n",
	       NPAGES);
	printf("%-40s %-19s %-16s %-21s %-16s %-9s %-9s %s\n", "call", "pages dirty",
	       "pages writeback", "meminfo Dirty kB", "sectors written", "took", "observed",
	       "expected");
	for (int how = 0; how <= NOTHING; how++) {
		const char *want = lab_expect(rows[how]), *seen;
		bool ok;

		/* The article's commands need the lab's patch; a tree without it skips them. */
		if (lacks && how <= WAIT_WRITE_WAIT) {
			printf("%-40s skipped: %s\n", names[how], lacks);
			skipped++;
			continue;
		}
		memset(map, 'a' + how, SIZE);
		ok = sample(map, &a) && a.dirty == (int)NPAGES && !a.writeback;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (ok && call(how, fd, map)) {
			perror(names[how]);
			ok = false;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ok = ok && sample(map, &b);
		seen = ok ? verdict(&b) : "ERROR";
		printf("%-40s %5d -> %-9d %5d -> %-6d %7ld -> %-9ld +%-15lld %6.1f ms %-9s %s%s\n",
		       names[how], a.dirty, b.dirty, a.writeback, b.writeback, a.dirty_kb, b.dirty_kb,
		       b.sectors - a.sectors,
		       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6, seen,
		       want ? want : "(none)", ok && want && !strcmp(seen, want) ? "" : " MISMATCH");
		if (!ok)
			failed++;
		else if (!want || strcmp(seen, want))
			mismatched++;
		/* Start the next row from a clean file. */
		if (fsync(fd)) {
			perror("fsync");
			failed++;
		}
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
	}
	munmap(map, SIZE);
	close(fd);
	unlink(PATH);
	lab_quiet_writeback(false);
	printf("%d rows: %d as expected, %d mismatched, %d could not run", NOTHING + 1,
	       NOTHING + 1 - mismatched - failed - skipped, mismatched, failed);
	printf(skipped ? ", %d skipped\n" : "\n", skipped);
	return failed ? 2 : mismatched ? 1 : 0;
}
