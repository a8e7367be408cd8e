// SPDX-License-Identifier: GPL-2.0
/*
 * The BTH opcode table.
 *
 * Each entry is written as a set of ROCE_F_ flags only; the header length
 * and the offset of every extension header are derived from the flags at
 * compile time, using the fixed order of extension headers on the wire.
 */
#include "roce_opcode.h"

#define LEN_IF(f, ext, len)	(((f) & ROCE_F_##ext) ? (len) : 0)

/* Offset each header would have: after every earlier header present. */
#define OFF_DETH(f)	ROCE_BTH_LEN
#define OFF_RETH(f)	(OFF_DETH(f) + LEN_IF(f, DETH, ROCE_DETH_LEN))
#define OFF_ATMETH(f)	(OFF_RETH(f) + LEN_IF(f, RETH, ROCE_RETH_LEN))
#define OFF_AETH(f)	(OFF_ATMETH(f) + LEN_IF(f, ATMETH, ROCE_ATMETH_LEN))
#define OFF_ATMACK(f)	(OFF_AETH(f) + LEN_IF(f, AETH, ROCE_AETH_LEN))
#define OFF_IMMDT(f)	(OFF_ATMACK(f) + LEN_IF(f, ATMACK, ROCE_ATMACK_LEN))
#define OFF_IETH(f)	(OFF_IMMDT(f) + LEN_IF(f, IMMDT, ROCE_IMMDT_LEN))
#define HDR_LEN(f)	(OFF_IETH(f) + LEN_IF(f, IETH, ROCE_IETH_LEN))

#define EXT_OFF(f, ext)	[ROCE_EXT_##ext] = LEN_IF(f, ext, OFF_##ext(f))

#define OPCODE(op, f) [op] = {						\
	.name = #op,							\
	.flags = (f),							\
	.hdr_len = HDR_LEN(f),						\
	.off = {							\
		EXT_OFF(f, DETH), EXT_OFF(f, RETH), EXT_OFF(f, ATMETH),	\
		EXT_OFF(f, AETH), EXT_OFF(f, ATMACK), EXT_OFF(f, IMMDT),\
		EXT_OFF(f, IETH),					\
	},								\
}

/* Flag sets shared by RC and UC requests. */
#define T_SEND		(ROCE_F_REQ | ROCE_F_SEND | ROCE_F_PAYLOAD)
#define T_SEND_FIRST	(T_SEND | ROCE_F_FIRST | ROCE_F_RWR)
#define T_SEND_MIDDLE	(T_SEND | ROCE_F_MIDDLE)
#define T_SEND_LAST	(T_SEND | ROCE_F_LAST | ROCE_F_COMP)
#define T_SEND_ONLY	(T_SEND | ROCE_F_ONLY | ROCE_F_RWR | ROCE_F_COMP)
#define T_WRITE		(ROCE_F_REQ | ROCE_F_WRITE | ROCE_F_PAYLOAD)
#define T_WRITE_FIRST	(T_WRITE | ROCE_F_FIRST | ROCE_F_RETH)
#define T_WRITE_MIDDLE	(T_WRITE | ROCE_F_MIDDLE)
#define T_WRITE_LAST	(T_WRITE | ROCE_F_LAST)
#define T_WRITE_ONLY	(T_WRITE | ROCE_F_ONLY | ROCE_F_RETH)
/* Write with immediate consumes and completes a receive WQE. */
#define T_WITH_IMM_WR	(ROCE_F_IMMDT | ROCE_F_RWR | ROCE_F_COMP)
#define T_READ_RESP	(ROCE_F_RESP | ROCE_F_READ | ROCE_F_PAYLOAD)
#define T_ATOMIC_REQ	(ROCE_F_REQ | ROCE_F_ATOMIC | ROCE_F_ONLY | ROCE_F_ATMETH)

#define REQ_OPCODES(tr)							\
	OPCODE(ROCE_##tr##_SEND_FIRST, T_SEND_FIRST),			\
	OPCODE(ROCE_##tr##_SEND_MIDDLE, T_SEND_MIDDLE),			\
	OPCODE(ROCE_##tr##_SEND_LAST, T_SEND_LAST),			\
	OPCODE(ROCE_##tr##_SEND_LAST_IMM, T_SEND_LAST | ROCE_F_IMMDT),	\
	OPCODE(ROCE_##tr##_SEND_ONLY, T_SEND_ONLY),			\
	OPCODE(ROCE_##tr##_SEND_ONLY_IMM, T_SEND_ONLY | ROCE_F_IMMDT),	\
	OPCODE(ROCE_##tr##_WRITE_FIRST, T_WRITE_FIRST),			\
	OPCODE(ROCE_##tr##_WRITE_MIDDLE, T_WRITE_MIDDLE),			\
	OPCODE(ROCE_##tr##_WRITE_LAST, T_WRITE_LAST),			\
	OPCODE(ROCE_##tr##_WRITE_LAST_IMM, T_WRITE_LAST | T_WITH_IMM_WR),	\
	OPCODE(ROCE_##tr##_WRITE_ONLY, T_WRITE_ONLY),			\
	OPCODE(ROCE_##tr##_WRITE_ONLY_IMM, T_WRITE_ONLY | T_WITH_IMM_WR)

const struct roce_opcode_info roce_opcode_table[256] = {
	REQ_OPCODES(RC),
	OPCODE(ROCE_RC_READ_REQUEST,
	       ROCE_F_REQ | ROCE_F_READ | ROCE_F_ONLY | ROCE_F_RETH),
	OPCODE(ROCE_RC_READ_RESP_FIRST,
	       T_READ_RESP | ROCE_F_FIRST | ROCE_F_AETH),
	OPCODE(ROCE_RC_READ_RESP_MIDDLE, T_READ_RESP | ROCE_F_MIDDLE),
	OPCODE(ROCE_RC_READ_RESP_LAST, T_READ_RESP | ROCE_F_LAST | ROCE_F_AETH),
	OPCODE(ROCE_RC_READ_RESP_ONLY, T_READ_RESP | ROCE_F_ONLY | ROCE_F_AETH),
	OPCODE(ROCE_RC_ACK,
	       ROCE_F_RESP | ROCE_F_ACK | ROCE_F_ONLY | ROCE_F_AETH),
	OPCODE(ROCE_RC_ATOMIC_ACK,
	       ROCE_F_RESP | ROCE_F_ATOMIC | ROCE_F_ONLY | ROCE_F_AETH |
	       ROCE_F_ATMACK),
	OPCODE(ROCE_RC_CMP_SWAP, T_ATOMIC_REQ),
	OPCODE(ROCE_RC_FETCH_ADD, T_ATOMIC_REQ),
	OPCODE(ROCE_RC_SEND_LAST_INV, T_SEND_LAST | ROCE_F_IETH),
	OPCODE(ROCE_RC_SEND_ONLY_INV, T_SEND_ONLY | ROCE_F_IETH),

	REQ_OPCODES(UC),

	OPCODE(ROCE_UD_SEND_ONLY, T_SEND_ONLY | ROCE_F_DETH),
	OPCODE(ROCE_UD_SEND_ONLY_IMM, T_SEND_ONLY | ROCE_F_DETH | ROCE_F_IMMDT),
};

const char *roce_opcode_name(u8 opcode)
{
	const char *name = roce_opcode_table[opcode].name;

	return name ? name : "UNKNOWN";
}
