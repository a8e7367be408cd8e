/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal TAP 13 reporter in the kselftest style: one "ok"/"not ok"
 * line per behaviour, "# SKIP" for an absent capability, and the
 * kselftest exit codes (0 pass, 1 fail, 4 skip).
 */
#ifndef SRDMA_KTAP_H
#define SRDMA_KTAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

struct ktap {
	int planned;
	int n;
	int failed;
	int skipped;
};

static struct ktap ktap;

static inline void ktap_plan(int tests)
{
	printf("TAP version 13\n1..%d\n", tests);
	fflush(stdout);
	ktap.planned = tests;
}

static inline void ktap_vprint(const char *fmt, va_list ap)
{
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline void ktap_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vprint(fmt, ap);
	va_end(ap);
}

/* If @cond is false, say why as a diagnostic; returns @cond for chaining. */
static inline bool ktap_expect(bool cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return true;
	va_start(ap, fmt);
	ktap_vprint(fmt, ap);
	va_end(ap);
	return false;
}

/* Record one behaviour's result; returns @pass so callers can chain. */
static inline int ktap_result(int pass, const char *name)
{
	ktap.n++;
	if (!pass)
		ktap.failed++;
	printf("%sok %d %s\n", pass ? "" : "not ", ktap.n, name);
	fflush(stdout);
	return pass;
}

static inline void ktap_skip(const char *name, const char *why)
{
	ktap.n++;
	ktap.skipped++;
	printf("ok %d %s # SKIP %s\n", ktap.n, name, why);
	fflush(stdout);
}

/* Exit with the kselftest code for what was reported. */
static inline int ktap_finish(void)
{
	if (ktap.n != ktap.planned) {
		printf("# planned %d tests, ran %d\n", ktap.planned, ktap.n);
		return KSFT_FAIL;
	}
	if (ktap.failed)
		return KSFT_FAIL;
	if (ktap.skipped == ktap.n)
		return KSFT_SKIP;
	return KSFT_PASS;
}

#endif /* SRDMA_KTAP_H */
