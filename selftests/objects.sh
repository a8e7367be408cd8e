#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Verbs objects from a program, through the provider (verbs_objects.c):
# MRs, CQs, QPs and their state machine, posting into the shared rings.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
veth_pair veth0 veth1 10.9.0.1/24
rdma link add srdma0 type softrdma netdev veth0 || exit $KSFT_FAIL
# Connected QPs use the IPv4 GID as their path: the core adds it async.
wait_for 'ibdev_gids srdma0 | grep -q ":ffff:0a09:0001$"' ||
	ktap_print "no IPv4 GID on srdma0 after 10 s"
"$SELFTESTS/verbs_objects" srdma0
