// SPDX-License-Identifier: GPL-2.0
/*
 * The demos' one main: play the rows of the program's families (or the named ones) and print their
 * table from the records, or the records themselves; or print the table from records played
 * earlier (--render), so that the docs and the tests never play a row twice.
 *
 *   PROGRAM [--only NAME]... [--engine auto|cpu|edu] [--json] [--records FILE]
 *                             NAME may be a shell pattern (odirect-multi*)
 *   PROGRAM --render FILE [--engine E] [--part table|notes|pictures|summary]...
 *   PROGRAM --families        the row families it plays, one per line
 *   PROGRAM --runs            how guest/demo shows it: a line per run, its heading, a tab,
 *                             its arguments (a run per engine when a family's engine is asked)
 *   PROGRAM --why NAME        plays NAME and shows only the kernel's view of it (rows/why.c);
 *                             the rows of a family with such a view (dontfork_demo's) record
 *                             it every time, unless --no-why
 *   PROGRAM --row-child NAME  a play's fresh process (verbs rows): plays NAME, prints its record
 *
 * Exit status: 0 when every row played matched its expectation (or was skipped, on a user's tree,
 * for a lab patch it lacks), 1 when one did not, 2 when one could not run; 64 (sysexits' EX_USAGE)
 * when --only names no row of this demo, having played nothing.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "row.h"

/* --only NAME names no row of this demo (sysexits.h's EX_USAGE; guest/play-row reads it). */
#define EXIT_NO_SUCH_ROW 64

#define MAX_RECORDS 256

enum part { PART_TABLE = 1, PART_NOTES = 2, PART_PICTURES = 4, PART_SUMMARY = 8, PART_ALL = 15 };

static void print(FILE *f, const char *program, const char *engine, struct record *recs,
		  unsigned int n, unsigned int parts)
{
	unsigned int counts[4] = { 0 }, shown = 0;
	int last_family = -1;

	if (parts & PART_TABLE) {
		fprintf(f, "%s on Linux %s (kernel %s, expectations: the %s table)", program,
			n ? recs[0].kernel : kernel_release(), lab_kernel_name(),
			n ? recs[0].table : expect_table_name());
		if (engine)
			fprintf(f, "; engine asked %s", engine);
		fprintf(f, "\n");
		for (unsigned int i = 0; i < n; i++) {
			const struct row *r = recs[i].row;

			if ((int)r->family != last_family) {
				families[r->family]->table_header(f);
				last_family = r->family;
			}
			families[r->family]->table_line(f, i + 1, &recs[i]);
			if (recs[i].status != REC_OK)
				fprintf(f, "   %s: %s\n", record_status_words(recs[i].status),
					recs[i].reason);
		}
	}
	if (parts & PART_NOTES) {
		fprintf(f, "%snotes:\n", parts & PART_TABLE ? "\n" : "");
		for (unsigned int i = 0; i < n; i++)
			fprintf(f, "%2u %s: %s\n", i + 1, recs[i].row->name, recs[i].row->note);
	}
	if (parts & PART_PICTURES) {
		/* A blank line before each picture, but the first of a page of pictures only. */
		for (unsigned int i = 0; i < n; i++)
			if (recs[i].row->picture && recs[i].observed[0] &&
			    families[recs[i].row->family]->picture) {
				if (shown++ || parts != PART_PICTURES)
					fprintf(f, "\n");
				families[recs[i].row->family]->picture(f, &recs[i]);
			}
	}
	for (unsigned int i = 0; i < n; i++)
		counts[recs[i].status]++;
	if (parts & PART_SUMMARY) {
		fprintf(f, "%s%u rows: %u as expected, %u mismatched, %u could not run",
			parts != PART_SUMMARY ? "\n" : "", n, counts[REC_OK], counts[REC_MISMATCH],
			counts[REC_COULD_NOT_RUN]);
		fprintf(f, counts[REC_SKIPPED] ? ", %u skipped\n" : "\n", counts[REC_SKIPPED]);
	}
}

/* --why NAME: the kernel's view of a row, where its family records one. */
static void print_why(FILE *f, const struct record *rec)
{
	const struct row_family *fam = families[rec->row->family];

	if (fam->why)
		fam->why(f, rec);
	else
		fprintf(f, "%s: the %s family records no view of the kernel's\n", rec->row->name,
			fam->name);
}

