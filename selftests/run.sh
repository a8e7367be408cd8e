#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run selftests inside the test VM: install the freshly built module where
# modprobe finds it (rdma link autoload), run each test of the manifest
# that is asked for with its timeout, print their TAP, kselftest's
# "# Totals:" line and a closing "N passed, N failed, N skipped" line.
#
# usage: run.sh [-t TAG] [NAME...]
#   NAME...  those tests of the manifest (a trailing .sh is ignored)
#   -t TAG   every test tagged TAG, in manifest order (default: core)
# Environment: TEST_TIMEOUT overrides each test's timeout. VM_QUEUE, a
# directory shared with other guests running the same list (vm-run.sh
# -s): each test runs in the guest that claims it first.
#
#        run.sh --list TAG    the names of the tests tagged TAG, one line
#        run.sh --exec NAME   run NAME's command here (run.sh itself does,
#                             under its timeout)
. "$(dirname "$0")/lib/lib.sh"
MANIFEST=$SELFTESTS/manifest

# manifest_get NAME: "TAGS TIMEOUT COMMAND..." of test NAME.
manifest_get() {
	awk -v n="$1" '$1 == n { $1 = ""; sub(/^ /, ""); print; found = 1; exit }
		END { exit !found }' "$MANIFEST"
}

# manifest_tagged TAG: the names of the tests tagged TAG, in order.
manifest_tagged() {
	awk -v t="$1" '!/^(#|$)/ { n = split($2, a, ","); for (i = 1; i <= n; i++)
		if (a[i] == t) { print $1; break } }' "$MANIFEST"
}

# exec_test NAME: NAME's command, its setup words first (see manifest).
exec_test() {
	local entry words w srdma0= nobody= prog
	entry=$(manifest_get "$1") || { echo "# no test $1 in $MANIFEST"; exit $KSFT_FAIL; }
	read -r -a words <<<"$entry"
	words=("${words[@]:2}")
	while [ ${#words[@]} -gt 0 ]; do
		case ${words[0]} in
		@srdma0) srdma0=1 ;;
		@nobody) nobody=as_nobody ;;
		@*) echo "# $1: unknown setup word ${words[0]}"; exit $KSFT_FAIL ;;
		*) break ;;
		esac
		words=("${words[@]:1}")
	done
	case ${words[0]} in
	*.sh)
		for prog in "$SELFTESTS"/{guest,pair}/"${words[0]}"; do
			[ -x "$prog" ] && exec "$prog" "${words[@]:1}"
		done
		echo "# $1: no script ${words[0]}"
		exit $KSFT_FAIL ;;
	esac
	prog=$PROGS/${words[0]}
	[ -x "${RELEASE_PROGS:-/nonexistent}/${words[0]}" ] && prog=$RELEASE_PROGS/${words[0]}
	[ -n "$srdma0" ] || exec $nobody "$prog" "${words[@]:1}"
	trap srdma_cleanup EXIT
	srdma_cleanup
	srdma0_up || { echo "# srdma0 over a veth pair did not come up"; exit $KSFT_FAIL; }
	$nobody "$prog" "${words[@]:1}"
}

case ${1:-} in
--exec) exec_test "$2"; exit ;;
--list) echo $(manifest_tagged "$2"); exit ;;
esac

tag=core
if [ "${1:-}" = -t ]; then
	tag=$2
	shift 2
fi
if [ $# -gt 0 ]; then
	tests=("${@%.sh}")
else
	mapfile -t tests < <(manifest_tagged "$tag")
fi

passed=0 failed=0 skipped=0 errors=0
if ! srdma_install_module; then
	echo "not ok 1 install softrdma.ko in the guest"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	echo "0 passed, 1 failed, 0 skipped"
	exit $KSFT_FAIL
fi

for t in "${tests[@]}"; do
	if [ -n "${VM_QUEUE:-}" ] && ! mkdir "$VM_QUEUE/$t" 2>/dev/null; then
		continue	# another guest has it
	fi
	echo "# === $t"
	entry=$(manifest_get "$t") || {
		echo "not ok - $t: not in the manifest"
		failed=$((failed + 1)) errors=$((errors + 1))
		continue
	}
	read -r _ limit _ <<<"$entry"
	out=$(mktemp)
	t0=$(date +%s)
	timeout -k 10 "${TEST_TIMEOUT:-$limit}" "$0" --exec "$t" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(grep -Ec '^ok [0-9]+' "$out")
	s=$(grep -Ec '^ok [0-9]+ .*# SKIP' "$out")
	f=$(grep -Ec '^not ok [0-9]+' "$out")
	rm -f "$out"
	# A test that died without reporting a failure still failed.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne $KSFT_SKIP ] && [ "$f" -eq 0 ]; then
		echo "not ok - $t exited with status $rc"
		f=1 errors=$((errors + 1))
	fi
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
	echo "# $t: exit $rc ($(($(date +%s) - t0)) s)"
done

echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:$errors"
echo "$passed passed, $failed failed, $skipped skipped"
[ -n "${VM_OUT:-}" ] && echo "$passed $failed $skipped" >"$VM_OUT/counts"
[ "$failed" -eq 0 ]
