#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (vm-pair.sh): the MPI engines besides pair_mpi.sh's Open MPI,
# launched from host a over ssh (dropbear) to b, one rank on each host,
# over the verbs transports of UCX only (rc_verbs, ud_verbs):
#  - MPICH (Debian's, built on UCX) runs mpi_check, every message checked,
#    shared memory off (MPIR_CVAR_NOLOCAL); each host then checks that
#    its device kept order during the run;
#  - Open MPI with MPI_THREAD_MULTIPLE: mpi_threads, 4 threads per rank,
#    each on its own communicator and window (a UCX worker per thread in
#    Open MPI's one-sided component), every message checked;
#  - hpcc (HPC Challenge, Debian's, over Open MPI): HPL's residual check
#    must pass; its b_eff latency and bandwidth are reported beside the
#    same run over TCP on the same link. make check-all only (lib.sh's
#    check_full): the two runs take about 7 minutes in TCG guests.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/mpi_lib.sh"
trap 'pkill -x dropbear; srdma_cleanup' EXIT
SYNC=$VM_SCRIPTS/vm-sync.sh
HPCC_DIR=/tmp/hpcc	# hpcc reads hpccinf.txt and writes hpccoutf.txt here

reason=$(mpi_pair_skip_reason)
[ -n "$reason" ] || [ -x "$PROGS/mpi_threads" ] || reason="mpi_threads not built"
if [ -n "$reason" ]; then
	# The peer does the same: both stop here.
	echo "1..0 # SKIP $reason"
	exit $KSFT_SKIP
fi

# mpich_skip_reason, hpcc_skip_reason: why that part cannot run, if so.
mpich_skip_reason() {
	command -v mpiexec.mpich >/dev/null || { echo "no mpiexec.mpich (mpich)"; return; }
	[ -x "$PROGS/mpi_check_mpich" ] || echo "mpi_check_mpich not built (libmpich-dev)"
}

hpcc_skip_reason() {
	command -v hpcc >/dev/null || echo "no hpcc (hpcc)"
}

# mpich_run OUT: mpi_check under MPICH's launcher (hydra), a rank on
# each host. Hydra calls its launcher as "ssh -x HOST CMD": dropbear's
# client has no -x, so a wrapper drops the options.
mpich_run() {
	local rsh=/tmp/mpich-rsh
	printf '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec %s "$@"\n' \
		"$RSH" >$rsh && chmod +x $rsh || return
	timeout "$MPI_TIMEOUT" mpiexec.mpich -launcher ssh -launcher-exec $rsh \
		-iface "$VM_IFACE" -hosts "$VM_IP:1,$VM_PEER_IP:1" -n 2 \
		-genv UCX_TLS rc_verbs,ud_verbs,self -genv UCX_NET_DEVICES "$DEV:1" \
		-genv UCX_WARN_UNUSED_ENV_VARS n -genv MPIR_CVAR_NOLOCAL 1 \
		${RDMAV_DRIVERS:+-genv RDMAV_DRIVERS "$RDMAV_DRIVERS"} \
		-genv MPI_CHECK_COUNTERS "$DEV /tmp/mpich-counters" \
		"$PROGS/mpi_check_mpich" >"$1" 2>&1
}

# hpcc_input: a problem small enough for TCG's slow CPUs (HPL N=600,
# NB=60) on a 1 x 2 process grid, from Debian's example.
hpcc_input() {
	mkdir -p $HPCC_DIR && rm -f $HPCC_DIR/hpccoutf.txt &&
		sed -E -e '/^[0-9]+ +Ns$/s/^[0-9]+/600/' \
			-e '/^[0-9]+ +NBs$/s/^[0-9]+/60/' \
			-e '/^[0-9]+ +Ps$/s/^[0-9]+/1/' -e '/^[0-9]+ +Qs$/s/^[0-9]+/2/' \
			/usr/share/doc/hpcc/examples/_hpccinf.txt >$HPCC_DIR/hpccinf.txt
}

# hpcc_run OUT TRANSPORT: hpcc, a rank on each host, over UCX on DEV
# ("ucx") or Open MPI's TCP transport on the link ("tcp"); hpcc's own
# output file moved to OUT.
hpcc_run() {
	local out=$1 rc
	hpcc_input || return
	timeout 120 $RSH "$VM_PEER_IP" "mkdir -p $HPCC_DIR" 2>/dev/null || return
	if [ "$2" = ucx ]; then
		MPI_PROG=hpcc mpi_run "$DEV" "$out.log" 2 "$VM_IP:1,$VM_PEER_IP:1" \
			--map-by node --mca plm_rsh_agent "$RSH" \
			--mca oob_tcp_if_include "$VM_IFACE" --wdir $HPCC_DIR \
			-x OPENBLAS_NUM_THREADS=1
	else
		timeout "$MPI_TIMEOUT" mpirun --allow-run-as-root -np 2 \
			-H "$VM_IP:1,$VM_PEER_IP:1" --map-by node \
			--mca plm_rsh_agent "$RSH" --mca oob_tcp_if_include "$VM_IFACE" \
			--mca pml ob1 --mca osc ^ucx --mca btl self,tcp \
			--mca btl_tcp_if_include "$VM_IFACE" --wdir $HPCC_DIR \
			-x OPENBLAS_NUM_THREADS=1 hpcc >"$out.log" 2>&1
	fi
	rc=$?
	mv $HPCC_DIR/hpccoutf.txt "$out" 2>/dev/null
	[ $rc -eq 0 ] || { ktap_print "hpcc over $2: mpirun exit $rc"; mpi_errors "$out.log"; }
	return $rc
}

