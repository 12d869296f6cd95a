// SPDX-License-Identifier: GPL-2.0
/*
 * pindma's round trips: pin, QUERY against pagemap, DMA both ways across page boundaries and
 * whole pages, unpin, for both pin modes and both engines; closing the file unpins everything,
 * and only the last close: pins outlive their process while a forked child keeps the file.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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

/* The address in edu's own space of its DMA buffer (QEMU's edu: 0x40000, 4 KiB). */
#define EDU_BUF 0x40000ULL

static uint64_t bus_addr(const char *p)
{
	return (lab_pfn(p) << 12) + ((uintptr_t)p & (LAB_PAGE - 1));
}

/*
 * What the edu device did, by evidence the driver does not write: the kernel's count of edu's
 * interrupts (one per transfer: two per chunk, RAM to its buffer and back) since irqs, none for
 * the CPU engine; and edu's own DMA registers, read from its BAR, holding its last transfer (the
 * last chunk's second). After a device write (last: the last chunk's first byte) that moved
 * last_len bytes out of edu's buffer into the page (its bus address: pagemap's PFN; 64-bit edu,
 * no bounce). After a device read the page went into edu's buffer first, and the buffer's
 * last_len bytes then to the kernel's end of the copy, which is none of the test's pages (last:
 * its first page): a driver that reads with the CPU and raises edu's interrupt by hand leaves
 * the registers of the transfer before.
 */
static void edu_moved(struct __test_metadata *_metadata, uint32_t engine, long long irqs,
		      int chunks, bool write, const char *last, uint64_t last_len)
{
	uint64_t src, dst, count;

	if (engine != PINDMA_ENGINE_EDU) {
		EXPECT_EQ(irqs, lab_edu_irqs()) TH_LOG("the CPU engine made edu interrupt");
		return;
	}
	EXPECT_EQ(irqs + 2 * chunks, lab_edu_irqs()) TH_LOG("edu's interrupts, %d chunks", chunks);
	ASSERT_EQ(0, lab_edu_dma_regs(&src, &dst, &count));
	EXPECT_EQ(EDU_BUF, src) TH_LOG("edu's last transfer after a device %s was not out of its "
				       "buffer", write ? "write" : "read");
	EXPECT_EQ(last_len, count) TH_LOG("edu's last transfer after a device %s moved %llu bytes",
					  write ? "write" : "read", (unsigned long long)count);
	if (write) {
		EXPECT_EQ(bus_addr(last), dst) TH_LOG("edu's last destination is not the page it wrote");
		return;
	}
	for (int i = 0; i < NPAGES; i++) {
		EXPECT_NE(bus_addr(last + i * LAB_PAGE) & ~(LAB_PAGE - 1), dst & ~(LAB_PAGE - 1))
			TH_LOG("edu's last transfer after a device read went into page %d", i);
	}
}

/* Pin, check PFNs against pagemap, let the device write and read across a page boundary. */
TEST_F(trip, round_trip_across_pages)
{
	long vmpin = lab_status_kb("VmPin");
	uint32_t engine = variant->engine, h;
	char out[300], in[300];
	long long irqs;
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
	irqs = lab_edu_irqs();
	ASSERT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_WRITE, h, 2 * LAB_PAGE - 150, out, 300,
				&engine));
	EXPECT_EQ(variant->engine, engine);
	edu_moved(_metadata, variant->engine, irqs, 2, true, self->buf + 2 * LAB_PAGE, 150);
	EXPECT_EQ(0, memcmp(self->buf + 2 * LAB_PAGE - 150, out, 300));
	EXPECT_EQ((char)((2 * LAB_PAGE - 151) * 7 + 1), self->buf[2 * LAB_PAGE - 151]);
	EXPECT_EQ((char)((2 * LAB_PAGE + 150) * 7 + 1), self->buf[2 * LAB_PAGE + 150]);

	/* The CPU writes, the device reads it back across pages 2 and 3. */
	memset(self->buf + 3 * LAB_PAGE - 100, 'c', 200);
	irqs = lab_edu_irqs();
	ASSERT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 3 * LAB_PAGE - 110, in, 220,
				&engine));
	/* Chunks of 110 bytes each side of the page boundary. */
	edu_moved(_metadata, variant->engine, irqs, 2, false, self->buf, 110);
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
	long long irqs;

	ASSERT_NE(NULL, page);
	memset(page, 'w', LAB_PAGE);
	ASSERT_EQ(0, pindma_pin(self->fd, self->buf, SIZE, variant->mode, PINDMA_PIN_WRITE, &h));
	irqs = lab_edu_irqs();
	ASSERT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_WRITE, h, LAB_PAGE, page, LAB_PAGE,
				&engine));
	EXPECT_EQ(0, memcmp(self->buf + LAB_PAGE, page, LAB_PAGE));
	/* edu's chunks: 4095 bytes, then the page's last byte. */
	edu_moved(_metadata, variant->engine, irqs, 2, true, self->buf + 2 * LAB_PAGE - 1, 1);
	/* And the device reads a whole page back. */
	memset(self->buf + 2 * LAB_PAGE, 'r', LAB_PAGE);
	memset(page, 0, LAB_PAGE);
	irqs = lab_edu_irqs();
	ASSERT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 2 * LAB_PAGE, page, LAB_PAGE,
				&engine));
	edu_moved(_metadata, variant->engine, irqs, 2, false, self->buf, 1);
	EXPECT_EQ(0, memcmp(self->buf + 2 * LAB_PAGE, page, LAB_PAGE));
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
	free(page);
}

