// SPDX-License-Identifier: GPL-2.0
/*
 * fadvise_demo: what each way of asking for write-out does to the same 8 MiB of dirty
 * file data on the guest's disk: the range's dirty and under-writeback pages (kpageflags),
 * Dirty and Writeback from /proc/meminfo, and the disk's written sectors, right before
 * and right after the call, and how long the call took. The periodic flusher is stopped.
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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

struct sample {
	int dirty, writeback;
	long dirty_kb, writeback_kb;
	long long sectors;
};

static void sample(const char *map, struct sample *s)
{
	lab_page_states(map, 0, NPAGES, &s->dirty, &s->writeback);
	s->dirty_kb = lab_meminfo_kb("Dirty");
	s->writeback_kb = lab_meminfo_kb("Writeback");
	s->sectors = lab_sectors_written("vda");
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
	char *map;
	int fd, rc = 0;

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

	printf("8 MiB (%lu pages) dirtied through a shared mapping before each call; range pages "
	       "dirty/writeback, meminfo Dirty/Writeback kB, sectors written, before -> after\n",
	       NPAGES);
	printf("%-40s %-19s %-16s %-21s %-16s %s\n", "call", "pages dirty", "pages writeback",
	       "meminfo Dirty kB", "sectors written", "took");
	for (int how = 0; how <= NOTHING; how++) {
		memset(map, 'a' + how, SIZE);
		sample(map, &a);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (call(how, fd, map)) {
			perror(names[how]);
			rc = 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		sample(map, &b);
		printf("%-40s %5d -> %-9d %5d -> %-6d %7ld -> %-9ld +%-15lld %.1f ms\n", names[how],
		       a.dirty, b.dirty, a.writeback, b.writeback, a.dirty_kb, b.dirty_kb,
		       b.sectors - a.sectors,
		       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
		/* Start the next row from a clean file. */
		fsync(fd);
	}
	munmap(map, SIZE);
	close(fd);
	unlink(PATH);
	lab_quiet_writeback(false);
	return rc;
}
