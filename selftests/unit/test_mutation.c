// SPDX-License-Identifier: GPL-2.0
/*
 * Damage the rdma_rxe vectors and check the damage is caught, and that
 * nothing reads outside the (exact-size, ASan-guarded) buffer.
 */
#include <stdio.h>
#include <stdlib.h>

#include "roce_icrc.h"
#include "roce_parse.h"
#include "suites.h"
#include "testlib.h"

static const char *const vectors[] = { VEC_SEND_ONLY_HEX, VEC_ACK_HEX };

/* Offsets, from the IPv4 header, of bytes the ICRC treats as all ones. */
static bool icrc_masked(size_t off)
{
	return off == 1 ||				/* TOS */
	       off == 8 ||				/* TTL */
	       off == 10 || off == 11 ||		/* header checksum */
	       off == IP4_LEN + 6 || off == IP4_LEN + 7 ||	/* UDP csum */
	       off == ROCE_OFF4 + ROCE_BTH_ICRC_MASK_BYTE;
}

static int verify(const u8 *pkt, size_t len)
{
	return roce_icrc_verify_ipv4(pkt, pkt + IP4_LEN, len - ROCE_OFF4);
}

static void bitflip_breaks_icrc(struct ktap *t)
{
	size_t v, off;
	int bit;

	for (v = 0; v < KTAP_ARRAY_SIZE(vectors); v++) {
		struct tl_pkt p;

		tl_load(&p, vectors[v]);
		for (off = 0; off < p.len; off++) {
			if (icrc_masked(off))
				continue;
			for (bit = 0; bit < 8; bit++) {
				p.buf[off] ^= 1 << bit;
				if (!KT_EXPECT_EQ(t, verify(p.buf, p.len),
						  -ROCE_DROP_BAD_ICRC))
					printf("# vector %zu byte %zu bit %d\n",
					       v, off, bit);
				p.buf[off] ^= 1 << bit;
			}
		}
	}
}

static void bitflip_in_masked_field_keeps_icrc(struct ktap *t)
{
	size_t v, off;
	int bit;

	for (v = 0; v < KTAP_ARRAY_SIZE(vectors); v++) {
		struct tl_pkt p;

		tl_load(&p, vectors[v]);
		for (off = 0; off < p.len; off++) {
			if (!icrc_masked(off))
				continue;
			for (bit = 0; bit < 8; bit++) {
				p.buf[off] ^= 1 << bit;
				KT_EXPECT_EQ(t, verify(p.buf, p.len), 0);
				p.buf[off] ^= 1 << bit;
			}
		}
	}
}

/* A new IP ID (as on retransmission) needs a new ICRC. */
static void ip_id_is_covered(struct ktap *t)
{
	struct tl_pkt p;

	tl_load(&p, VEC_SEND_ONLY_HEX);
	p.buf[5] ^= 0x01;
	KT_EXPECT_EQ(t, verify(p.buf, p.len), -ROCE_DROP_BAD_ICRC);
}

/*
 * Cut the packet (BTH onward) at every length.  A prefix may still be
 * well formed (the tail of the payload posing as ICRC) but then its ICRC
 * must fail: no prefix may pass both checks.
 */
static void truncation_never_accepted(struct ktap *t)
{
	size_t v, n;

	for (v = 0; v < KTAP_ARRAY_SIZE(vectors); v++) {
		struct tl_pkt p;

		tl_load(&p, vectors[v]);
		for (n = 0; n < tl_roce4_len(&p); n++) {
			u8 *whole = tl_dup(p.buf, ROCE_OFF4 + n);
			u8 *roce = tl_dup(tl_roce4(&p), n);
			struct roce_pkt_info pkt;
			int pr = roce_parse(roce, n, &pkt);
			int vr = roce_icrc_verify_ipv4(whole, whole + IP4_LEN,
						       n);

			if (!KT_EXPECT(t, pr < 0 || vr < 0))
				printf("# vector %zu accepted at %zu\n", v, n);
			free(whole);
			free(roce);
		}
	}
}

/* Below the opcode's headers + ICRC the reason is "short", nothing else. */
static void truncation_below_headers_is_short(struct ktap *t)
{
	size_t v, n;

	for (v = 0; v < KTAP_ARRAY_SIZE(vectors); v++) {
		struct tl_pkt p;
		struct roce_pkt_info pkt;
		size_t min;

		tl_load(&p, vectors[v]);
		min = roce_opcode_lookup(tl_roce4(&p)[0])->hdr_len +
		      ROCE_ICRC_LEN;
		for (n = 0; n < min; n++) {
			u8 *roce = tl_dup(tl_roce4(&p), n);

			KT_EXPECT_EQ(t, roce_parse(roce, n, &pkt),
				     -ROCE_DROP_SHORT);
			free(roce);
		}
	}
}

static const struct ktap_case cases[] = {
	KTAP_CASE(bitflip_breaks_icrc),
	KTAP_CASE(bitflip_in_masked_field_keeps_icrc),
	KTAP_CASE(ip_id_is_covered),
	KTAP_CASE(truncation_never_accepted),
	KTAP_CASE(truncation_below_headers_is_short),
};

KTAP_SUITE(mutation_suite, "mutation", cases);
