#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Device-level verbs from a program, through the provider (verbs_device.c).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
veth_pair veth0 veth1 10.9.0.1/24
rdma link add srdma0 type softrdma netdev veth0 || exit $KSFT_FAIL
"$SELFTESTS/verbs_device" srdma0 veth1
