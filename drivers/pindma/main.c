// SPDX-License-Identifier: GPL-2.0
/*
 * pindma: hold user pages for device DMA, the way RDMA and VFIO do, and let a
 * device (the QEMU edu PCI device) or the CPU standing in for one move bytes
 * into and out of them. The ABI is uapi/pindma.h.
 *
 * This file is the character device: the handle table, the ioctls and the
 * module's life. Pinning is pin.c, the DMA request loop dma.c, the edu
 * device edu.c; each says its own locking rules.
 *
 * The handle table:
 *
 * - pindma_handles (an xarray) maps handle ids to struct pindma_handle. Its
 *   spinlock also protects every open file's list of handles, so that "in the
 *   table" and "on its file's list" change together: PIN publishes, UNPIN and
 *   release remove, each in one critical section. UNPIN checks ownership and
 *   erases under that lock, so of two racing UNPINs of one handle exactly one
 *   wins and the other sees ENOENT.
 *
 * - A handle's lifetime is a kref. The table owns one reference, and each
 *   ioctl that uses a handle takes another under the table lock, so DMA runs
 *   without the table lock, for as long as it takes, while another thread may
 *   unpin the handle. Every reference is dropped in process context with no
 *   lock held, as releasing pages sleeps.
 *
 * - The table is module-wide, not per file, so that a handle id names one
 *   handle everywhere: another file's handle is ENOENT, never some other
 *   handle of this file that happens to share its number. The per-file list
 *   is only what release walks, and the per-file counts beside it are what
 *   INFO and the PINDMA_MAX_HANDLES cap read.
 *
 * - The table lock is global: no walk of a list is made under it. INFO reads
 *   the file's counts; release, when no ioctl can run on the file any more,
 *   walks the list without it and takes it once per handle to erase, so a
 *   file of PINDMA_MAX_HANDLES handles keeps other files waiting no longer
 *   than one.
 */

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "pindma_internal.h"

struct pindma_file {
	struct list_head handles;
	u64 nr_handles, nr_pages;	/* on the list; under the table lock */
	u64 nr_reserved;	/* places taken by PINs under way; the same */
	atomic64_t edu_xfers;	/* edu transfers done for this file's requests */
};

static DEFINE_XARRAY_ALLOC1(pindma_handles);
static u32 pindma_next_id;

atomic64_t pindma_nr_handles;
atomic64_t pindma_nr_pages;

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

/* A reference to one of file's handles, for the length of one ioctl. */
static struct pindma_handle *pindma_handle_get(struct file *file, u32 id)
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

static void pindma_handle_put(struct pindma_handle *h)
{
	kref_put(&h->ref, pindma_handle_release);
}

static long pindma_ioctl_pin(struct file *file, struct pindma_pin __user *argp)
{
	struct pindma_file *pf = file->private_data;
	struct pindma_handle *h;
	struct pindma_pin req;
	bool full;
	long ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags & ~PINDMA_PIN_FLAGS)
		return -EINVAL;

	/*
	 * A place on the file's list is reserved before anything is pinned,
	 * so that a file already full is refused with nothing faulted in,
	 * pinned or charged, and two racing PINs cannot both take its last
	 * place.
	 */
	xa_lock(&pindma_handles);
	full = pf->nr_handles + pf->nr_reserved >= PINDMA_MAX_HANDLES;
	if (!full)
		pf->nr_reserved++;
	xa_unlock(&pindma_handles);
	if (full)
		return -ENOSPC;

	h = pindma_pin(file, req.addr, req.len, req.mode,
		       req.flags & PINDMA_PIN_WRITE);
	if (IS_ERR(h)) {
		ret = PTR_ERR(h);
		goto err_unreserve;
	}

	/*
	 * Reserve the id and publish the handle only once the caller has it, so
	 * that a failed copy-out leaves nothing another thread could have used.
	 */
	ret = xa_alloc_cyclic(&pindma_handles, &h->id, NULL,
			      XA_LIMIT(1, U32_MAX), &pindma_next_id,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_put;
	req.handle = h->id;
	req.npages = h->npages;
	if (copy_to_user(argp, &req, sizeof(req))) {
		ret = -EFAULT;
		goto err_release_id;
	}

	/*
	 * xa_alloc_cyclic() reserved the slot, so this store has nothing to
	 * allocate; GFP_NOWAIT says so. GFP_KERNEL would let it drop xa_lock
	 * to allocate, between the store and the list_add that must be seen
	 * together.
	 */
	xa_lock(&pindma_handles);
	ret = xa_err(__xa_store(&pindma_handles, h->id, h, GFP_NOWAIT));
	if (!ret) {
		list_add(&h->node, &pf->handles);
		pf->nr_reserved--;
		pf->nr_handles++;
		pf->nr_pages += h->npages;
	}
	xa_unlock(&pindma_handles);
	if (ret)
		goto err_release_id;
	return 0;

err_release_id:
	xa_erase(&pindma_handles, h->id);
err_put:
	pindma_handle_put(h);
err_unreserve:
	xa_lock(&pindma_handles);
	pf->nr_reserved--;
	xa_unlock(&pindma_handles);
	return ret;
}

