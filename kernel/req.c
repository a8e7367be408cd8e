// SPDX-License-Identifier: GPL-2.0
/*
 * Requester: send WQEs become request packets.
 *
 * RC sends what its window allows; the completer (comp.c) opens it as
 * ACKs come, and goes back to the oldest unacknowledged WQE on a timeout
 * or a NAK. UC and UD: nothing comes back, a WQE completes once its last
 * packet is out.
 *
 * Everything here runs under qp->sq_lock, from the doorbell (process
 * context), from receive (softirq) and from the QP timer.
 */
#include <rdma/restrack.h>

#include "req.h"
#include "proto/roce_icrc.h"

#define SRDMA_ACK_EVERY		32	/* AckReq at least every N packets */
#define SRDMA_CWND_INIT		8	/* RC: packets in flight at first */
#define SRDMA_MIN_TIMEOUT_US	20000	/* TCG guests are slow */

/**
 * srdma_sq_wqe - the send WQE at SQ index @idx, as the requester acts on it
 * @qp: the QP, sq_lock held
 * @idx: an index from qp->sq.idx on
 *
 * Our copy once the WQE is fetched (the user may have rewritten the ring
 * since), the ring slot before.
 */
const struct softrdma_send_wqe *srdma_sq_wqe(struct srdma_qp *qp, u32 idx)
{
	lockdep_assert_held(&qp->sq_lock);
	if (qp->req.sq_copy && qp->req.fetched - idx - 1 < qp->sq.num_slots)
		return srdma_wqe(qp, idx);
	return srdma_ring_slot(&qp->sq, idx);
}

/**
 * srdma_sq_pending - send WQEs posted and not completed, to flush
 * @qp: the QP, sq_lock held
 *
 * What the producer index says, or, when it is corrupt, the WQEs already
 * fetched: those have our copies and still owe a completion.
 */
u32 srdma_sq_pending(struct srdma_qp *qp)
{
	int avail = srdma_ring_avail(&qp->sq);
	u32 fetched = qp->req.sq_copy ? qp->req.fetched - qp->sq.idx : 0;

	lockdep_assert_held(&qp->sq_lock);
	if (fetched > qp->sq.num_slots)	/* not started since a reset */
		fetched = 0;
	return avail < 0 || (u32)avail < fetched ? fetched : avail;
}

/*
 * Drop sq_lock, then do what had to wait for that: wake the send CQ's
 * handler, and fail the QP if @fail. A corrupt ring is a local work queue
 * catastrophic error (IBA 11.6.3.1), reported by an event; any other
 * error by a completion.
 */
void srdma_req_unlock(struct srdma_qp *qp, bool fail)
	__releases(&qp->sq_lock)
{
	bool notify = qp->req.sq_notify;
	bool bad = qp->req.sq_bad;

	lockdep_assert_held(&qp->sq_lock);
	qp->req.sq_notify = false;
	spin_unlock_bh(&qp->sq_lock);
	if (notify)
		srdma_cq_notify(to_scq(qp->ibqp.send_cq));
	if (fail)
		srdma_qp_error(qp, bad ? IB_EVENT_QP_FATAL : SRDMA_NO_EVENT);
}

static void srdma_req_work(struct work_struct *work)
{
	srdma_qp_doorbell(container_of(work, struct srdma_qp, req.work));
}

/*
 * The timer and work first: srdma_req_fini() stops them whatever failed.
 * @gfp: srdma_gfp() of the QP's owner
 */
int srdma_req_init(struct srdma_qp *qp, gfp_t gfp)
{
	timer_setup(&qp->comp.timer, srdma_timer_fn, 0);
	INIT_WORK(&qp->req.work, srdma_req_work);
	srdma_cc_qp_init(qp);
	qp->req.sq_copy = kvzalloc((size_t)qp->sq.num_slots *
				   qp->sq.slot_size, gfp);
	qp->req.swqe = kvcalloc(qp->sq.num_slots, sizeof(*qp->req.swqe), gfp);
	if (!qp->req.sq_copy || !qp->req.swqe ||
	    ((qp->ibqp.qp_type == IB_QPT_RC ||
	      qp->ibqp.qp_type == IB_QPT_XRC_INI) &&
	     srdma_reorder_init(&qp->comp.ooo, gfp))) {
		srdma_req_fini(qp);
		return -ENOMEM;
	}
	return 0;
}

