/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 / InfiniBand transport headers as they sit on the wire.
 *
 * Every struct is __packed (alignment 1) so it may be laid over any byte
 * of a received buffer; multi-byte fields are big-endian.  Accessors
 * convert to host order and mask the reserved bits away.
 *
 * Order of the headers inside a RoCEv2 UDP payload:
 *   BTH [DETH] [XRCETH] [FETH] [RETH] [AtomicETH] [AETH] [AtomicAckETH]
 *   [ImmDt] [IETH]
 *   payload, pad (0-3 bytes), ICRC (4 bytes, little-endian).
 */
#ifndef SOFTRDMA_ROCE_HDR_H
#define SOFTRDMA_ROCE_HDR_H

#include "proto_port.h"

#define ROCE_UDP_PORT		4791

#define ROCE_BTH_LEN		12
#define ROCE_DETH_LEN		8
#define ROCE_XRCETH_LEN		4
#define ROCE_FETH_LEN		4
#define ROCE_RETH_LEN		16
#define ROCE_ATMETH_LEN		28
#define ROCE_AETH_LEN		4
#define ROCE_ATMACK_LEN		8
#define ROCE_IMMDT_LEN		4
#define ROCE_IETH_LEN		4
#define ROCE_ICRC_LEN		4
#define ROCE_CNP_RSVD_LEN	16	/* after a CNP's BTH, sent as zeros */

#define ROCE_PKEY_DEFAULT	0xffff
#define ROCE_QPN_MASK		0x00ffffffu
#define ROCE_QPN_MCAST		0x00ffffffu	/* a multicast datagram */

/* ---- Base Transport Header ------------------------------------------ */

struct roce_bth {
	u8	opcode;
	u8	flags;		/* SE | M | PadCnt:2 | TVer:4 */
	__be16	pkey;
	__be32	qpn;		/* FECN | BECN | resv:6 | DestQP:24 */
	__be32	apsn;		/* AckReq | resv:7 | PSN:24 */
} __packed;

#define ROCE_BTH_SE		0x80
#define ROCE_BTH_MIG		0x40
#define ROCE_BTH_PAD_SHIFT	4
#define ROCE_BTH_PAD_MASK	0x30
#define ROCE_BTH_TVER_MASK	0x0f
#define ROCE_BTH_FECN		0x80000000u
#define ROCE_BTH_BECN		0x40000000u
#define ROCE_BTH_ACKREQ		0x80000000u
#define ROCE_BTH_PSN_MASK	0x00ffffffu

/* Byte of the BTH the ICRC treats as all ones (FECN/BECN/reserved). */
#define ROCE_BTH_ICRC_MASK_BYTE	4

static inline u8 roce_bth_opcode(const struct roce_bth *bth)
{
	return bth->opcode;
}

static inline bool roce_bth_se(const struct roce_bth *bth)
{
	return bth->flags & ROCE_BTH_SE;
}

static inline bool roce_bth_mig(const struct roce_bth *bth)
{
	return bth->flags & ROCE_BTH_MIG;
}

