/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ibv_wr_* posting API of extended QPs (ibv_qp_ex). wr_start takes
 * the SQ lock for the batch; each builder (wr_send, wr_rdma_write, ...)
 * starts a WQE in the next slot with the wr_id and wr_flags the caller
 * left in ibv_qp_ex; the setters (wr_set_sge, wr_set_ud_addr, ...) fill
 * in the WQE built last. wr_complete publishes the whole batch and rings
 * one doorbell; wr_abort drops it. The WQE bytes come from the same
 * helpers as post_send's (send.h).
 *
 * The builders and setters return nothing: the first error of a batch is
 * kept, makes the rest of it a no-op, and is what wr_complete returns,
 * with nothing of the batch posted.
 */
#include <errno.h>
#include <string.h>

#include "send.h"
#include "softrdma.h"

/* The builders there are, as SRDMA_OP() bits: every post_send opcode. */
#define SRDMA_WR_OPS	(SRDMA_OP(SEND) | SRDMA_OP(SEND_WITH_IMM) | \
			 SRDMA_OP(SEND_WITH_INV) | \
			 SRDMA_OP(RDMA_WRITE) | \
			 SRDMA_OP(RDMA_WRITE_WITH_IMM) | \
			 SRDMA_OP(RDMA_READ) | \
			 SRDMA_OP(ATOMIC_CMP_AND_SWP) | \
			 SRDMA_OP(ATOMIC_FETCH_AND_ADD) | \
			 SRDMA_OP(LOCAL_INV) | SRDMA_OP(BIND_MW))

/* For those, extended ops and post_send opcodes share their bits. */
#define SRDMA_ASSERT_EX_OP(op)						\
	_Static_assert(IBV_QP_EX_WITH_##op == SRDMA_OP(op),		\
		       "IBV_QP_EX_WITH_" #op)
SRDMA_ASSERT_EX_OP(RDMA_WRITE);
SRDMA_ASSERT_EX_OP(RDMA_WRITE_WITH_IMM);
SRDMA_ASSERT_EX_OP(SEND);
SRDMA_ASSERT_EX_OP(SEND_WITH_IMM);
SRDMA_ASSERT_EX_OP(RDMA_READ);
SRDMA_ASSERT_EX_OP(ATOMIC_CMP_AND_SWP);
SRDMA_ASSERT_EX_OP(ATOMIC_FETCH_AND_ADD);
SRDMA_ASSERT_EX_OP(LOCAL_INV);
SRDMA_ASSERT_EX_OP(BIND_MW);
SRDMA_ASSERT_EX_OP(SEND_WITH_INV);

static struct srdma_qp *to_sqpx(struct ibv_qp_ex *qpx)
{
	return srdma_container_of(qpx, struct srdma_qp, vqp.qp_ex);
}

static void srdma_wr_fail(struct srdma_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/*
 * Builders: take the next slot and start a WQE of @opcode there. The
 * payload is the setters' to give, so IBV_SEND_INLINE in wr_flags means
 * nothing here: wr_set_inline_data() sets it. NULL after an error.
 */
static struct softrdma_send_wqe *srdma_wr_build(struct ibv_qp_ex *qpx,
						uint32_t opcode)
{
	struct srdma_qp *qp = to_sqpx(qpx);
	void *slot;

	if (qp->wr_err)
		return NULL;
	slot = srdma_ring_prod_slot(&qp->sq);
	if (!slot) {
		srdma_wr_fail(qp, ENOMEM);
		return NULL;
	}
	/* Only our index moves: the kernel sees nothing before complete. */
	srdma_ring_advance(&qp->sq);
	qp->wr_cur = srdma_wqe_start(slot, qpx->wr_id, opcode,
				     qpx->wr_flags & ~IBV_SEND_INLINE);
	return qp->wr_cur;
}

static void srdma_wr_send(struct ibv_qp_ex *qpx)
{
	srdma_wr_build(qpx, IBV_WR_SEND);
}

static void srdma_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct softrdma_send_wqe *wqe = srdma_wr_build(qpx,
						       IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex = imm_data;
}

/* The WQE's ex holds an rkey to invalidate in host order, as ibv_send_wr. */
static void srdma_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct softrdma_send_wqe *wqe = srdma_wr_build(qpx,
						       IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex = (__be32)invalidate_rkey;
}

static void srdma_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct softrdma_send_wqe *wqe = srdma_wr_build(qpx, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex = (__be32)invalidate_rkey;
}

/* A type 2 window, as post_send binds; type 1 goes through ibv_bind_mw. */
static void srdma_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct softrdma_send_wqe *wqe;

	if (!mw || mw->type != IBV_MW_TYPE_2 || !bind_info) {
		srdma_wr_fail(to_sqpx(qpx), EINVAL);
		return;
	}
	wqe = srdma_wr_build(qpx, IBV_WR_BIND_MW);
	if (wqe)
		srdma_wqe_set_bind(wqe, mw->rkey, rkey, bind_info);
}

/*
 * IBA 1.5 memory placement, ibv_wr_* only (ibv_send_wr has no fields for
 * them), RC only. The kernel checks length and alignment, as a peer does.
 */
static void srdma_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr, const void *atomic_wr)
{
	struct softrdma_send_wqe *wqe = srdma_wr_build(qpx,
						       SOFTRDMA_WR_ATOMIC_WRITE);

	if (!wqe)
		return;
	wqe->wr.atomic_write.remote_addr = remote_addr;
	wqe->wr.atomic_write.rkey = rkey;
	memcpy(wqe->wr.atomic_write.data, atomic_wr,
	       sizeof(wqe->wr.atomic_write.data));
}

