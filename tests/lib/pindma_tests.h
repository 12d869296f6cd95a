/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What pindma's tests share (tests/pindma_*_test.c, access_test.c): the driver's INFO as a value,
 * dropping one capability from the effective set, and steps run as another user in a child.
 */
#ifndef PINDMA_TESTS_H
#define PINDMA_TESTS_H

#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pindma_lib.h"

/* INFO, zeroes when it fails (the tests that read it run as root and compare two readings). */
static inline struct pindma_info info(int fd)
{
	struct pindma_info i = { 0 };

	ioctl(fd, PINDMA_IOC_INFO, &i);
	return i;
}

/*
 * Drop one capability from the effective set, or raise it again from the permitted set (raw
 * capset: no libcap in the guest).
 */
static inline int set_effective(int cap, int on)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[cap / 32].effective &= ~(1U << (cap % 32));
	data[cap / 32].effective |= on ? 1U << (cap % 32) : 0;
	return syscall(SYS_capset, &hdr, data);
}

static inline int drop_effective(int cap)
{
	return set_effective(cap, 0);
}

static inline int raise_effective(int cap)
{
	return set_effective(cap, 1);
}

/* Drop to nobody with RLIMIT_MEMLOCK set to that many pages, and open /dev/pindma: fd, or -1. */
static inline int nobody_opens_pindma(unsigned long memlock_pages)
{
	int fd;

	if (lab_become_nobody(memlock_pages))
		return -1;
	fd = pindma_open();
	return fd < 0 ? -1 : fd;
}

/* Run fn(arg) in a child (lab_in_child()) that exits 0, or with the number of the step that failed. */
#define EXPECT_STEPS_PASS(fn, arg) do { \
	int status_ = lab_in_child(fn, arg); \
	ASSERT_TRUE(WIFEXITED(status_)) TH_LOG("%s: wait status %#x", #fn, status_); \
	EXPECT_EQ(0, WEXITSTATUS(status_)) TH_LOG("%s: step %d failed", #fn, WEXITSTATUS(status_)); \
} while (0)

/* EXPECT_STEPS_PASS(fn, buf) over NPAGES fresh pages of anonymous memory, unmapped after. */
#define EXPECT_STEPS_PASS_ON_ANON(fn, npages) do { \
	char *anon_ = lab_map_anon((npages) * LAB_PAGE); \
	ASSERT_NE(MAP_FAILED, anon_); \
	EXPECT_STEPS_PASS(fn, anon_); \
	munmap(anon_, (npages) * LAB_PAGE); \
} while (0)

#endif
