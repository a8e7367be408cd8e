#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging over srdma0 with the standard tools: MRs registered
# with IBV_ACCESS_ON_DEMAND (the tools' --odp, -o), with and without a
# prefetch (ibv_advise_mr, -P), for RC SEND/RECV, SRQs, XRC, WRITE and
# READ. Faults on memory the process never touched or gave back are
# odp_verbs' (odp_verbs.sh).
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

# tool NAME ARGS...: a client/server tool over srdma0 on loopback.
tool() {
	local name=$1
	shift
	client_server "$name $*" "$name -d srdma0 $*" \
		$name -d srdma0 "$@" 127.0.0.1
}

ktap_plan 8
srdma_cleanup
srdma0_up || exit $KSFT_FAIL

tool ibv_rc_pingpong -g 1 -o -s 4096 -n 100
tool ibv_rc_pingpong -g 1 -o -s 1000000 -n 10 -e
tool ibv_rc_pingpong -g 1 -o -P -s 65536 -n 20
tool ibv_srq_pingpong -g 1 -o -s 4096 -n 50 -q 4
tool ibv_xsrq_pingpong -g 1 -o -s 4096 -n 20
tool ib_write_bw -x 1 -F --odp -s 65536 -n 200
tool ib_read_bw -x 1 -F --odp -s 65536 -n 200
tool ib_send_bw -x 1 -F --odp -s 4096 -n 500
ktap_finish
