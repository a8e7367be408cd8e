// SPDX-License-Identifier: GPL-2.0
/*
 * RC, UC and XRC target responder: executes SEND, RDMA WRITE, RDMA READ
 * and atomic requests in PSN order and completes receive WQEs. RC and XRC
 * answer with ACKs, read responses, atomic ACKs and NAKs (answer.c); UC
 * answers nothing and drops a message it cannot take whole. Runs in
 * softirq under qp->rq_lock.
 *
 * A request's executor returns 0 when done, -EAGAIN when it cannot be
 * taken now (RNR), -EBUSY when the queue of answers is full (dropped, the
 * requester asks again) and -EPROTO when it was NAKed: the QP fails.
 */
#include <rdma/restrack.h>

#include "resp.h"

/* @gfp: srdma_gfp() of the QP's owner */
int srdma_resp_init(struct srdma_qp *qp, gfp_t gfp)
{
	u32 slot = qp->ibqp.srq ? to_ssrq(qp->ibqp.srq)->rq.slot_size :
				  qp->rq.slot_size;

	/* An XRC target takes WQEs off any SRQ of its domain. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		slot = sizeof(struct softrdma_recv_wqe) +
		       SRDMA_MAX_SGE * sizeof(struct softrdma_sge);

	INIT_WORK(&qp->resp.rd_work, srdma_resp_read_work);
	qp->resp.rwqe = kzalloc(slot, gfp);
	qp->resp.rd = kcalloc(SRDMA_ANSWERS, sizeof(*qp->resp.rd), gfp);
	qp->resp.held = kcalloc(SRDMA_MAX_RD_ATOMIC, sizeof(*qp->resp.held), gfp);
	if (!qp->resp.rwqe || !qp->resp.rd || !qp->resp.held ||
	    ((qp->ibqp.qp_type == IB_QPT_RC ||
	      qp->ibqp.qp_type == IB_QPT_XRC_TGT) &&
	     srdma_reorder_init(&qp->resp.ooo, gfp))) {
		srdma_resp_fini(qp);
		return -ENOMEM;
	}
	return 0;
}

/* No packet reaches the QP any more (see srdma_destroy_qp()). */
void srdma_resp_fini(struct srdma_qp *qp)
{
	cancel_work_sync(&qp->resp.rd_work);
	srdma_reorder_fini(qp_sdev(qp), &qp->resp.ooo);
	kfree(qp->resp.held);
	qp->resp.held = NULL;
	kfree(qp->resp.rd);
	qp->resp.rd = NULL;
	kfree(qp->resp.rwqe);
	qp->resp.rwqe = NULL;
}

/* Entering RTR: the receive PSN takes effect, no message is open. */
void srdma_resp_start(struct srdma_qp *qp)
{
	spin_lock_bh(&qp->rq_lock);
	qp->resp.epsn = qp->attr.rq_psn;
	qp->resp.msn = 0;
	qp->resp.nak_sent = false;
	WRITE_ONCE(qp->req.peer_rxe_flush, false);
	qp->resp.have_rwqe = false;
	qp->resp.msg_open = 0;
	qp->resp.rd_tail = qp->resp.rd_head;
	/* Nothing held from before: not even as bytes a bug could reach. */
	qp->resp.held_start = qp->resp.held_head;
	memset(qp->resp.held, 0, SRDMA_MAX_RD_ATOMIC * sizeof(*qp->resp.held));
	srdma_reorder_purge(qp_sdev(qp), &qp->resp.ooo);
	spin_unlock_bh(&qp->rq_lock);
}

/**
 * srdma_resp_fill_res - the responder's progress, for "rdma -dd resource
 * show qp" (srdma_fill_res_qp_entry())
 * @msg: the netlink message, in the driver attributes' nest
 * @qp: the QP
 *
 * The next PSN expected, and the answers (read responses, atomic and
 * queued ACKs or NAKs) waiting to be sent.
 */
int srdma_resp_fill_res(struct sk_buff *msg, struct srdma_qp *qp)
{
	u32 epsn, queued;

	spin_lock_bh(&qp->rq_lock);
	epsn = qp->resp.epsn;
	queued = qp->resp.rd_head - qp->resp.rd_tail;
	spin_unlock_bh(&qp->rq_lock);

	if (rdma_nl_put_driver_u32_hex(msg, "epsn", epsn) ||
	    rdma_nl_put_driver_u32(msg, "answers_queued", queued))
		return -EMSGSIZE;
	return 0;
}

/*
 * Every NAK but a sequence error is fatal to this QP too: it raises the
 * affiliated event of the IB spec (11.6.3), unless the error completed a
 * receive WQE, which reports it.
 */
static void srdma_resp_nak(struct srdma_qp *qp, enum roce_nak_code code)
{
	lockdep_assert_held(&qp->rq_lock);
	switch (code) {
	case ROCE_NAK_PSN_SEQ_ERR:
		srdma_count(qp_sdev(qp), SRDMA_CNT_SEQ_NAKS_SENT);
		break;
	case ROCE_NAK_INVALID_REQ:
		qp->resp.event = IB_EVENT_QP_REQ_ERR;
		break;
	case ROCE_NAK_REMOTE_ACCESS:
		qp->resp.event = IB_EVENT_QP_ACCESS_ERR;
		break;
	default:
		qp->resp.event = IB_EVENT_QP_FATAL;
		break;
	}
	/* A fatal one ends the connection: it need not wait for reads. */
	if (code == ROCE_NAK_PSN_SEQ_ERR)
		srdma_resp_ack(qp, qp->resp.epsn, roce_aeth_syn_nak(code));
	else
		srdma_resp_ack_send(qp, qp->resp.epsn, roce_aeth_syn_nak(code),
				    qp->resp.msn);
}

/*
 * Not now: no receive WQE, or an ODP page being mapped. The requester
 * sends @psn again after the QP's RNR timer.
 */
static void srdma_resp_rnr(struct srdma_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->rq_lock);
	srdma_count(qp_sdev(qp), SRDMA_CNT_RNR_NAKS_SENT);
	srdma_resp_ack(qp, psn, roce_aeth_syn_rnr(qp->attr.min_rnr_timer));
	/*
	 * The packets already behind @psn are dropped quietly until it comes
	 * again: a sequence NAK for them would end the requester's RNR wait.
	 * (Should this NAK be lost, the requester's ACK timeout resends.)
	 */
	qp->resp.nak_sent = true;
}

