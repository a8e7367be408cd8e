#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What one user can make of a fresh srdma0, and what it costs
# (obj_limits.c, run as user nobody): every object count query_device
# reports holds exactly, with the device's own objects counted; every
# per-object maximum (work requests, SGEs, CQEs, reads in flight) is
# allowed and one more refused with EINVAL; in a
# memory cgroup whose memory.max is OBJ_LIMITS_MEMORY_MAX (default 64M)
# the rings of big CQs, QPs and SRQs are charged to it and refused with
# ENOMEM at its limit, with no OOM kill.
. "$(dirname "$0")/../lib/lib.sh"

CG=/sys/fs/cgroup/srdma_obj_limits
MEMORY_MAX=${OBJ_LIMITS_MEMORY_MAX:-64M}
PROG=$PROGS/obj_limits
mounted=

cleanup() {
	[ -d "$CG" ] && wait_for "rmdir $CG" 5
	[ -n "$mounted" ] && umount /sys/fs/cgroup
	srdma_cleanup
}
trap cleanup EXIT

# res_count KIND: how many KIND objects srdma0 has ("rdma resource show").
res_count() {
	rdma resource show srdma0 |
		awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}

srdma_cleanup
srdma0_up || exit "$KSFT_FAIL"
# What udev (rdma-core's rules) does on a real system: verbs for all users.
chmod 0666 /dev/infiniband/uverbs*

ktap_plan 20
# Each kernel PD has an MR of its own that rdma resource does not show (the
# core's DMA MR for its local_dma_lkey); on a fresh device every PD is the
# kernel's.
pds=$(res_count pd)
counts="$pds $(res_count cq) $(res_count qp) $(($(res_count mr) + pds)) $(res_count srq)"
ktap_print "srdma0 has (pd cq qp mr srq): $counts"
# shellcheck disable=SC2086 # five numbers
ktap_fold < <(as_nobody "$PROG" count srdma0 1 $counts 2>&1; echo "# exit $?")
# Each per-object maximum allowed, one more refused (EINVAL).
ktap_fold < <(as_nobody "$PROG" caps srdma0 1 2>&1; echo "# exit $?")

# The memory controller of cgroup v2, mounted where systemd would.
if ! grep -q '^[^ ]* /sys/fs/cgroup cgroup2 ' /proc/mounts; then
	mount -t cgroup2 cgroup2 /sys/fs/cgroup && mounted=1
fi
if ! grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	for t in cq qp srq "no OOM kill"; do
		ktap_skip "memcg: $t" "no cgroup v2 memory controller"
	done
	ktap_finish
fi
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir "$CG" && echo "$MEMORY_MAX" >"$CG/memory.max" || exit "$KSFT_FAIL"
echo 0 >"$CG/memory.swap.max" 2>/dev/null
ktap_fold < <( (echo "$BASHPID" >"$CG/cgroup.procs" &&
		as_nobody "$PROG" memcg srdma0 "$CG") 2>&1; echo "# exit $?")
ktap_print "memory.events: $(tr '\n' ' ' <"$CG/memory.events")"
oom=$(awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events")
# Exit 1: failures it reported; killed, it would have reported none.
ktap_result "memcg: no OOM kill in the cgroup, the program ran to its end" \
	"$([ "$oom" = 0 ] && [ -n "$ktap_fold_rc" ] && [ "$ktap_fold_rc" -le 1 ]; echo $?)"
ktap_finish
