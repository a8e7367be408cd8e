// SPDX-License-Identifier: GPL-2.0
/*
 * Completer and retry of RC send queues: ACKs, NAKs and read responses
 * complete WQEs in order; a timeout, a sequence NAK or an RNR NAK sends
 * again from the oldest unacknowledged WQE (go-back-N). A tail loss
 * probe, a few round trips after the last progress, asks for an ACK
 * long before the QP's timeout would (proto/roce_rtt.h).
 *
 * Everything here runs under qp->sq_lock, from receive (softirq) and
 * from the QP timer.
 */
#include "req.h"

/* Tail loss probes in one wait for an ACK; the QP's timer ends it anyway. */
#define SRDMA_MAX_PROBES	6

/* RNR timer codes of the IB spec, in microseconds. */
static const u32 srdma_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

static void srdma_req_cqe(struct srdma_qp *qp, u32 idx, u8 status)
{
	struct softrdma_send_wqe *w = srdma_wqe(qp, idx);
	struct srdma_swqe *st = srdma_st(qp, idx);
	struct softrdma_cqe cqe = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = srdma_wr_to_wc_opcode(w->opcode),
		.byte_len = st->len,
		.qp_num = qp->ibqp.qp_num,
	};

	lockdep_assert_held(&qp->sq_lock);
	srdma_rd_done(qp, st);
	/*
	 * Free the slot before the completion is visible: a program that
	 * posts again as soon as it polls the CQE must find room.
	 */
	srdma_ring_consume(&qp->sq);
	if ((status || qp->sig_all || (w->send_flags & IB_SEND_SIGNALED)) &&
	    srdma_cq_add(to_scq(qp->ibqp.send_cq), &cqe, false) > 0)
		qp->req.sq_notify = true;	/* see srdma_req_unlock() */
}

/*
 * Complete, in order, every WQE that is fully acknowledged (before
 * @qp->comp.una_psn, or a read with all its data).
 * Return: true if a WQE completed in error: the QP must enter ERR.
 */
bool srdma_comp_progress(struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	while (qp->sq.idx != qp->req.idx) {
		struct softrdma_send_wqe *w = srdma_wqe(qp, qp->sq.idx);
		struct srdma_swqe *st = srdma_st(qp, qp->sq.idx);

		if (st->status) {
			srdma_req_cqe(qp, qp->sq.idx, st->status);
			return true;
		}
		/* A local WQE was executed in order: nothing to wait for. */
		if (!st->local &&
		    (srdma_wr_needs_resp(w->opcode) ? !st->read_done :
		     !roce_psn_before(srdma_last_psn(st), qp->comp.una_psn)))
			break;
		srdma_req_cqe(qp, qp->sq.idx, IB_WC_SUCCESS);
	}
	return false;
}

/*
 * Fail the oldest WQE with @status. The window may have stopped it part
 * sent: it counts as sent all the same, for completions go in order.
 * Return: true, the QP must enter ERR.
 */
static bool srdma_req_fail_oldest(struct srdma_qp *qp, u8 status)
{
	lockdep_assert_held(&qp->sq_lock);
	srdma_st(qp, qp->sq.idx)->status = status;
	if (qp->sq.idx == qp->req.idx) {
		qp->req.idx++;
		qp->req.off = 0;
	}
	return srdma_comp_progress(qp);
}

/* Nothing sent that is not answered: no WQE for a NAK to fail. */
bool srdma_req_none_sent(const struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	return qp->sq.idx == qp->req.idx && !qp->req.off;
}

/*
 * The oldest read or atomic not fully answered, whose responses the
 * completer takes next (or a probe asks for); qp->req.idx if none.
 */
u32 srdma_req_unanswered(struct srdma_qp *qp)
{
	u32 i;

	for (i = qp->sq.idx; i != qp->req.idx; i++)
		if (srdma_wr_needs_resp(srdma_wqe(qp, i)->opcode) &&
		    !srdma_st(qp, i)->read_done)
			break;
	return i;
}

/*
 * Point the requester at the first packet of WQE @i to send again: a send
 * or write's packet at qp->comp.una_psn, a read's request for the
 * responses not yet placed (a new request for the rest, IBA 9.7.5.1.1),
 * else the WQE's first packet.
 */
