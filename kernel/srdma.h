/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softrdma: a software RoCEv2 device over any Ethernet netdev.
 *
 * Shared definitions of the kernel module: the device, its verbs objects
 * and the entry points each file provides.
 */
#ifndef SRDMA_H
#define SRDMA_H

#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "softrdma-abi.h"

#define SRDMA_DRV_NAME		"softrdma"
#define SRDMA_PORT		1	/* one port per device, as on a NIC port */
#define SRDMA_ROCE_UDP_PORT	4791	/* IANA port of RoCEv2 */

/* Device limits reported by query_device; only supported objects count. */
#define SRDMA_MAX_PD		0x10000
#define SRDMA_GID_TBL_LEN	128	/* room for many IPv4/IPv6 addresses */

/*
 * Worst-case RoCEv2 overhead the payload MTU must leave room for:
 * IPv6 (40) + UDP (8) + BTH (12) + AtomicETH (28) + ICRC (4).
 */
#define SRDMA_MAX_HDR_BYTES	92

/**
 * struct srdma_dev - one softrdma device bound to one netdev
 * @ibdev: core device; must stay first (ib_alloc_device)
 * @ndev: the netdev carrying our traffic
 * @ndev_tracker: tracks our reference on @ndev
 * @net: namespace of @ndev at creation, where our UDP socket lives
 * @list: entry in srdma_dev_list (RCU for the receive path)
 * @unreg_work: queued unregistration when @ndev goes away
 * @registered: registration done; port events may be dispatched
 * @net_attached: holds a use of @net's UDP sockets
 * @port_active: last port state reported through an async event
 * @npd: PDs allocated, bounded by SRDMA_MAX_PD
 *
 * Lifetime: allocated by srdma_newlink() and owned by the RDMA core from
 * ib_register_device() on. The core calls srdma_dealloc_driver() on
 * unregistration (rdma link delete, netdev removal, rmmod) and from
 * ib_dealloc_device() on a failed creation; it drops the netdev reference
 * and the namespace socket and leaves the list, after which the core frees
 * the memory at the last put_device(). We hold @ndev from creation to
 * dealloc_driver, so a namespace cannot be torn down under a device.
 */
struct srdma_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct net *net;
	struct list_head list;
	struct work_struct unreg_work;
	bool registered;
	bool net_attached;
	bool port_active;
	atomic_t npd;
};

static inline struct srdma_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srdma_dev, ibdev);
}

/* Lifetime: created by uverbs open, freed by the core after dealloc. */
struct srdma_ucontext {
	struct ib_ucontext ibuc;
};

/* Lifetime: core-allocated; alloc_pd/dealloc_pd only keep the count. */
struct srdma_pd {
	struct ib_pd ibpd;
};

/* verbs.c */
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
void srdma_disassociate_ucontext(struct ib_ucontext *ibuc);
int srdma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srdma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
void srdma_port_event(struct srdma_dev *sdev);

/* net.c: the per-namespace RoCEv2 UDP socket */
int srdma_net_init(void);
void srdma_net_exit(void);
int srdma_net_attach(struct net *net);
void srdma_net_detach(struct net *net);

#endif /* SRDMA_H */