void srdma_req_fini(struct srdma_qp *qp)
{
	spin_lock_bh(&qp->sq_lock);
	spin_lock(&qp->cc.lock);	/* the read responder arms pace_timer */
	qp->dying = true;
	spin_unlock(&qp->cc.lock);
	spin_unlock_bh(&qp->sq_lock);
	timer_delete_sync(&qp->comp.timer);
	/* it queues req.work, and rd_work that srdma_resp_fini() cancels */
	hrtimer_cancel(&qp->cc.pace_timer);
	cancel_work_sync(&qp->req.work);
	srdma_reorder_fini(qp_sdev(qp), &qp->comp.ooo);
	kvfree(qp->req.sq_copy);
	kvfree(qp->req.swqe);
	qp->req.sq_copy = NULL;
	qp->req.swqe = NULL;
}

/* Local ACK timeout: 4.096 us * 2^timeout; 0 means none. */
unsigned long srdma_ack_timeout(struct srdma_qp *qp)
{
	u64 us;

	if (!qp->attr.timeout)
		return 0;
	us = (4096ULL << qp->attr.timeout) / 1000;
	return usecs_to_jiffies(max_t(u64, us, SRDMA_MIN_TIMEOUT_US));
}

#define SRDMA_WR(op)	BIT(IB_UVERBS_WR_##op)

/* RC's operations, and an XRC initiator's. */
#define SRDMA_RC_WRS	(SRDMA_WR(SEND) | SRDMA_WR(SEND_WITH_IMM) |	\
			 SRDMA_WR(SEND_WITH_INV) |			\
			 SRDMA_WR(RDMA_WRITE) |				\
			 SRDMA_WR(RDMA_WRITE_WITH_IMM) |		\
			 SRDMA_WR(RDMA_READ) |				\
			 SRDMA_WR(ATOMIC_CMP_AND_SWP) |			\
			 SRDMA_WR(ATOMIC_FETCH_AND_ADD) |		\
			 SRDMA_WR(LOCAL_INV) | SRDMA_WR(BIND_MW) |	\
			 BIT(SRDMA_WR_REG_MR))

/* IBA 1.5 memory placement: RC only (XRC has no opcodes for them). */
#define SRDMA_PLACE_WRS	(BIT(SOFTRDMA_WR_FLUSH) | BIT(SOFTRDMA_WR_ATOMIC_WRITE))

/* The operations each QP type carries. */
static const u32 srdma_qpt_ops[IB_QPT_XRC_INI + 1] = {
	[IB_QPT_RC] = SRDMA_RC_WRS | SRDMA_PLACE_WRS,
	[IB_QPT_UC] = SRDMA_WR(SEND) | SRDMA_WR(SEND_WITH_IMM) |
		      SRDMA_WR(RDMA_WRITE) | SRDMA_WR(RDMA_WRITE_WITH_IMM) |
		      SRDMA_WR(LOCAL_INV) | SRDMA_WR(BIND_MW) |
		      BIT(SRDMA_WR_REG_MR),
	[IB_QPT_UD] = SRDMA_WR(SEND) | SRDMA_WR(SEND_WITH_IMM),
	[IB_QPT_GSI] = SRDMA_WR(SEND) | SRDMA_WR(SEND_WITH_IMM),
	[IB_QPT_XRC_INI] = SRDMA_RC_WRS,
};

/* Local operations: executed in order, no packet. */
static bool srdma_wr_local(u32 opcode)
{
	return opcode == IB_UVERBS_WR_LOCAL_INV ||
	       opcode == IB_UVERBS_WR_BIND_MW || opcode == SRDMA_WR_REG_MR;
}

