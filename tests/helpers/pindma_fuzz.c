// SPDX-License-Identifier: GPL-2.0
/*
 * pindma_fuzz: random and structured ioctls on /dev/pindma from several processes and
 * threads at once, mixed with fork, munmap, mprotect, madvise(DONTFORK/DOFORK), mremap,
 * closes, exits and kills in the middle of DMA, over anonymous, shared, file-backed,
 * hugetlb and THP memory. Every answer must be one the ABI allows for that call. Every
 * process and every forked child must exit cleanly (a child it kills, by that SIGKILL), with
 * its VmPin back to zero once it closed its file. At the end the kernel's FOLL_PIN counters
 * and the LRU pages that nothing owns, oracles independent of the driver, and the driver's
 * own counters must be back where they started. The kernel's own detectors (a debug flavour
 * kernel) do the rest.
 *
 *   pindma_fuzz [--seed N] [--ops N] [--procs N] [--threads N] [--faults] [--floor P]
 *
 * --floor P: a run in which the driver granted fewer than P percent of the PINs of the threads'
 * own pages is a finding. Those pins (op_check()'s, and the one page held across each fork whose
 * child must get EPERM with it) are of valid, mapped, private anonymous pages, by root, on a file
 * that holds at most NHANDLES of the fuzzer's handles and the few a junk ioctl pins: within every
 * budget pindma has (RLIMIT_MEMLOCK, PINDMA_MAX_HANDLES, a page's references), 0 is the only
 * right answer. A driver that refuses some of them anyway, with an errno a PIN may give, would
 * otherwise pass every check it skipped. Not with --faults, where any call may fail.
 *
 * --faults: each worker thread sets its /proc/thread-self/make-it-fail once its own pages
 * are mapped, so that the kernel's fault injection, armed by the caller (tests/fault_test),
 * fails its allocations and user copies, in the driver and in its forks and mm calls. Every
 * call may then also answer ENOMEM or EFAULT, and nothing else more; a failed call is never
 * checked against memory, a successful one always is.
 *
 * The seed is printed; a worker's sequence of operations depends only on the seed and
 * its number, so a failing seed replays the same calls (their interleaving may differ).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lab.h"
#include "pindma_lib.h"

#define HPAGE (2 * 1024 * 1024UL)
#define NREGIONS 8
#define NHANDLES 32
#define REGION_PAGES 64

enum region_kind {
	ANON, ANON_SHARED, FILE_SHARED, FILE_PRIVATE, HUGETLB, THP, READ_ONLY, EXT4_SHARED, NKINDS
};

/*
 * file-*: tmpfs files (/tmp); ext4-shared: a file on the ext4 disk (/mnt/disk), which write pins
 * are refused (EOPNOTSUPP): anonymous memory instead where there is no such disk.
 */
static const char *const kind_names[] = {
	"anon", "anon-shared", "file-shared", "file-private", "hugetlb", "thp", "read-only",
	"ext4-shared",
};

struct region {
	char *addr;
	size_t len;
	enum region_kind kind;
};

struct proc {
	unsigned long seed;
	int id;
	long ops;
	int fd;
	struct region regions[NREGIONS];
	_Atomic uint32_t handles[NHANDLES];
	pthread_rwlock_t mm_lock;	/* write: calls that change the mappings we touch */
	atomic_int failed;
};

/* Tallies shared by every process (a MAP_SHARED page), for the closing summary. */
enum tally { T_OPS, T_PIN_OK, T_DMA_OK, T_EDU_OK, T_FORK, T_KILL, T_MM, T_JUNK, T_ERR,
	     T_OWN_ASKED, T_OWN_CHECKED, T_FORK_ASKED, T_FORK_GRANTED, T_EPERM_CHECKED, NTALLY };

static const char *const tally_names[] = {
	"operations", "pins", "DMAs", "edu DMAs", "forks", "kills mid-DMA", "mm changes",
	"junk ioctls", "refused calls", "own-page pins asked", "own-page checks",
	"pins before a fork asked", "pins before a fork granted", "child EPERM checks",
};

static _Atomic long *tally;

/* --faults: allocations and user copies of the worker threads fail at random. */
static bool faults;

/* pindma's dma_bits leave part of RAM beyond the edu device's reach (see edu_may_refuse()). */
static bool edu_narrow;

#define COUNT(t) atomic_fetch_add(&tally[t], 1)

struct thread {
	struct proc *p;
	unsigned int seed;
	int id;
	char *own;	/* OWN_PAGES of its own, MADV_DONTFORK: what the driver sees is checkable */
	int *wstatus;	/* waitpid()'s status: a page of its own, MADV_DONTFORK (reap()) */
};