static long pindma_ioctl_unpin(struct file *file, u32 __user *argp)
{
	struct pindma_file *pf = file->private_data;
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
		pf->nr_handles--;
		pf->nr_pages -= h->npages;
	}
	xa_unlock(&pindma_handles);
	if (ret)
		return ret;

	pindma_handle_put(h);
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
	h = pindma_handle_get(file, req.handle);
	if (IS_ERR(h))
		return PTR_ERR(h);
	if (req.index >= h->npages)
		ret = -ERANGE;
	else if (!capable(CAP_SYS_ADMIN))
		/* As /proc/PID/pagemap since 4.0: PFNs for CAP_SYS_ADMIN only. */
		ret = -EPERM;
	else
		req.pfn = page_to_pfn(h->pages[req.index]);
	pindma_handle_put(h);

	if (!ret && copy_to_user(argp, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

static long pindma_ioctl_dma(struct file *file, struct pindma_dma __user *argp,
			     enum dma_data_direction dir)
{
	struct pindma_file *pf = file->private_data;
	struct pindma_handle *h;
	struct pindma_dma req;
	long ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (!req.len)
		return -EINVAL;
	h = pindma_handle_get(file, req.handle);
	if (IS_ERR(h))
		return PTR_ERR(h);
	ret = pindma_dma(h, &req, dir, &pf->edu_xfers);
	pindma_handle_put(h);

	if (!ret && copy_to_user(argp, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

/*
 * Module-wide counts would tell one user of another's pins and transfers:
 * they are CAP_SYS_ADMIN's, as pagemap's PFNs are; anyone else gets those of
 * the file asked. Nobody is refused anything here, so the check is not
 * audited: an LSM would log a denial on every call.
 */
static long pindma_ioctl_info(struct file *file,
			      struct pindma_info __user *argp)
{
	struct pindma_file *pf = file->private_data;
	struct pindma_info info = {
		.edu_present = pindma_edu_present(),
		.max_pages = PINDMA_MAX_PAGES,
	};

	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN)) {
		info.handles = atomic64_read(&pindma_nr_handles);
		info.pages_held = atomic64_read(&pindma_nr_pages);
		info.edu_transfers = atomic64_read(&pindma_nr_edu_xfers);
	} else {
		xa_lock(&pindma_handles);
		info.handles = pf->nr_handles;
		info.pages_held = pf->nr_pages;
		xa_unlock(&pindma_handles);
		info.edu_transfers = atomic64_read(&pf->edu_xfers);
	}

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
	case PINDMA_IOC_DMA_WRITE:	/* the device writes the pages */
		return pindma_ioctl_dma(file, argp, DMA_FROM_DEVICE);
	case PINDMA_IOC_DMA_READ:	/* the device reads them */
		return pindma_ioctl_dma(file, argp, DMA_TO_DEVICE);
	case PINDMA_IOC_QUERY:
		return pindma_ioctl_query(file, argp);
	case PINDMA_IOC_INFO:
		return pindma_ioctl_info(file, argp);
	default:
		return -ENOTTY;
	}
}

static int pindma_open(struct inode *inode, struct file *file)
{
	struct pindma_file *pf;

	pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
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

	/*
	 * No ioctl can be running on a file being released, so nothing else
	 * changes its list: it is walked without the table lock, which each
	 * erase takes for itself. Out of the table, the handles are reachable
	 * only through this list.
	 */
	list_for_each_entry(h, &pf->handles, node)
		xa_erase(&pindma_handles, h->id);
	list_for_each_entry_safe(h, tmp, &pf->handles, node) {
		pindma_handle_put(h);
		/* Up to PINDMA_MAX_HANDLES releases of 256 MiB each. */
		cond_resched();
	}
	kfree(pf);
	return 0;
}

/*
 * Pins live only while their file is open (release unpins them all), and
 * .owner makes every open file hold a module reference, so the module cannot
 * be unloaded while it holds any page. A forked child that keeps the file
 * keeps its parent's pins, charged to the parent's mm after the parent is
 * gone, as ib_uverbs keeps memory regions with its file (docs/driver.md).
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
 * and mm that made them. GUP mode is CAP_SYS_ADMIN's (pin.c).
 */
static struct miscdevice pindma_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pindma",
	.fops = &pindma_fops,
	.mode = 0666,
};

static int __init pindma_init(void)
{
	int ret;

	ret = pindma_edu_register();
	if (ret)
		return ret;
	ret = misc_register(&pindma_misc);
	if (ret) {
		pindma_edu_unregister();
		return ret;
	}
	pindma_pagestate_register();
	return 0;
}

static void __exit pindma_exit(void)
{
	pindma_pagestate_unregister();
	misc_deregister(&pindma_misc);
	pindma_edu_unregister();
}

module_init(pindma_init);
module_exit(pindma_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Pin user pages for DMA by the CPU or QEMU's edu device");
MODULE_AUTHOR("dontfork-lab");
