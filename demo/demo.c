// SPDX-License-Identifier: GPL-2.0
/*
 * Every demo's program: vm/guest.mk builds it once per demo that the family registry (rows/row.h's
 * ROW_FAMILIES) names, LAB_DEMO that demo's name. It plays the rows of each family whose line
 * names it; what a family's rows show is said in its family file (rows/). Options and exit
 * status: rows/main.c.
 */
#include "row.h"

int main(int argc, char **argv)
{
	return rows_main(argc, argv, LAB_DEMO);
}
