// SPDX-License-Identifier: GPL-2.0
/*
 * Soft-RoCE on the guest's loopback, the lab's HCA for the verbs programs: the device, a
 * protection domain and completion queue on it, an RC queue pair connected to itself, and one
 * RDMA READ or WRITE at a time, waited for.
 */
#include "lab_verbs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Same-device traffic on lo works with rxe from 6.1 on. */
int lab_rxe_setup(void)
{
	struct ibv_context *ctx = lab_rxe_open();

	if (ctx) {
		ibv_close_device(ctx);
		return 0;
	}
	return system("ip link set lo up && rdma link add rxe0 type rxe netdev lo") ? -1 : 0;
}

struct ibv_context *lab_rxe_open(void)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int n;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "rxe0"))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

int lab_verbs_open(struct lab_verbs *v)
{
	union ibv_gid gid;

	memset(v, 0, sizeof(*v));
	v->ctx = lab_rxe_open();
	if (!v->ctx)
		return -1;
	/* The GID of lo's IPv4 address: an IPv4-mapped IPv6 address, ::ffff:127.0.0.1. */
	v->gid_index = -1;
	for (int i = 0; i < 16 && v->gid_index < 0; i++) {
		static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };

		if (!ibv_query_gid(v->ctx, 1, i, &gid) && !memcmp(gid.raw, mapped, 12) &&
		    gid.raw[12] == 127)
			v->gid_index = i;
	}
	v->pd = ibv_alloc_pd(v->ctx);
	v->cq = v->pd ? ibv_create_cq(v->ctx, 16, NULL, NULL, 0) : NULL;
	return v->gid_index < 0 || !v->cq ? -1 : 0;
}

int lab_verbs_loopback_qp(struct lab_verbs *v)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = v->cq, .recv_cq = v->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a;
	union ibv_gid gid;

	v->qp = ibv_create_qp(v->pd, &ia);
	if (!v->qp || ibv_query_gid(v->ctx, 1, v->gid_index, &gid))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = v->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = v->gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int lab_verbs_rdma(struct lab_verbs *v, enum ibv_wr_opcode op, struct ibv_mr *lmr, void *local,
		   struct ibv_mr *rmr, void *remote, unsigned int len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = len, .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)remote, .rkey = rmr->rkey },
	}, *bad;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(v->qp, &wr, &bad))
		return -1;
	for (int i = 0; i < 5000000; i++) {
		n = ibv_poll_cq(v->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n) {
			if (wc.status == IBV_WC_SUCCESS)
				return 0;
			errno = EIO;
			return -1;
		}
		if (i > 1000)
			usleep(100);
	}
	errno = ETIMEDOUT;
	return -1;
}

void lab_verbs_close(struct lab_verbs *v)
{
	if (v->qp)
		ibv_destroy_qp(v->qp);
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	memset(v, 0, sizeof(*v));
}
