# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared host-side helpers for the test-VM harness.  Sourced by
# mkinitrd.sh, vm-run.sh and vm-pair.sh; never executed directly.
#
# Guest layout (see init and guest-init): the guest mounts the whole host
# root (or VM_ROOTFS) read-only over 9p and puts a tmpfs overlay on top, so
# every host path (/usr, /lib/modules) is visible at the same absolute path
# and writable in RAM.  The repository comes on a share of its own, put at
# its own path the same way: it is then there whatever the root and
# wherever the clone is (a clone under /tmp too, which the guest's tmpfs
# /tmp would hide).  A second, writable 9p share ("vmout") is the host
# output directory; the guest sees it at $VM_GUEST_OUT.  The command to
# run is a script written into that share, so no quoting ever has to
# survive the kernel command line.

VM_SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_REPO_DIR=$(cd "$VM_SCRIPT_DIR/.." && pwd)
VM_BUILD_DIR=$VM_REPO_DIR/build/vm

# Fixed guest mount point of the writable output share.
VM_GUEST_OUT=/vm-out

# Patterns in the guest dmesg that fail a run even when CMD succeeded.
# Besides oopses and warnings, the reports of a debug kernel (see
# debug-kernel.sh): KASAN, UBSAN, lockdep ("WARNING: possible circular
# locking", "inconsistent lock state", "suspicious RCU usage", "BUG:
# sleeping function", "INFO: trying to register non-static key", "lockdep
# is turned off"), debug objects (ODEBUG), soft lockups, hung tasks and
# kmemleak turning itself off.  Its leak reports are judged by
# selftests/host/check-debug.sh.  Not bare "lockdep" or "kmemleak": a debug
# kernel's boot messages say those words.  Nor kmemleak's "Cannot
# allocate a scan area": under failslab it then scans the whole object,
# and goes on.
VM_DMESG_BAD='Oops|BUG:|WARNING:|refcount_t|list_del corruption|list_add corruption|KASAN|UBSAN|possible circular locking|inconsistent lock state|suspicious RCU usage|non-static key|lockdep is turned off|ODEBUG:|kmemleak: .*(disabled|[Cc]annot (allocate a kmemleak_object|insert)|empty)|soft lockup|INFO: task .* blocked for more than|general protection fault|Kernel panic'

# The guest's own power-off messages: dropped from the live console view.
VM_SHUTDOWN_MSG='\[ *[0-9.]*\] \(sysrq: Power Off\|reboot: Power down\)$'

vm_die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

# VM_KROOT: boot a kernel unpacked into that directory instead of an
# installed one (its boot/vmlinuz-<ver> and lib/modules/<ver>, e.g. the
# debug kernel of debug-kernel.sh); guest-init links its modules in.
VM_KROOT=${VM_KROOT:+$(cd "$VM_KROOT" && pwd)}

# VM_ROOTFS: the guest's root is that release root filesystem (rootfs.sh)
# instead of the host's, and boots its kernel (its modules are in place),
# or VM_KROOT's if that is set too (a debug kernel built for the release).
VM_ROOTFS=${VM_ROOTFS:+$(cd "$VM_ROOTFS" && pwd)}
if [ -n "$VM_ROOTFS" ] && [ -z "$VM_KROOT" ]; then
	VM_KROOT=$VM_ROOTFS
fi

