// SPDX-License-Identifier: GPL-2.0
/*
 * reg_bench: figure 5 of make bench, what rdma-core's fork support costs at registration.
 * ibv_reg_mr() + ibv_dereg_mr() of a 2 MiB buffer on Soft-RoCE (rxe0), on 4 KiB pages and on
 * one 2 MiB hugetlb page, without fork support and with ibv_fork_init() (and, for the huge
 * page, RDMAV_HUGEPAGES_SAFE=1, without which the registration fails: verbs_demo's hugetlb
 * rows). Fork support is process-wide, so each variant runs in a process of its own.
 * Per cycle: median, min and max, and the ratio to the same pages without fork support.
 * The guest needs a free huge page (bench/report sets vm.nr_hugepages).
 * Figure 6, what fork support costs in VMAs: N one-page MRs on every other page of one mapping
 * (the scattered registrations of a middleware's buffer pool), with and without ibv_fork_init():
 * the process's VMAs after them (/proc/self/maps, the kernel's own count) and the time of all N.
 * Each MR's MADV_DONTFORK cuts its page out of the mapping, so with fork support VMAs grow by
 * 2N - 1 (the first MR is at the mapping's start) until vm.max_map_count stops registration
 * (verbs_demo's verbs-switch-off-mr-splits-vmas row).
 *
 *   reg_bench [--reps N]                 every variant, then figure 6: bench/report's CSV blocks
 *   reg_bench --variant NAME --reps N    one variant, in this process: "median min max" in us
 *   reg_bench --scatter N [--fork-init]  N scattered MRs, in this process: "vmas-before vmas us"
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lab.h"
#include "lab_verbs.h"

#define LEN (2UL << 20)

static const struct variant {
	const char *name;
	const char *pages;
	int huge;
	int fork_init;
} variants[] = {
	{ "4k", "4 KiB", 0, 0 },
	{ "4k-fork_init", "4 KiB", 0, 1 },
	{ "2m", "2 MiB hugetlb", 1, 0 },
	{ "2m-fork_init", "2 MiB hugetlb", 1, 1 },
};

#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static int fail(const char *what)
{
	fprintf(stderr, "reg_bench: %s: %s\n", what, strerror(errno));
	return 1;
}

/* One variant in this process: reps cycles after a few unmeasured ones. */
static int run_variant(const struct variant *v, int reps)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (v->huge ? MAP_HUGETLB : 0);
	double *t = calloc(reps, sizeof(*t));
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf;

	if (!t)
		return fail("calloc");
	if (v->fork_init && ibv_fork_init())
		return fail("ibv_fork_init");
	ctx = lab_rxe_open();
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd)
		return fail("rxe0");
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (buf == MAP_FAILED)
		return fail(v->huge ? "mmap(MAP_HUGETLB) (a free huge page?)" : "mmap");
	memset(buf, 1, LEN);
	for (int i = -3; i < reps; i++) {
		double t0 = lab_now_us();
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE);

		if (!mr || ibv_dereg_mr(mr))
			return fail("ibv_reg_mr/ibv_dereg_mr");
		if (i >= 0)
			t[i] = lab_now_us() - t0;
	}
	lab_sort_doubles(t, reps);
	printf("%.1f %.1f %.1f\n", t[reps / 2], t[0], t[reps - 1]);
	munmap(buf, LEN);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(t);
	return 0;
}

/* Figure 6's registrations in this process: the VMAs before and after them, and their time. */
static int scatter(int regs, int fork_init)
{
	struct ibv_mr **mrs = calloc(regs, sizeof(*mrs));
	int before, after, n;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	double t0, t;
	char *map;

	if (!mrs)
		return fail("calloc");
	if (fork_init && ibv_fork_init())
		return fail("ibv_fork_init");
	ctx = lab_rxe_open();
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd)
		return fail("rxe0");
	map = lab_map_anon(2UL * regs * LAB_PAGE);
	if (map == MAP_FAILED)
		return fail("mmap");
	before = lab_maps_count(NULL, ~(size_t)0);
	t0 = lab_now_us();
	for (n = 0; n < regs; n++) {
		mrs[n] = ibv_reg_mr(pd, map + 2UL * n * LAB_PAGE, LAB_PAGE, IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[n])
			return fail("ibv_reg_mr");
	}
	t = lab_now_us() - t0;
	after = lab_maps_count(NULL, ~(size_t)0);
	printf("%d %d %.1f\n", before, after, t);
	while (n--)
		ibv_dereg_mr(mrs[n]);
	munmap(map, 2UL * regs * LAB_PAGE);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(mrs);
	return 0;
}

#define SCATTER_REPS 5

