/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the responder (resp.c) and its answers (answer.c) share: both run
 * under qp->rq_lock.
 */
#ifndef SRDMA_RESP_H
#define SRDMA_RESP_H

#include "srdma.h"
#include "proto/roce_psn.h"

/* The queue of answers: reads and atomics, each with room for an ACK behind. */
#define SRDMA_ANSWERS	(2 * SRDMA_MAX_RD_ATOMIC)

static inline u8 srdma_ack_syndrome(void)
{
	/* Like rdma_rxe: no end-to-end credits. */
	return roce_aeth_syn_ack(ROCE_AETH_CREDIT_INVALID);
}

/* answer.c */
void srdma_resp_ack_send(struct srdma_qp *qp, u32 psn, u8 syndrome, u32 msn);
void srdma_resp_ack(struct srdma_qp *qp, u32 psn, u8 syndrome);
void srdma_resp_read_work(struct work_struct *work);
bool srdma_resp_queue_full(const struct srdma_qp *qp);
struct srdma_rd *srdma_resp_hold(struct srdma_qp *qp);
int srdma_resp_queue(struct srdma_qp *qp, const struct srdma_rd *held,
		     u32 psn);
int srdma_resp_read_replay(struct srdma_qp *qp,
			   const struct roce_pkt_info *pkt, u32 psn);
int srdma_resp_atomic_replay(struct srdma_qp *qp, u32 psn, bool placed);

/* resp.c */
struct srdma_mr *srdma_resp_mr(struct srdma_qp *qp, u32 rkey, u64 va,
			       u32 len, int access);

#endif /* SRDMA_RESP_H */