/*
 * Take the next receive WQE off the RQ into our copy, unless a UC message
 * that was lost left one there: that one is used again.
 * Return: 0, -EAGAIN if none is posted, or -EINVAL for a bad ring or WQE.
 */
int srdma_resp_take_rwqe(struct srdma_qp *qp)
{
	int avail, err;

	lockdep_assert_held(&qp->rq_lock);
	struct srdma_srq *srq = qp->resp.xsrq;

	qp->resp.recv_off = 0;
	if (qp->resp.have_rwqe)
		return 0;
	if (!srq && qp->ibqp.srq)
		srq = to_ssrq(qp->ibqp.srq);
	if (srq) {
		err = srdma_srq_take(srq, qp->resp.rwqe);
		qp->resp.have_rwqe = !err;
		return err;
	}
	avail = srdma_ring_avail(&qp->rq);

	if (avail <= 0)
		return avail ? avail : -EAGAIN;
	memcpy(qp->resp.rwqe, srdma_ring_slot(&qp->rq, qp->rq.idx),
	       qp->rq.slot_size);
	srdma_ring_consume(&qp->rq);
	if (qp->resp.rwqe->num_sge > qp->cap.max_recv_sge)
		return -EINVAL;
	qp->resp.have_rwqe = true;
	return 0;
}

/* Complete the receive WQE taken with srdma_resp_take_rwqe(). */
void srdma_resp_cqe(struct srdma_qp *qp, u8 status, u8 opcode, u32 byte_len,
		    const struct roce_pkt_info *pkt)
{
	const struct roce_immdt *imm = roce_pkt_immdt(pkt);
	const struct roce_deth *deth = roce_pkt_deth(pkt);
	const struct roce_ieth *ieth = roce_pkt_ieth(pkt);
	struct softrdma_cqe cqe = {
		.wr_id = qp->resp.rwqe->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->attr.dest_qp_num,
	};

	lockdep_assert_held(&qp->rq_lock);
	/* A datagram: its sender, and its GRH first in the buffer. */
	if (deth) {
		cqe.src_qp = roce_deth_sqp(deth);
		cqe.wc_flags |= SOFTRDMA_WC_GRH;
		cqe.net_type = to_rx_pkt(pkt)->skb->protocol == htons(ETH_P_IP) ?
			       SOFTRDMA_NET_IPV4 : SOFTRDMA_NET_IPV6;
		/*
		 * RoCE has no SL; a RoCE NIC (mlx5) reports the GRH's L3
		 * type in it instead (2 IPv4, 1 IPv6), and UCX's ud_verbs
		 * reads it to find the destination address in the GRH.
		 */
		cqe.sl = cqe.net_type == SOFTRDMA_NET_IPV4 ? 2 : 1;
	}
	if (imm && !status) {
		cqe.ex = roce_immdt_get(imm);
		cqe.wc_flags |= SOFTRDMA_WC_WITH_IMM;
	}
	if (ieth && !status) {
		/* Host order, as struct ibv_wc's invalidated_rkey. */
		cqe.ex = (__force __be32)roce_ieth_rkey(ieth);
		cqe.wc_flags |= SOFTRDMA_WC_WITH_INV;
	}
	qp->resp.have_rwqe = false;
	/* An XRC target's completions go to its SRQ's CQ. */
	srdma_cq_post(to_scq(qp->resp.xsrq ? qp->resp.xsrq->ibsrq.ext.cq :
					qp->ibqp.recv_cq), &cqe,
		      roce_bth_se(pkt->bth));
}

