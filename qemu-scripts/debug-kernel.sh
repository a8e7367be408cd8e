#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh [-B] [kernel]   print the unpacked debug kernel's directory
# debug-kernel.sh [-B] module     also build softrdma.ko for it; print its path
# debug-kernel.sh check CONFIG    does CONFIG have every option of the fragment?
# debug-kernel.sh config          configure the source tree only (no build)
# -r RELEASE (trixie, sid): that Debian release's kernel instead, built
#   from its linux-source in its root filesystem (rootfs.sh RELEASE-kbuild)
#   with its compiler, and the module with it too.
#
# The debug test kernel of `make check-debug`: Debian's linux-source-6.1
# (or that of -r RELEASE) with the options of debug-kernel.config (KASAN,
# UBSAN, lockdep, kmemleak, debug objects, failslab, ...), those a kernel
# no longer has (listed when it is configured) left out.  The result is
# a directory build/debug-kernel/<release>/ laid out like an installed
# kernel:
#   boot/vmlinuz-<release>, boot/config-<release>
#   lib/modules/<release>/             its modules (for VM_KROOT, lib.sh)
#   usr/src/linux-headers-<release>/   build tree for out-of-tree modules
# It comes from, in this order:
#   1. a cached one under build/debug-kernel/ (same origin, same fragment);
#   2. prebuilt .debs in $DEBUG_KERNEL_PREBUILT (default ../shared/debug-kernel
#      beside the repository: config-<rel>, linux-image-<rel>_*.deb,
#      linux-headers-<rel>_*.deb), unpacked with dpkg-deb -x, when their
#      config has every option of the fragment: a second;
#   3. a build from linux-source-6.1 (installed with apt-get when missing)
#      with the fragment merged: about 2,000 CPU-seconds (17 minutes on
#      2 idle cores).
# -B skips 2. (always build from source), as -r does.
#
# `module` builds softrdma.ko from a copy of the sources (Kbuild, kernel/,
# uapi/) in build/debug-kernel/obj/<release>/, so the main tree's objects
# (built against Debian's kernel) are never touched.

set -eu

SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$SCRIPT_DIR/.." && pwd)
FRAGMENT=$SCRIPT_DIR/debug-kernel.config
CACHE=$TOP/build/debug-kernel
PREBUILT=${DEBUG_KERNEL_PREBUILT:-$(cd "$TOP/.." && pwd)/shared/debug-kernel}
# In a release's root filesystem (-r), the kernel source it holds.
SOURCE_PKG=${DEBUG_KERNEL_SOURCE:-linux-source-6.1}
# What building the kernel needs besides gcc/make (Debian package names).
BUILD_DEPS="$SOURCE_PKG bc bison flex libelf-dev libssl-dev kmod cpio xz-utils"

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}

log() {
	echo "${0##*/}: $*" >&2
}

# The config symbols kernel tree $1 defines, one per line, in file $2.
kconfig_symbols() {
	find "$1" -name 'Kconfig*' -exec sed -n \
		's/^[[:space:]]*\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]*\).*/CONFIG_\2/p' \
		{} + | sort -u >"$2"
}

# check CONFIG [SYMBOLS]: every option of the fragment is in CONFIG
# ("CONFIG_X=v" exactly; "# CONFIG_X is not set": no CONFIG_X=y/m/value
# line).  Prints the missing ones.  With SYMBOLS (kconfig_symbols), an
# option that kernel does not define is not asked for.
config_matches() {
	local config=$1 symbols=${2:-} line name missing=0

	[ -r "$config" ] || return 1
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			name=${line%%=*}
			grep -qxF -- "$line" "$config" && continue ;;
		"# CONFIG_"*" is not set")
			name=${line#\# }
			name=${name%% *}
			grep -q "^$name=" "$config" || continue ;;
		*) continue ;;
		esac
		[ -z "$symbols" ] || grep -qxF "$name" "$symbols" || continue
		echo "  $line"
		missing=1
	done <"$FRAGMENT"
	return $missing
}

# The fragment's options a kernel does not define (its SYMBOLS file $1).
config_absent() {
	sed -n 's/^\(# \)\{0,1\}\(CONFIG_[A-Za-z0-9_]*\).*/\2/p' "$FRAGMENT" |
		sort -u | grep -vxF -f "$1"
}

# Identity of a set of files (names, sizes, times): a cache key.
files_id() {
	stat -c '%n %s %Y' "$@" | sed "s|^.*/||"
}