/* Copy and check WQE @qp->req.fetched; a bad one completes with an error. */
static void srdma_fetch(struct srdma_qp *qp)
{
	struct softrdma_send_wqe *w = srdma_wqe(qp, qp->req.fetched);
	struct srdma_swqe *st = srdma_st(qp, qp->req.fetched);
	u32 mtu = qp->mtu;
	u64 len = 0;
	u32 i;

	lockdep_assert_held(&qp->sq_lock);
	memcpy(w, srdma_ring_slot(&qp->sq, qp->req.fetched), qp->sq.slot_size);
	memset(st, 0, sizeof(*st));
	qp->req.fetched++;

	if (w->opcode >= 32 || qp->ibqp.qp_type > IB_QPT_XRC_INI ||
	    !(srdma_qpt_ops[qp->ibqp.qp_type] & BIT(w->opcode)) ||
	    (w->opcode == SRDMA_WR_REG_MR && qp->ibqp.uobject)) {
		st->status = IB_WC_LOC_QP_OP_ERR;
		return;
	}
	if (srdma_wr_local(w->opcode)) {
		st->local = true;
		return;
	}
	/* One packet: ATOMIC WRITE's 8 bytes are in the WQE, FLUSH has none. */
	if (srdma_wr_placement(w->opcode)) {
		if (w->opcode == SOFTRDMA_WR_FLUSH && w->wr.flush.length > U32_MAX)
			st->status = IB_WC_LOC_LEN_ERR;
		st->len = w->opcode == SOFTRDMA_WR_ATOMIC_WRITE ? sizeof(u64) : 0;
		st->npkts = 1;
		return;
	}
	if (w->send_flags & IB_SEND_INLINE) {
		if (srdma_wr_needs_resp(w->opcode) ||
		    w->inline_len > qp->cap.max_inline_data) {
			st->status = IB_WC_LOC_LEN_ERR;
			return;
		}
		len = w->inline_len;
	} else {
		if (w->num_sge > qp->cap.max_send_sge) {
			st->status = IB_WC_LOC_LEN_ERR;
			return;
		}
		for (i = 0; i < w->num_sge; i++)
			len += w->sge[i].length;
	}
	/* A datagram is one packet; an atomic returns 8 bytes. */
	if (len > (srdma_qp_is_ud(qp) ? mtu : SRDMA_MAX_MSG) ||
	    (srdma_wr_atomic(w->opcode) && len != sizeof(u64))) {
		st->status = IB_WC_LOC_LEN_ERR;
		return;
	}
	st->len = len;
	st->npkts = max_t(u32, 1, DIV_ROUND_UP(st->len, mtu));
}

/* The RC opcode of a packet; other transports differ in the top bits. */
static u8 srdma_req_opcode(const struct softrdma_send_wqe *w, bool first,
			   bool last)
{
	bool imm = w->opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
		   w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;

	if (w->opcode == IB_UVERBS_WR_RDMA_READ)
		return ROCE_RC_READ_REQUEST;
	if (w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP)
		return ROCE_RC_CMP_SWAP;
	if (w->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD)
		return ROCE_RC_FETCH_ADD;
	if (w->opcode == SOFTRDMA_WR_FLUSH)
		return ROCE_RC_FLUSH;
	if (w->opcode == SOFTRDMA_WR_ATOMIC_WRITE)
		return ROCE_RC_ATOMIC_WRITE;
	if (w->opcode == IB_UVERBS_WR_SEND_WITH_INV && last)
		return first ? ROCE_RC_SEND_ONLY_INV : ROCE_RC_SEND_LAST_INV;
	if (w->opcode == IB_UVERBS_WR_SEND ||
	    w->opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
	    w->opcode == IB_UVERBS_WR_SEND_WITH_INV) {
		if (first && last)
			return imm ? ROCE_RC_SEND_ONLY_IMM : ROCE_RC_SEND_ONLY;
		if (first)
			return ROCE_RC_SEND_FIRST;
		if (last)
			return imm ? ROCE_RC_SEND_LAST_IMM : ROCE_RC_SEND_LAST;
		return ROCE_RC_SEND_MIDDLE;
	}
	if (first && last)
		return imm ? ROCE_RC_WRITE_ONLY_IMM : ROCE_RC_WRITE_ONLY;
	if (first)
		return ROCE_RC_WRITE_FIRST;
	if (last)
		return imm ? ROCE_RC_WRITE_LAST_IMM : ROCE_RC_WRITE_LAST;
	return ROCE_RC_WRITE_MIDDLE;
}

/*
 * rdma_rxe takes a FLUSH only with an ICRC of its own (proto/roce_icrc.h).
 * A QP whose peer showed it uses that one; otherwise each retry of an
 * unanswered FLUSH swaps the two ICRCs, and the one answered is kept (an
 * answer to a send before the last retry can teach the wrong one: the
 * next FLUSH then costs a retry, which teaches it back). With retry_cnt 0
 * there is no retry to swap on.
 */
static bool srdma_req_flush_icrc(struct srdma_qp *qp)
{
	u8 retries = qp->attr.retry_cnt - qp->comp.retry_left;
	bool rxe = READ_ONCE(qp->req.peer_rxe_flush) || qp->req.rxe_flush_icrc;

	lockdep_assert_held(&qp->sq_lock);
	qp->req.flush_icrc_sent = rxe ^ (retries & 1);
	return qp->req.flush_icrc_sent;
}

/*
 * Transmit the next packet of WQE @qp->req.idx.
 * Return: 0, -ENOMEM (try again later), -EAGAIN (an ODP page is being
 * mapped: pause) or a negated ib_wc_status.
 */
