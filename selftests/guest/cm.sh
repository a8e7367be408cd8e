#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The connection manager over softrdma: the kernel's MAD layer runs the
# GSI QP (QP1) of each device and ib_cm sends its MADs over it, so
# rdma_cm programs connect by IP address. Two namespaces joined by a veth
# pair are two hosts, each with its own device.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

ktap_plan 18
srdma_cleanup
modprobe rdma_ucm

ns_pair || ktap_print "the two namespaces did not come up"

# One host that answers nothing: ns3 has an address but no RDMA device,
# behind a second link of ns1 (with srdma3 over it).
ip netns add ns3
ip link add veth13 netns ns1 type veth peer name veth31 netns ns3
ip -n ns1 addr add 10.11.0.1/24 dev veth13
ip -n ns3 addr add 10.11.0.3/24 dev veth31
ip -n ns1 link set veth13 up
ip -n ns3 link set veth31 up
ip netns exec ns1 rdma link add srdma3 type softrdma netdev veth13

# cm_pair NAME SERVER_NS SERVER_CMD CLIENT_NS CLIENT_CMD: the server
# listens through rdma_cm, then the client connects; both must succeed.
# A perftest client that raced its server's second listen runs again
# (perftest_cm_raced).
cm_pair() {
	local name=$1 sns=$2 server=$3 cns=$4 client=$5 out pid rc_c rc_s try
	out=$(mktemp)
	for try in $(seq $PERFTEST_TRIES); do
		ip netns exec "$sns" timeout "$TOOL_TIMEOUT" $server >"$out" 2>&1 &
		pid=$!
		wait_for "cm_listening ${server%% *}" 30 || ktap_print "no listener came up"
		ip netns exec "$cns" timeout "$TOOL_TIMEOUT" $client >>"$out" 2>&1
		rc_c=$?
		if [ $rc_c -ne 0 ] && [ "$try" -lt $PERFTEST_TRIES ] &&
		   perftest_cm_raced "$out"; then
			# The server waits for the client that is gone.
			kill $pid
			wait $pid
			perftest_again "$name"
			continue
		fi
		wait $pid
		rc_s=$?
		break
	done
	pair_result "$name" "$out" $rc_c $rc_s
}

# No cm_id, and no QP but the MAD layer's QP1s, is left (on devices
# other than one given to skip, whose connect is still under way).
cm_no_leak() {
	local left
	left=$(rdma resource show cm_id 2>/dev/null;
	       rdma resource show qp 2>/dev/null | grep -v 'comm \[')
	[ -z "${1:-}" ] || left=$(echo "$left" | grep -v "^link $1/")
	[ -z "$left" ] || ktap_print "left over: $left"
	[ -z "$left" ]
}

ktap_check "the MAD layer runs QP1 on every device" \
	test "$(rdma resource show qp lqpn 1 | grep -c 'srdma[123]/1 lqpn 1 type GSI state RTS')" = 3

cm_pair "rping -V over IPv4" \
	ns1 "rping -s -a 10.9.0.1 -C 50 -S 1000" \
	ns2 "rping -c -a 10.9.0.1 -C 50 -S 1000 -V"
cm_pair "rping -V the other way" \
	ns2 "rping -s -a 10.9.0.2 -C 50 -S 64" \
	ns1 "rping -c -a 10.9.0.2 -C 50 -S 64 -V"
cm_pair "rping -V over IPv6" \
	ns1 "rping -s -a fd09::1 -C 50 -S 4000" \
	ns2 "rping -c -a fd09::1 -C 50 -S 4000 -V"
cm_pair "ucmatose: 4 RC connections" \
	ns1 "ucmatose -b 10.9.0.1 -c 4 -C 100" \
	ns2 "ucmatose -s 10.9.0.1 -c 4 -C 100"
cm_pair "ucmatose over IPv6" \
	ns1 "ucmatose -b fd09::1 -f ipv6 -c 2 -C 20" \
	ns2 "ucmatose -s fd09::1 -f ipv6 -c 2 -C 20"