# unpack DIR IMAGE_DEB HEADERS_DEB STAMP: DIR becomes the two packages'
# contents, atomically (a half-unpacked DIR never exists).
unpack() {
	local dir=$1 image=$2 headers=$3 stamp=$4 tmp

	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$dir.tmp.XXXXXX")
	dpkg-deb -x "$image" "$tmp"
	dpkg-deb -x "$headers" "$tmp"
	printf '%s\n' "$stamp" >"$tmp/.origin"
	rm -rf "$dir"
	mv "$tmp" "$dir"
}

# The newest prebuilt release whose config matches the fragment, or fail.
prebuilt_release() {
	local config rel best=

	for config in "$PREBUILT"/config-*; do
		[ -f "$config" ] || continue
		rel=${config##*/config-}
		ls "$PREBUILT/linux-image-${rel}_"*.deb "$PREBUILT/linux-headers-${rel}_"*.deb \
			>/dev/null 2>&1 || continue
		if ! config_matches "$config" >/dev/null; then
			log "prebuilt $rel in $PREBUILT lacks fragment options:"
			config_matches "$config" >&2 || true
			continue
		fi
		best=$(printf '%s\n%s\n' "$best" "$rel" | sed '/^$/d' | sort -V | tail -n1)
	done
	[ -n "$best" ] && echo "$best"
}

use_prebuilt() {
	local rel=$1 dir=$CACHE/$1 image headers stamp

	image=$(ls "$PREBUILT/linux-image-${rel}_"*.deb | sort -V | tail -n1)
	headers=$(ls "$PREBUILT/linux-headers-${rel}_"*.deb | sort -V | tail -n1)
	stamp="prebuilt $(files_id "$image" "$headers" | tr '\n' ' ')"
	if [ "$(cat "$dir/.origin" 2>/dev/null)" != "$stamp" ]; then
		log "unpacking prebuilt $rel from $PREBUILT"
		unpack "$dir" "$image" "$headers" "$stamp"
	fi
	echo "$dir"
}

# Install what the build needs (Debian packages) when some is missing.
build_deps() {
	local p missing=

	for p in $BUILD_DEPS; do
		dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return
	log "installing:$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y $missing >&2 ||
		die "cannot install$missing"
}

# configure TREE: defconfig + kvm_guest.config + the fragment; fails
# unless the result has every option of the fragment that the kernel
# defines (an option whose dependencies are missing is silently dropped by
# olddefconfig; one a newer kernel removed, such as UBSAN_SANITIZE_ALL
# once UBSAN covered everything, is named and left out).
configure() {
	local tree=$1 symbols=$1/.kconfig-symbols absent

	make -C "$tree" -s defconfig >&2
	make -C "$tree" -s kvm_guest.config >&2
	(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$FRAGMENT") >/dev/null
	make -C "$tree" -s olddefconfig >&2
	kconfig_symbols "$tree" "$symbols"
	absent=$(config_absent "$symbols" | tr '\n' ' ')
	[ -z "$absent" ] || log "not in this kernel, left out: $absent"
	if ! config_matches "$tree/.config" "$symbols" >/dev/null; then
		log "the configured kernel lacks fragment options:"
		config_matches "$tree/.config" "$symbols" >&2 || true
		return 1
	fi
}

# $CACHE/src/$SOURCE_PKG, extracted from the package (version $1) and
# configured; each source package has its own tree.
source_tree() {
	local srcver=$1 tree=$CACHE/src/$SOURCE_PKG stamp=$CACHE/src/$SOURCE_PKG.source

	if [ "$(cat "$stamp" 2>/dev/null)" != "$srcver" ]; then
		log "extracting /usr/src/$SOURCE_PKG.tar.xz"
		rm -rf "$tree" "$stamp"
		mkdir -p "$CACHE/src"
		tar -C "$CACHE/src" -xf "/usr/src/$SOURCE_PKG.tar.xz"
		echo "$srcver" >"$stamp"
	fi
	configure "$tree" || die "cannot configure $tree with $FRAGMENT"
}

# The release a configured tree will have (`make kernelrelease` knows it
# only after the build started; the fragment turns LOCALVERSION_AUTO off).
release() {
	echo "$(make -C "$1" -s kernelversion)$(sed -n 's/^CONFIG_LOCALVERSION="\(.*\)"$/\1/p' "$1/.config")"
}

# Build from $SOURCE_PKG into $CACHE/<release>.  The tree stays in
# $CACHE/src/ (its object files are the headers tree for modules); a later
# build of the same source and fragment is found by its stamp.
use_source() {
	local srcver stamp dir tree rel jobs

	build_deps
	srcver=$(dpkg-query -W -f '${Version}' "$SOURCE_PKG")
	stamp="built $SOURCE_PKG $srcver $(sha256sum <"$FRAGMENT" | cut -c1-16)"
	for dir in "$CACHE"/*/; do
		dir=${dir%/}
		[ "$(cat "$dir/.origin" 2>/dev/null)" = "$stamp" ] && { echo "$dir"; return; }
	done

	source_tree "$srcver"
	tree=$CACHE/src/$SOURCE_PKG
	rel=$(release "$tree")
	jobs=$(nproc)
	log "building $rel in $tree (-j$jobs; about 2,000 CPU-seconds)"
	make -C "$tree" -j"$jobs" bzImage modules >&2
	dir=$CACHE/$rel
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp/boot" "$dir.tmp/usr/src"
	make -C "$tree" -s INSTALL_MOD_PATH="$dir.tmp" INSTALL_MOD_STRIP=1 modules_install >&2
	cp "$tree/arch/x86/boot/bzImage" "$dir.tmp/boot/vmlinuz-$rel"
	cp "$tree/.config" "$dir.tmp/boot/config-$rel"
	cp "$tree/System.map" "$dir.tmp/boot/System.map-$rel"
	# The whole object tree serves as the headers tree (scripts/ built).
	ln -s "$tree" "$dir.tmp/usr/src/linux-headers-$rel"
	rm -f "$dir.tmp/lib/modules/$rel/build" "$dir.tmp/lib/modules/$rel/source"
	ln -s "/usr/src/linux-headers-$rel" "$dir.tmp/lib/modules/$rel/build"
	echo "$stamp" >"$dir.tmp/.origin"
	mv "$dir.tmp" "$dir"
	echo "$dir"
}

# The unpacked kernel's directory (see the top of this file).
kernel_dir() {
	local rel

	if [ -z "$FROM_SOURCE" ] && rel=$(prebuilt_release); then
		use_prebuilt "$rel"
	else
		[ -n "$FROM_SOURCE" ] || log "no prebuilt kernel in $PREBUILT matches $FRAGMENT: building one"
		use_source
	fi
}

# Copy file $1 (relative to $TOP) into $2 unless it is there unchanged:
# unchanged files keep their time, so kbuild rebuilds only what changed.
sync_file() {
	mkdir -p "$2/$(dirname "$1")"
	cmp -s "$TOP/$1" "$2/$1" || cp -p "$TOP/$1" "$2/$1"
}

# Build softrdma.ko against kernel directory $1; print its path.
build_module() {
	local kroot=$1 rel kdir obj f

	rel=$(basename "$kroot")
	kdir=$kroot/usr/src/linux-headers-$rel
	obj=$CACHE/obj/$rel
	[ -f "$kdir/Makefile" ] || die "no headers tree at $kdir"
	mkdir -p "$obj"
	(cd "$TOP" && find Kbuild kernel uapi -type f \( -name Kbuild -o -name '*.[ch]' \)) |
		while read -r f; do sync_file "$f" "$obj"; done
	make -C "$kdir" M="$obj" W=1 -j"$(nproc)" modules >&2 ||
		die "building softrdma.ko against $kdir failed"
	echo "$obj/softrdma.ko"
}

usage() {
	sed -n '4,10p' "$0" | sed 's/^# //' >&2
	exit 2
}

# Run this script (arguments $2...) chrooted into release $1's kbuild root
# filesystem, on the kernel source that holds: its compiler builds the
# kernel and the module. Paths under the repository are the same inside.
in_release() {
	local rel=$1 root src
	shift

	root=$("$SCRIPT_DIR/rootfs.sh" "$rel-kbuild") || die "no root filesystem for $rel"
	src=$(chroot "$root" dpkg-query -W -f '${Package}\n' 'linux-source-*' | sort -V | tail -n1)
	[ -n "$src" ] || die "no linux-source package in $root"
	cd "$TOP"
	exec "$SCRIPT_DIR/rootfs-run.sh" "$root" env DEBUG_KERNEL_SOURCE="$src" \
		"$SCRIPT_DIR/debug-kernel.sh" -B "$@"
}

main() {
	local opt kroot rel=

	FROM_SOURCE=
	while getopts Bhr: opt; do
		case $opt in
		B) FROM_SOURCE=y ;;
		r) rel=$OPTARG ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ -z "$rel" ] || [ -n "${DEBUG_KERNEL_SOURCE:-}" ] || in_release "$rel" "$@"
	case ${1:-kernel} in
	kernel) kernel_dir ;;
	module)
		kroot=$(kernel_dir)
		build_module "$kroot" ;;
	check)
		[ $# = 2 ] || usage
		config_matches "$2" ;;
	config)
		build_deps
		source_tree "$(dpkg-query -W -f '${Version}' "$SOURCE_PKG")"
		release "$CACHE/src/$SOURCE_PKG" ;;
	*) usage ;;
	esac
}

main "$@"
