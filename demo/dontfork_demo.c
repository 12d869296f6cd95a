// SPDX-License-Identifier: GPL-2.0
/*
 * dontfork_demo: play the fork/write scenarios against pindma and print what each
 * party saw, the PFNs, and a verdict derived only from those observations, next to
 * the verdict expected on this kernel. Exit status: 0 when every row matched its
 * expectation, 1 when one did not, 2 when a scenario could not run.
 *
 *   dontfork_demo [--engine auto|cpu|edu] [--json] [--only NAME]...
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "lab.h"
#include "pindma_lib.h"
#include "scenario.h"

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

static const char *mode_name(uint32_t mode)
{
	return mode == PINDMA_MODE_GUP ? "GUP" : mode == PINDMA_MODE_PIN_LONGTERM ? "PIN" : "mlock";
}

static char *pfn_str(char *buf, size_t n, uint64_t pfn)
{
	if (pfn)
		snprintf(buf, n, "%llx", (unsigned long long)pfn);
	else
		snprintf(buf, n, "-");
	return buf;
}

/* The article's three pictures, drawn from the measured PFNs: pages are lettered in order seen. */
static void picture(const struct scenario *s, const struct observation *o)
{
	const char *who[] = { "parent", "child ", "driver" };
	uint64_t stage[3][3] = {
		{ o->par_before, 0, o->drv_before },
		{ o->par_fork, o->child_fork, o->drv_before },
		{ o->par_after, o->child_after, o->drv_after },
	};
	uint64_t pages[9];
	int npages = 0;

	printf("\n  %s: %s\n", s->name, s->title);
	printf("    %-28s %-28s %s\n", "before fork", "after fork",
	       "after the parent's write");
	for (int w = 0; w < 3; w++) {
		printf("   ");
		for (int st = 0; st < 3; st++) {
			uint64_t pfn = stage[st][w];
			char cell[64];
			int p;

			for (p = 0; p < npages && pages[p] != pfn; p++)
				;
			if (pfn && p == npages)
				pages[npages++] = pfn;
			if (!pfn)
				snprintf(cell, sizeof(cell), "%s    (none)", who[w]);
			else
				snprintf(cell, sizeof(cell), "%s -> page %c (pfn %llx)", who[w], 'A' + p,
					 (unsigned long long)pfn);
			printf(st < 2 ? " %-28s" : " %s", cell);
		}
		printf("\n");
	}
}

/* The expectation table of this kernel's version (liblab/expect.c); a row it lacks never matches. */
static const char *expected(const struct scenario *s)
{
	const char *e = lab_expect(s->name);

	return e ? e : "none";
}

static bool as_expected(const struct scenario *s, const struct observation *o)
{
	return o->verdict && !strcmp(o->verdict, expected(s));
}

static void json_row(const struct scenario *s, const struct observation *o, bool first)
{
	printf("%s\n  {\"name\": \"%s\", \"mode\": \"%s\", \"dontfork\": %s, \"dofork\": %s, "
	       "\"engine\": \"%s\", \"parent_sees_device_write\": %s, "
	       "\"device_sees_parent_write\": %s, "
	       "\"pfn\": {\"driver\": [%llu, %llu], \"parent\": [%llu, %llu, %llu], "
	       "\"child\": [%llu, %llu]}, \"child_sees\": \"%s\", \"child_has_prefork\": %s, "
	       "\"observed\": \"%s\", \"expected\": \"%s\", \"kernel\": \"%s\", "
	       "\"error\": \"%s\"}",
	       first ? "" : ",", s->name, mode_name(s->mode), s->dontfork ? "true" : "false",
	       s->dofork ? "true" : "false", pindma_engine_name(o->engine),
	       o->device_write_seen ? "true" : "false", o->parent_write_seen ? "true" : "false",
	       (unsigned long long)o->drv_before, (unsigned long long)o->drv_after,
	       (unsigned long long)o->par_before, (unsigned long long)o->par_fork,
	       (unsigned long long)o->par_after, (unsigned long long)o->child_fork,
	       (unsigned long long)o->child_after, child_view_name(o->child),
	       o->child_prefork ? "true" : "false", o->verdict ? o->verdict : "ERROR", expected(s),
	       lab_kernel_release(), o->error);
}

