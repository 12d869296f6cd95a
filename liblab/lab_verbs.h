/* SPDX-License-Identifier: GPL-2.0 */
/*
 * liblab's verbs part (verbs.c): Soft-RoCE on the guest's loopback, for the programs linked
 * with libibverbs (verbs_demo, reg_bench). The static programs never pull it in.
 */
#ifndef LAB_VERBS_H
#define LAB_VERBS_H

#include <infiniband/verbs.h>

/* rxe0 on lo (created with iproute2's rdma tool unless it is there); 0 or -1. */
int lab_rxe_setup(void);
/* An open context on rxe0, or NULL. */
struct ibv_context *lab_rxe_open(void);

#endif
