// SPDX-License-Identifier: GPL-2.0
/*
 * Every row the lab plays, from one play of every demo (guest/demo --records, as make demo runs
 * them), judged from the records alone (rows_test DEMO... plays only those demos, and expects only
 * their rows):
 *
 * - the demo script's exit status, and each demo's, is the one its records call for;
 * - every row of the table was played exactly once per engine it is played with;
 * - per record: the row played, its verdict (derived again here from its observations, by the row
 *   layer's family code) is the one this kernel's table expects, and the observations make the
 *   row's point (the family's checks, keyed on the row's stage and verdict, never its name);
 * - per output block of README.md and the pages in docs/: the page shows the program's current format
 *   (rendered from the same records, masked by guest/mask-format).
 *
 * KTAP through the kernel's kselftest.h, one case per check, the plan known once the demos ran.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <json-c/json.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "lab.h"
#include "pindma_obs.h"

#define TMP "/tmp/rows-test"
#define RECORDS TMP "/records.jsonl"
#define MAX_RECORDS 512
#define MAX_DEMOS 16
#define MAX_BLOCKS 32

static struct record recs[MAX_RECORDS];

/*
 * A skip with the case's name in its result line, which kselftest.h's ksft_test_result_skip() leaves
 * out on 6.1, so that the skip budget can name the case.
 */
static __attribute__((format(printf, 2, 3))) void skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	/* Counted first, as kselftest.h's own results are: the number is the count so far. */
	ksft_inc_xskip_cnt();
	printf("ok %u %s # SKIP ", ksft_test_num(), name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}
static unsigned int n_recs;
static int parse_failures;

struct demo_status {
	char program[24];
	char engine[12];
	int status;
};
static struct demo_status demos[MAX_DEMOS];
static unsigned int n_demos;

struct block {
	char name[32];
	char kernel[64];
	char page[64];
	char path[128];		/* the block as the page shows it */
};
static struct block blocks[MAX_BLOCKS];
static unsigned int n_blocks;

static void load_records(void)
{
	char line[8192];
	FILE *f = fopen(RECORDS, "r");

	while (f && n_recs < MAX_RECORDS && fgets(line, sizeof(line), f)) {
		if (record_parse_json(line, &recs[n_recs])) {
			ksft_print_msg("unreadable record: %s: %.120s\n", recs[n_recs].reason, line);
			parse_failures++;
			continue;
		}
		n_recs++;
	}
	if (f)
		fclose(f);
}

/* guest/demo's FILE.status: a JSON line per demo it ran, its program, engine and exit status. */
static void load_statuses(void)
{
	char line[256];
	FILE *f = fopen(RECORDS ".status", "r");

	while (f && n_demos < MAX_DEMOS && fgets(line, sizeof(line), f)) {
		struct demo_status *d = &demos[n_demos];
		json_object *o = json_tokener_parse(line), *program, *engine, *status;

		memset(d, 0, sizeof(*d));
		if (!o || !json_object_object_get_ex(o, "program", &program) ||
		    !json_object_is_type(program, json_type_string) ||
		    !json_object_object_get_ex(o, "engine", &engine) ||
		    !json_object_is_type(engine, json_type_string) ||
		    !json_object_object_get_ex(o, "status", &status) ||
		    !json_object_is_type(status, json_type_int)) {
			ksft_print_msg("unreadable status line: %s", line);
			parse_failures++;
		} else {
			snprintf(d->program, sizeof(d->program), "%s", json_object_get_string(program));
			snprintf(d->engine, sizeof(d->engine), "%s", json_object_get_string(engine));
			d->status = json_object_get_int(status);
			n_demos++;
		}
		json_object_put(o);
	}
	if (f)
		fclose(f);
}

