#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Network namespaces: a device serves the netdev's namespace with its own
# RoCEv2 socket there, so two namespaces are two hosts, and rdma_rxe in the
# initial namespace can run beside softrdma.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

ktap_plan 13
srdma_cleanup

roce_bound() {	# roce_bound [NS]: is UDP 4791 bound in NS (or init)?
	${1:+ip netns exec "$1"} ss -Huln 'sport = :4791' | grep -q .
}

ip netns add ns1
ip netns add ns2
ip link add veth1 netns ns1 type veth peer name veth2 netns ns2
ip -n ns1 addr add 10.9.0.1/24 dev veth1
ip -n ns2 addr add 10.9.0.2/24 dev veth2
ip -n ns1 link set veth1 up
ip -n ns2 link set veth2 up

ktap_check "rdma link add inside a namespace binds its netdev" \
	ip netns exec ns1 rdma link add srdma1 type softrdma netdev veth1
ktap_check "a second namespace gets its own device" \
	ip netns exec ns2 rdma link add srdma2 type softrdma netdev veth2
ktap_check "each namespace has its own RoCEv2 socket" \
	sh -c "$(declare -f roce_bound); roce_bound ns1 && roce_bound ns2"
ktap_check "the initial namespace keeps UDP 4791 free" \
	sh -c "$(declare -f roce_bound); ! roce_bound"
ktap_check "the GID table holds the namespace's address" \
	wait_for 'ibdev_gids srdma1 | grep -qx 0000:0000:0000:0000:0000:ffff:0a09:0001'

# The wire path between the two: READs and WRITEs in turn, as many reads
# outstanding as a responder holds, each WRITE's ACK waiting behind read
# responses. A veth loses nothing, so nothing may be resent.
wait_for 'ibdev_gids srdma2 | grep -q ffff:0a09:0002'
ktap_fold "veth: " < <(timeout -k 5 200 "$PROGS/rc_stream" srdma1 srdma2 32 1 m 2>&1)
both_in_order() {
	local rc1

	in_order srdma1
	rc1=$?
	in_order srdma2 && [ $rc1 -eq 0 ]
}
ktap_check "veth: nothing resent, nothing out of sequence" both_in_order

veth_pair veth0 veth9 10.8.0.1/24
modprobe rdma_rxe
ktap_check "rdma_rxe runs in the initial namespace beside softrdma" \
	rdma link add rxe0 type rxe netdev veth0
ktap_check_fails "softrdma where rdma_rxe holds UDP 4791 is refused" \
	rdma link add srdma9 type softrdma netdev veth9
rdma link delete rxe0

ktap_check "rdma link delete works from inside the namespace" \
	sh -c 'ip netns exec ns2 rdma link delete srdma2 && [ ! -e /sys/class/infiniband/srdma2 ]'
ip netns exec ns2 rdma link add srdma2 type softrdma netdev veth2
ip -n ns2 link set veth2 netns 1
ktap_check "moving the netdev out of its namespace removes the device" \
	wait_for '[ ! -e /sys/class/infiniband/srdma2 ]'
ip netns del ns1
ktap_check "deleting the namespace removes its device" \
	wait_for '[ ! -e /sys/class/infiniband/srdma1 ]' 20
ktap_finish
