// SPDX-License-Identifier: GPL-2.0
/*
 * Loopback: a packet whose route ends on this host (a QP talking to a QP
 * of any softrdma device in the same namespace) skips the IP stack. It
 * never meets a wire, so it carries no ICRC and its receiver checks none.
 *
 * The receive path must not run nested in the sender, which may hold the
 * very QP locks the responder or completer takes (a QP connected to
 * itself, or the ACK of a request coming back). So the packet waits on
 * a queue of the sending device and is received from a tasklet: in
 * softirq, after the sender unlocked, as the stack's backlog would do,
 * minus the IP output and input paths.
 *
 * The queue is chosen by the destination QPN, not by the sending CPU: a
 * QP sends from the doorbell's CPU and from whichever CPU took an ACK,
 * and packets of one stream on two CPUs' queues would overtake each
 * other, which RC pays for with a sequence NAK and a resend. A tasklet
 * never runs on two CPUs at once, so each queue is received in order.
 *
 * With a packet tap on the loopback device (tcpdump, tshark) packets take
 * the stack so that the tap sees them.
 */
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/udp.h>

#include "srdma.h"

/* Packets a queue may hold; more are dropped, as by netif_rx. */
#define SRDMA_LOOP_MAX		1024
/* Queues of a device: QPs on different ones are received in parallel. */
#define SRDMA_LOOP_QUEUES	16

/**
 * struct srdma_loop - looped-back packets of one device to some QPNs
 * @q: packets to receive, in send order, under its lock
 * @tasklet: receives them
 *
 * Lifetime: part of the device, from srdma_loop_init() to
 * srdma_loop_fini() in dealloc_driver, when no QP of the device can send.
 */
struct srdma_loop {
	struct sk_buff_head q;
	struct tasklet_struct tasklet;
};

static void srdma_loop_rx(struct tasklet_struct *t)
{
	struct srdma_loop *l = from_tasklet(l, t, tasklet);
	struct sk_buff_head q;
	struct sk_buff *skb;

	/* What the receivers send back queues up for the next run. */
	__skb_queue_head_init(&q);
	spin_lock_bh(&l->q.lock);
	skb_queue_splice_init(&l->q, &q);
	spin_unlock_bh(&l->q.lock);
	while ((skb = __skb_dequeue(&q)))
		srdma_rx(dev_net(skb->dev), skb, true);
}

/**
 * srdma_loop_route - whether a packet to @dst may take the loopback path
 * @dst: its route
 */
bool srdma_loop_route(const struct dst_entry *dst)
{
	return (dst->dev->flags & IFF_LOOPBACK) && !dev_nit_active(dst->dev);
}

/**
 * srdma_loop_xmit - queue a packet for the receive path of this host
 * @sdev: the sending device
 * @skb: IP header at skb->data, transport header set, route attached;
 *	consumed
 *
 * Return: NET_XMIT_SUCCESS, or NET_XMIT_DROP when this CPU's queue is
 * full (counted as a receive drop for want of room).
 */
int srdma_loop_xmit(struct srdma_dev *sdev, struct sk_buff *skb)
{
	const struct roce_bth *bth;
	struct srdma_loop *l;
	int ret = NET_XMIT_SUCCESS;

	skb->dev = skb_dst(skb)->dev;
	skb_dst_drop(skb);
	skb->pkt_type = PACKET_HOST;
	/* The receive path starts at the UDP header, as encap_rcv does. */
	__skb_pull(skb, skb_transport_offset(skb));
	/* We built the headers: BTH follows UDP in the linear part. */
	bth = (const struct roce_bth *)(skb->data + sizeof(struct udphdr));
	l = &sdev->loop[roce_bth_qpn(bth) % SRDMA_LOOP_QUEUES];

	spin_lock_bh(&l->q.lock);
	if (likely(skb_queue_len(&l->q) < SRDMA_LOOP_MAX)) {
		__skb_queue_tail(&l->q, skb);
		tasklet_schedule(&l->tasklet);
		skb = NULL;
	}
	spin_unlock_bh(&l->q.lock);	/* runs the tasklet unless BHs stay off */

	if (unlikely(skb)) {
		srdma_count(sdev, SRDMA_CNT_RX_PKTS);
		srdma_drop(sdev, SRDMA_CNT_DROP_NOMEM);
		kfree_skb(skb);
		ret = NET_XMIT_DROP;
	}
	return ret;
}

int srdma_loop_init(struct srdma_dev *sdev)
{
	int i;

	sdev->loop = kcalloc(SRDMA_LOOP_QUEUES, sizeof(*sdev->loop),
			     GFP_KERNEL);
	if (!sdev->loop)
		return -ENOMEM;
	for (i = 0; i < SRDMA_LOOP_QUEUES; i++) {
		skb_queue_head_init(&sdev->loop[i].q);
		tasklet_setup(&sdev->loop[i].tasklet, srdma_loop_rx);
	}
	return 0;
}

/* After the last QP is gone: receive or drop what is still queued. */
void srdma_loop_fini(struct srdma_dev *sdev)
{
	int i;

	if (!sdev->loop)
		return;
	for (i = 0; i < SRDMA_LOOP_QUEUES; i++) {
		tasklet_kill(&sdev->loop[i].tasklet);
		skb_queue_purge(&sdev->loop[i].q);
	}
	kfree(sdev->loop);
	sdev->loop = NULL;
}
