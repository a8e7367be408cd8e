// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: creation with shared send/receive rings, the verbs state
 * machine (modify/query), flushing, destruction, and the send doorbell.
 * Kernel QPs have the same rings in kernel memory (posted in kverbs.c),
 * among them the GSI QP, QP1, a UD QP the MAD layer sends CM MADs on.
 * An XRC initiator has an SQ only, an XRC target no ring (see xrc.c).
 */
#include <linux/log2.h>

#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

#define SRDMA_SEND_WQE_HDR	sizeof(struct softrdma_send_wqe)
#define SRDMA_RECV_WQE_HDR	sizeof(struct softrdma_recv_wqe)
#define SRDMA_SGE_SIZE		sizeof(struct softrdma_sge)

/*
 * QPNs are unique across all devices: a packet finds its QP by QPN alone,
 * whichever netdev (or loopback) it came in on. RCU readers: receive.
 */
static DEFINE_XARRAY_ALLOC(srdma_qp_xa);
static u32 srdma_qp_next;

struct srdma_qp *srdma_qp_lookup_rcu(u32 qpn)
{
	return xa_load(&srdma_qp_xa, qpn);
}

/* QP1 of @sdev: one per device, as a port has one. */
static int srdma_gsi_publish(struct srdma_qp *qp)
{
	struct srdma_dev *sdev = qp_sdev(qp);

	if (cmpxchg((struct srdma_qp **)&sdev->gsi_qp, NULL, qp))
		return -EBUSY;
	qp->ibqp.qp_num = 1;
	return 0;
}

static u32 srdma_send_slot_size(const struct ib_qp_cap *cap)
{
	u32 room = max_t(u32, cap->max_send_sge * SRDMA_SGE_SIZE,
			 cap->max_inline_data);

	return ALIGN(SRDMA_SEND_WQE_HDR + room, 16);
}

static int srdma_qp_check_cap(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > SRDMA_MAX_QP_WR ||
	    cap->max_recv_wr > SRDMA_MAX_QP_WR ||
	    cap->max_send_sge > SRDMA_MAX_SGE ||
	    cap->max_recv_sge > SRDMA_MAX_SGE ||
	    cap->max_inline_data > SRDMA_MAX_INLINE)
		return -EINVAL;
	return 0;
}

/* Size the rings and report what the QP really has back in @cap. */
static int srdma_qp_alloc_rings(struct srdma_qp *qp, struct ib_qp_cap *cap,
				struct ib_ucontext *uctx)
{
	u32 sslot = srdma_send_slot_size(cap);
	u32 rslot = ALIGN(SRDMA_RECV_WQE_HDR +
			  cap->max_recv_sge * SRDMA_SGE_SIZE, 16);
	int err;

	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		/* Requests only, taking WQEs off the SRQs they name. */
		memset(cap, 0, sizeof(*cap));
		qp->cap = *cap;
		return 0;
	}
	err = srdma_ring_alloc(&qp->sq, uctx,
			       roundup_pow_of_two(max(cap->max_send_wr, 1U)),
			       sslot);
	if (err)
		return err;
	cap->max_send_wr = qp->sq.num_slots;
	cap->max_inline_data = sslot - SRDMA_SEND_WQE_HDR;
	cap->max_send_sge = min_t(u32, SRDMA_MAX_SGE,
				  cap->max_inline_data / SRDMA_SGE_SIZE);
	if (qp->ibqp.srq || qp->ibqp.qp_type == IB_QPT_XRC_INI) {
		/* Receives come off the SRQ, or there are none. */
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		qp->cap = *cap;
		return 0;
	}
	err = srdma_ring_alloc(&qp->rq, uctx,
			       roundup_pow_of_two(max(cap->max_recv_wr, 1U)),
			       rslot);
	if (err) {
		srdma_ring_free(&qp->sq);
		return err;
	}
	cap->max_recv_wr = qp->rq.num_slots;
	cap->max_recv_sge = (rslot - SRDMA_RECV_WQE_HDR) / SRDMA_SGE_SIZE;
	qp->cap = *cap;
	return 0;
}

