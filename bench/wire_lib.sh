#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What bench/wire.sh (two namespaces) and bench/pair.sh (two VMs) share:
# the speed points and the CSV row of a perftest result. Each defines
# point MODE NAME PARAM COLUMN TOOL SIZE ARGS... for its own topology.

# row MODE NAME PARAM COLUMN SIZE: column COLUMN of perftest's result row
# for SIZE on stdin, as a CSV row MODE,NAME,PARAM,VALUE.
row() {
	awk -v m="$1" -v n="$2" -v p="$3" -v c="$4" -v s="$5" \
		'$1 == s && NF >= c { print m "," n "," p "," $c }'
}

# speed MODE: write bandwidth at 4 KiB and 64 KiB, the 64 B send message
# rate, and the 8 B write latency (t_typical: the run's median).
speed() {
	point "$1" write_bw_MBps 4096 4 ib_write_bw 4096 -D "$SECS"
	point "$1" write_bw_MBps 65536 4 ib_write_bw 65536 -D "$SECS"
	point "$1" send_rate_Mpps 64 5 ib_send_bw 64 -D "$SECS"
	point "$1" write_lat_us 8 5 ib_write_lat 8 -n 1000
}
