// SPDX-License-Identifier: GPL-2.0
/*
 * pindma's ABI: every bad input gets its own errno and changes nothing; pin, query,
 * DMA and unpin round trips for both pin modes and both engines; accounting in VmPin
 * and RLIMIT_MEMLOCK; handle ownership; no leaks over many cycles and many processes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_lib.h"

#define NPAGES 4
#define SIZE (NPAGES * LAB_PAGE)

static struct pindma_info info(int fd)
{
	struct pindma_info i = { 0 };

	ioctl(fd, PINDMA_IOC_INFO, &i);
	return i;
}

FIXTURE(dev)
{
	int fd;
	char *buf;
	long vmpin;
	long pins;
	struct pindma_info start;
};

FIXTURE_SETUP(dev)
{
	self->fd = pindma_open();
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/pindma: %s", strerror(-self->fd));
	self->buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, SIZE);
	self->vmpin = lab_status_kb("VmPin");
	ASSERT_LE(0, self->vmpin);
	self->pins = lab_foll_pins();
	self->start = info(self->fd);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
	munmap(self->buf, SIZE);
}

/*
 * Failed calls must leave everything exactly where it was: the driver's counters, and what the
 * kernel sees independently of the driver: VmPin, the FOLL_PIN counters and no reference left
 * on the buffer's pages (GUP mode takes plain references, which only copy-on-write can see).
 */
static void expect_unchanged(struct __test_metadata *_metadata, FIXTURE_DATA(dev) *self)
{
	struct pindma_info now = info(self->fd);

	EXPECT_EQ(self->vmpin, lab_status_kb("VmPin"));
	EXPECT_EQ(self->pins, lab_foll_pins());
	EXPECT_EQ(0, lab_referenced_pages(self->buf, SIZE));
	EXPECT_EQ(self->start.handles, now.handles);
	EXPECT_EQ(self->start.pages_held, now.pages_held);
}

#define EXPECT_PIN_ERR(err, addr, len, mode, flags) do { \
	uint32_t h_ = 0; \
	EXPECT_EQ(-(err), pindma_pin(self->fd, addr, len, mode, flags, &h_)); \
	expect_unchanged(_metadata, self); \
} while (0)

TEST_F(dev, zero_length_is_einval)
{
	EXPECT_PIN_ERR(EINVAL, self->buf, 0, PINDMA_MODE_GUP, 0);
}

TEST_F(dev, unaligned_address_is_einval)
{
	EXPECT_PIN_ERR(EINVAL, self->buf + 8, LAB_PAGE, PINDMA_MODE_GUP, 0);
}

TEST_F(dev, wrapping_length_is_eoverflow)
{
	EXPECT_PIN_ERR(EOVERFLOW, self->buf, UINT64_MAX - LAB_PAGE, PINDMA_MODE_GUP, 0);
	EXPECT_PIN_ERR(EOVERFLOW, (void *)(-LAB_PAGE), 2 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0);
}

TEST_F(dev, too_many_pages_is_e2big)
{
	EXPECT_PIN_ERR(E2BIG, self->buf, (PINDMA_MAX_PAGES + 1ULL) * LAB_PAGE, PINDMA_MODE_GUP, 0);
}

TEST_F(dev, unknown_mode_or_flag_is_einval)
{
	EXPECT_PIN_ERR(EINVAL, self->buf, LAB_PAGE, 0, 0);
	EXPECT_PIN_ERR(EINVAL, self->buf, LAB_PAGE, 3, 0);
	EXPECT_PIN_ERR(EINVAL, self->buf, LAB_PAGE, PINDMA_MODE_GUP, 1U << 5);
	EXPECT_PIN_ERR(EINVAL, self->buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, ~0U);
}

