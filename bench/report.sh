#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# report.sh CSV OUTDIR: softrdma next to rdma_rxe from bench/guest.sh's
# CSV: a table of ratios on stdout, OUTDIR/bench.csv and OUTDIR/bench.png.
# Bandwidth and message rate: softrdma/rxe (higher is better);
# latency: softrdma/rxe (lower is better). Each value is the median of
# the runs of its point.
set -eu
csv=$1
out=$2
mkdir -p "$out"
. "$(dirname "$0")/median_awk.sh"

awk -F, "$MEDIAN_AWK"'
	{ runs[$1 "," $2 "," $3] = runs[$1 "," $2 "," $3] " " $4; key[$2 "," $3] = 1 }
	END {
		for (k in runs) {
			n = sorted(runs[k], a)
			v[k] = n ? median(a, n) : ""
		}
		print "test,bytes,softrdma,rxe,ratio"
		for (k in key) {
			s = v["srdma0," k]; r = v["rxe0," k]
			ratio = (s != "" && r != "" && r + 0 > 0) ? sprintf("%.2f", s / r) : "n/a"
			print k "," s "," r "," ratio
		}
	}' "$csv" | { read -r head; echo "$head"; sort -t, -k1,1 -k2,2n; } >"$out/bench.csv"

printf '%-16s %9s %12s %12s %8s\n' test bytes softrdma rdma_rxe ratio
tail -n +2 "$out/bench.csv" |
	awk -F, '{ printf "%-16s %9s %12s %12s %8s\n", $1, $2, $3, $4, $5 }'

counters=$(dirname "$csv")/bench-counters.txt
if [ -s "$counters" ]; then
	echo "counters over the whole run (rdma statistic; rxe has its own names):"
	sed 's/^/  /' "$counters"
	cp "$counters" "$out/"
fi

command -v gnuplot >/dev/null || { echo "gnuplot missing: no plot"; exit 0; }
grep '^write_bw_MBps,' "$out/bench.csv" | tr , ' ' >"$out/bw.dat"
grep '^write_lat_us,' "$out/bench.csv" | tr , ' ' >"$out/lat.dat"
gnuplot <<GP
set terminal png size 1000,450 noenhanced
set output "$out/bench.png"
set format x "%.0s%cB"
set key left top
set multiplot layout 1,2 title "softrdma vs rdma_rxe (same VM, veth, TCG)"
set logscale x 2
set xlabel "message size [B]"
set ylabel "MB/s"
set title "ib_write_bw"
plot "$out/bw.dat" using 2:3 with linespoints title "softrdma", \
     "$out/bw.dat" using 2:4 with linespoints title "rdma_rxe"
set ylabel "usec"
set title "ib_write_lat (typical)"
plot "$out/lat.dat" using 2:3 with linespoints title "softrdma", \
     "$out/lat.dat" using 2:4 with linespoints title "rdma_rxe"
unset multiplot
GP
echo "plot: $out/bench.png, data: $out/bench.csv"
