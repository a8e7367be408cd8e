// SPDX-License-Identifier: GPL-2.0
/* roce_parse(): one drop reason, or one layout fact, per case. */
#include <stdlib.h>

#include "roce_parse.h"
#include "suites.h"
#include "testlib.h"

/*
 * Heap buffer (exact size) holding a packet from the BTH: @opcode, pad
 * @pad, headers zeroed, @paylen payload bytes, @pad pad bytes, ICRC slot.
 */
static u8 *mk(u8 opcode, u8 pad, u32 paylen, u32 *len)
{
	const struct roce_bth_fields f = {
		.opcode = opcode,
		.pad = pad,
		.pkey = ROCE_PKEY_DEFAULT,
		.qpn = 0x42,
		.psn = 7,
	};
	u32 hdr = roce_opcode_lookup(opcode)->hdr_len;
	u8 *buf;

	if (!hdr)
		hdr = ROCE_BTH_LEN;
	*len = hdr + paylen + pad + ROCE_ICRC_LEN;
	buf = tl_dup(NULL, *len);
	memset(buf, 0, *len);
	roce_bth_encode((struct roce_bth *)buf, &f);
	return buf;
}

static int parse_mk(u8 opcode, u8 pad, u32 paylen, struct roce_pkt_info *pkt)
{
	u32 len;
	u8 *buf = mk(opcode, pad, paylen, &len);
	int ret = roce_parse(buf, len, pkt);

	free(buf);
	return ret;
}

static void shorter_than_bth_is_short(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u8 *buf = tl_dup((const u8 *)"\x04\x00\xff\xff\x00\x00\x00\x01\x00\x00",
			 10);
	u32 n;

	for (n = 0; n <= 10; n++)
		KT_EXPECT_EQ(t, roce_parse(buf, n, &pkt), -ROCE_DROP_SHORT);
	free(buf);
}

static void nonzero_tver_is_bad_version(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u32 len;
	u8 *buf = mk(ROCE_RC_SEND_ONLY, 0, 8, &len);

	buf[1] |= 0x01;
	KT_EXPECT_EQ(t, roce_parse(buf, len, &pkt), -ROCE_DROP_BAD_VERSION);
	free(buf);
}

static void unknown_opcode_is_bad_opcode(struct ktap *t)
{
	static const u8 bad[] = {
		0x15,		/* RC reserved */
		0x18, 0x1f,	/* RC reserved / vendor */
		0x2c, 0x36,	/* UC has no read, no invalidate */
		0x40, 0x44,	/* RD */
		0x60, 0x63,	/* UD has only SEND_ONLY(_IMM) */
		0x66, 0x71,
		0x80, 0x82,	/* CNP transport: 0x81 only */
		0xc0, 0xff,
	};
	struct roce_pkt_info pkt;
	size_t i;

	for (i = 0; i < sizeof(bad); i++)
		KT_EXPECT_EQ(t, parse_mk(bad[i], 0, 8, &pkt),
			     -ROCE_DROP_BAD_OPCODE);
}

static void missing_ext_header_is_short(struct ktap *t)
{
	struct roce_pkt_info pkt;
	/* WRITE_FIRST needs a RETH: BTH + 16 + ICRC = 32 bytes. */
	u32 len;
	u8 *buf = mk(ROCE_RC_WRITE_FIRST, 0, 0, &len);

	KT_ASSERT_EQ(t, len, 32);
	KT_EXPECT_EQ(t, roce_parse(buf, 28, &pkt), -ROCE_DROP_SHORT);
	KT_EXPECT_EQ(t, roce_parse(buf, 32, &pkt), 0);
	free(buf);
}

static void unaligned_length_is_bad_length(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u32 len, extra;
	u8 *buf = mk(ROCE_RC_SEND_ONLY, 0, 12, &len);

	for (extra = 1; extra < 4; extra++)
		KT_EXPECT_EQ(t, roce_parse(buf, len - 4 + extra, &pkt),
			     -ROCE_DROP_BAD_LENGTH);
	free(buf);
}

