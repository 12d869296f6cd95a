// SPDX-License-Identifier: GPL-2.0
/*
 * Which memory pindma pins for the device to write. A shared mapping of a file that the file
 * system writes back (ext4, on /mnt/disk) is refused for write pins in both modes, with
 * EOPNOTSUPP and nothing held: the device would dirty page-cache pages without ->page_mkwrite,
 * behind writeback's back (6.1's ext4 warns "does not have buffers attached"; 6.12's GUP refuses
 * long-term write pins of such mappings itself, with a bare EFAULT). Read pins of it, private
 * file mappings, and shared mappings of tmpfs (/dev/shm) and hugetlbfs (/dev/hugepages), which
 * have no writeback, still pin, and the device's bytes land where they should.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

#define NPAGES 4
#define SIZE (NPAGES * LAB_PAGE)
#define HPAGE (2UL << 20)

static const uint32_t modes[] = { PINDMA_MODE_GUP, PINDMA_MODE_PIN_LONGTERM };

static const char *mode_name(uint32_t mode)
{
	return mode == PINDMA_MODE_GUP ? "GUP" : "PIN_LONGTERM";
}

/* A file of len bytes of c in dir, on a file system of type magic; its fd, unlinked. */
/* The lab's scratch disk, ext4, which /init mounts on /mnt/disk. */
#define NO_DISK "no ext4 scratch disk on /mnt/disk: the lab attaches one (vm/boot --disk)"

static bool on_ext4(const char *dir)
{
	struct statfs fs;

	return !statfs(dir, &fs) && fs.f_type == EXT4_SUPER_MAGIC;
}

static int make_file(struct __test_metadata *_metadata, const char *dir, long magic, size_t len,
		     char c)
{
	char path[128], buf[4096];
	struct statfs fs;
	int fd;

	snprintf(path, sizeof(path), "%s/pindma_memory.%d", dir, getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		TH_LOG("open %s: %s", path, strerror(errno));
		return -1;
	}
	unlink(path);
	if (fstatfs(fd, &fs) || fs.f_type != magic) {
		TH_LOG("%s is not on the file system expected (f_type %#lx, not %#lx)", dir,
		       (long)fs.f_type, magic);
		close(fd);
		return -1;
	}
	memset(buf, c, sizeof(buf));
	for (size_t done = 0; done < len; done += sizeof(buf))
		if (pwrite(fd, buf, sizeof(buf), done) != sizeof(buf)) {
			close(fd);
			return -1;
		}
	return fd;
}

/* make_file()'s file on the ext4 scratch disk, filled with c, mapped shared; MAP_FAILED if not. */
static char *ext4_shared(struct __test_metadata *_metadata, char c, int *file)
{
	*file = make_file(_metadata, "/mnt/disk", EXT4_SUPER_MAGIC, SIZE, c);
	if (*file < 0)
		return MAP_FAILED;
	return mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, *file, 0);
}

FIXTURE(mem)
{
	int fd;
	long vmpin;
	long pins;
	struct pindma_info start;
};

FIXTURE_SETUP(mem)
{
	self->fd = pindma_open();
	ASSERT_LE(0, self->fd);
	self->vmpin = lab_status_kb("VmPin");
	self->pins = lab_foll_pins();
	self->start = info(self->fd);
}

FIXTURE_TEARDOWN(mem)
{
	close(self->fd);
}

/* Nothing held, by the driver's counters and the kernel's: VmPin and the FOLL_PIN counters. */
static void expect_nothing_held(struct __test_metadata *_metadata, FIXTURE_DATA(mem) *self)
{
	struct pindma_info now = info(self->fd);

	EXPECT_EQ(self->vmpin, lab_status_kb("VmPin"));
	EXPECT_EQ(self->pins, lab_foll_pins());
	EXPECT_EQ(self->start.handles, now.handles);
	EXPECT_EQ(self->start.pages_held, now.pages_held);
}

/*
 * Pin [map, map + len) writable in mode, let the device write a tag at offset 100 and read it
 * back; the tag must be in the mapping. 0, or the PIN's -errno.
 */
static int write_pin_and_dma(struct __test_metadata *_metadata, int fd, char *map, size_t len,
			     uint32_t mode)
{
	uint32_t engine = PINDMA_ENGINE_CPU, h;
	char tag[16] = "device wrote me", got[16] = "";
	int ret = pindma_pin(fd, map, len, mode, PINDMA_PIN_WRITE, &h);

	if (ret)
		return ret;
	EXPECT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_WRITE, h, 100, tag, sizeof(tag), &engine));
	EXPECT_EQ(0, memcmp(map + 100, tag, sizeof(tag))) TH_LOG("%s", mode_name(mode));
	EXPECT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 100, got, sizeof(got), &engine));
	EXPECT_EQ(0, memcmp(got, tag, sizeof(tag))) TH_LOG("%s", mode_name(mode));
	EXPECT_EQ(0, pindma_unpin(fd, h));
	return 0;
}

