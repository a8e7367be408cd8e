#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UD multicast on one device: attach, detach and delivery to each member
# of an IPv4 and an IPv6 group (selftests/ud_mcast.c).
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$SELFTESTS/ud_mcast" srdma0 1
