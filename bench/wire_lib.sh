#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What bench/wire.sh (two namespaces) and bench/pair.sh (two VMs) share:
# the speed points and the CSV row of a perftest result. Each defines
# point MODE NAME PARAM COLUMN TOOL SIZE ARGS... for its own topology.

# row MODE NAME PARAM COLUMN SIZE [ZERO]: column COLUMN of perftest's
# result row for SIZE on stdin, as a CSV row MODE,NAME,PARAM,VALUE. A
# result of 0 is perftest's clock failing under TCG (its cycles-per-us
# estimate: "Correlation coefficient r^2 < 0.9"), not a rate: no row, a
# note on stderr. No result row at all is a failed run: a row of 0 with
# ZERO set (a flow that gave up moved nothing), else none.
row() {
	awk -v m="$1" -v n="$2" -v p="$3" -v c="$4" -v s="$5" -v z="${6:-}" '
		$1 == s && NF >= c {
			found = 1
			if ($c + 0 > 0)
				print m "," n "," p "," $c
			else
				print "# " m " " n " " p ": a result of 0 (perftest'"'"'s clock), left out" >"/dev/stderr"
		}
		END { if (!found && z) print m "," n "," p ",0" }'
}

# speed MODE: write bandwidth at 4 KiB and 64 KiB, the 64 B send message
# rate, and the 8 B write latency (t_typical: the run's median).
speed() {
	point "$1" write_bw_MBps 4096 4 ib_write_bw 4096 -D "$SECS"
	point "$1" write_bw_MBps 65536 4 ib_write_bw 65536 -D "$SECS"
	point "$1" send_rate_Mpps 64 5 ib_send_bw 64 -D "$SECS"
	point "$1" write_lat_us 8 5 ib_write_lat 8 -n 1000
}
