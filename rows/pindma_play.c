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
#include "pindma_obs.h"
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

/* Which of the VmFlags deciding what fork gives the child the range has, by the kernel's smaps. */
static void vma_flags(struct record *rec, const char *page)
{
	static const char *const decide[] = { "dc", "sh", "wf" };
	char *o = ROW_OBS(rec, struct pindma_obs)->vma_flags;
	size_t n = sizeof(((struct pindma_obs *)0)->vma_flags);

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
	struct pindma_obs *o = ROW_OBS(rec, struct pindma_obs);
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
	/* A THP the range maps with one PMD: kpageflags stays THP after a split, smaps does not. */
	o->thp = (lab_page_flags(p) & (1ULL << KPF_THP)) && lab_smaps_kb(p, "AnonHugePages") >= 2048;
	o->hugetlb = lab_page_flags(p) & (1ULL << KPF_HUGE);
	if (r->mem == MEM_THP && !o->thp)
		return errno = 0, row_fail(rec, "no THP was allocated for the range"), NULL;
	return p;
}

/* One play of a pin row: what it holds, its child, and where it is. */
struct play {
	const struct row *r;
	const struct play_opts *opts;
	struct record *rec;
	struct pindma_obs *o;
	char *page;
	int fd;
	uint32_t handle, repin, eng;
	long long irqs;		/* edu's interrupts before the control, by the kernel's count */
	struct stage st;
	struct lab_child child;
};

/* Before the fork: the stage (the madvise calls), then the pin and the control, or the mlock. */
static int before_fork(struct play *p, size_t advise_len)
{
	const struct row *r = p->r;
	struct record *rec = p->rec;
	uint32_t used = p->eng;
	int ret;

	memcpy(p->page + OFF_PARENT, PREFORK, TAG);
	memcpy(p->page + OFF_DEVICE, PREFORK, TAG);
	errno = 0;
	if (r->dontfork && madvise(p->page, advise_len, MADV_DONTFORK))
		return row_fail(rec, "MADV_DONTFORK");
	if (r->dofork && madvise(p->page, advise_len, MADV_DOFORK))
		return row_fail(rec, "MADV_DOFORK");
	if (r->wipeonfork && madvise(p->page, advise_len, MADV_WIPEONFORK))
		return row_fail(rec, "MADV_WIPEONFORK");
	vma_flags(rec, p->page);
	if (!r->pindma.mode)
		return mlock(p->page, LAB_PAGE) ? row_fail(rec, "mlock") : 0;
	ret = pindma_pin(p->fd, p->page, LAB_PAGE, r->pindma.mode, PINDMA_PIN_WRITE, &p->handle);
	if (ret)
		return errno = -ret, row_fail(rec, "pin");
	if (pindma_row_query(rec, p->fd, p->handle, &p->o->drv_before))
		return -1;
	/* The control: the device reaches the page the parent sees. */
	p->irqs = lab_edu_irqs();
	if (dma(rec, p->fd, PINDMA_IOC_DMA_WRITE, p->handle, OFF_CONTROL, (void *)CONTROL, TAG,
		&used))
		return -1;
	p->o->control_moved = !memcmp(p->page + OFF_CONTROL, CONTROL, TAG);
	return 0;
}

/* The fork: the child's first look, the parent's page after it, and a child that exits gone. */
static int fork_child(struct play *p)
{
	const struct row *r = p->r;
	struct record *rec = p->rec;
	struct pindma_obs *o = p->o;
	struct child_report cr;

	if (pindma_row_pfn(rec, p->page, &o->par_before, "parent's"))
		return -1;
	if (p->opts->why) {
		why_step(rec, STEP_BEFORE_FORK, o->drv_before, o->par_before, 0);
		why_fork_begin(rec);
	}
	if (lab_child_start(&p->child, child_main, &p->st))
		return row_fail(rec, "fork");
	if (lab_child_read(&p->child, &cr, sizeof(cr)))
		return row_fail(rec, "the child's report after the fork");
	if (child_report_ok(rec, &cr))
		return -1;
	o->child_fork = cr.pfn;
	o->child_has_range = cr.has_range;
	/*
	 * MADV_WIPEONFORK gives the child the range with no page in it; fork copies no page table of
	 * a shared mapping (the child's first touch maps the page). Otherwise fork copied the PTE.
	 */
	if (cr.has_range && !cr.pfn && !r->wipeonfork && r->mem != MEM_SHARED) {
		errno = 0;
		return row_fail(rec, "the child maps the range but has no page there");
	}
	if (pindma_row_pfn(rec, p->page, &o->par_fork, "parent's"))
		return -1;
	if (r->child == CHILD_EXITS) {
		if (row_child_end(rec, &p->child, -1, CHILD_EXIT_CODE))
			return -1;
		snprintf(o->child_sees, sizeof(o->child_sees), "exited");
	}
	/* What the parent's write will find: after the fork, and once a child that exits is gone. */
	if (p->opts->why)
		why_step(rec, STEP_AFTER_FORK, o->drv_before, o->par_fork,
			 r->child == CHILD_EXITS ? 0 : o->child_fork);
	return 0;
}

