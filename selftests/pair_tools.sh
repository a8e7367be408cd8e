#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (vm-pair.sh), the standard tools across the link, each host as
# server and as client. Host b always runs softrdma; host a runs softrdma,
# or rdma_rxe with PAIR_A=rxe: the interoperability test.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT
SYNC=$VM_SCRIPTS/vm-sync.sh
TOOL_TIMEOUT=${TOOL_TIMEOUT:-120}
step=0

pair_device_up || exit $KSFT_FAIL

# across SERVER_HOST TOOL ARGS...: TOOL's server on SERVER_HOST, its
# client on the other host; each host reports its own side.
across() {
	local srv=$1 tool=$2 out rc
	shift 2
	step=$((step + 1))
	out=$(mktemp)
	"$SYNC" barrier "start$step" 120 || return
	if [ "$VM_HOST" = "$srv" ]; then
		timeout "$TOOL_TIMEOUT" "$tool" -d "$DEV" "$@" >"$out" 2>&1 &
		local pid=$!
		wait_for "ss -Hltn 'sport = :18515' | grep -q ." 60
		"$SYNC" barrier "listen$step" 120
		wait $pid
		rc=$?
		ktap_name="$tool $* (server on $DEV)"
	else
		"$SYNC" barrier "listen$step" 120
		timeout "$TOOL_TIMEOUT" "$tool" -d "$DEV" "$@" "$VM_PEER_IP" >"$out" 2>&1
		rc=$?
		ktap_name="$tool $* (client on $DEV)"
	fi
	[ $rc -eq 0 ] || sed 's/^/# /' "$out" | tail -n 15
	rm -f "$out"
	ktap_result "$ktap_name" $rc
}

ktap_plan 22
for srv in a b; do
	across $srv ibv_rc_pingpong -g 1 -s 4096 -n 100
	across $srv ibv_rc_pingpong -g 1 -s 1000000 -n 10 -e
	across $srv ib_send_bw -x 1 -F -s 65536 -n 100
	across $srv ib_write_bw -x 1 -F -s 65536 -n 100
	across $srv ib_read_bw -x 1 -F -s 65536 -n 100
	across $srv ib_write_lat -x 1 -F -s 8 -n 100
	# UD (datagrams up to the 1024-byte MTU of a 1500-byte link), UC,
	# SRQ and atomics.
	across $srv ibv_ud_pingpong -g 1 -s 1024 -n 100
	across $srv ib_send_bw -c UD -x 1 -F -s 1024 -n 500
	across $srv ibv_uc_pingpong -g 1 -s 65536 -n 50
	across $srv ibv_srq_pingpong -g 1 -s 4096 -n 50 -q 4
	across $srv ib_atomic_bw -x 1 -F -n 500
done
ktap_finish