# Kernel the guest boots: $KVER if set, else the newest /lib/modules/<ver>
# that has a matching /boot/vmlinuz-<ver> (the host kernel itself may have
# no module support, so `uname -r` is not an option); both under $VM_KROOT
# when set.
vm_kver() {
	local d ver best=

	if [ -n "${KVER:-}" ]; then
		[ -e "${VM_KROOT:-}/boot/vmlinuz-$KVER" ] || vm_die "KVER=$KVER: no ${VM_KROOT:-}/boot/vmlinuz-$KVER"
		echo "$KVER"
		return
	fi
	for d in "${VM_KROOT:-}"/lib/modules/*/; do
		ver=$(basename "$d")
		[ -e "${VM_KROOT:-}/boot/vmlinuz-$ver" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$ver" | sort -V | tail -n1)
	done
	[ -n "$best" ] || vm_die "no /lib/modules/<ver> with a matching /boot/vmlinuz-<ver>"
	echo "$best"
}

# Files whose change must trigger an initramfs rebuild.
vm_initrd_inputs() {
	echo "$VM_SCRIPT_DIR/mkinitrd.sh" "$VM_SCRIPT_DIR/init" \
		"$VM_SCRIPT_DIR/guest-init" /bin/busybox "${VM_KROOT:-}/lib/modules/$1/modules.dep"
}

# Print the path of an up-to-date cached initramfs for kernel $1, building
# it when missing or older than any input.  mkinitrd.sh replaces it with
# an atomic rename, so a concurrent run never sees a partial file.
vm_ensure_initrd() {
	local kver=$1 initrd=$VM_BUILD_DIR/initrd-$1.cpio.gz f stale=

	[ -e "$initrd" ] || stale=y
	for f in $(vm_initrd_inputs "$kver"); do
		[ "$f" -nt "$initrd" ] && stale=y
	done
	[ -z "$stale" ] || "$VM_SCRIPT_DIR/mkinitrd.sh" -k "$kver" "$initrd" >&2
	echo "$initrd"
}

# Kernel image to boot for $1.  Under TCG the xz-compressed bzImage costs
# ~4 s of decompression on every boot, so boot the uncompressed vmlinux
# instead, extracted once into build/vm/ (QEMU starts it through its PVH
# entry note).  Falls back to /boot/vmlinuz-<ver> if that fails.
vm_kernel() {
	local vmlinuz=${VM_KROOT:-}/boot/vmlinuz-$1 vmlinux=$VM_BUILD_DIR/vmlinux-$1

	if [ "${VM_PVH:-1}" = 1 ] && { [ "$vmlinux" -nt "$vmlinuz" ] ||
		vm_extract_vmlinux "$vmlinuz" "$vmlinux"; }; then
		echo "$vmlinux"
	else
		echo "$vmlinuz"
	fi
}

# Like the kernel's scripts/extract-vmlinux: decompress from the first
# compressor signature that yields an ELF with a PVH entry note (Xen note
# type 0x12).  Written via a temp file and rename: runs may be concurrent.
vm_extract_vmlinux() {
	local in=$1 out=$2 tool magic off

	mkdir -p "$VM_BUILD_DIR"
	for tool in xz zstd gzip; do
		case $tool in
		xz) magic=$'\xfd7zXZ' ;;
		zstd) magic=$'\x28\xb5\x2f\xfd' ;;
		gzip) magic=$'\x1f\x8b\x08' ;;
		esac
		off=$(LC_ALL=C grep -abo -m1 -F "$magic" "$in" | head -n1 | cut -d: -f1)
		[ -n "$off" ] || continue
		# The payload is followed by trailing bytes: ignore the error.
		tail -c +$((off + 1)) "$in" | "$tool" -dc >"$out.$$" 2>/dev/null
		if readelf -n "$out.$$" 2>/dev/null | grep -q '(0x00000012)'; then
			mv "$out.$$" "$out"
			return 0
		fi
	done
	rm -f "$out.$$"
	return 1
}

# A fresh output directory under build/vm/runs/ (or the given one, created).
vm_make_outdir() {
	if [ -n "${1:-}" ]; then
		mkdir -p "$1"
		(cd "$1" && pwd)
	else
		mkdir -p "$VM_BUILD_DIR/runs"
		mktemp -d "$VM_BUILD_DIR/runs/$(date +%Y%m%d-%H%M%S).XXXX"
	fi
}

# Append `export NAME='value'` lines, quoted so any value survives.
vm_export() {
	local name=$1 value=$2

	printf "export %s=%q\n" "$name" "$value"
}

# Write $outdir/job.sh: the environment plus the command the guest runs.
# Args: outdir, kver, command as a single `bash -c` string, then extra
# NAME=value pairs.  Sourced by the guest's bash (the host's /bin/bash).
vm_write_job() {
	local outdir=$1 kver=$2 cmd=$3 kv name
	shift 3

	rm -f "$outdir/rc" "$outdir/dmesg" "$outdir/console.log" "$outdir/boot-uptime"
	{
		echo "# generated by ${0##*/}; run by guest-init"
		vm_export VM_OUT "$VM_GUEST_OUT"
		vm_export VM_KVER "$kver"
		vm_export VM_SCRIPTS "$VM_SCRIPT_DIR"
		vm_export VM_CWD "$PWD"
		vm_export VM_REPO "$VM_REPO_DIR"
		[ -z "${VM_SHARE:-}" ] || vm_export VM_SHARE "$VM_SHARE"
		[ -z "${VM_KROOT:-}" ] || [ "$VM_KROOT" = "${VM_ROOTFS:-}" ] ||
			vm_export VM_KROOT "$VM_KROOT"
		for kv in "$@"; do
			vm_export "${kv%%=*}" "${kv#*=}"
		done
		# VM_ENV: host variables the caller wants to see in the guest.
		for name in ${VM_ENV:-}; do
			[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || vm_die "VM_ENV: bad name '$name'"
			[ -n "${!name+set}" ] && vm_export "$name" "${!name}"
		done
		vm_export VM_CMD "$cmd"
	} >"$outdir/job.sh"
}

