// SPDX-License-Identifier: GPL-2.0
/*
 * The fadvise family described: what a call left of 8 MiB of dirty file pages, from the pages' own
 * flags (kpageflags): NOTHING started, IN FLIGHT, WRITTEN. Playing is fadvise_play.c.
 */
#include <string.h>

#include "fadvise_obs.h"

#define NPAGES 2048	/* 8 MiB */
#define SECTORS (NPAGES * 8)

static const char *fadvise_verdict(const struct record *rec, char *why, size_t n)
{
	const struct fadvise_obs *o = ROW_OBS(rec, struct fadvise_obs);

	if (o->dirty_before != NPAGES || o->wb_before)
		return snprintf(why, n, "before the call %lld pages were dirty and %lld in flight, "
			       "not %d and 0", (long long)o->dirty_before, (long long)o->wb_before,
			       NPAGES), NULL;
	if (o->sectors_held)
		return snprintf(why, n, "the disk wrote %lld sectors while its gate held it",
				(long long)o->sectors_held), NULL;
	/* It waited for the write-out the gate held: what it left once that was let go. */
	if (o->waited)
		return !o->dirty_after && !o->wb_after ? "WRITTEN" : "PARTIAL";
	if (o->dirty_held == NPAGES && !o->wb_held)
		return "NOTHING";
	if (!o->dirty_held && o->wb_held == NPAGES)
		return "IN FLIGHT";
	return "PARTIAL";
}

static unsigned int fadvise_checks(const struct record *rec, struct check *c)
{
	const struct fadvise_obs *o = ROW_OBS(rec, struct fadvise_obs);
	unsigned int k = 0;

	CHECK(o->dirty_before == NPAGES && !o->wb_before, "every page dirty, none in flight, "
	      "before the call");
	CHECK(!o->sectors_held, "no sector reached the disk while its gate held it");
	if (!strcmp(rec->observed, "WRITTEN"))
		CHECK(o->sectors_after >= SECTORS, "the disk wrote the 8 MiB before the call returned");
	return k;
}

/* A count before and while the write-out was held, "before -> held" ("-": not observed). */
static void counts(char *buf, size_t n, int64_t before, int64_t held)
{
	char was[24] = "-", now[24] = "-";

	if (before >= 0)
		snprintf(was, sizeof(was), "%lld", (long long)before);
	if (held >= 0)
		snprintf(now, sizeof(now), "%lld", (long long)held);
	snprintf(buf, n, "%s -> %s", was, now);
}

static void fadvise_header(FILE *f)
{
	fprintf(f, "8 MiB (%d pages) dirtied through a shared mapping before each call, made while "
		"the disk's gate holds every write it starts; the range's pages dirty and under "
		"writeback, meminfo Dirty kB, before -> as the call returned or waited; whether it "
		"waited for the held write-out\n", NPAGES);
	fprintf(f, "%2s %-24s %-39s %-15s %-15s %-19s %-6s %-9s %-9s\n", "#", "row", "call",
		"pages dirty", "writeback", "meminfo Dirty kB", "waited", "observed", "expected");
}

static void fadvise_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct fadvise_obs *o = ROW_OBS(rec, struct fadvise_obs);
	char dirty[56], wb[56], kb[56];

	counts(dirty, sizeof(dirty), o->dirty_before, o->dirty_held);
	counts(wb, sizeof(wb), o->wb_before, o->wb_held);
	counts(kb, sizeof(kb), o->dirty_kb_before, o->dirty_kb_held);
	fprintf(f, "%2u %-24s %-39s %-15s %-15s %-19s %-6s %-9s %-9s %s\n", i, rec->row->name,
		rec->row->title, dirty, wb, kb, o->dirty_held < 0 ? "-" : o->waited ? "yes" : "no",
		rec->observed[0] ? rec->observed : "-", rec->expected[0] ? rec->expected : "none",
		record_status_name(rec->status));
}

/* The play, NULL where this program does not link it (row.h). */
#pragma weak play_fadvise

static const struct field fadvise_fields[] = {
	OBS_FIELD(fadvise_obs, F_I64, dirty_before), OBS_FIELD(fadvise_obs, F_I64, wb_before),
	OBS_FIELD(fadvise_obs, F_I64, dirty_kb_before), OBS_FIELD(fadvise_obs, F_I64, dirty_held),
	OBS_FIELD(fadvise_obs, F_I64, wb_held), OBS_FIELD(fadvise_obs, F_I64, dirty_kb_held),
	OBS_FIELD(fadvise_obs, F_I64, dirty_after), OBS_FIELD(fadvise_obs, F_I64, wb_after),
	OBS_FIELD(fadvise_obs, F_BOOL, waited), OBS_FIELD(fadvise_obs, F_I64, sectors_held),
	OBS_FIELD(fadvise_obs, F_I64, sectors_after),
	{ NULL },
};

const struct row_family family_fadvise = {
	.name = "fadvise",
	.title = "LINUX_FADV_ASYNC_WRITE / WRITE_WAIT against sync_file_range and msync",
	.device = "disk",
	.fields = fadvise_fields,
	.play = play_fadvise,
	.verdict = fadvise_verdict,
	.checks = fadvise_checks,
	.table_header = fadvise_header,
	.table_line = fadvise_line,
};
