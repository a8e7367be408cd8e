#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics over softrdma, end to end in the kernel: an nvmet
# target exports a RAM disk over RDMA, nvme-rdma connects to it (loopback
# on one device: kernel consumers live in the initial namespace), and fio
# writes and verifies data at queue depths 1 and 32 with 4 KiB and
# 128 KiB blocks. Both ends register every I/O buffer with FRWR
# (IB_WR_REG_MR); the target answers with SEND with invalidate.
# RXE_REFERENCE=1: the same run over rdma_rxe beside it, for comparison.
#
# nvme_of.sh scale: eight controllers at once, 8 I/O queues each where
# the CPUs allow (see scale_queues), over the same loopback: each
# controller's queue count (sysfs, kernel log) and QPs (rdma resource),
# one fio over all eight namespaces, 4 KiB and 128 KiB random writes 8
# deep, every block verified (crc32c), then every QP of the run gone and
# the kernel log clean.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/blk_ulp.sh"

NQN=nqn.2026-11.io.softrdma:nvme-of-test
HOSTNQN=nqn.2026-11.io.softrdma:host

for tool in nvme fio; do
	command -v $tool >/dev/null ||
		{ echo "1..0 # SKIP $tool missing"; exit $KSFT_SKIP; }
done

# scale mode: SCALE_N subsystems, $NQN-0 and on, over /dev/ram0 and on.
SCALE_N=8
SCALE_Q=8	# the I/O queues each controller asks for
SCALE_NQNS=$(for i in $(seq 0 $((SCALE_N - 1))); do echo $NQN-$i; done)

cleanup() {
	local nqn
	for nqn in $NQN $SCALE_NQNS; do
		nvme disconnect -n "$nqn" >/dev/null 2>&1
		nvmet_down "$nqn"
	done
	srdma_cleanup
	modprobe -r brd 2>/dev/null
}
trap cleanup EXIT

# nvme_dev [NQN]: the block device of NQN's (default $NQN) namespace,
# once connected.
nvme_dev() {
	local s
	for s in /sys/class/nvme-subsystem/*; do
		[ "$(cat "$s/subsysnqn" 2>/dev/null)" = "${1:-$NQN}" ] || continue
		ls -d "$s"/nvme*n1 2>/dev/null | sed 's|.*/|/dev/|' | head -n 1
		return
	done
}

blk_disk() {
	nvme_dev
}

# nvme_connect NQN [ARGS...]: the host connects to NQN on 10.9.0.1 and
# its namespace's block device appears.
nvme_connect() {
	local nqn=$1
	shift
	nvme connect -t rdma -a 10.9.0.1 -s 4420 -n "$nqn" -q $HOSTNQN "$@" &&
		wait_for "[ -b \"\$(nvme_dev $nqn)\" ]" 30
}

# One queue is polled (IB_POLL_DIRECT), the others complete in softirq.
connect() {
	nvme_connect $NQN --nr-poll-queues=1 "$@"
}

# nvme_modules RAM_DISKS KIB: that many RAM disks of KIB each (brd,
# loaded afresh: its sizes are load-time parameters), nvmet, nvmet-rdma
# and nvme-rdma; configfs, which nvmet pulls in (a module on Debian),
# mounted.
nvme_modules() {
	modprobe -r brd 2>/dev/null
	modprobe brd rd_nr="$1" rd_size="$2" &&
		modprobe nvmet && modprobe nvmet-rdma && modprobe nvme-rdma ||
		return
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
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

# --- scale ---------------------------------------------------------------

# nvme_ctrl NQN: the controller (nvmeN) connected to NQN.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ] || continue
		echo "${c##*/}"
		return
	done
}

# qp_count: the QPs on every RDMA device.
qp_count() {
	rdma resource show qp | grep -c .
}

# cm_qps USER: the QPs of kernel user USER's connections: rdma_cm names
# the QPs it makes after itself ("comm [rdma_cm]"), their cm_ids after
# the user.
cm_qps() {
	rdma resource show cm_id | grep "comm \[$1\]" | grep -c ' lqpn '
}

# qp_psns: "LQPN PSN" of every RC QP, PSN the next it sends (softrdma's
# driver attribute): a QP that sent since has another.
qp_psns() {
	rdma -dd resource show qp | awk '{ for (i = 1; i < NF; i++) {
		if ($i == "lqpn") q = $(i + 1); if ($i == "type") t = $(i + 1)
		if ($i == "drv_next_psn" && t == "RC") print q, $(i + 1) } }'
}

