#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# XRC over srdma0 with the standard tool: initiator QPs send to SRQs of
# an XRC domain through one target QP per client (ibv_xsrq_pingpong).
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

xsrq_pingpong() {	# xsrq_pingpong SIZE ITERS [OPTIONS...]
	local size=$1 iters=$2
	shift 2
	local args="-d srdma0 -g 1 -s $size -n $iters $*"
	client_server "ibv_xsrq_pingpong -s $size -n $iters $*" \
		"ibv_xsrq_pingpong $args" ibv_xsrq_pingpong $args 127.0.0.1
}

ktap_plan 3
srdma_cleanup
srdma0_up || exit $KSFT_FAIL

xsrq_pingpong 4096 10
xsrq_pingpong 1 100
xsrq_pingpong 65536 20 -e
ktap_finish
