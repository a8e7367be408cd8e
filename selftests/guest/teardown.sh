#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Devices go away cleanly with their netdev, with rdma link delete while a
# process uses them, and with rmmod, which is refused while in use.
. "$(dirname "$0")/../lib/lib.sh"
holder=
stop_holder() {
	[ -z "$holder" ] || { kill "$holder" 2>/dev/null; wait "$holder"; }
	holder=
}
trap 'stop_holder; srdma_cleanup' EXIT

# start_holder IBDEV: a process with an open context and a PD on IBDEV.
start_holder() {
	local out=$(mktemp)
	"$PROGS/verbs_device" --hold "$1" >"$out" 2>&1 &
	holder=$!
	wait_for "grep -q holding $out"
	local rc=$?
	rm -f "$out"
	return $rc
}

ktap_plan 8
srdma_cleanup
veth_pair veth0 veth1 10.9.0.1/24
veth_pair veth2 veth3 10.9.2.1/24

rdma link add srdma0 type softrdma netdev veth0
ip link del veth0
ktap_check "removing the netdev removes the device" \
	wait_for '[ ! -e /sys/class/infiniband/srdma0 ]'

# The name is free once the driver's teardown behind the sysfs removal
# (asynchronous after a netdev removal) is done: until then EEXIST.
wait_for 'rdma link add srdma0 type softrdma netdev veth2'
ktap_check "a process opens the device" start_holder srdma0
ktap_check_fails "rmmod is refused while a process uses the device" \
	rmmod softrdma
ktap_check "rdma link delete completes while a process uses the device" \
	timeout 30 rdma link delete srdma0
stop_holder

rdma link add srdma0 type softrdma netdev veth2
ktap_check "a process opens the device again" start_holder srdma0
ip link del veth2
ktap_check "netdev removal completes while a process uses the device" \
	wait_for '[ ! -e /sys/class/infiniband/srdma0 ]' 30
stop_holder

veth_pair veth0 veth1 10.9.0.1/24
veth_pair veth2 veth3 10.9.2.1/24
rdma link add srdma0 type softrdma netdev veth0
rdma link add srdma1 type softrdma netdev veth2
ktap_check "rmmod with two devices removes the module" rmmod softrdma
ktap_check "rmmod leaves no device behind" \
	sh -c '[ -z "$(ls /sys/class/infiniband)" ] && [ -z "$(rdma link show)" ]'
ktap_finish
