// SPDX-License-Identifier: GPL-2.0
/*
 * A device deleted under a process that is using it. The process keeps
 * its ring mappings, but the queues behind them are gone: poll_cq and the
 * post calls must fail from then on, and nothing left in the rings may
 * come back as a completion. Busy pollers (perftest's receivers) learn
 * that the device is gone only this way.
 *
 * usage: verbs_removal IBDEV [GID_INDEX]
 *   deletes IBDEV with "rdma link delete IBDEV" half way through.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "loop_qp.h"

#define NR_MSGS		8
#define MSG_SIZE	64
#define NR_POLLS	1000

static uint8_t buf[2 * NR_MSGS * MSG_SIZE];
static struct ibv_mr *mr;

static int post_recvs(struct ep *e, int n)
{
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sge;
	int i, ret = 0;

	for (i = 0; i < n && !ret; i++) {
		sge = (struct ibv_sge){ (uintptr_t)buf + i * MSG_SIZE, MSG_SIZE,
					mr->lkey };
		wr = (struct ibv_recv_wr){ .wr_id = 100 + i, .sg_list = &sge,
					   .num_sge = 1 };
		ret = ibv_post_recv(e->qp, &wr, &bad);
	}
	return ret;
}

static int post_send(struct ep *e, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)buf + sizeof(buf) / 2, MSG_SIZE,
			       mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(e->qp, &wr, &bad);
}

/* Traffic before the removal, so that the CQ indices are not 0. */
static bool exchange(struct ep *a, struct ep *b)
{
	struct ibv_wc wc;
	int i, got = 0;

	if (!ktap_expect(!post_recvs(b, NR_MSGS), "post_recv failed"))
		return false;
	for (i = 0; i < NR_MSGS; i++)
		if (!ktap_expect(!post_send(a, i), "post_send failed") ||
		    !wc_ok(a->cq, i, IBV_WC_SUCCESS))
			return false;
	while (got < NR_MSGS && poll_one(b->cq, &wc) &&
	       ktap_expect(wc.status == IBV_WC_SUCCESS && wc.wr_id == 100u + got,
			   "receive %d: %s", got, ibv_wc_status_str(wc.status)))
		got++;
	/* Receives left posted: their slots must not come back as CQEs. */
	return got == NR_MSGS &&
	       ktap_expect(!post_recvs(b, NR_MSGS), "post_recv failed");
}

/* Every poll fails; none returns a completion. */
static bool poll_fails(struct ibv_cq *cq)
{
	struct ibv_wc wc[4];
	int i, n;

	for (i = 0; i < NR_POLLS; i++) {
		n = ibv_poll_cq(cq, 4, wc);
		if (n >= 0)
			return ktap_expect(false, "poll %d returned %d (wr_id %llu)",
					   i, n, n ? (unsigned long long)wc[0].wr_id : 0);
	}
	return true;
}

static bool start_poll_fails(struct ibv_cq_ex *cqx)
{
	struct ibv_poll_cq_attr attr = {};
	int ret = ibv_start_poll(cqx, &attr);

	if (!ret)
		ibv_end_poll(cqx);
	return ktap_expect(ret && ret != ENOENT, "start_poll returned %d", ret);
}

static bool device_fatal_event(void)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool got = false;

	while (!got && poll(&pfd, 1, 10000) == 1 &&
	       !ibv_get_async_event(ctx, &ev)) {
		got = ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
	}
	return got;
}

int main(int argc, char **argv)
{
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = 16 };
	struct ibv_cq_ex *cqx;
	struct ep a = {}, b = {};
	char cmd[128];
	bool ok;

	if (!loop_open(argc, argv, 9))
		return KSFT_FAIL;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cqx = ibv_create_cq_ex(ctx, &cq_attr);
	if (!ktap_expect(mr && cqx, "reg_mr or create_cq_ex failed") ||
	    !pair_open(&a, &b, 64))
		return KSFT_FAIL;
	ktap_result(exchange(&a, &b), "messages flow before the removal");

	snprintf(cmd, sizeof(cmd), "rdma link delete %s", argv[1]);
	ktap_result(!system(cmd), "rdma link delete succeeds under the process");
	ktap_result(device_fatal_event(), "the process gets IBV_EVENT_DEVICE_FATAL");

	ok = poll_fails(b.cq);
	ktap_result(ok, "poll_cq fails on a CQ with receives posted, and returns no completion");
	ktap_result(poll_fails(a.cq), "poll_cq fails on a CQ of past sends");
	ktap_result(start_poll_fails(cqx), "start_poll fails on an extended CQ");
	ktap_result(post_recvs(&b, 1) != 0 && poll_fails(b.cq),
		    "post_recv fails, and nothing it wrote reads as a completion");
	ktap_result(post_send(&a, 99) != 0, "post_send fails");

	/* The objects are gone already: their destroy calls succeed. */
	ok = !ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) && !ibv_destroy_qp(a.qp) &&
	     !ibv_destroy_qp(b.qp) && !ibv_destroy_cq(a.cq) &&
	     !ibv_destroy_cq(b.cq) && !ibv_dereg_mr(mr) &&
	     !ibv_dealloc_pd(pd) && !ibv_close_device(ctx);
	ktap_result(ok, "every object is destroyed and the device closed");
	return ktap_finish();
}
