/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrdma kernel <-> userspace ABI: the one header both the kernel
 * module and the libibverbs provider compile against.
 *
 * Everything here is fixed-layout (explicit padding, __aligned_u64) so the
 * same bytes mean the same thing to a 64-bit kernel and any provider.
 */
#ifndef SOFTRDMA_ABI_H
#define SOFTRDMA_ABI_H

#include <linux/types.h>

/*
 * uverbs ABI version the kernel reports; the provider only binds to a device
 * whose version lies in [SOFTRDMA_ABI_MIN, SOFTRDMA_ABI_VERSION].
 */
#define SOFTRDMA_ABI_VERSION	1
#define SOFTRDMA_ABI_MIN	1

/* rdma link type: "rdma link add <name> type softrdma netdev <ndev>". */
#define SOFTRDMA_LINK_TYPE	"softrdma"

/*
 * Out-of-tree drivers have no enum rdma_driver_id of their own, so the
 * provider recognises our devices by this string, which the kernel exposes
 * as /sys/class/infiniband/<ibdev>/hca_type.
 */
#define SOFTRDMA_HCA_TYPE	"softrdma"

#endif /* SOFTRDMA_ABI_H */