/* SEND FIRST/MIDDLE/LAST/ONLY. Return: RESP_* or -EAGAIN for RNR. */
static int srdma_resp_send(struct srdma_qp *qp,
			   const struct roce_pkt_info *pkt)
{
	u32 flags = pkt->info->flags;
	int err;

	lockdep_assert_held(&qp->rq_lock);
	if (flags & ROCE_F_FIRST) {
		err = srdma_resp_take_rwqe(qp);
		if (err == -EAGAIN)
			return -EAGAIN;
		if (err) {
			srdma_resp_nak(qp, ROCE_NAK_REMOTE_OP);
			return -EPROTO;
		}
	}
	err = srdma_pkt_to_sge(qp, pkt, qp->resp.rwqe->sge, qp->resp.rwqe->num_sge,
			       qp->resp.recv_off);
	if (err == -EAGAIN)
		return -EAGAIN;	/* an ODP page being mapped: RNR */
	if (err) {
		srdma_resp_cqe(qp, err == -EACCES ? IB_WC_LOC_PROT_ERR :
				   IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0, pkt);
		srdma_resp_nak(qp, err == -EACCES ? ROCE_NAK_REMOTE_OP :
				   ROCE_NAK_INVALID_REQ);
		qp->resp.event = SRDMA_NO_EVENT;	/* the CQE says it */
		return -EPROTO;
	}
	qp->resp.recv_off += pkt->payload_len;
	/* SEND with invalidate: the key dies before the completion. */
	if ((flags & ROCE_F_IETH) &&
	    srdma_key_invalidate(qp, roce_ieth_rkey(roce_pkt_ieth(pkt)),
				 true)) {
		srdma_resp_cqe(qp, IB_WC_REM_INV_REQ_ERR, IB_WC_RECV, 0, pkt);
		srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
		qp->resp.event = SRDMA_NO_EVENT;	/* the CQE says it */
		return -EPROTO;
	}
	if (flags & ROCE_F_LAST)
		srdma_resp_cqe(qp, IB_WC_SUCCESS, IB_WC_RECV, qp->resp.recv_off,
			       pkt);
	return 0;
}

/*
 * The MR of an RDMA access, by its own key or through a memory window's,
 * checked against the QP's remote access flags and the range
 * [@va, @va + @len). No reference is kept across packets:
 * each packet of a multi-packet write looks the key up again, so a
 * deregistration never waits on a peer that stopped mid-message.
 */
