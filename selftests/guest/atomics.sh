#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC atomics over srdma0 with perftest: CMP_AND_SWP and FETCH_AND_ADD,
# server and client on the same device.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

perftest() {	# perftest TOOL ATOMIC ITERS
	local args="-d srdma0 -x 1 -F -A $2 -n $3"
	client_server "$1 -A $2" "$1 $args" $1 $args 127.0.0.1
}

ktap_plan 4
srdma_cleanup
srdma0_up || exit $KSFT_FAIL

perftest ib_atomic_bw CMP_AND_SWAP 2000
perftest ib_atomic_bw FETCH_AND_ADD 2000
perftest ib_atomic_lat CMP_AND_SWAP 500
perftest ib_atomic_lat FETCH_AND_ADD 500
ktap_finish
