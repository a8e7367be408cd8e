#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Bottlenecks and congestion-control knobs for congestion.sh and the wire
# bench (bench/wire.sh), sourced after lib.sh.

CC_PARAMS=/sys/module/softrdma/parameters

# cc_params 0|1: softrdma's ECN marking and DCQCN off or on.
cc_params() {
	[ -w $CC_PARAMS/ecn ] || return 0
	echo "$1" >$CC_PARAMS/ecn && echo "$1" >$CC_PARAMS/dcqcn
}

# bottleneck NS DEV RATE [AQM]: DEV of namespace NS sends through a tbf of
# RATE with an AQM child (fq_codel, or codel: one FIFO for every flow, as
# a switch port's) that marks CE past 2 ms of queue, as the RED/ECN queues
# of DCQCN's switches do.
bottleneck() {
	ip netns exec "$1" tc qdisc add dev "$2" root handle 1: tbf rate "$3" \
		burst 64kb latency 100ms &&
		ip netns exec "$1" tc qdisc add dev "$2" parent 1:1 handle 10: \
			"${4:-fq_codel}" ecn ce_threshold 2ms
}

# lossy_bottleneck NS DEV RATE LOSS: DEV of namespace NS sends through a
# tbf of RATE whose child is a drop-tail queue of 50 packets (no ECN) that
# also drops LOSS (e.g. 1%) of them at random.
lossy_bottleneck() {
	ip netns exec "$1" tc qdisc add dev "$2" root handle 1: tbf rate "$3" \
		burst 64kb latency 100ms &&
		ip netns exec "$1" tc qdisc add dev "$2" parent 1:1 handle 10: \
			netem loss "$4" limit 50
}

# rps_all NS DEV: DEV's receive queues steer to every CPU by flow hash.
# The qdisc hands packets to DEV on whichever CPU dequeues them, and each
# CPU's backlog is taken in on its own: steer each flow to one CPU, as a
# NIC's RSS does, or the link itself reorders (sequence NAKs).
rps_all() {
	local cpus
	cpus=$(printf '%x' $(((1 << $(nproc)) - 1)))
	# shellcheck disable=SC2016
	ip netns exec "$1" sh -c 'for q in /sys/class/net/$1/queues/rx-*/rps_cpus; do
		echo "$2" >"$q"; done' sh "$2" "$cpus"
}

# jain X...: Jain's fairness index of the rates X (1: all equal).
jain() {
	echo "$@" | awk '{ for (i = 1; i <= NF; i++) { s += $i; q += $i * $i }
		printf "%.3f", q ? s * s / (NF * q) : 0 }'
}
