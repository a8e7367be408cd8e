#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# wire-run.sh OUTDIR: "make bench-wire" on the host. The wire path between
# two hosts, softrdma next to rdma_rxe, three ways:
#  - ns-6.1: bench/wire.sh in a VM of Debian 12's kernel (two namespaces;
#    6.1's rdma_rxe has one socket for every namespace: softrdma only);
#  - ns-sid: bench/wire.sh in a VM of Debian sid's kernel and rootfs, the
#    module and provider built there (its rdma_rxe has a socket per
#    namespace: the like-for-like comparison);
#  - vms-6.1: bench/pair.sh between two VMs of Debian 12's kernel;
#  - ulp-vms-6.1: bench/pair_ulp.sh there: NVMe-oF and NFS/RDMA, loss-free
#    and across 1% loss.
# Then bench/wire-report.sh OUTDIR with all of them. WIRE_RUNS picks some
# (default "ns-6.1 ns-sid vms-6.1 ulp-vms-6.1"); the rest of the environment (REPS,
# BN_SECS, ...) goes to the guests.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
. bench/sid_build.sh
out=${1:?usage: wire-run.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
env="SRDMA_MODROOT REPS SECS BN_RATE BN_FLOWS BN_SECS BN_LAT_ITERS LOSS_SECS LOSS_REPS
	RPC_REPS RPC_ITERS WIRE_CASES"
reports=()

for run in ${WIRE_RUNS:-ns-6.1 ns-sid vms-6.1 ulp-vms-6.1}; do
	rm -rf "${out:?}/$run"
	case $run in
	ns-6.1)
		qemu-scripts/stage-modules.sh "$(make -s print-kver)" build/modroot &&
			SRDMA_MODROOT=$TOP/build/modroot VM_ENV=$env \
			qemu-scripts/vm-run.sh -t 1800 -o "$out/$run" -- bench/wire.sh
		reports+=("$run=$out/$run")
		;;
	ns-sid)
		sid_build "$out" || continue
		KVER=$SID_KVER VM_ROOTFS=$SID_ROOT SRDMA_MODROOT=$out/sid-modroot \
			SRDMA_PROVIDER=$out/sid-provider/libsoftrdma \
			VM_ENV="$env SRDMA_PROVIDER" \
			qemu-scripts/vm-run.sh -t 1800 -o "$out/$run" -- bench/wire.sh
		reports+=("$run=$out/$run")
		;;
	vms-6.1)
		qemu-scripts/stage-modules.sh "$(make -s print-kver)" build/modroot &&
			SRDMA_MODROOT=$TOP/build/modroot VM_ENV=$env \
			qemu-scripts/vm-pair.sh -t 1800 -o "$out/$run" -- \
			bench/pair.sh ::: bench/pair.sh
		reports+=("$run=$out/$run/b")
		;;
	ulp-vms-6.1)
		qemu-scripts/stage-modules.sh "$(make -s print-kver)" build/modroot &&
			SRDMA_MODROOT=$TOP/build/modroot VM_ENV="$env ULP_SECS ULP_LOSS ULP_RXE" \
			qemu-scripts/vm-pair.sh -t 2400 -o "$out/$run" -- \
			bench/pair_ulp.sh ::: bench/pair_ulp.sh
		reports+=("$run=$out/$run/b")
		;;
	esac
done
bench/wire-report.sh "$out" "${reports[@]}"
