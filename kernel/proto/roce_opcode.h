/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 BTH opcodes and what each implies: which extension headers follow
 * the BTH, how long the headers are, and the packet's role in a message.
 */
#ifndef SOFTRDMA_ROCE_OPCODE_H
#define SOFTRDMA_ROCE_OPCODE_H

#include "proto_port.h"
#include "roce_hdr.h"

/* Opcode bits 7-5: the transport service. */
#define ROCE_TRANSPORT_MASK	0xe0

enum roce_transport {
	ROCE_TRANSPORT_RC	= 0x00,
	ROCE_TRANSPORT_UC	= 0x20,
	ROCE_TRANSPORT_RD	= 0x40,	/* not supported */
	ROCE_TRANSPORT_UD	= 0x60,
};

/* Opcode bits 4-0: the operation. */
enum roce_op {
	ROCE_OP_SEND_FIRST		= 0x00,
	ROCE_OP_SEND_MIDDLE		= 0x01,
	ROCE_OP_SEND_LAST		= 0x02,
	ROCE_OP_SEND_LAST_IMM		= 0x03,
	ROCE_OP_SEND_ONLY		= 0x04,
	ROCE_OP_SEND_ONLY_IMM		= 0x05,
	ROCE_OP_WRITE_FIRST		= 0x06,
	ROCE_OP_WRITE_MIDDLE		= 0x07,
	ROCE_OP_WRITE_LAST		= 0x08,
	ROCE_OP_WRITE_LAST_IMM		= 0x09,
	ROCE_OP_WRITE_ONLY		= 0x0a,
	ROCE_OP_WRITE_ONLY_IMM		= 0x0b,
	ROCE_OP_READ_REQUEST		= 0x0c,
	ROCE_OP_READ_RESP_FIRST		= 0x0d,
	ROCE_OP_READ_RESP_MIDDLE	= 0x0e,
	ROCE_OP_READ_RESP_LAST		= 0x0f,
	ROCE_OP_READ_RESP_ONLY		= 0x10,
	ROCE_OP_ACK			= 0x11,
	ROCE_OP_ATOMIC_ACK		= 0x12,
	ROCE_OP_CMP_SWAP		= 0x13,
	ROCE_OP_FETCH_ADD		= 0x14,
	ROCE_OP_SEND_LAST_INV		= 0x16,
	ROCE_OP_SEND_ONLY_INV		= 0x17,
};

#define ROCE_OPCODE(transport, op)	((u8)((transport) | (op)))

/* Full opcodes, the value of BTH byte 0. */
enum roce_opcode {
	ROCE_RC_SEND_FIRST	= ROCE_TRANSPORT_RC | ROCE_OP_SEND_FIRST,
	ROCE_RC_SEND_MIDDLE	= ROCE_TRANSPORT_RC | ROCE_OP_SEND_MIDDLE,
	ROCE_RC_SEND_LAST	= ROCE_TRANSPORT_RC | ROCE_OP_SEND_LAST,
	ROCE_RC_SEND_LAST_IMM	= ROCE_TRANSPORT_RC | ROCE_OP_SEND_LAST_IMM,
	ROCE_RC_SEND_ONLY	= ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY,
	ROCE_RC_SEND_ONLY_IMM	= ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY_IMM,
	ROCE_RC_WRITE_FIRST	= ROCE_TRANSPORT_RC | ROCE_OP_WRITE_FIRST,
	ROCE_RC_WRITE_MIDDLE	= ROCE_TRANSPORT_RC | ROCE_OP_WRITE_MIDDLE,
	ROCE_RC_WRITE_LAST	= ROCE_TRANSPORT_RC | ROCE_OP_WRITE_LAST,
	ROCE_RC_WRITE_LAST_IMM	= ROCE_TRANSPORT_RC | ROCE_OP_WRITE_LAST_IMM,
	ROCE_RC_WRITE_ONLY	= ROCE_TRANSPORT_RC | ROCE_OP_WRITE_ONLY,
	ROCE_RC_WRITE_ONLY_IMM	= ROCE_TRANSPORT_RC | ROCE_OP_WRITE_ONLY_IMM,
	ROCE_RC_READ_REQUEST	= ROCE_TRANSPORT_RC | ROCE_OP_READ_REQUEST,
	ROCE_RC_READ_RESP_FIRST	= ROCE_TRANSPORT_RC | ROCE_OP_READ_RESP_FIRST,
	ROCE_RC_READ_RESP_MIDDLE = ROCE_TRANSPORT_RC | ROCE_OP_READ_RESP_MIDDLE,
	ROCE_RC_READ_RESP_LAST	= ROCE_TRANSPORT_RC | ROCE_OP_READ_RESP_LAST,
	ROCE_RC_READ_RESP_ONLY	= ROCE_TRANSPORT_RC | ROCE_OP_READ_RESP_ONLY,
	ROCE_RC_ACK		= ROCE_TRANSPORT_RC | ROCE_OP_ACK,
	ROCE_RC_ATOMIC_ACK	= ROCE_TRANSPORT_RC | ROCE_OP_ATOMIC_ACK,
	ROCE_RC_CMP_SWAP	= ROCE_TRANSPORT_RC | ROCE_OP_CMP_SWAP,
	ROCE_RC_FETCH_ADD	= ROCE_TRANSPORT_RC | ROCE_OP_FETCH_ADD,
	ROCE_RC_SEND_LAST_INV	= ROCE_TRANSPORT_RC | ROCE_OP_SEND_LAST_INV,
	ROCE_RC_SEND_ONLY_INV	= ROCE_TRANSPORT_RC | ROCE_OP_SEND_ONLY_INV,

