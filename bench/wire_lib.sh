#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What bench/wire.sh (two namespaces), bench/profile.sh (the same) and
# bench/pair.sh (two VMs) share: the two namespaces and a perftest run
# across them, the speed points and the CSV row of a perftest result.
# wire.sh and pair.sh each define point MODE NAME PARAM COLUMN TOOL SIZE
# ARGS... for their own topology.

# wire_pair TYPE: ns_pair's devices of TYPE (softrdma or rxe; DEVN, their
# name's stem, set to match), MTU 9000, and a side link 10.8.0.0/24
# between the namespaces for perftest's TCP side channel.
wire_pair() {
	[ "$1" = rxe ] && DEVN=rxe || DEVN=srdma
	ns_pair "$1" || { echo "# $1: no two namespaces with a device each"; return 1; }
	ip link add veth3 netns ns1 type veth peer name veth4 netns ns2 &&
		ip -n ns1 addr add 10.8.0.1/24 dev veth3 &&
		ip -n ns2 addr add 10.8.0.2/24 dev veth4 &&
		ip -n ns1 link set veth3 up && ip -n ns2 link set veth4 up &&
		ip -n ns1 link set veth1 mtu 9000 && ip -n ns2 link set veth2 mtu 9000 &&
		wait_for "ibdev_gids ${DEVN}1 | grep -q ':ffff:'"
}

# perftest_in NS DEV TOOL PORT ARGS...: TOOL on DEV in namespace NS, its TCP side
# channel on PORT; the client when the last of ARGS is an address.
perftest_in() {
	local ns=$1 dev=$2 tool=$3 port=$4
	shift 4
	ip netns exec "$ns" timeout -k 5 "${PERF_TIMEOUT:-120}" "$tool" \
		-d "$dev" -x "$(gid_index "$dev")" -F -p "$port" "$@"
}

# listening PORT: a server's side channel listens on PORT in ns2.
listening() {
	wait_for "ip netns exec ns2 ss -Hltn 'sport = :$1' | grep -q ." 60
}

# pair_run TOOL PORT ARGS...: TOOL's server on ns2's device, its client on
# ns1's: the client's output on stdout, both sides' errors in $LOG. The
# TCP side channel takes the side link (10.8.0.0/24), not the bottleneck:
# an AQM queue full of ECN-capable packets drops what is not, and a
# perftest whose exchange is lost fails before it measures anything.
pair_run() {
	local tool=$1 port=$2 pid
	shift 2
	echo "== $DEVN $tool $*" >>"$LOG"
	perftest_in ns2 "${DEVN}2" "$tool" "$port" "$@" >/dev/null 2>>"$LOG" &
	pid=$!
	listening "$port"
	perftest_in ns1 "${DEVN}1" "$tool" "$port" "$@" 10.8.0.2 2>>"$LOG"
	wait $pid
}


# row MODE NAME PARAM COLUMN SIZE [ZERO]: column COLUMN of perftest's
# result row for SIZE on stdin, as a CSV row MODE,NAME,PARAM,VALUE. A
# result of 0 (or inf) is perftest's clock failing under TCG (its cycles-per-us
# estimate: "Correlation coefficient r^2 < 0.9"), not a rate: no row, a
# note on stderr. No result row at all is a failed run: a row of 0 with
# ZERO set (a flow that gave up moved nothing), else none.
row() {
	awk -v m="$1" -v n="$2" -v p="$3" -v c="$4" -v s="$5" -v z="${6:-}" '
		$1 == s && NF >= c {
			found = 1
			if ($c ~ /^[0-9.]+$/ && $c + 0 > 0)
				print m "," n "," p "," $c
			else
				print "# " m " " n " " p ": a result of " $c " (perftest'"'"'s clock), left out" >"/dev/stderr"
		}
		END { if (!found && z) print m "," n "," p ",0" }'
}

# speed MODE: write bandwidth at 4 KiB and 64 KiB, the 64 B send message
# rate, and the 8 B write latency (t_typical: the run's median).
speed() {
	point "$1" write_bw_MBps 4096 4 ib_write_bw 4096 -D "$SECS"
	point "$1" write_bw_MBps 65536 4 ib_write_bw 65536 -D "$SECS"
	point "$1" send_rate_Mpps 64 5 ib_send_bw 64 -D "$SECS"
	point "$1" write_lat_us 8 5 ib_write_lat 8 -n 1000
}
