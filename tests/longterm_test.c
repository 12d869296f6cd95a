// SPDX-License-Identifier: GPL-2.0
/*
 * A long-term pin is what FOLL_LONGTERM makes it: before GUP pins a page for the long term it
 * migrates it out of ZONE_MOVABLE (check_and_migrate_movable_pages()), so that a device holding it
 * for hours blocks neither memory hot-unplug nor compaction there. A short hold (pindma's GUP
 * mode, FOLL_GET) leaves it where it is. Judged by the page's PFN (pagemap) against the Movable
 * zone's span (/proc/zoneinfo), the kernel's word, not the driver's. The guest must have a
 * Movable zone: tests/run-all boots this program's guest with movablecore=.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

#define NPAGES 256

FIXTURE(movable)
{
	int fd;
	char *buf;
	uint64_t start, end;
	int page[2];	/* two pages of buf in the Movable zone */
};

FIXTURE_SETUP(movable)
{
	int n = 0;

	if (lab_movable_zone(&self->start, &self->end))
		SKIP(return, "no Movable zone: the guest was booted without movablecore=");
	self->fd = pindma_open();
	ASSERT_LE(0, self->fd);
	self->buf = mmap(NULL, NPAGES * LAB_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_EQ(0, madvise(self->buf, NPAGES * LAB_PAGE, MADV_NOHUGEPAGE));
	for (int i = 0; i < NPAGES && n < 2; i++) {
		uint64_t pfn;

		memset(self->buf + i * LAB_PAGE, 'm' + i % 8, LAB_PAGE);
		pfn = lab_pfn(self->buf + i * LAB_PAGE);
		if (pfn >= self->start && pfn < self->end)
			self->page[n++] = i;
	}
	ASSERT_EQ(2, n) TH_LOG("no two of %d fresh pages in the Movable zone [%#llx, %#llx)",
			       NPAGES, (unsigned long long)self->start,
			       (unsigned long long)self->end);
}

FIXTURE_TEARDOWN(movable)
{
	if (self->buf) {
		munmap(self->buf, NPAGES * LAB_PAGE);
		close(self->fd);
	}
}

/* PIN_LONGTERM moves the page out of the Movable zone first, its bytes with it. */
TEST_F(movable, longterm_pin_migrates_the_page_out_of_the_movable_zone)
{
	char *p = self->buf + self->page[0] * LAB_PAGE, want[LAB_PAGE];
	uint64_t before = lab_pfn(p), after;
	uint32_t h;

	/* 6.1's harness runs the body after a skip in the setup: skip here too. */
	LAB_NEEDS(self->end, "no Movable zone: the guest was booted without movablecore=");

	ASSERT_EQ(0, pindma_pin(self->fd, p, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE,
				&h));
	after = lab_pfn(p);
	EXPECT_NE(before, after) TH_LOG("the pinned page stayed at %#llx",
					(unsigned long long)before);
	EXPECT_TRUE(after < self->start || after >= self->end)
		TH_LOG("pinned long-term at %#llx, inside the Movable zone [%#llx, %#llx)",
		       (unsigned long long)after, (unsigned long long)self->start,
		       (unsigned long long)self->end);
	memset(want, 'm' + self->page[0] % 8, LAB_PAGE);
	EXPECT_EQ(0, memcmp(want, p, LAB_PAGE)) TH_LOG("the page's bytes did not move with it");
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
}

/* The control: a GUP-mode hold (FOLL_GET, not long-term) leaves the page where it is. */
TEST_F(movable, short_hold_leaves_the_page_in_the_movable_zone)
{
	char *p = self->buf + self->page[1] * LAB_PAGE;
	uint64_t before = lab_pfn(p);
	uint32_t h;

	/* 6.1's harness runs the body after a skip in the setup: skip here too. */
	LAB_NEEDS(self->end, "no Movable zone: the guest was booted without movablecore=");

	ASSERT_EQ(0, pindma_pin(self->fd, p, LAB_PAGE, PINDMA_MODE_GUP, PINDMA_PIN_WRITE, &h));
	EXPECT_EQ(before, lab_pfn(p));
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
}

LAB_HARNESS_MAIN
