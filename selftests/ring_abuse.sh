#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Rings written by hand and raw uverbs commands from an unprivileged
# process: a corrupt SQ producer index, racing resize_cq:
# selftests/ring_abuse.c.
. "$(dirname "$0")/lib.sh"
trap srdma_cleanup EXIT

srdma_cleanup
srdma0_up || exit $KSFT_FAIL
as_nobody "${RELEASE_PROGS:-$SELFTESTS}/ring_abuse" srdma0 1
