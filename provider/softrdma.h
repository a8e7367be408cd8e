/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrdma libibverbs provider: objects shared between its source files.
 */
#ifndef SOFTRDMA_PROVIDER_H
#define SOFTRDMA_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "ring.h"
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

struct srdma_pd {
	struct ibv_pd ibpd;
	struct ibv_pd *protection_domain;	/* set: a parent domain of it */
	void *pd_context;			/* a parent domain's */
};

struct srdma_cq {
	struct verbs_cq vcq;
	struct srdma_ring ring;		/* kernel produces, poll_cq consumes */
	struct ibv_wc wc;		/* ibv_cq_ex's current completion */
	uint64_t ts;			/* and its timestamp, if the CQ has them */
	bool has_ts;			/* slots are softrdma_cqe_ts */
};

struct srdma_qp {
	struct verbs_qp vqp;		/* first: see verbs_qp */
	struct srdma_ring sq;
	struct srdma_ring rq;		/* absent (hdr NULL) with an SRQ */
	struct ibv_qp_cap cap;		/* as the kernel granted it */
	/* An ibv_wr_* batch, from wr_start to wr_complete (wr.c). */
	struct softrdma_send_wqe *wr_cur;	/* built last, for the setters */
	uint32_t wr_first;		/* sq.idx at wr_start */
	int wr_err;			/* the batch's first error */
};

struct srdma_srq {
	struct verbs_srq vsrq;		/* an XRC SRQ's number in it */
	struct srdma_ring rq;		/* we post, attached QPs take */
	uint32_t max_sge;		/* as the kernel granted it */
};

struct srdma_xrcd {
	struct verbs_xrcd vxrcd;
};

struct srdma_ah {
	struct ibv_ah ibah;
	uint32_t ah_num;		/* names it in UD send WQEs */
};

static inline struct srdma_device *to_sdev(struct ibv_device *ibdev)
{
	return srdma_container_of(ibdev, struct srdma_device, vdev.device);
}

static inline struct srdma_context *to_sctx(struct ibv_context *ibctx)
{
	return srdma_container_of(ibctx, struct srdma_context, vctx.context);
}

static inline struct srdma_pd *to_spd(struct ibv_pd *ibpd)
{
	return srdma_container_of(ibpd, struct srdma_pd, ibpd);
}

static inline struct srdma_cq *to_scq(struct ibv_cq *ibcq)
{
	return srdma_container_of(ibcq, struct srdma_cq, vcq.cq);
}

static inline struct srdma_qp *to_sqp(struct ibv_qp *ibqp)
{
	return srdma_container_of(ibqp, struct srdma_qp, vqp.qp);
}

static inline struct srdma_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return srdma_container_of(ibsrq, struct srdma_srq, vsrq.srq);
}

static inline struct srdma_ah *to_sah(struct ibv_ah *ibah)
{
	return srdma_container_of(ibah, struct srdma_ah, ibah);
}

/* context.c */
struct verbs_context *srdma_alloc_context(struct ibv_device *ibdev,
					  int cmd_fd, void *private_data);
struct verbs_context *srdma_import_context(struct ibv_device *ibdev,
					   int cmd_fd);

/* verbs.c */
int srdma_query_device_ex(struct ibv_context *ibctx,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int srdma_query_port(struct ibv_context *ibctx, uint8_t port_num,
		     struct ibv_port_attr *attr);
IF_PABI65(int srdma_query_port_speed(struct ibv_context *ibctx,
				     uint32_t port_num, uint64_t *speed);)
int srdma_query_rt_values(struct ibv_context *ibctx,
			  struct ibv_values_ex *values);
struct ibv_pd *srdma_alloc_pd(struct ibv_context *ibctx);
int srdma_dealloc_pd(struct ibv_pd *pd);
struct ibv_pd *srdma_import_pd(struct ibv_context *ibctx, uint32_t pd_handle);
void srdma_unimport_pd(struct ibv_pd *pd);
struct ibv_pd *srdma_alloc_parent_domain(struct ibv_context *ibctx,
					 struct ibv_parent_domain_init_attr *attr);

/* mr.c */
struct ibv_mr *srdma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int srdma_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access);
int srdma_dereg_mr(struct verbs_mr *vmr);
struct ibv_mr *srdma_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void srdma_unimport_mr(struct ibv_mr *mr);
struct ibv_dm *srdma_alloc_dm(struct ibv_context *ibctx,
			      struct ibv_alloc_dm_attr *attr);
int srdma_free_dm(struct ibv_dm *ibdm);
struct ibv_mr *srdma_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length,
			       unsigned int access);
int srdma_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
struct ibv_mw *srdma_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int srdma_dealloc_mw(struct ibv_mw *mw);
int srdma_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *bind);

/* cq.c */
struct ibv_cq *srdma_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *srdma_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr);
int srdma_resize_cq(struct ibv_cq *ibcq, int cqe);
int srdma_destroy_cq(struct ibv_cq *ibcq);
int srdma_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
int srdma_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
void srdma_cq_clean(struct srdma_cq *cq, uint32_t qpn);

/* qp.c */
struct ibv_qp *srdma_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *srdma_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr);
int srdma_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask);
int srdma_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int srdma_destroy_qp(struct ibv_qp *ibqp);

/* wr.c */
int srdma_check_send_ops_flags(enum ibv_qp_type type,
			       uint64_t send_ops_flags);
void srdma_qp_init_wr_ops(struct srdma_qp *qp, uint64_t send_ops_flags);

/* srq.c */
struct ibv_srq *srdma_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int srdma_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int srdma_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int srdma_destroy_srq(struct ibv_srq *ibsrq);
struct ibv_srq *srdma_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr);
int srdma_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
struct ibv_xrcd *srdma_open_xrcd(struct ibv_context *ibctx,
				 struct ibv_xrcd_init_attr *attr);
int srdma_close_xrcd(struct ibv_xrcd *ibxrcd);
int srdma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/* ah.c */
struct ibv_ah *srdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int srdma_destroy_ah(struct ibv_ah *ibah);

/* post.c */
int srdma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int srdma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);

#endif /* SOFTRDMA_PROVIDER_H */
