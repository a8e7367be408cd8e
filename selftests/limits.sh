#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RC at its limits on one device: selftests/rc_limits.c (CQ overrun,
# max_msg_sz, large WRITE/READ, SQE).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
veth_pair veth0 veth1 10.9.0.1/24
rdma link add srdma0 type softrdma netdev veth0 || exit $KSFT_FAIL
wait_for 'ibdev_gids srdma0 | grep -q ffff:0a09:0001' || exit $KSFT_FAIL
"$SELFTESTS/rc_limits" srdma0 1
