#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In a guest whose root has the softrdma-dkms and ibverbs-provider-softrdma
# packages installed (check-package.sh): what a user of the packages gets,
# with nothing from the build tree. rdma link add autoloads the module
# DKMS built, and libibverbs finds the installed provider by itself (no
# RDMAV_DRIVERS).
. "$(dirname "$0")/../lib/lib.sh"
unset RDMAV_DRIVERS
trap srdma_cleanup EXIT

ktap_plan 6
srdma_cleanup
ktap_check "rdma link add autoloads the module and creates srdma0" srdma0_up
ktap_check "the module is the one DKMS installed" \
	sh -c 'modinfo -n softrdma | grep -q "/updates/dkms/softrdma\.ko"'
ktap_print "$(modinfo -F vermagic softrdma)"
ktap_check "the provider's driver file is in /etc/libibverbs.d" \
	test -f /etc/libibverbs.d/softrdma.driver
ktap_check "ibv_devinfo shows srdma0 with an active port" \
	sh -c 'ibv_devinfo -d srdma0 | grep -q PORT_ACTIVE'
args="-d srdma0 -x 1 -F -s 65536 -n 100"
client_server "ib_write_bw -s 65536" "ib_write_bw $args" ib_write_bw $args 127.0.0.1
client_server "ib_read_bw -s 65536" "ib_read_bw $args" ib_read_bw $args 127.0.0.1
ktap_finish
