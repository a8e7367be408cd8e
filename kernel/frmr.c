// SPDX-License-Identifier: GPL-2.0
/*
 * Fast-register MRs (FRWR) of kernel consumers: ib_alloc_mr() reserves a
 * key and a page list, ib_map_mr_sg() fills the list, an IB_WR_REG_MR
 * work request makes the MR valid under a new key, and LOCAL_INV or a
 * SEND with invalidate makes it invalid again. NVMe-oF and NFS/RDMA
 * register every I/O buffer this way.
 *
 * Our DMA addresses are kernel virtual addresses (ib_uses_virt_dma()), so
 * the page list holds the virtual address of each page.
 */
#include <linux/log2.h>
#include <linux/slab.h>

#include "srdma.h"

struct ib_mr *srdma_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct srdma_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SRDMA_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->kpages = kcalloc(max_num_sg, sizeof(*mr->kpages), GFP_KERNEL);
	if (!mr->kpages) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	err = srdma_mr_add(to_sdev(pd->device), mr);	/* invalid until REG_MR */
	if (err) {
		kfree(mr->kpages);
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int srdma_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct srdma_mr *mr = to_smr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->kpages[mr->npages++] = addr;
	return 0;
}

/* The consumer maps an MR only while it is invalid (not in use). */
int srdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	to_smr(ibmr)->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, srdma_set_page);
}

/**
 * srdma_frmr_register - execute an IB_WR_REG_MR, in order on the SQ
 * @qp: the kernel QP that posted it
 * @w: its WQE: bind.new_rkey is the MR's key from now on, bind.access
 *	what it grants
 *
 * Return: IB_WC_SUCCESS, or IB_WC_LOC_QP_OP_ERR if the key names no
 * invalid fast-register MR of @qp's PD.
 */
u8 srdma_frmr_register(struct srdma_qp *qp, const struct softrdma_send_wqe *w)
{
	struct srdma_dev *sdev = qp_sdev(qp);
	u32 key = w->wr.bind.new_rkey;
	struct srdma_mr *mr;
	u8 status = IB_WC_LOC_QP_OP_ERR;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, srdma_key_index(key));
	if (mr && !xa_pointer_tag(mr) && mr->kpages &&
	    mr->ibmr.pd == srdma_qp_pd(qp) && !READ_ONCE(mr->valid) &&
	    is_power_of_2(mr->ibmr.page_size) && mr->npages) {
		mr->iova = mr->ibmr.iova;
		mr->length = mr->ibmr.length;
		mr->page_shift = ilog2(mr->ibmr.page_size);
		mr->access = w->wr.bind.access & SRDMA_MR_ACCESS;
		mr->ibmr.lkey = key;
		mr->ibmr.rkey = key;
		/* Lookups see the fields above once they see it valid. */
		smp_store_release(&mr->valid, true);
		status = IB_WC_SUCCESS;
	}
	rcu_read_unlock();
	return status;
}

/**
 * srdma_key_invalidate - LOCAL_INV, or a SEND with invalidate, of @key
 * @qp: the QP of the WQE, or that the SEND came to
 * @key: a fast-register MR's key, or a type 2 memory window's
 * @remote: from a SEND with invalidate
 *
 * Return: 0, or -EINVAL if @key names no valid MR or window @qp may
 * invalidate.
 */
int srdma_key_invalidate(struct srdma_qp *qp, u32 key, bool remote)
{
	struct srdma_dev *sdev = qp_sdev(qp);
	struct srdma_mr *mr;
	int err = -EINVAL;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, srdma_key_index(key));
	if (xa_pointer_tag(mr)) {
		rcu_read_unlock();
		return srdma_mw_invalidate(qp, key, remote);
	}
	if (mr && mr->kpages && mr->ibmr.pd == srdma_qp_pd(qp) &&
	    mr->ibmr.rkey == key && READ_ONCE(mr->valid)) {
		WRITE_ONCE(mr->valid, false);
		err = 0;
	}
	rcu_read_unlock();
	return err;
}
