// SPDX-License-Identifier: GPL-2.0
/*
 * The guest's disks: their counters, finding one by its serial, and the writeback knobs the fadvise
 * tests hold still.
 */
#include "lab.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* The Nth number (0-based, 0 to 6) of /sys/block/DISK/stat, or -1. */
static long long stat_field(const char *disk, int n)
{
	long long f[7] = { 0 };
	char path[300];
	FILE *s;

	if (n < 0 || n > 6 ||
	    snprintf(path, sizeof(path), "/sys/block/%s/stat", disk) >= (int)sizeof(path))
		return -1;
	s = fopen(path, "r");
	if (!s)
		return -1;
	if (fscanf(s, "%lld %lld %lld %lld %lld %lld %lld", &f[0], &f[1], &f[2], &f[3], &f[4],
		   &f[5], &f[6]) != 7)
		f[n] = -1;
	fclose(s);
	return f[n];
}

long long lab_sectors_read(const char *disk)
{
	return stat_field(disk, 2);
}

long long lab_sectors_written(const char *disk)
{
	return stat_field(disk, 6);
}

int lab_disk_by_serial(const char *serial, char *name, size_t size)
{
	char path[300], got[64];
	struct dirent *d;
	DIR *dir = opendir("/sys/block");
	int ret = -1;

	while (dir && ret && (d = readdir(dir))) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/block/%s/serial", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(got, sizeof(got), f)) {
			got[strcspn(got, "\n")] = 0;
			if (!strcmp(got, serial) && strlen(d->d_name) < size) {
				snprintf(name, size, "%s", d->d_name);
				ret = 0;
			}
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return ret;
}

int lab_quiet_writeback(bool quiet)
{
	return lab_write_str("/proc/sys/vm/dirty_writeback_centisecs", quiet ? "0" : "500") |
	       lab_write_str("/proc/sys/vm/dirty_background_ratio", quiet ? "90" : "10") |
	       lab_write_str("/proc/sys/vm/dirty_ratio", quiet ? "95" : "20");
}