/* As nobody, in a child that inherited the mapping: refused all the same. */
static int write_pin_as_nobody(void *map)
{
	uint32_t h;
	int fd;

	fd = nobody_opens_pindma(16);
	if (fd < 0)
		return 11;
	if (pindma_pin(fd, map, SIZE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h) != -EOPNOTSUPP)
		return 12;
	/* Read-only, it pins. */
	if (pindma_pin(fd, map, SIZE, PINDMA_MODE_PIN_LONGTERM, 0, &h) || pindma_unpin(fd, h))
		return 13;
	return lab_status_kb("VmPin") ? 14 : 0;
}

TEST_F(mem, write_pin_of_a_shared_ext4_mapping_is_eopnotsupp)
{
	char *map;
	uint32_t h;
	int file;

	LAB_NEEDS(on_ext4("/mnt/disk"), NO_DISK);
	map = ext4_shared(_metadata, 'f', &file);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ('f', map[0]);	/* resident: only the driver's own check can refuse it */
	for (unsigned int i = 0; i < 2; i++) {
		EXPECT_EQ(-EOPNOTSUPP, pindma_pin(self->fd, map, SIZE, modes[i], PINDMA_PIN_WRITE,
						  &h)) TH_LOG("%s", mode_name(modes[i]));
		expect_nothing_held(_metadata, self);
	}
	EXPECT_STEPS_PASS(write_pin_as_nobody, map);
	munmap(map, SIZE);
	close(file);
}

/*
 * The refusal in a later batch of a long pin comes before any page is pinned: the anonymous
 * batch before it, never touched, is not even faulted in (a write pin of it would have broken
 * copy-on-write, giving the process new pages next to a forked child).
 */
TEST_F(mem, write_pin_reaching_a_shared_ext4_mapping_touches_nothing)
{
	/* pin.c pins 512 pages per batch: the ext4 pages are in the second. */
	const size_t anon = 512 * LAB_PAGE;
	char *buf;
	uint32_t h;
	int file;

	LAB_NEEDS(on_ext4("/mnt/disk"), NO_DISK);
	file = make_file(_metadata, "/mnt/disk", EXT4_SUPER_MAGIC, SIZE, 'f');
	ASSERT_LE(0, file);
	buf = mmap(NULL, anon + SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	/* Small pages: a THP split by the MAP_FIXED mapping reads as referenced (pindma_abi). */
	ASSERT_EQ(0, madvise(buf, anon, MADV_NOHUGEPAGE));
	ASSERT_NE(MAP_FAILED, mmap(buf + anon, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				   file, 0));
	for (unsigned int i = 0; i < 2; i++) {
		unsigned int present = 0;

		EXPECT_EQ(-EOPNOTSUPP, pindma_pin(self->fd, buf, anon + SIZE, modes[i],
						  PINDMA_PIN_WRITE, &h)) TH_LOG("%s", mode_name(modes[i]));
		expect_nothing_held(_metadata, self);
		for (size_t off = 0; off < anon; off += LAB_PAGE)
			present += lab_pfn(buf + off) != 0;
		EXPECT_EQ(0U, present) TH_LOG("%s faulted in %u pages before refusing",
					     mode_name(modes[i]), present);
	}
	memset(buf, 1, anon);
	EXPECT_EQ(0, lab_referenced_pages(buf, anon));
	munmap(buf, anon + SIZE);
	close(file);
}

/* A read pin of the same mapping is fine: the device only reads the page cache. */
TEST_F(mem, read_pin_of_a_shared_ext4_mapping_pins)
{
	uint32_t engine = PINDMA_ENGINE_CPU, h;
	char got[8], *map;
	int file;

	LAB_NEEDS(on_ext4("/mnt/disk"), NO_DISK);
	map = ext4_shared(_metadata, 'r', &file);
	ASSERT_NE(MAP_FAILED, map);
	for (unsigned int i = 0; i < 2; i++) {
		ASSERT_EQ(0, pindma_pin(self->fd, map, SIZE, modes[i], 0, &h))
			TH_LOG("%s", mode_name(modes[i]));
		EXPECT_EQ(0, pindma_dma(self->fd, PINDMA_IOC_DMA_READ, h, LAB_PAGE, got, sizeof(got),
					&engine));
		EXPECT_EQ('r', got[0]);
		EXPECT_EQ(-EACCES, pindma_dma(self->fd, PINDMA_IOC_DMA_WRITE, h, 0, got, 1, &engine));
		EXPECT_EQ(0, pindma_unpin(self->fd, h));
	}
	expect_nothing_held(_metadata, self);
	munmap(map, SIZE);
	close(file);
}

/*
 * A file of SIZE bytes of fill in dir (on a file system of type magic), mapped with flags: in
 * both modes it write-pins and the device's bytes land; the file then reads want at their offset.
 */
static void write_pins_land(struct __test_metadata *_metadata, FIXTURE_DATA(mem) *self,
			    const char *dir, long magic, int flags, char fill, char want)
{
	int file = make_file(_metadata, dir, magic, SIZE, fill);
	char *map, c = 0;

	ASSERT_LE(0, file);
	map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, flags, file, 0);
	ASSERT_NE(MAP_FAILED, map);
	for (unsigned int i = 0; i < 2; i++) {
		EXPECT_EQ(0, write_pin_and_dma(_metadata, self->fd, map, SIZE, modes[i]))
			TH_LOG("%s", mode_name(modes[i]));
	}
	ASSERT_EQ(1, pread(file, &c, 1, 100));
	EXPECT_EQ(want, c);
	expect_nothing_held(_metadata, self);
	munmap(map, SIZE);
	close(file);
}