/*
 * Closing the file unpins everything it held and returns the VmPin charge. VmPin and INFO are the
 * driver's own bookkeeping; the kernel's FOLL_PIN counters and its copy-on-write (a page still
 * referenced is copied on write) say whether the pages were really let go.
 */
TEST(close_unpins_everything)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long vmpin = lab_status_kb("VmPin"), pins = lab_foll_pins();
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
	EXPECT_EQ(pins + 1, lab_foll_pins());
	close(fd);
	EXPECT_EQ(vmpin, lab_status_kb("VmPin"));
	EXPECT_EQ(before.handles, info(watch).handles);
	EXPECT_EQ(before.pages_held, info(watch).pages_held);
	EXPECT_EQ(pins, lab_foll_pins()) TH_LOG("FOLL_PIN acquired and released differ");
	EXPECT_EQ(0, lab_referenced_pages(buf, SIZE)) TH_LOG("pages still referenced after close");
	close(watch);
}
/* The pinning process: pin, fork a child that keeps the file, exit with the pin held. */
static int pin_fork_and_exit(int ready, int go)
{
	char *buf = lab_map_anon(SIZE);
	int fd = pindma_open();
	long report[2];
	uint32_t h;
	pid_t child;
	char c;

	if (buf == MAP_FAILED || fd < 0 ||
	    pindma_pin(fd, buf, SIZE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h))
		return 10;
	child = fork();
	if (child < 0)
		return 11;
	if (!child) {
		/* The pins are not charged to the child, which holds them through the file. */
		report[0] = getpid();
		report[1] = lab_status_kb("VmPin");
		if (write(ready, report, sizeof(report)) != sizeof(report) || read(go, &c, 1) != 1)
			_exit(12);
		close(fd);
		_exit(0);
	}
	return 0;
}

/*
 * A process's pins live as long as its file, not as long as the process: a child it forked
 * keeps the file and, with it, the pins, charged to the exited process's address space, as
 * ib_uverbs's memory regions are (docs/driver.md). The last close releases them.
 */
TEST(pins_outlive_their_process_while_a_forked_child_keeps_the_file)
{
	int watch = pindma_open(), ready[2], go[2], status;
	long pins = lab_foll_pins(), report[2];
	struct pindma_info before = info(watch);
	pid_t pid;

	ASSERT_LE(0, watch);
	/* The child outlives its parent: it is ours to reap. */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(pin_fork_and_exit(ready[1], go[0]));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed", WEXITSTATUS(status));
	ASSERT_EQ((ssize_t)sizeof(report), read(ready[0], report, sizeof(report)));
	EXPECT_EQ(0, report[1]) TH_LOG("the child's VmPin");

	/* The pinning process is gone, its pins are not: the kernel's and the driver's counts. */
	EXPECT_EQ(pins + NPAGES, lab_foll_pins());
	EXPECT_EQ(before.handles + 1, info(watch).handles);
	EXPECT_EQ(before.pages_held + NPAGES, info(watch).pages_held);

	ASSERT_EQ(1, write(go[1], "x", 1));
	ASSERT_EQ(report[0], waitpid(report[0], &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("child status %#x", status);
	EXPECT_EQ(pins, lab_foll_pins());
	EXPECT_EQ(before.handles, info(watch).handles);
	EXPECT_EQ(before.pages_held, info(watch).pages_held);
	close(watch);
}

LAB_HARNESS_MAIN
