/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Posting work requests: WQEs go straight into the shared rings. Receives
 * need no system call; sends ring one doorbell per call.
 */
#include <errno.h>
#include <string.h>

#include "send.h"
#include "softrdma.h"

/* Total inline payload; num_sge is already known to be in range. */
static uint64_t srdma_inline_len(const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len;
}

/*
 * 0 if wr may be posted on qp, else the error for it. A type 1 window is
 * bound through ibv_bind_mw() only (mw_type 1 allowed), type 2 through
 * post_send only.
 */
static int srdma_check_send_wr(const struct srdma_qp *qp, uint32_t ops,
			       const struct ibv_send_wr *wr,
			       enum ibv_mw_type mw_type)
{
	uint32_t op = (uint32_t)wr->opcode;

	if (!srdma_op_in(ops, op))
		return EINVAL;
	if ((uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (!srdma_op_in(SRDMA_INLINE_OPS, op))
			return EINVAL;
		if (srdma_inline_len(wr) > qp->cap.max_inline_data)
			return EINVAL;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW &&
	    (!wr->bind_mw.mw || wr->bind_mw.mw->type != mw_type))
		return EINVAL;
	return 0;
}

/* wr passed srdma_check_send_wr(); slot is ours until published. */
static void srdma_write_send_wqe(void *slot, const struct srdma_qp *qp,
				 const struct ibv_send_wr *wr)
{
	uint32_t op = (uint32_t)wr->opcode;
	struct softrdma_send_wqe *wqe;
	int i;

	wqe = srdma_wqe_start(slot, wr->wr_id, op, wr->send_flags);
	/* Bit for bit, like ibv_send_wr: imm (big endian) or rkey. */
	if (srdma_op_in(SRDMA_EX_OPS, op))
		wqe->ex = wr->imm_data;

	if (wr->opcode == IBV_WR_BIND_MW)
		srdma_wqe_set_bind(wqe, wr->bind_mw.mw->rkey, wr->bind_mw.rkey,
				   &wr->bind_mw.bind_info);
	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		srdma_wqe_set_ud(wqe, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				 wr->wr.ud.remote_qkey);
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		srdma_wqe_set_rdma(wqe, wr->wr.rdma.remote_addr,
				   wr->wr.rdma.rkey);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		srdma_wqe_set_atomic(wqe, wr->wr.atomic.remote_addr,
				     wr->wr.atomic.compare_add,
				     wr->wr.atomic.swap, wr->wr.atomic.rkey);
		break;
	default:
		break;
	}

	if (wr->send_flags & IBV_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++)
			srdma_wqe_add_inline(wqe,
				(const void *)(uintptr_t)wr->sg_list[i].addr,
				wr->sg_list[i].length);
	} else {
		srdma_wqe_set_sges(wqe, wr->sg_list, wr->num_sge);
	}
}

static int srdma_post_send_mw(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			      struct ibv_send_wr **bad_wr,
			      enum ibv_mw_type mw_type)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_ring *sq = &qp->sq;
	uint32_t ops = srdma_qp_send_ops(ibqp->qp_type);
	struct ibv_send_wr *first = wr;
	int posted = 0;
	void *slot;
	int ret = 0;

	if (!srdma_sq_open(qp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&sq->lock);
	if (!srdma_ring_live(sq))
		ret = EIO;
	for (; wr && !ret; wr = wr->next) {
		ret = srdma_check_send_wr(qp, ops, wr, mw_type);
		if (ret)
			break;
		slot = srdma_ring_prod_slot(sq);
		if (!slot) {
			ret = ENOMEM;
			break;
		}
		srdma_write_send_wqe(slot, qp, wr);
		srdma_ring_advance(sq);
		posted++;
	}
	if (posted)
		srdma_ring_prod_publish(sq);
	pthread_spin_unlock(&sq->lock);

	if (ret)
		*bad_wr = wr;

	/* WRs before a bad one stay posted, so they get their doorbell. */
	if (posted) {
		int db = srdma_sq_doorbell(ibqp);

		/*
		 * The kernel refused the doorbell (a dead device, a state
		 * change racing with us, work it cannot do): the WQEs are
		 * in the ring but need not ever run. Fail the whole call
		 * rather than have the caller wait for completions.
		 */
		if (db && !ret) {
			*bad_wr = first;
			ret = db;
		}
	}
	return ret;
}

int srdma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	return srdma_post_send_mw(ibqp, wr, bad_wr, IBV_MW_TYPE_2);
}

/* A type 1 bind is a bind WQE under the window's next key. */
int srdma_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = bind->bind_info,
		},
	}, *bad;
	int ret;

	ret = srdma_post_send_mw(ibqp, &wr, &bad, IBV_MW_TYPE_1);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

static void srdma_write_recv_wqe(void *slot, const struct ibv_recv_wr *wr)
{
	struct softrdma_recv_wqe wqe = {
		.wr_id = wr->wr_id,
		.num_sge = wr->num_sge,
	};

	memcpy((uint8_t *)slot + sizeof(wqe), wr->sg_list,
	       (size_t)wr->num_sge * sizeof(struct softrdma_sge));
	memcpy(slot, &wqe, sizeof(wqe));
}

/* The kernel takes receive WQEs as packets arrive: no doorbell. */
static int srdma_post_ring_recv(struct srdma_ring *rq, uint32_t max_sge,
				struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr)
{
	int posted = 0;
	void *slot;
	int ret = 0;

	pthread_spin_lock(&rq->lock);
	if (!srdma_ring_live(rq))
		ret = EIO;
	for (; wr && !ret; wr = wr->next) {
		if ((uint32_t)wr->num_sge > max_sge) {
			ret = EINVAL;
			break;
		}
		slot = srdma_ring_prod_slot(rq);
		if (!slot) {
			ret = ENOMEM;
			break;
		}
		srdma_write_recv_wqe(slot, wr);
		srdma_ring_advance(rq);
		posted++;
	}
	if (posted)
		srdma_ring_prod_publish(rq);
	pthread_spin_unlock(&rq->lock);

	if (ret)
		*bad_wr = wr;
	return ret;
}

int srdma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);

	/*
	 * No RQ: the QP receives through an SRQ, or was made without one.
	 * A WQE posted in RESET would outlive the reset (see post_send).
	 */
	if (!qp->rq.hdr || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	return srdma_post_ring_recv(&qp->rq, qp->cap.max_recv_sge, wr, bad_wr);
}

int srdma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	return srdma_post_ring_recv(&srq->rq, srq->max_sge, wr, bad_wr);
}
