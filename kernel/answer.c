// SPDX-License-Identifier: GPL-2.0
/*
 * The responder's answers: ACKs and NAKs, read responses and atomic ACKs
 * leave in PSN order from one queue (qp->resp.rd), small ones at once and
 * large reads from a work item a burst at a time. The reads and atomics
 * executed are held (qp->resp.held) as the responder resources a duplicate
 * request is answered from, never executed twice.
 *
 * Runs under qp->rq_lock, in softirq (resp.c) or the work item.
 */
#include "resp.h"

void srdma_resp_ack_send(struct srdma_qp *qp, u32 psn, u8 syndrome,
			 u32 msn)
{
	u8 opcode = ROCE_RC_ACK | srdma_qp_transport(qp);
	const struct roce_opcode_info *info = roce_opcode_lookup(opcode);
	struct roce_bth_fields bth = {
		.opcode = opcode,
		.pkey = ROCE_PKEY_DEFAULT,
		.qpn = qp->attr.dest_qp_num,
		.psn = psn,
	};
	struct sk_buff *skb;

	lockdep_assert_held(&qp->rq_lock);
	if (!srdma_qp_reliable(qp))
		return;		/* UC: no acknowledgements */
	skb = srdma_pkt_alloc(qp, info->hdr_len, 0, true);
	if (!skb)
		return;
	roce_bth_encode((struct roce_bth *)skb->data, &bth);
	roce_aeth_encode((void *)(skb->data + info->off[ROCE_EXT_AETH]),
			 syndrome, msn);
	srdma_pkt_put_data(skb, NULL, 0, 0);
	srdma_xmit(qp, skb);
}

/*
 * Responses leave in PSN order (IBA 9.7.5.1): while answers to earlier
 * reads wait in the queue, an ACK or a NAK that leaves the QP alive waits
 * behind them, or it would acknowledge PSNs whose read responses are yet
 * to come. Each such answer covers every PSN before its own, so one
 * waiting last is replaced by the newer one, and the slot that a read
 * leaves free behind itself (srdma_resp_queue_full()) is always there:
 * nothing overtakes a read response, and no answer is lost.
 */
void srdma_resp_ack(struct srdma_qp *qp, u32 psn, u8 syndrome)
{
	struct srdma_rd *rd;

	lockdep_assert_held(&qp->rq_lock);
	if (qp->resp.rd_head == qp->resp.rd_tail) {
		srdma_resp_ack_send(qp, psn, syndrome, qp->resp.msn);
		return;
	}
	rd = &qp->resp.rd[(qp->resp.rd_head - 1) % SRDMA_ANSWERS];
	if (!rd->ack) {
		rd = &qp->resp.rd[qp->resp.rd_head++ % SRDMA_ANSWERS];
	} else if (syndrome == srdma_ack_syndrome() &&
		   rd->syndrome != syndrome && roce_psn_diff(psn, rd->psn) < 0) {
		return;	/* a duplicate's ACK: the NAK waiting covers it */
	}
	*rd = (struct srdma_rd) {
		.ack = true,
		.syndrome = syndrome,
		.psn = psn,
		.msn = qp->resp.msn,
	};
}

/* Response packets sent per lock hold: receive softirqs run in between. */
#define SRDMA_READ_BURST	8

static void srdma_resp_atomic_ack(struct srdma_qp *qp, struct srdma_rd *rd)
{
	const struct roce_opcode_info *info =
		roce_opcode_lookup(ROCE_RC_ATOMIC_ACK | srdma_qp_transport(qp));
	struct roce_bth_fields bth = {
		.opcode = ROCE_RC_ATOMIC_ACK | srdma_qp_transport(qp),
		.pkey = ROCE_PKEY_DEFAULT,
		.qpn = qp->attr.dest_qp_num,
		.psn = rd->psn,
	};
	struct sk_buff *skb;

	lockdep_assert_held(&qp->rq_lock);
	skb = srdma_pkt_alloc(qp, info->hdr_len, 0, true);
	if (!skb)
		return;		/* the requester asks again */
	roce_bth_encode((struct roce_bth *)skb->data, &bth);
	roce_aeth_encode((void *)(skb->data + info->off[ROCE_EXT_AETH]),
			 srdma_ack_syndrome(), rd->msn);
	roce_atmack_encode((void *)(skb->data + info->off[ROCE_EXT_ATMACK]),
			   rd->orig);
	srdma_pkt_put_data(skb, NULL, 0, 0);
	srdma_xmit(qp, skb);
	rd->sent = 1;
}

