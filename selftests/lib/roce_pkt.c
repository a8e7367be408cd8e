// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 packet crafting for the selftests on top of kernel/proto: the
 * headers are laid out by the same code the module uses, so a packet the
 * tests call valid is valid by the module's own definition, and the
 * module's reply is decoded the same way.
 */
#include <string.h>

#include "roce_hdr.h"
#include "roce_icrc.h"
#include "roce_opcode.h"
#include "roce_parse.h"
#include "roce_pkt.h"

#define IP_TOTLEN	2
#define IP_ID		4
#define UDP_LEN		(RPKT_UDP + 4)

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

uint32_t rpkt_hdr_len(uint8_t opcode)
{
	const struct roce_opcode_info *info = roce_opcode_lookup(opcode);

	return info->flags ? info->hdr_len : ROCE_BTH_LEN;
}

uint32_t rpkt_reth_off(uint8_t opcode)
{
	return roce_opcode_lookup(opcode)->off[ROCE_EXT_RETH];
}

uint32_t rpkt_aeth_off(uint8_t opcode)
{
	return roce_opcode_lookup(opcode)->off[ROCE_EXT_AETH];
}

bool rpkt_opcode_known(uint8_t opcode)
{
	return roce_opcode_known(opcode);
}

bool rpkt_opcode_is_request(uint8_t opcode)
{
	return roce_opcode_lookup(opcode)->flags & ROCE_F_REQ;
}

const char *rpkt_drop_name(int ret)
{
	return roce_drop_reason_name(ret);
}

void rpkt_set_len(struct rpkt *p, uint32_t len)
{
	p->len = len;
	put16(p->b + RPKT_IP + IP_TOTLEN, len);
	put16(p->b + UDP_LEN, len - RPKT_UDP);
}

void rpkt_build(struct rpkt *p, const struct rpkt_desc *d)
{
	const struct roce_opcode_info *info = roce_opcode_lookup(d->opcode);
	uint32_t hdr = rpkt_hdr_len(d->opcode);
	uint32_t pad = d->pad >= 0 ? (uint32_t)d->pad : -d->len & 3;
	uint32_t fill = d->pad >= 0 ? -d->len & 3 : pad;
	struct roce_bth_fields bth = {
		.opcode = d->opcode,
		.se = d->se,
		.pad = pad,
		.tver = d->tver,
		.pkey = ROCE_PKEY_DEFAULT,
		.qpn = d->qpn,
		.ackreq = d->ackreq,
		.psn = d->psn,
	};
	uint8_t *ip = p->b + RPKT_IP, *udp = p->b + RPKT_UDP;
	uint8_t *b = p->b + RPKT_BTH;

	memset(p->b, 0, RPKT_BTH + hdr);
	ip[0] = 0x45;
	put16(ip + IP_ID, d->ip_id);
	ip[6] = 0x40;		/* DF */
	ip[8] = 64;		/* TTL */
	ip[9] = 17;		/* UDP */
	memcpy(ip + 12, &d->saddr, 4);
	memcpy(ip + 16, &d->daddr, 4);
	put16(udp, d->sport);
	put16(udp + 2, RPKT_ROCE_PORT);

	roce_bth_encode((struct roce_bth *)b, &bth);
	if (info->off[ROCE_EXT_RETH])
		roce_reth_encode((void *)(b + info->off[ROCE_EXT_RETH]), d->va,
				 d->rkey, d->dma_len);
	if (info->off[ROCE_EXT_ATMETH])
		roce_atmeth_encode((void *)(b + info->off[ROCE_EXT_ATMETH]),
				   d->va, d->rkey, 1, 0);
	if (info->off[ROCE_EXT_AETH])
		roce_aeth_encode((void *)(b + info->off[ROCE_EXT_AETH]),
				 d->syndrome, d->msn);
	if (info->off[ROCE_EXT_IMMDT])
		roce_immdt_set((void *)(b + info->off[ROCE_EXT_IMMDT]),
			       cpu_to_be32(d->imm));
	if (d->len)
		memcpy(b + hdr, d->data, d->len);
	memset(b + hdr + d->len, 0, fill + ROCE_ICRC_LEN);
	rpkt_set_len(p, RPKT_BTH + hdr + d->len + fill + ROCE_ICRC_LEN);
	rpkt_seal(p);
}

void rpkt_seal(struct rpkt *p)
{
	uint32_t n = p->len - RPKT_BTH;

	if (p->len < RPKT_BTH + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return;		/* no room for an ICRC */
	roce_icrc_put(p->b + p->len - ROCE_ICRC_LEN,
		      roce_icrc_ipv4(p->b + RPKT_IP, p->b + RPKT_UDP, n));
}

bool rpkt_icrc_ok(const struct rpkt *p)
{
	if (p->len < RPKT_BTH + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return false;
	return !roce_icrc_verify_ipv4(p->b + RPKT_IP, p->b + RPKT_UDP,
				      p->len - RPKT_BTH);
}

int rpkt_parse(const struct rpkt *p)
{
	struct roce_pkt_info pkt;

	if (p->len < RPKT_BTH)
		return -ROCE_DROP_SHORT;
	return roce_parse(p->b + RPKT_BTH, p->len - RPKT_BTH, &pkt);
}

bool rpkt_decode(const uint8_t *b, size_t n, struct rpkt_rx *rx)
{
	const uint8_t *udp = b + RPKT_UDP;
	const struct roce_reth *reth;
	const struct roce_aeth *aeth;
	struct roce_pkt_info pkt;
	uint32_t len;

	memset(rx, 0, sizeof(*rx));
	if (n < RPKT_BTH || b[0] != 0x45 || b[9] != 17 ||
	    get16(udp + 2) != RPKT_ROCE_PORT)
		return false;
	len = get16(udp + 4);
	if (len < 8 || RPKT_UDP + len > n)
		return false;
	len -= 8;
	rx->parse = roce_parse(udp + 8, len, &pkt);
	if (rx->parse)
		return true;
	rx->icrc_ok = !roce_icrc_verify_ipv4(b, udp, len);
	rx->tos = b[1];
	rx->opcode = pkt.opcode;
	rx->becn = roce_bth_becn(pkt.bth);
	rx->qpn = roce_bth_qpn(pkt.bth);
	rx->psn = roce_bth_psn(pkt.bth);
	aeth = roce_pkt_aeth(&pkt);
	if (aeth) {
		rx->has_aeth = true;
		rx->syndrome = roce_aeth_syndrome(aeth);
		rx->msn = roce_aeth_msn(aeth);
	}
	reth = roce_pkt_reth(&pkt);
	if (reth) {
		rx->has_reth = true;
		rx->va = roce_reth_va(reth);
		rx->rkey = roce_reth_rkey(reth);
		rx->dma_len = roce_reth_len(reth);
	}
	rx->payload = pkt.payload;
	rx->payload_len = pkt.payload_len;
	return true;
}
