#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (vm-pair.sh): rc_integrity across the link, host a serving,
# host b driving every test (each side also acts as requester). Host a
# runs rdma_rxe with PAIR_A=rxe: byte-exact interoperability.
#
# pair_integrity.sh [LOSS]: with LOSS (netem's, e.g. 1%), each host drops
# that share of what it sends on the link, RoCE and the side channel
# alike: go-back-N, sequence NAKs, tail loss probes and timeouts recover,
# and with PAIR_A=rxe rdma_rxe's recovery meets softrdma's both ways.
. "$(dirname "$0")/../lib/lib.sh"
LOSS=${1:-}
trap '[ -z "$LOSS" ] || tc qdisc del dev "$VM_IFACE" root 2>/dev/null; srdma_cleanup' EXIT
PORT=18600

pair_device_up || exit $KSFT_FAIL
if [ -n "$LOSS" ]; then
	modprobe sch_netem 2>/dev/null
	tc qdisc add dev "$VM_IFACE" root netem loss "$LOSS" || exit $KSFT_FAIL
fi

if [ "$VM_HOST" = a ]; then
	"$VM_SCRIPTS/vm-sync.sh" barrier integrity-up 120
	timeout 600 "$PROGS/rc_integrity" server "$DEV" $PORT 1
else
	"$VM_SCRIPTS/vm-sync.sh" barrier integrity-up 120
	sleep 3
	RC_INTEGRITY_LOSSY=$([ -n "$LOSS" ] && echo 1) \
		timeout 600 "$PROGS/rc_integrity" client "$DEV" "$VM_PEER_IP" $PORT 1
fi
rc=$?
# What recovered the losses, on this host's softrdma.
[ -z "$LOSS" ] || [ "$DEV" != srdma0 ] ||
	echo "# $DEV: $(moved_counters "$DEV")"
exit $rc