#define OWN_PAGES 4
/* x86-64's TASK_SIZE with 4-level page tables: the end of user space. */
#define USER_END ((1ULL << 47) - 4096)

/* errno sets each call may answer with, as bit masks over a small table. */
static const int errnos[] = {
	0, EINVAL, EOVERFLOW, E2BIG, EFAULT, EACCES, EOPNOTSUPP, ENOMEM, EINTR, EBUSY, EAGAIN,
	ENOENT, EPERM, ERANGE, ENODEV, ENOTTY, EBADF, ETIMEDOUT, ENXIO, ENOSPC, ETOOMANYREFS,
};

static unsigned int bit(int e)
{
	for (unsigned int i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (errnos[i] == e)
			return 1U << i;
	return 0;
}

/*
 * A PIN whose input is valid: the answer depends on the memory and the limits (RLIMIT_MEMLOCK,
 * the file's handles, a page's references).
 */
#define OK_PIN_VALID (bit(0) | bit(EFAULT) | bit(EACCES) | bit(EOPNOTSUPP) | bit(ENOMEM) | \
		      bit(EINTR) | bit(EBUSY) | bit(EAGAIN) | bit(ENOSPC) | bit(ETOOMANYREFS))
#define OK_PIN (OK_PIN_VALID | bit(EINVAL) | bit(EOVERFLOW) | bit(E2BIG) | bit(EBADF))
#define OK_HANDLE (bit(0) | bit(ENOENT) | bit(EPERM) | bit(EFAULT) | bit(EBADF))
#define OK_DMA (OK_HANDLE | bit(EINVAL) | bit(ERANGE) | bit(EACCES) | bit(ENODEV) | \
		bit(ENOMEM) | bit(EINTR))
#define OK_QUERY (OK_HANDLE | bit(ERANGE))
#define OK_JUNK (bit(0) | bit(ENOTTY) | bit(EFAULT) | bit(EINVAL) | bit(ENOENT) | \
		 bit(EBADF) | OK_DMA | OK_PIN)

/* What any call may answer besides, when faults are injected: a failed allocation or copy. */
static unsigned int fault_errnos(void)
{
	return faults ? bit(ENOMEM) | bit(EFAULT) : 0;
}

static void check(struct thread *t, const char *what, int ret, unsigned int allowed)
{
	allowed |= fault_errnos();
	if (ret > 0)
		ret = 0;
	if (ret)
		COUNT(T_ERR);
	if (!(bit(-ret) & allowed) || (ret && !bit(-ret))) {
		fprintf(stderr, "pindma_fuzz: seed %lu proc %d thread %d: %s gave %s\n",
			t->p->seed, t->p->id, t->id, what, strerror(-ret));
		atomic_store(&t->p->failed, 1);
	}
}

/*
 * The one answer the ABI gives a PIN with an invalid input, in the driver's order of checks
 * (flags, mode, length and alignment, overflow, size); 0 when the input is valid. A zero
 * length that pins, or a range past user space refused with EFAULT, is a finding.
 */
static int pin_input_errno(uint64_t addr, uint64_t len, uint32_t mode, uint32_t flags)
{
	uint64_t end;

	if (flags & ~(uint32_t)PINDMA_PIN_FLAGS)
		return EINVAL;
	if (mode != PINDMA_MODE_GUP && mode != PINDMA_MODE_PIN_LONGTERM)
		return EINVAL;
	if (!len || addr % LAB_PAGE)
		return EINVAL;
	if (__builtin_add_overflow(addr, len, &end) || end > USER_END)
		return EOVERFLOW;
	if ((end + LAB_PAGE - 1) / LAB_PAGE - addr / LAB_PAGE > PINDMA_MAX_PAGES)
		return E2BIG;
	return 0;
}

static void finding(struct thread *t, const char *what)
{
	fprintf(stderr, "pindma_fuzz: seed %lu proc %d thread %d: %s\n", t->p->seed, t->p->id,
		t->id, what);
	atomic_store(&t->p->failed, 1);
}