static void pad_beyond_payload_is_bad_pad(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u32 len;
	/* 16 + 0 payload: no room for any pad. */
	u8 *buf = mk(ROCE_RC_SEND_ONLY, 0, 0, &len);

	buf[1] |= 3 << ROCE_BTH_PAD_SHIFT;
	KT_EXPECT_EQ(t, roce_parse(buf, len, &pkt), -ROCE_DROP_BAD_PAD);
	free(buf);
}

static void pad_on_ack_is_bad_pad(struct ktap *t)
{
	struct roce_pkt_info pkt;

	KT_EXPECT_EQ(t, parse_mk(ROCE_RC_ACK, 1, 3, &pkt), -ROCE_DROP_BAD_PAD);
}

static void payload_on_ack_is_bad_length(struct ktap *t)
{
	struct roce_pkt_info pkt;

	KT_EXPECT_EQ(t, parse_mk(ROCE_RC_ACK, 0, 4, &pkt),
		     -ROCE_DROP_BAD_LENGTH);
	KT_EXPECT_EQ(t, parse_mk(ROCE_RC_READ_REQUEST, 0, 4, &pkt),
		     -ROCE_DROP_BAD_LENGTH);
	KT_EXPECT_EQ(t, parse_mk(ROCE_RC_FETCH_ADD, 0, 8, &pkt),
		     -ROCE_DROP_BAD_LENGTH);
}

/* A CNP: BTH, 16 reserved bytes, ICRC; nothing more, nothing less. */
static void cnp_is_32_bytes(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u32 len;
	u8 *buf = mk(ROCE_CNP, 0, 0, &len);

	KT_ASSERT_EQ(t, len, 32);
	KT_EXPECT_EQ(t, roce_parse(buf, 32, &pkt), 0);
	KT_EXPECT_EQ(t, pkt.hdr_len, 28);
	KT_EXPECT_EQ(t, pkt.payload_len, 0);
	KT_EXPECT_EQ(t, roce_parse(buf, 28, &pkt), -ROCE_DROP_SHORT);
	buf[1] |= 1 << ROCE_BTH_PAD_SHIFT;
	KT_EXPECT_EQ(t, roce_parse(buf, 32, &pkt), -ROCE_DROP_BAD_PAD);
	free(buf);
	KT_EXPECT_EQ(t, parse_mk(ROCE_CNP, 0, 4, &pkt), -ROCE_DROP_BAD_LENGTH);
}

static void pad_excluded_from_payload(struct ktap *t)
{
	struct roce_pkt_info pkt;

	KT_ASSERT_EQ(t, parse_mk(ROCE_RC_SEND_ONLY, 3, 13, &pkt), 0);
	KT_EXPECT_EQ(t, pkt.payload_len, 13);
	KT_EXPECT_EQ(t, pkt.pad, 3);
	KT_EXPECT_EQ(t, pkt.len, 12 + 16 + 4);
}

static void empty_send_parses(struct ktap *t)
{
	struct roce_pkt_info pkt;

	KT_ASSERT_EQ(t, parse_mk(ROCE_RC_SEND_ONLY, 0, 0, &pkt), 0);
	KT_EXPECT_EQ(t, pkt.payload_len, 0);
}

static void write_only_imm_layout(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u32 len;
	u8 *buf = mk(ROCE_RC_WRITE_ONLY_IMM, 0, 8, &len);

	roce_reth_encode((struct roce_reth *)(buf + 12), 0x1122334455667788ull,
			 0xaabbccdd, 8);
	roce_immdt_set((struct roce_immdt *)(buf + 28), cpu_to_be32(0xfeed));
	KT_ASSERT_EQ(t, roce_parse(buf, len, &pkt), 0);
	KT_EXPECT_EQ(t, pkt.hdr_len, 32);
	KT_EXPECT(t, (const u8 *)roce_pkt_reth(&pkt) == buf + 12);
	KT_EXPECT(t, (const u8 *)roce_pkt_immdt(&pkt) == buf + 28);
	KT_EXPECT(t, pkt.payload == buf + 32);
	KT_EXPECT_EQ(t, roce_reth_va(roce_pkt_reth(&pkt)),
		     0x1122334455667788ull);
	KT_EXPECT_EQ(t, roce_reth_rkey(roce_pkt_reth(&pkt)), 0xaabbccdd);
	KT_EXPECT_EQ(t, roce_reth_len(roce_pkt_reth(&pkt)), 8);
	KT_EXPECT_EQ(t, be32_to_cpu(roce_immdt_get(roce_pkt_immdt(&pkt))),
		     0xfeed);
	KT_EXPECT(t, !roce_pkt_aeth(&pkt) && !roce_pkt_deth(&pkt));
	free(buf);
}