/* The fenced block after each "<!-- output: NAME, generated on Linux K at COMMIT -->" marker. */
static void load_blocks(const char *page)
{
	char line[1024], name[32], kernel[64];
	FILE *f = fopen(page, "r"), *out = NULL;
	bool want = false, fence = false;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "<!-- output: %31[a-z0-9-], generated on Linux %63s", name,
			   kernel) == 2 && n_blocks < MAX_BLOCKS) {
			struct block *b = &blocks[n_blocks];

			snprintf(b->name, sizeof(b->name), "%s", name);
			snprintf(b->kernel, sizeof(b->kernel), "%s", kernel);
			snprintf(b->page, sizeof(b->page), "%s", page + strlen(lab_root()) + 1);
			snprintf(b->path, sizeof(b->path), TMP "/block%u.doc", n_blocks);
			out = fopen(b->path, "w");
			n_blocks++;
			want = true;
			continue;
		}
		if (want && !strncmp(line, "```", 3)) {
			if (fence) {
				want = fence = false;
				if (out)
					fclose(out);
				out = NULL;
			} else {
				fence = true;
			}
			continue;
		}
		if (want && fence && out)
			fputs(line, out);
	}
	if (out)
		fclose(out);
	if (f)
		fclose(f);
}

/*
 * The exit status a demo's records call for, by the demos' contract (rows/main.c): 0 when every row
 * was as expected or skipped, 1 when one mismatched, 2 when one could not run. Stated here, not
 * taken from the row layer that computes the demos' own status.
 */
static int worst_of(const struct demo_status *d)
{
	int worst = 0;

	for (unsigned int i = 0; i < n_recs; i++) {
		const struct record *r = &recs[i];

		if (strcmp(r->program, d->program))
			continue;
		if (d->engine[0] && strcmp(r->device, d->engine))
			continue;
		if (r->status == REC_COULD_NOT_RUN)
			worst = 2;
		else if (r->status == REC_MISMATCH && worst < 1)
			worst = 1;
	}
	return worst;
}

/*
 * How often guest/demo plays a row: once per engine (cpu, edu) for a family whose engine is asked
 * (pindma), once for a family with a device of its own.
 */
static unsigned int plays_of(const struct row *r)
{
	return families[r->family]->device ? 1 : ROW_ENGINES;
}

/* How many records of row r were played on device (its family's, or an engine asked). */
static unsigned int played_on(const struct row *r, const char *device)
{
	unsigned int n = 0;

	for (unsigned int k = 0; k < n_recs; k++)
		n += recs[k].row == r && !strcmp(recs[k].device, device);
	return n;
}

/*
 * The families the named demos play (each says, with --families); when none is named, every family
 * but those whose rows need a machine of their own (family_machine), which guest/demo plays only
 * by name.
 */
static unsigned int expected_families(int argc, char **argv)
{
	char demos[PATH_MAX], cmd[PATH_MAX + 300], name[32];
	const char *dir = getenv("LAB_DEMO_DIR") ? getenv("LAB_DEMO_DIR") :
			  lab_path(demos, sizeof(demos), "demo");
	unsigned int mask = 0;
	FILE *p;

	if (argc < 2) {
		for (unsigned int f = 0; f < FAM_COUNT; f++)
			if (!family_machine[f][0])
				mask |= 1u << f;
		return mask;
	}
	for (int i = 1; i < argc; i++) {
		snprintf(cmd, sizeof(cmd), "%s/%s --families", dir, argv[i]);
		p = popen(cmd, "r");
		while (p && fscanf(p, "%31s", name) == 1)
			for (unsigned int f = 0; f < FAM_COUNT; f++)
				if (!strcmp(name, row_family_name(f)))
					mask |= 1u << f;
		if (p)
			pclose(p);
	}
	return mask;
}

/* The families whose rows play in a machine of their own. */
static unsigned int own_tests(void)
{
	unsigned int n = 0;

	for (unsigned int f = 0; f < FAM_COUNT; f++)
		n += !!family_machine[f][0];
	return n;
}

/*
 * A family whose rows need a machine of their own is played by a program of its own,
 * <name>_rows_test, which the suite must have: rows_test without arguments does not expect its
 * rows.
 */
static void check_own_tests(void)
{
	char path[PATH_MAX], line[64], own[48];

	for (unsigned int f = 0; f < FAM_COUNT; f++) {
		bool listed = false;
		FILE *m;

		if (!family_machine[f][0])
			continue;
		snprintf(own, sizeof(own), "%s_rows_test", row_family_name(f));
		m = fopen(lab_path(path, sizeof(path), "tests/manifest"), "r");
		while (m && !listed && fgets(line, sizeof(line), m))
			listed = !strcmp(strtok(line, "\n") ?: "", own);
		if (m)
			fclose(m);
		ksft_test_result(listed, "the %s rows are played by %s, a program of the suite (a "
				 "machine of vm/boot %s)\n", row_family_name(f), own,
				 family_machine[f]);
	}
}

