// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's view of one page, for the lab's "why" (rows/why.c): a root-only debugfs file,
 * /sys/kernel/debug/pindma/page_state. Write a PFN to it, then read from the same open file (one
 * open per query):
 *
 *   pfn=1a2b refcount=3 page_mapcount=2 pincount=-1 maybe_pinned=0 anon=1 anon_exclusive=0 large=0
 *
 * The map count is the one each kernel keeps: 6.1 counts a page's mappings (page_mapcount(): its
 * PTEs, and for a page of a THP its folio's PMDs), 6.12 only a folio's (folio_mapcount(): every
 * mapping of any of its pages), so 6.12's line says folio_mapcount= instead. Of a THP that the
 * parent's write split, 6.1 says 2 for the page, 6.12 about 513 for the folio. (pincount is -1
 * where the kernel keeps none: a small folio counts its pins in its refcount.) anon_exclusive is
 * the flag that says so for the page asked: a PMD maps a THP whole and keeps PG_anon_exclusive on
 * its head, as hugetlb does; PTEs keep it per page.
 *
 * The page is read the way /proc/kpagecount and /proc/kpageflags read pages: by PFN, without
 * taking a reference or a lock, with atomic reads only (each counter one, but 6.1's
 * page_mapcount() of a page in a large folio, which adds up to three). So reading does not change
 * what is read: no refcount the copy-on-write decision looks at moves, no page is pinned or
 * mapped. The folio may split or be freed meanwhile: its counters are read raw, not through
 * helpers that assert the folio is still large (6.12's folio_large_mapcount() WARNs), and the
 * read is made again when the page's folio changed under it. The snapshot may be stale by the
 * time it is returned, as theirs may; the lab reads it at points where the row is quiet (between
 * its steps, its child waiting).
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

#ifdef PINDMA_HAVE_PAGE_MAPCOUNT	/* 6.1: this page's mappings, a PMD's included */
#define PINDMA_MAPCOUNT_NAME "page_mapcount"
static int pindma_mapcount(struct page *page, struct folio *folio, bool large)
{
	/* Raw reads of the page's and its head's counts: no assertion on a folio that split. */
	return page_mapcount(page);
}
#else				/* 6.12: the folio's mappings */
#define PINDMA_MAPCOUNT_NAME "folio_mapcount"
static int pindma_mapcount(struct page *page, struct folio *folio, bool large)
{
	int mapcount;

	/* Not folio_large_mapcount(): it WARNs when the folio has split since it was large. */
	if (large)
		return atomic_read(&folio->_large_mapcount) + 1;
	mapcount = atomic_read(&folio->_mapcount) + 1;
	/* A page of a type (slab, page table...) keeps its type there, as folio_mapcount() says. */
	return page_mapcount_is_type(mapcount) ? 0 : mapcount;
}
#endif

/* How many times a PMD maps the whole large folio, read raw as the other counts are. */
static int pindma_entire_mapcount(struct folio *folio)
{
#ifdef PINDMA_HAVE_FOLIO_COUNT_PTRS	/* 6.1 */
	return atomic_read(folio_mapcount_ptr(folio)) + 1;
#else
	return atomic_read(&folio->_entire_mapcount) + 1;
#endif
}

static int pindma_pincount(struct folio *folio, bool large)
{
	if (!large)
		return -1;
#ifdef PINDMA_HAVE_FOLIO_COUNT_PTRS	/* 6.1 */
	return atomic_read(folio_pincount_ptr(folio));
#else
	return atomic_read(&folio->_pincount);
#endif
}

/*
 * Where the page's PG_anon_exclusive is kept: a hugetlb folio and a PMD-mapped THP keep it on
 * their head page only (6.1's PageAnonExclusive() reads the page it is given, and on a hugetlb
 * tail DEBUG_VM_PGFLAGS BUGs); a page of a THP that PTEs map keeps its own, set on each page when
 * the PMD was split (and on 6.12 when a write fault reused that one page).
 */
static bool pindma_anon_exclusive(struct page *page, struct folio *folio, bool large)
{
	if (!PageAnon(page))
		return false;
	if (large && (folio_test_hugetlb(folio) || pindma_entire_mapcount(folio) > 0))
		page = &folio->page;
	/*
	 * Raw, as stable_page_flags() reads flags: no reference is held, so the
	 * page may be freed and reused after PageAnon(), and PageAnonExclusive()
	 * would then BUG under DEBUG_VM_PGFLAGS. A stale bit is read again.
	 */
	return test_bit(PG_anon_exclusive, &page->flags);
}

/* Tries at a read whose folio did not change under it, each a few atomic reads long. */
#define PINDMA_STATE_TRIES	16

static ssize_t pindma_page_state_read(struct file *file, char __user *buf, size_t len,
				      loff_t *ppos)
{
	struct pindma_page_query *q = file->private_data;
	int refcount, mapcount, pincount, pinned, excl, tries;
	struct folio *folio;
	struct page *page;
	char out[160];
	bool large;
	int n;

	if (!q->set)
		return -EDESTADDRREQ;
	page = pfn_to_online_page(q->pfn);
	if (!page)
		return -ENXIO;
	for (tries = 0; tries < PINDMA_STATE_TRIES; tries++) {
		folio = page_folio(page);
		large = folio_test_large(folio);
		smp_rmb();	/* the folio's shape before its counters */
		refcount = folio_ref_count(folio);
		mapcount = pindma_mapcount(page, folio, large);
		pincount = pindma_pincount(folio, large);
		pinned = large ? pincount > 0 : folio_maybe_dma_pinned(folio);
		excl = pindma_anon_exclusive(page, folio, large);
		smp_rmb();	/* and again after: a split or free in between is read again */
		if (page_folio(page) == folio && folio_test_large(folio) == large)
			break;
	}
	if (tries == PINDMA_STATE_TRIES)
		return -EAGAIN;
	n = scnprintf(out, sizeof(out),
		      "pfn=%lx refcount=%d %s=%d pincount=%d maybe_pinned=%d anon=%d anon_exclusive=%d large=%d\n",
		      q->pfn, refcount, PINDMA_MAPCOUNT_NAME, mapcount, pincount, pinned,
		      PageAnon(page), excl, large);
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
