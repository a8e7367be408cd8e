// SPDX-License-Identifier: GPL-2.0
/*
 * Memory access by key: the table that names MRs and MWs by key, and the
 * checked copy between registered memory (pinned pages, a kernel DMA or
 * fast-register MR, ODP pages) and a buffer, a packet or a QP's SGE list
 * that the transport does all its placement and fetching through.
 */
#include <linux/highmem.h>
#include <linux/random.h>

#include "srdma.h"

/*
 * A key is its table index above an 8-bit random tag: a peer cannot
 * reuse the key of a deregistered MR for the new MR in the same slot
 * without guessing the tag, and keys do not count up in a simple sequence.
 * MRs and MWs share the table (an MW entry is tagged SRDMA_KEY_MW), which
 * holds as many of each as the device reports at once.
 */
#define SRDMA_KEY_TAG_BITS	8
#define SRDMA_KEY_INDEX_MAX	(SRDMA_MAX_MR + SRDMA_MAX_MW)
static_assert(SRDMA_KEY_INDEX_MAX < 1U << (32 - SRDMA_KEY_TAG_BITS));

u32 srdma_key_index(u32 key)
{
	return key >> SRDMA_KEY_TAG_BITS;
}

/**
 * srdma_key_alloc - publish @entry in the key table under a new key
 * @sdev: the device
 * @entry: an MR, or an MW tagged with xa_tag_pointer(mw, SRDMA_KEY_MW);
 *	its key field must not match any key yet (lookups compare it)
 * @key: the new key
 */