static void map_region(struct proc *p, int i, enum region_kind kind, unsigned int *seed)
{
	struct region *r = &p->regions[i];
	int flags = MAP_PRIVATE | MAP_ANONYMOUS, fd = -1, prot = PROT_READ | PROT_WRITE;
	char path[64];

	r->kind = kind;
	r->len = REGION_PAGES * LAB_PAGE;
	switch (kind) {
	case ANON_SHARED:
		flags = MAP_SHARED | MAP_ANONYMOUS;
		break;
	case FILE_SHARED:
	case FILE_PRIVATE:
	case EXT4_SHARED:
		snprintf(path, sizeof(path), "%s/fuzz.%d.%d", kind == EXT4_SHARED ? "/mnt/disk" : "/tmp",
			 getpid(), i);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		unlink(path);
		if (fd < 0 || ftruncate(fd, r->len))
			break;
		flags = kind == FILE_PRIVATE ? MAP_PRIVATE : MAP_SHARED;
		break;
	case HUGETLB:
		r->len = HPAGE;
		flags |= MAP_HUGETLB;
		break;
	case THP:
		r->len = 2 * HPAGE;
		break;
	case READ_ONLY:
		prot = PROT_READ;
		break;
	default:
		break;
	}
	r->addr = mmap(NULL, r->len, prot, flags, fd, 0);
	if (fd >= 0)
		close(fd);
	if (r->addr == MAP_FAILED) {
		/* No hugetlb pages left, say: plain anonymous memory instead. */
		r->kind = ANON;
		r->len = REGION_PAGES * LAB_PAGE;
		r->addr = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
	}
	if (r->addr == MAP_FAILED) {
		r->addr = NULL;
		return;
	}
	if (kind == THP)
		madvise(r->addr, r->len, MADV_HUGEPAGE);
	if (prot & PROT_WRITE && rand_r(seed) % 4)
		memset(r->addr, 0x11, r->len);
}

/* A plausible or hostile range: inside a region mostly, sometimes off its ends or wild. */
static void pick_range(struct thread *t, uint64_t *addr, uint64_t *len)
{
	struct region *r = &t->p->regions[rand_r(&t->seed) % NREGIONS];
	uint64_t pages = r->len / LAB_PAGE;
	uint64_t first = rand_r(&t->seed) % pages;

	*addr = (uintptr_t)r->addr + first * LAB_PAGE;
	/* At most 128 pages: many pins at once must not exhaust the guest. */
	*len = (1 + rand_r(&t->seed) % (pages - first < 128 ? pages - first : 128)) * LAB_PAGE;
	switch (rand_r(&t->seed) % 16) {
	case 0:
		*len = 0;
		break;
	case 1:
		*addr += 1 + rand_r(&t->seed) % (LAB_PAGE - 1);
		break;
	case 2:
		*len = UINT64_MAX - rand_r(&t->seed);
		break;
	case 3:
		*len += (uint64_t)rand_r(&t->seed) * LAB_PAGE;
		break;
	case 4:
		*addr = ((uint64_t)rand_r(&t->seed) << 32 | rand_r(&t->seed)) & ~(LAB_PAGE - 1);
		break;
	case 5:
		*len = (PINDMA_MAX_PAGES + 1ULL) * LAB_PAGE;
		break;
	default:
		break;
	}
}

static uint32_t pick_handle(struct thread *t)
{
	uint32_t h = atomic_load(&t->p->handles[rand_r(&t->seed) % NHANDLES]);

	if (rand_r(&t->seed) % 20 == 0)
		h = rand_r(&t->seed);
	return h;
}

static void op_pin(struct thread *t)
{
	static const uint32_t modes[] = { PINDMA_MODE_GUP, PINDMA_MODE_PIN_LONGTERM, 0, 7 };
	uint32_t mode = modes[rand_r(&t->seed) % 16 ? rand_r(&t->seed) % 2 : 2 + rand_r(&t->seed) % 2];
	uint32_t flags = rand_r(&t->seed) % 2 ? PINDMA_PIN_WRITE : 0, h = 0, old;
	uint64_t addr, len;
	int ret, want;

	if (rand_r(&t->seed) % 30 == 0)
		flags |= 1U << (1 + rand_r(&t->seed) % 31);
	pick_range(t, &addr, &len);
	ret = pindma_pin(t->p->fd, (void *)(uintptr_t)addr, len, mode, flags, &h);
	want = pin_input_errno(addr, len, mode, flags);
	check(t, want ? "PIN (invalid input)" : "PIN", ret, want ? bit(want) : OK_PIN_VALID);
	if (!ret) {
		COUNT(T_PIN_OK);
		old = atomic_exchange(&t->p->handles[rand_r(&t->seed) % NHANDLES], h);
		/* Keep the table bounded: the handle it replaced is let go. */
		if (old)
			check(t, "UNPIN (replaced)", pindma_unpin(t->p->fd, old), OK_HANDLE);
	}
}

