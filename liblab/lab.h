/* SPDX-License-Identifier: GPL-2.0 */
/*
 * liblab: the user-space side of the lab that the demo, the benchmarks and the tests share. Built
 * as a static archive, one object per topic, so a program links only what it calls. The pindma
 * ioctl wrappers are pindma_lib.h; the fadvise constants, linux_fadvise.h.
 */
#ifndef LAB_H
#define LAB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LAB_PAGE 4096UL

/* proc.c: /proc and /sys readers and knobs */

/* The VmFlags line of our smaps entry holding addr; false when no entry holds it. */
bool lab_vmflags(const void *addr, char *flags, size_t size);
/* One numeric field (kB) of our smaps entry holding addr, e.g. "AnonHugePages"; -1 when missing. */
long lab_smaps_kb(const void *addr, const char *field);
/* Whether flag (e.g. "dc") is among the VmFlags of the mapping holding addr in our own smaps. */
bool lab_has_vmflag(const void *addr, const char *flag);
/* The VmFlags line of process pid's smaps entry holding addr; false when unreadable or none. */
bool lab_pid_vmflags(pid_t pid, const void *addr, char *flags, size_t size);
/* Whether /proc/<pid>/maps (pid 0: self) has an entry covering addr: 1, 0, or -1 (errno) unread. */
int lab_maps_holds(pid_t pid, const void *addr);
/* The same, an unreadable maps read as "not covered". */
bool lab_maps_covers(pid_t pid, const void *addr);
/* Number of /proc/self/maps entries overlapping [addr, addr + len). */
int lab_maps_count(const void *addr, size_t len);
/* One numeric field (kB) of /proc/self/status, e.g. "VmPin"; -1 when missing. */
long lab_status_kb(const char *field);
/* One numeric field (kB) of /proc/meminfo, e.g. "MemFree"; -1 when missing. */
long lab_meminfo_kb(const char *field);
/* The integer at the start of a /proc or /sys file, or -1. */
int lab_read_int(const char *path);
/* A file's start (size - 1 bytes at most) into buf, NUL-terminated: its length, or -1. */
ssize_t lab_read_file(const char *path, char *buf, size_t size);

/* The fork switch, vm.fork_share_pinned (kernel-patches/<ver>/0002): on, fork shares pins. */
#define LAB_SWITCH "/proc/sys/vm/fork_share_pinned"

/* lock.c: the locks the guest's programs share */

/*
 * A lock the guest's programs share (a file in /tmp), so that what runs side by side never changes a
 * global under another's feet: LAB_LOCK_SWITCH is held exclusively by a row that sets
 * vm.fork_share_pinned and shared by a row that needs it to stay as it is (the demos play their
 * rows side by side; guest/run-tests runs test programs one at a time, so a test that sets the
 * switch takes no lock); LAB_LOCK_WRITEBACK
 * exclusively by whoever stops the flusher or counts the slow disk's sectors. The locked fd (close
 * it to unlock), or -1 (ETIMEDOUT after LAB_LOCK_TIMEOUT seconds, default 600, and at once once
 * a wait of the process has given up). A writer waits before later readers. One thread of a
 * process waits at a time (the timer's signal handler is the process's). Not recursive; taken
 * in this order: the switch's, then the hugetlb pool's (the writeback and hugetlb locks take
 * nothing inside them).
 */
#define LAB_LOCK_SWITCH "fork-switch"
#define LAB_LOCK_WRITEBACK "writeback"
#define LAB_LOCK_HUGETLB "hugetlb"	/* growing the hugetlb pool: lab_reserve_hugepages() */
int lab_lock(const char *name, bool exclusive);

/* proc.c, continued */

/*
 * n more 2 MiB hugetlb pages in the pool: vm.nr_hugepages raised by n under LAB_LOCK_HUGETLB,
 * so that demos played at once each get their own; 0 or -1.
 */
int lab_reserve_hugepages(int n);
/* Write value to a /proc or /sys file: 0, or -1 with errno set. */
int lab_write_str(const char *path, const char *value);
/* A /proc/vmstat counter, exact (per-CPU deltas folded first through vm.stat_refresh); -1. */
long lab_vmstat(const char *name);
/* FOLL_PIN pins outstanding system-wide: nr_foll_pin_acquired - nr_foll_pin_released. */
long lab_foll_pins(void);
/*
 * Whether MemFree can show a leak of a few pages. Not under KASAN (the debug flavour, told
 * by its kmemleak): its quarantine keeps megabytes of freed memory back, so there the
 * exact counters and the kmemleak scan after the suite are the leak checks.
 */
