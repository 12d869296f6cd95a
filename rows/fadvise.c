// SPDX-License-Identifier: GPL-2.0
/*
 * The fadvise family described: what a call left of 8 MiB of dirty file pages, from the pages' own
 * flags (kpageflags): NOTHING started, IN FLIGHT, WRITTEN. Playing is fadvise_play.c.
 */
#include <string.h>

#include "row.h"

#define NPAGES 2048	/* 8 MiB */
#define SECTORS (NPAGES * 8)

static const char *fadvise_verdict(const struct record *rec, char *why, size_t n)
{
	const struct fadvise_obs *o = &rec->fadvise;

	if (o->dirty_before != NPAGES || o->wb_before)
		return snprintf(why, n, "before the call %lld pages were dirty and %lld in flight, "
			       "not %d and 0", (long long)o->dirty_before, (long long)o->wb_before,
			       NPAGES), NULL;
	if (o->dirty_after == NPAGES && !o->wb_after)
		return "NOTHING";
	if (!o->dirty_after && o->wb_after)
		return "IN FLIGHT";
	if (!o->dirty_after && !o->wb_after)
		return "WRITTEN";
	return "PARTIAL";
}

static unsigned int fadvise_checks(const struct record *rec, struct check *c)
{
	const struct fadvise_obs *o = &rec->fadvise;
	unsigned int k = 0;

	CHECK(o->dirty_before == NPAGES && !o->wb_before, "every page dirty, none in flight, "
	      "before the call");
	if (!strcmp(rec->observed, "NOTHING"))
		CHECK(!o->sectors, "no sector was written during the call");
	else if (!strcmp(rec->observed, "WRITTEN"))
		CHECK(o->sectors >= SECTORS, "the disk wrote the 8 MiB");
	else if (!strcmp(rec->observed, "IN FLIGHT"))
		CHECK(o->sectors < SECTORS, "the disk had not written it all when the call returned");
	return k;
}

static void num(char *buf, size_t n, int64_t v)
{
	if (v < 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%lld", (long long)v);
}

static void fadvise_header(FILE *f)
{
	fprintf(f, "8 MiB (%d pages) dirtied through a shared mapping before each call; the range's "
		"pages dirty and under writeback, meminfo Dirty kB, the disk's sectors written during "
		"the call, before -> after\n", NPAGES);
	fprintf(f, "%2s %-24s %-39s %-15s %-15s %-19s %-8s %-9s %-9s %-9s\n", "#", "row", "call",
		"pages dirty", "writeback", "meminfo Dirty kB", "sectors", "took", "observed",
		"expected");
}

static void fadvise_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct fadvise_obs *o = &rec->fadvise;
	char a[24], b[24], c[24], d[24], e[24], g[24], s[24], t[32], dirty[56], wb[56], kb[56];

	num(a, sizeof(a), o->dirty_before);
	num(b, sizeof(b), o->dirty_after);
	num(c, sizeof(c), o->wb_before);
	num(d, sizeof(d), o->wb_after);
	num(e, sizeof(e), o->dirty_kb_before);
	num(g, sizeof(g), o->dirty_kb_after);
	num(s, sizeof(s), o->sectors);
	snprintf(dirty, sizeof(dirty), "%s -> %s", a, b);
	snprintf(wb, sizeof(wb), "%s -> %s", c, d);
	snprintf(kb, sizeof(kb), "%s -> %s", e, g);
	if (o->took_ms < 0)
		snprintf(t, sizeof(t), "-");
	else
		snprintf(t, sizeof(t), "%.1f ms", o->took_ms);
	fprintf(f, "%2u %-24s %-39s %-15s %-15s %-19s %-8s %-9s %-9s %-9s %s\n", i, rec->row->name,
		rec->row->title, dirty, wb, kb, s, t, rec->observed[0] ? rec->observed : "-",
		rec->expected[0] ? rec->expected : "none", record_status_name(rec->status));
}

const struct row_family family_fadvise = {
	.name = "fadvise",
	.verdict = fadvise_verdict,
	.checks = fadvise_checks,
	.table_header = fadvise_header,
	.table_line = fadvise_line,
};
