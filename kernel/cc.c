// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion control (RoCEv2, IBA annex A17.9, and DCQCN): our packets
 * leave ECN-capable, so an AQM queue on the path marks them CE instead of
 * dropping them. The receiver of a marked packet, the notification point,
 * answers with a congestion notification packet (CNP) to the QP that sent
 * it, at most one per QP per cnp_interval_us. The sender, the reaction
 * point, cuts that QP's rate (proto/roce_dcqcn.c) and paces its requests
 * at it until the rate has recovered to the line rate.
 *
 * CNPs go out Not-ECT: they are what tells the sender to slow down, and
 * a queue that marks may also drop what it cannot mark.
 *
 * Paced: a QP's requests (sends, writes, read requests), first
 * transmissions and retransmissions alike, and its read responses: one
 * rate for all it sends. ACKs and atomic responses are not held back.
 */
#include <linux/ethtool.h>
#include <linux/module.h>
#include <linux/timekeeping.h>
#include <net/inet_ecn.h>
#include <rdma/restrack.h>

#include "srdma.h"

static bool srdma_ecn = true;
module_param_named(ecn, srdma_ecn, bool, 0644);
MODULE_PARM_DESC(ecn,
		 "Send RoCEv2 packets ECN-capable (ECT(0)) and answer CE-marked ones with CNPs (default on)");

static unsigned int srdma_cnp_interval_us = 50;
module_param_named(cnp_interval_us, srdma_cnp_interval_us, uint, 0644);
MODULE_PARM_DESC(cnp_interval_us,
		 "Least time between two CNPs to one QP, in microseconds (default 50)");

static bool srdma_dcqcn = true;
module_param_named(dcqcn, srdma_dcqcn, bool, 0644);
MODULE_PARM_DESC(dcqcn, "Cut a QP's rate on CNPs and pace it (default on)");

/*
 * DCQCN's knobs, as mlx5 names and defaults them where it has them. The
 * line rate is where a QP's rate recovers to and pacing ends: a NIC's is
 * its port's speed, ours the netdev's where it reports one (ethtool),
 * else SRDMA_LINE_MBPS, above what a software device sends, so that an
 * unthrottled QP is never held back.
 */
#define SRDMA_LINE_MBPS	10000
static unsigned int srdma_rp_line_mbps;
module_param_named(dcqcn_line_rate_mbps, srdma_rp_line_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_line_rate_mbps,
		 "Rate a QP recovers to, Mbit/s (default 0: the netdev's speed, or 10000 if it reports none)");
static unsigned int srdma_rp_min_mbps = 1;
module_param_named(dcqcn_min_rate_mbps, srdma_rp_min_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_min_rate_mbps, "Rate no QP is cut below, Mbit/s (default 1)");
static unsigned int srdma_rp_ai_mbps = 5;
module_param_named(dcqcn_ai_rate_mbps, srdma_rp_ai_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_ai_rate_mbps, "Additive increase step, Mbit/s (default 5)");
static unsigned int srdma_rp_hai_mbps = 50;
module_param_named(dcqcn_hai_rate_mbps, srdma_rp_hai_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_hai_rate_mbps, "Hyper increase step, Mbit/s (default 50)");
static unsigned int srdma_rp_g_shift = 8;
module_param_named(dcqcn_g_shift, srdma_rp_g_shift, uint, 0644);
MODULE_PARM_DESC(dcqcn_g_shift, "alpha's gain is 1/2^this (default 8: 1/256)");
static unsigned int srdma_rp_alpha_us = 55;
module_param_named(dcqcn_alpha_us, srdma_rp_alpha_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_alpha_us, "alpha decays each this many us without a CNP (default 55)");
static unsigned int srdma_rp_inc_us = 300;
module_param_named(dcqcn_time_reset_us, srdma_rp_inc_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_time_reset_us, "Rate increase timer period, us (default 300)");
static unsigned int srdma_rp_inc_bytes = 32767 * 64;
module_param_named(dcqcn_byte_reset, srdma_rp_inc_bytes, uint, 0644);
MODULE_PARM_DESC(dcqcn_byte_reset, "Bytes sent per rate increase event (default 2097088)");
static unsigned int srdma_rp_threshold = 5;
module_param_named(dcqcn_threshold, srdma_rp_threshold, uint, 0644);
MODULE_PARM_DESC(dcqcn_threshold, "Increase events before additive, then hyper increase (default 5)");
static unsigned int srdma_rp_cut_gap_us = 4;
module_param_named(dcqcn_rate_reduce_period_us, srdma_rp_cut_gap_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_rate_reduce_period_us, "Least time between two rate cuts of a QP, us (default 4)");
static unsigned int srdma_rp_burst_us = 50;
module_param_named(dcqcn_burst_us, srdma_rp_burst_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_burst_us, "Sending time a paced QP may save up, us (default 50)");