bool lab_memfree_is_exact(void);

/* root.c: where the lab's files are */

/*
 * The folder above the program's own: /lab in the guest (programs in /lab/tests, /lab/bin and
 * /lab/demo), DESTDIR/lab in a kselftest collection (make kselftest-install), wherever it was
 * copied: helpers, demos and kernel.env are found from there.
 */
const char *lab_root(void);
/* lab_root()/rel in buf; returns buf. */
const char *lab_path(char *buf, size_t n, const char *rel);
/*
 * module.c: load lab_root()/modules/<name>.ko with the kernel command line's <name>.PARAM=VALUE words;
 * 0 (or already loaded), or -1.
 */
int lab_load_module(const char *name);

/*
 * rdma_nl.c: the kernel's copy-on-fork answer to RDMA netlink (RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK,
 * what rdma-core asks and `rdma system show` prints): 1 or 0 (0 too where the kernel has no such
 * attribute, as both read it), or -1 with errno set when the kernel did not answer.
 */
int lab_rdma_copy_on_fork(void);

/* kernel.c: what the guest knows of its kernel (/lab/kernel.env, written by vm/build-kernel.sh) */

/* The kernel's registry name (kernel-patches/<name>/), or "src" for a user's tree (KERNEL_SRC). */
const char *lab_kernel_name(void);
/* Its version, as make kernelversion says. */
const char *lab_kernel_version(void);
/* The kernels of the registry (kernel-patches/<name>/), oldest first, blank-separated. */
const char *lab_kernel_registry(void);
/* A user's tree, which the lab builds but does not patch. */
bool lab_is_user_tree(void);
/*
 * NULL when the guest's kernel was built with the lab patch numbered number (e.g. "0002"), from
 * what the build applied, never from probing the kernel, so that a broken patch fails its tests
 * instead of skipping them; otherwise why not, "this kernel lacks kernel-patches/<kernel>/<number>".
 * Only a user's tree may lack a patch: the lab's own kernels carry their whole series.
 */
const char *lab_lacks_patch(const char *number);
/*
 * Whether the running kernel has CONFIG_DEBUG_VM: dump_mm() (mm/debug.c) is built only with it,
 * and /proc/kallsyms names it to anyone. The lab's kernels have no /proc/config.gz.
 */
bool lab_kernel_debug_vm(void);

/* pagemap.c: page frame numbers and page flags */

/* PFN of the page mapped at addr, from /proc/self/pagemap; 0 when none is present. */
uint64_t lab_pfn(const void *addr);
/*
 * The Movable zone's span of PFNs, [start, end), from /proc/zoneinfo: 0, or -1 when there is none
 * (a guest booted without movablecore=). A long-term pin moves a page out of it first.
 */
int lab_movable_zone(uint64_t *start, uint64_t *end);
/*
 * The same, telling a failed observation from an absent page: 0 with *pfn the PFN (0: no page
 * present), or -1 with errno set when pagemap could not be read or hides the PFN (EPERM).
 */
int lab_pfn_read(const void *addr, uint64_t *pfn);
/* The same from /proc/<pid>/pagemap (pid 0: self): another process's page, as root. */
int lab_pid_pfn_read(pid_t pid, const void *addr, uint64_t *pfn);
/* /proc/kpageflags of pfn (KPF_*): 0, or -1 with errno set when it could not be read. */
int lab_pfn_flags(uint64_t pfn, uint64_t *flags);
/* len bytes of private anonymous memory, every page present: mmap's result (MAP_FAILED). */
void *lab_map_anon(size_t len);
/* /proc/kpageflags of the page mapped at addr (KPF_* in <linux/kernel-page-flags.h>); 0 if none. */
uint64_t lab_page_flags(const void *addr);
/*
 * Over pages [first, first + n) of a file mapping, count those dirty and those under
 * writeback (/proc/self/pagemap + /proc/kpageflags; maps each page in). 0, or -1 on error.
 */
int lab_page_states(const char *map, unsigned long first, unsigned long n, int *dirty,
		    int *writeback);

/* child.c: the parent/child protocol (one pipe each way, as the kernel's cow.c comm_pipes) */

