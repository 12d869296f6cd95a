// SPDX-License-Identifier: GPL-2.0
/*
 * The pin/unpin core: hold a range of user pages the way the PIN request's
 * mode says, charge them against RLIMIT_MEMLOCK to the caller's pinned_vm, as
 * ib_umem does, and to the caller's user, as io_uring does, and give all of
 * it back when the handle's last reference goes.
 *
 * Acquire and release are keyed by the same mode, side by side below:
 * PINDMA_MODE_GUP takes a page reference (FOLL_GET) and puts it,
 * PINDMA_MODE_PIN_LONGTERM takes a FOLL_PIN|FOLL_LONGTERM pin and unpins it.
 *
 * Locking: mmap_read_lock is taken killably for each batch of pages and held
 * over that batch's VMA checks and GUP, with none of the driver's locks held.
 * The mm is kept with mmgrab() rather than mmget(): it only needs to outlive
 * the handle so that the pinned_vm charge can be returned, and must not keep
 * the address space alive after the process exits. The user is kept with
 * get_uid() for the same reason. Releasing pages sleeps, so a handle is
 * released in process context with no lock held.
 */

#include <linux/backing-dev.h>
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "pindma_internal.h"

/*
 * The one place that calls into GUP: how each mode acquires its pages, and
 * the one place that knows the kernel's GUP API. get_user_pages() takes a
 * reference (FOLL_GET) whenever it fills pages[], which 6.2 made the only way
 * to ask for one; 6.5 dropped the vmas argument of both calls.
 */
static long pindma_pin_user_range(unsigned long start, unsigned long nr,
				  u32 mode, unsigned int gup_flags,
				  struct page **pages)
{
#ifdef PINDMA_GUP_TAKES_VMAS	/* before 6.5, see Kbuild */
	if (mode == PINDMA_MODE_GUP)
		return get_user_pages(start, nr, gup_flags, pages, NULL);
	return pin_user_pages(start, nr, gup_flags | FOLL_LONGTERM, pages,
			      NULL);
#else
	if (mode == PINDMA_MODE_GUP)
		return get_user_pages(start, nr, gup_flags, pages);
	return pin_user_pages(start, nr, gup_flags | FOLL_LONGTERM, pages);
#endif
}

/* How each mode releases them; dirty: the device may have written them. */
static void pindma_unpin_pages(struct page **pages, unsigned long n, u32 mode,
			       bool dirty)
{
	unsigned long i;

	if (mode == PINDMA_MODE_PIN_LONGTERM) {
		unpin_user_pages_dirty_lock(pages, n, dirty);
		return;
	}
	for (i = 0; i < n; i++) {
		if (dirty)
			set_page_dirty_lock(pages[i]);
		put_page(pages[i]);
	}
}

/*
 * Add n to v unless that takes it past limit. A compare-and-exchange rather
 * than an add and a check, so that two pinners sharing the counter never see
 * each other's charge before it is known to fit, and none is refused for a
 * sum that was never held (as io_uring's __io_account_mem()).
 */
static bool pindma_add_within(atomic64_t *v, s64 n, s64 limit)
{
	s64 cur = atomic64_read(v);

	do {
		if (cur + n > limit)
			return false;
	} while (!atomic64_try_cmpxchg(v, &cur, cur + n));
	return true;
}

static bool pindma_add_long_within(atomic_long_t *v, long n, long limit)
{
	long cur = atomic_long_read(v);

	do {
		if (cur + n > limit)
			return false;
	} while (!atomic_long_try_cmpxchg(v, &cur, cur + n));
	return true;
}

/*
 * Charge n more pages to h, against the caller's RLIMIT_MEMLOCK: to its mm's
 * pinned_vm, like ib_umem_get() (VmPin in /proc/PID/status), and to its
 * user's locked_vm, like io_uring's __io_account_mem(). The pins belong to
 * the file and outlive the process that made them; a forked child, or a
 * process that exec()s with the file open, starts with an empty pinned_vm.
 * The user's charge is what bounds what one user holds, whatever its
 * processes do.
 *
 * capable() is asked only when a charge would go over, so that staying within
 * the limit logs no capability use. Once CAP_IPC_LOCK has let a handle over,
 * the handle charges its user nothing, from its first page to its last: a
 * privileged pinner must not use up the budget of its uid's unprivileged
 * users of locked_vm (io_uring, perf, XDP). pinned_vm is charged whatever
 * happens, as ib_umem charges it, so that VmPin shows every pin.
 */
static int pindma_charge(struct pindma_handle *h, unsigned long n)
{
	s64 limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (h->user) {
		if (pindma_add_within(&h->mm->pinned_vm, n, limit)) {
			if (pindma_add_long_within(&h->user->locked_vm, n, limit)) {
				h->charged += n;
				return 0;
			}
			atomic64_sub(n, &h->mm->pinned_vm);
		}
		if (!capable(CAP_IPC_LOCK))
			return -ENOMEM;
		atomic_long_sub(h->charged, &h->user->locked_vm);
		free_uid(h->user);
		h->user = NULL;
	}
	atomic64_add(n, &h->mm->pinned_vm);
	h->charged += n;
	return 0;
}

