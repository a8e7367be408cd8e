/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues: the kernel owns the SRQ, we map its ring, and
 * post_srq_recv writes WQEs into it with no system call (post.c). XRC
 * SRQs are the same, plus a number and a CQ; their domains are here too.
 */
#include <errno.h>
#include <stdlib.h>

#include "softrdma.h"

/* Our driver data right behind the core response, as in ah.c. */
union srdma_create_srq_resp {
	struct ib_uverbs_create_srq_resp core;
	struct {
		__u8 core_space[sizeof(struct ib_uverbs_create_srq_resp)];
		struct softrdma_create_srq_resp drv;
	};
};

_Static_assert(offsetof(union srdma_create_srq_resp, drv) ==
	       sizeof(struct ib_uverbs_create_srq_resp), "create_srq resp");
_Static_assert(sizeof(union srdma_create_srq_resp) == 40, "create_srq resp");

/* What one receive WQE of @srq needs: its header and max_sge SGEs. */
static size_t srdma_srq_slot_size(const struct srdma_srq *srq)
{
	return sizeof(struct softrdma_recv_wqe) +
	       (size_t)srq->max_sge * sizeof(struct softrdma_sge);
}

/* Map the ring of a new SRQ; on failure the SRQ is destroyed. */
static int srdma_srq_map(struct srdma_srq *srq, const struct ibv_srq_attr *attr,
			 const union srdma_create_srq_resp *resp)
{
	int ret = EINVAL;

	/* attr now holds what the kernel granted (see qp.c). */
	srq->max_sge = attr->max_sge;
	if (resp->drv.rq.num_slots >= attr->max_wr)
		ret = srdma_ring_map(&srq->rq, &resp->drv.rq,
				     srdma_srq_slot_size(srq),
				     srq->vsrq.srq.context->cmd_fd,
				     SRDMA_RING_PRODUCER);
	if (ret)
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
	return ret;
}

/* Basic and XRC SRQs; tag matching is EOPNOTSUPP. */
struct ibv_srq *srdma_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr)
{
	union srdma_create_srq_resp resp = {};
	struct ibv_create_xsrq cmd = {};
	struct srdma_srq *srq;
	int ret;

	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type != IBV_SRQT_BASIC &&
	    attr->srq_type != IBV_SRQT_XRC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    &resp.core, sizeof(resp));
	if (!ret)
		ret = srdma_srq_map(srq, &attr->attr, &resp);
	if (ret) {
		free(srq);
		errno = ret;
		return NULL;
	}
	return &srq->vsrq.srq;
}

/* ibv_create_srq(): a basic SRQ, as ibv_create_srq_ex() makes it. */
struct ibv_srq *srdma_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex attr_ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_srq *srq = srdma_create_srq_ex(pd->context, &attr_ex);

	if (srq)
		attr->attr = attr_ex.attr;	/* what the kernel granted */
	return srq;
}

int srdma_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

/*
 * Our driver data behind the core command (where the new ring goes), laid
 * over it in a union as in ah.c: ibv_modify_srq ends in a flexible array.
 */
union srdma_modify_srq_cmd {
	struct ibv_modify_srq core;
	struct {
		__u8 core_space[sizeof(struct ibv_modify_srq)];
		struct softrdma_modify_srq_cmd drv;
	};
};

_Static_assert(offsetof(union srdma_modify_srq_cmd, drv) ==
	       sizeof(struct ibv_modify_srq), "modify_srq cmd");

/*
 * A resize (IBV_SRQ_MAX_WR) moves the SRQ to a new ring, WQEs posted and
 * not yet taken included: no post may run between the kernel's switch
 * and ours, so the post lock is held across.
 */
int srdma_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);
	union srdma_modify_srq_cmd cmd = {};
	struct softrdma_ring_info info = {};
	int ret;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.core,
					  sizeof(cmd.core));
	cmd.drv.ring_info_addr = (uintptr_t)&info;
	pthread_spin_lock(&srq->rq.lock);
	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.core,
				 sizeof(cmd));
	if (!ret)
		ret = srdma_ring_remap(&srq->rq, &info,
				       srdma_srq_slot_size(srq),
				       ibsrq->context->cmd_fd,
				       SRDMA_RING_PRODUCER);
	pthread_spin_unlock(&srq->rq.lock);
	return ret;
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

struct ibv_xrcd *srdma_open_xrcd(struct ibv_context *ibctx,
				 struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct srdma_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;

	ret = ibv_cmd_open_xrcd(ibctx, &xrcd->vxrcd, sizeof(xrcd->vxrcd), attr,
				&cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->vxrcd.xrcd;
}

int srdma_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct srdma_xrcd *xrcd = srdma_container_of(ibxrcd, struct srdma_xrcd,
						     vxrcd.xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(&xrcd->vxrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}
