// SPDX-License-Identifier: GPL-2.0
/*
 * fork_bench: figures 1 and 2 of make bench, measured side by side in one run.
 *
 * 1. fork()+_exit()+wait() against the size of a populated anonymous region: plain,
 *    MADV_DONTFORK, PIN_LONGTERM-pinned (6.1 copies it at fork), PIN_LONGTERM with
 *    DONTFORK, GUP-pinned; as ratios to the fork of the process without the region and,
 *    for the pinned cases, to a memcpy of the same size.
 * 2. The first write after fork (the copy-on-write fault), per page, for plain and GUP
 *    memory, with the child alive and after it exited.
 *
 * The guest's clock may tick only every few milliseconds (under TCG the TSC cannot be
 * calibrated and the kernel falls back to jiffies), so each sample times a batch long
 * enough (about 0.2 s) for that not to matter, and reports the time of one call.
 *
 * Prints CSV blocks between "@@csv NAME" and "@@end" lines for bench/report.
 *   fork_bench [--sizes MiB,MiB,...] [--reps N]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "pindma_lib.h"

#define MIB (1024 * 1024UL)
#define CHUNK ((uint64_t)PINDMA_MAX_PAGES * LAB_PAGE)

struct stat3 {
	double med, min, max;
};

static struct stat3 stats(double *v, int n)
{
	lab_sort_doubles(v, n);
	return (struct stat3){ v[n / 2], v[0], v[n - 1] };
}

static void fork_once(void *unused)
{
	pid_t pid = fork();

	(void)unused;
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
}

struct copy {
	char *dst, *src;
	size_t len;
};

static void memcpy_once(void *arg)
{
	struct copy *c = arg;

	memcpy(c->dst, c->src, c->len);
}

/* reps samples of once(arg), each the mean over a batch of about 0.2 s. */
static struct stat3 timed(void (*once)(void *), void *arg, int reps)
{
	double v[64], t0 = lab_now_us(), one;
	long batch;

	once(arg);
	one = lab_now_us() - t0;
	batch = one >= 200000 ? 1 : 200000 / (one > 500 ? one : 500);
	for (int r = 0; r < reps; r++) {
		t0 = lab_now_us();
		for (long i = 0; i < batch; i++)
			once(arg);
		v[r] = (lab_now_us() - t0) / batch;
	}
	return stats(v, reps);
}

enum variant { PLAIN, DONTFORK, PIN, PIN_DONTFORK, GUP, NVARIANTS };
static const char *const vnames[] = { "plain", "dontfork", "pin", "pin+dontfork", "gup" };

/* Pin the region in PINDMA_MAX_PAGES chunks; the handles go when fd is closed. */
static int pin_all(int fd, char *p, size_t len, uint32_t mode)
{
	uint32_t h;

	for (size_t off = 0; off < len; off += CHUNK)
		if (pindma_pin(fd, p + off, len - off < CHUNK ? len - off : CHUNK, mode,
			       PINDMA_PIN_WRITE, &h))
			return -1;
	return 0;
}

static void figure1(const int *sizes, int nsizes, int reps)
{
	struct stat3 empty = timed(fork_once, NULL, reps), s, m;

	printf("@@csv fork\n");
	printf("size_mib,variant,median_us,min_us,max_us,ratio_to_empty_fork,ratio_to_memcpy\n");
	printf("0,empty,%.1f,%.1f,%.1f,1.00,\n", empty.med, empty.min, empty.max);
	for (int i = 0; i < nsizes; i++) {
		size_t len = sizes[i] * MIB;
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		char *q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED || q == MAP_FAILED) {
			fprintf(stderr, "fork_bench: no room for %d MiB\n", sizes[i]);
			break;
		}
		/* 4 KiB pages throughout: THP would change what fork copies. */
		madvise(p, len, MADV_NOHUGEPAGE);
		madvise(q, len, MADV_NOHUGEPAGE);
		memset(p, 1, len);
		memset(q, 2, len);
		m = timed(memcpy_once, &(struct copy){ q, p, len }, reps);
		/* The copy's destination must not be in the forks measured below. */
		munmap(q, len);
		for (int var = 0; var < NVARIANTS; var++) {
			int fd = pindma_open();

			if (var == DONTFORK || var == PIN_DONTFORK)
				madvise(p, len, MADV_DONTFORK);
			if ((var == PIN || var == PIN_DONTFORK) &&
			    pin_all(fd, p, len, PINDMA_MODE_PIN_LONGTERM))
				fprintf(stderr, "fork_bench: pin %d MiB failed\n", sizes[i]);
			if (var == GUP && pin_all(fd, p, len, PINDMA_MODE_GUP))
				fprintf(stderr, "fork_bench: GUP %d MiB failed\n", sizes[i]);
			s = timed(fork_once, NULL, reps);
			printf("%d,%s,%.1f,%.1f,%.1f,%.2f,%.3f\n", sizes[i], vnames[var], s.med,
			       s.min, s.max, s.med / empty.med, s.med / m.med);
			close(fd);
			madvise(p, len, MADV_DOFORK);
		}
		printf("%d,memcpy,%.1f,%.1f,%.1f,%.2f,1.000\n", sizes[i], m.med, m.min, m.max,
		       m.med / empty.med);
		fflush(stdout);
		munmap(p, len);
	}
	printf("@@end\n");
}

