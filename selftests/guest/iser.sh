#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# iSCSI over RDMA (iSER), both ends in the kernel (iser_lib.sh), over one
# device looping back to its own address (kernel consumers live in the
# initial namespace): fio writes and verifies (crc32c) at queue depths 1
# and 16, and reads sequentially. RXE_REFERENCE=1: the same run over
# rdma_rxe beside it. A device deleted under iSER I/O is pair_iser.sh's, with the
# target and the initiator on two hosts; here only with
# ISER_DELETE_UNDER_IO=1 (below).
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/blk_ulp.sh"
. "$TESTLIB/iser_lib.sh"

PORTAL=10.9.0.1:3260
ISERT_DEBUG=/sys/module/ib_isert/parameters/debug_level

reason=$(iser_skip_reason)
[ -z "$reason" ] || { echo "1..0 # SKIP $reason"; exit $KSFT_SKIP; }
trap iser_cleanup EXIT

# over IBDEV: target, login, data checks and throughput, logout.
over() {
	local dev=$1
	ktap_check "$dev: LIO target with an iSER portal" target_up
	ktap_check "$dev: open-iscsi logs in over iSER" initiator_up
	ktap_check "$dev: the session's transport is iser" is_iser
	blk_data_checks "$dev"
	ktap_check "$dev: logout" initiator_down
	ktap_check "$dev: the target comes down" target_down
}

# device_gone IBDEV: IBDEV goes away under a running fio, with both ends
# on it: the I/O fails once the session's replacement timeout passed, the
# logout works, and a new device serves again.
device_gone() {
	local dev=$1 rc=0
	target_up && initiator_up || return
	blk_delete_under_io "$dev" || rc=1
	initiator_down
	no_session || rc=1
	[ $rc -eq 0 ] || return 1
	"${dev}_add" && target_listen_again &&
		initiator_up && is_iser &&
		blk_verify_small &&
		initiator_down && target_down
}

ktap_plan_ref 10 9
srdma_cleanup
iser_modules || ktap_print "the iSER modules did not load"

srdma0_up || ktap_print "srdma0 did not come up"
over srdma0
ktap_check "srdma0: the loopback path kept order: no resend, no sequence NAK" \
	in_order srdma0
# With both ends on the one device, its removal reaches LIO's isert
# while the connection's teardown may already run (the initiator's end
# was removed first): isert's release work marks the connection down
# before it destroys the QP and returns its pool CQ, the removal handler
# takes "down" as done, and ib_core then finds the CQ in use
# (ib_cq_pool_cleanup() WARNs), whatever the device. ISER_DELETE_UNDER_IO=1
# runs it anyway, on both devices, with isert's trace on.
if [ "${ISER_DELETE_UNDER_IO:-0}" = 1 ]; then
	echo 2 >$ISERT_DEBUG
	ktap_check "srdma0 deleted under iSER I/O, then a new one serves" \
		device_gone srdma0
else
	ktap_skip "srdma0 deleted under iSER I/O, then a new one serves" \
		"one device for both ends races isert's teardown (pair_iser.sh deletes each end's)"
fi
srdma_cleanup

if rxe_reference; then
	rxe0_up || ktap_print "rxe0 did not come up"
	over rxe0
	if [ "${ISER_DELETE_UNDER_IO:-0}" = 1 ]; then
		ktap_check "rxe0 deleted under iSER I/O, then a new one serves" \
			device_gone rxe0
	else
		ktap_skip "rxe0 deleted under iSER I/O, then a new one serves" \
			"one device for both ends races isert's teardown (ISER_DELETE_UNDER_IO=1)"
	fi
fi

blk_report
ktap_finish
