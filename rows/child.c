// SPDX-License-Identifier: GPL-2.0
/*
 * The child's side of DONTFORK. A program pins a buffer for a device (RDMA, a GPU), then forks
 * workers (PyTorch's DataLoader) that touch it. uccl-project/uccl#895: the workers crash, because
 * the buffers they inherited were MADV_DONTFORK'd; ROCm/rocm-systems#356 dropped MADV_DONTFORK
 * from libhsakmt's host memory (hipHostMalloc) for the same crash, and mapped it MAP_SHARED. The
 * rows pin one page with pindma (PIN_LONGTERM: FOLL_PIN | FOLL_LONGTERM, as ib_umem pins) and let
 * a child read and write it, with the range plain private anonymous memory (the control),
 * MADV_DONTFORK, MAP_SHARED anonymous, or MADV_WIPEONFORK. They model a FOLL_PIN pin, not
 * ROCm's: amdgpu/KFD userptr memory is not pinned but mirrored (hmm_range_fault() and an
 * mmu_interval_notifier), and a fork of a private mapping sends MMU_NOTIFY_PROTECTION_PAGE
 * (copy_page_range(), is_cow_mapping()) that evicts the GPU's buffer, which MAP_SHARED avoids:
 * that is #356's stated reason. child-shared reproduces ROCm's outcome for the child, not its
 * reason; the ROCm driver side is not modelled. A family in one file: its observations, its
 * play, then its verdict, checks, table and why.
 *
 * Each side is seen from outside the code under test. The parent's: the driver's CPU engine reads
 * and writes the page the pin holds (the kernel's mapping of it), the driver and pagemap give its
 * PFN, and /proc/vmstat's nr_foll_pin_acquired that the pin is a FOLL_PIN one. The child's: it
 * reports nothing. The parent, its tracer (PTRACE_SEIZE), reads its /proc/<pid>/maps, pagemap
 * and smaps right after the fork and again once it touched the range and stopped, its page's
 * kpageflags, and its bytes through /proc/<pid>/mem; a SIGSEGV stops it first, and
 * PTRACE_GETSIGINFO says where and why (si_addr, si_code), its wait status that it killed it.
 * What decided it is the range's VmFlags in the parent's smaps before the fork: dc
 * (VM_DONTCOPY), sh (VM_SHARED), wf (VM_WIPEONFORK).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kernel-page-flags.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "pindma_lib.h"
#include "pindma_obs.h"

struct child_obs {
	uint64_t drv_before, par_before;	/* the pinned page, by the driver and by pagemap */
	uint64_t drv_after, par_after;		/* the same after the parent's and device's write */
	uint64_t child_fork;	/* the child's PFN right after the fork, untouched (0: none) */
	uint64_t child_touch;	/* ... once it read and wrote the range */
	uint64_t page;		/* the range's address, the same in parent and child */
	uint64_t segv_addr;	/* the child's SIGSEGV: si_addr, by ptrace (0: none) */
	int64_t pins_acquired;	/* nr_foll_pin_acquired's delta over the pin (/proc/vmstat) */
	int64_t pins_released;	/* ... and nr_foll_pin_released's, anyone's */
	int64_t mem_errno;	/* reading the child's range (/proc/<pid>/mem) after its touch */
	int64_t segv_code;	/* the child's SIGSEGV: si_code, by ptrace (0: none; SI_TKILL < 0) */
	bool control_moved;	/* before the fork the device's write reached the parent's page */
	bool dev_sees_parent;	/* after the fork, the device reads the parent's write */
	bool parent_sees_dev;	/* ... and the parent reads the device's */
	bool device_reads_own;	/* the device reads back what it wrote */
	bool dev_sees_child;	/* the device reads what the child wrote */
	bool child_has_range;	/* the child's maps cover the page */
	bool child_segv;	/* the child was killed by SIGSEGV (its wait status) */
	bool child_zero_page;	/* after its write the child maps the shared zero page (kpageflags) */
	bool par_thp;		/* the pinned page is part of a THP (kpageflags) */
	/*
	 * What the parent read of the child's page (/proc/<pid>/mem) where the parent wrote
	 * after the fork, where the device did and where the child did: pre-fork, parent,
	 * device, child, zero or other; "-": nothing read
	 */
	char child_at_parent[12];
	char child_at_device[12];
	char child_at_child[12];
	char vma_flags[12];	/* which of dc, sh, wf the parent's VmFlags (smaps) had at fork */
	char child_flags[12];	/* ... and the child's for the range, when it has one */
	uint32_t engine;	/* PINDMA_ENGINE_* that served, by the driver's reply */
};