TEST_F(dev, unmapped_range_is_efault)
{
	ASSERT_EQ(0, munmap(self->buf + 2 * LAB_PAGE, LAB_PAGE));
	EXPECT_PIN_ERR(EFAULT, self->buf, SIZE, PINDMA_MODE_GUP, PINDMA_PIN_WRITE);
	EXPECT_PIN_ERR(EFAULT, self->buf, SIZE, PINDMA_MODE_PIN_LONGTERM, 0);
	EXPECT_PIN_ERR(EFAULT, self->buf + 2 * LAB_PAGE, LAB_PAGE, PINDMA_MODE_GUP, 0);
}

/* GUP takes the pages before the PROT_NONE one, then fails: those must be released again. */
TEST_F(dev, prot_none_page_inside_the_range_rolls_back_the_partial_pin)
{
	ASSERT_EQ(0, mprotect(self->buf + 2 * LAB_PAGE, LAB_PAGE, PROT_NONE));
	EXPECT_PIN_ERR(EFAULT, self->buf, SIZE, PINDMA_MODE_GUP, 0);
	EXPECT_PIN_ERR(EFAULT, self->buf, SIZE, PINDMA_MODE_PIN_LONGTERM, 0);
}

TEST_F(dev, write_pin_of_read_only_mapping_is_eacces)
{
	ASSERT_EQ(0, mprotect(self->buf, SIZE, PROT_READ));
	EXPECT_PIN_ERR(EACCES, self->buf, SIZE, PINDMA_MODE_GUP, PINDMA_PIN_WRITE);
	EXPECT_PIN_ERR(EACCES, self->buf, SIZE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE);
}

TEST_F(dev, io_pfnmap_range_is_eopnotsupp)
{
	char dev[256], path[300];
	void *bar;
	int fd;

	ASSERT_TRUE(lab_pci_find(0x1234, 0x11e8, dev, sizeof(dev)));
	snprintf(path, sizeof(path), "%s/resource0", dev);
	fd = open(path, O_RDWR | O_SYNC);
	ASSERT_LE(0, fd);
	bar = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, bar);
	ASSERT_TRUE(lab_has_vmflag(bar, "pf"));
	EXPECT_PIN_ERR(EOPNOTSUPP, bar, LAB_PAGE, PINDMA_MODE_GUP, 0);
	EXPECT_PIN_ERR(EOPNOTSUPP, bar, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE);
	munmap(bar, LAB_PAGE);
	close(fd);
}

TEST_F(dev, bad_user_pointers_are_efault)
{
	uint32_t engine = PINDMA_ENGINE_CPU, h;

	EXPECT_EQ(-EFAULT, pindma_call(self->fd, PINDMA_IOC_PIN, NULL));
	EXPECT_EQ(-EFAULT, pindma_call(self->fd, PINDMA_IOC_PIN, (void *)8));
	EXPECT_EQ(-EFAULT, pindma_call(self->fd, PINDMA_IOC_UNPIN, NULL));
	EXPECT_EQ(-EFAULT, pindma_call(self->fd, PINDMA_IOC_QUERY, NULL));
	EXPECT_EQ(-EFAULT, pindma_call(self->fd, PINDMA_IOC_DMA_READ, NULL));
	EXPECT_EQ(-EFAULT, pindma_call(self->fd, PINDMA_IOC_INFO, NULL));
	expect_unchanged(_metadata, self);
	ASSERT_EQ(0, pindma_pin(self->fd, self->buf, SIZE, PINDMA_MODE_GUP, PINDMA_PIN_WRITE, &h));
	EXPECT_EQ(-EFAULT, pindma_dma(self->fd, PINDMA_IOC_DMA_WRITE, h, 0, NULL, 16, &engine));
	EXPECT_EQ(-EFAULT, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 0, (void *)16, 16,
				      &engine));
	EXPECT_EQ(0x5a, self->buf[0]);
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
}

/*
 * A PIN whose request is readable but whose reply cannot be written back: the caller never
 * learns the handle, so the driver must let go of everything it pinned for it.
 */
