// SPDX-License-Identifier: GPL-2.0
/*
 * wb_bench: figure 3 of make bench. A streaming writer of a large file on the guest's
 * disk, window by window, asking for write-out behind itself with LINUX_FADV_ASYNC_WRITE,
 * with sync_file_range(SYNC_FILE_RANGE_WRITE), with fsync(), or not at all; throughput,
 * and the latency of each call, as ratios to the writer that asks nothing. The end of
 * each run includes an fsync, so every variant has put the same data on the disk.
 *
 *   wb_bench [--file-mib N] [--window-mib N] [--reps N]
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab.h"

#define MIB (1024 * 1024UL)
#define PATH "/mnt/disk/wb-bench"

enum how { NOTHING, ASYNC_WRITE, SFR_WRITE, FSYNC, NHOW };
static const char *const names[] = {
	"nothing", "LINUX_FADV_ASYNC_WRITE", "sync_file_range(WRITE)", "fsync",
};

int main(int argc, char **argv)
{
	long file_mib = 128, window_mib = 4, reps = 3;
	double mbps[NHOW][8], call_ms[NHOW][8 * 64], base;
	int ncalls[NHOW] = { 0 }, c;
	char *buf;

	static const struct option opts[] = {
		{ "file-mib", required_argument, NULL, 'f' },
		{ "window-mib", required_argument, NULL, 'w' },
		{ "reps", required_argument, NULL, 'r' },
		{ 0 },
	};
	while ((c = getopt_long(argc, argv, "f:w:r:", opts, NULL)) != -1) {
		if (c == 'f')
			file_mib = atol(optarg);
		else if (c == 'w')
			window_mib = atol(optarg);
		else if (c == 'r')
			reps = atol(optarg);
		else
			return 2;
	}
	if (reps < 1 || reps > 8 || window_mib < 1 || file_mib / window_mib > 64)
		return fprintf(stderr, "wb_bench: 1..8 reps, at most 64 windows\n"), 2;
	buf = malloc(window_mib * MIB);
	if (!buf || lab_sectors_written("vda") < 0)
		return fprintf(stderr, "wb_bench: no memory or no /dev/vda\n"), 2;
	/* Default writeback stays on: this is a writer in its normal environment. */
	for (int r = 0; r < reps; r++) {
		for (int how = 0; how < NHOW; how++) {
			int fd = open(PATH, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			double t0, t1;

			if (fd < 0)
				return perror(PATH), 2;
			memset(buf, 'a' + r + how, window_mib * MIB);
			t0 = lab_now_us() / 1e6;
			for (long w = 0; w < file_mib / window_mib; w++) {
				off_t off = w * window_mib * MIB;
				double c0;
				int ret = 0;

				if (pwrite(fd, buf, window_mib * MIB, off) != (ssize_t)(window_mib * MIB))
					return perror("pwrite"), 2;
				c0 = lab_now_us() / 1e6;
				if (how == ASYNC_WRITE)
					ret = posix_fadvise(fd, off, window_mib * MIB,
							    LINUX_FADV_ASYNC_WRITE);
				else if (how == SFR_WRITE)
					ret = sync_file_range(fd, off, window_mib * MIB,
							      SYNC_FILE_RANGE_WRITE);
				else if (how == FSYNC)
					ret = fsync(fd);
				if (ret)
					return perror(names[how]), 2;
				if (how != NOTHING)
					call_ms[how][ncalls[how]++] = (lab_now_us() / 1e6 - c0) * 1e3;
			}
			fsync(fd);
			t1 = lab_now_us() / 1e6;
			mbps[how][r] = file_mib / (t1 - t0);
			close(fd);
			unlink(PATH);
			sync();
			lab_write_str("/proc/sys/vm/drop_caches", "3");
		}
	}
	printf("@@csv writeback\n");
	printf("variant,median_mib_s,min_mib_s,max_mib_s,throughput_ratio_to_nothing,"
	       "call_median_ms,call_max_ms\n");
	lab_sort_doubles(mbps[NOTHING], reps);
	base = mbps[NOTHING][reps / 2];
	for (int how = 0; how < NHOW; how++) {
		lab_sort_doubles(mbps[how], reps);
		lab_sort_doubles(call_ms[how], ncalls[how]);
		printf("%s,%.1f,%.1f,%.1f,%.2f,", names[how], mbps[how][reps / 2], mbps[how][0],
		       mbps[how][reps - 1], mbps[how][reps / 2] / base);
		if (ncalls[how])
			printf("%.2f,%.2f\n", call_ms[how][ncalls[how] / 2],
			       call_ms[how][ncalls[how] - 1]);
		else
			printf(",\n");
	}
	printf("@@end\n");
	free(buf);
	return 0;
}