int srdma_key_alloc(struct srdma_dev *sdev, void *entry, u32 *key)
{
	u32 index;
	int err;

	err = xa_alloc_cyclic(&sdev->mr_xa, &index, entry,
			      XA_LIMIT(1, SRDMA_KEY_INDEX_MAX),
			      &sdev->mr_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	*key = index << SRDMA_KEY_TAG_BITS |
	       (get_random_u32() & GENMASK(SRDMA_KEY_TAG_BITS - 1, 0));
	return 0;
}

/* Counts @mr among the device's MRs too: srdma_dereg_mr() drops it. */
int srdma_mr_add(struct srdma_dev *sdev, struct srdma_mr *mr)
{
	u32 key;
	int err;

	err = srdma_count_get(&sdev->nmr, SRDMA_MAX_MR);
	if (err)
		return err;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	err = srdma_key_alloc(sdev, mr, &key);
	if (err) {
		atomic_dec(&sdev->nmr);
		return err;
	}
	mr->ibmr.rkey = key;
	WRITE_ONCE(mr->ibmr.lkey, key);
	return 0;
}

/**
 * srdma_mr_get - look up an MR by key for an access
 * @sdev: the device
 * @key: lkey or rkey
 * @pd: the PD the access comes from; the MR must belong to it
 * @access: IB_ACCESS_* flags the access needs
 *
 * Return: the MR with a reference (srdma_mr_put()), or NULL if no valid MR
 * of @pd has @key and grants @access.
 */
struct srdma_mr *srdma_mr_get(struct srdma_dev *sdev, u32 key,
			      struct ib_pd *pd, int access)
{
	struct srdma_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, srdma_key_index(key));
	if (xa_pointer_tag(mr))
		mr = NULL;	/* an MW */
	/* A fast-register MR is valid from REG_MR to its invalidation. */
	if (mr && (mr->ibmr.lkey != key || mr->ibmr.pd != pd ||
		   (mr->kpages && !smp_load_acquire(&mr->valid)) ||
		   (mr->access & access) != access ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void srdma_mr_put(struct srdma_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/*
 * Is [@iova, @iova + @len) inside @mr? Written so that no sum can
 * overflow.
 */
bool srdma_mr_check(const struct srdma_mr *mr, u64 iova, u64 len)
{
	if (mr->dma)
		return true;
	return iova >= mr->iova && len <= mr->length &&
	       iova - mr->iova <= mr->length - len;
}

/* One piece of a transfer: @n bytes at @va, in @page at @pg_off. */
int srdma_xfer_piece(struct srdma_xfer *x, struct page *page,
		     u32 pg_off, u8 *va, u32 n)
{
	struct sk_buff *skb = x->skb;
	u64 v;
	int i;

	switch (x->op) {
	case SRDMA_TO_BUF:
		memcpy(x->buf + x->done, va, n);
		break;
	case SRDMA_FROM_BUF:
		memcpy(va, x->buf + x->done, n);
		break;
	case SRDMA_STORE64:
		if (n == sizeof(v) && IS_ALIGNED((unsigned long)va, sizeof(v))) {
			memcpy(&v, x->buf, sizeof(v));
			/* one store, after every earlier placement of this QP */
			smp_store_release((u64 *)va, v);
			break;
		}
		/*
		 * The MR's memory does not align as its addresses do (an iova
		 * chosen apart from the buffer, a zero-based MR at an odd
		 * offset): no single store can place it, so in order.
		 */
		smp_wmb();
		memcpy(va, x->buf + x->done, n);
		break;
	case SRDMA_FROM_SKB:
		if (skb_copy_bits(skb, x->skb_off + x->done, va, n))
			return -EINVAL;
		break;
	case SRDMA_TO_FRAGS:
		i = skb_shinfo(skb)->nr_frags;
		if (i && skb_can_coalesce(skb, i, page, pg_off)) {
			skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], n);
		} else {
			if (!page || i >= x->max_frags)
				return -EMSGSIZE;
			get_page(page);
			skb_fill_page_desc(skb, i, page, pg_off, n);
		}
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		break;
	}
	x->done += n;
	return 0;
}

/*
 * A fast-register MR: page by page of the consumer's page size, through
 * its list of the pages' kernel addresses. Kernel memory is not lent to
 * packets (slab pages must not be), so its pieces are copied.
 */
static int srdma_frmr_xfer(struct srdma_mr *mr, u64 iova, u32 len,
			   struct srdma_xfer *x)
{
	u64 mask = BIT_ULL(mr->page_shift) - 1;
	u64 idx = (iova >> mr->page_shift) - (mr->iova >> mr->page_shift);
	int err = 0;

	while (len && !err) {
		u32 n = min_t(u64, len, mask + 1 - (iova & mask));

		if (idx >= mr->npages)
			return -EINVAL;
		err = srdma_xfer_piece(x, NULL, 0,
				       (u8 *)(uintptr_t)(mr->kpages[idx] +
							 (iova & mask)), n);
		iova += n;
		len -= n;
		idx++;
	}
	return err;
}

/**
 * srdma_mr_xfer - move bytes between registered memory and @x
 * @mr: the MR; the range must have passed srdma_mr_check()
 * @iova: start in the MR's address space
 * @len: bytes
 * @x: the other end; @x->done grows by what was moved
 *
 * Return: 0; -EMSGSIZE when SRDMA_TO_FRAGS ran out of frags (or the MR
 * has no pages to lend), -EINVAL when SRDMA_FROM_SKB ran past the skb.
 */
int srdma_mr_xfer(struct srdma_mr *mr, u64 iova, u32 len, struct srdma_xfer *x)
{
	u64 off;
	int err = 0;

	if (mr->dma)	/* iova is a kernel virtual address */
		return srdma_xfer_piece(x, NULL, 0, (u8 *)(uintptr_t)iova, len);
	if (mr->kpages)
		return srdma_frmr_xfer(mr, iova, len, x);
	if (mr->odp)
		return srdma_odp_xfer(mr, iova, len, x);

	off = iova - mr->iova + mr->page_off;
	while (len && !err) {
		struct page *page = mr->pages[off >> PAGE_SHIFT];
		u32 pg_off = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - pg_off);
		u8 *va = NULL;

		if (x->op != SRDMA_TO_FRAGS)
			va = kmap_local_page(page);
		err = srdma_xfer_piece(x, page, pg_off, va ? va + pg_off : NULL,
				       n);
		if (va)
			kunmap_local(va);
		off += n;
		len -= n;
	}
	return err;
}

/**
 * srdma_sge_xfer - move bytes between a QP's local SGE list and @x
 * @qp: the QP (its PD owns the lkeys)
 * @sge: SGE list (a kernel copy)
 * @nsge: its length
 * @off: byte offset into the SGE list where the transfer starts
 * @len: bytes
 * @x: the other end (see srdma_mr_xfer()); writing into the SGEs needs
 *	IB_ACCESS_LOCAL_WRITE
 *
 * Return: 0, -EINVAL if the SGEs are shorter than @off + @len, -EACCES if
 * an lkey is invalid, of another PD, lacks access or is exceeded, or an
 * error of srdma_mr_xfer().
 */
int srdma_sge_xfer(struct srdma_qp *qp, const struct softrdma_sge *sge,
		   u32 nsge, u32 off, u32 len, struct srdma_xfer *x)
{
	struct srdma_dev *sdev = qp_sdev(qp);
	int access = srdma_xfer_to_mem(x->op) ?
		     IB_ACCESS_LOCAL_WRITE : 0;
	int err;

	for (; len && nsge; sge++, nsge--) {
		struct srdma_mr *mr;
		u32 n;

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		n = min(len, sge->length - off);
		mr = srdma_mr_get(sdev, sge->lkey, srdma_qp_pd(qp), access);
		if (!mr)
			return -EACCES;
		err = srdma_mr_check(mr, sge->addr + off, n) ?
		      srdma_mr_xfer(mr, sge->addr + off, n, x) : -EACCES;
		srdma_mr_put(mr);
		if (err)
			return err;
		len -= n;
		off = 0;
	}
	return len ? -EINVAL : 0;
}
