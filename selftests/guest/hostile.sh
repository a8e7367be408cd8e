#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hostile input: roce_inject.c impersonates the peer of live RC QPs of
# srdma0 from another namespace and sends it targeted malformed packets
# and HOSTILE_COUNT (default 100000) seeded random mutations (seed
# HOSTILE_SEED, default 1). Afterwards the kernel log has no splat, the
# counters name every drop reason, and rc_integrity still passes on the
# same device.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

SEED=${HOSTILE_SEED:-1}
COUNT=${HOSTILE_COUNT:-100000}
EXTRA=3
COUNTERS="tx_pkts tx_bytes rx_pkts rx_bytes retransmits retry_timeouts tlp_probes tlp_recoveries
	seq_naks_sent seq_naks_rcvd rnr_naks_sent rnr_naks_rcvd dup_requests ooo_held odp_faults
	seq_naks_one_resent resp_gaps_asked
	rx_drops drop_short drop_bad_version drop_bad_opcode drop_bad_pad
	drop_bad_length drop_bad_icrc drop_no_qp drop_qp_type drop_qp_state
	drop_psn drop_nomem drop_bad_qkey drop_no_recv drop_bad_request"

srdma_cleanup
ip netns add hpeer
ip link add veth0 type veth peer name veth1 netns hpeer
ip addr add 10.9.0.1/24 dev veth0
ip -n hpeer addr add 10.9.0.2/24 dev veth1
ip link set veth0 up
ip -n hpeer link set veth1 up
# The injector outruns the receive softirq: keep the backlog from dropping.
backlog=$(cat /proc/sys/net/core/netdev_max_backlog)
trap 'echo "$backlog" >/proc/sys/net/core/netdev_max_backlog
	[ -z "${zcopy_was:-}" ] || echo "$zcopy_was" >$zcopy; srdma_cleanup' EXIT
echo 100000 >/proc/sys/net/core/netdev_max_backlog
rdma link add srdma0 type softrdma netdev veth0 || exit $KSFT_FAIL
# A device on the peer's side too: its QPs must be out of srdma0's reach.
ip netns exec hpeer rdma link add srdma9 type softrdma netdev veth1 ||
	exit $KSFT_FAIL
wait_for 'ibdev_gids srdma0 | grep -q ffff:0a09:0001 &&
	ibdev_gids srdma9 | grep -q ffff:0a09:0002' || exit $KSFT_FAIL
dmesg_start=$(dmesg | wc -l)
# The injector reads the device's packets from a raw socket, possibly
# after the QP reused the send buffer; lent pages (zero-copy) would show
# it the new bytes. The device must build valid packets: copy them all.
zcopy=/sys/module/softrdma/parameters/zcopy_min
zcopy_was=$(cat $zcopy)
echo 0 >$zcopy

# The injector's TAP folded into ours, our EXTRA results after its own.
echo "TAP version 13"
ktap_planned=$EXTRA ktap_extra=$EXTRA
ktap_fold < <(timeout -k 5 "${HOSTILE_TIMEOUT:-240}" \
	"$PROGS/roce_inject" srdma0 hpeer 10.9.0.2 "$SEED" "$COUNT" srdma9 2>&1;
	echo "# exit $?")

stats=$(rdma statistic show link srdma0/1 2>&1)
if echo "$stats" | grep -qw rx_drops; then
	missing=""
	for c in $COUNTERS; do
		echo "$stats" | grep -qw "$c" || missing="$missing $c"
	done
	[ -z "$missing" ] || ktap_print "missing counters:$missing"
	ktap_result "rdma statistic shows every transport and drop counter" \
		"$([ -z "$missing" ]; echo $?)"
	ktap_print "$stats"
else
	ktap_skip "rdma statistic shows every transport and drop counter" \
		"no rx_drops counter"
fi

ktap_check "rc_integrity on the same device still passes" \
	"$PROGS/rc_integrity" loop srdma0 1

dmesg_clean "$dmesg_start"
rc=$?
ktap_print "$(($(dmesg | wc -l) - dmesg_start)) kernel log lines during the test"
ktap_result "no kernel splat (Oops, BUG, WARNING, ...) during the test" $rc
ktap_finish
