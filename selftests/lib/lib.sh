# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the shell selftests: TAP 13 reporting in the kselftest
# style and the setup every test needs (module, veth links, provider).
# Tests run as root inside the test VM (see run.sh).

# SELFTESTS: selftests/; TESTLIB: this folder (the shell and C libraries);
# PROGS: where the test programs are built (selftests/Makefile).
TESTLIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELFTESTS=$(dirname "$TESTLIB")
PROGS=$SELFTESTS/guest
TOP=$(dirname "$SELFTESTS")
KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

# Use the provider from the build tree, as a user would without installing
# (SRDMA_PROVIDER: one built for another release's rdma-core).
export RDMAV_DRIVERS="${SRDMA_PROVIDER:-$TOP/provider/libsoftrdma}"

ktap_n=0
ktap_failed=0
ktap_skipped=0

ktap_plan() {
	echo "TAP version 13"
	echo "1..$1"
	ktap_planned=$1
}

# ktap_plan_ref N M: N tests, and M more when the rdma_rxe reference runs.
ktap_plan_ref() {
	ktap_plan $(($1 + $(rxe_reference && echo "$2" || echo 0)))
}

ktap_print() {
	echo "# $*"
}

# ktap_result NAME STATUS: STATUS 0 is a pass.
ktap_result() {
	ktap_n=$((ktap_n + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $ktap_n $1"
	else
		ktap_failed=$((ktap_failed + 1))
		echo "not ok $ktap_n $1"
	fi
}

# ktap_check NAME CMD...: one behaviour, checked by CMD's exit status.
ktap_check() {
	local name=$1 out
	shift
	out=$("$@" 2>&1)
	local rc=$?
	[ $rc -ne 0 ] && [ -n "$out" ] && echo "$out" | sed 's/^/# /'
	ktap_result "$name" $rc
}

# ktap_check_fails NAME CMD...: CMD must fail (a refused bad request).
ktap_check_fails() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc -ne 0 ]
	ktap_result "$name" $?
}

ktap_skip() {
	ktap_n=$((ktap_n + 1))
	ktap_skipped=$((ktap_skipped + 1))
	echo "ok $ktap_n $1 # SKIP $2"
}

# known_result NAME STATUS [KNOWN]: ktap_result, except that a failure
# with a known reason outside softrdma (KNOWN, empty when there is none)
# is a skip that gives it; a pass stays a pass.
known_result() {
	if [ "$2" -ne 0 ] && [ -n "${3:-}" ]; then
		ktap_skip "$1" "expected failure: $3"
	else
		ktap_result "$1" "$2"
	fi
}

