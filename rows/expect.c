// SPDX-License-Identifier: GPL-2.0
/*
 * Expected verdicts, one table per kernel the lab has a series for (kernel-patches/<version>/ names
 * them; tests/host/registry.sh holds the two lists equal). The 6.1 table is complete; each later table
 * holds only the rows whose expectation differs from the table before it, and every such entry names
 * the upstream commit that changed the behaviour. Beside each table, the rules of its era that the
 * "why" lines follow. The kernel is the one /lab/kernel.env names: the lab's own kernels by their
 * registry name, a user's tree (KERNEL_SRC) by its version, matched to the newest table not newer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "lab.h"
#include "row.h"

struct expectation {
	const char *row;
	const char *verdict;
};

/* Linux 6.1: the lab's base kernel; every row is here. */
static const struct expectation v6_1[] = {
	/* pindma */
	{ "gup", "ORPHANED" },
	{ "gup-child-exited", "ORPHANED" },
	{ "gup-dontfork", "COHERENT" },
	{ "gup-dontfork-dofork", "ORPHANED" },
	{ "pin", "COHERENT" },
	{ "pin-dontfork", "COHERENT" },
	{ "gup-leak", "ORPHANED" },
	/* VM_SHARED: no copy-on-write at all. VM_WIPEONFORK: fork shares nothing with the child. */
	{ "gup-shared", "COHERENT" },
	{ "gup-wipeonfork", "COHERENT" },
	{ "mlock", "ORPHANED" },
	{ "mlock-dontfork", "COHERENT" },
	{ "pin-switch-on", "ORPHANED" },
	{ "pin-switch-on-dontfork", "COHERENT" },
	{ "pin-switch-off", "COHERENT" },
	/*
	 * Before 5.9 do_wp_page() reused a page its mapcount said was the parent's alone; since
	 * 09854ba94c6a ("mm: do_wp_page() simplification", 5.9) only a page nobody else references
	 * is reused, and the pin is a reference: the switch brings back fork's sharing, not that.
	 */
	{ "pin-switch-on-child-exited", "ORPHANED" },
	/*
	 * A read-only FOLL_PIN of an anon page that is not exclusive, as fork left the shared one,
	 * takes the unshare fault (gup_must_unshare(), a7f226604170 "mm/gup: trigger
	 * FAULT_FLAG_UNSHARE when R/O-pinning a possibly shared anonymous page" and c89357e27f20
	 * "mm: support GUP-triggered unsharing of anonymous pages", 5.19), which copies it for the
	 * parent as a write would (wp_page_copy()): the first pin stays on the child's page with
	 * no write at all. 6.12 does the same.
	 */
	{ "pin-switch-on-repin-ro", "ORPHANED" },
	{ "pin-thp", "COHERENT" },
	{ "pin-thp-dontfork", "COHERENT" },
	{ "pin-switch-on-thp", "ORPHANED" },
	{ "pin-switch-on-thp-dontfork", "COHERENT" },
	{ "pin-hugetlb", "COHERENT" },
	{ "pin-hugetlb-dontfork", "COHERENT" },
	{ "pin-switch-on-hugetlb", "ORPHANED" },
	{ "pin-switch-on-hugetlb-dontfork", "COHERENT" },
	/* hugetlb_wp() (hugetlb_cow() before 6.0) still reuses a page mapped once. */
	{ "pin-switch-on-hugetlb-child-exited", "COHERENT" },

	/* vmsplice: a FOLL_GET reference; fork copies only maybe-pinned (FOLL_PIN) pages. */
	{ "vmsplice-no-fork", "COHERENT" },
	{ "vmsplice", "ORPHANED" },
	{ "vmsplice-dontfork", "COHERENT" },

	/* io_uring fixed buffers: FOLL_PIN | FOLL_LONGTERM, copied for the child since 5.9 */
	{ "iouring", "COHERENT" },
	{ "iouring-dontfork", "COHERENT" },
	{ "iouring-switch-on", "ORPHANED" },
	{ "iouring-switch-on-dontfork", "COHERENT" },

	/*
	 * vfio: type1 pins with FOLL_PIN | FOLL_LONGTERM (vaddr_get_pfns()), so fork copies the page
	 * for the child since 70e806e4e645 ("mm: Do early cow for pinned pages during fork() for
	 * ptes", 5.9); 6.12 the same.
	 */
	{ "vfio-no-fork", "COHERENT" },
	{ "vfio", "COHERENT" },
	{ "vfio-dontfork", "COHERENT" },
	{ "vfio-switch-on", "ORPHANED" },
	{ "vfio-switch-on-dontfork", "COHERENT" },

	/* odirect: direct I/O takes its pages with FOLL_GET on 6.1 */
	{ "odirect-no-fork", "COHERENT" },
	{ "odirect-fork", "ORPHANED" },
	{ "odirect-dontfork", "COHERENT" },
	{ "odirect-own-page", "COHERENT" },
	/* ext4's direct I/O (iomap) hands the pages to the same bio_iov_iter_get_pages() */
	{ "odirect-ext4-no-fork", "COHERENT" },
	{ "odirect-ext4-fork", "ORPHANED" },
	{ "odirect-ext4-dontfork", "COHERENT" },
	{ "odirect-ext4-own-page", "COHERENT" },
	{ "odirect-multi-aligned", "COHERENT" },
	{ "odirect-multi", "ORPHANED" },
	{ "odirect-multi-a1024", "ORPHANED" },
	{ "odirect-multi-a1536", "ORPHANED" },
	{ "odirect-multi-a2048", "ORPHANED" },
	{ "odirect-multi-a2560", "ORPHANED" },
	{ "odirect-multi-a3072", "ORPHANED" },
	{ "odirect-multi-a3584", "ORPHANED" },
	{ "odirect-multi-dontfork", "COHERENT" },
	/* FOLL_GET: the switch changes nothing for it */
	{ "odirect-multi-switch-on", "ORPHANED" },
	{ "odirect-multi-switch-on-dontfork", "COHERENT" },
	{ "odirect-multi-ext4-aligned", "COHERENT" },
	{ "odirect-multi-ext4", "ORPHANED" },
	{ "odirect-multi-ext4-dontfork", "COHERENT" },

	/* verbs (ib_umem pins with FOLL_PIN | FOLL_LONGTERM) */
	{ "verbs-switch-off", "COHERENT" },
	{ "verbs-switch-on", "ORPHANED" },
	{ "verbs-switch-on-ibv_fork_init", "COHERENT" },
	{ "verbs-switch-on-RDMAV_FORK_SAFE", "COHERENT" },
	/*
	 * What rdma-core's fork support costs, from libibverbs/memory.c: ibv_fork_init() sets
	 * up its range tree whatever the kernel reports (ibv_is_fork_initialized() says
	 * UNNEEDED while the kernel copies on fork, but ibv_reg_mr() still marks whole pages
	 * MADV_DONTFORK), so a sub-page MR takes the rest of its page from a child on every
	 * kernel; after a registration without it, ibv_fork_init() is EINVAL (too_late).
	 */
	{ "verbs-switch-on-subpage-mr", "SIGSEGV" },
	{ "verbs-switch-off-subpage-mr", "SIGSEGV" },
	{ "verbs-switch-on-fork_init-after-reg", "EINVAL" },
	{ "verbs-switch-off-fork_init-after-reg", "EINVAL" },
	/* The freed page is still MADV_DONTFORK until ibv_dereg_mr(). */
	{ "verbs-switch-off-free-before-dereg", "SIGSEGV" },
	/*
	 * Each MR's MADV_DONTFORK splits the mapping until the process's VMAs reach
	 * vm.max_map_count, where the split is refused with ENOMEM, which madvise_vma_behavior()
	 * turns into EAGAIN. Without fork support nothing is split, and a fork after the
	 * registrations leaves the MR coherent: fork copies the maybe-pinned page for the child
	 * (70e806e4e645, 5.9).
	 */
	{ "verbs-switch-off-mr-splits-vmas", "EAGAIN" },
	{ "verbs-switch-off-mr-splits-vmas-no-init", "all-ok" },
	/*
	 * A 4 KiB MR at the start of a hugetlb page: without RDMAV_HUGEPAGES_SAFE rdma-core
	 * madvises 4 KiB, which would split the VMA inside a huge page (hugetlb_vm_op_split():
	 * EINVAL); with it, the whole huge page is DONTFORK and the child has none of it.
	 */
	{ "verbs-switch-off-hugetlb-mr", "EINVAL" },
	{ "verbs-switch-off-hugetlb-mr-hp-safe", "SIGSEGV" },

	/* fadvise: what the call leaves of 8 MiB of dirty pages on the slow disk */
	{ "fadvise-async-write", "IN FLIGHT" },
	{ "fadvise-write-wait", "NOTHING" },
	{ "fadvise-wait-write-wait", "WRITTEN" },
	{ "fadvise-sync-file-range", "IN FLIGHT" },
	{ "fadvise-msync-async", "NOTHING" },
	{ "fadvise-control", "NOTHING" },

	/*
	 * child: the parent stays coherent in every row (the pin is FOLL_PIN | FOLL_LONGTERM,
	 * as ib_umem pins; ROCm's hipHostMalloc memory is not pinned, see rows/child.c); what
	 * decides the child's side is the VMA flag dup_mmap() and copy_page_range() read, and
	 * none of that changed between 6.1 and 6.12, whose table has none of these rows. A
	 * private anonymous VMA: fork copies the maybe-pinned page for the child since
	 * 70e806e4e645 ("mm: Do early cow for pinned pages during fork() for ptes", 5.9), so it
	 * reads the pre-fork bytes.
	 */
	{ "child-control", "PRE-FORK" },
	/*
	 * VM_DONTCOPY: dup_mmap() leaves the VMA out of the child since f822566165dd ("[PATCH]
	 * madvise MADV_DONTFORK/MADV_DOFORK", 2.6.16): the child's touch is SIGSEGV.
	 */
	{ "child-dontfork", "SIGSEGV" },
	/*
	 * VM_SHARED: MAP_SHARED | MAP_ANONYMOUS is a shmem page-cache folio, never
	 * copy-on-write; the child's fault finds it again. d992895ba2b2 ("[PATCH] Lazy page table
	 * copies in fork()", 2.6.14) is only why the child has no PTE right after the fork (no
	 * anon_vma; the test is vma_needs_copy() since c56d1b62cce8, "mm/shmem: handle uffd-wp
	 * during fork()", 5.19). The long-term writable pin of shmem is allowed on both kernels:
	 * 6.1's check_vma_flags() refuses only fsdax; 6.12 has 8ac268436e6d and a6e79df92e4a
	 * ("mm/gup: disallow FOLL_LONGTERM GUP-nonfast/GUP-fast writing to file-backed
	 * mappings", 6.5), whose vma_needs_dirty_tracking() is false for shmem; pindma's own
	 * pindma_check_vmas() gates both.
	 */
	{ "child-shared", "SHARED" },
	/*
	 * Both flags: dup_mmap() skips a VM_DONTCOPY VMA (f822566165dd) before copy_page_range()
	 * would look at VM_SHARED, so the child has no such range, as for child-dontfork.
	 */
	{ "child-shared-dontfork", "SIGSEGV" },
	/*
	 * VM_WIPEONFORK: d2cd9ede6e19 ("mm,fork: introduce MADV_WIPEONFORK", 4.14) gives the
	 * child the VMA without anon_vma or page table: its first read maps the shared zero page,
	 * its write a zeroed page of its own (wp_page_copy()).
	 */
	{ "child-wipeonfork", "ZEROES" },

	{ NULL, NULL }
};

