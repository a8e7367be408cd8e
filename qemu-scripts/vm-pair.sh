#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-pair.sh [-t TIMEOUT_S] [-m MEM] [-o OUTDIR] -- CMD_A ::: CMD_B
#
# Boot two test VMs, "a" and "b", at once, joined by a private virtio-net
# Ethernet link, and run CMD_A in a and CMD_B in b (each as root, in the
# current directory, like vm-run.sh).  CMD_A and CMD_B are shell command
# strings: the words on each side of ::: are joined with spaces and run
# with `bash -c` (like ssh), so quote them as one word and let the guest
# expand its variables:
#
#   vm-pair.sh -- 'server --port 1' ::: 'client $VM_PEER_IP 1'
#
# Guest environment (in addition to vm-run.sh's VM_OUT, VM_KVER,
# VM_SCRIPTS and the VM_ENV variables):
#   VM_HOST      a or b
#   VM_IFACE     name of the link's interface (already up)
#   VM_IP        10.77.0.1 (a) / 10.77.0.2 (b), a /24
#   VM_PEER_IP   the other guest's IPv4 address
#   VM_IP6       fd77::1 (a) / fd77::2 (b), a /64 without DAD
#   VM_PEER_IP6  the other guest's IPv6 address
# The guests boot in parallel but not in lockstep: a test must tolerate
# its peer not being up yet, either by retrying its connection or with
# "$VM_SCRIPTS/vm-sync.sh" (wait for the peer / a named barrier).
#
# Each guest's rc, dmesg and console.log go to OUTDIR/a and OUTDIR/b; the
# consoles stream to the terminal prefixed "[a] " and "[b] ".  Exit status:
# 0 only if both commands succeeded and neither dmesg shows a kernel
# problem; otherwise the first failure's status (124 on timeout).
#
# The link is a QEMU dgram netdev over two unix sockets in a private
# host directory: connectionless, so neither guest has to start first,
# and nothing ever leaves this machine.  Options and KVER, VM_ENV,
# VM_APPEND, VM_ACCEL, VM_SMP are as for vm-run.sh.

set -eu
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '4,4p' "$0" | sed 's/^# //' >&2
	exit 2
}

# Per-guest job settings.  Args: host letter, own index, peer index.
pair_vars() {
	echo VM_HOST="$1" VM_IP=10.77.0."$2" VM_PEER_IP=10.77.0."$3" \
		VM_IP6=fd77::"$2" VM_PEER_IP6=fd77::"$3"
}

pair_other() {
	[ "$1" = a ] && echo b || echo a
}

# Boot guest $1 (a or b) in the background.  Args: host, own index,
# peer index, command string.  Uses the settings main() put in globals.
pair_start() {
	local host=$1 me=$2 peer=$3 cmd=$4 dir=$OUTDIR/$1

	mkdir -p "$dir"
	# shellcheck disable=SC2046 # pair_vars yields NAME=value words
	vm_write_job "$dir" "$RUN_KVER" "$cmd" $(pair_vars "$host" "$me" "$peer")
	vm_qemu_args "$RUN_KERNEL" "$RUN_INITRD" "$dir" "$MEM"
	vm_boot_bg "$TIMEOUT" "$dir" "[$host] " \
		-netdev "dgram,id=link,local.type=unix,local.path=$SOCKDIR/$host,remote.type=unix,remote.path=$SOCKDIR/$(pair_other "$host")" \
		-device "virtio-net-pci,netdev=link,mac=52:54:00:77:00:0$me"
}

pair_boot() {
	pair_start a 1 2 "$CMD_A"
	pair_start b 2 1 "$CMD_B"
}

# Wait for both guests. When QEMU crashes under one, its peer would only
# wait out every barrier and test timeout: it is stopped at once.
pair_wait() {
	local host other

	while [ ! -s "$OUTDIR/a/qemu-status" ] || [ ! -s "$OUTDIR/b/qemu-status" ]; do
		for host in a b; do
			other=$(pair_other "$host")
			if vm_qemu_crashed "$OUTDIR/$host" &&
			   [ ! -s "$OUTDIR/$other/qemu-status" ]; then
				echo "${0##*/}: QEMU of $host crashed (status $(cat "$OUTDIR/$host/qemu-status")): stopping $other" >&2
				vm_kill_guests "$OUTDIR/$other"
			fi
		done
		sleep 1
	done
	wait
}

# shellcheck disable=SC2317 # only called from the EXIT trap
cleanup() {
	vm_kill_guests "$OUTDIR/a" "$OUTDIR/b"
	rm -rf "$SOCKDIR"
}

main() {
	local opt cmd_a=() rc=0 rc_b=0

	TIMEOUT=600 MEM=2G OUTDIR=
	while getopts t:m:o:h opt; do
		case $opt in
		t) TIMEOUT=$OPTARG ;;
		m) MEM=$OPTARG ;;
		o) OUTDIR=$OPTARG ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	while [ $# -gt 0 ] && [ "$1" != ::: ]; do
		cmd_a+=("$1")
		shift
	done
	if [ $# -lt 2 ] || [ ${#cmd_a[@]} = 0 ]; then
		usage
	fi
	shift

	RUN_KVER=$(vm_kver)
	RUN_INITRD=$(vm_ensure_initrd "$RUN_KVER")
	RUN_KERNEL=$(vm_kernel "$RUN_KVER")
	OUTDIR=$(vm_make_outdir "$OUTDIR")
	# Short path: unix socket names are limited to 107 bytes.
	SOCKDIR=$(mktemp -d /tmp/vm-pair.XXXXXX)
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	CMD_A=${cmd_a[*]} CMD_B=$*
	pair_boot
	pair_wait
	# A boot that ran nothing of ours (see vm_boot_lost()): both again.
	if vm_boot_lost "$OUTDIR/a" || vm_boot_lost "$OUTDIR/b"; then
		vm_keep_boot1 "$OUTDIR/a"
		vm_keep_boot1 "$OUTDIR/b"
		echo "${0##*/}: a guest panicked or QEMU crashed before its job started (console-boot1.log): booting the pair once more" >&2
		pair_boot
		pair_wait
	fi

	vm_result "$OUTDIR/a" a "$TIMEOUT" || rc=$?
	vm_result "$OUTDIR/b" b "$TIMEOUT" || rc_b=$?
	[ "$rc" != 0 ] || rc=$rc_b
	[ "$rc" = 0 ] || echo "${0##*/}: exit $rc (output in $OUTDIR)" >&2
	exit "$rc"
}

main "$@"
