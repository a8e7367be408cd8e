#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Two hosts (vm-pair.sh), the standard tools across the link, each host as
# server and as client. Host b always runs softrdma; host a runs softrdma,
# or rdma_rxe with PAIR_A=rxe: the interoperability test, where host b
# serves too (in make check the SEND, WRITE, READ, atomic and rdma_cm
# tools; all of them in make check-all, lib.sh's check_full).
. "$(dirname "$0")/../lib/lib.sh"
trap srdma_cleanup EXIT

pair_device_up || exit $KSFT_FAIL

# across SERVER_HOST TOOL ARGS...: a tool with a TCP side channel.
across() {
	local srv=$1 tool=$2
	shift 2
	across_run "$srv" "$tool $*" "ss -Hltn 'sport = :18515' | grep -q ." \
		"$tool -d $DEV $*" "$tool -d $DEV $* PEER"
}

# across_cm SERVER_HOST NAME SERVER_CMD CLIENT_CMD: an rdma_cm program.
across_cm() {
	across_run "$1" "$2" "cm_listening ${3%% *}" "$3" "$4"
}

# virtio-net programs a new group into QEMU's receive filter from a work
# item, after the group shows in "ip maddr": datagrams sent in between
# are filtered out by QEMU, never seen by the guest. The test link takes
# every group, so that a sender as quick as rdma_rxe's does not race it.
ip link set dev "$VM_IFACE" allmulticast on
# Known, and not softrdma's: mckey's sender destroys its QP right after
# posting its 20 unsignaled sends, and the rdma_rxe of Linux 6.12 sends
# from a work item, so the WQEs not sent by then are flushed. On trixie
# rxe's sent_pkts counted 7 of 20, and softrdma received those 7 and
# dropped none (bookworm's and sid's rxe send all 20).
[ "${PAIR_A:-}" = rxe ] && PAIR_XFAIL+=$'\n'"mckey|mckey's sender exits before rdma_rxe (Linux 6.12) has sent all it posted"

# XRC between two softrdma hosts: rdma_rxe has none. Against rdma_rxe
# each side is server and client; between two softrdma hosts the other
# direction would run the same code again.
xrc=1 servers=a
[ "${PAIR_A:-}" = rxe ] && xrc=0 servers="a b"

# short SERVER_HOST: true when that server runs the first five only.
short() {
	[ "$1" = b ] && ! check_full
}

# Per direction 19 tests (20 with XRC), and the mckey member's drop
# count on the server host; 5 when short.
plan=0
for srv in $servers; do
	if short $srv; then
		plan=$((plan + 5))
		continue
	fi
	plan=$((plan + 19 + xrc))
	[ "$VM_HOST" = "$srv" ] && plan=$((plan + 1))
done
ktap_plan $plan
for srv in $servers; do
	across $srv ibv_rc_pingpong -g 1 -s 4096 -n 100
	across $srv ib_write_bw -x 1 -F -s 65536 -n 100
	across $srv ib_read_bw -x 1 -F -s 65536 -n 100
	across $srv ib_atomic_bw -x 1 -F -n 500
	across_cm $srv "rping -V" "rping -s -C 20 -S 2000" \
		"rping -c -a PEER -C 20 -S 2000 -V"
	short $srv && continue
	across $srv ibv_rc_pingpong -g 1 -s 1000000 -n 10 -e
	across $srv ib_send_bw -x 1 -F -s 65536 -n 100
	across $srv ib_write_lat -x 1 -F -s 8 -n 100
	# UD (datagrams up to the 1024-byte MTU of a 1500-byte link), UC,
	# SRQ and atomics.
	across $srv ibv_ud_pingpong -g 1 -s 1024 -n 100
	across $srv ib_send_bw -c UD -x 1 -F -s 1024 -n 500
	across $srv ibv_uc_pingpong -g 1 -s 65536 -n 50
	across $srv ibv_srq_pingpong -g 1 -s 4096 -n 50 -q 4
	[ $xrc = 1 ] && across $srv ibv_xsrq_pingpong -g 1 -s 4096 -n 20
	# Connected through rdma_cm, its MADs on QP1.
	across_cm $srv "udaddy" "udaddy -c 2 -C 50" "udaddy -s PEER -c 2 -C 50"
	across_cm $srv "ucmatose" "ucmatose -c 2 -C 50" \
		"ucmatose -s PEER -c 2 -C 50"
	# UD multicast through rdma_cm: the server host joins (the group
	# shows in "ip maddr"), and the client host sends to the group once
	# the member's QP is attached (mckey says so after librdmacm's
	# attach, which follows the join).
	drops0=$(dev_counter "$DEV" rx_drops)
	across_run $srv "mckey" "ip maddr show | grep -q 'inet  239.4.4.4' &&
		grep -q 'receiving data transfers' \"\$out\"" \
		"mckey -m 239.4.4.4 -b $VM_IP -C 20 -S 1000" \
		"mckey -m 239.4.4.4 -b $VM_IP -s -C 20 -S 1000"
	# Whatever reached the member was taken (rdma_rxe has no such counter).
	if [ "$VM_HOST" != "$srv" ]; then
		:
	elif [ -z "$drops0" ]; then
		ktap_skip "mckey: the member dropped no datagram ($DEV)" "no rx_drops counter"
	else
		drops=$(($(dev_counter "$DEV" rx_drops) - drops0))
		ktap_print "mckey: $DEV received $(dev_counter "$DEV" rx_pkts) packets in all, dropped $drops of the group's"
		ktap_result "mckey: the member dropped no datagram ($DEV)" $((drops != 0))
	fi
	across_cm $srv "rdma_server / rdma_client" "rdma_server" \
		"rdma_client -s PEER"
	across_cm $srv "ib_send_bw -R" "ib_send_bw -d $DEV -R -F -n 200" \
		"ib_send_bw -d $DEV -R -F -n 200 PEER"
	across_cm $srv "ib_write_bw -R" "ib_write_bw -d $DEV -R -F -n 200" \
		"ib_write_bw -d $DEV -R -F -n 200 PEER"
	across_cm $srv "ib_read_lat -R" "ib_read_lat -d $DEV -R -F -n 200" \
		"ib_read_lat -d $DEV -R -F -n 200 PEER"
done
ktap_finish
