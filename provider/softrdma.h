/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrdma libibverbs provider: objects shared between its source files.
 */
#ifndef SOFTRDMA_PROVIDER_H
#define SOFTRDMA_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "verbs_private.h"

#define srdma_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct srdma_device {
	struct verbs_device vdev;
	uint32_t abi_version;		/* the kernel's, within our range */
};

struct srdma_context {
	struct verbs_context vctx;
};

static inline struct srdma_device *to_sdev(struct ibv_device *ibdev)
{
	return srdma_container_of(ibdev, struct srdma_device, vdev.device);
}

static inline struct srdma_context *to_sctx(struct ibv_context *ibctx)
{
	return srdma_container_of(ibctx, struct srdma_context, vctx.context);
}

/* context.c */
struct verbs_context *srdma_alloc_context(struct ibv_device *ibdev,
					  int cmd_fd, void *private_data);

/* verbs.c */
int srdma_query_device_ex(struct ibv_context *ibctx,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int srdma_query_port(struct ibv_context *ibctx, uint8_t port_num,
		     struct ibv_port_attr *attr);
struct ibv_pd *srdma_alloc_pd(struct ibv_context *ibctx);
int srdma_dealloc_pd(struct ibv_pd *pd);

#endif /* SOFTRDMA_PROVIDER_H */