# hpcc_value OUT KEY: KEY's value in hpcc's summary (KEY=VALUE lines).
hpcc_value() {
	sed -n "s/^$2=//p" "$1" 2>/dev/null
}

# hpcc_results OUT TRANSPORT RC: hpcc ran to its end, and HPL's residual
# check passed.
hpcc_results() {
	ktap_result "hpcc over $2: mpirun exits 0" "$3"
	ktap_check "hpcc over $2: HPL's residual check passed" \
		grep -q '^||Ax-b||_oo/.*PASSED' "$1"
}

# thread_results LABEL OUT RC: mpi_results for mpi_threads' checks.
THREAD_CHECKS=("MPI_THREAD_MULTIPLE"
	"threads: send and receive 8 B to 1 MiB, each on its own communicator"
	"threads: put and get 256 KiB, each on its own window")
thread_results() {
	local MPI_CHECKS=("${THREAD_CHECKS[@]}")
	mpi_results "$@"
}

MPICH=$(mpich_skip_reason) HPCC=$(hpcc_skip_reason) HPCC_RESULTS=0
check_full && HPCC_RESULTS=4
MPICH_CHECKS=$((${#MPI_CHECKS[@]} + 1))
if [ "$VM_HOST" = a ]; then
	ktap_plan $((2 + MPICH_CHECKS + 1 + ${#THREAD_CHECKS[@]} + 1 + HPCC_RESULTS))
else
	ktap_plan 2
fi
mpi_pair_up
"$SYNC" barrier engines-start 120
if [ "$VM_HOST" = a ]; then
	if [ -z "$MPICH" ]; then
		mpich_run /tmp/mpich.out
		mpi_results "MPICH, 2 ranks on 2 hosts" /tmp/mpich.out $?
		ktap_print "$(grep '^# rank' /tmp/mpich.out | sort | cut -c3- | tr '\n' ' ')"
	else
		for i in $(seq $MPICH_CHECKS); do ktap_skip "MPICH: check $i" "$MPICH"; done
	fi

	out=/tmp/mpi-threads.out
	MPI_PROG="$PROGS/mpi_threads 4" mpi_run "$DEV" $out 2 "$VM_IP:1,$VM_PEER_IP:1" \
		--map-by node --mca plm_rsh_agent "$RSH" \
		--mca oob_tcp_if_include "$VM_IFACE"
	rc=$?
	thread_results "Open MPI, 4 threads a rank" $out $rc
	ktap_print "mpi_threads: $(sed -n 's/.* checked=\([0-9]*\).*/\1/p' $out) messages checked"

	if [ $HPCC_RESULTS != 0 ] && [ -z "$HPCC" ]; then
		for t in ucx tcp; do
			hpcc_run /tmp/hpcc.$t $t
			hpcc_results /tmp/hpcc.$t $t $?
		done
		for k in HPL_Tflops MaxPingPongLatency_usec MinPingPongBandwidth_GBytes \
			 RandomlyOrderedRingLatency_usec RandomlyOrderedRingBandwidth_GBytes; do
			u=$(hpcc_value /tmp/hpcc.ucx $k) t=$(hpcc_value /tmp/hpcc.tcp $k)
			ktap_print "hpcc $k: UCX on $DEV ${u:-?}, TCP ${t:-?}"
		done
	else
		for i in $(seq $HPCC_RESULTS); do ktap_skip "hpcc: check $i" "$HPCC"; done
	fi
fi
VM_SYNC_RETRY=2 "$SYNC" barrier engines-done $((6 * MPI_TIMEOUT + 60))
# From the first rank's start to the last one's end (mpi_check.c), as
# pair_mpi.sh judges it.
c=/tmp/mpich-counters
if [ -z "$MPICH" ] && [ -f $c.start ] && [ -f $c.end ]; then
	counters_delta $c.start $c.end >$c.delta
	COUNTERS_FILE=$c.delta ktap_check \
		"MPICH: the link kept order, no resend, no sequence NAK ($DEV)" \
		in_order "$DEV"
else
	ktap_skip "MPICH: the link kept order ($DEV)" \
		"${MPICH:-no counters from the MPICH run}"
fi
ktap_finish