static void srdma_req_resume(struct srdma_qp *qp, u32 i)
{
	struct srdma_swqe *st = srdma_st(qp, i);
	u32 mtu = qp->mtu;

	lockdep_assert_held(&qp->sq_lock);
	qp->req.idx = i;
	if (srdma_wqe(qp, i)->opcode == IB_UVERBS_WR_RDMA_READ) {
		qp->req.off = st->read_off;	/* whole packets: MTUs */
		qp->req.psn = roce_psn_add(st->first_psn, st->read_off / mtu);
	} else if (!roce_psn_before(qp->comp.una_psn, st->first_psn) &&
		   roce_psn_diff(qp->comp.una_psn, st->first_psn) < st->npkts) {
		qp->req.off = roce_psn_diff(qp->comp.una_psn, st->first_psn) * mtu;
		qp->req.psn = qp->comp.una_psn;
	} else {
		qp->req.off = 0;
		qp->req.psn = st->first_psn;
	}
}

/* The oldest WQE's first packet to send again (srdma_req_resume()). */
void srdma_req_oldest(struct srdma_qp *qp)
{
	srdma_req_resume(qp, qp->sq.idx);
}

/*
 * The WQE sent (in full or in part) whose packets hold @psn: the one a
 * NAK for @psn names. Return: false if none does.
 */
static bool srdma_req_at_psn(struct srdma_qp *qp, u32 psn, u32 *idx)
{
	u32 end = qp->req.idx + !!qp->req.off, i;

	lockdep_assert_held(&qp->sq_lock);
	for (i = qp->sq.idx; i != end; i++) {
		const struct srdma_swqe *st = srdma_st(qp, i);

		if (!st->local && !roce_psn_before(psn, st->first_psn) &&
		    roce_psn_diff(psn, st->first_psn) < st->npkts) {
			*idx = i;
			return true;
		}
	}
	return false;
}

/* What a rewind forgets of the sender's state (Karn, probes, resends). */
static void srdma_req_rewind_state(struct srdma_qp *qp)
{
	qp->comp.rtt_timing = false;	/* Karn: either copy may be ACKed */
	qp->comp.probing = false;	/* what goes now is resent */
	qp->comp.seq_rewound = false;
	qp->comp.sel_used = false;
}

/*
 * Go back to the oldest unacknowledged PSN (go-back-N, srdma_req_oldest()).
 * Later WQEs start over.
 */
static void srdma_req_rewind(struct srdma_qp *qp)
{
	u32 i;

	lockdep_assert_held(&qp->sq_lock);
	if (srdma_req_none_sent(qp))
		return;
	for (i = qp->sq.idx + 1; i != qp->req.fetched; i++)
		srdma_st(qp, i)->read_off = 0;
	/* Nothing before req.idx any more: every answer is asked again. */
	for (i = qp->sq.idx; i != qp->req.fetched; i++)
		srdma_st(qp, i)->rd_out = false;
	qp->req.rd_out = 0;
	srdma_req_rewind_state(qp);
	/* What was kept past a gap is asked for again with the rest. */
	qp->comp.sub_out = false;
	qp->comp.probe_part = false;
	qp->comp.ooo_lost = false;
	srdma_reorder_purge(qp_sdev(qp), &qp->comp.ooo);
	srdma_req_oldest(qp);
	qp->comp.una_psn = qp->req.psn;
}

/*
 * Go back to @psn, which a sequence NAK names: the responder took every
 * request before it, so the reads and atomics before it are still being
 * answered and are not asked again (their answers, and the responses
 * kept of them, stay); the WQEs from @psn's on start over. Without a WQE
 * at @psn, go back to the oldest (srdma_req_rewind()).
 */
static void srdma_req_rewind_to(struct srdma_qp *qp, u32 psn)
{
	u32 i, at;

	lockdep_assert_held(&qp->sq_lock);
	if (srdma_req_none_sent(qp))
		return;
	if (!srdma_req_at_psn(qp, psn, &at)) {
		srdma_req_rewind(qp);
		return;
	}
	for (i = at + 1; i != qp->req.fetched; i++)
		srdma_st(qp, i)->read_off = 0;
	qp->req.rd_out = 0;
	for (i = qp->sq.idx; i != qp->req.fetched; i++) {
		struct srdma_swqe *st = srdma_st(qp, i);

		if (i - qp->sq.idx >= at - qp->sq.idx)
			st->rd_out = false;
		else if (st->rd_out)
			qp->req.rd_out++;
	}
	srdma_req_rewind_state(qp);
	srdma_req_resume(qp, at);
}

/* Time the packet @psn, sent for the first time, unless one is timed. */
void srdma_comp_rtt_start(struct srdma_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->sq_lock);
	if (qp->comp.rtt_timing)
		return;
	qp->comp.rtt_timing = true;
	qp->comp.rtt_psn = psn;
	qp->comp.rtt_ns = ktime_get_ns();
}

