/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device and its verbs objects: what each holds, the lock that
 * guards each part and how long it lives.
 */
#ifndef SRDMA_OBJECTS_H
#define SRDMA_OBJECTS_H

#include <linux/hrtimer.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "softrdma-abi.h"
#include "counters.h"
#include "params.h"
#include "ring.h"
#include "proto/roce_cwnd.h"
#include "proto/roce_dcqcn.h"
#include "proto/roce_parse.h"
#include "proto/roce_rtt.h"

struct srdma_rx_pkt;

/*
 * Lock order, outermost first. A lock not listed under another is never
 * taken while it is held.
 *
 *   rtnl (netdev events)
 *     srdma_dev_lock (main.c, mutex): the device list; never held into
 *         the core's (un)registration, which takes rtnl
 *   srdma_net_lock (net.c, mutex): the namespaces' UDP sockets, a leaf
 *   qp->mod_lock (mutex): modify_qp and query_qp
 *     qp->sq_lock (BH): the send side, struct srdma_req and srdma_comp;
 *         never held with qp->rq_lock
 *     qp->rq_lock (BH): the receive side, struct srdma_resp
 *       under either of the two:
 *       qp->cc.lock: the QP's DCQCN rate, a leaf
 *       cq->lock (IRQ): a CQ's producers and notify state, a leaf
 *       srq->lock (BH): an SRQ's consumers
 *       mw->lock (BH): a window's binding
 *       l->q.lock (loop.c, BH): a device's queue of looped packets,
 *           a leaf (sending under either QP lock)
 *       srdma_atomic_lock (resp.c): every atomic of the module
 *         mr->odp_lock (BH): the pages of an ODP MR a copy may use,
 *             a leaf; under the QP locks without the atomic lock too
 *   mr->odp_map_lock (mutex): one mapping of an ODP MR at a time
 *     umem_odp->umem_mutex (the core's; the invalidation takes it first)
 *       mr->odp_lock
 *   qp->post_lock, srq->post_lock (IRQ): kernel consumers' producers, leaves
 *   the device's xarrays (mr_xa, ah_xa: IRQ-safe), leaves
 *
 * The data path takes no module-wide lock but srdma_atomic_lock, which
 * atomics need (IB_ATOMIC_HCA); lookups by QPN, key and AH number are
 * RCU reads that take a reference.
 */

/**
 * struct srdma_dev - one softrdma device bound to one netdev
 * @ibdev: core device; must stay first (ib_alloc_device)
 * @ndev: the netdev carrying our traffic
 * @ndev_tracker: tracks our reference on @ndev
 * @net: namespace of @ndev at creation, where our UDP socket lives
 * @list: entry in srdma_dev_list
 * @net_node: entry in the namespace's device list (RCU, receive path)
 * @unreg_work: queued unregistration when @ndev goes away
 * @registered: registration done; port events may be dispatched
 * @net_attached: holds a use of @net's UDP sockets
 * @port_active: last port state reported through an async event
 * @npd: PDs allocated, bounded by SRDMA_MAX_PD
 * @ncq: CQs allocated, bounded by SRDMA_MAX_CQ
 * @nqp: QPs allocated (the GSI QP and XRC targets too), bounded by
 *	SRDMA_MAX_QP
 * @nsrq: SRQs allocated, bounded by SRDMA_MAX_SRQ
 * @nmr: MRs of every kind allocated, bounded by SRDMA_MAX_MR
 * @nmw: MWs allocated, bounded by SRDMA_MAX_MW
 * @ndm: device memory allocations, bounded by SRDMA_MAX_DM
 * @mr_xa: MRs and MWs by key index (key >> 8); RCU lookups by the
 *	transport
 * @mr_next: next index to try, for cyclic allocation
 * @ah_xa: AHs by number, 1 to SRDMA_MAX_AH (which bounds their count);
 *	RCU lookups by the requester. Kernel AHs are
 *	created and destroyed in atomic context too: its lock is IRQ-safe
 * @ah_next: next AH number to try
 * @gsi_qp: the GSI QP (QP1) of the port, which the MAD layer creates;
 *	RCU lookups by the receive path and kernel poll_cq
 * @counters: per-CPU counters (counters.h), freed in dealloc_driver after
 *	the device left @net_node and an RCU grace period passed
 * @loop: queues of packets sent to this host, by destination QPN
 *	(loop.c), drained and freed in dealloc_driver before the device
 *	leaves @net_node
 * @ooo_held: requests its QPs keep past a gap (reorder.c), bounded by
 *	SRDMA_REORDER_DEV
 * @link_mbps: the netdev's speed in Mbit/s (0: it reports none), DCQCN's
 *	line rate (cc.c); set under rtnl at registration and link changes
 *
 * Lifetime: allocated by srdma_newlink() and owned by the RDMA core from
 * ib_register_device() on. The core calls srdma_dealloc_driver() on
 * unregistration (rdma link delete, netdev removal, rmmod) and from
 * ib_dealloc_device() on a failed creation; it drops the netdev reference
 * and the namespace socket and leaves the list, after which the core frees
 * the memory at the last put_device(). We hold @ndev from creation to
 * dealloc_driver, so a namespace cannot be torn down under a device.
 * The object counts (@npd to @ndm) need no lock: srdma_count_get() takes
 * one at creation, atomic_dec() returns it at destruction or when the
 * creation fails.
 */
