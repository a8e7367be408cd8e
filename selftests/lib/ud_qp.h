/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A UD QP in RTS with its own CQ, on the ctx and pd of loop_qp.h.
 */
#ifndef SRDMA_UD_QP_H
#define SRDMA_UD_QP_H

#include <errno.h>
#include <infiniband/verbs.h>

struct ud {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

/* Return: 0 or an errno. */
static inline int ud_open(struct ud *u, uint32_t qkey)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};

	u->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!u->cq)
		return errno;
	init.send_cq = u->cq;
	init.recv_cq = u->cq;
	u->qp = ibv_create_qp(pd, &init);
	if (!u->qp)
		return errno;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return errno;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE))
		return errno;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static inline void ud_close(struct ud *u)
{
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->cq)
		ibv_destroy_cq(u->cq);
	u->qp = NULL;
	u->cq = NULL;
}

#endif /* SRDMA_UD_QP_H */
