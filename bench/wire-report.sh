#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# wire-report.sh OUTDIR LABEL=DIR...: the tables and plots of "make
# bench-wire" from the wire.csv (and series-*.dat) that bench/wire.sh or
# bench/pair.sh left in each DIR, LABEL naming where it ran. To stdout and
# OUTDIR/wire.txt:
#  - speed: each point's median over its runs with the spread (min-max),
#    softrdma next to rdma_rxe, the ratio and the goal of issue 14;
#  - a shared bottleneck: each flow's mean rate from its 5th second on,
#    link utilisation (the flows' goodput over the tbf's rate), Jain's
#    fairness over the flows, and the 8 B latency (median and 99th
#    percentile) across the queue meanwhile; per mode (softrdma with CC
#    on and off, rdma_rxe);
#  - loss: median goodput of one flow at 1% and 5% random loss behind a
#    drop-tail bottleneck, per mode, with the spread;
#  - rpc: request/response time per iteration, loss-free and lossy at QP
#    timeouts 14 and 18, the slowdowns and issue 36's goals (4x, 6x);
#  - storage: fio through NVMe-oF and NFS/RDMA, loss-free and across 1%
#    loss, and the share the loss kept (issue 36's goal: 80%).
# OUTDIR/wire-LABEL.png: each flow's rate over time, a panel a mode.
set -eu
out=$1
shift
mkdir -p "$out"
. "$(dirname "$0")/median_awk.sh"

# stats: "MODE,TEST,PARAM,VALUE" lines in, "MODE TEST PARAM MEDIAN MIN MAX
# RUNS" lines out.
stats() {
	awk -F, "$MEDIAN_AWK"'
		# 0 is a rate only for a flow that gave up (loss); elsewhere
		# it is the clock of perftest failing under TCG (wire_lib.sh).
		$4 + 0 == 0 && $2 != "loss_MBps" { next }
		{ k = $1 " " $2 " " $3; v[k] = v[k] " " $4 }
		END {
			for (k in v) {
				n = sorted(v[k], a)
				print k, median(a, n), a[1], a[n], n
			}
		}'
}

# speed LABEL STATS: the speed table of one setting (none if the speed
# case did not run: WIRE_CASES).
speed() {
	grep -Eq ' (write_bw_MBps|send_rate_Mpps|write_lat_us) ' "$2" || return 0
	awk -v l="$1" '
		function cell(m, k) {
			if (!((m " " k) in med))
				return sprintf("%-26s", "-")
			return sprintf("%-26s", sprintf("%.4g [%.4g-%.4g]",
				med[m " " k], lo[m " " k], hi[m " " k]))
		}
		{ med[$1 " " $2 " " $3] = $4; lo[$1 " " $2 " " $3] = $5
		  hi[$1 " " $2 " " $3] = $6 }
		END {
			split("write_bw_MBps 4096 >=2.0|write_bw_MBps 65536 >=2.0|" \
			      "send_rate_Mpps 64 >=3.0|write_lat_us 8 <=0.7", pts, "|")
			printf "%s\n%-15s %6s %-26s %-26s %6s %6s\n", l, "test", "bytes",
				"softrdma med [min-max]", "rdma_rxe med [min-max]", "ratio", "goal"
			for (i = 1; i <= 4; i++) {
				split(pts[i], p, " ")
				k = p[1] " " p[2]
				# (a reference would create the element)
				s = (("softrdma " k) in med) ? med["softrdma " k] : ""
				r = (("rxe " k) in med) ? med["rxe " k] : ""
				printf "%-15s %6s %s %s %6s %6s\n", p[1], p[2],
					cell("softrdma", k), cell("rxe", k),
					(s != "" && r + 0 > 0) ? sprintf("%.2f", s / r) : "-", p[3]
			}
		}' "$2"
}

# shared LABEL DIR STATS: the bottleneck table of one setting.
shared() {
	local mode f rate
	rate=$(awk '$1 == "link" && $2 == "bn_rate_mbit" { print $4 }' "$3")
	echo "$1: flows through a ${rate} Mbit/s tbf with an ECN-marking codel"
	printf '%-15s %-28s %7s %7s %9s %9s\n' mode "flows' mean MB/s" util jain "lat_us" "p99_us"
	for f in "$2"/series-*.dat; do
		[ -e "$f" ] || continue
		mode=${f##*/series-}
		mode=${mode%.dat}
		awk -v m="$mode" -v r="$rate" -v st="$3" '
			NR >= 5 { for (i = 2; i <= NF; i++) { s[i] += $i; n[i]++ }
				  if (NF - 1 > nf) nf = NF - 1 }
			END {
				while ((getline l < st) > 0) {
					split(l, a, " ")
					if (a[1] == m && a[2] == "bn_lat_us") lat = a[4]
					if (a[1] == m && a[2] == "bn_lat_p99_us") p99 = a[4]
				}
				for (i = 2; i <= nf + 1; i++) {
					x = n[i] ? s[i] / n[i] : 0
					flows = flows sprintf("%.2f ", x); sum += x; sq += x * x
				}
				# perftest MB: 2^20 bytes; tbf rate: 10^6 bit/s.
				printf "%-15s %-28s %7.2f %7.3f %9s %9s\n", m, flows,
					(r ? sum * 8 * 1.048576 / r : 0),
					(sq ? sum * sum / (nf * sq) : 0),
					(lat == "" ? "-" : lat), (p99 == "" ? "-" : p99)
			}' "$f"
	done
}

# lossy LABEL STATS: the loss table of one setting.
lossy() {
	echo "$1: one 64 KiB flow, drop-tail bottleneck with random loss, MB/s med [min-max]"
	awk '$2 == "loss_MBps" { printf "%-15s %3s%%  %.3g [%.3g-%.3g]  (%d runs)\n",
		$1, $3, $4, $5, $6, $7 }' "$2" | sort
}