#define OFF_PARENT 0	/* where the parent writes after the fork */
#define OFF_DEVICE 256	/* where the device writes after the fork */
#define OFF_CHILD 512	/* where the child writes */
#define OFF_CONTROL 768	/* where the device writes before the fork */
#define TAG 16

static const char PREFORK[TAG] = "pre-fork bytes";
static const char PARENT[TAG] = "parent wrote";
static const char DEVICE[TAG] = "device wrote";
static const char CHILD[TAG] = "child wrote";
static const char CONTROL[TAG] = "device control";

/*
 * The child reports nothing: it touches the range when told and stops itself, and the parent,
 * its tracer, looks at it from outside while it is stopped (or finds it stopped by SIGSEGV).
 */
static int child_main(struct lab_child *c, void *arg)
{
	volatile char *page = arg;

	if (lab_child_wait(c) != 'r')
		return 1;
	/*
	 * A DataLoader worker reading its inherited buffer, then writing into it: SIGSEGV on the
	 * first read without the range. Volatile, so that both reads happen, before the write.
	 */
	(void)page[OFF_PARENT];
	(void)page[OFF_DEVICE];
	for (int i = 0; i < TAG; i++)
		page[OFF_CHILD + i] = CHILD[i];
	raise(SIGSTOP);
	/* Alive until the device has read what it wrote. */
	return lab_child_wait(c) != 'x';
}

