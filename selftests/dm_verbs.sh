#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Device memory on one device: alloc_dm, memcpy to and from it, zero-based
# MRs over it and RDMA into and out of it (selftests/dm_verbs.c).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/dm_verbs" srdma0 1
