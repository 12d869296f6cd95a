// SPDX-License-Identifier: GPL-2.0
/*
 * pindma: hold user pages for device DMA, the way RDMA and VFIO do, and let a
 * device (the QEMU edu PCI device) or the CPU standing in for one move bytes
 * into and out of them. The ABI is uapi/pindma.h.
 *
 * Locking and lifetimes:
 *
 * - pindma_handles (an xarray) maps handle ids to struct pindma_handle. Its
 *   spinlock also protects every open file's list of handles, so that "in the
 *   table" and "on its file's list" change together: PIN publishes, UNPIN and
 *   release remove, each in one critical section. UNPIN checks ownership and
 *   erases under that lock, so of two racing UNPINs of one handle exactly one
 *   wins and the other sees ENOENT.
 *
 * - A handle's fields never change once it is published; its lifetime is a
 *   kref. The table owns one reference, and each ioctl that uses a handle takes
 *   another under the table lock. DMA therefore runs without the table lock,
 *   for as long as it takes, while another thread may unpin the handle: the
 *   pages stay held until the last user drops its reference, and only then are
 *   they released and the RLIMIT_MEMLOCK charge returned. Every reference is
 *   dropped in process context with no lock held, as releasing pages sleeps.
 *
 * - mmap_read_lock is taken only by PIN, around the VMA checks and GUP, with
 *   none of the driver's locks held.
 *
 * - The mm a handle was pinned in is kept with mmgrab() rather than mmget(): it
 *   only needs to outlive the handle so the pinned_vm charge can be returned,
 *   and must not keep the address space itself alive after the process exits.
 *
 * - The edu device has one register set, one 4 KiB internal buffer and one
 *   coherent bounce page, so whole edu operations (two transfers each) are
 *   serialized by pindma_edu_lock, which also guards the published device
 *   pointer: remove and a timed-out transfer unpublish it under the mutex,
 *   so no transfer runs on a device that is going away. A transfer takes
 *   ~100 ms, so this is a mutex, taken per chunk rather than per request so
 *   that one large request does not starve the others, and it is never held
 *   while touching user memory (a fault there could block for as long as
 *   userfaultfd likes). The edu mutex and the table lock never nest.
 */

#include <linux/capability.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/iopoll.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "pindma.h"

#define EDU_VENDOR_ID		0x1234
#define EDU_DEVICE_ID		0x11e8

#define EDU_REG_ID		0x00
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98

/* Set to start; the device clears it when the transfer is done. */
#define EDU_DMA_START		BIT(0)
#define EDU_DMA_TO_RAM		BIT(1)	/* clear: RAM to the device's buffer */

#define EDU_BUF_ADDR		0x40000
#define EDU_BUF_SIZE		4096
/*
 * QEMU 7.2's edu aborts the whole VM on a transfer of 0 bytes or one that
 * reaches the end of its buffer, so a full page takes two transfers.
 */
#define EDU_MAX_XFER		(EDU_BUF_SIZE - 1)
#define EDU_POLL_US		2000
#define EDU_TIMEOUT_US		(5 * USEC_PER_SEC)

struct pindma_handle {
	struct kref ref;
	u32 id;
	struct file *file;	/* owner: compared, never dereferenced */
	struct list_head node;	/* on the owner's list, under the table lock */
	struct mm_struct *mm;	/* mmgrab()bed, carries the pinned_vm charge */
	unsigned long npages;
	u32 mode;
	bool writable;
	struct page **pages;
};

struct pindma_file {
	struct list_head handles;
};

struct pindma_edu {
	struct pci_dev *pdev;
	void __iomem *regs;
	void *bounce;		/* coherent page: RAM end of the transfers */
	dma_addr_t bounce_dma;
};

static DEFINE_XARRAY_ALLOC1(pindma_handles);
static u32 pindma_next_id;

static DEFINE_MUTEX(pindma_edu_lock);
/*
 * Written under pindma_edu_lock; read locklessly only as a hint (INFO, engine
 * choice), which the edu path re-checks under the mutex.
 */
static struct pindma_edu *pindma_edu;

static atomic64_t pindma_nr_handles;
static atomic64_t pindma_nr_pages;
static atomic64_t pindma_nr_edu_xfers;

