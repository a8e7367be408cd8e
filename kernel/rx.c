// SPDX-License-Identifier: GPL-2.0
/*
 * Receive: a UDP datagram on port 4791 of a namespace with softrdma
 * devices, or a packet looped back by one of them (loop.c), is checked
 * (headers; the ICRC if it came through the stack), matched to its QP
 * and handed to the responder (requests) or the completer (responses).
 * A packet that fails a check is dropped and counted by reason.
 */
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/udp.h>

#include "srdma.h"
#include "proto/roce_icrc.h"

/*
 * Every QP takes packets of our partition only (P_Key 0xffff, membership
 * bit aside), and a connected QP only from its peer's address to its own:
 * anything else is spoofed or misrouted. The path is set from RTR on.
 */
static bool srdma_rx_from_peer(struct srdma_qp *qp, struct sk_buff *skb,
			       const struct roce_bth *bth)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	const struct srdma_av *av = &qp->path.av;

	if ((roce_bth_pkey(bth) & 0x7fff) != (ROCE_PKEY_DEFAULT & 0x7fff))
		return false;
	if (srdma_qp_is_ud(qp))
		return true;	/* a datagram QP takes them from anyone */
	if (state < IB_QPS_RTR || state > IB_QPS_SQE)
		return true;	/* dropped for its state */
	if (av->family == AF_INET)
		return skb->protocol == htons(ETH_P_IP) &&
		       ip_hdr(skb)->saddr == av->daddr4 &&
		       ip_hdr(skb)->daddr == av->saddr4;
	return skb->protocol == htons(ETH_P_IPV6) &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->saddr, &av->daddr6) &&
	       ipv6_addr_equal(&ipv6_hdr(skb)->daddr, &av->saddr6);
}

/* An XRC initiator takes only responses, an XRC target only requests. */
static bool srdma_rx_direction_ok(const struct srdma_qp *qp, u32 flags)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_XRC_INI:
		return !(flags & ROCE_F_REQ);
	case IB_QPT_XRC_TGT:
		return flags & ROCE_F_REQ;
	default:
		return true;
	}
}

/* A datagram taken in by @sdev, counted with its IP header. */
static void srdma_rx_count(struct srdma_dev *sdev, const struct sk_buff *skb)
{
	srdma_count(sdev, SRDMA_CNT_RX_PKTS);
	srdma_count_add(sdev, SRDMA_CNT_RX_BYTES,
			skb->len - skb_network_offset(skb));
}

/*
 * Drop a datagram no QP took: counted against the device of the netdev it
 * came in on (see srdma_net_rx_dev()).
 */
static void srdma_rx_drop(struct net *net, struct sk_buff *skb, int cnt)
{
	struct srdma_dev *sdev;

	rcu_read_lock();
	sdev = srdma_net_rx_dev(net, skb->dev);
	if (sdev) {
		srdma_rx_count(sdev, skb);
		srdma_drop(sdev, cnt);
	}
	rcu_read_unlock();
	kfree_skb(skb);
}

/**
 * srdma_gsi_lookup_rcu - the GSI QP a datagram for QP1 goes to
 * @net: the namespace it came in on
 * @skb: the datagram
 *
 * QP1 is per device: the one over the netdev the datagram came in on or,
 * looped back, over the netdev holding its destination address.
 * Caller holds rcu_read_lock().
 */
static struct srdma_qp *srdma_gsi_lookup_rcu(struct net *net,
					     const struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct srdma_dev *sdev;

	if (ndev && (ndev->flags & IFF_LOOPBACK)) {
		if (skb->protocol == htons(ETH_P_IP))
			ndev = __ip_dev_find(net, ip_hdr(skb)->daddr,
					     false);
#if IS_ENABLED(CONFIG_IPV6)
		else
			ndev = ipv6_dev_find(net, &ipv6_hdr(skb)->daddr, NULL);
#endif
	}
	sdev = srdma_net_rx_dev(net, ndev);
	return sdev && (!ndev || sdev->ndev == ndev) ?
	       rcu_dereference(sdev->gsi_qp) : NULL;
}

/*
 * A datagram to a multicast group: to each UD QP of the device it came in
 * on that is attached to the group, each looked up and checked as for a
 * unicast datagram. Caller holds rcu_read_lock(); consumes the skb.
 */
static void srdma_rx_mcast(struct net *net, const struct srdma_rx_pkt *pkt)
{
	struct srdma_dev *sdev = srdma_net_rx_dev(net, pkt->skb->dev);
	struct sk_buff *skb = pkt->skb;
	union ib_gid dgid;
	const u32 *qpns;
	u32 i, n = 0;

	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid.raw);
	else
		memcpy(dgid.raw, &ipv6_hdr(skb)->daddr, sizeof(dgid));
	if (sdev)
		n = srdma_mcg_qpns_rcu(sdev, &dgid, &qpns);
	if (!n) {
		srdma_rx_drop(net, skb, SRDMA_CNT_DROP_NO_QP);
		return;
	}
	srdma_rx_count(sdev, skb);
	for (i = 0; i < n; i++) {
		struct srdma_qp *qp = srdma_qp_lookup_rcu(qpns[i]);

		if (!qp || qp_sdev(qp) != sdev || !srdma_qp_is_ud(qp))
			continue;	/* going, or a number reused */
		if (!roce_opcode_valid_for(pkt->rp.opcode,
					   srdma_qp_transport(qp)))
			srdma_drop(sdev, SRDMA_CNT_DROP_QP_TYPE);
		else if (!srdma_rx_from_peer(qp, skb, pkt->rp.bth))
			srdma_drop(sdev, SRDMA_CNT_DROP_SOURCE);
		else
			srdma_ud_rx(qp, &pkt->rp);
	}
	consume_skb(skb);
}

