// SPDX-License-Identifier: GPL-2.0
/*
 * What every holder family (holder.h) shares: its verdict, checks and table, and its play. A holder
 * row's page is one of anonymous memory held by the kernel or a device. A control first shows the
 * holder reading the page itself: the parent writes after the holder has it, and the holder carries
 * that write. Then the same with a fork in between (the child alive, told what to do over the lab's
 * parent/child pipes): does the holder carry the parent's write, or the pre-fork bytes?
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "holder.h"
#include "lab.h"

/* Shared by every holder: what it carried, against the parent's and the child's PFNs. */
const char *holder_verdict(bool control, bool sees_parent, bool has_prefork, uint64_t par_before,
			   uint64_t par_after, uint64_t child_fork, char *why, size_t n)
{
	if (!control)
		return snprintf(why, n, "the control did not show the holder reading the page "
			       "itself"), NULL;
	if (!par_before || !par_after)
		return snprintf(why, n, "the parent's page was not present"), NULL;
	if (sees_parent && par_after == par_before)
		return "COHERENT";
	if (has_prefork && par_after != par_before && child_fork == par_before)
		return "ORPHANED";
	snprintf(why, n, "carried parent's %d, pre-fork %d; parent %llx->%llx, child %llx",
		 sees_parent, has_prefork, (unsigned long long)par_before,
		 (unsigned long long)par_after, (unsigned long long)child_fork);
	return NULL;
}

unsigned int holder_checks(const struct record *rec, struct check *c, bool has_range,
			   uint64_t par_before, uint64_t par_after, uint64_t child_fork,
			   bool shared_at_fork)
{
	const struct row *r = rec->row;
	unsigned int k = 0;

	if (!r->fork) {
		CHECK(!child_fork, "no child");
	} else if (r->dontfork) {
		CHECK(!has_range && !child_fork, "the child has no such range (MADV_DONTFORK)");
	} else {
		CHECK(has_range && child_fork, "the child has the page after fork");
		if (shared_at_fork)
			CHECK(child_fork == par_before, "fork shared the page with the child");
		else
			CHECK(child_fork != par_before, "fork copied the page for the child");
	}
	if (!strcmp(rec->observed, "ORPHANED"))
		CHECK(par_after != par_before, "the parent's write moved it to a new page");
	else
		CHECK(par_after == par_before, "the parent kept its page");
	return k;
}

void holder_header(FILE *f, const char *holder)
{
	fprintf(f, "PFNs in hex, the parent's before->after its write, the child's after the fork\n");
	fprintf(f, "%2s %-27s %-8s %-8s %-19s %-9s %-11s %-9s %-8s %-8s\n", "#", "row", "DONTFORK",
		"switch", "parent pfn", "child pfn", holder, "carried", "observed", "expected");
}

void holder_line(FILE *f, unsigned int i, const struct record *rec, bool control, bool sees_parent,
		 bool prefork, uint64_t pb, uint64_t pa, uint64_t cf)
{
	const struct row *r = rec->row;
	char par[48] = "-", chi[24] = "-";

	if (pb)
		snprintf(par, sizeof(par), "%llx->%llx", (unsigned long long)pb,
			 (unsigned long long)pa);
	if (cf)
		snprintf(chi, sizeof(chi), "%llx", (unsigned long long)cf);
	fprintf(f, "%2u %-27s %-8s %-8s %-19s %-9s %-11s %-9s %-8s %-8s %s\n", i, r->name,
		r->dontfork ? "yes" : "no", r->fork_switch == SWITCH_ON ? "on" : "off", par, chi,
		!rec->observed[0] ? "-" : control ? "live" : "copied?",
		!rec->observed[0] ? "-" : sees_parent ? "parent's" : prefork ? "pre-fork" : "other",
		rec->observed[0] ? rec->observed : "-", rec->expected[0] ? rec->expected : "none",
		record_status_name(rec->status));
}

static const char PREFORK[HOLDER_TAG] = "pre-fork bytes";
static const char PARENT[HOLDER_TAG] = "parent wrote";
static const char CONTROL[HOLDER_TAG] = "control bytes";

struct child_report {
	uint64_t pfn;
	int pfn_errno;
	bool has_range;
};

/* The child: its PFN and whether it has the range, then it waits until the parent is done. */
static int child_main(struct lab_child *c, void *arg)
{
	struct child_report r = { 0 };
	const char *page = arg;

	r.has_range = lab_maps_covers(0, page);
	r.pfn_errno = lab_pfn_read(page, &r.pfn) ? errno : 0;
	if (lab_child_report(c, &r, sizeof(r)))
		return 1;
	return lab_child_wait(c) < 0;
}

int play_holder(const struct row *r, struct record *rec, struct holder *h,
		const struct holder_seen *seen)
{
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	struct child_report cr;
	char got[HOLDER_TAG];
	int ret = -1;

	/* The control: written after the holder has the page, carried all the same. */
	if (h->hands_over && h->give(h->ctx))
		return row_fail(rec, "handing the page over (control)");
	memcpy(h->page, CONTROL, HOLDER_TAG);
	if ((!h->hands_over && h->give(h->ctx)) || h->take(h->ctx, got))
		return row_fail(rec, "the holder carrying the control");
	*seen->control = !memcmp(got, CONTROL, HOLDER_TAG);

	memcpy(h->page, PREFORK, HOLDER_TAG);
	if (h->hands_over && h->give(h->ctx))
		return row_fail(rec, "handing the page over");
	errno = 0;
	if (lab_pfn_read(h->page, seen->par_before) || !*seen->par_before)
		return row_fail(rec, "the parent's page is not present");
	if (r->fork) {
		if (lab_child_start(&child, child_main, h->page))
			return row_fail(rec, "fork");
		if (lab_child_read(&child, &cr, sizeof(cr))) {
			row_fail(rec, "the child's report after the fork");
			goto out;
		}
		if (cr.pfn_errno) {
			errno = cr.pfn_errno;
			row_fail(rec, "reading the child's PFN from pagemap");
			goto out;
		}
		*seen->child_fork = cr.pfn;
		*seen->child_has_range = cr.has_range;
	}
	/* The parent writes, with the child alive: the copy-on-write fault, if the page is shared. */
	memcpy(h->page, PARENT, HOLDER_TAG);
	errno = 0;
	if (lab_pfn_read(h->page, seen->par_after) || !*seen->par_after) {
		row_fail(rec, "the parent's page after the write is not present");
		goto out;
	}
	if ((!h->hands_over && h->give(h->ctx)) || h->take(h->ctx, got)) {
		row_fail(rec, "reading what the holder carries");
		goto out;
	}
	*seen->sees_parent = !memcmp(got, PARENT, HOLDER_TAG);
	*seen->prefork = !memcmp(got, PREFORK, HOLDER_TAG);
	if (child.pid > 0 && row_child_end(rec, &child, 'x', 0))
		goto out;
	ret = 0;
out:
	lab_child_end(&child);
	return ret;
}