TEST_F(dev, pin_reply_that_cannot_be_copied_out_pins_nothing)
{
	static const uint32_t modes[] = { PINDMA_MODE_GUP, PINDMA_MODE_PIN_LONGTERM };
	struct pindma_pin *req = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, req);
	for (unsigned int i = 0; i < 2; i++) {
		ASSERT_EQ(0, mprotect(req, LAB_PAGE, PROT_READ | PROT_WRITE));
		*req = (struct pindma_pin){ .addr = (uintptr_t)self->buf, .len = SIZE,
					    .mode = modes[i], .flags = PINDMA_PIN_WRITE };
		ASSERT_EQ(0, mprotect(req, LAB_PAGE, PROT_READ));
		EXPECT_EQ(-EFAULT, pindma_call(self->fd, PINDMA_IOC_PIN, req)) TH_LOG("mode %u", modes[i]);
		expect_unchanged(_metadata, self);
	}
	munmap(req, LAB_PAGE);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	int x = 0;

	EXPECT_EQ(-ENOTTY, pindma_call(self->fd, _IOW(PINDMA_IOC_MAGIC, 99, int), &x));
	EXPECT_EQ(-ENOTTY, pindma_call(self->fd, _IO('T', 1), &x));
}

TEST_F(dev, dma_outside_the_pinned_range_is_erange)
{
	uint32_t engine = PINDMA_ENGINE_CPU, h;
	uint64_t pfn;
	char b[64];

	ASSERT_EQ(0, pindma_pin(self->fd, self->buf, 2 * LAB_PAGE, PINDMA_MODE_GUP,
				PINDMA_PIN_WRITE, &h));
	EXPECT_EQ(-ERANGE, pindma_dma(self->fd, PINDMA_IOC_DMA_WRITE, h, 2 * LAB_PAGE - 8, b, 9,
				      &engine));
	EXPECT_EQ(-ERANGE, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 2 * LAB_PAGE, b, 1,
				      &engine));
	EXPECT_EQ(-ERANGE, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, UINT64_MAX - 4, b, 8,
				      &engine));
	EXPECT_EQ(-EINVAL, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 0, b, 0, &engine));
	engine = 7;
	EXPECT_EQ(-EINVAL, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 0, b, 8, &engine));
	EXPECT_EQ(-ERANGE, pindma_query(self->fd, h, 2, &pfn));
	EXPECT_EQ(0x5a, self->buf[2 * LAB_PAGE - 8]);
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
}

TEST_F(dev, device_cannot_write_a_read_only_pin)
{
	uint32_t engine = PINDMA_ENGINE_CPU, h;
	char b[8] = "nope";

	ASSERT_EQ(0, pindma_pin(self->fd, self->buf, LAB_PAGE, PINDMA_MODE_GUP, 0, &h));
	EXPECT_EQ(-EACCES, pindma_dma(self->fd, PINDMA_IOC_DMA_WRITE, h, 0, b, 4, &engine));
	EXPECT_EQ(0x5a, self->buf[0]);
	EXPECT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, 0, b, 4, &engine));
	EXPECT_EQ(0x5a, b[0]);
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
}

TEST_F(dev, stale_foreign_and_never_issued_handles_are_enoent)
{
	uint32_t engine = PINDMA_ENGINE_CPU, h, other_h;
	uint64_t pfn;
	char b[8];
	int other = pindma_open();

	ASSERT_LE(0, other);
	ASSERT_EQ(0, pindma_pin(self->fd, self->buf, LAB_PAGE, PINDMA_MODE_GUP, 0, &h));
	ASSERT_EQ(0, pindma_pin(other, self->buf, LAB_PAGE, PINDMA_MODE_GUP, 0, &other_h));
	EXPECT_NE(h, other_h);
	/* The other file's handle is not ours. */
	EXPECT_EQ(-ENOENT, pindma_query(self->fd, other_h, 0, &pfn));
	EXPECT_EQ(-ENOENT, pindma_unpin(self->fd, other_h));
	EXPECT_EQ(-ENOENT, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, other_h, 0, b, 1, &engine));
	EXPECT_EQ(0, pindma_unpin(other, other_h));
	/* Stale: unpinned already. */
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
	EXPECT_EQ(-ENOENT, pindma_unpin(self->fd, h));
	EXPECT_EQ(-ENOENT, pindma_query(self->fd, h, 0, &pfn));
	/* Never issued. */
	EXPECT_EQ(-ENOENT, pindma_unpin(self->fd, 0));
	EXPECT_EQ(-ENOENT, pindma_unpin(self->fd, 0xfffffff0));
	close(other);
	expect_unchanged(_metadata, self);
}

