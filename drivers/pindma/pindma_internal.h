/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of pindma share: the handle (pin.c makes and releases it,
 * main.c keeps the table of them), the DMA engines (dma.c, edu.c) and the
 * module-wide counters that PINDMA_IOC_INFO reports to CAP_SYS_ADMIN.
 */
#ifndef PINDMA_INTERNAL_H
#define PINDMA_INTERNAL_H

#include <linux/dma-direction.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/types.h>

#include "pindma.h"

/*
 * A range of user pages held for the device. Its fields never change once
 * it is published in the handle table; its lifetime is the kref (see main.c).
 */
struct pindma_handle {
	struct kref ref;
	u32 id;
	struct file *file;	/* owner: compared, never dereferenced */
	struct list_head node;	/* on the owner's list, under the table lock */
	struct mm_struct *mm;	/* mmgrab()bed, carries the pinned_vm charge */
	/* get_uid()ed, carries the locked_vm charge; NULL past it with CAP_IPC_LOCK */
	struct user_struct *user;
	unsigned long charged;	/* pages charged: a large folio's count them all */
	unsigned long npages;
	u32 mode;		/* PINDMA_MODE_*: how the pages are held */
	bool writable;
	struct page **pages;
};

/* pin.c */
struct pindma_handle *pindma_pin(struct file *file, u64 addr, u64 len,
				 u32 mode, bool writable);
void pindma_handle_release(struct kref *ref);

/* dma.c */
long pindma_dma(struct pindma_handle *h, struct pindma_dma *req,
		enum dma_data_direction dir, atomic64_t *edu_xfers);

/* edu.c */
bool pindma_edu_present(void);
int pindma_edu_copy(struct page *page, unsigned int off, void *buf,
		    unsigned int len, enum dma_data_direction dir,
		    atomic64_t *xfers);
int pindma_edu_register(void);
void pindma_edu_unregister(void);
/* The largest chunk one edu copy moves: one byte short of its 4 KiB buffer. */
#define PINDMA_EDU_MAX_XFER	4095

/* pagestate.c: the root-only debugfs file that reports a page's state, for the lab's "why" */
void pindma_pagestate_register(void);
void pindma_pagestate_unregister(void);

/* Module-wide counters, for PINDMA_IOC_INFO (CAP_SYS_ADMIN's). */
extern atomic64_t pindma_nr_handles;
extern atomic64_t pindma_nr_pages;
extern atomic64_t pindma_nr_edu_xfers;

#endif