struct srdma_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct net *net;
	struct list_head list;
	struct list_head net_node;
	struct work_struct unreg_work;
	bool registered;
	bool net_attached;
	bool port_active;
	atomic_t npd;
	atomic_t ncq;
	atomic_t nqp;
	atomic_t nsrq;
	atomic_t nmr;
	atomic_t nmw;
	atomic_t ndm;
	atomic_t ooo_held;
	struct xarray mr_xa;
	u32 mr_next;
	struct xarray ah_xa;
	u32 ah_next;
	struct srdma_qp __rcu *gsi_qp;
	struct list_head mcgs;
	u32 nmcg;
	struct srdma_counters __percpu *counters;
	struct srdma_loop *loop;
	u32 link_mbps;
};

static inline struct srdma_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srdma_dev, ibdev);
}

/*
 * Take one of the @max objects of a kind the device reports: counted
 * first, so that creations racing for the last one cannot both get it.
 * Return: 0, or -ENOMEM when all are in use: what a NIC out of the
 * resource returns (siw too) and what ibv_create_qp(3) and its kin
 * document. The caller drops the count when the object goes.
 */
static inline int srdma_count_get(atomic_t *count, int max)
{
	if (atomic_inc_return(count) <= max)
		return 0;
	atomic_dec(count);
	return -ENOMEM;
}

/*
 * The allocation flags of an object's memory. A user's is charged to its
 * memory cgroup (the user chooses queue and MR sizes), and is refused
 * with -ENOMEM, without the OOM killer or a warning, when that cgroup or
 * the machine is full: __GFP_NORETRY, not __GFP_RETRY_MAYFAIL, which
 * some kernels' vmalloc warns of and drops. A kernel consumer's is not
 * charged to whichever task happens to create it.
 */
static inline gfp_t srdma_gfp(bool user)
{
	return user ? GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN :
		      GFP_KERNEL;
}

/* Lifetime: created by uverbs open, freed by the core after dealloc. */
struct srdma_ucontext {
	struct ib_ucontext ibuc;
};

/* Lifetime: core-allocated; alloc_pd/dealloc_pd only keep the count. */
struct srdma_pd {
	struct ib_pd ibpd;
};

/*
 * An XRC domain. Lifetime: core-allocated; the core frees it once no XRC
 * SRQ or target QP of it is left (its usecnt).
 */
struct srdma_xrcd {
	struct ib_xrcd ibxrcd;
};