/* One process of figure 6: its VMAs before and after, and the time of its registrations. */
static int scatter_once(const char *exe, int regs, int fork_init, int *before, int *after,
			double *us)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	int ok;

	snprintf(cmd, sizeof(cmd), "%s --scatter %d%s", exe, regs, fork_init ? " --fork-init" : "");
	p = popen(cmd, "r");
	if (!p)
		return fail("popen");
	ok = fscanf(p, "%d %d %lf", before, after, us) == 3;
	if (pclose(p) || !ok) {
		fprintf(stderr, "reg_bench: %s failed\n", cmd);
		return 1;
	}
	return 0;
}

/*
 * Figure 6: each count of registrations without and with fork support, SCATTER_REPS processes of
 * each, the two in turn and in alternating order: the median time, min and max.
 */
static int scatter_figure(const char *exe)
{
	static const int counts[] = { 16, 64, 256, 1024 };

	printf("@@csv vmas\n");
	printf("MRs,fork support,VMAs before,VMAs after,VMAs added per MR,median us,min us,max us,"
	       "ratio to no fork support\n");
	for (unsigned int i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		double t[2][SCATTER_REPS], med[2];
		int before[2], after[2];

		for (int r = 0; r < SCATTER_REPS; r++)
			for (int k = 0; k < 2; k++) {
				int fi = (k + r) % 2;

				if (scatter_once(exe, counts[i], fi, &before[fi], &after[fi],
						 &t[fi][r]))
					return 1;
			}
		for (int fi = 0; fi < 2; fi++) {
			lab_sort_doubles(t[fi], SCATTER_REPS);
			med[fi] = t[fi][SCATTER_REPS / 2];
			printf("%d,%s,%d,%d,%.2f,%.1f,%.1f,%.1f,%.2f\n", counts[i],
			       fi ? "ibv_fork_init" : "none", before[fi], after[fi],
			       (double)(after[fi] - before[fi]) / counts[i], med[fi], t[fi][0],
			       t[fi][SCATTER_REPS - 1], med[fi] / med[0]);
		}
	}
	printf("@@end\n");
	return 0;
}

int main(int argc, char **argv)
{
	double med[NVARIANTS], min[NVARIANTS], max[NVARIANTS];
	const char *only = NULL;
	char exe[PATH_MAX], cmd[PATH_MAX + 128];
	int reps = 200, regs = 0, fork_init = 0, c;
	ssize_t n;

	static const struct option opts[] = {
		{ "reps", required_argument, NULL, 'r' },
		{ "variant", required_argument, NULL, 'v' },
		{ "scatter", required_argument, NULL, 's' },
		{ "fork-init", no_argument, NULL, 'f' },
		{ 0 },
	};
	while ((c = getopt_long(argc, argv, "r:v:s:f", opts, NULL)) != -1) {
		if (c == 'r')
			reps = atoi(optarg);
		else if (c == 'v')
			only = optarg;
		else if (c == 's')
			regs = atoi(optarg);
		else if (c == 'f')
			fork_init = 1;
		else
			return 2;
	}
	if (reps < 1 || regs < 0)
		return 2;
	if (regs)
		return scatter(regs, fork_init);
	for (unsigned int i = 0; only && i < NVARIANTS; i++)
		if (!strcmp(variants[i].name, only))
			return run_variant(&variants[i], reps);
	if (only) {
		fprintf(stderr, "reg_bench: no variant %s\n", only);
		return 2;
	}
	if (lab_rxe_setup())
		return fail("creating rxe0 on lo");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return fail("/proc/self/exe");
	exe[n] = 0;
	for (unsigned int i = 0; i < NVARIANTS; i++) {
		FILE *p;
		int ok;

		snprintf(cmd, sizeof(cmd), "%s%s --variant %s --reps %d",
			 variants[i].huge && variants[i].fork_init ? "RDMAV_HUGEPAGES_SAFE=1 " : "",
			 exe, variants[i].name, reps);
		p = popen(cmd, "r");
		if (!p)
			return fail("popen");
		ok = fscanf(p, "%lf %lf %lf", &med[i], &min[i], &max[i]) == 3;
		if (pclose(p) || !ok) {
			fprintf(stderr, "reg_bench: variant %s failed\n", variants[i].name);
			return 1;
		}
	}
	printf("@@csv reg\n");
	printf("pages,fork support,median us,min us,max us,ratio to no fork support\n");
	for (unsigned int i = 0; i < NVARIANTS; i++) {
		unsigned int base = i & ~1U;	/* the same pages, without fork support */

		printf("%s,%s,%.1f,%.1f,%.1f,%.2f\n", variants[i].pages,
		       !variants[i].fork_init ? "none" : variants[i].huge ?
		       "ibv_fork_init+HUGEPAGES_SAFE" : "ibv_fork_init",
		       med[i], min[i], max[i], med[i] / med[base]);
	}
	printf("@@end\n");
	return scatter_figure(exe);
}