static void pindma_put_pages(struct pindma_handle *h, unsigned long n,
			     bool dirty)
{
	unsigned long i;

	if (h->mode == PINDMA_MODE_PIN_LONGTERM) {
		unpin_user_pages_dirty_lock(h->pages, n, dirty);
		return;
	}
	for (i = 0; i < n; i++) {
		if (dirty)
			set_page_dirty_lock(h->pages[i]);
		put_page(h->pages[i]);
	}
}

/* The charge must go before mmdrop(): that may free the mm it is kept in. */
static void pindma_handle_free(struct pindma_handle *h)
{
	atomic64_sub(h->npages, &h->mm->pinned_vm);
	mmdrop(h->mm);
	kvfree(h->pages);
	kfree(h);
}

static void pindma_handle_release(struct kref *ref)
{
	struct pindma_handle *h = container_of(ref, struct pindma_handle, ref);

	/* The device may have written any page of a writable pin. */
	pindma_put_pages(h, h->npages, h->writable);
	atomic64_sub(h->npages, &pindma_nr_pages);
	atomic64_dec(&pindma_nr_handles);
	pindma_handle_free(h);
}

static int pindma_check_owner(struct pindma_handle *h, struct file *file)
{
	lockdep_assert_held(&pindma_handles.xa_lock);

	if (!h || h->file != file)
		return -ENOENT;
	/* An fd inherited across fork() must not reach the parent's pages. */
	if (h->mm != current->mm)
		return -EPERM;
	return 0;
}

static struct pindma_handle *pindma_get(struct file *file, u32 id)
{
	struct pindma_handle *h;
	int ret;

	xa_lock(&pindma_handles);
	h = xa_load(&pindma_handles, id);
	ret = pindma_check_owner(h, file);
	if (!ret)
		kref_get(&h->ref);
	xa_unlock(&pindma_handles);

	return ret ? ERR_PTR(ret) : h;
}

static void pindma_put(struct pindma_handle *h)
{
	kref_put(&h->ref, pindma_handle_release);
}

/*
 * GUP would report most of these as a bare EFAULT, after faulting in a prefix
 * of the range; checking first gives the caller a precise errno and pins
 * nothing.
 */
static int pindma_check_vmas(struct mm_struct *mm, unsigned long start,
			     unsigned long end, bool write)
{
	struct vm_area_struct *vma;
	unsigned long addr = start;

	/* Not mmap_assert_locked(): with DEBUG_VM it calls dump_mm(), not exported. */
	lockdep_assert_held(&mm->mmap_lock);

	while (addr < end) {
		vma = vma_lookup(mm, addr);
		if (!vma)
			return -EFAULT;
		if (vma->vm_flags & (VM_IO | VM_PFNMAP))
			return -EOPNOTSUPP;
		if (write && !(vma->vm_flags & VM_WRITE))
			return -EACCES;
		addr = vma->vm_end;
	}
	return 0;
}

/* GUP may take fewer pages than asked for; *pinned says how many are held. */
static int pindma_pin_pages(struct pindma_handle *h, unsigned long addr,
			    unsigned long *pinned)
{
	unsigned int gup_flags = h->writable ? FOLL_WRITE : 0;
	unsigned long start, nr;
	struct page **pages;
	long ret;

	while (*pinned < h->npages) {
		start = addr + (*pinned << PAGE_SHIFT);
		nr = h->npages - *pinned;
		pages = h->pages + *pinned;

		if (h->mode == PINDMA_MODE_GUP)
			ret = get_user_pages(start, nr, gup_flags | FOLL_GET,
					     pages, NULL);
		else
			ret = pin_user_pages(start, nr,
					     gup_flags | FOLL_LONGTERM,
					     pages, NULL);
		if (ret <= 0)
			return ret ? ret : -EFAULT;
		*pinned += ret;
	}
	return 0;
}

