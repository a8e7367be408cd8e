// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues: a ring shared with userspace, written by the
 * transport, read by the provider's poll_cq without a system call. A
 * kernel CQ has the same ring in kernel memory (polled in kverbs.c).
 */
#include <linux/log2.h>
#include <linux/slab.h>

#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

int srdma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibcq->device);
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_ucontext *uctx = rdma_udata_to_drv_context(udata,
					struct srdma_ucontext, ibuc);
	struct softrdma_create_cq_resp resp = {};
	bool ts = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	int err;

	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SRDMA_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = srdma_count_get(&sdev->ncq, SRDMA_MAX_CQ);
	if (err)
		return err;
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_lock);
	err = srdma_ring_alloc(&cq->ring, uctx ? &uctx->ibuc : NULL,
			       roundup_pow_of_two(attr->cqe),
			       ts ? sizeof(struct softrdma_cqe_ts) :
				    sizeof(struct softrdma_cqe));
	if (err)
		goto err_count;
	ibcq->cqe = cq->ring.num_slots;
	if (!udata)
		return 0;

	srdma_ring_info(&cq->ring, &resp.cq);
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_ring;
	return 0;

err_ring:
	srdma_ring_free(&cq->ring);
err_count:
	atomic_dec(&sdev->ncq);
	return err;
}

/*
 * A new ring, with the CQEs not yet polled moved to its start. The
 * provider holds its poll lock across the command, so nothing is polled
 * from the old ring once they are copied, and then maps the new ring.
 * Fewer slots than unpolled CQEs: -EINVAL, the CQ unchanged.
 */
int srdma_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct softrdma_resize_cq_resp resp = {};
	struct srdma_ucontext *uctx;
	struct srdma_ring new, old;
	u32 used, cons, i;
	int err;

	if (!udata)
		return -EOPNOTSUPP;
	if (cqe < 1 || cqe > SRDMA_MAX_CQE || udata->outlen < sizeof(resp))
		return -EINVAL;
	uctx = rdma_udata_to_drv_context(udata, struct srdma_ucontext, ibuc);
	mutex_lock(&cq->resize_lock);
	err = srdma_ring_alloc(&new, &uctx->ibuc, roundup_pow_of_two(cqe),
			       cq->ring.slot_size);
	if (err)
		goto out;
	/* Told from our ring, before another resize can replace it. */
	srdma_ring_info(&new, &resp.cq);

	spin_lock_irq(&cq->lock);
	cons = smp_load_acquire(&cq->ring.hdr->consumer);
	used = cq->ring.idx - cons;
	if (used > cq->ring.num_slots || used > new.num_slots) {
		spin_unlock_irq(&cq->lock);
		srdma_ring_free(&new);
		err = -EINVAL;
		goto out;
	}
	for (i = 0; i < used; i++)
		memcpy(srdma_ring_slot(&new, i),
		       srdma_ring_slot(&cq->ring, cons + i), new.slot_size);
	new.idx = used;
	smp_store_release(&new.hdr->producer, used);
	old = cq->ring;
	cq->ring = new;
	cq->overflow = false;
	ibcq->cqe = new.num_slots;
	spin_unlock_irq(&cq->lock);

	/* A mapping of the old ring lives on until the provider drops it. */
	srdma_ring_free(&old);
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
out:
	mutex_unlock(&cq->resize_lock);
	return err;
}

int srdma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_ring ring;

	/*
	 * The core only destroys a CQ no QP uses: nothing can post now.
	 * A netlink dump still can (see struct srdma_cq): the ring goes
	 * under the lock its fill reads it under.
	 */
	spin_lock_irq(&cq->lock);
	srdma_ring_move(&ring, &cq->ring);
	spin_unlock_irq(&cq->lock);
	srdma_ring_free(&ring);
	atomic_dec(&to_sdev(ibcq->device)->ncq);
	return 0;
}

int srdma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct srdma_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* NEXT_COMP also covers solicited completions: keep the wider arm. */
	if ((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_NEXT_COMP ||
	    cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->ring.idx != READ_ONCE(cq->ring.hdr->consumer))
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}

/**
 * srdma_cq_add - add a completion, without calling the CQ's handler
 * @cq: the CQ
 * @cqe: the entry
 * @solicited: the completion is of a solicited event
 *
 * Return: 1 when the armed event fired: the caller calls
 * srdma_cq_notify() once it holds no lock a consumer's handler may need;
 * 0; or -ENOSPC when the CQ is full: the entry is dropped and the CQ's
 * owner gets IB_EVENT_CQ_ERR (the verbs spec's CQ overrun), the ring is
 * left intact.
 */
int srdma_cq_add(struct srdma_cq *cq, const struct softrdma_cqe *cqe,
		 bool solicited)
{
	unsigned long flags;
	int notify = 0;
	void *slot;

	spin_lock_irqsave(&cq->lock, flags);
	if (unlikely(srdma_ring_full(&cq->ring))) {
		bool first = !cq->overflow;

		cq->overflow = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first && cq->ibcq.event_handler) {
			struct ib_event ev = {
				.device = cq->ibcq.device,
				.element.cq = &cq->ibcq,
				.event = IB_EVENT_CQ_ERR,
			};

			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return -ENOSPC;
	}
	slot = srdma_ring_slot(&cq->ring, cq->ring.idx);
	memcpy(slot, cqe, sizeof(*cqe));
	if (cq->ring.slot_size >= sizeof(struct softrdma_cqe_ts))
		((struct softrdma_cqe_ts *)slot)->timestamp = ktime_get_ns();
	srdma_ring_produce(&cq->ring);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = 1;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return notify;
}

/**
 * srdma_fill_res_cq_entry - a CQ's state for "rdma -dd resource show cq"
 * @msg: the netlink message
 * @ibcq: the CQ
 *
 * The completions not yet polled (0 once destroy_cq took the ring), the
 * event armed (0, 1: solicited, 2: next) and whether the CQ overran: a
 * consumer that waits on a CQ with completions in it and no event armed
 * waits for good.
 */
int srdma_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct nlattr *nest;
	u32 unpolled;
	u8 notify;
	bool overflow;

	spin_lock_irq(&cq->lock);
	unpolled = cq->ring.hdr ? srdma_ring_used(&cq->ring) : 0;
	notify = cq->notify;
	overflow = cq->overflow;
	spin_unlock_irq(&cq->lock);

	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "unpolled", unpolled) ||
	    rdma_nl_put_driver_u32(msg, "armed", notify) ||
	    rdma_nl_put_driver_u32(msg, "overflow", overflow)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/* The completion event srdma_cq_add() reported. */
void srdma_cq_notify(struct srdma_cq *cq)
{
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/* srdma_cq_add() and the event. Return: 0 or -ENOSPC. */
int srdma_cq_post(struct srdma_cq *cq, const struct softrdma_cqe *cqe,
		  bool solicited)
{
	int ret = srdma_cq_add(cq, cqe, solicited);

	if (ret > 0)
		srdma_cq_notify(cq);
	return min(ret, 0);
}