/* Linux 6.12: what differs from 6.1, each with the commit that changed it. */
static const struct expectation v6_12[] = {
	/*
	 * 920756a3306a (6.4) "block: Convert bio_iov_iter_get_pages to use
	 * iov_iter_extract_pages": direct I/O pins with FOLL_PIN, so fork copies for the child.
	 */
	{ "odirect-fork", "COHERENT" },
	{ "odirect-ext4-fork", "COHERENT" },
	{ "odirect-multi", "COHERENT" },
	{ "odirect-multi-a1024", "COHERENT" },
	{ "odirect-multi-a1536", "COHERENT" },
	{ "odirect-multi-a2048", "COHERENT" },
	{ "odirect-multi-a2560", "COHERENT" },
	{ "odirect-multi-a3072", "COHERENT" },
	{ "odirect-multi-a3584", "COHERENT" },
	{ "odirect-multi-ext4", "COHERENT" },
	{ NULL, NULL }
};

/*
 * The rules the "why" lines state, per era. 6.1: the fork-time copy is copy_present_page() when
 * page_needs_cow_for_dma() (70e806e4e645, 5.9); a write fault reuses an anon page that is
 * PageAnonExclusive (6c287605fd56, 5.19) or referenced only by its mapping (09854ba94c6a, 5.9);
 * hugetlb_wp() reuses a page mapped once; a read-only FOLL_PIN of an anon page that is not
 * exclusive takes the unshare fault, whose reuse rule is the write fault's (a7f226604170, 5.19).
 * 6.12: the same rules through folios.
 * The copy functions are listed innermost first, each followed by the caller a stack names when the
 * build inlined it: copy_present_page() into copy_pte_range() and that into copy_page_range(), and
 * wp_page_copy() into do_wp_page() (6.12's build inlines both copy functions; why.c says so in the
 * row), where do_wp_page() allocates only for the copy.
 */
