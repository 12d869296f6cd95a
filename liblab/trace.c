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

int lab_trace_make(char *inst, size_t size, const char *name)
{
	snprintf(inst, size, TRACEFS "/instances/%s", name);
	/* One left by a run that died is the same name's: remove it first. */
	rmdir(inst);
	return mkdir(inst, 0700);
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
