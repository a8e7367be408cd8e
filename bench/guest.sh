#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench", inside the test VM: perftest over softrdma, then over
# rdma_rxe, on the same veth link in the same guest (server and client on
# one device, as rdma_rxe in 6.1 only lives in the initial namespace).
# Writes DEVICE,TEST,BYTES,VALUE lines to $VM_OUT/bench.csv.
. "$(dirname "$0")/../selftests/lib.sh"

BW_SIZES=${BW_SIZES:-"64 256 1024 4096 16384 65536 262144 1048576"}
LAT_SIZES=${LAT_SIZES:-"8 64 256 1024 4096"}
ITERS=${ITERS:-200}
CSV=$VM_OUT/bench.csv
PORT=18515

# run DEV TOOL SIZE ITERS: server and client of TOOL on DEV; prints the
# client's result row.
run() {
	local dev=$1 tool=$2 size=$3 iters=$4 pid
	local args="-d $dev -x 1 -F -s $size -n $iters"

	timeout 120 "$tool" $args >/dev/null 2>&1 &
	pid=$!
	wait_for "ss -Hltn 'sport = :$PORT' | grep -q ." 60
	timeout 120 "$tool" $args 127.0.0.1 2>/dev/null |
		awk -v s="$size" '$1 == s && NF >= 5'
	wait $pid
}

bench_dev() {
	local dev=$1 size row
	for size in $BW_SIZES; do
		row=$(run "$dev" ib_write_bw "$size" "$ITERS")
		echo "$row" | awk -v d="$dev" -v s="$size" \
			'NF { print d ",write_bw_MBps," s "," $4 }' >>"$CSV"
	done
	for size in $LAT_SIZES; do
		row=$(run "$dev" ib_write_lat "$size" "$ITERS")
		echo "$row" | awk -v d="$dev" -v s="$size" \
			'NF { print d ",write_lat_us," s "," $5 }' >>"$CSV"
	done
	row=$(run "$dev" ib_send_bw 64 $((ITERS * 5)))
	echo "$row" | awk -v d="$dev" \
		'NF { print d ",send_rate_Mpps,64," $5 }' >>"$CSV"
}

: >"$CSV"
srdma_install_module
veth_pair veth0 veth1 10.9.0.1/24

rdma link add srdma0 type softrdma netdev veth0 &&
	wait_for 'ibdev_gids srdma0 | grep -q ffff:0a09:0001' &&
	bench_dev srdma0
rdma link delete srdma0
modprobe -r softrdma

modprobe rdma_rxe && rdma link add rxe0 type rxe netdev veth0 &&
	wait_for 'ibdev_gids rxe0 | grep -q ffff:0a09:0001' &&
	bench_dev rxe0
rdma link delete rxe0 2>/dev/null
cat "$CSV"
