#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# XRC on one device: SRQ routing, every operation, refusals:
# selftests/xrc_verbs.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/xrc_verbs" srdma0 1
