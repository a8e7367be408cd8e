#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Real clients over softrdma: UCX (the transport layer of MPI and NCCL-style
# code) over its rc_verbs and ud_verbs transports, and qperf. Two
# namespaces joined by a veth pair are two hosts.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

for tool in ucx_perftest qperf; do
	command -v $tool >/dev/null ||
		{ echo "1..0 # SKIP $tool missing"; exit $KSFT_SKIP; }
done

ktap_plan 10
srdma_cleanup
modprobe rdma_ucm

ns_pair || ktap_print "the two namespaces did not come up"

# pair NAME PORT SERVER_CMD CLIENT_CMD: the server (a shell command) in ns1
# listens on TCP PORT (its side channel), the client in ns2 runs against
# 10.9.0.1.
pair() {
	local name=$1 port=$2 server=$3 client=$4 out pid rc_c rc_s
	out=$(mktemp)
	ip netns exec ns1 timeout "$TOOL_TIMEOUT" bash -c "$server" >"$out" 2>&1 &
	pid=$!
	wait_for "ip netns exec ns1 ss -Hltn 'sport = :$port' | grep -q ." 30 ||
		ktap_print "the server did not come up"
	ip netns exec ns2 timeout "$TOOL_TIMEOUT" bash -c "$client" >>"$out" 2>&1
	rc_c=$?
	wait $pid
	rc_s=$?
	# A UCX error fails the run even when the tool exits 0.
	! grep -q 'UCX  ERROR' "$out" || rc_c=1
	# The results: ucx_perftest's "Final:" line, qperf's values.
	[ $rc_c -ne 0 ] || [ $rc_s -ne 0 ] ||
		grep -E 'Final:|=' "$out" | sed 's/^/# /'
	pair_result "$name" "$out" $rc_c $rc_s
}

# UCT level: one transport, named; ns1's device serves, ns2's connects.
uct() {
	local tl=$1
	shift
	pair "ucx_perftest $tl $*" 13337 \
		"ucx_perftest -d srdma1:1 -x $tl $*" \
		"ucx_perftest -d srdma2:1 -x $tl $* 10.9.0.1"
}
uct rc_verbs -t put_bw -D zcopy -s 65536 -n 1000
uct rc_verbs -t get -D zcopy -s 65536 -n 500
uct rc_verbs -t am_lat -s 8 -n 1000
uct ud_verbs -t am_bw -D bcopy -s 1000 -n 2000
uct ud_verbs -t am_lat -s 8 -n 1000

# UCP level (what MPI uses): tag matching, wired up over ud_verbs.
ucp() {
	pair "ucx_perftest UCP $* over rc_verbs,ud_verbs" 13337 \
		"env UCX_NET_DEVICES=srdma1:1 UCX_TLS=rc_verbs,ud_verbs ucx_perftest $*" \
		"env UCX_NET_DEVICES=srdma2:1 UCX_TLS=rc_verbs,ud_verbs ucx_perftest $* 10.9.0.1"
}
ucp -t tag_bw -s 1048576 -n 100
ucp -t tag_lat -s 8 -n 1000
ucp -t ucp_fadd -n 1000

# qperf finds RoCE peers through rdma_cm (-cm1); without it, its AV has
# no GRH, which RoCE needs.
pair "qperf -cm1 rc_bw rc_lat" 19765 "qperf" \
	"qperf -cm1 10.9.0.1 -t 2 rc_bw rc_lat && qperf 10.9.0.1 quit"
pair "qperf -cm1 rc_rdma_write_bw rc_rdma_read_lat" 19765 "qperf" \
	"qperf -cm1 10.9.0.1 -t 2 rc_rdma_write_bw rc_rdma_read_lat &&
	 qperf 10.9.0.1 quit"

ktap_finish
