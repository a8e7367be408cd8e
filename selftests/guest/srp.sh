#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SCSI RDMA Protocol, both ends in the kernel: LIO exports a RAM disk
# through ib_srpt (set up through configfs, logins by RDMA/CM on port
# 5555) and ib_srp logs in with RDMA/CM addressing (add_target with
# dest=IP:PORT), over one device looping back to its own address (kernel
# consumers live in the initial namespace). fio writes and verifies
# (crc32c) at queue depths 1 and 16, and reads sequentially; then the
# device is deleted under I/O: the initiator drops its target, fio fails,
# and a new device serves again. RXE_REFERENCE=1: the same run over
# rdma_rxe beside it.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/blk_ulp.sh"

LIO=/sys/kernel/config/target
CM_PORT=5555
INITIATOR=10.9.0.1

command -v fio >/dev/null || { echo "1..0 # SKIP fio missing"; exit $KSFT_SKIP; }

# srpt names a port by the interface ID of its GID 0, as a GUID.
srpt_port() {
	sed 's/^\([0-9a-f]*:\)\{4\}//' "/sys/class/infiniband/$1/ports/1/gids/0"
}

# The ib_srp SCSI host's disk, once logged in.
blk_disk() {
	local h b
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name" 2>/dev/null)" = ib_srp ] || continue
		for b in "$h"/device/target*/*/block/*; do
			[ -e "$b" ] && echo "/dev/${b##*/}" && return
		done
	done
}

initiator_down() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete"
	done
	wait_for '[ -z "$(blk_disk)" ]' 30
}

target_down() {
	local t
	for t in $LIO/srpt/*/tpg_1; do
		[ -d "$t" ] || continue
		echo 0 >"$t/enable"
		rm -f "$t"/acls/*/lun_0/lun_0 "$t"/lun/lun_0/srp0
		rmdir "$t"/acls/*/lun_0 "$t"/acls/* "$t"/lun/lun_0 "$t" "${t%/*}"
	done 2>/dev/null
	[ -d $LIO/srpt/discovery_auth ] && echo 0 >$LIO/srpt/discovery_auth/rdma_cm_port
	rmdir $LIO/srpt $LIO/core/rd_mcp_1/srp0 $LIO/core/rd_mcp_1 2>/dev/null
	return 0
}

# ib_srpt and ib_srp give every new device a PD of theirs (ib_client):
# they go, so that the tests after this one see only their own objects.
cleanup() {
	initiator_down
	target_down
	srdma_cleanup
	modprobe -r ib_srp ib_srpt 2>/dev/null
}
trap cleanup EXIT

# target_up IBDEV: a 128 MiB RAM disk as LUN 0 of IBDEV's port, mapped
# for the initiator $INITIATOR (ib_srpt has no demo mode), RDMA/CM
# logins on $CM_PORT.
target_up() {
	local t=$LIO/srpt/$(srpt_port "$1")/tpg_1
	local acl=$t/acls/$INITIATOR
	mkdir -p $LIO/core/rd_mcp_1/srp0 &&
		echo rd_pages=32768 >$LIO/core/rd_mcp_1/srp0/control &&
		echo 1 >$LIO/core/rd_mcp_1/srp0/enable &&
		mkdir -p $LIO/srpt &&
		echo $CM_PORT >$LIO/srpt/discovery_auth/rdma_cm_port &&
		mkdir -p "$t/lun/lun_0" "$acl/lun_0" &&
		ln -s $LIO/core/rd_mcp_1/srp0 "$t/lun/lun_0/srp0" &&
		ln -s "$t/lun/lun_0" "$acl/lun_0/lun_0" &&
		echo 1 >"$t/enable"
}

# initiator_up IBDEV: log in to the target over RDMA/CM; the target port
# ID (id_ext, ioc_guid) is ib_srpt's service GUID.
initiator_up() {
	local guid
	guid=$(sed 's/^0x//' /sys/module/ib_srpt/parameters/srpt_service_guid) &&
		echo "id_ext=$guid,ioc_guid=$guid,dest=$INITIATOR:$CM_PORT" \
			>"/sys/class/infiniband_srp/srp-$1-1/add_target" &&
		wait_for '[ -b "$(blk_disk)" ]' 30
}

# over IBDEV: target, login, data checks and throughput, logout.
over() {
	local dev=$1
	ktap_check "$dev: LIO target on ib_srpt, RDMA/CM port $CM_PORT" target_up "$dev"
	ktap_check "$dev: ib_srp logs in by RDMA/CM" initiator_up "$dev"
	blk_data_checks "$dev"
	ktap_check "$dev: the initiator removes its target" initiator_down
	ktap_check "$dev: the target comes down" target_down
}

# The device goes away under a running fio: ib_srp removes its SCSI host,
# fio ends with I/O errors, ib_srpt lets go of the port; a new device
# serves again.
device_gone() {
	local rc=0
	target_up srdma0 && initiator_up srdma0 || return
	blk_delete_under_io srdma0 || rc=1
	wait_for '[ -z "$(blk_disk)" ]' 30 || { ktap_print "the disk is still there"; rc=1; }
	target_down
	[ $rc -eq 0 ] || return 1
	srdma0_add &&
		target_up srdma0 && initiator_up srdma0 &&
		blk_verify_small &&
		initiator_down && target_down
}

ktap_plan_ref 9 7
srdma_cleanup
# LIO's state directory (it warns when there is none); sd_mod for the
# LUN's disk (no udev here to load it).
mkdir -p /etc/target
modprobe ib_srpt && modprobe ib_srp && modprobe sd_mod ||
	ktap_print "the SRP modules did not load"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

srdma0_up || ktap_print "srdma0 did not come up"
over srdma0
ktap_check "srdma0: the loopback path kept order: no resend, no sequence NAK" \
	in_order srdma0
ktap_check "srdma0 deleted under SRP I/O, then a new one serves" device_gone
srdma_cleanup

if rxe_reference; then
	rxe0_up || ktap_print "rxe0 did not come up"
	over rxe0
fi

blk_report
ktap_finish
