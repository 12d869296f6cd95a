// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection's task filter (the debug flavour: fault_test runs programs with make-it-fail
 * set): an oracle's setup (a tracefs instance, a kprobe) is not the code under test, and a
 * failed allocation there can be a WARN of the kernel's own, so it runs with the calling
 * thread's make-it-fail cleared.
 */
#include <errno.h>

#include "lab.h"

#define MAKE_IT_FAIL "/proc/thread-self/make-it-fail"

/*
 * Reading and writing the file are fault sites of their own, and a failed proc inode allocation
 * answers ENOENT, as a kernel without fault injection does: tried again, and only 100 failures in
 * a row are taken for "none".
 */
static int faults_read(void)
{
	int v = -1;

	for (int i = 0; i < 100 && v < 0; i++)
		v = lab_read_int(MAKE_IT_FAIL);
	return v;
}

static int faults_write(int value)
{
	for (int i = 0; i < 100; i++)
		if (!lab_write_str(MAKE_IT_FAIL, value ? "1" : "0") && faults_read() == value)
			return 0;
	errno = EIO;
	return -1;
}

int lab_faults_off(void)
{
	int old = faults_read();

	if (old > 0 && faults_write(0))
		return -1;
	return old;
}

int lab_faults_restore(int old)
{
	return old > 0 ? faults_write(old) : 0;
}
