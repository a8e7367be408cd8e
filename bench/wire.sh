#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench-wire", inside one test VM: the wire path between two hosts,
# as two namespaces joined by a veth (ns_pair), MTU 9000. softrdma, and
# rdma_rxe the same way where this kernel's rdma_rxe keeps a socket per
# namespace (sid's 7.2; 6.1's cannot, so its rows stay empty there):
#  - speed: ib_write_bw at 4 KiB and 64 KiB, ib_send_bw's 64 B message
#    rate, ib_write_lat at 8 B; REPS runs each;
#  - a shared bottleneck (cc_lib.sh's: a BN_RATE tbf, in mbit, whose codel
#    FIFO marks CE: one queue for all, so that neither fairness nor the
#    latency probe owes anything to a per-flow scheduler): BN_FLOWS flows of 64 KiB RDMA WRITEs for BN_SECS,
#    each reporting every second, and an 8 B ib_write_lat across the same
#    queue from the 5th second on; softrdma with CC on, with CC off, and
#    rdma_rxe;
#  - loss: a drop-tail BN_RATE bottleneck that also drops 1% or 5% at
#    random; one 64 KiB ib_write_bw flow, LOSS_REPS runs; same modes;
#  - rpc: request/response (ib_send_lat's ping-pong, t_avg) at 4 KiB and
#    64 KiB over a 1 ms delay each way, path MTU 1024 (ibv_rc_pingpong's),
#    loss-free, then lossy (10% reorder, 5% loss, 1% duplication one way,
#    5% loss the other), at QP timeouts 14 (ibv_rc_pingpong's) and 18
#    (rdma_cm's); RPC_REPS runs of RPC_ITERS iterations (a third of them
#    at 64 KiB); softrdma (CC on) and rdma_rxe.
# WIRE_CASES picks some of "speed shared loss rpc" (default all).
# Writes MODE,TEST,PARAM,VALUE lines to $VM_OUT/wire.csv and each
# bottleneck run's per-second flow rates to $VM_OUT/series-MODE.dat (a
# column a flow); bench/wire-report.sh reads them.
. "$(dirname "$0")/../selftests/lib/lib.sh"
. "$TESTLIB/cc_lib.sh"
. "$(dirname "$0")/wire_lib.sh"
trap 'cc_params 1; srdma_cleanup' EXIT

REPS=${REPS:-5}
SECS=${SECS:-4}
BN_RATE=${BN_RATE:-20mbit}
BN_FLOWS=${BN_FLOWS:-4}
BN_SECS=${BN_SECS:-40}
BN_LAT_ITERS=${BN_LAT_ITERS:-200}
LOSS_SECS=${LOSS_SECS:-10}
LOSS_REPS=${LOSS_REPS:-3}
RPC_REPS=${RPC_REPS:-2}
RPC_ITERS=${RPC_ITERS:-100}
WIRE_CASES=${WIRE_CASES:-speed shared loss rpc}
CSV=$VM_OUT/wire.csv
PORT=18520
# shellcheck disable=SC2034 # pair_run's (wire_lib.sh)
LOG=$VM_OUT/wire-tools.log

# point MODE NAME PARAM COLUMN TOOL SIZE ARGS...: REPS runs of TOOL
# between the namespaces; column COLUMN of each result to the CSV as NAME
# at PARAM; a run that gave none counts 0 with ZERO_RUN set, else is left
# out.
point() {
	local mode=$1 name=$2 param=$3 col=$4 tool=$5 size=$6 _
	shift 6
	for _ in $(seq "$REPS"); do
		pair_run "$tool" "$PORT" -s "$size" "$@" |
			row "$mode" "$name" "$param" "$col" "$size" \
				"${ZERO_RUN:-}" >>"$CSV" 2>>"$LOG"
	done
}

# counters MODE: the devices' counters after MODE's runs.
counters() {
	local d
	for d in "${DEVN}1" "${DEVN}2"; do
		echo "$1 $(rdma statistic show link "$d/1" | tr -s ' \n' ' ')"
	done >>"$VM_OUT/wire-counters.txt"
}

# shared MODE: BN_FLOWS rc_stream flows of RDMA WRITEs (every byte
# checked; perftest's per-second reports are unreliable at these rates)
# from ns1's device to ns2's through the bottleneck, each reporting its
# progress every second, stopped after BN_SECS; from the 5th second an 8 B
# ib_write_lat across the same queue.
shared() {
	local mode=$1 i pids=() lat mib
	# Enough for one flow alone to fill the link for the whole run.
	mib=$(( ${BN_RATE%mbit} * BN_SECS / 8 + 1))
	for i in $(seq "$BN_FLOWS"); do
		RC_STREAM_PROGRESS_MS=1000 timeout "$BN_SECS" \
			"$PROGS/rc_stream" "${DEVN}1" "${DEVN}2" "$mib" "$i" w \
			>"$VM_OUT/flow-$mode-$i.txt" 2>&1 &
		pids+=($!)
	done
	sleep 5
	lat=$(PERF_TIMEOUT=$((BN_SECS - 6)) pair_run ib_write_lat \
		$((PORT + 10)) -s 8 -n "$BN_LAT_ITERS")
	echo "$lat" | row "$mode" bn_lat_us 8 5 8 >>"$CSV"
	echo "$lat" | row "$mode" bn_lat_p99_us 8 8 8 >>"$CSV"
	wait "${pids[@]}"
	# Each flow's rate (MB/s of 2^20 bytes, as perftest's) in each second:
	# a column a flow, a row a second.
	for i in $(seq "$BN_FLOWS"); do
		awk '$2 == "progress" { printf "%.3f\n", ($4 - b) / 1048576; b = $4 }' \
			"$VM_OUT/flow-$mode-$i.txt" >"$VM_OUT/flow-$mode-$i.col"
	done
	paste "$VM_OUT"/flow-"$mode"-*.col | awk '{ print NR, $0 }' \
		>"$VM_OUT/series-$mode.dat"
	rm -f "$VM_OUT"/flow-"$mode"-*.col
	counters "$mode"
}

