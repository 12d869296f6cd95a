// SPDX-License-Identifier: GPL-2.0
/*
 * One scenario: a page of anonymous memory, optionally MADV_DONTFORK (and DOFORK),
 * held by pindma (or only mlock()ed), then fork, a parent write, a device write and
 * a device read; every party's PFN is sampled before the fork, after it and after
 * the write. The child answers over a pipe so that it stays alive across the write.
 */
#define _GNU_SOURCE
#include "scenario.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "pindma_lib.h"

#define OFF_PARENT 0	/* where the parent writes after the fork */
#define OFF_DEVICE 256	/* where the device writes after the fork */
#define TAG 16

static const char PREFORK[TAG] = "pre-fork bytes";
static const char PARENT[TAG] = "parent wrote";
static const char DEVICE[TAG] = "device wrote";

const struct scenario scenarios[] = {
	{
		.name = "gup",
		.title = "GUP, child alive, parent writes after fork",
		.mode = PINDMA_MODE_GUP,
		.note = "the parent's write copies the page; the driver keeps the old one, now the child's",
	},
	{
		.name = "gup-child-exited",
		.title = "GUP, child exited before the parent writes",
		.mode = PINDMA_MODE_GUP,
		.child_exits = true,
		.note = "6.1 reuses a page on write only when its refcount says nobody else holds it, and the "
			"GUP reference counts; 2006 decided by mapcount and would have reused it (COHERENT)",
	},
	{
		.name = "gup-dontfork",
		.title = "GUP with MADV_DONTFORK",
		.mode = PINDMA_MODE_GUP,
		.dontfork = true,
		.note = "the child has no such range (touching it is SIGSEGV), so there is nothing to copy",
	},
	{
		.name = "gup-dontfork-dofork",
		.title = "GUP, MADV_DONTFORK then MADV_DOFORK",
		.mode = PINDMA_MODE_GUP,
		.dontfork = true,
		.dofork = true,
		.note = "DOFORK undoes DONTFORK: back to the first row",
	},
	{
		.name = "pin",
		.title = "PIN_LONGTERM (FOLL_PIN), no DONTFORK",
		.mode = PINDMA_MODE_PIN_LONGTERM,
		.note = "since 5.9 fork copies maybe-pinned pages for the child: it gets a new PFN and the "
			"pre-fork bytes",
	},
	{
		.name = "pin-dontfork",
		.title = "PIN_LONGTERM with MADV_DONTFORK",
		.mode = PINDMA_MODE_PIN_LONGTERM,
		.dontfork = true,
		.note = "the range is not in the child at all",
	},
	{
		.name = "gup-leak",
		.title = "GUP, device writes after the parent's copy-on-write",
		.mode = PINDMA_MODE_GUP,
		.child_reads_device = true,
		.note = "the device's bytes land in the child's page: the child reads them (the leak direction)",
	},
	{
		.name = "mlock",
		.title = "mlock() only, no driver",
		.mode = 0,
		.note = "the page the parent locked stays with the child; the parent's PFN moves",
	},
	{
		.name = "mlock-dontfork",
		.title = "mlock() with MADV_DONTFORK, no driver",
		.mode = 0,
		.dontfork = true,
		.note = "the parent's PFN stays put",
	},
	{
		.name = "pin-switch-on",
		.title = "PIN_LONGTERM, vm.fork_share_pinned=1",
		.mode = PINDMA_MODE_PIN_LONGTERM,
		.note = "the switch makes fork share the pinned page as before 5.9: the 2006 bug, with FOLL_PIN",
		.knob = KNOB_ON,
	},
	{
		.name = "pin-switch-on-dontfork",
		.title = "PIN_LONGTERM, vm.fork_share_pinned=1, MADV_DONTFORK",
		.mode = PINDMA_MODE_PIN_LONGTERM,
		.dontfork = true,
		.note = "MADV_DONTFORK still protects the range when fork no longer does",
		.knob = KNOB_ON,
	},
	{
		.name = "pin-switch-off",
		.title = "PIN_LONGTERM, vm.fork_share_pinned=0 again",
		.mode = PINDMA_MODE_PIN_LONGTERM,
		.note = "turned on, then off again before the fork: fork copies for the child again",
		.knob = KNOB_OFF,
	},
};

#define KNOB_PATH "/proc/sys/vm/fork_share_pinned"

static bool fail(struct observation *obs, const char *fmt, ...);

/* Set the switch and read it back: a write that did not take is a row that cannot run. */
static bool knob_set(struct observation *obs, int value)
{
	if (lab_write_str(KNOB_PATH, value ? "1" : "0"))
		return fail(obs, "writing %d to " KNOB_PATH, value);
	if (lab_read_int(KNOB_PATH) != value)
		return errno = 0, fail(obs, KNOB_PATH " does not read back %d", value);
	return true;
}

const unsigned int n_scenarios = sizeof(scenarios) / sizeof(scenarios[0]);

const struct scenario *scenario_find(const char *name)
{
	for (unsigned int i = 0; i < n_scenarios; i++)
		if (!strcmp(scenarios[i].name, name))
			return &scenarios[i];
	return NULL;
}

