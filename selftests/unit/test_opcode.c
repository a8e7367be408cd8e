// SPDX-License-Identifier: GPL-2.0
/* The opcode table against facts written out independently of it. */
#include "roce_opcode.h"
#include "suites.h"

/* Header lengths from the IB spec's header layouts, by hand. */
static const struct {
	u8 opcode;
	u8 hdr_len;
} expect_len[] = {
	{ ROCE_RC_SEND_FIRST, 12 },	{ ROCE_RC_SEND_MIDDLE, 12 },
	{ ROCE_RC_SEND_LAST, 12 },	{ ROCE_RC_SEND_LAST_IMM, 16 },
	{ ROCE_RC_SEND_ONLY, 12 },	{ ROCE_RC_SEND_ONLY_IMM, 16 },
	{ ROCE_RC_WRITE_FIRST, 28 },	{ ROCE_RC_WRITE_MIDDLE, 12 },
	{ ROCE_RC_WRITE_LAST, 12 },	{ ROCE_RC_WRITE_LAST_IMM, 16 },
	{ ROCE_RC_WRITE_ONLY, 28 },	{ ROCE_RC_WRITE_ONLY_IMM, 32 },
	{ ROCE_RC_READ_REQUEST, 28 },	{ ROCE_RC_READ_RESP_FIRST, 16 },
	{ ROCE_RC_READ_RESP_MIDDLE, 12 }, { ROCE_RC_READ_RESP_LAST, 16 },
	{ ROCE_RC_READ_RESP_ONLY, 16 },	{ ROCE_RC_ACK, 16 },
	{ ROCE_RC_ATOMIC_ACK, 24 },	{ ROCE_RC_CMP_SWAP, 40 },
	{ ROCE_RC_FETCH_ADD, 40 },	{ ROCE_RC_SEND_LAST_INV, 16 },
	{ ROCE_RC_SEND_ONLY_INV, 16 },
	/* IBA 1.5: FETH then RETH; RETH and an 8-byte payload */
	{ ROCE_RC_FLUSH, 32 },		{ ROCE_RC_ATOMIC_WRITE, 28 },
	{ ROCE_UC_SEND_FIRST, 12 },	{ ROCE_UC_SEND_MIDDLE, 12 },
	{ ROCE_UC_SEND_LAST, 12 },	{ ROCE_UC_SEND_LAST_IMM, 16 },
	{ ROCE_UC_SEND_ONLY, 12 },	{ ROCE_UC_SEND_ONLY_IMM, 16 },
	{ ROCE_UC_WRITE_FIRST, 28 },	{ ROCE_UC_WRITE_MIDDLE, 12 },
	{ ROCE_UC_WRITE_LAST, 12 },	{ ROCE_UC_WRITE_LAST_IMM, 16 },
	{ ROCE_UC_WRITE_ONLY, 28 },	{ ROCE_UC_WRITE_ONLY_IMM, 32 },
	{ ROCE_UD_SEND_ONLY, 20 },	{ ROCE_UD_SEND_ONLY_IMM, 24 },
	/* XRC: RC's requests with a 4-byte XRCETH, RC's responses */
	{ ROCE_XRC_SEND_FIRST, 16 },	{ ROCE_XRC_SEND_MIDDLE, 16 },
	{ ROCE_XRC_SEND_LAST, 16 },	{ ROCE_XRC_SEND_LAST_IMM, 20 },
	{ ROCE_XRC_SEND_ONLY, 16 },	{ ROCE_XRC_SEND_ONLY_IMM, 20 },
	{ ROCE_XRC_WRITE_FIRST, 32 },	{ ROCE_XRC_WRITE_MIDDLE, 16 },
	{ ROCE_XRC_WRITE_LAST, 16 },	{ ROCE_XRC_WRITE_LAST_IMM, 20 },
	{ ROCE_XRC_WRITE_ONLY, 32 },	{ ROCE_XRC_WRITE_ONLY_IMM, 36 },
	{ ROCE_XRC_READ_REQUEST, 32 },	{ ROCE_XRC_READ_RESP_FIRST, 16 },
	{ ROCE_XRC_READ_RESP_MIDDLE, 12 }, { ROCE_XRC_READ_RESP_LAST, 16 },
	{ ROCE_XRC_READ_RESP_ONLY, 16 }, { ROCE_XRC_ACK, 16 },
	{ ROCE_XRC_ATOMIC_ACK, 24 },	{ ROCE_XRC_CMP_SWAP, 44 },
	{ ROCE_XRC_FETCH_ADD, 44 },	{ ROCE_XRC_SEND_LAST_INV, 20 },
	{ ROCE_XRC_SEND_ONLY_INV, 20 },
	/* RoCEv2 annex A17.9.3: BTH and 16 reserved bytes */
	{ ROCE_CNP, 28 },
};

