#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The extended verbs on one device: selftests/verbs_ex.c (ibv_create_qp_ex
# with the ibv_wr_* API for every RC operation and a UD send,
# ibv_create_cq_ex polled with start/next/end_poll, the EOPNOTSUPP and
# EINVAL answers).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/verbs_ex" srdma0 1
