#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging on one device: faults on either side, a changed
# mapping, unmapped memory, prefetch: selftests/odp_verbs.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/odp_verbs" srdma0 1
