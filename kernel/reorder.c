// SPDX-License-Identifier: GPL-2.0
/*
 * Packets that arrive past a gap are kept, not dropped, and taken in PSN
 * order once the gap is filled. Two sides of an RC QP keep them:
 * - the responder, requests (resp.c): it still NAKs the gap at once, so
 *   the wire protocol is unchanged and a requester of any kind goes back
 *   to it; when the missing packet arrives the kept ones follow it and one
 *   ACK covers them all, which moves a go-back-N requester past what it
 *   was about to send again (srdma_req_forward());
 * - the requester, read responses and atomic ACKs (comp.c): it asks again
 *   for the missing responses alone (srdma_comp_rd_gap()).
 * A lost packet then costs the one packet sent again, not every packet in
 * flight behind it.
 *
 * Nothing here executes or places anything: a kept packet goes through
 * its side's checks like any other when its turn comes. Each buffer keeps
 * at most SRDMA_REORDER packets, the device at most SRDMA_REORDER_DEV in
 * all, and a kept packet pins its skb (a reference), nothing more (the
 * slots, 14 KiB a side, are charged with the QP). A
 * buffer is guarded by the lock of its side: rq_lock for the responder's,
 * sq_lock for the requester's.
 */
#include "srdma.h"
#include "proto/roce_psn.h"

/* PSN modulo SRDMA_REORDER names a slot across the 24-bit wrap. */
static_assert((SRDMA_REORDER & (SRDMA_REORDER - 1)) == 0);

int srdma_reorder_init(struct srdma_reorder *ro, gfp_t gfp)
{
	ro->pkt = kvcalloc(SRDMA_REORDER, sizeof(*ro->pkt), gfp);
	ro->count = 0;
	return ro->pkt ? 0 : -ENOMEM;
}

/* Take @slot's packet out: the caller now owns its skb reference. */
static void srdma_reorder_detach(struct srdma_dev *sdev,
				 struct srdma_reorder *ro,
				 struct srdma_rx_pkt *slot)
{
	slot->skb = NULL;
	ro->count--;
	atomic_dec(&sdev->ooo_held);
}

static void srdma_reorder_free(struct srdma_dev *sdev,
			       struct srdma_reorder *ro,
			       struct srdma_rx_pkt *slot)
{
	struct sk_buff *skb = slot->skb;

	srdma_reorder_detach(sdev, ro, slot);
	consume_skb(skb);
}

/* Drop every kept packet: a new connection, a rewind, or the QP goes. */
void srdma_reorder_purge(struct srdma_dev *sdev, struct srdma_reorder *ro)
{
	u32 i;

	if (!ro->pkt)
		return;
	for (i = 0; i < SRDMA_REORDER && ro->count; i++)
		if (ro->pkt[i].skb)
			srdma_reorder_free(sdev, ro, &ro->pkt[i]);
}

void srdma_reorder_fini(struct srdma_dev *sdev, struct srdma_reorder *ro)
{
	srdma_reorder_purge(sdev, ro);
	kvfree(ro->pkt);
	ro->pkt = NULL;
}

/**
 * srdma_reorder_hold - keep a packet that came past a gap
 * @sdev: the device, whose cap counts every buffer's packets
 * @ro: the buffer, its side's lock held
 * @pkt: the packet, @dist PSNs after the one expected
 * @dist: how far past the expected PSN, at least 1
 *
 * Return: true if kept (or already kept: a copy), false if it must be
 * dropped (too far ahead, no buffer, or the device keeps too many).
 */
bool srdma_reorder_hold(struct srdma_dev *sdev, struct srdma_reorder *ro,
			const struct roce_pkt_info *pkt, u32 dist)
{
	const struct srdma_rx_pkt *rx = to_rx_pkt(pkt);
	u32 psn = roce_bth_psn(pkt->bth);
	struct srdma_rx_pkt *slot;

	if (!ro->pkt || dist >= SRDMA_REORDER)
		return false;
	slot = &ro->pkt[psn % SRDMA_REORDER];
	if (slot->skb) {
		if (roce_bth_psn(slot->rp.bth) == psn)
			return true;
		/* Left behind when the PSN moved past it another way. */
		srdma_reorder_free(sdev, ro, slot);
	}
	if (atomic_inc_return(&sdev->ooo_held) > SRDMA_REORDER_DEV) {
		atomic_dec(&sdev->ooo_held);
		return false;
	}
	*slot = *rx;
	skb_get(slot->skb);	/* srdma_rx() consumes its own reference */
	ro->count++;
	srdma_count(sdev, SRDMA_CNT_OOO_HELD);
	return true;
}

/**
 * srdma_reorder_next - the kept packet of PSN @psn, if any
 * @sdev: the device
 * @ro: the buffer, its side's lock held
 * @psn: the PSN expected now
 * @out: filled with it; the caller releases out->skb with consume_skb()
 *
 * Return: true if one was taken out of the buffer.
 */
bool srdma_reorder_next(struct srdma_dev *sdev, struct srdma_reorder *ro,
			u32 psn, struct srdma_rx_pkt *out)
{
	struct srdma_rx_pkt *slot;

	if (!ro->count)
		return false;
	slot = &ro->pkt[psn % SRDMA_REORDER];
	if (!slot->skb)
		return false;
	if (roce_bth_psn(slot->rp.bth) != psn) {
		srdma_reorder_free(sdev, ro, slot);	/* stale: see above */
		return false;
	}
	*out = *slot;
	srdma_reorder_detach(sdev, ro, slot);
	return true;
}

/**
 * srdma_reorder_ahead - how far past @psn the nearest kept packet is
 * @ro: the buffer, its side's lock held
 * @psn: the PSN expected now, itself not kept
 *
 * Return: its distance (1 to SRDMA_REORDER - 1), or 0 if none is kept.
 */
u32 srdma_reorder_ahead(const struct srdma_reorder *ro, u32 psn)
{
	u32 d;

	if (!ro->count)
		return 0;
	for (d = 1; d < SRDMA_REORDER; d++) {
		const struct srdma_rx_pkt *slot =
			&ro->pkt[roce_psn_add(psn, d) % SRDMA_REORDER];

		if (slot->skb && roce_bth_psn(slot->rp.bth) ==
		    roce_psn_add(psn, d))
			return d;
	}
	return 0;
}
