// SPDX-License-Identifier: GPL-2.0
/* Page frame numbers and page flags: /proc/self/pagemap and /proc/kpageflags (root only). */
#include "lab.h"

#include <linux/kernel-page-flags.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The PFN in one /proc/<pid>/pagemap entry: bit 63 present, bits 0-54 the PFN (root only). */
static uint64_t pagemap_pfn(int pagemap, const void *addr)
{
	uint64_t entry;

	if (pread(pagemap, &entry, sizeof(entry), (uintptr_t)addr / LAB_PAGE * sizeof(entry)) !=
	    sizeof(entry) || !(entry & (1ULL << 63)))
		return 0;
	return entry & ((1ULL << 55) - 1);
}

int lab_pid_pfn_read(pid_t pid, const void *addr, uint64_t *pfn)
{
	char path[64];
	uint64_t entry;
	ssize_t n;
	int fd, ret = -1;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY);
	*pfn = 0;
	if (fd < 0)
		return -1;
	n = pread(fd, &entry, sizeof(entry), (uintptr_t)addr / LAB_PAGE * sizeof(entry));
	if (n != sizeof(entry)) {
		if (n >= 0)
			errno = EIO;	/* a short read */
	} else if (!(entry & (1ULL << 63))) {
		ret = 0;
	} else if (!(entry & ((1ULL << 55) - 1))) {
		errno = EPERM;	/* present, but the PFN is hidden (not CAP_SYS_ADMIN) */
	} else {
		*pfn = entry & ((1ULL << 55) - 1);
		ret = 0;
	}
	close(fd);
	return ret;
}

int lab_pfn_read(const void *addr, uint64_t *pfn)
{
	return lab_pid_pfn_read(0, addr, pfn);
}

uint64_t lab_pfn(const void *addr)
{
	uint64_t pfn;

	return lab_pfn_read(addr, &pfn) ? 0 : pfn;
}

static int kpageflags(int kpf, uint64_t pfn, uint64_t *flags)
{
	return pfn && pread(kpf, flags, sizeof(*flags), pfn * sizeof(*flags)) == sizeof(*flags) ?
	       0 : -1;
}

int lab_pfn_flags(uint64_t pfn, uint64_t *flags)
{
	int kpf = open("/proc/kpageflags", O_RDONLY), ret;

	*flags = 0;
	if (kpf < 0)
		return -1;
	errno = 0;
	ret = kpageflags(kpf, pfn, flags);
	if (ret && !errno)
		errno = pfn ? EIO : EINVAL;
	close(kpf);
	return ret;
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

int lab_page_state(uint64_t pfn, struct lab_page_state *st)
{
	int fd = open("/sys/kernel/debug/pindma/page_state", O_RDWR | O_CLOEXEC), ret = -1;
	char out[256];
	ssize_t n;
	int large, anon, used = 0;
	char name[16];
	int64_t mapcount;

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return -1;
	n = snprintf(out, sizeof(out), "%llu\n", (unsigned long long)pfn);
	/* debugfs files report size 0: written, then read until EOF, never sized. */
	if (write(fd, out, n) != n)
		goto out;
	n = read(fd, out, sizeof(out) - 1);
	if (n <= 0)
		goto out;
	out[n] = 0;
	if (sscanf(out, "pfn=%*x refcount=%" SCNd64 " %15[a-z_]=%" SCNd64 " pincount=%" SCNd64
		   " maybe_pinned=%d anon=%d anon_exclusive=%d large=%d%n", &st->refcount, name,
		   &mapcount, &st->pincount, &st->maybe_pinned, &anon, &st->anon_exclusive, &large,
		   &used) != 8 || !used || (strcmp(name, "page_mapcount") &&
					    strcmp(name, "folio_mapcount"))) {
		errno = EPROTO;
		goto out;
	}
	st->page_mapcount = strcmp(name, "page_mapcount") ? -1 : mapcount;
	st->folio_mapcount = strcmp(name, "folio_mapcount") ? -1 : mapcount;
	st->pfn = pfn;
	ret = 0;
out:
	close(fd);
	return ret;
}

void *lab_map_anon(size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		    -1, 0);
}

int lab_movable_zone(uint64_t *start, uint64_t *end)
{
	char line[256];
	bool in = false;
	uint64_t spanned = 0;
	FILE *f = fopen("/proc/zoneinfo", "r");

	*start = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Node ", 5))
			in = strstr(line, "zone  Movable") || strstr(line, "zone Movable");
		else if (in && sscanf(line, " spanned %lu", &spanned) != 1)
			sscanf(line, " start_pfn: %lu", start);
	}
	if (f)
		fclose(f);
	*end = *start + spanned;
	return spanned && *start ? 0 : -1;
}
