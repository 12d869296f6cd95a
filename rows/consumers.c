// SPDX-License-Identifier: GPL-2.0
/*
 * The two families whose device is the kernel itself, described: vmsplice (a pipe holds the page
 * with FOLL_GET) and io_uring (a fixed buffer, FOLL_PIN | FOLL_LONGTERM). Both show, through what a
 * pipe carries after the parent's write, whether the kernel's holder and the parent still share the
 * page. Playing is consumers_play.c. VFIO's family (vfio.c) has the same shape: the verdict, the
 * checks, the table and the play they share are holder.c's.
 */
#include "consumers_obs.h"

static const char *vmsplice_verdict(const struct record *rec, char *why, size_t n)
{
	const struct vmsplice_obs *o = ROW_OBS(rec, struct vmsplice_obs);

	return holder_verdict(o->control_live, o->pipe_sees_parent, o->pipe_has_prefork,
			      o->par_before, o->par_after, o->child_fork, why, n);
}

static const char *iouring_verdict(const struct record *rec, char *why, size_t n)
{
	const struct iouring_obs *o = ROW_OBS(rec, struct iouring_obs);

	return holder_verdict(o->control_moved, o->ring_sees_parent, o->ring_has_prefork,
			      o->par_before, o->par_after, o->child_fork, why, n);
}

/* A FOLL_GET reference never makes fork copy: the child always shares the page. */
static unsigned int vmsplice_checks(const struct record *rec, struct check *c)
{
	const struct vmsplice_obs *o = ROW_OBS(rec, struct vmsplice_obs);

	return holder_checks(rec, c, o->child_has_range, o->par_before, o->par_after, o->child_fork,
			     true);
}

/* A FOLL_PIN pin makes fork copy for the child, unless the switch says share. */
static unsigned int iouring_checks(const struct record *rec, struct check *c)
{
	const struct iouring_obs *o = ROW_OBS(rec, struct iouring_obs);

	return holder_checks(rec, c, o->child_has_range, o->par_before, o->par_after, o->child_fork,
			     rec->row->fork_switch == SWITCH_ON);
}

static void vmsplice_header(FILE *f)
{
	holder_header(f, "pipe reads");
}

static void vmsplice_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct vmsplice_obs *o = ROW_OBS(rec, struct vmsplice_obs);

	holder_line(f, i, rec, o->control_live, o->pipe_sees_parent, o->pipe_has_prefork,
		    o->par_before, o->par_after, o->child_fork);
}

static void iouring_header(FILE *f)
{
	holder_header(f, "ring reads");
}

static void iouring_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct iouring_obs *o = ROW_OBS(rec, struct iouring_obs);

	holder_line(f, i, rec, o->control_moved, o->ring_sees_parent, o->ring_has_prefork,
		    o->par_before, o->par_after, o->child_fork);
}

/* The plays, NULL where this program does not link them (row.h). */
#pragma weak play_vmsplice
#pragma weak play_iouring

static const struct field vmsplice_fields[] = {
	OBS_FIELD(vmsplice_obs, F_U64, par_before), OBS_FIELD(vmsplice_obs, F_U64, par_after),
	OBS_FIELD(vmsplice_obs, F_U64, child_fork), OBS_FIELD(vmsplice_obs, F_BOOL, control_live),
	OBS_FIELD(vmsplice_obs, F_BOOL, pipe_sees_parent), OBS_FIELD(vmsplice_obs, F_BOOL, pipe_has_prefork),
	OBS_FIELD(vmsplice_obs, F_BOOL, child_has_range),
	{ NULL },
};

const struct row_family family_vmsplice = {
	.name = "vmsplice",
	.title = "vmsplice (FOLL_GET)",
	.device = "pipe",
	.fields = vmsplice_fields,
	.play = play_vmsplice,
	.verdict = vmsplice_verdict,
	.checks = vmsplice_checks,
	.table_header = vmsplice_header,
	.table_line = vmsplice_line,
};

static const struct field iouring_fields[] = {
	OBS_FIELD(iouring_obs, F_U64, par_before), OBS_FIELD(iouring_obs, F_U64, par_after),
	OBS_FIELD(iouring_obs, F_U64, child_fork), OBS_FIELD(iouring_obs, F_BOOL, control_moved),
	OBS_FIELD(iouring_obs, F_BOOL, ring_sees_parent), OBS_FIELD(iouring_obs, F_BOOL, ring_has_prefork),
	OBS_FIELD(iouring_obs, F_BOOL, child_has_range),
	{ NULL },
};

const struct row_family family_iouring = {
	.name = "iouring",
	.title = "io_uring fixed buffers (FOLL_PIN)",
	.device = "io_uring",
	.fields = iouring_fields,
	.play = play_iouring,
	.verdict = iouring_verdict,
	.checks = iouring_checks,
	.table_header = iouring_header,
	.table_line = iouring_line,
};
