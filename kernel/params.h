/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device's limits and parameters: what query_device and query_port
 * report and what the verbs enforce.
 */
#ifndef SRDMA_PARAMS_H
#define SRDMA_PARAMS_H

#include <rdma/ib_verbs.h>

#define SRDMA_DRV_NAME		"softrdma"
#define SRDMA_PORT		1	/* one port per device, as on a NIC port */
#define SRDMA_ROCE_UDP_PORT	4791	/* IANA port of RoCEv2 */

/*
 * Device limits reported by query_device. The counts of PDs, MRs, CQs,
 * QPs, AHs, SRQs and MWs hold exactly, per device, kernel consumers'
 * objects included, and are small enough for a test to reach each in a
 * slow guest (obj_limits.c). Memory is not what they bound: the memory
 * cgroup of the user who makes an object is charged for its queues.
 */
#define SRDMA_MAX_PD		0x10000
/* 100,000 MRs, which storage targets and MPI caches reach, and more. */
#define SRDMA_MAX_MR		0x20000
#define SRDMA_MAX_MR_SIZE	BIT_ULL(40)
#define SRDMA_MAX_CQ		0x2000
/*
 * CQEs per CQ: as NICs report (mlx5 4M - 1), not rdma_rxe's 32K - 1.
 * libfabric 1.17's ofi_rxm sizes its one verbs CQ for every peer it may
 * have, (tx + rx) * FI_UNIVERSE_SIZE = (128 + 128) * 1024 by default, and
 * its verbs provider passes that to ibv_create_cq() without a look at
 * max_cqe: 256K is its need, 1M leaves room for more peers. A ring of 1M
 * is 32 MiB, charged to its creator's memory cgroup.
 */
#define SRDMA_MAX_CQE		0x100000
/* 4,096 user QPs connected besides the kernel's own (SPDK, NVMe-oF). */
#define SRDMA_MAX_QP		0x4000
#define SRDMA_MAX_AH		0x1000
#define SRDMA_MAX_SRQ		0x1000
#define SRDMA_MAX_MW		0x1000
#define SRDMA_MAX_DM		256	/* of SOFTRDMA_MAX_DM_SIZE: 64 MiB */
#define SRDMA_MAX_MCAST_GRP	256
#define SRDMA_MAX_MCAST_QP_ATTACH 64	/* QPs per group */
#define SRDMA_MIN_QPN		16	/* below: reserved (QP0, QP1, ...) */
#define SRDMA_MAX_QPN		0xffffff
#define SRDMA_MAX_QP_WR		0x4000
#define SRDMA_MAX_SGE		32
#define SRDMA_MAX_INLINE	512
#define SRDMA_MAX_RD_ATOMIC	128
/*
 * RC packets kept past a gap (reorder.c): per QP and side, a power of 2
 * that covers the requester's window (SRDMA_WINDOW, req.h), so that one
 * lost packet never costs those in flight behind it; and per device. A
 * gap is NAKed, or its read responses asked for, once SRDMA_GAP_DUPS came
 * past it: fewer are taken for reordering (as TCP takes three duplicate
 * ACKs, RFC 5681); AckReq or a probe asks for the rest.
 */
#define SRDMA_REORDER		256
#define SRDMA_REORDER_DEV	4096
#define SRDMA_GAP_DUPS		3
#define SRDMA_MAX_MSG		BIT(30)		/* max_msg_sz: a make check test moves it */
#define SRDMA_GID_TBL_LEN	128	/* room for many IPv4/IPv6 addresses */
#define SRDMA_MR_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | \
				 IB_ACCESS_ON_DEMAND | \
				 SRDMA_ACCESS_FLUSH)
/* What a memory window may grant. */
#define SRDMA_MW_ACCESS		(IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

/*
 * Worst-case RoCEv2 overhead the payload MTU must leave room for:
 * IPv6 (40) + UDP (8) + BTH (12) + AtomicETH (28) + ICRC (4).
 */
#define SRDMA_MAX_HDR_BYTES	92

#endif /* SRDMA_PARAMS_H */
