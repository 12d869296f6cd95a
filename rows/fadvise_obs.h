/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an fadvise row observes (struct record's obs), for fadvise.c and its play,
 * fadvise_play.c.
 */
#ifndef ROWS_FADVISE_OBS_H
#define ROWS_FADVISE_OBS_H

#include "row.h"

struct fadvise_obs {
	/* The range's pages (kpageflags) dirty and under writeback, and /proc/meminfo Dirty: */
	int64_t dirty_before, wb_before, dirty_kb_before;	/* before the call */
	int64_t dirty_held, wb_held, dirty_kb_held;	/* as it returned, or waited, the gate held */
	int64_t dirty_after, wb_after;	/* once a call that waited returned, the gate let go */
	bool waited;		/* the call was seen waiting for the write-out the gate held */
	int64_t sectors_held;	/* the disk's sectors written while the gate held it (none pass) */
	int64_t sectors_after;	/* ... from the hold until a call that waited returned */
};

#endif