static long pindma_ioctl_pin(struct file *file, struct pindma_pin __user *argp)
{
	struct pindma_file *pf = file->private_data;
	struct mm_struct *mm = current->mm;
	unsigned long lock_limit, new_pinned, pinned = 0;
	struct pindma_handle *h;
	struct pindma_pin req;
	u64 end, npages;
	long ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.mode != PINDMA_MODE_GUP &&
	    req.mode != PINDMA_MODE_PIN_LONGTERM)
		return -EINVAL;
	if (req.flags & ~PINDMA_PIN_FLAGS)
		return -EINVAL;
	if (!req.len || !PAGE_ALIGNED(req.addr))
		return -EINVAL;
	if (check_add_overflow(req.addr, req.len, &end) || end > TASK_SIZE)
		return -EOVERFLOW;
	npages = (PAGE_ALIGN(end) - req.addr) >> PAGE_SHIFT;
	if (npages > PINDMA_MAX_PAGES)
		return -E2BIG;

	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	h->pages = kvcalloc(npages, sizeof(*h->pages), GFP_KERNEL_ACCOUNT);
	if (!h->pages) {
		ret = -ENOMEM;
		goto free_handle;
	}
	h->file = file;
	h->mm = mm;
	h->npages = npages;
	h->mode = req.mode;
	h->writable = req.flags & PINDMA_PIN_WRITE;

	/*
	 * Charged like ib_umem_get(): always counted, so that the charge can be
	 * returned unconditionally, and capable() is asked only when over the
	 * limit, so that staying within it does not log a capability use.
	 */
	lock_limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	new_pinned = atomic64_add_return(npages, &mm->pinned_vm);
	if (new_pinned > lock_limit && !capable(CAP_IPC_LOCK)) {
		ret = -ENOMEM;
		goto uncharge;
	}
	mmgrab(mm);

	/* One read lock over the check and GUP: the VMAs stay as checked. */
	mmap_read_lock(mm);
	ret = pindma_check_vmas(mm, req.addr, req.addr + (npages << PAGE_SHIFT),
				h->writable);
	if (!ret)
		ret = pindma_pin_pages(h, req.addr, &pinned);
	mmap_read_unlock(mm);
	if (ret) {
		pindma_put_pages(h, pinned, false);
		pindma_handle_free(h);
		return ret;
	}

	kref_init(&h->ref);
	atomic64_inc(&pindma_nr_handles);
	atomic64_add(npages, &pindma_nr_pages);

	/*
	 * Reserve the id and publish the handle only once the caller has it, so
	 * that a failed copy-out leaves nothing another thread could have used.
	 */
	ret = xa_alloc_cyclic(&pindma_handles, &h->id, NULL,
			      XA_LIMIT(1, U32_MAX), &pindma_next_id,
			      GFP_KERNEL);
	if (ret < 0)
		goto put;
	req.handle = h->id;
	req.npages = npages;
	if (copy_to_user(argp, &req, sizeof(req))) {
		ret = -EFAULT;
		goto release_id;
	}

	xa_lock(&pindma_handles);
	ret = xa_err(__xa_store(&pindma_handles, h->id, h, GFP_KERNEL));
	if (!ret)
		list_add(&h->node, &pf->handles);
	xa_unlock(&pindma_handles);
	if (ret)
		goto release_id;
	return 0;

release_id:
	xa_erase(&pindma_handles, h->id);
put:
	pindma_put(h);
	return ret;

uncharge:
	atomic64_sub(npages, &mm->pinned_vm);
	kvfree(h->pages);
free_handle:
	kfree(h);
	return ret;
}

static long pindma_ioctl_unpin(struct file *file, u32 __user *argp)
{
	struct pindma_handle *h;
	u32 id;
	int ret;

	if (get_user(id, argp))
		return -EFAULT;

	xa_lock(&pindma_handles);
	h = xa_load(&pindma_handles, id);
	ret = pindma_check_owner(h, file);
	if (!ret) {
		__xa_erase(&pindma_handles, id);
		list_del(&h->node);
	}
	xa_unlock(&pindma_handles);
	if (ret)
		return ret;

	pindma_put(h);
	return 0;
}

static long pindma_ioctl_query(struct file *file,
			       struct pindma_query __user *argp)
{
	struct pindma_handle *h;
	struct pindma_query req;
	long ret = 0;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	h = pindma_get(file, req.handle);
	if (IS_ERR(h))
		return PTR_ERR(h);
	if (req.index < h->npages)
		req.pfn = page_to_pfn(h->pages[req.index]);
	else
		ret = -ERANGE;
	pindma_put(h);