static int exit_status(const struct record *recs, unsigned int n)
{
	int worst = 0;

	for (unsigned int i = 0; i < n; i++)
		if (record_exit_status(&recs[i]) > worst)
			worst = record_exit_status(&recs[i]);
	return worst;
}

static bool wanted(const struct row *r, unsigned int mask, const char *const *only,
		   unsigned int n_only)
{
	if (!(mask & (1u << r->family)))
		return false;
	if (!n_only)
		return true;
	for (unsigned int i = 0; i < n_only; i++)
		if (!fnmatch(only[i], r->name, 0))
			return true;
	return false;
}

/* Whether NAME (a row's name or a pattern) names at least one of this program's rows. */
static bool names_a_row(const char *name, unsigned int mask)
{
	for (unsigned int i = 0; i < n_rows; i++)
		if ((mask & (1u << rows[i].family)) && !fnmatch(name, rows[i].name, 0))
			return true;
	return false;
}

static void usage(const char *program)
{
	fprintf(stderr, "usage: %s [--only NAME]... [--engine auto|cpu|edu] [--json] "
		"[--records FILE] [--why NAME]\n"
		"       %s --render FILE [--engine E] [--part table|notes|pictures|summary]...\n",
		program, program);
	exit(2);
}

/* Records played earlier, of this program's families (and engine), in the order played. */
static unsigned int load(const char *path, unsigned int mask, const char *engine,
			 const char *const *only, unsigned int n_only, struct record *recs)
{
	char line[8192];
	unsigned int n = 0, lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(2);
	}
	while (n < MAX_RECORDS && fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] != '{')
			continue;
		if (record_parse_json(line, &recs[n])) {
			fprintf(stderr, "%s:%u: %s\n", path, lineno, recs[n].reason);
			exit(2);
		}
		if (!wanted(recs[n].row, mask, only, n_only))
			continue;
		if (engine && !families[recs[n].row->family]->device && strcmp(recs[n].device, engine))
			continue;
		n++;
	}
	fclose(f);
	return n;
}

const char *const row_engines[ROW_ENGINES] = { "cpu", "edu" };

static bool is_engine(const char *name)
{
	for (unsigned int e = 0; e < ROW_ENGINES; e++)
		if (!strcmp(name, row_engines[e]))
			return true;
	return !strcmp(name, "auto");
}

/*
 * --runs: the demo's runs as guest/demo shows them, a line each: the heading, a tab, the
 * arguments. A family whose engine is asked (no device of its own: pindma) is shown once per
 * engine; the heading is the demo's name, its families' titles, and the engine.
 */
static void print_runs(const char *program, unsigned int mask)
{
	char title[512] = "", args[32] = "";
	unsigned int n_engines = 1;

	for (unsigned int f = 0; f < FAM_COUNT; f++) {
		if (!(mask & (1u << f)))
			continue;
		if (!families[f]->device)
			n_engines = ROW_ENGINES;
		if (families[f]->title)
			snprintf(title + strlen(title), sizeof(title) - strlen(title), "%s%s",
				 title[0] ? " and " : ": ", families[f]->title);
	}
	for (unsigned int e = 0; e < n_engines; e++) {
		if (n_engines > 1)
			snprintf(args, sizeof(args), "--engine %s", row_engines[e]);
		printf("%s%s%s%s\t%s\n", program, title, args[0] ? " " : "", args, args);
	}
}

/* What the command line asks of a demo. */
struct args {
	const char *only[MAX_RECORDS];
	unsigned int n_only, parts;
	const char *engine, *render, *records;
	bool json, why_only;
	/* The kernel's view is recorded for the rows of a family that has one (unless --no-why). */
	struct play_opts play;
};