struct srdma_mr *srdma_resp_mr(struct srdma_qp *qp, u32 rkey, u64 va,
			       u32 len, int access)
{
	struct srdma_mr *mr;

	lockdep_assert_held(&qp->rq_lock);
	if (!(qp->attr.qp_access_flags & access))
		return NULL;
	mr = srdma_mr_get(to_sdev(qp->ibqp.device), rkey, srdma_qp_pd(qp),
			  access);
	if (!mr)
		return srdma_mw_resolve(qp, rkey, va, len, access);
	if (!srdma_mr_check(mr, va, len)) {
		srdma_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

static int srdma_resp_write(struct srdma_qp *qp,
			    const struct roce_pkt_info *pkt)
{
	const struct roce_reth *reth = roce_pkt_reth(pkt);
	u32 flags = pkt->info->flags;
	bool imm = flags & ROCE_F_IMMDT;
	u32 n = pkt->payload_len;
	int err;

	lockdep_assert_held(&qp->rq_lock);
	/* The receive WQE first: an RNR retry repeats the write harmlessly. */
	if (imm && (flags & ROCE_F_LAST)) {
		err = srdma_resp_take_rwqe(qp);

		if (err == -EAGAIN)
			return -EAGAIN;
		if (err) {
			srdma_resp_nak(qp, ROCE_NAK_REMOTE_OP);
			return -EPROTO;
		}
	}
	if (flags & ROCE_F_FIRST) {
		if (roce_reth_len(reth) > SRDMA_MAX_MSG) {
			srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
			return -EPROTO;
		}
		qp->resp.wr_len = roce_reth_len(reth);
		qp->resp.wr_left = qp->resp.wr_len;
		qp->resp.wr_va = roce_reth_va(reth);
		qp->resp.wr_rkey = roce_reth_rkey(reth);
		/* All of it must be allowed before the first byte lands. */
		if (qp->resp.wr_len) {
			struct srdma_mr *mr = srdma_resp_mr(qp, qp->resp.wr_rkey,
							    qp->resp.wr_va,
							    qp->resp.wr_len,
							    IB_ACCESS_REMOTE_WRITE);

			if (!mr) {
				srdma_resp_nak(qp, ROCE_NAK_REMOTE_ACCESS);
				return -EPROTO;
			}
			srdma_mr_put(mr);
		}
	}
	if (n > qp->resp.wr_left || ((flags & ROCE_F_LAST) && n != qp->resp.wr_left)) {
		srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
		return -EPROTO;
	}
	/* A zero-length write touches no memory: no key check (IBA 9.4.4). */
	if (qp->resp.wr_len) {
		struct srdma_mr *mr = srdma_resp_mr(qp, qp->resp.wr_rkey,
						    qp->resp.wr_va, n,
						    IB_ACCESS_REMOTE_WRITE);

		if (!mr) {
			srdma_resp_nak(qp, ROCE_NAK_REMOTE_ACCESS);
			return -EPROTO;
		}
		err = srdma_pkt_to_mr(mr, qp->resp.wr_va, pkt);
		srdma_mr_put(mr);
		if (err == -EAGAIN)
			return -EAGAIN;	/* an ODP page being mapped: RNR */
		if (err == -EACCES) {
			srdma_resp_nak(qp, ROCE_NAK_REMOTE_ACCESS);
			return -EPROTO;
		}
		if (err) {	/* the skb is shorter than its headers say */
			srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
			return -EPROTO;
		}
		qp->resp.wr_va += n;
		qp->resp.wr_left -= n;
	}
	if ((flags & ROCE_F_LAST) && imm)
		srdma_resp_cqe(qp, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM,
			       qp->resp.wr_len, pkt);
	return 0;
}

/*
 * Atomics are atomic with respect to each other, whichever QP or device
 * they come through (IB_ATOMIC_HCA): one lock serialises them all.
 */
static DEFINE_SPINLOCK(srdma_atomic_lock);

/*
 * Queue the answer to a new read request.
 * Return: 0, -EPROTO after a NAK, -EAGAIN for an RNR NAK,
 * or -EBUSY when the queue of reads is full (the request is dropped and
 * will be retried).
 */
static int srdma_resp_read(struct srdma_qp *qp,
			   const struct roce_pkt_info *pkt, u32 psn)
{
	const struct roce_reth *reth = roce_pkt_reth(pkt);
	u32 len = roce_reth_len(reth);
	u64 va = roce_reth_va(reth);
	struct srdma_rd *rd;
	int err;

	lockdep_assert_held(&qp->rq_lock);
	if (len > SRDMA_MAX_MSG) {
		srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
		return -EPROTO;
	}
	if (len) {
		struct srdma_mr *mr = srdma_resp_mr(qp, roce_reth_rkey(reth),
						    va, len,
						    IB_ACCESS_REMOTE_READ);

		if (!mr) {
			srdma_resp_nak(qp, ROCE_NAK_REMOTE_ACCESS);
			return -EPROTO;
		}
		/* ODP: the pages in before the answer is queued. */
		err = mr->odp ? srdma_odp_probe(mr, va, len, false) : 0;
		srdma_mr_put(mr);
		if (err == -EAGAIN)
			return -EAGAIN;
		if (err) {
			srdma_resp_nak(qp, ROCE_NAK_REMOTE_ACCESS);
			return -EPROTO;
		}
	}
	rd = srdma_resp_hold(qp);
	if (!rd)
		return -EBUSY;
	*rd = (struct srdma_rd) {
		.pd = srdma_qp_pd(qp),
		.va = va,
		.len = len,
		.rkey = roce_reth_rkey(reth),
		.psn = psn,
		.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK,
	};
	return srdma_resp_queue(qp, rd, psn);
}

/*
 * The outcome of an atomic's or ATOMIC WRITE's access to its MR (@err of
 * srdma_mr_xfer()). Return: 0, -EAGAIN (an ODP page being mapped:
 * RNR), or -EPROTO after the NAK the error calls for.
 */
static int srdma_resp_placed(struct srdma_qp *qp, int err)
{
	lockdep_assert_held(&qp->rq_lock);
	if (!err || err == -EAGAIN)
		return err;
	srdma_resp_nak(qp, err == -EACCES ? ROCE_NAK_REMOTE_ACCESS :
			   ROCE_NAK_REMOTE_OP);
	return -EPROTO;
}

/*
 * CMP_SWAP or FETCH_ADD on 8 aligned bytes of an MR with remote atomic
 * access; the value before goes back in an atomic ACK, and is kept for
 * a replay. Return: 0, -EPROTO after a NAK, or -EBUSY.
 */
static int srdma_resp_atomic(struct srdma_qp *qp,
			     const struct roce_pkt_info *pkt, u32 psn)
{
	const struct roce_atmeth *a = roce_pkt_atmeth(pkt);
	struct srdma_xfer x = { .op = SRDMA_TO_BUF };
	u64 va = roce_atmeth_va(a), orig, val;
	struct srdma_mr *mr;
	struct srdma_rd *rd;
	int err;

	lockdep_assert_held(&qp->rq_lock);
	if (va & (sizeof(u64) - 1)) {
		srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
		return -EPROTO;
	}
	mr = srdma_resp_mr(qp, roce_atmeth_rkey(a), va, sizeof(u64),
			   IB_ACCESS_REMOTE_ATOMIC);
	if (!mr) {
		srdma_resp_nak(qp, ROCE_NAK_REMOTE_ACCESS);
		return -EPROTO;
	}
	if (srdma_resp_queue_full(qp)) {
		srdma_mr_put(mr);
		return -EBUSY;	/* before executing: a retry executes once */
	}

	spin_lock(&srdma_atomic_lock);
	x.buf = (u8 *)&orig;
	err = srdma_mr_xfer(mr, va, sizeof(u64), &x);
	if (!err) {
		if (pkt->opcode == (ROCE_RC_CMP_SWAP | srdma_qp_transport(qp)))
			val = orig == roce_atmeth_compare(a) ?
			      roce_atmeth_swap_add(a) : orig;
		else
			val = orig + roce_atmeth_swap_add(a);
		x.op = SRDMA_FROM_BUF;
		x.buf = (u8 *)&val;
		x.done = 0;
		err = srdma_mr_xfer(mr, va, sizeof(u64), &x);
	}
	spin_unlock(&srdma_atomic_lock);
	srdma_mr_put(mr);
	err = srdma_resp_placed(qp, err);
	if (err)
		return err;

	rd = srdma_resp_hold(qp);	/* room checked above */
	*rd = (struct srdma_rd) {
		.atomic = true,
		.orig = orig,
		.psn = psn,
		.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK,
	};
	return srdma_resp_queue(qp, rd, psn);
}

/* ATOMIC WRITE: 8 aligned bytes of an MR with remote write access. */
static int srdma_resp_atomic_write(struct srdma_qp *qp,
				   const struct roce_pkt_info *pkt)
{
	const struct roce_reth *reth = roce_pkt_reth(pkt);
	/* 8 bytes of payload: the whole packet is linear (see rx.c). */
	struct srdma_xfer x = { .op = SRDMA_STORE64, .buf = (u8 *)pkt->payload };
	u64 va = roce_reth_va(reth);
	struct srdma_mr *mr;
	int err;

	lockdep_assert_held(&qp->rq_lock);
	if (roce_reth_len(reth) != sizeof(u64) ||
	    pkt->payload_len != sizeof(u64) || (va & (sizeof(u64) - 1))) {
		srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
		return -EPROTO;
	}
	mr = srdma_resp_mr(qp, roce_reth_rkey(reth), va, sizeof(u64),
			   IB_ACCESS_REMOTE_WRITE);
	if (!mr) {
		srdma_resp_nak(qp, ROCE_NAK_REMOTE_ACCESS);
		return -EPROTO;
	}
	/* Under the atomics' lock: atomic with respect to them too. */
	spin_lock(&srdma_atomic_lock);
	err = srdma_mr_xfer(mr, va, sizeof(u64), &x);
	spin_unlock(&srdma_atomic_lock);
	srdma_mr_put(mr);
	return srdma_resp_placed(qp, err);
}

/*
 * FLUSH: the data of the writes before it, on this QP, placed where its
 * placement type says, for the RETH's range or the whole MR. Our writes
 * are CPU stores, visible to all once done: a barrier makes them globally
 * visible. No MR is ever persistent (no FLUSH_PERSISTENT access): such a
 * flush fails its access check.
 */
static int srdma_resp_flush(struct srdma_qp *qp,
			    const struct roce_pkt_info *pkt)
{
	const struct roce_feth *feth = roce_pkt_feth(pkt);
	const struct roce_reth *reth = roce_pkt_reth(pkt);
	u8 type = roce_feth_type(feth);
	u8 level = roce_feth_level(feth);
	int access = (type & ROCE_FLUSH_GLOBAL ? IB_ACCESS_FLUSH_GLOBAL : 0) |
		     (type & ROCE_FLUSH_PERSISTENT ?
		      IB_ACCESS_FLUSH_PERSISTENT : 0);
	struct srdma_mr *mr;

	lockdep_assert_held(&qp->rq_lock);
	if (!type || (type & ~(ROCE_FLUSH_GLOBAL | ROCE_FLUSH_PERSISTENT)) ||
	    level > ROCE_FLUSH_MR) {
		srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
		return -EPROTO;
	}
	if (level == ROCE_FLUSH_MR)	/* the RETH's range is ignored */
		mr = (qp->attr.qp_access_flags & access) == access ?
		     srdma_mr_get(qp_sdev(qp), roce_reth_rkey(reth),
				  srdma_qp_pd(qp), access) : NULL;
	else
		mr = srdma_resp_mr(qp, roce_reth_rkey(reth),
				   roce_reth_va(reth), roce_reth_len(reth),
				   access);
	if (!mr) {
		srdma_resp_nak(qp, ROCE_NAK_REMOTE_ACCESS);
		return -EPROTO;
	}
	srdma_mr_put(mr);
	/* the writes before it are visible before its response goes out */
	smp_mb();
	return 0;
}

/*
 * FLUSH or ATOMIC WRITE (IBA 1.5): placed, then answered with an empty
 * read response that is kept, like an atomic's result, for a duplicate.
 * Return: 0, -EPROTO after a NAK, -EAGAIN (RNR) or -EBUSY.
 */
static int srdma_resp_place(struct srdma_qp *qp,
			    const struct roce_pkt_info *pkt, u32 psn)
{
	struct srdma_rd *rd;
	int ret;

	lockdep_assert_held(&qp->rq_lock);
	if (srdma_resp_queue_full(qp))
		return -EBUSY;	/* before placing: a retry places once */
	ret = pkt->info->flags & ROCE_F_FLUSH ? srdma_resp_flush(qp, pkt) :
						srdma_resp_atomic_write(qp, pkt);
	if (ret != 0)
		return ret;
	rd = srdma_resp_hold(qp);
	*rd = (struct srdma_rd) {
		.placed = true,
		.psn = psn,
		.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK,
	};
	return srdma_resp_queue(qp, rd, psn);
}

/*
 * A gap is NAKed once, when SRDMA_GAP_DUPS requests are kept past it, or
 * one asks for an answer (a message's last packet, a probe: @now), or one
 * found no room: fewer kept are taken for reordering, which fills the
 * gap unasked, and a NAK would cost the requester half its window.
 */
static void srdma_resp_gap_nak(struct srdma_qp *qp, bool now)
{
	lockdep_assert_held(&qp->rq_lock);
	if (qp->resp.nak_sent ||
	    (!now && qp->resp.ooo.count < SRDMA_GAP_DUPS))
		return;
	srdma_resp_nak(qp, ROCE_NAK_PSN_SEQ_ERR);
	qp->resp.nak_sent = true;
}

/*
 * RC executes requests in PSN order, each once: a duplicate is answered
 * again, a gap is NAKed once. Return: true to go on with @pkt.
 */
static bool srdma_resp_rc_seq(struct srdma_qp *qp,
			      const struct roce_pkt_info *pkt, u32 psn)
{
	s32 diff = roce_psn_diff(psn, qp->resp.epsn);

	lockdep_assert_held(&qp->rq_lock);
	if (diff < 0) {
		/* A retransmission: answer again, execute nothing twice. */
		int err = 0;

		if (pkt->info->flags & ROCE_F_READ)
			err = srdma_resp_read_replay(qp, pkt, psn);
		else if (pkt->info->flags & ROCE_F_ATOMIC)
			err = srdma_resp_atomic_replay(qp, psn, false);
		else if (pkt->info->flags & (ROCE_F_FLUSH | ROCE_F_AWRITE))
			err = srdma_resp_atomic_replay(qp, psn, true);
		else if (roce_bth_ackreq(pkt->bth))
			srdma_resp_ack(qp, roce_psn_sub(qp->resp.epsn, 1),
				       srdma_ack_syndrome());
		if (!err)
			srdma_count(qp_sdev(qp), SRDMA_CNT_DUP_REQUESTS);
		else
			srdma_drop(qp_sdev(qp), err == -EBUSY ?
				   SRDMA_CNT_DROP_NOMEM : SRDMA_CNT_DROP_PSN);
		return false;
	}
	if (diff > 0) {
		/* A gap: what came early is kept for then, if there is room. */
		bool kept = srdma_reorder_hold(qp_sdev(qp), &qp->resp.ooo,
					       pkt, diff);

		if (!kept)
			srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_PSN);
		srdma_resp_gap_nak(qp, !kept || roce_bth_ackreq(pkt->bth));
		return false;
	}
	qp->resp.nak_sent = false;
	return true;
}

/*
 * UC has no ACKs and no retries: a packet out of sequence loses the
 * message under way, and the next FIRST or ONLY starts afresh whatever
 * its PSN. Return: true to go on with @pkt.
 */
static bool srdma_resp_uc_seq(struct srdma_qp *qp,
			      const struct roce_pkt_info *pkt, u32 psn)
{
	u32 flags = pkt->info->flags;

	lockdep_assert_held(&qp->rq_lock);
	if (flags & ROCE_F_FIRST) {
		qp->resp.msg_open = 0;
		qp->resp.epsn = psn;
		return true;
	}
	if (psn == qp->resp.epsn && (qp->resp.msg_open & flags))
		return true;
	qp->resp.msg_open = 0;
	srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_PSN);
	return false;
}