static int child_uses_parent_handle(int fd, uint32_t h)
{
	uint32_t engine = PINDMA_ENGINE_CPU;
	uint64_t pfn;
	char b[8];

	if (pindma_query(fd, h, 0, &pfn) != -EPERM)
		return 1;
	if (pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, b, 1, &engine) != -EPERM)
		return 2;
	if (pindma_unpin(fd, h) != -EPERM)
		return 3;
	return 0;
}

/* The documented semantics: a forked child shares the file but not the handles. */
TEST_F(dev, forked_child_cannot_use_parent_handles)
{
	uint64_t pfn;
	uint32_t h;
	int status;
	pid_t pid;

	ASSERT_EQ(0, pindma_pin(self->fd, self->buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM,
				PINDMA_PIN_WRITE, &h));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_uses_parent_handle(self->fd, h));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, pindma_query(self->fd, h, 0, &pfn));
	EXPECT_EQ(0, pindma_unpin(self->fd, h));
}

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

static int pin_as_nobody(void *arg)
{
	char *buf = arg;
	uint32_t h, h2;
	int fd;

	if (lab_become_nobody(16))
		return 10;
	fd = pindma_open();
	if (fd < 0)
		return 11;
	if (pindma_pin(fd, buf, 17 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h) != -ENOMEM)
		return 12;
	if (pindma_pin(fd, buf, 16 * LAB_PAGE, PINDMA_MODE_GUP, PINDMA_PIN_WRITE, &h))
		return 13;
	/* The limit counts what is already pinned. */
	if (pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_GUP, 0, &h2) != -ENOMEM)
		return 14;
	if (lab_status_kb("VmPin") != 64)
		return 15;
	if (pindma_unpin(fd, h) || lab_status_kb("VmPin") != 0)
		return 16;
	return 0;
}

/* An unprivileged user is held to RLIMIT_MEMLOCK, as ib_umem holds it. */
TEST(unprivileged_user_is_held_to_rlimit_memlock)
{
	char *buf = mmap(NULL, 32 * LAB_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	int status;

	ASSERT_NE(MAP_FAILED, buf);
	status = lab_in_child(pin_as_nobody, buf);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed", WEXITSTATUS(status));
}

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

/*
 * 1000 pin/DMA/unpin cycles on the same pages leave nothing behind. A reference leaked per
 * cycle would pin those 4 pages, 16 KiB, which MemFree cannot tell from noise: the oracles are
 * exact instead, the kernel's FOLL_PIN counters and copy-on-write's view of the pages'
 * references (lab_referenced_pages()), next to VmPin and the driver's own counters.
 */
TEST(thousand_cycles_leak_nothing)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = pindma_open();
	struct pindma_info before;
	long vmpin, pins = lab_foll_pins();
	char b[64] = "cycle";

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, SIZE);
	before = info(fd);
	vmpin = lab_status_kb("VmPin");
	for (int i = 0; i < 1000; i++) {
		uint32_t engine = PINDMA_ENGINE_CPU, h;
		uint32_t mode = i & 1 ? PINDMA_MODE_GUP : PINDMA_MODE_PIN_LONGTERM;

		ASSERT_EQ(0, pindma_pin(fd, buf, SIZE, mode, PINDMA_PIN_WRITE, &h));
		ASSERT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_WRITE, h, i % SIZE, b, 32, &engine));
		ASSERT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 77, b, 64, &engine));
		ASSERT_EQ(0, pindma_unpin(fd, h));
	}
	EXPECT_EQ(pins, lab_foll_pins());
	EXPECT_EQ(0, lab_referenced_pages(buf, SIZE));
	EXPECT_EQ(vmpin, lab_status_kb("VmPin"));
	EXPECT_EQ(before.handles, info(fd).handles);
	EXPECT_EQ(before.pages_held, info(fd).pages_held);
	close(fd);
	munmap(buf, SIZE);
}

