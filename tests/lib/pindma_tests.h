/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What pindma's tests share (tests/pindma_*_test.c, access_test.c): the driver's INFO as a value,
 * and dropping one capability from the effective set.
 */
#ifndef PINDMA_TESTS_H
#define PINDMA_TESTS_H

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pindma_lib.h"

/* INFO, zeroes when it fails (the tests that read it run as root and compare two readings). */
static inline struct pindma_info info(int fd)
{
	struct pindma_info i = { 0 };

	ioctl(fd, PINDMA_IOC_INFO, &i);
	return i;
}

/* Drop one capability from the effective set (raw capset: no libcap in the guest). */
static inline int drop_effective(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[cap / 32].effective &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &hdr, data);
}

#endif
