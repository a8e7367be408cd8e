#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The UD and UC transports with the standard tools over srdma0, server
# and client on the same device: ibv_ud_pingpong, ibv_uc_pingpong and
# perftest's -c UD / -c UC variants.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

pingpong() {	# pingpong TOOL SIZE ITERS [OPTIONS...]
	local tool=$1 size=$2 iters=$3
	shift 3
	local args="-d srdma0 -g ${GID:-1} -s $size -n $iters $*"
	client_server "$tool -s $size $*" \
		"$tool $args" $tool $args 127.0.0.1
}

perftest() {	# perftest TOOL TRANSPORT SIZE ITERS
	local args="-d srdma0 -x 1 -F -c $2 -s $3 -n $4"
	client_server "$1 -c $2 -s $3" "$1 $args" $1 $args 127.0.0.1
}

ktap_plan 13
srdma_cleanup
srdma0_up || exit $KSFT_FAIL

# UD: a datagram fits the port's MTU (1024 over a 1500-byte veth).
pingpong ibv_ud_pingpong 1 100
pingpong ibv_ud_pingpong 1024 100
pingpong ibv_ud_pingpong 512 100 -e
perftest ib_send_bw UD 1024 1000
perftest ib_send_bw UD 64 1000
perftest ib_send_lat UD 8 200

# UC: messages of many packets, no acknowledgements.
pingpong ibv_uc_pingpong 1 100
pingpong ibv_uc_pingpong 65536 50
pingpong ibv_uc_pingpong 4096 100 -e
perftest ib_send_bw UC 65536 200
perftest ib_write_bw UC 65536 200
perftest ib_send_lat UC 8 200
perftest ib_write_lat UC 8 200
ktap_finish