struct lab_child {
	pid_t pid;
	int to_child[2];
	int to_parent[2];
};
/* Fork a child that runs fn(c, arg) and _exit()s with its return; 0, or -1 with errno set. */
int lab_child_start(struct lab_child *c, int (*fn)(struct lab_child *c, void *arg), void *arg);
/* Child: send a report of len bytes to the parent; 0 or -1. */
int lab_child_report(struct lab_child *c, const void *buf, size_t len);
/* Child: wait for the parent's go; the command byte, or -1 when the parent is gone. */
int lab_child_wait(struct lab_child *c);
/* Parent: read a report of exactly len bytes; 0, or -1 (EPIPE: the child ended first). */
int lab_child_read(struct lab_child *c, void *buf, size_t len);
/* Parent: let the child go on with cmd; 0 or -1. */
int lab_child_go(struct lab_child *c, char cmd);
/* Parent: wait for the child; its wait status, or -1. */
int lab_child_reap(struct lab_child *c);
/* Parent: kill and reap the child if it is still there, close the pipes; safe to repeat. */
void lab_child_end(struct lab_child *c);
/* A wait status in words ("exited with 0", "killed by Segmentation fault"). */
const char *lab_wait_status(int status, char *buf, size_t n);

/* The kernel's view of one page, from pindma's root-only debugfs file (drivers/pindma/pagestate.c). */
struct lab_page_state {
	uint64_t pfn;
	int64_t refcount;
	/*
	 * The map count the kernel keeps, -1 for the one it does not: 6.1 the page's
	 * (page_mapcount()), 6.12 its folio's (folio_mapcount()).
	 */
	int64_t page_mapcount, folio_mapcount;
	int64_t pincount;	/* -1: the kernel keeps none (a small folio's pins are in its refcount) */
	int maybe_pinned, anon_exclusive;
};
/* 0, or -1 with errno set (no such file: pindma not loaded, not root, no debugfs). */
int lab_page_state(uint64_t pfn, struct lab_page_state *st);

/* process.c: children and privileges */

/* Drop to nobody (65534) with RLIMIT_MEMLOCK set to that many pages; 0 or -1. */
int lab_become_nobody(unsigned long memlock_pages);
/* Run fn(arg) in a child; return its wait status. */
int lab_in_child(int (*fn)(void *), void *arg);
/*
 * Pages of [buf, buf + len) (private anonymous, every page present) held by a reference other
 * than their one mapping, e.g. a GUP pin or a leaked get_page(), told by the kernel's own
 * copy-on-write: after a fork whose child exits at once, a write fault reuses a page only when
 * nothing else references it (6.1 and 6.12 decide by refcount) and copies it otherwise, so a
 * page whose PFN changes on a write was referenced. Exact, independent of whoever holds the
 * reference; the pages referenced move to fresh copies (their content is kept). FOLL_PIN pins
 * are not seen (fork copies a maybe-pinned page for the child since 5.9): lab_foll_pins()
 * counts those. Runs vm.compact_memory first (see process.c). -1 on error.
 */
int lab_referenced_pages(char *buf, size_t len);

/* block.c: the guest disk and writeback */

/*
 * 512-byte sectors read from and written to the whole disk since boot (/sys/block/<disk>/stat),
 * or -1.
 */
long long lab_sectors_read(const char *disk);
long long lab_sectors_written(const char *disk);
/* The disk (vdX) whose virtio serial is serial, into name: 0, or -1 when none has it. */
int lab_disk_by_serial(const char *serial, char *name, size_t size);
/*
 * quiet: stop the periodic flusher and move the dirty limits out of reach, so that only
 * what a test asks for is written back; !quiet: the kernel's defaults again. 0 or -1.
 */
int lab_quiet_writeback(bool quiet);

/* gate.c: I/O held in flight until the test lets it go (device-mapper) */

struct lab_gate {
	char name[48];		/* its device-mapper name */
	char path[80];		/* its block device node, /dev/mapper/NAME */
	dev_t dev;
};
/* Sectors [start, start + len) of the block device dev, at sector at of the gate. */
struct lab_gate_part {
	const char *dev;
	unsigned long long at, start, len;
};
/* The size of a block device in 512-byte sectors; 0 or -1. */
int lab_disk_sectors(const char *path, unsigned long long *sectors);
/* A gate named name over the parts, read-only when ro, open (I/O passes); 0, or -1 with errno. */
int lab_gate_make(struct lab_gate *g, const char *name, const struct lab_gate_part *parts,
		  unsigned int n, bool ro);
