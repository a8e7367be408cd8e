// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 ICRC over IPv4 or IPv6.  The masked header copy lives on the
 * stack (at most 60 bytes) so the packet itself is never written.
 */
#include "roce_icrc.h"

/* Offsets of the fields the ICRC treats as all ones. */
#define IPV4_TOS		1
#define IPV4_TTL		8
#define IPV4_CSUM		10
/* IPv6 bytes 0-3: version:4 | traffic class:8 | flow label:20 */
#define IPV6_TC_FLOW		0
#define IPV6_HOP_LIMIT		7
#define UDP_CSUM		6

#define PSEUDO_MAX	(ROCE_IPV6_HDR_LEN + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)

/* Mask UDP checksum and BTH byte 4 of the copy at @udp, then CRC it all. */
static u32 icrc_pseudo(u8 *ph, u8 *udp)
{
	udp[UDP_CSUM] = 0xff;
	udp[UDP_CSUM + 1] = 0xff;
	udp[ROCE_UDP_HDR_LEN + ROCE_BTH_ICRC_MASK_BYTE] = 0xff;
	return roce_crc32(ROCE_ICRC_SEED, ph,
			udp + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN - ph);
}

/**
 * roce_icrc_begin_ipv4() - start an ICRC over IPv4, UDP and BTH
 * @iph: IPv4 header; exactly 20 bytes are covered (RoCEv2 uses no options)
 * @udph: UDP header, followed directly by the BTH
 *
 * Return: running value to pass to roce_icrc_update().
 */
u32 roce_icrc_begin_ipv4(const void *iph, const void *udph)
{
	u8 ph[PSEUDO_MAX];
	u8 *udp = ph + ROCE_IPV4_HDR_LEN;

	memcpy(ph, iph, ROCE_IPV4_HDR_LEN);
	memcpy(udp, udph, ROCE_UDP_HDR_LEN + ROCE_BTH_LEN);
	ph[IPV4_TOS] = 0xff;
	ph[IPV4_TTL] = 0xff;
	ph[IPV4_CSUM] = 0xff;
	ph[IPV4_CSUM + 1] = 0xff;
	return icrc_pseudo(ph, udp);
}

/**
 * roce_icrc_begin_ipv6() - start an ICRC over IPv6, UDP and BTH
 * @ip6h: IPv6 fixed header (40 bytes); extension headers are not covered
 * @udph: UDP header, followed directly by the BTH
 *
 * Return: running value to pass to roce_icrc_update().
 */
u32 roce_icrc_begin_ipv6(const void *ip6h, const void *udph)
{
	u8 ph[PSEUDO_MAX];
	u8 *udp = ph + ROCE_IPV6_HDR_LEN;

	memcpy(ph, ip6h, ROCE_IPV6_HDR_LEN);
	memcpy(udp, udph, ROCE_UDP_HDR_LEN + ROCE_BTH_LEN);
	/* Keep the version nibble; traffic class and flow label go. */
	ph[IPV6_TC_FLOW] |= 0x0f;
	ph[IPV6_TC_FLOW + 1] = 0xff;
	ph[IPV6_TC_FLOW + 2] = 0xff;
	ph[IPV6_TC_FLOW + 3] = 0xff;
	ph[IPV6_HOP_LIMIT] = 0xff;
	return icrc_pseudo(ph, udp);
}

/* Bytes after the BTH that the ICRC covers, for a packet of @len. */
static u32 icrc_tail_len(u32 len)
{
	return len - ROCE_BTH_LEN - ROCE_ICRC_LEN;
}

/**
 * roce_icrc_ipv4() - ICRC of a linear RoCEv2 packet over IPv4
 * @iph: IPv4 header
 * @udph: UDP header, followed by the BTH and the rest of the packet
 * @len: bytes from the BTH through the ICRC field (UDP length - 8);
 *	 at least ROCE_BTH_LEN + ROCE_ICRC_LEN
 *
 * The ICRC field itself is not read, so this serves both sides.
 *
 * Return: the ICRC, to store with roce_icrc_put().
 */
u32 roce_icrc_ipv4(const void *iph, const void *udph, u32 len)
{
	const u8 *rest = (const u8 *)udph + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN;
	u32 crc = roce_icrc_begin_ipv4(iph, udph);

	return roce_icrc_final(roce_crc32(crc, rest, icrc_tail_len(len)));
}

/**
 * roce_icrc_ipv6() - ICRC of a linear RoCEv2 packet over IPv6
 * @ip6h: IPv6 header
 * @udph: UDP header, followed by the BTH and the rest of the packet
 * @len: as for roce_icrc_ipv4()
 *
 * Return: the ICRC, to store with roce_icrc_put().
 */
u32 roce_icrc_ipv6(const void *ip6h, const void *udph, u32 len)
{
	const u8 *rest = (const u8 *)udph + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN;
	u32 crc = roce_icrc_begin_ipv6(ip6h, udph);

	return roce_icrc_final(roce_crc32(crc, rest, icrc_tail_len(len)));
}

/* @crc: the running value up to the ICRC. */
static int icrc_check(u32 crc, const void *udph, u32 len)
{
	const u8 *bth = (const u8 *)udph + ROCE_UDP_HDR_LEN;
	bool quirk = roce_icrc_rxe_quirk(bth[0]);

	return roce_icrc_verdict(roce_icrc_get(bth + len - ROCE_ICRC_LEN), crc,
				 quirk, quirk ? roce_crc32(crc, bth,
							   len - ROCE_ICRC_LEN) : 0);
}

/**
 * roce_icrc_verify_ipv4() - check the ICRC of a linear packet over IPv4
 * @iph: IPv4 header
 * @udph: UDP header, followed by @len bytes of BTH through ICRC
 * @len: bytes from the BTH through the ICRC field
 *
 * Return: 0, ROCE_ICRC_RXE_FLUSH (rdma_rxe's FLUSH ICRC), -ROCE_DROP_SHORT
 * or -ROCE_DROP_BAD_ICRC.
 */
int roce_icrc_verify_ipv4(const void *iph, const void *udph, u32 len)
{
	if (unlikely(len < ROCE_BTH_LEN + ROCE_ICRC_LEN))
		return -ROCE_DROP_SHORT;
	return icrc_check(roce_crc32(roce_icrc_begin_ipv4(iph, udph),
				     (const u8 *)udph + ROCE_UDP_HDR_LEN +
				     ROCE_BTH_LEN, icrc_tail_len(len)),
			  udph, len);
}

/**
 * roce_icrc_verify_ipv6() - check the ICRC of a linear packet over IPv6
 * @ip6h: IPv6 header
 * @udph: UDP header, followed by @len bytes of BTH through ICRC
 * @len: bytes from the BTH through the ICRC field
 *
 * Return: 0, ROCE_ICRC_RXE_FLUSH (rdma_rxe's FLUSH ICRC), -ROCE_DROP_SHORT
 * or -ROCE_DROP_BAD_ICRC.
 */
int roce_icrc_verify_ipv6(const void *ip6h, const void *udph, u32 len)
{
	if (unlikely(len < ROCE_BTH_LEN + ROCE_ICRC_LEN))
		return -ROCE_DROP_SHORT;
	return icrc_check(roce_crc32(roce_icrc_begin_ipv6(ip6h, udph),
				     (const u8 *)udph + ROCE_UDP_HDR_LEN +
				     ROCE_BTH_LEN, icrc_tail_len(len)),
			  udph, len);
}