/**
 * struct srdma_odp_pages - the pages of one ODP umem the transport may use
 * @umem: an MR's umem, or a child of an implicit MR
 * @mr: that MR
 * @kva: per umem page (1 << @umem->page_shift bytes): its kernel address,
 *	SRDMA_ODP_KVA_WRITE set when it may be written; 0 when not mapped.
 *	Written under @umem->umem_mutex and @mr->odp_lock, read under either
 *
 * The core's own per-page state may be written before it is validated
 * against invalidations (6.15 on): these entries are set only after.
 *
 * Lifetime: made with @umem (odp.c), freed after ib_umem_odp_release()
 * of it, with the MR.
 */
struct srdma_odp_pages {
	struct ib_umem_odp *umem;
	struct srdma_mr *mr;
	unsigned long kva[];
};

#define SRDMA_ODP_KVA_WRITE	BIT(0)

/**
 * struct srdma_mr - a memory region
 * @ibmr: core MR; lkey == rkey
 * @umem: pinned user memory, NULL for a DMA or device memory MR
 * @pages: @umem's (or the device memory's) pages in order, for O(1)
 *	address lookup
 * @page_off: where @iova lies in @pages[0]
 * @dm_mmap: device memory MR (dm.c): the mmap entry that owns the pages,
 *	of which the MR holds a reference
 * @iova: start of the region in the user's address space (0 for
 *	device memory: its MRs are zero-based)
 * @length: bytes
 * @access: IB_ACCESS_* granted
 * @dma: a DMA MR of a kernel user: addresses are kernel virtual
 * @kpages: a fast-register MR (frmr.c): its pages' kernel addresses
 * @npages: entries of @kpages mapped
 * @max_pages: room in @kpages
 * @page_shift: of the page size @kpages was mapped with
 * @valid: a fast-register MR: registered and not invalidated
 * @odp: on-demand paging: @umem is an ib_umem_odp, @pages unused (odp.c)
 * @odp_implicit: ODP over the whole address space: @umem is the core's
 *	implicit root, and the pages are in @odp_children
 * @odp_pages: ODP, not implicit: the pages of @umem the transport uses
 * @odp_children: implicit ODP: the srdma_odp_pages of child umems by
 *	user address >> SRDMA_ODP_CHILD_SHIFT, made as the transport first
 *	needs them and freed with the MR
 * @odp_map_lock: ODP: one mapping of the MR's umems at a time (odp.c)
 * @odp_lock: ODP: held by copies and by the invalidation of pages
 * @odp_work: ODP: maps the range the transport wants, holding a ref
 * @odp_want_start: ODP: user address range waiting for @odp_work...
 * @odp_want_end: ...0 when none (both under @odp_lock)
 * @odp_bad_start: ODP: a range that could not be mapped...
 * @odp_bad_end: ...0 when none: its next access fails
 * @ref: the table's reference plus one per transport lookup
 * @released: completed when @ref drops to zero
 * @bound_mws: memory windows bound to it, each of which pins it (mw.c);
 *	-1 once dereg_mr has begun, after which no bind takes it
 * @rcu: the memory outlives RCU readers of the key table
 *
 * Lifetime: created by reg_mr/reg_dm_mr/get_dma_mr/alloc_mr, which
 * publish it in the key table; dereg_mr refuses (-EBUSY) while a window
 * is bound to it, else unpublishes it, waits until no lookup holds it and
 * frees it after an RCU grace period.
 */
struct srdma_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct page **pages;
	u32 page_off;
	struct rdma_user_mmap_entry *dm_mmap;
	u64 iova;
	u64 length;
	int access;
	bool dma;
	u64 *kpages;
	u32 npages;
	u32 max_pages;
	u8 page_shift;
	bool valid;
	bool odp;
	bool odp_implicit;
	struct srdma_odp_pages *odp_pages;
	struct xarray odp_children;
	struct mutex odp_map_lock;	/* serialises ODP mappings */
	spinlock_t odp_lock;
	struct work_struct odp_work;
	u64 odp_want_start;
	u64 odp_want_end;
	u64 odp_bad_start;
	u64 odp_bad_end;
	refcount_t ref;
	struct completion released;
	atomic_t bound_mws;
	struct rcu_head rcu;
};

