// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what with /dev/pindma. The node is 0666 on purpose, as ib_uverbs is: any user
 * may pin, but only memory of their own address space, only within their RLIMIT_MEMLOCK
 * (counted per address space, over all their files), only through their own handles, and
 * only with FOLL_PIN: GUP mode's long-term FOLL_GET is for CAP_SYS_ADMIN.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"
#include "pindma_tests.h"

TEST(node_is_a_char_device_open_to_all)
{
	/* Opened first: a kselftest collection run elsewhere loads the module here (pindma_open()). */
	int fd = pindma_open();
	struct stat st;

	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, stat("/dev/pindma", &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666U, st.st_mode & 07777);
}

static int limit_spans_files(void *arg)
{
	char *buf = arg;
	uint32_t h;
	int a, b;

	a = nobody_opens_pindma(16);
	b = pindma_open();
	if (a < 0 || b < 0)
		return 11;
	if (pindma_pin(a, buf, 10 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h))
		return 12;
	/* 10 + 10 > 16, though each file alone would be within it. */
	if (pindma_pin(b, buf, 10 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h) != -ENOMEM)
		return 13;
	if (pindma_pin(b, buf, 6 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h))
		return 14;
	close(a);
	/* Closing a file gives its pages back to the limit. */
	if (pindma_pin(b, buf, 10 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h))
		return 15;
	return 0;
}

TEST(unprivileged_limit_counts_all_files_of_the_process)
{
	EXPECT_STEPS_PASS_ON_ANON(limit_spans_files, 32);
}

struct unprivileged {
	char *buf;
	bool nobody;	/* else root without CAP_SYS_ADMIN in its effective set */
};

/* Without CAP_SYS_ADMIN: GUP mode is EPERM with nothing charged; PIN_LONGTERM still pins. */
static int pin_without_cap_sys_admin(void *arg)
{
	struct unprivileged *u = arg;
	uint32_t engine = PINDMA_ENGINE_CPU, h;
	char b[4] = "dev";
	int fd;

	if (u->nobody ? lab_become_nobody(8) : drop_effective(CAP_SYS_ADMIN))
		return 10;
	fd = pindma_open();
	if (fd < 0)
		return 11;
	if (pindma_pin(fd, u->buf, LAB_PAGE, PINDMA_MODE_GUP, 0, &h) != -EPERM)
		return 12;
	if (pindma_pin(fd, u->buf, LAB_PAGE, PINDMA_MODE_GUP, PINDMA_PIN_WRITE, &h) != -EPERM)
		return 13;
	if (lab_status_kb("VmPin") != 0)
		return 14;
	if (pindma_pin(fd, u->buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h))
		return 15;
	if (pindma_dma(fd, PINDMA_IOC_DMA_WRITE, h, 0, b, sizeof(b), &engine) || u->buf[0] != 'd')
		return 16;
	return pindma_unpin(fd, h) ? 17 : 0;
}

/*
 * GUP mode holds pages with long-term FOLL_GET references, which block migration, compaction
 * and CMA for as long as the pin lives; the kernel offers FOLL_LONGTERM only with FOLL_PIN. The
 * lab keeps it for the 2006 bug, for CAP_SYS_ADMIN only, as the kernel's gup_test is root-only.
 */
TEST(gup_mode_needs_cap_sys_admin)
{
	struct unprivileged u = {
		.buf = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0),
	};
	int status;

	ASSERT_NE(MAP_FAILED, u.buf);
	for (int nobody = 0; nobody < 2; nobody++) {
		u.nobody = nobody;
		memset(u.buf, 'x', LAB_PAGE);
		status = lab_in_child(pin_without_cap_sys_admin, &u);
		ASSERT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status))
			TH_LOG("%s: step %d failed", nobody ? "nobody" : "root without CAP_SYS_ADMIN",
			       WEXITSTATUS(status));
	}
	munmap(u.buf, LAB_PAGE);
}

/* As nobody: pin, DMA and unpin one's own page, but no PFN from QUERY. */
static int query_as_nobody(void *arg)
{
	uint32_t h, engine = PINDMA_ENGINE_CPU;
	char *buf = arg, b[4];
	uint64_t pfn = 1;
	int fd;

	fd = nobody_opens_pindma(8);
	if (fd < 0)
		return 11;
	if (pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h))
		return 12;
	if (pindma_query(fd, h, 0, &pfn) != -EPERM || pfn != 1)
		return 13;
	if (pindma_query(fd, h, 1, &pfn) != -ERANGE)
		return 14;
	if (pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, b, sizeof(b), &engine) || b[0] != 'q')
		return 15;
	return pindma_unpin(fd, h) ? 16 : 0;
}

TEST(query_gives_pfns_to_cap_sys_admin_only)
{
	char *buf = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t pfn = 0;
	uint32_t h;
	int fd;

	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 'q', LAB_PAGE);
	EXPECT_STEPS_PASS(query_as_nobody, buf);
	/* Root still gets the PFN, and it is pagemap's. */
	fd = pindma_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_GUP, 0, &h));
	EXPECT_EQ(0, pindma_query(fd, h, 0, &pfn));
	EXPECT_EQ(lab_pfn(buf), pfn);
	EXPECT_NE(0ULL, pfn);
	EXPECT_EQ(0, pindma_unpin(fd, h));
	close(fd);
}

