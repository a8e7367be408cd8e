#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UD datagrams on one device, checked field by field: selftests/ud_verbs.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/ud_verbs" srdma0 1