static int srdma_req_send_one(struct srdma_qp *qp)
{
	struct softrdma_send_wqe *w = srdma_wqe(qp, qp->req.idx);
	struct srdma_swqe *st = srdma_st(qp, qp->req.idx);
	u32 mtu = qp->mtu;
	bool read = w->opcode == IB_UVERBS_WR_RDMA_READ;
	bool atomic = srdma_wr_atomic(w->opcode);
	bool place = srdma_wr_placement(w->opcode);
	bool first = !qp->req.off;
	u32 n = read || atomic ? 0 : min(st->len - qp->req.off, mtu);
	bool last = read || atomic || qp->req.off + n == st->len;
	bool rc = srdma_qp_reliable(qp);
	bool ud = srdma_qp_is_ud(qp);
	u8 opcode = srdma_req_opcode(w, first, last) |
		    srdma_qp_transport(qp);
	const struct roce_opcode_info *info = roce_opcode_lookup(opcode);
	u32 pad = -n & 3;
	struct roce_bth_fields bth = {
		.opcode = opcode,
		.se = last && (w->send_flags & IB_SEND_SOLICITED),
		.pad = pad,
		.pkey = ROCE_PKEY_DEFAULT,
		.qpn = ud ? w->wr.ud.remote_qpn : qp->attr.dest_qp_num,
		.psn = qp->req.psn,
		/* and the packet that fills the window, which an ACK opens */
		.ackreq = rc && (last || !(qp->req.psn % SRDMA_ACK_EVERY) ||
				 roce_psn_diff(qp->req.psn, qp->comp.una_psn) + 1 >=
				 qp->req.cwnd.cwnd || qp->comp.probing),
	};
	struct srdma_path *path = &qp->path;
	struct sk_buff *skb;
	u8 *hdr;
	int err;

	lockdep_assert_held(&qp->sq_lock);
	if (first)
		st->first_psn = qp->req.psn;
	/*
	 * Only RC lends pages: its WQE completes after the ACK. UC and UD
	 * complete once sent, when the user may reuse the buffer at once.
	 */
	skb = srdma_pkt_alloc(qp, info->hdr_len, n,
			      !rc || (w->send_flags & IB_SEND_INLINE) || place);
	if (!skb)
		return -ENOMEM;
	hdr = skb->data;
	roce_bth_encode((struct roce_bth *)hdr, &bth);
	if (ud) {
		struct srdma_ah *ah = srdma_ah_lookup_rcu(qp_sdev(qp),
							  w->wr.ud.ah_num,
							  qp->ibqp.pd);
		u32 qkey = w->wr.ud.remote_qkey;

		if (!ah) {
			kfree_skb(skb);
			return -IB_WC_LOC_QP_OP_ERR;
		}
		path = &ah->path;
		/* A Q_Key with the high bit set means the QP's own. */
		roce_deth_encode((void *)(hdr + info->off[ROCE_EXT_DETH]),
				 qkey & 0x80000000 ? qp->attr.qkey : qkey,
				 qp->ibqp.qp_num);
	}
	if (info->flags & ROCE_F_XRCETH)
		roce_xrceth_encode((void *)(hdr + info->off[ROCE_EXT_XRCETH]),
				   w->xrc_srqn);
	if (info->flags & ROCE_F_FETH) {
		roce_feth_encode((void *)(hdr + info->off[ROCE_EXT_FETH]),
				 w->wr.flush.type, w->wr.flush.level);
		if (roce_icrc_rxe_quirk(opcode))
			srdma_tx_cb(skb)->rxe_flush_icrc =
				srdma_req_flush_icrc(qp);
	}
	/* A read asked again starts where the placed responses end. */
	if (info->flags & ROCE_F_RETH)
		roce_reth_encode((void *)(hdr + info->off[ROCE_EXT_RETH]),
				 w->wr.rdma.remote_addr + qp->req.off,
				 w->wr.rdma.rkey,
				 w->opcode == SOFTRDMA_WR_FLUSH ?
				 (u32)w->wr.flush.length :
				 qp->req.rd_len ?: st->len - qp->req.off);
	if (info->flags & ROCE_F_ATMETH) {
		bool cas = w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;

		/* Verbs' compare_add is the compare of a CAS, or the addend. */
		roce_atmeth_encode((void *)(hdr + info->off[ROCE_EXT_ATMETH]),
				   w->wr.atomic.remote_addr, w->wr.atomic.rkey,
				   cas ? w->wr.atomic.swap :
					 w->wr.atomic.compare_add,
				   cas ? w->wr.atomic.compare_add : 0);
	}
	if (info->flags & ROCE_F_IMMDT)
		roce_immdt_set((void *)(hdr + info->off[ROCE_EXT_IMMDT]),
			       w->ex);
	if (info->flags & ROCE_F_IETH)		/* ex: a host-order rkey */
		roce_ieth_encode((void *)(hdr + info->off[ROCE_EXT_IETH]),
				 (__force u32)w->ex);

	if (place) {
		srdma_pkt_put_data(skb, w->wr.atomic_write.data, n, pad);
	} else if ((w->send_flags & IB_SEND_INLINE) || atomic) {
		srdma_pkt_put_data(skb, (u8 *)w->sge + qp->req.off, n, pad);
	} else {
		struct srdma_pkt_src src = {
			.qp = qp, .sge = w->sge, .nsge = w->num_sge,
			.off = qp->req.off,
		};

		err = srdma_pkt_put(skb, &src, n, pad);
		if (err) {
			kfree_skb(skb);
			if (err == -ENOMEM || err == -EAGAIN)
				return err;
			return err == -EACCES ? -IB_WC_LOC_PROT_ERR :
						-IB_WC_LOC_LEN_ERR;
		}
	}
	/*
	 * A lost packet is a lost packet: RC sends it again (a probe counts
	 * as one, not as a resend). A packet sent once may be timed.
	 */
	if (roce_psn_before(qp->req.psn, qp->req.sent_psn)) {
		if (!qp->comp.probing)
			srdma_count(qp_sdev(qp), SRDMA_CNT_RETRANSMITS);
	} else if (bth.ackreq) {
		srdma_comp_rtt_start(qp, qp->req.psn);
	}
	srdma_cc_sent(qp, skb->len);
	srdma_xmit_path(qp_sdev(qp), path, skb);

	if (read) {
		qp->req.psn = roce_psn_add(st->first_psn, st->npkts);
	} else {
		qp->req.psn = roce_psn_next(qp->req.psn);
		qp->req.off += n;
	}
	if (roce_psn_after(qp->req.psn, qp->req.sent_psn))
		qp->req.sent_psn = qp->req.psn;
	if (!rc)
		qp->comp.una_psn = qp->req.psn;	/* nothing to wait for */
	if (last) {
		if ((read || atomic || place) && !st->rd_out) {
			st->rd_out = true;
			qp->req.rd_out++;
		}
		qp->req.idx++;
		qp->req.off = 0;
	}
	return 0;
}