/*
 * When a tail loss probe is due: a probe timeout after the last progress,
 * or after the last probe twice the wait before it (a lost probe or a lost
 * answer to it: the QP's timer comes only later).
 * Each response of a read stream is progress (srdma_comp_answered()), so
 * a read waits a probe timeout only when its stream stalls; the probe
 * asks for its next response alone (srdma_comp_probe_read()).
 * Return: false if none is: no round trip measured yet, or the probes of
 * this wait are spent.
 */
static bool srdma_comp_pto_due(struct srdma_qp *qp, unsigned long *due)
{
	u32 pto = roce_rtt_pto_us(&qp->comp.rtt);

	lockdep_assert_held(&qp->sq_lock);
	if (!pto || qp->comp.probes >= SRDMA_MAX_PROBES)
		return false;
	if (!qp->comp.probes)
		*due = qp->comp.ack_stamp + usecs_to_jiffies(pto);
	else
		*due = qp->comp.probe_stamp +
		       (usecs_to_jiffies(pto) << qp->comp.probes);
	return true;
}

/*
 * Arm the QP timer for the first of the probe and the ACK timeout, unless
 * it is armed sooner already: it then finds what is due when it fires.
 * No ACK timeout (0), no timer and no probe.
 */
void srdma_comp_arm(struct srdma_qp *qp)
{
	unsigned long timeout = srdma_ack_timeout(qp);
	unsigned long due = qp->comp.ack_stamp + timeout;
	unsigned long pto;

	lockdep_assert_held(&qp->sq_lock);
	if (!timeout || qp->dying)
		return;
	if (srdma_comp_pto_due(qp, &pto) && time_before(pto, due))
		due = pto;
	timer_reduce(&qp->comp.timer, due);
}

/*
 * The oldest read or atomic not fully answered (srdma_req_unanswered()),
 * and in @expect the PSN of the response it takes next.
 * Return: its index, or qp->req.idx if none.
 */
static u32 srdma_comp_expect(struct srdma_qp *qp, u32 *expect)
{
	u32 i = srdma_req_unanswered(qp);

	if (i != qp->req.idx) {
		const struct srdma_swqe *st = srdma_st(qp, i);

		*expect = roce_psn_add(st->first_psn, st->read_off / qp->mtu);
	}
	return i;
}

/* Is the response @psn one of a part asked for alone, still on its way? */
static bool srdma_comp_part_covers(const struct srdma_qp *qp, u32 psn)
{
	return qp->comp.sub_out && !roce_psn_before(psn, qp->comp.sub_psn) &&
	       roce_psn_before(psn, qp->comp.sub_end);
}

/*
 * Ask for @npkts responses of WQE @i alone, from @expect on (@len bytes
 * of a read; 0: up to its end).
 */
static void srdma_comp_ask_part(struct srdma_qp *qp, u32 i, u32 expect,
				u32 npkts, u32 len)
{
	lockdep_assert_held(&qp->sq_lock);
	qp->comp.sub_out = true;
	qp->comp.parts_asked = true;
	qp->comp.sub_psn = expect;
	qp->comp.sub_end = roce_psn_add(expect, npkts);
	srdma_req_ask_again(qp, i, expect, len);
}

/*
 * Responses past a gap are kept: ask again for the missing ones alone, up
 * to the first one kept (or the end of their read), rather than for all
 * from the gap on, which the responder would send again in full.
 * Return: false if nothing is kept past the gap, so nothing was asked.
 */
static bool srdma_comp_ask_gap(struct srdma_qp *qp)
{
	struct srdma_swqe *st;
	u32 i, expect, ahead, npkts = 1, len = 0;

	lockdep_assert_held(&qp->sq_lock);
	if (!qp->comp.ooo.count)
		return false;
	i = srdma_comp_expect(qp, &expect);
	if (i == qp->req.idx)
		return false;
	ahead = srdma_reorder_ahead(&qp->comp.ooo, expect);
	if (!ahead)
		return false;
	st = srdma_st(qp, i);
	if (srdma_wqe(qp, i)->opcode == IB_UVERBS_WR_RDMA_READ) {
		npkts = min(ahead, st->npkts - st->read_off / qp->mtu);
		len = min(npkts * qp->mtu, st->len - st->read_off);
	}
	srdma_count(qp_sdev(qp), SRDMA_CNT_RESP_GAPS_ASKED);
	srdma_comp_ask_part(qp, i, expect, npkts, len);
	return true;
}

