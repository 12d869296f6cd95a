// SPDX-License-Identifier: GPL-2.0
/*
 * The locks the guest's programs share (lab.h: lab_lock()): a file in /tmp each, taken with
 * flock() behind a turnstile, so that a writer is not starved by readers, and given up after
 * LAB_LOCK_TIMEOUT seconds.
 */
#define _GNU_SOURCE
#include "lab.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static int lock_file(const char *name, const char *suffix)
{
	char path[96];

	/* Read-only is enough for flock(), and lets every user of the demos share one lock file. */
	snprintf(path, sizeof(path), "/tmp/lab-%s%s", name, suffix);
	return open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
}

static void lock_timer_fired(int sig)
{
	(void)sig;
}

/* Once a wait has given up, every later one in this process gives up at once. */
static bool lock_timed_out;

/*
 * flock() that gives up with ETIMEDOUT after LAB_LOCK_TIMEOUT seconds (default 600: a wait is for
 * every row queued ahead, a row holds the switch 5 s at most, the debug kernel is several times
 * slower, and the guest's own timeout is 1800 s). A holder that never lets go (a row's forked
 * child that keeps the fd, a stuck play) fails the rows that wait, each saying so, instead of
 * stalling the guest; after one such wait, the process's later waits fail at once. A timer
 * signal to this thread interrupts the wait, and comes again every second should one arrive
 * between the deadline's check and the wait (the harness's alarm() is left alone).
 */
static int flock_within(int fd, int op)
{
	const char *env = getenv("LAB_LOCK_TIMEOUT");
	struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };
	struct sigaction sa = { .sa_handler = lock_timer_fired }, old;
	long secs = env ? atol(env) : 0;
	struct itimerspec its = { .it_interval.tv_sec = 1 };
	struct timespec now;
	sigset_t rt, oldmask;
	timer_t timer;
	int ret, err;

	if (!flock(fd, op | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK)
		return -1;
	if (lock_timed_out) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (secs <= 0)
		secs = 600;
	ev._sigev_un._tid = gettid();
	clock_gettime(CLOCK_MONOTONIC, &its.it_value);
	its.it_value.tv_sec += secs;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	if (sigaction(SIGRTMIN, &sa, &old))
		return -1;
	pthread_sigmask(SIG_UNBLOCK, &rt, &oldmask);
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer)) {
		ret = -1;
		err = errno;
		goto out;
	}
	if (timer_settime(timer, TIMER_ABSTIME, &its, NULL)) {
		ret = -1;
		err = errno;
		timer_delete(timer);
		goto out;
	}
	do {
		ret = flock(fd, op);
		err = errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (ret && err == EINTR && (now.tv_sec < its.it_value.tv_sec ||
					 (now.tv_sec == its.it_value.tv_sec &&
					  now.tv_nsec < its.it_value.tv_nsec)));
	timer_delete(timer);
	if (ret && err == EINTR) {
		err = ETIMEDOUT;
		lock_timed_out = true;
	}
out:
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	sigaction(SIGRTMIN, &old, NULL);
	errno = err;
	return ret;
}

int lab_lock(const char *name, bool exclusive)
{
	int fd = lock_file(name, ".lock"), turn = lock_file(name, ".turn"), err;

	/*
	 * flock() lets a shared lock in whenever another is held, so a writer waited for a moment
	 * when no row of any demo held it: 16 s for a row that holds it 0.15 s (guest/demo
	 * --parallel). Every taker passes the turnstile first, and a writer keeps it until it has
	 * the lock: readers that come after a writer wait behind it (hence not recursive: lab.h).
	 */
	if (fd >= 0 && turn >= 0 && !flock_within(turn, LOCK_EX)) {
		if (!exclusive) {
			close(turn);
			turn = -1;
		}
		if (!flock_within(fd, exclusive ? LOCK_EX : LOCK_SH)) {
			if (turn >= 0)
				close(turn);
			return fd;
		}
	}
	err = errno;
	if (turn >= 0)
		close(turn);
	if (fd >= 0)
		close(fd);
	errno = err;
	return -1;
}
