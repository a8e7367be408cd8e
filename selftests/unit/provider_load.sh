#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# provider_load.sh [PROVIDER_DIR]
#
# Load the provider built in PROVIDER_DIR (default: provider/) through
# the installed libibverbs, without a kernel: a fake sysfs (SYSFS_PATH)
# offers one softrdma device, and ibv_devices must list it. That takes
# the dlopen with the right -rdmav<PABI>.so name, the registration, and
# match_device/alloc_device reading verbs_sysfs_dev, so a wrong private
# ABI layout or name shows here. Needs a mount namespace (unshare -m as
# root, else -rm) for a stand-in /dev/infiniband/uverbs0; ibv_devices
# from ibverbs-utils.

set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(cd "${1:-$top/provider}" && pwd)
mkdir -p "$top/build"
fake=$(mktemp -d "$top/build/provider_load.XXXXXX")
trap 'rm -rf "$fake"' EXIT

uv=$fake/sys/class/infiniband_verbs
ib=$fake/sys/class/infiniband/srdma0
mkdir -p "$uv/uverbs0" "$ib"
echo 6 > "$uv/abi_version"
echo srdma0 > "$uv/uverbs0/ibdev"
echo 231:192 > "$uv/uverbs0/dev"
echo 1 > "$uv/uverbs0/abi_version"
echo "1: CA" > "$ib/node_type"
echo softrdma > "$ib/hca_type"
echo 0200:5eff:fe00:0001 > "$ib/node_guid"

# A user namespace is refused inside a chroot, where we run as root; and
# / may be no mount point there, so make only /dev private, before the
# tmpfs over it (which then stays in this namespace).
ns=-rm
[ "$(id -u)" -ne 0 ] || ns=-m
# shellcheck disable=SC2016 # expanded by the inner shell
out=$(unshare $ns --propagation unchanged sh -ec '
	mount --make-rprivate /dev
	mount -t tmpfs none /dev
	mkdir /dev/infiniband
	: > /dev/infiniband/uverbs0
	IBV_SHOW_WARNINGS=1 SYSFS_PATH=$1 RDMAV_DRIVERS=$2/libsoftrdma \
		ibv_devices' sh "$fake/sys" "$dir" 2>&1) || true
echo "$out" | sed 's/^/# /'
if echo "$out" | grep -q 'srdma0.*02005efffe000001' &&
   ! echo "$out" | grep -qi 'warning\|error\|fail'; then
	echo "ok 1 provider in $dir loads and claims srdma0"
else
	echo "not ok 1 provider in $dir loads and claims srdma0"
	exit 1
fi
