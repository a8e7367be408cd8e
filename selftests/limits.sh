#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC at its limits on one device: selftests/rc_limits.c (CQ overrun,
# max_msg_sz, large WRITE/READ, SQE).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/rc_limits" srdma0 1
