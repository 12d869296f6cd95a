// SPDX-License-Identifier: GPL-2.0
/*
 * Expected verdicts, one table per kernel version. The 6.1 table is complete; each later table
 * holds only the rows whose expectation differs from the table before it, and every such entry
 * names the upstream commit that changed the behaviour. A kernel gets the table of the newest
 * version not newer than it, applied over the older ones; a user's tree is matched by version
 * like any other. Rows are grouped by the program that plays them.
 */
#include "expect.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

struct expectation {
	const char *row;
	const char *verdict;
};

/* Linux 6.1: the lab's base kernel; every row is here. */
static const struct expectation v6_1[] = {
	/* dontfork_demo (demo/scenario.c) */
	{ "gup", "ORPHANED" },
	{ "gup-child-exited", "ORPHANED" },
	{ "gup-dontfork", "COHERENT" },
	{ "gup-dontfork-dofork", "ORPHANED" },
	{ "pin", "COHERENT" },
	{ "pin-dontfork", "COHERENT" },
	{ "gup-leak", "ORPHANED" },
	{ "mlock", "ORPHANED" },
	{ "mlock-dontfork", "COHERENT" },
	{ "pin-switch-on", "ORPHANED" },
	{ "pin-switch-on-dontfork", "COHERENT" },
	{ "pin-switch-off", "COHERENT" },

	/* verbs_demo (demo/verbs_demo.c) */
	{ "switch-off", "COHERENT" },
	{ "switch-on", "ORPHANED" },
	{ "switch-on-ibv_fork_init", "COHERENT" },
	{ "switch-on-RDMAV_FORK_SAFE", "COHERENT" },
	/*
	 * What rdma-core's fork support costs, from libibverbs/memory.c: ibv_fork_init() sets
	 * up its range tree whatever the kernel reports (ibv_is_fork_initialized() says
	 * UNNEEDED while the kernel copies on fork, but ibv_reg_mr() still marks whole pages
	 * MADV_DONTFORK), so a sub-page MR takes the rest of its page from a child on every
	 * kernel; after a registration without it, ibv_fork_init() is EINVAL (too_late).
	 */
	{ "switch-on-subpage-mr", "SIGSEGV" },
	{ "switch-off-subpage-mr", "SIGSEGV" },
	{ "switch-on-fork_init-after-reg", "EINVAL" },
	{ "switch-off-fork_init-after-reg", "EINVAL" },
	/* The freed page is still MADV_DONTFORK until ibv_dereg_mr(). */
	{ "switch-off-free-before-dereg", "SIGSEGV" },
	/*
	 * Each MR's MADV_DONTFORK splits the mapping until vm.max_map_count; mm/madvise.c turns
	 * the split's ENOMEM into EAGAIN. Without fork support nothing is split.
	 */
	{ "switch-off-mr-splits-vmas", "EAGAIN" },
	{ "switch-off-mr-splits-vmas-no-init", "all-ok" },
	/*
	 * A 4 KiB MR in a hugetlb page: without RDMAV_HUGEPAGES_SAFE rdma-core madvises 4 KiB,
	 * which would split the VMA inside a huge page (hugetlb_vm_op_split(): EINVAL); with it,
	 * the whole huge page is DONTFORK and the child has none of it.
	 */
	{ "switch-off-hugetlb-mr", "EINVAL" },
	{ "switch-off-hugetlb-mr-hp-safe", "SIGSEGV" },

	/* fadvise_demo (demo/fadvise_demo.c): what the call leaves of 8 MiB of dirty pages */
	{ "fadvise-async-write", "IN FLIGHT" },
	{ "fadvise-write-wait", "NOTHING" },
	{ "fadvise-wait-write-wait", "WRITTEN" },
	{ "fadvise-sync-file-range", "IN FLIGHT" },
	{ "fadvise-msync-async", "NOTHING" },
	{ "fadvise-control", "NOTHING" },

	/* odirect_demo (demo/odirect.c): direct I/O takes its pages with FOLL_GET on 6.1 */
	{ "odirect-no-fork", "COHERENT" },
	{ "odirect-fork", "ORPHANED" },
	{ "odirect-dontfork", "COHERENT" },
	{ "odirect-own-page", "COHERENT" },
	/* ext4's direct I/O (iomap) hands the pages to the same bio_iov_iter_get_pages() */
	{ "odirect-ext4-no-fork", "COHERENT" },
	{ "odirect-ext4-fork", "ORPHANED" },
	{ "odirect-ext4-dontfork", "COHERENT" },
	{ "odirect-ext4-own-page", "COHERENT" },

	{ NULL, NULL }
};

/* Linux 6.12: what differs from 6.1, each with the commit that changed it. */
static const struct expectation v6_12[] = {
	/* 920756a3306a (6.4) "block: Convert bio_iov_iter_get_pages to use iov_iter_extract_pages" */
	{ "odirect-fork", "COHERENT" },
	{ "odirect-ext4-fork", "COHERENT" },
	{ NULL, NULL }
};

static const struct {
	unsigned int major, minor;
	const char *name;
	const struct expectation *table;
} versions[] = {
	/* Oldest first. */
	{ 6, 1, "6.1", v6_1 },
	{ 6, 12, "6.12", v6_12 },
};

#define N_VERSIONS (sizeof(versions) / sizeof(versions[0]))

const char *lab_kernel_release(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	return u.release;
}

/* Index of the newest table not newer than the running kernel; -1 when older than all. */
static int table_index(void)
{
	unsigned int major = 0, minor = 0;
	int i;

	if (sscanf(lab_kernel_release(), "%u.%u", &major, &minor) != 2)
		return -1;
	for (i = N_VERSIONS - 1; i >= 0; i--)
		if (major > versions[i].major ||
		    (major == versions[i].major && minor >= versions[i].minor))
			return i;
	return -1;
}

const char *lab_expect_table(void)
{
	int i = table_index();

	return i < 0 ? "none" : versions[i].name;
}

const char *lab_expect(const char *row)
{
	const struct expectation *e;
	int i;

	for (i = table_index(); i >= 0; i--)
		for (e = versions[i].table; e->row; e++)
			if (!strcmp(e->row, row))
				return e->verdict;
	return NULL;
}
