// SPDX-License-Identifier: GPL-2.0
/*
 * pindma leaks nothing over a thousand cycles, judged by exact oracles (the FOLL_PIN counters,
 * copy-on-write's view of the pages' references) next to VmPin and the driver's own counters, and
 * its kernel memory by the kernel's kmalloc caches, object by object (/proc/slabinfo); and the
 * reference oracle is itself seen to work. Many processes with forks at once are the
 * fuzzer's (fuzz_test), judged by the FOLL_PIN counters, the LRU pages nothing owns, VmPin and
 * every child's exit.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

#define NPAGES 4
#define SIZE (NPAGES * LAB_PAGE)

/*
 * The kernel memory a thousand cycles may leave, by the kmalloc caches' objects in use
 * (lab_kmalloc_slabs()): no one cache may grow by CYCLES / 4. One object leaked per cycle, a
 * DMA's bounce buffer or a handle of 72 bytes, is CYCLES objects in one cache; SLUB's per-CPU
 * slabs, which /proc/slabinfo counts as in use, move a cache by tens.
 */
#define CYCLES 1000
#define SLAB_BOUND (CYCLES / 4)

#define EXPECT_NO_KMALLOC_GROWTH(before, what) do { \
	struct lab_slabs after_; \
	const char *cache_; \
	long grew_; \
	ASSERT_EQ(0, lab_kmalloc_slabs(&after_)); \
	grew_ = lab_kmalloc_growth(&(before), &after_, &cache_); \
	TH_LOG("the kmalloc cache that grew most over %d %s: %s, by %ld objects", CYCLES, what, \
	       cache_, grew_); \
	EXPECT_GT(SLAB_BOUND, grew_) \
		TH_LOG("%s grew by %ld objects over %d %s (the bound: %d)", cache_, grew_, \
		       CYCLES, what, SLAB_BOUND); \
} while (0)

/*
 * The exact leak oracle itself: a page the driver holds in GUP mode is seen as referenced, and
 * seen no longer once unpinned; a FOLL_PIN pin is left to the FOLL_PIN counters.
 */
TEST(referenced_pages_oracle_sees_a_held_gup_pin)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = pindma_open();
	long pins = lab_foll_pins();
	uint32_t h;

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 3, SIZE);
	EXPECT_EQ(0, lab_referenced_pages(buf, SIZE));
	ASSERT_EQ(0, pindma_pin(fd, buf + LAB_PAGE, 2 * LAB_PAGE, PINDMA_MODE_GUP, PINDMA_PIN_WRITE,
				&h));
	EXPECT_EQ(2, lab_referenced_pages(buf, SIZE));
	ASSERT_EQ(0, pindma_unpin(fd, h));
	EXPECT_EQ(0, lab_referenced_pages(buf, SIZE));
	ASSERT_EQ(0, pindma_pin(fd, buf, SIZE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h));
	EXPECT_EQ(pins + NPAGES, lab_foll_pins());
	ASSERT_EQ(0, pindma_unpin(fd, h));
	EXPECT_EQ(pins, lab_foll_pins());
	close(fd);
	munmap(buf, SIZE);
}

/* One pin/DMA/unpin cycle, its mode alternating with i: 0, or -1. */
static int cycle(int fd, char *buf, int i)
{
	uint32_t mode = i & 1 ? PINDMA_MODE_GUP : PINDMA_MODE_PIN_LONGTERM;
	uint32_t engine = PINDMA_ENGINE_CPU, h;
	char b[64] = "cycle";

	if (pindma_pin(fd, buf, SIZE, mode, PINDMA_PIN_WRITE, &h))
		return -1;
	if (pindma_dma(fd, PINDMA_IOC_DMA_WRITE, h, i % SIZE, b, 32, &engine) ||
	    pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 77, b, 64, &engine)) {
		pindma_unpin(fd, h);
		return -1;
	}
	return pindma_unpin(fd, h);
}

/*
 * 1000 pin/DMA/unpin cycles on the same pages leave nothing behind. A reference leaked per
 * cycle would pin those 4 pages, 16 KiB, which MemFree cannot tell from noise: the oracles are
 * exact instead, the kernel's FOLL_PIN counters and copy-on-write's view of the pages'
 * references (lab_referenced_pages()), next to VmPin and the driver's own counters. The kernel
 * memory the cycles allocate is judged apart (thousand_dma_cycles_leave_no_slab).
 */
