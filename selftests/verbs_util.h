/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the selftest programs that use libibverbs.
 */
#ifndef SRDMA_VERBS_UTIL_H
#define SRDMA_VERBS_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

/* Open the RDMA device called @name; NULL if there is none. */
static inline struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* Port 1 hw counter @name of @ctx's device (rdma statistic); -1 if none. */
static inline int64_t hw_counter(struct ibv_context *ctx, const char *name)
{
	char path[sizeof(ctx->device->ibdev_path) + 64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ports/1/hw_counters/%.40s",
		 ctx->device->ibdev_path, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

#endif /* SRDMA_VERBS_UTIL_H */
