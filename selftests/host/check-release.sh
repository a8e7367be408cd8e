#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-release.sh RELEASE [--build]: softrdma as a user of Debian RELEASE
# (trixie, sid, ...) gets it. In that release's root filesystem (rootfs.sh), with
# its compiler, kernel headers and libibverbs: the module builds with no
# warning, and the provider builds for its rdma-core. Then the test VM
# boots that release's kernel with that rootfs as its root and runs the
# core selftests (RELEASE_TESTS: bring-up, namespaces, objects, RC/UD/UC
# integrity, and rdma-core's own pyverbs suite beside rdma_rxe), and two
# VMs run the tools between that kernel's rdma_rxe and softrdma (pingpong,
# perftest, rping, ucmatose and perftest over rdma_cm: what tools.sh and
# cm.sh do on bookworm, here against rdma_rxe). --build: the builds only,
# no guest. Prints "N passed, N failed, N skipped" last; output in
# build/release/RELEASE/.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
rel=${1:?usage: check-release.sh RELEASE}
# The tests tagged release in the manifest; PREEMPT_RT adds those tagged
# rt: a kernel ULP (nvme-rdma and nvmet-rdma), whose posts from softirq
# take the inline-kick path that preemptible() decides.
core=$(selftests/run.sh --list release)
[ "${rel%-rt}" = "$rel" ] || core+=" $(selftests/run.sh --list rt)"
RELEASE_TESTS=${RELEASE_TESTS:-$core}
out=$TOP/build/release/$rel
. selftests/host/check_lib.sh
CHECK_LABEL="$rel: "

finish() {
	print_counts
	exit
}

# build_clean LOG CMD...: CMD succeeds and prints no compiler warning.
build_clean() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 || { tail -n 20 "$log"; return 1; }
	! grep -E 'warning:|error:' "$log"
}

rm -rf "$out"
mkdir -p "$out"
root=$(qemu-scripts/rootfs.sh "$rel")
check "root filesystem (rootfs.sh)" test -n "$root" || finish
kver=$(ls -1 "$root/lib/modules" | sort -V | tail -n 1)
sed -n 's/^\(linux-image-[0-9][^ ]*\|libibverbs1\|gcc\|perftest\) /# \1 /p' \
	"$root/MANIFEST"

check "module builds for $kver with W=1 and no warning" \
	build_clean "$out/module.log" qemu-scripts/rootfs-run.sh "$root" \
	make -s module KVER="$kver" || finish
check "provider builds for its rdma-core with no warning" \
	build_clean "$out/provider.log" release_make "$root" provider "$out/provider" || finish
check "selftests of its rdma-core's builders build with no warning" \
	build_clean "$out/progs.log" release_make "$root" progs "$out/progs" || finish
lib=$(ls "$out"/provider/libsoftrdma-rdmav*.so 2>/dev/null)
echo "# provider: ${lib##*/}"
[ "${2:-}" != --build ] || finish
check "module index staged" env VM_KROOT="$root" \
	qemu-scripts/stage-modules.sh "$kver" "$out/modroot" || finish

# The VMs boot the release's kernel, not the one make check builds for.
vm_env="SRDMA_MODROOT SRDMA_PROVIDER RELEASE_PROGS CHECK_FULL"
export KVER=$kver SRDMA_MODROOT=$out/modroot
release_export "$root" "$out"

echo "== $rel: selftests (VM, $kver)"
VM_ENV=$vm_env qemu-scripts/vm-run.sh -t "${RELEASE_VM_TIMEOUT:-1500}" \
	-o "$out/vm" -- selftests/run.sh $RELEASE_TESTS
vm_rc=$?
add_count_file "$out/vm/counts"

echo "== $rel: rdma_rxe <-> softrdma (VM pair, $kver)"
PAIR_TESTS=${PAIR_TESTS:-$(selftests/run.sh --list relpair)}
PAIR_A=rxe VM_ENV="$vm_env PAIR_A" qemu-scripts/vm-pair.sh -t 900 \
	-o "$out/rxe-interop" -- \
	"selftests/run.sh $PAIR_TESTS" ::: "selftests/run.sh $PAIR_TESTS"
pair_rc=$?
add_count_file "$out/rxe-interop/a/counts"
add_count_file "$out/rxe-interop/b/counts"

vm_failed $vm_rc "$out/vm"
vm_failed $pair_rc "$out/rxe-interop"
finish
