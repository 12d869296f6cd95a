// SPDX-License-Identifier: GPL-2.0
/*
 * The two families whose device is the kernel itself, described: vmsplice (a pipe holds the page
 * with FOLL_GET) and io_uring (a fixed buffer, FOLL_PIN | FOLL_LONGTERM). Both show, through what a
 * pipe carries after the parent's write, whether the kernel's holder and the parent still share the
 * page. Playing is consumers_play.c. VFIO's family (vfio.c) has the same shape and shares the
 * verdict, the checks and the table (holder.h).
 */
#include <string.h>

#include "holder.h"

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

static const char *vmsplice_verdict(const struct record *rec, char *why, size_t n)
{
	const struct vmsplice_obs *o = &rec->vmsplice;

	return holder_verdict(o->control_live, o->pipe_sees_parent, o->pipe_has_prefork,
			      o->par_before, o->par_after, o->child_fork, why, n);
}

static const char *iouring_verdict(const struct record *rec, char *why, size_t n)
{
	const struct iouring_obs *o = &rec->iouring;

	return holder_verdict(o->control_moved, o->ring_sees_parent, o->ring_has_prefork,
			      o->par_before, o->par_after, o->child_fork, why, n);
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

/* A FOLL_GET reference never makes fork copy: the child always shares the page. */
static unsigned int vmsplice_checks(const struct record *rec, struct check *c)
{
	const struct vmsplice_obs *o = &rec->vmsplice;

	return holder_checks(rec, c, o->child_has_range, o->par_before, o->par_after, o->child_fork,
			     true);
}

/* A FOLL_PIN pin makes fork copy for the child, unless the switch says share. */
static unsigned int iouring_checks(const struct record *rec, struct check *c)
{
	const struct iouring_obs *o = &rec->iouring;

	return holder_checks(rec, c, o->child_has_range, o->par_before, o->par_after, o->child_fork,
			     rec->row->fork_switch == SWITCH_ON);
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

static void vmsplice_header(FILE *f)
{
	holder_header(f, "pipe reads");
}

static void vmsplice_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct vmsplice_obs *o = &rec->vmsplice;

	holder_line(f, i, rec, o->control_live, o->pipe_sees_parent, o->pipe_has_prefork,
		    o->par_before, o->par_after, o->child_fork);
}

static void iouring_header(FILE *f)
{
	holder_header(f, "ring reads");
}

static void iouring_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct iouring_obs *o = &rec->iouring;

	holder_line(f, i, rec, o->control_moved, o->ring_sees_parent, o->ring_has_prefork,
		    o->par_before, o->par_after, o->child_fork);
}

/* The plays, NULL where this program does not link them (row.h). */
#pragma weak play_vmsplice
#pragma weak play_iouring

static const struct field vmsplice_fields[] = {
	OBS_FIELD(vmsplice, F_U64, par_before), OBS_FIELD(vmsplice, F_U64, par_after),
	OBS_FIELD(vmsplice, F_U64, child_fork), OBS_FIELD(vmsplice, F_BOOL, control_live),
	OBS_FIELD(vmsplice, F_BOOL, pipe_sees_parent), OBS_FIELD(vmsplice, F_BOOL, pipe_has_prefork),
	OBS_FIELD(vmsplice, F_BOOL, child_has_range),
	{ NULL },
};

const struct row_family family_vmsplice = {
	.name = "vmsplice",
	.device = "pipe",
	.fields = vmsplice_fields,
	.play = play_vmsplice,
	.verdict = vmsplice_verdict,
	.checks = vmsplice_checks,
	.table_header = vmsplice_header,
	.table_line = vmsplice_line,
};

static const struct field iouring_fields[] = {
	OBS_FIELD(iouring, F_U64, par_before), OBS_FIELD(iouring, F_U64, par_after),
	OBS_FIELD(iouring, F_U64, child_fork), OBS_FIELD(iouring, F_BOOL, control_moved),
	OBS_FIELD(iouring, F_BOOL, ring_sees_parent), OBS_FIELD(iouring, F_BOOL, ring_has_prefork),
	OBS_FIELD(iouring, F_BOOL, child_has_range),
	{ NULL },
};

const struct row_family family_iouring = {
	.name = "iouring",
	.device = "io_uring",
	.fields = iouring_fields,
	.play = play_iouring,
	.verdict = iouring_verdict,
	.checks = iouring_checks,
	.table_header = iouring_header,
	.table_line = iouring_line,
};