/*
 * A read whose stream stalled, with nothing before it unacknowledged and
 * more than one response to come: the probe asks for the next response
 * alone. A stream that was only late (a stall of either host) then costs
 * one response twice, not the rest of the read sent again, which would
 * also hold up the ACKs queued behind it. If that one comes back with no
 * response of the stream before it, the rest was lost and is asked for at
 * once (srdma_comp_resp()). A read with no response yet is probed whole:
 * the responder may not have it.
 * Return: false if the probe is not for such a read.
 */
static bool srdma_comp_probe_read(struct srdma_qp *qp)
{
	struct srdma_swqe *st;
	u32 i, expect;

	lockdep_assert_held(&qp->sq_lock);
	i = srdma_comp_expect(qp, &expect);
	if (i == qp->req.idx ||
	    srdma_wqe(qp, i)->opcode != IB_UVERBS_WR_RDMA_READ)
		return false;
	st = srdma_st(qp, i);
	if (!st->read_off || st->len - st->read_off <= qp->mtu ||
	    qp->comp.una_psn != st->first_psn)
		return false;
	qp->comp.probe_part = true;
	srdma_comp_ask_part(qp, i, expect, 1, qp->mtu);
	return true;
}

/*
 * A tail loss probe: no answer for a probe timeout, and the QP's timer is
 * not due yet. One packet goes again, alone, asking for an ACK
 * (srdma_req_probe()); the requester does not go back. The responder
 * answers a duplicate without executing it again, ACKs a missing packet
 * with all before it, and NAKs a gap before it, which the NAK path sends
 * again. A probe is not a loss signal: neither the window nor the rate is
 * cut, and no retry is used: retry_cnt counts the QP's timeouts alone.
 */
static void srdma_comp_probe(struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	qp->comp.probes++;
	qp->comp.probe_stamp = jiffies;
	qp->comp.probing = true;
	qp->comp.rtt_timing = false;	/* Karn: either copy may be ACKed */
	srdma_count(qp_sdev(qp), SRDMA_CNT_TLP_PROBES);
	/* Responses kept past a gap: what is missing is known. */
	if (srdma_comp_ask_gap(qp) || srdma_comp_probe_read(qp))
		return;
	/*
	 * A responder NAKs a gap once: if that NAK was lost, a probe past
	 * the gap is dropped unanswered. So every second probe sends the
	 * oldest packet instead, which fills the gap if it is one.
	 */
	srdma_req_probe(qp, !(qp->comp.probes & 1));
}

void srdma_timer_fn(struct timer_list *t)
{
	struct srdma_qp *qp = timer_container_of(qp, t, comp.timer);
	bool fail = false;

	spin_lock_bh(&qp->sq_lock);
	if (qp->dying || READ_ONCE(qp->state) != IB_QPS_RTS)
		goto out;
	if (!srdma_sq_order_ok(qp)) {
		fail = true;
		goto out;
	}
	if (qp->comp.rnr_wait) {
		qp->comp.rnr_wait = false;
	} else if (srdma_req_waiting(qp)) {
		unsigned long due = qp->comp.ack_stamp + srdma_ack_timeout(qp);
		unsigned long pto;

		if (time_before(jiffies, due)) {
			/* Progress since the timer was set: wait out the rest. */
			if (!srdma_comp_pto_due(qp, &pto) ||
			    time_before(jiffies, pto)) {
				srdma_comp_arm(qp);
				goto out;
			}
			srdma_comp_probe(qp);
			srdma_comp_arm(qp);
			goto out;
		}
		if (!qp->comp.retry_left) {
			fail = srdma_req_fail_oldest(qp, IB_WC_RETRY_EXC_ERR);
			goto out;
		}
		qp->comp.retry_left--;
		qp->comp.probes = 0;
		qp->comp.probing = false;
		srdma_count(qp_sdev(qp), SRDMA_CNT_RETRY_TIMEOUTS);
		/* Lost, or queued: resend the first alone, and slower. */
		roce_cwnd_timeout(&qp->req.cwnd,
				  roce_psn_diff(qp->req.psn, qp->comp.una_psn));
		srdma_cc_loss(qp);
		srdma_req_rewind(qp);
	}
	fail = __srdma_req_run(qp);
out:
	srdma_req_unlock(qp, fail);
}

/*
 * After a rewind an ACK may cover packets sent before it, which were only
 * late: move the requester past them to @psn rather than send them again.
 * It stops at a WQE that needs an answer (read, atomic, placement), or a
 * local one not executed yet: those are done again all the same.
 */
