// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: registration of user memory (pinned through the core's
 * umem), DMA MRs for kernel users, re-registration and deregistration.
 * Keys and the copies the transport makes are mem.c's.
 */
#include <rdma/ib_umem.h>

#include "srdma.h"

/* A flat page array makes the copy an index, not a scatterlist walk. */
static int srdma_mr_map_pages(struct srdma_mr *mr)
{
	struct sg_page_iter sg_iter;
	size_t n = ib_umem_num_pages(mr->umem), i = 0;

	mr->pages = kvmalloc_array(n, sizeof(*mr->pages), srdma_gfp(true));
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &sg_iter, 0) {
		if (i == n)
			break;
		mr->pages[i++] = sg_page_iter_page(&sg_iter);
	}
	return 0;
}

/*
 * The access flags a user registration may ask for. Optional ones
 * (relaxed ordering) are hints we may ignore. HUGETLB says that an
 * explicit ODP range is all huge pages, which the core then tracks a huge
 * page at a time (it refuses it for implicit ODP); without ON_DEMAND it
 * means nothing.
 */
static int srdma_mr_access_ok(int access)
{
	if ((access & IB_ACCESS_HUGETLB) && !(access & IB_ACCESS_ON_DEMAND))
		return -EINVAL;
	if (access & ~(SRDMA_MR_ACCESS | SRDMA_ODP_ACCESS_HUGETLB |
		       IB_ACCESS_OPTIONAL))
		return -EOPNOTSUPP;
	return 0;
}

struct ib_mr *srdma_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	/* Implicit ODP: the whole address space, mapped as used. */
	bool implicit = (access & IB_ACCESS_ON_DEMAND) && !start &&
			length == U64_MAX;
	struct srdma_dev *sdev = to_sdev(pd->device);
	struct srdma_mr *mr;
	int err;

	err = srdma_mr_access_ok(access);
	if (err)
		return ERR_PTR(err);
	if (implicit ? iova :
	    !length || length > SRDMA_MAX_MR_SIZE || iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), srdma_gfp(true));
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	mr->odp_implicit = implicit;

	if (access & IB_ACCESS_ON_DEMAND) {
		err = srdma_odp_reg(sdev, mr, start);
		if (err)
			goto err_free;
	} else {
		mr->umem = srdma_umem_get(pd->device, start, length, access);
		if (IS_ERR(mr->umem)) {
			err = PTR_ERR(mr->umem);
			goto err_free;
		}
		err = srdma_mr_map_pages(mr);
		if (err)
			goto err_umem;
		mr->page_off = ib_umem_offset(mr->umem);
	}
	err = srdma_mr_add(sdev, mr);
	if (err)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_umem:
	if (mr->odp)
		srdma_odp_release(mr);
	else
		ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * Access and PD change in place (the core moves the MR to the new PD once
 * we return NULL). New pages, or write access the pinned pages lack, need
 * a new pinning: a new MR with new keys, which the core puts in the old
 * one's place before it deregisters that.
 */
struct ib_mr *srdma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata)
{
	struct srdma_mr *mr = to_smr(ibmr);
	int err;

	if (!mr->umem || (flags & ~IB_MR_REREG_SUPPORTED))
		return ERR_PTR(-EOPNOTSUPP);
	/* Its windows were checked against what it is now. */
	if (atomic_read(&mr->bound_mws))
		return ERR_PTR(-EBUSY);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	err = srdma_mr_access_ok(access);
	if (err)
		return ERR_PTR(err);
	if (!(flags & IB_MR_REREG_PD))
		pd = ibmr->pd;

	/*
	 * Writable pages, pinned vs on-demand, or small vs huge pages need
	 * a new mapping.
	 */
	if (!(flags & IB_MR_REREG_TRANS) &&
	    ((ib_access_writable(access) && !mr->umem->writable) ||
	     ((access ^ mr->access) &
	      (IB_ACCESS_ON_DEMAND | IB_ACCESS_HUGETLB)))) {
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
		flags |= IB_MR_REREG_TRANS;
	}
	if (flags & IB_MR_REREG_TRANS)
		return srdma_reg_user_mr(pd, start, length, iova, access, udata);

	WRITE_ONCE(mr->access, access);
	return NULL;
}

struct ib_mr *srdma_get_dma_mr(struct ib_pd *pd, int access)
{
	struct srdma_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->dma = true;
	mr->access = access;
	err = srdma_mr_add(to_sdev(pd->device), mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

int srdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srdma_mr *mr = to_smr(ibmr);

	/* A window bound to it must be closed first (as rdma_rxe). */
	if (atomic_cmpxchg(&mr->bound_mws, 0, -1))
		return -EBUSY;
	/* No new lookups, then wait for the transport's to finish. */
	xa_erase(&to_sdev(ibmr->device)->mr_xa, srdma_key_index(ibmr->lkey));
	atomic_dec(&to_sdev(ibmr->device)->nmr);
	srdma_mr_put(mr);
	wait_for_completion(&mr->released);

	if (mr->odp)
		srdma_odp_release(mr);
	else if (mr->umem)
		ib_umem_release(mr->umem);
	else if (mr->dm_mmap)
		rdma_user_mmap_entry_put(mr->dm_mmap);
	kvfree(mr->pages);
	kfree(mr->kpages);
	kfree_rcu(mr, rcu);
	return 0;
}
