// SPDX-License-Identifier: GPL-2.0
/*
 * The two packets captured from rdma_rxe: we must read every field as rxe
 * wrote it, reproduce its ICRC, and build the identical bytes ourselves.
 */
#include "roce_icrc.h"
#include "roce_parse.h"
#include "suites.h"
#include "testlib.h"

/* ---- vector 1: RC SEND_ONLY, 16 bytes of payload -------------------- */

static void send_only_parses(struct ktap *t)
{
	struct tl_pkt p;
	struct roce_pkt_info pkt;
	unsigned int i;

	tl_load(&p, VEC_SEND_ONLY_HEX);
	KT_ASSERT_EQ(t, p.len, 60);
	KT_ASSERT_EQ(t, roce_parse(tl_roce4(&p), tl_roce4_len(&p), &pkt), 0);
	KT_EXPECT_EQ(t, pkt.opcode, ROCE_RC_SEND_ONLY);
	KT_EXPECT_EQ(t, pkt.hdr_len, ROCE_BTH_LEN);
	KT_EXPECT_EQ(t, pkt.len, 32);
	KT_EXPECT_EQ(t, pkt.pad, 0);
	KT_EXPECT_EQ(t, pkt.payload_len, 16);
	KT_EXPECT(t, pkt.payload == tl_roce4(&p) + ROCE_BTH_LEN);
	for (i = 0; i < 16; i++)
		KT_EXPECT_EQ(t, pkt.payload[i], i);
	KT_EXPECT(t, (pkt.info->flags & ROCE_F_ONLY) == ROCE_F_ONLY);
	KT_EXPECT(t, pkt.info->flags & ROCE_F_SEND);
	KT_EXPECT(t, !roce_pkt_aeth(&pkt) && !roce_pkt_reth(&pkt));
}

static void send_only_bth_fields(struct ktap *t)
{
	struct tl_pkt p;
	struct roce_bth_fields f;

	tl_load(&p, VEC_SEND_ONLY_HEX);
	roce_bth_decode((const struct roce_bth *)tl_roce4(&p), &f);
	KT_EXPECT_EQ(t, f.opcode, 0x04);
	KT_EXPECT_EQ(t, f.se, 0);
	KT_EXPECT_EQ(t, f.mig, 0);
	KT_EXPECT_EQ(t, f.pad, 0);
	KT_EXPECT_EQ(t, f.tver, 0);
	KT_EXPECT_EQ(t, f.pkey, 0xffff);
	KT_EXPECT_EQ(t, f.fecn, 0);
	KT_EXPECT_EQ(t, f.becn, 0);
	KT_EXPECT_EQ(t, f.qpn, 0x11);
	KT_EXPECT_EQ(t, f.ackreq, 1);
	KT_EXPECT_EQ(t, f.psn, 0x123456);
}

static void send_only_icrc_matches(struct ktap *t)
{
	struct tl_pkt p;

	tl_load(&p, VEC_SEND_ONLY_HEX);
	KT_EXPECT_EQ(t, roce_icrc_ipv4(p.buf, p.buf + IP4_LEN,
				       tl_roce4_len(&p)), 0x0dd32e38);
	KT_EXPECT_EQ(t, roce_icrc_verify_ipv4(p.buf, p.buf + IP4_LEN,
					      tl_roce4_len(&p)), 0);
}

static void send_only_build_matches(struct ktap *t)
{
	struct tl_pkt want;
	u8 got[60];
	u8 *udp = got + IP4_LEN, *bth = got + ROCE_OFF4;
	const struct roce_bth_fields f = {
		.opcode = ROCE_RC_SEND_ONLY,
		.pkey = ROCE_PKEY_DEFAULT,
		.qpn = 0x11,
		.ackreq = true,
		.psn = 0x123456,
	};
	unsigned int i;

	tl_load(&want, VEC_SEND_ONLY_HEX);
	memset(got, 0xee, sizeof(got));
	tl_ipv4(got, 0, 60, 0x1234, 0x4000, 64, 0x0a090003, 0x0a090001);
	tl_udp(udp, 0xc000, ROCE_UDP_PORT, 40, 0);
	roce_bth_encode((struct roce_bth *)bth, &f);
	for (i = 0; i < 16; i++)
		bth[ROCE_BTH_LEN + i] = i;
	roce_icrc_put(bth + 28, roce_icrc_ipv4(got, udp, 32));

	KT_ASSERT_EQ(t, want.len, sizeof(got));
	for (i = 0; i < sizeof(got); i++)
		KT_EXPECT_EQ(t, got[i], want.buf[i]);
}

/* ---- vector 2: rxe's ACK of vector 1 -------------------------------- */

