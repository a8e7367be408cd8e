#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Device counters through "rdma statistic": they start at zero, account
# for the packets of a run on one device, count RNR NAKs on both sides,
# and count malformed datagrams as drops by reason.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

NAMES="tx_pkts tx_bytes rx_pkts rx_bytes retransmits retry_timeouts tlp_probes tlp_recoveries
seq_naks_sent seq_naks_rcvd rnr_naks_sent rnr_naks_rcvd dup_requests ooo_held odp_faults
seq_naks_one_resent resp_gaps_asked
np_ecn_marked_roce_packets np_cnp_sent rp_cnp_handled rx_drops drop_short drop_bad_version drop_bad_opcode drop_bad_pad
drop_bad_length drop_bad_icrc drop_no_qp drop_qp_type drop_qp_state
drop_psn drop_source drop_nomem drop_bad_qkey drop_no_recv drop_bad_request"

cnt() {
	dev_counter srdma0 "$1"
}

# udp_in: datagrams the namespace's UDP stack took in (Udp InDatagrams).
udp_in() {
	awk '/^Udp:/ { if (n++) print $2 }' /proc/net/snmp
}

# Packets the stack dropped for a full backlog, all CPUs (2nd column, hex).
softnet_drops() {
	local sum=0 d
	for d in $(awk '{ print $2 }' /proc/net/softnet_stat); do
		sum=$((sum + 0x$d))
	done
	echo $sum
}

# expect_delta NAME COUNTER BEFORE WANT: COUNTER grew by WANT since BEFORE.
expect_delta() {
	local now
	now=$(cnt "$2")
	[ "$((now - $3))" -eq "$4" ] ||
		ktap_print "$2: $3 -> $now, expected +$4"
	ktap_result "$1" $(($((now - $3)) != $4))
}

# udp_send HEXBYTES: one datagram to our RoCEv2 port.
udp_send() {
	printf "$(echo "$1" | sed 's/\(..\)/\\x\1/g')" >/dev/udp/10.9.0.1/4791
}

ktap_plan 20
srdma_cleanup
srdma0_up || exit $KSFT_FAIL

missing=
for n in $NAMES; do
	[ "$(cnt "$n")" = 0 ] || missing="$missing $n=$(cnt "$n")"
done
[ -z "$missing" ] || ktap_print "missing or not zero:$missing"
ktap_result "every counter is listed and zero on a new device" \
	$([ -z "$missing" ]; echo $?)

# One device talking to itself: it receives what it sends, unless the
# backlog of the stack overflowed.
drops0=$(softnet_drops) udp0=$(udp_in)
args="-d srdma0 -g 1 -s 4096 -n 200"
client_server "ibv_rc_pingpong traffic" "ibv_rc_pingpong $args" \
	ibv_rc_pingpong $args 127.0.0.1
tx=$(cnt tx_pkts) rx=$(cnt rx_pkts) lost=$(($(softnet_drops) - drops0))
udp=$(($(udp_in) - udp0))
ktap_print "tx_pkts $tx rx_pkts $rx, stack drops $lost, UDP datagrams in $udp"
ktap_result "tx_pkts counts the run (>= 2 x 200 messages)" $((tx < 400))
ktap_result "rx_pkts + stack drops == tx_pkts on loopback" \
	$((rx + lost != tx))
# On one host packets go from sender to receiver past the IP stack.
ktap_result "loopback packets skip the UDP stack" $((udp * 100 > tx))
txb=$(cnt tx_bytes) rxb=$(cnt rx_bytes)
ktap_print "tx_bytes $txb rx_bytes $rxb"
ktap_result "bytes: at least the payload, rx_bytes <= tx_bytes" \
	$((txb < 2 * 200 * 4096 || rxb > txb))

# Reads on two QPs, as many outstanding as the responder holds: sent
# from the doorbell's CPU and from the CPU each answer comes in on.
args="-d srdma0 -x 1 -F -q 2 -s 65536 -n 500"
client_server "ib_read_bw on 2 QPs" "ib_read_bw $args" ib_read_bw $args 127.0.0.1
# READs and WRITEs in turn, as many reads outstanding as the responder
# holds: each WRITE's ACK waits behind read responses, never overtakes one.
ktap_fold "rc_stream: " < <(timeout -k 5 200 "$PROGS/rc_stream" srdma0 srdma0 32 1 m 2>&1)
ktap_check "a loss-free loopback: nothing resent, nothing out of sequence" \
	in_order srdma0

# SENDs ahead of the receives, which come 100 ms late: the responder
# NAKs, the requester waits (a perftest run with few receives posted
# meets an RNR only when its receiver falls behind, which it may not).
ktap_fold "late receives: " < <(timeout -k 5 100 "$PROGS/rc_stream" srdma0 srdma0 1 1 l 2>&1)
sent=$(cnt rnr_naks_sent) rcvd=$(cnt rnr_naks_rcvd)
ktap_print "rnr_naks_sent $sent rnr_naks_rcvd $rcvd"
ktap_result "RNR NAKs are counted when sent and when received" \
	$(( sent == 0 || sent != rcvd ))
# The SENDs already behind an RNR-NAKed one wait for its retry: no
# sequence NAK, which would cut the requester's RNR wait short.
v=$(cnt seq_naks_sent)
ktap_print "seq_naks_sent $v after $sent RNR NAKs"
ktap_result "an RNR NAK brings no sequence NAK for the packets behind it" \
	$(( sent == 0 || v != 0 ))

# Malformed datagrams, each dropped and counted by reason.
drops=$(cnt rx_drops) rx=$(cnt rx_pkts)
v=$(cnt drop_short)
udp_send 04
expect_delta "a 1-byte datagram: drop_short" drop_short "$v" 1
v=$(cnt drop_bad_version)
# SEND ONLY with TVer 1 (BTH byte 1), QP 0x10, PSN 0, ICRC zero
udp_send 0401ffff000000100000000000000000
expect_delta "BTH version 1: drop_bad_version" drop_bad_version "$v" 1
v=$(cnt drop_bad_opcode)
udp_send 1f00ffff00000010000000000000000000000000
expect_delta "RC opcode 0x1f (reserved): drop_bad_opcode" drop_bad_opcode "$v" 1
v=$(cnt drop_bad_icrc)
udp_send 0400ffff000000100000000000000000
expect_delta "SEND ONLY with a wrong ICRC: drop_bad_icrc" drop_bad_icrc "$v" 1
expect_delta "rx_drops is the sum of the reasons" rx_drops "$drops" 4
expect_delta "rx_pkts counts the dropped datagrams" rx_pkts "$rx" 4

ktap_finish