static void op_dma(struct thread *t, bool write)
{
	uint32_t engine = rand_r(&t->seed) % 1500 ? PINDMA_ENGINE_CPU : PINDMA_ENGINE_EDU;
	uint64_t off = rand_r(&t->seed) % (REGION_PAGES * LAB_PAGE + 100);
	uint64_t len = 1 + rand_r(&t->seed) % (2 * LAB_PAGE);
	char buf[2 * 4096 + 64];
	void *ubuf = buf;
	int ret;

	if (engine == PINDMA_ENGINE_EDU)
		len = 1 + rand_r(&t->seed) % 64;	/* ~100 ms per transfer */
	switch (rand_r(&t->seed) % 40) {
	case 0:
		ubuf = NULL;
		break;
	case 1:
		ubuf = (void *)0xffff888000000000UL;
		break;
	case 2:
		len = 0;
		break;
	case 3:
		engine = 9;
		break;
	case 4:
		off = UINT64_MAX - rand_r(&t->seed) % 8;
		break;
	default:
		break;
	}
	memset(buf, 0x5a, sizeof(buf));
	ret = pindma_dma(t->p->fd, write ? PINDMA_IOC_DMA_WRITE : PINDMA_IOC_DMA_READ,
			 pick_handle(t), off, ubuf, len, &engine);
	check(t, write ? "DMA_WRITE" : "DMA_READ", ret,
	      OK_DMA | (edu_narrow && engine == PINDMA_ENGINE_EDU ? bit(ENXIO) : 0));
	if (!ret)
		COUNT(engine == PINDMA_ENGINE_EDU ? T_EDU_OK : T_DMA_OK);
}

/*
 * Pin the thread's own pages (never shared with a child: MADV_DONTFORK) and check what the
 * driver does against memory itself: a DMA write must land in the process's memory, a DMA
 * read must return what the process wrote, QUERY must give pagemap's PFN for each page.
 */
static void op_check(struct thread *t)
{
	uint32_t mode = rand_r(&t->seed) % 2 ? PINDMA_MODE_GUP : PINDMA_MODE_PIN_LONGTERM;
	uint32_t h = 0, engine = PINDMA_ENGINE_CPU;
	size_t len = 1 + rand_r(&t->seed) % 64;
	size_t off = rand_r(&t->seed) % (OWN_PAGES * LAB_PAGE - len);
	char pat[64], got[64];
	uint64_t pfn;
	int ret;

	COUNT(T_OWN_ASKED);
	ret = pindma_pin(t->p->fd, t->own, OWN_PAGES * LAB_PAGE, mode, PINDMA_PIN_WRITE, &h);
	check(t, "PIN (own pages)", ret, OK_PIN_VALID);
	if (ret)
		return;
	COUNT(T_OWN_CHECKED);
	for (size_t i = 0; i < len; i++)
		pat[i] = rand_r(&t->seed);
	ret = pindma_dma(t->p->fd, PINDMA_IOC_DMA_WRITE, h, off, pat, len, &engine);
	check(t, "DMA_WRITE (own pages)", ret, bit(0) | bit(ENOMEM) | bit(EINTR));
	if (!ret && memcmp(t->own + off, pat, len))
		finding(t, "a DMA write did not reach the process's memory");
	for (size_t i = 0; i < len; i++)
		t->own[off + i] = pat[i] ^ 0x55;
	ret = pindma_dma(t->p->fd, PINDMA_IOC_DMA_READ, h, off, got, len, &engine);
	check(t, "DMA_READ (own pages)", ret, bit(0) | bit(ENOMEM) | bit(EINTR));
	for (size_t i = 0; !ret && i < len; i++)
		if (got[i] != (char)(pat[i] ^ 0x55)) {
			finding(t, "a DMA read did not return what the process wrote");
			break;
		}
	for (uint32_t i = 0; i < OWN_PAGES; i++) {
		uint64_t want;

		ret = pindma_query(t->p->fd, h, i, &pfn);
		check(t, "QUERY (own pages)", ret, bit(0));
		if (ret)
			continue;
		/* Reading pagemap may fail as well under --faults; it is never a wrong PFN. */
		if (lab_pfn_read(t->own + i * LAB_PAGE, &want)) {
			if (!faults)
				finding(t, "reading pagemap failed");
		} else if (pfn != want) {
			finding(t, "QUERY's PFN is not pagemap's");
		}
	}
	check(t, "UNPIN (own pages)", pindma_unpin(t->p->fd, h), bit(0));
}

/* Calls that change the mappings the threads touch; taken under the write lock. */
static void op_mm(struct thread *t)
{
	struct proc *p = t->p;
	int i = rand_r(&t->seed) % NREGIONS;
	struct region *r = &p->regions[i];
	void *n;

	COUNT(T_MM);
	pthread_rwlock_wrlock(&p->mm_lock);
	if (!r->addr)
		goto out;
	switch (rand_r(&t->seed) % 6) {
	case 0:	/* unmap and map again: pinned pages stay with the driver */
		munmap(r->addr, r->len);
		map_region(p, i, rand_r(&t->seed) % NKINDS, &t->seed);
		break;
	case 1:
		mprotect(r->addr, r->len, PROT_READ);
		mprotect(r->addr, r->len, r->kind == READ_ONLY ? PROT_READ : PROT_READ | PROT_WRITE);
		break;
	case 2:
		madvise(r->addr, r->len, MADV_DONTFORK);
		break;
	case 3:
		madvise(r->addr, r->len, MADV_DOFORK);
		break;
	case 4:
		n = mremap(r->addr, r->len, r->len, MREMAP_MAYMOVE);
		if (n != MAP_FAILED)
			r->addr = n;
		break;
	default:
		madvise(r->addr, r->len, MADV_DONTNEED);
		break;
	}
out:
	pthread_rwlock_unlock(&p->mm_lock);
}

