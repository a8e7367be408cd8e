/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-process device context: opened by ibv_open_device(), it carries the
 * table of verbs this provider implements.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "softrdma.h"

static void srdma_free_context(struct ibv_context *ibctx)
{
	struct srdma_context *sctx = to_sctx(ibctx);

	verbs_uninit_context(&sctx->vctx);
	free(sctx);
}

/*
 * Only what the kernel really does. Every verb left out stays on
 * libibverbs' stub and fails with EOPNOTSUPP instead of pretending.
 */
static const struct verbs_context_ops srdma_context_ops = {
	.advise_mr		= srdma_advise_mr,
	.alloc_dm		= srdma_alloc_dm,
	.alloc_mw		= srdma_alloc_mw,
	.alloc_parent_domain	= srdma_alloc_parent_domain,
	.alloc_pd		= srdma_alloc_pd,
	.attach_mcast		= ibv_cmd_attach_mcast,	/* all in the kernel */
	.bind_mw		= srdma_bind_mw,
	.close_xrcd		= srdma_close_xrcd,
	.create_ah		= srdma_create_ah,
	.create_cq		= srdma_create_cq,
	.create_cq_ex		= srdma_create_cq_ex,
	.create_qp		= srdma_create_qp,
	.create_qp_ex		= srdma_create_qp_ex,
	.create_srq		= srdma_create_srq,
	.create_srq_ex		= srdma_create_srq_ex,
	.dealloc_mw		= srdma_dealloc_mw,
	.dealloc_pd		= srdma_dealloc_pd,
	.dereg_mr		= srdma_dereg_mr,
	.destroy_ah		= srdma_destroy_ah,
	.destroy_cq		= srdma_destroy_cq,
	.destroy_qp		= srdma_destroy_qp,
	.destroy_srq		= srdma_destroy_srq,
	.detach_mcast		= ibv_cmd_detach_mcast,
	.free_context		= srdma_free_context,
	.free_dm		= srdma_free_dm,
	.get_srq_num		= srdma_get_srq_num,
	.import_mr		= srdma_import_mr,
	.import_pd		= srdma_import_pd,
	.modify_qp		= srdma_modify_qp,
	.modify_srq		= srdma_modify_srq,
	.open_xrcd		= srdma_open_xrcd,
	.poll_cq		= srdma_poll_cq,
	.post_recv		= srdma_post_recv,
	.post_send		= srdma_post_send,
	.post_srq_recv		= srdma_post_srq_recv,
	.query_device_ex	= srdma_query_device_ex,
	.query_port		= srdma_query_port,
	IF_PABI65(.query_port_speed	= srdma_query_port_speed,)
	.query_rt_values	= srdma_query_rt_values,
	.query_qp		= srdma_query_qp,
	.query_srq		= srdma_query_srq,
	.reg_dm_mr		= srdma_reg_dm_mr,
	.reg_mr			= srdma_reg_mr,
	.req_notify_cq		= srdma_req_notify_cq,
	.rereg_mr		= srdma_rereg_mr,
	.resize_cq		= srdma_resize_cq,
	.unimport_mr		= srdma_unimport_mr,
	.unimport_pd		= srdma_unimport_pd,
};

/* A context over @cmd_fd, our ops set; NULL with @cmd_fd closed. */
static struct srdma_context *srdma_context_new(struct ibv_device *ibdev,
					       int cmd_fd)
{
	size_t off = offsetof(struct srdma_context, vctx);
	struct srdma_context *sctx;

	/* Our uverbs driver id is RDMA_DRIVER_UNKNOWN, like the kernel's. */
	sctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*sctx),
					     (struct verbs_context *)off,
					     RDMA_DRIVER_UNKNOWN);
	if (sctx)
		verbs_set_ops(&sctx->vctx, &srdma_context_ops);
	return sctx;
}

struct verbs_context *srdma_alloc_context(struct ibv_device *ibdev,
					  int cmd_fd, void *private_data)
{
	struct ib_uverbs_get_context_resp resp = {};
	struct ibv_get_context cmd;
	struct srdma_context *sctx;
	int ret;

	(void)private_data;
	sctx = srdma_context_new(ibdev, cmd_fd);
	if (!sctx)
		return NULL;
	ret = ibv_cmd_get_context(&sctx->vctx, &cmd, sizeof(cmd),
				  IF_PABI65(NULL,) &resp, sizeof(resp));
	if (ret) {
		srdma_free_context(&sctx->vctx.context);
		errno = ret;	/* not what closing the file left there */
		return NULL;
	}
	return &sctx->vctx;
}

/*
 * ibv_import_device(): a second context over the file of one that exists
 * (another process's, passed over a socket). The kernel keeps one
 * context per file: ours has no driver data to read back, so checking
 * that it exists is all there is to do.
 */
struct verbs_context *srdma_import_context(struct ibv_device *ibdev,
					   int cmd_fd)
{
	struct srdma_context *sctx;
	int ret;

	sctx = srdma_context_new(ibdev, cmd_fd);
	if (!sctx)
		return NULL;
	ret = ibv_cmd_query_context(&sctx->vctx.context, NULL);
	if (ret) {
		srdma_free_context(&sctx->vctx.context);
		errno = ret;
		return NULL;
	}
	return &sctx->vctx;
}