/* One worker: 1000 mixed operations on its own memory, plus forks, all answers checked. */
static int worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t handles[8] = { 0 };
	int fd = pindma_open();
	char b[128];

	if (fd < 0 || buf == MAP_FAILED)
		return 20;
	memset(buf, 3, SIZE);
	for (int i = 0; i < 1000; i++) {
		int slot = rand_r(&seed) % 8, op = rand_r(&seed) % 6, ret = 0;
		uint32_t engine = PINDMA_ENGINE_CPU;
		uint64_t pfn;
		pid_t pid;

		switch (op) {
		case 0:
		case 1:
			if (handles[slot])
				ret = pindma_unpin(fd, handles[slot]);
			handles[slot] = 0;
			if (!ret)
				ret = pindma_pin(fd, buf, SIZE, 1 + op, PINDMA_PIN_WRITE,
						 &handles[slot]);
			break;
		case 2:
			if (handles[slot])
				ret = pindma_dma(fd, PINDMA_IOC_DMA_WRITE, handles[slot],
						 rand_r(&seed) % (SIZE - 128), b, 128, &engine);
			break;
		case 3:
			if (handles[slot])
				ret = pindma_dma(fd, PINDMA_IOC_DMA_READ, handles[slot],
						 rand_r(&seed) % (SIZE - 128), b, 128, &engine);
			break;
		case 4:
			if (handles[slot])
				ret = pindma_query(fd, handles[slot], rand_r(&seed) % NPAGES, &pfn);
			break;
		default:
			if (i % 50)
				break;
			pid = fork();
			if (pid == 0)
				_exit(buf[0] == 3 ? 0 : 1);
			if (pid < 0 || waitpid(pid, NULL, 0) != pid)
				return 21;
			buf[LAB_PAGE] = 3;	/* copy-on-write under the pins */
			break;
		}
		if (ret)
			return 22 + op;
	}
	close(fd);	/* unpins what is left */
	return 0;
}

/* 8 processes x 1000 mixed operations at once: every call answers right, nothing leaks. */
TEST(eight_processes_concurrently)
{
	int watch = pindma_open(), status, failed = 0;
	struct pindma_info before;
	pid_t pids[8];

	ASSERT_LE(0, watch);
	before = info(watch);
	for (int i = 0; i < 8; i++) {
		fflush(NULL);
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(worker((void *)(uintptr_t)(i + 1)));
	}
	for (int i = 0; i < 8; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			TH_LOG("worker %d: status %#x", i, status);
			failed++;
		}
	}
	EXPECT_EQ(0, failed);
	EXPECT_EQ(before.handles, info(watch).handles);
	EXPECT_EQ(before.pages_held, info(watch).pages_held);
	close(watch);
}

/* Drop one capability from the effective set (raw capset: no libcap in the guest). */
static int drop_effective(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[cap / 32].effective &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &hdr, data);
}