int srdma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibqp->device);
	struct srdma_qp *qp = to_sqp(ibqp);
	struct softrdma_create_qp_resp resp = {};
	struct srdma_ucontext *uctx;
	gfp_t gfp = srdma_gfp(udata);
	u32 qpn;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_XRC_INI:
		/* A kernel WR has no field for the target's SRQ. */
		if (!udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		/* The core creates it for its users, with no udata. */
		if (udata || !init->xrcd)
			return -EINVAL;
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != SRDMA_PORT)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = srdma_qp_check_cap(init);
	if (err)
		return err;
	err = srdma_count_get(&sdev->nqp, SRDMA_MAX_QP);
	if (err)
		return err;

	uctx = rdma_udata_to_drv_context(udata, struct srdma_ucontext, ibuc);
	mutex_init(&qp->mod_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->post_lock);
	spin_lock_init(&qp->cc.lock);
	qp->state = IB_QPS_RESET;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;

	err = dst_cache_init(&qp->path.dst_cache, gfp);
	if (err)
		goto err_count;
	err = srdma_qp_alloc_rings(qp, &init->cap, uctx ? &uctx->ibuc : NULL);
	if (err)
		goto err_dst;
	err = srdma_req_init(qp, gfp);
	if (err)
		goto err_rings;
	err = srdma_resp_init(qp, gfp);
	if (err)
		goto err_req;

	if (init->qp_type == IB_QPT_GSI) {
		err = srdma_gsi_publish(qp);
		if (err)
			goto err_resp;
		return 0;
	}
	err = xa_alloc_cyclic(&srdma_qp_xa, &qpn, qp,
			      XA_LIMIT(SRDMA_MIN_QPN, SRDMA_MAX_QPN),
			      &srdma_qp_next, GFP_KERNEL);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_resp;
	}
	ibqp->qp_num = qpn;
	if (!udata)
		return 0;

	srdma_ring_info(&qp->sq, &resp.sq);
	srdma_ring_info(&qp->rq, &resp.rq);
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_qpn;
	return 0;

err_qpn:
	xa_erase(&srdma_qp_xa, qpn);
	synchronize_rcu();
err_resp:
	srdma_resp_fini(qp);
err_req:
	srdma_req_fini(qp);
err_rings:
	srdma_ring_free(&qp->rq);
	srdma_ring_free(&qp->sq);
err_dst:
	dst_cache_destroy(&qp->path.dst_cache);
err_count:
	atomic_dec(&sdev->nqp);
	return err;
}

int srdma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_ring sq;

	/*
	 * After the grace period no packet can reach the QP any more, and
	 * kernel poll_cq drops its completions. Expedited: a process that
	 * exits with thousands of QPs waits for one grace period per QP,
	 * 17 ms each in a test guest (4,096 QPs took 70 s to destroy).
	 */
	if (ibqp->qp_type == IB_QPT_GSI)
		rcu_assign_pointer(qp_sdev(qp)->gsi_qp, NULL);
	else
		xa_erase(&srdma_qp_xa, ibqp->qp_num);
	synchronize_rcu_expedited();
	srdma_req_fini(qp);
	srdma_resp_fini(qp);
	/* A dump's query_qp may still copy the attributes: see srdma_qp. */
	mutex_lock(&qp->mod_lock);
	if (qp->have_av)
		rdma_destroy_ah_attr(&qp->attr.ah_attr);
	qp->have_av = false;
	mutex_unlock(&qp->mod_lock);
	spin_lock_bh(&qp->sq_lock);
	srdma_ring_move(&sq, &qp->sq);
	spin_unlock_bh(&qp->sq_lock);
	srdma_ring_free(&qp->rq);
	srdma_ring_free(&sq);
	dst_cache_destroy(&qp->path.dst_cache);
	atomic_dec(&qp_sdev(qp)->nqp);
	return 0;
}

enum ib_wc_opcode srdma_wr_to_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	/* User QPs only: the kernel's own WRs cannot ask for these. */
	case SOFTRDMA_WR_FLUSH:
		return (enum ib_wc_opcode)SOFTRDMA_WC_FLUSH;
	case SOFTRDMA_WR_ATOMIC_WRITE:
		return (enum ib_wc_opcode)SOFTRDMA_WC_ATOMIC_WRITE;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case SRDMA_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Complete every posted WQE of @ring with a flush error, if the QP is
 * still in ERR once @lock is held: a flush decided before a modify took
 * the QP on to RESET (and maybe back to RTS) must not eat the new work.
 */
