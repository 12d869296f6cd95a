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

struct lab_verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int gid_index;
};

/* rxe0 opened, a PD and a CQ on it, the GID of lo's IPv4 address found; 0 or -1. */
int lab_verbs_open(struct lab_verbs *v);
/* An RC QP connected to itself; 0 or -1. */
int lab_verbs_loopback_qp(struct lab_verbs *v);
/* One RDMA READ or WRITE between local (in lmr) and remote (in rmr), waited for; 0 or -1. */
int lab_verbs_rdma(struct lab_verbs *v, enum ibv_wr_opcode op, struct ibv_mr *lmr, void *local,
		   struct ibv_mr *rmr, void *remote, unsigned int len);
/* Everything lab_verbs_open() and lab_verbs_loopback_qp() made, released. */
void lab_verbs_close(struct lab_verbs *v);

#endif