#if IBVERBS_RELEASE >= 45	/* ibv_wr_flush() */
static void srdma_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			   uint64_t remote_addr, size_t len, uint8_t type,
			   uint8_t level)
{
	struct softrdma_send_wqe *wqe;

	if (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    level > IBV_FLUSH_MR) {
		srdma_wr_fail(to_sqpx(qpx), EINVAL);
		return;
	}
	wqe = srdma_wr_build(qpx, SOFTRDMA_WR_FLUSH);
	if (!wqe)
		return;
	wqe->wr.flush.remote_addr = remote_addr;
	wqe->wr.flush.rkey = rkey;
	wqe->wr.flush.type = type;
	wqe->wr.flush.level = level;
	wqe->wr.flush.length = len;
}
#endif

static void srdma_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				uint64_t remote_addr)
{
	struct softrdma_send_wqe *wqe = srdma_wr_build(qpx, IBV_WR_RDMA_WRITE);

	if (wqe)
		srdma_wqe_set_rdma(wqe, remote_addr, rkey);
}

static void srdma_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	struct softrdma_send_wqe *wqe;

	wqe = srdma_wr_build(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);
	if (!wqe)
		return;
	srdma_wqe_set_rdma(wqe, remote_addr, rkey);
	wqe->ex = imm_data;
}

static void srdma_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	struct softrdma_send_wqe *wqe = srdma_wr_build(qpx, IBV_WR_RDMA_READ);

	if (wqe)
		srdma_wqe_set_rdma(wqe, remote_addr, rkey);
}

static void srdma_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	struct softrdma_send_wqe *wqe;

	wqe = srdma_wr_build(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);
	if (wqe)
		srdma_wqe_set_atomic(wqe, remote_addr, compare, swap, rkey);
}

static void srdma_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	struct softrdma_send_wqe *wqe;

	wqe = srdma_wr_build(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);
	if (wqe)
		srdma_wqe_set_atomic(wqe, remote_addr, add, 0, rkey);
}

/* Setters: the WQE built last, or NULL (a setter before any builder). */
static struct softrdma_send_wqe *srdma_wr_cur(struct srdma_qp *qp)
{
	if (!qp->wr_err && !qp->wr_cur)
		srdma_wr_fail(qp, EINVAL);
	return qp->wr_cur;
}

/* Only installed on UD QPs: on others wr.ud would overwrite wr.rdma. */
static void srdma_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct srdma_qp *qp = to_sqpx(qpx);
	struct softrdma_send_wqe *wqe = srdma_wr_cur(qp);

	if (!wqe)
		return;
	if (!ah) {
		srdma_wr_fail(qp, EINVAL);
		return;
	}
	srdma_wqe_set_ud(wqe, ah, remote_qpn, remote_qkey);
}

/* XRC: the SRQ at the target the WQE's message goes to. */
static void srdma_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct softrdma_send_wqe *wqe = srdma_wr_cur(to_sqpx(qpx));

	if (wqe)
		wqe->xrc_srqn = remote_srqn;
}

static void srdma_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct srdma_qp *qp = to_sqpx(qpx);
	struct softrdma_send_wqe *wqe = srdma_wr_cur(qp);

	if (!wqe)
		return;
	if (num_sge > qp->cap.max_send_sge) {
		srdma_wr_fail(qp, EINVAL);
		return;
	}
	srdma_wqe_set_sges(wqe, sg_list, num_sge);
}

static void srdma_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	srdma_wr_set_sge_list(qpx, 1, &sge);
}

