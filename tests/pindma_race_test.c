// SPDX-License-Identifier: GPL-2.0
/*
 * pindma under concurrency: threads sharing one file DMA on a handle while others unpin it or
 * close the file; a long pin lets go of mmap_lock between its batches.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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
		/* A stress, not a window: the held cases below hold one. */
		if (closing) {
			pthread_barrier_wait(&go);
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

/*
 * A DMA held in the middle of its work, the handle it holds unpinned or its file closed meanwhile:
 * the pages must stay pinned until the DMA returns, then be let go. The gate is the caller's
 * buffer, a page of a userfaultfd range not yet filled: the device's write (DMA_WRITE) copies it
 * in first, and waits in that fault for as long as the test likes, however slow the machine. The
 * judge is the kernel's FOLL_PIN counters, not the driver's.
 */
struct held_dma {
	int fd;
	uint32_t h;
	char *src;		/* the gate: the userfaultfd page the DMA copies from */
	int done;		/* an eventfd, told when the DMA has returned */
	int result;
};

static void *held_dma_main(void *arg)
{
	struct held_dma *d = arg;
	uint32_t engine = PINDMA_ENGINE_CPU;

	d->result = pindma_dma(d->fd, PINDMA_IOC_DMA_WRITE, d->h, 0, d->src, 64, &engine);
	eventfd_write(d->done, 1);
	return NULL;
}

static void dma_held_while(struct __test_metadata *_metadata, bool closing)
{
	char *buf = lab_map_anon(SIZE), *src = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE,
						     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)src, .len = LAB_PAGE },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	struct uffdio_zeropage zero = { .range = reg.range };
	struct pollfd pfd[2] = { { .fd = uffd, .events = POLLIN }, { .events = POLLIN } };
	long pins = lab_foll_pins();
	struct uffd_msg msg;
	struct held_dma d;
	pthread_t t;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_NE(MAP_FAILED, src);
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	memset(buf, 1, SIZE);
	d = (struct held_dma){ .fd = pindma_open(), .src = src, .done = eventfd(0, EFD_CLOEXEC) };
	ASSERT_LE(0, d.fd);
	ASSERT_LE(0, d.done);
	pfd[1].fd = d.done;
	ASSERT_EQ(0, pindma_pin(d.fd, buf, SIZE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE,
				&d.h));
	ASSERT_EQ(pins + NPAGES, lab_foll_pins());
	ASSERT_EQ(0, pthread_create(&t, NULL, held_dma_main, &d));
	/*
	 * The DMA is inside its copy from src once the fault arrives. A DMA that returns without
	 * reaching it says why; 20 s, under the harness's own timeout, bounds a hang.
	 */
	ASSERT_LT(0, poll(pfd, 2, 20000)) TH_LOG("the DMA neither reached its buffer nor returned");
	ASSERT_FALSE(pfd[1].revents) {
		pthread_join(t, NULL);
		TH_LOG("the DMA returned (%s) without reaching its buffer", strerror(-d.result));
	}
	ASSERT_EQ((ssize_t)sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);	/* src is the one page registered */
	if (closing) {
		EXPECT_EQ(0, close(d.fd));
	} else {
		EXPECT_EQ(0, pindma_unpin(d.fd, d.h));
		EXPECT_EQ(-ENOENT, pindma_unpin(d.fd, d.h)) TH_LOG("a second UNPIN of the handle");
	}
	EXPECT_EQ(pins + NPAGES, lab_foll_pins())
		TH_LOG("%s let the pages go while a DMA into them was held",
		       closing ? "closing the file" : "UNPIN");
	/* The gate opens: the page filled, the DMA goes on and returns. */
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zero));
	pthread_join(t, NULL);
	EXPECT_EQ(0, d.result) TH_LOG("the held DMA: %s", strerror(-d.result));
	EXPECT_EQ(0, buf[0]) TH_LOG("the DMA did not write the zeroes it copied");
	/* Let go once the DMA returned: an unpinned handle's pages before the file is closed. */
	EXPECT_EQ(pins, lab_foll_pins()) TH_LOG("pins left once the DMA returned");
	if (!closing)
		close(d.fd);
	EXPECT_EQ(pins, lab_foll_pins()) TH_LOG("pins left once the file was closed");
	close(d.done);
	close(uffd);
	munmap(src, LAB_PAGE);
	munmap(buf, SIZE);
}