static int pin_over_the_limit(void *arg)
{
	struct rlimit lim = { 16 * LAB_PAGE, 16 * LAB_PAGE };
	char *buf = arg;
	uint32_t h, h2;
	int fd = pindma_open();

	if (fd < 0 || setrlimit(RLIMIT_MEMLOCK, &lim))
		return 10;
	/* Twice the limit, and the kernel's counters see all of it. */
	if (pindma_pin(fd, buf, 32 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h))
		return 11;
	if (lab_status_kb("VmPin") != 128)
		return 12;
	if (drop_effective(CAP_IPC_LOCK))
		return 13;
	if (pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_GUP, 0, &h2) != -ENOMEM)
		return 14;
	if (pindma_unpin(fd, h) || lab_status_kb("VmPin") != 0)
		return 15;
	close(fd);
	return 0;
}

/* CAP_IPC_LOCK lifts RLIMIT_MEMLOCK, as for ib_umem; without it the limit holds again. */
TEST(cap_ipc_lock_pins_over_rlimit_memlock)
{
	char *buf = mmap(NULL, 32 * LAB_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	int status;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (CAP_IPC_LOCK)");
	status = lab_in_child(pin_over_the_limit, buf);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed", WEXITSTATUS(status));
	munmap(buf, 32 * LAB_PAGE);
}

/* The edu device unbound from the driver (guest sysfs), and bound again afterwards. */
#define EDU_DRIVER "/sys/bus/pci/drivers/pindma"

FIXTURE(unbound)
{
	char dev[256];
	bool bound;
};

FIXTURE_SETUP(unbound)
{
	DIR *d = opendir(EDU_DRIVER);
	struct dirent *e;

	self->dev[0] = 0;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "0000:", 5))
			snprintf(self->dev, sizeof(self->dev), "%s", e->d_name);
	if (d)
		closedir(d);
	ASSERT_NE(0, self->dev[0]) TH_LOG("no edu device bound to pindma");
	ASSERT_EQ(0, lab_write_str(EDU_DRIVER "/unbind", self->dev));
	self->bound = false;
}

FIXTURE_TEARDOWN(unbound)
{
	if (self->dev[0] && !self->bound)
		lab_write_str(EDU_DRIVER "/bind", self->dev);
}

/* Without the device, the edu engine is ENODEV and AUTO falls back to the CPU; bound again, both work. */
TEST_F(unbound, edu_engine_without_the_device_is_enodev)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t engine, h;
	int fd = pindma_open();
	char out[64];

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, buf);
	EXPECT_EQ(0U, info(fd).edu_present);
	ASSERT_EQ(0, pindma_pin(fd, buf, SIZE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h));
	engine = PINDMA_ENGINE_EDU;
	EXPECT_EQ(-ENODEV, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, out, 64, &engine));
	engine = PINDMA_ENGINE_AUTO;
	EXPECT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, out, 64, &engine));
	EXPECT_EQ((uint32_t)PINDMA_ENGINE_CPU, engine);

	ASSERT_EQ(0, lab_write_str(EDU_DRIVER "/bind", self->dev));
	self->bound = true;
	EXPECT_EQ(1U, info(fd).edu_present);
	engine = PINDMA_ENGINE_EDU;
	EXPECT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, out, 64, &engine));
	EXPECT_EQ(0, pindma_unpin(fd, h));
	close(fd);
	munmap(buf, SIZE);
}

/* Threads sharing one file: DMA on a handle while others unpin it, then while the file closes. */
struct racer {
	int fd;
	uint32_t h;
	char *buf;
	int unpin;		/* this thread unpins instead */
	pthread_barrier_t *go;
	int result;		/* 0, or the first unexpected errno */
	int unpinned;		/* UNPIN returned 0 */
};

static void *race(void *arg)
{
	struct racer *r = arg;
	uint32_t engine = PINDMA_ENGINE_CPU;
	char b[256];
	int ret;

	pthread_barrier_wait(r->go);
	if (r->unpin) {
		ret = pindma_unpin(r->fd, r->h);
		r->unpinned = !ret;
		if (ret && ret != -ENOENT && ret != -EBADF)
			r->result = ret;
		return NULL;
	}
	for (int i = 0; i < 400; i++) {
		ret = pindma_dma(r->fd, i % 2 ? PINDMA_IOC_DMA_READ : PINDMA_IOC_DMA_WRITE, r->h,
				 (i * 97) % (SIZE - sizeof(b)), b, sizeof(b), &engine);
		if (ret == -ENOENT || ret == -EBADF)
			break;
		if (ret) {
			r->result = ret;
			break;
		}
	}
	return NULL;
}

