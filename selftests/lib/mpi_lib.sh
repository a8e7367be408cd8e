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

# mpi_run IBDEV OUT NP HOSTS [MPIRUN_ARGS...]: mpi_check (or MPI_PROG:
# a program and its arguments), NP ranks on HOSTS (mpirun -H), over
# IBDEV's port 1 only; its output in OUT. The ranks on other hosts get
# the provider from lib.sh's RDMAV_DRIVERS. HOSTS gives each host's
# slots. MPI_CHECK_COUNTERS goes to the ranks (mpi_check.c).
mpi_run() {
	local dev=$1 out=$2 np=$3 hosts=$4
	shift 4
	timeout "$MPI_TIMEOUT" mpirun --allow-run-as-root \
		-np "$np" -H "$hosts" "$@" \
		--mca pml ucx --mca osc ucx --mca btl self \
		-x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_NET_DEVICES="$dev:1" \
		-x UCX_WARN_UNUSED_ENV_VARS=n ${RDMAV_DRIVERS:+-x RDMAV_DRIVERS} \
		${MPI_CHECK_COUNTERS:+-x MPI_CHECK_COUNTERS} \
		${MPI_PROG:-"$PROGS/mpi_check"} >"$out" 2>&1
}

# mpi_results LABEL OUT RC [KNOWN]: one TAP line per check of mpi_check's
# output OUT (the names in MPI_CHECKS, which a caller may make local to
# name another program's; LABEL before each name), and mpirun's exit
# status RC; the lines that say why shown if any failed. KNOWN, if set,
# is the reason of a failure known not to be softrdma's: a failed check
# then shows as a skip that says so.
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

# ---- Two hosts (vm-pair.sh): MPI launched over ssh from host a ----
SSH_PORT=2222
KEY_PORT=7078	# host a's public key goes to b on this port
KEY=/root/.ssh/id_mpi_pair
# The ssh command mpirun starts its daemon on b with (-y: accept b's new
# host key).
RSH="dbclient -y -i $KEY -p $SSH_PORT"

# ssh_up: b lets a's key in (a sends it once b listens), then serves ssh
# on the link's address; a has its key and b's host key accepted. Keys
# are made anew: an earlier test of the boot may have left its own.
ssh_up() {
	local rc sync=$VM_SCRIPTS/vm-sync.sh
	mkdir -p /root/.ssh && chmod 700 /root/.ssh || return
	if [ "$VM_HOST" = a ]; then
		rm -f $KEY
		dropbearkey -t ed25519 -f $KEY >/dev/null 2>&1 || return
		"$sync" barrier key-listen 120 || return
		dropbearkey -y -f $KEY | grep '^ssh-' |
			busybox nc -w 5 "$VM_PEER_IP" $KEY_PORT || return
		"$sync" barrier ssh-up 120
	else
		# nc's input stays open (at its end nc would close the
		# connection before the key arrives), and nc stays after the
		# key: it is stopped once the key is in.
		sleep 120 | busybox nc -l -p $KEY_PORT >/root/.ssh/authorized_keys &
		wait_for "ss -Hltn 'sport = :$KEY_PORT' | grep -q ." 30
		"$sync" barrier key-listen 120 || return
		wait_for "grep -q '^ssh-ed25519 .*\$' /root/.ssh/authorized_keys" 60
		rc=$?
		pkill -P $$ -x sleep
		pkill -P $$ -f "busybox nc -l -p $KEY_PORT"
		chmod 600 /root/.ssh/authorized_keys
		[ $rc -eq 0 ] || { ktap_print "no key from host a"; return 1; }
		rm -f /root/.ssh/host_key
		dropbearkey -t ed25519 -f /root/.ssh/host_key >/dev/null 2>&1 &&
			dropbear -F -E -s -r /root/.ssh/host_key -p "$VM_IP:$SSH_PORT" \
				>/tmp/dropbear.log 2>&1 &
		wait_for "ss -Hltn 'sport = :$SSH_PORT' | grep -q ." 30 || return
		"$sync" barrier ssh-up 120
	fi
}

# mpi_pair_skip_reason: why MPI across two hosts cannot run here, if so.
mpi_pair_skip_reason() {
	local reason
	reason=$(mpi_skip_reason)
	[ -n "$reason" ] || command -v dropbear >/dev/null || reason="no dropbear (dropbear-bin)"
	echo "$reason"
}

# mpi_pair_up: this host's device (DEV) and ssh from a to b, checked: two
# results on host a, one on b. Each rank names its host: the guests share
# one name.
mpi_pair_up() {
	hostname "mpi-$VM_HOST"
	pair_device_up || ktap_print "$DEV did not come up"
	ssh_up
	ktap_result "ssh from host a to host b over the link (dropbear)" $?
	# The first login's key exchange is public-key arithmetic on TCG's
	# slow CPUs: over 30 s once, with other guests on the host.
	[ "$VM_HOST" = a ] || return 0
	ktap_check "host b runs a command over ssh" \
		timeout 120 $RSH "$VM_PEER_IP" "test -x $PROGS/mpi_check"
}