static void srdma_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					  size_t num_buf,
					  const struct ibv_data_buf *buf_list)
{
	struct srdma_qp *qp = to_sqpx(qpx);
	struct softrdma_send_wqe *wqe = srdma_wr_cur(qp);
	size_t total = 0;
	size_t i;

	if (!wqe)
		return;
	/* Reads and atomics have nothing of ours to carry. */
	if (!srdma_op_in(SRDMA_INLINE_OPS, wqe->opcode)) {
		srdma_wr_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++) {
		total += buf_list[i].length;
		/* Checked as it grows, so the sum cannot wrap. */
		if (total > qp->cap.max_inline_data) {
			srdma_wr_fail(qp, EINVAL);
			return;
		}
	}

	srdma_wqe_clear_payload(wqe);
	for (i = 0; i < num_buf; i++)
		srdma_wqe_add_inline(wqe, buf_list[i].addr, buf_list[i].length);
	/* An empty list still makes an inline (zero-length) payload. */
	wqe->send_flags |= IBV_SEND_INLINE;
}

static void srdma_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	srdma_wr_set_inline_data_list(qpx, 1, &buf);
}

static void srdma_wr_start(struct ibv_qp_ex *qpx)
{
	struct srdma_qp *qp = to_sqpx(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_first = qp->sq.idx;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
}

/* Forget the batch: the slots it took were never published. */
static void srdma_wr_drop(struct srdma_qp *qp)
{
	qp->sq.idx = qp->wr_first;
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static int srdma_wr_complete(struct ibv_qp_ex *qpx)
{
	struct srdma_qp *qp = to_sqpx(qpx);
	int ret = qp->wr_err;
	bool posted;

	/* See srdma_sq_open(): nothing may be left behind in the ring. */
	if (!ret && !srdma_sq_open(qp))
		ret = EINVAL;
	/* Once per batch: a dead ring's WQEs are dropped, never published. */
	if (!ret && !srdma_ring_live(&qp->sq))
		ret = EIO;
	if (ret) {
		srdma_wr_drop(qp);
		return ret;
	}

	posted = qp->sq.idx != qp->wr_first;
	if (posted)
		srdma_ring_prod_publish(&qp->sq);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);

	/* As post_send: a refused doorbell fails the call. */
	return posted ? srdma_sq_doorbell(&qp->vqp.qp) : 0;
}

static void srdma_wr_abort(struct ibv_qp_ex *qpx)
{
	srdma_wr_drop(to_sqpx(qpx));
}

/*
 * 0 if QPs of @type have a builder for every IBV_QP_EX_WITH_* bit in
 * @send_ops_flags; else EOPNOTSUPP, so that callers (pyverbs' tests among
 * them) skip what we lack (TSO, ...) instead of failing.
 */
/* Builders with no post_send opcode: RC's memory placement. */
static uint64_t srdma_placement_ops(enum ibv_qp_type type)
{
	if (type != IBV_QPT_RC)
		return 0;
#if IBVERBS_RELEASE >= 45
	return IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_FLUSH;
#else
	return IBV_QP_EX_WITH_ATOMIC_WRITE;
#endif
}

int srdma_check_send_ops_flags(enum ibv_qp_type type, uint64_t send_ops_flags)
{
	uint64_t ops = (srdma_qp_send_ops(type) & SRDMA_WR_OPS) |
		       srdma_placement_ops(type);

	return send_ops_flags & ~ops ? EOPNOTSUPP : 0;
}

/* The ops of @qp, whose send_ops_flags passed the check above. */
void srdma_qp_init_wr_ops(struct srdma_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	/* Only the builders asked for, as rdma-core's providers do. */
	if (send_ops_flags & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = srdma_wr_send;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = srdma_wr_send_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = srdma_wr_rdma_write;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = srdma_wr_rdma_write_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = srdma_wr_rdma_read;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = srdma_wr_atomic_cmp_swp;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = srdma_wr_atomic_fetch_add;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = srdma_wr_send_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV)
		qpx->wr_local_inv = srdma_wr_local_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = srdma_wr_bind_mw;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qpx->wr_atomic_write = srdma_wr_atomic_write;
#if IBVERBS_RELEASE >= 45
	if (send_ops_flags & IBV_QP_EX_WITH_FLUSH)
		qpx->wr_flush = srdma_wr_flush;
#endif

	if (qp->vqp.qp.qp_type == IBV_QPT_UD)
		qpx->wr_set_ud_addr = srdma_wr_set_ud_addr;
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = srdma_wr_set_xrc_srqn;
	qpx->wr_set_sge = srdma_wr_set_sge;
	qpx->wr_set_sge_list = srdma_wr_set_sge_list;
	qpx->wr_set_inline_data = srdma_wr_set_inline_data;
	qpx->wr_set_inline_data_list = srdma_wr_set_inline_data_list;

	qpx->wr_start = srdma_wr_start;
	qpx->wr_complete = srdma_wr_complete;
	qpx->wr_abort = srdma_wr_abort;
}
