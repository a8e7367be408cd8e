#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NFS over RDMA, both ends in the kernel: nfsd serves a tmpfs over
# svcrdma (port 20049) and the client mounts it with proto=rdma
# (xprtrdma), over one device looping back to its own address (kernel
# consumers live in the initial namespace). For NFSv3 and NFSv4.2: a
# 64 MiB file written and read back through the mount, checked by sha256
# on both sides; fio random writes verified by crc32c; direct and
# buffered read throughput. Then the device is deleted under I/O on a
# soft mount: the I/O fails, the unmount works and a new device serves
# again. RXE_REFERENCE=1: the same run over rdma_rxe reported beside it.
. "$(dirname "$0")/../lib/lib.sh"
. "$TESTLIB/fs_ulp.sh"

EXPORT=/tmp/nfs-rdma/export
MNT=/tmp/nfs-rdma/mnt
SRC=/tmp/nfs-rdma/src
PORT=20049
SERVER=10.9.0.1

for tool in rpc.nfsd rpc.mountd exportfs rpcbind mount.nfs fio sha256sum; do
	command -v $tool >/dev/null ||
		{ echo "1..0 # SKIP $tool missing (nfs-kernel-server)"; exit $KSFT_SKIP; }
done

server_down() {
	umount -f $MNT 2>/dev/null
	rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	pkill -x rpc.mountd
	pkill -x rpcbind
	return 0
}

cleanup() {
	server_down
	srdma_cleanup
}
trap cleanup EXIT

# nfsd on TCP (for the MOUNT protocol and NLM of v3) and RDMA. A short
# NFSv4 grace period: a fresh server refuses OPENs for all of it.
server_up() {
	mkdir -p $EXPORT $MNT /run/rpcbind /var/lib/nfs/rpc_pipefs &&
		{ mountpoint -q $EXPORT || mount -t tmpfs -o size=512m tmpfs $EXPORT; } &&
		modprobe nfsd && modprobe rpcrdma || return
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	# fsid=0: the export is NFSv4's root too (the guest's root, an
	# overlay, cannot be exported as the path above it).
	echo "$EXPORT 10.9.0.0/24(rw,sync,no_root_squash,insecure,fsid=0)" >/etc/exports
	rpcbind && exportfs -ra && rpc.mountd && rpc.nfsd 8 &&
		echo "rdma $PORT" >/proc/fs/nfsd/portlist
}

# nfs_mount VERS [OPTIONS]: mount the export over RDMA at $MNT (NFSv4
# names it by its path under the root, which it is).
nfs_mount() {
	local path=$EXPORT
	[ "${1%%.*}" = 4 ] && path=/
	mount -t nfs -o "vers=$1,proto=rdma,port=$PORT${2:+,$2}" \
		$SERVER:$path $MNT || return
	grep -q " $MNT nfs.* .*proto=rdma" /proc/mounts ||
		{ grep " $MNT " /proc/mounts; return 1; }
}

# over IBDEV VERS: mount, data checks and throughput, unmount.
over() {
	local dev=$1 v=$2 bw t=${2/./}
	ktap_check "$dev: NFSv$v mount with proto=rdma" nfs_mount "$v"
	ktap_check "$dev: NFSv$v: 64 MiB copied, sha256 equal on server and client" \
		fs_copy_check
	bw=$(fs_fio_bw 48 --rw=randwrite --bs=64k --direct=1 --ioengine=libaio \
		--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1)
	ktap_result "$dev: NFSv$v: fio random writes, crc32c verified" $?
	eval "W_${dev}_$t=\${bw:-0}"
	bw=$(fs_fio_bw 7 --rw=read --bs=1M --direct=1 --ioengine=libaio --iodepth=4)
	eval "RD_${dev}_$t=\${bw:-0}"
	echo 3 >/proc/sys/vm/drop_caches
	bw=$(fs_fio_bw 7 --rw=read --bs=1M --ioengine=psync)
	eval "RB_${dev}_$t=\${bw:-0}"
	rm -f $MNT/fs.*
	ktap_check "$dev: NFSv$v unmount" umount $MNT
}

# The device goes away under a writer on a soft mount: the writes fail
# within the mount's timeouts, the unmount works, and a new device
# serves the export again (the server listens on every device).
device_gone() {
	local pid rc=0
	nfs_mount 4.2 soft,timeo=20,retrans=2 || return
	dd if=/dev/zero of=$MNT/big bs=1M count=100000 oflag=direct \
		status=none 2>/dev/null &
	pid=$!
	sleep 3
	rdma link delete srdma0 || rc=1
	wait_for "! kill -0 $pid" 120 || { ktap_print "the writer still runs"; rc=1; }
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null && { ktap_print "the writer did not fail"; rc=1; }
	umount -f $MNT || umount -l $MNT || { ktap_print "no unmount"; rc=1; }
	[ $rc -eq 0 ] || return 1
	srdma0_add &&
		nfs_mount 4.2 && fs_copy_check && umount $MNT
}

ktap_plan_ref 12 8
srdma_cleanup
mkdir -p "${SRC%/*}" && head -c 64M /dev/urandom >$SRC

srdma0_up || ktap_print "srdma0 did not come up"
ktap_check "nfsd serves a tmpfs over RDMA (port $PORT)" server_up
over srdma0 3
over srdma0 4.2
ktap_check "srdma0: the loopback path kept order: no resend, no sequence NAK" \
	in_order srdma0
ktap_check "srdma0 deleted under NFS I/O, then a new one serves" device_gone
srdma_cleanup

if rxe_reference; then
	rxe0_up || ktap_print "rxe0 did not come up"
	over rxe0 3
	over rxe0 4.2
fi
ktap_check "the server stops" server_down

for v in 3 4.2; do
	for m in W RD RB; do
		eval "s=\$${m}_srdma0_${v/./} r=\$${m}_rxe0_${v/./}"
		case $m in
		W) what="fio 64k random writes (direct)" ;;
		RD) what="1M sequential reads (direct)" ;;
		RB) what="1M sequential reads (buffered)" ;;
		esac
		ktap_print "NFSv$v $what: softrdma $s KiB/s$(rxe_reference &&
			echo ", rxe $r KiB/s, ratio $(ratio "$s" "$r")")"
	done
done
ktap_finish
