// SPDX-License-Identifier: GPL-2.0
/*
 * Playing a pindma row: a page of anonymous memory (a base page, a page of a PMD-mapped THP or of
 * a hugetlb page), optionally MADV_DONTFORK (and DOFORK), held by pindma (or only mlock()ed); a
 * control transfer shows the device reaches the parent's page; then fork, a parent write (or, for a
 * re-pin row, a second pin of the page without WRITE and no write at all), a device write and a
 * device read. Every party's PFN is read before the fork, after it and after the write. The child
 * answers over the lab's parent/child pipes, so it stays alive across the write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/kernel-page-flags.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "pindma_lib.h"
#include "row.h"
#include "why.h"

#define OFF_PARENT 0	/* where the parent writes after the fork */
#define OFF_DEVICE 256	/* where the device writes after the fork */
#define OFF_CONTROL 512	/* where the device writes before the fork */
#define TAG 16
#define HPAGE (2UL << 20)

static const char PREFORK[TAG] = "pre-fork bytes";
static const char PARENT[TAG] = "parent wrote";
static const char DEVICE[TAG] = "device wrote";
static const char CONTROL[TAG] = "device control";

/* Exit status of a child that exits before the parent writes: observed, not assumed. */
#define CHILD_EXIT_CODE 42

struct child_report {
	uint64_t pfn;
	int pfn_errno;		/* the child's pagemap read failed: the row cannot run */
	bool has_range;		/* its maps cover the page */
	char at_parent[TAG];
	char at_device[TAG];
};

struct stage {
	const struct row *row;
	char *page;
};

static void child_look(struct child_report *r, const char *page)
{
	r->has_range = lab_maps_covers(0, page);
	r->pfn_errno = lab_pfn_read(page, &r->pfn) ? errno : 0;
}

/*
 * The child: its PFN right after the fork (pagemap, without touching the page); then, once the
 * parent says so, what it reads where the parent and the device wrote (SIGSEGV when it has no such
 * range), and its PFN again.
 */
static int child_main(struct lab_child *c, void *arg)
{
	const struct stage *st = arg;
	struct child_report r = { 0 };

	child_look(&r, st->page);
	/*
	 * The child's copy of a THP row's page is a base page in a huge-page range: khugepaged may
	 * collapse it into a new THP before the child looks again (seen: the child's PFN moving
	 * 4acc -> 4e00 between its two looks). What the row watches is fork's copy, not that.
	 */
	if (st->row->mem == MEM_THP && r.has_range)
		madvise((void *)((uintptr_t)st->page & ~(HPAGE - 1)), HPAGE, MADV_NOHUGEPAGE);
	if (lab_child_report(c, &r, sizeof(r)))
		return 1;
	if (st->row->child == CHILD_EXITS)
		return CHILD_EXIT_CODE;
	if (lab_child_wait(c) < 0)
		return 1;
	memcpy(r.at_parent, st->page + OFF_PARENT, TAG);
	memcpy(r.at_device, st->page + OFF_DEVICE, TAG);
	child_look(&r, st->page);
	return lab_child_report(c, &r, sizeof(r)) ? 1 : 0;
}

/* Which of the VmFlags that decide what fork gives the child the range has, by the kernel's smaps. */
static void vma_flags(struct record *rec, const char *page)
{
	static const char *const decide[] = { "dc", "sh", "wf" };
	char *o = rec->pindma.vma_flags;
	size_t n = sizeof(rec->pindma.vma_flags);

	for (unsigned int i = 0; i < sizeof(decide) / sizeof(decide[0]); i++)
		if (lab_has_vmflag(page, decide[i]))
			snprintf(o + strlen(o), n - strlen(o), "%s%s", o[0] ? " " : "", decide[i]);
}

static const char *classify(const char *bytes)
{
	if (!memcmp(bytes, PREFORK, TAG))
		return "pre-fork";
	if (!memcmp(bytes, PARENT, TAG))
		return "parent";
	if (!memcmp(bytes, DEVICE, TAG))
		return "device";
	for (int i = 0; i < TAG; i++)
		if (bytes[i])
			return "other";
	return "zero";
}

