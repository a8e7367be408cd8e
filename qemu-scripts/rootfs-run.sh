#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rootfs-run.sh ROOTFS CMD [ARGS...]
#
# Run CMD as root chrooted into ROOTFS (see rootfs.sh), in the current
# directory, with this repository mounted at its own path, so that the
# module and the provider build with that release's compiler, kernel
# headers and libibverbs.  The mounts live in a private mount namespace
# and vanish with it.

set -eu
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || vm_die "usage: ${0##*/} ROOTFS CMD [ARGS...]"
root=$(cd "$1" && pwd)
shift
cwd=$PWD
case $cwd/ in
"$VM_REPO_DIR"/*) ;;
*) vm_die "run it from inside $VM_REPO_DIR" ;;
esac

# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare -m --propagation private bash -ec '
	root=$1 repo=$2 cwd=$3
	shift 3
	mkdir -p "$root$repo"
	mount --bind "$repo" "$root$repo"
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs tmpfs "$root/tmp"
	exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 bash -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' rootfs-run "$root" "$VM_REPO_DIR" "$cwd" "$@"
