/* SPDX-License-Identifier: GPL-2.0 */
/*
 * O_DIRECT + fork, the way databases met the bug: a thread's direct read is in flight into
 * a buffer while the process forks and the parent writes elsewhere in the same page. The
 * lab's read-throttled disk (serial "odirect") keeps the read in flight for about a second,
 * read raw or through a file on its ext4 file system.
 * A row only sets the stage; its verdict comes from the bytes the parent finds.
 */
#ifndef ODIRECT_H
#define ODIRECT_H

#include <stdbool.h>
#include <stdint.h>

struct odirect_row {
	const char *name;	/* the row's name in liblab/expect.c */
	const char *title;
	bool fork;		/* fork while the read is in flight */
	bool dontfork;		/* MADV_DONTFORK on the buffer first */
	bool own_page;		/* the workaround: the read fills whole pages, the parent writes another */
	bool ext4;		/* read /mnt/odirect/data (ext4, iomap) rather than the raw device */
	const char *note;
};

struct odirect_obs {
	uint64_t pfn_before;	/* the read's last page, parent's view, before the fork */
	uint64_t pfn_after;	/* the same after the read completed */
	uint64_t pfn_child;	/* the child's page there (0: none) */
	long inflight;		/* reads in flight on the disk just before the fork */
	long inflight_after;	/* the same once fork() returned: still pinned throughout */
	unsigned int tries;	/* plays it took to fork inside the read's window */
	long missing;		/* bytes of the read the parent does not see */
	bool child_has_data;	/* the read's bytes are in the child's page */
	const char *verdict;	/* COHERENT or ORPHANED */
	char error[160];	/* set when the row could not run */
};

extern const struct odirect_row odirect_rows[];
extern const unsigned int n_odirect_rows;

/* Play one row; false (and obs->error) when it could not run. */
bool odirect_run(const struct odirect_row *row, struct odirect_obs *obs);

#endif
