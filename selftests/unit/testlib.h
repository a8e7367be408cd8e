/* SPDX-License-Identifier: GPL-2.0 */
/* Packet-building helpers and the rdma_rxe vectors shared by the tests. */
#ifndef SOFTRDMA_UNIT_TESTLIB_H
#define SOFTRDMA_UNIT_TESTLIB_H

#include "proto_port.h"

/*
 * Captured from Debian 6.1 rdma_rxe (see shared notes roce-vectors.md),
 * starting at the IPv4 header.
 */
#define VEC_SEND_ONLY_HEX						\
	"4500003c12344000401114680a0900030a090001c00012b7002800000400ffff" \
	"0000001180123456000102030405060708090a0b0c0d0e0f382ed30d"
#define VEC_ACK_HEX							\
	"45000030ebb0400040113af70a0900010a090003c12112b7001c00001100ffff" \
	"00000011001234561f000001d834a45f"

#define IP4_LEN		20
#define IP6_LEN		40
#define UDP_LEN		8
#define ROCE_OFF4	(IP4_LEN + UDP_LEN)	/* BTH offset, IPv4 */
#define ROCE_OFF6	(IP6_LEN + UDP_LEN)	/* BTH offset, IPv6 */

/* A captured or built packet: IP header first, @len bytes in all. */
struct tl_pkt {
	u8	buf[512];
	size_t	len;
};

/* Parse hex digits (whitespace ignored) into @out; returns bytes. */
size_t tl_hex(const char *hex, u8 *out, size_t max);

void tl_load(struct tl_pkt *p, const char *hex);

/* Fill a 20-byte IPv4 header with a correct header checksum. */
void tl_ipv4(u8 *p, u8 tos, u16 tot_len, u16 id, u16 frag_off, u8 ttl,
	     u32 saddr, u32 daddr);
void tl_ipv6(u8 *p, u8 tclass, u32 flow, u16 plen, u8 hop,
	     const u8 *saddr, const u8 *daddr);
void tl_udp(u8 *p, u16 sport, u16 dport, u16 len, u16 csum);

/*
 * Exact-size heap copy (uninitialised if @p is NULL), so ASan flags any
 * read past @len.
 */
u8 *tl_dup(const u8 *p, size_t len);

/*
 * Build an IPv6 RC SEND_ONLY with @paylen payload bytes (pad added) and
 * a correct ICRC; returns the total length.
 */
size_t tl_build_v6_send(u8 *buf, size_t paylen);

/* RoCE part of an IPv4 packet held in @p: BTH pointer and length. */
static inline const u8 *tl_roce4(const struct tl_pkt *p)
{
	return p->buf + ROCE_OFF4;
}

static inline u32 tl_roce4_len(const struct tl_pkt *p)
{
	return p->len - ROCE_OFF4;
}

#endif /* SOFTRDMA_UNIT_TESTLIB_H */