static void check_coverage(unsigned int played)
{
	unsigned int bad = 0;

	for (unsigned int i = 0; i < n_rows; i++) {
		unsigned int seen = 0;

		if (!(played & (1u << rows[i].family)))
			continue;
		for (unsigned int k = 0; k < n_recs; k++)
			seen += recs[k].row == &rows[i];
		if (seen != plays_of(&rows[i])) {
			ksft_print_msg("%s: played %u times, not %u\n", rows[i].name, seen,
				       plays_of(&rows[i]));
			bad++;
		}
		/* Once on each device it is played on: two plays on one may not stand for both. */
		for (unsigned int e = 0; e < plays_of(&rows[i]); e++) {
			const char *dev = families[rows[i].family]->device ?: row_engines[e];

			if (played_on(&rows[i], dev) != 1) {
				ksft_print_msg("%s: played %u times on %s, not once\n", rows[i].name,
					       played_on(&rows[i], dev), dev);
				bad++;
			}
		}
	}
	ksft_test_result(!bad && !parse_failures && n_recs && played, "every row played once per "
			 "engine, every record read\n");
}

static void check_record(const struct record *rec)
{
	struct record again = *rec;
	struct check c[MAX_CHECKS];
	const char *want = expect_verdict(rec->row->name), *derived;
	unsigned int n, failed = 0;
	char id[64], why[WHY_LEN], name[96];

	snprintf(id, sizeof(id), "%s@%s", rec->row->name, rec->device);
	if (rec->status == REC_SKIPPED) {
		snprintf(name, sizeof(name), "%s verdict", id);
		skip(name, "%s\n", rec->reason);
		snprintf(name, sizeof(name), "%s observations", id);
		skip(name, "%s\n", rec->reason);
		return;
	}
	if (rec->status == REC_COULD_NOT_RUN) {
		ksft_print_msg("%s could not run: %s\n", id, rec->reason);
		ksft_test_result_fail("%s verdict\n", id);
		ksft_test_result_fail("%s observations\n", id);
		return;
	}
	/* The verdict again, from the observations, and the expectation again, from the table. */
	derived = families[rec->row->family]->verdict(&again, why, sizeof(why));
	if (!derived || strcmp(derived, rec->observed))
		ksft_print_msg("%s: the record says %s, its observations %s (%s)\n", id,
			       rec->observed, derived ? derived : "prove nothing", derived ? "" : why);
	if (!want || strcmp(want, rec->observed))
		ksft_print_msg("%s: observed %s, this kernel's %s table expects %s\n", id,
			       rec->observed, expect_table_name(), want ? want : "nothing");
	ksft_test_result(derived && !strcmp(derived, rec->observed) && want &&
			 !strcmp(want, rec->observed), "%s verdict\n", id);

	n = families[rec->row->family]->checks(rec, c);
	for (unsigned int i = 0; i < n; i++)
		if (!c[i].ok) {
			ksft_print_msg("%s: not so: %s\n", id, c[i].what);
			failed++;
		}
	/*
	 * guest/demo plays the pin rows with the kernel's view, never --no-why: a pin row's record
	 * without it has lost the checks of its page state and copies. Asked here of every pin row,
	 * not by the family's own flag, which also decides whether the view is recorded.
	 */
	if (rec->row->family == FAM_PINDMA && !rec->why) {
		ksft_print_msg("%s: not so: the record carries the kernel's view of its pages\n", id);
		failed++;
	}
	ksft_test_result(!failed && n, "%s observations\n", id);
}

/* Which of a pin row's PFNs are equal, and which are none: the row's pattern, whatever the PFNs. */
static uint64_t pfn_pattern(const struct pindma_obs *o)
{
	const uint64_t p[] = { o->drv_before, o->drv_after, o->par_before, o->par_fork, o->par_after,
			       o->child_fork, o->child_after };
	const unsigned int n = sizeof(p) / sizeof(p[0]);
	uint64_t bits = 0, bit = 1;

	for (unsigned int i = 0; i < n; i++, bit <<= 1)
		bits |= p[i] ? 0 : bit;
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = i + 1; j < n; j++, bit <<= 1)
			bits |= p[i] == p[j] ? bit : 0;
	return bits;
}

