#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC atomics on one device, checked value by value: selftests/rc_atomic.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/rc_atomic" srdma0 1