static void srdma_req_forward(struct srdma_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->sq_lock);
	while (roce_psn_before(qp->req.psn, psn) &&
	       qp->req.idx != qp->req.fetched) {
		struct softrdma_send_wqe *w = srdma_wqe(qp, qp->req.idx);
		struct srdma_swqe *st = srdma_st(qp, qp->req.idx);
		u32 end = roce_psn_add(st->first_psn, st->npkts);

		if (st->status || (st->local && !st->local_done))
			break;
		if (st->local) {
			qp->req.idx++;
			continue;
		}
		/* first_psn is from its last transmission: still ours? */
		if (srdma_wr_needs_resp(w->opcode) ||
		    roce_psn_diff(qp->req.psn, st->first_psn) * qp->mtu !=
		    qp->req.off)
			break;
		if (roce_psn_before(psn, end)) {
			qp->req.off = roce_psn_diff(psn, st->first_psn) * qp->mtu;
			qp->req.psn = psn;
			break;
		}
		qp->req.psn = end;
		qp->req.idx++;
		qp->req.off = 0;
	}
}

/*
 * Progress after probes (an ACK that acknowledged more, a response
 * placed): the probes of this wait are done. A stream of read responses
 * is progress too, though it moves una_psn only at its end: else each
 * timer run in a long read would find the last probe's time long past.
 */
static void srdma_comp_answered(struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	qp->comp.probing = false;
	if (!qp->comp.probes)
		return;
	qp->comp.probes = 0;
	srdma_count(qp_sdev(qp), SRDMA_CNT_TLP_RECOVERIES);
}

/* Acknowledge everything before @psn if it lies in the window. */
static bool srdma_comp_ack_upto(struct srdma_qp *qp, u32 psn)
{
	lockdep_assert_held(&qp->sq_lock);
	if (roce_psn_before(psn, qp->comp.una_psn) ||
	    roce_psn_after(psn, qp->req.sent_psn)) {
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_PSN);
		return false;
	}
	if (roce_psn_after(psn, qp->req.psn)) {
		/* Not resent since a NAK's go-back-N, yet executed: kept. */
		if (qp->comp.seq_rewound)
			qp->comp.peer_keeps = true;
		srdma_req_forward(qp, psn);
		if (roce_psn_after(psn, qp->req.psn))
			psn = qp->req.psn;
	}
	qp->comp.probing = false;
	if (psn == qp->comp.una_psn)
		return true;
	if (qp->comp.rtt_timing && roce_psn_after(psn, qp->comp.rtt_psn)) {
		u64 us = div_u64(ktime_get_ns() - qp->comp.rtt_ns,
				 NSEC_PER_USEC);

		roce_rtt_sample(&qp->comp.rtt, min_t(u64, us, U32_MAX));
		qp->comp.rtt_timing = false;
	}
	srdma_comp_answered(qp);
	roce_cwnd_ack(&qp->req.cwnd, roce_psn_diff(psn, qp->comp.una_psn),
		      SRDMA_WINDOW);
	qp->comp.una_psn = psn;
	return true;
}

/* A responder of ours keeps a window's packets past a gap. */
static_assert(SRDMA_REORDER >= SRDMA_WINDOW);

/*
 * A sequence NAK for @psn: everything from @psn on goes again (go-back-N,
 * IBA 9.7.5.1.4), unless the responder keeps what comes past a gap (as
 * softrdma's does; assumed until seen otherwise): then the one missing
 * packet goes again first, and the ACK that follows it covers what was
 * kept. A NAK for the packet right after it shows a responder that kept
 * nothing (or a second loss, or a window past what it keeps: a read's
 * request takes the PSNs of its responses): go-back-N then, and the next
 * one after it tells again (srdma_comp_ack_upto()).
 */
static void srdma_comp_seq_nak(struct srdma_qp *qp, u32 psn)
{
	u32 i;

	lockdep_assert_held(&qp->sq_lock);
	if (qp->comp.sel_used && psn == qp->comp.sel_next)
		qp->comp.peer_keeps = false;
	if (qp->comp.peer_keeps) {
		srdma_count(qp_sdev(qp), SRDMA_CNT_SEQ_NAKS_ONE);
		qp->comp.rtt_timing = false;	/* Karn: the ACK may be late */
		qp->comp.sel_used = true;
		qp->comp.sel_next = roce_psn_next(psn);
		/* The packet NAKed, not the oldest: a read may be before it. */
		if (!srdma_req_at_psn(qp, psn, &i)) {
			srdma_req_probe(qp, true);
			return;
		}
		if (srdma_wqe(qp, i)->opcode == IB_UVERBS_WR_RDMA_READ)
			qp->comp.sel_next = roce_psn_add(psn, srdma_st(qp, i)->npkts);
		srdma_req_ask_again(qp, i, psn, 0);
		return;
	}
	srdma_req_rewind_to(qp, psn);
	qp->comp.seq_rewound = true;
}

