// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's module, loaded by a program that finds it missing: in the guest /init loads it, and a
 * kselftest collection run elsewhere (make kselftest-install) carries it in lab/modules/, loaded by
 * the first program that needs it, as kselftests load the test modules they need.
 */
#include "lab.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int lab_load_module(const char *name)
{
	char path[PATH_MAX + 64];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/modules/%s.ko", lab_root(), name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	return ret == 0 || errno == EEXIST ? 0 : -1;
}
