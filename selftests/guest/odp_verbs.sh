#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging on one device: faults on either side, a changed
# mapping, swapped-out and unmapped memory, prefetch, 2 MiB huge pages:
# selftests/odp_verbs.c. Swap is a zram device, if the kernel has zram.
. "$(dirname "$0")/../lib/lib.sh"

swap_off() {
	swapoff /dev/zram0 2>/dev/null && rmmod zram 2>/dev/null
	huge_pages_restore
	srdma_cleanup
}
trap swap_off EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
huge_pages_at_least 4
if ! grep -q zram0 /proc/swaps && modprobe zram 2>/dev/null &&
	echo 64M >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null &&
	swapon /dev/zram0; then
	export ODP_SWAP=1
fi
"$PROGS/odp_verbs" srdma0 1
