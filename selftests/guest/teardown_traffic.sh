#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown under traffic, each case repeated: kill -9 of both ends, rdma
# link delete, netdev removal, rmmod (refused while in use, clean once
# not), and kill -9 of one end, whose peer must end with an error.
# Nothing may hang or leak: the processes end, every QP, CQ, MR and
# PD is gone, and the device (or a new one) carries traffic again. The
# harness fails the run on any kernel splat.
. "$(dirname "$0")/../lib/lib.sh"
ITER=${ITER:-2}
TOOLS="ib_write_bw ib_read_bw ib_send_bw"
pids=
# stop_traffic: kill -9 the tools. timeout(1) cannot pass a SIGKILL on, so
# its children are killed first, then timeout itself.
stop_traffic() {
	local p
	for p in $pids; do
		pkill -9 -P "$p"
	done
	[ -z "$pids" ] || { kill -9 $pids 2>/dev/null; wait $pids 2>/dev/null; }
	pids=
}

# gone TOOL: no process of TOOL is left.
gone() {
	wait_for "! pgrep -x $1" 10 || { ktap_print "still running: $(pgrep -a -x "$1")"; return 1; }
}
logs=$(mktemp -d)
trap 'stop_traffic; srdma_cleanup; rm -rf "$logs"' EXIT
# perftest's options in every case: a 60 s stream. TEARDOWN_QP_TIMEOUT:
# its QP timeout code (-u; its default 14 is 67 ms, short for a slow
# debug guest).
PERF_ARGS="-x 1 -F -s 65536 -D 60${TEARDOWN_QP_TIMEOUT:+ -u $TEARDOWN_QP_TIMEOUT}"

# running TOOL END PID LOG...: PID, TOOL's END, still runs; if it ended,
# say so with its exit status and the last lines of each LOG (the other
# end's often says why: a completion error).
running() {
	local tool=$1 end=$2 pid=$3 log
	shift 3
	kill -0 "$pid" 2>/dev/null && return
	wait "$pid"
	ktap_print "$tool $end ended too early (exit $?); the last lines of its logs:"
	for log; do
		tail -n 5 "$log" | sed "s/^/#   ${log##*/}: /"
	done
	return 1
}

up() {
	ip link del veth0 2>/dev/null
	srdma0_up
}

# traffic TOOL: server and client of TOOL on srdma0 for up to 60 s; true
# once packets flow and both still run (what follows must meet them
# running, even in a slow debug guest).
traffic() {
	local args="-d srdma0 $PERF_ARGS" tx tool=$1
	tx=$(dev_counter srdma0 tx_pkts)
	timeout 90 $1 $args >"$logs/server" 2>&1 &
	pids=$!
	wait_for "ss -Hltn 'sport = :$TOOL_PORT' | grep -q ." 60 || return
	timeout 90 $1 $args 127.0.0.1 >"$logs/client" 2>&1 &
	pids="$pids $!"
	wait_for "[ \$(dev_counter srdma0 tx_pkts) -gt $((tx + 1000)) ]" 60 || return
	set -- $pids
	running "$tool" server "$1" "$logs/server" "$logs/client" &&
		running "$tool" client "$2" "$logs/server" "$logs/client"
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
		[ -z "$(rdma resource show $res 2>/dev/null | grep -v 'comm \[')" ] ||
			left="$left $res"
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

# check NAME STEP...: every step in order must succeed. After a failure
# the next case starts from a working srdma0 again, not from the ruins.
check() {
	local name=$1 step
	shift
	for step in "$@"; do
		eval "$step" && continue
		ktap_print "failed: $step"
		stop_traffic
		[ -e /sys/class/infiniband/srdma0 ] || up
		ktap_result "$name" 1
		return
	done
	ktap_result "$name" 0
}

# Two namespaces, a device in each: the peer of a QP can die alone.
peer_up() {
	ip netns add tda && ip netns add tdb &&
	ip link add tva netns tda type veth peer name tvb netns tdb &&
	ip -n tda addr add 10.9.5.1/24 dev tva &&
	ip -n tdb addr add 10.9.5.2/24 dev tvb &&
	ip -n tda link set tva up && ip -n tdb link set tvb up &&
	ip netns exec tda rdma link add srdma1 type softrdma netdev tva &&
	ip netns exec tdb rdma link add srdma2 type softrdma netdev tvb &&
	wait_for 'ibdev_gids srdma1 | grep -q 0a09:0501 &&
		ibdev_gids srdma2 | grep -q 0a09:0502'
}

# peer_killed TOOL: kill -9 the server (srdma1) while the client (srdma2)
# streams to it: the client gets an error completion once its retries run
# out, and exits with an error in well under 30 s. The client must still
# stream when the server dies (as in traffic()): a client already done or
# failed would prove nothing.
peer_killed() {
	local out=$logs/peer_client rc t0 tx
	ip netns exec tda timeout 90 $1 -d srdma1 $PERF_ARGS >/dev/null 2>&1 &
	pids=$!
	wait_for "ip netns exec tda ss -Hltn 'sport = :$TOOL_PORT' | grep -q ." 60 ||
		return
	tx=$(dev_counter srdma2 tx_pkts)
	t0=$(date +%s)
	ip netns exec tdb timeout 90 $1 -d srdma2 $PERF_ARGS 10.9.5.1 >"$out" 2>&1 &
	local client=$!
	wait_for "[ \$(dev_counter srdma2 tx_pkts) -gt $((tx + 1000)) ]" 60 ||
		return
	running "$1" client "$client" "$out" || return
	ktap_print "$1: the server is killed $(($(date +%s) - t0)) s after the client started"
	pkill -9 -f "$1 -d srdma1"
	t0=$(date +%s)
	wait $client
	rc=$?
	ktap_print "$1 client: exit $rc after $(($(date +%s) - t0)) s: $(grep -im1 'error' "$out")"
	[ $rc -ne 0 ] || ktap_print "its last lines: $(tail -n 3 "$out" | tr '\n' ' ')"
	wait $pids 2>/dev/null
	pids=
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $(($(date +%s) - t0)) -lt 30 ]
}

ktap_plan $((ITER * 5 + 2))
srdma_cleanup
up || exit $KSFT_FAIL

for i in $(seq "$ITER"); do
	tool=$(echo $TOOLS | cut -d' ' -f$(( (i - 1) % 3 + 1 )))
	check "kill -9 during $tool ($i): no QP, CQ, MR or PD left" \
		"traffic $tool" stop_traffic "gone $tool" "wait_for no_leak 10"
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
		"gone $tool" "wait_for 'rmmod softrdma' 30" "! ls /sys/class/infiniband/srdma0 2>/dev/null" up
done
up_peers=ok
peer_up || up_peers=
for i in $(seq "$ITER"); do
	tool=$(echo $TOOLS | cut -d' ' -f$(( (i + 1) % 3 + 1 )))
	check "kill -9 of the peer during $tool ($i): the client ends with an error completion" \
		"[ -n '$up_peers' ]" "peer_killed $tool" "wait_for no_leak 10"
done
ktap_finish
