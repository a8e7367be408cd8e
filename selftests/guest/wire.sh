#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On the wire: what softrdma sends is RoCEv2 that Wireshark's dissector
# accepts (UDP 4791, no malformed packet), with the opcodes we expect.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT
command -v tshark >/dev/null || { echo "1..0 # SKIP tshark missing"; exit $KSFT_SKIP; }

CAP=$(mktemp -d)
ktap_plan 5
srdma_cleanup
srdma0_up || exit $KSFT_FAIL

# Loopback traffic leaves through lo: capture there.
timeout 120 tshark -q -i lo -f 'udp port 4791' -w "$CAP/roce.pcap" 2>/dev/null &
cap=$!
wait_for "[ -s $CAP/roce.pcap ]" 60
traffic() {	# traffic TOOL ARGS...: server and client of TOOL over srdma0
	local srv
	timeout 60 "$@" >/dev/null 2>&1 &
	srv=$!
	wait_for "ss -Hltn 'sport = :18515' | grep -q ." 60
	timeout 60 "$@" 127.0.0.1 >/dev/null 2>&1
	wait $srv
}
traffic ibv_rc_pingpong -d srdma0 -g 1 -s 3000 -n 5
traffic ib_read_bw -d srdma0 -x 1 -F -s 3000 -n 5
sleep 2
kill -INT $cap
wait $cap

tshark -r "$CAP/roce.pcap" -V >"$CAP/decoded.txt" 2>/dev/null
# BTH opcodes seen, one per line, as numbers (RC: SEND first 0, middle 1,
# last 2, ACK 17, READ request 12, READ response first 13 / last 15).
tshark -r "$CAP/roce.pcap" -T fields -e infiniband.bth.opcode 2>/dev/null |
	sort -n | uniq -c >"$CAP/ops.txt"
sed 's/^/# opcode count: /' "$CAP/ops.txt"
has_op() {
	local op
	for op; do
		awk -v o="$op" '$2 == o { f = 1 } END { exit !f }' "$CAP/ops.txt" ||
			return 1
	done
}

ktap_check "packets were captured and decoded as InfiniBand" \
	grep -q 'InfiniBand' "$CAP/decoded.txt"
ktap_check "no packet is malformed" \
	sh -c "! grep -qi 'malformed' '$CAP/decoded.txt'"
ktap_check "SEND first, middle and last packets" has_op 0 1 2
ktap_check "ACKs" has_op 17
ktap_check "RDMA READ request and responses" has_op 12 13 15
rm -rf "$CAP"
ktap_finish
