/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Structural parse of a RoCEv2 packet, from the BTH to the ICRC.
 *
 * Checks only what the bytes themselves can tell: length, transport
 * version, opcode, pad.  Everything that needs QP state (PSN, P_Key,
 * QPN, first/middle/last sequencing, MTU) and the ICRC, which needs the
 * IP and UDP headers, stays with the caller.
 */
#ifndef SOFTRDMA_ROCE_PARSE_H
#define SOFTRDMA_ROCE_PARSE_H

#include "proto_port.h"
#include "roce_drop.h"
#include "roce_hdr.h"
#include "roce_opcode.h"

/**
 * struct roce_pkt_info - where things are in a parsed packet
 * @bth: start of the packet (the BTH)
 * @info: opcode table entry; info->off[] locates the extension headers
 * @payload: first payload byte (@hdr_len bytes after @bth)
 * @len: bytes from the BTH through the ICRC
 * @payload_len: payload bytes, pad excluded
 * @opcode: BTH opcode
 * @pad: BTH pad count
 * @hdr_len: BTH plus extension headers
 */
struct roce_pkt_info {
	const struct roce_bth		*bth;
	const struct roce_opcode_info	*info;
	const u8			*payload;
	u32				len;
	u32				payload_len;
	u8				opcode;
	u8				pad;
	u8				hdr_len;
};

int roce_parse_hdr(const void *buf, u32 avail, u32 len,
		   struct roce_pkt_info *pkt);

/**
 * roce_parse() - parse a packet held in one linear buffer
 * @buf: the BTH, i.e. the first byte after the UDP header
 * @len: bytes from @buf through the ICRC (UDP length minus 8)
 * @pkt: filled on success, unspecified on failure
 *
 * Return: 0, or a negated enum roce_drop_reason.
 */
static inline int roce_parse(const void *buf, u32 len,
			     struct roce_pkt_info *pkt)
{
	return roce_parse_hdr(buf, len, len, pkt);
}

/* Extension header @ext of a parsed packet, or NULL if it has none. */
static inline const void *roce_pkt_ext(const struct roce_pkt_info *pkt,
				       enum roce_ext ext)
{
	u8 off = pkt->info->off[ext];

	return off ? (const u8 *)pkt->bth + off : NULL;
}

static inline const struct roce_deth *
roce_pkt_deth(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_DETH);
}

static inline const struct roce_xrceth *
roce_pkt_xrceth(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_XRCETH);
}

static inline const struct roce_feth *
roce_pkt_feth(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_FETH);
}

static inline const struct roce_reth *
roce_pkt_reth(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_RETH);
}

static inline const struct roce_atmeth *
roce_pkt_atmeth(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_ATMETH);
}

static inline const struct roce_aeth *
roce_pkt_aeth(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_AETH);
}

static inline const struct roce_atmack *
roce_pkt_atmack(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_ATMACK);
}

static inline const struct roce_immdt *
roce_pkt_immdt(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_IMMDT);
}

static inline const struct roce_ieth *
roce_pkt_ieth(const struct roce_pkt_info *pkt)
{
	return roce_pkt_ext(pkt, ROCE_EXT_IETH);
}

#endif /* SOFTRDMA_ROCE_PARSE_H */