/*
 * Request @pkt at @psn was executed: the next PSN and MSN are expected,
 * and a SEND or WRITE packet that asks for an ACK gets one. A read takes
 * a PSN per response packet (one when empty); the read, atomic or
 * placement is answered from the queue (answer.c), not here.
 */
static void srdma_resp_done(struct srdma_qp *qp,
			    const struct roce_pkt_info *pkt, u32 psn)
{
	u32 flags = pkt->info->flags;

	lockdep_assert_held(&qp->rq_lock);
	if (flags & ROCE_F_READ) {
		u32 npkts = DIV_ROUND_UP(roce_reth_len(roce_pkt_reth(pkt)),
					 qp->mtu);

		qp->resp.epsn = roce_psn_add(qp->resp.epsn, max_t(u32, 1, npkts));
		qp->resp.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK;
		return;
	}
	qp->resp.epsn = roce_psn_next(qp->resp.epsn);
	if (!(flags & (ROCE_F_SEND | ROCE_F_WRITE))) {
		qp->resp.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK;
		return;
	}
	qp->resp.msg_open = (flags & ROCE_F_LAST) ? 0 :
		       flags & (ROCE_F_SEND | ROCE_F_WRITE);
	if (flags & ROCE_F_LAST)
		qp->resp.msn = (qp->resp.msn + 1) & ROCE_AETH_MSN_MASK;
	if (roce_bth_ackreq(pkt->bth))
		srdma_resp_ack(qp, psn, srdma_ack_syndrome());
}