/* A pin row's PFNs, as pfn_pattern() reads them: driver, parent and child, in hex. */
static void pfns(const struct pindma_obs *o, char *out, size_t n)
{
	snprintf(out, n, "driver %llx->%llx parent %llx->%llx->%llx child %llx->%llx",
		 (unsigned long long)o->drv_before, (unsigned long long)o->drv_after,
		 (unsigned long long)o->par_before, (unsigned long long)o->par_fork,
		 (unsigned long long)o->par_after, (unsigned long long)o->child_fork,
		 (unsigned long long)o->child_after);
}

/*
 * The kernel's view must not change what it views: dontfork_demo played again without it (--no-why,
 * CPU engine) must give every row the same verdict and the same pattern of PFNs.
 */
static void check_why_changes_nothing(void)
{
	static struct record plain;
	char line[8192];
	static bool matched[MAX_RECORDS];
	unsigned int compared = 0, differ = 0, want = 0, again = 0;
	int status = -1, cpu_status = -1;
	/*
	 * After the demos, alone: the kernel's view (kprobes, tracepoints with stack traces) is
	 * machine-wide, so a play beside a run that records it would not be a play without it.
	 */
	char cmd[PATH_MAX + 64];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/demo/dontfork_demo --engine cpu --no-why --json",
		 lab_root());
	p = popen(cmd, "r");

	while (p && fgets(line, sizeof(line), p)) {
		if (record_parse_json(line, &plain))
			continue;
		for (unsigned int i = 0; i < n_recs; i++) {
			const struct record *r = &recs[i];
			const struct pindma_obs *ro = ROW_OBS(r, struct pindma_obs);
			const struct pindma_obs *po = ROW_OBS(&plain, struct pindma_obs);
			bool pattern;

			if (r->row != plain.row || strcmp(r->device, "cpu") || !r->why)
				continue;
			/* Each row once: a row played twice must not stand in for one left out. */
			if (matched[i]) {
				again++;
				continue;
			}
			matched[i] = true;
			compared++;
			pattern = pfn_pattern(ro) != pfn_pattern(po);
			if (strcmp(r->observed, plain.observed) || pattern) {
				char with[160], without[160];

				pfns(ro, with, sizeof(with));
				pfns(po, without, sizeof(without));
				ksft_print_msg("%s: with the kernel's view %s, without %s%s\n",
					       r->row->name, r->observed, plain.observed,
					       pattern ? ", and the PFNs' pattern differs" : "");
				ksft_print_msg("%s: PFNs with %s, without %s\n", r->row->name, with,
					       without);
				differ++;
			}
		}
	}
	if (p)
		status = pclose(p);
	/* Every row the demo played with the view, and the replay ended as the demo did. */
	for (unsigned int i = 0; i < n_recs; i++)
		want += !strcmp(recs[i].device, "cpu") && recs[i].why;
	for (unsigned int i = 0; i < n_demos; i++)
		if (!strcmp(demos[i].program, "dontfork_demo") && !strcmp(demos[i].engine, "cpu"))
			cpu_status = demos[i].status;
	if (compared != want || again || status == -1 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != cpu_status)
		ksft_print_msg("the play without the view compared %u of %u rows (%u played again) and "
			       "ended with status %#x (the demo's: %d)\n", compared, want, again,
			       status, cpu_status);
	ksft_test_result(compared && compared == want && !again && !differ && status != -1 &&
			 WIFEXITED(status) && WEXITSTATUS(status) == cpu_status,
			 "reading the kernel's view changes no verdict and no PFN pattern (%u rows "
			 "compared)\n", compared);
}