# scale_queues: the I/O queues each controller asks for, SCALE_Q in all:
# SCALE_R read, SCALE_W write and SCALE_P polled ones (SCALE_E in all).
# nvme-rdma gives each kind at most one queue per online CPU
# (nvme_rdma_alloc_io_queues, 6.1), so SCALE_Q of one kind would want as
# many CPUs; in a guest of 2 the three kinds make 6, in one of 3 or
# more 8: make check runs this test in its guest of 3 CPUs (manifest tag
# smp3).
scale_queues() {
	local cpus left
	cpus=$(getconf _NPROCESSORS_ONLN)
	left=$SCALE_Q
	SCALE_R=$((left < cpus ? left : cpus)) left=$((left - SCALE_R))
	SCALE_W=$((left < cpus ? left : cpus)) left=$((left - SCALE_W))
	SCALE_P=$((left < cpus ? left : cpus))
	SCALE_E=$((SCALE_R + SCALE_W + SCALE_P))
}

scale_target_up() {
	local i=0 nqn
	for nqn in $SCALE_NQNS; do
		nvmet_up "$nqn" 10.9.0.1 /dev/ram$i || return
		i=$((i + 1))
	done
}

scale_connect() {
	local nqn
	for nqn in $SCALE_NQNS; do
		nvme_connect "$nqn" --nr-io-queues=$SCALE_R \
			--nr-write-queues=$SCALE_W --nr-poll-queues=$SCALE_P || return
	done
}

# scale_queues_ok: each controller has SCALE_E I/O queues, in sysfs
# (queue_count counts the admin queue too) and in its kernel log line.
scale_queues_ok() {
	local nqn c q rc=0
	for nqn in $SCALE_NQNS; do
		c=$(nvme_ctrl "$nqn")
		q=$(cat "/sys/class/nvme/$c/queue_count" 2>/dev/null)
		[ "${q:-0}" -eq $((SCALE_E + 1)) ] && dmesg | tail -n +"$((dmesg_start + 1))" |
			grep -q "nvme $c: creating $SCALE_E I/O queues" && continue
		echo "$nqn: controller ${c:-none}, queue_count ${q:-?}"
		rc=1
	done
	return $rc
}

# scale_qps_ok QPS0: a QP per queue, admin queues too, on each side:
# nvme-rdma's and nvmet-rdma's, and QPS0 (those before) beside them.
scale_qps_ok() {
	local want=$((SCALE_N * (SCALE_E + 1))) h t all
	h=$(cm_qps nvme_rdma)
	t=$(cm_qps nvmet_rdma)
	all=$(qp_count)
	echo "QPs: nvme-rdma $h, nvmet-rdma $t, $all in all ($1 before); want $want a side"
	[ "$h" -eq $want ] && [ "$t" -eq $want ] && [ "$all" -eq $(($1 + 2 * want)) ]
}

# scale_fio: one fio over every namespace at once: on each, 4 KiB random
# writes over 16 MiB at its start and 128 KiB ones over 16 MiB at its
# middle, 8 deep, then every block read back and checked (crc32c). Each
# is a job per CPU, pinned there, on its share: blk-mq picks a queue of
# each kind by the CPU, so that every queue carries data; the writes go
# out on write queues, the reads on read queues, and the 4 KiB jobs poll
# (io_uring, hipri) when there are poll queues. Prints fio's terse line
# of the whole group.
scale_fio() {
	local nqn dev cpus share poll=() jobs=() out
	cpus=$(getconf _NPROCESSORS_ONLN)
	share=$((16384 / cpus / 128 * 128))k
	[ "$SCALE_P" -gt 0 ] && poll=(--ioengine=io_uring --hipri)
	for nqn in $SCALE_NQNS; do
		dev=$(nvme_dev "$nqn")
		jobs+=(--name="4k-${nqn##*-}" --filename="$dev" --bs=4k \
			--offset=0 "${poll[@]}"
			--name="128k-${nqn##*-}" --filename="$dev" --bs=128k \
			--offset=32M)
	done
	out=$(fio --ioengine=libaio --direct=1 --rw=randwrite --iodepth=8 \
		--numjobs="$cpus" --cpus_allowed=0-$((cpus - 1)) \
		--cpus_allowed_policy=split --size=$share --offset_increment=$share \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--group_reporting --output-format=terse --terse-version=3 \
		"${jobs[@]}" 2>&1) || { echo "$out" | tail -n 5 >&2; return 1; }
	echo "$out" | tail -n 1
}

