#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libfabric (Debian's 1.17) over softrdma, four tests of make check:
#  libfabric.sh        fi_pingpong over the verbs provider's MSG endpoint,
#                      every size of its -S all checked (-c), on srdma0
#                      looping back to its own address;
#  libfabric.sh rdm    the same over ofi_rxm's RDM endpoint on verbs;
#  libfabric.sh api    fabric_rdm there: tagged messages and RMA over RDM;
#  libfabric.sh netns  fi_pingpong MSG and RDM between two namespaces.
# With RXE_REFERENCE=1 the one-host runs again on rxe0.
#
# Two things of libfabric 1.17 these runs meet:
#  - ofi_rxm opens one verbs CQ of (128 + 128) * FI_UNIVERSE_SIZE (1024)
#    entries and fails in fi_enable() (EINVAL) where max_cqe is below
#    that: rdma_rxe's 32767 is; softrdma's is 1M. On rxe0 the RDM runs
#    set FI_UNIVERSE_SIZE=64.
#  - its verbs provider lists, besides the devices of the namespace's
#    addresses, every device it can open with an AF_IB address made of
#    GID 0 (vrb_get_sib()). With the devices shared between namespaces
#    (the default), a server given no address in ns2 takes srdma1, the
#    first device, in ns1, and fails to bind (ENODEV; fi_domain() -61 for
#    RDM). FI_VERBS_IFACE (the netdev) leaves that list out.
# Two hosts (vm-pair.sh): pair_libfabric.sh.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

command -v fi_pingpong >/dev/null && [ -x "$PROGS/fabric_rdm" ] || {
	echo "1..0 # SKIP no fi_pingpong (libfabric-bin) or fabric_rdm (libfabric-dev)"
	exit $KSFT_SKIP
}

FI_TIMEOUT=${FI_TIMEOUT:-90}
PP_PORT=47592	# fi_pingpong's control port
RDM_PORT=47601	# fabric_rdm's
RDM=verbs\;ofi_rxm
PP_ITERS=${PP_ITERS:-1}
RDM_ROUNDS=${RDM_ROUNDS:-2}