	if (!ret && copy_to_user(argp, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/*
 * One edu transfer; the caller keeps src and dst within the device's limits
 * (see EDU_MAX_XFER).
 */
static int pindma_edu_xfer(struct pindma_edu *edu, u64 src, u64 dst, u32 len,
			   u32 dir)
{
	u32 cmd;
	int ret;

	lockdep_assert_held(&pindma_edu_lock);

	writeq(src, edu->regs + EDU_REG_DMA_SRC);
	writeq(dst, edu->regs + EDU_REG_DMA_DST);
	writeq(len, edu->regs + EDU_REG_DMA_COUNT);
	/* No EDU_DMA_IRQ: polling keeps the driver free of interrupt setup. */
	writel(EDU_DMA_START | dir, edu->regs + EDU_REG_DMA_CMD);
	ret = readl_poll_timeout(edu->regs + EDU_REG_DMA_CMD, cmd,
				 !(cmd & EDU_DMA_START), EDU_POLL_US,
				 EDU_TIMEOUT_US);
	if (ret) {
		/*
		 * The transfer may still happen later, into a page we are about
		 * to give back, and the device ignores new commands meanwhile:
		 * cut it off the bus and stop using it.
		 */
		pci_clear_master(edu->pdev);
		WRITE_ONCE(pindma_edu, NULL);
		dev_err(&edu->pdev->dev,
			"DMA did not complete, device no longer used\n");
		return ret;
	}
	atomic64_inc(&pindma_nr_edu_xfers);
	return 0;
}

/* Transfer between the edu buffer and part of a pinned page. */
static int pindma_edu_page_xfer(struct pindma_edu *edu, struct page *page,
				unsigned int off, unsigned int len,
				bool to_page)
{
	enum dma_data_direction dir = to_page ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	struct device *dev = &edu->pdev->dev;
	dma_addr_t addr;
	int ret;

	/*
	 * Map only the bytes moved: if the mapping is bounced (swiotlb), a
	 * whole-page DMA_FROM_DEVICE unmap would copy back over the rest of the
	 * page and undo whatever the CPU wrote there meanwhile.
	 */
	addr = dma_map_page(dev, page, off, len, dir);
	if (dma_mapping_error(dev, addr))
		return -ENOMEM;
	if (to_page)
		ret = pindma_edu_xfer(edu, EDU_BUF_ADDR, addr, len,
				      EDU_DMA_TO_RAM);
	else
		ret = pindma_edu_xfer(edu, addr, EDU_BUF_ADDR, len, 0);
	dma_unmap_page(dev, addr, len, dir);
	return ret;
}

/*
 * The edu buffer can only be filled by DMA, so each direction takes two
 * transfers, with the coherent bounce page as the kernel's end.
 */
static int pindma_edu_copy(struct page *page, unsigned int off, void *buf,
			   unsigned int len, bool to_page)
{
	struct pindma_edu *edu;
	int ret;

	if (mutex_lock_killable(&pindma_edu_lock))
		return -EINTR;
	edu = pindma_edu;
	if (!edu) {
		ret = -ENODEV;
		goto unlock;
	}

	if (to_page) {
		memcpy(edu->bounce, buf, len);
		ret = pindma_edu_xfer(edu, edu->bounce_dma, EDU_BUF_ADDR,
				      len, 0);
		if (!ret)
			ret = pindma_edu_page_xfer(edu, page, off, len, true);
	} else {
		ret = pindma_edu_page_xfer(edu, page, off, len, false);
		if (!ret)
			ret = pindma_edu_xfer(edu, EDU_BUF_ADDR,
					      edu->bounce_dma, len,
					      EDU_DMA_TO_RAM);
		if (!ret)
			memcpy(buf, edu->bounce, len);
	}
unlock:
	mutex_unlock(&pindma_edu_lock);
	return ret;
}

static void pindma_cpu_copy(struct page *page, unsigned int off, void *buf,
			    unsigned int len, bool to_page)
{
	void *vaddr = kmap_local_page(page);

	if (to_page) {
		memcpy(vaddr + off, buf, len);
		flush_dcache_page(page);
	} else {
		memcpy(buf, vaddr + off, len);
	}
	kunmap_local(vaddr);
}

static int pindma_dma_check(struct pindma_handle *h,
			    const struct pindma_dma *req, bool to_pages,
			    u32 *engine)
{
	u64 end;

	if (check_add_overflow(req->offset, req->len, &end) ||
	    end > (u64)h->npages << PAGE_SHIFT)
		return -ERANGE;

	switch (req->engine) {
	case PINDMA_ENGINE_AUTO:
		*engine = READ_ONCE(pindma_edu) ? PINDMA_ENGINE_EDU :
						  PINDMA_ENGINE_CPU;
		break;
	case PINDMA_ENGINE_CPU:
		*engine = PINDMA_ENGINE_CPU;
		break;
	case PINDMA_ENGINE_EDU:
		if (!READ_ONCE(pindma_edu))
			return -ENODEV;
		*engine = PINDMA_ENGINE_EDU;
		break;
	default:
		return -EINVAL;
	}

	/* A read-only pin may hold the shared zero page or page-cache pages. */
	if (to_pages && !h->writable)
		return -EACCES;
	return 0;
}

/*
 * to_pages: DMA_WRITE, user buffer to the pinned pages; else DMA_READ.
 * Chunks never cross a page, as the pages need not be contiguous, and go
 * through a kernel bounce buffer so that no user memory is touched while the
 * engine runs.
 */
static long pindma_ioctl_dma(struct file *file, struct pindma_dma __user *argp,
			     bool to_pages)
{
	struct pindma_handle *h;
	struct pindma_dma req;
	unsigned int off, len;
	void __user *ubuf;
	struct page *page;
	u64 pos, done;
	u32 engine;
	void *buf;
	long ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (!req.len)
		return -EINVAL;
	h = pindma_get(file, req.handle);
	if (IS_ERR(h))
		return PTR_ERR(h);
	ret = pindma_dma_check(h, &req, to_pages, &engine);
	if (ret)
		goto put;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf) {
		ret = -ENOMEM;
		goto put;
	}

	for (done = 0; done < req.len; done += len) {
		pos = req.offset + done;
		page = h->pages[pos >> PAGE_SHIFT];
		off = offset_in_page(pos);
		len = min_t(u64, req.len - done, PAGE_SIZE - off);
		if (engine == PINDMA_ENGINE_EDU)
			len = min_t(unsigned int, len, EDU_MAX_XFER);
		ubuf = u64_to_user_ptr(req.buf + done);

		if (to_pages && copy_from_user(buf, ubuf, len)) {
			ret = -EFAULT;
			break;
		}
		if (engine == PINDMA_ENGINE_EDU)
			ret = pindma_edu_copy(page, off, buf, len, to_pages);
		else
			pindma_cpu_copy(page, off, buf, len, to_pages);
		if (ret)
			break;
		if (!to_pages && copy_to_user(ubuf, buf, len)) {
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

	if (!ret) {
		req.engine = engine;
		if (copy_to_user(argp, &req, sizeof(req)))
			ret = -EFAULT;
	}
put:
	pindma_put(h);
	return ret;
}

static long pindma_ioctl_info(struct pindma_info __user *argp)
{
	struct pindma_info info = {
		.edu_present = !!READ_ONCE(pindma_edu),
		.max_pages = PINDMA_MAX_PAGES,
		.handles = atomic64_read(&pindma_nr_handles),
		.pages_held = atomic64_read(&pindma_nr_pages),
		.edu_transfers = atomic64_read(&pindma_nr_edu_xfers),
	};

	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

static long pindma_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case PINDMA_IOC_PIN:
		return pindma_ioctl_pin(file, argp);
	case PINDMA_IOC_UNPIN:
		return pindma_ioctl_unpin(file, argp);
	case PINDMA_IOC_DMA_WRITE:
		return pindma_ioctl_dma(file, argp, true);
	case PINDMA_IOC_DMA_READ:
		return pindma_ioctl_dma(file, argp, false);
	case PINDMA_IOC_QUERY:
		return pindma_ioctl_query(file, argp);
	case PINDMA_IOC_INFO:
		return pindma_ioctl_info(argp);
	default:
		return -ENOTTY;
	}
}

static int pindma_open(struct inode *inode, struct file *file)
{
	struct pindma_file *pf;

	pf = kzalloc(sizeof(*pf), GFP_KERNEL);
	if (!pf)
		return -ENOMEM;
	INIT_LIST_HEAD(&pf->handles);
	file->private_data = pf;
	return 0;
}

static int pindma_release(struct inode *inode, struct file *file)
{
	struct pindma_file *pf = file->private_data;
	struct pindma_handle *h, *tmp;

	xa_lock(&pindma_handles);
	list_for_each_entry(h, &pf->handles, node)
		__xa_erase(&pindma_handles, h->id);
	xa_unlock(&pindma_handles);

	/*
	 * Out of the table, the handles are reachable only through this list,
	 * and no ioctl can be running on a file being released.
	 */
	list_for_each_entry_safe(h, tmp, &pf->handles, node)
		pindma_put(h);
	kfree(pf);
	return 0;
}

/*
 * Pins live only while their file is open (release unpins them all), and
 * .owner makes every open file hold a module reference, so the module cannot
 * be unloaded while it holds any page.
 */
static const struct file_operations pindma_fops = {
	.owner = THIS_MODULE,
	.open = pindma_open,
	.release = pindma_release,
	.unlocked_ioctl = pindma_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/*
 * World-accessible on purpose: as with ib_uverbs, anyone may pin their own
 * memory, within their own RLIMIT_MEMLOCK, and handles are private to the file
 * and mm that made them.
 */
static struct miscdevice pindma_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pindma",
	.fops = &pindma_fops,
	.mode = 0666,
};

static int pindma_edu_probe(struct pci_dev *pdev,
			    const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	struct pindma_edu *edu;
	bool published = false;
	int ret;

	edu = devm_kzalloc(dev, sizeof(*edu), GFP_KERNEL);
	if (!edu)
		return -ENOMEM;
	edu->pdev = pdev;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(0), KBUILD_MODNAME);
	if (ret)
		return ret;
	edu->regs = pcim_iomap_table(pdev)[0];

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	edu->bounce = dmam_alloc_coherent(dev, PAGE_SIZE, &edu->bounce_dma,
					  GFP_KERNEL);
	if (!edu->bounce)
		return -ENOMEM;
	pci_set_master(pdev);
	pci_set_drvdata(pdev, edu);

	dev_info(dev, "edu id %#010x\n", readl(edu->regs + EDU_REG_ID));

	/* One device buffer is all the ioctl path knows how to share. */
	mutex_lock(&pindma_edu_lock);
	if (!pindma_edu) {
		WRITE_ONCE(pindma_edu, edu);
		published = true;
	}
	mutex_unlock(&pindma_edu_lock);
	if (!published) {
		dev_info(dev, "another edu is in use, ignoring this one\n");
		return -ENODEV;
	}
	return 0;
}

static void pindma_edu_remove(struct pci_dev *pdev)
{
	struct pindma_edu *edu = pci_get_drvdata(pdev);

	/* A timed-out device was unpublished already. */
	mutex_lock(&pindma_edu_lock);
	if (pindma_edu == edu)
		WRITE_ONCE(pindma_edu, NULL);
	mutex_unlock(&pindma_edu_lock);
}

static const struct pci_device_id pindma_edu_ids[] = {
	{ PCI_DEVICE(EDU_VENDOR_ID, EDU_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, pindma_edu_ids);

static struct pci_driver pindma_edu_driver = {
	.name = KBUILD_MODNAME,
	.id_table = pindma_edu_ids,
	.probe = pindma_edu_probe,
	.remove = pindma_edu_remove,
};

static int __init pindma_init(void)
{
	int ret;

	ret = pci_register_driver(&pindma_edu_driver);
	if (ret)
		return ret;
	ret = misc_register(&pindma_misc);
	if (ret)
		pci_unregister_driver(&pindma_edu_driver);
	return ret;
}

static void __exit pindma_exit(void)
{
	misc_deregister(&pindma_misc);
	pci_unregister_driver(&pindma_edu_driver);
}

module_init(pindma_init);
module_exit(pindma_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Pin user pages for DMA by the CPU or QEMU's edu device");
MODULE_AUTHOR("dontfork-lab");
