// SPDX-License-Identifier: GPL-2.0
/*
 * pindma's accounting: pins are charged to the caller's pinned_vm (VmPin) against RLIMIT_MEMLOCK,
 * as ib_umem charges them, and CAP_IPC_LOCK lifts the limit.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

static int pin_as_nobody(void *arg)
{
	char *buf = arg;
	uint32_t h, h2;
	int fd;

	fd = nobody_opens_pindma(16);
	if (fd < 0)
		return 11;
	if (pindma_pin(fd, buf, 17 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h) != -ENOMEM)
		return 12;
	if (pindma_pin(fd, buf, 16 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h))
		return 13;
	/* The limit counts what is already pinned. */
	if (pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h2) != -ENOMEM)
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

	ASSERT_NE(MAP_FAILED, buf);
	EXPECT_STEPS_PASS(pin_as_nobody, buf);
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

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (CAP_IPC_LOCK)");
	EXPECT_STEPS_PASS(pin_over_the_limit, buf);
	munmap(buf, 32 * LAB_PAGE);
}

LAB_HARNESS_MAIN
