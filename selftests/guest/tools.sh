#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The standard tools users run, unchanged, over srdma0: ibv_rc_pingpong
# and perftest, server and client on the same device.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

pingpong() {	# pingpong SIZE ITERS [OPTIONS...]
	local size=$1 iters=$2
	shift 2
	local args="-d srdma0 -g ${GID:-1} -s $size -n $iters $*"
	client_server "ibv_rc_pingpong -s $size $*" \
		"ibv_rc_pingpong $args" ibv_rc_pingpong $args 127.0.0.1
}

perftest() {	# perftest TOOL SIZE ITERS
	local args="-d srdma0 -x 1 -F -s $2 -n $3"
	client_server "$1 -s $2" "$1 $args" $1 $args 127.0.0.1
}

ktap_plan 19
srdma_cleanup
srdma0_up || exit $KSFT_FAIL

pingpong 1 100
pingpong 4096 100
pingpong 1048576 10
pingpong 1 100 -e
pingpong 65536 50 -e
pingpong 1000000 10 -e
perftest ib_send_bw 65536 200
perftest ib_write_bw 65536 200
perftest ib_read_bw 65536 200
perftest ib_send_lat 8 200
perftest ib_write_lat 8 200
perftest ib_read_lat 8 200
perftest ib_write_bw 1048576 20
perftest ib_read_bw 4096 200

# Path MTUs other than the port's (loopback: the link MTU is not a limit).
pingpong 10000 20 -m 256
pingpong 10000 20 -m 2048
pingpong 10000 20 -m 4096

# An IPv6 GID: the IPv6 address added below is GID index 2.
ip addr add fd00:9::1/64 dev veth0 nodad
wait_for 'ibdev_gids srdma0 | grep -qx fd00:0009:0000:0000:0000:0000:0000:0001'
GID=2 pingpong 4096 100
GID=2 pingpong 1000000 10 -e
ktap_finish