static void classify(char *out, size_t n, const char *bytes)
{
	static const struct {
		const char *tag, *name;
	} tags[] = {
		{ PREFORK, "pre-fork" }, { PARENT, "parent" }, { DEVICE, "device" },
		{ CHILD, "child" },
	};
	bool zero = true;

	for (unsigned int i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (!memcmp(bytes, tags[i].tag, TAG)) {
			snprintf(out, n, "%s", tags[i].name);
			return;
		}
	for (int i = 0; i < TAG; i++)
		zero &= !bytes[i];
	snprintf(out, n, "%s", zero ? "zero" : "other");
}

/*
 * Which of the VmFlags that decide what fork gives the child the range has, by pid's smaps (0:
 * the parent's own). -1 when smaps could not be read or holds no entry for the range: a caller
 * that asks knows the range is mapped, so that is a failed read, never "no flag".
 */
static int vma_flags(pid_t pid, char *o, size_t n, const char *page)
{
	static const char *const decide[] = { "dc", "sh", "wf" };
	char all[256], padded[260];

	o[0] = 0;
	if (!lab_pid_vmflags(pid, page, all, sizeof(all)))
		return -1;
	snprintf(padded, sizeof(padded), " %s ", all);
	for (unsigned int i = 0; i < sizeof(decide) / sizeof(decide[0]); i++) {
		char word[8];

		snprintf(word, sizeof(word), " %s ", decide[i]);
		if (strstr(padded, word))
			snprintf(o + strlen(o), n - strlen(o), "%s%s", o[0] ? " " : "", decide[i]);
	}
	return 0;
}

static int dma(struct record *rec, int fd, unsigned long req, uint32_t handle, uint64_t off,
	       void *buf, uint64_t len, uint32_t *engine)
{
	int ret;

	*engine = PINDMA_ENGINE_CPU;
	ret = pindma_dma(fd, req, handle, off, buf, len, engine);
	if (ret)
		return errno = -ret, row_fail(rec, "device %s", req == PINDMA_IOC_DMA_WRITE ?
					      "write" : "read");
	return 0;
}

/*
 * The child right after the fork, untouched, blocked on its pipe: whether its maps cover the
 * range, its PFN there and its VmFlags, each read by the parent from /proc/<pid>.
 */
static int first_look(struct record *rec, pid_t pid, const char *page)
{
	struct child_obs *o = ROW_OBS(rec, struct child_obs);
	int holds = lab_maps_holds(pid, page);

	if (holds < 0)
		return row_fail(rec, "reading the child's /proc/%d/maps", (int)pid);
	o->child_has_range = holds;
	errno = 0;
	if (lab_pid_pfn_read(pid, page, &o->child_fork))
		return row_fail(rec, "reading the child's PFN from /proc/%d/pagemap", (int)pid);
	if (holds && vma_flags(pid, o->child_flags, sizeof(o->child_flags), page))
		return row_fail(rec, "reading the child's VmFlags from /proc/%d/smaps", (int)pid);
	return 0;
}

/*
 * Wait for the traced child's next stop: its signal, with *si from PTRACE_GETSIGINFO. A child
 * that ended instead is reaped (its status in *status) and 0 returned; -1 on a failed wait.
 */
static int next_stop(struct lab_child *child, siginfo_t *si, int *status)
{
	if (waitpid(child->pid, status, 0) != child->pid)
		return -1;
	if (!WIFSTOPPED(*status)) {
		child->pid = -1;
		return 0;
	}
	if (ptrace(PTRACE_GETSIGINFO, child->pid, NULL, si))
		return -1;
	return WSTOPSIG(*status);
}

/*
 * The child's bytes at the range, read by the parent, its tracer, through /proc/<pid>/mem
 * (access_remote_vm() on the child's mm). Not process_vm_readv(): the lab's kernels are built
 * without CONFIG_CROSS_MEMORY_ATTACH (ENOSYS). 0 with all len bytes; EIO where the child maps
 * nothing (mem_rw() copied nothing); -1 with errno set when the read itself failed.
 */
static int child_bytes(pid_t pid, const char *page, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	errno = 0;
	n = pread(fd, buf, len, (off_t)(uintptr_t)page);
	close(fd);
	if (n < 0 && errno == EIO)
		return EIO;
	if (n != (ssize_t)len) {
		if (n >= 0)
			errno = ENODATA;	/* a short read */
		return -1;
	}
	return 0;
}

/*
 * Stopped by SIGSEGV: where and why, by the kernel's siginfo; whether its memory holds the
 * range at all (/proc/<pid>/mem reads nothing, EIO, where the child maps nothing); then the
 * signal is delivered, and the wait status must say it killed the child.
 */
static int child_faulted(struct record *rec, struct lab_child *child, const siginfo_t *si,
			 char *page)
{
	struct child_obs *o = ROW_OBS(rec, struct child_obs);
	char buf[OFF_CHILD + TAG], how[48];
	int status;

	o->segv_code = si->si_code;
	o->segv_addr = (uintptr_t)si->si_addr;
	o->mem_errno = child_bytes(child->pid, page, buf, sizeof(buf));
	if (o->mem_errno < 0)
		return row_fail(rec, "reading the faulted child's /proc/%d/mem", (int)child->pid);
	if (!o->mem_errno) {
		classify(o->child_at_parent, sizeof(o->child_at_parent), buf + OFF_PARENT);
		classify(o->child_at_device, sizeof(o->child_at_device), buf + OFF_DEVICE);
		classify(o->child_at_child, sizeof(o->child_at_child), buf + OFF_CHILD);
	}
	if (ptrace(PTRACE_CONT, child->pid, NULL, (void *)(long)SIGSEGV))
		return row_fail(rec, "PTRACE_CONT with the child's SIGSEGV");
	status = lab_child_reap(child);
	if (status == -1 || !WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV) {
		errno = 0;
		return row_fail(rec, "the child %s after its SIGSEGV was delivered",
				lab_wait_status(status, how, sizeof(how)));
	}
	o->child_segv = true;
	return 0;
}

/*
 * Stopped by its own SIGSTOP once it touched the range: its page (pagemap, kpageflags) and its
 * bytes (/proc/<pid>/mem), read by the parent while it cannot change them.
 */
static int child_touched(struct record *rec, pid_t pid, char *page)
{
	struct child_obs *o = ROW_OBS(rec, struct child_obs);
	char buf[OFF_CHILD + TAG];
	uint64_t flags;

	errno = 0;
	if (lab_pid_pfn_read(pid, page, &o->child_touch))
		return row_fail(rec, "reading the child's PFN from /proc/%d/pagemap", (int)pid);
	if (!o->child_touch)
		return row_fail(rec, "the child's page is not present after its touch");
	if (lab_pfn_flags(o->child_touch, &flags))
		return row_fail(rec, "reading the child's page's /proc/kpageflags");
	o->child_zero_page = flags & (1ULL << KPF_ZERO_PAGE);
	o->mem_errno = child_bytes(pid, page, buf, sizeof(buf));
	if (o->mem_errno)
		return row_fail(rec, "reading the child's range from /proc/%d/mem", (int)pid);
	classify(o->child_at_parent, sizeof(o->child_at_parent), buf + OFF_PARENT);
	classify(o->child_at_device, sizeof(o->child_at_device), buf + OFF_DEVICE);
	classify(o->child_at_child, sizeof(o->child_at_child), buf + OFF_CHILD);
	return 0;
}

/* After the fork: the parent and the device write, the child touches, the device reads. */
static int after_fork(struct record *rec, int fd, uint32_t handle, char *page,
		      struct lab_child *child)
{
	struct child_obs *o = ROW_OBS(rec, struct child_obs);
	char seen[OFF_CHILD + TAG], how[48];
	siginfo_t si = { 0 };
	int status, sig;

	/*
	 * Traced, the child's SIGSEGV stops it before it kills it: the parent reads the fault's
	 * siginfo. Seized before it is told to touch anything (it is blocked on its pipe).
	 */
	if (ptrace(PTRACE_SEIZE, child->pid, NULL, NULL))
		return row_fail(rec, "PTRACE_SEIZE of the child");
	if (first_look(rec, child->pid, page))
		return -1;
	memcpy(page + OFF_PARENT, PARENT, TAG);
	if (dma(rec, fd, PINDMA_IOC_DMA_WRITE, handle, OFF_DEVICE, (void *)DEVICE, TAG, &o->engine))
		return -1;
	if (lab_child_go(child, 'r'))
		return row_fail(rec, "telling the child to touch the range");
	sig = next_stop(child, &si, &status);
	if (sig == SIGSEGV) {
		if (child_faulted(rec, child, &si, page))
			return -1;
	} else if (sig == SIGSTOP && si.si_pid == child->pid) {
		if (child_touched(rec, child->pid, page))
			return -1;
	} else {
		errno = 0;
		return row_fail(rec, "the child %s instead of stopping after its touch",
				sig < 0 ? "could not be waited for" :
				sig ? strsignal(sig) : lab_wait_status(status, how, sizeof(how)));
	}
	/* The device reads the parent's, its own and the child's bytes in one transfer. */
	if (dma(rec, fd, PINDMA_IOC_DMA_READ, handle, 0, seen, sizeof(seen), &o->engine))
		return -1;
	o->dev_sees_parent = !memcmp(seen + OFF_PARENT, PARENT, TAG);
	o->device_reads_own = !memcmp(seen + OFF_DEVICE, DEVICE, TAG);
	o->dev_sees_child = !memcmp(seen + OFF_CHILD, CHILD, TAG);
	o->parent_sees_dev = !memcmp(page + OFF_DEVICE, DEVICE, TAG);
	if (pindma_row_pfn(rec, page, &o->par_after, "parent's") ||
	    pindma_row_query(rec, fd, handle, &o->drv_after))
		return -1;
	if (o->child_segv)
		return 0;
	/* Its own SIGSTOP suppressed, the child goes on to exit. */
	if (ptrace(PTRACE_CONT, child->pid, NULL, NULL) || lab_child_go(child, 'x'))
		return row_fail(rec, "letting the child exit");
	status = lab_child_reap(child);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		errno = 0;
		return row_fail(rec, "the child %s", lab_wait_status(status, how, sizeof(how)));
	}
	return 0;
}