/* A private mapping of the file: the write pin copies the pages; the file stays as it was. */
TEST_F(mem, write_pin_of_a_private_ext4_mapping_pins_and_leaves_the_file)
{
	LAB_NEEDS(on_ext4("/mnt/disk"), NO_DISK);
	write_pins_land(_metadata, self, "/mnt/disk", EXT4_SUPER_MAGIC, MAP_PRIVATE, 'p', 'p');
}

/* tmpfs has no writeback: the device writes the shared file's pages, which the file shows. */
TEST_F(mem, write_pin_of_a_shared_tmpfs_mapping_pins)
{
	write_pins_land(_metadata, self, "/dev/shm", TMPFS_MAGIC, MAP_SHARED, 't', 'd');
}

/* Nor has hugetlbfs. */
TEST_F(mem, write_pin_of_a_shared_hugetlbfs_mapping_pins)
{
	int file, nr = lab_read_int("/proc/sys/vm/nr_hugepages");
	char *map, c = 0, was[16];

	ASSERT_LE(0, nr);
	if (nr < 1)
		ASSERT_EQ(0, lab_write_str("/proc/sys/vm/nr_hugepages", "1"));
	file = open("/dev/hugepages/pindma_memory", O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, file);
	unlink("/dev/hugepages/pindma_memory");
	map = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
	ASSERT_NE(MAP_FAILED, map);
	memset(map, 'h', HPAGE);
	for (unsigned int i = 0; i < 2; i++) {
		EXPECT_EQ(0, write_pin_and_dma(_metadata, self->fd, map + HPAGE - SIZE, SIZE,
					       modes[i])) TH_LOG("%s", mode_name(modes[i]));
	}
	ASSERT_EQ(1, pread(file, &c, 1, HPAGE - SIZE + 100));
	EXPECT_EQ('d', c);
	expect_nothing_held(_metadata, self);
	munmap(map, HPAGE);
	close(file);
	snprintf(was, sizeof(was), "%d", nr);
	EXPECT_EQ(0, lab_write_str("/proc/sys/vm/nr_hugepages", was));
}

/*
 * pindma's page state of a hugetlb page's tail is its head's: hugetlb keeps PageAnonExclusive on
 * the head, and 6.1's PageAnonExclusive() reads the page it is given (a tail's flag bit is
 * another flag's, and DEBUG_VM_PGFLAGS BUGs on it).
 */
TEST(page_state_of_a_hugetlb_tail_is_its_heads)
{
	int nr = lab_read_int("/proc/sys/vm/nr_hugepages");
	struct lab_page_state head, tail;
	char *map, was[16];

	ASSERT_LE(0, nr);
	if (nr < 1)
		ASSERT_EQ(0, lab_write_str("/proc/sys/vm/nr_hugepages", "1"));
	map = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	memset(map, 'h', HPAGE);
	ASSERT_EQ(0, lab_page_state(lab_pfn(map), &head));
	ASSERT_EQ(0, lab_page_state(lab_pfn(map + 5 * LAB_PAGE), &tail));
	EXPECT_EQ(lab_pfn(map) + 5, tail.pfn);
	/* A private hugetlb page its only mapper faulted in: exclusive, head and tail alike. */
	EXPECT_EQ(1, head.anon_exclusive);
	EXPECT_EQ(head.anon_exclusive, tail.anon_exclusive);
	EXPECT_EQ(head.refcount, tail.refcount);
	munmap(map, HPAGE);
	snprintf(was, sizeof(was), "%d", nr);
	EXPECT_EQ(0, lab_write_str("/proc/sys/vm/nr_hugepages", was));
}

LAB_HARNESS_MAIN