const char *child_view_name(enum child_view v)
{
	static const char *const names[] = {
		[CHILD_NONE] = "-", [CHILD_OLD] = "pre-fork bytes",
		[CHILD_PARENT] = "parent's bytes", [CHILD_DEVICE] = "DEVICE's bytes (leak)",
		[CHILD_OTHER] = "other bytes", [CHILD_SEGV] = "SIGSEGV",
		[CHILD_EXITED] = "exited",
	};
	return names[v];
}

__attribute__((format(printf, 2, 3)))
static bool fail(struct observation *obs, const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vsnprintf(obs->error, sizeof(obs->error), fmt, ap);
	va_end(ap);
	if (e)
		snprintf(obs->error + strlen(obs->error), sizeof(obs->error) - strlen(obs->error),
			 ": %s", strerror(e));
	return false;
}

/* What the child tells the parent. */
struct child_report {
	uint64_t pfn;
	int pfn_errno;		/* the child's pagemap read failed: the row cannot run */
	char at_parent[TAG];
	char at_device[TAG];
};

/* Exit status of a child that exits before the parent writes: observed, not assumed. */
#define CHILD_EXIT_CODE 42

static void child_pfn(struct child_report *r, const char *page)
{
	r->pfn_errno = lab_pfn_read(page, &r->pfn) ? errno : 0;
}

/*
 * The child: report its PFN after the fork (from pagemap, without touching the page),
 * then, on request, the PFN and the bytes it reads, touching the page.
 */
