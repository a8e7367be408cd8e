#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The "make demo" guest: create srdma0 over a veth pair the way a user
# would, show what libibverbs sees and run a few tools over it, ending
# with rping -V through rdma_cm.
. "$(dirname "$0")/../selftests/lib/lib.sh"
set -e

srdma_install_module
veth_pair veth0 veth1 10.9.0.1/24
ip addr add fd00:9::1/64 dev veth0 nodad

step() { printf '\n$ %s\n' "$*"; "$@"; }
# server_client TOOL ARGS...: TOOL's server in the background, then its
# client against it over srdma0 (loopback through the device).
server_client() {
	local tool=$1
	shift
	"$tool" "$@" >/dev/null 2>&1 &
	wait_for "ss -Hltn 'sport = :18515' | grep -q ." 60
	step "$tool" "$@" 127.0.0.1
	wait
}

step rdma link add srdma0 type softrdma netdev veth0
step rdma link show
step ibv_devices
step ibv_devinfo -v -d srdma0
wait_for 'ibdev_gids srdma0 | grep -q ffff:0a09:0001'
server_client ibv_rc_pingpong -d srdma0 -g 1 -s 4096 -n 1000
server_client ib_write_bw -d srdma0 -x 1 -F -s 65536 -n 500
# rdma_cm: addresses, not QP numbers; CM MADs on the device's QP1.
modprobe rdma_ucm
rping -s -a 10.9.0.1 -C 10 >/dev/null 2>&1 &
wait_for "rdma resource show cm_id | grep -q LISTEN" 30
step rping -c -a 10.9.0.1 -C 10 -V -v
wait
step rdma link delete srdma0
