// SPDX-License-Identifier: GPL-2.0
/*
 * The RC responder's reorder buffer: requests that arrive past a gap are
 * kept, not dropped, and executed in PSN order once the gap is filled.
 *
 * A lost packet then costs the one packet sent again, not every packet
 * in flight behind it: the responder still NAKs the gap at once (the wire
 * protocol is unchanged, and a requester of any kind goes back to it),
 * but when the missing packet arrives the kept ones follow it and one ACK
 * covers them all, which moves a go-back-N requester past what it was
 * about to send again (srdma_req_forward()).
 *
 * Nothing here executes anything: a kept packet goes through the
 * responder's checks like any other when its turn comes. Each QP keeps at
 * most SRDMA_REORDER packets, the device at most SRDMA_REORDER_DEV, and
 * a kept packet pins its skb (a reference), nothing more.
 */
#include "srdma.h"

/* PSN modulo SRDMA_REORDER names a slot across the 24-bit wrap. */
static_assert((SRDMA_REORDER & (SRDMA_REORDER - 1)) == 0);

int srdma_reorder_init(struct srdma_qp *qp, gfp_t gfp)
{
	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return 0;
	qp->resp.ooo = kcalloc(SRDMA_REORDER, sizeof(*qp->resp.ooo), gfp);
	return qp->resp.ooo ? 0 : -ENOMEM;
}

static void srdma_reorder_free(struct srdma_qp *qp, struct srdma_rx_pkt *slot)
{
	consume_skb(slot->skb);
	slot->skb = NULL;
	qp->resp.ooo_count--;
	atomic_dec(&qp_sdev(qp)->ooo_held);
}

/* Drop every kept packet: a new connection, or the QP goes away. */
void srdma_reorder_purge(struct srdma_qp *qp)
{
	u32 i;

	if (!qp->resp.ooo)
		return;
	for (i = 0; i < SRDMA_REORDER && qp->resp.ooo_count; i++)
		if (qp->resp.ooo[i].skb)
			srdma_reorder_free(qp, &qp->resp.ooo[i]);
}

void srdma_reorder_fini(struct srdma_qp *qp)
{
	srdma_reorder_purge(qp);
	kfree(qp->resp.ooo);
	qp->resp.ooo = NULL;
}

/**
 * srdma_reorder_hold - keep a request that came past a gap
 * @qp: an RC or XRC target QP, rq_lock held
 * @pkt: the request, @dist PSNs after the one expected
 * @dist: how far past qp->resp.epsn, at least 1
 *
 * Return: true if kept (or already kept: a copy), false if it must be
 * dropped (too far ahead, or the device keeps too many).
 */
bool srdma_reorder_hold(struct srdma_qp *qp, const struct roce_pkt_info *pkt,
			u32 dist)
{
	const struct srdma_rx_pkt *rx = to_rx_pkt(pkt);
	struct srdma_dev *sdev = qp_sdev(qp);
	u32 psn = roce_bth_psn(pkt->bth);
	struct srdma_rx_pkt *slot;

	lockdep_assert_held(&qp->rq_lock);
	if (!qp->resp.ooo || dist >= SRDMA_REORDER)
		return false;
	slot = &qp->resp.ooo[psn % SRDMA_REORDER];
	if (slot->skb) {
		if (roce_bth_psn(slot->rp.bth) == psn)
			return true;
		/* Left behind when a read moved the PSN past it. */
		srdma_reorder_free(qp, slot);
	}
	if (atomic_inc_return(&sdev->ooo_held) > SRDMA_REORDER_DEV) {
		atomic_dec(&sdev->ooo_held);
		return false;
	}
	*slot = *rx;
	skb_get(slot->skb);	/* srdma_rx() consumes its own reference */
	qp->resp.ooo_count++;
	srdma_count(sdev, SRDMA_CNT_OOO_HELD);
	return true;
}

/**
 * srdma_reorder_next - the kept request qp->resp.epsn names, if any
 * @qp: rq_lock held
 * @out: filled with it; the caller releases out->skb with consume_skb()
 *
 * Return: true if one was taken out of the buffer.
 */
bool srdma_reorder_next(struct srdma_qp *qp, struct srdma_rx_pkt *out)
{
	struct srdma_rx_pkt *slot;

	lockdep_assert_held(&qp->rq_lock);
	if (!qp->resp.ooo_count)
		return false;
	slot = &qp->resp.ooo[qp->resp.epsn % SRDMA_REORDER];
	if (!slot->skb)
		return false;
	if (roce_bth_psn(slot->rp.bth) != qp->resp.epsn) {
		srdma_reorder_free(qp, slot);	/* stale: see above */
		return false;
	}
	*out = *slot;
	slot->skb = NULL;
	qp->resp.ooo_count--;
	atomic_dec(&qp_sdev(qp)->ooo_held);
	return true;
}