static bool srdma_comp_aeth(struct srdma_qp *qp, u32 psn, u8 syndrome)
{
	u8 value = roce_aeth_syn_value(syndrome);
	u8 status;

	lockdep_assert_held(&qp->sq_lock);
	switch (roce_aeth_syn_type(syndrome)) {
	case ROCE_AETH_ACK:
		if (!srdma_comp_ack_upto(qp, roce_psn_next(psn)))
			return false;
		qp->comp.retry_left = qp->attr.retry_cnt;
		qp->comp.rnr_left = qp->attr.rnr_retry;
		qp->comp.ack_stamp = jiffies;
		if (srdma_comp_progress(qp))
			return true;
		return __srdma_req_run(qp);
	case ROCE_AETH_RNR_NAK:
		srdma_count(qp_sdev(qp), SRDMA_CNT_RNR_NAKS_RCVD);
		if (!srdma_comp_ack_upto(qp, psn))
			return false;
		if (srdma_comp_progress(qp))
			return true;
		if (srdma_req_none_sent(qp))
			return false;
		if (!qp->comp.rnr_left)
			return srdma_req_fail_oldest(qp,
						     IB_WC_RNR_RETRY_EXC_ERR);
		if (qp->comp.rnr_left != 7)	/* 7: retry forever */
			qp->comp.rnr_left--;
		srdma_req_rewind(qp);
		qp->comp.rnr_wait = true;
		srdma_arm_timer(qp, usecs_to_jiffies(srdma_rnr_us[value]) ?: 1);
		return false;
	case ROCE_AETH_NAK:
		if (!srdma_comp_ack_upto(qp, psn))
			return false;
		if (srdma_comp_progress(qp))
			return true;
		switch (value) {
		case ROCE_NAK_PSN_SEQ_ERR:
			srdma_count(qp_sdev(qp), SRDMA_CNT_SEQ_NAKS_RCVD);
			roce_cwnd_cut(&qp->req.cwnd);
			srdma_comp_seq_nak(qp, psn);
			return __srdma_req_run(qp);
		case ROCE_NAK_REMOTE_ACCESS:
			status = IB_WC_REM_ACCESS_ERR;
			break;
		case ROCE_NAK_REMOTE_OP:
			status = IB_WC_REM_OP_ERR;
			break;
		default:
			status = IB_WC_REM_INV_REQ_ERR;
			break;
		}
		if (srdma_req_none_sent(qp))
			return false;
		return srdma_req_fail_oldest(qp, status);
	default:
		return false;
	}
}

/*
 * A response @psn past the one expected, @expect: some went missing, or
 * come late. It is kept (reorder.c), and once SRDMA_GAP_DUPS are, the
 * missing ones are asked for alone, once a gap. With no room, the old
 * way: everything from the gap on is asked for again, once (a probe
 * covers the rest), or once the kept ones are taken
 * (srdma_comp_rx_kept()). Return: true if the QP must enter ERR.
 */
static bool srdma_comp_gap(struct srdma_qp *qp,
			   const struct roce_pkt_info *pkt, u32 expect, u32 psn)
{
	lockdep_assert_held(&qp->sq_lock);
	if (srdma_reorder_hold(qp_sdev(qp), &qp->comp.ooo, pkt,
			       roce_psn_diff(psn, expect))) {
		if (qp->comp.ooo.count >= SRDMA_GAP_DUPS &&
		    !srdma_comp_part_covers(qp, expect))
			srdma_comp_ask_gap(qp);
		return false;
	}
	srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_PSN);
	if (qp->comp.ooo.count) {
		qp->comp.ooo_lost = true;
		return false;
	}
	if (qp->comp.read_gap)
		return false;
	qp->comp.read_gap = true;
	srdma_req_rewind(qp);
	return __srdma_req_run(qp);
}

/*
 * A LAST or ONLY response (placed: @st's read_off counts it) that ends a
 * part asked for alone, not the read: the rest was kept, or comes. The
 * responder sends the read's own LAST at its end only, so one short of
 * it answers one of the parts asked for (an earlier one, maybe: a probe
 * can ask again for a longer part while the first one's answer is on its
 * way); it leaves no hole, as responses are placed in PSN order.
 */
