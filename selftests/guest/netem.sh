#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A lossy link: two namespaces, a softrdma device in each, joined by a veth
# pair with tc netem on both ends. For each impairment (1% and 5% loss,
# reordering, duplication, corruption) rc_stream moves NETEM_MIB (default
# 20) MiB with SEND, RDMA WRITE and RDMA READ and checks every byte, then
# 2000 FETCH_AND_ADDs and 2000 ATOMIC WRITEs must each run once, in order
# (no replayed duplicate executed twice). No error completion is allowed. Corrupted packets must
# die at the ICRC. Late packets (one in ten held 20 ms) must draw tail loss
# probes, which execute nothing twice either. Across loss the responder
# must keep what comes past a gap (kernel/reorder.c) and the requester
# answer a sequence NAK by sending the missing packet alone; the
# requester must keep read responses past a gap, and ask for the missing
# ones alone.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

MIB=${NETEM_MIB:-20}
SEED=${NETEM_SEED:-1}
NETEM_OPS=${NETEM_OPS:-swrax}	# s SEND, w WRITE, r READ, a FETCH_AND_ADD, x ATOMIC WRITE
# name|netem arguments
CASES=(
	"1% loss|loss 1%"
	"5% loss|loss 5%"
	"reordering|delay 1ms reorder 25% 50%"
	"duplication|duplicate 5%"
	"corruption|corrupt 1%"
	"late packets|delay 20ms reorder 90%"
)
PER_CASE=$((1 + ${#NETEM_OPS}))	# rc_stream: connect, then one per op

ktap_plan $((2 + ${#CASES[@]} * PER_CASE + 6))
srdma_cleanup

# fold_case N CMD...: CMD's N TAP results become ours, named by the case;
# those it never reported (it hung or died) are failures.
fold_case() {
	local n=$1 first=$((ktap_n + 1))
	shift
	ktap_fold "$case: " < <("$@" 2>&1; echo "# exit $?")
	while [ $((ktap_n - first + 1)) -lt "$n" ]; do
		ktap_result "$case: rc_stream reported no result" 1
	done
}

ip netns add ns1
ip netns add ns2
ip link add veth1 netns ns1 type veth peer name veth2 netns ns2
# 4 KiB path MTU: a quarter of the packets TCG has to push.
ip -n ns1 link set veth1 mtu 9000
ip -n ns2 link set veth2 mtu 9000
ip -n ns1 addr add 10.9.1.1/24 dev veth1
ip -n ns2 addr add 10.9.1.2/24 dev veth2
ip -n ns1 link set veth1 up
ip -n ns2 link set veth2 up
ktap_check "a softrdma device in each namespace" sh -c '
	ip netns exec ns1 rdma link add srdma1 type softrdma netdev veth1 &&
	ip netns exec ns2 rdma link add srdma2 type softrdma netdev veth2'
wait_for 'ibdev_gids srdma1 | grep -q ffff:0a09:0101 &&
	ibdev_gids srdma2 | grep -q ffff:0a09:0102'

netem_ok=0
modprobe sch_netem 2>/dev/null
ip netns exec ns1 tc qdisc add dev veth1 root netem loss 0% 2>/dev/null &&
	ip netns exec ns1 tc qdisc del dev veth1 root || netem_ok=$?
if [ $netem_ok -ne 0 ]; then
	ktap_skip "tc netem on a veth" "no tc or no sch_netem"
	for c in "${CASES[@]}"; do
		for i in $(seq $PER_CASE); do
			ktap_skip "${c%%|*}: rc_stream" "no tc netem"
		done
	done
	ktap_skip "corruption: ICRC drops counted" "no tc netem"
	ktap_skip "late packets: tail loss probes sent" "no tc netem"
	ktap_skip "1% loss: packets past a gap kept, the gap resent alone" "no tc netem"
	ktap_skip "5% loss: packets past a gap kept, the gap resent alone" "no tc netem"
	ktap_skip "1% loss: read responses past a gap kept, the gap asked for alone" "no tc netem"
	ktap_skip "5% loss: read responses past a gap kept, the gap asked for alone" "no tc netem"
	ktap_finish
fi
ktap_result "tc netem on a veth" 0

for c in "${CASES[@]}"; do
	case=${c%%|*}
	args=${c#*|}
	for ns in 1 2; do
		# A fresh qdisc: "replace" would keep the last case's options.
		ip netns exec ns$ns tc qdisc del dev veth$ns root 2>/dev/null
		# shellcheck disable=SC2086
		ip netns exec ns$ns tc qdisc add dev veth$ns root netem $args
	done
	icrc0=$(sum_counter drop_bad_icrc srdma1 srdma2)
	tlp0=$(sum_counter tlp_probes srdma1 srdma2)
	kept0=$(sum_counter ooo_held srdma1 srdma2)
	one0=$(sum_counter seq_naks_one_resent srdma1 srdma2)
	gaps0=$(sum_counter resp_gaps_asked srdma1 srdma2)
	nak0=$(sum_counter seq_naks_rcvd srdma1 srdma2)
	rtx0=$(sum_counter retransmits srdma1 srdma2)
	t0=$(date +%s)
	fold_case $PER_CASE timeout -k 5 100 "$PROGS/rc_stream" srdma1 srdma2 \
		"$MIB" "$SEED" "$NETEM_OPS"
	ktap_print "$case: $(($(date +%s) - t0)) s; $(ip netns exec ns1 tc -s qdisc show dev veth1 | tr -s '\n ' ' ')"
	for d in srdma1 srdma2; do
		ktap_print "$(rdma statistic show link $d/1 2>/dev/null | tr -s '\n ' ' ')"
	done
	if [ "$case" = corruption ]; then
		icrc1=$(sum_counter drop_bad_icrc srdma1 srdma2)
		ktap_print "drop_bad_icrc of both devices grew by $((icrc1 - icrc0))"
		ktap_result "corruption: ICRC drops counted" \
			"$([ $((icrc1 - icrc0)) -gt 0 ]; echo $?)"
	fi
	if [ "${case#*% }" = loss ]; then
		kept=$(($(sum_counter ooo_held srdma1 srdma2) - kept0))
		one=$(($(sum_counter seq_naks_one_resent srdma1 srdma2) - one0))
		ktap_print "$case: $kept packets kept past a gap;" \
			"$(($(sum_counter seq_naks_rcvd srdma1 srdma2) - nak0)) sequence NAKs," \
			"$one answered by one packet;" \
			"$(($(sum_counter retransmits srdma1 srdma2) - rtx0)) packets resent"
		ktap_result "$case: packets past a gap kept, the gap resent alone" \
			"$([ "$kept" -gt 0 ] && [ "$one" -gt 0 ]; echo $?)"
		# READs: the requester keeps responses past a gap too.
		gaps=$(($(sum_counter resp_gaps_asked srdma1 srdma2) - gaps0))
		ktap_print "$case: $gaps gaps in read responses asked for alone"
		ktap_result "$case: read responses past a gap kept, the gap asked for alone" \
			"$([ "$gaps" -gt 0 ]; echo $?)"
	fi
	if [ "$case" = "late packets" ]; then
		tlp1=$(sum_counter tlp_probes srdma1 srdma2)
		ktap_print "tlp_probes of both devices grew by $((tlp1 - tlp0))"
		ktap_result "late packets: tail loss probes sent" \
			"$([ $((tlp1 - tlp0)) -gt 0 ]; echo $?)"
	fi
done
ktap_finish
