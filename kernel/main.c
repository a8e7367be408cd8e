// SPDX-License-Identifier: GPL-2.0
/*
 * softrdma module: device creation over a netdev ("rdma link add"),
 * netdev tracking and module lifetime.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "srdma.h"

MODULE_AUTHOR("softrdma developers");
MODULE_DESCRIPTION("softrdma: software RoCEv2 RDMA device over any netdev");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK(SOFTRDMA_LINK_TYPE);
/* User contexts need ib_uverbs, which nothing else loads without udev. */
MODULE_SOFTDEP("pre: ib_uverbs");

/*
 * All devices, for netdev events and rmmod. Lock order: rtnl, then
 * srdma_dev_lock. Never call into the RDMA core's (un)registration with
 * srdma_dev_lock held: the core takes rtnl on those paths.
 */
static LIST_HEAD(srdma_dev_list);
static DEFINE_MUTEX(srdma_dev_lock);

/* Runs queued unregistrations; flushed by rmmod. */
static struct workqueue_struct *srdma_wq;

/* Transmit work of QPs (read responses); QP destroy cancels its items. */
struct workqueue_struct *srdma_tx_wq;

static struct srdma_dev *srdma_find_locked(const struct net_device *ndev)
{
	struct srdma_dev *sdev;

	lockdep_assert_held(&srdma_dev_lock);
	list_for_each_entry(sdev, &srdma_dev_list, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

static void srdma_unreg_work(struct work_struct *work)
{
	struct srdma_dev *sdev = container_of(work, struct srdma_dev,
					      unreg_work);

	/* Also safe when someone else unregistered it meanwhile. */
	ib_unregister_device(&sdev->ibdev);
	put_device(&sdev->ibdev.dev);
}

/*
 * Unregister from a context that must not wait for it (the netdev
 * notifier runs under rtnl). The work holds a device reference.
 */
static void srdma_queue_unregister(struct srdma_dev *sdev)
{
	get_device(&sdev->ibdev.dev);
	if (!queue_work(srdma_wq, &sdev->unreg_work))
		put_device(&sdev->ibdev.dev);
}

static void srdma_dealloc_driver(struct ib_device *ibdev)
{
	struct srdma_dev *sdev = to_sdev(ibdev);

	mutex_lock(&srdma_dev_lock);
	list_del_init(&sdev->list);
	mutex_unlock(&srdma_dev_lock);

	srdma_loop_fini(sdev);
	srdma_mcast_fini(sdev);
	if (sdev->net_attached)
		srdma_net_detach(sdev);
	srdma_counters_fini(sdev);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	/* Every MR and AH is gone: the core destroyed them before us. */
	xa_destroy(&sdev->mr_xa);
	xa_destroy(&sdev->ah_xa);
}

static const struct ib_device_ops srdma_device_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SOFTRDMA_ABI_VERSION,
	.device_group = &srdma_attr_group,

	.advise_mr = srdma_advise_mr,
	.alloc_dm = srdma_alloc_dm,
	.alloc_hw_port_stats = srdma_alloc_hw_port_stats,
	.alloc_mr = srdma_alloc_mr,
	.alloc_mw = srdma_alloc_mw,
	.alloc_pd = srdma_alloc_pd,
	.alloc_ucontext = srdma_alloc_ucontext,
	.alloc_xrcd = srdma_alloc_xrcd,
	.attach_mcast = srdma_attach_mcast,
	.create_ah = srdma_create_ah,
	.create_qp = srdma_create_qp,
	.create_srq = srdma_create_srq,
	.create_user_ah = srdma_create_ah,
	.dealloc_dm = srdma_dealloc_dm,
	.dealloc_driver = srdma_dealloc_driver,
	.dealloc_mw = srdma_dealloc_mw,
	.dealloc_pd = srdma_dealloc_pd,
	.dealloc_ucontext = srdma_dealloc_ucontext,
	.dealloc_xrcd = srdma_dealloc_xrcd,
	.dereg_mr = srdma_dereg_mr,
	.destroy_ah = srdma_destroy_ah,
	.destroy_cq = srdma_destroy_cq,
	.destroy_qp = srdma_destroy_qp,
	.destroy_srq = srdma_destroy_srq,
	.detach_mcast = srdma_detach_mcast,
	.disassociate_ucontext = srdma_disassociate_ucontext,
	.fill_res_cq_entry = srdma_fill_res_cq_entry,
	.fill_res_qp_entry = srdma_fill_res_qp_entry,
	.get_dma_mr = srdma_get_dma_mr,
	.get_hw_stats = srdma_get_hw_stats,
	.get_link_layer = srdma_get_link_layer,
	.get_port_immutable = srdma_get_port_immutable,
	.map_mr_sg = srdma_map_mr_sg,
	.mmap = srdma_mmap,
	.mmap_free = srdma_mmap_free,
	.modify_qp = srdma_modify_qp,
	.modify_srq = srdma_modify_srq,
	.poll_cq = srdma_poll_cq,
	.post_recv = srdma_post_recv,
	.post_srq_recv = srdma_post_srq_recv,
	.post_send = srdma_post_send,
	.query_device = srdma_query_device,
	.query_pkey = srdma_query_pkey,
	.query_port = srdma_query_port,
	.query_qp = srdma_query_qp,
	.query_srq = srdma_query_srq,
	.query_ucontext = srdma_query_ucontext,
	.reg_dm_mr = srdma_reg_dm_mr,
	.rereg_user_mr = srdma_rereg_user_mr,
	.req_notify_cq = srdma_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, srdma_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, srdma_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, srdma_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, srdma_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, srdma_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, srdma_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, srdma_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, srdma_xrcd, ibxrcd),
};