# rpc LABEL STATS: the request/response table of one setting.
rpc() {
	grep -q ' rpc_' "$2" || return 0
	echo "$1: ping-pong (ib_send_lat t_avg, us/iteration), 1 ms each way, MTU 1024"
	awk '
		$2 ~ /^rpc_/ { v[$1 " " $2 " " $3] = $4 }
		function f(x) { return x == "" ? "-" : sprintf("%.0f", x) }
		function r(a, b) { return (a == "" || b + 0 == 0) ? "-" : sprintf("%.1fx", a / b) }
		END {
			printf "%-9s %6s %8s %9s %6s %9s %6s  %s\n", "mode", "bytes",
				"clean", "lossy t14", "slow", "lossy t18", "slow", "goal"
			split("softrdma rxe", modes, " ")
			for (i = 1; i <= 2; i++)
				for (s = 4096; s <= 65536; s *= 16) {
					m = modes[i]
					c = v[m " rpc_clean_us " s]
					a = v[m " rpc_lossy_t14_us " s]
					b = v[m " rpc_lossy_t18_us " s]
					if (c == "" && a == "" && b == "")
						continue
					printf "%-9s %6d %8s %9s %6s %9s %6s  <=4x, <=6x\n",
						m, s, f(c), f(a), r(a, c), f(b), r(b, c)
				}
		}' "$2"
}

# ulp LABEL STATS: the storage table of one setting: fio through
# NVMe-oF and NFS/RDMA, loss-free and lossy, and what the loss kept.
ulp() {
	grep -q ' ulp_' "$2" || return 0
	echo "$1: fio 128 KiB at queue depth 16 across the link, KiB/s"
	awk '
		$2 ~ /^ulp_/ { t = $2; sub(/^ulp_/, "", t); sub(/_KiBps$/, "", t)
			v[$1 " " t " " ($3 + 0 ? "lossy" : "clean")] = $4
			l[$1 " " t] = $3 + 0 ? $3 : l[$1 " " t]; k[$1 " " t] = 1 }
		END {
			printf "%-9s %-11s %9s %9s %6s  %s\n", "mode", "ulp", "clean",
				"lossy", "kept", "loss"
			for (x in k) {
				split(x, p, " ")
				c = v[x " clean"]; o = v[x " lossy"]
				printf "%-9s %-11s %9.0f %9.0f %5s  %s%%\n", p[1], p[2], c, o,
					c + 0 ? sprintf("%.0f%%", 100 * o / c) : "-", l[x]
			}
		}' "$2" | sort
}

# plot LABEL DIR: each flow's rate over time, a panel a mode.
plot() {
	local f files=() n top
	for f in "$2"/series-*.dat; do [ -e "$f" ] && files+=("$f"); done
	n=${#files[@]}
	[ "$n" -gt 0 ] && command -v gnuplot >/dev/null || return 0
	# One scale for every panel
	top=$(cat "${files[@]}" | awk '{ for (i = 2; i <= NF; i++) if ($i > m) m = $i }
		END { print m * 1.15 + 0.01 }')
	{
		echo "set terminal png size $((n * 500)),420 noenhanced"
		echo "set output '$out/wire-$1.png'"
		echo "set multiplot layout 1,$n title '$1: each flow through one bottleneck'"
		echo "set xlabel 'second'; set ylabel 'MB/s'; set yrange [0:$top]; set key top right"
		for f in "${files[@]}"; do
			echo "set title '$(basename "$f" .dat | sed 's/^series-//')'"
			echo "plot for [c=2:$(awk '{ if (NF > m) m = NF } END { print m + 0 }' "$f")] '$f' using 1:c with lines title sprintf('flow %d', c - 1)"
		done
		echo "unset multiplot"
	} | gnuplot && echo "plot: $out/wire-$1.png"
}

for arg; do
	label=${arg%%=*} dir=${arg#*=}
	[ -s "$dir/wire.csv" ] || { echo "$label: no $dir/wire.csv"; continue; }
	stats <"$dir/wire.csv" | sort >"$out/wire-$label.stats"
	echo
	speed "$label" "$out/wire-$label.stats"
	if ls "$dir"/series-*.dat >/dev/null 2>&1; then
		echo
		shared "$label" "$dir" "$out/wire-$label.stats"
		echo
		lossy "$label" "$out/wire-$label.stats"
		plot "$label" "$dir"
	fi
	echo
	rpc "$label" "$out/wire-$label.stats"
	ulp "$label" "$out/wire-$label.stats"
	[ -s "$dir/wire-counters.txt" ] && cp "$dir/wire-counters.txt" "$out/wire-$label-counters.txt"
done | tee "$out/wire.txt"
