// SPDX-License-Identifier: GPL-2.0
/*
 * Receive: a UDP datagram on port 4791 of a namespace with softrdma
 * devices is checked (headers, ICRC), matched to its QP and handed to
 * the responder (requests) or the completer (responses). A packet that
 * fails a check is dropped and counted by reason.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/udp.h>

#include "srdma.h"
#include "proto/roce_icrc.h"

/* Return: 0 or -ROCE_DROP_*. */
static int srdma_rx_icrc(struct sk_buff *skb, const struct udphdr *udph,
			 u32 len)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		/* The ICRC covers exactly a 20-byte IPv4 header. */
		if (iph->ihl != 5)
			return -ROCE_DROP_BAD_ICRC;
		return roce_icrc_verify_ipv4(iph, udph, len);
	}
	return roce_icrc_verify_ipv6(ipv6_hdr(skb), udph, len);
}

/*
 * Drop a datagram no QP took: counted against the device of the netdev it
 * came in on (see srdma_net_rx_dev()).
 */
static void srdma_rx_drop(struct sock *sk, struct sk_buff *skb, int cnt)
{
	struct srdma_dev *sdev;

	rcu_read_lock();
	sdev = srdma_net_rx_dev(sk, skb->dev);
	if (sdev) {
		srdma_count(sdev, SRDMA_CNT_RX_PKTS);
		srdma_count_add(sdev, SRDMA_CNT_RX_BYTES,
				skb->len - skb_network_offset(skb));
		srdma_drop(sdev, cnt);
	}
	rcu_read_unlock();
	kfree_skb(skb);
}

/* UDP encap_rcv of our sockets: always consumes the skb. */
int srdma_udp_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct roce_pkt_info pkt;
	struct srdma_dev *sdev;
	struct udphdr *udph;
	struct srdma_qp *qp;
	u32 len;
	int err;

	if (skb_linearize(skb)) {
		srdma_rx_drop(sk, skb, SRDMA_CNT_DROP_NOMEM);
		return 0;
	}
	udph = udp_hdr(skb);
	len = ntohs(udph->len);
	if (len < sizeof(*udph) ||
	    (u8 *)udph + len > skb_tail_pointer(skb)) {
		srdma_rx_drop(sk, skb, SRDMA_CNT_DROP_SHORT);
		return 0;
	}
	len -= sizeof(*udph);
	err = roce_parse(udph + 1, len, &pkt);
	if (!err)
		err = srdma_rx_icrc(skb, udph, len);
	if (err) {
		srdma_rx_drop(sk, skb, srdma_roce_drop_cnt(-err));
		return 0;
	}

	rcu_read_lock();
	qp = srdma_qp_lookup_rcu(roce_bth_qpn(pkt.bth));
	if (!qp || to_sdev(qp->ibqp.device)->net != sock_net(sk)) {
		rcu_read_unlock();
		srdma_rx_drop(sk, skb, SRDMA_CNT_DROP_NO_QP);
		return 0;
	}
	sdev = to_sdev(qp->ibqp.device);
	srdma_count(sdev, SRDMA_CNT_RX_PKTS);
	srdma_count_add(sdev, SRDMA_CNT_RX_BYTES,
				skb->len - skb_network_offset(skb));
	if (qp->ibqp.qp_type != IB_QPT_RC ||
	    !roce_opcode_valid_for(pkt.opcode, ROCE_TRANSPORT_RC)) {
		srdma_drop(sdev, SRDMA_CNT_DROP_QP_TYPE);
		rcu_read_unlock();
		kfree_skb(skb);
		return 0;
	}
	if (pkt.info->flags & ROCE_F_REQ)
		srdma_resp_rx(qp, &pkt);
	else
		srdma_comp_rx(qp, &pkt);
	rcu_read_unlock();
	consume_skb(skb);
	return 0;
}
