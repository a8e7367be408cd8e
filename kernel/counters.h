/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-device counters, read with "rdma statistic" (port 1 hw counters).
 *
 * Counting is a per-CPU increment: no atomics, no shared cache line on
 * the data path. Readers sum the CPUs.
 */
#ifndef SRDMA_COUNTERS_H
#define SRDMA_COUNTERS_H

#include <linux/percpu.h>

#include "proto/roce_drop.h"

enum srdma_counter {
	SRDMA_CNT_TX_PKTS,
	SRDMA_CNT_TX_BYTES,		/* IP packets, headers included */
	SRDMA_CNT_RX_PKTS,		/* every datagram, dropped or not */
	SRDMA_CNT_RX_BYTES,
	SRDMA_CNT_RETRANSMITS,		/* request packets sent again */
	SRDMA_CNT_RETRY_TIMEOUTS,	/* local ACK timeouts */
	SRDMA_CNT_TLP_PROBES,		/* tail loss probes sent (comp.c) */
	SRDMA_CNT_TLP_RECOVERIES,	/* probes answered by progress */
	SRDMA_CNT_SEQ_NAKS_SENT,
	SRDMA_CNT_SEQ_NAKS_RCVD,
	SRDMA_CNT_SEQ_NAKS_ONE,		/* answered by one packet, not go-back-N */
	SRDMA_CNT_RNR_NAKS_SENT,
	SRDMA_CNT_RNR_NAKS_RCVD,
	SRDMA_CNT_DUP_REQUESTS,		/* answered again, not executed */
	SRDMA_CNT_OOO_HELD,		/* packets kept past a gap (reorder.c) */
	SRDMA_CNT_RESP_GAPS_ASKED,	/* read responses asked for alone */
	SRDMA_CNT_ODP_FAULTS,		/* ODP pages asked to be mapped */
	/* Congestion control (cc.c), named as mlx5 names them. */
	SRDMA_CNT_NP_ECN_MARKED,	/* packets taken in with CE set */
	SRDMA_CNT_NP_CNP_SENT,
	SRDMA_CNT_RP_CNP_HANDLED,
	SRDMA_CNT_RP_RATE_CUTS,		/* CNPs that cut a QP's rate */
	SRDMA_CNT_RP_PACE_WAITS,	/* sends held back by a QP's rate */
	SRDMA_CNT_RX_DROPS,		/* sum of the reasons below */
	/* Malformed packets, in enum roce_drop_reason order. */
	SRDMA_CNT_DROP_SHORT,
	SRDMA_CNT_DROP_BAD_VERSION,
	SRDMA_CNT_DROP_BAD_OPCODE,
	SRDMA_CNT_DROP_BAD_PAD,
	SRDMA_CNT_DROP_BAD_LENGTH,
	SRDMA_CNT_DROP_BAD_ICRC,
	/* Well-formed packets nothing can take. */
	SRDMA_CNT_DROP_NO_QP,		/* no QP with that number here */
	SRDMA_CNT_DROP_QP_TYPE,		/* opcode not of the QP's transport */
	SRDMA_CNT_DROP_QP_STATE,	/* QP not in a state that receives */
	SRDMA_CNT_DROP_PSN,		/* stale or outside the window */
	SRDMA_CNT_DROP_SOURCE,		/* not from the QP's peer, or P_Key */
	SRDMA_CNT_DROP_NOMEM,		/* no memory or queue room */
	SRDMA_CNT_DROP_BAD_QKEY,	/* UD: Q_Key not the QP's */
	SRDMA_CNT_DROP_NO_RECV,		/* UC, UD: no receive WQE posted */
	SRDMA_CNT_DROP_BAD_REQUEST,	/* UC: refused, and no NAK to say so */
	SRDMA_CNT_MAX
};

static_assert(SRDMA_CNT_DROP_BAD_ICRC - SRDMA_CNT_DROP_SHORT ==
	      ROCE_DROP_BAD_ICRC - ROCE_DROP_SHORT);
static_assert(ROCE_DROP_REASON_MAX == ROCE_DROP_BAD_ICRC + 1);

struct srdma_counters {
	u64 cnt[SRDMA_CNT_MAX];
};

#define srdma_count(sdev, c)		this_cpu_inc((sdev)->counters->cnt[c])
#define srdma_count_add(sdev, c, n)	this_cpu_add((sdev)->counters->cnt[c], n)

/* A dropped packet, by reason: a SRDMA_CNT_DROP_* counter. */
#define srdma_drop(sdev, c) do {				\
	srdma_count(sdev, SRDMA_CNT_RX_DROPS);			\
	srdma_count(sdev, c);					\
} while (0)

/* The counter of a packet the protocol core refused: enum roce_drop_reason. */
#define srdma_roce_drop_cnt(reason)	\
	(SRDMA_CNT_DROP_SHORT + (reason) - ROCE_DROP_SHORT)

#endif /* SRDMA_COUNTERS_H */