/*
 * The pin, with the kernel's FOLL_PIN counters around it: a pin that is not FOLL_PIN (FOLL_GET,
 * say) is not the pin the rows are about, whatever the driver calls it. The acquired count, not
 * lab_foll_pins()'s outstanding one: the demos play side by side, and another row's unpin in
 * the window took the outstanding count's delta to 0 (seen: child-shared in rows_test). No one
 * else's release lowers what was acquired; only another's pin in the window could hide a
 * FOLL_GET pin, and a plant plays child_demo alone.
 */
static int pin(struct record *rec, int fd, char *page, uint32_t *handle)
{
	struct child_obs *o = ROW_OBS(rec, struct child_obs);
	long acquired = lab_vmstat("nr_foll_pin_acquired");
	long released = lab_vmstat("nr_foll_pin_released"), now[2];
	int ret;

	if (acquired < 0 || released < 0)
		return errno = 0, row_fail(rec, "reading nr_foll_pin_* from /proc/vmstat");
	ret = pindma_pin(fd, page, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, handle);
	if (ret)
		return errno = -ret, row_fail(rec, "pin");
	now[0] = lab_vmstat("nr_foll_pin_acquired");
	now[1] = lab_vmstat("nr_foll_pin_released");
	if (now[0] < 0 || now[1] < 0)
		return errno = 0, row_fail(rec, "reading nr_foll_pin_* from /proc/vmstat");
	o->pins_acquired = now[0] - acquired;
	o->pins_released = now[1] - released;
	return 0;
}

