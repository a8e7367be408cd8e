/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softrdma: a software RoCEv2 device over any Ethernet netdev.
 *
 * What the module's files provide each other, grouped by the file that
 * defines it. The device's limits are in params.h, its objects (with
 * their locks and lifetimes) in objects.h.
 */
#ifndef SRDMA_H
#define SRDMA_H

#include "objects.h"

/* main.c: module init, devices over netdevs (rdma link add) */
extern struct workqueue_struct *srdma_tx_wq;

/* net.c: the per-namespace RoCEv2 UDP socket */
int srdma_net_init(void);
void srdma_net_exit(void);
int srdma_net_attach(struct srdma_dev *sdev);
void srdma_net_detach(struct srdma_dev *sdev);
struct srdma_dev *srdma_net_rx_dev(struct net *net,
				   const struct net_device *ndev);

/* verbs.c: device, port, context and PD verbs */
extern const struct attribute_group srdma_attr_group;
int srdma_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int srdma_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int srdma_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer srdma_get_link_layer(struct ib_device *ibdev, u32 port);
int srdma_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int srdma_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void srdma_dealloc_ucontext(struct ib_ucontext *ibuc);
int srdma_query_ucontext(struct ib_ucontext *ibuc,
			 struct uverbs_attr_bundle *attrs);
void srdma_disassociate_ucontext(struct ib_ucontext *ibuc);
int srdma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srdma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
enum ib_mtu srdma_active_mtu(const struct srdma_dev *sdev);
void srdma_port_event(struct srdma_dev *sdev);

/* ring.c: rings shared with userspace and their mmap */
int srdma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void srdma_mmap_free(struct rdma_user_mmap_entry *rdma);

/* mem.c: the key table and checked copies to or from memory */
/* What moves between memory and the other end of a transfer. */
enum srdma_xfer_op {
	SRDMA_TO_BUF,		/* memory -> @buf */
	SRDMA_FROM_BUF,		/* @buf -> memory */
	SRDMA_FROM_SKB,		/* @skb from @skb_off on -> memory */
	SRDMA_TO_FRAGS,		/* memory's pages become frags of @skb */
	/* @buf's 8 bytes -> aligned memory, one store (ATOMIC WRITE) */
	SRDMA_STORE64,
};

static inline bool srdma_xfer_to_mem(enum srdma_xfer_op op)
{
	return op == SRDMA_FROM_BUF || op == SRDMA_FROM_SKB ||
	       op == SRDMA_STORE64;
}

/**
 * struct srdma_xfer - the other end of a transfer to or from memory
 * @op: direction and kind
 * @buf: kernel buffer (SRDMA_TO_BUF, SRDMA_FROM_BUF, SRDMA_STORE64)
 * @skb: packet (SRDMA_FROM_SKB, SRDMA_TO_FRAGS)
 * @skb_off: SRDMA_FROM_SKB: offset of the first byte from skb->data
 * @max_frags: SRDMA_TO_FRAGS: the frags @skb may have
 * @done: bytes moved so far; @buf and @skb_off are relative to its start
 */
struct srdma_xfer {
	enum srdma_xfer_op op;
	u8 *buf;
	struct sk_buff *skb;
	u32 skb_off;
	u32 max_frags;
	u32 done;
};

u32 srdma_key_index(u32 key);
int srdma_key_alloc(struct srdma_dev *sdev, void *entry, u32 *key);
int srdma_mr_add(struct srdma_dev *sdev, struct srdma_mr *mr);
struct srdma_mr *srdma_mr_get(struct srdma_dev *sdev, u32 key,
			      struct ib_pd *pd, int access);
void srdma_mr_put(struct srdma_mr *mr);
bool srdma_mr_check(const struct srdma_mr *mr, u64 iova, u64 len);
int srdma_mr_xfer(struct srdma_mr *mr, u64 iova, u32 len,
		  struct srdma_xfer *x);
int srdma_xfer_piece(struct srdma_xfer *x, struct page *page, u32 pg_off,
		     u8 *va, u32 n);
int srdma_sge_xfer(struct srdma_qp *qp, const struct softrdma_sge *sge,
		   u32 nsge, u32 off, u32 len, struct srdma_xfer *x);

/* mr.c: memory region registration */
struct ib_mr *srdma_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *srdma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata);
struct ib_mr *srdma_get_dma_mr(struct ib_pd *pd, int access);
int srdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/* dm.c: device memory */
struct ib_dm *srdma_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *uctx,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs);
int srdma_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
struct ib_mr *srdma_reg_dm_mr(struct ib_pd *pd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs);

/* odp.c: on-demand paging */
int srdma_odp_reg(struct srdma_dev *sdev, struct srdma_mr *mr, u64 start);
void srdma_odp_release(struct srdma_mr *mr);
int srdma_odp_xfer(struct srdma_mr *mr, u64 iova, u32 len,
		   struct srdma_xfer *x);
int srdma_odp_probe(struct srdma_mr *mr, u64 iova, u32 len, bool write);
int srdma_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

