#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make check": host unit tests, then every VM selftest in one guest boot;
# prints the combined closing line and fails if anything failed.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
KVER=${KVER:-$(make -s -C "$TOP" print-kver)}
cd "$TOP" || exit 1

passed=0 failed=0 skipped=0
add_counts() {	# add_counts "N passed, N failed, N skipped"
	local p f s
	read -r p f s < <(echo "$1" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ -z "$p" ]; then
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

start=$(date +%s)
echo "== unit tests (host)"
unit_out=$(make -s -C selftests/unit run 2>&1)
unit_rc=$?
echo "$unit_out"
add_counts "$(echo "$unit_out" | tail -n 1)"
[ $unit_rc -eq 0 ] || [ "$failed" -gt 0 ] || failed=$((failed + 1))

# check NAME CMD...: a one-test step counted in the closing line.
check() {
	local name=$1
	shift
	if "$@"; then
		echo "ok - $name"
		passed=$((passed + 1))
	else
		echo "not ok - $name"
		failed=$((failed + 1))
	fi
}

echo "== fuzzing the packet parser (host, ${FUZZ_TIME:=20} s)"
check "fuzz_parse runs ${FUZZ_TIME} s without a finding" \
	make -s -C selftests/unit fuzz-run FUZZ_TIME="$FUZZ_TIME"

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
	qemu-scripts/vm-run.sh -t 2700 -o "$outdir" -- selftests/run.sh
vm_rc=$?
if [ -f "$outdir/counts" ]; then
	read -r p f s <"$outdir/counts"
	add_counts "$p passed, $f failed, $s skipped"
else
	failed=$((failed + 1))
fi

# pair NAME ENV...: both hosts run run.sh PAIR_TESTS; ENV goes to both.
pair() {
	local name=$1 host p f s
	shift
	echo "== two-host selftests: $name (VM pair)"
	env "$@" SRDMA_MODROOT="$outdir/modroot" \
		VM_ENV="SRDMA_MODROOT PAIR_A" \
		qemu-scripts/vm-pair.sh -t 900 -o "$outdir/$name" -- \
		"selftests/run.sh $PAIR_TESTS" ::: "selftests/run.sh $PAIR_TESTS"
	local rc=$?
	for host in a b; do
		if [ -f "$outdir/$name/$host/counts" ]; then
			read -r p f s <"$outdir/$name/$host/counts"
			add_counts "$p passed, $f failed, $s skipped"
		else
			failed=$((failed + 1))
		fi
	done
	[ $rc -eq 0 ] || vm_rc=$rc
}
PAIR_TESTS="pair.sh pair_tools.sh pair_integrity.sh" pair softrdma PAIR_A=softrdma
# rdma_rxe on host a, softrdma on host b: interoperability
PAIR_TESTS="pair_tools.sh pair_integrity.sh" pair rxe-interop PAIR_A=rxe

# A clean count with a failed VM run means a splat or a crash: a failure.
if [ $vm_rc -ne 0 ] && [ "$failed" -eq 0 ]; then
	echo "not ok - VM run failed (exit $vm_rc): see $outdir"
	failed=1
fi
summary="bookworm ($KVER, rdma-core $(pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)): $passed passed, $failed failed, $skipped skipped in $(($(date +%s) - start)) s"

# The other Debian releases: a core subset each (check-release.sh).
for rel in ${RELEASES-trixie sid}; do
	echo "== release $rel"
	rstart=$(date +%s)
	selftests/check-release.sh "$rel" | tee "$outdir/release-$rel.log"
	line=$(tail -n 1 "$outdir/release-$rel.log")
	add_counts "$line"
	summary+=$'\n'"$rel: ${line:-no result} in $(($(date +%s) - rstart)) s"
done

# The Debian packages, installed into each release (check-package.sh).
for rel in ${PACKAGE_RELEASES-bookworm trixie sid}; do
	echo "== packages on $rel"
	rstart=$(date +%s)
	selftests/check-package.sh "$rel" | tee "$outdir/package-$rel.log"
	line=$(tail -n 1 "$outdir/package-$rel.log")
	add_counts "$line"
	summary+=$'\n'"packages on $rel: ${line:-no result} in $(($(date +%s) - rstart)) s"
done

echo "$summary"
echo "# make check took $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
