/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues: the kernel writes CQEs into a shared ring, and both
 * poll_cq and the ibv_cq_ex iterator (start_poll/next_poll/end_poll) read
 * them without entering the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "softrdma.h"

/*
 * Our driver data follows the core response with nothing in between. Both
 * create verbs use the extended command, whose core response is longer.
 */
struct srdma_create_cq_resp {
	struct ib_uverbs_ex_create_cq_resp core;
	struct softrdma_create_cq_resp drv;
};

_Static_assert(offsetof(struct srdma_create_cq_resp, drv) ==
	       sizeof(struct ib_uverbs_ex_create_cq_resp), "create_cq resp");
_Static_assert(sizeof(struct srdma_create_cq_resp) == 40, "create_cq resp");

/* Completions with a timestamp: the kernel's CLOCK_MONOTONIC ns. */
#define SRDMA_CQ_WC_TS	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static size_t srdma_cq_slot_size(const struct srdma_cq *cq)
{
	return cq->has_ts ? sizeof(struct softrdma_cqe_ts) :
			    sizeof(struct softrdma_cqe);
}

/* Both create verbs come here, ibv_create_cq() with no extensions. */
static struct srdma_cq *srdma_cq_create(struct ibv_context *ibctx,
					const struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_init_attr_ex kattr = *attr;
	struct srdma_create_cq_resp resp = {};
	struct ibv_create_cq_ex cmd = {};
	struct srdma_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	/*
	 * Either timestamp needs the kernel's wide slots, which libibverbs
	 * asks for (TIMESTAMP_COMPLETION) when it sees COMPLETION_TIMESTAMP
	 * or, since rdma-core 34, WALLCLOCK: say the one it always maps. A
	 * narrower ring would fail srdma_ring_map() rather than be misread.
	 */
	cq->has_ts = attr->wc_flags & SRDMA_CQ_WC_TS;
	if (cq->has_ts)
		kattr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;

	/* The kernel checks cqe and comp_vector: EINVAL. */
	ret = ibv_cmd_create_cq_ex(ibctx, &kattr, IF_PABI65(NULL,) &cq->vcq,
				   &cmd, sizeof(cmd), &resp.core, sizeof(resp), 0);
	if (ret)
		goto err_free;

	ret = srdma_ring_map(&cq->ring, &resp.drv.cq, srdma_cq_slot_size(cq),
			     ibctx->cmd_fd, SRDMA_RING_CONSUMER);
	if (ret)
		goto err_destroy;

	return cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

struct ibv_cq *srdma_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe,
		.channel = channel,
		.comp_vector = comp_vector,
	};
	struct srdma_cq *cq = srdma_cq_create(ibctx, &attr);

	return cq ? &cq->vcq.cq : NULL;
}

/* Our driver data right behind the core response, as in ah.c. */
union srdma_resize_cq_resp {
	struct ib_uverbs_resize_cq_resp core;
	struct {
		__u8 core_space[sizeof(struct ib_uverbs_resize_cq_resp)];
		struct softrdma_resize_cq_resp drv;
	};
};

_Static_assert(offsetof(union srdma_resize_cq_resp, drv) ==
	       sizeof(struct ib_uverbs_resize_cq_resp), "resize_cq resp");
_Static_assert(sizeof(union srdma_resize_cq_resp) == 32, "resize_cq resp");

/*
 * The kernel moves the unpolled CQEs to a new ring; no poll may run
 * between that and our switch to it, so the poll lock is held across.
 */
