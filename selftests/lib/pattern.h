/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Data patterns the C tests write into buffers and check on the other
 * side. Each kind is the exact byte sequence one test has always used
 * (a peer on another host may run an older build), so the kinds differ
 * in formula; fill and check are shared.
 */
#ifndef SRDMA_PATTERN_H
#define SRDMA_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pat_kind {
	/*
	 * Byte i: byte i % 8 (little endian) of a 64-bit hash of
	 * (seed << 32 | i / 8); any byte can be had alone (rc_integrity).
	 */
	PAT_HASH,
	/*
	 * 64-bit word i: seed * 2^64/phi + i, little endian (mpi_check).
	 */
	PAT_COUNT,
	/*
	 * Byte i: ((i * 2654435761) >> 13) ^ seed (the loopback tests).
	 */
	PAT_MUL,
	/*
	 * Word i: xorshift64 (13, 7, 17) after i + 1 steps from
	 * seed * 2^64/phi (1 if that is 0), little endian (rc_stream).
	 */
	PAT_XS64,
	/*
	 * Byte i: the low byte of xorshift64 (13, 7, 17) after i + 1 steps
	 * from seed * 2^64/phi + 1 (rds_stream).
	 */
	PAT_XS64_BYTE,
	/*
	 * Word i: xorshift64 (12, 25, 27) after i + 1 steps from
	 * seed * 2^64/phi + 1, little endian (hostile_user).
	 */
	PAT_XS64B,
	/*
	 * Byte i: the low byte of xorshift32 (13, 17, 5) after i + 1 steps
	 * from (uint32_t)seed * 2654435761 + 1 (roce_inject).
	 */
	PAT_XS32_BYTE,
};

/* Write bytes @base .. @base + @len - 1 of pattern (@kind, @seed) to @p. */
void pattern_fill(void *p, size_t len, enum pat_kind kind, uint64_t seed,
		  uint64_t base);

/*
 * Compare @p with bytes @base .. @base + @len - 1 of the pattern.
 * Return: the offset in @p of the first wrong byte, or -1; @want (if
 * not NULL) gets the byte that belonged there.
 */
int64_t pattern_check(const void *p, size_t len, enum pat_kind kind,
		      uint64_t seed, uint64_t base, uint8_t *want);

/* Offset of the first byte where @a and @b differ, or -1. */
int64_t bytes_differ(const void *a, const void *b, size_t len);

/* The loopback tests' pattern: PAT_MUL of @seed from byte 0. */
void fill(uint8_t *p, size_t len, uint32_t seed);

/* @got is @want, else a TAP diagnostic names the first wrong byte. */
bool same(const uint8_t *got, const uint8_t *want, size_t len);

#endif /* SRDMA_PATTERN_H */