/* cq.c: completion queues */
int srdma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int srdma_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int srdma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int srdma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int srdma_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int srdma_cq_add(struct srdma_cq *cq, const struct softrdma_cqe *cqe,
		 bool solicited);
void srdma_cq_notify(struct srdma_cq *cq);
int srdma_cq_post(struct srdma_cq *cq, const struct softrdma_cqe *cqe,
		  bool solicited);

/* counters.c: rdma statistic counters */
int srdma_counters_init(struct srdma_dev *sdev);
void srdma_counters_fini(struct srdma_dev *sdev);
struct rdma_hw_stats *srdma_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int srdma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

/* icrc.c: the ICRC of packets sent and taken */
void srdma_crc_init(void);
void srdma_crc_exit(void);
void srdma_icrc_tx(struct sk_buff *skb, u32 roce_len);
int srdma_icrc_rx(struct sk_buff *skb, u32 len);

/* qp.c: queue pairs: create, modify, destroy, post, errors */
int srdma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int srdma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int srdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int srdma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int srdma_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int srdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int srdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int srdma_qp_doorbell(struct srdma_qp *qp);
struct srdma_qp *srdma_qp_lookup_rcu(u32 qpn);
enum ib_wc_opcode srdma_wr_to_wc_opcode(u32 wr_opcode);
/* srdma_qp_error(): no event, a completion reports the error */
#define SRDMA_NO_EVENT	(-1)
void srdma_qp_error(struct srdma_qp *qp, int event);