/*
 * Execute local WQE @qp->req.idx (bind, local invalidate). Once only: a
 * rewind for an earlier request passes over it again.
 * Return: 0 or a negated ib_wc_status.
 */
static int srdma_req_local(struct srdma_qp *qp)
{
	struct softrdma_send_wqe *w = srdma_wqe(qp, qp->req.idx);
	struct srdma_swqe *st = srdma_st(qp, qp->req.idx);
	u8 status = IB_WC_SUCCESS;

	lockdep_assert_held(&qp->sq_lock);
	if (!st->local_done) {
		st->local_done = true;
		if (w->opcode == IB_UVERBS_WR_BIND_MW)
			status = srdma_mw_bind(qp, w);
		else if (w->opcode == SRDMA_WR_REG_MR)
			status = srdma_frmr_register(qp, w);
		else if (srdma_key_invalidate(qp, (__force u32)w->ex, false))
			status = IB_WC_LOC_QP_OP_ERR;
		if (status)
			return -status;
	}
	qp->req.idx++;
	return 0;
}

/*
 * sq.idx <= req.idx <= req.fetched <= sq.idx + slots, which bounds every loop
 * over the SQ by its size. Checked where the send, receive and timer
 * paths start: a loop from a broken order would run 2^32 times under
 * sq_lock. Return: false, after marking the SQ bad: the QP must fail.
 */
bool srdma_sq_order_ok(struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	if (qp->req.idx - qp->sq.idx <= qp->req.fetched - qp->sq.idx &&
	    qp->req.fetched - qp->sq.idx <= qp->sq.num_slots)
		return true;
	qp->req.sq_bad = true;
	return false;
}

/*
 * Put the requester on the packet a tail loss probe sends (RFC 8985's
 * choice): the newest one sent. The responder's answer then tells all:
 * a duplicate or the one missing packet is ACKed with everything before
 * it, and a gap before it draws a sequence NAK, so the completer never
 * guesses from a late ACK. A read or atomic still waiting for its answer
 * goes first: an answer is what is missing, asked from what arrived of it.
 * Return: false if nothing unacknowledged is found.
 */