static inline struct srdma_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srdma_mr, ibmr);
}

/* The key table entry tag of a memory window. */
#define SRDMA_KEY_MW	1

/**
 * struct srdma_mw - a memory window: remote access to part of an MR
 * @ibmw: core MW (its type and PD)
 * @lock: guards the binding below; bind, invalidate and remote access
 *	come from any QP's context
 * @rkey: the key now (a bind moves its tag)
 * @mr: the MR it opens while bound, pinned through its @bound_mws so that
 *	it can be neither deregistered nor changed under the window; NULL
 *	when not bound
 * @va: start of the window
 * @len: bytes
 * @access: IB_ACCESS_REMOTE_* granted
 * @qpn: type 2: the QP it was bound through, the only one it serves
 * @ref: the table's reference plus one per lookup
 * @released: completed when @ref drops to zero
 *
 * Lifetime: core-allocated; in the key table from alloc_mw to
 * dealloc_mw, which waits out RCU readers and lookups and unpins its MR
 * before the core frees it.
 */
struct srdma_mw {
	struct ib_mw ibmw;
	spinlock_t lock;	/* the binding */
	u32 rkey;
	struct srdma_mr *mr;
	u64 va;
	u64 len;
	int access;
	u32 qpn;
	refcount_t ref;
	struct completion released;
};

static inline struct srdma_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct srdma_mw, ibmw);
}

/**
 * struct srdma_cq - a completion queue
 * @ibcq: core CQ
 * @ring: CQEs; we produce, the provider consumes
 * @lock: serialises producers (several QPs) and the notify state; guards
 *	@ring's replacement (resize) and removal (destroy: hdr NULL)
 * @resize_lock: serialises resize_cq, which the core runs under a shared
 *	lock of the CQ only
 * @notify: armed event: 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP
 * @overflow: an overrun was reported
 *
 * Lifetime: core-allocated; the core destroys it only when no QP uses it.
 * A netlink dump (srdma_fill_res_cq_entry()) may run during and after
 * destroy_cq until the core frees the CQ: cores before 6.1.191 and
 * 6.12.110 call destroy_cq before rdma_restrack_del(), which waits for
 * the dumps. So the fill reads @ring under @lock only, and finds it gone.
 */
struct srdma_cq {
	struct ib_cq ibcq;
	struct srdma_ring ring;
	spinlock_t lock;	/* producers, notify, the ring itself */
	struct mutex resize_lock;	/* serialises resize_cq */
	u8 notify;
	bool overflow;
};

static inline struct srdma_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct srdma_cq, ibcq);
}

/**
 * struct srdma_srq - a shared receive queue
 * @ibsrq: core SRQ
 * @rq: receive WQEs; the provider produces, attached QPs consume
 * @lock: serialises the consumers (QPs in softirq) and @limit
 * @post_lock: a kernel SRQ: serialises its producers (IRQs may be off)
 * @max_sge: SGEs a WQE may have
 * @limit: armed limit, 0 when not armed
 * @resize_lock: serialises resizes (uverbs holds the SRQ for read only)
 *
 * Lifetime: core-allocated; the core destroys it only when no QP is
 * attached (its usecnt).
 */
struct srdma_srq {
	struct ib_srq ibsrq;
	struct srdma_ring rq;
	spinlock_t lock;	/* consumers and limit */
	spinlock_t post_lock;	/* kernel producers */
	struct mutex resize_lock;	/* serialises modify_srq */
	u32 max_sge;
	u32 limit;
};

static inline struct srdma_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct srdma_srq, ibsrq);
}

