// SPDX-License-Identifier: GPL-2.0
/*
 * GUP-fast against fork() with vm.fork_share_pinned on (kernel-patches/0002).
 *
 * GUP-fast pins without mmap_lock: it reads mm->write_protect_seq, pins, checks that no
 * fork() write-protected the page tables meanwhile, and then, with DEBUG_VM, asserts that
 * every anonymous page it pinned is still PageAnonExclusive (sanity_check_pinned_pages()).
 * A fork() that starts between that seqcount check and the assertion sees the page pinned;
 * with the switch on it shares it with the child and clears PageAnonExclusive, and the
 * assertion is a VM_BUG_ON, unless the assertion knows the switch was ever on. One thread
 * pins and unpins a buffer with GUP-fast in a loop while the other forks; any BUG in the
 * console fails the run (vm/boot). The first case turns the switch on for the first time in
 * the boot in the middle of the race, so that a check that read "the switch was ever on"
 * before the switch came on meets a fork that shares the page after it did; the second races
 * with the switch on from the start. The window is a few instructions wide: this stress
 * rarely lands in it, but a kernel with a delay planted there does at once
 * (tests/host/plants.sh, debug flavour).
 *
 * The pinner is the kernel's own gup_test (CONFIG_GUP_TEST, debugfs): PIN_FAST_BENCHMARK is
 * pin_user_pages_fast() then unpin_user_pages(), the calls ib_umem_get() and 6.12's direct
 * I/O make, without rdma-core or a slow disk in the loop, on both kernels alike.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
/* The tree's mm/gup_test.h, found through -I<tree>/tools/testing/selftests as its selftest does. */
#include "../../../mm/gup_test.h"

#define GUP_TEST "/sys/kernel/debug/gup_test"
/* FOLL_WRITE, 0x01 in 6.1's and 6.12's gup flags; gup_test takes the raw flags. */
#define GUP_FOLL_WRITE 0x01
#define NPAGES 16
#define FORKS 150

struct race {
	int gup_fd;
	char *buf;
	atomic_bool stop;
	long pins, failed;
};

static void *pinner(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		struct gup_test gup = {
			.addr = (uintptr_t)r->buf,
			.size = NPAGES * LAB_PAGE,
			.nr_pages_per_call = NPAGES,
			.gup_flags = GUP_FOLL_WRITE,
		};

		if (ioctl(r->gup_fd, PIN_FAST_BENCHMARK, &gup) || gup.size != NPAGES * LAB_PAGE)
			r->failed++;
		else
			r->pins++;
	}
	return NULL;
}

FIXTURE(race)
{
	struct race r;
};

FIXTURE_SETUP(race)
{
	self->r.gup_fd = open(GUP_TEST, O_RDWR);
	ASSERT_LE(0, self->r.gup_fd) TH_LOG(GUP_TEST ": CONFIG_GUP_TEST and debugfs needed");
	self->r.buf = mmap(NULL, NPAGES * LAB_PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->r.buf);
	memset(self->r.buf, 'r', NPAGES * LAB_PAGE);
}

FIXTURE_TEARDOWN(race)
{
	lab_write_str(LAB_SWITCH, "0");
	munmap(self->r.buf, NPAGES * LAB_PAGE);
	close(self->r.gup_fd);
}

/*
 * The race's oracle is DEBUG_VM's check of pinned pages (a BUG or WARN in the console): compiled
 * out, the race could pass whatever fork did, so it runs only where it can fail; checked first, so
 * that a run of every program in one boot (a test farm's) skips here rather than failing on the
 * first case's fresh-boot check.
 */
#define NEEDS_DEBUG_VM() LAB_NEEDS(lab_kernel_debug_vm(), "DEBUG_VM is compiled out (no dump_mm " \
	"in /proc/kallsyms): its check is this race's oracle; make test FLAVOUR=debug runs it")

/* Fork FORKS times, the parent writing a page after each; the switch turned on before fork on_at. */
static void fork_loop(struct __test_metadata *_metadata, struct race *r, int on_at)
{
	long pins_before = lab_foll_pins();
	int bad_children = 0;
	pthread_t t;

	LAB_NEEDS_CPUS(2);
	ASSERT_EQ(0, pthread_create(&t, NULL, pinner, r));
	for (int i = 0; i < FORKS; i++) {
		int status;
		pid_t pid;

		if (i == on_at)
			ASSERT_EQ(0, lab_write_str(LAB_SWITCH, "1"));
		pid = fork();
		if (!pid)
			_exit(r->buf[0] == 'r' ? 0 : 1);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			bad_children++;
		/* The parent writes too, so that the next pin finds its own page again. */
		r->buf[(i % NPAGES) * LAB_PAGE] = 'r';
	}
	atomic_store(&r->stop, true);
	pthread_join(t, NULL);
	TH_LOG("%d forks (the switch on from fork %d) against %ld GUP-fast pins of %d pages",
	       FORKS, on_at, r->pins, NPAGES);

	EXPECT_EQ(0, bad_children);
	EXPECT_EQ(0, r->failed) TH_LOG("PIN_FAST_BENCHMARK failed or pinned less");
	EXPECT_LT(0, r->pins);
	EXPECT_EQ(pins_before, lab_foll_pins()) TH_LOG("FOLL_PIN acquired and released differ");
}

/*
 * The switch's first enable, in the middle of the race. Only the first enable of a boot counts:
 * from then on the kernel knows the switch was used. TAINT_USER (bit 6 of kernel.tainted),
 * which the first enable sets, tells that no earlier program turned it on; run-all starts this
 * program first in its guest.
 */
TEST_F_TIMEOUT(race, gup_fast_pins_while_the_switch_first_comes_on, 600)
{
	LAB_NEEDS_PATCH("0002", "vm.fork_share_pinned");
	NEEDS_DEBUG_VM();
	ASSERT_EQ(0, lab_read_int("/proc/sys/kernel/tainted") & (1 << 6))
		TH_LOG("the switch was on before in this boot (kernel.tainted has U): its first "
		       "enable can only be raced first in a fresh guest");
	fork_loop(_metadata, &self->r, FORKS / 10);
}

TEST_F_TIMEOUT(race, gup_fast_pins_while_fork_shares_them, 600)
{
	LAB_NEEDS_PATCH("0002", "vm.fork_share_pinned");
	NEEDS_DEBUG_VM();
	fork_loop(_metadata, &self->r, 0);
}

LAB_HARNESS_MAIN
