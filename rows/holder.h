/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The families whose holder carries the page's bytes on request, read back by the test: vmsplice
 * and io_uring (rows/consumers.c), VFIO (rows/vfio.c). One shape: a control shows the holder
 * reading the page itself, then the same across a fork and the parent's write. Their verdict,
 * checks and table, and their play: holder.c.
 */
#ifndef ROWS_HOLDER_H
#define ROWS_HOLDER_H

#include "row.h"

/* What a holder carried, and the parent's and the child's pages, as a family's record has them. */
struct holder_seen {
	bool *control;		/* the control: the holder carried bytes written after it had the page */
	bool *sees_parent;	/* after the fork it carried the parent's write */
	bool *prefork;		/* ... or the pre-fork bytes */
	uint64_t *par_before, *par_after, *child_fork;
	bool *child_has_range;
};

const char *holder_verdict(bool control, bool sees_parent, bool has_prefork, uint64_t par_before,
			   uint64_t par_after, uint64_t child_fork, char *why, size_t n);
/* shared_at_fork: what fork must have done with the page, given the row's stage. */
unsigned int holder_checks(const struct record *rec, struct check *c, bool has_range,
			   uint64_t par_before, uint64_t par_after, uint64_t child_fork,
			   bool shared_at_fork);
void holder_header(FILE *f, const char *holder);
void holder_line(FILE *f, unsigned int i, const struct record *rec, bool control, bool sees_parent,
		 bool prefork, uint64_t pb, uint64_t pa, uint64_t cf);

/* The bytes a holder carries: the first HOLDER_TAG of the page. */
#define HOLDER_TAG 16

/* A holder, as its play drives it. */
struct holder {
	char *page;		/* the page, one of anonymous private memory */
	/*
	 * The page is handed to the holder before each write and keeps what it was handed
	 * (vmsplice), rather than read by the holder when it is asked (io_uring, a device).
	 */
	bool hands_over;
	int (*give)(void *ctx);			/* the holder takes the page's first bytes */
	int (*take)(void *ctx, char *out);	/* what it carries now, HOLDER_TAG bytes */
	void *ctx;
};

/* The play of holder_seen's observations: 0, or -1 with rec->reason set. */
int play_holder(const struct row *r, struct record *rec, struct holder *h,
		const struct holder_seen *seen);

#endif
