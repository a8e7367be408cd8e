# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # its values are for the scripts that source it
# Open MPI over UCX on one RDMA device, and ucx_perftest beside it
# (sourced by mpi.sh and pair_mpi.sh after lib.sh). UCX gets the verbs
# transports only, rc_verbs and ud_verbs (and self, a rank's messages to
# itself): no shared memory, no TCP, so every message between two ranks
# crosses the device. Open MPI's launcher keeps its TCP control channel.
MPI_TIMEOUT=${MPI_TIMEOUT:-300}
# The checks of mpi_check, in the order it prints them.
MPI_CHECKS=("pingpong 8 B" "pingpong 4096 B" "pingpong 65536 B"
	"pingpong 1048576 B" "bandwidth 1 MiB x 8 in flight"
	"put 1 MiB to a neighbour, fence" "get 1 MiB from a neighbour, fence"
	"allreduce 2 MiB sum" "bcast 2 MiB" "alltoall")
# The bytes of mpi_check's ping-pongs, both ways: each size 101 times (one
# untimed round trip, then 100) from rank 0 and back from rank 1; each
# host sends its half.
MPI_PINGPONG_BYTES=$(((8 + 4096 + 65536 + 1048576) * 2 * 101))
# ucx_perftest's runs (OUT-suffix ARGS...) and its side channel's port.
UCX_PERF_RUNS=("lat -t tag_lat -s 8 -n 1000" "bw -t tag_bw -s 1048576 -n 100")
UCX_PORT=13337

mpi_skip_reason() {
	command -v mpirun >/dev/null || { echo "no mpirun (openmpi-bin)"; return; }
	[ -x "$PROGS/mpi_check" ] || { echo "mpi_check not built (libopenmpi-dev)"; return; }
	ompi_info 2>/dev/null | grep -q "MCA pml: ucx" ||
		{ echo "this Open MPI has no UCX"; return; }
	command -v ucx_perftest >/dev/null || echo "no ucx_perftest (ucx-utils)"
}

# mpi_run IBDEV OUT NP HOSTS [MPIRUN_ARGS...]: mpi_check, NP ranks on
# HOSTS (mpirun -H), over IBDEV's port 1 only; its output in OUT. The
# ranks on other hosts get the provider from lib.sh's RDMAV_DRIVERS.
# HOSTS gives each host's slots. MPI_CHECK_COUNTERS goes to the ranks
# (mpi_check.c).
mpi_run() {
	local dev=$1 out=$2 np=$3 hosts=$4
	shift 4
	timeout "$MPI_TIMEOUT" mpirun --allow-run-as-root \
		-np "$np" -H "$hosts" "$@" \
		--mca pml ucx --mca osc ucx --mca btl self \
		-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_NET_DEVICES="$dev:1" \
		-x UCX_WARN_UNUSED_ENV_VARS=n ${RDMAV_DRIVERS:+-x RDMAV_DRIVERS} \
		${MPI_CHECK_COUNTERS:+-x MPI_CHECK_COUNTERS} \
		"$PROGS/mpi_check" >"$out" 2>&1
}

# mpi_results LABEL OUT RC [KNOWN]: one TAP line per check of mpi_check's
# output OUT (LABEL before each name), and mpirun's exit status RC; the
# lines that say why shown if any failed. KNOWN, if set, is the reason of
# a failure known not to be softrdma's: a failed check then shows as a
# skip that says so.
mpi_results() {
	local label=$1 out=$2 rc=$3 name r missing=0
	for name in "${MPI_CHECKS[@]}"; do
		grep -q "^ok $name\( \|\$\)" "$out"
		r=$?
		[ $r -eq 0 ] || missing=1
		known_result "$label: $name, contents checked" $r "${4:-}"
	done
	if [ "$rc" -ne 0 ] || [ $missing -ne 0 ]; then
		ktap_print "mpirun exit $rc"
		mpi_errors "$out"
	fi
	known_result "$label: mpirun exits 0" "$rc" "${4:-}"
}

# mpi_errors OUT: the output of a failed run without its backtraces and
# its passed checks, the first 25 lines.
mpi_errors() {
	grep -vE '^ok |\[ *[0-9]+\] |^ *[0-9]+ +[/a-z].*0x|backtrace|^=+$' "$1" |
		uniq | head -n 25 | sed 's/^/# /'
}

# mpi_value OUT CHECK KEY: KEY's value on CHECK's line of OUT.
mpi_value() {
	grep "^ok $2 " "$1" | tr ' ' '\n' | sed -n "s/^$3=//p"
}

# ucx_perf_value OUT lat|bw: from ucx_perftest's "Final:" line (iterations;
# latency in us: median, average, overall; bandwidth in MB/s: average,
# overall; message rate), the median latency (half a round trip) or the
# overall bandwidth (the "average" one read 0.00 in one run of 100 MiB).
ucx_perf_value() {
	awk -v f="$2" '/Final:/ { print (f == "lat") ? $3 : $7 }' "$1"
}

# ucx_perf_cmd IBDEV: the command of ucx_perftest at the UCP level over
# IBDEV with mpi_run's transports (a client names the server's address
# after its arguments).
ucx_perf_cmd() {
	echo "env UCX_NET_DEVICES=$1:1 UCX_TLS=rc_verbs,ud_verbs UCX_WARN_UNUSED_ENV_VARS=n ucx_perftest"
}
