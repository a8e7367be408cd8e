/* SPDX-License-Identifier: GPL-2.0 */
/* Every suite the runner knows; each is defined in its own test_*.c. */
#ifndef SOFTRDMA_UNIT_SUITES_H
#define SOFTRDMA_UNIT_SUITES_H

#include "ktap.h"

extern const struct ktap_suite hdr_suite;
extern const struct ktap_suite opcode_suite;
extern const struct ktap_suite parse_suite;
extern const struct ktap_suite icrc_suite;
extern const struct ktap_suite vectors_suite;
extern const struct ktap_suite mutation_suite;
extern const struct ktap_suite psn_suite;
extern const struct ktap_suite dcqcn_suite;
extern const struct ktap_suite cwnd_suite;
extern const struct ktap_suite rtt_suite;

#endif /* SOFTRDMA_UNIT_SUITES_H */
