#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make check": host unit tests, then every VM selftest in one guest boot;
# prints the combined closing line and fails if anything failed.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
KVER=${KVER:-$(make -s -C "$TOP" print-kver)}
cd "$TOP" || exit 1

. selftests/host/check_lib.sh

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
	for rel in $(echo ${RELEASES-trixie sid} ${PACKAGE_RELEASES-bookworm trixie sid} |
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

	echo "== selftests (VM)"
	outdir=$(mktemp -d "$TOP/build/vm/check.XXXXXX" 2>/dev/null) ||
		{ mkdir -p "$TOP/build/vm" && outdir=$(mktemp -d "$TOP/build/vm/check.XXXXXX"); }
	qemu-scripts/stage-modules.sh "$KVER" "$outdir/modroot" || failed=$((failed + 1))
	SRDMA_MODROOT=$outdir/modroot VM_ENV=SRDMA_MODROOT \
		qemu-scripts/vm-run.sh -t 3300 -o "$outdir" -- selftests/run.sh
	vm_rc=$?
	add_count_file "$outdir/counts"

	# pair NAME ENV...: both hosts run run.sh PAIR_TESTS; ENV goes to both.
	pair() {
		local name=$1 host
		shift
		echo "== two-host selftests: $name (VM pair)"
		env "$@" SRDMA_MODROOT="$outdir/modroot" \
			VM_ENV="SRDMA_MODROOT PAIR_A" \
			qemu-scripts/vm-pair.sh -t 1500 -o "$outdir/$name" -- \
			"selftests/run.sh $PAIR_TESTS" ::: "selftests/run.sh $PAIR_TESTS"
		local rc=$?
		for host in a b; do
			add_count_file "$outdir/$name/$host/counts"
		done
		[ $rc -eq 0 ] || vm_rc=$rc
	}
	PAIR_TESTS="pair.sh pair_tools.sh pair_integrity.sh pair_rds.sh pair_mpi.sh pair_iser.sh" pair softrdma PAIR_A=softrdma
	# rdma_rxe on host a, softrdma on host b: interoperability
	PAIR_TESTS="pair_tools.sh pair_integrity.sh" pair rxe-interop PAIR_A=rxe

	# A clean count with a failed VM run means a splat or a crash: a failure.
	if [ $vm_rc -ne 0 ] && [ "$failed" -eq 0 ]; then
		echo "not ok - VM run failed (exit $vm_rc): see $outdir"
		failed=1
	fi
	summary="bookworm ($KVER, rdma-core $(pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)): $passed passed, $failed failed, $skipped skipped in $(($(date +%s) - start)) s"

	# sub_check LABEL SCRIPT RELEASE: a check script for one release, its
	# closing line added up and kept for the summary.
	sub_check() {
		local label=$1 script=$2 rel=$3 t0 line log=$outdir/${2%.sh}-$3.log

		echo "== $label"
		t0=$(date +%s)
		"selftests/$script" "$rel" | tee "$log"
		line=$(tail -n 1 "$log")
		add_counts "$line"
		summary+=$'\n'"$label: ${line:-no result} in $(($(date +%s) - t0)) s"
	}

	# The other Debian releases, a core subset each; the packages on each.
	for rel in ${RELEASES-trixie sid}; do
		sub_check "$rel" check-release.sh "$rel"
	done
	for rel in ${PACKAGE_RELEASES-bookworm trixie sid}; do
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
	awk '/# === /{t=$NF; n=0; next}
	     /^(\[[a-z]\] )?# /{c[n++ % 8]=$0; next}
	     /(^|[] ])not ok |VM-FAIL/{
		for (i = (n > 8 ? n - 8 : 0); i < n; i++)
			print "#    " c[i % 8]
		print "#  " t ": " $0; n=0}' "$log" | tail -n 80
	tail -n 1 "$log"
fi
exit "$rc"
