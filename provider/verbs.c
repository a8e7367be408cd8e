/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Control verbs that are plain uverbs commands with no driver data:
 * device and port queries, protection domains and parent domains.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "softrdma.h"

int srdma_query_device_ex(struct ibv_context *ibctx,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp = {};
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;

	/*
	 * The core passes fw_ver as a number and leaves the string to us;
	 * read it as major.minor.sub in 16-bit fields, the soft drivers'
	 * convention. 0 means the kernel has none to report.
	 */
	fw = resp.base.fw_ver;
	if (fw)
		snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
			 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
			 (unsigned int)(fw >> 16) & 0xffff,
			 (unsigned int)fw & 0xffff);
	return 0;
}

int srdma_query_port(struct ibv_context *ibctx, uint8_t port_num,
		     struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port_num, attr, &cmd, sizeof(cmd));
}

#if IBVERBS_PABI == 65
int srdma_query_port_speed(struct ibv_context *ibctx, uint32_t port_num,
			   uint64_t *speed)
{
	return ibv_cmd_query_port_speed(ibctx, port_num, speed);
}
#endif

/*
 * The device's clock, as completion timestamps have it: CLOCK_MONOTONIC
 * (hca_core_clock 1 GHz, so raw_clock is in nanoseconds).
 */
int srdma_query_rt_values(struct ibv_context *ibctx,
			  struct ibv_values_ex *values)
{
	(void)ibctx;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK &&
	    clock_gettime(CLOCK_MONOTONIC, &values->raw_clock))
		return errno;
	return 0;
}

struct ibv_pd *srdma_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd;
	struct srdma_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	if (ibv_cmd_alloc_pd(ibctx, &pd->ibpd, &cmd, sizeof(cmd),
			     &resp, sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return &pd->ibpd;
}

/*
 * ibv_import_pd(): PD @pd_handle of the context this one was imported
 * from. The kernel has no query for a PD: a memory window allocated on
 * it and freed again shows the handle names one, so that a wrong handle
 * fails here and not at its first use. (Meanwhile the owner's dealloc_pd
 * would fail with EBUSY, as with any object on the PD.)
 */
struct ibv_pd *srdma_import_pd(struct ibv_context *ibctx, uint32_t pd_handle)
{
	struct srdma_pd *pd;
	struct ibv_mw *mw;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibpd.context = ibctx;
	pd->ibpd.handle = pd_handle;
	mw = srdma_alloc_mw(&pd->ibpd, IBV_MW_TYPE_1);
	if (!mw) {
		free(pd);
		return NULL;
	}
	/* Only a device gone fails this: its objects are gone with it. */
	if (srdma_dealloc_mw(mw))
		free(mw);
	return &pd->ibpd;
}

/* The PD stays: its owner deallocates it. */
void srdma_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_spd(ibpd));
}

/*
 * A parent domain is its PD under another name: same handle, so every
 * command made with it acts on that PD. Our queue buffers are kernel
 * memory mapped into the process, so custom allocators have nothing to
 * allocate; they are accepted and kept. Thread domains do not exist here.
 */
struct ibv_pd *srdma_alloc_parent_domain(struct ibv_context *ibctx,
					 struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct srdma_pd *pd;

	if (!attr->pd || attr->pd->context != ibctx ||
	    to_spd(attr->pd)->protection_domain) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->td || (attr->comp_mask & ~known)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibpd.context = ibctx;
	pd->ibpd.handle = attr->pd->handle;
	pd->protection_domain = attr->pd;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	return &pd->ibpd;
}

int srdma_dealloc_pd(struct ibv_pd *ibpd)
{
	struct srdma_pd *pd = to_spd(ibpd);
	int ret;

	if (!pd->protection_domain) {
		ret = ibv_cmd_dealloc_pd(ibpd);
		if (ret)
			return ret;
	}
	free(pd);
	return 0;
}