TEST(threads_race_unpin_dma_and_close)
{
	char *buf = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long vmpin = lab_status_kb("VmPin"), pins = lab_foll_pins();
	int watch = pindma_open();
	struct pindma_info before;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_LE(0, watch);
	memset(buf, 1, SIZE);
	before = info(watch);
	for (int round = 0; round < 60; round++) {
		struct racer r[5];
		pthread_barrier_t go;
		pthread_t t[5];
		int fd = pindma_open(), unpinned = 0;
		uint32_t h;
		/* Even rounds: two threads unpin; odd rounds: the file is closed under the DMA. */
		bool closing = round % 2;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, pindma_pin(fd, buf, SIZE, round % 4 < 2 ? PINDMA_MODE_GUP :
					PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h));
		ASSERT_EQ(0, pthread_barrier_init(&go, NULL, closing ? 4 : 5));
		for (int i = 0; i < (closing ? 3 : 5); i++) {
			r[i] = (struct racer){ .fd = fd, .h = h, .buf = buf, .go = &go,
					       .unpin = !closing && i >= 3 };
			ASSERT_EQ(0, pthread_create(&t[i], NULL, race, &r[i]));
		}
		if (closing) {
			pthread_barrier_wait(&go);
			usleep(round * 50);
			close(fd);
		}
		for (int i = 0; i < (closing ? 3 : 5); i++) {
			pthread_join(t[i], NULL);
			EXPECT_EQ(0, r[i].result) TH_LOG("round %d thread %d: %s", round, i,
							  strerror(-r[i].result));
			unpinned += r[i].unpinned;
		}
		if (!closing) {
			EXPECT_EQ(1, unpinned) TH_LOG("round %d: %d UNPINs of one handle succeeded",
						      round, unpinned);
			close(fd);
		}
		pthread_barrier_destroy(&go);
	}
	/* Nothing left, by the kernel's counters and by the pages themselves. */
	EXPECT_EQ(vmpin, lab_status_kb("VmPin"));
	EXPECT_EQ(pins, lab_foll_pins());
	EXPECT_EQ(0, lab_referenced_pages(buf, SIZE));
	EXPECT_EQ(before.handles, info(watch).handles);
	EXPECT_EQ(before.pages_held, info(watch).pages_held);
	close(watch);
	munmap(buf, SIZE);
}

/* pin.c pins in batches of this many pages, each under its own hold of mmap_lock. */
#define PIN_BATCH 512
#define BIG_PAGES (PIN_BATCH + 100)

/*
 * A range longer than one batch, failing in its second batch: every page of both batches must
 * be released, by the kernel's FOLL_PIN counters, VmPin and the pages' references.
 */