static void ack_parses(struct ktap *t)
{
	struct tl_pkt p;
	struct roce_pkt_info pkt;
	const struct roce_aeth *aeth;

	tl_load(&p, VEC_ACK_HEX);
	KT_ASSERT_EQ(t, p.len, 48);
	KT_ASSERT_EQ(t, roce_parse(tl_roce4(&p), tl_roce4_len(&p), &pkt), 0);
	KT_EXPECT_EQ(t, pkt.opcode, ROCE_RC_ACK);
	KT_EXPECT_EQ(t, pkt.hdr_len, ROCE_BTH_LEN + ROCE_AETH_LEN);
	KT_EXPECT_EQ(t, pkt.payload_len, 0);
	KT_EXPECT(t, pkt.info->flags & ROCE_F_RESP);
	aeth = roce_pkt_aeth(&pkt);
	KT_ASSERT(t, aeth == (const void *)(tl_roce4(&p) + ROCE_BTH_LEN));
	KT_EXPECT_EQ(t, roce_aeth_syndrome(aeth), 0x1f);
	KT_EXPECT_EQ(t, roce_aeth_syn_type(roce_aeth_syndrome(aeth)),
		     ROCE_AETH_ACK);
	KT_EXPECT_EQ(t, roce_aeth_syn_value(roce_aeth_syndrome(aeth)),
		     ROCE_AETH_CREDIT_INVALID);
	KT_EXPECT_EQ(t, roce_aeth_msn(aeth), 1);
}

static void ack_bth_fields(struct ktap *t)
{
	struct tl_pkt p;
	struct roce_bth_fields f;

	tl_load(&p, VEC_ACK_HEX);
	roce_bth_decode((const struct roce_bth *)tl_roce4(&p), &f);
	KT_EXPECT_EQ(t, f.opcode, 0x11);
	KT_EXPECT_EQ(t, f.se, 0);
	KT_EXPECT_EQ(t, f.mig, 0);
	KT_EXPECT_EQ(t, f.pad, 0);
	KT_EXPECT_EQ(t, f.tver, 0);
	KT_EXPECT_EQ(t, f.pkey, 0xffff);
	KT_EXPECT_EQ(t, f.qpn, 0x11);
	KT_EXPECT_EQ(t, f.ackreq, 0);
	KT_EXPECT_EQ(t, f.psn, 0x123456);
}

static void ack_icrc_matches(struct ktap *t)
{
	struct tl_pkt p;

	tl_load(&p, VEC_ACK_HEX);
	KT_EXPECT_EQ(t, roce_icrc_ipv4(p.buf, p.buf + IP4_LEN,
				       tl_roce4_len(&p)), 0x5fa434d8);
	KT_EXPECT_EQ(t, roce_icrc_verify_ipv4(p.buf, p.buf + IP4_LEN,
					      tl_roce4_len(&p)), 0);
}

static void ack_build_matches(struct ktap *t)
{
	struct tl_pkt want;
	u8 got[48];
	u8 *udp = got + IP4_LEN, *bth = got + ROCE_OFF4;
	const struct roce_bth_fields f = {
		.opcode = ROCE_RC_ACK,
		.pkey = ROCE_PKEY_DEFAULT,
		.qpn = 0x11,
		.psn = 0x123456,
	};
	unsigned int i;

	tl_load(&want, VEC_ACK_HEX);
	memset(got, 0xee, sizeof(got));
	tl_ipv4(got, 0, 48, 0xebb0, 0x4000, 64, 0x0a090001, 0x0a090003);
	tl_udp(udp, 0xc121, ROCE_UDP_PORT, 28, 0);
	roce_bth_encode((struct roce_bth *)bth, &f);
	roce_aeth_encode((struct roce_aeth *)(bth + ROCE_BTH_LEN),
			 roce_aeth_syn_ack(ROCE_AETH_CREDIT_INVALID), 1);
	roce_icrc_put(bth + 16, roce_icrc_ipv4(got, udp, 20));

	KT_ASSERT_EQ(t, want.len, sizeof(got));
	for (i = 0; i < sizeof(got); i++)
		KT_EXPECT_EQ(t, got[i], want.buf[i]);
}

static const struct ktap_case cases[] = {
	KTAP_CASE(send_only_parses),
	KTAP_CASE(send_only_bth_fields),
	KTAP_CASE(send_only_icrc_matches),
	KTAP_CASE(send_only_build_matches),
	KTAP_CASE(ack_parses),
	KTAP_CASE(ack_bth_fields),
	KTAP_CASE(ack_icrc_matches),
	KTAP_CASE(ack_build_matches),
};

KTAP_SUITE(vectors_suite, "vectors", cases);
