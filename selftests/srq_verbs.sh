#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SRQs on one device: sharing, the limit event, errors: selftests/srq_verbs.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/srq_verbs" srdma0 1
