/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the requester (req.c) and the completer (comp.c) of a send queue
 * share: both run under qp->sq_lock.
 */
#ifndef SRDMA_REQ_H
#define SRDMA_REQ_H

#include <linux/jiffies.h>

#include "srdma.h"
#include "proto/roce_psn.h"

#define SRDMA_WINDOW		256	/* request PSNs in flight */

/* Our copy of the send WQE at SQ index @idx (fetched). */
static inline struct softrdma_send_wqe *srdma_wqe(struct srdma_qp *qp,
						  u32 idx)
{
	return (void *)(qp->req.sq_copy +
			(size_t)(idx & (qp->sq.num_slots - 1)) *
			qp->sq.slot_size);
}

/* The requester's state of the send WQE at SQ index @idx. */
static inline struct srdma_swqe *srdma_st(struct srdma_qp *qp, u32 idx)
{
	return &qp->req.swqe[idx & (qp->sq.num_slots - 1)];
}

/* A read or atomic is answered, or no longer waits for its answer. */
static inline void srdma_rd_done(struct srdma_qp *qp, struct srdma_swqe *st)
{
	if (st->rd_out) {
		st->rd_out = false;
		qp->req.rd_out--;
	}
}

/* The PSN of the last packet (or response) of a WQE. */
static inline u32 srdma_last_psn(const struct srdma_swqe *st)
{
	return roce_psn_add(st->first_psn, st->npkts - 1);
}

/* Compare-and-swap and fetch-and-add. */
static inline bool srdma_wr_atomic(u32 opcode)
{
	return opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/* FLUSH and ATOMIC WRITE: answered by an empty read response. */
static inline bool srdma_wr_placement(u32 opcode)
{
	return opcode == SOFTRDMA_WR_FLUSH || opcode == SOFTRDMA_WR_ATOMIC_WRITE;
}

/*
 * Reads, atomics and placements complete when their response is in, not
 * on an ACK; each holds one of the responder's resources until then.
 */
static inline bool srdma_wr_needs_resp(u32 opcode)
{
	return opcode == IB_UVERBS_WR_RDMA_READ || srdma_wr_atomic(opcode) ||
	       srdma_wr_placement(opcode);
}

/* Requests sent and not all answered: a PSN unacknowledged or a read out. */
static inline bool srdma_req_waiting(const struct srdma_qp *qp)
{
	return qp->comp.una_psn != qp->req.psn || qp->req.rd_out;
}

#define SRDMA_ODP_WAIT	1	/* jiffies: an ODP page being mapped */

/* Arm the QP timer unless the QP is going away (@delay 0: no timeout). */
static inline void srdma_arm_timer(struct srdma_qp *qp, unsigned long delay)
{
	if (!qp->dying && delay)
		mod_timer(&qp->comp.timer, jiffies + delay);
}

void srdma_req_unlock(struct srdma_qp *qp, bool fail)
	__releases(&qp->sq_lock);
unsigned long srdma_ack_timeout(struct srdma_qp *qp);
bool srdma_sq_order_ok(struct srdma_qp *qp);
bool __srdma_req_run(struct srdma_qp *qp);
void srdma_req_probe(struct srdma_qp *qp, bool oldest);
void srdma_req_ask_again(struct srdma_qp *qp, u32 idx, u32 psn, u32 len);

/* comp.c */
bool srdma_req_none_sent(const struct srdma_qp *qp);
u32 srdma_req_unanswered(struct srdma_qp *qp);
void srdma_req_oldest(struct srdma_qp *qp);
bool srdma_comp_progress(struct srdma_qp *qp);
void srdma_comp_arm(struct srdma_qp *qp);
void srdma_comp_rtt_start(struct srdma_qp *qp, u32 psn);

#endif /* SRDMA_REQ_H */
