// SPDX-License-Identifier: GPL-2.0
/*
 * fadvise_demo: what each way of asking for write-out does to the same 8 MiB of dirty file data
 * on the guest's slow disk: LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT (kernel-patches/0001)
 * against sync_file_range() and msync(). Options and exit status: rows/main.c.
 */
#include "row.h"

int main(int argc, char **argv)
{
	return rows_main(argc, argv, "fadvise_demo");
}
