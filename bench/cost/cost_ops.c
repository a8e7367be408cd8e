// SPDX-License-Identifier: GPL-2.0
/*
 * cost_ops: the RDMA operations the cost meter measures (make bench-cost).
 * One process opens device DEV_A and device DEV_B (two namespaces joined
 * by a veth, see bench/cost/guest.sh), connects an RC QP on each, runs
 * COUNT operations to warm up (caches, allocators), then REPEAT times
 * COUNT more between the cost meter's start and stop markers
 * (cost_mark.h), WINDOW of them in flight, and checks that each
 * completed. A's QP is the requester: SEND and WRITE go from A's memory
 * to B's, READ brings B's into A's. Completions are polled, as perftest
 * does. For SENDs B keeps twice WINDOW receives posted, and its
 * completions are taken before A's: a SEND never meets an empty receive
 * queue (an RNR NAK and its timer would make the count depend on time).
 *
 * usage: cost_ops DEV_A GID_A DEV_B GID_B send|write|read SIZE COUNT WINDOW
 *        [REPEAT]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "verbs_util.h"
#include "cost_mark.h"

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

static struct side A, B;
static enum ibv_wr_opcode op;
static uint32_t size, window;

static void die(const char *what)
{
	fprintf(stderr, "cost_ops: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void side_open(struct side *s, const char *dev, int gid_index)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = window, .max_recv_wr = 2 * window,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	size_t len = (size_t)size * window;

	s->ctx = open_by_name(dev);
	if (!s->ctx)
		die(dev);
	s->gid_index = gid_index;
	if (ibv_query_gid(s->ctx, 1, gid_index, &s->gid))
		die("query_gid");
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 2 * window, NULL, NULL, 0);
	s->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!s->pd || !s->cq || !s->buf)
		die(dev);
	memset(s->buf, 0x5a, len);
	s->mr = ibv_reg_mr(s->pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &ia);
	if (!s->mr || !s->qp)
		die(dev);
}

static void side_connect(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	errno = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (!errno)
		errno = qp_rtr_rts(s->qp, peer->qp->qp_num, &peer->gid,
				   s->gid_index, IBV_MTU_4096, 14, 7, 7);
	if (errno)
		die("connect");
}

static void post_recv(uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)B.buf + slot % window * size,
			       .length = size, .lkey = B.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	errno = ibv_post_recv(B.qp, &wr, &bad);
	if (errno)
		die("post_recv");
}

static void post_op(uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)A.buf + slot * size,
			       .length = size, .lkey = A.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)B.buf + slot * size;
	wr.wr.rdma.rkey = B.mr->rkey;
	errno = ibv_post_send(A.qp, &wr, &bad);
	if (errno)
		die("post_send");
}

/* Take one completion from @cq, which must be a success. */
static uint64_t reap(struct ibv_cq *cq, int *n)
{
	struct ibv_wc wc;

	*n = ibv_poll_cq(cq, 1, &wc);
	if (*n < 0 || (*n && wc.status != IBV_WC_SUCCESS)) {
		fprintf(stderr, "cost_ops: completion %s\n",
			*n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		exit(1);
	}
	return wc.wr_id;
}

/* @count operations, @window in flight, each slot reused in turn. */
static void run(uint32_t count)
{
	uint32_t posted = 0, done = 0, recvd = 0, slot;
	int n;

	if (op == IBV_WR_SEND)
		for (slot = 0; slot < 2 * window && slot < count; slot++)
			post_recv(slot);
	while (posted < window && posted < count)
		post_op(posted++);
	while (done < count || (op == IBV_WR_SEND && recvd < count)) {
		if (op == IBV_WR_SEND) {
			slot = reap(B.cq, &n);
			if (n && ++recvd + 2 * window <= count)
				post_recv(slot);
		}
		slot = reap(A.cq, &n);
		if (n && ++done && posted < count) {
			post_op(slot % window);
			posted++;
		}
	}
}

int main(int argc, char **argv)
{
	uint32_t count, repeat = 1, i;

	if (argc != 9 && argc != 10) {
		fprintf(stderr, "usage: cost_ops DEV_A GID_A DEV_B GID_B send|write|read SIZE COUNT WINDOW [REPEAT]\n");
		return 2;
	}
	if (!strcmp(argv[5], "send"))
		op = IBV_WR_SEND;
	else if (!strcmp(argv[5], "write"))
		op = IBV_WR_RDMA_WRITE;
	else if (!strcmp(argv[5], "read"))
		op = IBV_WR_RDMA_READ;
	else
		return 2;
	size = strtoul(argv[6], NULL, 0);
	count = strtoul(argv[7], NULL, 0);
	window = strtoul(argv[8], NULL, 0);
	if (argc > 9)
		repeat = strtoul(argv[9], NULL, 0);
	if (!size || !count || !window || !repeat)
		return 2;
	side_open(&A, argv[1], atoi(argv[2]));
	side_open(&B, argv[3], atoi(argv[4]));
	side_connect(&A, &B);
	side_connect(&B, &A);
	run(count);
	for (i = 0; i < repeat; i++) {
		cost_start();
		run(count);
		cost_stop();
	}
	printf("%s %u x %u x %u B: done\n", argv[5], repeat, count, size);
	return 0;
}
