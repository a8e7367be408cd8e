// SPDX-License-Identifier: GPL-2.0
/*
 * The data patterns of pattern.h: one generator a kind, yielding 8-byte
 * words or single bytes in order; fill and check walk them alike.
 */
#include <endian.h>
#include <string.h>

#include "ktap.h"
#include "pattern.h"

#define PHI64	0x9e3779b97f4a7c15ull	/* 2^64 / golden ratio */
#define PHI32	2654435761u		/* 2^32 / golden ratio */

struct gen {
	enum pat_kind kind;
	uint64_t seed;
	uint64_t x;	/* the state of the xorshift kinds */
	uint64_t n;	/* index of the next unit */
};

/* Bytes a unit of @kind has: 8 for the word kinds, else 1. */
static unsigned int unit_len(enum pat_kind kind)
{
	switch (kind) {
	case PAT_HASH:
	case PAT_COUNT:
	case PAT_XS64:
	case PAT_XS64B:
		return 8;
	default:
		return 1;
	}
}

static uint64_t mix64(uint64_t x)
{
	x += PHI64;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The next unit, low byte first. */
static uint64_t gen_next(struct gen *g)
{
	uint64_t n = g->n++;
	uint32_t y;

	switch (g->kind) {
	case PAT_HASH:
		return mix64((g->seed << 32) ^ n);
	case PAT_COUNT:
		return g->seed * PHI64 + n;
	case PAT_MUL:
		return (uint8_t)(((n * PHI32) >> 13) ^ g->seed);
	case PAT_XS64:
	case PAT_XS64_BYTE:
		g->x ^= g->x << 13;
		g->x ^= g->x >> 7;
		g->x ^= g->x << 17;
		return g->kind == PAT_XS64 ? g->x : (uint8_t)g->x;
	case PAT_XS64B:
		g->x ^= g->x >> 12;
		g->x ^= g->x << 25;
		g->x ^= g->x >> 27;
		return g->x;
	case PAT_XS32_BYTE:
		y = g->x;
		y ^= y << 13;
		y ^= y >> 17;
		y ^= y << 5;
		g->x = y;
		return (uint8_t)y;
	}
	return 0;
}

/* Set @g up at the unit that holds byte @base; return the unit's size. */
static unsigned int gen_start(struct gen *g, enum pat_kind kind,
			      uint64_t seed, uint64_t base)
{
	unsigned int w = unit_len(kind);
	uint64_t skip = base / w;

	memset(g, 0, sizeof(*g));
	g->kind = kind;
	g->seed = seed;
	switch (kind) {
	case PAT_XS64:
		g->x = seed * PHI64 ?: 1;
		break;
	case PAT_XS64_BYTE:
	case PAT_XS64B:
		g->x = seed * PHI64 + 1;
		break;
	case PAT_XS32_BYTE:
		g->x = (uint32_t)((uint32_t)seed * PHI32 + 1);
		break;
	default:
		/* A function of the index alone: jump there. */
		g->n = skip;
		return w;
	}
	while (skip--)
		gen_next(g);
	return w;
}

void pattern_fill(void *p, size_t len, enum pat_kind kind, uint64_t seed,
		  uint64_t base)
{
	uint8_t *q = p;
	struct gen g;
	unsigned int w = gen_start(&g, kind, seed, base), b = base % w;
	uint64_t u;
	size_t k = 0;

	while (k < len) {
		u = gen_next(&g);
		if (w == 8 && !b && len - k >= 8) {
			u = htole64(u);
			memcpy(q + k, &u, 8);
			k += 8;
			continue;
		}
		for (; b < w && k < len; b++, k++)
			q[k] = u >> (8 * b);
		b = 0;
	}
}

int64_t pattern_check(const void *p, size_t len, enum pat_kind kind,
		      uint64_t seed, uint64_t base, uint8_t *want)
{
	const uint8_t *q = p;
	struct gen g;
	unsigned int w = gen_start(&g, kind, seed, base), b = base % w;
	uint64_t u, got;
	size_t k = 0;

	while (k < len) {
		u = gen_next(&g);
		if (w == 8 && !b && len - k >= 8) {
			memcpy(&got, q + k, 8);
			if (le64toh(got) == u) {
				k += 8;
				continue;
			}
		}
		for (; b < w && k < len; b++, k++) {
			if (q[k] == (uint8_t)(u >> (8 * b)))
				continue;
			if (want)
				*want = u >> (8 * b);
			return k;
		}
		b = 0;
	}
	return -1;
}

int64_t bytes_differ(const void *a, const void *b, size_t len)
{
	const uint8_t *x = a, *y = b;
	size_t i;

	if (!memcmp(a, b, len))
		return -1;
	for (i = 0; x[i] == y[i]; i++)
		;
	return i;
}

void fill(uint8_t *p, size_t len, uint32_t seed)
{
	pattern_fill(p, len, PAT_MUL, seed, 0);
}

bool same(const uint8_t *got, const uint8_t *want, size_t len)
{
	int64_t i = bytes_differ(got, want, len);

	if (i < 0)
		return true;
	return ktap_expect(false, "byte %zu: %#x, expected %#x", (size_t)i,
			   got[i], want[i]);
}