int play_child(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	struct child_obs *o = ROW_OBS(rec, struct child_obs);
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	int flags = (r->mem == MEM_SHARED ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS;
	uint32_t handle = 0;
	uint64_t kpf;
	char *page;
	int fd, ret = -1, unpinned;

	(void)opts;
	snprintf(o->child_at_parent, sizeof(o->child_at_parent), "-");
	snprintf(o->child_at_device, sizeof(o->child_at_device), "-");
	snprintf(o->child_at_child, sizeof(o->child_at_child), "-");
	fd = pindma_open();
	if (fd < 0)
		return errno = -fd, row_fail(rec, "open /dev/pindma (is pindma.ko loaded?)");
	page = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (page == MAP_FAILED) {
		row_fail(rec, "mmap");
		goto out_fd;
	}
	o->page = (uintptr_t)page;
	/*
	 * One base page whatever the THP mode (anonymous or shmem): a huge page around it would
	 * be a different stage (the pindma THP rows'), and pagemap's PFN one of 512.
	 */
	if (madvise(page, LAB_PAGE, MADV_NOHUGEPAGE)) {
		row_fail(rec, "MADV_NOHUGEPAGE");
		goto out;
	}
	memset(page, 0, LAB_PAGE);
	memcpy(page + OFF_PARENT, PREFORK, TAG);
	memcpy(page + OFF_DEVICE, PREFORK, TAG);
	memcpy(page + OFF_CHILD, PREFORK, TAG);
	errno = 0;
	if (r->dontfork && madvise(page, LAB_PAGE, MADV_DONTFORK)) {
		row_fail(rec, "MADV_DONTFORK");
		goto out;
	}
	if (r->wipeonfork && madvise(page, LAB_PAGE, MADV_WIPEONFORK)) {
		row_fail(rec, "MADV_WIPEONFORK");
		goto out;
	}
	if (vma_flags(0, o->vma_flags, sizeof(o->vma_flags), page)) {
		row_fail(rec, "reading the range's VmFlags from /proc/self/smaps");
		goto out;
	}
	if (pin(rec, fd, page, &handle) || pindma_row_query(rec, fd, handle, &o->drv_before))
		goto out;
	/* The control: the device reaches the page the parent sees, or nothing else means much. */
	if (dma(rec, fd, PINDMA_IOC_DMA_WRITE, handle, OFF_CONTROL, (void *)CONTROL, TAG,
		&o->engine))
		goto out;
	o->control_moved = !memcmp(page + OFF_CONTROL, CONTROL, TAG);
	if (pindma_row_pfn(rec, page, &o->par_before, "parent's"))
		goto out;
	if (lab_pfn_flags(o->par_before, &kpf)) {
		row_fail(rec, "reading the pinned page's /proc/kpageflags");
		goto out;
	}
	o->par_thp = kpf & (1ULL << KPF_THP);
	if (lab_child_start(&child, child_main, page)) {
		row_fail(rec, "fork");
		goto out;
	}
	ret = after_fork(rec, fd, handle, page, &child);
out:
	lab_child_end(&child);
	if (handle) {
		unpinned = pindma_unpin(fd, handle);
		if (unpinned && !ret) {
			errno = -unpinned;
			ret = row_fail(rec, "unpin");
		}
	}
	if (page != MAP_FAILED)
		munmap(page, LAB_PAGE);
out_fd:
	close(fd);
	return ret;
}

/* The child's SIGSEGV is the range's: a SEGV_MAPERR (no VMA there) at an address in the page. */
static bool segv_in_range(const struct child_obs *o)
{
	return o->child_segv && o->segv_code == SEGV_MAPERR && o->segv_addr >= o->page &&
	       o->segv_addr < o->page + LAB_PAGE;
}

/*
 * The parent's side first: the device and the parent must still share the pinned page (COHERENT
 * in the pindma rows' words), or it is ORPHANED whatever the child saw. Then the child's side, in
 * one word each, from what the parent read of the child: SIGSEGV (the kernel killed it with a
 * SEGV_MAPERR in the range), SHARED (its page holds the parent's and the device's writes, and the
 * device reads its own), ZEROES, or PRE-FORK (its page holds what was there at the fork, and the
 * device never sees its write). In each but SIGSEGV the child's own write must be in its page.
 */
static const char *child_verdict(const struct record *rec, char *why, size_t n)
{
	const struct child_obs *o = ROW_OBS(rec, struct child_obs);
	bool coherent, orphaned, wrote = !strcmp(o->child_at_child, "child");
	const char *unproven;

	unproven = pindma_device_unproven(o->control_moved, o->device_reads_own, o->drv_after,
					  o->par_after);
	if (unproven)
		return snprintf(why, n, "%s", unproven), NULL;
	coherent = o->dev_sees_parent && o->parent_sees_dev && o->drv_after == o->par_after;
	orphaned = !o->dev_sees_parent && !o->parent_sees_dev && o->drv_after != o->par_after;
	if (orphaned)
		return "ORPHANED";
	if (!coherent)
		return snprintf(why, n, "dev->par %d, par->dev %d, driver %llx, parent %llx "
				"disagree", o->parent_sees_dev, o->dev_sees_parent,
				(unsigned long long)o->drv_after, (unsigned long long)o->par_after),
		       NULL;
	if (segv_in_range(o) && !strcmp(o->child_at_parent, "-"))
		return "SIGSEGV";
	if (o->child_segv)
		return snprintf(why, n, "the child's SIGSEGV (si_code %lld at %llx) is not a "
				"SEGV_MAPERR in the range at %llx", (long long)o->segv_code,
				(unsigned long long)o->segv_addr, (unsigned long long)o->page), NULL;
	if (!strcmp(o->child_at_parent, "parent") && !strcmp(o->child_at_device, "device") &&
	    wrote && o->dev_sees_child)
		return "SHARED";
	if (!strcmp(o->child_at_parent, "zero") && !strcmp(o->child_at_device, "zero") &&
	    wrote && !o->dev_sees_child)
		return "ZEROES";
	if (!strcmp(o->child_at_parent, "pre-fork") && !strcmp(o->child_at_device, "pre-fork") &&
	    wrote && !o->dev_sees_child)
		return "PRE-FORK";
	snprintf(why, n, "the child's page holds %s, %s and %s, the device read its write %d",
		 o->child_at_parent, o->child_at_device, o->child_at_child, o->dev_sees_child);
	return NULL;
}

/* What each stage must show of the child's range and pages, by the kernel's own interfaces. */
static unsigned int child_checks(const struct record *rec, struct check *c)
{
	const struct child_obs *o = ROW_OBS(rec, struct child_obs);
	const struct row *r = rec->row;
	bool shared = r->mem == MEM_SHARED, orphaned = !strcmp(rec->observed, "ORPHANED");
	char flags[sizeof(o->vma_flags) + 1];
	unsigned int k = 0;

	snprintf(flags, sizeof(flags), "%s%s%s", r->dontfork ? " dc" : "", shared ? " sh" : "",
		 r->wipeonfork ? " wf" : "");
	CHECK(!strcmp(o->vma_flags, flags + !!flags[0]), "the range's VmFlags of dc, sh, wf are "
	      "\"%s\" (\"%s\")", flags + !!flags[0], o->vma_flags);
	CHECK(o->pins_acquired >= 1, "the pin took FOLL_PIN pins by /proc/vmstat (%lld acquired)",
	      (long long)o->pins_acquired);
	CHECK(!o->par_thp, "the pinned page is a base page, no THP's (kpageflags)");
	CHECK(o->engine == PINDMA_ENGINE_CPU, "the driver says its CPU engine served the DMA");
	CHECK(o->drv_before == o->par_before, "the driver held the parent's page when pinned");
	CHECK(o->drv_after == o->drv_before, "the driver's page never changed");
	if (!orphaned)
		CHECK(o->par_after == o->par_before, "the parent kept its page");
	if (r->dontfork) {
		CHECK(!o->child_has_range && !o->child_fork,
		      "the child has no such range (VM_DONTCOPY), by its maps and pagemap");
		CHECK(segv_in_range(o), "touching it, the child was killed by a SIGSEGV, "
		      "SEGV_MAPERR in the range (SIGSEGV %d, si_code %lld at page%+lld)",
		      o->child_segv, (long long)o->segv_code,
		      o->segv_addr ? (long long)(o->segv_addr - o->page) : 0LL);
		CHECK(o->mem_errno == EIO, "/proc/<pid>/mem finds nothing there (%s)",
		      strerror((int)o->mem_errno));
		return k;
	}
	/* A child that has the range keeps the parent's VMA flags for it, by its own smaps. */
	CHECK(o->child_has_range && !strcmp(o->child_flags, o->vma_flags),
	      "the child has the range, with VmFlags of dc, sh, wf \"%s\" (\"%s\")", o->vma_flags,
	      o->child_flags);
	CHECK(!o->child_segv && !o->mem_errno,
	      "the child lived through its touch and the parent read its page");
	/* Its own write, read back by the parent: the child's page is the one it wrote. */
	CHECK(!strcmp(o->child_at_child, "child") && o->child_touch && !o->child_zero_page,
	      "the child's page holds its write, and is not the shared zero page (%s)",
	      o->child_at_child);
	if (r->wipeonfork) {
		CHECK(!o->child_fork, "right after the fork the range has no page (VM_WIPEONFORK)");
		CHECK(o->child_touch != o->drv_before, "touching it, the child got a page of its own");
		/* A page nobody but the child wrote: where the others wrote it must hold zeroes. */
		CHECK(!strcmp(o->child_at_parent, "zero") && !strcmp(o->child_at_device, "zero"),
		      "in that new page the child has zeroes (%s, %s)", o->child_at_parent,
		      o->child_at_device);
	} else if (shared) {
		/*
		 * No anon_vma: copy_page_range() copies no PTE (vma_needs_copy()), and the child's
		 * fault finds the shmem folio the pin holds in the page cache.
		 */
		CHECK(!o->child_fork, "right after the fork the child's page table has no entry for "
		      "it (VM_SHARED)");
		CHECK(o->child_touch == o->drv_before,
		      "touching it, the child mapped the driver's very page");
		CHECK(!strcmp(o->child_at_parent, "parent") && !strcmp(o->child_at_device, "device"),
		      "in it the child has the parent's and the device's writes (%s, %s)",
		      o->child_at_parent, o->child_at_device);
	} else if (orphaned) {
		/* Fork shared the pinned page after all: the parent's write left it to the child. */
		CHECK(o->child_fork && o->child_fork == o->drv_before,
		      "fork left the pinned page to the child");
		CHECK(o->child_touch == o->child_fork, "touching it, the child kept fork's page");
		CHECK(!strcmp(o->child_at_parent, "pre-fork") && !strcmp(o->child_at_device, "device"),
		      "in it the child has the pre-fork bytes and the device's (%s, %s)",
		      o->child_at_parent, o->child_at_device);
	} else {
		CHECK(o->child_fork && o->child_fork != o->drv_before,
		      "fork gave the child a copy of the pinned page");
		CHECK(o->child_touch == o->child_fork, "touching it, the child kept fork's page");
		CHECK(!strcmp(o->child_at_parent, "pre-fork") &&
		      !strcmp(o->child_at_device, "pre-fork"),
		      "in its copy the child has the pre-fork bytes (%s, %s)",
		      o->child_at_parent, o->child_at_device);
	}
	CHECK(o->dev_sees_child == (shared || orphaned), "the device %s the child's write",
	      shared || orphaned ? "reads" : "never reads");
	return k;
}

static void child_header(FILE *f)
{
	fprintf(f, "PFNs in hex; par<>dev: the parent and the device read each other's writes "
		"after the fork;\nthe child's PFN right after the fork->after its touch, what its "
		"page holds (read by the parent)\nwhere the parent and the device wrote, and whether "
		"the device read the child's write\n");
	fprintf(f, "%2s %-22s %-8s %-10s %-8s %-13s %-8s %-8s %-9s %-8s %-8s %-8s\n", "#",
		"row", "VmFlags", "pinned pfn", "par<>dev", "child pfn", "parent's", "device's",
		"dev<-chi", "observed", "expected", "status");
}

static void child_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct child_obs *o = ROW_OBS(rec, struct child_obs);
	bool played = rec->observed[0];
	char drv[24] = "-", chi[40] = "-";

	if (played) {
		snprintf(drv, sizeof(drv), "%llx", (unsigned long long)o->drv_before);
		if (!o->child_has_range)
			snprintf(chi, sizeof(chi), "none");
		else
			snprintf(chi, sizeof(chi), "%llx->%llx", (unsigned long long)o->child_fork,
				 (unsigned long long)o->child_touch);
	}
	fprintf(f, "%2u %-22s %-8s %-10s %-8s %-13s %-8s %-8s %-9s %-8s %-8s %s\n", i,
		rec->row->name, played ? (o->vma_flags[0] ? o->vma_flags : "none") : "-", drv,
		played ? (o->dev_sees_parent && o->parent_sees_dev ? "yes" : "no") : "-", chi,
		played ? (o->child_segv ? "SIGSEGV" : o->child_at_parent) : "-",
		played ? (o->child_segv ? "SIGSEGV" : o->child_at_device) : "-",
		played ? (o->dev_sees_child ? "yes" : "no") : "-", played ? rec->observed : "-",
		rec->expected[0] ? rec->expected : "none", record_status_name(rec->status));
}

