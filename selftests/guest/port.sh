#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The port follows its netdev: state with carrier, active MTU with the
# netdev MTU, RoCEv2 GIDs with the netdev's IPv4/IPv6 addresses.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

ktap_plan 11
srdma_cleanup
veth_pair veth0 veth1 10.9.0.1/24
rdma link add srdma0 type softrdma netdev veth0 || exit $KSFT_FAIL

mtu_is() {	# mtu_is NETDEV_MTU EXPECTED_IB_MTU
	ip link set veth0 mtu "$1" && ip link set veth1 mtu "$1" &&
		ibv_devinfo -d srdma0 | grep -q "active_mtu:.*$2 "
}
has_gid() {
	ibdev_gids srdma0 | grep -qx "$1"
}

ktap_check "port is ACTIVE with carrier" \
	grep -q ACTIVE /sys/class/infiniband/srdma0/ports/1/state
ip link set veth1 down
ktap_check "port goes DOWN when the carrier is lost" \
	wait_for 'grep -q DOWN /sys/class/infiniband/srdma0/ports/1/state'
ip link set veth1 up
ktap_check "port returns to ACTIVE with the carrier" \
	wait_for 'grep -q ACTIVE /sys/class/infiniband/srdma0/ports/1/state'

ktap_check "netdev MTU 1500 gives active MTU 1024" mtu_is 1500 1024
ktap_check "netdev MTU 9000 gives active MTU 4096" mtu_is 9000 4096
ktap_check "netdev MTU 600 gives active MTU 256" mtu_is 600 256
ip link set veth0 mtu 1500; ip link set veth1 mtu 1500

ktap_check "the IPv4 address has a RoCEv2 GID" \
	wait_for 'has_gid 0000:0000:0000:0000:0000:ffff:0a09:0001'
ip addr add 10.9.1.7/24 dev veth0
ktap_check "a new IPv4 address adds a GID" \
	wait_for 'has_gid 0000:0000:0000:0000:0000:ffff:0a09:0107'
ip addr del 10.9.1.7/24 dev veth0
ktap_check "a removed IPv4 address removes its GID" \
	wait_for '! has_gid 0000:0000:0000:0000:0000:ffff:0a09:0107'
ip addr add fd00:9::7/64 dev veth0 nodad
ktap_check "an IPv6 address adds a GID" \
	wait_for 'has_gid fd00:0009:0000:0000:0000:0000:0000:0007'
ktap_check "ibv_devinfo -v shows the device with its GIDs" \
	sh -c 'ibv_devinfo -v -d srdma0 | grep -q "GID\[ *[0-9]*\]:.*::ffff:10.9.0.1, RoCE v2"'
ktap_finish
