// SPDX-License-Identifier: GPL-2.0
/*
 * Seed conformance: each hunk of Tsirkin's 2006 MADV_DONTFORK/MADV_DOFORK patch, checked
 * on the booted kernel. The patch is upstream (f822566165dd) with the flags renumbered.
 */
#define _GNU_SOURCE
/*
 * The tree's installed uapi header first, its values kept before glibc's <sys/mman.h> defines
 * its own copies of the same names (a redefinition in a system header is silent).
 */
#include <asm/mman.h>
enum { uapi_dontfork = MADV_DONTFORK, uapi_dofork = MADV_DOFORK };
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"

#define NPAGES 3
#define SIZE (NPAGES * LAB_PAGE)

/*
 * The asm-*\/mman.h hunks: the flags exist in the tree's uapi header with the values they were
 * given before release, and glibc agrees with it.
 */
TEST(flags_have_their_released_values)
{
	EXPECT_EQ(10, uapi_dontfork);
	EXPECT_EQ(11, uapi_dofork);
	EXPECT_EQ(uapi_dontfork, MADV_DONTFORK) TH_LOG("glibc's value differs from the kernel's");
	EXPECT_EQ(uapi_dofork, MADV_DOFORK) TH_LOG("glibc's value differs from the kernel's");
}

FIXTURE(anon)
{
	char *p;
};

FIXTURE_SETUP(anon)
{
	self->p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->p);
	memset(self->p, 'P', SIZE);
}

FIXTURE_TEARDOWN(anon)
{
	munmap(self->p, SIZE);
}

static int touch_all(void *arg)
{
	char *p = arg;
	int sum = 0;

	for (unsigned long i = 0; i < SIZE; i += LAB_PAGE)
		sum += p[i];
	return sum == NPAGES * 'P' ? 0 : 1;
}

static int touch_first(void *arg)
{
	return *(volatile char *)arg == 'P' ? 0 : 1;
}

/* madvise_behavior(): MADV_DONTFORK sets VM_DONTCOPY, shown as "dc" in VmFlags. */
TEST_F(anon, dontfork_sets_dc)
{
	ASSERT_FALSE(lab_has_vmflag(self->p, "dc"));
	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_DONTFORK));
	ASSERT_TRUE(lab_has_vmflag(self->p, "dc"));
}

/* A child does not inherit a VM_DONTCOPY range: touching it faults, and its maps lack it. */
TEST_F(anon, child_lacks_dontfork_range)
{
	int to_child[2], to_parent[2], status;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_DONTFORK));
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Wait until the parent has read our maps, then touch the range. */
		if (write(to_parent[1], "r", 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(2);
		_exit(touch_first(self->p));
	}
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	EXPECT_FALSE(lab_maps_covers(pid, self->p));
	EXPECT_TRUE(lab_maps_covers(0, self->p));
	ASSERT_EQ(1, write(to_child[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("child status %#x", status);
	EXPECT_EQ(SIGSEGV, WTERMSIG(status));
}

/* MADV_DOFORK clears VM_DONTCOPY: "dc" goes and the child sees the parent's data again. */
TEST_F(anon, dofork_undoes_dontfork)
{
	int status;

	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_DONTFORK));
	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_DOFORK));
	EXPECT_FALSE(lab_has_vmflag(self->p, "dc"));
	status = lab_in_child(touch_all, self->p);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child status %#x", status);
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* Without either call the child inherits the range (the control for the two above). */
TEST_F(anon, child_inherits_by_default)
{
	int status = lab_in_child(touch_all, self->p);

	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* DONTFORK on part of a mapping splits the VMA; the rest is still inherited. */
TEST_F(anon, dontfork_on_part_splits_the_mapping)
{
	char *mid = self->p + LAB_PAGE;
	int status;

	ASSERT_EQ(1, lab_maps_count(self->p, SIZE));
	ASSERT_EQ(0, madvise(mid, LAB_PAGE, MADV_DONTFORK));
	EXPECT_EQ(3, lab_maps_count(self->p, SIZE));
	EXPECT_FALSE(lab_has_vmflag(self->p, "dc"));
	EXPECT_TRUE(lab_has_vmflag(mid, "dc"));
	EXPECT_FALSE(lab_has_vmflag(self->p + 2 * LAB_PAGE, "dc"));

	status = lab_in_child(touch_first, self->p);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	status = lab_in_child(touch_first, self->p + 2 * LAB_PAGE);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	status = lab_in_child(touch_first, mid);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		TH_LOG("child status %#x", status);
}

/* madvise_behavior(): NORMAL, SEQUENTIAL and RANDOM replace each other's read hints. */
TEST_F(anon, read_hints_clear_each_other)
{
	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_SEQUENTIAL));
	EXPECT_TRUE(lab_has_vmflag(self->p, "sr"));
	EXPECT_FALSE(lab_has_vmflag(self->p, "rr"));

	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_RANDOM));
	EXPECT_TRUE(lab_has_vmflag(self->p, "rr"));
	EXPECT_FALSE(lab_has_vmflag(self->p, "sr"));

	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_SEQUENTIAL));
	EXPECT_TRUE(lab_has_vmflag(self->p, "sr"));
	EXPECT_FALSE(lab_has_vmflag(self->p, "rr"));

	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_NORMAL));
	EXPECT_FALSE(lab_has_vmflag(self->p, "sr"));
	EXPECT_FALSE(lab_has_vmflag(self->p, "rr"));

	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_RANDOM));
	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_NORMAL));
	EXPECT_FALSE(lab_has_vmflag(self->p, "rr"));
}