/* Where packets go: resolved from an AV (a connected QP's at RTR, an AH's). */
struct srdma_av {
	int family;			/* AF_INET or AF_INET6 */
	union {
		__be32 saddr4;
		struct in6_addr saddr6;
	};
	union {
		__be32 daddr4;
		struct in6_addr daddr6;
	};
	u32 flow_label;
	__be16 sport;
	u8 ttl;
	u8 tclass;
};

/* An address and its route, cached per CPU. */
struct srdma_path {
	struct srdma_av av;
	struct dst_cache dst_cache;
};

/**
 * struct srdma_ah - an address handle: where UD sends go
 * @ibah: core AH
 * @path: the destination and its route
 * @ah_num: the handle UD send WQEs name it by
 *
 * Lifetime: core-allocated, published in the device's AH table from
 * create to destroy. destroy_ah of a user AH unpublishes it and waits for
 * an RCU grace period, so a requester that looked it up under RCU can
 * finish sending, before the core frees it. A kernel AH may be destroyed
 * in atomic context, so it does not wait: its consumer destroys it only
 * after the WRs naming it completed, which the requester reports once it
 * is done with the AH.
 */
struct srdma_ah {
	struct ib_ah ibah;
	struct srdma_path path;
	u32 ah_num;
};

static inline struct srdma_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct srdma_ah, ibah);
}

/*
 * A read or atomic request the responder executed (an entry of @held), or
 * an answer to send (of @rd: the whole request, or its part from a PSN on
 * when it was asked again; or an ACK that waits behind read responses).
 */
struct srdma_rd {
	struct ib_pd *pd;	/* the access is checked against (compared only) */
	u64 va;
	u64 orig;		/* atomic: the value before it, to send back */
	u32 len;
	u32 rkey;
	u32 psn;		/* of its first response */
	u32 msn;		/* for the responses' AETH */
	u32 sent;		/* response packets sent */
	bool atomic;
	bool placed;		/* FLUSH or ATOMIC WRITE: an empty read response */
	bool ack;		/* an answer: the ACK or NAK @syndrome for @psn */
	u8 syndrome;
};

/* Requester state of one started send WQE (kernel side of an SQ slot). */
struct srdma_swqe {
	u32 first_psn;
	u32 npkts;		/* PSNs the WQE uses (read: its responses) */
	u32 len;		/* message bytes */
	u32 read_off;		/* read response bytes placed so far */
	bool read_done;
	bool rd_out;		/* counted in the QP's @rd_out */
	bool local;		/* bind or local invalidate: no packet */
	bool local_done;	/* executed */
	u8 status;		/* ib_wc_status it completes with, if not 0 */
};

/**
 * struct srdma_req - requester state of a QP (req.c), under its sq_lock
 * @sq_copy: kernel copies of started send WQEs, one per SQ slot: the
 *	user can rewrite the ring at any time, we act on our copy only
 * @swqe: requester state per SQ slot
 * @fetched: SQ index up to which WQEs are copied and checked
 * @idx: next SQ WQE to transmit (sq.idx <= @idx <= @fetched)
 * @off: bytes of WQE @idx already transmitted
 * @psn: PSN of the next request packet
 * @sent_psn: the PSN after the last request packet ever sent (before a
 *	rewind moved @psn back): ACKs up to it are believed
 * @cwnd: RC: request packets allowed unacknowledged (proto/roce_cwnd.h)
 * @rd_out: reads and atomics sent and not answered (before @idx): no
 *	more than max_rd_atomic, the responder's resources, are
 * @rd_len: a read request asks for this many bytes only (a part asked
 *	again, srdma_req_ask_again()); 0: the rest of the read
 * @work: UC/UD: sends on after a burst or a failed allocation
 * @sq_bad: the SQ's producer index was found corrupt: the QP failed with
 *	a catastrophic error event
 * @sq_notify: a send completion is due to wake the CQ's handler, which is
 *	called once sq_lock is dropped: a kernel consumer may post from it
 * @rxe_flush_icrc: the peer answered a FLUSH sent with rdma_rxe's ICRC
 *	(proto/roce_icrc.h): FLUSH requests go with it (from RTS on)
 * @flush_icrc_sent: the ICRC the last FLUSH request went with
 * @peer_rxe_flush: the peer sent a FLUSH with rdma_rxe's ICRC (from RTR
 *	on; set by the responder under rq_lock, read here: a hint only)
 */
