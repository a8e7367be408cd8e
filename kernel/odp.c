// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging: MRs whose pages are not pinned but mapped when the
 * transport needs them, and unmapped when the kernel reclaims or the
 * process unmaps them (the core's ib_umem_odp and its MMU notifier).
 *
 * The transport runs in softirq and cannot fault pages in. An access
 * that finds a page absent asks the MR's fault work to map the range and
 * fails with -EAGAIN; each side then comes back later, as RoCE NICs do:
 * the responder answers RNR NAK, the requester pauses as after one, a
 * read response or atomic result that cannot be placed is dropped and
 * asked for again. A range the process has no memory for fails the next
 * access with -EACCES, a protection error.
 *
 * We are a virtual-DMA device: the pages are reached by their kernel
 * addresses. The transport uses only those in our own srdma_odp_pages,
 * taken from the core after it mapped them and checked that no
 * invalidation raced the mapping (the core's own entries may be written
 * before that check, on 6.15 on). Copies run under the MR's odp_lock,
 * which the invalidation takes to clear our entries before the pages are
 * unmapped, so no page goes away under a copy.
 *
 * An implicit MR (the whole address space) keeps its pages in child
 * umems of SRDMA_ODP_CHILD_SHIFT bytes each, made by the fault work (or a
 * prefetch) the first time an access falls in their range, each with its
 * own MMU interval notifier, all freed with the MR.
 */
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem_odp.h>

#include "srdma.h"

/* 2 MiB: 512 pages a child, 8 KiB of page state. */
#define SRDMA_ODP_CHILD_SHIFT	21

/* The pages that hold @va: the MR's own, or a child's (NULL: none yet). */
static struct srdma_odp_pages *srdma_odp_pages(struct srdma_mr *mr, u64 va)
{
	if (!mr->odp_implicit)
		return mr->odp_pages;
	return xa_load(&mr->odp_children, va >> SRDMA_ODP_CHILD_SHIFT);
}

/* Implicit MR: can [@va, @end) be user memory of the MR's process? */
static bool srdma_odp_user_range(struct srdma_mr *mr, u64 va, u64 end)
{
	return end >= va && end <= mr->umem->owning_mm->task_size;
}

static size_t srdma_odp_idx(struct ib_umem_odp *odp, u64 va)
{
	return (va - ib_umem_start(odp)) >> odp->page_shift;
}

/* Pages for @odp of @mr, all unmapped; NULL when out of memory. */
static struct srdma_odp_pages *srdma_odp_pages_alloc(struct srdma_mr *mr,
						     struct ib_umem_odp *odp)
{
	size_t n = (ib_umem_end(odp) - ib_umem_start(odp)) >> odp->page_shift;
	struct srdma_odp_pages *p;

	p = kvzalloc(struct_size(p, kva, n), GFP_KERNEL_ACCOUNT);
	if (p) {
		p->umem = odp;
		p->mr = mr;
	}
	return p;
}

/*
 * Forget [@start, @end) of @p. umem_mutex held, so the entries are
 * stable and the pages still mapped; odp_lock taken here, not held.
 */
static void srdma_odp_forget(struct srdma_odp_pages *p, u64 start, u64 end)
{
	struct ib_umem_odp *odp = p->umem;
	size_t first, last, i;

	start = max_t(u64, start, ib_umem_start(odp));
	end = min_t(u64, end, ib_umem_end(odp));
	if (start >= end)
		return;
	first = srdma_odp_idx(odp, start);
	last = srdma_odp_idx(odp, end - 1);
	/*
	 * The transport may have written them: 6.15 on marks pages dirty
	 * only for a device that DMA-mapped them. Not under the spinlock:
	 * a file system's dirtying may sleep.
	 */
	for (i = first; i <= last; i++)
		if (p->kva[i] & SRDMA_ODP_KVA_WRITE)
			set_page_dirty(virt_to_page(p->kva[i]));
	spin_lock_bh(&p->mr->odp_lock);
	memset(&p->kva[first], 0, (last + 1 - first) * sizeof(p->kva[0]));
	spin_unlock_bh(&p->mr->odp_lock);
}

static bool srdma_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct srdma_odp_pages *p = odp->private;	/* NULL: not set up yet */
	unsigned long start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(&odp->notifier, cur_seq);
	start = max_t(u64, ib_umem_start(odp), range->start);
	end = min_t(u64, ib_umem_end(odp), range->end);
	if (start < end) {
		if (p)
			srdma_odp_forget(p, start, end);
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops srdma_odp_ops = {
	.invalidate = srdma_odp_invalidate,
};

/*
 * Map [@va, @va + @len) of one umem into @p; see srdma_odp_map().
 *
 * One mapping of the MR at a time (odp_map_lock): hmm_range_fault() of
 * another could otherwise store an entry it read before an invalidation
 * after our own walk, into the core's array we copy from.
 */
static int srdma_odp_map_umem(struct srdma_odp_pages *p, u64 va, u64 len,
			      bool fault)
{
	struct ib_umem_odp *odp = p->umem;
	u64 pgsz = BIT_ULL(odp->page_shift), pg, end = va + len;
	int np;

	if (va < ib_umem_start(odp) || end > ib_umem_end(odp) || end < va)
		return -EFAULT;
	mutex_lock(&p->mr->odp_map_lock);
	np = ib_umem_odp_map_dma_and_lock(odp, va, len,
					  srdma_odp_map_access(odp->umem.writable),
					  fault);
	if (np < 0)
		goto out;
	/* Checked against invalidations and umem_mutex held: trusted now. */
	spin_lock_bh(&p->mr->odp_lock);
	for (pg = ALIGN_DOWN(va, pgsz); pg < end; pg += pgsz)
		p->kva[srdma_odp_idx(odp, pg)] = srdma_odp_core_kva(odp, pg);
	spin_unlock_bh(&p->mr->odp_lock);
	mutex_unlock(&odp->umem_mutex);
out:
	mutex_unlock(&p->mr->odp_map_lock);
	return np < 0 ? np : 0;
}

/*
 * The child of implicit @mr that holds @va, made now if there is none.
 * Sleeps; the fault work and a prefetch may race to make it: one wins.
 */
static struct srdma_odp_pages *srdma_odp_child(struct srdma_mr *mr, u64 va)
{
	unsigned long idx = va >> SRDMA_ODP_CHILD_SHIFT;
	struct srdma_odp_pages *p, *old;
	struct ib_umem_odp *child;

	p = xa_load(&mr->odp_children, idx);
	if (p)
		return p;
	child = ib_umem_odp_alloc_child(to_ib_umem_odp(mr->umem),
					idx << SRDMA_ODP_CHILD_SHIFT,
					BIT(SRDMA_ODP_CHILD_SHIFT),
					&srdma_odp_ops);
	if (IS_ERR(child))
		return ERR_CAST(child);
	p = srdma_odp_pages_alloc(mr, child);
	if (!p) {
		ib_umem_odp_release(child);
		return ERR_PTR(-ENOMEM);
	}
	/* Under umem_mutex, which the invalidation takes first. */
	mutex_lock(&child->umem_mutex);
	child->private = p;
	mutex_unlock(&child->umem_mutex);
	old = xa_cmpxchg(&mr->odp_children, idx, NULL, p, GFP_KERNEL);
	if (!old)
		return p;
	ib_umem_odp_release(child);
	kvfree(p);
	return xa_is_err(old) ? ERR_PTR(xa_err(old)) : old;
}

/**
 * srdma_odp_map - map user range [@va, @va + @len) of an ODP MR
 * @mr: the MR
 * @va: user virtual address
 * @len: bytes, at least 1
 * @fault: fault absent pages in; else map only those present
 *
 * Sleeps. Return: 0 or a negative errno (-EFAULT: no such memory).
 */
static int srdma_odp_map(struct srdma_mr *mr, u64 va, u64 len,
			 bool fault)
{
	u64 end = va + len;

	if (!mr->odp_implicit)
		return srdma_odp_map_umem(mr->odp_pages, va, len, fault);
	if (!srdma_odp_user_range(mr, va, end))
		return -EFAULT;
	while (va < end) {
		struct srdma_odp_pages *child = srdma_odp_child(mr, va);
		u64 n;
		int err;

		if (IS_ERR(child))
			return PTR_ERR(child);
		n = min_t(u64, end, ib_umem_end(child->umem)) - va;
		err = srdma_odp_map_umem(child, va, n, fault);
		if (err)
			return err;
		va += n;
	}
	return 0;
}

/* Map what the transport asked for; remember a range that cannot be. */
static void srdma_odp_fault_work(struct work_struct *work)
{
	struct srdma_mr *mr = container_of(work, struct srdma_mr, odp_work);
	u64 start, end;
	int err;

	spin_lock_bh(&mr->odp_lock);
	start = mr->odp_want_start;
	end = mr->odp_want_end;
	mr->odp_want_end = 0;
	spin_unlock_bh(&mr->odp_lock);

	err = end ? srdma_odp_map(mr, start, end - start, true) : 0;
	/*
	 * -EBUSY: invalidations kept racing the fault (pages migrating)
	 * until the core gave up; the next access asks again.
	 */
	if (err && err != -EBUSY) {
		spin_lock_bh(&mr->odp_lock);
		mr->odp_bad_start = start;
		mr->odp_bad_end = end;
		spin_unlock_bh(&mr->odp_lock);
	}
	srdma_mr_put(mr);	/* taken by srdma_odp_want() */
}

/* Ask for [@va, @va + @len) to be mapped; odp_lock held, a ref on @mr. */
static void srdma_odp_want(struct srdma_mr *mr, u64 va, u32 len)
{
	srdma_count(to_sdev(mr->ibmr.device), SRDMA_CNT_ODP_FAULTS);
	if (mr->odp_want_end) {
		mr->odp_want_start = min(mr->odp_want_start, va);
		mr->odp_want_end = max(mr->odp_want_end, va + len);
		return;		/* the queued work takes it too */
	}
	mr->odp_want_start = va;
	mr->odp_want_end = va + len;
	refcount_inc(&mr->ref);
	if (!queue_work(srdma_tx_wq, &mr->odp_work))
		srdma_mr_put(mr);	/* running: it comes round again */
}

/*
 * Are the pages of user range [@va, @va + @len) mapped for @write? If
 * not, ask for them. odp_lock held, @len at least 1.
 * Return: 0, -EAGAIN (mapping under way) or -EACCES (no memory there).
 */
static int srdma_odp_present(struct srdma_mr *mr, u64 va, u32 len,
			     bool write)
{
	u64 end = va + len, pg;

	/* Beyond the process's address space: no memory, ever. */
	if (mr->odp_implicit && !srdma_odp_user_range(mr, va, end))
		return -EACCES;
	for (pg = va; pg < end;) {
		struct srdma_odp_pages *p = srdma_odp_pages(mr, pg);
		unsigned int shift = p ? p->umem->page_shift : PAGE_SHIFT;
		unsigned long kva = p ? p->kva[srdma_odp_idx(p->umem, pg)] : 0;

		pg = (pg | (BIT_ULL(shift) - 1)) + 1;	/* the next page */
		if (kva && (!write || kva & SRDMA_ODP_KVA_WRITE))
			continue;
		/* It failed to map before: a protection error, once. */
		if (va < mr->odp_bad_end && end > mr->odp_bad_start) {
			mr->odp_bad_end = 0;
			return -EACCES;
		}
		srdma_odp_want(mr, va, len);
		return -EAGAIN;
	}
	return 0;
}

/**
 * srdma_odp_probe - would an access to [@iova, @iova + @len) go through?
 * @mr: an ODP MR, a reference held; the range checked
 * @iova: start in the MR's address space
 * @len: bytes
 * @write: the access writes
 *
 * For a responder that answers later (reads): absent pages are asked for
 * now. Return: 0, -EAGAIN or -EACCES (see srdma_odp_xfer()).
 */
int srdma_odp_probe(struct srdma_mr *mr, u64 iova, u32 len, bool write)
{
	int err;

	if (!len)
		return 0;
	spin_lock_bh(&mr->odp_lock);
	err = srdma_odp_present(mr, iova - mr->iova + mr->umem->address, len,
				write);
	spin_unlock_bh(&mr->odp_lock);
	return err;
}

/**
 * srdma_odp_xfer - srdma_mr_xfer() for an ODP MR
 * @mr: the MR, a reference held; the range checked
 * @iova: start in the MR's address space
 * @len: bytes
 * @x: the other end
 *
 * Return: as srdma_mr_xfer(), or -EAGAIN when a page is absent (its
 * mapping is under way) and -EACCES when the process has no memory there.
 */
int srdma_odp_xfer(struct srdma_mr *mr, u64 iova, u32 len,
		   struct srdma_xfer *x)
{
	u64 va = iova - mr->iova + mr->umem->address;
	struct srdma_odp_pages *p = NULL;
	bool to_mr;
	int err;

	if (!len)
		return 0;
	to_mr = srdma_xfer_to_mem(x->op);
	spin_lock_bh(&mr->odp_lock);
	err = srdma_odp_present(mr, va, len, to_mr);
	/* Piece by small page: a fragment must not cross one (nor a child). */
	while (len && !err) {
		unsigned int shift;
		u8 *kva;
		u32 n;

		/* one lookup per child, not per page */
		if (!p || va >= ib_umem_end(p->umem))
			p = srdma_odp_pages(mr, va);
		shift = p->umem->page_shift;
		kva = (u8 *)(p->kva[srdma_odp_idx(p->umem, va)] &
			     ~SRDMA_ODP_KVA_WRITE) + (va & (BIT_ULL(shift) - 1));
		n = min_t(u64, len, PAGE_SIZE - offset_in_page(kva));

		err = srdma_xfer_piece(x, virt_to_page(kva),
				       offset_in_page(kva), kva, n);
		va += n;
		len -= n;
	}
	spin_unlock_bh(&mr->odp_lock);
	return err;
}

/**
 * srdma_odp_reg - set up @mr over user memory, unpinned
 * @sdev: the device
 * @mr: an MR being registered (iova, length and access set)
 * @start: user virtual address
 *
 * Pages already present are mapped; the rest come on first access.
 */
int srdma_odp_reg(struct srdma_dev *sdev, struct srdma_mr *mr, u64 start)
{
	struct ib_umem_odp *odp;
	int err;

	if (!IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING) ||
	    !ib_uses_virt_dma(&sdev->ibdev))
		return -EOPNOTSUPP;
	spin_lock_init(&mr->odp_lock);
	mutex_init(&mr->odp_map_lock);
	INIT_WORK(&mr->odp_work, srdma_odp_fault_work);
	if (mr->odp_implicit) {
		odp = ib_umem_odp_alloc_implicit(&sdev->ibdev, mr->access);
		if (IS_ERR(odp))
			return PTR_ERR(odp);
		/*
		 * Children are made later, maybe after the process has left:
		 * its mm_struct must outlive the MR (the root holds nothing).
		 */
		mmgrab(odp->umem.owning_mm);
		xa_init(&mr->odp_children);
		mr->umem = &odp->umem;
		mr->odp = true;
		return 0;
	}
	odp = ib_umem_odp_get(&sdev->ibdev, start, mr->length, mr->access,
			      &srdma_odp_ops);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mr->odp_pages = srdma_odp_pages_alloc(mr, odp);
	if (!mr->odp_pages) {
		err = -ENOMEM;
		goto err_release;
	}
	mr->umem = &odp->umem;
	/* Under umem_mutex, which the invalidation takes first. */
	mutex_lock(&odp->umem_mutex);
	odp->private = mr->odp_pages;
	mutex_unlock(&odp->umem_mutex);

	err = srdma_odp_map(mr, start, mr->length, false);
	if (err)
		goto err_release;
	mr->odp = true;
	return 0;

err_release:
	ib_umem_odp_release(odp);
	kvfree(mr->odp_pages);
	mr->odp_pages = NULL;
	mr->umem = NULL;
	return err;
}

/* Mark written pages dirty, as the invalidation would; then free @p. */
static void srdma_odp_pages_release(struct srdma_odp_pages *p)
{
	struct ib_umem_odp *odp = p->umem;

	mutex_lock(&odp->umem_mutex);
	srdma_odp_forget(p, ib_umem_start(odp), ib_umem_end(odp));
	mutex_unlock(&odp->umem_mutex);
	ib_umem_odp_release(odp);
	kvfree(p);
}

void srdma_odp_release(struct srdma_mr *mr)
{
	struct ib_umem_odp *root = to_ib_umem_odp(mr->umem);
	struct srdma_odp_pages *child;
	unsigned long idx;

	if (!mr->odp_implicit) {
		srdma_odp_pages_release(mr->odp_pages);
		return;
	}
	xa_for_each(&mr->odp_children, idx, child)
		srdma_odp_pages_release(child);
	xa_destroy(&mr->odp_children);
	mmdrop(root->umem.owning_mm);
	ib_umem_odp_release(root);
}

/**
 * srdma_advise_mr - prefetch ODP memory (ibv_advise_mr)
 * @pd: the PD of the lkeys
 * @advice: PREFETCH (read), PREFETCH_WRITE, or PREFETCH_NO_FAULT (map
 *	only what is present)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done before return; else as
 *	well, since we have no faster way
 * @sg_list: ranges, by lkey
 * @num_sge: their number
 * @attrs: unused
 */
int srdma_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct srdma_dev *sdev = to_sdev(pd->device);
	int access = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE ?
		     IB_ACCESS_LOCAL_WRITE : 0;
	u32 i;
	int err = 0;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;

	for (i = 0; i < num_sge && !err; i++) {
		struct srdma_mr *mr = srdma_mr_get(sdev, sg_list[i].lkey, pd,
						   access);

		if (!mr)
			return -ENOENT;
		if (!mr->odp || !sg_list[i].length ||
		    !srdma_mr_check(mr, sg_list[i].addr, sg_list[i].length))
			err = -EINVAL;
		else
			err = srdma_odp_map(mr, sg_list[i].addr - mr->iova +
						mr->umem->address,
					    sg_list[i].length,
					    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT);
		srdma_mr_put(mr);
	}
	return err;
}
