#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own pyverbs test suite, as Debian ships it, over srdma0 and,
# in the same guest for reference, over rdma_rxe's rxe0. srdma0 must have
# no failures and no errors, and pass at least as many tests as rxe0.
# Each device's verbose unittest output goes to $VM_OUT/pyverbs-DEV.log:
# one line per test, then the tracebacks of the failed ones.
. "$(dirname "$0")/../lib/lib.sh"

TESTS_DIR=${PYVERBS_TESTS:-/usr/share/doc/rdma-core/tests}
SUITE_TIMEOUT=${PYVERBS_TIMEOUT:-600}	# per device; a run takes 10-30 s under TCG
LOGDIR=${VM_OUT:-/tmp}

if ! python3 -c 'import pyverbs' 2>/dev/null || [ ! -f "$TESTS_DIR/run_tests.py" ]; then
	echo "1..0 # SKIP python3-pyverbs or $TESTS_DIR missing"
	exit $KSFT_SKIP
fi

# The shipped copy is read-only and partly gzipped: unpack it on the
# guest's tmpfs.
work=$(mktemp -d)
trap 'srdma_cleanup; rm -rf "$work"; huge_pages_restore' EXIT
# The suite's huge-page tests (ODP and parent-domain traffic over 2 MiB
# pages, as DPDK- and UCX-style users register them) run only when the
# system has such pages.
huge_pages_at_least 32
cp -r "$TESTS_DIR" "$work/tests" && gunzip -f "$work"/tests/*.gz || exit $KSFT_FAIL
# The tests of one vendor's devices (mlx5, efa) only ever skip on others,
# and rdma-core 56's mlx5 crypto traffic test kills the interpreter with a
# segfault on any other device (rdma_rxe's too) before it skips: leave
# them out, for both devices alike.
rm -f "$work"/tests/test_mlx5_*.py "$work"/tests/test_efa*.py

# run_tests.py with Python's cycle collector off. A test that skips in
# its setUp leaves its objects (context, PD, CQs...) in a reference cycle;
# collected as one, their deallocators run in any order, and a CQ or PD
# freed after its context was closed fails with EBADF (Python 3.13,
# rdma-core 56) and then touches freed memory: the suite segfaults, over
# rdma_rxe as over softrdma. Uncollected, such objects are simply left
# until the process exits, which it does at once, without a final
# collection, once unittest has printed its summary.
# Child processes are forked, as the suite expects (its rdma_cm tests ask
# for fork themselves): Python 3.14 (sid) starts them through a fork
# server instead, which cannot pickle a test holding a device context, so
# test_multi_process_alloc_dm errors out there before it allocates a byte.
RUN_NO_GC='
import gc, multiprocessing, os, runpy, sys
gc.disable()
multiprocessing.set_start_method("fork")
sys.argv[0] = os.path.abspath("run_tests.py")
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
    code = 0
except SystemExit as e:
    code = e.code if isinstance(e.code, int) else 1
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
'

declare -A ok skipped failed errors

# run_suite DEV: run the suite on DEV's IPv4 GID, as the other selftests
# do (by itself it takes GID 0, the veth's IPv6 link-local address), print
# the summary line and set ok[DEV] etc. from unittest's closing "Ran N
# tests" and "OK (...)" or "FAILED (...)" lines. Fails if the suite did not
# get that far.
run_suite() {
	local dev=$1 log=$LOGDIR/pyverbs-$1.log gid start rc counts total
	gid=$(grep -lx 0000:0000:0000:0000:0000:ffff:0a09:0001 \
		/sys/class/infiniband/"$dev"/ports/1/gids/* | head -n 1)
	start=$(date +%s)
	(cd "$work/tests" && timeout -k 10 "$SUITE_TIMEOUT" \
		python3 -u -c "$RUN_NO_GC" --dev "$dev" --gid "${gid##*/}" -v) >"$log" 2>&1
	rc=$?
	counts=$(awk '
		/^Ran [0-9]+ tests? in / { n = $2 }
		/^(OK|FAILED)( \(.*\))?$/ && n != "" {
			c["failures"] = c["errors"] = c["skipped"] = 0
			gsub(/^[A-Z]+ \(?|\)$/, "")
			k = split($0, kv, ", ")
			for (i = 1; i <= k; i++) { split(kv[i], p, "="); c[p[1]] = p[2] }
			f = c["failures"] + c["unexpected successes"]
			print n, n - f - c["errors"] - c["skipped"], c["skipped"], f, c["errors"]
			done = 1
		}
		END { exit !done }' "$log") || {
		ktap_print "pyverbs $dev: no unittest summary (exit $rc after $(($(date +%s) - start)) s):"
		tail -n 20 "$log" | sed 's/^/# /'
		return 1
	}
	read -r total "ok[$dev]" "skipped[$dev]" "failed[$dev]" "errors[$dev]" <<<"$counts"
	ktap_print "pyverbs $dev: $total tests, ${ok[$dev]} ok, ${skipped[$dev]} skipped," \
		"${failed[$dev]} failed, ${errors[$dev]} errors" \
		"(GID ${gid##*/}, $(($(date +%s) - start)) s)"
	grep -E '^(FAIL|ERROR): ' "$log" | sed "s/^/# $dev /"
	return 0
}

ktap_plan 2
srdma_cleanup
srdma0_up || exit $KSFT_FAIL
run_suite srdma0 && [ "${failed[srdma0]}" -eq 0 ] && [ "${errors[srdma0]}" -eq 0 ]
ktap_result "pyverbs suite on srdma0: no failures, no errors" $?

srdma_cleanup
if rxe0_up && run_suite rxe0; then
	ktap_print "pyverbs: srdma0/rxe0 tests ok: ${ok[srdma0]:-0}/${ok[rxe0]}"
	[ $((${ok[srdma0]:-0} * 10)) -ge $((${ok[rxe0]} * 13)) ]
	ktap_result "pyverbs suite: at least 1.3 times as many tests ok on srdma0 as on rxe0" $?
else
	ktap_skip "pyverbs suite: at least 1.3 times as many tests ok on srdma0 as on rxe0" "no rxe0 result"
fi
ktap_finish