/* The parent writes (the copy-on-write fault, if the page is shared), or pins it again. */
static int parent_acts(struct play *p)
{
	const struct row *r = p->r;
	struct record *rec = p->rec;
	struct pindma_obs *o = p->o;
	int ret;

	if (r->pindma.repin_ro) {
		/* A read-only pin: the unshare fault, if the page is shared. */
		ret = pindma_pin(p->fd, p->page, LAB_PAGE, r->pindma.mode, 0, &p->repin);
		if (ret)
			return errno = -ret, row_fail(rec, "the read-only re-pin");
		if (pindma_row_query(rec, p->fd, p->repin, &o->repin))
			return -1;
	} else {
		memcpy(p->page + OFF_PARENT, PARENT, TAG);
	}
	if (pindma_row_pfn(rec, p->page, &o->par_after, "parent's"))
		return -1;
	if (p->opts->why)
		why_step(rec, STEP_AFTER_WRITE, o->drv_before, o->par_after,
			 r->child == CHILD_EXITS ? 0 : o->child_fork);
	return 0;
}

/* The device writes, then reads both tags back: whose page does it reach now? */
static int device_acts(struct play *p)
{
	struct record *rec = p->rec;
	struct pindma_obs *o = p->o;
	char seen[OFF_DEVICE + TAG];
	uint64_t src, dst, count;
	uint32_t used = p->eng;

	if (dma(rec, p->fd, PINDMA_IOC_DMA_WRITE, p->handle, OFF_DEVICE, (void *)DEVICE, TAG,
		&used))
		return -1;
	o->engine = used;
	/* Where edu's last transfer went, by its own register: the page it wrote. */
	if (used == PINDMA_ENGINE_EDU && !lab_edu_dma_regs(&src, &dst, &count))
		o->edu_dst_pfn = dst >> 12;
	/* One read over both tags: the parent's write and the device's own. */
	if (dma(rec, p->fd, PINDMA_IOC_DMA_READ, p->handle, 0, seen, sizeof(seen), &used))
		return -1;
	o->edu_irqs = p->irqs < 0 ? -1 : lab_edu_irqs() - p->irqs;
	o->parent_write_seen = !memcmp(seen + OFF_PARENT, PARENT, TAG);
	o->device_reads_own = !memcmp(seen + OFF_DEVICE, DEVICE, TAG);
	o->device_write_seen = !memcmp(p->page + OFF_DEVICE, DEVICE, TAG);
	return pindma_row_query(rec, p->fd, p->handle, &o->drv_after);
}

/* The child, asked at the end what it reads where the parent (or the device) wrote. */
static int child_ends(struct play *p)
{
	const struct row *r = p->r;
	struct record *rec = p->rec;
	struct pindma_obs *o = p->o;
	struct child_report cr;
	char wsbuf[48];
	int status;

	if (lab_child_go(&p->child, 'r'))
		return row_fail(rec, "asking the child");
	/* No report: the child died touching the range, which the status tells. */
	if (lab_child_read(&p->child, &cr, sizeof(cr)))
		cr.pfn_errno = -1;
	status = lab_child_reap(&p->child);
	if (status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) {
		snprintf(o->child_sees, sizeof(o->child_sees), "SIGSEGV");
		return 0;
	}
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) || cr.pfn_errno == -1) {
		errno = 0;
		return row_fail(rec, "the child %s%s", lab_wait_status(status, wsbuf, sizeof(wsbuf)),
				cr.pfn_errno == -1 ? " without its report" : "");
	}
	if (child_report_ok(rec, &cr))
		return -1;
	o->child_after = cr.pfn;
	o->child_prefork = !memcmp(cr.at_parent, PREFORK, TAG);
	snprintf(o->child_sees, sizeof(o->child_sees), "%s",
		 classify(r->child == CHILD_READS_DEVICE ? cr.at_device : cr.at_parent));
	return 0;
}

static int play(const struct row *r, const struct play_opts *opts, struct record *rec,
		char *page, size_t advise_len, int fd)
{
	struct play p = {
		.r = r, .opts = opts, .rec = rec, .o = ROW_OBS(rec, struct pindma_obs), .page = page, .fd = fd,
		.eng = !strcmp(opts->engine, "cpu") ? PINDMA_ENGINE_CPU :
		       !strcmp(opts->engine, "edu") ? PINDMA_ENGINE_EDU : PINDMA_ENGINE_AUTO,
		.irqs = -1, .st = { .row = r, .page = page },
		.child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } },
	};
	int ret = -1, unpinned;

	if (before_fork(&p, advise_len) || fork_child(&p) || parent_acts(&p))
		goto out;
	if (r->pindma.mode && device_acts(&p))
		goto out;
	if (opts->why) {
		why_step(rec, STEP_AFTER_DEVICE, p.o->drv_after, p.o->par_after,
			 r->child == CHILD_EXITS ? 0 : p.o->child_fork);
		why_fork_end(rec, p.o->par_before, p.o->child_fork, p.o->par_after);
	}
	if (p.child.pid > 0 && child_ends(&p))
		goto out;
	ret = 0;
out:
	lab_child_end(&p.child);
	for (int i = 0; i < 2; i++) {
		uint32_t h = i ? p.repin : p.handle;

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
	struct pindma_obs *o = ROW_OBS(rec, struct pindma_obs);

	snprintf(o->child_sees, sizeof(o->child_sees), "-");
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
