// SPDX-License-Identifier: GPL-2.0
/*
 * Transmit: a QP's path (resolved at RTR) and the RoCEv2 encapsulation of
 * a packet: UDP, IPv4 or IPv6, ICRC, out through the namespace's stack,
 * or straight to our receive path when it stays on this host (loop.c).
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/route.h>
#include <rdma/ib_cache.h>

#include "srdma.h"
#include "proto/roce_icrc.h"

/* RoCEv2's UDP source port range carries flow entropy: 0xc000-0xffff. */
__be16 srdma_path_sport(u32 flow)
{
	return htons(0xc000 | (hash_32(flow, 14) & 0x3fff));
}

/**
 * srdma_path_init - resolve an address vector into a path
 * @path: the path; its dst_cache is initialised, and reset here
 * @ah: the AV, with a GRH holding its source GID attribute
 * @flow: what the UDP source port is derived from (a QPN, an AH number)
 *
 * Return: 0, or -EINVAL if the source and destination GIDs are not both
 * RoCEv2 GIDs of one IP family.
 */
int srdma_path_init(struct srdma_path *path, const struct rdma_ah_attr *ah,
		    u32 flow)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);
	const struct ib_gid_attr *sgid = grh->sgid_attr;
	struct srdma_av *av = &path->av;

	if (!sgid || sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	dst_cache_reset(&path->dst_cache);
	av->sport = srdma_path_sport(flow);
	av->ttl = grh->hop_limit ?: 64;
	av->tclass = grh->traffic_class;
	if (ipv6_addr_v4mapped((struct in6_addr *)sgid->gid.raw)) {
		if (!ipv6_addr_v4mapped((struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		av->family = AF_INET;
		memcpy(&av->saddr4, &sgid->gid.raw[12], 4);
		memcpy(&av->daddr4, &grh->dgid.raw[12], 4);
	} else {
		if (ipv6_addr_v4mapped((struct in6_addr *)grh->dgid.raw))
			return -EINVAL;
		av->family = AF_INET6;
		memcpy(&av->saddr6, sgid->gid.raw, 16);
		memcpy(&av->daddr6, grh->dgid.raw, 16);
		av->flow_label = grh->flow_label;
	}
	return 0;
}

static struct udphdr *srdma_push_udp(struct sk_buff *skb,
				     const struct srdma_av *av, u32 roce_len)
{
	struct udphdr *udph = skb_push(skb, sizeof(*udph));

	skb_reset_transport_header(skb);
	udph->source = av->sport;
	udph->dest = htons(SRDMA_ROCE_UDP_PORT);
	udph->len = htons(roce_len + sizeof(*udph));
	udph->check = 0;	/* the ICRC protects the payload */
	return udph;
}

/* The path's route: cached per CPU, looked up again once it goes stale. */
static struct rtable *srdma_route4(struct srdma_dev *sdev,
				   struct srdma_path *path)
{
	struct flowi4 fl4 = {
		.flowi4_oif = sdev->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = path->av.daddr4,
		.saddr = path->av.saddr4,
	};
	struct rtable *rt;
	__be32 saddr;

	rt = dst_cache_get_ip4(&path->dst_cache, &saddr);
	if (rt)
		return rt;
	rt = ip_route_output_key(sdev->net, &fl4);
	if (!IS_ERR(rt))
		dst_cache_set_ip4(&path->dst_cache, &rt->dst, fl4.saddr);
	return rt;
}

static struct dst_entry *srdma_route6(struct srdma_dev *sdev,
				      struct srdma_path *path)
{
	struct flowi6 fl6 = {
		.flowi6_oif = sdev->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = path->av.daddr6,
		.saddr = path->av.saddr6,
	};
	struct dst_entry *dst;
	struct in6_addr saddr;

	dst = dst_cache_get_ip6(&path->dst_cache, &saddr);
	if (dst)
		return dst;
	dst = srdma_ip6_route(sdev->net, &fl6);
	if (!IS_ERR(dst))
		dst_cache_set_ip6(&path->dst_cache, dst, &fl6.saddr);
	return dst;
}

static int srdma_xmit4(struct srdma_dev *sdev, struct srdma_path *path,
		       struct sk_buff *skb, u32 roce_len)
{
	const struct srdma_av *av = &path->av;
	struct net *net = sdev->net;
	struct iphdr *iph;
	struct rtable *rt;
	u8 tclass;

	rt = srdma_route4(sdev, path);
	if (IS_ERR(rt))
		goto drop;
	skb_dst_set(skb, &rt->dst);

	/* Before the pushes: it reads the opcode at skb->data. */
	tclass = srdma_cc_tclass(skb, av->tclass);
	srdma_push_udp(skb, av, roce_len);
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = av->saddr4;
	iph->daddr = av->daddr4;
	skb->protocol = htons(ETH_P_IP);
	if (srdma_loop_route(&rt->dst))
		return srdma_loop_xmit(sdev, skb);

	/* The ICRC covers the IP ID: choose it before computing the ICRC. */
	ip_select_ident(net, skb, NULL);
	srdma_icrc_tx(skb, roce_len);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	return ip_local_out(net, NULL, skb);
drop:
	kfree_skb(skb);
	return -EHOSTUNREACH;
}

static int srdma_xmit6(struct srdma_dev *sdev, struct srdma_path *path,
		       struct sk_buff *skb, u32 roce_len)
{
	const struct srdma_av *av = &path->av;
	struct net *net = sdev->net;
	struct dst_entry *dst;
	struct udphdr *udph;
	struct ipv6hdr *ip6h;
	u8 tclass;

	dst = srdma_route6(sdev, path);
	if (IS_ERR(dst))
		goto drop;
	skb_dst_set(skb, dst);

	tclass = srdma_cc_tclass(skb, av->tclass);
	udph = srdma_push_udp(skb, av, roce_len);
	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tclass, htonl(av->flow_label));
	ip6h->payload_len = htons(roce_len + sizeof(*udph));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->ttl;
	ip6h->saddr = av->saddr6;
	ip6h->daddr = av->daddr6;
	skb->protocol = htons(ETH_P_IPV6);
	if (srdma_loop_route(dst))
		return srdma_loop_xmit(sdev, skb);

	srdma_icrc_tx(skb, roce_len);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	return ip6_local_out(net, NULL, skb);
drop:
	kfree_skb(skb);
	return -EHOSTUNREACH;
}

/**
 * srdma_xmit_path - send one packet built by srdma_pkt_alloc() and _put()
 * @sdev: the sending device
 * @path: where to
 * @skb: BTH through ICRC (ICRC space left blank); consumed
 */
int srdma_xmit_path(struct srdma_dev *sdev, struct srdma_path *path,
		    struct sk_buff *skb)
{
	u32 roce_len = skb->len;

	srdma_count(sdev, SRDMA_CNT_TX_PKTS);
	if (path->av.family == AF_INET) {
		srdma_count_add(sdev, SRDMA_CNT_TX_BYTES, roce_len +
				sizeof(struct udphdr) + sizeof(struct iphdr));
		return srdma_xmit4(sdev, path, skb, roce_len);
	}
	srdma_count_add(sdev, SRDMA_CNT_TX_BYTES, roce_len +
			sizeof(struct udphdr) + sizeof(struct ipv6hdr));
	return srdma_xmit6(sdev, path, skb, roce_len);
}
