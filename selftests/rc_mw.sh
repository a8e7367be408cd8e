#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Memory windows on one device: binds, access, invalidation: selftests/rc_mw.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/rc_mw" srdma0 1