# QEMU arguments shared by every guest.  Args: kernel initrd outdir mem.
vm_qemu_args() {
	local kernel=$1 initrd=$2 outdir=$3 mem=$4 accel=${VM_ACCEL:-tcg}

	# TCG by default: a KVM guest hangs on this machine (opt in with VM_ACCEL).
	local smp=${VM_SMP:-2}

	# A socket per NUMA node: else the kernel warns of a shared cache
	# across nodes.
	[ "${VM_NUMA:-1}" != 2 ] || smp+=",sockets=2"
	VM_QEMU_ARGS=(qemu-system-x86_64 -accel "$accel" -smp "$smp" -m "$mem"
		-display none -monitor none -serial stdio -no-reboot
		-nic none  # never a user-mode (slirp) NIC; vm-pair adds its link
		-kernel "$kernel" -initrd "$initrd"
		-append "console=ttyS0 panic=-1 quiet ${VM_APPEND:-}"
		-virtfs "local,path=${VM_ROOTFS:-/},mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$VM_REPO_DIR,mount_tag=repo,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$outdir,mount_tag=vmout,security_model=none,multidevs=remap")
	# VM_NUMA=2: two NUMA nodes, half the memory and CPUs each (page
	# migration between nodes: odp_churn).
	if [ "${VM_NUMA:-1}" = 2 ]; then
		local mib
		smp=${VM_SMP:-2}
		case $mem in
		*G) mib=$((${mem%G} * 1024)) ;;
		*M) mib=${mem%M} ;;
		*) vm_die "VM_NUMA: memory '$mem' not in M or G" ;;
		esac
		[ "$smp" -ge 2 ] || vm_die "VM_NUMA=2 wants VM_SMP >= 2"
		VM_QEMU_ARGS+=(
			-object "memory-backend-ram,id=numa0,size=$((mib / 2))M"
			-object "memory-backend-ram,id=numa1,size=$((mib - mib / 2))M"
			-numa "node,nodeid=0,cpus=0-$((smp / 2 - 1)),memdev=numa0"
			-numa "node,nodeid=1,cpus=$((smp / 2))-$((smp - 1)),memdev=numa1")
	fi
	# VM_SHARE: a writable host directory at the same path in the guest,
	# shared by guests that run at once (run.sh's VM_QUEUE).
	[ -z "${VM_SHARE:-}" ] || VM_QEMU_ARGS+=(
		-virtfs "local,path=$VM_SHARE,mount_tag=share,security_model=none,multidevs=remap")
	# VM_QEMU_EXTRA: more QEMU arguments, split at spaces (the cost
	# meter's -icount and -plugin, bench/cost/run.sh).
	# shellcheck disable=SC2206
	[ -z "${VM_QEMU_EXTRA:-}" ] || VM_QEMU_ARGS+=($VM_QEMU_EXTRA)
	# TCG: a CPU with the instructions kernels use when they exist
	# (PCLMULQDQ for CRC-32, SSE4.2, ...), unless VM_CPU says otherwise.
	if [ "$accel" = kvm ]; then
		VM_QEMU_ARGS+=(-cpu host)
	else
		VM_QEMU_ARGS+=(-cpu "${VM_CPU:-max}")
	fi
}

