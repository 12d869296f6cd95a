// SPDX-License-Identifier: GPL-2.0
/* Soft-RoCE on the guest's loopback: the lab's HCA for the verbs programs. */
#include "lab_verbs.h"

#include <stdlib.h>
#include <string.h>

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
