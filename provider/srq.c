/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues: the kernel owns the SRQ, we map its ring, and
 * post_srq_recv writes WQEs into it with no system call (post.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "softrdma.h"

/* Our driver data follows the core response with nothing in between. */
struct srdma_create_srq_resp {
	struct ib_uverbs_create_srq_resp core;
	struct softrdma_create_srq_resp drv;
};

_Static_assert(offsetof(struct srdma_create_srq_resp, drv) ==
	       sizeof(struct ib_uverbs_create_srq_resp), "create_srq resp");

struct ibv_srq *srdma_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct srdma_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct srdma_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq(pd, &srq->ibsrq, attr, &cmd, sizeof(cmd),
				 &resp.core, sizeof(resp));
	if (ret)
		goto err_free;

	/* attr->attr now holds what the kernel granted (see qp.c). */
	srq->max_sge = attr->attr.max_sge;
	ret = EINVAL;
	if (resp.drv.rq.num_slots < attr->attr.max_wr)
		goto err_destroy;
	ret = srdma_ring_map(&srq->rq, &resp.drv.rq,
			     sizeof(struct softrdma_recv_wqe) +
			     (size_t)srq->max_sge * sizeof(struct softrdma_sge),
			     pd->context->cmd_fd, SRDMA_RING_PRODUCER);
	if (ret)
		goto err_destroy;
	return &srq->ibsrq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibsrq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

int srdma_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int srdma_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int srdma_destroy_srq(struct ibv_srq *ibsrq)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	srdma_ring_unmap(&srq->rq);
	free(srq);
	return 0;
}
