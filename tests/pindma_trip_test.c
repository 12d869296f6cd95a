// SPDX-License-Identifier: GPL-2.0
/*
 * pindma's round trips: pin, QUERY against pagemap, DMA both ways across page boundaries and
 * whole pages, unpin, for both pin modes and both engines; closing the file unpins everything.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

#define NPAGES 4
#define SIZE (NPAGES * LAB_PAGE)

FIXTURE(trip)
{
	int fd;
	char *buf;
};

FIXTURE_VARIANT(trip)
{
	uint32_t mode;
	uint32_t engine;
};

FIXTURE_VARIANT_ADD(trip, gup_cpu) { .mode = PINDMA_MODE_GUP, .engine = PINDMA_ENGINE_CPU };
FIXTURE_VARIANT_ADD(trip, gup_edu) { .mode = PINDMA_MODE_GUP, .engine = PINDMA_ENGINE_EDU };
FIXTURE_VARIANT_ADD(trip, pin_cpu) {
	.mode = PINDMA_MODE_PIN_LONGTERM, .engine = PINDMA_ENGINE_CPU };
FIXTURE_VARIANT_ADD(trip, pin_edu) {
	.mode = PINDMA_MODE_PIN_LONGTERM, .engine = PINDMA_ENGINE_EDU };

FIXTURE_SETUP(trip)
{
	self->fd = pindma_open();
	ASSERT_LE(0, self->fd);
	self->buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	for (unsigned long i = 0; i < SIZE; i++)
		self->buf[i] = (char)(i * 7 + 1);
}

FIXTURE_TEARDOWN(trip)
{
	close(self->fd);
	munmap(self->buf, SIZE);
}

/* Pin, check PFNs against pagemap, let the device write and read across a page boundary. */
TEST_F(trip, round_trip_across_pages)
{
	long vmpin = lab_status_kb("VmPin");
	uint32_t engine = variant->engine, h;
	char out[300], in[300];
	uint64_t pfn;

	ASSERT_EQ(0, pindma_pin(self->fd, self->buf, SIZE, variant->mode, PINDMA_PIN_WRITE, &h));
	EXPECT_EQ(vmpin + (long)(SIZE / 1024), lab_status_kb("VmPin"));
	for (uint32_t i = 0; i < NPAGES; i++) {
		ASSERT_EQ(0, pindma_query(self->fd, h, i, &pfn));
		EXPECT_EQ(lab_pfn(self->buf + i * LAB_PAGE), pfn) TH_LOG("page %u", i);
	}

	/* The device writes 300 bytes straddling pages 1 and 2. */
	for (int i = 0; i < 300; i++)
		out[i] = (char)(0xa0 ^ i);
	ASSERT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_WRITE, h, 2 * LAB_PAGE - 150, out, 300,
				&engine));
	EXPECT_EQ(variant->engine, engine);
	EXPECT_EQ(0, memcmp(self->buf + 2 * LAB_PAGE - 150, out, 300));
	EXPECT_EQ((char)((2 * LAB_PAGE - 151) * 7 + 1), self->buf[2 * LAB_PAGE - 151]);
	EXPECT_EQ((char)((2 * LAB_PAGE + 150) * 7 + 1), self->buf[2 * LAB_PAGE + 150]);

	/* The CPU writes, the device reads it back across pages 2 and 3. */
	memset(self->buf + 3 * LAB_PAGE - 100, 'c', 200);
	ASSERT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 3 * LAB_PAGE - 110, in, 220,
				&engine));
	EXPECT_EQ((char)((3 * LAB_PAGE - 110) * 7 + 1), in[0]);
	for (int i = 10; i < 210; i++) {
		if (in[i] != 'c')
			ASSERT_EQ(-1, i) TH_LOG("byte %d is %#x, not 'c'", i, in[i]);
	}

	ASSERT_EQ(0, pindma_unpin(self->fd, h));
	EXPECT_EQ(vmpin, lab_status_kb("VmPin"));
}

/* A whole page in one request each way: the edu engine must split it (4096 would abort QEMU). */
TEST_F(trip, whole_page_transfer)
{
	uint32_t engine = variant->engine, h;
	char *page = malloc(LAB_PAGE);

	ASSERT_NE(NULL, page);
	memset(page, 'w', LAB_PAGE);
	ASSERT_EQ(0, pindma_pin(self->fd, self->buf, SIZE, variant->mode, PINDMA_PIN_WRITE, &h));
	ASSERT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_WRITE, h, LAB_PAGE, page, LAB_PAGE,
				&engine));
	EXPECT_EQ(0, memcmp(self->buf + LAB_PAGE, page, LAB_PAGE));
	/* And the device reads a whole page back. */
	memset(self->buf + 2 * LAB_PAGE, 'r', LAB_PAGE);
	memset(page, 0, LAB_PAGE);
	ASSERT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 2 * LAB_PAGE, page, LAB_PAGE,
				&engine));
	EXPECT_EQ(0, memcmp(self->buf + 2 * LAB_PAGE, page, LAB_PAGE));
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
	free(page);
}

/* Closing the file unpins everything it held and returns the VmPin charge. */
TEST(close_unpins_everything)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long vmpin = lab_status_kb("VmPin");
	int fd = pindma_open(), watch = pindma_open();
	struct pindma_info before = info(watch);
	uint32_t h;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, watch);
	ASSERT_EQ(0, pindma_pin(fd, buf, SIZE, PINDMA_MODE_GUP, PINDMA_PIN_WRITE, &h));
	ASSERT_EQ(0, pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h));
	EXPECT_EQ(vmpin + (long)(SIZE + LAB_PAGE) / 1024, lab_status_kb("VmPin"));
	EXPECT_EQ(before.handles + 2, info(watch).handles);
	EXPECT_EQ(before.pages_held + NPAGES + 1, info(watch).pages_held);
	close(fd);
	EXPECT_EQ(vmpin, lab_status_kb("VmPin"));
	EXPECT_EQ(before.handles, info(watch).handles);
	EXPECT_EQ(before.pages_held, info(watch).pages_held);
	close(watch);
}
LAB_HARNESS_MAIN
