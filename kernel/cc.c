// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion notification (RoCEv2, IBA annex A17.9): our packets leave
 * ECN-capable, so an AQM queue on the path marks them CE instead of
 * dropping them. The receiver of a marked packet, the notification point,
 * answers with a congestion notification packet (CNP) to the QP that sent
 * it, at most one per QP per cnp_interval_us. The sender, the reaction
 * point, counts the CNPs it is sent.
 *
 * CNPs go out Not-ECT: they are what tells the sender to slow down, and
 * a queue that marks may also drop what it cannot mark.
 */
#include <linux/module.h>
#include <linux/sched/clock.h>
#include <net/inet_ecn.h>

#include "srdma.h"

static bool srdma_ecn = true;
module_param_named(ecn, srdma_ecn, bool, 0644);
MODULE_PARM_DESC(ecn,
		 "Send RoCEv2 packets ECN-capable (ECT(0)) and answer CE-marked ones with CNPs (default on)");

static unsigned int srdma_cnp_interval_us = 50;
module_param_named(cnp_interval_us, srdma_cnp_interval_us, uint, 0644);
MODULE_PARM_DESC(cnp_interval_us,
		 "Least time between two CNPs to one QP, in microseconds (default 50)");

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
	now = local_clock();
	if (time_before64(now, READ_ONCE(qp->cnp_next)))
		return;
	WRITE_ONCE(qp->cnp_next,
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
}