/* A PFN the row needs: present, and read; anything else is a row that cannot run. */
static int present_pfn(struct record *rec, const char *page, uint64_t *pfn, const char *who)
{
	errno = 0;
	if (lab_pfn_read(page, pfn))
		return row_fail(rec, "reading the %s PFN from pagemap", who);
	if (!*pfn)
		return row_fail(rec, "the %s page is not present", who);
	return 0;
}

static int query(struct record *rec, int fd, uint32_t handle, uint64_t *pfn)
{
	int ret = pindma_query(fd, handle, 0, pfn);

	if (ret)
		return errno = -ret, row_fail(rec, "PINDMA_IOC_QUERY");
	if (!*pfn)
		return errno = 0, row_fail(rec, "PINDMA_IOC_QUERY reported PFN 0 for a pinned page");
	return 0;
}

static int child_report_ok(struct record *rec, const struct child_report *r)
{
	if (!r->pfn_errno)
		return 0;
	errno = r->pfn_errno;
	return row_fail(rec, "reading the child's PFN from pagemap");
}

static int dma(struct record *rec, int fd, unsigned long req, uint32_t handle, uint64_t off,
	       void *buf, uint64_t len, uint32_t *engine)
{
	int ret = pindma_dma(fd, req, handle, off, buf, len, engine);

	if (ret)
		return errno = -ret, row_fail(rec, "device %s", req == PINDMA_IOC_DMA_WRITE ?
					      "write" : "read");
	return 0;
}

/*
 * The memory: a base page, a 2 MiB THP or hugetlb page, or a page of MAP_SHARED anonymous memory;
 * *map and *maplen to unmap it.
 */