/**
 * srdma_cc_link_speed - note the netdev's speed, DCQCN's line rate
 * @sdev: the device, at registration or a change of its netdev (rtnl)
 */
void srdma_cc_link_speed(struct srdma_dev *sdev)
{
	struct ethtool_link_ksettings ks;
	u32 mbps = 0;

	ASSERT_RTNL();
	if (!__ethtool_get_link_ksettings(sdev->ndev, &ks) &&
	    ks.base.speed != SPEED_UNKNOWN)
		mbps = ks.base.speed;
	WRITE_ONCE(sdev->link_mbps, mbps);
}

/* The parameters for a QP of @sdev as set now, made safe to compute with. */
static void srdma_cc_params(const struct srdma_dev *sdev,
			    struct dcqcn_params *p)
{
	u32 line = READ_ONCE(srdma_rp_line_mbps) ?:
		   READ_ONCE(sdev->link_mbps) ?: SRDMA_LINE_MBPS;

	p->min_rate = max(READ_ONCE(srdma_rp_min_mbps), 1U);
	p->line_rate = max(line, p->min_rate);
	p->ai_rate = READ_ONCE(srdma_rp_ai_mbps);
	p->hai_rate = READ_ONCE(srdma_rp_hai_mbps);
	p->g_shift = clamp(READ_ONCE(srdma_rp_g_shift), 1U, 10U);
	p->alpha_ns = READ_ONCE(srdma_rp_alpha_us) * NSEC_PER_USEC;
	p->inc_ns = READ_ONCE(srdma_rp_inc_us) * NSEC_PER_USEC;
	p->inc_bytes = READ_ONCE(srdma_rp_inc_bytes);
	p->threshold = READ_ONCE(srdma_rp_threshold);
	p->cut_gap_ns = READ_ONCE(srdma_rp_cut_gap_us) * NSEC_PER_USEC;
	p->burst_ns = READ_ONCE(srdma_rp_burst_us) * NSEC_PER_USEC;
}

/* The IP traffic class of @skb, a packet of ours about to be sent. */
u8 srdma_cc_tclass(const struct sk_buff *skb, u8 tclass)
{
	tclass &= ~INET_ECN_MASK;
	if (READ_ONCE(srdma_ecn) && *skb->data != ROCE_CNP)
		tclass |= INET_ECN_ECT_0;
	return tclass;
}

/* Did @skb, a received datagram, come through a queue that marked it? */
bool srdma_cc_ce(const struct sk_buff *skb)
{
	u8 ds = skb->protocol == htons(ETH_P_IP) ?
		ipv4_get_dsfield(ip_hdr(skb)) : ipv6_get_dsfield(ipv6_hdr(skb));

	return INET_ECN_is_ce(ds);
}

/* A CNP to @qp's peer: BTH (BECN set, PSN 0) and 16 zero bytes. */
static void srdma_cnp_send(struct srdma_qp *qp)
{
	const struct roce_opcode_info *info = roce_opcode_lookup(ROCE_CNP);
	struct roce_bth_fields bth = {
		.opcode = ROCE_CNP,
		.pkey = ROCE_PKEY_DEFAULT,
		.becn = true,
		.qpn = qp->attr.dest_qp_num,
	};
	struct sk_buff *skb;

	skb = srdma_pkt_alloc(qp, info->hdr_len, 0, true);
	if (!skb)
		return;
	memset(skb->data, 0, info->hdr_len);
	roce_bth_encode((struct roce_bth *)skb->data, &bth);
	srdma_pkt_put_data(skb, NULL, 0, 0);
	srdma_count(qp_sdev(qp), SRDMA_CNT_NP_CNP_SENT);
	srdma_xmit(qp, skb);
}

