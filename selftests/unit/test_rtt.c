// SPDX-License-Identifier: GPL-2.0
/* The round-trip estimate and the probe timeout (roce_rtt.h). */
#include "roce_rtt.h"
#include "suites.h"

static void no_sample_no_probe(struct ktap *t)
{
	struct roce_rtt r;

	roce_rtt_init(&r);
	KT_EXPECT_EQ(t, roce_rtt_pto_us(&r), 0);
	roce_rtt_sample(&r, 0);			/* a 0 us sample still counts */
	KT_EXPECT_EQ(t, r.srtt, 1);
	KT_EXPECT_EQ(t, roce_rtt_pto_us(&r), ROCE_PTO_MIN_US);
}

/* RFC 6298 2.2: the first sample sets SRTT and RTTVAR = R / 2. */
static void first_sample(struct ktap *t)
{
	struct roce_rtt r;

	roce_rtt_init(&r);
	roce_rtt_sample(&r, 8000);
	KT_EXPECT_EQ(t, r.srtt, 8000);
	KT_EXPECT_EQ(t, r.rttvar, 4000);
	/* SRTT + 4 RTTVAR = 24 ms beats 2 SRTT = 16 ms */
	KT_EXPECT_EQ(t, roce_rtt_pto_us(&r), 24000);
}

/* 2.3: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R. */
static void smoothing(struct ktap *t)
{
	struct roce_rtt r;
	int i;

	roce_rtt_init(&r);
	roce_rtt_sample(&r, 8000);
	roce_rtt_sample(&r, 16000);
	KT_EXPECT_EQ(t, r.rttvar, 5000);	/* (3 * 4000 + 8000) / 4 */
	KT_EXPECT_EQ(t, r.srtt, 9000);		/* (7 * 8000 + 16000) / 8 */
	/* A steady RTT: the deviation decays, 2 SRTT is left. */
	for (i = 0; i < 200; i++)
		roce_rtt_sample(&r, 20000);
	KT_EXPECT_EQ(t, r.srtt, 19993);	/* integer steps stop short */
	KT_EXPECT(t, r.rttvar <= 10);
	KT_EXPECT_EQ(t, roce_rtt_pto_us(&r), 2 * r.srtt);
}

/* A fast link: the floor; a huge sample: no overflow. */
static void floor_and_ceiling(struct ktap *t)
{
	struct roce_rtt r;

	roce_rtt_init(&r);
	roce_rtt_sample(&r, 50);
	KT_EXPECT_EQ(t, roce_rtt_pto_us(&r), ROCE_PTO_MIN_US);
	roce_rtt_init(&r);
	roce_rtt_sample(&r, 0xffffffffU);
	roce_rtt_sample(&r, 1);
	KT_EXPECT_EQ(t, roce_rtt_pto_us(&r), 0xffffffffU);
	KT_EXPECT(t, r.srtt > 0xd0000000U);
}

static const struct ktap_case cases[] = {
	KTAP_CASE(no_sample_no_probe),
	KTAP_CASE(first_sample),
	KTAP_CASE(smoothing),
	KTAP_CASE(floor_and_ceiling),
};

KTAP_SUITE(rtt_suite, "rtt", cases);
