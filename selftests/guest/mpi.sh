#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Open MPI over UCX on one host: two ranks on one device looping back to
# its own address, srdma0; with RXE_REFERENCE=1, then on rdma_rxe's rxe0
# in the same setup, side by side. Each run's messages are checked
# (mpi_check), softrdma's counters show that they crossed the device in
# order, and ucx_perftest's latency and bandwidth are given beside MPI's.
# Two hosts: pair_mpi.sh.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/mpi_lib.sh"
trap srdma_cleanup EXIT

reason=$(mpi_skip_reason)
[ -z "$reason" ] || { echo "1..0 # SKIP $reason"; exit $KSFT_SKIP; }

# The bytes mpi_check's ping-pongs and bandwidth run (5 rounds of 8 MiB)
# send at least.
MPI_MIN_BYTES=$((MPI_PINGPONG_BYTES + 5 * 8 * 1048576))

# perf_pair IBDEV OUT ARGS...: ucx_perftest's server and client on IBDEV,
# the client's output in OUT.
perf_pair() {
	local dev=$1 out=$2 pid rc
	shift 2
	timeout "$MPI_TIMEOUT" $(ucx_perf_cmd "$dev") "$@" >/dev/null 2>&1 &
	pid=$!
	wait_for "ss -Hltn 'sport = :$UCX_PORT' | grep -q ." 60
	timeout "$MPI_TIMEOUT" $(ucx_perf_cmd "$dev") "$@" 10.9.0.1 >"$out" 2>&1
	rc=$?
	wait $pid || rc=1
	! grep -q 'UCX  ERROR' "$out" || rc=1
	[ $rc -eq 0 ] || mpi_errors "$out"
	return $rc
}

# known_failure IBDEV OUT: the reason to give if OUT, a failed run on
# IBDEV, failed as rdma_rxe's runs do here: UCX's endpoints over rxe0,
# ud_verbs and rc_verbs alike, time out on this loss-free loopback.
known_failure() {
	[ "$1" = rxe0 ] && grep -q 'unhandled timeout error' "$2" &&
		echo "UCX's endpoints over rdma_rxe time out (ud_ep: unhandled timeout error)"
}

# over IBDEV: mpi_check on IBDEV, then ucx_perftest; the values in
# LAT_<dev>, BW_<dev>, ULAT_<dev> and UBW_<dev>.
over() {
	local dev=$1 out=/tmp/mpi-$1.out rc tx0 tx1 t
	tx0=$(dev_counter "$dev" tx_bytes)
	mpi_run "$dev" "$out" 2 localhost:2
	rc=$?
	mpi_results "$dev: MPI, 2 ranks" "$out" $rc "$(known_failure "$dev" "$out")"
	if [ -n "$tx0" ]; then
		tx1=$(dev_counter "$dev" tx_bytes)
		ktap_print "$dev: tx_bytes +$((tx1 - tx0)), mpi_check sent at least $MPI_MIN_BYTES"
		ktap_check "$dev: MPI's messages crossed the device" \
			test $((tx1 - tx0)) -ge $MPI_MIN_BYTES
		ktap_check "$dev: the loopback path kept order: no resend, no sequence NAK" \
			in_order "$dev"
	fi
	eval "LAT_$dev=\$(mpi_value $out 'pingpong 8 B' lat_us)"
	eval "BW_$dev=\$(mpi_value $out 'bandwidth 1 MiB x 8 in flight' MiBps)"

	for t in "${UCX_PERF_RUNS[@]}"; do
		set -- $t
		perf_pair "$dev" "$out.$1" "${@:2}"
		known_result "$dev: ucx_perftest $3 $5 B" $? "$(known_failure "$dev" "$out.$1")"
	done
	eval "ULAT_$dev=\$(ucx_perf_value $out.lat lat)"
	eval "UBW_$dev=\$(ucx_perf_value $out.bw bw)"
	rm -f "$out" "$out.lat" "$out.bw"
}

ktap_plan_ref $((${#MPI_CHECKS[@]} + 5)) $((${#MPI_CHECKS[@]} + 3))
srdma_cleanup

srdma0_up || ktap_print "srdma0 did not come up"
over srdma0
srdma_cleanup
rxe_reference || {
	ktap_print "MPI 8 B latency (us): softrdma $LAT_srdma0 (ucx_perftest $ULAT_srdma0)"
	ktap_print "MPI 1 MiB bandwidth (MiB/s): softrdma $BW_srdma0 (ucx_perftest $UBW_srdma0)"
	ktap_finish
}
rxe0_up || ktap_print "rxe0 did not come up"
over rxe0

ktap_print "MPI 8 B latency (us): softrdma $LAT_srdma0 (ucx_perftest $ULAT_srdma0), rxe ${LAT_rxe0:-none} (ucx_perftest ${ULAT_rxe0:-none})"
ktap_print "MPI 1 MiB bandwidth (MiB/s): softrdma $BW_srdma0 (ucx_perftest $UBW_srdma0), rxe ${BW_rxe0:-none} (ucx_perftest ${UBW_rxe0:-none}), ratio $(ratio "${BW_srdma0:-0}" "${BW_rxe0:-0}")"
ktap_finish
