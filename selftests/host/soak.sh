#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# soak.sh N TEST...: boot the test VM N times in a row, each boot running
# the selftests TEST... (run.sh), and keep every boot's console log and
# dmesg: a rare hang shows as a boot that timed out, a rare failure as a
# failed one, each with its log. Not part of make check: it is for the
# long loops (iser.sh and nfs_rdma.sh 20 times, issue 15).
#
# Environment: SOAK_TIMEOUT (seconds per boot, default 900), SOAK_OUT
# (default build/soak/<time>), SOAK_UNTIL (a date(1) time: no boot starts
# after it), SOAK_ENV (names of more variables to pass into the VM, as
# vm-run.sh's VM_ENV: SOAK_ENV=ISER_DELETE_UNDER_IO), KVER as for make.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1

[ $# -ge 2 ] || { echo "usage: $0 N TEST..." >&2; exit 2; }
runs=$1
shift
KVER=${KVER:-$(make -s print-kver)}
out=${SOAK_OUT:-build/soak/$(date +%Y%m%d-%H%M%S)}
until=$(date -d "${SOAK_UNTIL:-2100-01-01}" +%s) || exit 2
mkdir -p "$out" && make -s all >/dev/null &&
	qemu-scripts/stage-modules.sh "$KVER" "$out/modroot" >/dev/null || exit 1

ok=0 failed=0 hung=0 done=0
for i in $(seq "$runs"); do
	if [ "$(date +%s)" -ge "$until" ]; then
		echo "# SOAK_UNTIL reached: $done of $runs boots ran"
		break
	fi
	t0=$(date +%s)
	SRDMA_MODROOT=$out/modroot VM_ENV="SRDMA_MODROOT ${SOAK_ENV:-}" \
		qemu-scripts/vm-run.sh -t "${SOAK_TIMEOUT:-900}" -o "$out/$i" -- \
		selftests/run.sh "$@" >"$out/$i.log" 2>&1
	rc=$?
	done=$i
	case $rc in
	0) ok=$((ok + 1)); what=passed ;;
	124) hung=$((hung + 1)); what="TIMED OUT (hang?)" ;;
	*) failed=$((failed + 1)); what="failed (exit $rc)" ;;
	esac
	echo "boot $i: $what in $(($(date +%s) - t0)) s: $(grep -E '^[0-9]+ passed' "$out/$i.log" | tail -n 1)"
done
echo "soak of $*: $done boots, $ok passed, $failed failed, $hung timed out; logs in $out"
[ $((failed + hung)) -eq 0 ]