static inline u8 roce_bth_pad(const struct roce_bth *bth)
{
	return (bth->flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
}

static inline u8 roce_bth_tver(const struct roce_bth *bth)
{
	return bth->flags & ROCE_BTH_TVER_MASK;
}

static inline u16 roce_bth_pkey(const struct roce_bth *bth)
{
	return be16_to_cpu(bth->pkey);
}

static inline u32 roce_bth_qpn(const struct roce_bth *bth)
{
	return be32_to_cpu(bth->qpn) & ROCE_QPN_MASK;
}

static inline bool roce_bth_fecn(const struct roce_bth *bth)
{
	return be32_to_cpu(bth->qpn) & ROCE_BTH_FECN;
}

static inline bool roce_bth_becn(const struct roce_bth *bth)
{
	return be32_to_cpu(bth->qpn) & ROCE_BTH_BECN;
}

static inline bool roce_bth_ackreq(const struct roce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & ROCE_BTH_ACKREQ;
}

static inline u32 roce_bth_psn(const struct roce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & ROCE_BTH_PSN_MASK;
}

/**
 * struct roce_bth_fields - BTH contents in host order
 * @opcode: transport (bits 7-5) and operation (bits 4-0)
 * @se: solicited event
 * @mig: migration state
 * @pad: pad count, 0-3 bytes between payload and ICRC
 * @tver: transport header version, 0 for every packet we send or accept
 * @pkey: partition key
 * @fecn: forward congestion notification (RoCEv2 marks it in byte 4)
 * @becn: backward congestion notification
 * @qpn: destination QP, 24 bits
 * @ackreq: ask the responder for an acknowledge
 * @psn: packet sequence number, 24 bits
 */
struct roce_bth_fields {
	u8	opcode;
	bool	se;
	bool	mig;
	u8	pad;
	u8	tver;
	u16	pkey;
	bool	fecn;
	bool	becn;
	u32	qpn;
	bool	ackreq;
	u32	psn;
};

/* Reserved bits are written as zero; out-of-range values are truncated. */
static inline void roce_bth_encode(struct roce_bth *bth,
				   const struct roce_bth_fields *f)
{
	u32 qpn = f->qpn & ROCE_QPN_MASK;
	u32 apsn = f->psn & ROCE_BTH_PSN_MASK;

	if (f->fecn)
		qpn |= ROCE_BTH_FECN;
	if (f->becn)
		qpn |= ROCE_BTH_BECN;
	if (f->ackreq)
		apsn |= ROCE_BTH_ACKREQ;

	bth->opcode = f->opcode;
	bth->flags = (f->se ? ROCE_BTH_SE : 0) | (f->mig ? ROCE_BTH_MIG : 0) |
		     ((f->pad << ROCE_BTH_PAD_SHIFT) & ROCE_BTH_PAD_MASK) |
		     (f->tver & ROCE_BTH_TVER_MASK);
	bth->pkey = cpu_to_be16(f->pkey);
	bth->qpn = cpu_to_be32(qpn);
	bth->apsn = cpu_to_be32(apsn);
}

static inline void roce_bth_decode(const struct roce_bth *bth,
				   struct roce_bth_fields *f)
{
	f->opcode = roce_bth_opcode(bth);
	f->se = roce_bth_se(bth);
	f->mig = roce_bth_mig(bth);
	f->pad = roce_bth_pad(bth);
	f->tver = roce_bth_tver(bth);
	f->pkey = roce_bth_pkey(bth);
	f->fecn = roce_bth_fecn(bth);
	f->becn = roce_bth_becn(bth);
	f->qpn = roce_bth_qpn(bth);
	f->ackreq = roce_bth_ackreq(bth);
	f->psn = roce_bth_psn(bth);
}

/* Retransmission rewrites these two in place; keep the other bits. */
static inline void roce_bth_set_psn(struct roce_bth *bth, u32 psn)
{
	u32 apsn = be32_to_cpu(bth->apsn) & ~ROCE_BTH_PSN_MASK;

	bth->apsn = cpu_to_be32(apsn | (psn & ROCE_BTH_PSN_MASK));
}

static inline void roce_bth_set_ackreq(struct roce_bth *bth, bool ackreq)
{
	u32 apsn = be32_to_cpu(bth->apsn) & ~ROCE_BTH_ACKREQ;

	bth->apsn = cpu_to_be32(apsn | (ackreq ? ROCE_BTH_ACKREQ : 0));
}

/* ---- Datagram Extended Transport Header (UD) ------------------------ */

struct roce_deth {
	__be32	qkey;
	__be32	sqp;		/* resv:8 | SrcQP:24 */
} __packed;

static inline u32 roce_deth_qkey(const struct roce_deth *deth)
{
	return be32_to_cpu(deth->qkey);
}

static inline u32 roce_deth_sqp(const struct roce_deth *deth)
{
	return be32_to_cpu(deth->sqp) & ROCE_QPN_MASK;
}

static inline void roce_deth_encode(struct roce_deth *deth, u32 qkey, u32 sqp)
{
	deth->qkey = cpu_to_be32(qkey);
	deth->sqp = cpu_to_be32(sqp & ROCE_QPN_MASK);
}

/* ---- XRC Extended Transport Header (XRC requests) -------------------- */

struct roce_xrceth {
	__be32	srqn;		/* resv:8 | XRCSRQ:24, the target's SRQ */
} __packed;

static inline u32 roce_xrceth_srqn(const struct roce_xrceth *x)
{
	return be32_to_cpu(x->srqn) & ROCE_QPN_MASK;
}

static inline void roce_xrceth_encode(struct roce_xrceth *x, u32 srqn)
{
	x->srqn = cpu_to_be32(srqn & ROCE_QPN_MASK);
}

/* ---- FLUSH Extended Transport Header (IBA 1.5, oA19) --------------- */

/* Placement type: where the flushed data must have reached. */
#define ROCE_FLUSH_GLOBAL	1	/* visible to every consumer */
#define ROCE_FLUSH_PERSISTENT	2	/* persistent memory */
/* Selectivity level: the RETH's range, or the whole MR it names. */
#define ROCE_FLUSH_RANGE	0
#define ROCE_FLUSH_MR		1

struct roce_feth {
	__be32	word;		/* reserved:26 | SelLevel:2 | PlType:4 */
} __packed;

static inline u8 roce_feth_type(const struct roce_feth *f)
{
	return be32_to_cpu(f->word) & 0xf;
}

static inline u8 roce_feth_level(const struct roce_feth *f)
{
	return (be32_to_cpu(f->word) >> 4) & 0x3;
}

static inline void roce_feth_encode(struct roce_feth *f, u8 type, u8 level)
{
	f->word = cpu_to_be32((u32)(level & 0x3) << 4 | (type & 0xf));
}

/* ---- RDMA Extended Transport Header --------------------------------- */

struct roce_reth {
	__be64	va;
	__be32	rkey;
	__be32	len;		/* DMA length of the whole operation */
} __packed;

static inline u64 roce_reth_va(const struct roce_reth *reth)
{
	return be64_to_cpu(reth->va);
}

static inline u32 roce_reth_rkey(const struct roce_reth *reth)
{
	return be32_to_cpu(reth->rkey);
}

static inline u32 roce_reth_len(const struct roce_reth *reth)
{
	return be32_to_cpu(reth->len);
}

static inline void roce_reth_encode(struct roce_reth *reth, u64 va, u32 rkey,
				    u32 len)
{
	reth->va = cpu_to_be64(va);
	reth->rkey = cpu_to_be32(rkey);
	reth->len = cpu_to_be32(len);
}

/* ---- Atomic Extended Transport Header ------------------------------- */

struct roce_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;	/* swap value, or the addend for FETCH_ADD */
	__be64	compare;	/* CMP_SWAP only */
} __packed;

