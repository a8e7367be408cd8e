#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (vm-pair.sh): libfabric (Debian's 1.17) across the link, as an
# MPI library or a libfabric application between two machines uses it:
# fi_pingpong over the verbs provider's MSG endpoint and over ofi_rxm's
# RDM endpoint, every size of its -S all (0 B to 6 MiB) checked (-c),
# and fabric_rdm (tagged messages matched out of order, RMA writes and
# reads, data checked on both sides). Host b serves; against rdma_rxe
# (PAIR_A=rxe: host a runs rxe) host a too, in make check-all. Between two
# softrdma hosts each then checks that its device carried it all in
# order. One host and two namespaces: libfabric.sh.
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

command -v fi_pingpong >/dev/null && [ -x "$PROGS/fabric_rdm" ] || {
	# The peer does the same: both stop here.
	echo "1..0 # SKIP no fi_pingpong (libfabric-bin) or fabric_rdm (libfabric-dev)"
	exit $KSFT_SKIP
}

PP_PORT=47592	# fi_pingpong's control port (TCP)
RDM=verbs\;ofi_rxm

pair_device_up || exit $KSFT_FAIL
# Only this host's device: libfabric's verbs provider otherwise also lists
# devices by GID 0 (libfabric.sh says more).
export FI_VERBS_IFACE=$VM_IFACE
# rdma_rxe's max_cqe (32767) is below the CQ ofi_rxm sizes for 1024
# peers: 64 are plenty here (libfabric.sh).
[ "$DEV" = rxe0 ] && export FI_UNIVERSE_SIZE=64

# Against rdma_rxe, rxe's host serves too in make check-all (check_full).
servers=b
[ "${PAIR_A:-}" = rxe ] && check_full && servers="b a"
# Order is judged between two softrdma hosts only: rdma_rxe sends without
# congestion control and recovers a loss by go-back-N, whose resends
# softrdma drops as duplicates (17,769 in one run against rxe, with 15
# resends of its own: packets are lost between these guests under rxe's
# bursts; the data checks above judge that run).
judge=0
[ "$DEV" = srdma0 ] && [ "${PAIR_A:-softrdma}" = softrdma ] && judge=1
ktap_plan $((3 * $(wc -w <<<"$servers") + judge))
for srv in $servers; do
	pp="fi_pingpong -S all -I 1 -c"
	across_run "$srv" "fi_pingpong verbs MSG, 0 B to 6 MiB, checked" \
		"ss -Hltn 'sport = :$PP_PORT' | grep -q ." \
		"$pp -p verbs -e msg" "$pp -p verbs -e msg PEER" /tmp/fi_msg.out
	across_run "$srv" "fi_pingpong verbs;ofi_rxm RDM, 0 B to 6 MiB, checked" \
		"ss -Hltn 'sport = :$PP_PORT' | grep -q ." \
		"$pp -p $RDM -e rdm" "$pp -p $RDM -e rdm PEER" /tmp/fi_rdm.out
	[ "$VM_HOST" = "$srv" ] ||
		ktap_print "fi_pingpong MB/s at 64 KiB and 1 MiB: MSG $(awk '$1 == "64k" || $1 == "1m" { printf "%s ", $6 }' /tmp/fi_msg.out)RDM $(awk '$1 == "64k" || $1 == "1m" { printf "%s ", $6 }' /tmp/fi_rdm.out)"
	across_run "$srv" "fabric_rdm: tagged messages and RMA over RDM, checked" \
		"cm_listening fabric_rdm" \
		"$PROGS/fabric_rdm server -n 2 $VM_IP" \
		"$PROGS/fabric_rdm client -n 2 PEER" /tmp/fabric_rdm.out
	ktap_print "fabric_rdm: $(grep -c '^ok ' /tmp/fabric_rdm.out) checks passed on this side"
done
if [ $judge = 1 ]; then
	ktap_check "$DEV: libfabric's traffic crossed the link in order" \
		in_order "$DEV"
else
	ktap_print "$DEV: $(moved_counters "$DEV")"
fi
ktap_finish