/* The options into *a: -1, or the status to exit with at once (--families, --runs, --row-child). */
static int parse_args(int argc, char **argv, const char *program, unsigned int mask,
		      struct args *a)
{
	static const struct option opts[] = {
		{ "only", required_argument, NULL, 'o' },
		{ "engine", required_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "records", required_argument, NULL, 'r' },
		{ "render", required_argument, NULL, 'R' },
		{ "part", required_argument, NULL, 'p' },
		{ "why", required_argument, NULL, 'w' },
		{ "row-child", required_argument, NULL, 'C' },
		{ "families", no_argument, NULL, 'F' },
		{ "runs", no_argument, NULL, 'U' },
		{ "no-why", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct row *r;
	unsigned int part;
	int c;

	*a = (struct args){ .play = { .engine = "auto", .why = true } };
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			/* A play's fresh process (rows/verbs_play.c): the row's family plays it. */
			r = row_find(optarg);
			if (!r || !families[r->family]->row_child || !(mask & (1u << r->family)))
				usage(program);
			return families[r->family]->row_child(optarg);
		case 'F':
			/* What this program plays, for rows_test to know which rows to expect from it. */
			for (unsigned int f = 0; f < FAM_COUNT; f++)
				if (mask & (1u << f))
					printf("%s\n", row_family_name(f));
			return 0;
		case 'U':
			print_runs(program, mask);
			return 0;
		case 'w':
			/* --why NAME plays NAME and shows only the kernel's view of it */
			a->why_only = true;
			__attribute__((fallthrough));
		case 'o':
			if (a->n_only == MAX_RECORDS || !names_a_row(optarg, mask)) {
				fprintf(stderr, "%s: no row named %s here\n", program, optarg);
				return EXIT_NO_SUCH_ROW;
			}
			a->only[a->n_only++] = optarg;
			break;
		case 'e':
			if (!is_engine(optarg))
				usage(program);
			a->engine = a->play.engine = optarg;
			break;
		case 'j':
			a->json = true;
			break;
		case 'N':
			a->play.why = false;
			break;
		case 'r':
			a->records = optarg;
			break;
		case 'R':
			a->render = optarg;
			break;
		case 'p':
			part = !strcmp(optarg, "table") ? PART_TABLE : !strcmp(optarg, "notes") ?
			       PART_NOTES : !strcmp(optarg, "pictures") ? PART_PICTURES :
			       !strcmp(optarg, "summary") ? PART_SUMMARY : 0;
			if (!part)
				usage(program);
			a->parts |= part;
			break;
		default:
			usage(program);
		}
	}
	if (optind < argc)
		usage(program);
	if (!a->parts)
		a->parts = PART_ALL;
	return -1;
}

/* Play the rows asked for, each record printed as it comes (--json, --records); how many. */
static unsigned int play_rows(const struct args *a, const char *program, unsigned int mask,
			      struct record *recs)
{
	FILE *rf = NULL;
	unsigned int n = 0;

	/* A demo's families and the plays its build links (vm/guest.mk) are two lists: the same. */
	for (unsigned int f = 0; f < FAM_COUNT; f++)
		if ((mask & (1u << f)) && !families[f]->play) {
			fprintf(stderr, "%s: plays the %s rows, but its build does not link their "
				"play\n", program, row_family_name(f));
			exit(2);
		}
	if (a->records) {
		rf = fopen(a->records, "a");
		if (!rf) {
			perror(a->records);
			exit(2);
		}
	}
	for (unsigned int i = 0; i < n_rows && n < MAX_RECORDS; i++) {
		if (!wanted(&rows[i], mask, a->only, a->n_only))
			continue;
		row_play(&rows[i], &a->play, &recs[n]);
		snprintf(recs[n].program, sizeof(recs[n].program), "%s", program);
		if (a->json)
			record_print_json(stdout, &recs[n]);
		if (rf)
			record_print_json(rf, &recs[n]);
		n++;
	}
	if (rf)
		fclose(rf);
	return n;
}

static void show(const struct args *a, const char *program, struct record *recs, unsigned int n)
{
	if (!a->why_only) {
		print(stdout, program, a->engine, recs, n, a->parts);
		return;
	}
	for (unsigned int i = 0; i < n; i++)
		print_why(stdout, &recs[i]);
}

int rows_main(int argc, char **argv, const char *program)
{
	static struct record recs[MAX_RECORDS];
	unsigned int mask = families_of_demo(program);
	struct args a;
	unsigned int n;
	int now;

	if (!mask) {
		fprintf(stderr, "%s: no line of ROW_FAMILIES (rows/row.h) names this demo\n", program);
		return 2;
	}
	now = parse_args(argc, argv, program, mask, &a);

	if (now >= 0)
		return now;
	if (a.render) {
		n = load(a.render, mask, a.engine, a.only, a.n_only, recs);
		show(&a, program, recs, n);
	} else {
		n = play_rows(&a, program, mask, recs);
		if (!a.json)
			show(&a, program, recs, n);
	}
	return exit_status(recs, n);
}
