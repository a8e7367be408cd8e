/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The requester's congestion window: how many request packets an RC QP
 * keeps unacknowledged. It opens to the whole PSN window as ACKs come
 * back; a retry timeout shrinks it to one packet, a sequence NAK or a
 * CNP halves it (once per round trip), and ACKs open it again, doubling
 * per round trip up to the threshold set at the loss, then by one packet
 * per window (TCP's slow start and congestion avoidance). So after a
 * loss the QP does not resend its whole window into a queue that is
 * already full: the timeout resends the first unacknowledged packet
 * alone, and the rest follows as ACKs return.
 */
#ifndef SOFTRDMA_ROCE_CWND_H
#define SOFTRDMA_ROCE_CWND_H

#include "proto_port.h"

/**
 * struct roce_cwnd - window state
 * @cwnd: packets allowed in flight, 1 .. the PSN window
 * @ssthresh: above this the window grows by one packet per window
 * @acked: packets acknowledged towards the next one-packet growth
 * @since_cut: packets acknowledged since the window was last cut
 * @cut_flight: the window when it was last cut: once that many packets
 *	are acknowledged after it, a round trip has passed
 */
struct roce_cwnd {
	u32 cwnd;
	u32 ssthresh;
	u32 acked;
	u32 since_cut;
	u32 cut_flight;
};

/*
 * A new connection starts with @initial packets, not the whole window: a
 * window of big packets sent at once into a slow link's queue may take
 * longer to drain than the ACK timeout.
 */
static inline void roce_cwnd_init(struct roce_cwnd *w, u32 initial, u32 max)
{
	w->cwnd = initial < max ? initial : max;
	w->ssthresh = max;
	w->acked = 0;
	w->since_cut = 0;
	w->cut_flight = 0;
}

/* @n more packets acknowledged. */
static inline void roce_cwnd_ack(struct roce_cwnd *w, u32 n, u32 max)
{
	w->since_cut += n;
	if (w->cwnd >= max)
		return;
	if (w->cwnd < w->ssthresh) {
		u32 top = w->ssthresh < max ? w->ssthresh : max;

		w->cwnd = w->cwnd + n < top ? w->cwnd + n : top;
		return;
	}
	w->acked += n;
	while (w->acked >= w->cwnd && w->cwnd < max) {
		w->acked -= w->cwnd;
		w->cwnd++;
	}
}

/* A retry timeout with @inflight packets unacknowledged. */
static inline void roce_cwnd_timeout(struct roce_cwnd *w, u32 inflight)
{
	w->ssthresh = inflight / 2 > 2 ? inflight / 2 : 2;
	w->cwnd = 1;
	w->acked = 0;
	w->since_cut = 0;
	w->cut_flight = inflight;
}

/*
 * A sequence NAK (a packet lost, later ones through) or a CNP (a queue
 * building): halve the window, but once per window of packets
 * acknowledged (a round trip), as TCP does once per loss episode and on
 * ECN echoes: the NAKs and CNPs of one round trip tell of one queue, and
 * a go-back-N resend that meets a second loss is still the same episode.
 */
static inline void roce_cwnd_cut(struct roce_cwnd *w)
{
	if (w->since_cut < w->cut_flight)
		return;
	w->cut_flight = w->cwnd;
	w->ssthresh = w->cwnd / 2 > 2 ? w->cwnd / 2 : 2;
	w->cwnd = w->ssthresh;
	w->acked = 0;
	w->since_cut = 0;
}

#endif /* SOFTRDMA_ROCE_CWND_H */
