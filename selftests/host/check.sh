#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make check": host unit tests and builds, make demo as on a fresh
# machine, the Debian 12 selftests (manifest tags core, in parallel
# guests, then solo, alone, then smp3 in a guest of 3 CPUs), two-host
# pairs (pair, interop), and the
# module and provider built for the other releases. "make check-all"
# (CHECK_ALL=1) adds the ULP tests' rdma_rxe reference runs
# (RXE_REFERENCE=1, see lib.sh), the full depth of the tests that repeat
# a behaviour (CHECK_FULL=1: more mutations, connections, ranks) and the
# release matrix: check-release.sh's guests on trixie and sid,
# check-package.sh on bookworm, trixie and sid.
# Prints the combined closing line and fails if anything failed.
#
# Environment: CHECK_LANES (parallel Debian 12 guests, default 2),
# RXE_REFERENCE, CHECK_FULL, RELEASES, PACKAGE_RELEASES and BUILD_RELEASES (lists;
# see below).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
KVER=${KVER:-$(make -s -C "$TOP" print-kver)}
cd "$TOP" || exit 1

. selftests/host/check_lib.sh

if [ -n "${CHECK_ALL:-}" ]; then
	export RXE_REFERENCE=${RXE_REFERENCE:-1} CHECK_FULL=${CHECK_FULL:-1}
	RELEASES=${RELEASES-trixie sid}
	PACKAGE_RELEASES=${PACKAGE_RELEASES-bookworm trixie sid}
else
	RELEASES=${RELEASES-}
	PACKAGE_RELEASES=${PACKAGE_RELEASES-}
fi
# Built (module W=1, provider, programs) in their root filesystems, with
# no guest: the releases check-release.sh does not run in full.
BUILD_RELEASES=${BUILD_RELEASES-$(echo trixie sid $RELEASES | tr ' ' '\n' |
	awk '{ n[$0]++ } END { for (r in n) if (n[r] == 1) print r }' | sort | tr '\n' ' ')}

# guests N TAG OUT: the Debian 12 guests, N at once, run the tests tagged
# TAG; each takes the next test no other has taken (run.sh's VM_QUEUE, a
# directory they share). Consoles prefixed "[1] ", "[2] ", ...
guests() {
	local n=$1 tag=$2 out=$3 i rc pids= t0=$(date +%s)

	mkdir -p "$out/queue"
	for i in $(seq "$n"); do
		{
			VM_SHARE=$out/queue VM_QUEUE=$out/queue \
				VM_ENV="SRDMA_MODROOT VM_QUEUE RXE_REFERENCE CHECK_FULL" \
				qemu-scripts/vm-run.sh -t 3300 -o "$out/$i" -- \
				selftests/run.sh -t "$tag" 2>&1
			echo $? >"$out/$i.rc"
		} | sed -u "s/^/[$i] /" &
		pids+=" $!"
	done
	wait $pids
	for i in $(seq "$n"); do
		add_count_file "$out/$i/counts"
		rc=$(cat "$out/$i.rc" 2>/dev/null || echo 1)
		[ "$rc" -eq 0 ] || vm_rc=$rc
	done
	echo "# $tag: $(ls "$out/queue" | wc -l) tests in $n guests, $(($(date +%s) - t0)) s"
}