TEST(failure_in_a_later_batch_releases_every_batch)
{
	char *buf = mmap(NULL, BIG_PAGES * LAB_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long vmpin = lab_status_kb("VmPin"), pins = lab_foll_pins();
	int fd = pindma_open();
	struct pindma_info before;
	uint32_t h;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_LE(0, fd);
	memset(buf, 1, BIG_PAGES * LAB_PAGE);
	before = info(fd);
	ASSERT_EQ(0, mprotect(buf + (PIN_BATCH + 50) * LAB_PAGE, LAB_PAGE, PROT_NONE));
	EXPECT_EQ(-EFAULT, pindma_pin(fd, buf, BIG_PAGES * LAB_PAGE, PINDMA_MODE_GUP, 0, &h));
	EXPECT_EQ(-EFAULT, pindma_pin(fd, buf, BIG_PAGES * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0,
				      &h));
	EXPECT_EQ(vmpin, lab_status_kb("VmPin"));
	EXPECT_EQ(pins, lab_foll_pins());
	ASSERT_EQ(0, mprotect(buf + (PIN_BATCH + 50) * LAB_PAGE, LAB_PAGE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, lab_referenced_pages(buf, BIG_PAGES * LAB_PAGE));
	EXPECT_EQ(before.handles, info(fd).handles);
	EXPECT_EQ(before.pages_held, info(fd).pages_held);
	close(fd);
	munmap(buf, BIG_PAGES * LAB_PAGE);
}

#define SLOW_FILE "/mnt/odirect/data"	/* 8 MiB on the lab's 1 MiB/s odirect disk */
#define SLOW_LEN (8 << 20)

struct slow_pin {
	int fd;
	char *map;
	int result;
	atomic_bool done;
};

static void *slow_pin_main(void *arg)
{
	struct slow_pin *s = arg;
	uint32_t h = 0;

	s->result = pindma_pin(s->fd, s->map, SLOW_LEN, PINDMA_MODE_GUP, 0, &h);
	atomic_store(&s->done, true);
	if (!s->result)
		pindma_unpin(s->fd, h);
	return NULL;
}

static long resident_pages(char *map)
{
	static unsigned char vec[SLOW_LEN / 4096];
	long n = 0;

	if (mincore(map, SLOW_LEN, vec))
		return -1;
	for (size_t i = 0; i < sizeof(vec); i++)
		n += vec[i] & 1;
	return n;
}

/*
 * A pin of many file pages read from a slow disk takes seconds; mmap() in another thread, which
 * needs mmap_lock for writing, must get in between two batches rather than after the whole pin.
 * The judge is the page cache (mincore), not the driver: when that mmap() returns, part of the
 * file is still not read in, and the pin is still running.
 */
TEST(mmap_gets_in_between_pin_batches)
{
	struct slow_pin s = { .fd = pindma_open() };
	long resident, at_mmap;
	bool pin_done_at_mmap;
	pthread_t t;
	void *other;
	int file;

	file = open(SLOW_FILE, O_RDONLY);
	if (file < 0)
		SKIP(return, "no %s: the lab's odirect disk is not attached", SLOW_FILE);
	ASSERT_LE(0, s.fd);
	s.map = mmap(NULL, SLOW_LEN, PROT_READ, MAP_PRIVATE, file, 0);
	ASSERT_NE(MAP_FAILED, s.map);
	ASSERT_EQ(0, lab_write_str("/proc/sys/vm/drop_caches", "3"));
	ASSERT_EQ(0, resident_pages(s.map)) TH_LOG("the file is cached: nothing to judge");
	ASSERT_EQ(0, pthread_create(&t, NULL, slow_pin_main, &s));
	/* The pin is faulting pages in, under mmap_lock, once the first ones are resident. */
	for (int i = 0; i < 1000 && !(resident = resident_pages(s.map)); i++)
		usleep(10 * 1000);
	ASSERT_LT(0, resident);
	other = mmap(NULL, LAB_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pin_done_at_mmap = atomic_load(&s.done);
	at_mmap = resident_pages(s.map);
	ASSERT_NE(MAP_FAILED, other);
	pthread_join(t, NULL);
	EXPECT_EQ(0, s.result) TH_LOG("PIN: %s", strerror(-s.result));
	TH_LOG("mmap() returned with %ld of %lu pages read in", at_mmap, SLOW_LEN / LAB_PAGE);
	EXPECT_FALSE(pin_done_at_mmap);
	EXPECT_GT((long)(SLOW_LEN / LAB_PAGE), at_mmap);
	munmap(other, LAB_PAGE);
	munmap(s.map, SLOW_LEN);
	close(file);
	close(s.fd);
}

LAB_HARNESS_MAIN
