// SPDX-License-Identifier: GPL-2.0
/*
 * pindma leaks nothing: not over a thousand cycles, not over many processes at once, judged by
 * exact oracles (the FOLL_PIN counters, copy-on-write's view of the pages' references) next to
 * VmPin and the driver's own counters; and the reference oracle is itself seen to work.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

#define NPAGES 4
#define SIZE (NPAGES * LAB_PAGE)

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

LAB_HARNESS_MAIN
