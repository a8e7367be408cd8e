# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared by the block storage ULP tests (iser.sh, srp.sh, nvme_of.sh,
# bench/pair_ulp.sh), sourced after lib.sh: an nvmet target, fio on the
# ULP's disk, which the test's blk_disk function names (its /dev path,
# empty while there is none), its checks, a device deleted under its
# I/O, and the report.

NVMET=/sys/kernel/config/nvmet

# nvmet_up NQN ADDR [DISK]: the RAM disk DISK (default /dev/ram0) as
# namespace 1 of NQN, on nvmet's RDMA port 1 at ADDR, 4420 (configfs
# mounted, nvmet-rdma loaded). Further subsystems join the port as it is:
# nvmet refuses to change an enabled port's address.
nvmet_up() {
	mkdir -p $NVMET/subsystems/"$1"/namespaces/1 || return
	echo 1 >$NVMET/subsystems/"$1"/attr_allow_any_host &&
	echo "${3:-/dev/ram0}" >$NVMET/subsystems/"$1"/namespaces/1/device_path &&
	echo 1 >$NVMET/subsystems/"$1"/namespaces/1/enable || return
	if [ ! -d $NVMET/ports/1 ]; then
		mkdir $NVMET/ports/1 &&
		echo rdma >$NVMET/ports/1/addr_trtype &&
		echo ipv4 >$NVMET/ports/1/addr_adrfam &&
		echo "$2" >$NVMET/ports/1/addr_traddr &&
		echo 4420 >$NVMET/ports/1/addr_trsvcid || return
	fi
	ln -s $NVMET/subsystems/"$1" $NVMET/ports/1/subsystems/"$1"
}

# nvmet_down NQN: nvmet_up undone, whatever of it was done; the port
# stays while other subsystems are on it.
nvmet_down() {
	rm -f $NVMET/ports/1/subsystems/"$1" 2>/dev/null
	rmdir $NVMET/ports/1 $NVMET/subsystems/"$1"/namespaces/1 \
		$NVMET/subsystems/"$1" 2>/dev/null
	return 0
}

# blk_fio_bw FIELD ARGS...: fio on the disk, its bandwidth in KiB/s
# (terse v3 field 7 read, 48 write); fails with fio.
blk_fio_bw() {
	local out f=$1
	shift
	out=$(fio --name=blk --filename="$(blk_disk)" --direct=1 \
		--ioengine=libaio --size=64M --output-format=terse \
		--terse-version=3 "$@" 2>&1) || { echo "$out" | tail -n 5 >&2; return 1; }
	echo "$out" | tail -n 1 | cut -d';' -f"$f"
}

# blk_data_checks IBDEV: 64 KiB random writes verified by crc32c at
# queue depths 1 and 16, then 1 MiB sequential reads; their bandwidths
# are kept for blk_report.
blk_data_checks() {
	local dev=$1 qd bw
	for qd in 1 16; do
		bw=$(blk_fio_bw 48 --rw=randwrite --bs=64k --iodepth=$qd \
			--verify=crc32c --do_verify=1 --verify_fatal=1)
		ktap_result "$dev: fio 64k random writes, iodepth $qd, crc32c verified" $?
		printf -v "BLK_W_${dev}_$qd" %s "${bw:-0}"
	done
	bw=$(blk_fio_bw 7 --rw=read --bs=1M --iodepth=4)
	ktap_result "$dev: fio 1M sequential reads" $?
	printf -v "BLK_R_$dev" %s "${bw:-0}"
}

# blk_io_start: random reads and writes on the disk for up to 120 s, in
# the background (BLK_IO_PID), for a device to go under.
blk_io_start() {
	fio --name=bg --filename="$(blk_disk)" --direct=1 --ioengine=libaio \
		--rw=randrw --bs=16k --iodepth=16 --time_based --runtime=120 \
		>/dev/null 2>&1 &
	BLK_IO_PID=$!
}

# blk_io_fails: blk_io_start's fio ends (within 90 s) with an error. In
# the shell that started it: a subshell (ktap_check) cannot wait for it.
blk_io_fails() {
	local rc=0
	wait_for "! kill -0 $BLK_IO_PID" 90 || { ktap_print "fio still runs"; rc=1; }
	kill "$BLK_IO_PID" 2>/dev/null
	wait "$BLK_IO_PID" && { ktap_print "fio did not fail"; rc=1; }
	return $rc
}

# blk_delete_under_io IBDEV [CMD...]: IBDEV deleted 3 s into
# blk_io_start's I/O (CMD run just before), which must then fail. The
# caller checks what the ULP left and brings a device back.
blk_delete_under_io() {
	local rc=0 dev=$1
	shift
	blk_io_start
	sleep 3
	"${@:-true}"
	rdma link delete "$dev" || rc=1
	blk_io_fails || rc=1
	return $rc
}

# blk_verify_small: a short verified write, for a device that came back.
blk_verify_small() {
	blk_fio_bw 48 --rw=randwrite --bs=64k --iodepth=8 --size=16M \
		--verify=crc32c --do_verify=1 --verify_fatal=1 >/dev/null
}

# blk_report: softrdma's bandwidths from blk_data_checks, and rxe's
# beside them when the reference ran (rxe_reference).
blk_report() {
	local qd s r

	for qd in 1 16; do
		s=BLK_W_srdma0_$qd r=BLK_W_rxe0_$qd
		ktap_print "64k random writes, iodepth $qd: softrdma ${!s} KiB/s$(blk_vs_rxe "${!s}" "${!r}")"
	done
	s=BLK_R_srdma0 r=BLK_R_rxe0
	ktap_print "1M sequential reads: softrdma ${!s} KiB/s$(blk_vs_rxe "${!s}" "${!r}")"
}

blk_vs_rxe() {
	rxe_reference && echo ", rxe $2 KiB/s, ratio $(ratio "$1" "$2")"
}
