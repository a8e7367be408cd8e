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

/*
 * Shared rings
 * ============
 *
 * Every work or completion queue is one mmapped region: a 128-byte index
 * header, then num_slots (a power of two) slots of slot_size bytes.
 * Indices are free-running __u32 counters; a slot is idx & (num_slots - 1)
 * and the queue is full when producer - consumer == num_slots. Each side
 * writes only its own index, publishes it with a release store and reads
 * the other's with an acquire load. The kernel keeps its own copy of the
 * index it owns and never trusts the one in shared memory: a bad user
 * index puts the queue in error, it never makes the kernel read or write
 * outside the ring.
 *
 *   queue         producer   consumer
 *   CQ            kernel     provider (poll_cq: no system call)
 *   RQ / SRQ      provider   kernel   (post_recv: no system call)
 *   SQ            provider   kernel   (post_send: one doorbell per call,
 *                                      a zero-WR IB_USER_VERBS_CMD_POST_SEND)
 */
#define SOFTRDMA_RING_HDR_SIZE	128

/*
 * The kernel writes SOFTRDMA_RING_MAGIC into every ring it makes and
 * clears it when it destroys the queue. A process whose device was deleted
 * under it keeps its mappings, but its queues are gone: the provider sees
 * the cleared magic and fails poll_cq and the posts with EIO, so a busy
 * poller learns it, instead of polling an empty CQ for ever.
 */
#define SOFTRDMA_RING_MAGIC	0x53524e47	/* "SRNG" */

struct softrdma_ring_hdr {
	__u32 producer;
	__u32 magic;		/* SOFTRDMA_RING_MAGIC while the ring lives */
	__u32 pad0[14];		/* the two indices on their own cache lines */
	__u32 consumer;
	__u32 pad1[15];
};

/* Where and how big a ring is, in create responses. */
struct softrdma_ring_info {
	__aligned_u64 mmap_offset;	/* mmap() offset on the uverbs fd */
	__aligned_u64 mmap_size;	/* header + slots, page aligned */
	__u32 num_slots;
	__u32 slot_size;
};

/* Scatter/gather element, as struct ibv_sge. */
struct softrdma_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* softrdma_cqe.wc_flags: libibverbs' IBV_WC_* values, not the kernel's. */
#define SOFTRDMA_WC_GRH		(1 << 0)
#define SOFTRDMA_WC_WITH_IMM	(1 << 1)
#define SOFTRDMA_WC_WITH_INV	(1 << 3)

/*
 * softrdma_cqe.net_type: what a datagram's GRH (first 40 bytes of the
 * buffer) holds. struct ibv_wc has no such field: kernel CQs report it
 * to the core, which reads the GRH by it (ib_init_ah_attr_from_wc()).
 */
#define SOFTRDMA_NET_IPV4	4
#define SOFTRDMA_NET_IPV6	6

/* Completion queue entry: the fields of struct ibv_wc that apply. */
struct softrdma_cqe {
	__aligned_u64 wr_id;
	__u8 status;		/* enum ibv_wc_status */
	__u8 opcode;		/* enum ib_uverbs_wc_opcode (ibv_wc_opcode) */
	__u16 wc_flags;		/* SOFTRDMA_WC_* */
	__u32 byte_len;
	__be32 ex;		/* immediate data (network order), or the
				 * invalidated rkey (host order, as ibv_wc) */
	__u32 qp_num;
	__u32 src_qp;
	__u16 pkey_index;
	__u8 sl;
	__u8 net_type;		/* SOFTRDMA_NET_*: a datagram's GRH */
};

/*
 * The slot of a CQ made with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION: the
 * CQE, then when it was written, in CLOCK_MONOTONIC nanoseconds (the
 * device's clock: hca_core_clock 1 GHz).
 */
struct softrdma_cqe_ts {
	struct softrdma_cqe cqe;
	__aligned_u64 timestamp;
	__aligned_u64 reserved;
};

/* Receive WQE: slot_size = sizeof(struct) + max_sge SGEs, 16-aligned. */
struct softrdma_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct softrdma_sge sge[];
};

/*
 * IBA 1.5 memory placement operations, by their libibverbs values (which
 * the kernel's uverbs names only since Linux 6.2).
 */
#define SOFTRDMA_WR_FLUSH		14	/* IBV_WR_FLUSH */
#define SOFTRDMA_WR_ATOMIC_WRITE	15	/* IBV_WR_ATOMIC_WRITE */
#define SOFTRDMA_WC_FLUSH		8	/* IBV_WC_FLUSH */
#define SOFTRDMA_WC_ATOMIC_WRITE	9	/* IBV_WC_ATOMIC_WRITE */

