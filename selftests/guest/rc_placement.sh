#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# IBA 1.5 memory placement on one device: ATOMIC WRITE and FLUSH, their
# completions and the errors a responder owes (selftests/rc_placement.c).
# Then across a lossy link (two namespaces, netem 5% loss each way): the
# requests and answers lost are retried, and every ATOMIC WRITE and
# FLUSH still completes as it must (rc_placement's client and server).
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT
# check-release.sh builds it for the release's rdma-core: RELEASE_PROGS.
PROG=${RELEASE_PROGS:-$PROGS}/rc_placement

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
"$PROG" srdma0 1
loop_rc=$?

srdma_cleanup
modprobe sch_netem 2>/dev/null
if ! ns_pair || ! ip netns exec ns1 tc qdisc add dev veth1 root netem loss 5% ||
	! ip netns exec ns2 tc qdisc add dev veth2 root netem loss 5%; then
	echo "1..1"
	echo "ok 1 across a lossy link # SKIP no two namespaces with netem"
	exit $loop_rc
fi
ip netns exec ns1 timeout 300 "$PROG" server srdma1 18660 "$(gid_index srdma1)" &
server=$!
sleep 1
RC_PLACEMENT_LOSSY=1 ip netns exec ns2 timeout 300 "$PROG" client srdma2 \
	10.9.0.1 18660 "$(gid_index srdma2)"
rc=$?
wait $server || rc=1
for d in srdma1 srdma2; do
	echo "# $d: $(hw_counter $d retransmits) retransmits, $(hw_counter $d tlp_probes) tail loss probes, $(hw_counter $d dup_requests) duplicate requests"
done
# Else the run above proved nothing about loss. A tail loss probe is a
# resend too (counted apart from retransmits).
echo "TAP version 13"
echo "1..1"
if [ $(($(hw_counter srdma2 retransmits) + $(hw_counter srdma2 tlp_probes))) -gt 0 ]; then
	echo "ok 1 the lossy link made the requester resend"
else
	echo "not ok 1 the lossy link made the requester resend"
	rc=1
fi
# A failure first; then the loopback run's result (its skip too).
[ $rc -ne 0 ] || rc=$loop_rc
exit $rc
