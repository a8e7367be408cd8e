/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pair control path: create, modify, query, destroy. The kernel owns
 * the QP; we map its send and receive rings for post.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "softrdma.h"

/*
 * Our driver data follows the core response with nothing in between. Both
 * create verbs use the extended command, whose core response is longer.
 */
struct srdma_create_qp_resp {
	struct ib_uverbs_ex_create_qp_resp core;
	struct softrdma_create_qp_resp drv;
};

_Static_assert(offsetof(struct srdma_create_qp_resp, drv) ==
	       sizeof(struct ib_uverbs_ex_create_qp_resp), "create_qp resp");
_Static_assert(sizeof(struct srdma_create_qp_resp) == 88, "create_qp resp");

static size_t srdma_max(size_t a, size_t b)
{
	return a > b ? a : b;
}

/*
 * num_slots 0 means the kernel made no such queue, which is only right if
 * it granted no WRs for it. It may round max_wr up, but never past the
 * ring, or post would fail with ENOMEM below the granted depth.
 */
static int srdma_map_wq(struct srdma_ring *r,
			const struct softrdma_ring_info *info, uint32_t max_wr,
			size_t min_slot_size, int cmd_fd)
{
	if (info->num_slots < max_wr)
		return EINVAL;
	if (!info->num_slots)
		return 0;

	return srdma_ring_map(r, info, min_slot_size, cmd_fd,
			      SRDMA_RING_PRODUCER);
}

static int srdma_map_rings(struct srdma_qp *qp,
			   const struct softrdma_create_qp_resp *drv,
			   int has_srq, int cmd_fd)
{
	const struct ibv_qp_cap *cap = &qp->cap;
	size_t sq_slot, rq_slot;
	int ret;

	/* Inline data sits where the SGEs would. */
	sq_slot = sizeof(struct softrdma_send_wqe) +
		  srdma_max((size_t)cap->max_send_sge *
			    sizeof(struct softrdma_sge),
			    cap->max_inline_data);
	rq_slot = sizeof(struct softrdma_recv_wqe) +
		  (size_t)cap->max_recv_sge * sizeof(struct softrdma_sge);

	ret = srdma_map_wq(&qp->sq, &drv->sq, cap->max_send_wr, sq_slot,
			   cmd_fd);
	if (ret)
		return ret;

	/* Receives go to an SRQ, or there are none (XRC). */
	if (has_srq)
		return 0;

	ret = srdma_map_wq(&qp->rq, &drv->rq, cap->max_recv_wr, rq_slot,
			   cmd_fd);
	if (ret)
		srdma_ring_unmap(&qp->sq);
	return ret;
}

/* Both create verbs come here, ibv_create_qp() as a PD-only attr_ex. */
static struct srdma_qp *srdma_qp_create(struct ibv_context *ibctx,
					struct ibv_qp_init_attr_ex *attr)
{
	struct srdma_create_qp_resp resp = {};
	struct ibv_create_qp_ex cmd = {};
	struct srdma_qp *qp;
	int ret;

	/* The only types post.c knows how to build WQEs for. */
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND:
		break;
	case IBV_QPT_XRC_RECV:
		/* No queue of its own: it only takes requests. */
		break;
	default:
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd, sizeof(cmd),
				    &resp.core, sizeof(resp) IF_PABI65(, NULL));
	if (ret)
		goto err_free;

	/*
	 * The granted capabilities, whichever command path was taken: over
	 * ioctl the core part of resp stays unwritten.
	 */
	qp->cap = attr->cap;

	ret = srdma_map_rings(qp, &resp.drv,
			      attr->srq || attr->qp_type == IBV_QPT_XRC_SEND ||
			      attr->qp_type == IBV_QPT_XRC_RECV,
			      ibctx->cmd_fd);
	if (ret)
		goto err_destroy;

	return qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *srdma_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct srdma_qp *qp;

	qp = srdma_qp_create(pd->context, &attr_ex);
	if (!qp)
		return NULL;

	/* ibv_create_qp() reports what the QP got in the caller's attr. */
	attr->cap = attr_ex.cap;
	return &qp->vqp.qp;
}

/* The parts of ibv_qp_init_attr_ex we implement. */
#define SRDMA_QP_INIT_ATTR_MASK	(IBV_QP_INIT_ATTR_PD | \
				 IBV_QP_INIT_ATTR_XRCD | \
				 IBV_QP_INIT_ATTR_CREATE_FLAGS | \
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

/*
 * Anything we would have to ignore to go on is EOPNOTSUPP, so callers (the
 * pyverbs tests among them) can tell a missing feature from a bad request.
 */
static int srdma_check_qp_init_attr(const struct ibv_qp_init_attr_ex *attr)
{
	if (attr->comp_mask & ~SRDMA_QP_INIT_ATTR_MASK)
		return EOPNOTSUPP;
	/* An XRC receive QP has a domain and no PD, the others a PD. */
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd ||
		    (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
			return EINVAL;
	} else if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		return EINVAL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		return srdma_check_send_ops_flags(attr->qp_type,
						  attr->send_ops_flags);
	return 0;
}

struct ibv_qp *srdma_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct srdma_qp *qp;
	int ret;

	ret = srdma_check_qp_init_attr(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	qp = srdma_qp_create(ibctx, attr);
	if (!qp)
		return NULL;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return &qp->vqp.qp;

	/* The wr_* ops post to the SQ, which all our QP types have. */
	if (!qp->sq.hdr) {
		srdma_destroy_qp(&qp->vqp.qp);
		errno = EINVAL;
		return NULL;
	}
	srdma_qp_init_wr_ops(qp, attr->send_ops_flags);
	/* Now ibv_qp_to_qp_ex() hands them out. */
	qp->vqp.comp_mask |= VERBS_QP_EX;
	return &qp->vqp.qp;
}

/*
 * A reset may rewind the kernel's view of the rings; take it over before
 * the next post. The lock keeps a concurrent poster (a misuse, but not
 * ours to crash on) from publishing a stale index.
 */
static void srdma_resync_wq(struct srdma_ring *r)
{
	if (!r->hdr)
		return;

	pthread_spin_lock(&r->lock);
	srdma_ring_sync(r, SRDMA_RING_PRODUCER);
	pthread_spin_unlock(&r->lock);
}

int srdma_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;

	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		srdma_resync_wq(&qp->sq);
		srdma_resync_wq(&qp->rq);
		/* XRC QPs lack one CQ or both. */
		if (ibqp->recv_cq)
			srdma_cq_clean(to_scq(ibqp->recv_cq), ibqp->qp_num);
		if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
			srdma_cq_clean(to_scq(ibqp->send_cq), ibqp->qp_num);
	}
	return 0;
}

int srdma_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr,
				&cmd, sizeof(cmd));
}

int srdma_destroy_qp(struct ibv_qp *ibqp)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	int ret;

	/* The kernel stops using the rings before they go away. */
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	srdma_ring_unmap(&qp->sq);
	srdma_ring_unmap(&qp->rq);
	free(qp);
	return 0;
}
