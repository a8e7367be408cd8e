// SPDX-License-Identifier: GPL-2.0
/*
 * UD responder: a datagram is one packet with a DETH. It lands in the next
 * receive WQE behind the 40 bytes the verbs reserve there for the GRH,
 * which on RoCEv2 is the IP header it came with. Nothing is acknowledged:
 * a datagram no WQE can take is dropped and counted.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "srdma.h"

#define SRDMA_GRH_LEN	40

/*
 * The GRH of a RoCEv2 datagram: its IPv6 header, or its IPv4 header in
 * the last 20 bytes (as rdma_rxe and RoCE NICs place it, and as
 * ibv_init_ah_from_wc() reads it).
 */
static void srdma_ud_grh(const struct sk_buff *skb, u8 *grh)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		memset(grh, 0, SRDMA_GRH_LEN - sizeof(struct iphdr));
		memcpy(grh + SRDMA_GRH_LEN - sizeof(struct iphdr), ip_hdr(skb),
		       sizeof(struct iphdr));
	} else {
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	}
}

/**
 * srdma_ud_rx - a datagram for UD QP @qp
 * @qp: the QP (RCU-protected by the caller)
 * @pkt: the parsed packet, a UD SEND ONLY (with immediate or not)
 */
void srdma_ud_rx(struct srdma_qp *qp, const struct roce_pkt_info *pkt)
{
	const struct roce_deth *deth = roce_pkt_deth(pkt);
	u8 grh[SRDMA_GRH_LEN];
	struct srdma_xfer x = { .op = SRDMA_FROM_BUF, .buf = grh };
	enum ib_qp_state state;
	bool fail = false;
	u8 status;
	int err;

	spin_lock_bh(&qp->rq_lock);
	state = READ_ONCE(qp->state);
	if (state < IB_QPS_RTR || state > IB_QPS_SQE) {
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_QP_STATE);
		goto out;
	}
	if (roce_deth_qkey(deth) != qp->attr.qkey) {
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_BAD_QKEY);
		goto out;
	}
	err = srdma_resp_take_rwqe(qp);
	if (err) {
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_NO_RECV);
		fail = err != -EAGAIN;	/* the user broke the ring */
		goto out;
	}

	srdma_ud_grh(to_rx_pkt(pkt)->skb, grh);
	err = srdma_sge_xfer(qp, qp->resp.rwqe->sge, qp->resp.rwqe->num_sge, 0,
			     SRDMA_GRH_LEN, &x);
	if (!err)
		err = srdma_pkt_to_sge(qp, pkt, qp->resp.rwqe->sge,
				       qp->resp.rwqe->num_sge, SRDMA_GRH_LEN);
	if (err == -EAGAIN) {
		/* An ODP page being mapped: the datagram is lost, the WQE kept. */
		srdma_drop(qp_sdev(qp), SRDMA_CNT_DROP_NOMEM);
		goto out;
	}
	/*
	 * A datagram too long for the buffer fails that WQE only: the QP
	 * stays up, or any sender could stop it.
	 */
	status = !err ? IB_WC_SUCCESS : err == -EACCES ? IB_WC_LOC_PROT_ERR :
							 IB_WC_LOC_LEN_ERR;
	srdma_resp_cqe(qp, status, IB_WC_RECV,
		       status ? 0 : SRDMA_GRH_LEN + pkt->payload_len, pkt);
out:
	spin_unlock_bh(&qp->rq_lock);
	if (fail)
		srdma_qp_error(qp, IB_EVENT_QP_FATAL);
}