static bool same_file(const char *a, const char *b)
{
	char ca[4096], cb[4096];
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	bool same = fa && fb;
	size_t na, nb;

	while (same) {
		na = fread(ca, 1, sizeof(ca), fa);
		nb = fread(cb, 1, sizeof(cb), fb);
		same = na == nb && !memcmp(ca, cb, na);
		if (!na)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static void check_block(unsigned int i, const char *series)
{
	const struct block *b = &blocks[i];
	char cmd[3 * PATH_MAX + 512], now[96], kseries[16], what[128];
	unsigned int dots = 0, k;

	for (k = 0; b->kernel[k] && k < sizeof(kseries) - 1; k++) {
		if (b->kernel[k] == '.' && ++dots == 2)
			break;
		kseries[k] = b->kernel[k];
	}
	kseries[k] = 0;
	snprintf(what, sizeof(what), "%.31s in %.63s", b->name, b->page);
	if (strcmp(kseries, series)) {
		skip(what, "generated on Linux %s, this is %s\n", b->kernel, kernel_release());
		return;
	}
	if (!lab_memfree_is_exact()) {
		skip(what, "the pages show the normal kernel; this is the debug one\n");
		return;
	}
	snprintf(now, sizeof(now), TMP "/block%u.now", i);
	snprintf(cmd, sizeof(cmd), "%s/guest/capture-docs --from " RECORDS " %s | sed -e "
		 "'1,/^@@docs-begin/d' -e '/^@@docs-end/,$d' >%s && %s/guest/mask-format %s "
		 ">%s.masked && %s/guest/mask-format %s >%s.masked", lab_root(), b->name, now,
		 lab_root(), now, now, lab_root(), b->path, b->path);
	if (system(cmd)) {
		ksft_test_result_fail("%s in %s: rendering it failed\n", b->name, b->page);
		return;
	}
	{
		char doc[160], got[160], diff[400];

		snprintf(doc, sizeof(doc), "%s.masked", b->path);
		snprintf(got, sizeof(got), "%s.masked", now);
		if (same_file(doc, got)) {
			ksft_test_result_pass("%s in %s\n", b->name, b->page);
			return;
		}
		snprintf(diff, sizeof(diff), "diff %s %s | head -20 | sed 's/^/# /'", doc, got);
		if (system(diff) == -1)
			ksft_print_msg("diff failed\n");
		ksft_test_result_fail("%s in %s: the page no longer shows the program's format "
				      "(make docs)\n", b->name, b->page);
	}
}

/*
 * What the rows of every demo need of the machine, which the lab's guest has (vm/boot, tests/run-all's
 * rows guest): the scratch disk, the O_DIRECT image, the edu device and
 * Soft-RoCE (rdma_rxe, iproute2's rdma). NULL, or what is missing.
 */
static const char *lacks_machine(void)
{
	static const char *const files[][2] = {
		{ "/sys/module/rdma_rxe", "no Soft-RoCE (the kernel's rdma_rxe module, loaded)" },
		{ "/usr/bin/rdma", "no iproute2 rdma tool" },
	};
	char dev[256];
	struct statfs fs;

	if (statfs("/mnt/disk", &fs) || fs.f_type != EXT4_SUPER_MAGIC)
		return "no ext4 scratch disk on /mnt/disk (vm/boot --disk IMAGE)";
	if (lab_disk_by_serial("odirect", dev, sizeof(dev)))
		return "no disk with serial odirect (vm/boot --disk IMAGE,odirect)";
	for (unsigned int i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (access(files[i][0], F_OK))
			return files[i][1];
	if (!lab_pci_find(LAB_EDU_VENDOR, LAB_EDU_DEVICE, dev, sizeof(dev)))
		return "no edu PCI device (the lab's QEMU has one)";
	return NULL;
}

/*
 * rows_test --machine NAME: the rows of family NAME, whose rows need a machine of their own, as
 * NAME_rows_test runs them there (vm/guest.mk writes that program from the registry). A machine
 * that lacks what they need (the family says what) is a skipped case, not a bare "1..0 # SKIP": a
 * test farm (guest/lava-suite) records result lines only. The lab's own run lists no such skip, so
 * there it fails. Returns the demo to play, having exited when there is none.
 */
static const char *machine_demo(const char *name)
{
	const char *lacks;
	char case_name[64];

	for (unsigned int f = 0; f < FAM_COUNT; f++) {
		if (strcmp(name, row_family_name(f)) || !family_machine[f][0])
			continue;
		lacks = families[f]->lacks_machine ? families[f]->lacks_machine() : NULL;
		if (!lacks)
			return family_demo[f];
		ksft_print_header();
		ksft_set_plan(1);
		snprintf(case_name, sizeof(case_name), "%s_rows", name);
		skip(case_name, "%s\n", lacks);
		ksft_exit_pass();
	}
	fprintf(stderr, "rows_test: no family %s with a machine of its own in ROW_FAMILIES\n", name);
	exit(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	char series[16], tables[128], cmd[PATH_MAX + 512], page[PATH_MAX + 300], *dot;
	char *machine_argv[3];
	unsigned int played;
	bool why_too;
	struct dirent *d;
	DIR *docs;
	int status;
	unsigned int plan, expect_script = 0;

	if (argc > 1 && !strcmp(argv[1], "--machine")) {
		if (argc != 3) {
			fprintf(stderr, "usage: rows_test --machine FAMILY\n");
			return KSFT_FAIL;
		}
		machine_argv[0] = argv[0];
		machine_argv[1] = (char *)machine_demo(argv[2]);
		machine_argv[2] = NULL;
		argv = machine_argv;
		argc = 2;
	}
	played = expected_families(argc, argv);
	/* Line by line: the shell commands this runs write to the same stdout between its lines. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * Every demo's rows need the lab's machine: without it, as a kselftest collection run
	 * elsewhere may be (make kselftest-install), the program is a skip saying what is missing.
	 * In the lab's own run no skip budget (tests/skips/) lists it, so there it fails. Named
	 * demos (a plant's) are not held to it.
	 */
	if (argc < 2 && lacks_machine()) {
		ksft_print_header();
		ksft_exit_skip("%s: the lab's guest has it (make test)\n", lacks_machine());
	}
	if (system("rm -rf " TMP " && mkdir -p " TMP))
		return KSFT_FAIL;
	/* Every demo at once: each waits on its own device, disk or timer most of the time. */
	snprintf(cmd, sizeof(cmd), "%s/guest/demo --records " RECORDS " --parallel", lab_root());
	for (int i = 1; i < argc; i++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " %s", argv[i]);
	snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " >" TMP "/demo.out 2>&1");
	status = system(cmd);
	load_records();
	load_statuses();
	load_blocks(lab_path(page, sizeof(page), "README.md"));
	docs = opendir(lab_path(page, sizeof(page), "docs"));
	while (docs && (d = readdir(docs))) {
		if (!strstr(d->d_name, ".md"))
			continue;
		snprintf(page, sizeof(page), "%s/docs/%s", lab_root(), d->d_name);
		load_blocks(page);
	}
	if (docs)
		closedir(docs);

	ksft_print_header();
	/* The pin rows carry the kernel's view (check_record): a play without it must agree. */
	why_too = played & (1u << FAM_PINDMA);
	/* The pages' blocks need every demo's records: a run of some demos checks none. */
	plan = 3 + n_demos + 2 * n_recs + (argc < 2 ? n_blocks + own_tests() : 0) + why_too;
	ksft_set_plan(plan);

	/* kernel-patches/README.md, adding a kernel: every kernel of the registry has its table. */
	expect_tables(tables, sizeof(tables));
	ksft_test_result(!strcmp(tables, lab_kernel_registry()), "the expectation tables (%s) are the "
			 "registry's kernels (%s)\n", tables, lab_kernel_registry());

	for (unsigned int i = 0; i < n_demos; i++) {
		int want = worst_of(&demos[i]);

		if ((unsigned int)want > expect_script)
			expect_script = want;
		ksft_test_result(demos[i].status == want, "%s%s%s exits %d as its records call "
				 "for (it exited %d)\n", demos[i].program, demos[i].engine[0] ?
				 " --engine " : "", demos[i].engine, want, demos[i].status);
	}
	ksft_test_result(n_demos && WIFEXITED(status) && WEXITSTATUS(status) == expect_script,
			 "guest/demo exits %u, the worst of its demos (it ended: status %#x)\n",
			 expect_script, status);
	check_coverage(played);
	if (argc < 2)
		check_own_tests();
	if (why_too)
		check_why_changes_nothing();
	for (unsigned int i = 0; i < n_recs; i++)
		check_record(&recs[i]);

	snprintf(series, sizeof(series), "%s", kernel_release());
	dot = strchr(series, '.');
	if (dot && (dot = strchr(dot + 1, '.')))
		*dot = 0;
	if (argc >= 2)
		ksft_print_msg("the pages' %u output blocks are not checked: only some demos ran\n",
			       n_blocks);
	else
		for (unsigned int i = 0; i < n_blocks; i++)
			check_block(i, series);
	ksft_finished();
}