# ktap_fold [PREFIX]: another TAP producer's output, on stdin, folded into
# ours: its results renumbered as ours (names prefixed by PREFIX), its
# comments passed on. Its plan "1..N" becomes ours, N + ktap_extra, when
# ktap_extra is set (ours not yet printed); otherwise ours already counts
# its results. A last line "# exit N" (the producer's exit status, which
# the caller echoes after it) leaves N in ktap_fold_rc.
ktap_fold() {
	local line pfx=${1:-}

	ktap_fold_rc=
	while IFS= read -r line; do
		if [[ $line =~ ^1\.\.([0-9]+)$ ]]; then
			[ -z "${ktap_extra:-}" ] && continue
			ktap_planned=$((BASH_REMATCH[1] + ktap_extra))
			echo "1..$ktap_planned"
		elif [[ $line =~ ^ok\ [0-9]+\ (.*)\ \#\ SKIP\ (.*)$ ]]; then
			ktap_skip "$pfx${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
		elif [[ $line =~ ^(not )?ok\ [0-9]+\ (.*)$ ]]; then
			ktap_result "$pfx${BASH_REMATCH[2]}" \
				"$([ -z "${BASH_REMATCH[1]}" ]; echo $?)"
		elif [[ $line != "TAP version"* ]]; then
			[[ $line =~ ^\#\ exit\ ([0-9]+)$ ]] && ktap_fold_rc=${BASH_REMATCH[1]}
			echo "$line"
		fi
	done
}

ktap_finish() {
	echo "# Totals: pass:$((ktap_n - ktap_failed - ktap_skipped)) fail:$ktap_failed xfail:0 xpass:0 skip:$ktap_skipped error:0"
	if [ "$ktap_n" -ne "$ktap_planned" ]; then
		echo "# planned $ktap_planned tests, ran $ktap_n"
		exit $KSFT_FAIL
	fi
	[ $ktap_failed -eq 0 ] || exit $KSFT_FAIL
	[ $ktap_skipped -ne "$ktap_n" ] || exit $KSFT_SKIP
	exit $KSFT_PASS
}

# ratio A B: A / B with two decimals ("-" when B is 0 or missing), for
# the softrdma/rxe comparisons the tests print.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}

# Try CMD ($1, a shell string) until it succeeds, $2 (default 10) times 10
# tries 0.1 s apart: at least $2 seconds. Each try forks, so in a slow
# guest the limit stretches with it (about tenfold under the debug kernel),
# which is what a wait for the system under test should do.
wait_for() {
	local i
	for i in $(seq $((${2:-10} * 10))); do
		eval "$1" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# cm_listening PROG: an rdma_cm listener of the program PROG is up. The
# program is named so that a listener of the test before, on its way out,
# is not taken for the one now starting (ib_send_bw -R was rejected so).
cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' |
		grep -qw "comm $1"
}

# veth_pair A B [ADDR_A/LEN]: a veth pair, both ends up, A addressed.
veth_pair() {
	ip link add "$1" type veth peer name "$2" || return
	[ -z "${3:-}" ] || ip addr add "$3" dev "$1" || return
	ip link set "$1" up && ip link set "$2" up
}

ibdev_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

# Port attribute from sysfs, e.g. port_attr srdma0 state -> "4: ACTIVE".
port_attr() {
	cat "/sys/class/infiniband/$1/ports/1/$2"
}

# Every GID of the device's port, one per line, unused (zero) ones left out.
ibdev_gids() {
	cat /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null |
		grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$'
}

# link_counters IBDEV: the port counters of "rdma statistic" as NAME VALUE
# pairs on one line (iproute2 6.1 prints them on its "link IBDEV/1" line,
# later releases one per line below it). With COUNTERS_FILE set, that
# file's line instead: counters saved earlier (counters_delta).
link_counters() {
	if [ -n "${COUNTERS_FILE:-}" ]; then
		cat "$COUNTERS_FILE"
		return
	fi
	rdma statistic show link "$1/1" |
		awk '{ for (i = $1 == "link" ? 3 : 1; i <= NF; i++) printf "%s ", $i }
		     END { print "" }'
}

# counters_delta START END: how far each counter moved from file START to
# file END (both NAME VALUE pairs on one line, as link_counters prints).
counters_delta() {
	awk 'NR == FNR { for (i = 1; i < NF; i += 2) s[$i] = $(i + 1); next }
	     { for (i = 1; i < NF; i += 2) printf "%s %d ", $i, $(i + 1) - s[$i] }
	     END { print "" }' "$1" "$2"
}

# dev_counter IBDEV NAME: a port counter of "rdma statistic".
dev_counter() {
	link_counters "$1" |
		awk -v n="$2" '{ for (i = 1; i < NF; i += 2) if ($i == n) print $(i + 1) }'
}

# hw_counter IBDEV NAME: a port counter from sysfs (readable from the
# initial namespace whatever namespace the device's netdev is in).
hw_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"
}

# sum_counter NAME DEV...: the sum of counter NAME over the devices.
sum_counter() {
	local name=$1 dev sum=0
	shift
	for dev; do sum=$((sum + $(hw_counter "$dev" "$name"))); done
	echo $sum
}

# in_order IBDEV: the device's traffic so far crossed a loss-free path as
# such a path must: nothing resent, nothing NAKed or dropped as out of
# sequence, no retry timeout. A receiver short of receive WQEs (RNR NAKs:
# flow control, not loss) is the one reason for resends and quiet drops
# of the packets behind the NAKed one. A tail loss probe is no resend:
# on a loaded host an ACK can come later than the probe timeout, and the
# probe's duplicate is answered, so the late ACK, or a read's answer the
# probe asked again, is dropped as stale; nothing is sent again. Prints
# the counters that are not 0.
in_order() {
	local name v bad=0 names="seq_naks_sent seq_naks_rcvd retry_timeouts"

	v=$(dev_counter "$1" rnr_naks_rcvd)$(dev_counter "$1" rnr_naks_sent)
	if [ "$v" = 00 ]; then
		names="$names retransmits"
		[ "$(dev_counter "$1" tlp_probes)" = 0 ] && names="$names drop_psn"
	fi
	[ "$v$(dev_counter "$1" tlp_probes)" = 000 ] ||
		ktap_print "$1: RNR NAKs or probes: $(moved_counters "$1")"
	for name in $names; do
		v=$(dev_counter "$1" $name)
		[ "${v:-x}" = 0 ] && continue
		ktap_print "$1: $name ${v:-?}"
		bad=1
	done
	# Every counter that moved, on one line: the cause is among them.
	[ $bad -eq 0 ] || ktap_print "$1: $(moved_counters "$1")"
	return $bad
}

# moved_counters IBDEV: the device's port counters that are not 0, as
# NAME VALUE pairs on one line.
moved_counters() {
	link_counters "$1" |
		awk '{ for (i = 1; i < NF; i += 2) if ($(i + 1) != 0)
			printf "%s %s ", $i, $(i + 1) }'
}

# dmesg_clean SINCE [ERE]: no kernel log line after the first SINCE (a
# "dmesg | wc -l" taken before) matches the harness's list of reports
# (qemu-scripts/lib.sh's VM_DMESG_BAD) or ERE; those that do are shown.
dmesg_clean() {
	local splat bad
	splat=$(sed -n "s/^VM_DMESG_BAD='\(.*\)'$/\1/p" "$TOP/qemu-scripts/lib.sh")
	bad=$(dmesg | tail -n +"$(($1 + 1))" | grep -E "$splat${2:+|$2}")
	[ -z "$bad" ] || echo "$bad" | head -n 20 | sed 's/^/# /'
	[ -z "$bad" ]
}

# srdma0 over veth0 (10.9.0.1, peer veth1), GIDs ready: the one-device
# setup of most tests.
srdma0_up() {
	veth_pair veth0 veth1 10.9.0.1/24 && srdma0_add
}

# srdma0 again over the veth0 of srdma0_up, GIDs ready: the device that
# serves after one was deleted.
srdma0_add() {
	rdma link add srdma0 type softrdma netdev veth0 &&
		wait_for 'ibdev_gids srdma0 | grep -q ffff:0a09:0001'
}

# rxe_reference: run a ULP test a second time over rdma_rxe and report
# the two side by side (RXE_REFERENCE=1: make check-all sets it). Each
# such run costs about what softrdma's does; make check tests softrdma.
rxe_reference() {
	[ "${RXE_REFERENCE:-0}" = 1 ]
}

# check_full: make check-all's depth (CHECK_FULL=1, which it sets). Tests
# that repeat one behaviour many times (mutations, connections, ranks)
# repeat it fewer times otherwise, to keep make check in its budget
# (README: Tests); the behaviour checked is the same.
check_full() {
	[ "${CHECK_FULL:-0}" = 1 ]
}

# rxe0, rdma_rxe's device, in the same setup: the reference to compare
# with. rdma_rxe in 6.1 lives in the initial namespace only, so softrdma
# must not hold its UDP port 4791 there (srdma_cleanup first).
rxe0_up() {
	veth_pair veth0 veth1 10.9.0.1/24 && modprobe rdma_rxe && rxe0_add
}

# rxe0 again over the veth0 of rxe0_up, GIDs ready (as srdma0_add).
rxe0_add() {
	rdma link add rxe0 type rxe netdev veth0 &&
		wait_for 'ibdev_gids rxe0 | grep -q ffff:0a09:0001'
}

# as_nobody CMD...: CMD as an unprivileged user (nobody, no capabilities),
# with the locked-memory limit raised so that it can register memory, as
# an administrator would for RDMA users. The environment is kept.
as_nobody() {
	prlimit --memlock=unlimited:unlimited -- \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all --bounding-set=-all -- "$@"
}

# kernel_at_least MAJOR MINOR: the running kernel is MAJOR.MINOR or later.
kernel_at_least() {
	local maj min

	IFS=. read -r maj min _ <<<"$(uname -r)"
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "${min%%[!0-9]*}" -ge "$2" ]; }
}