/* A gate over the whole of the block device disk (e.g. "/dev/vda"). */
int lab_gate_disk(struct lab_gate *g, const char *name, const char *disk, bool ro);
/* The gate another program made, by name. */
int lab_gate_find(struct lab_gate *g, const char *name);
/*
 * Hold: the I/O in flight is waited for, then every bio submitted to the gate waits in it until
 * lab_gate_release(). Release: the held bios go on. 0, or -1 with errno.
 */
int lab_gate_hold(struct lab_gate *g);
int lab_gate_release(struct lab_gate *g);
/* Whether it holds: 1, 0, or -1. */
int lab_gate_held(struct lab_gate *g);
/* Release and remove it; safe to repeat. */
int lab_gate_remove(struct lab_gate *g);
/*
 * Whether thread tid of this process sleeps (state D) in one of the kernel functions fns (a NULL-
 * terminated list), by the innermost frames of its kernel stack: 1, 0, or -1.
 */
int lab_thread_waits_in(pid_t tid, const char *const *fns);
/* Thread tid's kernel stack (/proc/self/task/TID/stack) into buf, for a diagnostic; or -1. */
ssize_t lab_thread_stack(pid_t tid, char *buf, size_t size);
/*
 * Wait until thread tid is seen sleeping in one of fns (1), or *done is true (0); -1 on error,
 * or ETIMEDOUT after 120 s (a thread that never gets there: a hang guard, not a window).
 */
int lab_wait_thread_in(pid_t tid, const char *const *fns, const volatile bool *done);
/*
 * Where the kernel waits for the bios a direct read submitted: a block device's (one bio, or
 * several) and iomap's (ext4), on 6.1 and 6.12.
 */
#define LAB_WAITS_FOR_BIO ((const char *const[]){ "submit_bio_wait", "__blkdev_direct_IO", \
	"__iomap_dio_rw", NULL })
/* Where it waits for a page's writeback to end. */
#define LAB_WAITS_FOR_WRITEBACK ((const char *const[]){ "folio_wait_writeback", NULL })

/*
 * faults.c: the calling thread's make-it-fail (fault injection's task filter) cleared around an
 * oracle's setup. lab_faults_off(): its old value (0/1), -1 where the kernel has none or it could
 * not be cleared; lab_faults_restore(old): 0, or -1 (EIO) when it could not be set back.
 */
int lab_faults_off(void);
int lab_faults_restore(int old);

/* trace.c: a tracefs instance of the caller's own, the kernel's events its oracle */

/* Make the instance named name (removing a stale one); its path into inst. 0, or -1 with errno. */
int lab_trace_make(char *inst, size_t size, const char *name);
/* Write value to file of the instance (e.g. "events/swiotlb/swiotlb_bounced/enable"); 0 or -1. */
int lab_trace_set(const char *inst, const char *file, const char *value);
/* Remove it (its events go with it). */
void lab_trace_remove(const char *inst);

/* fdpass.c: an open file to another process over a unix socket (SCM_RIGHTS); 0/-1, an fd/-1. */
int lab_send_fd(int sock, int fd);
int lab_recv_fd(int sock);

/* bench.c: the benchmarks' clock (CLOCK_MONOTONIC, microseconds), and their samples sorted */
double lab_now_us(void);
void lab_sort_doubles(double *v, size_t n);

/* slab.c */

/*
 * The kmalloc caches' objects in use by /proc/slabinfo (its active_objs: what SLUB does not hold
 * free on a node's partial list), root's only. An object leaked stays counted, exactly.
 */
#define LAB_SLABS_MAX 128
struct lab_slabs {
	int n;
	struct {
		char name[40];
		long active;
	} cache[LAB_SLABS_MAX];
};
int lab_kmalloc_slabs(struct lab_slabs *s);
/* The most one kmalloc cache grew by from before to after, in objects; *name names it. */
long lab_kmalloc_growth(const struct lab_slabs *before, const struct lab_slabs *after,
			const char **name);

/* pci.c */

/* The sysfs folder of the first PCI device with this vendor:device, or false. */
bool lab_pci_find(unsigned int vendor, unsigned int device, char *path, size_t size);
/* QEMU's edu device. */
#define LAB_EDU_VENDOR 0x1234
#define LAB_EDU_DEVICE 0x11e8
/*
 * The kernel's count of edu's interrupts (/proc/interrupts, its MSI vectors): one per transfer it
 * made. -1 when there is no edu or no vector.
 */
long long lab_edu_irqs(void);
/* edu's DMA source, destination and count registers, read from its BAR (sysfs resource0); 0/-1. */
int lab_edu_dma_regs(uint64_t *src, uint64_t *dst, uint64_t *count);

#endif
