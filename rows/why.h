/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own view of a pin row, recorded when a demo is asked why (why.c): the page state of
 * each party's page at each step, read through pindma's root-only debugfs file, and the copies the
 * kernel made, from its own tracing. A play calls them only when its options ask for the view
 * (struct play_opts), so that a row plays the same with and without them.
 */
#ifndef ROWS_WHY_H
#define ROWS_WHY_H

#include "row.h"

/* Read the state of each party's page (PFN 0: none) at this step. */
void why_step(struct record *rec, enum step step, uint64_t device, uint64_t parent,
	      uint64_t child);
/* Start tracing the copies the kernel makes, right before the fork. */
void why_fork_begin(struct record *rec);
/* Stop tracing, and record each copy against the PFNs observed. */
void why_fork_end(struct record *rec, uint64_t par_before, uint64_t child_fork,
		  uint64_t par_after);

/*
 * The map count the kernel keeps for a page, and its name: 6.1's is the page's own
 * (page_mapcount(), which counts the PMD of a THP too), 6.12's the whole folio's
 * (folio_mapcount()); the two are not the same number for a page of a large folio.
 */
int64_t why_mapcount(const struct page_state *s, const char **name);

/* A few lines under a row's picture: the state, the copies, and why, by the era's rules. */
void why_print(FILE *f, const struct record *rec);
/* --why NAME: only that, for a row. */
void why_print_only(FILE *f, const struct record *rec);

#endif
