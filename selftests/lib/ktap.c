// SPDX-License-Identifier: GPL-2.0
/*
 * The TAP 13 helper of ktap.h: the running count of a test program, and
 * the case runner of the host unit tests on top of it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktap.h"

static struct {
	int planned;
	int n;
	int failed;
	int skipped;
} ktap_state;

void ktap_header(void)
{
	printf("TAP version 13\n");
	fflush(stdout);
}

void ktap_plan_count(int tests)
{
	printf("1..%d\n", tests);
	fflush(stdout);
	ktap_state.planned = tests;
}

void ktap_plan(int tests)
{
	printf("TAP version 13\n");
	ktap_plan_count(tests);
}

void ktap_vprint(const char *fmt, va_list ap)
{
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

void ktap_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vprint(fmt, ap);
	va_end(ap);
}

bool ktap_expect(bool cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return true;
	va_start(ap, fmt);
	ktap_vprint(fmt, ap);
	va_end(ap);
	return false;
}

/* One result line: "ok N<sep><name>", and " # SKIP[ why]" for a skip. */
static void ktap_line(bool pass, const char *sep, const char *name,
		      bool skip, const char *why)
{
	ktap_state.n++;
	if (!pass)
		ktap_state.failed++;
	if (skip)
		ktap_state.skipped++;
	printf("%sok %d%s%s", pass ? "" : "not ", ktap_state.n, sep, name);
	if (skip && why)
		printf(" # SKIP %s", why);
	else if (skip)
		printf(" # SKIP");
	printf("\n");
	fflush(stdout);
}

int ktap_result(int pass, const char *name)
{
	ktap_line(pass, " ", name, false, NULL);
	return pass;
}

void ktap_skip(const char *name, const char *why)
{
	ktap_line(true, " ", name, true, why);
}

int ktap_finish(void)
{
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       ktap_state.n - ktap_state.failed - ktap_state.skipped,
	       ktap_state.failed, ktap_state.skipped);
	if (ktap_state.n != ktap_state.planned) {
		printf("# planned %d tests, ran %d\n", ktap_state.planned,
		       ktap_state.n);
		return KSFT_FAIL;
	}
	if (ktap_state.failed)
		return KSFT_FAIL;
	if (ktap_state.skipped == ktap_state.n)
		return KSFT_SKIP;
	return KSFT_PASS;
}

/* ---- the case runner ---- */

bool ktap_check(struct ktap *t, bool ok, const char *file, int line,
		const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	t->failed = true;
	printf("# %s:%d: expected ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return false;
}

static bool selected(const char *suite, const char *name, const char *filter)
{
	char full[256];

	if (!filter)
		return true;
	snprintf(full, sizeof(full), "%s.%s", suite, name);
	return strstr(full, filter);
}

/* Child: run the case, report through the exit status. */
static void run_child(const struct ktap_case *tc)
{
	struct ktap t = { 0 };

	tc->run(&t);
	if (t.skip_reason && !t.failed)
		printf("# SKIP %s\n", t.skip_reason);
	fflush(stdout);
	exit(t.failed ? KSFT_FAIL : t.skip_reason ? KSFT_SKIP : KSFT_PASS);
}

static int run_case(const struct ktap_case *tc)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("# fork");
		return KSFT_FAIL;
	}
	if (pid == 0)
		run_child(tc);
	if (waitpid(pid, &status, 0) != pid)
		return KSFT_FAIL;
	if (WIFSIGNALED(status)) {
		printf("# killed by signal %d\n", WTERMSIG(status));
		return KSFT_FAIL;
	}
	switch (WEXITSTATUS(status)) {
	case KSFT_PASS:
	case KSFT_SKIP:
		return WEXITSTATUS(status);
	default:
		return KSFT_FAIL;
	}
}

int ktap_run_suites(const struct ktap_suite *const *suites, size_t n,
		    const char *filter)
{
	int total = 0, passed, ret;
	char name[256];
	size_t s, c;

	for (s = 0; s < n; s++)
		for (c = 0; c < suites[s]->ncases; c++)
			total += selected(suites[s]->name,
					  suites[s]->cases[c].name, filter);

	ktap_plan(total);
	for (s = 0; s < n; s++) {
		const struct ktap_suite *su = suites[s];

		for (c = 0; c < su->ncases; c++) {
			const struct ktap_case *tc = &su->cases[c];

			if (!selected(su->name, tc->name, filter))
				continue;
			ret = run_case(tc);
			snprintf(name, sizeof(name), "%s.%s", su->name,
				 tc->name);
			ktap_line(ret != KSFT_FAIL, " - ", name,
				  ret == KSFT_SKIP, NULL);
		}
	}
	/* kselftest's totals, then the closing line CI reads, last */
	ret = ktap_finish();
	passed = ktap_state.n - ktap_state.failed - ktap_state.skipped;
	printf("%d passed, %d failed, %d skipped\n", passed,
	       ktap_state.failed, ktap_state.skipped);
	return ret;
}