/* The packets of a read's answer: an empty read takes one. */
static u32 srdma_rd_npkts(const struct srdma_rd *rd, u32 mtu)
{
	return max_t(u32, 1, DIV_ROUND_UP(rd->len, mtu));
}

/*
 * Send up to SRDMA_READ_BURST response packets of the oldest queued read.
 * Return: true when that read is fully answered.
 */
static bool srdma_resp_read_burst(struct srdma_qp *qp, struct srdma_rd *rd)
{
	u32 mtu = qp->mtu;
	u32 npkts = srdma_rd_npkts(rd, mtu);
	struct srdma_mr *mr = NULL;
	u32 burst = 0;
	int err;

	lockdep_assert_held(&qp->rq_lock);
	if (rd->ack) {
		srdma_resp_ack_send(qp, rd->psn, rd->syndrome, rd->msn);
		return true;
	}
	if (rd->atomic) {
		srdma_resp_atomic_ack(qp, rd);
		return true;
	}
	if (rd->len) {
		/* Looked up again: the MR may have gone since the request. */
		qp->resp.xrc_pd = rd->pd;
		mr = srdma_resp_mr(qp, rd->rkey, rd->va, rd->len,
				   IB_ACCESS_REMOTE_READ);
		if (!mr)
			return true;	/* the requester times out */
	}
	for (; rd->sent < npkts && burst < SRDMA_READ_BURST; burst++) {
		u32 i = rd->sent;
		u32 off = i * mtu;
		u32 n = min(rd->len - off, mtu);
		u8 opcode = (npkts == 1 ? ROCE_RC_READ_RESP_ONLY :
			     !i ? ROCE_RC_READ_RESP_FIRST :
			     i == npkts - 1 ? ROCE_RC_READ_RESP_LAST :
			     ROCE_RC_READ_RESP_MIDDLE) | srdma_qp_transport(qp);
		const struct roce_opcode_info *info = roce_opcode_lookup(opcode);
		u32 pad = -n & 3;
		struct roce_bth_fields bth = {
			.opcode = opcode,
			.pad = pad,
			.pkey = ROCE_PKEY_DEFAULT,
			.qpn = qp->attr.dest_qp_num,
			.psn = roce_psn_add(rd->psn, i),
		};
		struct srdma_pkt_src src = { .mr = mr, .off = rd->va + off };
		struct sk_buff *skb;
		u8 *hdr;

		/*
		 * Paced packet by packet, not burst by burst: at a low rate
		 * a burst's wait alone could outlast the requester's ACK
		 * timeout, which each response packet restarts.
		 */
		if (burst && !srdma_cc_may_send(qp))
			break;

		/*
		 * Copied, not lent: the owner of the memory may write it while
		 * the response is in flight, which must not break the ICRC.
		 */
		skb = srdma_pkt_alloc(qp, info->hdr_len, n, true);
		if (!skb)
			break;
		hdr = skb->data;
		roce_bth_encode((struct roce_bth *)hdr, &bth);
		if (info->flags & ROCE_F_AETH)
			roce_aeth_encode((void *)(hdr + info->off[ROCE_EXT_AETH]),
					 srdma_ack_syndrome(), rd->msn);
		err = srdma_pkt_put(skb, &src, n, pad);
		if (err) {
			kfree_skb(skb);
			/*
			 * Not for want of memory: an ODP page unmapped since
			 * the request. Give the read up; the requester asks
			 * again.
			 */
			if (err != -ENOMEM)
				rd->sent = npkts;
			break;
		}
		srdma_cc_sent(qp, skb->len);
		srdma_xmit(qp, skb);
		rd->sent++;
	}
	if (mr)
		srdma_mr_put(mr);
	return rd->sent >= npkts;
}

