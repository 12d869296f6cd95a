// SPDX-License-Identifier: GPL-2.0
/* The benchmarks' clock and their samples' order (make bench; never a test's threshold). */
#include <stdlib.h>
#include <time.h>

#include "lab.h"

double lab_now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void lab_sort_doubles(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}