static inline u64 roce_atmeth_va(const struct roce_atmeth *a)
{
	return be64_to_cpu(a->va);
}

static inline u32 roce_atmeth_rkey(const struct roce_atmeth *a)
{
	return be32_to_cpu(a->rkey);
}

static inline u64 roce_atmeth_swap_add(const struct roce_atmeth *a)
{
	return be64_to_cpu(a->swap_add);
}

static inline u64 roce_atmeth_compare(const struct roce_atmeth *a)
{
	return be64_to_cpu(a->compare);
}

static inline void roce_atmeth_encode(struct roce_atmeth *a, u64 va, u32 rkey,
				      u64 swap_add, u64 compare)
{
	a->va = cpu_to_be64(va);
	a->rkey = cpu_to_be32(rkey);
	a->swap_add = cpu_to_be64(swap_add);
	a->compare = cpu_to_be64(compare);
}

/* ---- ACK Extended Transport Header ---------------------------------- */

struct roce_aeth {
	__be32	smsn;		/* Syndrome:8 | MSN:24 */
} __packed;

#define ROCE_AETH_MSN_MASK	0x00ffffffu

/* Syndrome bits 7-5 say what bits 4-0 mean. */
#define ROCE_AETH_TYPE_MASK	0xe0
#define ROCE_AETH_VALUE_MASK	0x1f
#define ROCE_AETH_ACK		0x00	/* value: credit count code */
#define ROCE_AETH_RNR_NAK	0x20	/* value: RNR timer code */
#define ROCE_AETH_NAK		0x60	/* value: enum roce_nak_code */

/* Credit code meaning "no credit information" (end-to-end credits off). */
#define ROCE_AETH_CREDIT_INVALID	0x1f

enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR	= 0,
	ROCE_NAK_INVALID_REQ	= 1,
	ROCE_NAK_REMOTE_ACCESS	= 2,
	ROCE_NAK_REMOTE_OP	= 3,
	ROCE_NAK_INVALID_RD_REQ	= 4,
};

static inline u8 roce_aeth_syndrome(const struct roce_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) >> 24;
}

static inline u32 roce_aeth_msn(const struct roce_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) & ROCE_AETH_MSN_MASK;
}

static inline void roce_aeth_encode(struct roce_aeth *aeth, u8 syndrome,
				    u32 msn)
{
	aeth->smsn = cpu_to_be32((u32)syndrome << 24 |
				 (msn & ROCE_AETH_MSN_MASK));
}

static inline u8 roce_aeth_syn_type(u8 syndrome)
{
	return syndrome & ROCE_AETH_TYPE_MASK;
}

