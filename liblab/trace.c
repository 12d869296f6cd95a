// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own tracing as an oracle: a tracefs instance of the caller's own (a ring buffer of
 * its own, its events enabled and filtered there only), so that programs running side by side
 * never read or clear each other's events.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab.h"

#define TRACEFS "/sys/kernel/tracing"

#define MAKE_IT_FAIL "/proc/thread-self/make-it-fail"

/*
 * The calling thread's make-it-fail (fault injection's task filter: fault_test runs programs
 * under it) set to value; its old value, or -1 where the kernel has none. Reading and writing the
 * file are fault sites of their own (an allocation, a copy from user space): tried again until
 * the value reads back.
 */
static int make_it_fail(int value)
{
	char v[2] = { (char)('0' + value), 0 };
	int old = -1;

	for (int i = 0; i < 100 && old < 0; i++) {
		old = lab_read_int(MAKE_IT_FAIL);
		if (old < 0 && errno == ENOENT)
			return -1;
	}
	if (old < 0 || old == value)
		return old;
	for (int i = 0; i < 100; i++)
		if (!lab_write_str(MAKE_IT_FAIL, v) && lab_read_int(MAKE_IT_FAIL) == value)
			break;
	return old;
}

int lab_trace_make(char *inst, size_t size, const char *name)
{
	int faults, ret, e;

	snprintf(inst, size, TRACEFS "/instances/%s", name);
	/* One left by a run that died is the same name's: remove it first. */
	rmdir(inst);
	/*
	 * Not under injected faults: a ring buffer's page that fails to allocate for a CPU is a
	 * WARN of the tracer's own (trace_rb_cpu_prepare(), seen under fault_test), and the
	 * instance is the test's oracle, not the code under test.
	 */
	faults = make_it_fail(0);
	ret = mkdir(inst, 0700);
	e = errno;
	if (faults > 0)
		make_it_fail(faults);
	errno = e;
	return ret;
}

int lab_trace_set(const char *inst, const char *file, const char *value)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", inst, file);
	return lab_write_str(path, value);
}

void lab_trace_remove(const char *inst)
{
	int e = errno;

	rmdir(inst);
	errno = e;
}