static struct srdma_dev *srdma_dev_alloc(struct net_device *ndev)
{
	struct srdma_dev *sdev;
	struct ib_device *ibdev;

	sdev = ib_alloc_device(srdma_dev, ibdev);
	if (!sdev)
		return NULL;

	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	sdev->net = dev_net(ndev);
	INIT_LIST_HEAD(&sdev->list);
	INIT_LIST_HEAD(&sdev->net_node);
	INIT_LIST_HEAD(&sdev->mcgs);
	INIT_WORK(&sdev->unreg_work, srdma_unreg_work);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	if (srdma_counters_init(sdev) || srdma_loop_init(sdev)) {
		/* No dealloc_driver yet (ops come below): undo it here. */
		srdma_loop_fini(sdev);
		srdma_counters_fini(sdev);
		netdev_put(ndev, &sdev->ndev_tracker);
		ib_dealloc_device(&sdev->ibdev);
		return NULL;
	}

	ibdev = &sdev->ibdev;
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	/* Consumers open a queue per vector (nvme-rdma): one per CPU. */
	ibdev->num_comp_vectors = num_possible_cpus();
	/*
	 * The few legacy write commands the core still gates by mask: the
	 * send doorbell (a zero-WR POST_SEND) and CQ arming.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	strscpy(ibdev->node_desc, SRDMA_DRV_NAME, sizeof(ibdev->node_desc));
	/* A stable GUID from the MAC, as RoCE NICs do. */
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	ib_set_device_ops(ibdev, &srdma_device_ops);
	ib_set_device_ops(ibdev, &srdma_compat_ops);
	return sdev;
}

/**
 * srdma_newlink - "rdma link add NAME type softrdma netdev NDEV"
 * @ibdev_name: name of the new device
 * @ndev: the netdev, in the namespace of the caller
 *
 * Return: 0, -EEXIST if @ndev already carries a softrdma device or the
 * name is taken, -EINVAL for a name or netdev we cannot serve, -ENODEV if
 * @ndev went away meanwhile.
 */