/*
 * One request packet, rq_lock held. Return: 0, or -EPROTO when the QP
 * must enter the error state (qp->resp.event says with which event).
 */
static int __srdma_resp_rx(struct srdma_qp *qp, const struct roce_pkt_info *pkt)
{
	u32 psn = roce_bth_psn(pkt->bth);
	u32 flags = pkt->info->flags;
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;
	enum ib_qp_state state;
	int ret = 0;

	lockdep_assert_held(&qp->rq_lock);
	qp->resp.event = SRDMA_NO_EVENT;
	state = READ_ONCE(qp->state);
	if (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	    state != IB_QPS_SQD && state != IB_QPS_SQE) {
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_QP_STATE);
		goto out;
	}
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		qp->resp.xsrq = srdma_xrc_resp_srq(qp, pkt);
		if (!qp->resp.xsrq) {
			srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
			ret = -EPROTO;
			goto out;
		}
		qp->resp.xrc_pd = qp->resp.xsrq->ibsrq.pd;
	}

	if (!(uc ? srdma_resp_uc_seq(qp, pkt, psn) :
		   srdma_resp_rc_seq(qp, pkt, psn)))
		goto out;

	/*
	 * FIRST/ONLY start a message, MIDDLE/LAST continue the open one of
	 * the same kind; a read request comes between messages.
	 */
	if ((flags & (ROCE_F_READ | ROCE_F_ATOMIC | ROCE_F_FLUSH |
		      ROCE_F_AWRITE)) ? qp->resp.msg_open :
	    !!(flags & ROCE_F_FIRST) == !!qp->resp.msg_open ||
	    (qp->resp.msg_open && !(flags & qp->resp.msg_open))) {
		srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
		ret = -EPROTO;
		goto out;
	}

	/* FIRST and MIDDLE carry exactly the path MTU, LAST and ONLY at most. */
	if ((flags & ROCE_F_PAYLOAD) &&
	    (pkt->payload_len > qp->mtu ||
	     (!(flags & ROCE_F_LAST) &&
	      pkt->payload_len != qp->mtu))) {
		srdma_resp_nak(qp, ROCE_NAK_INVALID_REQ);
		ret = -EPROTO;
		goto out;
	}

	if (flags & ROCE_F_SEND)
		ret = srdma_resp_send(qp, pkt);
	else if (flags & ROCE_F_WRITE)
		ret = srdma_resp_write(qp, pkt);
	else if (flags & ROCE_F_READ)
		ret = srdma_resp_read(qp, pkt, psn);
	else if (flags & ROCE_F_ATOMIC)
		ret = srdma_resp_atomic(qp, pkt, psn);
	else
		ret = srdma_resp_place(qp, pkt, psn);

	switch (ret) {
	case 0:
		srdma_resp_done(qp, pkt, psn);
		break;
	case -EAGAIN:
		if (uc) {
			/* No RNR NAK in UC: the message is lost. */
			qp->resp.msg_open = 0;
			srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_NO_RECV);
		} else {
			srdma_resp_rnr(qp, psn);
		}
		ret = 0;
		break;
	case -EBUSY:
		/* dropped: asked again later */
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_NOMEM);
		ret = 0;
		break;
	}
