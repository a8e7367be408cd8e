#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Tail loss: request/response traffic between two namespaces over a veth
# with netem's 1 ms delay and 10% loss each way. Most losses there are a
# message's last packet or its ACK, which no later packet reveals: tail
# loss probes (kernel/comp.c) must recover them, not the QP's timer.
# ib_send_lat's ping-pong (QP timeout 14) and rping (rdma_cm's timeout
# 18, data checked) must succeed; then the counters must show probes
# sent, losses recovered by them, and more of those than retry timeouts.
# Times are printed, not checked: make bench-wire measures them.
# (ibv_rc_pingpong races itself here: its client may destroy its QP
# while the ACK of the server's last message is lost, and the server then
# fails with retries exhausted; perftest closes after a handshake.)
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

NETEM=${TAIL_NETEM:-delay 1ms loss 10%}

ktap_plan 8
srdma_cleanup
ktap_check "srdma1 and srdma2 in two namespaces" ns_pair
modprobe sch_netem 2>/dev/null
ktap_check "netem $NETEM on both ends" sh -c "
	ip netns exec ns1 tc qdisc add dev veth1 root netem $NETEM &&
	ip netns exec ns2 tc qdisc add dev veth2 root netem $NETEM"

# across NAME LISTENING SERVER... -- CLIENT...: the server in ns1, the
# client in ns2 once command LISTENING succeeds; both must succeed. With
# CM_SERVER set, the server may miss the end: the client's DREQ goes once
# (the CM does not resend it for a cm_id being destroyed) and netem may
# drop it; the client checked the data, so a server still waiting 10 s
# later is stopped and not counted.
across() {
	local name=$1 listening=$2 server=() out rc_s rc_c t0
	shift 2
	while [ "$1" != -- ]; do server+=("$1"); shift; done
	shift
	out=$(mktemp)
	t0=$(date +%s%N)
	timeout 120 ip netns exec ns1 "${server[@]}" >"$out" 2>&1 &
	local pid=$!
	wait_for "$listening" 60 ||
		kill $pid 2>/dev/null
	timeout 120 ip netns exec ns2 "$@" >>"$out" 2>&1
	rc_c=$?
	if [ -n "${CM_SERVER:-}" ] && [ $rc_c -eq 0 ]; then
		wait_for "! kill -0 $pid 2>/dev/null" 10
	fi
	if [ -n "${CM_SERVER:-}" ] && [ $rc_c -eq 0 ] && kill -0 $pid 2>/dev/null; then
		ktap_print "$name: the server missed the disconnect (a DREQ lost), stopped"
		kill $pid 2>/dev/null
		wait $pid
		rc_s=0
	else
		wait $pid
		rc_s=$?
	fi
	ktap_print "$name: $((($(date +%s%N) - t0) / 1000000)) ms;" \
		"$(awk '$2 ~ /^[0-9]+$/ && NF >= 6 { print "t_avg " $6 " us" }' "$out" | head -n 1)"
	pair_result "$name" "$out" $rc_c $rc_s
}

g1=$(gid_index srdma1)
g2=$(gid_index srdma2)
lat="ib_send_lat -F -u 14 -s"
tcp="ip netns exec ns1 ss -Hltn 'sport = :18515' | grep -q ."
cm="cm_listening rping"
across "ib_send_lat 4 KiB" "$tcp" \
	$lat 4096 -n 300 -d srdma1 -x "$g1" -- \
	$lat 4096 -n 300 -d srdma2 -x "$g2" 10.9.0.1
across "ib_send_lat 64 KiB" "$tcp" \
	$lat 65536 -n 40 -d srdma1 -x "$g1" -- \
	$lat 65536 -n 40 -d srdma2 -x "$g2" 10.9.0.1
CM_SERVER=1 across "rping 4 KiB (rdma_cm's timeout), data checked" "$cm" \
	rping -s -a 10.9.0.1 -C 100 -S 4096 -- \
	rping -c -a 10.9.0.1 -C 100 -S 4096 -V

probes=$(sum_counter tlp_probes srdma1 srdma2)
rec=$(sum_counter tlp_recoveries srdma1 srdma2)
tmo=$(sum_counter retry_timeouts srdma1 srdma2)
ktap_print "tlp_probes $probes, tlp_recoveries $rec, retry_timeouts $tmo;" \
	"$(ip netns exec ns1 tc -s qdisc show dev veth1 | grep -o 'dropped [0-9]*')"
ktap_result "tail loss probes sent" "$([ "$probes" -gt 0 ]; echo $?)"
ktap_result "losses recovered by a probe" "$([ "$rec" -gt 0 ]; echo $?)"
ktap_result "probes recover more losses than the timer" \
	"$([ "$rec" -gt "$tmo" ]; echo $?)"
ktap_finish