/* Write to the regions (copy-on-write after forks), under the read lock. */
static void op_touch(struct thread *t)
{
	struct region *r;

	pthread_rwlock_rdlock(&t->p->mm_lock);
	r = &t->p->regions[rand_r(&t->seed) % NREGIONS];
	if (r->addr && r->kind != READ_ONLY)
		r->addr[(rand_r(&t->seed) % (r->len / LAB_PAGE)) * LAB_PAGE] ^= 1;
	pthread_rwlock_unlock(&t->p->mm_lock);
}

/*
 * Whether the process's pinned_vm charge (VmPin) is back to nothing, once it has closed every
 * file it pinned through: the kernel's count, not the driver's. Under --faults reading it may
 * fail too; that is no finding.
 */
static bool vmpin_released(void)
{
	long kb = lab_status_kb("VmPin");

	return kb == 0 || (kb < 0 && faults);
}

/*
 * Reap the forked child pid into *status; false (a finding) when that fails. The kernel writes the
 * status with put_user() into t->wstatus, a page populated and locked before make-it-fail was set
 * and kept out of every fork (MADV_DONTFORK): never write-protected by a fork nor swapped out, so
 * the write needs no copy, no allocation that --faults could fail. (A status on the thread's stack
 * once came back EFAULT under faults: the fork had shared that page, and its copy failed.)
 */
static bool reap(struct thread *t, pid_t pid, int *status)
{
	char what[96];
	pid_t w;

	do {
		w = waitpid(pid, t->wstatus, 0);
	} while (w < 0 && errno == EINTR);
	if (w == pid) {
		*status = *t->wstatus;
		return true;
	}
	snprintf(what, sizeof(what), "waiting for a forked child failed: %s", strerror(errno));
	finding(t, what);
	return false;
}

/*
 * A child: the inherited file's handles are not its own (EPERM while they are live);
 * it pins on a file of its own, maybe starts an edu DMA and is killed in the middle,
 * and exits with its pins held: closing its file must release them.
 */
static void op_fork(struct thread *t)
{
	int kill_it = rand_r(&t->seed) % 4 == 0, status;
	unsigned int s = t->seed;
	uint32_t mine = 0;
	pid_t pid;

	/* A handle known live across the fork: the child must get exactly EPERM with it. */
	COUNT(T_FORK_ASKED);
	check(t, "PIN (before fork)", pindma_pin(t->p->fd, t->own, LAB_PAGE, PINDMA_MODE_GUP, 0,
						 &mine), OK_PIN_VALID);
	if (mine)
		COUNT(T_FORK_GRANTED);
	pthread_rwlock_rdlock(&t->p->mm_lock);
	pid = fork();
	pthread_rwlock_unlock(&t->p->mm_lock);
	if (pid < 0) {
		if (mine)
			check(t, "UNPIN (fork failed)", pindma_unpin(t->p->fd, mine), bit(0));
		return;
	}
	COUNT(T_FORK);
	if (!pid) {
		struct thread c = { .p = t->p, .seed = s, .id = -1 };
		uint32_t h = pick_handle(&c), e = PINDMA_ENGINE_CPU;
		char b[8] = "killed";

		if (h && !pindma_dma(c.p->fd, PINDMA_IOC_DMA_READ, h, 0, b, 1, &e))
			_exit(3);
		if (mine && (!(bit(-pindma_dma(c.p->fd, PINDMA_IOC_DMA_READ, mine, 0, b, 1, &e)) &
			       (bit(EPERM) | fault_errnos())) ||
			     !(bit(-pindma_unpin(c.p->fd, mine)) & (bit(EPERM) | fault_errnos()))))
			_exit(5);
		if (mine)
			COUNT(T_EPERM_CHECKED);
		c.p->fd = pindma_open();
		/* Under --faults the open may fail (ENOMEM, EFAULT, ENFILE): nothing to pin on. */
		if (c.p->fd < 0)
			_exit(faults ? 0 : 6);
		memset((void *)c.p->handles, 0, sizeof(c.p->handles));
		for (int i = 0; i < 4; i++)
			op_pin(&c);
		h = atomic_load(&c.p->handles[0]);
		for (int i = 1; !h && i < NHANDLES; i++)
			h = atomic_load(&c.p->handles[i]);
		if (kill_it && h) {
			e = PINDMA_ENGINE_EDU;
			pindma_dma(c.p->fd, PINDMA_IOC_DMA_WRITE, h, 0, b, 8, &e);
		}
		if (atomic_load(&c.p->failed))
			_exit(4);
		/* Its pins are its own: closing its file gives back all it was charged. */
		close(c.p->fd);
		_exit(vmpin_released() ? 0 : 7);
	}
	if (kill_it) {
		usleep(1000 + rand_r(&t->seed) % 150000);
		kill(pid, SIGKILL);
		COUNT(T_KILL);
	}
	if (!reap(t, pid, &status))
		return;
	if (mine)
		check(t, "UNPIN (after fork)", pindma_unpin(t->p->fd, mine), bit(0));
	/* Only the SIGKILL sent above may end a child other than by its own clean exit. */
	if (WIFSIGNALED(status) && !(kill_it && WTERMSIG(status) == SIGKILL)) {
		fprintf(stderr, "pindma_fuzz: seed %lu proc %d: forked child killed by signal %d\n",
			t->p->seed, t->p->id, WTERMSIG(status));
		atomic_store(&t->p->failed, 1);
	} else if (!WIFSIGNALED(status) && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		fprintf(stderr, "pindma_fuzz: seed %lu proc %d: forked child failed (status %#x)\n",
			t->p->seed, t->p->id, status);
		atomic_store(&t->p->failed, 1);
	}
}