static bool srdma_req_probe_pos(struct srdma_qp *qp)
{
	struct srdma_swqe *st;
	u32 i;

	lockdep_assert_held(&qp->sq_lock);
	i = srdma_req_unanswered(qp);
	if (i != qp->req.idx) {
		st = srdma_st(qp, i);
		qp->req.idx = i;
		qp->req.off = st->read_off;	/* whole MTUs */
		qp->req.psn = roce_psn_add(st->first_psn,
					   st->read_off / qp->mtu);
		return true;
	}
	if (qp->req.off) {
		qp->req.off -= qp->mtu;	/* only a last packet is short */
		qp->req.psn = roce_psn_sub(qp->req.psn, 1);
		return !roce_psn_before(qp->req.psn, qp->comp.una_psn);
	}
	for (i = qp->req.idx; i != qp->sq.idx;) {
		st = srdma_st(qp, --i);
		if (st->local)
			continue;
		if (srdma_wr_needs_resp(srdma_wqe(qp, i)->opcode))
			return false;	/* answered: all before it arrived */
		qp->req.idx = i;
		qp->req.off = (st->npkts - 1) * qp->mtu;
		qp->req.psn = roce_psn_add(st->first_psn, st->npkts - 1);
		return !roce_psn_before(qp->req.psn, qp->comp.una_psn);
	}
	return false;
}

/* Where the requester stands, kept while one packet goes out of turn. */
struct srdma_req_pos {
	u32 idx;
	u32 off;
	u32 psn;
	u32 rd_out;
};

static void srdma_req_save(struct srdma_qp *qp, struct srdma_req_pos *pos)
{
	*pos = (struct srdma_req_pos) {
		.idx = qp->req.idx, .off = qp->req.off,
		.psn = qp->req.psn, .rd_out = qp->req.rd_out,
	};
}

static void srdma_req_restore(struct srdma_qp *qp,
			      const struct srdma_req_pos *pos)
{
	qp->req.idx = pos->idx;
	qp->req.off = pos->off;
	qp->req.psn = pos->psn;
	qp->req.rd_out = pos->rd_out;
}

/*
 * Send the packet the requester was pointed at, out of turn: a read or
 * atomic sent again stays counted as it was in rd_out.
 */
static void srdma_req_send_here(struct srdma_qp *qp)
{
	struct srdma_swqe *st = srdma_st(qp, qp->req.idx);
	bool st_rd_out = st->rd_out;

	lockdep_assert_held(&qp->sq_lock);
	if (!st->status && !st->local) {
		rcu_read_lock();
		srdma_req_send_one(qp);
		rcu_read_unlock();
	}
	st->rd_out = st_rd_out;
}

/**
 * srdma_req_probe - a tail loss probe (comp.c): one packet goes once more,
 * asking for an ACK, and the requester stays where it was
 * @qp: an RC QP with packets unacknowledged, sq_lock held
 * @oldest: send the oldest unacknowledged packet (srdma_req_oldest()), not
 *	the newest (srdma_req_probe_pos())
 *
 * Nothing moves back here: a gap the answer shows is NAKed by the
 * responder, and the NAK sends again. Paced or not, within the window or
 * not: one packet. A failure to send (no memory, an ODP page being mapped,
 * a bad WQE) leaves it to the next probe or the timer.
 */
void srdma_req_probe(struct srdma_qp *qp, bool oldest)
{
	struct srdma_req_pos pos;

	lockdep_assert_held(&qp->sq_lock);
	if (srdma_req_none_sent(qp))
		return;
	srdma_req_save(qp, &pos);
	if (oldest)
		srdma_req_oldest(qp);
	else if (!srdma_req_probe_pos(qp))
		goto out;
	srdma_req_send_here(qp);
out:
	srdma_req_restore(qp, &pos);
}

/**
 * srdma_req_ask_again - ask once more for part of the answer to a read,
 * or for an atomic's (comp.c: its responses past a gap were kept), and
 * leave the requester where it was
 * @qp: sq_lock held
 * @idx: the read or atomic, sent before
 * @psn: the first response asked for, one of the WQE's
 * @len: a read: the bytes from there (whole MTUs, or up to its end)
 *
 * IBA 9.7.5.1.1: a read asked again names the PSN, address and length of
 * what it wants; responders answer a part (rdma_rxe checks only that it
 * lies within the read).
 */