# Put the softrdma.ko built for the running kernel (make module KVER=...;
# or $SRDMA_KO) and the
# module index staged on the host (see qemu-scripts/stage-modules.sh,
# SRDMA_MODROOT) in place; the guest root is an overlay in RAM, so this
# never touches the host.
srdma_install_module() {
	local kver=$(uname -r)
	local staged=${SRDMA_MODROOT:-}/lib/modules/$kver

	mkdir -p "/lib/modules/$kver/extra" &&
		cp "${SRDMA_KO:-$TOP/build/module/$kver/softrdma.ko}" \
			"/lib/modules/$kver/extra/softrdma.ko" || return
	if [ -n "${SRDMA_MODROOT:-}" ] && [ -f "$staged/modules.dep.bin" ]; then
		cp "$staged"/modules.* "/lib/modules/$kver/"
	else
		depmod -a	# correct but slow in the VM
	fi
}

# pair_device_up: in a vm-pair.sh guest, create the host's RDMA device over
# the link and set DEV: softrdma, except rdma_rxe on host a with PAIR_A=rxe
# (the interoperability runs).
pair_device_up() {
	if [ "$VM_HOST" = a ] && [ "${PAIR_A:-softrdma}" = rxe ]; then
		DEV=rxe0
		modprobe rdma_rxe &&
			rdma link add rxe0 type rxe netdev "$VM_IFACE" || return
	else
		DEV=srdma0
		rdma link add srdma0 type softrdma netdev "$VM_IFACE" || return
	fi
	wait_for "ibdev_gids $DEV | grep -q ':ffff:'"
}