out:
	if (uc && ret == -EPROTO) {
		/* Nobody to NAK: the message is lost, the QP lives on. */
		qp->resp.msg_open = 0;
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_BAD_REQUEST);
		ret = 0;
	}
	qp->resp.xsrq = NULL;	/* valid for this packet only */
	return ret;
}

/*
 * The gap before the requests kept in the reorder buffer was filled:
 * execute those that now follow in order. One ACK then covers them (or a
 * NAK, if another gap stops the run and srdma_resp_gap_nak() says so), so
 * a requester going back to the gap moves past them (srdma_req_forward()).
 * Return: as __srdma_resp_rx().
 */
static int srdma_resp_rx_kept(struct srdma_qp *qp)
{
	struct srdma_rx_pkt kept;
	u32 epsn = qp->resp.epsn;
	int ret = 0;

	lockdep_assert_held(&qp->rq_lock);
	while (!ret && srdma_reorder_next(qp_sdev(qp), &qp->resp.ooo,
					  qp->resp.epsn, &kept)) {
		ret = __srdma_resp_rx(qp, &kept.rp);
		consume_skb(kept.skb);
	}
	/* An RNR NAK or an error, or nothing taken, said all there is. */
	if (ret || qp->resp.nak_sent || epsn == qp->resp.epsn)
		return ret;
	/* Kept since before the gap filled: another loss, not reordering. */
	if (qp->resp.ooo.count)
		srdma_resp_gap_nak(qp, true);
	if (!qp->resp.nak_sent)
		srdma_resp_ack(qp, roce_psn_sub(qp->resp.epsn, 1),
			       srdma_ack_syndrome());
	return 0;
}

/**
 * srdma_resp_rx - a request packet for @qp
 * @qp: the responder's QP (RCU-protected by the caller)
 * @pkt: the parsed packet
 */
void srdma_resp_rx(struct srdma_qp *qp, const struct roce_pkt_info *pkt)
{
	int event, ret;
	u32 epsn;

	spin_lock_bh(&qp->rq_lock);
	epsn = qp->resp.epsn;
	ret = __srdma_resp_rx(qp, pkt);
	if (!ret && qp->resp.ooo.count && epsn != qp->resp.epsn)
		ret = srdma_resp_rx_kept(qp);
	event = qp->resp.event;
	spin_unlock_bh(&qp->rq_lock);
	if (ret == -EPROTO)
		srdma_qp_error(qp, event);
}