/* The read hints leave VM_DONTCOPY alone (the old code masked only VM_READHINTMASK). */
TEST_F(anon, read_hints_keep_dontfork)
{
	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_DONTFORK));
	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_SEQUENTIAL));
	ASSERT_EQ(0, madvise(self->p, SIZE, MADV_NORMAL));
	EXPECT_TRUE(lab_has_vmflag(self->p, "dc"));
}

TEST_F(anon, unaligned_start_is_einval)
{
	errno = 0;
	EXPECT_EQ(-1, madvise(self->p + 1, LAB_PAGE, MADV_DONTFORK));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_FALSE(lab_has_vmflag(self->p, "dc"));
}

TEST_F(anon, unmapped_range_is_enomem)
{
	ASSERT_EQ(0, munmap(self->p + LAB_PAGE, LAB_PAGE));
	errno = 0;
	EXPECT_EQ(-1, madvise(self->p, SIZE, MADV_DONTFORK));
	EXPECT_EQ(ENOMEM, errno);
	errno = 0;
	EXPECT_EQ(-1, madvise(self->p + LAB_PAGE, LAB_PAGE, MADV_DOFORK));
	EXPECT_EQ(ENOMEM, errno);
}

TEST_F(anon, unknown_advice_is_einval)
{
	errno = 0;
	EXPECT_EQ(-1, madvise(self->p, SIZE, 0x30));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, madvise(self->p, SIZE, 0x31));
	EXPECT_EQ(EINVAL, errno);
}

/* By behaviour: the uapi header's numbers, not the seed's, set and clear VM_DONTCOPY. */
TEST_F(anon, uapi_numbers_set_and_clear_dc)
{
	ASSERT_EQ(0, madvise(self->p, SIZE, uapi_dontfork));
	EXPECT_TRUE(lab_has_vmflag(self->p, "dc"));
	ASSERT_EQ(0, madvise(self->p, SIZE, uapi_dofork));
	EXPECT_FALSE(lab_has_vmflag(self->p, "dc"));
}

/* madvise_vma(): MADV_DOFORK on a VM_IO mapping (the edu device's BAR) is refused. */
TEST(dofork_on_vm_io_is_einval)
{
	char dev[256], path[300];
	void *bar;
	int fd;

	LAB_NEEDS(lab_pci_find(LAB_EDU_VENDOR, LAB_EDU_DEVICE, dev, sizeof(dev)),
		  "no edu PCI device: the lab's QEMU has one (vm/boot)");
	snprintf(path, sizeof(path), "%s/resource0", dev);
	fd = open(path, O_RDWR | O_SYNC);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", path, strerror(errno));
	bar = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, bar);
	ASSERT_TRUE(lab_has_vmflag(bar, "io"));
	errno = 0;
	EXPECT_EQ(-1, madvise(bar, LAB_PAGE, MADV_DOFORK));
	EXPECT_EQ(EINVAL, errno);
	/* DONTFORK is allowed there; it is the undoing that would be unsafe. */
	EXPECT_EQ(0, madvise(bar, LAB_PAGE, MADV_DONTFORK));
	munmap(bar, LAB_PAGE);
	close(fd);
}

LAB_HARNESS_MAIN
