// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the receive path of the protocol core.
 *
 * The input is read two ways: as a RoCE packet starting at the BTH, and
 * as an IP packet (IPv6 if the first nibble is 6, else IPv4) with UDP
 * and RoCE after it.  Besides the sanitizers, it aborts when a parse
 * that succeeded describes bytes that do not add up.
 */
#include <stdlib.h>

#include "roce_icrc.h"
#include "roce_parse.h"

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

static volatile u64 sink;

/* Touch every header the parse vouched for, through the accessors. */
static void check_pkt(const u8 *buf, u32 len, const struct roce_pkt_info *p)
{
	const struct roce_reth *reth = roce_pkt_reth(p);
	const struct roce_aeth *aeth = roce_pkt_aeth(p);
	const struct roce_atmeth *atm = roce_pkt_atmeth(p);
	const struct roce_atmack *ack = roce_pkt_atmack(p);
	const struct roce_deth *deth = roce_pkt_deth(p);
	const struct roce_immdt *imm = roce_pkt_immdt(p);
	const struct roce_ieth *ieth = roce_pkt_ieth(p);
	struct roce_bth_fields f;

	if ((const u8 *)p->bth != buf || p->len != len ||
	    p->hdr_len + p->payload_len + p->pad + ROCE_ICRC_LEN != len ||
	    p->payload != buf + p->hdr_len || p->hdr_len > ROCE_MAX_HDR_LEN ||
	    p->opcode != buf[0] || p->info != roce_opcode_lookup(buf[0]))
		abort();

	roce_bth_decode(p->bth, &f);
	if (f.tver || f.pad != p->pad)
		abort();
	sink += f.psn + f.qpn;
	if (reth)
		sink += roce_reth_va(reth) + roce_reth_len(reth);
	if (aeth)
		sink += roce_aeth_msn(aeth) +
			roce_aeth_credits(roce_aeth_syndrome(aeth));
	if (atm)
		sink += roce_atmeth_compare(atm);
	if (ack)
		sink += roce_atmack_orig(ack);
	if (deth)
		sink += roce_deth_sqp(deth);
	if (imm)
		sink += roce_immdt_get(imm);
	if (ieth)
		sink += roce_ieth_rkey(ieth);
	if (p->payload_len)
		sink += p->payload[p->payload_len - 1];
}

static void check_ret(int ret)
{
	if (ret > ROCE_ICRC_RXE_FLUSH || ret <= -ROCE_DROP_REASON_MAX)
		abort();
}

static void fuzz_ip(const u8 *data, size_t size)
{
	bool v6 = (data[0] >> 4) == 6;
	size_t iplen = v6 ? ROCE_IPV6_HDR_LEN : ROCE_IPV4_HDR_LEN;
	const u8 *udp = data + iplen, *bth = udp + ROCE_UDP_HDR_LEN;
	struct roce_pkt_info pkt;
	u32 len;
	int ret;

	if (size < iplen + ROCE_UDP_HDR_LEN)
		return;
	len = size - iplen - ROCE_UDP_HDR_LEN;
	ret = v6 ? roce_icrc_verify_ipv6(data, udp, len) :
		   roce_icrc_verify_ipv4(data, udp, len);
	check_ret(ret);
	if (ret || roce_parse(bth, len, &pkt))
		return;

	/* Accepted: the incremental form must agree, split at the payload. */
	{
		u32 crc = v6 ? roce_icrc_begin_ipv6(data, udp) :
			       roce_icrc_begin_ipv4(data, udp);
		const u8 *tail = bth + ROCE_BTH_LEN;
		u32 hdrs = pkt.hdr_len - ROCE_BTH_LEN;

		crc = roce_icrc_update(crc, tail, hdrs);
		crc = roce_icrc_update(crc, pkt.payload,
				       len - pkt.hdr_len - ROCE_ICRC_LEN);
		if (roce_icrc_final(crc) != roce_icrc_get(bth + len - 4))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct roce_pkt_info pkt;
	int ret;

	if (size > 0xffff)
		return 0;

	ret = roce_parse(data, size, &pkt);
	check_ret(ret);
	if (!ret)
		check_pkt(data, size, &pkt);

	/* Headers linear, rest "in fragments": only the head is readable. */
	if (size >= ROCE_MAX_HDR_LEN) {
		u8 *head = malloc(ROCE_MAX_HDR_LEN);

		if (!head)
			abort();
		memcpy(head, data, ROCE_MAX_HDR_LEN);
		ret = roce_parse_hdr(head, ROCE_MAX_HDR_LEN, size + 4, &pkt);
		check_ret(ret);
		free(head);
	}

	if (size)
		fuzz_ip(data, size);
	return 0;
}
