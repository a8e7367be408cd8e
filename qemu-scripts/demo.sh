#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The "make demo" guest: create srdma0 over a veth pair the way a user
# would and show what libibverbs sees.
. "$(dirname "$0")/../selftests/lib.sh"
set -e

srdma_install_module
veth_pair veth0 veth1 10.9.0.1/24
ip addr add fd00:9::1/64 dev veth0 nodad

step() { printf '\n$ %s\n' "$*"; "$@"; }
step rdma link add srdma0 type softrdma netdev veth0
step rdma link show
step ibv_devices
step ibv_devinfo -v -d srdma0
step rdma link delete srdma0