# CI shows only the end of a long log: check_all's output is kept, and
# what failed in it is listed again after the closing line.
check_all() {
	start=$(date +%s)
	# The root filesystems of the later parts, made while the host and
	# Debian 12 parts run: a fresh machine (CI) has none, and each takes
	# about 150 s. rootfs.sh lets one maker at a time at each root, and
	# a later part that finds none made makes it itself. At the lowest
	# priority: Debian 12's guest keeps both CPUs busy and its timing
	# checks should not lose them (CI's READs in congestion.sh timed out
	# on a stall with nice 10 beside them); the downloads and what CPU
	# the guest leaves still overlap.
	local rel
	for rel in $(echo $BUILD_RELEASES $RELEASES $PACKAGE_RELEASES |
		tr ' ' '\n' | awk '!seen[$0]++'); do
		nice -n 19 ionice -c 2 -n 7 qemu-scripts/rootfs.sh "$rel"
	done >/dev/null 2>"$TOP/build/rootfs-prefetch.log" &
	echo "== unit tests (host)"
	unit_out=$(make -s -C selftests/unit run 2>&1)
	unit_rc=$?
	echo "$unit_out"
	add_counts "$(echo "$unit_out" | tail -n 1)"
	[ $unit_rc -eq 0 ] || [ "$failed" -gt 0 ] || failed=$((failed + 1))

	echo "== fuzzing the packet parser (host, ${FUZZ_TIME:=20} s)"
	check "fuzz_parse runs ${FUZZ_TIME} s without a finding" \
		make -s -C selftests/unit fuzz-run FUZZ_TIME="$FUZZ_TIME"

	echo "== builds (host)"
	# rdma-core itself builds with clang: so must the provider.
	clang_provider() {
		local o=$TOP/build/provider-clang

		rm -rf "$o"
		make -s -C provider CC=clang O="$o" 2>&1 | { ! grep -E 'warning:|error:'; } &&
			ls "$o"/libsoftrdma-rdmav*.so >/dev/null
	}
	check "the provider builds with CC=clang and no warning" clang_provider

	echo "== VM harness self-check"
	# The harness must fail a run whose guest kernel logs a WARNING.
	check "a guest WARNING fails the VM run" \
		eval '! qemu-scripts/vm-run.sh -t 120 -- sh -c "echo WARNING: harness self-check >/dev/kmsg" >/dev/null 2>&1'

	# A clone anywhere works: the guest's tmpfs /tmp must not hide one there.
	clone_under_tmp() {
		local d rc

		d=$(mktemp -d /tmp/softrdma-clone.XXXXXX) &&
			git clone -q --depth 1 "file://$TOP" "$d/softrdma" || return
		(cd "$d/softrdma" && qemu-scripts/vm-run.sh -t 120 -- \
			sh -c 'test -x selftests/run.sh && test "$PWD" = "$VM_REPO"') >/dev/null 2>&1
		rc=$?
		rm -rf "$d"
		return $rc
	}
	check "a clone under /tmp runs in the VM" clone_under_tmp

	outdir=$(mktemp -d "$TOP/build/vm/check.XXXXXX" 2>/dev/null) ||
		{ mkdir -p "$TOP/build/vm" && outdir=$(mktemp -d "$TOP/build/vm/check.XXXXXX"); }
	echo "== make demo as on a fresh machine"
	selftests/host/newcomer.sh | tee "$outdir/newcomer.log"
	add_counts "$(tail -n 1 "$outdir/newcomer.log")"
	qemu-scripts/stage-modules.sh "$KVER" "$outdir/modroot" || failed=$((failed + 1))
	export SRDMA_MODROOT=$outdir/modroot
	vm_rc=0

	echo "== selftests (VM): core in ${CHECK_LANES:=2} guests at once"
	guests "$CHECK_LANES" core "$outdir/core"
	echo "== selftests (VM): solo, alone"
	guests 1 solo "$outdir/solo"
	echo "== selftests (VM): smp3, alone in a guest of 3 CPUs"
	VM_SMP=3 guests 1 smp3 "$outdir/smp3"

	# pair NAME TAG ENV...: both hosts run run.sh -t TAG; ENV to both.
	pair() {
		local name=$1 tag=$2 host t0=$(date +%s)
		shift 2
		echo "== two-host selftests: $name (VM pair)"
		env "$@" VM_ENV="SRDMA_MODROOT PAIR_A RXE_REFERENCE CHECK_FULL" \
			qemu-scripts/vm-pair.sh -t 1500 -o "$outdir/$name" -- \
			"selftests/run.sh -t $tag" ::: "selftests/run.sh -t $tag"
		local rc=$?
		for host in a b; do
			add_count_file "$outdir/$name/$host/counts"
		done
		[ $rc -eq 0 ] || vm_rc=$rc
		echo "# $name pair: $(($(date +%s) - t0)) s"
	}
	pair softrdma pair PAIR_A=softrdma
	# rdma_rxe on host a, softrdma on host b: interoperability
	pair rxe-interop interop PAIR_A=rxe

	vm_failed $vm_rc "$outdir"
	summary="bookworm ($KVER, rdma-core $(pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)): $passed passed, $failed failed, $skipped skipped in $(($(date +%s) - start)) s"

	# sub_check LABEL SCRIPT RELEASE: a check script for one release, its
	# closing line added up and kept for the summary.
	sub_check() {
		local label=$1 script=$2 rel=$3 t0 line log=$outdir/${2%.sh}-$3.log

		shift 3
		echo "== $label"
		t0=$(date +%s)
		"selftests/host/$script" "$rel" "$@" | tee "$log"
		line=$(tail -n 1 "$log")
		add_counts "$line"
		summary+=$'\n'"$label: ${line:-no result} in $(($(date +%s) - t0)) s"
	}

	# The other Debian releases: built, or a core subset each in full;
	# the packages on each.
	for rel in $BUILD_RELEASES; do
		sub_check "$rel (builds)" check-release.sh "$rel" --build
	done
	for rel in $RELEASES; do
		sub_check "$rel" check-release.sh "$rel"
	done
	for rel in $PACKAGE_RELEASES; do
		sub_check "packages on $rel" check-package.sh "$rel"
	done

	echo "$summary"
	echo "# make check took $(($(date +%s) - start)) s"
	print_counts
}

mkdir -p build
log=$TOP/build/check.log
check_all 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	# Each failure with the test it belongs to, after the comment
	# lines its test printed just before it (counters, exit codes).
	echo "# what failed (the test each line belongs to first):"
	# Guests at once interleave: each console prefix ("[1] ") has its own.
	awk '{ p = match($0, /^\[[a-z0-9]+\] /) ? substr($0, 1, RLENGTH) : "" }
	     /# === /{t[p]=$NF; n[p]=0; next}
	     /^(\[[a-z0-9]+\] )?# /{c[p, n[p]++ % 8]=$0; next}
	     /(^|[] ])not ok |VM-FAIL/{
		for (i = (n[p] > 8 ? n[p] - 8 : 0); i < n[p]; i++)
			print "#    " c[p, i % 8]
		print "#  " t[p] ": " $0; n[p]=0}' "$log" | tail -n 80
	tail -n 1 "$log"
fi
exit "$rc"