/* As nobody: INFO counts this file's handles, pages and edu transfers, not the module's. */
static int info_as_nobody(void *arg)
{
	uint32_t engine = PINDMA_ENGINE_EDU, h;
	struct pindma_info a0, a1, b1;
	char *buf = arg, c[8];
	int a, b;

	a = nobody_opens_pindma(8);
	b = pindma_open();
	if (a < 0 || b < 0)
		return 11;
	/* root's pin and edu transfers are not shown. */
	if (pindma_call(a, PINDMA_IOC_INFO, &a0) || a0.handles || a0.pages_held ||
	    a0.edu_transfers)
		return 12;
	if (pindma_pin(a, buf, 2 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h))
		return 13;
	/* One chunk: the device's buffer filled from the page, then emptied into the driver's. */
	if (pindma_dma(a, PINDMA_IOC_DMA_READ, h, 0, c, sizeof(c), &engine))
		return 14;
	if (pindma_call(a, PINDMA_IOC_INFO, &a1) || a1.handles != 1 || a1.pages_held != 2 ||
	    a1.edu_transfers != 2)
		return 15;
	/* Another file of the same process has its own counts. */
	if (pindma_call(b, PINDMA_IOC_INFO, &b1) || b1.handles || b1.pages_held ||
	    b1.edu_transfers)
		return 16;
	if (a1.edu_present != 1 || a1.max_pages != PINDMA_MAX_PAGES)
		return 17;
	return 0;
}

/*
 * Module-wide counts would tell one user of another's pins and transfers: INFO gives them to
 * CAP_SYS_ADMIN (whose tests read them as leak checks), anyone else those of the file asked.
 */
TEST(info_shows_the_module_to_cap_sys_admin_only)
{
	char *buf = lab_map_anon(2 * LAB_PAGE);
	int fd = pindma_open(), watch = pindma_open();
	uint32_t engine = PINDMA_ENGINE_EDU, h;
	struct pindma_info before, after;
	char c[8], dev[256];

	LAB_NEEDS(lab_pci_find(LAB_EDU_VENDOR, LAB_EDU_DEVICE, dev, sizeof(dev)),
		  "no edu PCI device, whose transfers INFO counts: the lab's QEMU has one (vm/boot)");
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, watch);
	ASSERT_EQ(0, pindma_pin(fd, buf, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &h));
	ASSERT_EQ(0, pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, c, sizeof(c), &engine));
	/* root sees another file's handle and pages. */
	before = info(watch);
	EXPECT_LE(1U, before.handles);
	EXPECT_LE(1U, before.pages_held);
	EXPECT_LE(2U, before.edu_transfers);
	EXPECT_STEPS_PASS(info_as_nobody, buf);
	/* And another user's edu transfers; its pins went with it. */
	after = info(watch);
	EXPECT_EQ(before.edu_transfers + 2, after.edu_transfers);
	EXPECT_EQ(before.handles, after.handles);
	EXPECT_EQ(0, pindma_unpin(fd, h));
	close(watch);
	close(fd);
	munmap(buf, 2 * LAB_PAGE);
}

/*
 * The capability checks INFO makes, seen by the kernel's own tracer: a kprobe event on
 * cap_capable() (what capable() and its _noaudit forms end in, with or without an LSM), its cap
 * and opts arguments, in a tracefs instance of this test's own, for one process only.
 */
#define TRACEFS "/sys/kernel/tracing"
#define CAP_PROBE "p:lab_access/cap_capable cap_capable cap=$arg3:s32 opts=$arg4:u32"
/* include/linux/security.h: the check is not to be audited. */
#define CAP_OPT_NOAUDIT 2

static int nobody_calls_info(struct lab_child *c, void *arg)
{
	struct pindma_info i;
	int fd = nobody_opens_pindma(8);

	(void)arg;
	if (fd < 0 || lab_child_report(c, "r", 1) || lab_child_wait(c) < 0)
		return 10;
	if (pindma_call(fd, PINDMA_IOC_INFO, &i))
		return 11;
	return lab_child_report(c, "d", 1) || lab_child_wait(c) < 0 ? 12 : 0;
}

/*
 * INFO asks whether its caller has CAP_SYS_ADMIN on every call, to choose which counts to give.
 * A user without it is not refused anything, so the check must not be audited: under an LSM an
 * audited capable() logs a denial each time (ns_capable_noaudit(), as pin.c asks for
 * CAP_IPC_LOCK only when over the limit).
 */