/*
 * Must read response @rd wait for the QP's rate? DCQCN paces what the QP
 * sends, requests and read responses alike: the peer's CNPs answer
 * marked responses too. ACKs and atomic responses go at once. When it
 * must, the pace timer queues the work again.
 */
static bool srdma_resp_paced(struct srdma_qp *qp, const struct srdma_rd *rd)
{
	lockdep_assert_held(&qp->rq_lock);
	return rd->len && !rd->ack && !rd->atomic && !srdma_cc_may_send(qp);
}

/*
 * Read responses go out from process context, a burst per lock hold, so a
 * large read cannot flood the receive backlog of a local peer in one
 * softirq. (Small ones go at once: see srdma_resp_answer().)
 */
void srdma_resp_read_work(struct work_struct *work)
{
	struct srdma_qp *qp = container_of(work, struct srdma_qp, resp.rd_work);

	for (;;) {
		enum ib_qp_state state;
		struct srdma_rd *rd;
		bool more;

		spin_lock_bh(&qp->rq_lock);
		state = READ_ONCE(qp->state);
		/* Only a QP that takes requests answers them. */
		if (qp->resp.rd_head == qp->resp.rd_tail ||
		    (state != IB_QPS_RTR && state != IB_QPS_RTS &&
		     state != IB_QPS_SQD && state != IB_QPS_SQE)) {
			qp->resp.rd_tail = qp->resp.rd_head;
			spin_unlock_bh(&qp->rq_lock);
			return;
		}
		rd = &qp->resp.rd[qp->resp.rd_tail % SRDMA_ANSWERS];
		if (srdma_resp_paced(qp, rd)) {
			spin_unlock_bh(&qp->rq_lock);
			return;
		}
		if (srdma_resp_read_burst(qp, rd))
			qp->resp.rd_tail++;
		more = qp->resp.rd_head != qp->resp.rd_tail;
		spin_unlock_bh(&qp->rq_lock);
		if (!more)
			return;
		cond_resched();
	}
}

/*
 * Send the answer @rd now if nothing is queued before it and it fits in
 * one burst (an atomic, a small read: no context switch on the latency
 * path), else queue it behind the reads in flight: responses leave in
 * PSN order. Called under rq_lock, like the work.
 */
static void srdma_resp_answer(struct srdma_qp *qp, struct srdma_rd *rd)
{
	lockdep_assert_held(&qp->rq_lock);
	if (qp->resp.rd_head - qp->resp.rd_tail == 1 &&
	    (rd->atomic || rd->len <= SRDMA_READ_BURST * qp->mtu) &&
	    !srdma_resp_paced(qp, rd) && srdma_resp_read_burst(qp, rd)) {
		qp->resp.rd_tail++;
		return;
	}
	queue_work(srdma_tx_wq, &qp->resp.rd_work);
}

/*
 * No room for another read or atomic (a new request, or a duplicate
 * replayed) and the ACK or NAK that may have to wait behind it.
 */
bool srdma_resp_queue_full(const struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->rq_lock);
	return qp->resp.rd_head - qp->resp.rd_tail > SRDMA_ANSWERS - 2;
}

/*
 * The entry to record a new read or atomic in, once there is room to
 * answer it and it has been executed: the entry is the newest held from
 * then on (srdma_resp_rd_held()), so it must not be taken for a request
 * that may still fail. Return: NULL when the queue of answers is full.
 */
struct srdma_rd *srdma_resp_hold(struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->rq_lock);
	if (srdma_resp_queue_full(qp))
		return NULL;
	return &qp->resp.held[qp->resp.held_head++ % SRDMA_MAX_RD_ATOMIC];
}

/*
 * Queue the answer to held request @held, or to its part from PSN @psn
 * on, under the MSN it had. Answers leave in PSN order: one asked again
 * goes before those queued for later requests, which go on where they
 * were. A requester that dropped what it had of them asks for them again
 * (go-back-N sends every later request again: srdma_resp_read_replay()
 * then restarts a stream still queued); one that kept them does not.
 * Return: 0, or -EBUSY when the queue is full.
 */
