/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny TAP 13 test runner for host-side unit tests.
 *
 * Each test file defines a suite of cases; ktap.c runs every suite and
 * prints one "ok N - suite.case" / "not ok N - ..." line per case, then a
 * closing "P passed, F failed, S skipped" line.  Exit status: 0 if none
 * failed, 1 if any failed, 4 (kselftest "skip") if all were skipped.
 */
#ifndef SOFTRDMA_KTAP_H
#define SOFTRDMA_KTAP_H

#include <stdbool.h>
#include <stddef.h>

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

bool ktap_check(struct ktap *t, bool ok, const char *file, int line,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

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

#endif /* SOFTRDMA_KTAP_H */
