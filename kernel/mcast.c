// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast: UD QPs attached to a group (ibv_attach_mcast, or rdma_cm's
 * join) receive each datagram sent to its GID, an IPv4 224/4 or IPv6
 * ff00::/8 address on RoCEv2. The first attachment to a group joins the
 * netdev to it (IGMP/MLD), as programming its steering would on a NIC,
 * so the stack delivers the group's datagrams to our UDP socket; the last
 * detachment leaves it. Sends need nothing: a UD send to a group address
 * is routed and looped back to local members by the IP stack.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "srdma.h"

/**
 * struct srdma_mcg - a multicast group some UD QPs of a device attached
 * @gid: its GID
 * @node: in the device's @mcgs
 * @rcu: readers (receive) may still hold it after it is replaced
 * @nqp: entries of @qpns
 * @qpns: the attached QPs, by number: receive looks each up as it would
 *	for a unicast datagram
 *
 * Lifetime: never changed in place. Each attach or detach replaces the
 * group with a new copy (or none, after the last detach) under RTNL,
 * which the netdev's group membership needs anyway; the old copy is
 * freed after an RCU grace period. Receive reads them under RCU.
 */
struct srdma_mcg {
	union ib_gid gid;
	struct list_head node;
	struct rcu_head rcu;
	u32 nqp;
	u32 qpns[SRDMA_MAX_MCAST_QP_ATTACH];
};

/* Caller holds RTNL or rcu_read_lock(). */
static struct srdma_mcg *srdma_mcg_find(struct srdma_dev *sdev,
					const union ib_gid *gid)
{
	struct srdma_mcg *mcg;

	list_for_each_entry_rcu(mcg, &sdev->mcgs, node, lockdep_rtnl_is_held())
		if (!memcmp(&mcg->gid, gid, sizeof(*gid)))
			return mcg;
	return NULL;
}

/* The group's datagrams for us: @join or not. RTNL held. */
static int srdma_mcg_membership(struct srdma_dev *sdev,
				const union ib_gid *gid, bool join)
{
	struct in6_addr *addr = (struct in6_addr *)gid->raw;
	struct in_device *in_dev;

	if (ipv6_addr_v4mapped(addr)) {
		in_dev = __in_dev_get_rtnl(sdev->ndev);
		if (!in_dev)
			return -ENODEV;
		if (join)
			ip_mc_inc_group(in_dev, addr->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, addr->s6_addr32[3]);
		return 0;
	}
#if IS_ENABLED(CONFIG_IPV6)
	return join ? ipv6_dev_mc_inc(sdev->ndev, addr) :
		      ipv6_dev_mc_dec(sdev->ndev, addr);
#else
	return -EAFNOSUPPORT;
#endif
}

/* Put @new (NULL: none) where @old is (NULL: nowhere yet). RTNL held. */
static void srdma_mcg_replace(struct srdma_dev *sdev, struct srdma_mcg *old,
			      struct srdma_mcg *new)
{
	if (old && new)
		list_replace_rcu(&old->node, &new->node);
	else if (new)
		list_add_tail_rcu(&new->node, &sdev->mcgs);
	else
		list_del_rcu(&old->node);
	if (old)
		kfree_rcu(old, rcu);
}

int srdma_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct srdma_dev *sdev = to_sdev(ibqp->device);
	u32 qpn = ibqp->qp_num;
	struct srdma_mcg *old, *new;
	int err = 0;
	u32 i;

	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	rtnl_lock();
	old = srdma_mcg_find(sdev, gid);
	if (old) {
		for (i = 0; i < old->nqp; i++)
			if (old->qpns[i] == qpn)
				goto out;	/* attached already */
		if (old->nqp == SRDMA_MAX_MCAST_QP_ATTACH) {
			err = -ENOMEM;
			goto out;
		}
		*new = *old;
	} else {
		if (sdev->nmcg == SRDMA_MAX_MCAST_GRP) {
			err = -ENOMEM;
			goto out;
		}
		err = srdma_mcg_membership(sdev, gid, true);
		if (err)
			goto out;
		new->gid = *gid;
		sdev->nmcg++;
	}
	new->qpns[new->nqp++] = qpn;
	srdma_mcg_replace(sdev, old, new);
	new = NULL;
out:
	rtnl_unlock();
	kfree(new);
	return err;
}

int srdma_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct srdma_dev *sdev = to_sdev(ibqp->device);
	u32 qpn = ibqp->qp_num;
	struct srdma_mcg *old, *new = NULL;
	int err = -EINVAL;
	u32 i, n = 0;

	rtnl_lock();
	old = srdma_mcg_find(sdev, gid);
	for (i = 0; old && i < old->nqp; i++)
		if (old->qpns[i] == qpn)
			break;
	if (!old || i == old->nqp)
		goto out;	/* not attached */
	if (old->nqp > 1) {
		new = kzalloc(sizeof(*new), GFP_KERNEL);
		err = -ENOMEM;
		if (!new)
			goto out;
		new->gid = old->gid;
		for (i = 0; i < old->nqp; i++)
			if (old->qpns[i] != qpn)
				new->qpns[n++] = old->qpns[i];
		new->nqp = n;
	} else {
		srdma_mcg_membership(sdev, gid, false);
		sdev->nmcg--;
	}
	srdma_mcg_replace(sdev, old, new);
	err = 0;
out:
	rtnl_unlock();
	return err;
}

/**
 * srdma_mcg_qpns_rcu - the QPs of @sdev attached to group @gid
 * @sdev: the device a datagram to the group came in on
 * @gid: its destination
 * @qpns: set to their numbers
 *
 * Caller holds rcu_read_lock(), which keeps *@qpns valid.
 * Return: how many, 0 if none.
 */
u32 srdma_mcg_qpns_rcu(struct srdma_dev *sdev, const union ib_gid *gid,
		       const u32 **qpns)
{
	struct srdma_mcg *mcg = srdma_mcg_find(sdev, gid);

	if (!mcg)
		return 0;
	*qpns = mcg->qpns;
	return mcg->nqp;
}

/* At device teardown: attachments left by a consumer that did not detach. */
void srdma_mcast_fini(struct srdma_dev *sdev)
{
	struct srdma_mcg *mcg, *next;

	if (list_empty(&sdev->mcgs))
		return;		/* as always: QPs detach before they go */
	rtnl_lock();
	list_for_each_entry_safe(mcg, next, &sdev->mcgs, node) {
		srdma_mcg_membership(sdev, &mcg->gid, false);
		srdma_mcg_replace(sdev, mcg, NULL);
	}
	sdev->nmcg = 0;
	rtnl_unlock();
}