/*
 * The rules of an era, one set of sentences, in the era's words: what the rules act on (a page or a
 * folio), what fork asks of a maybe-pinned one, where a write fault decides to reuse it, and what
 * takes a hugetlb page from the pool.
 */
#define ERA_RULES(unit, cow_for_dma, reuse, hugetlb_alloc) { \
	.fork_copies_pinned = "fork copies a maybe-pinned anon " unit " for the child: " \
			      cow_for_dma "(), asked on the PTE, THP and hugetlb paths", \
	.write_fault_reuse = "a write fault reuses an anon " unit " only if it is exclusive or " \
			     "its refcount is 1 (" reuse "); otherwise wp_page_copy copies", \
	.hugetlb_reuse = "a hugetlb write fault reuses the " unit " if it is mapped once " \
			 "(hugetlb_wp)", \
	.unshare = "a read-only pin of an anon " unit " that is not exclusive takes the unshare " \
		   "fault (gup_must_unshare), which reuses it as a write fault would or copies it " \
		   "(wp_page_copy), writing nothing", \
	.fork_copy_fns = "copy_present_page copy_huge_pmd copy_hugetlb_page_range " \
			 "copy_pte_range copy_page_range", \
	.fault_copy_fns = "wp_page_copy hugetlb_wp do_huge_pmd_wp_page do_wp_page", \
	.hugetlb_alloc_fn = hugetlb_alloc, \
}