/* Write one byte per page after a fork; the child is alive (pipe) or already gone. */
static double cow_per_page(char *p, size_t len, bool child_alive)
{
	int pfd[2];
	double t0, t;
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (!pid) {
		close(pfd[1]);
		if (child_alive)
			(void)!read(pfd[0], &c, 1);
		_exit(0);
	}
	if (!child_alive)
		waitpid(pid, NULL, 0);
	t0 = lab_now_us();
	for (size_t off = 0; off < len; off += LAB_PAGE)
		p[off]++;
	t = (lab_now_us() - t0) / (len / LAB_PAGE);
	close(pfd[1]);
	close(pfd[0]);
	if (child_alive)
		waitpid(pid, NULL, 0);
	return t;
}

static void figure2(int reps)
{
	size_t len = 64 * MIB;
	double v[64], first_touch[64];
	struct stat3 s, base;

	printf("@@csv cow\n");
	printf("variant,median_us_per_page,min,max,ratio_to_plain_child_alive\n");
	for (int r = 0; r < reps; r++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		double t0 = lab_now_us();

		madvise(p, len, MADV_NOHUGEPAGE);
		for (size_t off = 0; off < len; off += LAB_PAGE)
			p[off] = 1;
		first_touch[r] = (lab_now_us() - t0) / (len / LAB_PAGE);
		munmap(p, len);
	}
	base.med = 0;
	for (int var = 0; var < 4; var++) {
		static const char *const names[] = {
			"plain/child alive", "plain/child exited", "gup/child alive",
			"gup/child exited",
		};
		bool gup = var >= 2, alive = !(var & 1);

		for (int r = 0; r < reps; r++) {
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			int fd = pindma_open();

			madvise(p, len, MADV_NOHUGEPAGE);
			memset(p, 1, len);
			if (gup)
				pin_all(fd, p, len, PINDMA_MODE_GUP);
			v[r] = cow_per_page(p, len, alive);
			close(fd);
			munmap(p, len);
		}
		s = stats(v, reps);
		if (!var)
			base = s;
		printf("%s,%.3f,%.3f,%.3f,%.2f\n", names[var], s.med, s.min, s.max,
		       s.med / base.med);
	}
	s = stats(first_touch, reps);
	printf("first touch (no fork),%.3f,%.3f,%.3f,%.2f\n", s.med, s.min, s.max,
	       s.med / base.med);
	printf("@@end\n");
}

int main(int argc, char **argv)
{
	int sizes[16] = { 4, 16, 64, 256, 512 }, nsizes = 5, reps = 5, c;
	char *tok, *save;

	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'r' },
		{ 0 },
	};
	while ((c = getopt_long(argc, argv, "s:r:", opts, NULL)) != -1) {
		if (c == 's') {
			nsizes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok && nsizes < 16;
			     tok = strtok_r(NULL, ",", &save))
				sizes[nsizes++] = atoi(tok);
		} else if (c == 'r') {
			reps = atoi(optarg);
		} else {
			return 2;
		}
	}
	if (reps < 1 || reps > 16)
		return fprintf(stderr, "fork_bench: --reps 1..16\n"), 2;
	figure1(sizes, nsizes, reps);
	figure2(reps);
	return 0;
}
