#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# iSER between two hosts (vm-pair.sh): host a is the target (LIO with an
# iSER portal on its link address), host b the initiator (open-iscsi's
# iser interface). Over softrdma on both: fio's crc32c-verified writes and
# reads across the link, which must keep order (no resend); then each
# host in turn deletes its device under b's I/O: the I/O fails, the
# session ends on both sides, and a new device serves again. With one
# device for both ends (iser.sh), the kernel's isert target races its own
# teardown at a device removal; here each end sees the removal alone.
# RXE_REFERENCE=1: then the same data checks over rdma_rxe on both hosts,
# for comparison.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/blk_ulp.sh"
. "$TESTLIB/iser_lib.sh"
trap iser_cleanup EXIT
SYNC=$VM_SCRIPTS/vm-sync.sh

reason=$(iser_skip_reason)
[ -z "$reason" ] || { echo "1..0 # SKIP $reason"; exit $KSFT_SKIP; }
if [ "$VM_HOST" = a ]; then
	PORTAL=$VM_IP:3260
	ktap_plan_ref 8 2
else
	PORTAL=$VM_PEER_IP:3260
	ktap_plan_ref 13 6
fi
iser_modules || ktap_print "the iSER modules did not load"
pair_device_up || ktap_print "$VM_HOST: no device"

# session_ends: the target's iSCSI session goes within 60 s.
session_ends() {
	wait_for '[ "$(target_sessions)" = 0 ]' 60 ||
		{ ktap_print "sessions: $(target_sessions)"; return 1; }
}

# device_back: a new device, and the portal listening on it.
device_back() {
	pair_device_up && target_listen_again
}

if [ "$VM_HOST" = a ]; then
	ktap_check "LIO target with an iSER portal on $DEV" target_up
	"$SYNC" barrier iser-target 120
	"$SYNC" barrier iser-data 600
	ktap_check "$DEV: the link kept order: no resend, no sequence NAK" \
		in_order "$DEV"
	ktap_check "the logout ended the target's session" session_ends

	# The initiator's device goes.
	"$SYNC" barrier iser-b-gone 300
	ktap_check "the initiator's device went: the target's session ends" session_ends
	"$SYNC" barrier iser-b-back 300

	# The target's device goes, under the initiator's I/O.
	"$SYNC" barrier iser-io 120
	sleep 3
	ktap_check "$DEV deleted under the initiator's I/O" rdma link delete "$DEV"
	ktap_check "the target's session ends with its device" session_ends
	"$SYNC" barrier iser-a-gone 300
	ktap_check "a new device, and the portal listens on it" device_back
	"$SYNC" barrier iser-a-back 120
	"$SYNC" barrier iser-done 300
	ktap_check "the target comes down" target_down

	if rxe_reference; then
		pair_rxe_up || ktap_print "rxe0 did not come up"
		ktap_check "rxe0: LIO target with an iSER portal" target_up
		"$SYNC" barrier iser-rxe 120
		"$SYNC" barrier iser-rxe-done 600
		ktap_check "rxe0: the target comes down" target_down
	fi
else
	"$SYNC" barrier iser-target 120
	ktap_check "open-iscsi logs in over iSER across the link" initiator_up
	ktap_check "the session's transport is iser" is_iser
	blk_data_checks "$DEV"
	ktap_check "$DEV: logout, no session left" logout_clean
	ktap_check "$DEV: the link kept order: no resend, no sequence NAK" \
		in_order "$DEV"
	"$SYNC" barrier iser-data 600

	# This host's device goes under its I/O.
	new_session
	ktap_check "$DEV deleted under iSER I/O: the I/O fails" \
		blk_delete_under_io "$DEV"
	ktap_check "logout, no session left" logout_clean
	pair_device_up || ktap_print "no new device"
	"$SYNC" barrier iser-b-gone 300
	ktap_check "a new device: login, verified writes, logout" login_verify_logout
	"$SYNC" barrier iser-b-back 300

	# The target's device goes under this host's I/O; the target comes
	# back only after the I/O failed (else the session could recover).
	new_session
	blk_io_start
	"$SYNC" barrier iser-io 120
	blk_io_fails
	ktap_result "the target's device deleted under iSER I/O: the I/O fails" $?
	ktap_check "logout, no session left" logout_clean
	"$SYNC" barrier iser-a-gone 300
	"$SYNC" barrier iser-a-back 120
	ktap_check "the target's new device: login, verified writes, logout" \
		login_verify_logout
	"$SYNC" barrier iser-done 300

	if rxe_reference; then
		pair_rxe_up || ktap_print "rxe0 did not come up"
		"$SYNC" barrier iser-rxe 120
		ktap_check "rxe0: open-iscsi logs in over iSER across the link" initiator_up
		ktap_check "rxe0: the session's transport is iser" is_iser
		blk_data_checks rxe0
		ktap_check "rxe0: logout, no session left" logout_clean
		"$SYNC" barrier iser-rxe-done 600
	fi
	ktap_print "across the link:"
	blk_report
fi
ktap_finish
