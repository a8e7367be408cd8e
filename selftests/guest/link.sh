#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "rdma link" flows: create, autoload, delete and the refused requests.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

ktap_plan 11
srdma_cleanup
veth_pair veth0 veth1 10.9.0.1/24

ktap_check "rdma link add autoloads the module and creates the device" \
	rdma link add srdma0 type softrdma netdev veth0
ktap_check "the device is bound to its netdev" \
	sh -c 'rdma link show srdma0/1 | grep -q "netdev veth0"'
ktap_check "the module is loaded" grep -q '^softrdma ' /proc/modules
ktap_check "hca_type identifies softrdma" \
	grep -qx softrdma /sys/class/infiniband/srdma0/hca_type

ktap_check_fails "a second device on the same netdev is refused" \
	rdma link add srdma1 type softrdma netdev veth0
ktap_check_fails "a name already in use is refused" \
	rdma link add srdma0 type softrdma netdev veth1
ktap_check_fails "a netdev that does not exist is refused" \
	rdma link add srdma2 type softrdma netdev nosuchdev
ktap_check_fails "an rxe* name (librxe's) is refused" \
	rdma link add rxe7 type softrdma netdev veth1
ktap_check_fails "a non-Ethernet netdev is refused" \
	rdma link add srdma3 type softrdma netdev lo

ktap_check "refused requests leave no device behind" \
	sh -c '[ "$(ls /sys/class/infiniband)" = srdma0 ]'

rdma link delete srdma0
ktap_check "rdma link delete removes the device" \
	sh -c '! rdma link show srdma0/1 2>/dev/null && ! ls /sys/class/infiniband/srdma0 2>/dev/null'
ktap_finish
