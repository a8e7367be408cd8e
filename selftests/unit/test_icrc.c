// SPDX-License-Identifier: GPL-2.0
/* ICRC building blocks, the IPv6 masking rule, rdma_rxe's FLUSH ICRC. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce_icrc.h"
#include "roce_parse.h"
#include "suites.h"
#include "testlib.h"

/* The standard CRC-32 check value: our host crc32_le() is the real one. */
static void crc32_check_value(struct ktap *t)
{
	static const char msg[] = "123456789";

	KT_EXPECT_EQ(t, ~crc32_le(~0u, (const u8 *)msg, 9), 0xcbf43926);
}

static void seed_is_masked_lrh(struct ktap *t)
{
	static const u8 lrh[8] = { 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff };

	KT_EXPECT_EQ(t, crc32_le(~0u, lrh, sizeof(lrh)), ROCE_ICRC_SEED);
}

static void icrc_stored_little_endian(struct ktap *t)
{
	u8 b[4];

	roce_icrc_put(b, 0x0dd32e38);
	KT_EXPECT(t, b[0] == 0x38 && b[1] == 0x2e && b[2] == 0xd3 &&
		     b[3] == 0x0d);
	KT_EXPECT_EQ(t, roce_icrc_get(b), 0x0dd32e38);
}

/* begin + update over any split of the tail == the one-shot ICRC. */
static void incremental_matches_oneshot(struct ktap *t)
{
	struct tl_pkt p;
	const u8 *tail;
	u32 tail_len, want, split;

	tl_load(&p, VEC_SEND_ONLY_HEX);
	tail = tl_roce4(&p) + ROCE_BTH_LEN;
	tail_len = tl_roce4_len(&p) - ROCE_BTH_LEN - ROCE_ICRC_LEN;
	want = roce_icrc_get(tail + tail_len);

	for (split = 0; split <= tail_len; split++) {
		u32 crc = roce_icrc_begin_ipv4(p.buf, p.buf + IP4_LEN);

		crc = roce_icrc_update(crc, tail, split);
		crc = roce_icrc_update(crc, tail + split, tail_len - split);
		KT_EXPECT_EQ(t, roce_icrc_final(crc), want);
	}
}

static void ipv6_packet_verifies(struct ktap *t)
{
	u8 buf[256];
	size_t len = tl_build_v6_send(buf, 13);
	struct roce_pkt_info pkt;

	KT_EXPECT_EQ(t, roce_icrc_verify_ipv6(buf, buf + IP6_LEN,
					      len - ROCE_OFF6), 0);
	KT_ASSERT_EQ(t, roce_parse(buf + ROCE_OFF6, len - ROCE_OFF6, &pkt), 0);
	KT_EXPECT_EQ(t, pkt.payload_len, 13);
	KT_EXPECT_EQ(t, pkt.pad, 3);
}

/* Traffic class, flow label and hop limit may change in flight. */
static bool v6_masked(size_t off, int bit)
{
	if (off == 0)
		return bit < 4;		/* TC high nibble; version stays */
	return off == 1 || off == 2 || off == 3 ||	/* TC low, flow */
	       off == 7 ||				/* hop limit */
	       off == IP6_LEN + 6 || off == IP6_LEN + 7 ||	/* UDP csum */
	       off == ROCE_OFF6 + ROCE_BTH_ICRC_MASK_BYTE;
}

static void ipv6_masked_fields_ignored(struct ktap *t)
{
	u8 buf[256];
	size_t len = tl_build_v6_send(buf, 13), off;
	int bit;

	for (off = 0; off < len; off++) {
		for (bit = 0; bit < 8; bit++) {
			if (!v6_masked(off, bit))
				continue;
			buf[off] ^= 1 << bit;
			KT_EXPECT_EQ(t, roce_icrc_verify_ipv6(buf,
					buf + IP6_LEN, len - ROCE_OFF6), 0);
			buf[off] ^= 1 << bit;
		}
	}
}