void srdma_req_ask_again(struct srdma_qp *qp, u32 idx, u32 psn, u32 len)
{
	struct srdma_swqe *st = srdma_st(qp, idx);
	struct srdma_req_pos pos;

	lockdep_assert_held(&qp->sq_lock);
	srdma_req_save(qp, &pos);
	qp->req.idx = idx;
	qp->req.psn = psn;
	qp->req.off = roce_psn_diff(psn, st->first_psn) * qp->mtu;
	qp->req.rd_len = len;
	srdma_req_send_here(qp);
	qp->req.rd_len = 0;
	srdma_req_restore(qp, &pos);
}

/* Send what the window allows. Return: true if the QP must enter ERR. */
bool __srdma_req_run(struct srdma_qp *qp)
{
	bool idle = !srdma_req_waiting(qp);
	u32 burst_psn = qp->comp.una_psn;	/* RC: the window; else this call */
	u32 posted, started = 0;
	int avail, err;

	lockdep_assert_held(&qp->sq_lock);
	if (READ_ONCE(qp->state) != IB_QPS_RTS || qp->comp.rnr_wait || qp->dying)
		return false;
	if (!srdma_sq_order_ok(qp))
		return true;
	/*
	 * The producer may not move back behind WQEs already fetched, nor
	 * past a full ring: either is a corrupt ring, and fails the QP at
	 * once. So posted, too, is in order: fetched <= posted <= sq.idx +
	 * slots.
	 */
	avail = srdma_ring_avail(&qp->sq);
	if (avail < 0 || (u32)avail < qp->req.fetched - qp->sq.idx) {
		qp->req.sq_bad = true;
		return true;
	}
	posted = qp->sq.idx + avail;

	while (qp->req.idx != posted) {
		/*
		 * RC waits for ACKs to open the window. UC and UD need not,
		 * but a burst is all they send per call: the rest goes out
		 * from the work item, so one call cannot hog the CPU.
		 */
		if (roce_psn_diff(qp->req.psn, burst_psn) >=
		    (!srdma_qp_reliable(qp) ? SRDMA_WINDOW :
		     qp->req.cwnd.cwnd)) {
			if (!srdma_qp_reliable(qp))
				queue_work(srdma_tx_wq, &qp->req.work);
			break;
		}
		/* Local WQEs take no PSN: they have a burst of their own. */
		if (++started > SRDMA_WINDOW) {
			queue_work(srdma_tx_wq, &qp->req.work);
			break;
		}
		if (qp->req.idx == qp->req.fetched)
			srdma_fetch(qp);
		if (srdma_st(qp, qp->req.idx)->status) {
			qp->req.idx++;	/* completes in order, then errors */
			break;
		}
		/* The responder holds max_rd_atomic reads and atomics. */
		if (srdma_wr_needs_resp(srdma_wqe(qp, qp->req.idx)->opcode) &&
		    qp->req.rd_out >= max_t(u32, qp->attr.max_rd_atomic, 1))
			break;	/* an answer sends on */
		/*
		 * A fenced WQE starts once the reads and atomics before it
		 * are answered (IBA 10.8.3.3): its peer may act on their data.
		 */
		if ((srdma_wqe(qp, qp->req.idx)->send_flags & IB_SEND_FENCE) &&
		    qp->req.rd_out && !qp->req.off)
			break;	/* an answer sends on */
		/* Paced: the pace timer sends on. */
		if (!srdma_st(qp, qp->req.idx)->local && !srdma_cc_may_send(qp))
			break;
		if (srdma_st(qp, qp->req.idx)->local) {
			err = srdma_req_local(qp);
		} else {
			rcu_read_lock();	/* a UD WQE's AH */
			err = srdma_req_send_one(qp);
			rcu_read_unlock();
		}
		if (err == -ENOMEM) {
			if (!srdma_qp_reliable(qp))
				queue_work(srdma_tx_wq, &qp->req.work);
			break;
		}
		if (err == -EAGAIN) {
			/* As after an RNR NAK: the timer sends on. */
			qp->comp.rnr_wait = true;
			srdma_arm_timer(qp, SRDMA_ODP_WAIT);
			break;
		}
		if (err) {
			srdma_st(qp, qp->req.idx)->status = -err;
			qp->req.idx++;
			qp->req.off = 0;
			break;
		}
	}
	/*
	 * The ACK timeout counts from the first request after an idle spell
	 * or from the last progress (see srdma_timer_fn()). An answer still
	 * to come waits on the timer, even when all is ACKed.
	 */
	if (srdma_req_waiting(qp)) {
		if (idle)
			qp->comp.ack_stamp = jiffies;
		srdma_comp_arm(qp);
	}
	return srdma_comp_progress(qp);
}

