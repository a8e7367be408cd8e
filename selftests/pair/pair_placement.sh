#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (vm-pair.sh): ATOMIC WRITE and FLUSH across the link with
# rc_placement's server and client modes, each host as requester once.
# Host a runs rdma_rxe with PAIR_A=rxe (its ATOMIC WRITE and FLUSH need
# Linux 6.2: check-release.sh runs this on trixie and sid).
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT
PORT=18650
PROG=${RELEASE_PROGS:-$PROGS}/rc_placement

# Both hosts run the same kernel: both skip, or neither.
if [ "${PAIR_A:-}" = rxe ] && ! kernel_at_least 6 2; then
	echo "1..0 # SKIP rdma_rxe of Linux $(uname -r) has no ATOMIC WRITE or FLUSH (from 6.2)"
	exit $KSFT_SKIP
fi
pair_device_up || exit $KSFT_FAIL
# rdma_rxe sends and takes a FLUSH only with an ICRC of its own
# (kernel/proto/roce_icrc.h): softrdma's first FLUSH to it is answered
# on its first retry, which swaps the ICRC.

# round N SERVER_HOST: that host responds, the other drives and reports.
round() {
	"$VM_SCRIPTS/vm-sync.sh" barrier "placement-$1" 120 || return
	if [ "$VM_HOST" = "$2" ]; then
		timeout 300 "$PROG" server "$DEV" $((PORT + $1)) 1
	else
		sleep 2
		timeout 300 "$PROG" client "$DEV" "$VM_PEER_IP" $((PORT + $1)) 1
	fi
}
round 1 a
round 2 b