int srdma_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct srdma_cq *cq = to_scq(ibcq);
	union srdma_resize_cq_resp resp = {};
	struct ibv_resize_cq cmd;
	int ret;

	pthread_spin_lock(&cq->ring.lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.core,
				sizeof(resp));
	if (!ret)
		ret = srdma_ring_remap(&cq->ring, &resp.drv.cq,
				       srdma_cq_slot_size(cq),
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

/* The one conversion, for poll_cq and the ibv_cq_ex readers alike. */
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
 * Take the oldest CQE into @wc, or return false if there is none. The
 * slot is the kernel's again once the consumer index is published.
 */
static bool srdma_cq_take(struct srdma_cq *cq, struct ibv_wc *wc)
{
	const struct softrdma_cqe *cqe = srdma_ring_cons_slot(&cq->ring);

	if (!cqe)
		return false;
	srdma_cqe_to_wc(cqe, wc);
	if (cq->has_ts)
		cq->ts = ((const struct softrdma_cqe_ts *)cqe)->timestamp;
	srdma_ring_advance(&cq->ring);
	return true;
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
	int n;

	pthread_spin_lock(&cq->ring.lock);
	for (n = 0; n < num_entries; n++)
		if (!srdma_cq_take(cq, &wc[n]))
			break;
	/* Checked even when empty: a poller must learn that it is over. */
	if (!srdma_ring_live(&cq->ring))
		n = -EIO;
	else if (n)
		srdma_ring_cons_publish(&cq->ring);
	pthread_spin_unlock(&cq->ring.lock);

	return n;
}

/*
 * Drop the unpolled CQEs of QP @qpn: a QP reset starts with no completions
 * of its past, as with HCAs. The kernel only writes beyond the producer
 * index, so the entries before it are ours to move: the others slide
 * toward the producer end and the consumer index skips the freed slots.
 * A slot moves whole: a timestamp CQ's holds the CQE's time after it.
 */
void srdma_cq_clean(struct srdma_cq *cq, uint32_t qpn)
{
	struct srdma_ring *r = &cq->ring;
	uint32_t prod, i, freed = 0;
	struct softrdma_cqe *cqe;

	pthread_spin_lock(&r->lock);
	prod = srdma_load_acquire(&r->hdr->producer);
	if (prod - r->idx > r->num_slots || !srdma_ring_live(r))
		prod = r->idx;		/* a broken index: leave it to poll */
	for (i = prod; i != r->idx;) {
		cqe = srdma_ring_slot(r, --i);
		if (cqe->qp_num == qpn)
			freed++;
		else if (freed)
			memcpy(srdma_ring_slot(r, i + freed), cqe,
			       r->slot_size);
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

/*
 * ibv_cq_ex: a batch runs from start_poll to end_poll under the CQ lock.
 * Each step converts the next CQE into cq->wc at once, so the readers
 * below are plain loads and the slot may go back to the kernel as soon
 * as end_poll publishes the consumer index.
 */
static struct srdma_cq *to_scqx(struct ibv_cq_ex *cqx)
{
	return srdma_container_of(cqx, struct srdma_cq, vcq.cq_ex);
}

/*
 * The iterator's current completion: status and wr_id are fields.
 * EIO: the device is gone (and the batch has nothing to publish).
 */
static int srdma_cqx_step(struct srdma_cq *cq)
{
	bool taken = srdma_cq_take(cq, &cq->wc);

	if (!srdma_ring_live(&cq->ring))
		return EIO;
	if (!taken)
		return ENOENT;
	cq->vcq.cq_ex.status = cq->wc.status;
	cq->vcq.cq_ex.wr_id = cq->wc.wr_id;
	return 0;
}

/* ENOENT (nothing to poll) or EIO: no batch to end (no end_poll follows). */
static int srdma_start_poll(struct ibv_cq_ex *cqx,
			    struct ibv_poll_cq_attr *attr)
{
	struct srdma_cq *cq = to_scqx(cqx);
	int ret;

	/* No comp_mask bits are defined for it: nothing to check. */
	(void)attr;

	pthread_spin_lock(&cq->ring.lock);
	ret = srdma_cqx_step(cq);
	if (ret)
		pthread_spin_unlock(&cq->ring.lock);
	return ret;
}

/* ENOENT: nothing more for now; the batch goes on until end_poll. */
static int srdma_next_poll(struct ibv_cq_ex *cqx)
{
	return srdma_cqx_step(to_scqx(cqx));
}

static void srdma_end_poll(struct ibv_cq_ex *cqx)
{
	struct srdma_cq *cq = to_scqx(cqx);

	if (srdma_ring_live(&cq->ring))
		srdma_ring_cons_publish(&cq->ring);
	pthread_spin_unlock(&cq->ring.lock);
}

/* The device's clock (hca_core_clock 1 GHz): CLOCK_MONOTONIC ns. */
static uint64_t srdma_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->ts;
}

static uint64_t srdma_timespec_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (uint64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* CLOCK_REALTIME of that moment, by the clocks' offset now. */
static uint64_t srdma_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	uint64_t mono = srdma_timespec_ns(CLOCK_MONOTONIC);

	return to_scqx(cqx)->ts + (srdma_timespec_ns(CLOCK_REALTIME) - mono);
}

static enum ibv_wc_opcode srdma_read_opcode(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.opcode;
}

static uint32_t srdma_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.vendor_err;
}

static unsigned int srdma_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.wc_flags;
}