TEST(thousand_cycles_leak_nothing)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = pindma_open();
	struct pindma_info before;
	long vmpin, pins = lab_foll_pins();

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, SIZE);
	/* One cycle first: the caches' slabs for what a cycle allocates exist before the count. */
	ASSERT_EQ(0, cycle(fd, buf, 0));
	before = info(fd);
	vmpin = lab_status_kb("VmPin");
	for (int i = 0; i < CYCLES; i++) {
		ASSERT_EQ(0, cycle(fd, buf, i)) TH_LOG("cycle %d", i);
	}
	EXPECT_EQ(pins, lab_foll_pins());
	EXPECT_EQ(0, lab_referenced_pages(buf, SIZE));
	EXPECT_EQ(vmpin, lab_status_kb("VmPin"));
	EXPECT_EQ(before.handles, info(fd).handles);
	EXPECT_EQ(before.pages_held, info(fd).pages_held);
	close(fd);
	munmap(buf, SIZE);
}

/*
 * The kmalloc caches object by object come from /proc/slabinfo, which SLUB keeps only with
 * SLUB_DEBUG: 6.12's tinyconfig base selects SLUB_TINY, which leaves it out. On the debug kernel
 * KASAN's quarantine holds freed objects for a while (1000 cycles grew kmalloc-4k by 941 with
 * nothing leaked); kmemleak judges leaks there.
 */
#define NEEDS_SLABINFO() do { \
	LAB_NEEDS(!access("/proc/slabinfo", R_OK), \
		  "this kernel has no /proc/slabinfo (SLUB_TINY leaves SLUB_DEBUG out)"); \
	LAB_NEEDS(access("/sys/kernel/debug/kmemleak", F_OK), "the debug kernel: KASAN's " \
		  "quarantine keeps freed objects counted (kmemleak judges leaks there)"); \
} while (0)

/*
 * The kernel memory 1000 pin/DMA/unpin cycles allocate, which none of the oracles above sees and
 * only kmemleak (the debug flavour) would: no kmalloc cache may grow by SLAB_BOUND objects (a
 * DMA's bounce buffer: kmalloc-4k).
 */
TEST(thousand_dma_cycles_leave_no_slab)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = pindma_open();
	struct lab_slabs slabs;

	NEEDS_SLABINFO();
	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, SIZE);
	/* One cycle first: the caches' slabs for what a cycle allocates exist before the count. */
	ASSERT_EQ(0, cycle(fd, buf, 0));
	ASSERT_EQ(0, lab_kmalloc_slabs(&slabs)) TH_LOG("reading /proc/slabinfo");
	for (int i = 0; i < CYCLES; i++) {
		ASSERT_EQ(0, cycle(fd, buf, i)) TH_LOG("cycle %d", i);
	}
	EXPECT_NO_KMALLOC_GROWTH(slabs, "pin/DMA/unpin cycles");
	close(fd);
	munmap(buf, SIZE);
}

/*
 * The driver's own kernel memory for a pin: a thousand pins of 64 pages (a page array of 512
 * bytes, a handle of 72) must not grow any kmalloc cache by SLAB_BOUND objects.
 */
#define BIG (64 * LAB_PAGE)

TEST(thousand_pins_leave_no_slab)
{
	char *buf = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = pindma_open();
	struct lab_slabs slabs;
	uint32_t h;

	NEEDS_SLABINFO();
	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 2, BIG);
	/* One cycle first: the caches' slabs for what a pin allocates exist before the count. */
	ASSERT_EQ(0, pindma_pin(fd, buf, BIG, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h));
	ASSERT_EQ(0, pindma_unpin(fd, h));
	ASSERT_EQ(0, lab_kmalloc_slabs(&slabs)) TH_LOG("reading /proc/slabinfo");
	for (int i = 0; i < CYCLES; i++) {
		ASSERT_EQ(0, pindma_pin(fd, buf, BIG, i & 1 ? PINDMA_MODE_GUP :
					PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h));
		ASSERT_EQ(0, pindma_unpin(fd, h));
	}
	EXPECT_NO_KMALLOC_GROWTH(slabs, "pins and unpins");
	close(fd);
	munmap(buf, BIG);
}

LAB_HARNESS_MAIN
