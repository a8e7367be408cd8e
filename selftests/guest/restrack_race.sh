#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Resource dumps racing destroy: res_churn, unprivileged, creates and
# destroys CQs and QPs of srdma0 in a tight loop while three more
# unprivileged processes dump them, RESTRACK_RACE_DUMPS (default 30)
# times each: "rdma -dd resource show cq", "... qp" and the JSON form of
# the QP dump (about 30 s in make check's guest). Cores before 6.1.191
# and 6.12.110 call the driver's destroy before they wait out the dumps'
# references, so a fill callback can meet a queue whose ring is gone.
# Afterwards: every dump succeeded, the churn exited cleanly, no splat in
# the kernel log (a KASAN report under the debug kernel).
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

DUMPS=${RESTRACK_RACE_DUMPS:-30}
LIMIT=${RESTRACK_RACE_TIMEOUT:-300}	# seconds for the churn at most
EXTRA=4

srdma_cleanup
srdma0_up || exit "$KSFT_FAIL"
chmod 0666 /dev/infiniband/uverbs*
dmesg_start=$(dmesg | wc -l)
log=$(mktemp -d)
chmod 0777 "$log"

# dumper N CMD...: CMD N times; the failures' count and last error in
# $log/CMD's name. Run as nobody.
dumper() {
	local n=$1 name=$2 fails=0 i
	shift 2
	for ((i = 0; i < n; i++)); do
		"$@" >"$log/$name.out" 2>"$log/$name.err" || fails=$((fails + 1))
	done
	echo "$fails" >"$log/$name.fails"
}
export -f dumper
export log

echo "TAP version 13"
ktap_planned=$EXTRA ktap_extra=$EXTRA
start=$(date +%s)
as_nobody timeout -k 5 "$LIMIT" "$PROGS/res_churn" -t $((LIMIT - 30)) \
	-s "$log/stop" srdma0 1 >"$log/churn" 2>&1 &
churn=$!
# The churn's pool (16) first, so that every dump walks a full table.
wait_for '[ "$(rdma resource show cq dev srdma0 | wc -l)" -ge 16 ]' 30
as_nobody bash -c "dumper $DUMPS cq rdma -dd resource show cq" &
d1=$!
as_nobody bash -c "dumper $DUMPS qp rdma -dd resource show qp" &
d2=$!
as_nobody bash -c "dumper $DUMPS qpjson rdma -dd -j resource show qp" &
d3=$!
wait $d1 $d2 $d3
dumped=$(($(date +%s) - start))
touch "$log/stop"
wait $churn
churn_rc=$?

ktap_fold < <(cat "$log/churn"; echo "# exit $churn_rc")
ktap_print "$((3 * DUMPS)) dumps in ${dumped} s, churn exit $churn_rc"

fails=0
for d in cq qp qpjson; do
	f=$(cat "$log/$d.fails" 2>/dev/null || echo missing)
	if [ "$f" != 0 ]; then
		ktap_print "$d dumps failed: $f; last: $(head -c 300 "$log/$d.err")"
		fails=1
	fi
done
ktap_result "$((3 * DUMPS)) unprivileged cq, qp and JSON qp dumps succeeded" $fails

# The last JSON dump parses, and has our driver's attributes (iproute2
# 6.1 names them drv_*, older versions bare).
json=$(python3 -c 'import json, sys
d = json.load(sys.stdin)
print(sum(1 for q in d if any(k.endswith("sq_open_wqes") for k in q)))' \
	<"$log/qpjson.out" 2>&1)
[[ $json =~ ^[0-9]+$ ]] && [ "$json" -gt 0 ] ||
	ktap_print "JSON qp dump: ${json:0:200}; $(head -c 300 "$log/qpjson.out")"
ktap_result "the JSON qp dump parses and shows the driver's attributes ($json QPs)" \
	"$([[ $json =~ ^[0-9]+$ ]] && [ "$json" -gt 0 ]; echo $?)"

ktap_result "res_churn exited 0 when told to stop" \
	"$([ "$churn_rc" = 0 ]; echo $?)"

dmesg_clean "$dmesg_start"
ktap_result "no kernel splat (Oops, BUG, WARNING, KASAN, ...) during the test" $?
rm -rf "$log"
ktap_finish