static void op_junk(struct thread *t)
{
	unsigned long req = rand_r(&t->seed);
	char junk[64];
	int ret;

	for (unsigned int i = 0; i < sizeof(junk); i++)
		junk[i] = rand_r(&t->seed);
	if (rand_r(&t->seed) % 2)
		req = _IOC(rand_r(&t->seed) % 4, PINDMA_IOC_MAGIC, rand_r(&t->seed) % 10,
			   rand_r(&t->seed) % 64);
	ret = ioctl(t->p->fd, req, rand_r(&t->seed) % 8 ? (void *)junk : NULL) < 0 ? -errno : 0;
	check(t, "junk ioctl", ret, OK_JUNK);
	COUNT(T_JUNK);
	/* A junk PIN may have succeeded: nothing keeps its handle, closing the file frees it. */
}

static void *thread_main(void *arg)
{
	struct thread *t = arg;
	long n = t->p->ops;

	t->own = mmap(NULL, OWN_PAGES * LAB_PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->own == MAP_FAILED || madvise(t->own, OWN_PAGES * LAB_PAGE, MADV_DONTFORK)) {
		finding(t, "mapping the thread's own pages");
		return NULL;
	}
	memset(t->own, t->id, OWN_PAGES * LAB_PAGE);
	t->wstatus = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (t->wstatus == MAP_FAILED || madvise(t->wstatus, LAB_PAGE, MADV_DONTFORK)) {
		finding(t, "mapping the thread's status page");
		return NULL;
	}
	/* Locked too: never swapped out, whose swap-in would be an allocation as well. */
	*t->wstatus = 0;
	if (mlock(t->wstatus, LAB_PAGE)) {
		finding(t, "locking the thread's status page");
		return NULL;
	}
	if (faults && lab_write_str("/proc/thread-self/make-it-fail", "1")) {
		finding(t, "setting /proc/thread-self/make-it-fail");
		return NULL;
	}

	for (long i = 0; i < n && !atomic_load(&t->p->failed); i++) {
		uint32_t h;

		COUNT(T_OPS);
		switch (rand_r(&t->seed) % 100) {
		case 0 ... 24:
			op_pin(t);
			break;
		case 25 ... 34:
			h = atomic_exchange(&t->p->handles[rand_r(&t->seed) % NHANDLES], 0);
			check(t, "UNPIN", pindma_unpin(t->p->fd, h ? h : pick_handle(t)),
			      OK_HANDLE);
			break;
		case 35 ... 49:
			op_dma(t, true);
			break;
		case 50 ... 64:
			op_dma(t, false);
			break;
		case 65 ... 72: {
			uint64_t pfn;

			check(t, "QUERY", pindma_query(t->p->fd, pick_handle(t),
						      rand_r(&t->seed) % 80, &pfn), OK_QUERY);
			break;
		}
		case 73 ... 80:
			op_touch(t);
			break;
		case 81 ... 86:
			op_mm(t);
			break;
		case 87 ... 88:
			op_fork(t);
			break;
		case 89 ... 94:
			op_junk(t);
			break;
		case 95 ... 97:
			op_check(t);
			break;
		default: {
			struct pindma_info info;

			check(t, "INFO", pindma_call(t->p->fd, PINDMA_IOC_INFO, &info), bit(0));
			break;
		}
		}
	}
	return NULL;
}