# scale_qps_sent PSNS: every RC QP sent since PSNS (qp_psns), an
# Identify on each controller's admin queue first (it may have had no
# reason to send).
scale_qps_sent() {
	local nqn moved
	for nqn in $SCALE_NQNS; do
		nvme id-ctrl "/dev/$(nvme_ctrl "$nqn")" >/dev/null || return
	done
	moved=$(qp_psns | awk 'NR == FNR { p[$1] = $2; next }
		$1 in p { n++; if (p[$1] != $2) m++ }
		END { print m + 0, n + 0 }' <(echo "$1") -)
	echo "${moved% *} of ${moved#* } QPs sent"
	[ "${moved% *}" = "${moved#* }" ] && [ "${moved#* }" -gt 0 ]
}

# scale_qps_gone QPS0: back to QPS0 QPs within 30 s (nvmet-rdma frees a
# queue from a work queue once it is disconnected); those left if not.
scale_qps_gone() {
	wait_for "[ \"\$(qp_count)\" -eq $1 ]" 30 && return
	rdma resource show qp
	return 1
}

scale_down() {
	local nqn rc=0
	for nqn in $SCALE_NQNS; do
		nvme disconnect -n "$nqn" >/dev/null || rc=1
	done
	return $rc
}

scale_target_down() {
	local nqn
	for nqn in $SCALE_NQNS; do nvmet_down "$nqn"; done
	! ls -d $NVMET/subsystems/* $NVMET/ports/* 2>/dev/null
}

scale() {
	local qps0 psns t0 t1 t2 out
	ktap_plan 12
	t0=$(date +%s)
	srdma_cleanup
	nvme_modules $SCALE_N 65536 || ktap_print "the NVMe-oF modules did not load"
	srdma0_up || ktap_print "srdma0 did not come up"
	scale_queues
	dmesg_start=$(dmesg | wc -l)
	qps0=$(qp_count)
	ktap_check "the target exports $SCALE_N subsystems on RDMA" scale_target_up
	t1=$(date +%s)
	ktap_check "nvme connect to each, asking $SCALE_R read, $SCALE_W write, $SCALE_P polled queues" \
		scale_connect
	t2=$(date +%s)
	ktap_print "$SCALE_N controllers connected in $((t2 - t1)) s"
	ktap_check "each controller has $SCALE_E I/O queues (sysfs queue_count, kernel log)" \
		scale_queues_ok
	ktap_print "$(getconf _NPROCESSORS_ONLN) CPUs: $SCALE_E I/O queues per controller, $(dmesg |
		tail -n +"$((dmesg_start + 1))" | grep -m 1 -o 'mapped .* queues')"
	if [ $SCALE_E -eq $SCALE_Q ]; then
		ktap_result "$SCALE_Q I/O queues per controller" 0
	else
		ktap_skip "$SCALE_Q I/O queues per controller" \
			"$(getconf _NPROCESSORS_ONLN) CPUs give $SCALE_E: one read, write and poll queue per CPU"
	fi
	out=$(scale_qps_ok "$qps0")
	ktap_result "a QP per queue on each side: $((2 * SCALE_N * (SCALE_E + 1))) more" $?
	ktap_print "$out"
	psns=$(qp_psns)
	t1=$(date +%s)
	out=$(scale_fio)
	ktap_result "fio on all $SCALE_N namespaces at once: 4k and 128k random writes, iodepth 8, crc32c verified" $?
	t2=$(date +%s)
	# terse v3: field 7 the read bandwidth, 48 the write bandwidth (KiB/s).
	ktap_print "fio: $(echo "$out" | cut -d';' -f48) KiB/s written, $(echo "$out" |
		cut -d';' -f7) KiB/s read back, $((t2 - t1)) s"
	ktap_check "every queue's QP, host and target, sent: the I/O queues' in fio" \
		scale_qps_sent "$psns"
	ktap_check "nvme disconnect from each" scale_down
	ktap_check "the target comes down" scale_target_down
	ktap_check "every QP of the run is gone" scale_qps_gone "$qps0"
	ktap_check "srdma0: the loopback path kept order: no resend, no sequence NAK" \
		in_order srdma0
	# Kernel reports (the harness's list), and the NVMe drivers' errors.
	dmesg_clean "$dmesg_start" \
		"nvmet?(_rdma)?.*([Ee]rror|[Ff]ail|timeout|reset|reconnect)"
	ktap_result "no kernel splat, no NVMe error in the kernel log" $?
	ktap_print "$(($(date +%s) - t0)) s in all"
}

[ "${1:-}" = scale ] && { scale; ktap_finish; }

ktap_plan_ref 13 9
srdma_cleanup
nvme_modules 1 131072 || ktap_print "the NVMe-oF modules did not load"

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
		s=BW_srdma0_${bs}_$qd r=BW_rxe0_${bs}_$qd
		ktap_print "bs=$bs iodepth=$qd: softrdma ${!s} KiB/s$(rxe_reference &&
			echo ", rxe ${!r} KiB/s, ratio $(ratio "${!s}" "${!r}")")"
	done
done
ktap_finish
