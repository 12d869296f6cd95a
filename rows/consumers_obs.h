/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the vmsplice and io_uring rows observe (struct record's obs), for consumers.c and their
 * play, consumers_play.c.
 */
#ifndef ROWS_CONSUMERS_OBS_H
#define ROWS_CONSUMERS_OBS_H

#include "holder.h"

struct vmsplice_obs {
	uint64_t par_before, par_after, child_fork;
	bool control_live;	/* a pipe read after the parent's write showed that write (no copy) */
	bool pipe_sees_parent;	/* the pipe holds the parent's post-fork write */
	bool pipe_has_prefork;	/* ... or the pre-fork bytes */
	bool child_has_range;
};

struct iouring_obs {
	uint64_t par_before, par_after, child_fork;
	bool control_moved;	/* before the fork, WRITE_FIXED carried the buffer's bytes */
	bool ring_sees_parent;	/* after the fork, WRITE_FIXED carried the parent's write */
	bool ring_has_prefork;	/* ... or the pre-fork bytes */
	bool child_has_range;
};

#endif