static u32 flags_of(u8 opcode)
{
	return roce_opcode_lookup(opcode)->flags;
}

static void header_lengths(struct ktap *t)
{
	size_t i;

	for (i = 0; i < KTAP_ARRAY_SIZE(expect_len); i++) {
		u8 op = expect_len[i].opcode;

		KT_EXPECT_EQ(t, roce_opcode_lookup(op)->hdr_len,
			     expect_len[i].hdr_len);
	}
}

static void only_listed_opcodes_known(struct ktap *t)
{
	unsigned int op, known = 0;

	for (op = 0; op < 256; op++)
		known += roce_opcode_known(op);
	KT_EXPECT_EQ(t, known, KTAP_ARRAY_SIZE(expect_len));
}

static void transport_validity(struct ktap *t)
{
	KT_EXPECT(t, roce_opcode_valid_for(ROCE_RC_READ_REQUEST,
					   ROCE_TRANSPORT_RC));
	KT_EXPECT(t, !roce_opcode_valid_for(ROCE_RC_READ_REQUEST,
					    ROCE_TRANSPORT_UC));
	KT_EXPECT(t, roce_opcode_valid_for(ROCE_UC_WRITE_ONLY,
					   ROCE_TRANSPORT_UC));
	KT_EXPECT(t, !roce_opcode_valid_for(ROCE_UC_WRITE_ONLY,
					    ROCE_TRANSPORT_RC));
	KT_EXPECT(t, roce_opcode_valid_for(ROCE_UD_SEND_ONLY,
					   ROCE_TRANSPORT_UD));
	KT_EXPECT(t, !roce_opcode_valid_for(ROCE_TRANSPORT_UD |
					    ROCE_OP_SEND_FIRST,
					    ROCE_TRANSPORT_UD));
	KT_EXPECT(t, !roce_opcode_known(ROCE_TRANSPORT_UC | ROCE_OP_ACK));
	KT_EXPECT(t, !roce_opcode_known(ROCE_TRANSPORT_UC |
					ROCE_OP_SEND_ONLY_INV));
	KT_EXPECT(t, !roce_opcode_known(ROCE_TRANSPORT_RD |
					ROCE_OP_SEND_ONLY));
	KT_EXPECT(t, roce_opcode_valid_for(ROCE_XRC_SEND_ONLY,
					   ROCE_TRANSPORT_XRC));
	/* No QP's transport: receive takes a CNP aside. */
	KT_EXPECT(t, !roce_opcode_valid_for(ROCE_CNP, ROCE_TRANSPORT_RC));
	KT_EXPECT(t, !roce_opcode_valid_for(ROCE_XRC_SEND_ONLY,
					    ROCE_TRANSPORT_RC));
	/* Every XRC request, and no response, names the target's SRQ. */
	KT_EXPECT(t, flags_of(ROCE_XRC_READ_REQUEST) & ROCE_F_XRCETH);
	KT_EXPECT(t, flags_of(ROCE_XRC_SEND_MIDDLE) & ROCE_F_XRCETH);
	KT_EXPECT(t, !(flags_of(ROCE_XRC_ACK) & ROCE_F_XRCETH));
	KT_EXPECT(t, !(flags_of(ROCE_XRC_READ_RESP_ONLY) & ROCE_F_XRCETH));
}

/* Every entry: offsets ascend in wire order and tile the header. */
static void ext_offsets_tile_headers(struct ktap *t)
{
	static const u8 ext_len[ROCE_EXT_NUM] = {
		[ROCE_EXT_DETH] = ROCE_DETH_LEN,
		[ROCE_EXT_XRCETH] = ROCE_XRCETH_LEN,
		[ROCE_EXT_FETH] = ROCE_FETH_LEN,
		[ROCE_EXT_RETH] = ROCE_RETH_LEN,
		[ROCE_EXT_ATMETH] = ROCE_ATMETH_LEN,
		[ROCE_EXT_AETH] = ROCE_AETH_LEN,
		[ROCE_EXT_ATMACK] = ROCE_ATMACK_LEN,
		[ROCE_EXT_IMMDT] = ROCE_IMMDT_LEN,
		[ROCE_EXT_IETH] = ROCE_IETH_LEN,
	};
	unsigned int op, e;

	for (op = 0; op < 256; op++) {
		const struct roce_opcode_info *info = roce_opcode_lookup(op);
		unsigned int end = ROCE_BTH_LEN;

		if (!roce_opcode_known(op))
			continue;
		for (e = 0; e < ROCE_EXT_NUM; e++) {
			bool has = info->flags & BIT(e);

			KT_EXPECT_EQ(t, !!info->off[e], has);
			if (!has)
				continue;
			KT_EXPECT_EQ(t, info->off[e], end);
			end += ext_len[e];
		}
		if (info->flags & ROCE_F_CNP)
			end += ROCE_CNP_RSVD_LEN;
		KT_EXPECT_EQ(t, info->hdr_len, end);
		KT_EXPECT(t, info->hdr_len <= ROCE_MAX_HDR_LEN);
	}
}

