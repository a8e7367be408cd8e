#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# newcomer.sh: README's first command, "make demo", as on a fresh machine,
# where the kernel headers appear only once "make deps" has installed
# them. In a private mount namespace /lib/modules is empty until deps runs
# apt-get, which here is a stand-in first in PATH that only brings the
# real /lib/modules back; make demo must then build for that kernel and
# run the demo guest, at its first call. A Makefile that decides the
# kernel before deps has run fails here. Prints "ok"/"not ok" lines and
# the closing line (check_lib.sh).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
. selftests/host/check_lib.sh

if [ "${1:-}" = --inside ]; then
	# In the namespace: hide /lib/modules, keep it at $2 for apt-get.
	mount --bind /lib/modules "$2/real" &&
		mount -t tmpfs -o mode=755 none /lib/modules || exit 1
	[ -z "$(ls /lib/modules)" ] || exit 1
	exec make demo
fi

t=$(mktemp -d "$TOP/build/newcomer.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin" "$t/real"
cat >"$t/bin/apt-get" <<EOF
#!/bin/sh
# apt-get as on a fresh machine: install brings the headers.
echo "apt-get \$*"
case " \$* " in *" install "*) mount --bind "$t/real" /lib/modules ;; esac
EOF
chmod +x "$t/bin/apt-get"
kver=$(make -s print-kver)

# demo_fresh: make demo, from a shell of its own (no make variables of
# ours), in the namespace.
demo_fresh() {
	env -u KVER -u KDIR -u MAKEFLAGS -u MAKELEVEL -u MFLAGS PATH="$t/bin:$PATH" \
		unshare -m --propagation private "$0" --inside "$t" >"$t/demo.log" 2>&1
	local rc=$?
	cp "$t/demo.log" "$TOP/build/newcomer-demo.log"
	[ $rc -eq 0 ] || { tail -n 15 "$t/demo.log" | sed 's/^/# /'; return 1; }
}
check "make demo at its first call, headers installed by deps" demo_fresh
check "it built for the kernel deps installed ($kver)" \
	grep -q "^softrdma: kernel $kver (" "$t/demo.log"
check "the demo guest listed srdma0 and ran rping -V" eval \
	"grep -q 'hca_id:.*srdma0' \"$t/demo.log\" && grep -q 'client DISCONNECT EVENT' \"$t/demo.log\""
print_counts