/**
 * srdma_rx - take one datagram to our UDP port
 * @net: the namespace it arrived in
 * @skb: skb->data is the UDP header; the payload may stay in fragments
 *	(see pkt.c). Consumed.
 * @looped: sent by a device of this host straight to us (loop.c), so
 *	without an ICRC
 */
void srdma_rx(struct net *net, struct sk_buff *skb, bool looped)
{
	struct srdma_rx_pkt pkt;
	struct srdma_dev *sdev;
	struct srdma_qp *qp;
	int err, icrc = 0;
	u32 len;

	len = skb->len;
	if (len < sizeof(struct udphdr) ||
	    ntohs(udp_hdr(skb)->len) != len) {
		srdma_rx_drop(net, skb, SRDMA_CNT_DROP_SHORT);
		return;
	}
	len -= sizeof(struct udphdr);
	/* Headers linear: at most the longest header set, ICRC aside. */
	if (!pskb_may_pull(skb, sizeof(struct udphdr) +
				min_t(u32, len, ROCE_MAX_HDR_LEN))) {
		srdma_rx_drop(net, skb, SRDMA_CNT_DROP_NOMEM);
		return;
	}
	err = roce_parse_hdr(skb->data + sizeof(struct udphdr),
			     skb_headlen(skb) - sizeof(struct udphdr), len,
			     &pkt.rp);
	if (!err && !looped) {
		icrc = srdma_icrc_rx(skb, len);
		if (icrc < 0)
			err = icrc;
	}
	if (err) {
		srdma_rx_drop(net, skb, srdma_roce_drop_cnt(-err));
		return;
	}
	pkt.skb = skb;
	pkt.payload_off = sizeof(struct udphdr) + pkt.rp.hdr_len;

	rcu_read_lock();
	if (roce_bth_qpn(pkt.rp.bth) == ROCE_QPN_MCAST) {
		srdma_rx_mcast(net, &pkt);
		rcu_read_unlock();
		return;
	}
	if (roce_bth_qpn(pkt.rp.bth) == 1)
		qp = srdma_gsi_lookup_rcu(net, skb);
	else
		qp = srdma_qp_lookup_rcu(roce_bth_qpn(pkt.rp.bth));
	if (!qp || qp_sdev(qp)->net != net) {
		rcu_read_unlock();
		srdma_rx_drop(net, skb, SRDMA_CNT_DROP_NO_QP);
		return;
	}
	sdev = qp_sdev(qp);
	srdma_rx_count(sdev, skb);
	/* A CNP is of no transport: any connected QP's peer may send one. */
	if (pkt.rp.opcode == ROCE_CNP ?
	    srdma_qp_is_ud(qp) :
	    !roce_opcode_valid_for(pkt.rp.opcode, srdma_qp_transport(qp)) ||
	    !srdma_rx_direction_ok(qp, pkt.rp.info->flags)) {
		srdma_drop(sdev, SRDMA_CNT_DROP_QP_TYPE);
		rcu_read_unlock();
		kfree_skb(skb);
		return;
	}
	if (!srdma_rx_from_peer(qp, skb, pkt.rp.bth)) {
		srdma_drop(sdev, SRDMA_CNT_DROP_SOURCE);
		rcu_read_unlock();
		kfree_skb(skb);
		return;
	}
	/* A FLUSH from rdma_rxe: ours to it go with its ICRC from now on. */
	if (unlikely(icrc == ROCE_ICRC_RXE_FLUSH))
		WRITE_ONCE(qp->req.peer_rxe_flush, true);
	if (unlikely(pkt.rp.opcode == ROCE_CNP)) {
		srdma_cc_cnp_rx(qp);
		goto done;
	}
	if (unlikely(srdma_cc_ce(skb)))
		srdma_cc_ce_rx(qp);
	if (srdma_qp_is_ud(qp))
		srdma_ud_rx(qp, &pkt.rp);
	else if (pkt.rp.info->flags & ROCE_F_REQ)
		srdma_resp_rx(qp, &pkt.rp);
	else
		srdma_comp_rx(qp, &pkt.rp);
done:
	rcu_read_unlock();
	consume_skb(skb);
}

/* UDP encap_rcv of our sockets: always consumes the skb. */
int srdma_udp_rcv(struct sock *sk, struct sk_buff *skb)
{
	srdma_rx(sock_net(sk), skb, false);
	return 0;
}
