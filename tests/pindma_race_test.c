// SPDX-License-Identifier: GPL-2.0
/*
 * pindma under concurrency: threads sharing one file DMA on a handle while others unpin it or
 * close the file; mmap() from another thread gets in between the batches of a long pin.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

#define NPAGES 4
#define SIZE (NPAGES * LAB_PAGE)

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

	LAB_NEEDS_CPUS(2);
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