static int srdma_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct srdma_dev *sdev;
	bool ndev_alive;
	int err;

	/* librxe claims devices named rxe*: such a name would hide ours. */
	if (!strncmp(ibdev_name, "rxe", 3)) {
		pr_err("softrdma: device name %s is reserved for rdma_rxe\n",
		       ibdev_name);
		return -EINVAL;
	}
	if (ndev->type != ARPHRD_ETHER) {
		pr_err("softrdma: %s is not an Ethernet device\n", ndev->name);
		return -EINVAL;
	}

	sdev = srdma_dev_alloc(ndev);
	if (!sdev)
		return -ENOMEM;

	/*
	 * Enter the list before registering so a netdev event racing with us
	 * finds the device; the check under rtnl below closes the window.
	 */
	mutex_lock(&srdma_dev_lock);
	if (srdma_find_locked(ndev)) {
		mutex_unlock(&srdma_dev_lock);
		pr_err("softrdma: %s already has a softrdma device\n",
		       ndev->name);
		ib_dealloc_device(&sdev->ibdev);
		return -EEXIST;
	}
	list_add_tail(&sdev->list, &srdma_dev_list);
	mutex_unlock(&srdma_dev_lock);

	err = srdma_net_attach(sdev);
	sdev->net_attached = !err;
	if (!err)
		err = ib_device_set_netdev(&sdev->ibdev, ndev, SRDMA_PORT);
	if (!err)
		err = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (err) {
		if (err == -ENFILE) {
			pr_err("softrdma: device name %s is in use\n",
			       ibdev_name);
			err = -EEXIST;
		}
		if (cancel_work_sync(&sdev->unreg_work))
			put_device(&sdev->ibdev.dev);
		/* calls srdma_dealloc_driver(), which undoes all the above */
		ib_dealloc_device(&sdev->ibdev);
		return err;
	}

	/*
	 * From here the core owns the device: a concurrent "rdma link
	 * delete" may free it, so keep it alive for the checks below.
	 */
	get_device(&sdev->ibdev.dev);
	rtnl_lock();
	mutex_lock(&srdma_dev_lock);
	ndev_alive = ndev->reg_state == NETREG_REGISTERED;
	if (ndev_alive && !list_empty(&sdev->list)) {
		sdev->registered = true;
		srdma_cc_link_speed(sdev);
		srdma_port_event(sdev);
	}
	mutex_unlock(&srdma_dev_lock);
	rtnl_unlock();

	if (!ndev_alive) {
		/* The netdev left before the notifier could see us. */
		ib_unregister_device(&sdev->ibdev);
		err = -ENODEV;
	}
	put_device(&sdev->ibdev.dev);
	return err;
}

static struct rdma_link_ops srdma_link_ops = {
	.type = SOFTRDMA_LINK_TYPE,
	.newlink = srdma_newlink,
};

static int srdma_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct srdma_dev *sdev;

	mutex_lock(&srdma_dev_lock);
	sdev = srdma_find_locked(ndev);
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/* Also sent when the netdev moves to another namespace. */
		srdma_queue_unregister(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		if (!sdev->registered)
			break;
		srdma_cc_link_speed(sdev);
		srdma_port_event(sdev);
		break;
	}
out:
	mutex_unlock(&srdma_dev_lock);
	return NOTIFY_DONE;
}

static struct notifier_block srdma_netdev_nb = {
	.notifier_call = srdma_netdev_event,
};

static void srdma_unregister_all(void)
{
	struct srdma_dev *sdev;

	for (;;) {
		mutex_lock(&srdma_dev_lock);
		sdev = list_first_entry_or_null(&srdma_dev_list,
						struct srdma_dev, list);
		if (sdev)
			get_device(&sdev->ibdev.dev);
		mutex_unlock(&srdma_dev_lock);
		if (!sdev)
			break;
		/* dealloc_driver takes it off the list */
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

static int __init srdma_init(void)
{
	int err;

	srdma_wq = alloc_workqueue("softrdma", WQ_UNBOUND, 0);
	if (!srdma_wq)
		return -ENOMEM;
	srdma_tx_wq = alloc_workqueue("softrdma_tx", WQ_UNBOUND, 0);
	if (!srdma_tx_wq) {
		err = -ENOMEM;
		goto err_wq;
	}

	srdma_crc_init();
	err = srdma_net_init();
	if (err)
		goto err_crc;

	err = register_netdevice_notifier(&srdma_netdev_nb);
	if (err)
		goto err_net;

	rdma_link_register(&srdma_link_ops);
	return 0;

err_net:
	srdma_net_exit();
err_crc:
	srdma_crc_exit();
err_wq:
	if (srdma_tx_wq)
		destroy_workqueue(srdma_tx_wq);
	destroy_workqueue(srdma_wq);
	return err;
}

static void __exit srdma_exit(void)
{
	/* Waits for running newlinks; none can start after this. */
	rdma_link_unregister(&srdma_link_ops);
	unregister_netdevice_notifier(&srdma_netdev_nb);

	srdma_unregister_all();
	destroy_workqueue(srdma_wq);	/* drains queued unregistrations */
	destroy_workqueue(srdma_tx_wq);	/* empty: every QP is gone */
	srdma_net_exit();
	srdma_crc_exit();
}

module_init(srdma_init);
module_exit(srdma_exit);
