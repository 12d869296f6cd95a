// SPDX-License-Identifier: GPL-2.0
/*
 * The device's side of a handle: DMA requests between a user buffer and the
 * pinned pages, served by the edu device (edu.c) or by the CPU standing in
 * for a device.
 *
 * A request runs on a handle the caller holds a reference to, with no driver
 * lock held: another thread may unpin the handle meanwhile, and the pages stay
 * held until the reference is dropped. User memory is only touched between
 * chunks, through a kernel bounce buffer, never while an engine runs.
 */

#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pindma_internal.h"

static void pindma_cpu_copy(struct page *page, unsigned int off, void *buf,
			    unsigned int len, enum dma_data_direction dir)
{
	void *vaddr = kmap_local_page(page);

	if (dir == DMA_FROM_DEVICE) {
		memcpy(vaddr + off, buf, len);
		flush_dcache_page(page);
	} else {
		memcpy(buf, vaddr + off, len);
	}
	kunmap_local(vaddr);
}

static int pindma_dma_check(struct pindma_handle *h,
			    const struct pindma_dma *req,
			    enum dma_data_direction dir, u32 *engine)
{
	u64 end;

	if (check_add_overflow(req->offset, req->len, &end) ||
	    end > (u64)h->npages << PAGE_SHIFT)
		return -ERANGE;

	switch (req->engine) {
	case PINDMA_ENGINE_AUTO:
		*engine = pindma_edu_present() ? PINDMA_ENGINE_EDU :
						 PINDMA_ENGINE_CPU;
		break;
	case PINDMA_ENGINE_CPU:
		*engine = PINDMA_ENGINE_CPU;
		break;
	case PINDMA_ENGINE_EDU:
		if (!pindma_edu_present())
			return -ENODEV;
		*engine = PINDMA_ENGINE_EDU;
		break;
	default:
		return -EINVAL;
	}

	/* A read-only pin may hold the shared zero page or page-cache pages. */
	if (dir == DMA_FROM_DEVICE && !h->writable)
		return -EACCES;
	return 0;
}

/*
 * dir DMA_FROM_DEVICE: the device writes req->buf into the pinned pages
 * (PINDMA_IOC_DMA_WRITE); DMA_TO_DEVICE: it reads them into req->buf
 * (PINDMA_IOC_DMA_READ). Chunks never cross a page, as the pages need not be
 * contiguous. On success req->engine says which engine served. Edu transfers
 * are counted into *edu_xfers too (the file's count, see INFO).
 */
long pindma_dma(struct pindma_handle *h, struct pindma_dma *req,
		enum dma_data_direction dir, atomic64_t *edu_xfers)
{
	unsigned int off, len;
	void __user *ubuf;
	struct page *page;
	u64 pos, done;
	u32 engine;
	void *buf;
	long ret;

	ret = pindma_dma_check(h, req, dir, &engine);
	if (ret)
		return ret;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	for (done = 0; done < req->len; done += len) {
		pos = req->offset + done;
		page = h->pages[pos >> PAGE_SHIFT];
		off = offset_in_page(pos);
		len = min_t(u64, req->len - done, PAGE_SIZE - off);
		if (engine == PINDMA_ENGINE_EDU)
			len = min_t(unsigned int, len, PINDMA_EDU_MAX_XFER);
		ubuf = u64_to_user_ptr(req->buf + done);

		if (dir == DMA_FROM_DEVICE && copy_from_user(buf, ubuf, len)) {
			ret = -EFAULT;
			break;
		}
		if (engine == PINDMA_ENGINE_EDU)
			ret = pindma_edu_copy(page, off, buf, len, dir,
					      edu_xfers);
		else
			pindma_cpu_copy(page, off, buf, len, dir);
		if (ret)
			break;
		if (dir == DMA_TO_DEVICE && copy_to_user(ubuf, buf, len)) {
			ret = -EFAULT;
			break;
		}

		/* A large request on the edu engine takes minutes. */
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		cond_resched();
	}
	kfree(buf);

	if (!ret)
		req->engine = engine;
	return ret;
}
