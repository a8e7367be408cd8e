#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make check-debug": the selftests that exercise the module's lifetimes
# and error paths, run under the debug kernel (qemu-scripts/debug-kernel.sh:
# KASAN, UBSAN, lockdep, kmemleak, debug objects, failslab) in one guest.
# After each test file a kmemleak scan: a leak whose backtrace names
# softrdma or the RDMA core (or a module unloaded since, that was one of
# them) fails the run. Any KASAN/UBSAN/lockdep/ODEBUG/lockup report fails
# it too (VM_DMESG_BAD in qemu-scripts/lib.sh), attributed to its test.
#
# usage: check-debug.sh          on the host: prepare, boot, summarise
#        check-debug.sh --guest  in the guest (started by the above)
# DEBUG_RELEASE=trixie (or sid): that release's kernel with the same debug
# options, booted with its root filesystem: the module, the provider (for
# its rdma-core) and the programs that depend on its rdma-core are built
# with its compiler (debug-kernel.sh -r; RELEASE_PROGS as in
# check-release.sh).
# Environment: DEBUG_TESTS (test files, default below), TEST_TIMEOUT (per
# test file, default 1800 s), DEBUG_VM_TIMEOUT (whole guest, 7200 s),
# DEBUG_VM_MEM (guest memory, 2G: kmemleak scans all of it, twice a test).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)

# The tests tagged debug in the manifest. Left out: netem (its READs and
# atomics under loss run out of retries in the debug kernel's slow guest).
# The hostile tests run with fewer mutations than in make check: 100000 /
# 1000000 outrun their time limits here.
DEBUG_TESTS=${DEBUG_TESTS:-$("$TOP/selftests/run.sh" --list debug)}
export HOSTILE_COUNT=${HOSTILE_COUNT:-20000}
export HOSTILE_USER_COUNT=${HOSTILE_USER_COUNT:-100000}
# congestion.sh's flows with a 1.07 s ACK timeout: this slow guest ACKs
# late (at 67 ms: 119 timeouts, 14% of the WRITEs resent, the no-collapse
# check failed; at 1.07 s, 4.2%; 268 ms was not tried here).
export CC_ACK_TIMEOUT=${CC_ACK_TIMEOUT:-18}
# teardown_traffic.sh's perftest QPs too (an ib_read_bw ended early there
# once at perftest's own 67 ms; its cause was not shown then).
export TEARDOWN_QP_TIMEOUT=${TEARDOWN_QP_TIMEOUT:-18}
KMEMLEAK=/sys/kernel/debug/kmemleak
# Leaks in these modules' code are ours to fix (softrdma) or caused by us
# (the RDMA core keeps objects for a driver).
LEAK_MODULES='softrdma|ib_core|ib_uverbs|ib_umad|rdma_cm|rdma_ucm|ib_cm|iw_cm'

# Also a failure here, not in every VM run (a slow release under TCG
# may say it once): a netdev reference nobody gives back.
DEBUG_DMESG_BAD='waiting for .* to become free'

# --- guest side ------------------------------------------------------------

# Seconds since boot of the newest kernel log line: the start of a window.
dmesg_mark() {
	dmesg | tail -n 1 | sed -n 's/^\[ *\([0-9]*\.[0-9]*\)\].*/\1/p'
}

# Kernel reports (VM_DMESG_BAD) logged after mark $1.
dmesg_bad_since() {
	dmesg | awk -v m="${1:-0}" '{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t) }
		t + 0 > m + 0' | grep -E "$VM_DMESG_BAD|$DEBUG_DMESG_BAD"
}

# Module address ranges seen while a test ran ("name base size" lines):
# a leak allocated by a module unloaded since shows bare addresses only.
modules_poll() {
	while :; do
		awk '{ print $1, $6, $2 }' /proc/modules
		sleep 1
	done
}

