// SPDX-License-Identifier: GPL-2.0
/*
 * The O_DIRECT family described: the verdict from the bytes the parent finds (and, with one reader,
 * from where the missing ones went), the checks, the table. Playing is odirect_play.c.
 */
#include <string.h>

#include "odirect_obs.h"

static const char *odirect_verdict(const struct record *rec, char *why, size_t n)
{
	const struct odirect_obs *o = ROW_OBS(rec, struct odirect_obs);

	/* A read that was not held in flight across the fork proves nothing. */
	if (!o->held || o->done_while_held)
		return snprintf(why, n, "%s", o->held ? "a read ended while the gate held the disk" :
				"no read was seen held in flight"), NULL;
	if (rec->row->odirect.multi)
		return o->missing ? "ORPHANED" : "COHERENT";
	if (!o->pfn_before || !o->pfn_after)
		return snprintf(why, n, "the parent's page was not present"), NULL;
	if (!o->missing && o->pfn_after == o->pfn_before)
		return "COHERENT";
	/* The read's bytes went somewhere: into the page the child kept. */
	if (o->missing && o->child_has_data && o->pfn_after != o->pfn_before)
		return "ORPHANED";
	snprintf(why, n, "%s: %lld bytes missing, child %llx %s them, parent %llx->%llx",
		 o->pfn_after != o->pfn_before && o->pfn_child && o->pfn_child != o->pfn_before ?
		 "the parent moved, but the child's page is not the one the read filled" :
		 "no race the row knows", (long long)o->missing,
		 (unsigned long long)o->pfn_child, o->child_has_data ? "has" : "lacks",
		 (unsigned long long)o->pfn_before, (unsigned long long)o->pfn_after);
	return NULL;
}

static unsigned int odirect_checks(const struct record *rec, struct check *c)
{
	const struct odirect_obs *o = ROW_OBS(rec, struct odirect_obs);
	const struct row *r = rec->row;
	bool orphaned = !strcmp(rec->observed, "ORPHANED");
	unsigned int k = 0;

	CHECK(o->held && !o->done_while_held, "every read was held in flight until the gate let it go");
	if (r->odirect.multi) {
		CHECK(o->forks == 7, "a fork between each held read and the next reader");
		CHECK(!o->missing_elsewhere, "no byte missing but in the tail of a read a fork followed");
		if (orphaned) {
			CHECK(o->missing == o->tails_lost * r->odirect.offset,
			      "only whole tails are missing, each the tail of a read a fork followed");
			CHECK(o->tails_lost == o->forks, "the tail of every read a fork followed is lost");
		}
		if (!r->odirect.offset || r->dontfork)
			CHECK(!o->missing, "no byte missing");
		return k;
	}
	if (orphaned) {
		CHECK(o->missing == 2048, "the read's bytes in its last page are missing");
		CHECK(o->pfn_child == o->pfn_before, "the child kept the page the read went to");
	} else {
		CHECK(!o->missing, "every byte arrived");
	}
	if (r->dontfork || !r->fork)
		CHECK(!o->pfn_child && !o->child_has_data, "no child page there");
	return k;
}

static void odirect_header(FILE *f)
{
	fprintf(f, "reads held in flight by a gate on the odirect disk until the fork and the "
		"parent's write are done; one reader: a 1 MiB - 2 KiB read, PFNs of its last page in "
		"hex; 8 readers: one page each, a fork after each request, the tails of reads the parent "
		"lacks\n");
	fprintf(f, "%2s %-32s %-9s %-19s %-9s %-13s %-10s %-8s %-8s\n", "#", "row", "held",
		"parent pfn", "child pfn", "bytes missing", "child got", "observed", "expected");
}

static void odirect_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct odirect_obs *o = ROW_OBS(rec, struct odirect_obs);
	const struct row *r = rec->row;
	char par[40], chi[24] = "-", got[24] = "-", fl[16];

	snprintf(fl, sizeof(fl), "%s", o->held ? "yes" : "no");
	if (r->odirect.multi) {
		snprintf(par, sizeof(par), "%lld forks", (long long)o->forks);
		snprintf(got, sizeof(got), "%lld tails", (long long)o->tails_lost);
	} else {
		snprintf(par, sizeof(par), "%llx->%llx", (unsigned long long)o->pfn_before,
			 (unsigned long long)o->pfn_after);
		if (r->fork) {
			snprintf(chi, sizeof(chi), "%llx", (unsigned long long)o->pfn_child);
			snprintf(got, sizeof(got), "%s", o->child_has_data ? "yes" : "no");
		}
	}
	if (!rec->observed[0])
		fprintf(f, "%2u %-32s %-9s %-19s %-9s %-13s %-10s %-8s %-8s %s\n", i, r->name, "-",
			"-", "-", "-", "-", "-", rec->expected[0] ? rec->expected : "none",
			record_status_name(rec->status));
	else
		fprintf(f, "%2u %-32s %-9s %-19s %-9s %-13lld %-10s %-8s %-8s %s\n", i, r->name, fl,
			par, chi, (long long)o->missing, got, rec->observed,
			rec->expected[0] ? rec->expected : "none", record_status_name(rec->status));
}

/* The play, NULL where this program does not link it (row.h). */
#pragma weak play_odirect

static const struct field odirect_fields[] = {
	OBS_FIELD(odirect_obs, F_U64, pfn_before), OBS_FIELD(odirect_obs, F_U64, pfn_after),
	OBS_FIELD(odirect_obs, F_U64, pfn_child), OBS_FIELD(odirect_obs, F_BOOL, held),
	OBS_FIELD(odirect_obs, F_BOOL, done_while_held), OBS_FIELD(odirect_obs, F_I64, missing),
	OBS_FIELD(odirect_obs, F_I64, read_bytes), OBS_FIELD(odirect_obs, F_BOOL, child_has_data),
	OBS_FIELD(odirect_obs, F_I64, forks), OBS_FIELD(odirect_obs, F_I64, missing_elsewhere),
	OBS_FIELD(odirect_obs, F_I64, tails_lost),
	{ NULL },
};

const struct row_family family_odirect = {
	.name = "odirect",
	.title = "O_DIRECT reads in flight while the process forks",
	.device = "disk",
	.fields = odirect_fields,
	.play = play_odirect,
	.verdict = odirect_verdict,
	.checks = odirect_checks,
	.table_header = odirect_header,
	.table_line = odirect_line,
};
