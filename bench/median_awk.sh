# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# MEDIAN_AWK: awk functions, put before a program text, for
# report.sh and wire-report.sh. sorted(LIST, A): the space-separated
# values of LIST into A[1..n], in numeric order; returns n. median(A, N):
# the median of such a sorted A (N > 0).
# shellcheck disable=SC2034 # used where sourced
MEDIAN_AWK='
	function sorted(list, a,    n, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++)	# insertion sort: a few values
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n
	}
	function median(a, n) {
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
'
