// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_demo: the 2006 bug through the real RDMA stack: an MR registered with ibv_reg_mr() on
 * Soft-RoCE, fork, a parent write, then the HCA's RDMA READ and WRITE; and what rdma-core's fork
 * support costs. Each row runs in a fresh process (rows/verbs_play.c). Options and exit status:
 * rows/main.c.
 */
#include "row.h"

int main(int argc, char **argv)
{
	return rows_main(argc, argv, "verbs_demo");
}
