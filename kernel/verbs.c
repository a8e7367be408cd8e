// SPDX-License-Identifier: GPL-2.0
/*
 * Device and port verbs: attributes, the RoCE port model, user contexts
 * and protection domains.
 */
#include <linux/if_ether.h>
#include <linux/module.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "srdma.h"

static bool srdma_port_is_active(const struct srdma_dev *sdev)
{
	return netif_running(sdev->ndev) && netif_carrier_ok(sdev->ndev);
}

/* Largest IB MTU whose packets, with worst-case headers, fit the netdev. */
enum ib_mtu srdma_active_mtu(const struct srdma_dev *sdev)
{
	int payload = (int)READ_ONCE(sdev->ndev->mtu) - SRDMA_MAX_HDR_BYTES;

	return ib_mtu_int_to_enum(payload);
}

int srdma_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	/* No driver-specific query data is defined. */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = 0xffffff;	/* no IEEE OUI: a software device */
	attr->page_size_cap = PAGE_SIZE;
	attr->max_mr_size = SRDMA_MAX_MR_SIZE;
	attr->max_pd = SRDMA_MAX_PD;
	attr->max_mr = SRDMA_MAX_MR;
	attr->max_cq = SRDMA_MAX_CQ;
	attr->max_cqe = SRDMA_MAX_CQE;
	attr->max_qp = SRDMA_MAX_QP;
	attr->max_qp_wr = SRDMA_MAX_QP_WR;
	attr->max_send_sge = SRDMA_MAX_SGE;
	attr->max_recv_sge = SRDMA_MAX_SGE;
	attr->max_sge_rd = SRDMA_MAX_SGE;
	attr->max_qp_rd_atom = SRDMA_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SRDMA_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SRDMA_MAX_RD_ATOMIC * SRDMA_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;	/* one lock for all atomics */
	/* Completion timestamps: CLOCK_MONOTONIC nanoseconds, 1 GHz. */
	attr->hca_core_clock = 1000000;		/* kHz */
	attr->timestamp_mask = U64_MAX;
	attr->max_ah = SRDMA_MAX_AH;
	attr->max_srq = SRDMA_MAX_SRQ;
	attr->max_mw = SRDMA_MAX_MW;
	attr->max_dm_size = SOFTRDMA_MAX_DM_SIZE;
	attr->max_mcast_grp = SRDMA_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SRDMA_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SRDMA_MAX_MCAST_GRP *
					  SRDMA_MAX_MCAST_QP_ATTACH;
	attr->device_cap_flags = IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_MEM_MGT_EXTENSIONS | IB_DEVICE_XRC |
				 IB_DEVICE_SRQ_RESIZE | SRDMA_DEVICE_PLACEMENT;
	attr->max_fast_reg_page_list_len = SRDMA_MAX_FRMR_PAGES;
	attr->max_srq_wr = SRDMA_MAX_QP_WR;
	attr->max_srq_sge = SRDMA_MAX_SGE;
	attr->max_pkeys = 1;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	if (IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)) {
		u32 rc = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			 IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
			 IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;

		attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
		attr->odp_caps.general_caps = IB_ODP_SUPPORT |
					      IB_ODP_SUPPORT_IMPLICIT;
		attr->odp_caps.per_transport_caps.rc_odp_caps =
			rc | SRDMA_ODP_PLACEMENT;
		attr->odp_caps.per_transport_caps.xrc_odp_caps = rc;
		attr->odp_caps.per_transport_caps.uc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV;
		attr->odp_caps.per_transport_caps.ud_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_SRQ_RECV;
	}
	return 0;
}

int srdma_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct srdma_dev *sdev = to_sdev(ibdev);
	int err;

	/* The core has zeroed *attr and checked @port. */
	if (srdma_port_is_active(sdev)) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = srdma_active_mtu(sdev);
	attr->gid_tbl_len = SRDMA_GID_TBL_LEN;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;		/* VL0 only, encoded as 1 */
	attr->max_msg_sz = SRDMA_MAX_MSG;

	err = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	return err;
}

int srdma_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	/*
	 * RoCEv2: the core fills the GID table from the netdev, and its MAD
	 * layer runs the CM over our GSI QP.
	 */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	immutable->pkey_tbl_len = 1;
	immutable->gid_tbl_len = SRDMA_GID_TBL_LEN;
	return 0;
}

enum rdma_link_layer srdma_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

int srdma_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	/* RoCE has the single default partition. */
	if (index)
		return -EINVAL;
	*pkey = 0xffff;	/* default partition, full member */
	return 0;
}

/**
 * srdma_port_event - report a change of the netdev's state as a port event
 * @sdev: the device; caller holds srdma_dev_lock
 *
 * Called on netdev up/down/carrier changes; consumers see
 * IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR once per real transition.
 */
void srdma_port_event(struct srdma_dev *sdev)
{
	bool active = srdma_port_is_active(sdev);
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = SRDMA_PORT,
	};

	if (active == sdev->port_active)
		return;
	sdev->port_active = active;
	ev.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/*
 * A user context pins the module: since we let the core disassociate
 * contexts, it no longer does so itself, and rmmod must be refused while
 * a process uses a device (rdma link delete still revokes the context).
 */
int srdma_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	return 0;
}

void srdma_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	module_put(THIS_MODULE);
}

/*
 * ibv_import_device() asks for the context of a file it was given. The
 * core reports its generic attributes; ours has no driver data (our
 * alloc_ucontext answers none either), so there is nothing to add.
 */
int srdma_query_ucontext(struct ib_ucontext *ibuc,
			 struct uverbs_attr_bundle *attrs)
{
	return 0;
}

/*
 * Having this op lets the core revoke a live user context when the device
 * goes away (link delete, netdev removal) instead of waiting for the
 * process to close it: the core destroys every object of the context
 * through the usual destroy verbs and zaps its mmaps, so no driver state
 * is left to detach here.
 */
void srdma_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

int srdma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return srdma_count_get(&to_sdev(ibpd->device)->npd, SRDMA_MAX_PD);
}

int srdma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->npd);
	return 0;
}

/*
 * hca_type identifies our devices to the userspace provider, which has no
 * driver id to match on; board_id is what ibv_devinfo prints.
 */
static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SOFTRDMA_HCA_TYPE);
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t board_id_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	struct srdma_dev *sdev = rdma_device_to_drv_device(device,
						struct srdma_dev, ibdev);

	return sysfs_emit(buf, "%s over %s\n", SRDMA_DRV_NAME,
			  netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(board_id);

static struct attribute *srdma_attrs[] = {
	&dev_attr_hca_type.attr,
	&dev_attr_board_id.attr,
	NULL,
};

const struct attribute_group srdma_attr_group = {
	.attrs = srdma_attrs,
};
