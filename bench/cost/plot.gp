# SPDX-License-Identifier: GPL-2.0
# gnuplot -e "dir='OUTDIR'" bench/cost/plot.gp: OUTDIR/cost.png from
# report.py's cost.dat, a panel per operation, a bar per device and
# kernel, stacked by class (kernel instructions per message).
set terminal pngcairo size 1400,520 noenhanced font ",10"
set output dir . "/cost.png"
n = int(system("wc -l <" . dir . "/cost-ops.txt"))
set multiplot layout 1, n title "make bench-cost: kernel instructions per message (both sides)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics rotate by -30 scale 0
set format y "%.0s%c"
set grid ytics
set key top left font ",8"
do for [i = 1:n] {
	set title system(sprintf("sed -n %dp %s/cost-ops.txt", i, dir))
	plot for [c = 2:6] dir . "/cost.dat" index (i - 1) using c:xtic(1) \
		title (i == 1 ? word("ICRC copy skb/IP/UDP transport rest", c - 1) : "")
}
unset multiplot
