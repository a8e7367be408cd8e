#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench-wire", on both hosts of a vm-pair.sh run: the speed points
# (wire_lib.sh) between two VMs (host a serves, host b drives), softrdma
# on both hosts, then rdma_rxe on both. Host b writes MODE,TEST,PARAM,VALUE
# lines to $VM_OUT/wire.csv (REPS runs a point), as wire.sh does; each
# host's device counters go to $VM_OUT/wire-counters.txt.
. "$(dirname "$0")/../selftests/lib/lib.sh"
. "$(dirname "$0")/wire_lib.sh"
trap srdma_cleanup EXIT

REPS=${REPS:-5}
SECS=${SECS:-4}
CSV=$VM_OUT/wire.csv

# point MODE NAME PARAM COLUMN TOOL SIZE ARGS...: REPS runs of TOOL, host
# a's server and host b's client; on b, column COLUMN of each result to
# the CSV as NAME at PARAM.
point() {
	local mode=$1 name=$2 param=$3 col=$4 tool=$5 size=$6 keep rep
	local args
	shift 6
	args="-d $DEV -x $(gid_index "$DEV") -F -s $size $*"
	for rep in $(seq "$REPS"); do
		keep=$VM_OUT/run-$mode-$name-$param-$rep.txt
		across_run a "$mode $tool $size #$rep" \
			"ss -Hltn 'sport = :$TOOL_PORT' | grep -q ." \
			"$tool $args" "$tool $args PEER" "$keep"
		[ "$VM_HOST" = b ] &&
			row "$mode" "$name" "$param" "$col" "$size" <"$keep" \
				>>"$CSV" 2>>"$VM_OUT/wire-notes.txt"
	done
}

# counters MODE: this host's device counters after MODE's runs.
counters() {
	echo "$1 $(rdma statistic show link "$DEV/1" | tr -s ' \n' ' ')" \
		>>"$VM_OUT/wire-counters.txt"
}

: >"$CSV"
: >"$VM_OUT/wire-counters.txt"
echo "# host $VM_HOST, $(uname -r), perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null)"
srdma_install_module
pair_device_up || exit $KSFT_FAIL
speed softrdma
counters softrdma
pair_rxe_up || exit $KSFT_FAIL
speed rxe
counters rxe
[ "$VM_HOST" = b ] && cat "$CSV"
exit 0