TEST(unpin_under_a_held_dma_keeps_the_pages_until_it_returns)
{
	dma_held_while(_metadata, false);
}

TEST(close_under_a_held_dma_keeps_the_pages_until_it_returns)
{
	dma_held_while(_metadata, true);
}

/*
 * A long pin goes batch by batch (pin.c: PINDMA_PIN_BATCH pages under each hold of mmap_lock),
 * so that mmap() and munmap() of the whole process do not wait for all of it. The pin is of a
 * block device's pages: the first batch's already in the page cache, the rest behind a held
 * gate (liblab/gate.c), so that the pin waits in its second batch's first fault for as long as
 * the test likes. The judge is the kernel's own mmap_lock tracepoints, in a trace instance of the
 * test's own filtered to the pinning thread: by then it released mmap_lock twice since it entered
 * the ioctl (the up-front VMA check, then the first batch), not once (the check only).
 */
#define BATCH_BYTES (512 * LAB_PAGE)
#define PIN_BYTES (4 * BATCH_BYTES)
#define RAW_SECTOR (16 << 11)	/* the odirect disk's raw 8 MiB, after its ext4 (vm/guest.mk) */

struct batch_pin {
	char trace[128];	/* its tracefs instance */
	int fd;
	char *map;
	int result;
	atomic_int tid;
	pthread_barrier_t go;
	volatile bool done;
};

static void *batch_pin_main(void *arg)
{
	static const char mark[] = "lab: the pin starts";
	struct batch_pin *s = arg;
	char path[160];
	uint32_t h = 0;
	int marker;

	snprintf(path, sizeof(path), "%s/trace_marker", s->trace);
	marker = open(path, O_WRONLY);

	atomic_store(&s->tid, gettid());
	pthread_barrier_wait(&s->go);
	if (marker < 0 || write(marker, mark, sizeof(mark) - 1) < 0) {
		s->result = -1;
	} else {
		s->result = pindma_pin(s->fd, s->map, PIN_BYTES, PINDMA_MODE_GUP, 0, &h);
		if (!s->result)
			pindma_unpin(s->fd, h);
	}
	if (marker >= 0)
		close(marker);
	s->done = true;
	return NULL;
}

/* The pinning thread's mmap_lock releases after its mark, from the trace instance; -1. */
static int releases_since_mark(const char *trace)
{
	char line[512];
	FILE *f;
	int n = -1;

	snprintf(line, sizeof(line), "%s/trace", trace);
	f = fopen(line, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "lab: the pin starts"))
			n = 0;
		else if (n >= 0 && strstr(line, "mmap_lock_released") && strstr(line, "write=false"))
			n++;
	}
	fclose(f);
	return n;
}

FIXTURE(batches)
{
};

FIXTURE_SETUP(batches)
{
}

FIXTURE_TEARDOWN(batches)
{
}