static int proc_main(unsigned long seed, int id, long ops, int nthreads)
{
	struct proc *p = calloc(1, sizeof(*p));
	struct thread th[16];
	pthread_t tid[16];
	unsigned int s = seed * 7919 + id;

	p->seed = seed;
	p->id = id;
	p->ops = ops / nthreads;
	pthread_rwlock_init(&p->mm_lock, NULL);
	p->fd = pindma_open();
	if (p->fd < 0)
		return 10;
	for (int i = 0; i < NREGIONS; i++)
		map_region(p, i, i % NKINDS, &s);
	for (int i = 0; i < nthreads; i++) {
		th[i] = (struct thread){ .p = p, .seed = s + 104729 * (i + 1), .id = i };
		pthread_create(&tid[i], NULL, thread_main, &th[i]);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	close(p->fd);
	if (!vmpin_released()) {
		fprintf(stderr, "pindma_fuzz: seed %lu proc %d: VmPin is %ld kB with its file closed\n",
			seed, id, lab_status_kb("VmPin"));
		return 1;
	}
	return atomic_load(&p->failed) ? 1 : 0;
}

/*
 * Whether pindma may refuse an edu transfer for want of reach (ENXIO): when its dma_bits do not
 * cover the top of RAM (make fuzz with VM_EDU_DMA_BITS=28, say); with the runner's 64 bits it
 * never may. Where a bounce buffer reaches it does not either, but may is what is asked.
 */
static bool edu_may_refuse(void)
{
	int bits = lab_read_int("/sys/module/pindma/parameters/dma_bits");
	unsigned long long start, end, top = 0;
	FILE *f = fopen("/proc/iomem", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && strstr(line, " : System RAM") &&
		    end > top)
			top = end;
	if (f)
		fclose(f);
	return bits > 0 && bits < 64 && top >> bits;
}

/*
 * Pages on the anonymous LRU lists that no mapping and no shmem file owns, with the page cache
 * dropped and the per-CPU LRU batches drained on every CPU (vm.compact_memory). Every region
 * the fuzzer pins but hugetlb is anonymous or shmem (its files live in /tmp), so a page kept by
 * a leaked reference once its process is gone stays on the LRU, owned by nothing: one such page
 * moves this count by one, where MemFree moves by tens of MiB between identical runs.
 */
static long unowned_lru_pages(void)
{
	lab_write_str("/proc/sys/vm/drop_caches", "3");
	lab_write_str("/proc/sys/vm/compact_memory", "1");
	lab_write_str("/proc/sys/vm/stat_refresh", "1");	/* fold the per-CPU deltas */
	return lab_vmstat("nr_active_anon") + lab_vmstat("nr_inactive_anon") -
	       lab_vmstat("nr_anon_pages") - lab_vmstat("nr_shmem");
}

/*
 * The count once two readings 100 ms apart agree: a page between a mapping and the LRU moves
 * it by one for a moment (seen: up to 8 pages right after a run), a leaked page for good.
 */
#define UNOWNED_SLACK 32

static long settled_unowned_lru_pages(long want)
{
	long last = unowned_lru_pages(), now;

	for (int i = 0; i < 50; i++) {
		usleep(100 * 1000);
		now = unowned_lru_pages();
		if (now == last && (want == LONG_MIN || now == want))
			break;
		last = now;
	}
	return last;
}

/* Whether fewer than floor percent of the pins tallied as asked were granted (a finding). */
static bool below_floor(enum tally asked, enum tally granted, long floor)
{
	long a = atomic_load(&tally[asked]), g = atomic_load(&tally[granted]);

	if (a && g * 100 >= a * floor)
		return false;
	printf("pindma_fuzz: %s: %ld of %ld granted (%ld%%), below the floor of %ld%%: the driver "
	       "refused pins of the threads' own pages that every budget allowed, and skipped the "
	       "checks that follow a grant\n", tally_names[asked], g, a, a ? g * 100 / a : 0, floor);
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' }, { "ops", required_argument, NULL, 'n' },
		{ "procs", required_argument, NULL, 'p' }, { "threads", required_argument, NULL, 't' },
		{ "faults", no_argument, NULL, 'f' }, { "floor", required_argument, NULL, 'F' },
		{ 0 },
	};
	long floor = 0;
	unsigned long seed = (unsigned long)time(NULL) ^ getpid();
	long ops = 100000, pins_before, unowned_before, unowned_after, pins_after;
	int procs = 4, threads = 4, c, failed = 0, fd, status;
	struct pindma_info before, after;
	struct timespec t0, t1;
	pid_t pids[64];

	while ((c = getopt_long(argc, argv, "s:n:p:t:fF:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			ops = atol(optarg);
			break;
		case 'p':
			procs = atoi(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 'f':
			faults = true;
			break;
		case 'F':
			floor = atol(optarg);
			if (floor < 1 || floor > 100)
				return fprintf(stderr, "pindma_fuzz: --floor 1..100 (percent)\n"), 2;
			break;
		default:
			fprintf(stderr, "usage: %s [--seed N] [--ops N] [--procs N] [--threads N] "
				"[--faults] [--floor P]\n", argv[0]);
			return 2;
		}
	}
	if (procs < 1 || procs > 64 || threads < 1 || threads > 16 || ops < 1)
		return fprintf(stderr, "pindma_fuzz: 1..64 procs, 1..16 threads\n"), 2;
	if (floor && faults)
		return fprintf(stderr, "pindma_fuzz: --floor with --faults: any call may fail\n"), 2;
	edu_narrow = edu_may_refuse();
	printf("pindma_fuzz: seed %lu, %ld operations, %d processes x %d threads%s%s, memory:",
	       seed, ops, procs, threads, faults ? ", faults injected" : "",
	       edu_narrow ? ", edu may refuse pages beyond its reach" : "");
	for (int k = 0; k < NKINDS; k++)
		printf(" %s", kind_names[k]);
	printf("\n");
	fflush(stdout);
	tally = mmap(NULL, NTALLY * sizeof(*tally), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tally == MAP_FAILED)
		return perror("mmap"), 2;
	lab_write_str("/proc/sys/vm/nr_hugepages", "64");
	lab_write_str("/sys/kernel/mm/transparent_hugepage/enabled", "madvise");
	fd = pindma_open();
	if (fd < 0 || pindma_call(fd, PINDMA_IOC_INFO, &before))
		return fprintf(stderr, "pindma_fuzz: /dev/pindma: %s\n", strerror(-fd)), 2;
	pins_before = lab_foll_pins();
	unowned_before = settled_unowned_lru_pages(LONG_MIN);
	clock_gettime(CLOCK_MONOTONIC, &t0);

	for (int i = 0; i < procs; i++) {
		fflush(NULL);
		pids[i] = fork();
		if (!pids[i])
			_exit(proc_main(seed, i, ops / procs, threads));
	}
	for (int i = 0; i < procs; i++) {
		if (pids[i] < 0 || waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "pindma_fuzz: seed %lu: process %d failed (status %#x)\n",
				seed, i, pids[i] < 0 ? -1 : status);
			failed++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	pindma_call(fd, PINDMA_IOC_INFO, &after);
	pins_after = lab_foll_pins();
	unowned_after = settled_unowned_lru_pages(unowned_before);
	printf("pindma_fuzz: %.1f s; driver handles %llu -> %llu, pages held %llu -> %llu; "
	       "FOLL_PIN outstanding %ld -> %ld; LRU pages owned by nothing %ld -> %ld; "
	       "edu transfers %llu\n",
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (unsigned long long)before.handles, (unsigned long long)after.handles,
	       (unsigned long long)before.pages_held, (unsigned long long)after.pages_held,
	       pins_before, pins_after, unowned_before, unowned_after,
	       (unsigned long long)(after.edu_transfers - before.edu_transfers));
	printf("pindma_fuzz:");
	for (int i = 0; i < NTALLY; i++)
		printf(" %ld %s%s", atomic_load(&tally[i]), tally_names[i], i + 1 < NTALLY ? "," : "\n");
	if (after.handles != before.handles || after.pages_held != before.pages_held) {
		printf("pindma_fuzz: the driver still holds what it should have released\n");
		failed++;
	}
	if (pins_after != pins_before) {
		printf("pindma_fuzz: FOLL_PIN acquired and released differ\n");
		failed++;
	}
	/*
	 * Other processes' pages still move it by a few (seen: 2 for good after a run, once): a
	 * leak of one page per GUP-mode unpin would be over a thousand here.
	 */
	if (labs(unowned_after - unowned_before) > UNOWNED_SLACK) {
		printf("pindma_fuzz: %ld pages left on the LRU that nothing owns (a leaked reference)\n",
		       unowned_after - unowned_before);
		failed++;
	}
	if (floor) {
		failed += below_floor(T_OWN_ASKED, T_OWN_CHECKED, floor);
		failed += below_floor(T_FORK_ASKED, T_FORK_GRANTED, floor);
	}
	close(fd);
	printf("pindma_fuzz: seed %lu: %s\n", seed, failed ? "FAILED" : "no finding");
	return failed ? 1 : 0;
}