int srdma_resp_queue(struct srdma_qp *qp, const struct srdma_rd *held,
		     u32 psn)
{
	u32 skip = roce_psn_diff(psn, held->psn) * qp->mtu;
	struct srdma_rd *rd, *prev;
	u32 i;

	lockdep_assert_held(&qp->rq_lock);
	if (srdma_resp_queue_full(qp))
		return -EBUSY;
	for (i = qp->resp.rd_head; i != qp->resp.rd_tail; i--) {
		prev = &qp->resp.rd[(i - 1) % SRDMA_ANSWERS];
		if (!roce_psn_after(prev->psn, psn))
			break;
		qp->resp.rd[i % SRDMA_ANSWERS] = *prev;
	}
	qp->resp.rd_head++;
	rd = &qp->resp.rd[i % SRDMA_ANSWERS];
	*rd = *held;
	rd->va += skip;
	rd->len -= skip;
	rd->psn = psn;
	rd->sent = 0;
	srdma_resp_answer(qp, rd);
	return 0;
}

/*
 * The reads and atomics this responder still holds as responder resources
 * (max_dest_rd_atomic of them, since it entered RTR), newest first: only
 * these are answered again when asked again.
 * Return: the @i-th newest (from 1), or NULL.
 */
static struct srdma_rd *srdma_resp_rd_held(struct srdma_qp *qp, u32 i)
{
	u32 held = min_t(u32, qp->attr.max_dest_rd_atomic ?: 1,
			 SRDMA_MAX_RD_ATOMIC);

	lockdep_assert_held(&qp->rq_lock);
	if (i > held || i > qp->resp.held_head - qp->resp.held_start)
		return NULL;
	return &qp->resp.held[(qp->resp.held_head - i) % SRDMA_MAX_RD_ATOMIC];
}

/* Is queued answer @rd one to read @held's data (all of it or a part)? */
static bool srdma_rd_reads(const struct srdma_rd *rd,
			   const struct srdma_rd *held)
{
	return !rd->ack && !rd->atomic && !rd->placed &&
	       rd->rkey == held->rkey;
}

/*
 * The queued answer to held read @held that is still to send, or went
 * past, the response @psn: @at is then that response's packet in it.
 * @whole: only an answer that runs to the read's end (not a part).
 */
static struct srdma_rd *srdma_resp_queued(struct srdma_qp *qp,
					  const struct srdma_rd *held, u32 psn,
					  bool whole, u32 *at)
{
	u32 i;

	lockdep_assert_held(&qp->rq_lock);
	for (i = qp->resp.rd_tail; i != qp->resp.rd_head; i++) {
		struct srdma_rd *rd = &qp->resp.rd[i % SRDMA_ANSWERS];
		s32 d = roce_psn_diff(psn, rd->psn);

		if (!srdma_rd_reads(rd, held) || d < 0 ||
		    (whole && rd->va + rd->len != held->va + held->len) ||
		    d >= srdma_rd_npkts(rd, qp->mtu) ||
		    rd->va + (u64)d * qp->mtu != held->va +
		    (u64)roce_psn_diff(psn, held->psn) * qp->mtu)
			continue;
		*at = d;
		return rd;
	}
	return NULL;
}

/* Is a part of held read @held queued (srdma_resp_queue_part())? */
static bool srdma_resp_part_queued(struct srdma_qp *qp,
				   const struct srdma_rd *held)
{
	u32 i;

	lockdep_assert_held(&qp->rq_lock);
	for (i = qp->resp.rd_tail; i != qp->resp.rd_head; i++) {
		const struct srdma_rd *rd = &qp->resp.rd[i % SRDMA_ANSWERS];
		s32 d = roce_psn_diff(rd->psn, held->psn);

		if (srdma_rd_reads(rd, held) && d >= 0 &&
		    d < srdma_rd_npkts(held, qp->mtu) &&
		    rd->va + rd->len < held->va + held->len)
			return true;
	}
	return false;
}

/*
 * Part of held read @held, @len bytes from the response @psn on, asked
 * for alone by a requester that kept the responses past a gap: answered
 * first, ahead of what is queued, which goes on where it was (sending it
 * again would only repeat what the requester kept). Nothing is queued if
 * an answer still to send that part is, or another part of that read is
 * queued: one at a time, so that repeats (a forged peer's too) cannot
 * fill the queue; the requester's probe asks again.
 * Return: 0, or -EBUSY when the queue is full.
 */
