#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared receive queues over srdma0 with the standard tools: many QPs
# take their receives off one SRQ (ibv_srq_pingpong, perftest --use-srq).
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

srq_pingpong() {	# srq_pingpong SIZE ITERS [OPTIONS...]
	local size=$1 iters=$2
	shift 2
	local args="-d srdma0 -g 1 -s $size -n $iters -c $*"
	client_server "ibv_srq_pingpong -s $size $*" \
		"ibv_srq_pingpong $args" ibv_srq_pingpong $args 127.0.0.1
}

perftest() {	# perftest TOOL TRANSPORT SIZE ITERS
	local args="-d srdma0 -x 1 -F -c $2 -s $3 -n $4 --use-srq"
	client_server "$1 -c $2 -s $3 --use-srq" "$1 $args" $1 $args 127.0.0.1
}

ktap_plan 6
srdma_cleanup
srdma0_up || exit $KSFT_FAIL

srq_pingpong 4096 100
srq_pingpong 1 200 -q 4
srq_pingpong 65536 20 -q 8 -e
perftest ib_send_bw RC 65536 200
perftest ib_send_bw UD 1024 1000
perftest ib_send_lat RC 8 200
ktap_finish
