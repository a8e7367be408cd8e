# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared by the host-side check scripts (check.sh, check-release.sh,
# check-package.sh): one-test steps and the "N passed, N failed, N
# skipped" counts they add up and print last. CHECK_LABEL prefixes the
# step names.

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

# print_counts: the closing line; fails if anything failed.
print_counts() {
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}