# The name of the module that held address $1 (hex, 0x...) per log $2.
module_at() {
	awk -v a="$1" '
	# Module space is 0xffffffff........: the low 32 bits fit a double.
	function hex(s,   i, c, v) {
		s = substr(tolower(s), length(s) - 7); v = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	BEGIN { x = hex(a) }
	{ b = hex($2); if (x >= b && x < b + $3) { print $1; exit } }' "$2"
}

# kmemleak_check NAME POLL_LOG: scan twice (a leak is an object seen
# unreferenced and unchanged in two scans), print each report and fail
# when one belongs to LEAK_MODULES; then clear, so that the next test
# file starts clean.
kmemleak_check() {
	local name=$1 polllog=$2 report rc=0 mod addr n=0 ours=0 blk

	echo scan >"$KMEMLEAK" && sleep 6 && echo scan >"$KMEMLEAK" || {
		echo "# kmemleak scan failed"
		return 1
	}
	report=$(cat "$KMEMLEAK")
	if [ -n "$report" ]; then
		# One block per object, from "unreferenced object" on.
		while IFS= read -r -d $'\x1e' blk; do
			[ -n "$blk" ] || continue
			n=$((n + 1))
			mod=$(printf '%s\n' "$blk" | grep -Eo "\[($LEAK_MODULES)\]" | head -n1)
			if [ -z "$mod" ]; then
				# Unresolved module addresses: which module was there?
				for addr in $(printf '%s\n' "$blk" | grep -Eo '\] 0xffffffff[0-9a-f]+$' | cut -c3-); do
					mod=$(module_at "$addr" "$polllog")
					[ -n "$mod" ] && break
				done
				[ -n "$mod" ] && mod="[$mod, unloaded since]"
			fi
			if printf '%s\n' "$mod" | grep -Eq "^\[($LEAK_MODULES)[],]"; then
				ours=$((ours + 1))
				echo "# kmemleak after $name, leak in $mod:"
			else
				echo "# kmemleak after $name, not ours (${mod:-kernel}):"
			fi
			printf '%s\n' "$blk" | head -n 30 | sed 's/^/#   /'
		done < <(printf '%s\n' "$report" | sed 's/^unreferenced object/\x1e&/'; printf '\x1e')
	fi
	echo clear >"$KMEMLEAK"
	echo "# kmemleak after $name: $n reports, $ours from softrdma or the RDMA core"
	[ "$ours" -eq 0 ] || rc=1
	return $rc
}

guest_main() {
	local t mark bad t0 secs
	local polllog=/tmp/check-debug-modules tlog=/tmp/check-debug-test poller total0

	# shellcheck source=/dev/null
	. "$VM_SCRIPTS/lib.sh"
	. "$TOP/selftests/host/check_lib.sh"
	total0=$(date +%s)
	echo "# debug kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
	[ -w "$KMEMLEAK" ] || { echo "not ok - no $KMEMLEAK: not the debug kernel"; echo "0 1 0" >"$VM_OUT/debug-counts"; return 1; }
	# Boot's leak suspects are not the tests': scan, then mark them seen.
	t0=$(date +%s)
	echo scan >"$KMEMLEAK"
	echo clear >"$KMEMLEAK"
	echo "# time of a kmemleak scan: $(($(date +%s) - t0)) s"
	for t in $DEBUG_TESTS; do
		: >"$polllog"
		modules_poll >>"$polllog" &
		poller=$!
		mark=$(dmesg_mark)
		t0=$(date +%s)
		"$TOP/selftests/run.sh" "$t" | tee "$tlog"
		add_counts "$(tail -n 1 "$tlog")"
		secs=$(($(date +%s) - t0))
		kill "$poller" 2>/dev/null
		wait "$poller" 2>/dev/null
		if ! kmemleak_check "$t" "$polllog"; then
			echo "not ok - no leak from softrdma or the RDMA core after $t"
			failed=$((failed + 1))
		fi
		if bad=$(dmesg_bad_since "$mark"); then
			echo "not ok - kernel report during $t:"
			printf '%s\n' "$bad" | head -n 20 | sed 's/^/#   /'
			failed=$((failed + 1))
		fi
		echo "# time $t: $secs s (with kmemleak scans $(($(date +%s) - t0)) s)"
	done
	echo "# guest total: $(($(date +%s) - total0)) s"
	echo "$passed $failed $skipped" >"$VM_OUT/debug-counts"
	print_counts
}

# --- host side -------------------------------------------------------------

# release_userland OUTDIR: in $DEBUG_RELEASE's root filesystem, build the
# provider and the programs that depend on its rdma-core into OUTDIR, and
# export what tells the guest (VM_ROOTFS, SRDMA_PROVIDER, RELEASE_PROGS).
release_userland() {
	local out=$1 root

	root=$(qemu-scripts/rootfs.sh "$DEBUG_RELEASE-kbuild") || return
	release_make "$root" provider "$out/provider" >/dev/null &&
		release_make "$root" progs "$out/progs" >/dev/null || return
	release_export "$root" "$out"
	echo "# $DEBUG_RELEASE root filesystem $root, provider $(ls "$out"/provider/libsoftrdma-rdmav*.so)"
}

host_main() {
	local start t0 kroot ko kver outdir vm_rc rel_opt=

	cd "$TOP" || exit 1
	. selftests/host/check_lib.sh
	start=$(date +%s)
	[ -z "${DEBUG_RELEASE:-}" ] || rel_opt="-r $DEBUG_RELEASE"
	echo "== debug kernel${DEBUG_RELEASE:+ of $DEBUG_RELEASE}"
	t0=$(date +%s)
	kroot=$(qemu-scripts/debug-kernel.sh $rel_opt) || exit 1
	echo "# debug kernel at $kroot ($(($(date +%s) - t0)) s)"
	t0=$(date +%s)
	ko=$(qemu-scripts/debug-kernel.sh $rel_opt module) || exit 1
	echo "# softrdma.ko for it: $ko ($(($(date +%s) - t0)) s)"
	kver=$(basename "$kroot")

	echo "== selftests under the debug kernel (VM)"
	mkdir -p build/vm
	outdir=$(mktemp -d "$TOP/build/vm/check-debug.XXXXXX") || exit 1
	# Tests that run as nobody load the release's provider and programs
	# from it.
	chmod 755 "$outdir"
	if [ -n "${DEBUG_RELEASE:-}" ]; then
		release_userland "$outdir/userland" || { echo "not ok - $DEBUG_RELEASE userland builds"; exit 1; }
	fi
	VM_KROOT=$kroot SRDMA_KO=$ko qemu-scripts/stage-modules.sh "$kver" "$outdir/modroot" || exit 1
	# No PVH entry in the debug kernel: boot its bzImage directly.
	# 4-level paging: with TCG's LA57 the 6.12 KASAN kernel reports a
	# wild-memory-access in handle_edge_irq() during cpu_detect() at boot,
	# before any module exists.
	VM_APPEND="no5lvl ${VM_APPEND:-}" KVER=$kver VM_KROOT=$kroot VM_PVH=0 SRDMA_KO=$ko SRDMA_MODROOT=$outdir/modroot \
		DEBUG_TESTS=$DEBUG_TESTS TEST_TIMEOUT=${TEST_TIMEOUT:-1800} \
		VM_ENV="SRDMA_KO SRDMA_MODROOT SRDMA_PROVIDER RELEASE_PROGS DEBUG_TESTS TEST_TIMEOUT HOSTILE_COUNT HOSTILE_USER_COUNT CC_ACK_TIMEOUT TEARDOWN_QP_TIMEOUT ${VM_ENV:-}" \
		qemu-scripts/vm-run.sh -t "${DEBUG_VM_TIMEOUT:-7200}" -m "${DEBUG_VM_MEM:-2G}" -o "$outdir" -- \
		selftests/host/check-debug.sh --guest
	vm_rc=$?
	add_count_file "$outdir/debug-counts"
	vm_failed $vm_rc "$outdir"
	echo "# boot to the tests: $(cat "$outdir/boot-uptime" 2>/dev/null || echo '?') s of guest uptime"
	echo "# make check-debug took $(($(date +%s) - start)) s"
	print_counts
}

if [ "${1:-}" = --guest ]; then
	guest_main
else
	host_main
fi
