// SPDX-License-Identifier: GPL-2.0
/*
 * odirect_demo: the bug as databases met it. One reader: a thread's O_DIRECT read is in flight
 * while the process forks and the parent writes next to the read's last bytes. Eight readers (the
 * 2009 report): reads sharing pages, a fork between each read's request and the next reader's
 * start, no CPU write at all. Options and exit status: rows/main.c.
 */
#include "row.h"

int main(int argc, char **argv)
{
	return rows_main(argc, argv, "odirect_demo");
}