/*
 * The VMA flag that decided, from the parent's VmFlags before the fork. dup_mmap() tests
 * VM_DONTCOPY (the VMA is left out), then VM_WIPEONFORK (the VMA without anon_vma or page
 * table); every other VMA goes to copy_page_range(), where VM_SHARED counts: no anon_vma, no
 * PTE copied (vma_needs_copy()), and the child's fault finds the shmem page-cache folio again. A
 * private one has its PTEs copied, a maybe-pinned anonymous page into a new page for the child.
 * (madvise() refuses MADV_WIPEONFORK on a shared VMA, so wf and sh never meet.)
 */
static const struct {
	const char *flag, *says;
} deciders[] = {
	{ "dc", "VM_DONTCOPY (MADV_DONTFORK): dup_mmap() leaves the VMA out of the child, which "
		"has no such range: its touch is SIGSEGV (SEGV_MAPERR)" },
	{ "wf", "VM_WIPEONFORK (MADV_WIPEONFORK): dup_mmap() gives the child the VMA without its "
		"page table or anon_vma: its first read maps the shared zero page, its write gets "
		"a zeroed page of its own (wp_page_copy())" },
	{ "sh", "VM_SHARED (MAP_SHARED): the child's VMA maps the same shmem object; "
		"copy_page_range() copies no PTE (no anon_vma), and the child's fault finds the "
		"pinned page-cache folio again: no copy-on-write on either side" },
};

