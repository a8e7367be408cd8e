# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared by the host-side check scripts (check.sh, check-release.sh,
# check-package.sh, check-debug.sh, newcomer.sh): one-test steps and the "N passed, N
# failed, N skipped" counts they add up and print last, and the userland
# of another release. CHECK_LABEL prefixes the step names.

passed=0 failed=0 skipped=0

# check NAME CMD...: a one-test step; returns CMD's success.
check() {
	local name=$1
	shift
	if "$@"; then
		echo "ok - ${CHECK_LABEL:-}$name"
		passed=$((passed + 1))
	else
		echo "not ok - ${CHECK_LABEL:-}$name"
		failed=$((failed + 1))
		return 1
	fi
}

# add_counts "N passed, N failed, N skipped"; anything else is a failure.
add_counts() {
	local p f s
	read -r p f s < <(echo "$1" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ -z "$p" ]; then
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# add_count_file FILE: add a VM's "P F S" counts file; none is a failure.
add_count_file() {
	local p f s
	if read -r p f s 2>/dev/null <"$1"; then
		add_counts "$p passed, $f failed, $s skipped"
	else
		echo "not ok - ${CHECK_LABEL:-}no results in $1"
		failed=$((failed + 1))
	fi
}

# vm_failed RC OUTDIR: a VM run that failed (RC not 0) with a clean
# count is a failure too: a kernel report, a crash or a timeout.
vm_failed() {
	[ "$1" -ne 0 ] && [ "$failed" -eq 0 ] || return 0
	echo "not ok - ${CHECK_LABEL:-}VM run failed (exit $1): see $2"
	failed=1
}

# print_counts: kselftest's totals and the closing line; fails if anything
# failed.
print_counts() {
	echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

# release_make ROOT provider|progs OUT: in the release root filesystem
# ROOT (rootfs.sh), with its compiler and rdma-core, build the provider or
# the selftests' programs that depend on that rdma-core into OUT.
release_make() {
	case $2 in
	provider) qemu-scripts/rootfs-run.sh "$1" make -C provider O="$3" ;;
	progs) qemu-scripts/rootfs-run.sh "$1" make -C selftests release-progs OUT="$3" ;;
	*) return 2 ;;
	esac
}

# release_export ROOT OUT: the test VM boots ROOT and takes the provider
# and programs that release_make built under OUT (OUT/provider, OUT/progs).
release_export() {
	export VM_ROOTFS=$1 SRDMA_PROVIDER=$2/provider/libsoftrdma \
		RELEASE_PROGS=$2/progs
}