static bool srdma_comp_part_end(const struct srdma_qp *qp,
				const struct srdma_swqe *st)
{
	return qp->comp.parts_asked && st->read_off < st->len &&
	       !(st->read_off % qp->mtu);
}

/*
 * An atomic's original value into its 8-byte local buffer.
 * Return: false if an ODP page of it is being mapped: the ACK is dropped
 * and the atomic asked again (the responder replays, not re-executes).
 */
static bool srdma_comp_atomic(struct srdma_qp *qp,
			      const struct roce_pkt_info *pkt,
			      const struct softrdma_send_wqe *w,
			      struct srdma_swqe *st)
{
	u64 orig = roce_atmack_orig(roce_pkt_atmack(pkt));	/* host order */
	struct srdma_xfer x = { .op = SRDMA_FROM_BUF, .buf = (u8 *)&orig };
	int err;

	lockdep_assert_held(&qp->sq_lock);
	err = srdma_sge_xfer(qp, w->sge, w->num_sge, 0, sizeof(orig), &x);
	if (err == -EAGAIN)
		return false;
	if (err)
		st->status = err == -EACCES ? IB_WC_LOC_PROT_ERR :
					      IB_WC_LOC_LEN_ERR;
	st->read_done = true;
	srdma_rd_done(qp, st);
	return true;
}

/*
 * A read response or an atomic ACK: the data, in PSN order, of the oldest
 * WQE that waits for a response.
 */
static bool srdma_comp_resp(struct srdma_qp *qp,
			    const struct roce_pkt_info *pkt, u32 psn)
{
	u32 mtu = qp->mtu;
	struct softrdma_send_wqe *w;
	struct srdma_swqe *st;
	bool alone, rest = false;
	u32 i, expect;
	int err;

	lockdep_assert_held(&qp->sq_lock);
	/* Any response shows the stream alive to a read's probe. */
	alone = qp->comp.probe_part;
	qp->comp.probe_part = false;
	/*
	 * Responses come in PSN order: the one taken is the next of the
	 * oldest unfinished read. A later one means some went missing (an
	 * implied NAK): ask again at once, once per gap; a probe covers
	 * the rest.
	 */
	i = srdma_comp_expect(qp, &expect);
	if (i == qp->req.idx)
		goto drop;
	st = srdma_st(qp, i);
	w = srdma_wqe(qp, i);
	if (psn != expect) {
		if (roce_psn_after(psn, expect) &&
		    roce_psn_before(psn, qp->req.psn))
			return srdma_comp_gap(qp, pkt, expect, psn);
		goto drop;	/* a duplicate */
	}
	if (!!(pkt->info->flags & ROCE_F_ATOMIC) != srdma_wr_atomic(w->opcode))
		goto drop;	/* not the response this WQE waits for */
	/* Whole MTUs but in the last: read_off counts packets. */
	if (pkt->payload_len > st->len - st->read_off ||
	    pkt->payload_len > mtu ||
	    (!(pkt->info->flags & ROCE_F_LAST) && pkt->payload_len != mtu))
		goto drop;
	qp->comp.read_gap = false;
	/* A response implies every request before the read arrived. */
	if (roce_psn_before(qp->comp.una_psn, st->first_psn))
		srdma_comp_ack_upto(qp, st->first_psn);

	if (pkt->info->flags & ROCE_F_ATOMIC) {
		if (!srdma_comp_atomic(qp, pkt, w, st))
			goto unmapped;
		srdma_comp_ack_upto(qp, roce_psn_next(psn));
		goto done;
	}
	if (srdma_wr_placement(w->opcode)) {
		/* An empty response in one packet: the data is placed. */
		if (pkt->payload_len || !(pkt->info->flags & ROCE_F_LAST))
			st->status = IB_WC_BAD_RESP_ERR;
		else if (w->opcode == SOFTRDMA_WR_FLUSH)
			qp->req.rxe_flush_icrc = qp->req.flush_icrc_sent;
		st->read_done = true;
		srdma_rd_done(qp, st);
		srdma_comp_ack_upto(qp, roce_psn_next(psn));
		goto done;
	}
	err = srdma_pkt_to_sge(qp, pkt, w->sge, w->num_sge, st->read_off);
	if (err == -EAGAIN)
		goto unmapped;
	if (err) {
		st->status = err == -EACCES ? IB_WC_LOC_PROT_ERR :
					      IB_WC_LOC_LEN_ERR;
	} else {
		st->read_off += pkt->payload_len;
		if ((pkt->info->flags & ROCE_F_LAST) &&
		    !srdma_comp_part_end(qp, st)) {
			if (st->read_off != st->len)
				st->status = IB_WC_BAD_RESP_ERR;
			st->read_done = true;
			srdma_rd_done(qp, st);
			srdma_comp_ack_upto(qp, roce_psn_next(psn));
		} else if (pkt->info->flags & ROCE_F_LAST) {
			/* A part's end: the probe's, with nothing before it? */
			rest = alone;
		}
	}
done:
	if (srdma_comp_progress(qp))
		return true;
	/* Only a whole read resets the retries; any response is progress. */
	if (st->read_done)
		qp->comp.retry_left = qp->attr.retry_cnt;
	qp->comp.ack_stamp = jiffies;
	srdma_comp_answered(qp);
	if (rest && srdma_comp_expect(qp, &expect) == i)
		srdma_req_ask_again(qp, i, expect, 0);
	return __srdma_req_run(qp);
drop:
	srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_PSN);
	return false;
