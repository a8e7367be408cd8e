// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues: one ring of receive WQEs the provider posts to
 * with no system call, from which every QP attached to it takes, and the
 * limit event that tells the owner the ring runs low. A kernel SRQ has
 * the same ring in kernel memory (posted in kverbs.c). An XRC SRQ has a
 * number by which XRC requests name it (xrc.c).
 */
#include <linux/log2.h>

#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

static int srdma_srq_check(const struct ib_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > SRDMA_MAX_QP_WR ||
	    attr->max_sge > SRDMA_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	return 0;
}

int srdma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibsrq->device);
	struct srdma_srq *srq = to_ssrq(ibsrq);
	struct softrdma_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	struct srdma_ucontext *uctx;
	u32 slot;
	int err;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = srdma_srq_check(attr);
	if (err)
		return err;

	err = srdma_count_get(&sdev->nsrq, SRDMA_MAX_SRQ);
	if (err)
		return err;
	uctx = rdma_udata_to_drv_context(udata, struct srdma_ucontext, ibuc);
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->post_lock);
	mutex_init(&srq->resize_lock);
	slot = ALIGN(sizeof(struct softrdma_recv_wqe) +
		     max(attr->max_sge, 1U) * sizeof(struct softrdma_sge), 16);
	err = srdma_ring_alloc(&srq->rq, uctx ? &uctx->ibuc : NULL,
			       roundup_pow_of_two(attr->max_wr), slot);
	if (err)
		goto err_count;

	attr->max_wr = srq->rq.num_slots;
	attr->max_sge = (slot - sizeof(struct softrdma_recv_wqe)) /
			sizeof(struct softrdma_sge);
	srq->max_sge = attr->max_sge;
	srq->limit = attr->srq_limit;
	if (init->srq_type == IB_SRQT_XRC) {
		err = srdma_xsrq_publish(srq);
		if (err)
			goto err_ring;
	}
	if (!udata)
		return 0;

	srdma_ring_info(&srq->rq, &resp.rq);
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_num;
	return 0;

err_num:
	if (init->srq_type == IB_SRQT_XRC)
		srdma_xsrq_unpublish(srq);
err_ring:
	srdma_ring_free(&srq->rq);
err_count:
	atomic_dec(&sdev->nsrq);
	return err;
}

/*
 * A new ring of @max_wr slots (rounded up) for a user SRQ, with the WQEs
 * posted and not yet taken moved over under their indices. The provider
 * posts nothing meanwhile (it holds its ring lock across the command) and
 * learns the new ring at the address its command gives, before the switch.
 */
static int srdma_srq_resize(struct srdma_srq *srq, u32 max_wr,
			    bool keep_limit, struct ib_udata *udata)
{
	struct softrdma_modify_srq_cmd cmd;
	struct softrdma_ring_info info;
	struct srdma_ucontext *uctx;
	struct srdma_ring new, old;
	u32 prod, i;
	int err;

	if (!udata)
		return -EOPNOTSUPP;	/* kernel SRQs keep their size */
	err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
	if (err)
		return err;
	uctx = rdma_udata_to_drv_context(udata, struct srdma_ucontext, ibuc);
	err = srdma_ring_alloc(&new, &uctx->ibuc, roundup_pow_of_two(max_wr),
			       srq->rq.slot_size);
	if (err)
		return err;
	srdma_ring_info(&new, &info);
	if (copy_to_user(u64_to_user_ptr(cmd.ring_info_addr), &info,
			 sizeof(info))) {
		srdma_ring_free(&new);
		return -EFAULT;
	}

	spin_lock_bh(&srq->lock);
	/* acquire: the slots up to it are written */
	prod = smp_load_acquire(&srq->rq.hdr->producer);
	if (prod - srq->rq.idx > min(srq->rq.num_slots, new.num_slots) ||
	    (keep_limit && srq->limit > new.num_slots)) {
		/* more posted than it holds (or a bad index), or the limit */
		spin_unlock_bh(&srq->lock);
		srdma_ring_free(&new);
		return -EINVAL;
	}
	for (i = srq->rq.idx; i != prod; i++)
		memcpy(srdma_ring_slot(&new, i), srdma_ring_slot(&srq->rq, i),
		       srq->rq.slot_size);
	new.idx = srq->rq.idx;
	new.hdr->consumer = new.idx;
	/* release: the copies before the index that covers them */
	smp_store_release(&new.hdr->producer, prod);
	old = srq->rq;
	srq->rq = new;
	spin_unlock_bh(&srq->lock);

	/* A mapping of the old ring lives on until the provider drops it. */
	srdma_ring_free(&old);
	return 0;
}

int srdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);
	int err = 0;

	if (mask & ~(IB_SRQ_LIMIT | IB_SRQ_MAX_WR))
		return -EOPNOTSUPP;
	if ((mask & IB_SRQ_MAX_WR) &&
	    (!attr->max_wr || attr->max_wr > SRDMA_MAX_QP_WR))
		return -EINVAL;
	mutex_lock(&srq->resize_lock);
	/* Checked against the size it will have: all or nothing changes. */
	if ((mask & IB_SRQ_LIMIT) &&
	    attr->srq_limit > (mask & IB_SRQ_MAX_WR ?
			       roundup_pow_of_two(attr->max_wr) :
			       srq->rq.num_slots))
		err = -EINVAL;
	if (!err && (mask & IB_SRQ_MAX_WR))
		err = srdma_srq_resize(srq, attr->max_wr,
				       !(mask & IB_SRQ_LIMIT), udata);
	if (!err && (mask & IB_SRQ_LIMIT)) {
		spin_lock_bh(&srq->lock);
		srq->limit = attr->srq_limit;	/* armed until it fires */
		spin_unlock_bh(&srq->lock);
	}
	mutex_unlock(&srq->resize_lock);
	return err;
}

int srdma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.num_slots;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/*
 * The core destroys an SRQ only once no QP is attached to it; XRC targets
 * are not attached, but find it by number, which ends first.
 */
int srdma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	if (ibsrq->srq_type == IB_SRQT_XRC)
		srdma_xsrq_unpublish(to_ssrq(ibsrq));
	srdma_ring_free(&to_ssrq(ibsrq)->rq);
	atomic_dec(&to_sdev(ibsrq->device)->nsrq);
	return 0;
}

/**
 * srdma_srq_take - take the next receive WQE off an SRQ
 * @srq: the SRQ
 * @wqe: where to copy it; room for a slot of @srq
 *
 * Fires the limit event when fewer WQEs than the armed limit are left.
 * Return: 0, -EAGAIN if none is posted, -EINVAL for a bad ring or WQE.
 */
int srdma_srq_take(struct srdma_srq *srq, struct softrdma_recv_wqe *wqe)
{
	bool low = false;
	int avail;

	spin_lock(&srq->lock);
	avail = srdma_ring_avail(&srq->rq);
	if (avail <= 0) {
		spin_unlock(&srq->lock);
		return avail ? -EINVAL : -EAGAIN;
	}
	memcpy(wqe, srdma_ring_slot(&srq->rq, srq->rq.idx), srq->rq.slot_size);
	srdma_ring_consume(&srq->rq);
	if (srq->limit && avail - 1 < srq->limit) {
		srq->limit = 0;
		low = true;
	}
	spin_unlock(&srq->lock);

	if (low && srq->ibsrq.event_handler) {
		struct ib_event ev = {
			.device = srq->ibsrq.device,
			.element.srq = &srq->ibsrq,
			.event = IB_EVENT_SRQ_LIMIT_REACHED,
		};

		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	}
	return wqe->num_sge > srq->max_sge ? -EINVAL : 0;
}
