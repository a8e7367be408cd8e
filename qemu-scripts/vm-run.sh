#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-run.sh [-t TIMEOUT_S] [-m MEM] [-o OUTDIR] -- CMD [ARGS...]
#
# Boot one throw-away test VM (the installed Debian kernel, see lib.sh)
# and run CMD in it as root, in the current directory (the whole host
# filesystem is visible at the same paths, writable in RAM only).
# The guest console streams to the terminal and to OUTDIR/console.log;
# the guest leaves OUTDIR/dmesg and OUTDIR/rc.
#
# Exit status: CMD's; 124 if the guest did not finish within TIMEOUT_S
# (default 600); non-zero (1 if CMD succeeded) if the guest crashed or
# its dmesg shows a kernel problem (Oops, WARNING:, KASAN, ...).
#
# Options:
#   -t TIMEOUT_S  hard limit for the whole guest run (default 600)
#   -m MEM        guest memory (default 2G)
#   -o OUTDIR     output directory (default: fresh dir in build/vm/runs/)
# Environment:
#   KVER          kernel version to boot (default: newest installed)
#   VM_ENV        names of host variables to pass to the guest ("FOO BAR")
#   VM_APPEND     extra kernel command-line words
#   VM_ACCEL      tcg (default) or kvm;  VM_SMP: guest CPUs (default 2)
#   VM_NUMA       2: two NUMA nodes (default 1)
#   VM_CPU        TCG CPU model (default max)
#   VM_QEMU_EXTRA more QEMU arguments, split at spaces
#   VM_SHARE      a writable host directory the guest mounts at the same
#                 path (guests that run at once share it)
# Guest environment: VM_OUT (guest path of OUTDIR, writable, shared with
# the host), VM_KVER, VM_SCRIPTS (this directory), plus VM_ENV variables.

set -eu
. "$(dirname "$0")/lib.sh"

usage() {
	sed -n '4,5p' "$0" | sed 's/^# //' >&2
	exit 2
}

main() {
	local timeout=600 mem=2G opt kver initrd kernel rc=0

	OUTDIR=
	while getopts t:m:o:h opt; do
		case $opt in
		t) timeout=$OPTARG ;;
		m) mem=$OPTARG ;;
		o) OUTDIR=$OPTARG ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# -gt 0 ] || usage

	kver=$(vm_kver)
	initrd=$(vm_ensure_initrd "$kver")
	kernel=$(vm_kernel "$kver")
	OUTDIR=$(vm_make_outdir "$OUTDIR")
	# The exact argv survives: it is %q-quoted into the job script.
	vm_write_job "$OUTDIR" "$kver" "$(printf '%q ' "$@")"
	vm_qemu_args "$kernel" "$initrd" "$OUTDIR" "$mem"

	trap 'vm_kill_guests "$OUTDIR"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	vm_boot_bg "$timeout" "$OUTDIR" ""
	wait
	if vm_boot_lost "$OUTDIR"; then
		vm_keep_boot1 "$OUTDIR"
		echo "${0##*/}: the guest panicked or QEMU crashed (status $(cat "$OUTDIR/qemu-status")) before the job started (console-boot1.log): booting once more" >&2
		vm_boot_bg "$timeout" "$OUTDIR" ""
		wait
	fi

	vm_result "$OUTDIR" vm "$timeout" || rc=$?
	[ "$rc" = 0 ] || echo "${0##*/}: exit $rc (output in $OUTDIR)" >&2
	exit "$rc"
}

main "$@"
