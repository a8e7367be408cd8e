// SPDX-License-Identifier: GPL-2.0
/*
 * resize_cq on one device: a CQ grows and shrinks, keeps its unpolled
 * completions in order across a resize, refuses to shrink below them
 * (EINVAL), and then takes as many completions as its new size.
 *
 * usage: cq_resize IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"

#define BUF_SIZE	4096

static uint8_t *buf;
static struct ibv_mr *mr;

/* @n signaled 8-byte WRITEs from @e, wr_id @first on; not polled. */
static bool writes(struct ep *e, int first, int n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)buf + 64,
			     .rkey = mr->rkey },
	}, *bad;
	int i;

	for (i = first; i < first + n; i++) {
		wr.wr_id = i;
		if (ibv_post_send(e->qp, &wr, &bad))
			return ktap_expect(false, "post %d", i);
	}
	return true;
}

/* Wait until @cq holds @n completions, then poll them: wr_ids in order. */
static bool drain(struct ibv_cq *cq, int first, int n)
{
	struct ibv_wc wc;
	int i;

	for (i = first; i < first + n; i++)
		if (!poll_one(cq, &wc) ||
		    !ktap_expect(wc.status == IBV_WC_SUCCESS &&
				 wc.wr_id == (uint64_t)i,
				 "completion %d: wr_id %llu %s", i,
				 (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status)))
			return false;
	return ktap_expect(ibv_poll_cq(cq, 1, &wc) == 0, "one too many");
}

static void t_sizes(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 3, NULL, NULL, 0);
	bool ok;

	ok = ktap_expect(cq, "create_cq: %s", strerror(errno)) &&
	     ktap_expect(!ibv_resize_cq(cq, 1) && cq->cqe >= 1,
			 "shrink to 1: cqe %d", cq->cqe) &&
	     ktap_expect(!ibv_resize_cq(cq, 7) && cq->cqe >= 7,
			 "grow to 7: cqe %d", cq->cqe) &&
	     ktap_expect(ibv_resize_cq(cq, 0) == EINVAL, "resize to 0") &&
	     ktap_expect(ibv_resize_cq(cq, 0x7fffffff) == EINVAL,
			 "resize beyond max_cqe");
	if (cq)
		ibv_destroy_cq(cq);
	ktap_result(ok, "a CQ shrinks and grows; 0 and more than max_cqe are EINVAL");
}

static void t_keep(void)
{
	struct ep a = {}, b = {};
	bool ok;

	ok = pair_open(&a, &b, 8) && writes(&a, 0, 6);
	/* Loopback ACKs take microseconds: let all 6 land, unpolled. */
	usleep(2000000);
	ok = ok && ktap_expect(ibv_resize_cq(a.cq, 2) == EINVAL,
			 "shrunk below 6 unpolled completions") &&
	     ktap_expect(!ibv_resize_cq(a.cq, 64) && a.cq->cqe >= 64,
			 "grow to 64: cqe %d", a.cq->cqe);
	ktap_result(ok, "shrinking below the unpolled completions is EINVAL, growing is not");
	ok = ok && drain(a.cq, 0, 6);
	ktap_result(ok, "the unpolled completions survive the resize, in order");
	ok = ok && writes(&a, 6, 40) && drain(a.cq, 6, 40);
	ktap_result(ok, "the resized CQ takes 40 completions where 8 fitted before");
	pair_close(&a, &b);
}

int main(int argc, char **argv)
{
	if (!loop_open(argc, argv, 4))
		return KSFT_FAIL;
	buf = aligned_alloc(4096, BUF_SIZE);
	if (!buf)
		return KSFT_FAIL;
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		ktap_print("reg_mr: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_sizes();
	t_keep();
	return ktap_finish();
}
