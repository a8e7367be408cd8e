#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Congestion control on a shared bottleneck: two namespaces joined by a
# veth whose ns1 end sends through a tbf rate limit (CC_RATE, default
# 20 Mbit/s) with an fq_codel child that marks CE past 2 ms of queue, as
# the RED/ECN queues of DCQCN's switches do. FLOWS (default 4)
# rc_stream processes each RDMA WRITE CC_MIB (default 4) MiB from srdma1 to
# srdma2 at once, every byte checked. The queue marks instead of dropping,
# srdma2 answers with CNPs, srdma1 cuts and paces its QPs (DCQCN): every
# flow completes byte-exact, CNPs are sent, handled and cut rates, and
# retransmissions stay well under what a collapse resends. Then once more with
# ecn=0 dcqcn=0: the flows still complete, by retransmission alone. READs
# through the bottleneck too: their responses must be paced as well. Last,
# incast: three sender namespaces and a receiver on a bridge whose port to
# the receiver is the bottleneck; every sender is told to slow down (CNPs
# handled), and no flow starves: each completes byte-exact.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/cc_lib.sh"
trap 'cc_params 1; srdma_cleanup' EXIT

RATE=${CC_RATE:-20mbit}
MIB=${CC_MIB:-4}
FLOWS=${CC_FLOWS:-4}
# Every flow's ACK timeout: 268 ms (code 16), not rc_stream's 67 ms. At
# 67 ms a guest stalled that long (CI's host made root filesystems beside
# it once) timed out on responses still coming, and a timeout resends
# everything in flight, whose answers queue behind the first ones: READs
# cascaded into 26 timeouts and 10% resent, a retry count once exceeded.
# A queue that drops still shows at once (sequence NAKs, read gaps): with
# ecn=0 the READs resent 1.6 to 1.8 times what they read. check-debug.sh
# sets 18 (1.07 s): its guest answers later still.
export RC_STREAM_ACK_TIMEOUT=${CC_ACK_TIMEOUT:-16}

ktap_plan 17
srdma_cleanup

