// SPDX-License-Identifier: GPL-2.0
/*
 * Receive: a UDP datagram on port 4791 of a namespace with softrdma
 * devices is checked (headers, ICRC), matched to its QP and handed to
 * the responder (requests) or the completer (responses). A packet that
 * fails a check is dropped.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/udp.h>

#include "srdma.h"
#include "proto/roce_icrc.h"

static bool srdma_rx_icrc_ok(struct sk_buff *skb, const struct udphdr *udph,
			     u32 len)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		/* The ICRC covers exactly a 20-byte IPv4 header. */
		return iph->ihl == 5 && !roce_icrc_verify_ipv4(iph, udph, len);
	}
	return !roce_icrc_verify_ipv6(ipv6_hdr(skb), udph, len);
}

/* UDP encap_rcv of our sockets: always consumes the skb. */
int srdma_udp_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct roce_pkt_info pkt;
	struct udphdr *udph;
	struct srdma_qp *qp;
	u32 len;

	if (skb_linearize(skb))
		goto drop;
	udph = udp_hdr(skb);
	len = ntohs(udph->len);
	if (len < sizeof(*udph) ||
	    (u8 *)udph + len > skb_tail_pointer(skb))
		goto drop;
	len -= sizeof(*udph);
	if (roce_parse(udph + 1, len, &pkt) || !srdma_rx_icrc_ok(skb, udph, len))
		goto drop;

	rcu_read_lock();
	qp = srdma_qp_lookup_rcu(roce_bth_qpn(pkt.bth));
	if (!qp || to_sdev(qp->ibqp.device)->net != sock_net(sk) ||
	    qp->ibqp.qp_type != IB_QPT_RC ||
	    !roce_opcode_valid_for(pkt.opcode, ROCE_TRANSPORT_RC)) {
		rcu_read_unlock();
		goto drop;
	}
	if (pkt.info->flags & ROCE_F_REQ)
		srdma_resp_rx(qp, &pkt);
	else
		srdma_comp_rx(qp, &pkt);
	rcu_read_unlock();
	consume_skb(skb);
	return 0;
drop:
	kfree_skb(skb);
	return 0;
}
