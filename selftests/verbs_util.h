/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the selftest programs that use libibverbs.
 */
#ifndef SRDMA_VERBS_UTIL_H
#define SRDMA_VERBS_UTIL_H

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

#endif /* SRDMA_VERBS_UTIL_H */
