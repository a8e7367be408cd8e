// SPDX-License-Identifier: GPL-2.0
/*
 * DCQCN reaction point (see roce_dcqcn.h). The caller serialises all
 * calls for one QP and passes a clock that does not go backwards.
 */
#include "roce_dcqcn.h"

/* Past this many periods the outcome no longer depends on the count. */
#define DCQCN_MAX_EVENTS	100000u

static u32 dcqcn_min(u32 a, u32 b)
{
	return a < b ? a : b;
}

static u32 dcqcn_max(u32 a, u32 b)
{
	return a > b ? a : b;
}

void dcqcn_init(struct dcqcn_rp *rp, const struct dcqcn_params *p)
{
	memset(rp, 0, sizeof(*rp));
	rp->rc = p->line_rate;
	rp->rt = p->line_rate;
	rp->alpha = DCQCN_ONE;
}

/* One increase event: recover towards the target, which may itself rise. */
static void dcqcn_increase(struct dcqcn_rp *rp, const struct dcqcn_params *p)
{
	u32 lo = dcqcn_min(rp->t_cnt, rp->b_cnt);
	u32 hi = dcqcn_max(rp->t_cnt, rp->b_cnt);
	u64 rt = rp->rt;

	if (hi < p->threshold)
		;				/* fast recovery */
	else if (lo < p->threshold)
		rt += p->ai_rate;		/* additive increase */
	else
		rt += (u64)(lo - p->threshold + 1) * p->hai_rate; /* hyper */
	rp->rt = rt < p->line_rate ? (u32)rt : p->line_rate;
	rp->rc = (u32)(((u64)rp->rc + rp->rt + 1) / 2);
	if (rp->rc >= p->line_rate)
		dcqcn_init(rp, p);	/* over: the next one starts afresh */
}

/**
 * dcqcn_advance() - run the alpha and rate increase timers up to @now
 * @rp: the QP's state
 * @p: parameters
 * @now: the clock, in ns
 */
void dcqcn_advance(struct dcqcn_rp *rp, const struct dcqcn_params *p,
		   u64 now)
{
	u64 n;

	if (!rp->limited)
		return;
	if (now > rp->alpha_at && p->alpha_ns) {
		n = (now - rp->alpha_at) / p->alpha_ns;
		rp->alpha_at += n * p->alpha_ns;
		if (n > DCQCN_MAX_EVENTS)
			rp->alpha = 0;
		while (n-- && rp->alpha)
			rp->alpha -= dcqcn_max(rp->alpha >> p->g_shift, 1);
	}
	if (now <= rp->inc_at || !p->inc_ns)
		return;
	n = (now - rp->inc_at) / p->inc_ns;
	rp->inc_at += n * p->inc_ns;
	if (n > DCQCN_MAX_EVENTS) {
		dcqcn_init(rp, p);
		return;
	}
	while (n-- && rp->limited) {
		rp->t_cnt++;
		dcqcn_increase(rp, p);
	}
}

/**
 * dcqcn_cnp() - the QP's peer sent a CNP: cut the rate
 * @rp: the QP's state
 * @p: parameters
 * @now: the clock, in ns
 *
 * Return: true if the rate was cut, false if the CNP came within
 * @p->cut_gap_ns of the last cut and was not acted on.
 */
bool dcqcn_cnp(struct dcqcn_rp *rp, const struct dcqcn_params *p, u64 now)
{
	u32 g1 = DCQCN_ONE >> p->g_shift;
	u64 cut;

	if (rp->limited && now - rp->cut_at < p->cut_gap_ns)
		return false;
	dcqcn_advance(rp, p, now);	/* alpha's decay since the last cut */
	cut = (u64)rp->rc * rp->alpha / (2 * DCQCN_ONE);
	rp->rt = rp->rc;
	rp->rc = dcqcn_max(rp->rc - (u32)cut, p->min_rate);
	/* alpha = (1 - g) alpha + g */
	rp->alpha = dcqcn_min(rp->alpha - (rp->alpha >> p->g_shift) + g1,
			      DCQCN_ONE);
	rp->t_cnt = 0;
	rp->b_cnt = 0;
	rp->bytes = 0;
	rp->alpha_at = now;
	rp->inc_at = now;
	rp->cut_at = now;
	if (!rp->limited)
		rp->next_at = now;
	rp->limited = rp->rc < p->line_rate;
	return true;
}

/**
 * dcqcn_wait() - how long the QP must wait before it sends, in ns
 * @rp: the QP's state
 * @now: the clock, in ns
 */
u64 dcqcn_wait(const struct dcqcn_rp *rp, u64 now)
{
	if (!rp->limited || now >= rp->next_at)
		return 0;
	return rp->next_at - now;
}

/**
 * dcqcn_sent() - the QP sent @bytes: pace the next packet, count them
 * @rp: the QP's state
 * @p: parameters
 * @bytes: the packet's size
 * @now: the clock, in ns
 *
 * A paced QP that waited longer than it had to keeps at most
 * @p->burst_ns of the time it did not use.
 */
void dcqcn_sent(struct dcqcn_rp *rp, const struct dcqcn_params *p,
		u32 bytes, u64 now)
{
	u64 start, floor = now > p->burst_ns ? now - p->burst_ns : 0;

	if (!rp->limited)
		return;
	start = rp->next_at > floor ? rp->next_at : floor;
	/* bits / (Mbit/s) = us: bytes * 8000 / rate ns */
	rp->next_at = start + (u64)bytes * 8000 / (rp->rc ? rp->rc : 1);
	rp->bytes += bytes;
	while (p->inc_bytes && rp->bytes >= p->inc_bytes && rp->limited) {
		rp->bytes -= p->inc_bytes;
		rp->b_cnt++;
		dcqcn_increase(rp, p);
	}
}