# Start QEMU ("${VM_QEMU_ARGS[@]}" plus extra args) in the background
# under a hard timeout; the caller waits with `wait`, which, unlike a
# foreground pipeline, lets its INT/TERM traps run at once.  The serial
# console is streamed live (lines prefixed with $prefix, power-off noise
# dropped) and saved, CR-stripped, to $outdir/console.log.  stdin is
# /dev/null so QEMU never puts the terminal into raw mode.  QEMU's exit
# status (124 on timeout) lands in $outdir/qemu-status.
vm_boot_bg() {
	local timeout=$1 outdir=$2 prefix=$3
	shift 3

	rm -f "$outdir/qemu-status"
	{
		local qrc=0
		timeout -k 5 "$timeout" "${VM_QEMU_ARGS[@]}" \
			-pidfile "$outdir/qemu.pid" "$@" </dev/null 2>&1 || qrc=$?
		echo "$qrc" >"$outdir/qemu-status"
	} | sed -u 's/\r$//' | tee "$outdir/console.log" |
		sed -u -e "/$VM_SHUTDOWN_MSG/{s///;/^\$/d}" -e "s/^/$prefix/" &
}

# Did QEMU itself die of a fault (SIGILL, SIGABRT, SIGBUS, SIGFPE,
# SIGSEGV)? Seen once: a general protection fault of a TCG thread at a
# pair's boot. Not a timeout's kill (124, 137) nor our own TERM (143).
vm_qemu_crashed() {
	case $(cat "$1/qemu-status" 2>/dev/null) in
	132 | 134 | 135 | 136 | 139) return 0 ;;
	esac
	return 1
}

# Did the guest start its job? guest-init writes boot-uptime first.
vm_job_started() {
	[ -e "$1/boot-uptime" ]
}

# Nothing of ours ran: the guest kernel panicked (seen once: an int3 oops
# in sched_clock_cpu 1.6 s into a boot of sid's 7.2 under TCG) or QEMU
# crashed before the job started. Such a boot may be made once more.
vm_boot_lost() {
	! vm_job_started "$1" &&
		{ vm_qemu_crashed "$1" ||
		  grep -q 'Kernel panic' "$1/console.log" 2>/dev/null; }
}

# Keep a lost boot's console as console-boot1.log, for the record.
vm_keep_boot1() {
	[ ! -e "$1/console.log" ] || mv "$1/console.log" "$1/console-boot1.log"
}

# EXIT trap helper: kill the QEMU of each given outdir if still running
# (normally none is: this matters when the script is interrupted).
vm_kill_guests() {
	local outdir pid

	for outdir in "$@"; do
		pid=$(cat "$outdir/qemu.pid" 2>/dev/null) || continue
		[[ $(cat "/proc/$pid/comm" 2>/dev/null) == qemu-system* ]] && kill "$pid"
	done
	return 0
}

# Print the lines of file $2 that show a kernel problem, under heading $1;
# fails if there are none. A user process's fault ("traps: PROG[PID]
# general protection fault ip:..."), which the kernel only reports, is
# not one.
vm_show_bad() {
	local bad

	bad=$(grep -E "$VM_DMESG_BAD" "$2" 2>/dev/null |
		grep -Ev 'traps: .*\[[0-9]+\] general protection fault ip:') ||
		return 1
	echo "$1" >&2
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/  /' >&2
}

# Turn one finished guest into an exit status, printing why it failed.
# Args: outdir, label for messages, timeout (for the message).  Without
# dmesg (timeout, crash) the console log still shows Oops/panic lines.
vm_result() {
	local outdir=$1 label=$2 timeout=$3 qrc rc

	qrc=$(cat "$outdir/qemu-status" 2>/dev/null || echo '?')
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		echo "VM-FAIL[$label]: guest did not finish within $timeout s, QEMU killed (see $outdir/console.log)" >&2
		vm_show_bad "VM-FAIL[$label]: kernel problem on the console:" "$outdir/console.log" || true
		return 124
	fi
	if [ ! -s "$outdir/rc" ]; then
		echo "VM-FAIL[$label]: no rc file: guest crashed, panicked or failed to set up (QEMU status $qrc, see $outdir/console.log)" >&2
		vm_show_bad "VM-FAIL[$label]: kernel problem on the console:" "$outdir/console.log" || true
		return 1
	fi
	rc=$(cat "$outdir/rc")
	if vm_show_bad "VM-FAIL[$label]: kernel problem in guest dmesg ($outdir/dmesg):" "$outdir/dmesg"; then
		[ "$rc" != 0 ] || rc=1
	fi
	return "$rc"
}
