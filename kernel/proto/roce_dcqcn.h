/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DCQCN's reaction point: the sending rate of one QP, cut when a CNP says
 * its packets were marked, and raised again by time and by bytes sent
 * (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015), with the pacing that holds the QP to that rate.
 *
 * Pure arithmetic on a caller-given clock (ns): the timers of the paper
 * are evaluated lazily, when the QP next sends or is told of a CNP, so a
 * QP needs no timer of its own until it must wait to send. An episode
 * runs from the first cut until the rate is back at the line rate; the
 * next one starts afresh, with alpha 1 (NICs' initial alpha).
 * Rates are in Mbit/s; alpha is a fraction of DCQCN_ONE.
 */
#ifndef SOFTRDMA_ROCE_DCQCN_H
#define SOFTRDMA_ROCE_DCQCN_H

#include "proto_port.h"

#define DCQCN_ONE	1024u

/**
 * struct dcqcn_params - the algorithm's knobs, shared by a device's QPs
 * @line_rate: the rate of an unlimited QP, and the ceiling of any
 * @min_rate: the floor a QP is never cut below
 * @ai_rate: additive increase step of the target rate (R_AI)
 * @hai_rate: hyper increase step (R_HAI)
 * @g_shift: alpha's gain g is 1 / 2^@g_shift
 * @alpha_ns: alpha decays by (1 - g) each period without a CNP (K)
 * @inc_ns: period of the rate increase timer (T)
 * @inc_bytes: bytes sent per rate increase event (B)
 * @threshold: increase events before additive, then hyper increase (F)
 * @cut_gap_ns: CNPs closer than this to the last cut are not acted on
 * @burst_ns: sending time a paced QP may save up while it waits
 */
struct dcqcn_params {
	u32 line_rate;
	u32 min_rate;
	u32 ai_rate;
	u32 hai_rate;
	u32 g_shift;
	u32 alpha_ns;
	u32 inc_ns;
	u32 inc_bytes;
	u32 threshold;
	u32 cut_gap_ns;
	u32 burst_ns;
};

/**
 * struct dcqcn_rp - one QP's reaction point
 * @rc: current rate
 * @rt: target rate, the rate before the last cut
 * @alpha: congestion estimate, 0 .. DCQCN_ONE
 * @t_cnt: timer increase events since the last cut
 * @b_cnt: byte counter increase events since the last cut
 * @bytes: bytes sent towards the next byte counter event
 * @alpha_at: start of the current alpha period
 * @inc_at: start of the current increase timer period
 * @cut_at: time of the last cut
 * @next_at: earliest time the paced QP sends its next packet
 * @limited: @rc is below the line rate: the QP is paced
 */
struct dcqcn_rp {
	u32 rc;
	u32 rt;
	u32 alpha;
	u32 t_cnt;
	u32 b_cnt;
	u32 bytes;
	u64 alpha_at;
	u64 inc_at;
	u64 cut_at;
	u64 next_at;
	bool limited;
};

void dcqcn_init(struct dcqcn_rp *rp, const struct dcqcn_params *p);
bool dcqcn_cnp(struct dcqcn_rp *rp, const struct dcqcn_params *p, u64 now);
void dcqcn_advance(struct dcqcn_rp *rp, const struct dcqcn_params *p,
		   u64 now);
u64 dcqcn_wait(const struct dcqcn_rp *rp, u64 now);
void dcqcn_sent(struct dcqcn_rp *rp, const struct dcqcn_params *p,
		u32 bytes, u64 now);

#endif /* SOFTRDMA_ROCE_DCQCN_H */
