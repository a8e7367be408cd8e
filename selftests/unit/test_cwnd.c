// SPDX-License-Identifier: GPL-2.0
/* The requester's congestion window (roce_cwnd.h). */
#include "roce_cwnd.h"
#include "suites.h"

static void timeout_then_slow_start(struct ktap *t)
{
	struct roce_cwnd w;

	roce_cwnd_init(&w, 16, 256);
	KT_EXPECT_EQ(t, w.cwnd, 16);
	roce_cwnd_ack(&w, 16, 256);		/* slow start to the top */
	KT_EXPECT_EQ(t, w.cwnd, 32);
	roce_cwnd_ack(&w, 1000, 256);
	KT_EXPECT_EQ(t, w.cwnd, 256);
	roce_cwnd_ack(&w, 10, 256);		/* full: stays */
	KT_EXPECT_EQ(t, w.cwnd, 256);
	roce_cwnd_timeout(&w, 200);
	KT_EXPECT_EQ(t, w.cwnd, 1);
	KT_EXPECT_EQ(t, w.ssthresh, 100);
	roce_cwnd_ack(&w, 1, 256);		/* doubles per round trip */
	KT_EXPECT_EQ(t, w.cwnd, 2);
	roce_cwnd_ack(&w, 2, 256);
	KT_EXPECT_EQ(t, w.cwnd, 4);
	roce_cwnd_ack(&w, 150, 256);		/* up to ssthresh only */
	KT_EXPECT_EQ(t, w.cwnd, 100);
	roce_cwnd_ack(&w, 99, 256);		/* then one per window */
	KT_EXPECT_EQ(t, w.cwnd, 100);
	roce_cwnd_ack(&w, 1, 256);
	KT_EXPECT_EQ(t, w.cwnd, 101);
	KT_EXPECT_EQ(t, w.acked, 0);
}

/* A NAK halves the window, never below 2 packets. */
static void nak_halves(struct ktap *t)
{
	struct roce_cwnd w;

	roce_cwnd_init(&w, 256, 256);
	roce_cwnd_cut(&w);
	KT_EXPECT_EQ(t, w.cwnd, 128);
	KT_EXPECT_EQ(t, w.ssthresh, 128);
	w.cwnd = 3;
	w.since_cut = w.cut_flight;		/* a round trip later */
	roce_cwnd_cut(&w);
	KT_EXPECT_EQ(t, w.cwnd, 2);
	roce_cwnd_timeout(&w, 1);
	KT_EXPECT_EQ(t, w.ssthresh, 2);
}

/*
 * NAKs and CNPs: the first cuts at once, the next a round trip later; a
 * second loss met by the go-back-N resend is the same episode.
 */
static void cut_once_per_round_trip(struct ktap *t)
{
	struct roce_cwnd w;

	roce_cwnd_init(&w, 64, 256);
	roce_cwnd_cut(&w);
	KT_EXPECT_EQ(t, w.cwnd, 32);
	roce_cwnd_cut(&w);			/* the same round trip */
	roce_cwnd_ack(&w, 63, 256);		/* 64 were in flight */
	roce_cwnd_cut(&w);
	KT_EXPECT_EQ(t, w.cwnd, 33);		/* avoidance: +1 */
	roce_cwnd_ack(&w, 1, 256);
	roce_cwnd_cut(&w);
	KT_EXPECT_EQ(t, w.cwnd, 16);
	roce_cwnd_timeout(&w, 16);		/* a timeout cuts at once */
	KT_EXPECT_EQ(t, w.cwnd, 1);
	roce_cwnd_cut(&w);			/* and its round trip is one */
	KT_EXPECT_EQ(t, w.cwnd, 1);
}

static void never_past_max(struct ktap *t)
{
	struct roce_cwnd w;
	int i;

	roce_cwnd_init(&w, 256, 256);
	roce_cwnd_timeout(&w, 600);
	for (i = 0; i < 10000; i++)
		roce_cwnd_ack(&w, 64, 256);
	KT_EXPECT_EQ(t, w.cwnd, 256);
}

static const struct ktap_case cases[] = {
	KTAP_CASE(timeout_then_slow_start),
	KTAP_CASE(nak_halves),
	KTAP_CASE(cut_once_per_round_trip),
	KTAP_CASE(never_past_max),
};

KTAP_SUITE(cwnd_suite, "cwnd", cases);
