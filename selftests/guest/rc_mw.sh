#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Memory windows on one device: binds, access, invalidation, a window
# pinning its MR: selftests/rc_mw.c, run as an unprivileged user.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
# Pages the test user may read but not write: a window must never open
# them to a remote write.
ro=$(mktemp) || exit $KSFT_FAIL
trap 'rm -f "$ro"; srdma_cleanup' EXIT
head -c 65536 /dev/urandom >"$ro" && chmod 644 "$ro" || exit $KSFT_FAIL
as_nobody "$PROGS/rc_mw" srdma0 1 "$ro"