static char *get_memory(const struct row *r, struct record *rec, char **map, size_t *maplen)
{
	struct pindma_obs *o = &rec->pindma;
	int flags = (r->mem == MEM_SHARED ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS;
	char *p;

	*maplen = r->mem == MEM_THP ? 2 * HPAGE : r->mem == MEM_HUGETLB ? HPAGE : LAB_PAGE;
	if (r->mem == MEM_HUGETLB) {
		/* One huge page for the parent and one for the copy fork may make for the child. */
		if (lab_reserve_hugepages(2))
			return row_fail(rec, "reserving 2 free hugetlb pages"), NULL;
		flags |= MAP_HUGETLB;
	}
	*map = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (*map == MAP_FAILED)
		return row_fail(rec, "mmap"), NULL;
	p = *map;
	if (r->mem == MEM_THP) {
		p = (char *)(((uintptr_t)*map + HPAGE - 1) & ~(HPAGE - 1));
		if (lab_write_str("/sys/kernel/mm/transparent_hugepage/enabled", "madvise") ||
		    madvise(p, HPAGE, MADV_HUGEPAGE))
			return row_fail(rec, "MADV_HUGEPAGE"), NULL;
		memset(p, 0, HPAGE);
	}
	memset(p, 0, LAB_PAGE);
	o->thp = lab_page_flags(p) & (1ULL << KPF_THP);
	o->hugetlb = lab_page_flags(p) & (1ULL << KPF_HUGE);
	if (r->mem == MEM_THP && !o->thp)
		return errno = 0, row_fail(rec, "no THP was allocated for the range"), NULL;
	return p;
}

static int play(const struct row *r, const struct play_opts *opts, struct record *rec,
		char *page, size_t advise_len, int fd)
{
	struct pindma_obs *o = &rec->pindma;
	struct stage st = { .row = r, .page = page };
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	uint32_t handle = 0, repin = 0, eng = PINDMA_ENGINE_AUTO, used;
	char seen[OFF_DEVICE + TAG], wsbuf[48];
	uint64_t src, dst, count;
	struct child_report cr;
	int ret = -1, status, unpinned;
	long long irqs = -1;

	if (!strcmp(opts->engine, "cpu"))
		eng = PINDMA_ENGINE_CPU;
	else if (!strcmp(opts->engine, "edu"))
		eng = PINDMA_ENGINE_EDU;
	memcpy(page + OFF_PARENT, PREFORK, TAG);
	memcpy(page + OFF_DEVICE, PREFORK, TAG);
	errno = 0;
	if (r->dontfork && madvise(page, advise_len, MADV_DONTFORK))
		return row_fail(rec, "MADV_DONTFORK");
	if (r->dofork && madvise(page, advise_len, MADV_DOFORK))
		return row_fail(rec, "MADV_DOFORK");
	if (r->wipeonfork && madvise(page, advise_len, MADV_WIPEONFORK))
		return row_fail(rec, "MADV_WIPEONFORK");
	vma_flags(rec, page);
	if (r->pindma.mode) {
		ret = pindma_pin(fd, page, LAB_PAGE, r->pindma.mode, PINDMA_PIN_WRITE, &handle);
		if (ret)
			return errno = -ret, row_fail(rec, "pin");
		ret = -1;
		if (query(rec, fd, handle, &o->drv_before))
			goto out;
		/* The control: the device reaches the page the parent sees. */
		irqs = lab_edu_irqs();
		used = eng;
		if (dma(rec, fd, PINDMA_IOC_DMA_WRITE, handle, OFF_CONTROL, (void *)CONTROL, TAG,
			&used))
			goto out;
		o->control_moved = !memcmp(page + OFF_CONTROL, CONTROL, TAG);
	} else if (mlock(page, LAB_PAGE)) {
		return row_fail(rec, "mlock");
	}
	if (present_pfn(rec, page, &o->par_before, "parent's"))
		goto out;
	if (opts->why) {
		why_step(rec, STEP_BEFORE_FORK, o->drv_before, o->par_before, 0);
		why_fork_begin(rec);
	}
	if (lab_child_start(&child, child_main, &st)) {
		row_fail(rec, "fork");
		goto out;
	}
	if (lab_child_read(&child, &cr, sizeof(cr))) {
		row_fail(rec, "the child's report after the fork");
		goto out;
	}
	if (child_report_ok(rec, &cr))
		goto out;
	o->child_fork = cr.pfn;
	o->child_has_range = cr.has_range;
	/* MADV_WIPEONFORK gives the child the range with no page in it. */
	if (cr.has_range && !cr.pfn && !r->wipeonfork) {
		errno = 0;
		row_fail(rec, "the child maps the range but has no page there");
		goto out;
	}
	if (present_pfn(rec, page, &o->par_fork, "parent's"))
		goto out;
	if (r->child == CHILD_EXITS) {
		if (row_child_end(rec, &child, -1, CHILD_EXIT_CODE))
			goto out;
		snprintf(o->child_sees, sizeof(o->child_sees), "exited");
	}
	/* What the parent's write will find: after the fork, and once a child that exits is gone. */
	if (opts->why)
		why_step(rec, STEP_AFTER_FORK, o->drv_before, o->par_fork,
			 r->child == CHILD_EXITS ? 0 : o->child_fork);

	if (r->pindma.repin_ro) {
		/* Or pins it again, read-only: the unshare fault, if the page is shared. */
		ret = pindma_pin(fd, page, LAB_PAGE, r->pindma.mode, 0, &repin);
		if (ret) {
			errno = -ret;
			ret = row_fail(rec, "the read-only re-pin");
			goto out;
		}
		ret = -1;
		if (query(rec, fd, repin, &o->repin))
			goto out;
	} else {
		/* The parent writes: the copy-on-write fault, if the page is shared. */
		memcpy(page + OFF_PARENT, PARENT, TAG);
	}
	if (present_pfn(rec, page, &o->par_after, "parent's"))
		goto out;
	if (opts->why)
		why_step(rec, STEP_AFTER_WRITE, o->drv_before, o->par_after,
			 r->child == CHILD_EXITS ? 0 : o->child_fork);

	if (r->pindma.mode) {
		used = eng;
		if (dma(rec, fd, PINDMA_IOC_DMA_WRITE, handle, OFF_DEVICE, (void *)DEVICE, TAG,
			&used))
			goto out;
		o->engine = used;
		/* Where edu's last transfer went, by its own register: the page it wrote. */
		if (used == PINDMA_ENGINE_EDU && !lab_edu_dma_regs(&src, &dst, &count))
			o->edu_dst_pfn = dst >> 12;
		/* One read over both tags: the parent's write and the device's own. */
		if (dma(rec, fd, PINDMA_IOC_DMA_READ, handle, 0, seen, sizeof(seen), &used))
			goto out;
		o->edu_irqs = irqs < 0 ? -1 : lab_edu_irqs() - irqs;
		o->parent_write_seen = !memcmp(seen + OFF_PARENT, PARENT, TAG);
		o->device_reads_own = !memcmp(seen + OFF_DEVICE, DEVICE, TAG);
		o->device_write_seen = !memcmp(page + OFF_DEVICE, DEVICE, TAG);
		if (query(rec, fd, handle, &o->drv_after))
			goto out;
	}
	if (opts->why) {
		why_step(rec, STEP_AFTER_DEVICE, o->drv_after, o->par_after,
			 r->child == CHILD_EXITS ? 0 : o->child_fork);
		why_fork_end(rec, o->par_before, o->child_fork, o->par_after);
	}

	if (child.pid > 0) {
		if (lab_child_go(&child, 'r')) {
			row_fail(rec, "asking the child");
			goto out;
		}
		/* No report: the child died touching the range, which the status tells. */
		if (lab_child_read(&child, &cr, sizeof(cr)))
			cr.pfn_errno = -1;
		status = lab_child_reap(&child);
		if (status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) {
			snprintf(o->child_sees, sizeof(o->child_sees), "SIGSEGV");
		} else if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) ||
			   cr.pfn_errno == -1) {
			errno = 0;
			row_fail(rec, "the child %s%s", lab_wait_status(status, wsbuf, sizeof(wsbuf)),
				 cr.pfn_errno == -1 ? " without its report" : "");
			goto out;
		} else {
			if (child_report_ok(rec, &cr))
				goto out;
			o->child_after = cr.pfn;
			o->child_prefork = !memcmp(cr.at_parent, PREFORK, TAG);
			snprintf(o->child_sees, sizeof(o->child_sees), "%s",
				 classify(r->child == CHILD_READS_DEVICE ? cr.at_device :
					  cr.at_parent));
		}
	}
	ret = 0;
out:
	lab_child_end(&child);
	for (int i = 0; i < 2; i++) {
		uint32_t h = i ? repin : handle;

		if (!h)
			continue;
		unpinned = pindma_unpin(fd, h);
		if (unpinned && !ret) {
			errno = -unpinned;
			ret = row_fail(rec, "unpin");
		}
	}
	if (!r->pindma.mode)
		munlock(page, LAB_PAGE);
	return ret;
}

int play_pindma(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	size_t maplen;
	char *map = MAP_FAILED, *page;
	int fd = -1, ret = -1;

	snprintf(rec->pindma.child_sees, sizeof(rec->pindma.child_sees), "-");
	if (r->pindma.mode) {
		fd = pindma_open();
		if (fd < 0)
			return errno = -fd, row_fail(rec, "open /dev/pindma (is pindma.ko loaded?)");
	}
	page = get_memory(r, rec, &map, &maplen);
	if (page)
		ret = play(r, opts, rec, page,
			   r->mem == MEM_THP || r->mem == MEM_HUGETLB ? HPAGE : LAB_PAGE, fd);
	if (map != MAP_FAILED)
		munmap(map, maplen);
	if (fd >= 0)
		close(fd);
	return ret;
}
