#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (vm-pair.sh): both guests run this, each creates srdma0 over
# the link, and RoCEv2 datagrams from the peer reach our socket.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT
SYNC=$VM_SCRIPTS/vm-sync.sh

udp_stats() {	# "InDatagrams NoPorts" of this host
	awk '/^Udp:/ { if (n++) print $2, $3 }' /proc/net/snmp
}

ktap_plan 5
ktap_check "rdma link add over the link's netdev" \
	rdma link add srdma0 type softrdma netdev "$VM_IFACE"
ktap_check "the GID table holds our address" \
	wait_for "ibdev_gids srdma0 | grep -q ':ffff:$(printf '%02x%02x:%02x%02x' ${VM_IP//./ })\$'"
ktap_check "the peer answers on the link" "$SYNC" peer 120

read -r in0 noport0 < <(udp_stats)
"$SYNC" barrier devices-up 120
for i in $(seq 10); do echo "probe $i" >"/dev/udp/$VM_PEER_IP/4791"; done
"$SYNC" barrier probes-sent 120
read -r in1 noport1 < <(udp_stats)
ktap_print "UDP InDatagrams +$((in1 - in0)), NoPorts +$((noport1 - noport0))"
ktap_check "the peer's datagrams to UDP 4791 reach our socket" \
	test $((in1 - in0)) -ge 10 -a "$noport1" = "$noport0"
"$SYNC" barrier checked 120
ktap_check "rdma link delete" rdma link delete srdma0
ktap_finish
