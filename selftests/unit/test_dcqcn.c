// SPDX-License-Identifier: GPL-2.0
/* DCQCN's reaction point against the paper's rules, worked out by hand. */
#include "roce_dcqcn.h"
#include "suites.h"

#define US	1000ull

static const struct dcqcn_params P = {
	.line_rate = 10000, .min_rate = 10, .ai_rate = 5, .hai_rate = 50,
	.g_shift = 8, .alpha_ns = 55 * US, .inc_ns = 300 * US,
	.inc_bytes = 1 << 20, .threshold = 5, .cut_gap_ns = 4 * US,
	.burst_ns = 50 * US,
};

static void starts_unlimited(struct ktap *t)
{
	struct dcqcn_rp rp;

	dcqcn_init(&rp, &P);
	KT_EXPECT_EQ(t, rp.rc, 10000);
	KT_EXPECT(t, !rp.limited);
	KT_EXPECT_EQ(t, dcqcn_wait(&rp, 0), 0);
	dcqcn_sent(&rp, &P, 1 << 30, 0);	/* unpaced, uncounted */
	KT_EXPECT_EQ(t, dcqcn_wait(&rp, 0), 0);
	KT_EXPECT_EQ(t, rp.b_cnt, 0);
}

/* alpha = 1: the first CNP halves the rate; alpha stays (1-g) + g = 1. */
static void first_cnp_halves(struct ktap *t)
{
	struct dcqcn_rp rp;

	dcqcn_init(&rp, &P);
	KT_ASSERT(t, dcqcn_cnp(&rp, &P, 1000 * US));
	KT_EXPECT_EQ(t, rp.rc, 5000);
	KT_EXPECT_EQ(t, rp.rt, 10000);
	KT_EXPECT_EQ(t, rp.alpha, DCQCN_ONE);
	KT_EXPECT(t, rp.limited);
	/* within the cut gap: not acted on */
	KT_EXPECT(t, !dcqcn_cnp(&rp, &P, 1003 * US));
	KT_EXPECT_EQ(t, rp.rc, 5000);
	/* 55 us on, alpha decayed once: 1024 - 4; cut by 1020/2048 */
	KT_ASSERT(t, dcqcn_cnp(&rp, &P, 1055 * US));
	KT_EXPECT_EQ(t, rp.rt, 5000);
	KT_EXPECT_EQ(t, rp.rc, 5000 - 5000 * 1020 / 2048);
	KT_EXPECT_EQ(t, rp.alpha, 1020 - (1020 >> 8) + 4);
}

static void never_below_min(struct ktap *t)
{
	struct dcqcn_rp rp;
	u64 now = 0;
	int i;

	dcqcn_init(&rp, &P);
	for (i = 0; i < 100; i++)
		dcqcn_cnp(&rp, &P, now += 10 * US);
	KT_EXPECT_EQ(t, rp.rc, P.min_rate);
}

/* Timer events: 5 of fast recovery, then additive increase of rt. */
static void timer_recovers(struct ktap *t)
{
	struct dcqcn_rp rp;
	u32 rc = 5000;
	int i;

	dcqcn_init(&rp, &P);
	dcqcn_cnp(&rp, &P, 0);
	for (i = 1; i <= 5; i++) {
		dcqcn_advance(&rp, &P, i * 300 * US);
		rc = (rc + 10000 + 1) / 2;
		KT_EXPECT_EQ(t, rp.rc, rc);
		KT_EXPECT_EQ(t, rp.rt, 10000);
		KT_EXPECT_EQ(t, rp.t_cnt, (u32)i);
	}
	/* the same five events at once, lazily */
	dcqcn_init(&rp, &P);
	dcqcn_cnp(&rp, &P, 0);
	dcqcn_advance(&rp, &P, 5 * 300 * US + 299 * US);
	KT_EXPECT_EQ(t, rp.rc, rc);
	KT_EXPECT_EQ(t, rp.inc_at, 5 * 300 * US);
}

/* Additive once one counter passed F, hyper once both did. */
static void additive_then_hyper(struct ktap *t)
{
	struct dcqcn_rp rp;

	dcqcn_init(&rp, &P);
	dcqcn_cnp(&rp, &P, 0);
	dcqcn_cnp(&rp, &P, 10 * US);	/* rt 5000, rc ~2500 */
	KT_ASSERT_EQ(t, rp.rt, 5000);
	rp.t_cnt = 5;
	rp.b_cnt = 0;
	dcqcn_advance(&rp, &P, 10 * US + 300 * US);
	KT_EXPECT_EQ(t, rp.t_cnt, 6);
	KT_EXPECT_EQ(t, rp.rt, 5005);
	rp.b_cnt = 6;			/* lo = 6: i = 2 */
	dcqcn_sent(&rp, &P, 1 << 20, 10 * US + 300 * US);
	KT_EXPECT_EQ(t, rp.b_cnt, 7);
	KT_EXPECT_EQ(t, rp.rt, 5005 + 2 * 50);
}

/* Back at the line rate the QP is no longer paced. */
static void recovers_to_line(struct ktap *t)
{
	struct dcqcn_rp rp;

	dcqcn_init(&rp, &P);
	dcqcn_cnp(&rp, &P, 0);
	dcqcn_advance(&rp, &P, 1000000 * US);
	KT_EXPECT(t, !rp.limited);
	KT_EXPECT_EQ(t, rp.rc, 10000);
	/* far beyond: reset outright, not looped through */
	dcqcn_cnp(&rp, &P, 1000001 * US);
	dcqcn_advance(&rp, &P, ~0ull >> 1);
	KT_EXPECT(t, !rp.limited);
	KT_EXPECT_EQ(t, rp.rc, 10000);
}

/* Paced at rc: 1250 bytes at 1000 Mbit/s take 10 us; saving is capped. */
static void pacing(struct ktap *t)
{
	struct dcqcn_rp rp;
	u64 now = 100000 * US;

	dcqcn_init(&rp, &P);
	dcqcn_cnp(&rp, &P, now);
	rp.rc = 1000;
	dcqcn_sent(&rp, &P, 1250, now);
	KT_EXPECT_EQ(t, dcqcn_wait(&rp, now), 10 * US);
	KT_EXPECT_EQ(t, dcqcn_wait(&rp, now + 4 * US), 6 * US);
	KT_EXPECT_EQ(t, dcqcn_wait(&rp, now + 10 * US), 0);
	/* idle 1 ms: at most burst_ns (50 us = 5 packets) saved */
	now += 1000 * US;
	dcqcn_sent(&rp, &P, 1250, now);
	KT_EXPECT_EQ(t, rp.next_at, now - 50 * US + 10 * US);
	KT_EXPECT_EQ(t, dcqcn_wait(&rp, now), 0);
}

static const struct ktap_case cases[] = {
	KTAP_CASE(starts_unlimited),
	KTAP_CASE(first_cnp_halves),
	KTAP_CASE(never_below_min),
	KTAP_CASE(timer_recovers),
	KTAP_CASE(additive_then_hyper),
	KTAP_CASE(recovers_to_line),
	KTAP_CASE(pacing),
};

KTAP_SUITE(dcqcn_suite, "dcqcn", cases);