unmapped:
	/*
	 * An ODP page is being mapped. As after an RNR NAK the requester
	 * pauses, then asks again from here: the responses on their way, or
	 * kept, would only be past a gap that is no loss, and no retry is
	 * used for it.
	 */
	srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_NOMEM);
	srdma_req_rewind(qp);
	qp->comp.rnr_wait = true;
	srdma_arm_timer(qp, SRDMA_ODP_WAIT);
	return false;
}

/*
 * The responses kept past a gap that now follow in order are taken. If
 * another gap stops the run, it is asked for; once none is kept, those
 * that found no room are asked for again with all after them.
 * Return: true if the QP must enter ERR.
 */
static bool srdma_comp_rx_kept(struct srdma_qp *qp)
{
	struct srdma_rx_pkt kept;
	u32 expect;
	bool fail;

	lockdep_assert_held(&qp->sq_lock);
	for (;;) {
		if (srdma_comp_expect(qp, &expect) == qp->req.idx) {
			/* All answered: anything left is stale. */
			srdma_reorder_purge(qp_sdev(qp), &qp->comp.ooo);
			return false;
		}
		if (!srdma_reorder_next(qp_sdev(qp), &qp->comp.ooo, expect,
					&kept))
			break;
		fail = srdma_comp_resp(qp, &kept.rp, expect);
		consume_skb(kept.skb);
		if (fail)
			return true;
	}
	if (qp->comp.ooo.count) {
		if (!srdma_comp_part_covers(qp, expect))
			srdma_comp_ask_gap(qp);
		return false;
	}
	if (!qp->comp.ooo_lost)
		return false;
	qp->comp.ooo_lost = false;
	srdma_req_rewind(qp);
	return __srdma_req_run(qp);
}

/**
 * srdma_comp_rx - a response (ACK, NAK, read response, atomic ACK) for @qp
 * @qp: the requester's QP (RCU-protected by the caller)
 * @pkt: the parsed packet
 */
void srdma_comp_rx(struct srdma_qp *qp, const struct roce_pkt_info *pkt)
{
	u32 psn = roce_bth_psn(pkt->bth);
	const struct roce_aeth *aeth = roce_pkt_aeth(pkt);
	bool fail = false;

	spin_lock_bh(&qp->sq_lock);
	if (READ_ONCE(qp->state) != IB_QPS_RTS &&
	    READ_ONCE(qp->state) != IB_QPS_SQD) {
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_QP_STATE);
		goto out;
	}
	if (!srdma_sq_order_ok(qp)) {
		fail = true;
		goto out;
	}

	if (pkt->info->flags & (ROCE_F_READ | ROCE_F_ATOMIC)) {
		u32 expect = 0, at = 0, now = 0;
		bool kept = qp->comp.ooo.count;

		if (kept)
			at = srdma_comp_expect(qp, &expect);
		/* A NAK can only come as a plain ACK packet. */
		fail = srdma_comp_resp(qp, pkt, psn);
		/* Progress: the kept responses that now follow are taken. */
		if (!fail && kept && (srdma_comp_expect(qp, &now) != at ||
				      now != expect))
			fail = srdma_comp_rx_kept(qp);
	} else if (aeth && (pkt->info->flags & ROCE_F_ACK)) {
		fail = srdma_comp_aeth(qp, psn, roce_aeth_syndrome(aeth));
	}
out:
	srdma_req_unlock(qp, fail);
}
