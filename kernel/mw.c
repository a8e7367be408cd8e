// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows, types 1 and 2(B): a bind WQE opens part of an MR to
 * remote access under the window's own rkey; a local invalidate, a
 * SEND with invalidate or the window's deallocation closes it again.
 */
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

int srdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibmw->device);
	struct srdma_mw *mw = to_smw(ibmw);
	u32 key;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	err = srdma_count_get(&sdev->nmw, SRDMA_MAX_MW);
	if (err)
		return err;
	spin_lock_init(&mw->lock);
	refcount_set(&mw->ref, 1);
	init_completion(&mw->released);
	err = srdma_key_alloc(sdev, xa_tag_pointer(mw, SRDMA_KEY_MW), &key);
	if (err) {
		atomic_dec(&sdev->nmw);
		return err;
	}
	ibmw->rkey = key;
	WRITE_ONCE(mw->rkey, key);
	return 0;
}

/* A window unpins the MR it was bound to: the MR may go now. */
static void srdma_mw_unpin(struct srdma_mr *mr)
{
	if (mr)
		atomic_dec(&mr->bound_mws);
}

int srdma_dealloc_mw(struct ib_mw *ibmw)
{
	struct srdma_dev *sdev = to_sdev(ibmw->device);
	struct srdma_mw *mw = to_smw(ibmw);

	/* No new lookups, then wait for those under way. */
	xa_erase(&sdev->mr_xa, srdma_key_index(mw->rkey));
	synchronize_rcu();
	if (!refcount_dec_and_test(&mw->ref))
		wait_for_completion(&mw->released);
	srdma_mw_unpin(mw->mr);
	mw->mr = NULL;
	atomic_dec(&sdev->nmw);
	return 0;
}

/*
 * The MW whose table slot @key names, with a reference; any tag: a bind
 * names its window by the key it was allocated with (type 2 keys change
 * with binds the provider does not track).
 */
static struct srdma_mw *srdma_mw_get(struct srdma_dev *sdev, u32 key)
{
	struct srdma_mw *mw;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&sdev->mr_xa, srdma_key_index(key));
	mw = xa_pointer_tag(entry) == SRDMA_KEY_MW ? xa_untag_pointer(entry) :
						     NULL;
	if (mw && !refcount_inc_not_zero(&mw->ref))
		mw = NULL;
	rcu_read_unlock();
	return mw;
}

static void srdma_mw_put(struct srdma_mw *mw)
{
	if (refcount_dec_and_test(&mw->ref))
		complete(&mw->released);
}

/**
 * srdma_mw_bind - execute a bind WQE of @qp
 * @qp: the QP, sq_lock held
 * @w: the WQE (our copy)
 *
 * The provider lets type 1 windows be bound through ibv_bind_mw() only
 * and type 2 through post_send only; both come here as a bind WQE.
 * Return: 0, or the ib_wc_status to complete the WQE with.
 */
u8 srdma_mw_bind(struct srdma_qp *qp, const struct softrdma_send_wqe *w)
{
	struct srdma_dev *sdev = qp_sdev(qp);
	/* Local write means nothing to a window: programs pass it anyway. */
	u32 access = w->wr.bind.access & ~IB_ACCESS_LOCAL_WRITE;
	struct srdma_mr *mr = NULL, *old = NULL;
	struct srdma_mw *mw;
	u8 status = IB_WC_MW_BIND_ERR;

	mw = srdma_mw_get(sdev, w->wr.bind.mw_rkey);
	if (!mw)
		return status;
	if (mw->ibmw.pd != srdma_qp_pd(qp) || (access & ~SRDMA_MW_ACCESS) ||
	    srdma_key_index(w->wr.bind.new_rkey) !=
	    srdma_key_index(w->wr.bind.mw_rkey))
		goto out;
	/* A zero-length bind of a type 1 window unbinds it: no MR needed. */
	if (w->wr.bind.length || mw->ibmw.type != IB_MW_TYPE_1) {
		/* The MR must allow binding; remote writes need it writable. */
		mr = srdma_mr_get(sdev, w->wr.bind.mr_lkey, srdma_qp_pd(qp),
				  IB_ACCESS_MW_BIND);
		if (!mr || !srdma_mr_check(mr, w->wr.bind.addr,
					   w->wr.bind.length) ||
		    ((access & (IB_ACCESS_REMOTE_WRITE |
				IB_ACCESS_REMOTE_ATOMIC)) &&
		     !(mr->access & IB_ACCESS_LOCAL_WRITE)))
			goto out;
		/* Pinned: an MR whose deregistration began is not bound. */
		if (!atomic_inc_unless_negative(&mr->bound_mws))
			goto out;
	}

	spin_lock_bh(&mw->lock);
	/* A type 2 window is bound once, until invalidated (IBA 10.6.7). */
	if (mw->ibmw.type == IB_MW_TYPE_1 || !mw->mr) {
		old = mw->mr;
		mw->rkey = w->wr.bind.new_rkey;
		mw->mr = mr;
		mw->va = w->wr.bind.addr;
		mw->len = w->wr.bind.length;
		mw->access = access;
		mw->qpn = mw->ibmw.type == IB_MW_TYPE_2 ? qp->ibqp.qp_num : 0;
		status = IB_WC_SUCCESS;
	} else {
		old = mr;	/* refused: the new pin goes */
	}
	spin_unlock_bh(&mw->lock);
	srdma_mw_unpin(old);
out:
	if (mr)
		srdma_mr_put(mr);
	srdma_mw_put(mw);
	return status;
}

