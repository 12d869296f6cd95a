/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What each demo row, verbs row and verdict-asserting test expects, per kernel version: one
 * table per version in expect.c. The observed verdict never comes from here.
 */
#ifndef LAB_EXPECT_H
#define LAB_EXPECT_H

/*
 * The verdict expected for a row (e.g. "ORPHANED", "COHERENT") on the running kernel (uname -r),
 * from the table of the newest version not newer than it; NULL when no table names the row, which
 * callers report as a failure, never as a pass.
 */
const char *lab_expect(const char *row);
/* The version whose table answered for the running kernel, e.g. "6.1"; for printing. */
const char *lab_expect_table(void);
/* The running kernel's release (uname -r), for printing beside every verdict. */
const char *lab_kernel_release(void);

#endif