# lossy MODE: REPS runs of one 64 KiB flow through a drop-tail bottleneck
# that drops 1%, then 5%, at random.
lossy() {
	local loss
	for loss in 1 5; do
		ip netns exec ns1 tc qdisc del dev veth1 root 2>/dev/null
		lossy_bottleneck ns1 veth1 "$BN_RATE" "$loss%" || return
		# A flow that gave up (retries exhausted) moved nothing: 0.
		REPS=$LOSS_REPS ZERO_RUN=1 point "$1" loss_MBps "$loss" 4 ib_write_bw 65536 \
			-D "$LOSS_SECS"
	done
	counters "$1-loss"
}

# netem_both clean|lossy: rpc's two directions (ns1 -> ns2 is the lossy
# one's worse way).
netem_both() {
	local fwd="delay 1ms" back="delay 1ms"
	if [ "$1" = lossy ]; then
		fwd="delay 1ms reorder 10% loss 5% duplicate 1%"
		back="delay 1ms loss 5%"
	fi
	ip netns exec ns1 tc qdisc del dev veth1 root 2>/dev/null
	ip netns exec ns2 tc qdisc del dev veth2 root 2>/dev/null
	# shellcheck disable=SC2086
	ip netns exec ns1 tc qdisc add dev veth1 root netem $fwd &&
		ip netns exec ns2 tc qdisc add dev veth2 root netem $back
}

# rpc MODE: the request/response table: rpc_clean_us (timeout 14 alone:
# nothing is lost), rpc_lossy_t14_us and rpc_lossy_t18_us, per size.
rpc() {
	local net u size n
	for net in clean lossy; do
		netem_both "$net" || return
		for u in 14 18; do
			[ "$net" = clean ] && [ "$u" = 18 ] && continue
			for size in 4096 65536; do
				n=$RPC_ITERS
				[ "$size" -gt 4096 ] && n=$((RPC_ITERS / 3))
				PERF_TIMEOUT=600 REPS=$RPC_REPS point "$1" \
					"rpc_${net}$([ "$net" = lossy ] && echo "_t$u")_us" \
					"$size" 6 ib_send_lat "$size" -n "$n" -u "$u" -m 1024
			done
		done
	done
	ip netns exec ns1 tc qdisc del dev veth1 root 2>/dev/null
	ip netns exec ns2 tc qdisc del dev veth2 root 2>/dev/null
	counters "$1-rpc"
}

# has_case NAME: WIRE_CASES holds NAME.
has_case() {
	[[ " $WIRE_CASES " == *" $1 "* ]]
}

# cc_for MODE: softrdma's CC off for a MODE named *_ccoff, else on.
cc_for() {
	case $1 in
	*_ccoff) cc_params 0 ;;
	*) cc_params 1 ;;
	esac
}

# wire TYPE: ns_pair's devices of TYPE (softrdma or rxe), and every case;
# softrdma's bottleneck and loss cases with CC on and off.
wire() {
	local mode modes=("$1")
	srdma_cleanup
	[ "$1" = softrdma ] && modes+=(softrdma_ccoff)
	wire_pair "$1" && rps_all ns2 veth2 || return
	if has_case speed; then
		speed "$1"
		counters "$1-speed"
	fi
	if has_case rpc; then
		cc_params 1
		rpc "$1"
	fi
	if has_case shared || has_case loss; then
		bottleneck ns1 veth1 "$BN_RATE" codel || return
	fi
	for mode in "${modes[@]}"; do
		has_case shared || break
		cc_for "$mode"
		shared "$mode"
	done
	for mode in "${modes[@]}"; do
		has_case loss || break
		cc_for "$mode"
		lossy "$mode"
	done
	cc_params 1
}

: >"$LOG"
echo "link,bn_rate_mbit,0,${BN_RATE%mbit}" >"$CSV"
: >"$VM_OUT/wire-counters.txt"
srdma_install_module
modprobe -q sch_tbf
modprobe -q sch_fq_codel
modprobe -q sch_netem
echo "# $(uname -r), perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null)"
wire softrdma
if modprobe rdma_rxe && grep -q ' rxe_ns_init' /proc/kallsyms; then
	wire rxe
else
	echo "# rdma_rxe of $(uname -r) has no socket per namespace: softrdma only"
fi
cat "$CSV"
