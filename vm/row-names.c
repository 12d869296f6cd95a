// SPDX-License-Identifier: GPL-2.0
/*
 * The name of every row of rows/rows.c, one a line, built and run on the host: make bisect
 * (vm/bisect_row.py) checks ROW= against the lab's one table of rows before it builds anything.
 */
#include <stdio.h>

#include "row.h"

int main(void)
{
	for (unsigned int i = 0; i < n_rows; i++)
		printf("%s\n", rows[i].name);
	return 0;
}
