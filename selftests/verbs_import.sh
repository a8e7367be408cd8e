#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Sharing a context's objects: ibv_import_device, ibv_import_pd and
# ibv_import_mr on one device (selftests/verbs_import.c).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/verbs_import" srdma0 1
