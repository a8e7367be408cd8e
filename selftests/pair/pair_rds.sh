#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RDS over RDMA between two hosts (vm-pair.sh): rds_rdma carries AF_RDS
# messages and RDS's own RDMA operations (rds_stream.c; RDS sends to a
# local address over its loopback transport and rds_rdma lives in the
# initial namespace only, so this needs two hosts). Host a serves, host b
# drives and reports: first over softrdma on both; then host b deletes
# its device under a flood of messages (the sender still ends, and a new
# device serves again); with RXE_REFERENCE=1, then over rdma_rxe on both,
# with latency and bandwidth side by side.
. "$(dirname "$0")/../lib/lib.sh"

# rds_rdma gives every new device a PD and MR pools of its own (an
# ib_client): it goes at the end, and must be able to. Before the last
# device (rdma_rxe's), so that no RDS reconnect races its delete: the
# rdma_rxe of 6.1 refuses such a QP (-EOPNOTSUPP) and then WARNs in
# rxe_pool_cleanup() at the dealloc (1 run in many).
cleanup() {
	modprobe -r rds_rdma rds 2>/dev/null
	srdma_cleanup
	modprobe -r rds_rdma rds 2>/dev/null
}
trap cleanup EXIT
PORT=18700
SYNC="$VM_SCRIPTS/vm-sync.sh"

if ! modprobe rds_rdma; then
	echo "1..0 # SKIP no rds_rdma module"
	exit $KSFT_SKIP
fi

# run_once TAG: one rds_stream exchange over $DEV, a serving, b driving.
run_once() {
	local out
	"$SYNC" barrier "rds-$1" 120 || return
	if [ "$VM_HOST" = a ]; then
		out=$(timeout 300 "$PROGS/rds_stream" server "$VM_IP" $PORT 2>&1)
		ktap_result "$1: rds_stream server on $DEV" $?
		echo "$out"
	else
		sleep 2
		ktap_fold "$1: " < <(timeout 300 "$PROGS/rds_stream" client \
			"$VM_IP" "$VM_PEER_IP" $PORT 2>&1; echo "# exit $?")
		[ "$ktap_fold_rc" = 0 ] ||
			ktap_print "$1: rds_stream client exited with ${ktap_fold_rc:-?}"
		if [ "$1" = softrdma ]; then
			ktap_check "softrdma: a loss-free link: no resend, no sequence NAK" \
				in_order "$DEV"
		fi
	fi
}

# Host b's device goes away while its RDS sender floods host a: the
# sender ends on time, and then a new device serves again (run_once).
device_gone() {
	local pid rc=0
	"$SYNC" barrier rds-flood 120 || return
	if [ "$VM_HOST" = a ]; then
		timeout 120 "$PROGS/rds_stream" server "$VM_IP" $PORT &
		pid=$!
		"$SYNC" barrier rds-gone 180
		kill $pid 2>/dev/null
		wait $pid
		ktap_result "softrdma: the server survives its peer's device going" 0
		return
	fi
	sleep 2
	timeout 90 "$PROGS/rds_stream" flood "$VM_IP" "$VM_PEER_IP" $PORT 20 &
	pid=$!
	sleep 5
	rdma link delete "$DEV" || rc=1
	wait $pid || { ktap_print "the sender did not end well"; rc=1; }
	ktap_result "softrdma: $DEV deleted under an RDS flood, the sender ends" $rc
	"$SYNC" barrier rds-gone 180
	pair_device_up || ktap_print "no new device"
}

# A number from a run's log: the latency (us) or bandwidth (MB/s) line.
metric() {
	case $1 in
	lat) sed -n 's/^# latency: .* \([0-9.]*\) us each$/\1/p' "$2" ;;
	bw) sed -n 's/^# bandwidth: .* \([0-9.]*\) MB\/s$/\1/p' "$2" ;;
	esac
}

if [ "$VM_HOST" = a ]; then
	ktap_plan_ref 3 1
else
	ktap_plan_ref 12 5
fi
log=$(mktemp -d)
pair_device_up || ktap_print "$VM_HOST: no device"
run_once softrdma >"$log/softrdma"
cat "$log/softrdma"
device_gone
run_once softrdma-again
if rxe_reference; then
	pair_rxe_up || ktap_print "$VM_HOST: rxe0 did not come up"
	run_once rxe >"$log/rxe"
	cat "$log/rxe"
fi
if [ "$VM_HOST" = b ] && rxe_reference; then
	for m in "lat:latency:us" "bw:bandwidth:MB/s"; do
		IFS=: read -r key what unit <<<"$m"
		s=$(metric "$key" "$log/softrdma") r=$(metric "$key" "$log/rxe")
		ktap_print "RDS $what: softrdma ${s:-?} $unit, rxe ${r:-?} $unit," \
			"softrdma/rxe $(ratio "$s" "$r")"
	done
fi
rm -rf "$log"
ktap_finish
