// SPDX-License-Identifier: GPL-2.0
/*
 * pindma's page state file (/sys/kernel/debug/pindma/page_state, drivers/pindma/pagestate.c), the
 * kernel's view of one page that the rows' "why" reads: right for every page it reports, a THP's
 * tail included, and safe to read while the page's folio splits under it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/kernel-page-flags.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"

#define HPAGE (2UL << 20)
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"
#define SPLIT "/sys/kernel/debug/split_huge_pages"

/* A 2 MiB-aligned range of map (of 2 * HPAGE), faulted in as one THP; NULL when none came. */
static char *thp_in(char *map)
{
	char *thp = (char *)(((uintptr_t)map + HPAGE - 1) & ~(HPAGE - 1));

	if (lab_write_str(THP_ENABLED, "madvise") || madvise(thp, HPAGE, MADV_HUGEPAGE))
		return NULL;
	memset(thp, 't', HPAGE);
	if (!(lab_page_flags(thp) & (1ULL << KPF_THP)) ||
	    lab_pfn(thp) + 5 != lab_pfn(thp + 5 * LAB_PAGE))
		return NULL;
	return thp;
}

/*
 * A PMD-mapped THP keeps PG_anon_exclusive on its head page only (both kernels set it there for a
 * PMD mapping; a PTE mapping sets it on each page): the page state of any page of an exclusive THP
 * must say exclusive, a tail's as its head's; once fork shares the PMD, neither is. The map count
 * is the one this kernel keeps, named as it is.
 */
TEST(thp_tail_is_exclusive_as_its_head)
{
	char *map = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0), *thp, c;
	struct lab_page_state head, tail;
	int go[2];
	pid_t pid;

	ASSERT_NE(MAP_FAILED, map);
	thp = thp_in(map);
	ASSERT_NE(NULL, thp) TH_LOG("no THP for the range");
	ASSERT_EQ(0, lab_page_state(lab_pfn(thp), &head));
	ASSERT_EQ(0, lab_page_state(lab_pfn(thp + 5 * LAB_PAGE), &tail));
	EXPECT_EQ(1, head.anon_exclusive);
	EXPECT_EQ(1, tail.anon_exclusive) TH_LOG("a tail of an exclusive PMD-mapped THP");
	/* 6.1 keeps the page's count, 6.12 the folio's: mapped once by one PMD, both say 1. */
	if (!strcmp(lab_kernel_name(), "6.1")) {
		EXPECT_EQ(1, tail.page_mapcount);
		EXPECT_EQ(-1, tail.folio_mapcount);
	} else if (!strcmp(lab_kernel_name(), "6.12")) {
		EXPECT_EQ(-1, tail.page_mapcount);
		EXPECT_EQ(1, tail.folio_mapcount);
	}
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	if (!pid)
		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, lab_page_state(lab_pfn(thp), &head));
	ASSERT_EQ(0, lab_page_state(lab_pfn(thp + 5 * LAB_PAGE), &tail));
	EXPECT_EQ(0, head.anon_exclusive) TH_LOG("shared with the child");
	EXPECT_EQ(0, tail.anon_exclusive) TH_LOG("shared with the child");
	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	munmap(map, 2 * HPAGE);
}

#define SPLITS 50

struct shared {
	volatile uint64_t pfn;	/* the THP's first PFN while it lives, 0 between THPs */
	volatile int stop;
	volatile long reads, failed;
};

/* The reader: page after page of the current THP, as fast as it can, until told to stop. */
static int reader(struct shared *sh)
{
	struct lab_page_state st;

	while (!sh->stop) {
		uint64_t pfn = sh->pfn;

		for (int i = 0; pfn && i < 512; i += 37) {
			/* EAGAIN: the folio changed under every try; ENXIO: the page went offline. */
			if (lab_page_state(pfn + i, &st) && errno != EAGAIN)
				sh->failed++;
			sh->reads++;
		}
	}
	return 0;
}

FIXTURE(split)
{
};

FIXTURE_SETUP(split)
{
	/* The reader must run while the split does, not only between its time slices. */
	LAB_NEEDS_CPUS(2);
}

FIXTURE_TEARDOWN(split)
{
}

/*
 * The page state of THPs while the kernel splits them (debugfs split_huge_pages, the folio split
 * itself, not only its PMD), SPLITS times: no read may fail for anything but a folio that kept
 * changing, and the console must stay clean (vm/boot): 6.12's folio_large_mapcount() WARNs when the
 * folio it was asked about split meanwhile, so the file must not ask it. The debug kernel takes
 * minutes where the normal one takes seconds.
 */
TEST_F_TIMEOUT(split, reading_thps_while_they_split_stays_clean, 600)
{
	struct shared *sh = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);
	int split = open(SPLIT, O_WRONLY), thps = 0, splits = 0, status;
	char cmd[96];
	pid_t pid;

	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_LE(0, split) TH_LOG(SPLIT ": debugfs and THP needed");
	memset((void *)sh, 0, sizeof(*sh));
	pid = fork();
	if (!pid)
		_exit(reader(sh));
	ASSERT_LT(0, pid);
	for (int i = 0; i < SPLITS; i++) {
		char *map = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *thp;

		ASSERT_NE(MAP_FAILED, map);
		thp = thp_in(map);
		if (thp) {
			thps++;
			sh->pfn = lab_pfn(thp);
			snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(), (unsigned long)thp,
				 (unsigned long)thp + HPAGE);
			EXPECT_EQ((ssize_t)strlen(cmd), write(split, cmd, strlen(cmd)));
			/*
			 * The kernel skips a folio with a reference it cannot account for, such as
			 * a per-CPU LRU batch's on another CPU (seen, rarely, on the debug kernel).
			 */
			splits += !(lab_page_flags(thp) & (1ULL << KPF_THP));
		}
		munmap(map, 2 * HPAGE);
		sh->pfn = 0;
	}
	sh->stop = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%d of %d THPs split, %ld page states read beside them", splits, thps, sh->reads);
	EXPECT_LT(SPLITS / 2, splits) TH_LOG("too few THPs came or split");
	EXPECT_LT(0, sh->reads);
	EXPECT_EQ(0, sh->failed);
	close(split);
}

LAB_HARNESS_MAIN
