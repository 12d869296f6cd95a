// SPDX-License-Identifier: GPL-2.0
/* Child processes and dropping privileges. */
#include "lab.h"

#include <grp.h>
#include <stdio.h>
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
