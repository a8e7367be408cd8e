#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-package.sh RELEASE: the Debian packages as a user of RELEASE
# (bookworm, trixie, sid) gets them. The .debs are built with that
# release's tools in a scratch copy of its root filesystem (rootfs.sh),
# installed with apt into a fresh copy (DKMS builds the module for its
# kernel), and the test VM boots that copy and runs package.sh: the module
# autoloads and the tools find the provider without RDMAV_DRIVERS. Then
# apt purges the packages and what they pulled in, and no file may be left
# that was not there before. Prints "N passed, N failed, N skipped" last;
# output in build/package/RELEASE/.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
rel=${1:?usage: check-package.sh RELEASE}
out=$TOP/build/package/$rel
. selftests/host/check_lib.sh
CHECK_LABEL="$rel package: "
PKGS="softrdma-dkms ibverbs-provider-softrdma"
# The release's kernel, not the one make check builds for: in the chroot
# (make deb) and in the VM (the newest kernel of the root).
unset KVER

finish() {
	rm -rf "$out/buildroot" "$out/root"
	print_counts
	exit
}

# logged LOG CMD...: CMD's output to LOG, its tail shown when it fails.
logged() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 || { tail -n 20 "$log" | sed 's/^/# /'; return 1; }
}

in_root() {	# in_root ROOT CMD: CMD (a shell string) chrooted into ROOT
	qemu-scripts/rootfs-run.sh "$1" sh -ec "$2"
}

APT="DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Acquire::Check-Valid-Until=false"

# Every file of the root but the package manager's own state, logs and
# caches, and this repository (mounted into it).
files() {
	in_root "$1" "find / -xdev \\( -path /proc -o -path /sys -o -path /dev \
		-o -path /tmp -o -path /run -o -path /var/lib/apt \
		-o -path /var/lib/dpkg -o -path /var/cache -o -path /var/log \
		-o -path '$TOP' \\) -prune -o -print" | sort
}

# Files left after the purge that were not there before and that no
# installed package owns. (What apt pulled in and keeps, because another
# package recommends it, is the system's: dpkg-dev for dkms, say.) dkms
# keeps the module signing key it made (/var/lib/dkms/mok.*) on purpose,
# so a second install signs with the key already enrolled for Secure Boot.
# A package that lists /bin/x owns /usr/bin/x on a merged-/usr root (which
# find sees), so each such path counts under both names.
left_behind() {
	in_root "$out/root" "dpkg-query -W -f '\${Package}\n' | xargs dpkg-query -L" |
		sed -e 'p' -e 's,^/\(bin\|sbin\|lib[^/]*\)/,/usr/\1/,' |
		sort -u >"$out/files.owned"
	comm -13 "$out/files.before" "$out/files.after" | comm -23 - "$out/files.owned" |
		grep -v -x -e /var/lib/dkms -e '/var/lib/dkms/mok\.\(key\|pub\)' >"$out/left"
	[ ! -s "$out/left" ] || { sed 's/^/# left: /' "$out/left" | head -n 20; return 1; }
}

# provider_bound DEB: the provider takes libibverbs1 of the rdma-core
# release it was built against only: another release can lay the private
# interface out anew under the same symbol version.
provider_bound() {
	local v r dep

	v=$(dpkg-query --admindir="$base/var/lib/dpkg" -W -f '${Version}' libibverbs1) ||
		return
	r=${v%%.*}
	dep=$(dpkg-deb -f "$1" Depends)
	echo "# Depends: $dep"
	if ! echo "$dep" | grep -Eq "libibverbs1 \(>= $r(~|\.[0-9.]*)?\)" ||
	   ! echo "$dep" | grep -Fq "libibverbs1 (<< $((r + 1))~)"; then
		echo "# not bound to libibverbs1 $v's release"
		return 1
	fi
}

rm -rf "$out"
mkdir -p "$out"
base=$(qemu-scripts/rootfs.sh "$rel")
check "root filesystem (rootfs.sh)" test -n "$base" || finish

cp -a "$base" "$out/buildroot"
check "build tools (debhelper, dh-dkms) in a scratch copy" \
	logged "$out/tools.log" in_root "$out/buildroot" \
	"$APT update && $APT install --no-install-recommends build-essential debhelper dh-dkms dpkg-dev" || finish
check "make deb with $rel's tools" \
	logged "$out/deb.log" in_root "$out/buildroot" "make deb" || finish
mv build/deb/*.deb "$out/"
rm -rf "$out/buildroot" build/deb
ls "$out"/*.deb | sed 's/^/# /'
check "the provider takes $rel's libibverbs1 release only" \
	provider_bound "$out"/ibverbs-provider-softrdma_*.deb
# lintian of the release the packages are for: this host's own.
if [ "$(. /etc/os-release && echo "$VERSION_CODENAME")" = "$rel" ]; then
	check "lintian: no error or warning" \
		logged "$out/lintian.log" lintian --fail-on error,warning "$out"/*.deb
fi

cp -a "$base" "$out/root"
files "$out/root" >"$out/files.before"
debs=$(for p in $PKGS; do ls "$out"/${p}_*.deb; done | tr '\n' ' ')
check "apt install ./softrdma-dkms ./ibverbs-provider-softrdma" \
	logged "$out/install.log" in_root "$out/root" \
	"$APT update && $APT install $debs" || finish
in_root "$out/root" "dkms status" | sed 's/^/# /'

echo "== $rel: the installed packages (VM)"
VM_ROOTFS=$out/root qemu-scripts/vm-run.sh -t 600 -o "$out/vm" -- \
	selftests/run.sh --exec package
vm_rc=$?
p=$(grep -Ecs '^ok [0-9]+' "$out/vm/console.log")
f=$(grep -Ecs '^not ok [0-9]+' "$out/vm/console.log")
passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
if [ "${p:-0}" -eq 0 ] && [ "${f:-0}" -eq 0 ]; then
	echo "not ok - $rel package: no results from the VM (exit $vm_rc): see $out/vm"
	failed=$((failed + 1))
fi
vm_failed $vm_rc "$out/vm"

check "apt purge, then autoremove of what they pulled in" \
	logged "$out/purge.log" in_root "$out/root" \
	"$APT purge $PKGS && $APT autoremove --purge"
files "$out/root" >"$out/files.after"
check "no file left behind after the purge" left_behind
finish
