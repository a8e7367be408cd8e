#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side helper for vm-pair.sh tests (call as "$VM_SCRIPTS/vm-sync.sh").
#
#   vm-sync.sh peer [TIMEOUT_S]
#       Wait until the peer guest answers ping on the link.
#   vm-sync.sh barrier NAME [TIMEOUT_S]
#       Block until the peer calls `vm-sync.sh barrier NAME` too; fails if
#       the peer arrives at a barrier with another NAME.  Barriers must be
#       passed in the same order on both sides.
#   vm-sync.sh tell NAME WORD [TIMEOUT_S]
#       A barrier that also trades a word: prints the peer's WORD.
#
# TIMEOUT_S defaults to 120; b retries every VM_SYNC_RETRY seconds (0.2:
# a longer wait leaves more CPU to what b runs meanwhile).  Exit status 0
# on success, 1 on timeout or mismatch.  The barrier is a TCP exchange on port $VM_SYNC_PORT (default
# 7077) of the private link: a listens (busybox nc), b keeps connecting,
# each sends NAME and checks the other's.  Plain retrying of the test's
# own connection works as well; this is for ordering steps explicitly.

set -eu

PORT=${VM_SYNC_PORT:-7077}

die() {
	echo "vm-sync[$VM_HOST]: $*" >&2
	exit 1
}

wait_peer() {
	local deadline=$((SECONDS + $1))

	until ping -c1 -W1 "$VM_PEER_IP" >/dev/null 2>&1; do
		[ $SECONDS -lt "$deadline" ] || die "peer $VM_PEER_IP not reachable"
		sleep 0.5
	done
}

# Side a: accept one connection, send NAME, print what b sent.
barrier_listen() {
	echo "$1" | timeout "$2" busybox nc -l -p "$PORT"
}

# Side b: retry until a listens, send NAME, print a's reply.  Each try
# is bounded: a connect to a guest that already powered off would
# otherwise hang for the whole TCP SYN timeout.
barrier_connect() {
	local name=$1 deadline=$((SECONDS + $2)) reply

	until reply=$(echo "$name" | timeout 5 busybox nc -w 1 "$VM_PEER_IP" "$PORT" 2>/dev/null) &&
		[ -n "$reply" ]; do
		[ $SECONDS -lt "$deadline" ] || die "no barrier listener at $VM_PEER_IP:$PORT"
		sleep "${VM_SYNC_RETRY:-0.2}"
	done
	echo "$reply"
}

# tell NAME WORD TIMEOUT: barrier NAME, each side's WORD after the name.
tell() {
	local name=$1 word=$2 timeout=$3 other

	case ${VM_HOST:-} in
	a) other=$(barrier_listen "$name $word" "$timeout") || die "barrier '$name' timed out" ;;
	b) other=$(barrier_connect "$name $word" "$timeout") ;;
	*) die "not in a vm-pair.sh guest (VM_HOST unset)" ;;
	esac
	[ "${other% *}" = "$name" ] || die "barrier '$name' met peer at '$other'"
	echo "${other##* }"
}

barrier() {
	tell "$1" - "$2" >/dev/null
}

case ${1:-} in
peer) wait_peer "${2:-120}" ;;
barrier) [ $# -ge 2 ] || die "usage: vm-sync.sh barrier NAME [TIMEOUT_S]"
	barrier "$2" "${3:-120}" ;;
tell) [ $# -ge 3 ] || die "usage: vm-sync.sh tell NAME WORD [TIMEOUT_S]"
	tell "$2" "$3" "${4:-120}" ;;
*) sed -n '4,13p' "$0" | sed 's/^# //' >&2; exit 2 ;;
esac