TEST(info_asks_for_cap_sys_admin_without_an_audit)
{
	char inst[64], path[128], line[512], r;
	int audited = 0, quiet = 0, fd;
	struct lab_child c;
	FILE *f;

	ASSERT_EQ(0U, geteuid()) TH_LOG("needs root (tracefs)");
	fd = open(TRACEFS "/kprobe_events", O_WRONLY | O_APPEND);
	ASSERT_LE(0, fd);
	ASSERT_TRUE(write(fd, CAP_PROBE "\n", strlen(CAP_PROBE) + 1) > 0 || errno == EEXIST);
	close(fd);
	snprintf(line, sizeof(line), "lab-access-%d", getpid());
	ASSERT_EQ(0, lab_trace_make(inst, sizeof(inst), line));
	ASSERT_EQ(0, lab_child_start(&c, nobody_calls_info, NULL));
	ASSERT_EQ(0, lab_child_read(&c, &r, 1));
	snprintf(line, sizeof(line), "common_pid == %d", c.pid);
	ASSERT_EQ(0, lab_trace_set(inst, "events/lab_access/cap_capable/filter", line));
	ASSERT_EQ(0, lab_trace_set(inst, "events/lab_access/cap_capable/enable", "1"));
	ASSERT_EQ(0, lab_child_go(&c, 'g'));
	ASSERT_EQ(0, lab_child_read(&c, &r, 1));
	lab_trace_set(inst, "events/lab_access/cap_capable/enable", "0");
	ASSERT_EQ(0, lab_child_go(&c, 'x'));
	EXPECT_EQ(0, lab_child_reap(&c));
	snprintf(path, sizeof(path), "%s/trace", inst);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " cap=");
		int cap, opts;

		if (line[0] == '#' || !p || sscanf(p, " cap=%d opts=%d", &cap, &opts) != 2 ||
		    cap != CAP_SYS_ADMIN)
			continue;
		if (opts & CAP_OPT_NOAUDIT)
			quiet++;
		else
			audited++;
	}
	fclose(f);
	lab_trace_remove(inst);
	fd = open(TRACEFS "/kprobe_events", O_WRONLY | O_APPEND);
	if (fd >= 0 && write(fd, "-:lab_access/cap_capable\n", 25) < 0)
		TH_LOG("the kprobe event stays defined: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	TH_LOG("INFO as nobody: CAP_SYS_ADMIN asked %d times with an audit, %d without",
	       audited, quiet);
	EXPECT_EQ(0, audited);
	EXPECT_LE(1, quiet) TH_LOG("INFO must still ask (it gives root the module's counts)");
}

/*
 * root pins its memory and hands the very file to an unprivileged process: the handle
 * still does not work there (another address space), and the file pins only the
 * receiver's own memory for it.
 */
TEST(another_process_cannot_use_my_handles_even_with_my_file)
{
	char *buf = lab_map_anon(4 * LAB_PAGE);
	uint32_t h, engine = PINDMA_ENGINE_CPU;
	int sv[2], fd = pindma_open(), status;
	uint64_t pfn;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	memset(buf, 's', 4 * LAB_PAGE);
	ASSERT_EQ(0, pindma_pin(fd, buf, 4 * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM,
				PINDMA_PIN_WRITE, &h));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* A fresh process image would do the same; fork keeps the test short. */
		char mine[LAB_PAGE] __attribute__((aligned(4096))), b[16] = "stolen";
		uint32_t my_h;
		int got;

		close(fd);
		if (lab_become_nobody(8))
			_exit(10);
		got = lab_recv_fd(sv[1]);
		if (got < 0)
			_exit(11);
		if (pindma_dma(got, PINDMA_IOC_DMA_READ, h, 0, b, 16, &engine) != -EPERM)
			_exit(12);
		if (pindma_dma(got, PINDMA_IOC_DMA_WRITE, h, 0, b, 16, &engine) != -EPERM)
			_exit(13);
		if (pindma_query(got, h, 0, &pfn) != -EPERM || pindma_unpin(got, h) != -EPERM)
			_exit(14);
		memset(mine, 'm', sizeof(mine));
		if (pindma_pin(got, mine, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, 0, &my_h))
			_exit(15);
		if (pindma_dma(got, PINDMA_IOC_DMA_READ, my_h, 0, b, 16, &engine) || b[0] != 'm')
			_exit(16);
		_exit(pindma_unpin(got, my_h) ? 17 : 0);
	}
	ASSERT_EQ(0, lab_send_fd(sv[0], fd));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed", WEXITSTATUS(status));
	EXPECT_EQ('s', buf[0]);
	EXPECT_EQ(0, pindma_unpin(fd, h));
	close(fd);
}

/* Kernel addresses and ranges above the user address space are not pinnable. */
TEST(kernel_addresses_are_refused)
{
	int fd = pindma_open();
	uint32_t h;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EOVERFLOW, pindma_pin(fd, (void *)0xffff888000000000UL, LAB_PAGE,
					 PINDMA_MODE_GUP, 0, &h));
	EXPECT_EQ(-EOVERFLOW, pindma_pin(fd, (void *)0x00007ffffffff000UL, 2 * LAB_PAGE,
					 PINDMA_MODE_PIN_LONGTERM, 0, &h));
	close(fd);
}

LAB_HARNESS_MAIN
