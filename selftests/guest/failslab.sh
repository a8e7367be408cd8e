#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Allocation failures in every create/register/modify verb and in device
# creation (verbs_failslab.c): each verb runs with its 1st, 2nd, ... slab
# allocation failing until it makes no more; every hit must be an error
# (or an object that works), never a crash. make check-debug scans for
# leaks afterwards. Needs the debug kernel (CONFIG_FAILSLAB): skipped
# elsewhere.
#
# The failslab attribute, in /sys/kernel/debug/failslab: ignore-gfp-wait=N
# (GFP_KERNEL allocations may fail too), task-filter=Y and probability=0
# (no random failures in any task); the failures come from the test
# thread's /proc/thread-self/fail-nth only. "times" counts them down.
. "$(dirname "$0")/../lib/lib.sh"

FS=/sys/kernel/debug/failslab
if [ ! -w "$FS/ignore-gfp-wait" ] || [ ! -e /proc/self/fail-nth ]; then
	echo "1..0 # SKIP no failslab in this kernel (make check-debug has it)"
	exit $KSFT_SKIP
fi
TIMES=1000000000
ATTRS="probability interval times space verbose task-filter ignore-gfp-wait"

declare -A saved
for a in $ATTRS; do
	saved[$a]=$(cat "$FS/$a")
done
restore() {
	for a in $ATTRS; do
		echo "${saved[$a]}" >"$FS/$a"
	done
	srdma_cleanup
}
trap restore EXIT

srdma_cleanup
veth_pair veth0 veth1 10.9.0.1/24 || exit $KSFT_FAIL
rdma link add srdma0 type softrdma netdev veth0 || exit $KSFT_FAIL
wait_for 'ibdev_gids srdma0 | grep -q ":ffff:0a09:0001$"' || exit $KSFT_FAIL
gid_index=$(gid_index srdma0)

echo 0 >"$FS/probability"
echo 1 >"$FS/interval"
echo 0 >"$FS/space"
echo Y >"$FS/task-filter"
echo N >"$FS/ignore-gfp-wait"
echo 1 >"$FS/verbose"	# one line per failure, rate-limited, no stack
echo $TIMES >"$FS/times"

"$PROGS/verbs_failslab" srdma0 "$gid_index"
rc=$?
ktap_print "failslab: $((TIMES - $(cat "$FS/times"))) allocations failed by injection (the attribute's count)"
exit $rc