struct srdma_req {
	u8 *sq_copy;
	struct srdma_swqe *swqe;
	u32 fetched;
	u32 idx;
	u32 off;
	u32 psn;
	u32 sent_psn;
	struct roce_cwnd cwnd;
	u32 rd_out;
	u32 rd_len;
	struct work_struct work;
	bool sq_bad;
	bool sq_notify;
	bool rxe_flush_icrc;
	bool flush_icrc_sent;
	bool peer_rxe_flush;
};

/**
 * struct srdma_reorder - packets kept past a gap (reorder.c), under the
 *	lock of the side that keeps them
 * @pkt: SRDMA_REORDER slots, by PSN modulo SRDMA_REORDER, each holding a
 *	reference on its skb; NULL for a QP type that keeps none
 * @count: packets kept
 */
struct srdma_reorder {
	struct srdma_rx_pkt *pkt;
	u32 count;
};

/**
 * struct srdma_comp - completer and retry state of an RC QP (comp.c),
 *	under its sq_lock
 * @una_psn: oldest PSN not yet acknowledged
 * @timer: retransmission and RNR wait; left running when all is acked
 * @ack_stamp: jiffies of the last progress, or of the first request after
 *	all was acknowledged: the ACK timeout counts from here
 * @retry_left: retries left before IB_WC_RETRY_EXC_ERR
 * @rnr_left: RNR retries left (7: unlimited)
 * @rnr_wait: sending paused until @timer fires
 * @read_gap: a read response went missing and the read was asked again;
 *	cleared by the next response taken
 * @rtt: round-trip estimate (proto/roce_rtt.h), for the probe timeout
 * @rtt_ns: when the packet being timed left (ktime_get_ns())
 * @rtt_psn: that packet's PSN, while @rtt_timing
 * @rtt_timing: a packet sent once is being timed; a rewind stops it, for
 *	the ACK could answer either copy (Karn)
 * @probe_stamp: jiffies of the last tail loss probe
 * @probes: probes sent since the last progress or timeout; each waits
 *	twice as long as the one before
 * @probing: a probe is out and not answered yet
 * @seq_rewound: the last go-back-N was for a sequence NAK, so an ACK past
 *	what was sent since shows a responder that kept packets past the gap
 * @peer_keeps: the responder keeps packets past a gap (reorder.c on the
 *	other side), as assumed at first and seen after @seq_rewound: a
 *	sequence NAK then sends the one missing packet again, not all after it
 * @sel_used: such a resend went
 * @sel_next: the PSN after the packet sent again (after a read's
 *	responses, for a read): the responder's next, had it kept nothing
 * @ooo: RC and XRC initiators: read responses and atomic ACKs that came
 *	past a gap (reorder.c)
 * @sub_out: a part of an answer was asked for alone (srdma_comp_ask_gap())
 *	since the last rewind, from @sub_psn up to @sub_end
 * @parts_asked: parts were asked for on this connection: a LAST or ONLY
 *	short of a read's end answers one of them (a rewind does not stop
 *	those on their way)
 * @sub_psn: the first of them
 * @sub_end: the PSN after the last of them
 * @ooo_lost: a response past a gap found no room in @ooo: once the kept
 *	ones are taken, everything from there on is asked again
 * @probe_part: a probe asked for the next response of a read alone
 *	(srdma_comp_probe_read()) and no response came since
 */
