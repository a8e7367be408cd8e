// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs of kernel consumers (the MAD layer, ib_cm, NVMe-oF, ...): their
 * QPs and CQs use the same rings as user queues, kept in kernel memory.
 * Posting writes WQEs in the ring format the provider writes; polling
 * turns CQEs into struct ib_wc. The transport cannot tell the two apart.
 *
 * Kernel consumers post from any context but hard IRQ, IRQs off included
 * (the MAD layer posts under spin_lock_irqsave()): producers serialise on
 * an IRQ-safe lock of their own and never take the transport's locks.
 */
#include "srdma.h"

/*
 * ib_verbs.h defines IB_WR_* and IB_WC_* as the uverbs values the rings
 * carry, and IB_SEND_* as the IBV_SEND_* bits.
 */
#define SRDMA_KSEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/* Inline data: the SGEs' bytes, at kernel addresses, into the WQE. */
static int srdma_kwqe_inline(struct srdma_qp *qp, const struct ib_send_wr *wr,
			     struct softrdma_send_wqe *w)
{
	u8 *dst = (u8 *)w->sge;
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->cap.max_inline_data - len)
			return -EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)sge->addr, sge->length);
		len += sge->length;
	}
	w->inline_len = len;
	return 0;
}

/* Write send WR @wr into free slot @w. Return: 0 or -EINVAL. */
static int srdma_kwqe_send(struct srdma_qp *qp, const struct ib_send_wr *wr,
			   struct softrdma_send_wqe *w)
{
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags & SRDMA_KSEND_FLAGS;

	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
		w->ex = wr->ex.imm_data;
		fallthrough;
	case IB_WR_SEND:
		if (srdma_qp_is_ud(qp)) {
			const struct ib_ud_wr *ud = ud_wr(wr);

			w->wr.ud.remote_qpn = ud->remote_qpn & 0xffffff;
			w->wr.ud.remote_qkey = ud->remote_qkey;
			w->wr.ud.ah_num = to_sah(ud->ah)->ah_num;
		}
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->ex = wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->ex = (__force __be32)wr->ex.invalidate_rkey;	/* host order */
		break;
	case IB_WR_REG_MR:
		/* The MR's page list is read when the WQE executes. */
		w->opcode = SRDMA_WR_REG_MR;
		w->wr.bind.new_rkey = reg_wr(wr)->key;
		w->wr.bind.access = reg_wr(wr)->access;
		return 0;
	default:
		return -EINVAL;
	}

	if (wr->send_flags & IB_SEND_INLINE)
		return srdma_kwqe_inline(qp, wr, w);
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/*
 * May the requester run in the poster's context? It takes spinlocks and
 * enables bottom halves: not in hard IRQ nor with interrupts off. On
 * PREEMPT_RT a spinlock_t sleeps and spin_lock_irqsave() leaves
 * interrupts on, so there the poster must be preemptible instead (no raw
 * spinlock held, no preempt_disable()).
 */
static bool srdma_kick_inline_ok(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		return preemptible();
	return !irqs_disabled() && !in_hardirq();
}

/*
 * The requester runs in the poster's context where it may (as it does on
 * a user doorbell), else from its work item, which also flushes work
 * posted in ERR.
 */
static void srdma_kick(struct srdma_qp *qp)
{
	if (!srdma_kick_inline_ok() || READ_ONCE(qp->state) == IB_QPS_ERR)
		queue_work(srdma_tx_wq, &qp->req.work);
	else
		srdma_req_run(qp);
}

/* Room for one more WQE in a ring we produce? */
static bool srdma_kring_full(const struct srdma_ring *ring)
{
	return ring->hdr->producer - smp_load_acquire(&ring->hdr->consumer) >=
	       ring->num_slots;
}

int srdma_kpost_send(struct srdma_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	struct srdma_ring *sq = &qp->sq;
	unsigned long flags;
	int err = 0;

	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		*bad_wr = wr;
		return -EINVAL;
	default:
		break;
	}

	spin_lock_irqsave(&qp->post_lock, flags);
	for (; wr; wr = wr->next) {
		if (srdma_kring_full(sq)) {
			err = -ENOMEM;
			break;
		}
		err = srdma_kwqe_send(qp, wr, srdma_ring_slot(sq, sq->hdr->producer));
		if (err)
			break;
		smp_store_release(&sq->hdr->producer, sq->hdr->producer + 1);
	}
	spin_unlock_irqrestore(&qp->post_lock, flags);
	if (err)
		*bad_wr = wr;
	srdma_kick(qp);
	return err;
}

