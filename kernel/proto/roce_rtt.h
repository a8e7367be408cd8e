/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The requester's round-trip estimate, and the probe timeout drawn from
 * it. A lost last packet of a message, or its lost ACK, leaves no later
 * packet to reveal the gap: without a probe the requester waits out the
 * QP's whole ACK timeout (67 ms at timeout 14, 1.07 s at rdma_cm's 18).
 * So, as TCP's tail loss probe (RFC 8985), it sends the oldest
 * unacknowledged packet again, asking for an ACK, once no ACK has come
 * for a few round trips.
 *
 * The estimate is RFC 6298's: a smoothed RTT and its mean deviation, fed
 * one sample per round trip from a packet sent once (Karn: never from a
 * packet sent again, whose ACK may answer either copy).
 */
#ifndef SOFTRDMA_ROCE_RTT_H
#define SOFTRDMA_ROCE_RTT_H

#include "proto_port.h"

/*
 * The probe timeout's floor: two ticks of a guest's timer (HZ 250), as
 * TCP's TCP_TIMEOUT_MIN; a spurious probe costs one packet, a late one
 * a round trip's idle wait.
 */
#define ROCE_PTO_MIN_US		5000

/**
 * struct roce_rtt - round-trip estimate, in microseconds
 * @srtt: smoothed round trip; 0 until the first sample
 * @rttvar: its mean deviation
 */
struct roce_rtt {
	u32 srtt;
	u32 rttvar;
};

static inline void roce_rtt_init(struct roce_rtt *r)
{
	r->srtt = 0;
	r->rttvar = 0;
}

/* One round-trip sample of @us microseconds (RFC 6298 2.2, 2.3). */
static inline void roce_rtt_sample(struct roce_rtt *r, u32 us)
{
	u32 err;

	if (!us)
		us = 1;		/* 0 means "no estimate yet" */
	if (!r->srtt) {
		r->srtt = us;
		r->rttvar = us / 2;
		return;
	}
	err = r->srtt > us ? r->srtt - us : us - r->srtt;
	r->rttvar = (u32)(((u64)r->rttvar * 3 + err) / 4);
	r->srtt = (u32)(((u64)r->srtt * 7 + us) / 8);
}

/*
 * The probe timeout: max(2 * SRTT, SRTT + 4 * RTTVAR, the floor), in
 * microseconds (RFC 8985 7.2 without its delayed-ACK allowance: the
 * responder answers an AckReq at once). 0 before the first sample: no
 * probe then, the QP's timer alone.
 */
static inline u32 roce_rtt_pto_us(const struct roce_rtt *r)
{
	u64 pto, var;

	if (!r->srtt)
		return 0;
	pto = 2ULL * r->srtt;
	var = r->srtt + 4ULL * r->rttvar;
	if (var > pto)
		pto = var;
	if (pto < ROCE_PTO_MIN_US)
		pto = ROCE_PTO_MIN_US;
	return pto > 0xffffffffULL ? 0xffffffffU : (u32)pto;
}

#endif /* SOFTRDMA_ROCE_RTT_H */