/*
 * Exactly one direction; place is first/last/only or middle alone. The
 * CNP alone has neither: it belongs to no message.
 */
static void role_flags_consistent(struct ktap *t)
{
	unsigned int op;

	KT_EXPECT_EQ(t, flags_of(ROCE_CNP), ROCE_F_CNP);
	for (op = 0; op < 256; op++) {
		u32 f = roce_opcode_lookup(op)->flags;

		if (!f || op == ROCE_CNP)
			continue;
		KT_EXPECT_EQ(t, !!(f & ROCE_F_REQ) + !!(f & ROCE_F_RESP), 1);
		if (f & ROCE_F_MIDDLE)
			KT_EXPECT(t, !(f & (ROCE_F_FIRST | ROCE_F_LAST)));
		else
			KT_EXPECT(t, f & (ROCE_F_FIRST | ROCE_F_LAST));
		if (f & ROCE_F_COMP)
			KT_EXPECT(t, f & ROCE_F_LAST);
	}
}

static void payload_flag(struct ktap *t)
{
	KT_EXPECT(t, flags_of(ROCE_RC_SEND_MIDDLE) & ROCE_F_PAYLOAD);
	KT_EXPECT(t, flags_of(ROCE_RC_READ_RESP_ONLY) & ROCE_F_PAYLOAD);
	KT_EXPECT(t, !(flags_of(ROCE_RC_READ_REQUEST) & ROCE_F_PAYLOAD));
	KT_EXPECT(t, !(flags_of(ROCE_RC_ACK) & ROCE_F_PAYLOAD));
	KT_EXPECT(t, !(flags_of(ROCE_RC_ATOMIC_ACK) & ROCE_F_PAYLOAD));
	KT_EXPECT(t, !(flags_of(ROCE_RC_CMP_SWAP) & ROCE_F_PAYLOAD));
	KT_EXPECT(t, !(flags_of(ROCE_RC_FLUSH) & ROCE_F_PAYLOAD));
	KT_EXPECT(t, flags_of(ROCE_RC_ATOMIC_WRITE) & ROCE_F_PAYLOAD);
	/* The FETH sits before the RETH, right after the BTH. */
	KT_EXPECT_EQ(t, roce_opcode_lookup(ROCE_RC_FLUSH)->off[ROCE_EXT_FETH],
		     12);
	KT_EXPECT_EQ(t, roce_opcode_lookup(ROCE_RC_FLUSH)->off[ROCE_EXT_RETH],
		     16);
}

/* Which packets consume / complete a receive WQE at the responder. */
static void receive_wqe_flags(struct ktap *t)
{
	const u32 both = ROCE_F_RWR | ROCE_F_COMP;

	KT_EXPECT(t, flags_of(ROCE_RC_SEND_FIRST) & ROCE_F_RWR);
	KT_EXPECT(t, !(flags_of(ROCE_RC_SEND_LAST) & ROCE_F_RWR));
	KT_EXPECT(t, flags_of(ROCE_RC_SEND_LAST) & ROCE_F_COMP);
	KT_EXPECT(t, !(flags_of(ROCE_RC_WRITE_ONLY) & both));
	KT_EXPECT(t, (flags_of(ROCE_UC_WRITE_LAST_IMM) & both) == both);
	KT_EXPECT(t, (flags_of(ROCE_UD_SEND_ONLY) & both) == both);
}

static void opcode_names(struct ktap *t)
{
	KT_EXPECT(t, !strcmp(roce_opcode_name(ROCE_RC_ACK), "ROCE_RC_ACK"));
	KT_EXPECT(t, !strcmp(roce_opcode_name(0x81), "ROCE_CNP"));
	KT_EXPECT(t, !strcmp(roce_opcode_name(0x82), "UNKNOWN"));
}

static const struct ktap_case cases[] = {
	KTAP_CASE(header_lengths),
	KTAP_CASE(only_listed_opcodes_known),
	KTAP_CASE(transport_validity),
	KTAP_CASE(ext_offsets_tile_headers),
	KTAP_CASE(role_flags_consistent),
	KTAP_CASE(payload_flag),
	KTAP_CASE(receive_wqe_flags),
	KTAP_CASE(opcode_names),
};

KTAP_SUITE(opcode_suite, "opcode", cases);
