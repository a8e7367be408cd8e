#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A device deleted under a process that uses it: poll_cq and the post calls
# fail from then on and report nothing from the rings (selftests/verbs_removal.c).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/verbs_removal" srdma0 1
