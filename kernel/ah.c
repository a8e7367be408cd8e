// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles: the destinations of UD sends. An AH gets a number,
 * which the provider (or kernel post_send) writes into each UD send WQE;
 * the requester finds the AH, and with it the resolved path, by that
 * number.
 */
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

int srdma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibah->device);
	struct srdma_ah *ah = to_sah(ibah);
	struct softrdma_create_ah_resp resp = {};
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? srdma_gfp(udata) :
							     GFP_ATOMIC;
	unsigned long flags;
	int err;

	/* RoCE addresses are IP addresses: no AH without a GRH. */
	if (!(rdma_ah_get_ah_flags(init->ah_attr) & IB_AH_GRH))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = dst_cache_init(&ah->path.dst_cache, gfp);
	if (err)
		return err;
	err = srdma_path_init(&ah->path, init->ah_attr, 0);
	if (err)
		goto err_dst;

	/* The MAD layer creates AHs under its spinlocks, IRQs off. */
	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &ah->ah_num, ah,
				XA_LIMIT(1, SRDMA_MAX_AH), &sdev->ah_next,
				GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_dst;
	}
	/* Spread flows over the UDP source ports by AH. */
	ah->path.av.sport = srdma_path_sport(ah->ah_num);
	if (!udata)
		return 0;
	resp.ah_num = ah->ah_num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_xa;
	return 0;

err_xa:
	xa_erase_irq(&sdev->ah_xa, ah->ah_num);
	synchronize_rcu();
err_dst:
	dst_cache_destroy(&ah->path.dst_cache);
	return err;
}

int srdma_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct srdma_ah *ah = to_sah(ibah);
	struct xarray *xa = &to_sdev(ibah->device)->ah_xa;
	unsigned long irqflags;

	xa_lock_irqsave(xa, irqflags);
	__xa_erase(xa, ah->ah_num);
	xa_unlock_irqrestore(xa, irqflags);
	/*
	 * A user's WQEs may name it at any time (see struct srdma_ah); its
	 * destroy may sleep.
	 */
	if (flags & RDMA_DESTROY_AH_SLEEPABLE)
		synchronize_rcu();
	dst_cache_destroy(&ah->path.dst_cache);
	return 0;
}

/**
 * srdma_ah_lookup_rcu - the AH @ah_num of @pd
 * @sdev: the device
 * @ah_num: from a send WQE: untrusted
 * @pd: the sending QP's PD, which the AH must share
 *
 * Return: the AH, valid until rcu_read_unlock(), or NULL.
 */
struct srdma_ah *srdma_ah_lookup_rcu(struct srdma_dev *sdev, u32 ah_num,
				     struct ib_pd *pd)
{
	struct srdma_ah *ah = xa_load(&sdev->ah_xa, ah_num);

	return ah && ah->ibah.pd == pd ? ah : NULL;
}
