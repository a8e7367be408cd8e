/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TAP 13 helper of every C test, in the kselftest style: one
 * "ok"/"not ok" line per behaviour, "# SKIP" for an absent capability,
 * and the kselftest exit codes (0 pass, 1 fail, 4 skip).
 *
 * Two ways in: a test program reports its results in turn (ktap_plan,
 * ktap_result, ktap_finish), or a runner calls listed cases, each in a
 * child process (ktap_run_suites: the host unit tests).
 */
#ifndef SRDMA_KTAP_H
#define SRDMA_KTAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define KTAP_PRINTF(f, a)	__attribute__((format(printf, f, a)))

/* "TAP version 13" and the plan. */
void ktap_plan(int tests);
/* The plan alone, for a program that said "TAP version 13" already. */
void ktap_header(void);
void ktap_plan_count(int tests);

/* A "# " diagnostic line. */
void ktap_vprint(const char *fmt, va_list ap);
void ktap_print(const char *fmt, ...) KTAP_PRINTF(1, 2);

/* If @cond is false, say why as a diagnostic; returns @cond for chaining. */
bool ktap_expect(bool cond, const char *fmt, ...) KTAP_PRINTF(2, 3);

/* Record one behaviour's result; returns @pass so callers can chain. */
int ktap_result(int pass, const char *name);
void ktap_skip(const char *name, const char *why);

/* The kselftest exit code for what was reported. */
int ktap_finish(void);

/* ---- the case runner ---- */

/* What one case found, for the KT_* checks. */
struct ktap {
	bool		failed;
	const char	*skip_reason;
};

struct ktap_case {
	const char	*name;
	void		(*run)(struct ktap *t);
};

struct ktap_suite {
	const char		*name;
	const struct ktap_case	*cases;
	size_t			ncases;
};

#define KTAP_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define KTAP_CASE(fn)		{ #fn, fn }
#define KTAP_SUITE(var, name, arr) \
	const struct ktap_suite var = { name, arr, KTAP_ARRAY_SIZE(arr) }

/*
 * Run every case of @suites whose "suite.case" name holds @filter (all
 * if NULL), each in a child so that a crash fails that case alone: one
 * "ok N - suite.case" line each, then "P passed, F failed, S skipped".
 * Return: the kselftest exit code.
 */
int ktap_run_suites(const struct ktap_suite *const *suites, size_t n,
		    const char *filter);

bool ktap_check(struct ktap *t, bool ok, const char *file, int line,
		const char *fmt, ...) KTAP_PRINTF(5, 6);

/* Record a failure and go on; evaluates to whether @cond held. */
#define KT_EXPECT(t, cond) \
	ktap_check(t, !!(cond), __FILE__, __LINE__, "%s", #cond)

#define KT_EXPECT_EQ(t, a, b) ({					\
	unsigned long long _a = (a), _b = (b);				\
	ktap_check(t, _a == _b, __FILE__, __LINE__,			\
		   "%s == %s (0x%llx != 0x%llx)", #a, #b, _a, _b);	\
})

/* Stop the case at the first failure: later checks would be noise. */
#define KT_ASSERT(t, cond)						\
	do {								\
		if (!KT_EXPECT(t, cond))				\
			return;						\
	} while (0)

#define KT_ASSERT_EQ(t, a, b)						\
	do {								\
		if (!KT_EXPECT_EQ(t, a, b))				\
			return;						\
	} while (0)

#define KT_SKIP(t, reason)						\
	do {								\
		(t)->skip_reason = (reason);				\
		return;							\
	} while (0)

#endif /* SRDMA_KTAP_H */
