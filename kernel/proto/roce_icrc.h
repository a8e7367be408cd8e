/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 invariant CRC.
 *
 * CRC-32 (reflected, poly 0xedb88320, init ~0, final ~) over: 8 bytes of
 * 0xff standing in for the InfiniBand LRH, the IP header and UDP header
 * with the fields routers may change set to all ones, the BTH with byte 4
 * set to 0xff, then everything after the BTH up to the ICRC.  The result
 * is stored least significant byte first.
 *
 * Usage, one linear buffer:  roce_icrc_ipv4() / roce_icrc_verify_ipv4().
 * Usage, scattered payload:
 *	crc = roce_icrc_begin_ipv4(iph, udph);
 *	crc = roce_icrc_update(crc, rest_of_headers_and_payload, n); ...
 *	icrc = roce_icrc_final(crc);
 */
#ifndef SOFTRDMA_ROCE_ICRC_H
#define SOFTRDMA_ROCE_ICRC_H

#include "proto_port.h"
#include "roce_drop.h"
#include "roce_hdr.h"
#include "roce_opcode.h"

#define ROCE_IPV4_HDR_LEN	20
#define ROCE_IPV6_HDR_LEN	40
#define ROCE_UDP_HDR_LEN	8

/* Running value after ~0 and the 8 bytes of 0xff of the masked LRH. */
#define ROCE_ICRC_SEED		0xdebb20e3u

u32 roce_icrc_begin_ipv4(const void *iph, const void *udph);
u32 roce_icrc_begin_ipv6(const void *ip6h, const void *udph);

/* Continue over the bytes after the BTH, in wire order, any chunking. */
static inline u32 roce_icrc_update(u32 crc, const void *p, size_t len)
{
	return roce_crc32(crc, p, len);
}

static inline u32 roce_icrc_final(u32 crc)
{
	return ~crc;
}

/*
 * rdma_rxe's ICRC of an RC FLUSH (Linux 6.2 through 7.2 at least): its
 * opcode table gives FLUSH no payload offset, so after the standard
 * running value up to the ICRC it runs the CRC on over the @len - 4 bytes
 * from the BTH once more, unmasked, before the final inversion. Standard
 * peers never see it from us unless a FLUSH of ours went unanswered; we
 * take it from a peer on receive (roce_icrc_verify_*() return
 * ROCE_ICRC_RXE_FLUSH) and answer in kind.
 */
#define ROCE_ICRC_RXE_FLUSH	1

static inline bool roce_icrc_rxe_quirk(u8 opcode)
{
	return opcode == ROCE_RC_FLUSH;
}

/*
 * The verdict on @icrc, a received ICRC field: @crc is the standard
 * running value up to it; @rxe, rdma_rxe's for a FLUSH (computed only
 * where roce_icrc_rxe_quirk() holds, and @quirk says so). Both the linear
 * check below and the kernel's skb check come here.
 */
static inline int roce_icrc_verdict(u32 icrc, u32 crc, bool quirk, u32 rxe)
{
	if (icrc == roce_icrc_final(crc))
		return 0;
	if (quirk && icrc == roce_icrc_final(rxe))
		return ROCE_ICRC_RXE_FLUSH;
	return -ROCE_DROP_BAD_ICRC;
}

u32 roce_icrc_ipv4(const void *iph, const void *udph, u32 len);
u32 roce_icrc_ipv6(const void *ip6h, const void *udph, u32 len);
int roce_icrc_verify_ipv4(const void *iph, const void *udph, u32 len);
int roce_icrc_verify_ipv6(const void *ip6h, const void *udph, u32 len);

/* The ICRC field is little-endian whatever the host. */
static inline u32 roce_icrc_get(const void *p)
{
	const u8 *b = p;

	return b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
}

static inline void roce_icrc_put(void *p, u32 icrc)
{
	u8 *b = p;

	b[0] = icrc;
	b[1] = icrc >> 8;
	b[2] = icrc >> 16;
	b[3] = icrc >> 24;
}

#endif /* SOFTRDMA_ROCE_ICRC_H */
