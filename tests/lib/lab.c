// SPDX-License-Identifier: GPL-2.0
#include "lab.h"

#include <linux/kernel-page-flags.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
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

bool lab_vmflags(const void *addr, char *flags, size_t size)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	bool inside = false, found = false;
	char line[512];
	FILE *f = open_proc(0, "smaps");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			inside = a >= lo && a < hi;
			continue;
		}
		if (inside && !strncmp(line, "VmFlags:", 8)) {
			snprintf(flags, size, "%s", line + 8);
			flags[strcspn(flags, "\n")] = 0;
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
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

bool lab_maps_covers(pid_t pid, const void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512];
	bool found = false;
	FILE *f = open_proc(pid, "maps");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
			found = true;
	fclose(f);
	return found;
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

/* The PFN in one /proc/<pid>/pagemap entry: bit 63 present, bits 0-54 the PFN (root only). */
static uint64_t pagemap_pfn(int pagemap, const void *addr)
{
	uint64_t entry;

	if (pread(pagemap, &entry, sizeof(entry), (uintptr_t)addr / LAB_PAGE * sizeof(entry)) !=
	    sizeof(entry) || !(entry & (1ULL << 63)))
		return 0;
	return entry & ((1ULL << 55) - 1);
}

uint64_t lab_pfn(const void *addr)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t pfn;

	if (fd < 0)
		return 0;
	pfn = pagemap_pfn(fd, addr);
	close(fd);
	return pfn;
}

static int kpageflags(int kpf, uint64_t pfn, uint64_t *flags)
{
	return pfn && pread(kpf, flags, sizeof(*flags), pfn * sizeof(*flags)) == sizeof(*flags) ?
	       0 : -1;
}

uint64_t lab_page_flags(const void *addr)
{
	int kpf = open("/proc/kpageflags", O_RDONLY);
	uint64_t flags = 0;

	if (kpf >= 0) {
		if (kpageflags(kpf, lab_pfn(addr), &flags))
			flags = 0;
		close(kpf);
	}
	return flags;
}

int lab_become_nobody(unsigned long memlock_pages)
{
	struct rlimit rl = { memlock_pages * LAB_PAGE, memlock_pages * LAB_PAGE };

	return setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) || setgid(65534) ||
	       setuid(65534) ? -1 : 0;
}

int lab_in_child(int (*fn)(void *), void *arg)
{
	int status = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
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

static unsigned int read_hex(const char *dir, const char *name)
{
	char path[512];
	unsigned int v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%x", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

bool lab_pci_find(unsigned int vendor, unsigned int device, char *path, size_t size)
{
	const char *base = "/sys/bus/pci/devices";
	struct dirent *d;
	bool found = false;
	DIR *dir = opendir(base);

	if (!dir)
		return false;
	while (!found && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, size, "%s/%s", base, d->d_name);
		found = read_hex(path, "vendor") == vendor && read_hex(path, "device") == device;
	}
	closedir(dir);
	return found;
}

long long lab_sectors_written(const char *disk)
{
	long long f[7] = { 0 };
	char path[64];
	FILE *s;

	snprintf(path, sizeof(path), "/sys/block/%s/stat", disk);
	s = fopen(path, "r");
	if (!s)
		return -1;
	if (fscanf(s, "%lld %lld %lld %lld %lld %lld %lld", &f[0], &f[1], &f[2], &f[3], &f[4],
		   &f[5], &f[6]) != 7)
		f[6] = -1;
	fclose(s);
	return f[6];
}

int lab_page_states(const char *map, unsigned long first, unsigned long n, int *dirty,
		    int *writeback)
{
	int kpf = open("/proc/kpageflags", O_RDONLY), pm = open("/proc/self/pagemap", O_RDONLY);
	int ret = -1;

	*dirty = *writeback = 0;
	if (kpf < 0 || pm < 0)
		goto out;
	for (unsigned long i = first; i < first + n; i++) {
		const char *page = map + i * LAB_PAGE;
		uint64_t flags;

		(void)*(volatile const char *)page;	/* map it in */
		if (kpageflags(kpf, pagemap_pfn(pm, page), &flags))
			goto out;
		*dirty += !!(flags & (1ULL << KPF_DIRTY));
		*writeback += !!(flags & (1ULL << KPF_WRITEBACK));
	}
	ret = 0;
out:
	if (kpf >= 0)
		close(kpf);
	if (pm >= 0)
		close(pm);
	return ret;
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

int lab_quiet_writeback(bool quiet)
{
	return lab_write_str("/proc/sys/vm/dirty_writeback_centisecs", quiet ? "0" : "500") |
	       lab_write_str("/proc/sys/vm/dirty_background_ratio", quiet ? "90" : "10") |
	       lab_write_str("/proc/sys/vm/dirty_ratio", quiet ? "95" : "20");
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
