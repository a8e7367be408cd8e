/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Writing send WQEs into the SQ ring: shared by ibv_post_send() (post.c)
 * and the ibv_wr_* builders of extended QPs (wr.c), so both hand the
 * kernel exactly the same bytes for the same request.
 *
 * A WQE is written in place, in a slot past the published producer index:
 * the kernel does not look at it before the index moves, so the fields
 * may be filled in any order and rewritten until then.
 */
#ifndef SOFTRDMA_SEND_H
#define SOFTRDMA_SEND_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "softrdma.h"

/* WQE SGEs are struct ibv_sge, so SGE lists are copied in one go. */
_Static_assert(sizeof(struct softrdma_sge) == sizeof(struct ibv_sge),
	       "sge size");
_Static_assert(offsetof(struct softrdma_sge, addr) ==
	       offsetof(struct ibv_sge, addr), "sge addr");
_Static_assert(offsetof(struct softrdma_sge, length) ==
	       offsetof(struct ibv_sge, length), "sge length");
_Static_assert(offsetof(struct softrdma_sge, lkey) ==
	       offsetof(struct ibv_sge, lkey), "sge lkey");

#define SRDMA_OP(op)	(1u << IBV_WR_##op)

/* What each QP type may post; anything else is EINVAL. */
#define SRDMA_UD_OPS	(SRDMA_OP(SEND) | SRDMA_OP(SEND_WITH_IMM))
#define SRDMA_UC_OPS	(SRDMA_UD_OPS | SRDMA_OP(RDMA_WRITE) | \
			 SRDMA_OP(RDMA_WRITE_WITH_IMM) | \
			 SRDMA_OP(LOCAL_INV) | SRDMA_OP(BIND_MW))
#define SRDMA_RC_OPS	(SRDMA_UC_OPS | SRDMA_OP(SEND_WITH_INV) | \
			 SRDMA_OP(RDMA_READ) | \
			 SRDMA_OP(ATOMIC_CMP_AND_SWP) | \
			 SRDMA_OP(ATOMIC_FETCH_AND_ADD))

/* Only operations that carry our payload out can take it inline. */
#define SRDMA_INLINE_OPS	(SRDMA_OP(SEND) | SRDMA_OP(SEND_WITH_IMM) | \
				 SRDMA_OP(SEND_WITH_INV) | \
				 SRDMA_OP(RDMA_WRITE) | \
				 SRDMA_OP(RDMA_WRITE_WITH_IMM))

/*
 * Operations with something in the WQE's ex field: the immediate (big
 * endian, as the caller gave it) or the rkey to invalidate.
 */
#define SRDMA_EX_OPS		(SRDMA_OP(SEND_WITH_IMM) | \
				 SRDMA_OP(RDMA_WRITE_WITH_IMM) | \
				 SRDMA_OP(SEND_WITH_INV) | SRDMA_OP(LOCAL_INV))

/* SRDMA_OP() bits of the operations QPs of @type may post. */
static inline uint32_t srdma_qp_send_ops(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		return SRDMA_RC_OPS;
	case IBV_QPT_UC:
		return SRDMA_UC_OPS;
	case IBV_QPT_UD:
		return SRDMA_UD_OPS;
	default:
		return 0;
	}
}

static inline bool srdma_op_in(uint32_t ops, uint32_t opcode)
{
	return opcode < 32 && (ops & (1u << opcode));
}

/*
 * Sends need RTS or later. Checked before anything is published, not
 * only by the doorbell: a WQE left in the ring would run once the QP got
 * to RTS, although its post had failed. libibverbs tracks the state
 * across our modify_qp; on its own the kernel only moves a QP to an
 * error state, where posts are allowed (and flushed).
 */
static inline bool srdma_sq_open(const struct srdma_qp *qp)
{
	enum ibv_qp_state state = qp->vqp.qp.state;

	return qp->sq.hdr && state != IBV_QPS_RESET &&
	       state != IBV_QPS_INIT && state != IBV_QPS_RTR;
}

