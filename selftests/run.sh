#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run selftests inside the test VM: install the freshly built module where
# modprobe finds it (rdma link autoload), run each test with a timeout,
# print their TAP and a closing "N passed, N failed, N skipped" line.
#
# usage: run.sh [TEST...]    (default: every test in TESTS)
. "$(dirname "$0")/lib.sh"

TESTS="link.sh port.sh verbs.sh objects.sh counters.sh integrity.sh limits.sh tools.sh cm.sh nvme_of.sh nfs_rdma.sh p9_rdma.sh iser.sh srp.sh clients.sh mpi.sh transports.sh ud_verbs.sh ud_mcast.sh srq.sh srq_verbs.sh xrc.sh xrc_verbs.sh odp.sh odp_verbs.sh atomics.sh rc_atomic.sh rc_mw.sh verbs_ex.sh rc_placement.sh dm_verbs.sh verbs_import.sh cq_resize.sh wire.sh provider.sh netns.sh hostile.sh hostile_user.sh ring_abuse.sh netem.sh congestion.sh cc_state.sh teardown.sh verbs_removal.sh teardown_traffic.sh pyverbs.sh"
TEST_TIMEOUT=${TEST_TIMEOUT:-600}

passed=0 failed=0 skipped=0
if ! srdma_install_module; then
	echo "not ok 1 install softrdma.ko in the guest"
	echo "0 passed, 1 failed, 0 skipped"
	exit $KSFT_FAIL
fi

for t in ${*:-$TESTS}; do
	echo "# === $t"
	out=$(mktemp)
	t0=$(date +%s)
	timeout -k 10 "$TEST_TIMEOUT" "$SELFTESTS/$t" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(grep -Ec '^ok [0-9]+' "$out")
	s=$(grep -Ec '^ok [0-9]+ .*# SKIP' "$out")
	f=$(grep -Ec '^not ok [0-9]+' "$out")
	rm -f "$out"
	# A test that died without reporting a failure still failed.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne $KSFT_SKIP ] && [ "$f" -eq 0 ]; then
		echo "not ok - $t exited with status $rc"
		f=1
	fi
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
	echo "# $t: exit $rc ($(($(date +%s) - t0)) s)"
done

echo "$passed passed, $failed failed, $skipped skipped"
[ -n "${VM_OUT:-}" ] && echo "$passed $failed $skipped" >"$VM_OUT/counts"
[ "$failed" -eq 0 ]