/* Doorbell and QP-state entry point. */
void srdma_req_run(struct srdma_qp *qp)
{
	bool fail;

	if (!qp->sq.hdr)
		return;		/* an XRC target: no SQ, nothing to send */
	spin_lock_bh(&qp->sq_lock);
	fail = __srdma_req_run(qp);
	srdma_req_unlock(qp, fail);
}

/* Entering RTS: the send PSN and retry budgets take effect. */
void srdma_req_start(struct srdma_qp *qp)
{
	spin_lock_bh(&qp->sq_lock);
	qp->req.idx = qp->sq.idx;
	qp->req.fetched = qp->sq.idx;
	qp->req.off = 0;
	qp->req.psn = qp->attr.sq_psn;
	qp->req.sent_psn = qp->attr.sq_psn;
	qp->comp.una_psn = qp->attr.sq_psn;
	qp->req.rd_out = 0;
	qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.rnr_left = qp->attr.rnr_retry;
	qp->comp.rnr_wait = false;
	qp->comp.read_gap = false;
	roce_rtt_init(&qp->comp.rtt);
	qp->comp.rtt_timing = false;
	qp->comp.probes = 0;
	qp->comp.probing = false;
	qp->comp.seq_rewound = false;
	qp->comp.peer_keeps = true;
	qp->comp.sel_used = false;
	qp->comp.sub_out = false;
	qp->comp.parts_asked = false;
	qp->comp.probe_part = false;
	qp->comp.ooo_lost = false;
	srdma_reorder_purge(qp_sdev(qp), &qp->comp.ooo);
	qp->req.sq_bad = false;
	qp->req.rxe_flush_icrc = false;
	roce_cwnd_init(&qp->req.cwnd, SRDMA_CWND_INIT, SRDMA_WINDOW);
	srdma_cc_qp_start(qp);
	spin_unlock_bh(&qp->sq_lock);
}

/**
 * srdma_req_fill_res - the requester's progress, for "rdma -dd resource
 * show qp" (srdma_fill_res_qp_entry()): where a QP that stopped sending
 * stands
 * @msg: the netlink message, in the driver attributes' nest
 * @qp: the QP
 *
 * WQEs posted and not completed, and of those not sent yet; the oldest
 * unacknowledged and the next PSN; reads and atomics unanswered; retries
 * left; whether the ACK (or RNR) timer is armed and an RNR NAK pauses it;
 * the smoothed round trip that times tail loss probes.
 */
int srdma_req_fill_res(struct sk_buff *msg, struct srdma_qp *qp)
{
	u32 open, sent, una, next, rd_out, retry, srtt;
	bool timer, rnr;

	spin_lock_bh(&qp->sq_lock);
	/*
	 * An XRC target has no SQ; a QP being destroyed (a dump may still
	 * run, see struct srdma_qp) loses its copies, then its ring.
	 */
	if (!qp->sq.hdr || qp->dying) {
		spin_unlock_bh(&qp->sq_lock);
		return 0;
	}
	open = srdma_sq_pending(qp);
	sent = qp->req.idx - qp->sq.idx;
	una = qp->comp.una_psn;
	next = qp->req.psn;
	rd_out = qp->req.rd_out;
	retry = qp->comp.retry_left;
	timer = timer_pending(&qp->comp.timer);
	rnr = qp->comp.rnr_wait;
	srtt = qp->comp.rtt.srtt;
	spin_unlock_bh(&qp->sq_lock);

	if (rdma_nl_put_driver_u32(msg, "sq_open_wqes", open) ||
	    rdma_nl_put_driver_u32(msg, "sq_unsent_wqes",
				   open > sent ? open - sent : 0) ||
	    rdma_nl_put_driver_u32_hex(msg, "una_psn", una) ||
	    rdma_nl_put_driver_u32_hex(msg, "next_psn", next) ||
	    rdma_nl_put_driver_u32(msg, "rd_out", rd_out) ||
	    rdma_nl_put_driver_u32(msg, "retry_left", retry) ||
	    rdma_nl_put_driver_u32(msg, "ack_timer", timer) ||
	    rdma_nl_put_driver_u32(msg, "rnr_wait", rnr) ||
	    rdma_nl_put_driver_u32(msg, "srtt_us", srtt))
		return -EMSGSIZE;
	return 0;
}
