#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench", inside the test VM: perftest over softrdma, then over
# rdma_rxe, on the same veth link in the same guest (server and client on
# one device, as rdma_rxe in 6.1 only lives in the initial namespace);
# then the kernel storage and file ULPs (NFS, iSER, SRP), whose tests
# measure both devices in turn. Writes DEVICE,TEST,BYTES,VALUE lines to
# $VM_OUT/bench.csv, REPS lines per perftest point (report.sh takes their
# median: TCG timing is noisy), one per ULP point.
. "$(dirname "$0")/../selftests/lib/lib.sh"

BW_SIZES=${BW_SIZES:-"64 256 1024 4096 16384 65536 262144 1048576"}
LAT_SIZES=${LAT_SIZES:-"8 64 256 1024 4096"}
SECS=${SECS:-3}		# bandwidth and message rate: seconds per run
LAT_ITERS=${LAT_ITERS:-1000}
REPS=${REPS:-3}
CSV=$VM_OUT/bench.csv
PORT=18515

# run DEV TOOL SIZE ARGS: server and client of TOOL on DEV; prints the
# client's result row.
run() {
	local dev=$1 tool=$2 size=$3 pid
	local args="-d $dev -x 1 -F -s $size $4"

	timeout 120 "$tool" $args >/dev/null 2>&1 &
	pid=$!
	wait_for "ss -Hltn 'sport = :$PORT' | grep -q ." 60
	timeout 120 "$tool" $args 127.0.0.1 2>/dev/null |
		awk -v s="$size" '$1 == s && NF >= 5'
	wait $pid
}

# point DEV TOOL SIZE ARGS NAME COLUMN: REPS runs, column COLUMN of each
# result row to the CSV as test NAME.
point() {
	local dev=$1 tool=$2 size=$3 args=$4 name=$5 col=$6 rep
	for rep in $(seq "$REPS"); do
		run "$dev" "$tool" "$size" "$args" |
			awk -v d="$dev" -v n="$name" -v s="$size" -v c="$col" \
			'NF { print d "," n "," s "," $c }' >>"$CSV"
	done
}

# ulp_rows TEST PREFIX: run selftest TEST (it checks the data too) and
# turn each "WHAT: softrdma S KiB/s, rxe R KiB/s" line it prints into two
# CSV rows, test PREFIX_WHAT (in KiB/s). Its TAP output is kept.
ulp_rows() {
	"$SELFTESTS/guest/$1" 2>&1 | tee -a "$VM_OUT/bench-ulp.txt" |
		sed -n 's/^# \(.*\): softrdma \([0-9]*\) KiB\/s, rxe \([0-9]*\) KiB\/s.*/\1|\2|\3/p' |
		while IFS='|' read -r what s r; do
			what=$(echo "$2 $what" | tr -cs 'A-Za-z0-9.\n' '_' | sed 's/_*$//')
			echo "srdma0,${what}_KiBps,0,$s"
			echo "rxe0,${what}_KiBps,0,$r"
		done >>"$CSV"
}

bench_dev() {
	local dev=$1 size
	for size in $BW_SIZES; do
		point "$dev" ib_write_bw "$size" "-D $SECS" write_bw_MBps 4
	done
	for size in $LAT_SIZES; do
		# t_typical: the median of the run
		point "$dev" ib_write_lat "$size" "-n $LAT_ITERS" write_lat_us 5
	done
	point "$dev" ib_send_bw 64 "-D $SECS" send_rate_Mpps 5
	# What the transport did meanwhile: a slow point with retransmits or
	# drops is the protocol's doing, one without is the machine's.
	rdma statistic show link "$dev/1" >>"$VM_OUT/bench-counters.txt" 2>&1
}

: >"$CSV"
: >"$VM_OUT/bench-counters.txt"
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
modprobe -r rdma_rxe

: >"$VM_OUT/bench-ulp.txt"
ulp_rows nfs_rdma.sh nfs
ulp_rows iser.sh iser
ulp_rows srp.sh srp
cat "$CSV"
