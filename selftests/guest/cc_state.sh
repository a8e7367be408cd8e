#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A QP's congestion state in "rdma -dd resource show qp" (DCQCN's rate,
# target rate, alpha and line rate; an RC QP's window), and DCQCN's line
# rate: the netdev's speed where it reports one (a tap's, which ethtool
# sets), the module parameter where set. QP1, which the core creates on
# every device, is the QP looked at: no traffic is needed.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/cc_lib.sh"
trap 'echo 0 >$CC_PARAMS/dcqcn_line_rate_mbps 2>/dev/null; ip link del srtap0 2>/dev/null; srdma_cleanup' EXIT

# qp1 DEV NAME: the driver attribute NAME of DEV's QP1 (rdma prints it drv_NAME).
qp1() {
	rdma -dd resource show qp link "$1/1" lqpn 1 |
		awk -v n="drv_$2" '{ for (i = 1; i < NF; i++) if ($i == n) print $(i + 1) }'
}

srdma_cleanup
ktap_plan 6
srdma_install_module
veth_pair veth0 veth1 10.9.0.1/24 &&
	rdma link add srdma0 type softrdma netdev veth0
ktap_result "srdma0 over a veth" $?
ktap_print "QP1: $(rdma -dd resource show qp link srdma0/1 lqpn 1 | tr -s ' \n' ' ')"
line=$(qp1 srdma0 dcqcn_line_mbps)
ktap_result "QP1's CC state shown: rate $(qp1 srdma0 dcqcn_rate_mbps), target $(qp1 srdma0 dcqcn_target_mbps), alpha $(qp1 srdma0 dcqcn_alpha), line $line Mbit/s (veth reports 10000)" \
	"$([ "$line" = 10000 ] && [ "$(qp1 srdma0 dcqcn_rate_mbps)" = 10000 ] &&
	   [ -n "$(qp1 srdma0 dcqcn_alpha)" ]; echo $?)"
echo 500 >$CC_PARAMS/dcqcn_line_rate_mbps
ktap_result "dcqcn_line_rate_mbps=500 is the line rate" \
	"$([ "$(qp1 srdma0 dcqcn_line_mbps)" = 500 ]; echo $?)"
echo 0 >$CC_PARAMS/dcqcn_line_rate_mbps

# An RC QP: ibv_rc_pingpong's server waits for its client meanwhile.
timeout 30 ibv_rc_pingpong -d srdma0 -g "$(gid_index srdma0)" -n 1 >/dev/null 2>&1 &
pid=$!
wait_for "rdma resource show qp link srdma0/1 | grep -q 'type RC'" 10
rc=$(rdma -dd resource show qp link srdma0/1 | grep 'type RC')
ktap_print "$rc"
ktap_result "an RC QP shows its window and rate" \
	"$(echo "$rc" | grep -q 'drv_cwnd_pkts [0-9]' && echo "$rc" | grep -q 'drv_dcqcn_rate_mbps [0-9]'; echo $?)"
kill $pid 2>/dev/null
wait $pid 2>/dev/null

modprobe -q tun
if ! ip tuntap add dev srtap0 mode tap 2>/dev/null ||
   ! ethtool -s srtap0 speed 1000 duplex full; then
	ktap_skip "line rate from a tap's speed" "no tap device, or its speed not settable"
	ktap_skip "line rate follows a speed change" "no tap device, or its speed not settable"
	ktap_finish
fi
ip link set srtap0 up
rdma link add srdma9 type softrdma netdev srtap0
ktap_result "line rate from a tap's speed: 1000 Mbit/s ($(qp1 srdma9 dcqcn_line_mbps))" \
	"$([ "$(qp1 srdma9 dcqcn_line_mbps)" = 1000 ]; echo $?)"
# A link change (here down and up) is when a netdev's speed is read again.
ethtool -s srtap0 speed 2500 duplex full && ip link set srtap0 down &&
	ip link set srtap0 up
ktap_result "line rate follows a speed change: 2500 Mbit/s ($(qp1 srdma9 dcqcn_line_mbps))" \
	"$([ "$(qp1 srdma9 dcqcn_line_mbps)" = 2500 ]; echo $?)"

ktap_finish