static void srdma_flush_ring(struct srdma_qp *qp, struct srdma_ring *ring,
			     spinlock_t *lock, struct ib_cq *ibcq, bool send)
{
	struct softrdma_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
	};
	int n;

	spin_lock_bh(lock);
	if (READ_ONCE(qp->state) != IB_QPS_ERR) {
		spin_unlock_bh(lock);
		return;
	}
	/* A receive WQE the responder already took off the ring. */
	if (!send && qp->resp.have_rwqe) {
		cqe.wr_id = qp->resp.rwqe->wr_id;
		cqe.opcode = IB_WC_RECV;
		if (!srdma_cq_post(to_scq(ibcq), &cqe, false))
			qp->resp.have_rwqe = false;
	}
	/* An SRQ keeps its WQEs for the other QPs. */
	if (!ring->hdr)
		n = 0;
	else
		n = send ? srdma_sq_pending(qp) : srdma_ring_avail(ring);
	while (n-- > 0) {
		if (send) {
			const struct softrdma_send_wqe *wqe =
				srdma_sq_wqe(qp, ring->idx);

			cqe.wr_id = READ_ONCE(wqe->wr_id);
			cqe.opcode = srdma_wr_to_wc_opcode(READ_ONCE(wqe->opcode));
		} else {
			const struct softrdma_recv_wqe *wqe =
				srdma_ring_slot(ring, ring->idx);

			cqe.wr_id = READ_ONCE(wqe->wr_id);
			cqe.opcode = IB_WC_RECV;
		}
		/* The slot is free before its completion shows (see req.c). */
		srdma_ring_consume(ring);
		if (srdma_cq_post(to_scq(ibcq), &cqe, false))
			break;	/* CQ overrun: reported by the CQ */
	}
	spin_unlock_bh(lock);
}

static void srdma_qp_flush(struct srdma_qp *qp)
{
	if (qp->sq.hdr)
		srdma_flush_ring(qp, &qp->sq, &qp->sq_lock, qp->ibqp.send_cq,
				 true);
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		srdma_xrc_flush_rwqe(qp);
	else if (qp->ibqp.recv_cq)
		srdma_flush_ring(qp, &qp->rq, &qp->rq_lock, qp->ibqp.recv_cq,
				 false);
}

static void srdma_qp_event(struct srdma_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * In ERR: flush the work, and drop the packets kept past a gap, which the
 * QP will not take any more (they count against the device's cap). A QP
 * on an SRQ takes no more WQEs off it once there, which its owner learns
 * from the last-WQE-reached event (IBA 11.6.3.4), raised on entering ERR.
 */
static void srdma_qp_in_err(struct srdma_qp *qp, bool entered)
{
	srdma_qp_flush(qp);
	spin_lock_bh(&qp->sq_lock);
	srdma_reorder_purge(qp_sdev(qp), &qp->comp.ooo);
	spin_unlock_bh(&qp->sq_lock);
	spin_lock_bh(&qp->rq_lock);
	srdma_reorder_purge(qp_sdev(qp), &qp->resp.ooo);
	spin_unlock_bh(&qp->rq_lock);
	if (entered && qp->ibqp.srq)
		srdma_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/**
 * srdma_qp_error - the transport hit a fatal error on @qp
 * @qp: the QP; no QP lock held
 * @event: affiliated asynchronous event to raise, or SRDMA_NO_EVENT when
 *	a completion reports the error (retries exhausted, a NAK, ...)
 *
 * The QP enters ERR and its outstanding work is flushed; the event is
 * raised only by the error that moved it there. A QP a modify took back
 * to RESET or INIT meanwhile has no work left to fail: it stays there.
 * State changes are compare-and-swaps (see srdma_modify_qp()), so that
 * neither this nor a modify overwrites what the other just set.
 */
void srdma_qp_error(struct srdma_qp *qp, int event)
{
	enum ib_qp_state old = READ_ONCE(qp->state), seen;

	for (;;) {
		if (old == IB_QPS_RESET || old == IB_QPS_INIT)
			return;
		seen = cmpxchg(&qp->state, old, IB_QPS_ERR);
		if (seen == old)
			break;
		old = seen;
	}
	if (old != IB_QPS_ERR && event >= 0)
		srdma_qp_event(qp, event);
	srdma_qp_in_err(qp, old != IB_QPS_ERR);
}

/* Values the state machine check does not cover. */
static int srdma_qp_check_attr(struct srdma_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != SRDMA_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SRDMA_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SRDMA_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	/* RoCE addresses are IP addresses: the AV needs its GRH. */
	if ((mask & IB_QP_AV) &&
	    (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH) ||
	     !attr->ah_attr.grh.sgid_attr))
		return -EINVAL;
	return 0;
}

/* Keep the attributes modify_qp set, for query_qp and the transport. */
static void srdma_qp_store_attr(struct srdma_qp *qp, struct ib_qp_attr *attr,
				int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU) {
		a->path_mtu = attr->path_mtu;
		WRITE_ONCE(qp->mtu, ib_mtu_enum_to_int(attr->path_mtu));
	}
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num & 0xffffff;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV) {
		if (qp->have_av)
			rdma_replace_ah_attr(&a->ah_attr, &attr->ah_attr);
		else
			rdma_copy_ah_attr(&a->ah_attr, &attr->ah_attr);
		qp->have_av = true;
	}
}

int srdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->mod_lock);
	cur = qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	err = -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		goto out;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out;
	err = srdma_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;

	/*
	 * The path first: a modify that fails leaves the QP as it was, with
	 * no attribute (the MTU the read worker uses among them) changed.
	 * An INIT QP sends nothing, so the path may be rewritten now.
	 */
	if (next == IB_QPS_RTR && cur == IB_QPS_INIT && !srdma_qp_is_ud(qp)) {
		err = srdma_path_init(&qp->path, mask & IB_QP_AV ?
				      &attr->ah_attr : &qp->attr.ah_attr,
				      ibqp->qp_num);
		if (err)
			goto out;
	}
	srdma_qp_store_attr(qp, attr, mask);
	if (next == IB_QPS_RTR && cur == IB_QPS_INIT) {
		if (srdma_qp_is_ud(qp))
			qp->mtu = ib_mtu_enum_to_int(srdma_active_mtu(qp_sdev(qp)));
		srdma_resp_start(qp);
	}
	if (next == IB_QPS_RTS && cur == IB_QPS_RTR)
		srdma_req_start(qp);
	/*
	 * A transport error (srdma_qp_error()) may have moved the QP to ERR
	 * since @cur was read, and flushed its rings: the error wins, for
	 * going on from the flushed rings would break the SQ's indexes.
	 */
	if (next == IB_QPS_ERR) {
		cur = xchg(&qp->state, next);
	} else if (cmpxchg(&qp->state, cur, next) != cur) {
		err = -EINVAL;
		goto out;
	}

	switch (next) {
	case IB_QPS_RESET:
		/* Posted work is discarded, not completed. */
		spin_lock_bh(&qp->sq_lock);
		if (qp->sq.hdr)
			srdma_ring_reset(&qp->sq);
		spin_unlock_bh(&qp->sq_lock);
		spin_lock_bh(&qp->rq_lock);
		if (qp->rq.hdr)
			srdma_ring_reset(&qp->rq);
		qp->resp.have_rwqe = false;
		spin_unlock_bh(&qp->rq_lock);
		break;
	case IB_QPS_ERR:
		srdma_qp_in_err(qp, cur != IB_QPS_ERR);
		break;
	case IB_QPS_SQD:
		/* The requester starts nothing new: report the SQ drained. */
		if (cur != IB_QPS_SQD && qp->attr.en_sqd_async_notify)
			srdma_qp_event(qp, IB_EVENT_SQ_DRAINED);
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_SQD)
			srdma_req_run(qp);	/* what was posted meanwhile */
		break;
	default:
		break;
	}
out:
	mutex_unlock(&qp->mod_lock);
	return err;
}

int srdma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct srdma_qp *qp = to_sqp(ibqp);

	mutex_lock(&qp->mod_lock);
	*attr = qp->attr;
	attr->ah_attr.grh.sgid_attr = NULL;	/* the caller holds no ref */
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->cap = qp->cap;
	attr->sq_draining = 0;
	mutex_unlock(&qp->mod_lock);

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = qp->cap;
	init->srq = ibqp->srq;
	init->xrcd = ibqp->xrcd;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/**
 * srdma_fill_res_qp_entry - a QP's state for "rdma -dd resource show qp",
 * in a nest of driver attributes as mlx5 gives its own
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * Congestion control (cc.c), the requester's progress and, for a
 * connected QP, the responder's.
 */
int srdma_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct nlattr *nest;

	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (srdma_cc_fill_res(msg, qp) || srdma_req_fill_res(msg, qp) ||
	    (!srdma_qp_is_ud(qp) && srdma_resp_fill_res(msg, qp))) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * The send doorbell, also run from the requester's work item: new WQEs
 * are in the rings. In ERR they complete as flushed.
 */
int srdma_qp_doorbell(struct srdma_qp *qp)
{
	if (!qp->sq.hdr)
		return -EINVAL;		/* an XRC target sends nothing */
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_ERR:
		srdma_qp_flush(qp);
		return 0;
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		return -EINVAL;
	default:
		srdma_req_run(qp);	/* in SQD it starts nothing */
		return 0;
	}
}

/*
 * Userspace wrote WQEs into the SQ ring and calls the zero-WR POST_SEND
 * command: the requester sends from this context. Kernel consumers post
 * WRs.
 */
int srdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);

	/* A user's XRC target is the core's shadow of ours: no queue. */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!ibqp->uobject)
		return srdma_kpost_send(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	return srdma_qp_doorbell(qp);
}

/* Userspace posts receives through the ring, with no system call. */
int srdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (ibqp->uobject) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	return srdma_kpost_recv(to_sqp(ibqp), wr, bad_wr);
}