static void ud_send_imm_layout(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u32 len;
	u8 *buf = mk(ROCE_UD_SEND_ONLY_IMM, 0, 4, &len);

	roce_deth_encode((struct roce_deth *)(buf + 12), 0x80010000, 1);
	KT_ASSERT_EQ(t, roce_parse(buf, len, &pkt), 0);
	KT_EXPECT(t, (const u8 *)roce_pkt_deth(&pkt) == buf + 12);
	KT_EXPECT(t, (const u8 *)roce_pkt_immdt(&pkt) == buf + 20);
	KT_EXPECT(t, pkt.payload == buf + 24);
	KT_EXPECT_EQ(t, roce_deth_qkey(roce_pkt_deth(&pkt)), 0x80010000);
	KT_EXPECT_EQ(t, roce_deth_sqp(roce_pkt_deth(&pkt)), 1);
	free(buf);
}

static void atomic_ack_layout(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u32 len;
	u8 *buf = mk(ROCE_RC_ATOMIC_ACK, 0, 0, &len);

	roce_atmack_encode((struct roce_atmack *)(buf + 16),
			   0x0102030405060708ull);
	KT_ASSERT_EQ(t, roce_parse(buf, len, &pkt), 0);
	KT_EXPECT_EQ(t, pkt.hdr_len, 24);
	KT_EXPECT(t, (const u8 *)roce_pkt_aeth(&pkt) == buf + 12);
	KT_EXPECT(t, (const u8 *)roce_pkt_atmack(&pkt) == buf + 16);
	KT_EXPECT_EQ(t, roce_atmack_orig(roce_pkt_atmack(&pkt)),
		     0x0102030405060708);
	free(buf);
}

/* Headers linear, payload "elsewhere": parse reads only @avail bytes. */
static void nonlinear_tail_parses(struct ktap *t)
{
	struct roce_pkt_info pkt;
	u32 len;
	u8 *buf = mk(ROCE_RC_WRITE_FIRST, 0, 1024, &len);
	u8 *head = tl_dup(buf, 28);

	KT_EXPECT_EQ(t, roce_parse_hdr(head, 28, len, &pkt), 0);
	KT_EXPECT_EQ(t, pkt.payload_len, 1024);
	KT_EXPECT_EQ(t, roce_parse_hdr(head, 27, len, &pkt), -ROCE_DROP_SHORT);
	free(head);
	free(buf);
}

static const struct ktap_case cases[] = {
	KTAP_CASE(shorter_than_bth_is_short),
	KTAP_CASE(nonzero_tver_is_bad_version),
	KTAP_CASE(unknown_opcode_is_bad_opcode),
	KTAP_CASE(missing_ext_header_is_short),
	KTAP_CASE(unaligned_length_is_bad_length),
	KTAP_CASE(pad_beyond_payload_is_bad_pad),
	KTAP_CASE(pad_on_ack_is_bad_pad),
	KTAP_CASE(payload_on_ack_is_bad_length),
	KTAP_CASE(cnp_is_32_bytes),
	KTAP_CASE(pad_excluded_from_payload),
	KTAP_CASE(empty_send_parses),
	KTAP_CASE(write_only_imm_layout),
	KTAP_CASE(ud_send_imm_layout),
	KTAP_CASE(atomic_ack_layout),
	KTAP_CASE(nonlinear_tail_parses),
};

KTAP_SUITE(parse_suite, "parse", cases);