/**
 * srdma_cc_ce_rx - notification point: @qp took in a CE-marked packet
 * @qp: the QP it was for
 *
 * Called from receive under RCU, possibly on several CPUs at once for one
 * QP: @cnp_next is read and set without a lock, so two CPUs may now and
 * then both send one, which only makes the sender slow down a bit more.
 * Datagram QPs count the mark and send none: their sender is not known
 * by a path of ours.
 */
void srdma_cc_ce_rx(struct srdma_qp *qp)
{
	enum ib_qp_state state;
	u64 now;

	srdma_count(qp_sdev(qp), SRDMA_CNT_NP_ECN_MARKED);
	if (!READ_ONCE(srdma_ecn) || srdma_qp_is_ud(qp))
		return;
	now = ktime_get_ns();
	if (time_before64(now, READ_ONCE(qp->cc.cnp_next)))
		return;
	WRITE_ONCE(qp->cc.cnp_next,
		   now + (u64)READ_ONCE(srdma_cnp_interval_us) * NSEC_PER_USEC);
	/*
	 * As the responder's ACKs: under rq_lock in a state that sends, the
	 * path stays put (a reset takes rq_lock before the path is redone).
	 */
	spin_lock_bh(&qp->rq_lock);
	state = READ_ONCE(qp->state);
	if (state >= IB_QPS_RTR && state <= IB_QPS_SQE)
		srdma_cnp_send(qp);
	spin_unlock_bh(&qp->rq_lock);
}

/* Reaction point: the peer of @qp says our packets were marked. */
void srdma_cc_cnp_rx(struct srdma_qp *qp)
{
	srdma_count(qp_sdev(qp), SRDMA_CNT_RP_CNP_HANDLED);
	if (!READ_ONCE(srdma_dcqcn) || !qp->sq.hdr)
		return;		/* an XRC target sends no requests */
	spin_lock_bh(&qp->sq_lock);
	srdma_cc_loss(qp);
	if (srdma_qp_reliable(qp))
		roce_cwnd_cut(&qp->req.cwnd);
	spin_unlock_bh(&qp->sq_lock);
}

/*
 * Cut @qp's rate, under sq_lock: for a CNP, or for a retry timeout of its
 * requester (the loss of a whole window, or a queue longer than the ACK
 * timeout), so that what is resent comes paced.
 */
void srdma_cc_loss(struct srdma_qp *qp)
{
	struct dcqcn_params p;
	bool cut;

	if (!READ_ONCE(srdma_dcqcn))
		return;
	srdma_cc_params(qp_sdev(qp), &p);
	spin_lock(&qp->cc.lock);
	cut = dcqcn_cnp(&qp->cc.dcqcn, &p, ktime_get_ns());
	spin_unlock(&qp->cc.lock);
	if (cut)
		srdma_count(qp_sdev(qp), SRDMA_CNT_RP_RATE_CUTS);
}

/*
 * The pace timer: the requester, and the read responder if it has reads
 * to answer, may send again (from the tx workqueue).
 */
static enum hrtimer_restart srdma_cc_pace_fn(struct hrtimer *timer)
{
	struct srdma_qp *qp = container_of(timer, struct srdma_qp, cc.pace_timer);

	queue_work(srdma_tx_wq, &qp->req.work);
	if (READ_ONCE(qp->resp.rd_head) != READ_ONCE(qp->resp.rd_tail))
		queue_work(srdma_tx_wq, &qp->resp.rd_work);
	return HRTIMER_NORESTART;
}

/* Entering RTS, under sq_lock: a new connection starts unthrottled. */
void srdma_cc_qp_start(struct srdma_qp *qp)
{
	struct dcqcn_params p;

	srdma_cc_params(qp_sdev(qp), &p);
	spin_lock(&qp->cc.lock);
	dcqcn_init(&qp->cc.dcqcn, &p);
	spin_unlock(&qp->cc.lock);
}

