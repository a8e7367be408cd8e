// SPDX-License-Identifier: GPL-2.0
/* Header encoders and accessors, checked against literal wire bytes. */
#include "roce_drop.h"
#include "roce_hdr.h"
#include "suites.h"
#include "testlib.h"

static bool bytes_eq(const void *a, const char *hex, size_t len)
{
	u8 want[64];

	return tl_hex(hex, want, sizeof(want)) == len && !memcmp(a, want, len);
}

static void bth_encode_all_fields(struct ktap *t)
{
	struct roce_bth bth;
	const struct roce_bth_fields f = {
		.opcode = 0xab, .se = true, .mig = true, .pad = 2, .tver = 0,
		.pkey = 0x8001, .fecn = true, .becn = true, .qpn = 0xfedcba,
		.ackreq = true, .psn = 0x654321,
	};

	roce_bth_encode(&bth, &f);
	KT_EXPECT(t, bytes_eq(&bth, "ab e0 8001 c0fedcba 80654321", 12));
}

static void bth_encode_masks_overflow(struct ktap *t)
{
	struct roce_bth bth;
	const struct roce_bth_fields f = {
		.pad = 7, .tver = 0x1f, .qpn = 0xff123456, .psn = 0xff000001,
	};

	roce_bth_encode(&bth, &f);
	KT_EXPECT(t, bytes_eq(&bth, "00 3f 0000 00123456 00000001", 12));
}

static void bth_decode_roundtrip(struct ktap *t)
{
	struct roce_bth bth;
	struct roce_bth_fields in = {
		.opcode = 0x64, .se = true, .pad = 3, .pkey = 0x7fff,
		.becn = true, .qpn = 0x000001, .psn = 0xffffff,
	}, out;

	roce_bth_encode(&bth, &in);
	roce_bth_decode(&bth, &out);
	KT_EXPECT_EQ(t, out.opcode, in.opcode);
	KT_EXPECT_EQ(t, out.se, in.se);
	KT_EXPECT_EQ(t, out.mig, in.mig);
	KT_EXPECT_EQ(t, out.pad, in.pad);
	KT_EXPECT_EQ(t, out.tver, in.tver);
	KT_EXPECT_EQ(t, out.pkey, in.pkey);
	KT_EXPECT_EQ(t, out.fecn, in.fecn);
	KT_EXPECT_EQ(t, out.becn, in.becn);
	KT_EXPECT_EQ(t, out.qpn, in.qpn);
	KT_EXPECT_EQ(t, out.ackreq, in.ackreq);
	KT_EXPECT_EQ(t, out.psn, in.psn);
}

/* The decoder ignores reserved bits (byte 4 low 6, byte 8 low 7). */
static void bth_reserved_bits_ignored(struct ktap *t)
{
	u8 raw[12];
	const struct roce_bth *bth = (const void *)raw;

	tl_hex("04 00 ffff 3f000011 7f123456", raw, sizeof(raw));
	KT_EXPECT_EQ(t, roce_bth_qpn(bth), 0x11);
	KT_EXPECT_EQ(t, roce_bth_psn(bth), 0x123456);
	KT_EXPECT(t, !roce_bth_ackreq(bth) && !roce_bth_fecn(bth) &&
		     !roce_bth_becn(bth));
}

static void bth_set_psn_keeps_ackreq(struct ktap *t)
{
	struct roce_bth bth;
	const struct roce_bth_fields f = { .ackreq = true, .psn = 5 };

	roce_bth_encode(&bth, &f);
	roce_bth_set_psn(&bth, 0x1000000 | 9);
	KT_EXPECT_EQ(t, roce_bth_psn(&bth), 9);
	KT_EXPECT(t, roce_bth_ackreq(&bth));
	roce_bth_set_ackreq(&bth, false);
	KT_EXPECT(t, !roce_bth_ackreq(&bth));
	KT_EXPECT_EQ(t, roce_bth_psn(&bth), 9);
}