# flows NAME PEER DEV...: an rc_stream from a QP on each DEV to one on
# PEER at once, each of FLOW_OPS (rc_stream's OPS: default w, RDMA WRITEs
# from DEV to PEER; r, RDMA READs of PEER's memory); each must pass. Each
# flow's seconds in FLOW_SECS.
flows() {
	local name=$1 peer=$2 i pids=() rc bad=0 out=()
	shift 2

	for i in $(seq $#); do
		out[i]=$(mktemp)
		timeout -k 5 300 "$PROGS/rc_stream" "${!i}" "$peer" "$MIB" \
			"$i" "${FLOW_OPS:-w}" >"${out[i]}" 2>&1 &
		pids[i]=$!
	done
	FLOW_SECS=()
	for i in $(seq $#); do
		wait "${pids[i]}"
		rc=$?
		if [ $rc -ne 0 ]; then
			ktap_print "flow $i: exit $rc"
			grep -E '^(not ok|#)' "${out[i]}" | tail -n 5 | sed 's/^#*/# /'
			bad=1
		fi
		FLOW_SECS+=("$(sed -n 's/.* MiB verified in \([0-9.]*\) s$/\1/p' "${out[i]}")")
		rm -f "${out[i]}"
	done
	ktap_result "$name" $bad
}

# incast_up: namespaces in0 (the receiver, srdma10) and in1..in3 (the
# senders, srdma11..13) on bridge br0 of namespace sw; br0's port p0 to
# the receiver is the bottleneck.
incast_up() {
	local i
	ip netns add sw && ip -n sw link add br0 type bridge &&
		ip -n sw link set br0 up || return
	for i in 0 1 2 3; do
		ip netns add in$i &&
			ip link add eth0 netns in$i mtu 9000 type veth peer name p$i \
				netns sw mtu 9000 &&
			ip -n sw link set p$i master br0 up &&
			ip -n in$i link set lo up &&
			ip -n in$i addr add 10.10.0.$((i + 1))/24 dev eth0 &&
			ip -n in$i link set eth0 up &&
			ip netns exec in$i rdma link add srdma1$i type softrdma \
				netdev eth0 || return
	done
	rps_all in0 eth0 && bottleneck sw p0 "$RATE" || return
	for i in 0 1 2 3; do
		wait_for "ibdev_gids srdma1$i | grep -q ffff:0a0a:000$((i + 1))" || return
	done
}

# devs DEV: DEV, FLOWS times, a line each.
devs() {
	local i
	for i in $(seq "$FLOWS"); do echo "$1"; done
}

# read_check NAME WHAT N: a result, N (a count of WHAT) above 0; a skip
# when N is 0 and the READs ran too slowly to fill the bottleneck ($slow).
read_check() {
	if [ "$3" -eq 0 ] && [ "$slow" = 0 ]; then
		ktap_skip "READs: $1" "0 $2: $mbps Mbit/s read out, under the $((rline / 2)) Mbit/s a cut QP may send"
	else
		ktap_result "READs: $1 ($3 $2)" "$([ "$3" -gt 0 ]; echo $?)"
	fi
}

# no_collapse NAME RESENT SENT: a result, RESENT under 10% of SENT.
no_collapse() {
	ktap_result "$1" "$([ $(($2 * 10)) -lt "$3" ]; echo $?)"
}

ns_pair || { ktap_result "two namespaces with a softrdma device each" 1; ktap_finish; }
ip -n ns1 link set veth1 mtu 9000
ip -n ns2 link set veth2 mtu 9000
rps_all ns2 veth2
ktap_print "veth2 rps_cpus: $(ip netns exec ns2 sh -c 'cat /sys/class/net/veth2/queues/rx-*/rps_cpus' 2>&1 | tr '\n' ' ')"
modprobe -q sch_tbf
modprobe -q sch_fq_codel
bottleneck ns1 veth1 "$RATE"
ktap_result "a $RATE tbf bottleneck with an ECN-marking fq_codel child" $?

mapfile -t senders < <(devs srdma1)
cc_params 1
# The first CNPs srdma2 sends (BTH opcode 0x81 at UDP payload offset 0),
# captured where they leave, for tshark to decode. dumpcap captures, not
# tshark, which loads its dissectors first: in the debug kernel's guest it
# had not begun within its 120 s, and the wait for it (1800 tries of 0.1 s,
# each a fork there) outlasted the test's 30 minutes. The wait ends when
# the capture starts or its process is gone.
cap=$(mktemp -d)
ip netns exec ns2 timeout 120 dumpcap -q -i veth2 -c 5 -w "$cap/cnp.pcap" \
	-f 'udp dst port 4791 and udp[8] = 0x81' 2>/dev/null &
cap_pid=$!
wait_for "[ -s $cap/cnp.pcap ] || ! kill -0 $cap_pid" 180
tx0=$(hw_counter srdma1 tx_pkts) re0=$(hw_counter srdma1 retransmits)
t0=$(date +%s)
flows "$FLOWS flows of $MIB MiB through it: every byte placed" srdma2 \
	"${senders[@]}"
t=$(($(date +%s) - t0))
tx=$(($(hw_counter srdma1 tx_pkts) - tx0)) re=$(($(hw_counter srdma1 retransmits) - re0))
ktap_print "$t s; srdma1: $(rdma statistic show link srdma1/1 | tr -s ' \n' ' ')"
ktap_print "srdma2: $(rdma statistic show link srdma2/1 | tr -s ' \n' ' ')"
ktap_print "$(ip netns exec ns1 tc -s qdisc show dev veth1 | tr -s ' \n' ' ')"
ktap_print "$(ip -n ns2 -s link show veth2 | tr -s ' \n' ' ')"
ktap_print "softnet: $(awk '{ printf "%s/%s ", $1, $2 }' /proc/net/softnet_stat)"
sent=$(hw_counter srdma2 np_cnp_sent) marked=$(hw_counter srdma2 np_ecn_marked_roce_packets)
handled=$(hw_counter srdma1 rp_cnp_handled) cuts=$(hw_counter srdma1 rp_rate_cuts)
ktap_result "the queue marked, srdma2 sent CNPs ($marked marked, $sent CNPs)" \
	"$([ "$marked" -gt 0 ] && [ "$sent" -gt 0 ]; echo $?)"
ktap_result "srdma1 handled them and cut rates ($handled CNPs, $cuts cuts)" \
	"$([ "$handled" -gt 0 ] && [ "$cuts" -gt 0 ]; echo $?)"
kill -INT $cap_pid 2>/dev/null
wait $cap_pid
# Wireshark 4.0 (Debian 12) names no BTH opcode 0x81 and has no BECN
# field: it decodes a CNP as InfiniBand, opcode "Unknown (129)", with the
# destination QP as for any BTH.
tshark -r "$cap/cnp.pcap" -V >"$cap/cnp.txt" 2>/dev/null
tshark -r "$cap/cnp.pcap" -T fields -e infiniband.bth.opcode \
	-e infiniband.bth.destqp >"$cap/cnp.fields" 2>/dev/null
ktap_print "tshark $(dpkg-query -W -f '${Version}' tshark 2>/dev/null): $(grep -m1 'Opcode' "$cap/cnp.txt" | tr -s ' \t' ' '); fields: $(head -n 1 "$cap/cnp.fields" | tr '\t' ' ')"
if [ ! -s "$cap/cnp.fields" ] && [ ! -s "$cap/cnp.pcap" ]; then
	ktap_skip "tshark decodes srdma2's CNPs" "dumpcap did not start capturing in time"
else
	ktap_result "tshark decodes srdma2's CNPs as RoCEv2 BTHs: opcode 0x81 to a QP, none malformed ($(grep -c . "$cap/cnp.fields") captured)" \
		"$(grep -q . "$cap/cnp.fields" &&
		   awk '$1 != 129 || $2 ~ /^(0x)?0*$/ { bad = 1 } END { exit bad }' "$cap/cnp.fields" &&
		   grep -q 'InfiniBand' "$cap/cnp.txt" && ! grep -qi 'malformed' "$cap/cnp.txt"; echo $?)"
fi
rm -rf "$cap"
# The goal is under 1% (0 on this VM with its normal kernel); a collapse,
# 20% and more without CC, is what fails here.
ktap_print "retransmitted $re of $tx packets ($(awk -v r="$re" -v t="$tx" \
	'BEGIN { printf "%.2f", t ? 100 * r / t : 0 }')%; goal under 1%)"
no_collapse "no collapse: retransmitted under 10% of the packets sent" "$re" "$tx"
ktap_print "goodput $(awk -v m="$MIB" -v f="$FLOWS" -v t="$t" \
	'BEGIN { printf "%.1f", t ? m * f * 8.389 / t : 0 }') Mbit/s through $RATE"

# READs: srdma2 reads srdma1's memory, so the read responses take the
# bottleneck. srdma2 answers marked responses with CNPs; srdma1 must pace
# its responses at its QPs' rates. DCQCN's line rate is the link's here
# (CC_READ_LINE_MBPS sets another), as a NIC sets it to its port's: at
# the default 10 Gbit/s the rate climbs back within a round trip of this
# slow link and rarely holds a packet back (the window does the work).
# CC_READS=0 leaves them out.
if [ "${CC_READS:-1}" = 1 ]; then
	line=$(cat $CC_PARAMS/dcqcn_line_rate_mbps)
	rline=${CC_READ_LINE_MBPS:-${RATE%mbit}}
	echo "$rline" >$CC_PARAMS/dcqcn_line_rate_mbps
	mapfile -t readers < <(devs srdma2)
	c0=$(hw_counter srdma1 rp_rate_cuts) tb0=$(hw_counter srdma1 tx_bytes)
	w0=$(hw_counter srdma1 rp_pace_waits)
	rr0=$(hw_counter srdma2 retransmits) m0=$(hw_counter srdma2 np_ecn_marked_roce_packets)
	p0=$(hw_counter srdma2 tlp_probes) to0=$(hw_counter srdma2 retry_timeouts)
	g0=$(hw_counter srdma2 resp_gaps_asked)
	t0=$(date +%s)
	# Meanwhile, the lowest rate "rdma -dd resource show qp" shows for
	# srdma1's RC QPs (the responders), sampled every 0.2 s.
	rates=$(mktemp)
	while :; do
		rdma -dd resource show qp link srdma1/1 | awk '/type RC/ {
			for (i = 1; i < NF; i++) if ($i == "drv_dcqcn_rate_mbps") print $(i + 1) }'
		sleep 0.2
	done >"$rates" &
	sampler=$!
	FLOW_OPS=r flows "$FLOWS flows of $MIB MiB of READs through it: every byte placed" \
		srdma1 "${readers[@]}"
	kill $sampler
	wait $sampler 2>/dev/null
	low=$(sort -n "$rates" | head -n 1) n=$(wc -l <"$rates")
	# A slow guest's rdma takes seconds a run (the debug kernel's: 2 rates
	# in 65 s), too few to catch a cut that lasts a round trip.
	if [ "$n" -lt 8 ]; then
		ktap_skip "READs: rdma resource shows a cut rate" "$n rates sampled in $(($(date +%s) - t0)) s: too slow a guest"
	else
		ktap_result "READs: rdma resource shows a cut rate: ${low:-none} Mbit/s (line $(cat $CC_PARAMS/dcqcn_line_rate_mbps)) in $n samples" \
			"$([ -n "$low" ] && [ "$low" -lt "$(cat $CC_PARAMS/dcqcn_line_rate_mbps)" ]; echo $?)"
	fi
	rm -f "$rates"
	cuts=$(($(hw_counter srdma1 rp_rate_cuts) - c0)) rr=$(($(hw_counter srdma2 retransmits) - rr0))
	tb=$(($(hw_counter srdma1 tx_bytes) - tb0)) need=$((FLOWS * MIB * 1048576))
	waits=$(($(hw_counter srdma1 rp_pace_waits) - w0))
	secs=$(($(date +%s) - t0)) mbps=$((need * 8 / 1000000 / (secs ? secs : 1)))
	# A guest that read out less than half the line rate in all (the
	# debug kernel's: 1.5 to 2 Mbit/s of 20) builds a queue only in bursts
	# (1 to 335 marks a run) and never sends faster than a cut QP may:
	# the pace meets it only in a burst within the 1.2 ms the first cut
	# takes to recover (0 to 37 waits). There no cut or no wait proves
	# nothing, and these two checks skip, saying so. make check's guest
	# reads 12 Mbit/s: 4068 marks, 465 waits.
	slow=$([ $((need * 16)) -lt $((rline * 1000000 * secs)) ]; echo $?)
	read_check "srdma1 cut its rates for marked read responses" cuts "$cuts"
	# srdma1 sent nothing but read responses here: each wait held one back.
	read_check "srdma1's read responses waited for its rate" waits "$waits"
	echo "$line" >$CC_PARAMS/dcqcn_line_rate_mbps
	ktap_print "READs: $secs s; srdma1 sent $tb bytes (headers included) for $need read; srdma2 took in $(($(hw_counter srdma2 np_ecn_marked_roce_packets) - m0)) marked, asked again $rr times ($(($(hw_counter srdma2 tlp_probes) - p0)) probes, $(($(hw_counter srdma2 retry_timeouts) - to0)) timeouts, $(($(hw_counter srdma2 resp_gaps_asked) - g0)) gaps asked)"
	# The bottleneck's drops since its start (the counts are cumulative).
	ktap_print "READs: $(ip netns exec ns1 tc -s qdisc show dev veth1 | grep -o 'dropped [0-9]*' | head -n 1) at the bottleneck in all"
	ktap_result "READs: paced responses, no collapse: srdma1 sent under 10% more than was read" \
		"$([ $((tb * 10)) -lt $((need * 11)) ]; echo $?)"
