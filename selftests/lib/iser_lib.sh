# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# iSER's two ends, sourced by iser.sh (one host), pair_iser.sh and
# pair_iser_churn.sh (two) after lib.sh and blk_ulp.sh: LIO exporting a
# RAM disk through an iSER portal (ib_isert, set up through configfs as
# targetcli would) at $PORTAL, and open-iscsi logging in to it through
# its "iser" interface (ib_iser).
IQN=iqn.2026-12.io.softrdma:iser-test
LIO=/sys/kernel/config/target

# iser_skip_reason: why iSER cannot run here, empty when it can.
iser_skip_reason() {
	local tool
	for tool in iscsiadm iscsid fio; do
		command -v $tool >/dev/null || { echo "$tool missing (open-iscsi)"; return; }
	done
}

# iser_modules: the target and initiator modules, configfs, LIO's state
# directory (it warns when there is none), iscsiadm's locks; sd_mod for
# the LUN's disk (no udev here to load it).
iser_modules() {
	mkdir -p /etc/target /run/lock/iscsi
	modprobe ib_isert && modprobe ib_iser && modprobe sd_mod || return
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
}

initiator_down() {
	iscsiadm -m node -T $IQN -p "$PORTAL" --logout >/dev/null 2>&1
	iscsiadm -m node -T $IQN -p "$PORTAL" -o delete >/dev/null 2>&1
	return 0
}

target_down() {
	local t=$LIO/iscsi/$IQN/tpgt_1
	[ -d $t ] && echo 0 >$t/enable
	rm -f $t/lun/lun_0/rd0 2>/dev/null
	rmdir "$t/np/$PORTAL" $t/lun/lun_0 $t $LIO/iscsi/$IQN \
		$LIO/core/rd_mcp_0/rd0 $LIO/core/rd_mcp_0 2>/dev/null
	return 0
}

# iser_cleanup: whatever either end left, and the modules.
iser_cleanup() {
	initiator_down
	pkill -x iscsid
	target_down
	srdma_cleanup
	modprobe -r ib_iser ib_isert 2>/dev/null
}

# A 128 MiB RAM disk as LUN 0 of $IQN, open to any initiator, on an iSER
# portal (LIO keeps the TCP portal on the same address beside it).
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
	mkdir "$t/np/$PORTAL" && echo 1 >"$t/np/$PORTAL/iser" && echo 1 >$t/enable
}

# target_listen_again: the portal's iSER listener went with its device;
# turning iSER off and on again on the portal listens on the new one.
target_listen_again() {
	local np=$LIO/iscsi/$IQN/tpgt_1/np/$PORTAL
	echo 0 >"$np/iser" && echo 1 >"$np/iser"
}

# target_sessions: the number of the target's iSCSI sessions.
target_sessions() {
	local s
	s=$(cat $LIO/iscsi/$IQN/tpgt_1/dynamic_sessions 2>/dev/null)
	echo "$s" | grep -c .
}

# iscsid, once; SendTargets discovery over TCP, then the target's node
# record moved to the iser transport, with a short replacement timeout
# (I/O fails 5 s after the connection is lost). Says which step failed.
#
# Not discovery over iSER (-I iser): iscsiadm (open-iscsi 2.1.8, and its
# master of 2026) sends the Text request through the kernel and waits for
# the netlink reply to that send; a Text response that comes first is set
# aside, then iscsiadm polls the socket for it, times out after 30 s
# ("Discovery session ... timed out") and reconnects, leaving its kernel
# session behind. A vCPU that stalls just after the send (TCG) is enough,
# whatever the RDMA device. iscsid, which logs the sessions in, queues
# such events and is not affected.
initiator_up() {
	local node=(-m node -T "$IQN" -p "$PORTAL")

	modprobe ib_iser || return
	pgrep -x iscsid >/dev/null || iscsid || return
	iscsiadm -m discovery -t sendtargets -p "$PORTAL" >/dev/null ||
		{ echo "SendTargets discovery at $PORTAL failed"; return 1; }
	iscsiadm "${node[@]}" -o update -n iface.transport_name -v iser &&
		iscsiadm "${node[@]}" -o update \
			-n node.session.timeo.replacement_timeout -v 5 || return
	iscsiadm "${node[@]}" --login >/dev/null ||
		{ echo "login to $IQN failed"; return 1; }
	wait_for '[ -b "$(blk_disk)" ]' 30 ||
		{ echo "no disk 30 s after the login"; return 1; }
}

# iser_diag: what a failed session leaves to read: the device's QPs, their
# states and progress (PSNs, WQEs open), its counters that moved, the
# kernel's last iSCSI lines.
iser_diag() {
	rdma -dd res show qp link "$DEV/1" | grep -v GSI
	echo "$DEV: $(moved_counters "$DEV")"
	dmesg | grep -E 'iser|isert|iSCSI|connection[0-9]|session[0-9]' |
		grep -v 'I/O error' | tail -n 6
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

# no_session: the initiator kept no session.
no_session() {
	! iscsiadm -m session >/dev/null 2>&1 || { ktap_print "a session is left"; return 1; }
}

# The initiator's steps around a device that goes (pair_iser.sh,
# pair_iser_churn.sh). logout_clean: the logout, and no session left.
logout_clean() {
	initiator_down
	no_session
}

# login_verify_logout: a new session over iSER, a verified write, logout;
# the device's state when one of them fails.
login_verify_logout() {
	initiator_up && is_iser && blk_verify_small && logout_clean ||
		{ iser_diag; return 1; }
}

# new_session: a session over iSER for the I/O a device's deletion
# interrupts; else why there is none (the next checks then fail).
new_session() {
	local out

	out=$(initiator_up 2>&1 && is_iser 2>&1) && return
	ktap_print "no new session"
	{ echo "$out"; iser_diag; } | sed 's/^/# /'
}