static int srdma_resp_queue_part(struct srdma_qp *qp,
				 const struct srdma_rd *held, u32 psn, u32 len)
{
	struct srdma_rd *rd;
	u32 at;

	lockdep_assert_held(&qp->rq_lock);
	rd = srdma_resp_queued(qp, held, psn, false, &at);
	if ((rd && rd->sent <= at &&
	     at + DIV_ROUND_UP(len, qp->mtu) <= srdma_rd_npkts(rd, qp->mtu)) ||
	    srdma_resp_part_queued(qp, held))
		return 0;
	if (srdma_resp_queue_full(qp))
		return -EBUSY;
	rd = &qp->resp.rd[--qp->resp.rd_tail % SRDMA_ANSWERS];
	*rd = *held;
	rd->va += (u64)roce_psn_diff(psn, held->psn) * qp->mtu;
	rd->len = len;
	rd->psn = psn;
	rd->sent = 0;
	srdma_resp_answer(qp, rd);
	return 0;
}

/*
 * A duplicate read (the requester lost responses and asks again, IBA
 * 9.7.5.1.1) is answered again only if it repeats a read this responder
 * still holds: same key, the address of one of its packets, and either
 * the length from there to its end, or whole MTUs short of that (a part
 * asked for alone: srdma_resp_queue_part()). Anything else is dropped
 * without a NAK: a NAK would carry the current PSN and kill the
 * requester's work, and a forged duplicate must buy no reads.
 *
 * The rest of a read asked again while its answer is still queued goes
 * on from @psn (if it went past it) rather than a second copy queued
 * behind the first, whose packets after a lost one the requester would
 * only drop.
 * Return: 0, -ENOENT (not a held read), or -EBUSY (queue full).
 */
int srdma_resp_read_replay(struct srdma_qp *qp,
			   const struct roce_pkt_info *pkt, u32 psn)
{
	const struct roce_reth *reth = roce_pkt_reth(pkt);
	u32 len = roce_reth_len(reth);
	struct srdma_rd *rd, *queued;
	u32 i, npkts, at;
	u64 skip;

	lockdep_assert_held(&qp->rq_lock);
	for (i = 1; (rd = srdma_resp_rd_held(qp, i)); i++) {
		if (rd->atomic || rd->placed || rd->rkey != roce_reth_rkey(reth))
			continue;
		npkts = srdma_rd_npkts(rd, qp->mtu);
		if (roce_psn_before(psn, rd->psn) ||
		    roce_psn_diff(psn, rd->psn) >= npkts)
			continue;
		skip = (u64)roce_psn_diff(psn, rd->psn) * qp->mtu;
		if (roce_reth_va(reth) != rd->va + skip)
			continue;
		if (len && len < rd->len - skip && !(len % qp->mtu))
			return srdma_resp_queue_part(qp, rd, psn, len);
		if (len != rd->len - skip)
			continue;
		queued = srdma_resp_queued(qp, rd, psn, true, &at);
		if (!queued)
			return srdma_resp_queue(qp, rd, psn);
		if (queued->sent > at)
			queued->sent = at;
		return 0;
	}
	return -ENOENT;
}

/*
 * A duplicate atomic is not executed again: its saved result is sent
 * again, if this responder still holds it. So is a duplicate FLUSH or
 * ATOMIC WRITE (@placed) answered, never placed twice.
 * Return: 0, -ENOENT (not held), or -EBUSY (queue full).
 */
int srdma_resp_atomic_replay(struct srdma_qp *qp, u32 psn,
			     bool placed)
{
	struct srdma_rd *rd;
	u32 i;

	lockdep_assert_held(&qp->rq_lock);
	for (i = 1; (rd = srdma_resp_rd_held(qp, i)); i++)
		if ((placed ? rd->placed : rd->atomic) && rd->psn == psn)
			return srdma_resp_queue(qp, rd, psn);
	return -ENOENT;
}