else
	for name in "$FLOWS flows of READs" "a cut rate shown" "srdma1 cut its rates" \
		    "read responses waited for the rate" "no collapse"; do
		ktap_skip "READs: $name" "CC_READS=0"
	done
fi

cc_params 0
m0=$(hw_counter srdma2 np_cnp_sent) c0=$(hw_counter srdma1 rp_rate_cuts)
flows "ecn=0 dcqcn=0: $FLOWS flows still complete, every byte placed" srdma2 \
	"${senders[@]}"
ktap_result "ecn=0 dcqcn=0: no CNP sent, no rate cut" \
	"$([ "$(hw_counter srdma2 np_cnp_sent)" = "$m0" ] &&
	   [ "$(hw_counter srdma1 rp_rate_cuts)" = "$c0" ]; echo $?)"
ktap_print "srdma1: $(rdma statistic show link srdma1/1 | tr -s ' \n' ' ')"
cc_params 1

srdma_cleanup
if ! ip link add srdma-brtest type bridge 2>/dev/null; then
	for name in "bottleneck set up" "3 flows, none starves" \
		    "every sender handled CNPs" "no collapse"; do
		ktap_skip "incast: $name" "no bridge in this kernel (CONFIG_BRIDGE)"
	done
	ktap_finish
fi
ip link del srdma-brtest
incast_up
ktap_result "incast: 3 senders and a receiver on a bridge, its port to the receiver a $RATE bottleneck" $?
incast_senders=(srdma11 srdma12 srdma13)
tx0=$(sum_counter tx_pkts "${incast_senders[@]}")
re0=$(sum_counter retransmits "${incast_senders[@]}")
flows "incast: 3 flows of $MIB MiB into one receiver, none starves, every byte placed" \
	srdma10 "${incast_senders[@]}"
