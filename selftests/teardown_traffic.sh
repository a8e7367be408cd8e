#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown under traffic, each case repeated: kill -9 of both ends, rdma
# link delete, netdev removal, and rmmod (refused while in use, clean once
# not). Nothing may hang or leak: the processes end, every QP, CQ, MR and
# PD is gone, and the device (or a new one) carries traffic again. The
# harness fails the run on any kernel splat.
. "$(dirname "$0")/lib.sh"
ITER=${ITER:-2}
TOOLS="ib_write_bw ib_read_bw ib_send_bw"
pids=
stop_traffic() {
	[ -z "$pids" ] || { kill -9 $pids 2>/dev/null; wait $pids 2>/dev/null; }
	pids=
}
trap 'stop_traffic; srdma_cleanup' EXIT

up() {
	veth_pair veth0 veth1 10.9.0.1/24 2>/dev/null
	rdma link add srdma0 type softrdma netdev veth0 &&
		wait_for 'ibdev_gids srdma0 | grep -q ffff:0a09:0001'
}

# traffic TOOL: server and client of TOOL on srdma0 for up to 20 s; true
# once packets flow.
traffic() {
	local args="-d srdma0 -x 1 -F -s 65536 -D 20" tx
	tx=$(dev_counter srdma0 tx_pkts)
	timeout 60 $1 $args >/dev/null 2>&1 &
	pids=$!
	wait_for "ss -Hltn 'sport = :$TOOL_PORT' | grep -q ." 60 || return
	timeout 60 $1 $args 127.0.0.1 >/dev/null 2>&1 &
	pids="$pids $!"
	wait_for "[ \$(dev_counter srdma0 tx_pkts) -gt $((tx + 1000)) ]" 60
}

# Both processes end by themselves within 30 s.
ended() {
	local p
	for p in $pids; do
		wait_for "! kill -0 $p" 30 || return
	done
	wait $pids 2>/dev/null
	pids=
}

# No verbs object of any process is left on any device.
no_leak() {
	local res left=
	for res in qp cq mr pd; do
		[ -z "$(rdma resource show $res 2>/dev/null)" ] || left="$left $res"
	done
	[ -z "$left" ] || { ktap_print "left over:$left"; rdma resource show; }
	[ -z "$left" ]
}

works() {
	local args="-d srdma0 -g 1 -s 4096 -n 20"
	timeout 60 ibv_rc_pingpong $args >/dev/null 2>&1 &
	local pid=$!
	wait_for "ss -Hltn 'sport = :$TOOL_PORT' | grep -q ." 60
	timeout 60 ibv_rc_pingpong $args 127.0.0.1 >/dev/null 2>&1
	local rc=$?
	wait $pid && [ $rc -eq 0 ]
}

# check NAME STEP...: every step in order must succeed.
check() {
	local name=$1 step
	shift
	for step in "$@"; do
		eval "$step" || { ktap_print "failed: $step"; stop_traffic; ktap_result "$name" 1; return; }
	done
	ktap_result "$name" 0
}

ktap_plan $((ITER * 4 + 2))
srdma_cleanup
up || exit $KSFT_FAIL

for i in $(seq "$ITER"); do
	tool=$(echo $TOOLS | cut -d' ' -f$(( (i - 1) % 3 + 1 )))
	check "kill -9 during $tool ($i): no QP, CQ, MR or PD left" \
		"traffic $tool" stop_traffic "wait_for no_leak 10"
done
check "the device carries traffic after the kills" works

for i in $(seq "$ITER"); do
	tool=$(echo $TOOLS | cut -d' ' -f$(( i % 3 + 1 )))
	check "rdma link delete during $tool ($i): both ends end, nothing left" \
		"traffic $tool" "timeout 30 rdma link delete srdma0" ended \
		"wait_for no_leak 10" up
done

for i in $(seq "$ITER"); do
	tool=$(echo $TOOLS | cut -d' ' -f$(( (i + 1) % 3 + 1 )))
	check "netdev removal during $tool ($i): the device goes, both ends end" \
		"traffic $tool" "ip link del veth0" \
		"wait_for '[ ! -e /sys/class/infiniband/srdma0 ]' 30" ended \
		"wait_for no_leak 10" up
done
check "a new device carries traffic after the removals" works

for i in $(seq "$ITER"); do
	tool=$(echo $TOOLS | cut -d' ' -f$(( (i - 1) % 3 + 1 )))
	check "rmmod during $tool ($i): refused, then clean once the traffic is killed" \
		"traffic $tool" "! rmmod softrdma 2>/dev/null" stop_traffic \
		"wait_for 'rmmod softrdma' 30" "! ls /sys/class/infiniband/srdma0 2>/dev/null" up
done
ktap_finish