	ROCE_UC_SEND_FIRST	= ROCE_TRANSPORT_UC | ROCE_OP_SEND_FIRST,
	ROCE_UC_SEND_MIDDLE	= ROCE_TRANSPORT_UC | ROCE_OP_SEND_MIDDLE,
	ROCE_UC_SEND_LAST	= ROCE_TRANSPORT_UC | ROCE_OP_SEND_LAST,
	ROCE_UC_SEND_LAST_IMM	= ROCE_TRANSPORT_UC | ROCE_OP_SEND_LAST_IMM,
	ROCE_UC_SEND_ONLY	= ROCE_TRANSPORT_UC | ROCE_OP_SEND_ONLY,
	ROCE_UC_SEND_ONLY_IMM	= ROCE_TRANSPORT_UC | ROCE_OP_SEND_ONLY_IMM,
	ROCE_UC_WRITE_FIRST	= ROCE_TRANSPORT_UC | ROCE_OP_WRITE_FIRST,
	ROCE_UC_WRITE_MIDDLE	= ROCE_TRANSPORT_UC | ROCE_OP_WRITE_MIDDLE,
	ROCE_UC_WRITE_LAST	= ROCE_TRANSPORT_UC | ROCE_OP_WRITE_LAST,
	ROCE_UC_WRITE_LAST_IMM	= ROCE_TRANSPORT_UC | ROCE_OP_WRITE_LAST_IMM,
	ROCE_UC_WRITE_ONLY	= ROCE_TRANSPORT_UC | ROCE_OP_WRITE_ONLY,
	ROCE_UC_WRITE_ONLY_IMM	= ROCE_TRANSPORT_UC | ROCE_OP_WRITE_ONLY_IMM,

	ROCE_UD_SEND_ONLY	= ROCE_TRANSPORT_UD | ROCE_OP_SEND_ONLY,
	ROCE_UD_SEND_ONLY_IMM	= ROCE_TRANSPORT_UD | ROCE_OP_SEND_ONLY_IMM,
};

/*
 * Extension headers, numbered in the order they appear after the BTH.
 * Index into roce_opcode_info.off[]; BIT(ext) is the ROCE_F_ flag.
 */
enum roce_ext {
	ROCE_EXT_DETH,
	ROCE_EXT_RETH,
	ROCE_EXT_ATMETH,
	ROCE_EXT_AETH,
	ROCE_EXT_ATMACK,
	ROCE_EXT_IMMDT,
	ROCE_EXT_IETH,
	ROCE_EXT_NUM
};

/* Extension headers present. */
#define ROCE_F_DETH	BIT(ROCE_EXT_DETH)
#define ROCE_F_RETH	BIT(ROCE_EXT_RETH)
#define ROCE_F_ATMETH	BIT(ROCE_EXT_ATMETH)
#define ROCE_F_AETH	BIT(ROCE_EXT_AETH)
#define ROCE_F_ATMACK	BIT(ROCE_EXT_ATMACK)
#define ROCE_F_IMMDT	BIT(ROCE_EXT_IMMDT)
#define ROCE_F_IETH	BIT(ROCE_EXT_IETH)
#define ROCE_F_EXT_MASK	(BIT(ROCE_EXT_NUM) - 1)

/* Direction: requester->responder, or responder->requester. */
#define ROCE_F_REQ	BIT(8)
#define ROCE_F_RESP	BIT(9)
/* Place in the message; an "only" packet is both FIRST and LAST. */
#define ROCE_F_FIRST	BIT(10)
#define ROCE_F_MIDDLE	BIT(11)
#define ROCE_F_LAST	BIT(12)
#define ROCE_F_ONLY	(ROCE_F_FIRST | ROCE_F_LAST)
/* Operation family. */
#define ROCE_F_SEND	BIT(13)
#define ROCE_F_WRITE	BIT(14)
#define ROCE_F_READ	BIT(15)	/* read request and read responses */
#define ROCE_F_ATOMIC	BIT(16)	/* atomic requests and atomic ACK */
#define ROCE_F_ACK	BIT(17)	/* the plain ACKNOWLEDGE opcode */
/* Packet may carry payload (otherwise only headers and ICRC). */
#define ROCE_F_PAYLOAD	BIT(18)
/* Responder consumes a receive WQE at this packet. */
#define ROCE_F_RWR	BIT(19)
/* Responder completes the receive WQE at this packet. */
#define ROCE_F_COMP	BIT(20)

/* Largest header stack we accept (BTH + AtomicETH). */
#define ROCE_MAX_HDR_LEN	(ROCE_BTH_LEN + ROCE_ATMETH_LEN)

/**
 * struct roce_opcode_info - static facts about one BTH opcode
 * @name: printable name, for traces
 * @flags: ROCE_F_* bits; zero for an opcode we do not accept
 * @hdr_len: BTH plus extension headers, i.e. the payload offset
 * @off: offset from the BTH of each extension header, 0 if absent
 */
struct roce_opcode_info {
	const char	*name;
	u32		flags;
	u8		hdr_len;
	u8		off[ROCE_EXT_NUM];
};

extern const struct roce_opcode_info roce_opcode_table[256];

static inline const struct roce_opcode_info *
roce_opcode_lookup(u8 opcode)
{
	return &roce_opcode_table[opcode];
}

static inline bool roce_opcode_known(u8 opcode)
{
	return roce_opcode_table[opcode].flags != 0;
}

static inline u8 roce_opcode_transport(u8 opcode)
{
	return opcode & ROCE_TRANSPORT_MASK;
}

/* May a QP of transport @t send or receive @opcode? */
static inline bool roce_opcode_valid_for(u8 opcode, enum roce_transport t)
{
	return roce_opcode_known(opcode) && roce_opcode_transport(opcode) == t;
}

const char *roce_opcode_name(u8 opcode);

#endif /* SOFTRDMA_ROCE_OPCODE_H */
