#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hostile userspace: hostile_user.c, run as an unprivileged user, garbles
# every ring it shares with srdma0 (SQ, RQ, SRQ, CQ indices and entries)
# of victim RC, UC, UD, SRQ and XRC QPs with HOSTILE_USER_COUNT seeded
# mutations (default 250000, make check-all 1000000; seed
# HOSTILE_USER_SEED, default 1), rings doorbells, resizes CQs, changes QP
# states and destroys objects under traffic, while a second process's
# bystander RC QPs on the same device move data checked byte for byte.
# Afterwards: no splat or stall in the kernel log, sane counters, the
# device deletes and the module unloads (no leaked reference), and
# rc_integrity passes on a fresh device.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

SEED=${HOSTILE_USER_SEED:-1}
COUNT=${HOSTILE_USER_COUNT:-$(check_full && echo 1000000 || echo 250000)}
LIMIT=${HOSTILE_USER_TIMEOUT:-480}	# seconds for the whole program
EXTRA=6

srdma_cleanup
srdma0_up || exit "$KSFT_FAIL"
# What udev (rdma-core's rules) does on a real system: verbs for all users.
chmod 0666 /dev/infiniband/uverbs*
dmesg_start=$(dmesg | wc -l)

# The program's TAP folded into ours, our EXTRA results after its own.
echo "TAP version 13"
ktap_planned=$EXTRA ktap_extra=$EXTRA
start=$(date +%s)
ktap_fold < <(as_nobody timeout -k 5 "$LIMIT" "${RELEASE_PROGS:-$PROGS}/hostile_user" \
	-s "$SEED" -n "$COUNT" -t $((LIMIT - 60)) srdma0 2>&1; echo "# exit $?")
prog_rc=$ktap_fold_rc
elapsed=$(($(date +%s) - start))
ktap_print "hostile_user ran ${elapsed} s (seed $SEED, $COUNT mutations), exit ${prog_rc:-none}"

ktap_result "hostile_user exited 0 as user nobody" "$([ "$prog_rc" = 0 ]; echo $?)"
ktap_result "hostile_user finished within ${LIMIT} s (no stall)" \
	"$([ "$prog_rc" != 124 ] && [ "$prog_rc" != 137 ] &&
	   [ "$elapsed" -lt "$LIMIT" ]; echo $?)"

# Every counter is there and a plain number; traffic went both ways; the
# drops by reason add up to rx_drops.
stats=$(link_counters srdma0 2>&1)
ktap_print "$stats"
sane=$(echo "$stats" | awk '
	{ for (i = 1; i <= NF; i += 2) {
		if ($(i + 1) !~ /^[0-9]+$/ || length($(i + 1)) > 18) bad = bad " " $i
		v[$i] = $(i + 1)
		if ($i ~ /^drop_/) drops += $(i + 1) } }
	END { if (bad != "") print "bad values:" bad
	      else if (v["tx_pkts"] + 0 == 0 || v["rx_pkts"] + 0 == 0) print "no traffic counted"
	      else if (drops != v["rx_drops"]) print "drop_* add up to " drops ", rx_drops " v["rx_drops"]
	      else print "ok" }')
[ "$sane" = ok ] || ktap_print "counters: $sane"
ktap_result "rdma statistic: every counter a plain number, traffic counted, drops add up" \
	"$([ "$sane" = ok ]; echo $?)"

# Nothing the program made outlives it: the device goes, the module too.
rdma link delete srdma0
wait_for '! ibdev_exists srdma0' 20
gone=$?
refcnt=$(cat /sys/module/softrdma/refcnt 2>/dev/null)
# rmmod, not modprobe -r: ib_uverbs may still be held for a moment by a
# file whose last reference a worker drops (delayed fput); that is the
# core's, and not what this checks.
out=$(rmmod softrdma 2>&1)
unloaded=$?
[ $unloaded -eq 0 ] || ktap_print "rmmod softrdma: $out (refcnt $refcnt)"
ktap_result "srdma0 deleted and softrdma unloaded: no leaked reference" \
	"$([ $gone -eq 0 ] && [ $unloaded -eq 0 ]; echo $?)"

ip link del veth0 2>/dev/null
if srdma0_up; then
	ktap_check "rc_integrity passes on a fresh device" \
		"$PROGS/rc_integrity" loop srdma0 1
else
	ktap_result "rc_integrity passes on a fresh device" 1
fi

dmesg_clean "$dmesg_start" \
	"soft lockup|hard LOCKUP|rcu.*stall|hung_task|blocked for more than"
rc=$?
ktap_print "$(($(dmesg | wc -l) - dmesg_start)) kernel log lines during the test"
ktap_result "no kernel splat or stall (Oops, BUG, WARNING, soft lockup, RCU stall, ...)" $rc
ktap_finish
