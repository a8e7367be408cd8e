#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libibverbs finds softrdma devices through our provider only, and our
# provider never claims another driver's device (rdma_rxe's).
. "$(dirname "$0")/../lib/lib.sh"
RXE_DRIVER=/etc/libibverbs.d/rxe.driver
# libibverbs reads every file of its config dir: hide librxe's elsewhere.
HIDDEN=$(mktemp -d)
restore() {
	[ ! -e "$HIDDEN/rxe.driver" ] || mv "$HIDDEN/rxe.driver" "$RXE_DRIVER"
	rmdir "$HIDDEN"
	srdma_cleanup
}
trap restore EXIT

ktap_plan 6
srdma_cleanup
# softrdma in ns1: rdma_rxe needs UDP 4791 of the initial namespace.
ip netns add ns1
ip link add veth0 type veth peer name veth1 netns ns1
ip addr add 10.9.0.1/24 dev veth0
ip link set veth0 up
ip -n ns1 addr add 10.9.0.2/24 dev veth1
ip -n ns1 link set veth1 up
ip netns exec ns1 rdma link add srdma0 type softrdma netdev veth1 ||
	exit $KSFT_FAIL
modprobe rdma_rxe

ktap_check "ibv_devices lists srdma0 through the build-tree provider" \
	sh -c 'ibv_devices | grep -qw srdma0'
ktap_check "ibv_devinfo -v prints srdma0 with an active port" \
	sh -c 'ibv_devinfo -v -d srdma0 | grep -q "state:.*PORT_ACTIVE"'
if [ -e /etc/libibverbs.d/softrdma.driver ]; then
	ktap_skip "no other provider claims srdma0" "softrdma provider is installed"
else
	ktap_check "no other provider claims srdma0" \
		sh -c '! env -u RDMAV_DRIVERS ibv_devices | grep -qw srdma0'
fi

# Another driver's device, with librxe out of the way: ours must ignore it.
ktap_check "rdma_rxe device created" \
	rdma link add rxe0 type rxe netdev veth0
ktap_check "with librxe too, each provider claims its own device" \
	sh -c 'out=$(ibv_devices) && echo "$out" | grep -qw srdma0 && echo "$out" | grep -qw rxe0'
mv "$RXE_DRIVER" "$HIDDEN/"
ktap_check "the softrdma provider does not claim rxe0" \
	sh -c 'out=$(ibv_devices 2>&1); echo "$out"; echo "$out" | grep -qw srdma0 && ! echo "$out" | grep -qw rxe0'
ktap_finish