struct srdma_comp {
	u32 una_psn;
	struct timer_list timer;
	unsigned long ack_stamp;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	bool read_gap;
	struct roce_rtt rtt;
	u64 rtt_ns;
	u32 rtt_psn;
	unsigned long probe_stamp;
	bool rtt_timing;
	u8 probes;
	bool probing;
	bool seq_rewound;
	bool peer_keeps;
	bool sel_used;
	u32 sel_next;
	struct srdma_reorder ooo;
	bool sub_out;
	bool parts_asked;
	bool ooo_lost;
	bool probe_part;
	u32 sub_psn;
	u32 sub_end;
};

/**
 * struct srdma_resp - responder state of a QP (resp.c, answer.c), under
 *	its rq_lock
 * @epsn: next expected request PSN
 * @msn: message sequence number
 * @nak_sent: a sequence or RNR NAK awaits its PSN again
 * @rwqe: copy of the receive WQE being filled
 * @have_rwqe: @rwqe holds a WQE taken off the RQ
 * @recv_off: bytes placed into @rwqe so far
 * @event: the event the packet's fatal error raises, or SRDMA_NO_EVENT
 *	when a completion reports it
 * @msg_open: ROCE_F_SEND or ROCE_F_WRITE while a multi-packet message is
 *	under way, else 0
 * @rd: reads and atomics to answer (new or asked again) and the ACKs or
 *	NAKs that wait behind them, a ring of SRDMA_ANSWERS
 * @rd_head: answers queued (free-running)
 * @rd_tail: answers sent
 * @held: the reads and atomics executed, newest at @held_head - 1, a ring
 *	of SRDMA_MAX_RD_ATOMIC: the responder resources a duplicate request
 *	is answered from
 * @held_head: requests recorded (free-running)
 * @held_start: @held_head when the QP entered RTR: entries before it
 *	belong to an earlier connection and are never answered again
 * @rd_work: sends read responses (srdma_tx_wq)
 * @wr_rkey: rkey of the RDMA WRITE in progress
 * @wr_len: its total length
 * @wr_va: next address of that write
 * @wr_left: bytes of it still to come
 * @xsrq: XRC target: the SRQ the request being executed names, whose CQ
 *	its completions go to; NULL between packets
 * @xrc_pd: XRC target: the PD of that SRQ, or of the read being answered
 *	(compared only: see srdma_qp_pd())
 * @xrc_srqn: XRC target: the number of that SRQ, kept for the message
 *	under way and the receive WQE in @rwqe
 * @ooo: RC and XRC targets: requests that came past a gap (reorder.c)
 */
struct srdma_resp {
	u32 epsn;
	u32 msn;
	bool nak_sent;
	struct softrdma_recv_wqe *rwqe;
	bool have_rwqe;
	u32 recv_off;
	int event;
	u32 msg_open;
	struct srdma_rd *rd;
	u32 rd_head;
	u32 rd_tail;
	struct srdma_rd *held;
	u32 held_head;
	u32 held_start;
	struct work_struct rd_work;
	u32 wr_rkey;
	u32 wr_len;
	u64 wr_va;
	u32 wr_left;
	struct srdma_srq *xsrq;
	struct ib_pd *xrc_pd;
	u32 xrc_srqn;
	struct srdma_reorder ooo;
};

/**
 * struct srdma_qp_cc - congestion state of a QP (cc.c)
 * @cnp_next: notification point, under rq_lock: ktime_get_ns() before
 *	which no further CNP goes to the peer
 * @lock: guards @dcqcn; taken inside sq_lock (requests) or rq_lock (read
 *	responses), and takes no lock itself
 * @dcqcn: reaction point: the one rate the QP's requests and read
 *	responses are paced at
 * @pace_timer: runs the requester and the read responder again when a
 *	paced packet may leave; not armed once the QP is dying (under
 *	@lock), cancelled by srdma_req_fini()
 */
struct srdma_qp_cc {
	u64 cnp_next;
	spinlock_t lock;	/* a leaf lock: guards dcqcn */
	struct dcqcn_rp dcqcn;
	struct hrtimer pace_timer;
};