# ns_argv NS: in NS_ARGV, the words that run a command in namespace NS
# ("-": the current one) with the environment FI_ENV_<NS> gives (the
# namespace's FI_VERBS_IFACE).
ns_argv() {
	local envs=FI_ENV_${1//[^a-z0-9]/_}
	NS_ARGV=()
	[ "$1" = - ] || NS_ARGV=(ip netns exec "$1")
	NS_ARGV+=(env ${!envs:-})
}

# serve NAME READY SRV_NS CLI_NS OUT SERVER_CMD... -- CLIENT_CMD...: the
# server in SRV_NS, the client in CLI_NS once READY (a shell condition)
# holds; both must succeed. The client's output in OUT, the server's in
# OUT.srv.
serve() {
	local name=$1 ready=$2 sns=$3 cns=$4 out=$5 srv=() rc_s rc_c pid
	shift 5
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	ns_argv "$sns"
	timeout "$FI_TIMEOUT" "${NS_ARGV[@]}" "${srv[@]}" >"$out.srv" 2>&1 &
	pid=$!
	wait_for "$ready" 60 ||
		ktap_print "$name: the server did not listen"
	ns_argv "$cns"
	timeout "$FI_TIMEOUT" "${NS_ARGV[@]}" "$@" >"$out" 2>&1
	rc_c=$?
	wait $pid
	rc_s=$?
	if [ $rc_c -ne 0 ] || [ $rc_s -ne 0 ]; then
		ktap_print "$name: client exit $rc_c, server exit $rc_s"
		tail -n 15 "$out" | sed 's/^/# client: /'
		tail -n 15 "$out.srv" | sed 's/^/# server: /'
	fi
	[ $rc_c -eq 0 ] && [ $rc_s -eq 0 ]
}

# pingpong NAME SRV_NS CLI_NS ADDR ARGS...: fi_pingpong with ARGS, each
# transfer checked, every size of -S all (46, 0 B to 6 MiB), or with
# PP_SIZES=default its 6 default sizes (64 B to 1 MiB); its MB/s of
# 64 KiB and 1 MiB in MBS_64K and MBS_1M.
pingpong() {
	local name=$1 sns=$2 cns=$3 addr=$4 out=/tmp/fi_pp.out t0 rc sizes="-S all"
	shift 4
	[ "${PP_SIZES:-}" != default ] || sizes=
	t0=$SECONDS
	ns_argv "$sns"
	serve "$name" "${NS_ARGV[*]} ss -Hltn 'sport = :$PP_PORT' | grep -q ." \
		"$sns" "$cns" $out \
		fi_pingpong $sizes -I "$PP_ITERS" -c "$@" -- \
		fi_pingpong $sizes -I "$PP_ITERS" -c "$@" "$addr"
	rc=$?
	MBS_64K=$(awk '$1 == "64k" { print $6 }' $out)
	MBS_1M=$(awk '$1 == "1m" { print $6 }' $out)
	ktap_print "$name: $(grep -c '^[0-9.]*[kmg]\? ' $out) sizes in $((SECONDS - t0)) s; MB/s at 64 KiB ${MBS_64K:-?}, 1 MiB ${MBS_1M:-?}"
	rm -f $out $out.srv
	return $rc
}

# rdm NAME SRV_NS CLI_NS ADDR: fabric_rdm's server on ADDR in SRV_NS, its
# client in CLI_NS; the client's results and the server's, folded in.
rdm() {
	local name=$1 sns=$2 cns=$3 addr=$4 out=/tmp/fi_rdm.out rc
	serve "$name" "grep -q listening $out.srv" "$sns" "$cns" $out \
		"$PROGS/fabric_rdm" server -n "$RDM_ROUNDS" -P $RDM_PORT "$addr" -- \
		"$PROGS/fabric_rdm" client -n "$RDM_ROUNDS" -P $RDM_PORT "$addr"
	rc=$?
	ktap_fold "$name: " < <(grep -v '^# Totals' $out
		grep -v '^1\.\.\|^TAP\|^# Totals' $out.srv)
	rm -f $out $out.srv
	return $rc
}

# The results fabric_rdm gives: 1 + 2 rounds on each side.
RDM_RESULTS=$((2 * (1 + 2 * RDM_ROUNDS)))

# Both namespaces' devices: nothing resent, nothing out of sequence.
both_in_order() {
	local rc1

	in_order srdma1
	rc1=$?
	in_order srdma2 && [ $rc1 -eq 0 ]
}

# libfabric.sh netns: two namespaces, softrdma in each, the server in ns2
# (see above); every size, as on one host.
two_namespaces() {
	ktap_plan 3
	srdma_cleanup
	modprobe softrdma
	ns_pair || ktap_print "ns_pair failed"
	FI_ENV_ns1=FI_VERBS_IFACE=veth1
	FI_ENV_ns2=FI_VERBS_IFACE=veth2
	PP_ITERS=2 pingpong "ns2 <- ns1: fi_pingpong MSG" \
		ns2 ns1 10.9.0.2 -p verbs -e msg
	ktap_result "ns2 <- ns1: fi_pingpong verbs MSG, 0 B to 6 MiB, checked" $?
	PP_ITERS=2 pingpong "ns2 <- ns1: fi_pingpong RDM" \
		ns2 ns1 10.9.0.2 -p "$RDM" -e rdm
	ktap_result "ns2 <- ns1: fi_pingpong verbs;ofi_rxm RDM, 0 B to 6 MiB, checked" $?
	ktap_check "ns1, ns2: libfabric's traffic crossed the veth in order" \
		both_in_order
	ktap_finish
}

# on_rxe0: whether the rdma_rxe reference runs; if so rxe0 is up.
on_rxe0() {
	srdma_cleanup
	rxe_reference || return
	rxe0_up || ktap_print "rxe0 did not come up"
}

# The one-host tests: srdma0 up, then each on srdma0 and on rxe0.
one_host() {
	srdma_cleanup
	srdma0_up || ktap_print "srdma0 did not come up"
}

# libfabric.sh: fi_pingpong MSG.
msg() {
	local dev
	ktap_plan_ref 2 1
	one_host
	for dev in srdma0 rxe0; do
		[ $dev = srdma0 ] || on_rxe0 || break
		pingpong "$dev: fi_pingpong MSG" - - 10.9.0.1 -p verbs -e msg
		ktap_result "$dev: fi_pingpong verbs MSG, 0 B to 6 MiB, checked" $?
		eval "MSG_$dev=\${MBS_1M:-0} MSG64_$dev=\${MBS_64K:-0}"
		[ $dev = rxe0 ] ||
			ktap_check "$dev: libfabric's traffic crossed the device in order" \
				in_order $dev
	done
	ktap_print "fi_pingpong MSG MB/s at 1 MiB (64 KiB): softrdma ${MSG_srdma0} (${MSG64_srdma0})${MSG_rxe0:+, rxe $MSG_rxe0 ($MSG64_rxe0), ratio $(ratio "$MSG_srdma0" "$MSG_rxe0")}"
	ktap_finish
}

# libfabric.sh rdm: fi_pingpong RDM; on rxe0 with FI_UNIVERSE_SIZE=64
# after a run as libfabric sizes its CQ, which fails.
rdm_pingpong() {
	local dev
	ktap_plan_ref 3 2
	one_host
	ktap_check "srdma0: max_cqe is at least the 262144 ofi_rxm asks for" \
		sh -c "ibv_devinfo -v -d srdma0 | awk '/max_cqe:/ { exit !(\$2 >= 262144) }'"
	for dev in srdma0 rxe0; do
		if [ $dev = rxe0 ]; then
			on_rxe0 || break
			PP_SIZES=default pingpong "rxe0: fi_pingpong RDM as libfabric sizes it" \
				- - 10.9.0.1 -p "$RDM" -e rdm -S 4096
			known_result "rxe0: fi_pingpong verbs;ofi_rxm RDM with FI_UNIVERSE_SIZE 1024" $? \
				"rdma_rxe's max_cqe 32767 is below the CQ ofi_rxm opens"
			export FI_UNIVERSE_SIZE=64
		fi
		pingpong "$dev: fi_pingpong RDM" - - 10.9.0.1 -p "$RDM" -e rdm
		ktap_result "$dev: fi_pingpong verbs;ofi_rxm RDM, 0 B to 6 MiB, checked" $?
		eval "RDM_$dev=\${MBS_1M:-0} RDM64_$dev=\${MBS_64K:-0}"
		[ $dev = rxe0 ] ||
			ktap_check "$dev: libfabric's traffic crossed the device in order" \
				in_order $dev
	done
	unset FI_UNIVERSE_SIZE
	ktap_print "fi_pingpong RDM MB/s at 1 MiB (64 KiB): softrdma ${RDM_srdma0} (${RDM64_srdma0})${RDM_rxe0:+, rxe $RDM_rxe0 ($RDM64_rxe0), ratio $(ratio "$RDM_srdma0" "$RDM_rxe0")}"
	ktap_finish
}

# libfabric.sh api: fabric_rdm on one device.
api() {
	ktap_plan_ref $((1 + RDM_RESULTS)) $((RDM_RESULTS))
	one_host
	rdm srdma0 - - 10.9.0.1
	ktap_check "srdma0: libfabric's traffic crossed the device in order" \
		in_order srdma0
	on_rxe0 || ktap_finish
	FI_UNIVERSE_SIZE=64 rdm rxe0 - - 10.9.0.1
	ktap_finish
}

case ${1:-} in
'') msg ;;
rdm) rdm_pingpong ;;
api) api ;;
netns) two_namespaces ;;
esac
echo "usage: $0 [rdm|api|netns]" >&2
exit $KSFT_FAIL