# pair_rxe_up: rdma_rxe's device on the link instead of softrdma's, on
# either host.
pair_rxe_up() {
	srdma_cleanup
	DEV=rxe0
	modprobe rdma_rxe && rdma link add rxe0 type rxe netdev "$VM_IFACE" &&
		wait_for "ibdev_gids rxe0 | grep -q ':ffff:'"
}

# perftest_cm_raced OUT: perftest's client (output in OUT) was rejected
# for want of a listener (REJ reason 8) and failed. perftest -R connects
# twice through rdma_cm on one port (its exchange, then the test QPs),
# and the server listens for the second only after the first is done, so
# a quick client is rejected; its retry then runs on the cm_id it has just
# destroyed and segfaults. perftest's bug (fixed upstream in 3d9d8d0,
# after Debian's 4.5+0.17 and 25.01): the run is made again.
PERFTEST_TRIES=3
perftest_cm_raced() {
	grep -q 'RDMA_CM_EVENT_REJECTED; error: 8\.' "$1"
}

# perftest_again NAME: say that run NAME is made again, and why.
perftest_again() {
	ktap_print "$1: perftest's client came before the server's second listen (perftest_cm_raced): run again"
}

# across_run SERVER_HOST NAME LISTENING SERVER_CMD CLIENT_CMD [KEEP]: in a
# vm-pair.sh guest, the server on SERVER_HOST, the client (PEER in
# CLIENT_CMD: the server's address) on the other host once LISTENING holds
# on the server; each host reports its own side, and keeps its output in
# the file KEEP if given. Both hosts make the same calls in the same order.
# A client that perftest_cm_raced() tells the server host so, and both
# make the run again.
across_step=0
across_run() {
	local srv=$1 name=$2 listening=$3 server=$4 client=${5//PEER/$VM_PEER_IP}
	local out rc side try word SYNC=$VM_SCRIPTS/vm-sync.sh
	out=$(mktemp)
	for try in $(seq $PERFTEST_TRIES); do
		across_step=$((across_step + 1))
		"$SYNC" barrier "start$across_step" 120 || return
		if [ "$VM_HOST" = "$srv" ]; then
			# Line-buffered: an error and the output before it stay
			# in order.
			timeout "$TOOL_TIMEOUT" stdbuf -oL $server >"$out" 2>&1 &
			local pid=$!
			wait_for "$listening" 60 ||
				echo "no listener after 60 s: $listening" >>"$out"
			"$SYNC" barrier "listen$across_step" 120
			# A raced client leaves the server waiting for it.
			word=$("$SYNC" tell "done$across_step" - $((TOOL_TIMEOUT + 60)))
			[ "$word" = again ] && kill $pid 2>/dev/null
			wait $pid
			rc=$?
			side=server
		else
			"$SYNC" barrier "listen$across_step" 120
			timeout "$TOOL_TIMEOUT" stdbuf -oL $client >"$out" 2>&1
			rc=$?
			word=-
			[ $rc -ne 0 ] && [ "$try" -lt $PERFTEST_TRIES ] &&
				perftest_cm_raced "$out" && word=again
			"$SYNC" tell "done$across_step" $word $((TOOL_TIMEOUT + 60)) >/dev/null
			side=client
		fi
		[ "$word" = again ] || break
		perftest_again "$name"
	done
	if [ $rc -ne 0 ]; then
		echo "exit $rc" >>"$out"
		rdma statistic show link "$DEV/1" >>"$out" 2>&1
		sed 's/^/# /' "$out" | tail -n 30
	fi
	if [ -n "${6:-}" ]; then mv "$out" "$6"; else rm -f "$out"; fi
	# PAIR_XFAIL: "NAME|reason" lines of failures known and reported
	# elsewhere; one shows as a skip that says so (a pass stays a pass).
	known_result "$name ($side on $DEV)" $rc "$(printf '%s\n' "${PAIR_XFAIL:-}" |
		awk -F'|' -v n="$name" '$1 == n { print $2 }')"
}