static const struct era_rules rules_6_1 =
	ERA_RULES("page", "page_needs_cow_for_dma", "do_wp_page", "alloc_huge_page");

/* 6.12's alloc_hugetlb_folio() is what 6.1 calls alloc_huge_page(), now on folios. */
static const struct era_rules rules_6_12 =
	ERA_RULES("folio", "folio_needs_cow_for_dma", "wp_can_reuse_anon_folio",
		  "alloc_hugetlb_folio");

static const struct {
	const char *name;	/* as kernel-patches/<name>/ */
	unsigned int major, minor;
	const struct expectation *table;
	const struct era_rules *rules;
} versions[] = {
	/* Oldest first. */
	{ "6.1", 6, 1, v6_1, &rules_6_1 },
	{ "6.12", 6, 12, v6_12, &rules_6_12 },
};

#define N_VERSIONS (sizeof(versions) / sizeof(versions[0]))

const char *kernel_release(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	return u.release;
}

/*
 * The table for this kernel: the lab's own kernels by the registry name /lab/kernel.env gives, a
 * user's tree by the version it gives; -1 when none applies.
 */
static int table_index(void)
{
	static int index = -2;
	unsigned int major = 0, minor = 0;
	const char *name = lab_kernel_name(), *version = lab_kernel_version();

	if (index != -2)
		return index;
	index = -1;
	for (unsigned int i = 0; i < N_VERSIONS; i++)
		if (!strcmp(name, versions[i].name))
			return index = (int)i;
	if (strcmp(name, "src") || sscanf(version, "%u.%u", &major, &minor) != 2)
		return index;
	for (int i = N_VERSIONS - 1; i >= 0; i--)
		if (major > versions[i].major ||
		    (major == versions[i].major && minor >= versions[i].minor))
			return index = i;
	return index;
}

const char *expect_table_name(void)
{
	int i = table_index();

	return i < 0 ? "none" : versions[i].name;
}

const char *expect_verdict(const char *row)
{
	const struct expectation *e;

	for (int i = table_index(); i >= 0; i--)
		for (e = versions[i].table; e->row; e++)
			if (!strcmp(e->row, row))
				return e->verdict;
	return NULL;
}

const struct era_rules *expect_rules(void)
{
	int i = table_index();

	return i < 0 ? NULL : versions[i].rules;
}

void expect_tables(char *out, size_t n)
{
	size_t used = 0;

	out[0] = 0;
	for (unsigned int i = 0; i < N_VERSIONS && used < n; i++)
		used += snprintf(out + used, n - used, "%s%s", i ? " " : "", versions[i].name);
}