/*
 * Send WQE. With IBV_SEND_INLINE the payload (inline_len bytes) sits
 * where the SGEs would and num_sge is 0; otherwise num_sge SGEs follow.
 */
struct softrdma_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;		/* enum ib_uverbs_wr_opcode (ibv_wr_opcode) */
	__u32 send_flags;	/* IBV_SEND_* */
	__u32 num_sge;
	__be32 ex;		/* immediate data (network order), or the
				 * rkey to invalidate (host order) */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u8 type;	/* IBV_FLUSH_GLOBAL / _PERSISTENT */
			__u8 level;	/* IBV_FLUSH_RANGE / _MR */
			__u16 reserved;
			__aligned_u64 length;
		} flush;		/* remote_addr, rkey as in rdma */
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
			__u8 data[8];	/* placed as one 8-byte store */
		} atomic_write;		/* remote_addr, rkey as in rdma */
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 mw_rkey;		/* a key of the MW (its slot) */
			__u32 new_rkey;		/* its key once bound */
			__u32 access;		/* IB_ACCESS_REMOTE_* */
		} bind;
		struct {
			__u32 remote_qpn;
			__u32 remote_qkey;	/* high bit set: the QP's Q_Key */
			__u32 ah_num;		/* softrdma_create_ah_resp */
			__u32 reserved;
		} ud;
		__u8 size[48];
	} wr;
	__u32 inline_len;
	__u32 xrc_srqn;		/* XRC initiator: the target's SRQ number */
	struct softrdma_sge sge[];
};

/* Driver data of the create responses (after the core response). */
struct softrdma_create_cq_resp {
	struct softrdma_ring_info cq;
};

/*
 * modify_srq with IBV_SRQ_MAX_WR moves the SRQ to a new ring. The command
 * has no response: the kernel writes the new ring's softrdma_ring_info at
 * ring_info_addr, and the old ring is to be unmapped.
 */
struct softrdma_modify_srq_cmd {
	__aligned_u64 ring_info_addr;
};

/* After resize_cq: the new ring; the old one is to be unmapped. */
struct softrdma_resize_cq_resp {
	struct softrdma_ring_info cq;
};

struct softrdma_create_qp_resp {
	struct softrdma_ring_info sq;	/* num_slots 0: no SQ */
	struct softrdma_ring_info rq;	/* num_slots 0: SRQ or no RQ */
};

struct softrdma_create_srq_resp {
	struct softrdma_ring_info rq;
};

/* A user AH is named by its number in UD send WQEs. */
struct softrdma_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/*
 * Device memory (ibv_alloc_dm) is memory the kernel driver owns, up to
 * SOFTRDMA_MAX_DM_SIZE bytes a piece. The DM alloc command has no room
 * for driver data, so its mmap offset follows from the DM's handle: the
 * provider maps SOFTRDMA_DM_MMAP_OFFSET(handle), far above the rings.
 * The kernel refuses (ENOMEM) a handle whose offset is still mapped.
 */
#define SOFTRDMA_MAX_DM_SIZE		(256 * 1024)
#define SOFTRDMA_DM_MMAP_BASE		(1ULL << 43)
#define SOFTRDMA_DM_MMAP_MAX_HANDLE	((1U << 25) - 1)
#define SOFTRDMA_DM_MMAP_OFFSET(handle) \
	(SOFTRDMA_DM_MMAP_BASE + (__u64)(handle) * SOFTRDMA_MAX_DM_SIZE)
/* memcpy to and from device memory moves whole aligned 4-byte words */
#define SOFTRDMA_DM_ALIGN		4

/* The layouts above are ABI: both compilers must agree with these. */
_Static_assert(sizeof(struct softrdma_ring_hdr) == SOFTRDMA_RING_HDR_SIZE,
	       "ring header size");
_Static_assert(sizeof(struct softrdma_cqe) == 32, "CQE size");
_Static_assert(sizeof(struct softrdma_cqe_ts) == 48, "CQE with timestamp");
_Static_assert(sizeof(struct softrdma_recv_wqe) == 16, "recv WQE header");
_Static_assert(sizeof(struct softrdma_send_wqe) == 80, "send WQE header");
/* The requester builds the RETH of every operation from the rdma fields. */
#define SOFTRDMA_WQE_OFF(f)	__builtin_offsetof(struct softrdma_send_wqe, f)
_Static_assert(SOFTRDMA_WQE_OFF(wr.flush.rkey) ==
	       SOFTRDMA_WQE_OFF(wr.rdma.rkey), "flush rkey");
_Static_assert(SOFTRDMA_WQE_OFF(wr.atomic_write.rkey) ==
	       SOFTRDMA_WQE_OFF(wr.rdma.rkey), "atomic write rkey");
#undef SOFTRDMA_WQE_OFF

#endif /* SOFTRDMA_ABI_H */
