#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (vm-pair.sh): rc_integrity across the link, host a serving,
# host b driving every test (each side also acts as requester). Host a
# runs rdma_rxe with PAIR_A=rxe: byte-exact interoperability.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT
PORT=18600

pair_device_up || exit $KSFT_FAIL

if [ "$VM_HOST" = a ]; then
	"$VM_SCRIPTS/vm-sync.sh" barrier integrity-up 120
	timeout 600 "$PROGS/rc_integrity" server "$DEV" $PORT 1
else
	"$VM_SCRIPTS/vm-sync.sh" barrier integrity-up 120
	sleep 3
	timeout 600 "$PROGS/rc_integrity" client "$DEV" "$VM_PEER_IP" $PORT 1
fi