static inline u8 roce_aeth_syn_value(u8 syndrome)
{
	return syndrome & ROCE_AETH_VALUE_MASK;
}

static inline u8 roce_aeth_syn_ack(u8 credit_code)
{
	return ROCE_AETH_ACK | (credit_code & ROCE_AETH_VALUE_MASK);
}

static inline u8 roce_aeth_syn_rnr(u8 timer_code)
{
	return ROCE_AETH_RNR_NAK | (timer_code & ROCE_AETH_VALUE_MASK);
}

static inline u8 roce_aeth_syn_nak(enum roce_nak_code code)
{
	return ROCE_AETH_NAK | (code & ROCE_AETH_VALUE_MASK);
}

/**
 * roce_aeth_credits() - receive-queue credits a credit code stands for
 * @code: 5-bit credit code from an ACK syndrome
 *
 * The code is logarithmic: 0-3 literally, then alternately x1.5 and
 * x4/3 steps (4, 6, 8, 12, 16, ... 32768).
 *
 * Return: the credit count, or U32 all-ones for ROCE_AETH_CREDIT_INVALID.
 */
static inline u32 roce_aeth_credits(u8 code)
{
	code &= ROCE_AETH_VALUE_MASK;
	if (code == ROCE_AETH_CREDIT_INVALID)
		return ~0u;
	if (code < 2)
		return code;
	if (code & 1)
		return 3u << ((code - 3) / 2);
	return 1u << (code / 2);
}

/**
 * roce_aeth_credit_code() - credit code to advertise for @credits
 * @credits: receive WQEs the responder has posted and not yet consumed
 *
 * Return: the largest code whose count does not exceed @credits.
 */
static inline u8 roce_aeth_credit_code(u32 credits)
{
	u8 code = ROCE_AETH_CREDIT_INVALID - 1;

	while (code && roce_aeth_credits(code) > credits)
		code--;
	return code;
}

/* ---- Atomic Acknowledge Extended Transport Header ------------------- */

struct roce_atmack {
	__be64	orig;		/* value at the target before the atomic */
} __packed;

static inline u64 roce_atmack_orig(const struct roce_atmack *a)
{
	return be64_to_cpu(a->orig);
}

static inline void roce_atmack_encode(struct roce_atmack *a, u64 orig)
{
	a->orig = cpu_to_be64(orig);
}

/* ---- Immediate data and Invalidate Extended Transport Headers ------- */

/*
 * Immediate data is opaque: verbs hand it over in network order already
 * (ib_send_wr.ex.imm_data, ib_wc.ex.imm_data are __be32), so it is
 * copied, never byte-swapped.
 */
struct roce_immdt {
	__be32	imm;
} __packed;

static inline __be32 roce_immdt_get(const struct roce_immdt *h)
{
	return h->imm;
}

static inline void roce_immdt_set(struct roce_immdt *h, __be32 imm)
{
	h->imm = imm;
}

struct roce_ieth {
	__be32	rkey;		/* key to invalidate at the responder */
} __packed;

static inline u32 roce_ieth_rkey(const struct roce_ieth *h)
{
	return be32_to_cpu(h->rkey);
}

static inline void roce_ieth_encode(struct roce_ieth *h, u32 rkey)
{
	h->rkey = cpu_to_be32(rkey);
}

#define ROCE_HDR_SIZE_CHECK(name, len) \
	static_assert(sizeof(struct name) == (len), #name " size")

ROCE_HDR_SIZE_CHECK(roce_bth, ROCE_BTH_LEN);
ROCE_HDR_SIZE_CHECK(roce_deth, ROCE_DETH_LEN);
ROCE_HDR_SIZE_CHECK(roce_xrceth, ROCE_XRCETH_LEN);
ROCE_HDR_SIZE_CHECK(roce_feth, ROCE_FETH_LEN);
ROCE_HDR_SIZE_CHECK(roce_reth, ROCE_RETH_LEN);
ROCE_HDR_SIZE_CHECK(roce_atmeth, ROCE_ATMETH_LEN);
ROCE_HDR_SIZE_CHECK(roce_aeth, ROCE_AETH_LEN);
ROCE_HDR_SIZE_CHECK(roce_atmack, ROCE_ATMACK_LEN);
ROCE_HDR_SIZE_CHECK(roce_immdt, ROCE_IMMDT_LEN);
ROCE_HDR_SIZE_CHECK(roce_ieth, ROCE_IETH_LEN);

#undef ROCE_HDR_SIZE_CHECK

#endif /* SOFTRDMA_ROCE_HDR_H */
