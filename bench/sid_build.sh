# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the host sides of the benchmarks that run in a VM of Debian
# sid (bench/wire-run.sh, bench/cost/run.sh), from the repository's top.

# sid_build OUTDIR: sid's root filesystem (qemu-scripts/rootfs.sh), the
# module and the provider built there (the provider in OUTDIR/sid-provider)
# and the module staged in OUTDIR/sid-modroot; SID_ROOT and SID_KVER set.
sid_build() {
	SID_ROOT=$(qemu-scripts/rootfs.sh sid) || return
	SID_KVER=$(ls -1 "$SID_ROOT/lib/modules" | sort -V | tail -n 1)
	qemu-scripts/rootfs-run.sh "$SID_ROOT" make -s module KVER="$SID_KVER" &&
		qemu-scripts/rootfs-run.sh "$SID_ROOT" make -s -C provider \
			O="$1/sid-provider" &&
		VM_KROOT=$SID_ROOT qemu-scripts/stage-modules.sh "$SID_KVER" \
			"$1/sid-modroot"
}
