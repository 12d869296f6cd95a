/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a verbs row observes (struct record's obs), for verbs.c and its play, verbs_play.c
 * (which needs libibverbs).
 */
#ifndef ROWS_VERBS_OBS_H
#define ROWS_VERBS_OBS_H

#include "row.h"

struct verbs_obs {
	int64_t fork_switch;	/* vm.fork_share_pinned during the row (-1: none) */
	char fork_status[16];	/* ibv_is_fork_initialized() */
	int64_t copy_on_fork;	/* RDMA netlink's copy-on-fork, as `rdma system show` reads it:
				 * 1 or 0 */
	bool control_moved;	/* before the fork the HCA wrote and read the parent's page */
	bool hca_sees_parent;	/* RDMA READ after the fork returns the parent's write */
	bool parent_sees_hca;	/* the parent reads the RDMA WRITE after the fork */
	bool hca_reads_own;	/* RDMA READ returns what the RDMA WRITE put there */
	char detail[24];	/* cost rows: the MR size, or how many MRs */
	bool page_dc;		/* cost rows: the MR's page is MADV_DONTFORK (VmFlags dc) */
	char outcome[24];	/* cost rows: SIGSEGV, EINVAL, EAGAIN, all-ok, ... */
	uint64_t par_pfn_before;	/* rows that fork with an MR: the MR's page, the parent's, */
	uint64_t par_pfn_after;		/* before the fork and at the end */
	uint64_t child_pfn;		/* the child's page there (0: none) */
	bool child_sees_writes;		/* the child reads the parent's or the HCA's write */
	int64_t max_map_count;	/* VMA rows: vm.max_map_count */
	int64_t vmas_before;	/* VMA rows: the process's VMAs (/proc/self/maps) before the MRs */
	int64_t vmas;		/* ... and when the registrations stopped */
	int64_t mrs;		/* ... and how many MRs were registered then */
};

#endif
