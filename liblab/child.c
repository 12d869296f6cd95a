// SPDX-License-Identifier: GPL-2.0
/*
 * The parent/child protocol every row and test that forks uses, in the spirit of the kernel's
 * selftests/mm/cow.c comm_pipes: one pipe each way. The child reports (fixed-size messages) and
 * waits for the parent's go; the parent reads reports, says go, and reaps. Every step's failure is
 * reported to the caller, and lab_child_end() never leaves a child behind.
 */
#define _GNU_SOURCE
#include "lab.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int lab_child_start(struct lab_child *c, int (*fn)(struct lab_child *c, void *arg), void *arg)
{
	c->pid = -1;
	c->to_child[0] = c->to_child[1] = c->to_parent[0] = c->to_parent[1] = -1;
	if (pipe(c->to_child) || pipe(c->to_parent)) {
		lab_child_end(c);
		return -1;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		lab_child_end(c);
		return -1;
	}
	if (!c->pid) {
		close_fd(&c->to_child[1]);
		close_fd(&c->to_parent[0]);
		_exit(fn(c, arg));
	}
	close_fd(&c->to_child[0]);
	close_fd(&c->to_parent[1]);
	return 0;
}

int lab_child_report(struct lab_child *c, const void *buf, size_t len)
{
	return write(c->to_parent[1], buf, len) == (ssize_t)len ? 0 : -1;
}

int lab_child_wait(struct lab_child *c)
{
	unsigned char cmd;

	return read(c->to_child[0], &cmd, 1) == 1 ? cmd : -1;
}

int lab_child_read(struct lab_child *c, void *buf, size_t len)
{
	ssize_t n = read(c->to_parent[0], buf, len);

	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EPIPE;	/* the child ended, or wrote something else */
	return -1;
}

int lab_child_go(struct lab_child *c, char cmd)
{
	return write(c->to_child[1], &cmd, 1) == 1 ? 0 : -1;
}

int lab_child_reap(struct lab_child *c)
{
	int status;

	if (c->pid <= 0) {
		errno = ECHILD;
		return -1;
	}
	if (waitpid(c->pid, &status, 0) != c->pid)
		return -1;
	c->pid = -1;
	return status;
}

void lab_child_end(struct lab_child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	c->pid = -1;
	close_fd(&c->to_child[0]);
	close_fd(&c->to_child[1]);
	close_fd(&c->to_parent[0]);
	close_fd(&c->to_parent[1]);
}

const char *lab_wait_status(int status, char *buf, size_t n)
{
	if (status == -1)
		snprintf(buf, n, "not reaped");
	else if (WIFEXITED(status))
		snprintf(buf, n, "exited with %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by %s", strsignal(WTERMSIG(status)));
	else
		snprintf(buf, n, "wait status %#x", status);
	return buf;
}