# ns_pair [rxe]: two hosts in one guest: namespaces ns1 and ns2 joined by
# veth1/veth2 (10.9.0.1 and .2, fd09::1 and ::2), with srdma1 and srdma2
# over them (rxe1 and rxe2 with "rxe", where rdma_rxe keeps a socket per
# namespace: sid's 7.2 does, 6.1's does not), their GIDs up.
ns_pair() {
	local i type=softrdma name=srdma
	[ "${1:-}" = rxe ] && type=rxe name=rxe
	ip netns add ns1 && ip netns add ns2 &&
		ip link add veth1 netns ns1 type veth peer name veth2 netns ns2 ||
		return
	for i in 1 2; do
		ip -n ns$i link set lo up &&
			ip -n ns$i addr add 10.9.0.$i/24 dev veth$i &&
			ip -n ns$i addr add fd09::$i/64 dev veth$i nodad &&
			ip -n ns$i link set veth$i up &&
			ip netns exec ns$i rdma link add $name$i type $type \
				netdev veth$i || return
	done
	wait_for "ibdev_gids ${name}2 | grep -q '^fd09:0000:0000:0000:0000:0000:0000:0002$'"
}

# gid_index IBDEV: the index of the device's (first) IPv4 GID.
gid_index() {
	grep -l ':ffff:' /sys/class/infiniband/"$1"/ports/1/gids/* |
		head -n 1 | sed 's#.*/##'
}

# pair_result NAME OUT RC_CLIENT RC_SERVER: the TAP result of a client and
# server run, their output (in file OUT, removed) shown on a failure.
pair_result() {
	local name=$1 out=$2 rc_c=$3 rc_s=$4
	if [ "$rc_c" -ne 0 ] || [ "$rc_s" -ne 0 ]; then
		ktap_print "client exit $rc_c, server exit $rc_s"
		sed 's/^/# /' "$out" | tail -n 20
	fi
	rm -f "$out"
	[ "$rc_c" -eq 0 ] && [ "$rc_s" -eq 0 ]
	ktap_result "$name" $?
}

TOOL_PORT=18515	# the default TCP port of pingpong and perftest
TOOL_TIMEOUT=${TOOL_TIMEOUT:-120}

# client_server NAME SERVER_CMD CLIENT_ARGS...: the server runs SERVER_CMD,
# the client the same tool with CLIENT_ARGS; both must succeed.
client_server() {
	local name=$1 server=$2 out rc_s rc_c
	shift 2
	out=$(mktemp)
	timeout "$TOOL_TIMEOUT" $server >"$out" 2>&1 &
	local pid=$!
	if ! wait_for "ss -Hltn 'sport = :$TOOL_PORT' | grep -q ." 60; then
		kill $pid 2>/dev/null
	fi
	timeout "$TOOL_TIMEOUT" "$@" >>"$out" 2>&1
	rc_c=$?
	wait $pid
	rc_s=$?
	pair_result "$name" "$out" $rc_c $rc_s
}

# huge_pages_at_least N: at least N 2 MiB huge pages reserved (a test of
# memory registered over them); huge_pages_restore: the count as before.
HUGE_NR=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
huge_pages_at_least() {
	HUGE_BEFORE=$(cat $HUGE_NR 2>/dev/null) || return 1
	[ "$HUGE_BEFORE" -ge "$1" ] || echo "$1" >$HUGE_NR
}

huge_pages_restore() {
	[ -z "${HUGE_BEFORE:-}" ] || echo "$HUGE_BEFORE" >$HUGE_NR
}

# Remove everything a test may leave behind: devices, links, namespaces.
srdma_cleanup() {
	local dev ns
	for dev in $(rdma link show 2>/dev/null | sed -n 's/^link \([^/]*\)\/.*/\1/p'); do
		rdma link delete "$dev" 2>/dev/null
	done
	for ns in $(ip netns list 2>/dev/null | cut -d' ' -f1); do
		ip netns del "$ns"
	done
	ip -o link show type veth 2>/dev/null | sed -n 's/^[0-9]*: \([^@:]*\).*/\1/p' |
		while read -r dev; do ip link del "$dev" 2>/dev/null; done
	wait_for '! ls /sys/class/infiniband/* >/dev/null 2>&1' 20
	modprobe -r softrdma 2>/dev/null
	modprobe -r rdma_rxe 2>/dev/null
	return 0
}
