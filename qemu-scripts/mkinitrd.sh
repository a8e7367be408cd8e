#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitrd.sh [-k KVER] OUT
#
# Build the test-VM initramfs (gzip'd newc cpio) at OUT: busybox-static,
# the modules needed to mount the host root over virtio-9p with an overlay
# on top, the stage-1 init and the stage-2 guest-init.  KVER defaults to
# $KVER or the newest installed kernel (see vm_kver in lib.sh).
# vm-run.sh/vm-pair.sh call this automatically when the cached copy under
# build/vm/ is missing or stale.

set -eu
. "$(dirname "$0")/lib.sh"

# Needed before the root exists; everything else is modprobed later from
# the real /lib/modules.
INITRD_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
	virtio_pci netfs fscache 9pnet 9pnet_virtio 9p overlay"

usage() {
	echo "usage: ${0##*/} [-k KVER] OUT" >&2
	exit 2
}

# Module files for $INITRD_MODULES with their dependencies, in load order,
# without duplicates; built-in modules produce no line.  A kernel under
# VM_KROOT (lib.sh) may have them built in or not configured at all
# (fscache): a missing one is skipped there, not fatal.
module_paths() {
	local kver=$1 m

	for m in $INITRD_MODULES; do
		if [ -n "${VM_KROOT:-}" ]; then
			modprobe -d "$VM_KROOT" -S "$kver" --show-depends "$m" 2>/dev/null
		else
			modprobe -S "$kver" --show-depends "$m" || vm_die "modprobe: $m not found for $kver"
		fi
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

# Copy one module as a plain .ko: busybox insmod cannot load compressed ones.
copy_module() {
	local src=$1 dst=$2

	case $src in
	*.ko.xz) xz -dc "$src" >"$dst" ;;
	*.ko.zst) zstd -qdc "$src" >"$dst" ;;
	*.ko.gz) gzip -dc "$src" >"$dst" ;;
	*.ko) cp "$src" "$dst" ;;
	*) vm_die "unknown module format: $src" ;;
	esac
}

build_tree() {
	local kver=$1 root=$2 n=0 path name

	mkdir -p "$root"/{bin,dev,proc,sys,lower,rw,newroot,modules}
	cp /bin/busybox "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	install -m 755 "$VM_SCRIPT_DIR/init" "$root/init"
	install -m 755 "$VM_SCRIPT_DIR/guest-init" "$root/guest-init"

	# Numbered names keep the load order visible to init's glob.
	for path in $(module_paths "$kver"); do
		name=$(basename "$path")
		n=$((n + 1))
		copy_module "$path" "$root/modules/$(printf %02d $n)-${name%%.ko*}.ko"
	done
	echo "$kver" >"$root/kver"
}

main() {
	local kver out opt

	while getopts k:h opt; do
		case $opt in
		k) KVER=$OPTARG ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ $# = 1 ] || usage
	kver=$(vm_kver)
	out=$1

	tmp=$(mktemp -d)  # global: the EXIT trap runs after main returns
	trap 'rm -rf "$tmp"' EXIT
	build_tree "$kver" "$tmp/root"
	mkdir -p "$(dirname "$out")"
	(cd "$tmp/root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
		gzip >"$tmp/initrd"
	mv "$tmp/initrd" "$out"
	echo "${0##*/}: built $out for $kver"
}

main "$@"
