#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# iSER under device churn between two hosts (vm-pair.sh), run by hand, not
# by make check: host a is the LIO target, host b deletes its device
# under iSER I/O and logs in over a new one, ISER_CHURN times (default
# 10), each a check. With ISER_CHURN_DROP=1, every other time b's RoCE
# packets are dropped while its device goes, so its DREQ is lost (as it
# can be at a removal): LIO then keeps the session of an idle connection
# for good (it sends no NOP-In over iSER). Both hosts sample their QPs'
# and CQs' state (rdma -dd resource), counters and LIO's threads every
# few seconds into $VM_OUT/watch.log. For the SendTargets discovery
# timeout that pair_iser.sh met once in CI:
#
#   ISER_CHURN=20 ISER_CHURN_DROP=1 TEST_TIMEOUT=3000 \
#   VM_ENV="ISER_CHURN ISER_CHURN_DROP TEST_TIMEOUT" \
#   qemu-scripts/vm-pair.sh -t 3200 -o build/vm/churn -- \
#       'selftests/run.sh pair_iser_churn' ::: 'selftests/run.sh pair_iser_churn'
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/blk_ulp.sh"
. "$TESTLIB/iser_lib.sh"
SYNC=$VM_SCRIPTS/vm-sync.sh
N=${ISER_CHURN:-10}

reason=$(iser_skip_reason)
[ -z "$reason" ] || { echo "1..0 # SKIP $reason"; exit $KSFT_SKIP; }

# sample_state: the state to read after a failure, every few seconds.
sample_state() {
	local pid

	while :; do
		echo "=== $(date +%T) up $(cut -d' ' -f1 /proc/uptime)"
		dmesg -c | grep -v 'I/O error'
		rdma -dd resource show qp | grep -v GSI
		rdma -dd resource show cq
		echo "$DEV: $(moved_counters "$DEV")"
		for pid in $(pgrep '^iscsi_(np|trx|ttx)$'); do
			echo "--- $pid $(cat "/proc/$pid/comm")"
			cat "/proc/$pid/stack"
		done
		[ "$VM_HOST" = a ] && echo "sessions: $(target_sessions)"
		sleep 3
	done >"$VM_OUT/watch.log" 2>&1
}

# drop_roce on|off: b's outgoing RoCEv2 packets dropped, or not.
drop_roce() {
	if [ "$1" = on ]; then
		tc qdisc add dev "$VM_IFACE" root handle 1: prio &&
			tc filter add dev "$VM_IFACE" parent 1: protocol ip u32 \
				match ip dport 4791 0xffff action drop
	else
		tc qdisc del dev "$VM_IFACE" root
	fi
}

# churn I: b's device deleted 3 s into iSER I/O (its packets dropped
# meanwhile on odd I with ISER_CHURN_DROP), the session logged out, a
# new device.
churn() {
	local drop=

	[ -n "${ISER_CHURN_DROP:-}" ] && [ $(($1 % 2)) = 1 ] && drop=1
	new_session
	blk_delete_under_io "$DEV" ${drop:+drop_roce on} ||
		ktap_print "$DEV not deleted, or the I/O did not fail"
	[ -z "$drop" ] || drop_roce off
	logout_clean || ktap_print "a session is left"
	pair_device_up || ktap_print "no new device"
}

iser_modules || ktap_print "the iSER modules did not load"
pair_device_up || ktap_print "$VM_HOST: no device"
sample_state &
SAMPLER=$!
trap 'kill $SAMPLER; iser_cleanup' EXIT
if [ "$VM_HOST" = a ]; then
	PORTAL=$VM_IP:3260
	ktap_plan 1
	target_up
	ktap_result "LIO target with an iSER portal on $DEV" $?
	"$SYNC" barrier churn-target 120
	"$SYNC" barrier churn-done $((N * 300))
	ktap_print "sessions left: $(target_sessions)"
else
	PORTAL=$VM_PEER_IP:3260
	ktap_plan "$N"
	"$SYNC" barrier churn-target 120
	for i in $(seq "$N"); do
		churn "$i"
		ktap_check "churn $i: a new device: login, verified writes, logout" \
			login_verify_logout
	done
	"$SYNC" barrier churn-done 300
fi
ktap_finish