/* The charges must go before mmdrop(): that may free the mm they are kept in. */
static void pindma_uncharge(struct pindma_handle *h)
{
	if (h->user) {
		atomic_long_sub(h->charged, &h->user->locked_vm);
		free_uid(h->user);
	}
	atomic64_sub(h->charged, &h->mm->pinned_vm);
	mmdrop(h->mm);
}

/*
 * What n pages just held cost, in pages: a small page one, a large folio (a
 * THP, a hugetlb page) all of its pages, since a pin of one of them keeps the
 * whole folio from being freed or split, and only once for a run of pages of
 * the same folio, as io_uring's headpage_already_acct() counts them. *last is
 * the folio of the page before, from the call before too. A folio that comes
 * back after other pages in between (mapped twice, say) is charged again.
 */
static unsigned long pindma_cost(struct page **pages, unsigned long n,
				 struct folio **last)
{
	unsigned long i, cost = 0;
	struct folio *folio;

	for (i = 0; i < n; i++) {
		folio = page_folio(pages[i]);
		if (!folio_test_large(folio))
			cost++;
		else if (folio != *last)
			cost += folio_nr_pages(folio);
		*last = folio;
	}
	return cost;
}

/*
 * Whether a page just held has more references than pindma may leave it with
 * (PINDMA_MAX_PAGE_REFS): a page that many users may map, a read-only page
 * cache page say, can be pinned by each of them, and each FOLL_PIN of a small
 * page adds GUP_PIN_COUNTING_BIAS (1024). At 2^31 the count overflows, where
 * try_grab_page() (try_grab_folio() on 6.12) WARNs: a crash under
 * panic_on_warn. A large folio is not asked: a FOLL_PIN adds 1 to its count
 * (its pins are counted apart), so that 2^31 pins would be needed, far more
 * memory than any limit lets one user charge.
 */
static bool pindma_too_many_refs(struct page **pages, unsigned long n)
{
	struct folio *folio;
	unsigned long i;

	for (i = 0; i < n; i++) {
		folio = page_folio(pages[i]);
		if (!folio_test_large(folio) &&
		    folio_ref_count(folio) > PINDMA_MAX_PAGE_REFS)
			return true;
	}
	return false;
}

/*
 * Whether the device writing vma's pages would bypass the file system: the
 * pages of a shared mapping whose file is written back (or which asks to hear
 * of writes) may only be made writable through ->page_mkwrite, and a device
 * dirties them behind it, to be written back, or lost, while pinned (6.1's
 * ext4 then warns that a dirty page "does not have buffers attached"). The
 * rule is the one 6.12's GUP applies to long-term write pins
 * (vma_needs_dirty_tracking(), not exported); here it holds in both modes and
 * on every kernel. tmpfs, shmem and hugetlbfs have no writeback and pass.
 */
static bool pindma_vma_needs_dirty_tracking(struct vm_area_struct *vma)
{
	const struct vm_operations_struct *ops = vma->vm_ops;

	if (!(vma->vm_flags & VM_SHARED))
		return false;
	if (ops && (ops->page_mkwrite || ops->pfn_mkwrite))
		return true;
	return vma->vm_file && mapping_can_writeback(vma->vm_file->f_mapping);
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
		if (write && pindma_vma_needs_dirty_tracking(vma))
			return -EOPNOTSUPP;
		addr = vma->vm_end;
	}
	return 0;
}

/*
 * Pages pinned per hold of mmap_lock: a pin of up to PINDMA_MAX_PAGES pages
 * (256 MiB) must not keep mmap() and munmap() of the whole process waiting
 * while it faults them in, possibly from a slow disk.
 */
#define PINDMA_PIN_BATCH	512

/*
 * Pages asked of GUP in one call, each call's pages then checked and charged
 * before the next call. GUP holds each page as it reaches it and may then
 * wait for the next one's fault for as long as that takes (a FUSE server
 * may never answer): the pins held in the meantime are unchecked and
 * uncharged, a step's worth at most.
 */
#define PINDMA_PIN_STEP		16

/*
 * Pin all of h's pages, starting at addr, or none. The whole range's VMAs are
 * checked first, so that a refusal faults in nothing (a write pin breaks
 * copy-on-write). Each batch then takes the lock killably, checks its VMAs
 * again (the lock was dropped in between) and calls GUP a step at a time
 * until the batch is held (GUP may take fewer pages than asked for), checking
 * each call's reference counts and charging what its large folios cost over
 * the page apiece already charged; when anything fails, every page pinned so
 * far, in this batch and the earlier ones, is released.
 */