/* Receive WRs into @rq (a QP's or an SRQ's), under the caller's @lock. */
static int srdma_kring_post_recv(struct srdma_ring *rq, spinlock_t *lock,
				 u32 max_sge, const struct ib_recv_wr *wr,
				 const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	int err = 0;
	int i;

	spin_lock_irqsave(lock, flags);
	for (; wr; wr = wr->next) {
		struct softrdma_recv_wqe *w;

		if (wr->num_sge < 0 || wr->num_sge > max_sge) {
			err = -EINVAL;
			break;
		}
		if (srdma_kring_full(rq)) {
			err = -ENOMEM;
			break;
		}
		w = srdma_ring_slot(rq, rq->hdr->producer);
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		w->reserved = 0;
		for (i = 0; i < wr->num_sge; i++) {
			w->sge[i].addr = wr->sg_list[i].addr;
			w->sge[i].length = wr->sg_list[i].length;
			w->sge[i].lkey = wr->sg_list[i].lkey;
		}
		smp_store_release(&rq->hdr->producer, rq->hdr->producer + 1);
	}
	spin_unlock_irqrestore(lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

int srdma_kpost_recv(struct srdma_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	int err;

	if (!qp->rq.hdr || READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = srdma_kring_post_recv(&qp->rq, &qp->post_lock,
				    qp->cap.max_recv_sge, wr, bad_wr);
	/* The responder takes WQEs as packets come; ERR flushes them. */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		queue_work(srdma_tx_wq, &qp->req.work);
	return err;
}

/* Userspace posts to an SRQ through its ring, with no system call. */
int srdma_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	if (ibsrq->uobject) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	return srdma_kring_post_recv(&srq->rq, &srq->post_lock, srq->max_sge,
				     wr, bad_wr);
}

/*
 * The QP a CQE of @cq belongs to, or NULL once it is destroyed (its
 * completions left behind are dropped, as HCAs clean them).
 */
static struct srdma_qp *srdma_cqe_qp(struct ib_cq *ibcq,
				     const struct softrdma_cqe *cqe)
{
	struct srdma_qp *qp;

	if (cqe->qp_num == 1)
		qp = rcu_dereference(to_sdev(ibcq->device)->gsi_qp);
	else
		qp = srdma_qp_lookup_rcu(cqe->qp_num);
	if (qp && qp->ibqp.send_cq != ibcq && qp->ibqp.recv_cq != ibcq)
		qp = NULL;	/* the QPN is another QP's now */
	return qp;
}

static void srdma_cqe_to_wc(const struct softrdma_cqe *cqe,
			    struct srdma_qp *qp, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->byte_len = cqe->byte_len;
	wc->qp = &qp->ibqp;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->sl = cqe->sl;
	wc->port_num = SRDMA_PORT;
	if (cqe->wc_flags & SOFTRDMA_WC_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (cqe->wc_flags & SOFTRDMA_WC_WITH_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = cqe->ex;
	}
	if (cqe->wc_flags & SOFTRDMA_WC_WITH_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = (__force u32)cqe->ex;
	}
	if (cqe->net_type) {
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->net_type == SOFTRDMA_NET_IPV4 ?
				       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	}
}

/* poll_cq of kernel CQs: we own both indices of their rings. */
int srdma_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_ring *ring = &cq->ring;
	unsigned long flags;
	u32 cons;
	int n = 0;

	if (ring->mmap)
		return -EINVAL;		/* a user CQ is polled by the provider */

	spin_lock_irqsave(&cq->lock, flags);
	cons = ring->hdr->consumer;
	rcu_read_lock();
	while (n < num && cons != ring->idx) {
		const struct softrdma_cqe *cqe = srdma_ring_slot(ring, cons);
		struct srdma_qp *qp = srdma_cqe_qp(ibcq, cqe);

		cons++;
		if (qp)
			srdma_cqe_to_wc(cqe, qp, &wc[n++]);
	}
	rcu_read_unlock();
	smp_store_release(&ring->hdr->consumer, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
