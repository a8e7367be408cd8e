// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory (ibv_alloc_dm): memory the driver owns. A process maps it
 * (at the offset its handle names, see the uapi header), copies to and
 * from it, and registers zero-based MRs over it for RDMA. On a software
 * device it is kernel memory: what a NIC offers, without the speed.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

/**
 * struct srdma_dm - device memory
 * @ibdm: core DM
 * @mmap: the mmap entry that owns the memory (a struct srdma_mmap_entry)
 * @uctx: the context it was allocated in (its MRs look @mmap up there)
 *
 * Lifetime: alloc_dm creates it and dealloc_dm frees it; the core refuses
 * dealloc_dm while an MR is registered over it. Its memory belongs to
 * @mmap, which each mapping and each MR over it holds a reference of: the
 * pages outlive the DM until the last of those goes (srdma_mmap_free()).
 */
struct srdma_dm {
	struct ib_dm ibdm;
	struct rdma_user_mmap_entry *mmap;
	struct ib_ucontext *uctx;
};

static inline struct srdma_dm *to_sdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct srdma_dm, ibdm);
}

struct ib_dm *srdma_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *uctx,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct srdma_dev *sdev = to_sdev(ibdev);
	struct ib_uobject *uobj;
	struct srdma_mmap_entry *entry;
	struct srdma_dm *dm;
	size_t size;
	u32 pgoff;
	int err;

	if (attr->flags)
		return ERR_PTR(-EOPNOTSUPP);
	/* alignment is a log2; our memory is page aligned */
	if (!attr->length || attr->length > SOFTRDMA_MAX_DM_SIZE ||
	    attr->alignment > PAGE_SHIFT)
		return ERR_PTR(-EINVAL);
	uobj = uverbs_attr_get_uobject(attrs, UVERBS_ATTR_ALLOC_DM_HANDLE);
	if (IS_ERR(uobj))
		return ERR_CAST(uobj);
	if (uobj->id > SOFTRDMA_DM_MMAP_MAX_HANDLE)
		return ERR_PTR(-ENOSPC);
	err = srdma_count_get(&sdev->ndm, SRDMA_MAX_DM);
	if (err)
		return ERR_PTR(err);

	err = -ENOMEM;
	dm = kzalloc(sizeof(*dm), srdma_gfp(true));
	entry = kzalloc(sizeof(*entry), srdma_gfp(true));
	size = PAGE_ALIGN(attr->length);
	if (dm && entry)
		entry->addr = srdma_vmalloc(size, true);
	if (!entry || !entry->addr)
		goto err_free;
	/* Where the provider maps it: named by the handle, not returned. */
	pgoff = SOFTRDMA_DM_MMAP_OFFSET(uobj->id) >> PAGE_SHIFT;
	err = rdma_user_mmap_entry_insert_range(uctx, &entry->rdma, size,
						pgoff, pgoff);
	if (err)
		goto err_free;
	dm->mmap = &entry->rdma;
	dm->uctx = uctx;
	return &dm->ibdm;

err_free:
	if (entry)
		vfree(entry->addr);
	kfree(entry);
	kfree(dm);
	atomic_dec(&sdev->ndm);
	return ERR_PTR(err);
}

int srdma_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct srdma_dm *dm = to_sdm(ibdm);

	atomic_dec(&to_sdev(ibdm->device)->ndm);
	rdma_user_mmap_entry_remove(dm->mmap);	/* memory freed later */
	kfree(dm);
	return 0;
}

/*
 * A zero-based MR over [@attr->offset, + @attr->length) of the DM (the
 * core checked the range and the access). The MR holds the memory's mmap
 * entry, so the pages stay while the transport can reach them.
 */
struct ib_mr *srdma_reg_dm_mr(struct ib_pd *pd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs)
{
	struct srdma_dm *dm = to_sdm(ibdm);
	u32 first = attr->offset >> PAGE_SHIFT, i, n;
	struct srdma_mmap_entry *entry;
	struct srdma_mr *mr;
	int err;

	if (attr->access_flags & ~(SRDMA_MR_ACCESS | IB_ZERO_BASED |
				   IB_ACCESS_OPTIONAL))
		return ERR_PTR(-EOPNOTSUPP);
	if (attr->access_flags & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), srdma_gfp(true));
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->length = attr->length;
	mr->access = attr->access_flags;
	mr->page_off = offset_in_page(attr->offset);
	mr->dm_mmap = rdma_user_mmap_entry_get_pgoff(dm->uctx,
						     dm->mmap->start_pgoff);
	if (!mr->dm_mmap) {
		err = -EINVAL;
		goto err_free;
	}
	entry = to_mmap_entry(mr->dm_mmap);
	n = DIV_ROUND_UP(mr->page_off + attr->length, PAGE_SIZE);
	mr->pages = kvmalloc_array(max(n, 1U), sizeof(*mr->pages),
				   srdma_gfp(true));
	err = -ENOMEM;
	if (!mr->pages)
		goto err_put;
	for (i = 0; i < n; i++)
		mr->pages[i] = vmalloc_to_page(entry->addr +
					       (size_t)(first + i) * PAGE_SIZE);
	err = srdma_mr_add(to_sdev(pd->device), mr);
	if (err)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_put:
	rdma_user_mmap_entry_put(mr->dm_mmap);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}