/**
 * srdma_mw_invalidate - close type 2 window @rkey
 * @qp: the QP of a LOCAL_INV WQE, or that a SEND with invalidate came to
 * @rkey: the window's key
 * @remote: from a SEND with invalidate: the window must be bound through
 *	@qp, not only in its PD
 *
 * Return: 0, or -EINVAL if @rkey names no valid type 2 window of @qp.
 */
int srdma_mw_invalidate(struct srdma_qp *qp, u32 rkey, bool remote)
{
	struct srdma_mw *mw = srdma_mw_get(qp_sdev(qp), rkey);
	struct srdma_mr *mr = NULL;
	int err = -EINVAL;

	if (!mw)
		return err;
	spin_lock_bh(&mw->lock);
	if (mw->mr && mw->rkey == rkey && mw->ibmw.type == IB_MW_TYPE_2 &&
	    mw->ibmw.pd == srdma_qp_pd(qp) &&
	    (!remote || mw->qpn == qp->ibqp.qp_num)) {
		mr = mw->mr;
		mw->mr = NULL;
		err = 0;
	}
	spin_unlock_bh(&mw->lock);
	srdma_mw_unpin(mr);
	srdma_mw_put(mw);
	return err;
}

/**
 * srdma_mw_resolve - the MR behind window @rkey for a remote access
 * @qp: the responder's QP
 * @rkey: the key the request carries
 * @va: start of the access
 * @len: its length
 * @access: the IB_ACCESS_REMOTE_* flag it needs
 *
 * The MR's own access is checked again at each use, not only at bind
 * time: a window never lets a peer write memory its MR may not write.
 *
 * Return: the MR with a reference (srdma_mr_put()), or NULL when no valid
 * window of @qp's PD (and, for type 2, bound through @qp) with @rkey
 * grants @access over the whole range.
 */
struct srdma_mr *srdma_mw_resolve(struct srdma_qp *qp, u32 rkey, u64 va,
				  u64 len, int access)
{
	struct srdma_mw *mw = srdma_mw_get(qp_sdev(qp), rkey);
	int mr_access = access & (IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_REMOTE_ATOMIC) ?
			IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND :
			IB_ACCESS_MW_BIND;
	struct srdma_mr *mr = NULL;

	if (!mw)
		return NULL;
	spin_lock_bh(&mw->lock);
	/* A bound window pins its MR: its table reference is there. */
	if (mw->mr && mw->rkey == rkey && mw->ibmw.pd == srdma_qp_pd(qp) &&
	    (mw->ibmw.type == IB_MW_TYPE_1 || mw->qpn == qp->ibqp.qp_num) &&
	    (mw->access & access) == access && va >= mw->va &&
	    len <= mw->len && va - mw->va <= mw->len - len &&
	    mw->mr->ibmr.pd == mw->ibmw.pd &&
	    (READ_ONCE(mw->mr->access) & mr_access) == mr_access &&
	    srdma_mr_check(mw->mr, va, len) &&
	    /* a fast-register MR: registered and not invalidated */
	    (!mw->mr->kpages || smp_load_acquire(&mw->mr->valid)) &&
	    refcount_inc_not_zero(&mw->mr->ref))
		mr = mw->mr;
	spin_unlock_bh(&mw->lock);
	srdma_mw_put(mw);
	return mr;
}
