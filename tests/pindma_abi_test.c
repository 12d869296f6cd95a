// SPDX-License-Identifier: GPL-2.0
/*
 * pindma's ABI: every bad input gets its own errno and changes nothing, by the driver's counters
 * and by the kernel's own (VmPin, the FOLL_PIN counters, the pages' references); handles belong
 * to the file and the address space that pinned them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

#define NPAGES 4
#define SIZE (NPAGES * LAB_PAGE)

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

	ASSERT_TRUE(lab_pci_find(LAB_EDU_VENDOR, LAB_EDU_DEVICE, dev, sizeof(dev)));
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
	/*
	 * Small pages: a THP (the guest's default is "always") that the mprotect() below splits
	 * is mapped by PTEs, and the oracle's writes copy its pages one by one while the rest
	 * still hold it: lab_referenced_pages() counted 511 of them referenced, with nothing
	 * pinned.
	 */
	ASSERT_EQ(0, madvise(buf, BIG_PAGES * LAB_PAGE, MADV_NOHUGEPAGE));
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
LAB_HARNESS_MAIN