tx=$(($(sum_counter tx_pkts "${incast_senders[@]}") - tx0))
re=$(($(sum_counter retransmits "${incast_senders[@]}") - re0))
bad=0 handled=""
for dev in "${incast_senders[@]}"; do
	h=$(hw_counter "$dev" rp_cnp_handled)
	handled="$handled $h"
	[ "$h" -gt 0 ] || bad=1
done
ktap_result "incast: every sender handled CNPs (${handled# }), srdma10 sent $(hw_counter srdma10 np_cnp_sent)" $bad
ktap_print "incast: flows took ${FLOW_SECS[*]} s; retransmitted $re of $tx packets"
no_collapse "incast: no collapse: retransmitted under 10% of the packets sent" "$re" "$tx"
rates=()
for t in "${FLOW_SECS[@]}"; do rates+=("$(awk -v t="$t" -v m="$MIB" 'BEGIN { printf "%f", t ? m / t : 0 }')"); done
ktap_print "incast: Jain's fairness over the flows' rates: $(jain "${rates[@]}"), goodput $(echo "${FLOW_SECS[@]}" |
	awk -v m="$MIB" '{ for (i = 1; i <= NF; i++) if ($i > t) t = $i
		printf "%.1f", t ? m * NF * 8.389 / t : 0 }') Mbit/s through $RATE"
ktap_finish
