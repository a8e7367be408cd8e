#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# IBA 1.5 memory placement on one device: ATOMIC WRITE and FLUSH, their
# completions and the errors a responder owes (selftests/rc_placement.c).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
# check-release.sh builds it for the release's rdma-core: RC_PLACEMENT.
"${RC_PLACEMENT:-$SELFTESTS/rc_placement}" srdma0 1
