#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Byte-exact data integrity of every RC operation on one device (loopback):
# selftests/rc_integrity.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/rc_integrity" loop srdma0 1
