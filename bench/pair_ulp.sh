#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "make bench-wire"'s storage case, on both hosts of a vm-pair.sh run:
# NVMe-oF (nvmet-rdma on host a over a RAM disk, nvme-rdma on host b) and
# NFS/RDMA (nfsd on host a over a tmpfs, the client on host b) across the
# link, loss-free and with netem dropping ULP_LOSS (1%) of what each host
# sends; softrdma on both hosts, then rdma_rxe on both. fio reads and
# writes 128 KiB blocks at queue depth 16 for ULP_SECS. ULP_RXE=0: softrdma
# only. Host b writes
# MODE,TEST,PARAM,VALUE lines (TEST ulp_{nvme,nfs}_{read,write}_KiBps,
# PARAM the loss in %, VALUE fio's KiB/s) to $VM_OUT/wire.csv, as
# pair.sh does; each host's device counters go to wire-counters.txt.
. "$(dirname "$0")/../selftests/lib/lib.sh"
. "$TESTLIB/blk_ulp.sh"

ULP_SECS=${ULP_SECS:-15}
ULP_LOSS=${ULP_LOSS:-1}
CSV=$VM_OUT/wire.csv
SYNC=$VM_SCRIPTS/vm-sync.sh
NQN=nqn.2026-12.io.softrdma:bench
EXPORT=/srv/bench-nfs
MNT=/mnt/bench-nfs
NFS_PORT=20049

cleanup() {
	tc qdisc del dev "$VM_IFACE" root 2>/dev/null
	if [ "$VM_HOST" = b ]; then
		umount -f $MNT 2>/dev/null
		nvme disconnect -n $NQN >/dev/null 2>&1
	else
		rpc.nfsd 0 2>/dev/null
		exportfs -ua 2>/dev/null
		pkill -x rpc.mountd
		pkill -x rpcbind
		nvmet_down $NQN
	fi
	srdma_cleanup
}
trap cleanup EXIT

# servers_up: host a's RAM disk as namespace 1 of $NQN on an RDMA port,
# and its tmpfs exported by nfsd over RDMA.
servers_up() {
	modprobe brd rd_nr=1 rd_size=262144 && modprobe nvmet-rdma || return
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	nvmet_up $NQN "$VM_IP" || return
	mkdir -p $EXPORT /run/rpcbind /var/lib/nfs/rpc_pipefs &&
		{ mountpoint -q $EXPORT || mount -t tmpfs -o size=512m tmpfs $EXPORT; } &&
		modprobe nfsd && modprobe rpcrdma || return
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	echo "$EXPORT ${VM_PEER_IP}(rw,sync,no_root_squash,insecure,fsid=0)" >/etc/exports
	rpcbind && exportfs -ra && rpc.mountd && rpc.nfsd 8 &&
		echo "rdma $NFS_PORT" >/proc/fs/nfsd/portlist
}

# fio_kib FILE RW: fio's bandwidth in KiB/s (terse v3: read 7, write 48).
fio_kib() {
	local f=7
	[ "$2" = write ] && f=48
	timeout -s KILL $((ULP_SECS + 120)) fio --name=ulp --filename="$1" \
		--size=128M --direct=1 --ioengine=libaio --rw="$2" --bs=128k \
		--iodepth=16 --time_based --runtime="$ULP_SECS" \
		--output-format=terse --terse-version=3 2>/dev/null |
		tail -n 1 | cut -d';' -f$f
}

# measure MODE LOSS: host b's four points through host a's servers.
measure() {
	local mode=$1 loss=$2 dev rw v
	modprobe nvme-rdma
	if nvme connect -t rdma -a "$VM_PEER_IP" -s 4420 -n $NQN >/dev/null &&
		wait_for "ls /sys/class/nvme-subsystem/*/nvme*n1 >/dev/null 2>&1" 30; then
		dev=/dev/$(basename "$(ls -d /sys/class/nvme-subsystem/*/nvme*n1 | head -n 1)")
		for rw in write read; do
			v=$(fio_kib "$dev" $rw)
			echo "$mode,ulp_nvme_${rw}_KiBps,$loss,${v:-0}" >>"$CSV"
		done
		nvme disconnect -n $NQN >/dev/null
	else
		echo "# $mode: no NVMe-oF connection at $loss% loss"
	fi
	mkdir -p $MNT
	if timeout 120 mount -t nfs -o "vers=4.2,proto=rdma,port=$NFS_PORT" \
		"$VM_PEER_IP:/" $MNT; then
		for rw in write read; do
			v=$(fio_kib $MNT/f $rw)
			echo "$mode,ulp_nfs_${rw}_KiBps,$loss,${v:-0}" >>"$CSV"
		done
		rm -f $MNT/f
		umount $MNT
	else
		echo "# $mode: no NFS/RDMA mount at $loss% loss"
	fi
}

# round MODE: loss-free, then ULP_LOSS% on both hosts' link.
round() {
	local loss
	for loss in 0 "$ULP_LOSS"; do
		tc qdisc del dev "$VM_IFACE" root 2>/dev/null
		[ "$loss" = 0 ] ||
			tc qdisc add dev "$VM_IFACE" root netem loss "$loss%"
		"$SYNC" barrier "ulp-$1-$loss" 300 || return
		[ "$VM_HOST" = b ] && measure "$1" "$loss"
		"$SYNC" barrier "ulp-$1-$loss-done" $((8 * ULP_SECS + 900)) || return
	done
	tc qdisc del dev "$VM_IFACE" root 2>/dev/null
	echo "$1 $(rdma statistic show link "$DEV/1" | tr -s ' \n' ' ')" \
		>>"$VM_OUT/wire-counters.txt"
}

: >"$CSV"
: >"$VM_OUT/wire-counters.txt"
echo "# host $VM_HOST, $(uname -r), fio $(fio --version)"
srdma_install_module
pair_device_up || exit $KSFT_FAIL
if [ "$VM_HOST" = a ]; then
	servers_up || { echo "# host a: the servers did not come up"; exit $KSFT_FAIL; }
fi
round softrdma
# Kernel consumers hold the device: they go before it does.
if [ "${ULP_RXE:-1}" = 0 ]; then
	:
elif [ "$VM_HOST" = a ]; then
	rm -f $NVMET/ports/1/subsystems/$NQN
	rpc.nfsd 0
	"$SYNC" barrier ulp-rxe-next 300
	pair_rxe_up && ln -s $NVMET/subsystems/$NQN $NVMET/ports/1/subsystems/$NQN &&
		rpc.nfsd 8 && echo "rdma $NFS_PORT" >/proc/fs/nfsd/portlist
else
	"$SYNC" barrier ulp-rxe-next 300
	pair_rxe_up
fi
[ "${ULP_RXE:-1}" = 0 ] || round rxe
[ "$VM_HOST" = b ] && cat "$CSV"
exit 0
