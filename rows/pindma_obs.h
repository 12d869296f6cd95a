/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a pindma row observes (struct record's obs): pindma_rows.c, pindma_play.c, why_print.c
 * and rows_test read it.
 */
#ifndef ROWS_PINDMA_OBS_H
#define ROWS_PINDMA_OBS_H

#include "row.h"

struct pindma_obs {
	uint64_t drv_before, par_before;	/* before the fork */
	uint64_t par_fork, child_fork;		/* after the fork, before the write */
	uint64_t drv_after, par_after, child_after; /* after the parent's write (or re-pin) */
	uint64_t repin;		/* the page the parent's read-only re-pin holds (0: none) */
	bool control_moved;	/* before the fork the device wrote and read bytes the parent saw */
	bool device_write_seen;	/* the parent reads what the device wrote after the fork */
	bool parent_write_seen;	/* the device reads what the parent wrote after the fork */
	bool device_reads_own;	/* the device reads back what it wrote after the fork */
	bool child_has_range;	/* the child's maps cover the page */
	bool child_prefork;	/* the child reads the pre-fork bytes where the parent wrote */
	char child_sees[24];	/* what the child read at the end: pre-fork, parent, device, zero,
				 * other, SIGSEGV, exited */
	char vma_flags[12];	/* which of dc, sh, wf the parent's VmFlags (smaps) had for the
				 * range before the fork: what decides what fork gives the child */
	uint32_t engine;	/* PINDMA_ENGINE_* that served the DMA, by the driver's reply */
	int64_t edu_irqs;	/* edu's interrupts over the row's DMA, by the kernel's count (one
				 * per transfer; -1: none counted, no edu) */
	uint64_t edu_dst_pfn;	/* edu engine: after the device's write, the page of edu's DMA
				 * destination register (read from its BAR) */
	bool thp;		/* the page was part of a PMD-mapped THP when pinned (kpageflags,
				 * smaps' AnonHugePages) */
	bool hugetlb;		/* ... of a hugetlb page */
};

/*
 * Shared by the families whose device is pindma (pindma_play.c, child.c), in pindma_rows.c: a PFN
 * a row needs, present and read from pagemap; the driver's PFN of a held page; whether what the
 * device moved proves anything (NULL, or why not, in why).
 */
int pindma_row_pfn(struct record *rec, const char *page, uint64_t *pfn, const char *who);
int pindma_row_query(struct record *rec, int fd, uint32_t handle, uint64_t *pfn);
const char *pindma_device_unproven(bool control_moved, bool device_reads_own, uint64_t drv_after,
				   uint64_t par_after);

#endif
