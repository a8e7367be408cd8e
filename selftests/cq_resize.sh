#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# resize_cq on one device: sizes, unpolled completions kept: selftests/cq_resize.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/cq_resize" srdma0 1
