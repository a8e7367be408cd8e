#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One device at scale (scale.c on srdma0): the memory a QP, CQ and MR
# take; 1,024 RC QP pairs in 4 processes moving checked data at once;
# 4,096 QPs created and connected in one process; 100,000 MRs registered
# and each used. Then the same create-and-connect of 1,024 QPs on rdma_rxe's
# rxe0, the reference: both times and their ratio are printed, never
# checked.
. "$(dirname "$0")/../lib/lib.sh"

PROG=$PROGS/scale
log=$(mktemp) || exit "$KSFT_FAIL"
trap 'rm -f "$log"; srdma_cleanup' EXIT

# connect_time: the seconds scale.c took to create and connect 1,024 QPs.
connect_time() {
	sed -n 's/^# 1024 QPs created and connected in \([0-9.]*\) s.*/\1/p' "$log"
}

srdma_cleanup
srdma0_up || exit "$KSFT_FAIL"
ktap_plan 5
ktap_fold "srdma0: " < <("$PROG" srdma0 "$(gid_index srdma0)" 2>&1 | tee "$log")
srdma_t=$(connect_time)
ktap_print "srdma0: $(moved_counters srdma0)"

# rdma_rxe in 6.1 wants UDP port 4791 of the initial namespace: softrdma
# gives it up first.
srdma_cleanup
rxe_name="rxe0: 1024 QPs created and connected, one SEND each way checked (the reference)"
if ! modprobe rdma_rxe 2>/dev/null; then
	ktap_skip "$rxe_name" "no rdma_rxe"
elif ! rxe0_up; then
	ktap_print "rxe0 did not come up"
	ktap_result "$rxe_name" 1
else
	# One result, named by scale.c after what rxe0's max_qp allows.
	ktap_fold "rxe0: " < <("$PROG" -t connect -q 1024 rxe0 \
		"$(gid_index rxe0)" 2>&1 | tee "$log")
	rxe_t=$(connect_time)
fi
ktap_print "create and connect 1024 QPs: softrdma ${srdma_t:-none} s, rxe ${rxe_t:-none} s, ratio softrdma/rxe $(ratio "${srdma_t:-0}" "${rxe_t:-0}")"
ktap_finish
