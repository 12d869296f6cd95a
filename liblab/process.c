// SPDX-License-Identifier: GPL-2.0
/* Child processes and dropping privileges. */
#define _GNU_SOURCE
#include "lab.h"

#include <fcntl.h>
#include <sched.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int lab_become_nobody(unsigned long memlock_pages)
{
	struct rlimit rl = { memlock_pages * LAB_PAGE, memlock_pages * LAB_PAGE };

	return setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) || setgid(65534) ||
	       setuid(65534) ? -1 : 0;
}

int lab_in_child(int (*fn)(void *), void *arg)
{
	int status = -1;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(arg));
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static int exit_at_once(void *arg)
{
	(void)arg;
	return 0;
}

int lab_referenced_pages(char *buf, size_t len)
{
	size_t n = len / LAB_PAGE;
	uint64_t *pfn = calloc(n ? n : 1, sizeof(*pfn)), after;
	char *byte = calloc(n ? n : 1, 1);
	int status, cpu, pinned = 0, moved = 0, mem = open("/proc/self/mem", O_RDWR);
	cpu_set_t mask, one;

	if (!pfn || !byte || mem < 0 || sched_getaffinity(0, sizeof(mask), &mask))
		goto fail;
	/*
	 * Through /proc/self/mem (FOLL_FORCE), so that read-only and PROT_NONE pages are seen
	 * too: first each present page's first byte, to write it back later.
	 */
	for (size_t i = 0; i < n; i++) {
		if (lab_pfn_read(buf + i * LAB_PAGE, &pfn[i]))
			goto fail;
		if (pfn[i] && pread(mem, &byte[i], 1, (off_t)(uintptr_t)(buf + i * LAB_PAGE)) != 1)
			goto fail;
	}
	/*
	 * Per-CPU LRU batches hold references too: a page fresh from a fault, or one that a GUP
	 * (that read, a driver's pin) marked accessed and queued for activation. The write fault
	 * drains only its own CPU's batch, and only for a page not on the LRU yet, and would copy
	 * for those references. Compaction drains every CPU's batches first (lru_add_drain_all());
	 * it may migrate pages nobody references, so the PFNs are read after it. A page it took
	 * off the LRU and put back unmigrated waits in this CPU's batch, with a reference (and on
	 * 6.12 a migrated one too: only 6.1 drains after migrating a mapped page): so the
	 * compaction, the child and the writes all run on this one CPU, whose write fault drains
	 * that batch. (Seen without: 1 to 12 pages "moved" when the writes ran on the other CPU.)
	 */
	cpu = sched_getcpu();
	if (cpu < 0)
		goto fail;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		goto fail;
	pinned = 1;
	if (lab_write_str("/proc/sys/vm/compact_memory", "1"))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (pfn[i] && lab_pfn_read(buf + i * LAB_PAGE, &pfn[i]))
			goto fail;
	/* The child's mappings write-protect every page and then go away with it. */
	status = lab_in_child(exit_at_once, NULL);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		/* No page, no reference to find. The write faults before GUP touches the page. */
		if (!pfn[i])
			continue;
		if (pwrite(mem, &byte[i], 1, (off_t)(uintptr_t)(buf + i * LAB_PAGE)) != 1 ||
		    lab_pfn_read(buf + i * LAB_PAGE, &after))
			goto fail;
		moved += after != pfn[i];
	}
	pinned = 0;
	if (sched_setaffinity(0, sizeof(mask), &mask))
		goto fail;
	close(mem);
	free(pfn);
	free(byte);
	return moved;
fail:
	if (pinned)
		sched_setaffinity(0, sizeof(mask), &mask);
	if (mem >= 0)
		close(mem);
	free(pfn);
	free(byte);
	return -1;
}
