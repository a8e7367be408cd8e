#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh OUTDIR: "make bench-cost" on the host. The cost meter: the
# guest instructions that softrdma and rdma_rxe execute per message,
# counted by the QEMU plugin insn_cost.so while bench/cost/guest.sh runs
# cost_ops between two namespaces in a test VM:
#  - 7.2: Debian sid's kernel and root filesystem, the module and the
#    provider built there (softrdma and rdma_rxe);
#  - 6.1: Debian 12's kernel (softrdma; its rdma_rxe has one socket for
#    every namespace).
# COST_KERNELS picks some (default "7.2 6.1"); COST_RUNS (default 2) boots
# each that many times, the repeats to show that the counts repeat.
# Then bench/cost/report.py writes OUTDIR/cost.md, cost.txt, and
# bench/cost/plot.gp OUTDIR/cost.png.
#
# Deterministic counts: the guest runs on one vCPU under -icount
# shift=COST_SHIFT,sleep=off, so its clock is its instruction count and
# an idle guest skips to its next timer: nothing in the guest, timers
# included, depends on the host's speed or load. (QEMU 7.2's TCG does
# not bring a second vCPU up under -icount.)
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
. bench/sid_build.sh
out=${1:?usage: run.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
plugin=$TOP/bench/cost/insn_cost.so
env="SRDMA_MODROOT COST_CASES COST_WINDOW COST_REPEAT"
runs=()

# boot LABEL N [VAR=VALUE...]: one measured boot of the test VM into
# OUTDIR/LABEL (N = 1) or OUTDIR/LABEL-N, the rest of the environment
# given.
boot() {
	local label=$1 n=$2 dir
	shift 2
	dir=$out/$label
	[ "$n" = 1 ] || dir=$dir-$n
	rm -rf "$dir" && mkdir -p "$dir" || return
	env "$@" VM_SMP=1 \
		VM_QEMU_EXTRA="-icount shift=${COST_SHIFT:-1},sleep=off -plugin $plugin,out=$dir/win" \
		qemu-scripts/vm-run.sh -t 1800 -o "$dir" -- bench/cost/guest.sh ||
		return
	runs+=("${dir##*/}")
}

command -v gnuplot >/dev/null ||
	{ echo "run.sh: gnuplot is missing: run 'make deps-check'" >&2; exit 1; }
start=$(date +%s)
for k in ${COST_KERNELS:-7.2 6.1}; do
	case $k in
	6.1)
		kver=$(make -s print-kver)
		qemu-scripts/stage-modules.sh "$kver" build/modroot >/dev/null ||
			continue
		for n in $(seq "${COST_RUNS:-2}"); do
			boot 6.1 "$n" SRDMA_MODROOT="$TOP/build/modroot" \
				VM_ENV="$env"
		done
		;;
	7.2)
		sid_build "$out" >/dev/null || continue
		for n in $(seq "${COST_RUNS:-2}"); do
			boot 7.2 "$n" KVER="$SID_KVER" VM_ROOTFS="$SID_ROOT" \
				SRDMA_MODROOT="$out/sid-modroot" \
				SRDMA_PROVIDER="$out/sid-provider/libsoftrdma" \
				VM_ENV="$env SRDMA_PROVIDER"
		done
		;;
	*)
		echo "run.sh: no kernel $k (7.2 or 6.1)" >&2
		;;
	esac
done
[ ${#runs[@]} -gt 0 ] || { echo "run.sh: no run measured" >&2; exit 1; }
bench/cost/report.py "$out" "${runs[@]}" &&
	gnuplot -e "dir='$out'" bench/cost/plot.gp &&
	echo "bench-cost: $(($(date +%s) - start)) s; $out/cost.md, cost.txt, cost.png"
