// SPDX-License-Identifier: GPL-2.0
/*
 * TAP 13 runner: runs every suite listed below, in order, each case in a
 * child process so that a crash or sanitizer report fails that case only.
 *
 * Usage: unit_tests [substring]   (run only cases whose name contains it)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktap.h"
#include "suites.h"

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

static const struct ktap_suite *const suites[] = {
	&hdr_suite,
	&opcode_suite,
	&parse_suite,
	&icrc_suite,
	&vectors_suite,
	&mutation_suite,
	&psn_suite,
	&dcqcn_suite,
	&cwnd_suite,
};

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

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	unsigned int total = 0, n = 0, passed = 0, failed = 0, skipped = 0;
	size_t s, c;

	for (s = 0; s < KTAP_ARRAY_SIZE(suites); s++)
		for (c = 0; c < suites[s]->ncases; c++)
			total += selected(suites[s]->name,
					  suites[s]->cases[c].name, filter);

	printf("TAP version 13\n1..%u\n", total);
	for (s = 0; s < KTAP_ARRAY_SIZE(suites); s++) {
		const struct ktap_suite *su = suites[s];

		for (c = 0; c < su->ncases; c++) {
			const struct ktap_case *tc = &su->cases[c];

			if (!selected(su->name, tc->name, filter))
				continue;
			n++;
			switch (run_case(tc)) {
			case KSFT_PASS:
				passed++;
				printf("ok %u - %s.%s\n", n, su->name,
				       tc->name);
				break;
			case KSFT_SKIP:
				skipped++;
				printf("ok %u - %s.%s # SKIP\n", n, su->name,
				       tc->name);
				break;
			default:
				failed++;
				printf("not ok %u - %s.%s\n", n, su->name,
				       tc->name);
				break;
			}
		}
	}
	printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);

	if (failed)
		return KSFT_FAIL;
	return passed ? KSFT_PASS : KSFT_SKIP;
}