static void ext_headers_wire_layout(struct ktap *t)
{
	static const char atm_wire[] =
		"a0a1a2a3a4a5a6a7 b0b1b2b3 c0c1c2c3c4c5c6c7 d0d1d2d3d4d5d6d7";
	struct roce_reth reth;
	struct roce_atmeth atm;
	struct roce_deth deth;
	struct roce_ieth ieth;
	struct roce_atmack ack;
	struct roce_feth feth;

	roce_reth_encode(&reth, 0x0102030405060708ull, 0x11223344, 0x1000);
	KT_EXPECT(t, bytes_eq(&reth, "0102030405060708 11223344 00001000",
			      16));
	roce_atmeth_encode(&atm, 0xa0a1a2a3a4a5a6a7ull, 0xb0b1b2b3,
			   0xc0c1c2c3c4c5c6c7ull, 0xd0d1d2d3d4d5d6d7ull);
	KT_EXPECT(t, bytes_eq(&atm, atm_wire, 28));
	KT_EXPECT_EQ(t, roce_atmeth_swap_add(&atm), 0xc0c1c2c3c4c5c6c7ull);
	KT_EXPECT_EQ(t, roce_atmeth_compare(&atm), 0xd0d1d2d3d4d5d6d7ull);
	roce_deth_encode(&deth, 0x80010000, 0xff000002);
	KT_EXPECT(t, bytes_eq(&deth, "80010000 00000002", 8));
	roce_ieth_encode(&ieth, 0xcafef00d);
	KT_EXPECT(t, bytes_eq(&ieth, "cafef00d", 4));
	roce_atmack_encode(&ack, 42);
	KT_EXPECT(t, bytes_eq(&ack, "000000000000002a", 8));
	/* FETH: selectivity level in bits 5:4, placement type in 3:0. */
	roce_feth_encode(&feth, ROCE_FLUSH_PERSISTENT, ROCE_FLUSH_MR);
	KT_EXPECT(t, bytes_eq(&feth, "00000012", 4));
	KT_EXPECT_EQ(t, roce_feth_type(&feth), ROCE_FLUSH_PERSISTENT);
	KT_EXPECT_EQ(t, roce_feth_level(&feth), ROCE_FLUSH_MR);
	roce_feth_encode(&feth, ROCE_FLUSH_GLOBAL, ROCE_FLUSH_RANGE);
	KT_EXPECT(t, bytes_eq(&feth, "00000001", 4));
}

static void aeth_syndromes(struct ktap *t)
{
	struct roce_aeth aeth;

	roce_aeth_encode(&aeth, roce_aeth_syn_nak(ROCE_NAK_PSN_SEQ_ERR),
			 0x1abcdef);
	KT_EXPECT(t, bytes_eq(&aeth, "60abcdef", 4));
	KT_EXPECT_EQ(t, roce_aeth_msn(&aeth), 0xabcdef);
	KT_EXPECT_EQ(t, roce_aeth_syn_nak(ROCE_NAK_REMOTE_ACCESS), 0x62);
	KT_EXPECT_EQ(t, roce_aeth_syn_nak(ROCE_NAK_INVALID_RD_REQ), 0x64);
	KT_EXPECT_EQ(t, roce_aeth_syn_rnr(0x0e), 0x2e);
	KT_EXPECT_EQ(t, roce_aeth_syn_type(0x2e), ROCE_AETH_RNR_NAK);
	KT_EXPECT_EQ(t, roce_aeth_syn_ack(3), 0x03);
}

/* IBA credit code table: 0-4 literal, then 6, 8, 12, 16 ... 32768. */
static void aeth_credit_codes(struct ktap *t)
{
	static const u32 want[31] = {
		0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768,
	};
	u8 c;

	for (c = 0; c < 31; c++) {
		KT_EXPECT_EQ(t, roce_aeth_credits(c), want[c]);
		KT_EXPECT_EQ(t, roce_aeth_credit_code(want[c]), c);
	}
	KT_EXPECT_EQ(t, roce_aeth_credits(ROCE_AETH_CREDIT_INVALID), ~0u);
	KT_EXPECT_EQ(t, roce_aeth_credit_code(5), 4);
	KT_EXPECT_EQ(t, roce_aeth_credit_code(100000), 30);
}

static void drop_reason_names(struct ktap *t)
{
	KT_EXPECT(t, !strcmp(roce_drop_reason_name(-ROCE_DROP_BAD_ICRC),
			     "bad_icrc"));
	KT_EXPECT(t, !strcmp(roce_drop_reason_name(ROCE_DROP_SHORT),
			     "short"));
	KT_EXPECT(t, !strcmp(roce_drop_reason_name(-99), "unknown"));
}

static const struct ktap_case cases[] = {
	KTAP_CASE(bth_encode_all_fields),
	KTAP_CASE(bth_encode_masks_overflow),
	KTAP_CASE(bth_decode_roundtrip),
	KTAP_CASE(bth_reserved_bits_ignored),
	KTAP_CASE(bth_set_psn_keeps_ackreq),
	KTAP_CASE(ext_headers_wire_layout),
	KTAP_CASE(aeth_syndromes),
	KTAP_CASE(aeth_credit_codes),
	KTAP_CASE(drop_reason_names),
};

KTAP_SUITE(hdr_suite, "hdr", cases);
