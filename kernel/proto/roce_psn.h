/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 24-bit packet sequence number arithmetic.
 *
 * PSNs wrap at 2^24.  Two PSNs are ordered by their distance modulo 2^24
 * read as a signed 24-bit number: b is "after" a when b lies in the half
 * of the PSN space (2^23) that follows a.  The IB spec sizes the valid
 * and duplicate regions of the responder by the same half-window rule.
 */
#ifndef SOFTRDMA_ROCE_PSN_H
#define SOFTRDMA_ROCE_PSN_H

#include "proto_port.h"

#define ROCE_PSN_MASK		0x00ffffffu
#define ROCE_PSN_HALF		0x00800000u

static inline u32 roce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

static inline u32 roce_psn_sub(u32 psn, u32 n)
{
	return (psn - n) & ROCE_PSN_MASK;
}

static inline u32 roce_psn_next(u32 psn)
{
	return roce_psn_add(psn, 1);
}

/**
 * roce_psn_diff() - signed distance from @b to @a
 * @a: PSN
 * @b: PSN
 *
 * Return: a - b as a value in [-2^23, 2^23): positive when @a is after @b.
 */
static inline s32 roce_psn_diff(u32 a, u32 b)
{
	/* Move bit 23 to the sign bit, then shift back arithmetically. */
	return (s32)((a - b) << 8) >> 8;
}

static inline bool roce_psn_before(u32 a, u32 b)
{
	return roce_psn_diff(a, b) < 0;
}

static inline bool roce_psn_after(u32 a, u32 b)
{
	return roce_psn_diff(a, b) > 0;
}

static inline bool roce_psn_before_eq(u32 a, u32 b)
{
	return roce_psn_diff(a, b) <= 0;
}

static inline bool roce_psn_after_eq(u32 a, u32 b)
{
	return roce_psn_diff(a, b) >= 0;
}

/**
 * roce_psn_in_window() - is @psn in the @size PSNs starting at @start?
 * @psn: PSN to test
 * @start: first PSN of the window
 * @size: window length, at most 2^24
 *
 * Return: true if @psn is one of start, start+1, ... start+size-1 (mod 2^24).
 */
static inline bool roce_psn_in_window(u32 psn, u32 start, u32 size)
{
	return ((psn - start) & ROCE_PSN_MASK) < size;
}

#endif /* SOFTRDMA_ROCE_PSN_H */
