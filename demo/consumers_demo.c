// SPDX-License-Identifier: GPL-2.0
/*
 * consumers_demo: the bug through the kernel's own consumers of user pages. vmsplice() hands a page
 * to a pipe with a FOLL_GET reference, which fork does not protect on any kernel; io_uring holds a
 * fixed buffer with FOLL_PIN | FOLL_LONGTERM, which fork protects unless vm.fork_share_pinned says
 * otherwise. Options and exit status: rows/main.c.
 */
#include "row.h"

int main(int argc, char **argv)
{
	return rows_main(argc, argv, "consumers_demo");
}