cm_pair "udaddy: UD through rdma_cm" \
	ns1 "udaddy -b 10.9.0.1 -c 4 -C 100" \
	ns2 "udaddy -s 10.9.0.1 -c 4 -C 100"
# Multicast through rdma_cm: ns1 joins the group (its netdev with it),
# ns2 sends 20 datagrams to the group, ns1 must get them all. (The
# kernel's rdma_cm joins RoCEv2 groups over IPv4 only.)
mcast_joined() {
	ip -n ns1 maddr show dev veth1 | grep -q 'inet  239.3.3.3'
}
mckey_pair() {
	local out pid rc_c rc_s
	out=$(mktemp)
	ip netns exec ns1 timeout "$TOOL_TIMEOUT" \
		mckey -m 239.3.3.3 -b 10.9.0.1 -C 20 -S 1000 >"$out" 2>&1 &
	pid=$!
	wait_for mcast_joined 30 || ktap_print "ns1 did not join the group"
	ip netns exec ns2 timeout "$TOOL_TIMEOUT" \
		mckey -m 239.3.3.3 -b 10.9.0.2 -s -C 20 -S 1000 >>"$out" 2>&1
	rc_c=$?
	wait $pid
	rc_s=$?
	pair_result "mckey: multicast through rdma_cm, ns2 to a group ns1 joined" \
		"$out" $rc_c $rc_s
}
mckey_pair
cm_pair "rdma_server / rdma_client" \
	ns1 "rdma_server -s 10.9.0.1" \
	ns2 "rdma_client -s 10.9.0.1"
for tool in ib_send_bw ib_write_bw ib_read_bw ib_write_lat; do
	cm_pair "perftest $tool -R" \
		ns1 "$tool -d srdma1 -R -F -n 200" \
		ns2 "$tool -d srdma2 -R -F -n 200 10.9.0.1"
done

# A host that does not answer: the connect fails with the CM's timeout,
# its retries (about 100 s) run out beside the churn below, on a device
# of their own (srdma3).
t0=$SECONDS
unreach_out=$(mktemp)
(ip netns exec ns1 timeout 200 rping -c -a 10.11.0.3 -C 1
 echo "exit $? after $((SECONDS - t0)) s") >"$unreach_out" 2>&1 &
unreach_pid=$!

# Connections made and torn down one after the other: 50 (make
# check-all: 200, lib.sh's check_full).
CHURN=$(check_full && echo 200 || echo 50)
churn() {
	local i pid ok=0
	ip netns exec ns1 rping -s -a 10.9.0.1 -P >/dev/null 2>&1 &
	pid=$!
	wait_for "cm_listening rping" 30
	for i in $(seq "$CHURN"); do
		ip netns exec ns2 timeout 30 rping -c -a 10.9.0.1 -C 1 -V \
			>/dev/null 2>&1 && ok=$((ok + 1))
	done
	kill $pid
	wait $pid 2>/dev/null
	[ $ok -eq "$CHURN" ] || ktap_print "$ok of $CHURN connections worked"
	[ $ok -eq "$CHURN" ] && wait_for "cm_no_leak srdma3" 10
}
ktap_check "$CHURN connections in a row, then nothing left" churn

ktap_check_fails "a port nobody listens on is refused" \
	ip netns exec ns2 timeout 30 rping -c -a 10.9.0.1 -p 9999 -C 1

wait $unreach_pid
ktap_print "rping $(tail -n 1 "$unreach_out"): $(grep -m1 'cma event' "$unreach_out")"
grep -q 'RDMA_CM_EVENT_UNREACHABLE' "$unreach_out" && ! grep -q '^exit 124 ' "$unreach_out"
ktap_result "a host that does not answer: the connect fails" $?
rm -f "$unreach_out"
ktap_check "an address nobody has: address resolution fails" \
	sh -c '! ip netns exec ns2 timeout 30 rping -c -a 10.9.0.77 -C 1'
ktap_check "nothing is left behind" wait_for cm_no_leak 10

ktap_finish
