// SPDX-License-Identifier: GPL-2.0
/*
 * Packet buffers: building a RoCEv2 packet's skb, and reading the payload
 * of skbs whose data may sit in page fragments (their ICRC: icrc.c).
 *
 * A payload of zcopy_min bytes or more is not copied: the pages of
 * the registered memory become the skb's fragments (with a page
 * reference each, so the skb may outlive the MR). What does not fit the
 * frags, the pad and the ICRC go into one small tail fragment. Smaller
 * payloads are copied into the linear area, which is cheaper than taking
 * page references.
 *
 * Only requests lend pages: their memory may not change until the work
 * request completes (after the ACK), so the ICRC stays true. Read
 * responses are copied, as the memory owner may write it meanwhile.
 * On a local link (veth, loopback) the receiver reads the lent pages
 * before it ACKs, so it sees them intact; a packet capture or raw socket
 * that reads them after the sender reused the buffer may not, which is
 * why zcopy_min=0 exists. Nor may a resent copy still queued (behind a
 * qdisc) when the first copy's ACK completed the request: it arrives
 * with the new bytes, fails its ICRC and is dropped (drop_bad_icrc)
 * instead of being taken as a duplicate; nothing is placed either way.
 */
#include <linux/module.h>
#include <linux/skbuff.h>

#include "srdma.h"
#include "proto/roce_icrc.h"

static unsigned int srdma_zcopy_min = 512;
module_param_named(zcopy_min, srdma_zcopy_min, uint, 0644);
MODULE_PARM_DESC(zcopy_min,
		 "Request payloads of this many bytes and more are sent from the registered pages, not copied (0: always copy; default 512)");

/**
 * srdma_pkt_alloc - an skb for one RoCEv2 packet of @qp
 * @qp: the sending QP
 * @hdr_len: BTH and extension headers; they start at skb->data
 * @payload: payload bytes the packet will carry
 * @copy: the payload is copied whatever its size (inline data)
 *
 * Room for UDP/IP/link headers is reserved in front; linear room for the
 * payload, pad and ICRC only when they are to be copied.
 */
struct sk_buff *srdma_pkt_alloc(struct srdma_qp *qp, u32 hdr_len, u32 payload,
				bool copy)
{
	struct net_device *ndev = qp_sdev(qp)->ndev;
	unsigned int head = LL_RESERVED_SPACE(ndev) +
			    sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	unsigned int zcopy_min = READ_ONCE(srdma_zcopy_min);
	unsigned int room = hdr_len;
	struct sk_buff *skb;

	if (copy || !zcopy_min || payload < zcopy_min)
		room += payload + 3 + ROCE_ICRC_LEN;
	skb = alloc_skb(head + room, GFP_ATOMIC);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, head);
	skb_put(skb, hdr_len);
	return skb;
}

/* The source's bytes [@from, @from + @len) to @x. */
static int srdma_src_xfer(const struct srdma_pkt_src *src, u32 from, u32 len,
			  struct srdma_xfer *x)
{
	if (src->sge)
		return srdma_sge_xfer(src->qp, src->sge, src->nsge,
				      src->off + from, len, x);
	return srdma_mr_xfer(src->mr, src->off + from, len, x);
}

/* Add @len bytes at @buf (from netdev_alloc_frag()) as the last frag. */
static void srdma_pkt_add_frag(struct sk_buff *skb, u8 *buf, u32 len)
{
	struct page *page = virt_to_head_page(buf);

	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page,
			   buf - (u8 *)page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
}

/**
 * srdma_pkt_put - append the payload, pad and room for the ICRC
 * @skb: from srdma_pkt_alloc(), headers written
 * @src: where the payload comes from
 * @len: payload bytes
 * @pad: pad bytes after it
 *
 * Return: 0, -ENOMEM, or an error of srdma_sge_xfer() / srdma_mr_xfer();
 * on error the caller frees @skb.
 */
int srdma_pkt_put(struct sk_buff *skb, const struct srdma_pkt_src *src,
		  u32 len, u32 pad)
{
	u32 tail = pad + ROCE_ICRC_LEN, rest;
	struct srdma_xfer x = {};
	u8 *buf;
	int err;

	if (skb_tailroom(skb) >= len + tail) {
		x.op = SRDMA_TO_BUF;
		x.buf = skb_put(skb, len);
		err = len ? srdma_src_xfer(src, 0, len, &x) : 0;
		if (!err)
			memset(skb_put(skb, tail), 0, tail);
		return err;
	}

	x.op = SRDMA_TO_FRAGS;
	x.skb = skb;
	x.max_frags = MAX_SKB_FRAGS - 1;	/* the last one is the tail */
	err = srdma_src_xfer(src, 0, len, &x);
	if (err && err != -EMSGSIZE)
		return err;
	/* The user may rewrite these pages: nobody may rely on them. */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;

	rest = len - x.done;
	buf = netdev_alloc_frag(rest + tail);
	if (!buf)
		return -ENOMEM;
	if (rest) {
		struct srdma_xfer y = { .op = SRDMA_TO_BUF, .buf = buf };

		err = srdma_src_xfer(src, x.done, rest, &y);
		if (err) {
			skb_free_frag(buf);
			return err;
		}
	}
	memset(buf + rest, 0, tail);
	srdma_pkt_add_frag(skb, buf, rest + tail);
	return 0;
}

/* Append inline payload @data, pad and ICRC room (allocated with @copy). */
void srdma_pkt_put_data(struct sk_buff *skb, const void *data, u32 len,
			u32 pad)
{
	if (len)
		skb_put_data(skb, data, len);
	skb_put_zero(skb, pad + ROCE_ICRC_LEN);
}

/* The payload of a received packet into a local SGE list at @off. */
int srdma_pkt_to_sge(struct srdma_qp *qp, const struct roce_pkt_info *pkt,
		     const struct softrdma_sge *sge, u32 nsge, u32 off)
{
	const struct srdma_rx_pkt *p = to_rx_pkt(pkt);
	struct srdma_xfer x = {
		.op = SRDMA_FROM_SKB,
		.skb = p->skb,
		.skb_off = p->payload_off,
	};

	return srdma_sge_xfer(qp, sge, nsge, off, pkt->payload_len, &x);
}

/* The payload of a received packet into @mr at @iova (range checked). */
int srdma_pkt_to_mr(struct srdma_mr *mr, u64 iova,
		    const struct roce_pkt_info *pkt)
{
	const struct srdma_rx_pkt *p = to_rx_pkt(pkt);
	struct srdma_xfer x = {
		.op = SRDMA_FROM_SKB,
		.skb = p->skb,
		.skb_off = p->payload_off,
	};

	return srdma_mr_xfer(mr, iova, pkt->payload_len, &x);
}