/*
 * At create, before anything can reach the QP (no lock): the pace timer,
 * and an unthrottled rate.
 */
void srdma_cc_qp_init(struct srdma_qp *qp)
{
	struct dcqcn_params p;

	srdma_hrtimer_setup(&qp->cc.pace_timer, srdma_cc_pace_fn,
			    CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	srdma_cc_params(qp_sdev(qp), &p);
	dcqcn_init(&qp->cc.dcqcn, &p);
}

/*
 * srdma_cc_may_send - may the QP send a request or read response now?
 * @qp: the QP, under sq_lock (requester) or rq_lock (read responder)
 *
 * Return: true, or false with the pace timer armed to send on.
 */
bool srdma_cc_may_send(struct srdma_qp *qp)
{
	struct dcqcn_params p;
	bool ok = true;
	u64 now, wait;

	if (likely(!READ_ONCE(qp->cc.dcqcn.limited)))
		return true;
	srdma_cc_params(qp_sdev(qp), &p);
	spin_lock(&qp->cc.lock);
	now = ktime_get_ns();
	dcqcn_advance(&qp->cc.dcqcn, &p, now);
	wait = dcqcn_wait(&qp->cc.dcqcn, now);
	if (wait) {
		ok = false;
		if (!qp->dying && !hrtimer_active(&qp->cc.pace_timer))
			hrtimer_start(&qp->cc.pace_timer, ns_to_ktime(wait),
				      HRTIMER_MODE_REL_SOFT);
	}
	spin_unlock(&qp->cc.lock);
	if (!ok)
		srdma_count(qp_sdev(qp), SRDMA_CNT_RP_PACE_WAITS);
	return ok;
}

/*
 * The QP sent a request or read response packet of @bytes (BTH to ICRC),
 * under sq_lock or rq_lock.
 */
void srdma_cc_sent(struct srdma_qp *qp, u32 bytes)
{
	struct dcqcn_params p;

	if (likely(!READ_ONCE(qp->cc.dcqcn.limited)))
		return;
	srdma_cc_params(qp_sdev(qp), &p);
	spin_lock(&qp->cc.lock);
	/* as on the wire, with the UDP and IP headers */
	dcqcn_sent(&qp->cc.dcqcn, &p, bytes + 28, ktime_get_ns());
	spin_unlock(&qp->cc.lock);
}

/**
 * srdma_cc_fill_res - a QP's congestion state, for "rdma -dd resource
 * show qp" (srdma_fill_res_qp_entry())
 * @msg: the netlink message, in the driver attributes' nest
 * @qp: the QP
 *
 * The DCQCN rate and target rate now (a paced QP's timers advanced to
 * now on a copy: they run lazily), alpha in 1/1024, and an RC QP's
 * congestion window in packets.
 */
int srdma_cc_fill_res(struct sk_buff *msg, struct srdma_qp *qp)
{
	struct dcqcn_params p;
	struct dcqcn_rp rp;

	srdma_cc_params(qp_sdev(qp), &p);
	spin_lock_bh(&qp->cc.lock);
	rp = qp->cc.dcqcn;
	spin_unlock_bh(&qp->cc.lock);
	if (rp.limited)
		dcqcn_advance(&rp, &p, ktime_get_ns());

	if (rdma_nl_put_driver_u32(msg, "dcqcn_rate_mbps", rp.rc) ||
	    rdma_nl_put_driver_u32(msg, "dcqcn_target_mbps", rp.rt) ||
	    rdma_nl_put_driver_u32(msg, "dcqcn_alpha", rp.alpha) ||
	    rdma_nl_put_driver_u32(msg, "dcqcn_line_mbps", p.line_rate) ||
	    (qp->ibqp.qp_type == IB_QPT_RC &&
	     rdma_nl_put_driver_u32(msg, "cwnd_pkts",
				    READ_ONCE(qp->req.cwnd.cwnd))))
		return -EMSGSIZE;
	return 0;
}