static void child_why(FILE *f, const struct record *rec)
{
	const struct child_obs *o = ROW_OBS(rec, struct child_obs);
	const char *says = "a private anonymous VMA, whose PTEs fork copies; the page is maybe "
			   "DMA-pinned, so copy_present_page() gives the child a copy of it (since "
			   "5.9), with the bytes it had at the fork";
	const char *flag = "none of dc, sh, wf";
	char padded[sizeof(o->vma_flags) + 2];

	fprintf(f, "%s on Linux %s: %s, %s (expected %s)\n", rec->row->name, rec->kernel,
		rec->row->title,
		rec->observed[0] ? rec->observed : record_status_words(rec->status),
		rec->expected[0] ? rec->expected : "none");
	if (!rec->observed[0])
		return;
	/* The first of them the range has decided, in the order above. */
	snprintf(padded, sizeof(padded), " %s ", o->vma_flags);
	for (unsigned int i = 0; i < sizeof(deciders) / sizeof(deciders[0]); i++) {
		char word[8];

		snprintf(word, sizeof(word), " %s ", deciders[i].flag);
		if (strstr(padded, word)) {
			flag = deciders[i].flag;
			says = deciders[i].says;
			break;
		}
	}
	fprintf(f, "    the range's VmFlags before the fork (smaps): %s\n",
		o->vma_flags[0] ? o->vma_flags : "none of dc, sh, wf");
	fprintf(f, "    decided by %s: %s\n", flag, says);
	fprintf(f, "    over the pin /proc/vmstat counted %lld FOLL_PIN pin(s) acquired, %lld released "
		"(anyone's)\n", (long long)o->pins_acquired, (long long)o->pins_released);
	if (!o->child_has_range)
		fprintf(f, "    the child's maps: no such range\n");
	else
		fprintf(f, "    the child's maps: the range, VmFlags %s; its PFN %llx after the fork, "
			"%llx after its touch%s\n", o->child_flags[0] ? o->child_flags : "none",
			(unsigned long long)o->child_fork, (unsigned long long)o->child_touch,
			o->child_zero_page ? " (the shared zero page)" : "");
	if (o->child_segv)
		fprintf(f, "    the child's end (ptrace, wait status): SIGSEGV, si_code %lld%s at "
			"page%+lld; /proc/<pid>/mem: %s\n", (long long)o->segv_code,
			o->segv_code == SEGV_MAPERR ? " (SEGV_MAPERR)" : "",
			(long long)(o->segv_addr - o->page), strerror((int)o->mem_errno));
	else
		fprintf(f, "    the child's page (/proc/<pid>/mem): %s, %s, %s where the parent, the "
			"device and the child wrote\n", o->child_at_parent, o->child_at_device,
			o->child_at_child);
}