static void child_main(const struct scenario *s, char *page, int cmd, int rep)
{
	struct child_report r = { 0 };
	char c;

	child_pfn(&r, page);
	if (write(rep, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	if (s->child_exits)
		_exit(CHILD_EXIT_CODE);
	if (read(cmd, &c, 1) != 1)
		_exit(1);
	memcpy(r.at_parent, page + OFF_PARENT, TAG);	/* SIGSEGV when not inherited */
	memcpy(r.at_device, page + OFF_DEVICE, TAG);
	child_pfn(&r, page);
	_exit(write(rep, &r, sizeof(r)) == sizeof(r) ? 0 : 1);
}

/* Every observation is checked: one that fails makes the row "could not run", never a verdict. */
static bool observe_pfn(struct observation *obs, const char *page, uint64_t *pfn, const char *who)
{
	return !lab_pfn_read(page, pfn) || fail(obs, "reading the %s PFN from pagemap", who);
}

static bool observe_query(struct observation *obs, int fd, uint32_t handle, uint64_t *pfn)
{
	int ret = pindma_query(fd, handle, 0, pfn);

	if (ret)
		return errno = -ret, fail(obs, "PINDMA_IOC_QUERY");
	if (!*pfn)
		return errno = 0, fail(obs, "PINDMA_IOC_QUERY reported PFN 0 for a pinned page");
	return true;
}

static bool child_observed(struct observation *obs, const struct child_report *r)
{
	if (!r->pfn_errno)
		return true;
	errno = r->pfn_errno;
	return fail(obs, "reading the child's PFN from pagemap");
}

static enum child_view classify(const char *bytes)
{
	if (!memcmp(bytes, PREFORK, TAG))
		return CHILD_OLD;
	if (!memcmp(bytes, PARENT, TAG))
		return CHILD_PARENT;
	if (!memcmp(bytes, DEVICE, TAG))
		return CHILD_DEVICE;
	return CHILD_OTHER;
}

static bool play(const struct scenario *s, uint32_t engine, struct observation *obs, char *page,
		 int fd)
{
	int cmd[2] = { -1, -1 }, rep[2] = { -1, -1 }, status, ret;
	struct child_report r;
	uint32_t handle = 0;
	char seen[TAG];
	bool ok = false, reported;
	pid_t pid = -1;
	uint32_t used;

	if (s->mode) {
		ret = pindma_pin(fd, page, LAB_PAGE, s->mode, PINDMA_PIN_WRITE, &handle);
		if (ret)
			return errno = -ret, fail(obs, "pin");
		if (!observe_query(obs, fd, handle, &obs->drv_before))
			goto out;
	} else if (mlock(page, LAB_PAGE)) {
		return fail(obs, "mlock");
	}
	if (!observe_pfn(obs, page, &obs->par_before, "parent's"))
		goto out;
	if (pipe(cmd) || pipe(rep)) {
		fail(obs, "pipe");
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fail(obs, "fork");
		goto out;
	}
	if (!pid) {
		close(cmd[1]);
		close(rep[0]);
		child_main(s, page, cmd[0], rep[1]);
	}
	close(cmd[0]);
	close(rep[1]);
	cmd[0] = rep[1] = -1;
	if (read(rep[0], &r, sizeof(r)) != sizeof(r)) {
		fail(obs, "child report after fork");
		goto out;
	}
	if (!child_observed(obs, &r))
		goto out;
	obs->child_fork = r.pfn;
	if (!observe_pfn(obs, page, &obs->par_fork, "parent's"))
		goto out;
	if (s->child_exits) {
		if (waitpid(pid, &status, 0) != pid) {
			fail(obs, "waiting for the child");
			goto out;
		}
		pid = -1;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != CHILD_EXIT_CODE) {
			errno = 0;
			fail(obs, "the child was to exit with %d, its wait status is %#x",
			     CHILD_EXIT_CODE, status);
			goto out;
		}
		obs->child = CHILD_EXITED;
	}

	/* The parent writes: the copy-on-write fault, if the page is shared. */
	memcpy(page + OFF_PARENT, PARENT, TAG);
	if (!observe_pfn(obs, page, &obs->par_after, "parent's"))
		goto out;

	if (s->mode) {
		used = engine;
		ret = pindma_dma(fd, PINDMA_IOC_DMA_WRITE, handle, OFF_DEVICE, (void *)DEVICE, TAG,
				 &used);
		if (!ret) {
			obs->engine = used;
			ret = pindma_dma(fd, PINDMA_IOC_DMA_READ, handle, OFF_PARENT, seen, TAG,
					 &used);
		}
		if (ret) {
			errno = -ret;
			fail(obs, "device transfer");
			goto out;
		}
		obs->parent_write_seen = !memcmp(seen, PARENT, TAG);
		obs->device_write_seen = !memcmp(page + OFF_DEVICE, DEVICE, TAG);
		if (!observe_query(obs, fd, handle, &obs->drv_after))
			goto out;
	}

	if (pid > 0) {
		if (write(cmd[1], "r", 1) != 1) {
			fail(obs, "asking the child");
			goto out;
		}
		reported = read(rep[0], &r, sizeof(r)) == sizeof(r);
		if (waitpid(pid, &status, 0) != pid) {
			fail(obs, "waiting for the child");
			goto out;
		}
		pid = -1;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) {
			obs->child = CHILD_SEGV;
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) || !reported) {
			errno = 0;
			fail(obs, "child ended with status %#x%s", status,
			     reported ? "" : " without its report");
			goto out;
		} else {
			if (!child_observed(obs, &r))
				goto out;
			obs->child_after = r.pfn;
			obs->child_prefork = !memcmp(r.at_parent, PREFORK, TAG);
			obs->child = classify(s->child_reads_device ? r.at_device : r.at_parent);
		}
	}

	if (s->mode)
		obs->verdict = obs->device_write_seen && obs->parent_write_seen &&
			obs->drv_after == obs->par_after ? "COHERENT" : "ORPHANED";
	else
		obs->verdict = obs->par_after == obs->par_before ? "COHERENT" : "ORPHANED";
	ok = true;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (cmd[i] >= 0)
			close(cmd[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	if (handle && (ret = pindma_unpin(fd, handle)) && ok) {
		errno = -ret;
		ok = fail(obs, "unpin");
	}
	if (!s->mode)
		munlock(page, LAB_PAGE);
	return ok;
}

bool scenario_run(const struct scenario *s, uint32_t engine, struct observation *obs)
{
	int fd = -1, knob_old = -1;
	bool ok, knob_ok = true;
	char *page;

	memset(obs, 0, sizeof(*obs));
	/* From what the kernel was built with, not from probing it: a broken switch must fail. */
	if (s->knob != KNOB_LEAVE && (obs->skipped = lab_lacks_patch("0002")))
		return false;
	if (s->mode) {
		fd = pindma_open();
		if (fd < 0)
			return errno = -fd, fail(obs, "open /dev/pindma (is pindma.ko loaded?)");
	}
	page = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		return fail(obs, "mmap");
	}
	memset(page, 0, LAB_PAGE);
	memcpy(page + OFF_PARENT, PREFORK, TAG);
	memcpy(page + OFF_DEVICE, PREFORK, TAG);
	if (s->knob != KNOB_LEAVE) {
		knob_old = lab_read_int(KNOB_PATH);
		knob_ok = knob_old >= 0 ||
			  fail(obs, "reading " KNOB_PATH " (a kernel with kernel-patches/0002?)");
		/* "Off again" is only that after the switch was on: on, then off, in this row. */
		if (knob_ok && s->knob == KNOB_OFF)
			knob_ok = knob_set(obs, 1);
		if (knob_ok)
			knob_ok = knob_set(obs, s->knob == KNOB_ON);
	}
	ok = knob_ok &&
	     (!s->dontfork || !madvise(page, LAB_PAGE, MADV_DONTFORK) || fail(obs, "DONTFORK")) &&
	     (!s->dofork || !madvise(page, LAB_PAGE, MADV_DOFORK) || fail(obs, "DOFORK")) &&
	     play(s, engine, obs, page, fd);
	if (knob_old >= 0 && lab_write_str(KNOB_PATH, knob_old ? "1" : "0") && ok)
		ok = fail(obs, "restoring " KNOB_PATH " to %d", knob_old);
	munmap(page, LAB_PAGE);
	if (fd >= 0)
		close(fd);
	return ok;
}
