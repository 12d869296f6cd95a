// SPDX-License-Identifier: GPL-2.0
/* /proc and /sys readers and knobs: smaps, maps, status, meminfo, vmstat, sysctls. */
#define _GNU_SOURCE
#include "lab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *open_proc(pid_t pid, const char *name)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	return fopen(path, "r");
}

/* The rest of line key (e.g. "VmFlags:") of pid's smaps entry holding addr; false when none. */
static bool smaps_line(pid_t pid, const void *addr, const char *key, char *out, size_t size)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	bool inside = false, found = false;
	char line[512];
	FILE *f = open_proc(pid, "smaps");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			inside = a >= lo && a < hi;
			continue;
		}
		if (inside && !strncmp(line, key, strlen(key))) {
			snprintf(out, size, "%s", line + strlen(key));
			out[strcspn(out, "\n")] = 0;
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

bool lab_vmflags(const void *addr, char *flags, size_t size)
{
	return smaps_line(0, addr, "VmFlags:", flags, size);
}

bool lab_pid_vmflags(pid_t pid, const void *addr, char *flags, size_t size)
{
	return smaps_line(pid, addr, "VmFlags:", flags, size);
}

long lab_smaps_kb(const void *addr, const char *field)
{
	char key[64], value[64];

	snprintf(key, sizeof(key), "%s:", field);
	return smaps_line(0, addr, key, value, sizeof(value)) ? atol(value) : -1;
}

bool lab_has_vmflag(const void *addr, const char *flag)
{
	char flags[256], *tok, *save;

	if (!lab_vmflags(addr, flags, sizeof(flags)))
		return false;
	for (tok = strtok_r(flags, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (!strcmp(tok, flag))
			return true;
	return false;
}

int lab_maps_holds(pid_t pid, const void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512];
	int found = 0;
	FILE *f = open_proc(pid, "maps");

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
			found = 1;
	/* A read that stopped on an error is no "not covered". */
	if (ferror(f))
		found = -1;
	fclose(f);
	return found;
}

bool lab_maps_covers(pid_t pid, const void *addr)
{
	return lab_maps_holds(pid, addr) == 1;
}

int lab_maps_count(const void *addr, size_t len)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512];
	int n = 0;
	FILE *f = open_proc(0, "maps");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo < a + len && hi > a)
			n++;
	fclose(f);
	return n;
}

static long file_kb(const char *path, const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

long lab_status_kb(const char *field)
{
	return file_kb("/proc/self/status", field);
}

long lab_meminfo_kb(const char *field)
{
	return file_kb("/proc/meminfo", field);
}

ssize_t lab_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

int lab_read_int(const char *path)
{
	int v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int lab_write_str(const char *path, const char *value)
{
	ssize_t n = (ssize_t)strlen(value);
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, value, n) != n)
		ret = -1;
	close(fd);
	return ret;
}

long lab_vmstat(const char *name)
{
	char line[128];
	size_t n = strlen(name);
	long v = -1;
	FILE *f;

	lab_write_str("/proc/sys/vm/stat_refresh", "1");
	f = fopen("/proc/vmstat", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ' ')
			v = atol(line + n + 1);
	if (f)
		fclose(f);
	return v;
}

long lab_foll_pins(void)
{
	return lab_vmstat("nr_foll_pin_acquired") - lab_vmstat("nr_foll_pin_released");
}

bool lab_memfree_is_exact(void)
{
	return access("/sys/kernel/debug/kmemleak", F_OK) != 0;
}

int lab_reserve_hugepages(int n)
{
	const char *nr = "/proc/sys/vm/nr_hugepages";
	const char *free = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";
	int lock = lab_lock(LAB_LOCK_HUGETLB, true), total, ret = -1;
	char count[16];

	/*
	 * Always n more, under the lock: two demos played at once (guest/demo --parallel) that
	 * each found the same free pages enough, or each added what was missing, were left
	 * sharing them, and one row failed to map its page.
	 */
	total = lab_read_int(nr);
	snprintf(count, sizeof(count), "%d", total + n);
	if (lock >= 0 && total >= 0 && !lab_write_str(nr, count) && lab_read_int(free) >= n)
		ret = 0;
	if (lock >= 0)
		close(lock);
	return ret;
}
