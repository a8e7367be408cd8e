/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Crafting RoCEv2 packets (IPv4 header onwards) for the selftests, with the
 * header and ICRC code of kernel/proto. Kept apart from the libibverbs
 * code: kernel/proto's host types and <linux/types.h> disagree on __be64.
 */
#ifndef SRDMA_ROCE_PKT_H
#define SRDMA_ROCE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPKT_IP		0	/* offsets in rpkt.b */
#define RPKT_UDP	20
#define RPKT_BTH	28
#define RPKT_MAX	2048
#define RPKT_ROCE_PORT	4791

/* Opcodes and syndromes the tests name (values from the IBA). */
#define RPKT_SEND_FIRST		0x00
#define RPKT_SEND_MIDDLE	0x01
#define RPKT_SEND_LAST		0x02
#define RPKT_SEND_ONLY		0x04
#define RPKT_SEND_ONLY_IMM	0x05
#define RPKT_WRITE_FIRST	0x06
#define RPKT_WRITE_MIDDLE	0x07
#define RPKT_WRITE_LAST		0x08
#define RPKT_WRITE_ONLY		0x0a
#define RPKT_READ_REQ		0x0c
#define RPKT_READ_RESP_FIRST	0x0d
#define RPKT_READ_RESP_LAST	0x0f
#define RPKT_READ_RESP_ONLY	0x10
#define RPKT_ACK		0x11
#define RPKT_ATOMIC_ACK		0x12
#define RPKT_CMP_SWAP		0x13
#define RPKT_UC_SEND_ONLY	0x24
#define RPKT_UD_SEND_ONLY	0x64
#define RPKT_XRC_SEND_ONLY	0xa4
#define RPKT_CNP		0x81

#define RPKT_SYN_ACK		0x1f	/* ACK, no credit information */
#define RPKT_SYN_RNR		0x20	/* RNR NAK: 0x20 | timer */
#define RPKT_SYN_NAK_SEQ	0x60
#define RPKT_SYN_NAK_INV	0x61
#define RPKT_SYN_NAK_ACC	0x62


struct rpkt {
	uint8_t b[RPKT_MAX];
	uint32_t len;		/* IPv4 header through ICRC */
};

/* What to put in a packet; fields an opcode has no header for are unused. */
struct rpkt_desc {
	uint8_t opcode;
	uint8_t tver;
	int pad;		/* -1: what the payload needs */
	bool ackreq;
	bool se;
	uint32_t qpn;
	uint32_t psn;
	uint64_t va;		/* RETH, AtomicETH */
	uint32_t rkey;
	uint32_t dma_len;
	uint8_t syndrome;	/* AETH */
	uint32_t msn;
	uint32_t imm;		/* ImmDt, in host order */
	const uint8_t *data;	/* payload */
	uint32_t len;
	uint32_t saddr;		/* network order */
	uint32_t daddr;
	uint16_t ip_id;
	uint16_t sport;
};

/* A packet the device sent, as read from a raw IPPROTO_UDP socket. */
struct rpkt_rx {
	uint8_t tos;		/* IP: DSCP and ECN */
	uint8_t opcode;
	bool becn;
	uint32_t qpn;
	uint32_t psn;
	bool has_aeth;
	uint8_t syndrome;
	uint32_t msn;
	bool has_reth;
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
	const uint8_t *payload;
	uint32_t payload_len;
	bool icrc_ok;
	int parse;		/* 0 or a negated drop reason */
};

void rpkt_build(struct rpkt *p, const struct rpkt_desc *d);
/* After changing p->len: IP total length and UDP length follow. */
void rpkt_set_len(struct rpkt *p, uint32_t len);
/* ICRC over the bytes as they are now (the last 4 bytes get it). */
void rpkt_seal(struct rpkt *p);
bool rpkt_icrc_ok(const struct rpkt *p);
/* roce_parse() of the UDP payload: 0 or a negated drop reason. */
int rpkt_parse(const struct rpkt *p);
/* "short", "bad_icrc", ...: a drop reason's name, drop_<name> counts it. */
const char *rpkt_drop_name(int ret);
uint32_t rpkt_hdr_len(uint8_t opcode);
/* Offset from the BTH of the RETH / AETH of @opcode, 0 if it has none. */
uint32_t rpkt_reth_off(uint8_t opcode);
uint32_t rpkt_aeth_off(uint8_t opcode);
bool rpkt_opcode_known(uint8_t opcode);
bool rpkt_opcode_is_request(uint8_t opcode);
/* Decode an IPv4 + UDP + RoCEv2 datagram; false if it is not RoCEv2. */
bool rpkt_decode(const uint8_t *b, size_t n, struct rpkt_rx *rx);

#endif /* SRDMA_ROCE_PKT_H */