/* kverbs.c: posting and polling for kernel consumers */
int srdma_kpost_send(struct srdma_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int srdma_kpost_recv(struct srdma_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
int srdma_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int srdma_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

/* pkt.c: building and reading packets */
/* Where a packet's payload comes from: an SGE list, or else an MR range. */
struct srdma_pkt_src {
	struct srdma_qp *qp;
	const struct softrdma_sge *sge;
	u32 nsge;
	struct srdma_mr *mr;
	u64 off;		/* into the SGE list, or the MR's iova */
};

/*
 * A received packet: the parse, and the skb holding it. The payload may
 * lie in fragments: read it through srdma_pkt_to_sge()/srdma_pkt_to_mr().
 */
struct srdma_rx_pkt {
	struct roce_pkt_info rp;
	struct sk_buff *skb;
	u32 payload_off;	/* from skb->data */
};

static inline const struct srdma_rx_pkt *
to_rx_pkt(const struct roce_pkt_info *pkt)
{
	return container_of(pkt, struct srdma_rx_pkt, rp);
}

/*
 * Our word in skb->cb on the way out, read when the ICRC is put, before
 * the IP layer takes cb over. alloc_skb() zeroes it.
 */
struct srdma_tx_cb {
	bool rxe_flush_icrc;	/* rdma_rxe's FLUSH ICRC (proto/roce_icrc.h) */
};

static inline struct srdma_tx_cb *srdma_tx_cb(struct sk_buff *skb)
{
	return (struct srdma_tx_cb *)skb->cb;
}

struct sk_buff *srdma_pkt_alloc(struct srdma_qp *qp, u32 hdr_len, u32 payload,
				bool copy);
int srdma_pkt_put(struct sk_buff *skb, const struct srdma_pkt_src *src,
		  u32 len, u32 pad);
void srdma_pkt_put_data(struct sk_buff *skb, const void *data, u32 len,
			u32 pad);
int srdma_pkt_to_sge(struct srdma_qp *qp, const struct roce_pkt_info *pkt,
		     const struct softrdma_sge *sge, u32 nsge, u32 off);
int srdma_pkt_to_mr(struct srdma_mr *mr, u64 iova,
		    const struct roce_pkt_info *pkt);

/* tx.c: paths and transmission */
__be16 srdma_path_sport(u32 flow);
int srdma_path_init(struct srdma_path *path, const struct rdma_ah_attr *ah,
		    u32 flow);
int srdma_xmit_path(struct srdma_dev *sdev, struct srdma_path *path,
		    struct sk_buff *skb);

/* A connected QP's packets. */
static inline int srdma_xmit(struct srdma_qp *qp, struct sk_buff *skb)
{
	return srdma_xmit_path(qp_sdev(qp), &qp->path, skb);
}

/* cc.c: ECN marking, congestion notification packets and DCQCN */
u8 srdma_cc_tclass(const struct sk_buff *skb, u8 tclass);
bool srdma_cc_ce(const struct sk_buff *skb);
void srdma_cc_ce_rx(struct srdma_qp *qp);
void srdma_cc_cnp_rx(struct srdma_qp *qp);
void srdma_cc_qp_init(struct srdma_qp *qp);
void srdma_cc_qp_start(struct srdma_qp *qp);
bool srdma_cc_may_send(struct srdma_qp *qp);
void srdma_cc_loss(struct srdma_qp *qp);
void srdma_cc_sent(struct srdma_qp *qp, u32 bytes);
void srdma_cc_link_speed(struct srdma_dev *sdev);
int srdma_cc_fill_res(struct sk_buff *msg, struct srdma_qp *qp);

/* loop.c: packets between devices of this host, past the IP stack */
struct dst_entry;
struct srdma_loop;
int srdma_loop_init(struct srdma_dev *sdev);
void srdma_loop_fini(struct srdma_dev *sdev);
bool srdma_loop_route(const struct dst_entry *dst);
int srdma_loop_xmit(struct srdma_dev *sdev, struct sk_buff *skb);

/* rx.c: receive: checks and dispatch to a QP */
void srdma_rx(struct net *net, struct sk_buff *skb, bool looped);
int srdma_udp_rcv(struct sock *sk, struct sk_buff *skb);

/* req.c: the requester of send queues */
int srdma_req_init(struct srdma_qp *qp, gfp_t gfp);
void srdma_req_fini(struct srdma_qp *qp);
void srdma_req_start(struct srdma_qp *qp);
void srdma_req_run(struct srdma_qp *qp);
int srdma_req_fill_res(struct sk_buff *msg, struct srdma_qp *qp);
const struct softrdma_send_wqe *srdma_sq_wqe(struct srdma_qp *qp, u32 idx);
u32 srdma_sq_pending(struct srdma_qp *qp);

/* comp.c: the completer and retry timer of RC send queues */
void srdma_timer_fn(struct timer_list *t);
void srdma_comp_rx(struct srdma_qp *qp, const struct roce_pkt_info *pkt);

/* resp.c: the responder of RC, UC and XRC receive queues */
int srdma_resp_init(struct srdma_qp *qp, gfp_t gfp);
int srdma_resp_take_rwqe(struct srdma_qp *qp);
void srdma_resp_cqe(struct srdma_qp *qp, u8 status, u8 opcode, u32 byte_len,
		    const struct roce_pkt_info *pkt);
void srdma_resp_fini(struct srdma_qp *qp);
void srdma_resp_start(struct srdma_qp *qp);
int srdma_resp_fill_res(struct sk_buff *msg, struct srdma_qp *qp);
void srdma_resp_rx(struct srdma_qp *qp, const struct roce_pkt_info *pkt);

/* reorder.c: packets kept past a gap, by an RC responder or requester */
int srdma_reorder_init(struct srdma_reorder *ro, gfp_t gfp);
void srdma_reorder_purge(struct srdma_dev *sdev, struct srdma_reorder *ro);
void srdma_reorder_fini(struct srdma_dev *sdev, struct srdma_reorder *ro);
bool srdma_reorder_hold(struct srdma_dev *sdev, struct srdma_reorder *ro,
			const struct roce_pkt_info *pkt, u32 dist);
bool srdma_reorder_next(struct srdma_dev *sdev, struct srdma_reorder *ro,
			u32 psn, struct srdma_rx_pkt *out);
u32 srdma_reorder_ahead(const struct srdma_reorder *ro, u32 psn);

/* ah.c: address handles */
int srdma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int srdma_destroy_ah(struct ib_ah *ibah, u32 flags);
struct srdma_ah *srdma_ah_lookup_rcu(struct srdma_dev *sdev, u32 ah_num,
				     struct ib_pd *pd);

/* ud.c: the UD responder */
void srdma_ud_rx(struct srdma_qp *qp, const struct roce_pkt_info *pkt);

/* mcast.c: multicast groups */
int srdma_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int srdma_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
u32 srdma_mcg_qpns_rcu(struct srdma_dev *sdev, const union ib_gid *gid,
		       const u32 **qpns);
void srdma_mcast_fini(struct srdma_dev *sdev);

/* srq.c: shared receive queues */
int srdma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int srdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int srdma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int srdma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int srdma_srq_take(struct srdma_srq *srq, struct softrdma_recv_wqe *wqe);

/* xrc.c: XRC domains and targets */
int srdma_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int srdma_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int srdma_xsrq_publish(struct srdma_srq *srq);
void srdma_xsrq_unpublish(struct srdma_srq *srq);
struct srdma_srq *srdma_xrc_resp_srq(struct srdma_qp *qp,
				     const struct roce_pkt_info *pkt);
void srdma_xrc_flush_rwqe(struct srdma_qp *qp);

/* mw.c: memory windows */
int srdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int srdma_dealloc_mw(struct ib_mw *ibmw);
u8 srdma_mw_bind(struct srdma_qp *qp, const struct softrdma_send_wqe *w);
int srdma_mw_invalidate(struct srdma_qp *qp, u32 rkey, bool remote);
struct srdma_mr *srdma_mw_resolve(struct srdma_qp *qp, u32 rkey, u64 va,
				  u64 len, int access);

/* frmr.c: fast-register MRs of kernel consumers */
/* The kernel-only ring opcode of IB_WR_REG_MR: user WQEs may not use it. */
#define SRDMA_WR_REG_MR		31
#define SRDMA_MAX_FRMR_PAGES	512

struct ib_mr *srdma_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int srdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
u8 srdma_frmr_register(struct srdma_qp *qp, const struct softrdma_send_wqe *w);
int srdma_key_invalidate(struct srdma_qp *qp, u32 key, bool remote);

#include "compat.h"

#endif /* SRDMA_H */
