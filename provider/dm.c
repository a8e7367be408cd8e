/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Device memory: the kernel driver owns it; we map it at the offset its
 * handle names (uapi) and copy to and from it there. RDMA reaches it
 * through zero-based MRs the kernel registers over it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "softrdma.h"

struct srdma_dm {
	struct verbs_dm vdm;
	uint8_t *addr;		/* our mapping of it */
	size_t length;		/* what was asked for */
	size_t map_size;	/* length, in whole pages */
};

static inline struct srdma_dm *to_sdm(struct ibv_dm *ibdm)
{
	return (struct srdma_dm *)ibdm;
}

/* As a NIC's: whole aligned words, inside the allocation. */
static int srdma_dm_range(struct srdma_dm *dm, uint64_t off, size_t len)
{
	if (off % SOFTRDMA_DM_ALIGN || len % SOFTRDMA_DM_ALIGN ||
	    off > dm->length || len > dm->length - off)
		return EINVAL;
	return 0;
}

static int srdma_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			      const void *host_addr, size_t length)
{
	struct srdma_dm *dm = to_sdm(ibdm);
	int ret = srdma_dm_range(dm, dm_offset, length);

	if (!ret)
		memcpy(dm->addr + dm_offset, host_addr, length);
	return ret;
}

static int srdma_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
				uint64_t dm_offset, size_t length)
{
	struct srdma_dm *dm = to_sdm(ibdm);
	int ret = srdma_dm_range(dm, dm_offset, length);

	if (!ret)
		memcpy(host_addr, dm->addr + dm_offset, length);
	return ret;
}

struct ibv_dm *srdma_alloc_dm(struct ibv_context *ibctx,
			      struct ibv_alloc_dm_attr *attr)
{
	size_t page = sysconf(_SC_PAGESIZE);
	struct srdma_dm *dm;
	int ret;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	ret = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, NULL);
	if (ret)
		goto err_free;
	dm->length = attr->length;
	dm->map_size = (attr->length + page - 1) & ~(page - 1);
	dm->addr = mmap(NULL, dm->map_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, ibctx->cmd_fd,
			SOFTRDMA_DM_MMAP_OFFSET(dm->vdm.handle));
	if (dm->addr == MAP_FAILED) {
		ret = errno;
		ibv_cmd_free_dm(&dm->vdm);
		goto err_free;
	}
	dm->vdm.dm.memcpy_to_dm = srdma_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = srdma_memcpy_from_dm;
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = ret;
	return NULL;
}

/*
 * The kernel frees the DM first (it refuses while an MR is registered
 * over it); our mapping then goes, and the memory with it.
 */
int srdma_free_dm(struct ibv_dm *ibdm)
{
	struct srdma_dm *dm = to_sdm(ibdm);
	int ret = ibv_cmd_free_dm(&dm->vdm);

	if (ret)
		return ret;
	munmap(dm->addr, dm->map_size);
	free(dm);
	return 0;
}

struct ibv_mr *srdma_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length,
			       unsigned int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_dm_mr(pd, &to_sdm(ibdm)->vdm, dm_offset, length,
				access, vmr, NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}