static int pindma_pin_range(struct pindma_handle *h, unsigned long addr)
{
	unsigned int gup_flags = h->writable ? FOLL_WRITE : 0;
	unsigned long pinned = 0, cost = 0, end, step;
	struct mm_struct *mm = h->mm;
	struct folio *last = NULL;
	long ret;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	ret = pindma_check_vmas(mm, addr, addr + (h->npages << PAGE_SHIFT),
				h->writable);
	mmap_read_unlock(mm);

	while (!ret && pinned < h->npages) {
		end = min(pinned + PINDMA_PIN_BATCH, h->npages);
		if (mmap_read_lock_killable(mm)) {
			ret = -EINTR;
			break;
		}
		/* One read lock over the check and GUP: the VMAs stay as checked. */
		ret = pindma_check_vmas(mm, addr + (pinned << PAGE_SHIFT),
					addr + (end << PAGE_SHIFT),
					h->writable);
		while (!ret && pinned < end) {
			step = min(end - pinned, (unsigned long)PINDMA_PIN_STEP);
			ret = pindma_pin_user_range(addr + (pinned << PAGE_SHIFT),
						    step, h->mode, gup_flags,
						    h->pages + pinned);
			if (!ret) {
				ret = -EFAULT;
				break;
			}
			if (ret < 0)
				break;
			step = ret;
			ret = 0;
			if (pindma_too_many_refs(h->pages + pinned, step))
				ret = -ETOOMANYREFS;
			cost += pindma_cost(h->pages + pinned, step, &last);
			pinned += step;
			if (!ret && cost > h->charged)
				ret = pindma_charge(h, cost - h->charged);
		}
		mmap_read_unlock(mm);
		if (!ret && pinned < h->npages && fatal_signal_pending(current))
			ret = -EINTR;
		cond_resched();
	}

	if (ret)
		pindma_unpin_pages(h->pages, pinned, h->mode, false);
	return ret;
}

/*
 * Pin [addr, addr + len) of the caller's address space for file. Returns a
 * handle holding one reference, not yet in the handle table.
 */
struct pindma_handle *pindma_pin(struct file *file, u64 addr, u64 len,
				 u32 mode, bool writable)
{
	struct mm_struct *mm = current->mm;
	struct pindma_handle *h;
	u64 end, npages;
	int ret;

	if (mode != PINDMA_MODE_GUP && mode != PINDMA_MODE_PIN_LONGTERM)
		return ERR_PTR(-EINVAL);
	if (!len || !PAGE_ALIGNED(addr))
		return ERR_PTR(-EINVAL);
	if (check_add_overflow(addr, len, &end) || end > TASK_SIZE)
		return ERR_PTR(-EOVERFLOW);
	npages = (PAGE_ALIGN(end) - addr) >> PAGE_SHIFT;
	if (npages > PINDMA_MAX_PAGES)
		return ERR_PTR(-E2BIG);
	/*
	 * Long-term FOLL_GET references block migration, compaction and CMA
	 * for as long as the pin lives, which is why the kernel offers
	 * FOLL_LONGTERM only with FOLL_PIN. GUP mode is kept for the 2006 bug,
	 * as a lab tool for CAP_SYS_ADMIN, as the kernel's gup_test is.
	 */
	if (mode == PINDMA_MODE_GUP && !capable(CAP_SYS_ADMIN))
		return ERR_PTR(-EPERM);
	/*
	 * The charge is per user_struct, one per kernel uid: a user given a
	 * range of subordinate uids would get, through the user namespaces
	 * they map, a fresh RLIMIT_MEMLOCK for each of them. No capability
	 * helps: a task in a child namespace has none in the initial one.
	 */
	if (current_user_ns() != &init_user_ns)
		return ERR_PTR(-EPERM);

	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return ERR_PTR(-ENOMEM);
	/* The length is the caller's: a failure is ENOMEM, not a warning. */
	h->pages = kvcalloc(npages, sizeof(*h->pages),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!h->pages) {
		ret = -ENOMEM;
		goto err_free_handle;
	}
	h->file = file;
	h->mm = mm;
	h->user = get_uid(current_user());
	h->npages = npages;
	h->mode = mode;
	h->writable = writable;
	mmgrab(mm);

	/*
	 * A page apiece first, the least the range can cost, so that a pin
	 * that cannot fit is refused before anything is faulted in; its large
	 * folios are charged the rest as they are held.
	 */
	ret = pindma_charge(h, npages);
	if (ret)
		goto err_uncharge;
	ret = pindma_pin_range(h, addr);
	if (ret)
		goto err_uncharge;

	kref_init(&h->ref);
	atomic64_inc(&pindma_nr_handles);
	atomic64_add(npages, &pindma_nr_pages);
	return h;

err_uncharge:
	pindma_uncharge(h);
	kvfree(h->pages);
err_free_handle:
	kfree(h);
	return ERR_PTR(ret);
}

/* The last reference is gone: undo pindma_pin() in reverse. */
void pindma_handle_release(struct kref *ref)
{
	struct pindma_handle *h = container_of(ref, struct pindma_handle, ref);

	atomic64_sub(h->npages, &pindma_nr_pages);
	atomic64_dec(&pindma_nr_handles);
	/* The device may have written any page of a writable pin. */
	pindma_unpin_pages(h->pages, h->npages, h->mode, h->writable);
	pindma_uncharge(h);
	kvfree(h->pages);
	kfree(h);
}