/* Start a WQE in @slot: zero but for what every operation has. */
static inline struct softrdma_send_wqe *
srdma_wqe_start(void *slot, uint64_t wr_id, uint32_t opcode,
		uint32_t send_flags)
{
	struct softrdma_send_wqe *wqe = slot;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr_id;
	wqe->opcode = opcode;
	wqe->send_flags = send_flags;
	return wqe;
}

/* RDMA WRITE(_WITH_IMM) and READ. */
static inline void srdma_wqe_set_rdma(struct softrdma_send_wqe *wqe,
				      uint64_t remote_addr, uint32_t rkey)
{
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
}

/* compare_add: the compare of a CMP_AND_SWP, the addend of a FETCH_ADD. */
static inline void srdma_wqe_set_atomic(struct softrdma_send_wqe *wqe,
					uint64_t remote_addr,
					uint64_t compare_add, uint64_t swap,
					uint32_t rkey)
{
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

/* Bind @mw_rkey's window, to be known as @new_rkey, as @bind says. */
static inline void srdma_wqe_set_bind(struct softrdma_send_wqe *wqe,
				      uint32_t mw_rkey, uint32_t new_rkey,
				      const struct ibv_mw_bind_info *bind)
{
	wqe->wr.bind.addr = bind->addr;
	wqe->wr.bind.length = bind->length;
	wqe->wr.bind.mr_lkey = bind->mr ? bind->mr->lkey : 0;
	wqe->wr.bind.mw_rkey = mw_rkey;
	wqe->wr.bind.new_rkey = new_rkey;
	wqe->wr.bind.access = bind->mw_access_flags;
}

/* UD only: wr.ud shares its bytes with the other wr layouts. */
static inline void srdma_wqe_set_ud(struct softrdma_send_wqe *wqe,
				    struct ibv_ah *ah, uint32_t remote_qpn,
				    uint32_t remote_qkey)
{
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
	wqe->wr.ud.ah_num = to_sah(ah)->ah_num;
}

/* Payloads: a new one replaces what the WQE carried before. */
static inline void srdma_wqe_clear_payload(struct softrdma_send_wqe *wqe)
{
	wqe->send_flags &= ~IBV_SEND_INLINE;
	wqe->num_sge = 0;
	wqe->inline_len = 0;
}

/* @num_sge is within the QP's max_send_sge: the slot has room. */
static inline void srdma_wqe_set_sges(struct softrdma_send_wqe *wqe,
				      const struct ibv_sge *sg_list,
				      uint32_t num_sge)
{
	srdma_wqe_clear_payload(wqe);
	wqe->num_sge = num_sge;
	if (num_sge)
		memcpy(wqe->sge, sg_list, (size_t)num_sge * sizeof(*sg_list));
}

/*
 * Append @length bytes to the inline payload, which sits where the SGEs
 * would. The data is copied now: the caller may reuse it at once. The
 * total is within the QP's max_inline_data: the slot has room.
 */
static inline void srdma_wqe_add_inline(struct softrdma_send_wqe *wqe,
					const void *addr, size_t length)
{
	wqe->send_flags |= IBV_SEND_INLINE;
	if (!length)
		return;
	memcpy((uint8_t *)wqe->sge + wqe->inline_len, addr, length);
	wqe->inline_len += length;
}

/*
 * The SQ doorbell: a POST_SEND write with no WRs in it, which the kernel
 * takes as "the SQ producer index moved". Here so that the selftests
 * that abuse the rings ring exactly the provider's doorbell.
 */
static inline int srdma_sq_doorbell(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core = {
			.response = (uintptr_t)&resp,
			.qp_handle = ibqp->handle,
			/* Checked by the kernel even with no WRs. */
			.wqe_size = sizeof(struct ibv_send_wr),
		},
	};

	if (write(ibqp->context->cmd_fd, &cmd, sizeof(cmd)) != sizeof(cmd))
		return errno ? errno : EIO;
	return 0;
}

#endif /* SOFTRDMA_SEND_H */
