#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RDMA WRITEs and READs on an ODP MR whose pages the kernel keeps
# replacing: selftests/odp_churn.c. With two NUMA nodes (VM_NUMA=2) it
# migrates them; else it pages them out to a zram swap device, if the
# kernel has zram.
. "$(dirname "$0")/../lib/lib.sh"

swap_off() {
	swapoff /dev/zram0 2>/dev/null && rmmod zram 2>/dev/null
	srdma_cleanup
}
trap swap_off EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
if [ ! -e /sys/devices/system/node/node1 ] && ! grep -q zram0 /proc/swaps &&
	modprobe zram 2>/dev/null &&
	echo 64M >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null; then
	swapon /dev/zram0
fi
"$PROGS/odp_churn" srdma0 1
