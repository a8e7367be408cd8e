/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device's port 1 hw counters (the rdma statistics in sysfs).
 */
#ifndef SRDMA_COUNTERS_H
#define SRDMA_COUNTERS_H

#include <stdint.h>
#include <infiniband/verbs.h>

/* Counter @name of the device at sysfs directory @dev; -1 if none. */
int64_t hw_counter_at(const char *dev, const char *name);

/* ... of @ctx's device. */
int64_t hw_counter(struct ibv_context *ctx, const char *name);

/* ... of the device called @ibdev. */
int64_t hw_counter_by_name(const char *ibdev, const char *name);

#endif /* SRDMA_COUNTERS_H */
