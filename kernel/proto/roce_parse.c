// SPDX-License-Identifier: GPL-2.0
/*
 * Structural parse of a RoCEv2 packet.  Runs on every received packet
 * before any QP lookup, on bytes an attacker chose: every read is bounds
 * checked against @avail and nothing is written outside @pkt.
 */
#include "roce_parse.h"

/**
 * roce_parse_hdr() - parse a packet whose tail may not be linear
 * @buf: the BTH, i.e. the first byte after the UDP header
 * @avail: bytes readable at @buf; at least min(@len, ROCE_MAX_HDR_LEN)
 *	   for a packet to parse, since only headers are read
 * @len: bytes of the whole packet from the BTH through the ICRC
 * @pkt: filled on success, unspecified on failure
 *
 * For an sk_buff, pull min(@len, ROCE_MAX_HDR_LEN) bytes and pass the
 * linear length as @avail: the payload and ICRC may stay in fragments,
 * in which case pkt->payload is only valid up to @avail.
 *
 * Return: 0, or a negated enum roce_drop_reason.
 */
int roce_parse_hdr(const void *buf, u32 avail, u32 len,
		   struct roce_pkt_info *pkt)
{
	const struct roce_bth *bth = buf;
	const struct roce_opcode_info *info;
	u32 hdr_len, room;
	u8 pad;

	if (unlikely(len < ROCE_BTH_LEN || avail < ROCE_BTH_LEN))
		return -ROCE_DROP_SHORT;
	if (unlikely(roce_bth_tver(bth) != 0))
		return -ROCE_DROP_BAD_VERSION;

	info = roce_opcode_lookup(roce_bth_opcode(bth));
	if (unlikely(!info->flags))
		return -ROCE_DROP_BAD_OPCODE;
	hdr_len = info->hdr_len;
	if (unlikely(len < hdr_len + ROCE_ICRC_LEN || avail < hdr_len))
		return -ROCE_DROP_SHORT;
	/* Headers, payload + pad and ICRC are all whole words. */
	if (unlikely(len & 3))
		return -ROCE_DROP_BAD_LENGTH;

	room = len - hdr_len - ROCE_ICRC_LEN;
	pad = roce_bth_pad(bth);
	if (!(info->flags & ROCE_F_PAYLOAD)) {
		if (unlikely(pad))
			return -ROCE_DROP_BAD_PAD;
		if (unlikely(room))
			return -ROCE_DROP_BAD_LENGTH;
	} else if (unlikely(pad > room)) {
		return -ROCE_DROP_BAD_PAD;
	}

	pkt->bth = bth;
	pkt->info = info;
	pkt->payload = (const u8 *)buf + hdr_len;
	pkt->len = len;
	pkt->payload_len = room - pad;
	pkt->opcode = roce_bth_opcode(bth);
	pkt->pad = pad;
	pkt->hdr_len = hdr_len;
	return 0;
}
