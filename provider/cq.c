/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues: the kernel writes CQEs into a shared ring and
 * poll_cq reads them without entering the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "softrdma.h"

/* Our driver data follows the core response with nothing in between. */
struct srdma_create_cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct softrdma_create_cq_resp drv;
};

_Static_assert(offsetof(struct srdma_create_cq_resp, drv) ==
	       sizeof(struct ib_uverbs_create_cq_resp), "create_cq resp");
_Static_assert(sizeof(struct srdma_create_cq_resp) == 32, "create_cq resp");

struct ibv_cq *srdma_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct srdma_create_cq_resp resp = {};
	struct ibv_create_cq cmd;
	struct srdma_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd, sizeof(cmd),
				&resp.core, sizeof(resp));
	if (ret)
		goto err_free;

	ret = srdma_ring_map(&cq->ring, &resp.drv.cq,
			     sizeof(struct softrdma_cqe), ibctx->cmd_fd,
			     SRDMA_RING_CONSUMER);
	if (ret)
		goto err_destroy;

	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

struct srdma_resize_cq_resp {
	struct ib_uverbs_resize_cq_resp core;
	struct softrdma_resize_cq_resp drv;
};

_Static_assert(offsetof(struct srdma_resize_cq_resp, drv) ==
	       sizeof(struct ib_uverbs_resize_cq_resp), "resize_cq resp");

/*
 * The kernel moves the unpolled CQEs to a new ring; no poll may run
 * between that and our switch to it, so the poll lock is held across.
 */
int srdma_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_resize_cq_resp resp = {};
	struct ibv_resize_cq cmd;
	int ret;

	pthread_spin_lock(&cq->ring.lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.core,
				sizeof(resp));
	if (!ret)
		ret = srdma_ring_remap(&cq->ring, &resp.drv.cq,
				       sizeof(struct softrdma_cqe),
				       ibcq->context->cmd_fd,
				       SRDMA_RING_CONSUMER);
	pthread_spin_unlock(&cq->ring.lock);
	return ret;
}

int srdma_destroy_cq(struct ibv_cq *ibcq)
{
	struct srdma_cq *cq = to_scq(ibcq);
	int ret;

	/* The kernel stops writing CQEs before the ring goes away. */
	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	srdma_ring_unmap(&cq->ring);
	free(cq);
	return 0;
}

_Static_assert(SOFTRDMA_WC_GRH == IBV_WC_GRH, "wc_flags GRH");
_Static_assert(SOFTRDMA_WC_WITH_IMM == IBV_WC_WITH_IMM, "wc_flags IMM");
_Static_assert(SOFTRDMA_WC_WITH_INV == IBV_WC_WITH_INV, "wc_flags INV");

static void srdma_cqe_to_wc(const struct softrdma_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = 0;
	wc->byte_len = cqe->byte_len;
	/* Bit for bit, like the kernel's ib_uverbs_wc: imm or rkey. */
	wc->imm_data = cqe->ex;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = 0;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = 0;
}

/*
 * Several threads may poll one CQ, so the consumer index needs the lock;
 * the kernel side is only ever touched through the ring's atomics. CQ
 * overrun is the kernel's to detect: it never overwrites an unconsumed
 * CQE.
 */
int srdma_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct srdma_cq *cq = to_scq(ibcq);
	const struct softrdma_cqe *cqe;
	int n;

	pthread_spin_lock(&cq->ring.lock);
	for (n = 0; n < num_entries; n++) {
		cqe = srdma_ring_cons_slot(&cq->ring);
		if (!cqe)
			break;
		srdma_cqe_to_wc(cqe, &wc[n]);
		srdma_ring_advance(&cq->ring);
	}
	if (n)
		srdma_ring_cons_publish(&cq->ring);
	pthread_spin_unlock(&cq->ring.lock);

	return n;
}

/*
 * Drop the unpolled CQEs of QP @qpn: a QP reset starts with no completions
 * of its past, as with HCAs. The kernel only writes beyond the producer
 * index, so the entries before it are ours to move: the others slide
 * toward the producer end and the consumer index skips the freed slots.
 */
void srdma_cq_clean(struct srdma_cq *cq, uint32_t qpn)
{
	struct srdma_ring *r = &cq->ring;
	uint32_t prod, i, freed = 0;
	struct softrdma_cqe *cqe;

	pthread_spin_lock(&r->lock);
	prod = srdma_load_acquire(&r->hdr->producer);
	if (prod - r->idx > r->num_slots)
		prod = r->idx;		/* a broken index: leave it to poll */
	for (i = prod; i != r->idx;) {
		cqe = srdma_ring_slot(r, --i);
		if (cqe->qp_num == qpn)
			freed++;
		else if (freed)
			memcpy(srdma_ring_slot(r, i + freed), cqe, sizeof(*cqe));
	}
	if (freed) {
		r->idx += freed;
		r->peer = prod;		/* what poll may read up to */
		srdma_ring_cons_publish(r);
	}
	pthread_spin_unlock(&r->lock);
}

int srdma_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}