static void text_row(unsigned int i, const struct scenario *s, const struct observation *o)
{
	char a[20], b[20], c[20], d[20], e[20], f[20], g[20], drv[48], par[64], chi[48];
	bool dev = s->mode != 0;

	snprintf(drv, sizeof(drv), "%s->%s", pfn_str(a, 20, o->drv_before),
		 pfn_str(b, 20, o->drv_after));
	snprintf(par, sizeof(par), "%s->%s->%s", pfn_str(c, 20, o->par_before),
		 pfn_str(d, 20, o->par_fork), pfn_str(e, 20, o->par_after));
	snprintf(chi, sizeof(chi), "%s->%s", pfn_str(f, 20, o->child_fork),
		 pfn_str(g, 20, o->child_after));
	if (!o->child_fork && !o->child_after)
		snprintf(chi, sizeof(chi), "none");
	printf("%2u %-22s %-5s %-8s %-10s %-10s %-12s %-19s %-12s %-21s %-8s %-8s %s\n", i + 1,
	       s->name, mode_name(s->mode), s->dofork ? "then DO" : yes(s->dontfork),
	       dev ? yes(o->device_write_seen) : "-", dev ? yes(o->parent_write_seen) : "-",
	       dev ? drv : "-", par, chi, child_view_name(o->child),
	       o->verdict ? o->verdict : o->skipped ? "-" : "ERROR", expected(s),
	       o->skipped ? "skipped" : as_expected(s, o) ? "ok" : "MISMATCH");
	if (o->skipped)
		printf("   skipped: %s (vm.fork_share_pinned)\n", o->skipped);
	if (o->error[0])
		printf("   could not run: %s\n", o->error);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--engine auto|cpu|edu] [--json] [--only NAME]...\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "engine", required_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct observation obs[32];
	const struct scenario *run[32];
	unsigned int n = 0, mismatched = 0, failed = 0, skipped = 0, i;
	uint32_t engine = PINDMA_ENGINE_AUTO;
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "e:jo:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (!strcmp(optarg, "cpu"))
				engine = PINDMA_ENGINE_CPU;
			else if (!strcmp(optarg, "edu"))
				engine = PINDMA_ENGINE_EDU;
			else if (strcmp(optarg, "auto"))
				usage(argv[0]);
			break;
		case 'j':
			json = true;
			break;
		case 'o':
			if (n == 32 || !(run[n] = scenario_find(optarg))) {
				fprintf(stderr, "no scenario named %s\n", optarg);
				return 2;
			}
			n++;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind < argc)
		usage(argv[0]);
	if (!n)
		for (; n < n_scenarios && n < 32; n++)
			run[n] = &scenarios[n];

	for (i = 0; i < n; i++) {
		if (!scenario_run(run[i], engine, &obs[i]))
			obs[i].skipped ? skipped++ : failed++;
		else if (!as_expected(run[i], &obs[i]))
			mismatched++;
	}

	if (json) {
		printf("[");
		for (i = 0; i < n; i++)
			json_row(run[i], &obs[i], i == 0);
		printf("\n]\n");
		return failed ? 2 : mismatched ? 1 : 0;
	}

	printf("dontfork_demo on Linux %s (expectations: the %s table); engine asked %s;\n"
	       "PFNs in hex, before->after the fork->after the parent's write\n",
	       lab_kernel_release(), lab_expect_table(), pindma_engine_name(engine));
	printf("%2s %-22s %-5s %-8s %-10s %-10s %-12s %-19s %-12s %-21s %-8s %-8s\n", "#",
	       "scenario", "mode", "DONTFORK", "dev->par", "par->dev", "driver pfn",
	       "parent pfn", "child pfn", "child sees", "observed", "expected");
	for (i = 0; i < n; i++)
		text_row(i, run[i], &obs[i]);
	printf("\nengine that served the DMA:");
	for (i = 0; i < n; i++)
		if (run[i]->mode)
			printf(" %s", pindma_engine_name(obs[i].engine));
	printf("\n\nnotes:\n");
	for (i = 0; i < n; i++)
		printf("%2u %s: %s\n", i + 1, run[i]->name, run[i]->note);
	for (i = 0; i < n; i++)
		if (!obs[i].error[0] && (!strcmp(run[i]->name, "gup") ||
					 !strcmp(run[i]->name, "gup-dontfork") ||
					 !strcmp(run[i]->name, "pin-switch-on")))
			picture(run[i], &obs[i]);
	printf("\n%u rows: %u as expected, %u mismatched, %u could not run", n,
	       n - mismatched - failed - skipped, mismatched, failed);
	printf(skipped ? ", %u skipped\n" : "\n", skipped);
	return failed ? 2 : mismatched ? 1 : 0;
}
