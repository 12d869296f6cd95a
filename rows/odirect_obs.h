/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an O_DIRECT row observes (struct record's obs), for odirect.c and its play,
 * odirect_play.c.
 */
#ifndef ROWS_ODIRECT_OBS_H
#define ROWS_ODIRECT_OBS_H

#include "row.h"

struct odirect_obs {
	uint64_t pfn_before;	/* single reader: the read's last page, parent's view, before the fork */
	uint64_t pfn_after;	/* the same after the read completed */
	uint64_t pfn_child;	/* the child's page there (0: none) */
	bool held;		/* every read was seen waiting for its bio at the held gate before
				 * the fork (or, with none, the parent's write) came */
	bool done_while_held;	/* a read ended before the gate was released: it held nothing */
	int64_t missing;	/* bytes of the read(s) the parent does not find */
	int64_t read_bytes;	/* bytes the read(s) returned */
	bool child_has_data;	/* single reader: every byte of the read's last page is in the
				 * child's page */
	int64_t forks;		/* multi: forks between a held read and the next reader's start */
	int64_t missing_elsewhere; /* multi: bytes missing but in the tail of a read a fork followed */
	int64_t tails_lost;	/* multi: reads a fork followed whose whole tail the parent lacks */
};

#endif