static uint32_t srdma_read_byte_len(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.byte_len;
}

static __be32 srdma_read_imm_data(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.imm_data;
}

static uint32_t srdma_read_qp_num(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.qp_num;
}

static uint32_t srdma_read_src_qp(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.src_qp;
}

static uint32_t srdma_read_slid(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.slid;
}

static uint8_t srdma_read_sl(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.sl;
}

static uint8_t srdma_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return to_scqx(cqx)->wc.dlid_path_bits;
}

/*
 * What a CQE has. No timestamps: the kernel does not take one, and one
 * taken here at poll time would be a lie. Nor CVLAN, flow tags or tag
 * matching.
 */
#define SRDMA_CQ_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | SRDMA_CQ_WC_TS)

/* SINGLE_THREADED is a hint we may ignore; not so IGNORE_OVERRUN. */
#define SRDMA_CQ_CREATE_FLAGS	IBV_CREATE_CQ_ATTR_SINGLE_THREADED

#define SRDMA_CQ_INIT_ATTR_MASK	(IBV_CQ_INIT_ATTR_MASK_FLAGS | \
				 IBV_CQ_INIT_ATTR_MASK_PD)

/*
 * A parent domain may come along, as with HCAs: one of this context, not
 * a plain PD. The ring is kernel memory, so its allocators have nothing
 * to allocate for the CQ.
 */
static bool srdma_cq_parent_domain_ok(struct ibv_context *ibctx,
				      const struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_pd *pd = attr->parent_domain;

	return pd && pd->context == ibctx && to_spd(pd)->protection_domain;
}

static int srdma_check_cq_init_attr(struct ibv_context *ibctx,
				    const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~SRDMA_CQ_INIT_ATTR_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~SRDMA_CQ_CREATE_FLAGS))
		return EOPNOTSUPP;
	if (attr->wc_flags & ~(uint64_t)SRDMA_CQ_WC_FLAGS)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    !srdma_cq_parent_domain_ok(ibctx, attr))
		return EINVAL;
	return 0;
}

/* A reader for each field asked for, as rdma-core's providers do. */
static void srdma_cq_init_ex_ops(struct ibv_cq_ex *cqx, uint64_t wc_flags)
{
	cqx->start_poll = srdma_start_poll;
	cqx->next_poll = srdma_next_poll;
	cqx->end_poll = srdma_end_poll;
	cqx->read_opcode = srdma_read_opcode;
	cqx->read_vendor_err = srdma_read_vendor_err;
	cqx->read_wc_flags = srdma_read_wc_flags;

	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = srdma_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = srdma_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = srdma_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = srdma_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = srdma_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = srdma_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = srdma_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cqx->read_completion_ts = srdma_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cqx->read_completion_wallclock_ns = srdma_read_completion_wallclock_ns;
}

struct ibv_cq_ex *srdma_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct srdma_cq *cq;
	int ret;

	ret = srdma_check_cq_init_attr(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	cq = srdma_cq_create(ibctx, attr);
	if (!cq)
		return NULL;
	srdma_cq_init_ex_ops(&cq->vcq.cq_ex, attr->wc_flags);
	return &cq->vcq.cq_ex;
}
