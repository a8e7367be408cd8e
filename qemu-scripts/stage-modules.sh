#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stage-modules.sh KVER DIR: build, on the host, a module index for the
# guest that includes softrdma.ko, so "rdma link add ... type softrdma"
# autoloads it through modprobe exactly as on an installed system.
# depmod reads every module: natively that is seconds, over the guest's
# 9p root under TCG it is minutes.
# VM_KROOT: the kernel's modules are under that directory (see lib.sh);
# SRDMA_KO: the softrdma.ko to stage (default: the one make module built
# for KVER).
set -eu
kver=$1
root=$2
top=$(cd "$(dirname "$0")/.." && pwd)
mods=$root/lib/modules/$kver
kmods=${VM_KROOT:+$(cd "$VM_KROOT" && pwd)}/lib/modules/$kver

rm -rf "$root"
mkdir -p "$mods/extra"
ln -s "$kmods/kernel" "$mods/kernel"
cp "$kmods"/modules.order "$kmods"/modules.builtin* "$mods/"
cp "${SRDMA_KO:-$top/build/module/$kver/softrdma.ko}" "$mods/extra/"
depmod -b "$root" "$kver"
grep -q '^alias rdma-link-softrdma softrdma$' "$mods/modules.alias"