static void ipv6_other_bits_covered(struct ktap *t)
{
	u8 buf[256];
	size_t len = tl_build_v6_send(buf, 13), off;
	int bit;

	for (off = 0; off < len; off++) {
		for (bit = 0; bit < 8; bit++) {
			if (v6_masked(off, bit))
				continue;
			buf[off] ^= 1 << bit;
			if (!KT_EXPECT_EQ(t, roce_icrc_verify_ipv6(buf,
					buf + IP6_LEN, len - ROCE_OFF6),
					-ROCE_DROP_BAD_ICRC))
				printf("# byte %zu bit %d\n", off, bit);
			buf[off] ^= 1 << bit;
		}
	}
}

static void verify_rejects_short(struct ktap *t)
{
	struct tl_pkt p;

	tl_load(&p, VEC_ACK_HEX);
	KT_EXPECT_EQ(t, roce_icrc_verify_ipv4(p.buf, p.buf + IP4_LEN,
					      ROCE_BTH_LEN + 3),
		     -ROCE_DROP_SHORT);
}

/*
 * rdma_rxe's FLUSH ICRC is the standard one of a packet whose bytes after
 * the BTH are followed by the BTH-to-ICRC bytes again, unmasked: build
 * that longer packet and take its ICRC as the reference.
 */
static u32 rxe_flush_icrc(const u8 *whole, u32 len)
{
	u32 body = len - ROCE_ICRC_LEN;
	u8 *dup = malloc(ROCE_OFF4 + 2 * body + ROCE_ICRC_LEN);
	u32 icrc;

	memcpy(dup, whole, ROCE_OFF4 + body);
	memcpy(dup + ROCE_OFF4 + body, whole + ROCE_OFF4, body);
	icrc = roce_icrc_ipv4(dup, dup + IP4_LEN, 2 * body + ROCE_ICRC_LEN);
	free(dup);
	return icrc;
}

/* rxe's FLUSH ICRC is told apart, for a FLUSH and nothing else. */
static void rxe_flush_icrc_accepted(struct ktap *t)
{
	struct tl_pkt p;
	u8 *roce = p.buf + ROCE_OFF4;
	u32 len;

	tl_load(&p, VEC_SEND_ONLY_HEX);
	len = tl_roce4_len(&p);
	roce[0] = ROCE_RC_FLUSH;
	roce_icrc_put(roce + len - ROCE_ICRC_LEN,
		      roce_icrc_ipv4(p.buf, p.buf + IP4_LEN, len));
	KT_EXPECT_EQ(t, roce_icrc_verify_ipv4(p.buf, p.buf + IP4_LEN, len), 0);

	roce_icrc_put(roce + len - ROCE_ICRC_LEN, rxe_flush_icrc(p.buf, len));
	KT_EXPECT_EQ(t, roce_icrc_verify_ipv4(p.buf, p.buf + IP4_LEN, len),
		     ROCE_ICRC_RXE_FLUSH);

	/* The same ICRC on any other opcode is just wrong. */
	roce[0] = ROCE_RC_SEND_ONLY;
	roce_icrc_put(roce + len - ROCE_ICRC_LEN, rxe_flush_icrc(p.buf, len));
	KT_EXPECT_EQ(t, roce_icrc_verify_ipv4(p.buf, p.buf + IP4_LEN, len),
		     -ROCE_DROP_BAD_ICRC);
}

static const struct ktap_case cases[] = {
	KTAP_CASE(crc32_check_value),
	KTAP_CASE(seed_is_masked_lrh),
	KTAP_CASE(icrc_stored_little_endian),
	KTAP_CASE(incremental_matches_oneshot),
	KTAP_CASE(ipv6_packet_verifies),
	KTAP_CASE(ipv6_masked_fields_ignored),
	KTAP_CASE(ipv6_other_bits_covered),
	KTAP_CASE(verify_rejects_short),
	KTAP_CASE(rxe_flush_icrc_accepted),
};

KTAP_SUITE(icrc_suite, "icrc", cases);
