#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench-cost", inside a test VM that runs under the cost meter's
# QEMU plugin (bench/cost/run.sh): two namespaces joined by a veth (MTU
# 9000, the neighbours' addresses permanent: no neighbour state changes
# while it counts), a device on each, and cost_ops between them: 64 B
# SENDs, 4 KiB and 64 KiB WRITEs, 64 KiB READs, COST_WINDOW in flight,
# COST_REPEAT measured windows of each (report.py takes their median).
# cost_ops runs as SCHED_IDLE: the kernel's threads and work items run at
# once when they can, not when the poller's time slice ends. softrdma, then rdma_rxe where this kernel's keeps a
# socket per namespace (7.2, not 6.1). Both modules are loaded first and
# stay loaded, so that $VM_OUT/kallsyms, taken before any window, holds
# every address the windows count. $VM_OUT/windows lists the windows in
# the order the plugin numbers its dumps: "N DEVICE OP SIZE COUNT".
. "$(dirname "$0")/../../selftests/lib/lib.sh"
trap srdma_cleanup EXIT

COST_OPS=$(dirname "$0")/cost_ops
WINDOW=${COST_WINDOW:-16}
REPEAT=${COST_REPEAT:-3}
# OP SIZE COUNT: a window each.
CASES=${COST_CASES:-"send 64 5000 write 4096 2000 write 65536 500 read 65536 500"}
win=0

# pair TYPE: ns_pair's devices of TYPE at MTU 9000, their IPv4 GIDs up.
pair() {
	local name=srdma
	[ "$1" = rxe ] && name=rxe
	ns_pair "$1" &&
		ip -n ns1 link set veth1 mtu 9000 && ip -n ns2 link set veth2 mtu 9000 &&
		wait_for "ibdev_gids ${name}1 | grep -q ':ffff:'" &&
		wait_for "ibdev_gids ${name}2 | grep -q ':ffff:'" &&
		ip -n ns1 neigh replace 10.9.0.2 dev veth1 nud permanent \
			lladdr "$(ip -n ns2 -br link show veth2 | awk '{ print $3 }')" &&
		ip -n ns2 neigh replace 10.9.0.1 dev veth2 nud permanent \
			lladdr "$(ip -n ns1 -br link show veth1 | awk '{ print $3 }')"
}

# unpair: the devices and namespaces gone, the modules kept.
unpair() {
	local dev
	for dev in $(rdma link show | sed -n 's/^link \([^/]*\)\/.*/\1/p'); do
		rdma link delete "$dev"
	done
	ip netns del ns1
	ip netns del ns2
}

# measure TYPE: every case between TYPE's two devices; the process on CPU 0.
measure() {
	local name=srdma op size count _
	[ "$1" = rxe ] && name=rxe
	pair "$1" || { echo "# $1: no device pair"; return 1; }
	# shellcheck disable=SC2086 # CASES is a list of words
	set -- $CASES
	while [ $# -ge 3 ]; do
		op=$1 size=$2 count=$3
		shift 3
		timeout 900 chrt -i 0 "$COST_OPS" "${name}1" "$(gid_index "${name}1")" \
			"${name}2" "$(gid_index "${name}2")" "$op" "$size" "$count" \
			"$WINDOW" "$REPEAT" || { echo "# $name $op $size failed"; return 1; }
		for _ in $(seq "$REPEAT"); do
			echo "$win $name $op $size $count" >>"$VM_OUT/windows"
			win=$((win + 1))
		done
	done
	unpair
}

: >"$VM_OUT/windows"
srdma_install_module && modprobe softrdma || exit 1
rxe=
modprobe rdma_rxe && grep -q ' rxe_ns_init' /proc/kallsyms && rxe=1
cat /proc/kallsyms >"$VM_OUT/kallsyms"
echo "# $(uname -r), window $WINDOW"
measure softrdma || exit 1
if [ -n "$rxe" ]; then
	measure rxe || exit 1
else
	echo "# rdma_rxe of $(uname -r) has no socket per namespace: softrdma only"
fi
cat "$VM_OUT/windows"
