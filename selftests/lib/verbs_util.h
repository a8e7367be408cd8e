/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the selftest programs that use libibverbs.
 */
#ifndef SRDMA_VERBS_UTIL_H
#define SRDMA_VERBS_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "counters.h"

/* Open the RDMA device called @name; NULL if there is none. */
static inline struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * INIT -> RTR -> RTS of a connected QP: to QP @dest_qpn at @dgid, from
 * this port's GID @gid_index, with the given path MTU and retry budget.
 */
static inline int qp_rtr_rts(struct ibv_qp *qp, uint32_t dest_qpn,
			     const union ibv_gid *dgid, int gid_index,
			     enum ibv_mtu mtu, uint8_t timeout,
			     uint8_t retry_cnt, uint8_t rnr_retry)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu,
		.dest_qp_num = dest_qpn,
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = *dgid, .sgid_index = gid_index,
				 .hop_limit = 64 },
			.port_num = 1,
		},
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 16;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif /* SRDMA_VERBS_UTIL_H */
