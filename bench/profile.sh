#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench-profile", inside the test VM: where the CPU goes on the wire
# path. Two namespaces over a veth (wire_pair), ib_write_bw from ns1 to ns2
# at PROFILE_SIZES, and perf samples every CPU meanwhile (cpu-clock: TCG
# has no PMU; kernel and module symbols from /proc/kallsyms). softrdma,
# then rdma_rxe where it works across namespaces. Writes
# $VM_OUT/profile-DEV-SIZE.txt: the run's result, perf's flat profile by
# symbol, and by command and DSO.
. "$(dirname "$0")/../selftests/lib/lib.sh"
. "$(dirname "$0")/wire_lib.sh"
trap srdma_cleanup EXIT

SIZES=${PROFILE_SIZES:-"4096 65536"}
SECS=${PROFILE_SECS:-6}
PORT=18540
# shellcheck disable=SC2034 # pair_run's (wire_lib.sh)
LOG=$VM_OUT/profile-tools.log

# profile TYPE: ns_pair's devices of TYPE, a profile for each size.
profile() {
	local size out
	srdma_cleanup
	wire_pair "$1" || return
	for size in $SIZES; do
		out=$VM_OUT/profile-$1-$size.txt
		PERF_TIMEOUT=60 pair_run ib_write_bw $PORT -s "$size" \
			-D $((SECS + 4)) >"$out.run" &
		# Sample once the client moves data (its QP is in RTS).
		wait_for "rdma resource show qp link ${DEVN}1/1 | grep -q 'type RC state RTS'" 30
		sleep 1
		t0=$(head -n 1 /proc/stat)
		perf record -q -a -g -e cpu-clock -F 997 -o "$out.data" \
			-- sleep "$SECS" 2>/dev/null
		t1=$(head -n 1 /proc/stat)
		wait
		{
			echo "== $1, ib_write_bw $size B, ns1 -> ns2"
			awk -v s="$size" '$1 == s' "$out.run"
			# The kernel's own account: perf's samples of a TCG
			# guest land on the idle loop more than its time does.
			echo "$t0 $t1" | awk '{ for (i = 2; i <= 9; i++) {
				d[i] = $(i + 11) - $i; t += d[i] }
				printf "== CPU time (/proc/stat): user %.0f%% system %.0f%% softirq %.0f%% idle %.0f%%\n",
				100 * d[2] / t, 100 * d[4] / t, 100 * d[8] / t, 100 * d[5] / t }'
			echo "== by symbol (self)"
			perf report -q -i "$out.data" --stdio --no-children \
				--sort sym -g none --percent-limit 0.7 2>/dev/null
			echo "== by command and DSO (self)"
			perf report -q -i "$out.data" --stdio --no-children \
				--sort comm,dso -g none --percent-limit 1 2>/dev/null
		} >"$out"
		rm -f "$out.run" "$out.data"
		cat "$out"
	done
}

srdma_install_module
profile softrdma
if modprobe rdma_rxe && grep -q ' rxe_ns_init' /proc/kallsyms; then
	profile rxe
fi
