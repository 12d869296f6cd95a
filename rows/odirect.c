// SPDX-License-Identifier: GPL-2.0
/*
 * The O_DIRECT family described: the verdict from the bytes the parent finds (and, with one reader,
 * from where the missing ones went), the checks, the table. Playing is odirect_play.c.
 */
#include <string.h>

#include "row.h"

bool odirect_play_late(const struct odirect_obs *o)
{
	return !o->missing && o->child_has_data && o->pfn_after != o->pfn_before &&
	       o->pfn_child == o->pfn_before;
}

static const char *odirect_verdict(const struct record *rec, char *why, size_t n)
{
	const struct odirect_obs *o = &rec->odirect;

	if (rec->row->odirect.multi) {
		/* A round with no fork that could break a read's copy-on-write proves nothing. */
		if (!o->rounds || o->forkless_rounds)
			return snprintf(why, n, "%lld of %lld rounds had no fork with a read in flight "
				       "across the next reader's GUP (%lld bytes missing)",
				       (long long)o->forkless_rounds, (long long)o->rounds,
				       (long long)o->missing), NULL;
		if (o->stale_rounds)
			return "ORPHANED";
		return o->missing ? (snprintf(why, n, "bytes missing in no round?"), NULL) :
		       "COHERENT";
	}
	if (!o->pfn_before || !o->pfn_after)
		return snprintf(why, n, "the parent's page was not present"), NULL;
	if (!o->missing && o->pfn_after == o->pfn_before)
		return "COHERENT";
	/* The read's bytes went somewhere: into the page the child kept. */
	if (o->missing && o->child_has_data && o->pfn_after != o->pfn_before)
		return "ORPHANED";
	snprintf(why, n, "%s: %lld bytes missing, child %llx %s them, parent %llx->%llx, "
		 "sectors unread before the parent's write %lld",
		 o->pfn_after != o->pfn_before && o->pfn_child && o->pfn_child != o->pfn_before ?
		 "the parent moved, but the child's page is not the one the read filled" :
		 "no race the row knows", (long long)o->missing,
		 (unsigned long long)o->pfn_child, o->child_has_data ? "has" : "lacks",
		 (unsigned long long)o->pfn_before, (unsigned long long)o->pfn_after,
		 (long long)o->unread_before_write);
	return NULL;
}

static unsigned int odirect_checks(const struct record *rec, struct check *c)
{
	const struct odirect_obs *o = &rec->odirect;
	const struct row *r = rec->row;
	bool orphaned = !strcmp(rec->observed, "ORPHANED");
	unsigned int k = 0;

	if (r->odirect.multi) {
		CHECK(o->rounds > 0 && !o->forkless_rounds,
		      "a fork with a read in flight across the next reader's GUP, every round");
		if (r->odirect.aligned || r->dontfork)
			CHECK(!o->stale_rounds, "no round missed a byte");
		CHECK(!o->missing_elsewhere, "no byte missing but in the tail of a read a fork followed");
		if (orphaned)
			CHECK(!o->tails_kept, "every counted fork cost its read's tail");
		return k;
	}
	CHECK(o->inflight > 0, "the read was in flight before the fork");
	if (r->fork)
		CHECK(o->inflight_after > 0, "and still once fork() returned");
	/* The disk's count only grows: what was unread can only shrink from sample to sample. */
	if (o->unread_after_fork >= 0 && o->unread_before_write >= 0 && o->unread_after_write >= 0)
		CHECK(o->unread_after_fork >= o->unread_before_write &&
		      o->unread_before_write >= o->unread_after_write,
		      "the sectors unread shrink from the fork to the write and after it");
	if (orphaned) {
		CHECK(o->missing == 2048, "the read's bytes in its last page are missing");
		CHECK(o->pfn_child == o->pfn_before, "the child kept the page the read went to");
		/* The copy lacks them: they were not in the page, nor counted read, before the write. */
		CHECK(!o->filled_before_write && o->unread_before_write,
		      "the read had filled neither its last page nor the disk's count before the write");
	} else {
		CHECK(!o->missing, "every byte arrived");
	}
	if (r->dontfork || !r->fork)
		CHECK(!o->pfn_child && !o->child_has_data, "no child page there");
	return k;
}

static void odirect_header(FILE *f)
{
	fprintf(f, "one reader: a 1 MiB - 2 KiB read of the odirect disk (1 MiB/s), PFNs of its last "
		"page in hex; 8 readers: one page each, a fork after each request, on the odirect-iops "
		"disk\n");
	fprintf(f, "%2s %-32s %-9s %-19s %-9s %-13s %-10s %-8s %-8s\n", "#", "row", "in flight",
		"parent pfn", "child pfn", "bytes missing", "child got", "observed", "expected");
}

static void odirect_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct odirect_obs *o = &rec->odirect;
	const struct row *r = rec->row;
	char par[40], chi[24] = "-", got[24] = "-", fl[16];

	if (r->odirect.multi) {
		snprintf(fl, sizeof(fl), "%lld forks", (long long)o->forks);
		snprintf(par, sizeof(par), "-");
		snprintf(got, sizeof(got), "%lld/%lld stale", (long long)o->stale_rounds,
			 (long long)o->rounds);
	} else {
		snprintf(fl, sizeof(fl), "%lld", (long long)o->inflight);
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

const struct row_family family_odirect = {
	.name = "odirect",
	.verdict = odirect_verdict,
	.checks = odirect_checks,
	.table_header = odirect_header,
	.table_line = odirect_line,
};