/**
 * struct srdma_qp - a queue pair
 * @ibqp: core QP
 * @sq: send WQEs; the provider produces, we consume under @sq_lock,
 *	under which destroy also removes it (hdr NULL)
 * @rq: receive WQEs; likewise under @rq_lock
 * @sq_lock: the send side: guards @sq's consumer side, @req and @comp;
 *	taken from process context (doorbell), softirq (receive) and the
 *	timer, with BHs off
 * @rq_lock: the receive side: guards @rq's consumer side and @resp;
 *	taken in softirq (receive) and by the read response work, BHs off
 * @post_lock: kernel QPs: serialises the producers of @sq and @rq, which
 *	kernel consumers may call with IRQs off
 * @mod_lock: serialises modify/query, guards @attr and @have_av
 * @state: current state; read locklessly on the data path, changed by
 *	compare-and-swap only: modify_qp (under @mod_lock) and the transport's
 *	errors (srdma_qp_error()) race, and neither may undo the other
 * @attr: attributes as last set by modify_qp
 * @have_av: @attr.ah_attr holds a GID attribute reference
 * @cap: the queue sizes actually allocated
 * @sig_all: every send WQE is signaled
 * @path: where a connected QP sends, valid from RTR on
 * @mtu: payload bytes per packet: the path MTU, or the port's for UD
 * @dying: destroy in progress (set under @sq_lock and @cc.lock): do not
 *	re-arm the timers; a dump reads nothing of the SQ
 * @req: the requester (under @sq_lock)
 * @comp: the completer and retry (under @sq_lock)
 * @resp: the responder (under @rq_lock)
 * @cc: congestion control
 *
 * Lifetime: core-allocated; published in the device's QPN table from
 * create to destroy. A netlink dump (query_qp, srdma_fill_res_qp_entry())
 * may run during and after destroy_qp until the core frees the QP: cores
 * before 6.1.191 and 6.12.110 call destroy_qp before rdma_restrack_del(),
 * which waits for the dumps. So a dump reads only what lives in the QP
 * itself under its lock, and @sq under @sq_lock, finding it gone.
 */
struct srdma_qp {
	struct ib_qp ibqp;
	struct srdma_ring sq;
	struct srdma_ring rq;
	spinlock_t sq_lock;	/* the send side: req, comp */
	spinlock_t rq_lock;	/* the receive side: resp */
	spinlock_t post_lock;	/* kernel producers of sq and rq */
	struct mutex mod_lock;	/* modify/query: attr */
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	bool have_av;
	struct ib_qp_cap cap;
	bool sig_all;
	struct srdma_path path;
	u32 mtu;
	bool dying;

	struct srdma_req req;
	struct srdma_comp comp;
	struct srdma_resp resp;
	struct srdma_qp_cc cc;
};

static inline struct srdma_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct srdma_qp, ibqp);
}

static inline struct srdma_dev *qp_sdev(const struct srdma_qp *qp)
{
	return to_sdev(qp->ibqp.device);
}

/* A datagram QP: UD, or the GSI QP, which is UD with QPN 1. */
static inline bool srdma_qp_is_ud(const struct srdma_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/* The transport bits of the opcodes a QP sends and takes. */
static inline enum roce_transport srdma_qp_transport(const struct srdma_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return ROCE_TRANSPORT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return ROCE_TRANSPORT_UD;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return ROCE_TRANSPORT_XRC;
	default:
		return ROCE_TRANSPORT_RC;
	}
}

/* Acknowledged, retried, in order: RC, and XRC's two halves of it. */
static inline bool srdma_qp_reliable(const struct srdma_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/*
 * The PD memory accesses of @qp are checked against: an XRC target has
 * none of its own but uses that of the SRQ the request names.
 */
static inline struct ib_pd *srdma_qp_pd(const struct srdma_qp *qp)
{
	return qp->ibqp.pd ?: qp->resp.xrc_pd;
}

#endif /* SRDMA_OBJECTS_H */
