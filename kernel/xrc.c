// SPDX-License-Identifier: GPL-2.0
/*
 * XRC: domains, the numbers of XRC SRQs, and how an XRC target QP finds
 * the SRQ a request names.
 *
 * An XRC initiator QP is an RC send queue whose requests carry an XRCETH:
 * the number of an SRQ at the target. An XRC target QP is a responder
 * alone, created by the core on behalf of any number of processes; it
 * takes receive WQEs from the SRQ each request names, if that SRQ is of
 * its own domain, and the request's memory accesses are checked against
 * that SRQ's PD. Its completions go to the SRQ's CQ.
 */
#include "srdma.h"

/*
 * XRC SRQ numbers are unique across all devices, like QPNs, and live in
 * the same 24-bit space. RCU readers: the responder.
 */
static DEFINE_XARRAY_ALLOC(srdma_xsrq_xa);
static u32 srdma_xsrq_next;

int srdma_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;	/* the core's object is all a domain is */
}

int srdma_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

/* Number an XRC SRQ; the responder can find it from then on. */
int srdma_xsrq_publish(struct srdma_srq *srq)
{
	u32 num;
	int err;

	err = xa_alloc_cyclic(&srdma_xsrq_xa, &num, srq,
			      XA_LIMIT(SRDMA_MIN_QPN, SRDMA_MAX_QPN),
			      &srdma_xsrq_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	srq->ibsrq.ext.xrc.srq_num = num;
	return 0;
}

/*
 * On return no responder uses @srq any more, nor its CQ, which the core
 * may then destroy.
 */
void srdma_xsrq_unpublish(struct srdma_srq *srq)
{
	xa_erase(&srdma_xsrq_xa, srq->ibsrq.ext.xrc.srq_num);
	synchronize_rcu();
}

static struct srdma_srq *srdma_xsrq_lookup_rcu(u32 num)
{
	return xa_load(&srdma_xsrq_xa, num);
}

/**
 * srdma_xrc_resp_srq - the SRQ an XRC request to target @qp names
 * @qp: an XRC target QP; its rq_lock held, in an RCU read section
 * @pkt: the request
 *
 * Only an SRQ of the target's own domain serves, and a message goes on
 * with the SRQ it started on.
 *
 * Return: the SRQ, or NULL if the request may not use it.
 */
struct srdma_srq *srdma_xrc_resp_srq(struct srdma_qp *qp,
				     const struct roce_pkt_info *pkt)
{
	u32 num = roce_xrceth_srqn(roce_pkt_xrceth(pkt));
	struct srdma_srq *srq;

	lockdep_assert_held(&qp->rq_lock);
	if (qp->resp.msg_open && num != qp->resp.xrc_srqn)
		return NULL;
	srq = srdma_xsrq_lookup_rcu(num);
	if (!srq || srq->ibsrq.ext.xrc.xrcd != qp->ibqp.xrcd)
		return NULL;
	qp->resp.xrc_srqn = num;
	return srq;
}

/*
 * Entering ERR: the receive WQE an XRC target holds for the message under
 * way goes back, flushed, to the CQ of the SRQ it came from, if that SRQ
 * is still there.
 */
void srdma_xrc_flush_rwqe(struct srdma_qp *qp)
{
	struct softrdma_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};
	struct srdma_srq *srq;

	spin_lock_bh(&qp->rq_lock);
	rcu_read_lock();
	srq = qp->resp.have_rwqe ? srdma_xsrq_lookup_rcu(qp->resp.xrc_srqn) : NULL;
	if (srq) {
		cqe.wr_id = qp->resp.rwqe->wr_id;
		if (!srdma_cq_post(to_scq(srq->ibsrq.ext.cq), &cqe, false))
			qp->resp.have_rwqe = false;
	}
	rcu_read_unlock();
	spin_unlock_bh(&qp->rq_lock);
}