static const struct field child_fields[] = {
	OBS_FIELD(child_obs, F_U64, drv_before), OBS_FIELD(child_obs, F_U64, par_before),
	OBS_FIELD(child_obs, F_U64, drv_after), OBS_FIELD(child_obs, F_U64, par_after),
	OBS_FIELD(child_obs, F_U64, child_fork), OBS_FIELD(child_obs, F_U64, child_touch),
	OBS_FIELD(child_obs, F_U64, page), OBS_FIELD(child_obs, F_U64, segv_addr),
	OBS_FIELD(child_obs, F_I64, pins_acquired),
	OBS_FIELD(child_obs, F_I64, pins_released), OBS_FIELD(child_obs, F_I64, mem_errno),
	OBS_FIELD(child_obs, F_I64, segv_code),
	OBS_FIELD(child_obs, F_BOOL, control_moved), OBS_FIELD(child_obs, F_BOOL, dev_sees_parent),
	OBS_FIELD(child_obs, F_BOOL, parent_sees_dev),
	OBS_FIELD(child_obs, F_BOOL, device_reads_own),
	OBS_FIELD(child_obs, F_BOOL, dev_sees_child), OBS_FIELD(child_obs, F_BOOL, child_has_range),
	OBS_FIELD(child_obs, F_BOOL, child_segv), OBS_FIELD(child_obs, F_BOOL, child_zero_page),
	OBS_FIELD(child_obs, F_BOOL, par_thp),
	OBS_FIELD(child_obs, F_STR, child_at_parent), OBS_FIELD(child_obs, F_STR, child_at_device),
	OBS_FIELD(child_obs, F_STR, child_at_child), OBS_FIELD(child_obs, F_STR, vma_flags),
	OBS_FIELD(child_obs, F_STR, child_flags), OBS_FIELD(child_obs, F_U32, engine),
	{ NULL },
};

const struct row_family family_child = {
	.name = "child",
	.title = "the child's side of DONTFORK: a worker forked after the pin touches the range",
	.device = "pindma-cpu",
	.fields = child_fields,
	.play = play_child,
	.verdict = child_verdict,
	.checks = child_checks,
	.table_header = child_header,
	.table_line = child_line,
	.why = child_why,
};