/* The waits are a gate's, not a rate's: the timeout is a hang guard, beyond the wait's own. */
TEST_F_TIMEOUT(batches, pin_drops_mmap_lock_between_batches, 300)
{
	/* 6.12's wait for the read is deeper: filemap_read_folio() under filemap_fault(). */
	static const char *const in_fault[] = { "filemap_fault", "filemap_read_folio", NULL };
	struct batch_pin s = { .fd = pindma_open() };
	struct lab_gate rest, top = { .name = "" };
	struct lab_gate_part parts[2];
	char disk[32], dev[48], filter[64], name[48], stack[2048], *pre;
	pthread_t t;
	int file, seen, tid;

	if (lab_disk_by_serial("odirect", disk, sizeof(disk)))
		SKIP(return, "no disk with serial odirect: the lab's odirect disk is not attached");
	ASSERT_LE(0, s.fd);
	snprintf(dev, sizeof(dev), "/dev/%s", disk);
	/* The first batch's pages straight from the disk, the rest through the gate. */
	parts[0] = (struct lab_gate_part){ .dev = dev, .at = 0, .start = RAW_SECTOR,
					   .len = BATCH_BYTES / 512 };
	snprintf(name, sizeof(name), "lab-pin-rest-%d", getpid());
	ASSERT_EQ(0, lab_gate_make(&rest, name, &(struct lab_gate_part){
		.dev = dev, .start = RAW_SECTOR + BATCH_BYTES / 512,
		.len = (PIN_BYTES - BATCH_BYTES) / 512 }, 1, true));
	parts[1] = (struct lab_gate_part){ .dev = rest.path, .at = BATCH_BYTES / 512, .start = 0,
					   .len = (PIN_BYTES - BATCH_BYTES) / 512 };
	snprintf(name, sizeof(name), "lab-pin-top-%d", getpid());
	ASSERT_EQ(0, lab_gate_make(&top, name, parts, 2, true));
	file = open(top.path, O_RDONLY);
	ASSERT_LE(0, file);
	/* The first batch in the page cache: its faults need no I/O, so the pin waits in no other. */
	ASSERT_EQ(0, posix_fadvise(file, 0, 0, POSIX_FADV_RANDOM));
	pre = malloc(BATCH_BYTES);
	ASSERT_NE(NULL, pre);
	ASSERT_EQ((ssize_t)BATCH_BYTES, pread(file, pre, BATCH_BYTES, 0));
	free(pre);
	s.map = mmap(NULL, PIN_BYTES, PROT_READ, MAP_SHARED, file, 0);
	ASSERT_NE(MAP_FAILED, s.map);
	ASSERT_EQ(0, madvise(s.map, PIN_BYTES, MADV_RANDOM));

	snprintf(name, sizeof(name), "lab-pin-batches-%d", getpid());
	ASSERT_EQ(0, lab_trace_make(s.trace, sizeof(s.trace), name))
		TH_LOG("a trace instance: is tracefs mounted?");
	ASSERT_EQ(0, pthread_barrier_init(&s.go, NULL, 2));
	ASSERT_EQ(0, pthread_create(&t, NULL, batch_pin_main, &s));
	while (!(tid = atomic_load(&s.tid)))
		sched_yield();
	snprintf(filter, sizeof(filter), "common_pid == %d", tid);
	ASSERT_EQ(0, lab_trace_set(s.trace, "events/mmap_lock/mmap_lock_released/filter", filter));
	ASSERT_EQ(0, lab_trace_set(s.trace, "events/mmap_lock/mmap_lock_released/enable", "1"));
	ASSERT_EQ(0, lab_gate_hold(&rest));
	pthread_barrier_wait(&s.go);
	/* Held in a fault past the first batch, for as long as the gate is. */
	seen = lab_wait_thread_in(tid, in_fault, &s.done);
	if (seen != 1 && lab_thread_stack(tid, stack, sizeof(stack)) >= 0)
		TH_LOG("the pinning thread's kernel stack:\n%s", stack);
	EXPECT_EQ(1, seen) TH_LOG("the pin %s", seen ? "was never seen waiting in a fault" :
				  "ended while its pages were held");
	EXPECT_LE(2, releases_since_mark(s.trace))
		TH_LOG("mmap_lock released %d times by the pin before its second batch (2: the VMA "
		       "check and the first batch)", releases_since_mark(s.trace));
	ASSERT_EQ(0, lab_gate_release(&rest));
	pthread_join(t, NULL);
	EXPECT_EQ(0, s.result) TH_LOG("PIN: %s", strerror(-s.result));
	lab_trace_set(s.trace, "events/mmap_lock/mmap_lock_released/enable", "0");
	lab_trace_remove(s.trace);
	munmap(s.map, PIN_BYTES);
	close(file);
	close(s.fd);
	lab_gate_remove(&top);
	lab_gate_remove(&rest);
}

LAB_HARNESS_MAIN
