#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stage-modules.sh KVER DIR: build, on the host, a module index for the
# guest that includes softrdma.ko, so "rdma link add ... type softrdma"
# autoloads it through modprobe exactly as on an installed system.
# depmod reads every module: natively that is seconds, over the guest's
# 9p root under TCG it is minutes.
set -eu
kver=$1
root=$2
top=$(cd "$(dirname "$0")/.." && pwd)
mods=$root/lib/modules/$kver

rm -rf "$root"
mkdir -p "$mods/extra"
ln -s "/lib/modules/$kver/kernel" "$mods/kernel"
cp /lib/modules/"$kver"/modules.order /lib/modules/"$kver"/modules.builtin* "$mods/"
cp "$top/softrdma.ko" "$mods/extra/"
depmod -b "$root" "$kver"
grep -q '^alias rdma-link-softrdma softrdma$' "$mods/modules.alias"
