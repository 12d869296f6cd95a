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

/*
 * Not under injected faults (liblab/faults.c): another CPU's ring buffer that fails to allocate
 * is a WARN of the tracer's own (trace_rb_cpu_prepare(), seen under fault_test).
 */
int lab_trace_make(char *inst, size_t size, const char *name)
{
	int faults = lab_faults_off(), ret, e;

	snprintf(inst, size, TRACEFS "/instances/%s", name);
	/* One left by a run that died is the same name's: remove it first. */
	rmdir(inst);
	ret = mkdir(inst, 0700);
	e = errno;
	if (lab_faults_restore(faults))
		return -1;
	errno = e;
	return ret;
}

int lab_trace_set(const char *inst, const char *file, const char *value)
{
	int faults = lab_faults_off(), ret, e;
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", inst, file);
	ret = lab_write_str(path, value);
	e = errno;
	if (lab_faults_restore(faults))
		return -1;
	errno = e;
	return ret;
}

void lab_trace_remove(const char *inst)
{
	int e = errno;

	rmdir(inst);
	errno = e;
}
