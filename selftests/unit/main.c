// SPDX-License-Identifier: GPL-2.0
/*
 * The host unit tests: every suite listed below, in order, through the
 * case runner of ../lib/ktap.c.
 *
 * Usage: unit_tests [substring]   (run only cases whose name contains it)
 */
#include "ktap.h"
#include "suites.h"

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
	&rtt_suite,
};

int main(int argc, char **argv)
{
	return ktap_run_suites(suites, KTAP_ARRAY_SIZE(suites),
			       argc > 1 ? argv[1] : NULL);
}
