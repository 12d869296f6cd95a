// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's view of one page, for the lab's "why" (rows/why.c): a root-only debugfs file,
 * /sys/kernel/debug/pindma/page_state. Write a PFN to it, then read from the same open file (one
 * open per query):
 *
 *   pfn=1a2b refcount=3 mapcount=2 pincount=-1 maybe_pinned=0 anon=1 anon_exclusive=0 large=0
 *
 * (pincount is -1 where the kernel keeps none: a small folio counts its pins in its refcount.)
 *
 * The page is read the way /proc/kpagecount and /proc/kpageflags read pages: by PFN, without
 * taking a reference or a lock, with atomic reads only (each counter one, but 6.1's page_mapcount()
 * of a page in a large folio, which adds up to three). So reading does not change what is
 * read: no refcount the copy-on-write decision looks at moves, no page is pinned or mapped. The
 * snapshot may be stale by the time it is returned, as theirs may; the lab reads it at points
 * where the row is quiet (between its steps, its child waiting).
 */

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/page_ref.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pindma_internal.h"

static struct dentry *pindma_debugfs;

struct pindma_page_query {
	unsigned long pfn;
	bool set;
};

static int pindma_page_state_open(struct inode *inode, struct file *file)
{
	struct pindma_page_query *q;

	/* As /proc/kpageflags: the state of any page of the machine is for the administrator. */
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	file->private_data = q;
	return 0;
}

static int pindma_page_state_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static ssize_t pindma_page_state_write(struct file *file, const char __user *buf,
				       size_t len, loff_t *ppos)
{
	struct pindma_page_query *q = file->private_data;
	unsigned long pfn;
	int ret;

	ret = kstrtoul_from_user(buf, len, 0, &pfn);
	if (ret)
		return ret;
	q->pfn = pfn;
	q->set = true;
	return len;
}

static int pindma_page_mapcount(struct page *page, struct folio *folio)
{
#ifdef PINDMA_HAVE_PAGE_MAPCOUNT	/* 6.1: this page's mappings, a PMD's included */
	return page_mapcount(page);
#else				/* 6.12: the folio's mappings */
	return folio_mapcount(folio);
#endif
}

static int pindma_pincount(struct folio *folio)
{
	if (!folio_test_large(folio))
		return -1;
#ifdef PINDMA_HAVE_FOLIO_PINCOUNT_PTR	/* 6.1 */
	return atomic_read(folio_pincount_ptr(folio));
#else
	return atomic_read(&folio->_pincount);
#endif
}

static ssize_t pindma_page_state_read(struct file *file, char __user *buf, size_t len,
				      loff_t *ppos)
{
	struct pindma_page_query *q = file->private_data;
	struct page *page, *excl;
	struct folio *folio;
	char out[160];
	int n;

	if (!q->set)
		return -EDESTADDRREQ;
	page = pfn_to_online_page(q->pfn);
	if (!page)
		return -ENXIO;
	excl = page;
	folio = page_folio(page);
	/*
	 * hugetlb keeps PG_anon_exclusive on the head page; 6.1's PageAnonExclusive()
	 * reads the page it is given (and DEBUG_VM_PGFLAGS BUGs on a tail).
	 */
	if (PageHuge(page))
		excl = &folio->page;
	n = scnprintf(out, sizeof(out),
		      "pfn=%lx refcount=%d mapcount=%d pincount=%d maybe_pinned=%d anon=%d anon_exclusive=%d large=%d\n",
		      q->pfn, folio_ref_count(folio),
		      pindma_page_mapcount(page, folio), pindma_pincount(folio),
		      folio_maybe_dma_pinned(folio), PageAnon(page),
		      PageAnon(page) && PageAnonExclusive(excl),
		      folio_test_large(folio));
	return simple_read_from_buffer(buf, len, ppos, out, n);
}

static const struct file_operations pindma_page_state_fops = {
	.owner = THIS_MODULE,
	.open = pindma_page_state_open,
	.release = pindma_page_state_release,
	.read = pindma_page_state_read,
	.write = pindma_page_state_write,
};

void pindma_pagestate_register(void)
{
	/* Without debugfs the rest of the driver works; the lab's "why" says it cannot read. */
	pindma_debugfs = debugfs_create_dir("pindma", NULL);
	debugfs_create_file("page_state", 0600, pindma_debugfs, NULL,
			    &pindma_page_state_fops);
}

void pindma_pagestate_unregister(void)
{
	debugfs_remove_recursive(pindma_debugfs);
}
