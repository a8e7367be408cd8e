#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rootfs.sh RELEASE[-rt|-kbuild]
#
# Print the path of a Debian RELEASE (trixie, sid, ...) root filesystem
# for building and testing softrdma as a user of that release gets it:
# its kernel image and headers, compiler, rdma-core, perftest, pyverbs
# and the tools the selftests use.  Made once with mmdebstrap from the
# archive the host's own sources name (the host's apt configuration is
# neither used for nor changed by it) and cached under
# build/rootfs/RELEASE-<key>, keyed by the release and this package list;
# its MANIFEST lists the package versions it holds.  ROOTFS_MIRROR
# overrides the archive. RELEASE-rt (bookworm-rt, trixie-rt): the same with
# the release's PREEMPT_RT kernel (linux-image-rt-amd64) instead.
# RELEASE-kbuild: the same plus the release's kernel source and what
# building a kernel takes (debug-kernel.sh builds that release's debug
# kernel in it, with its compiler).
#
# The module and provider are built inside it (rootfs-run.sh), and the
# test VM boots its kernel with it as the guest's root (VM_ROOTFS).

set -eu
. "$(dirname "$0")/lib.sh"

PACKAGES="linux-image-amd64 linux-headers-amd64 gcc make libc6-dev pkg-config
	libibverbs-dev librdmacm-dev rdma-core ibverbs-utils ibverbs-providers
	rdmacm-utils perftest python3-pyverbs python3 iproute2 kmod procps
	util-linux mount busybox-static gawk xz-utils zstd ca-certificates perl"

mirror() {
	local m

	[ -z "${ROOTFS_MIRROR:-}" ] || { echo "$ROOTFS_MIRROR"; return; }
	m=$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/*$/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
	[ -n "$m" ] || m=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' \
		/etc/apt/sources.list 2>/dev/null)
	echo "${m:-http://deb.debian.org/debian}"
}

main() {
	local rel=${1:-} suite key dir tmp

	[ -n "$rel" ] || vm_die "usage: ${0##*/} RELEASE[-rt|-kbuild]"
	suite=${rel%-rt}
	suite=${suite%-kbuild}
	[ "${rel%-kbuild}" = "$rel" ] ||
		PACKAGES="$PACKAGES linux-source bc bison flex libelf-dev libssl-dev cpio"
	if [ "${rel%-rt}" != "$rel" ]; then
		PACKAGES=$(echo $PACKAGES | sed 's/linux-\(image\|headers\)-amd64/linux-\1-rt-amd64/g')
		# A kernel ULP posts from softirq and its completion
		# handlers: on PREEMPT_RT that is where the module's
		# context decisions differ, so NVMe-oF runs there too.
		PACKAGES="$PACKAGES nvme-cli fio"
	fi
	key=$(echo "$rel $PACKAGES" | sha1sum | cut -c1-10)
	dir=$VM_REPO_DIR/build/rootfs/$rel-$key
	mkdir -p "$(dirname "$dir")"
	# One maker at a time: make check makes the roots it will need in
	# the background while its first VM runs.
	exec 9>"$dir.lock"
	flock 9
	if [ -e "$dir/MANIFEST" ]; then
		echo "$dir"
		return
	fi
	command -v mmdebstrap >/dev/null ||
		vm_die "mmdebstrap is missing: run 'make deps'"
	rm -rf "$dir" "$dir.tmp"
	tmp=$dir.tmp
	# No recommends, no manual pages: a smaller tree. (/usr/share/doc
	# stays: python3-pyverbs has its test suite there.)
	# The archive these machines reach is a snapshot: a suite's Release
	# file may be past its Valid-Until date.
	mmdebstrap --variant=apt --mode=root \
		--aptopt='APT::Install-Recommends "false"' \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--include="$(echo $PACKAGES | tr ' ' ,)" \
		"$suite" "$tmp" "$(mirror)" >&2 ||
		vm_die "mmdebstrap $rel failed"
	chroot "$tmp" dpkg-query -W -f '${Package} ${Version}\n' >"$tmp/MANIFEST"
	mv "$tmp" "$dir"
	echo "$dir"
}

main "$@"
