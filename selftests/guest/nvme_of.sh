#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics over softrdma, end to end in the kernel: an nvmet
# target exports a RAM disk over RDMA, nvme-rdma connects to it (loopback
# on one device: kernel consumers live in the initial namespace), and fio
# writes and verifies data at queue depths 1 and 32 with 4 KiB and
# 128 KiB blocks. Both ends register every I/O buffer with FRWR
# (IB_WR_REG_MR); the target answers with SEND with invalidate.
# RXE_REFERENCE=1: the same run over rdma_rxe beside it, for comparison.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/blk_ulp.sh"

NQN=nqn.2026-11.io.softrdma:nvme-of-test
HOSTNQN=nqn.2026-11.io.softrdma:host

for tool in nvme fio; do
	command -v $tool >/dev/null ||
		{ echo "1..0 # SKIP $tool missing"; exit $KSFT_SKIP; }
done

cleanup() {
	nvme disconnect -n $NQN >/dev/null 2>&1
	nvmet_down $NQN
	srdma_cleanup
}
trap cleanup EXIT

# The namespace's block device, once connected.
nvme_dev() {
	local s
	for s in /sys/class/nvme-subsystem/*; do
		[ "$(cat "$s/subsysnqn" 2>/dev/null)" = $NQN ] || continue
		ls -d "$s"/nvme*n1 2>/dev/null | sed 's|.*/|/dev/|' | head -n 1
		return
	done
}

blk_disk() {
	nvme_dev
}

# One queue is polled (IB_POLL_DIRECT), the others complete in softirq.
connect() {
	nvme connect -t rdma -a 10.9.0.1 -s 4420 -n $NQN -q $HOSTNQN \
		--nr-poll-queues=1 "$@" &&
		wait_for '[ -b "$(nvme_dev)" ]' 30
}

# fio_verify DEV BS QD [FIO_ARGS...]: write, read back and check every
# block (crc32c); prints the write bandwidth in KiB/s.
fio_verify() {
	local out dev=$1 bs=$2 qd=$3
	shift 3
	out=$(fio --name=verify --filename="$dev" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs="$bs" --iodepth="$qd" --size=32M "$@" \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output-format=terse --terse-version=3 2>&1) || {
		echo "$out" | tail -n 5 >&2
		return 1
	}
	# terse v3: field 48 is the write bandwidth (KiB/s).
	echo "$out" | tail -n 1 | cut -d';' -f48
}

# over DEV: the whole run over an RDMA device on veth0 (10.9.0.1).
over() {
	local dev=$1 bs qd bw blk
	ktap_check "$dev: the nvmet target listens on RDMA" nvmet_up $NQN 10.9.0.1
	ktap_check "$dev: nvme connect -t rdma" connect
	blk=$(nvme_dev)
	for bs in 4k 128k; do
		for qd in 1 32; do
			bw=$(fio_verify "$blk" $bs $qd)
			ktap_result "$dev: fio bs=$bs iodepth=$qd, crc32c verified" $?
			ktap_print "$dev: bs=$bs iodepth=$qd: ${bw:-?} KiB/s"
			eval "BW_${dev}_${bs}_$qd=\${bw:-0}"
		done
	done
	fio_verify "$blk" 4k 1 --ioengine=pvsync2 --hipri >/dev/null
	ktap_result "$dev: fio on the polled queue (hipri), crc32c verified" $?
	ktap_check "$dev: nvme disconnect" nvme disconnect -n $NQN
	ktap_check "$dev: the target comes down" nvmet_down $NQN
}

# The device goes away under a running fio. nvme-rdma drops the
# controller: at once when it learns of the removal, or, when an I/O
# error put it into reconnecting first, once ctrl-loss-tmo has passed. fio
# ends with I/O errors, and a new device serves again.
device_gone() {
	local rc=0
	nvmet_up $NQN 10.9.0.1 && connect --ctrl-loss-tmo=5 --reconnect-delay=1 ||
		return
	blk_delete_under_io srdma0 || rc=1
	wait_for '[ -z "$(nvme_dev)" ]' 60 ||
		{ ktap_print "the controller is still there"; rc=1; }
	nvme disconnect -n $NQN >/dev/null 2>&1
	nvmet_down $NQN
	[ $rc -eq 0 ] || return 1
	srdma0_add &&
		nvmet_up $NQN 10.9.0.1 && connect &&
		fio_verify "$(nvme_dev)" 128k 8 >/dev/null &&
		nvme disconnect -n $NQN && nvmet_down $NQN
}

# The target takes its receives from shared receive queues (use_srq).
srq_target() {
	local rc
	modprobe -r nvmet-rdma && modprobe nvmet-rdma use_srq=1 || return
	nvmet_up $NQN 10.9.0.1 && connect &&
		fio_verify "$(nvme_dev)" 128k 16 >/dev/null &&
		nvme disconnect -n $NQN
	rc=$?
	nvmet_down $NQN
	modprobe -r nvmet-rdma && modprobe nvmet-rdma
	return $rc
}

ktap_plan_ref 13 9
srdma_cleanup
# nvmet pulls in configfs (a module on Debian), which we then mount.
modprobe brd rd_nr=1 rd_size=131072 &&
	modprobe nvmet && modprobe nvmet-rdma && modprobe nvme-rdma ||
	ktap_print "the NVMe-oF modules did not load"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

srdma0_up || ktap_print "srdma0 did not come up"
over srdma0
ktap_check "srdma0: the loopback path kept order: no resend, no sequence NAK" \
	in_order srdma0
ktap_check "srdma0: nvmet-rdma on SRQs (use_srq=1), fio verified" srq_target
ktap_check "srdma0 deleted under I/O, then a new one serves" device_gone
ktap_check "softrdma unloads once its kernel users are gone" \
	sh -c 'rdma link delete srdma0; rmmod softrdma'
srdma_cleanup
ip link del veth0 2>/dev/null

if rxe_reference; then
	rxe0_up || ktap_print "rxe0 did not come up"
	over rxe0
fi

for bs in 4k 128k; do
	for qd in 1 32; do
		eval "s=\$BW_srdma0_${bs}_$qd r=\$BW_rxe0_${bs}_$qd"
		ktap_print "bs=$bs iodepth=$qd: softrdma $s KiB/s$(rxe_reference &&
			echo ", rxe $r KiB/s, ratio $(ratio "$s" "$r")")"
	done
done
ktap_finish
