// SPDX-License-Identifier: GPL-2.0
/* 24-bit PSN arithmetic, mostly at the wrap and the half-window edge. */
#include "roce_psn.h"
#include "suites.h"

static void add_wraps(struct ktap *t)
{
	KT_EXPECT_EQ(t, roce_psn_add(0xffffff, 1), 0);
	KT_EXPECT_EQ(t, roce_psn_add(0xfffff0, 0x20), 0x10);
	KT_EXPECT_EQ(t, roce_psn_next(0xffffff), 0);
}

static void sub_wraps(struct ktap *t)
{
	KT_EXPECT_EQ(t, roce_psn_sub(0, 1), 0xffffff);
	KT_EXPECT_EQ(t, roce_psn_sub(0x10, 0x20), 0xfffff0);
}

static void diff_is_signed_across_wrap(struct ktap *t)
{
	KT_EXPECT_EQ(t, roce_psn_diff(0, 0xffffff), 1);
	KT_EXPECT_EQ(t, roce_psn_diff(0xffffff, 0), -1);
	KT_EXPECT_EQ(t, roce_psn_diff(5, 0xfffffb), 10);
	KT_EXPECT_EQ(t, roce_psn_diff(0x123456, 0x123456), 0);
}

/* 2^23 - 1 ahead is "after"; exactly 2^23 apart reads as "before". */
static void diff_half_window_edge(struct ktap *t)
{
	KT_EXPECT_EQ(t, roce_psn_diff(0x7fffff, 0), 0x7fffff);
	KT_EXPECT_EQ(t, roce_psn_diff(0x800000, 0), -0x800000);
	KT_EXPECT_EQ(t, roce_psn_diff(0, 0x800001), 0x7fffff);
}

static void ordering_across_wrap(struct ktap *t)
{
	KT_EXPECT(t, roce_psn_before(0xfffffe, 1));
	KT_EXPECT(t, roce_psn_after(1, 0xfffffe));
	KT_EXPECT(t, roce_psn_before_eq(7, 7) && roce_psn_after_eq(7, 7));
	KT_EXPECT(t, !roce_psn_before(7, 7) && !roce_psn_after(7, 7));
}

static void in_window_across_wrap(struct ktap *t)
{
	KT_EXPECT(t, roce_psn_in_window(0xfffffe, 0xfffffe, 4));
	KT_EXPECT(t, roce_psn_in_window(1, 0xfffffe, 4));
	KT_EXPECT(t, !roce_psn_in_window(2, 0xfffffe, 4));
	KT_EXPECT(t, !roce_psn_in_window(0xfffffd, 0xfffffe, 4));
}

static void in_window_sizes(struct ktap *t)
{
	KT_EXPECT(t, !roce_psn_in_window(5, 5, 0));
	KT_EXPECT(t, roce_psn_in_window(4, 5, 1u << 24));
}

static const struct ktap_case cases[] = {
	KTAP_CASE(add_wraps),
	KTAP_CASE(sub_wraps),
	KTAP_CASE(diff_is_signed_across_wrap),
	KTAP_CASE(diff_half_window_edge),
	KTAP_CASE(ordering_across_wrap),
	KTAP_CASE(in_window_across_wrap),
	KTAP_CASE(in_window_sizes),
};

KTAP_SUITE(psn_suite, "psn", cases);
