// SPDX-License-Identifier: GPL-2.0
/*
 * CQs and QPs created and destroyed in a tight loop, for restrack_race.sh,
 * whose other processes dump them meanwhile ("rdma -dd resource show"):
 * the dumps' fill callbacks must never see a queue half destroyed. A pool
 * of POOL slots, each a CQ and a QP on it; each cycle empties one slot
 * (resizing the CQ first, now and then) and fills it again, so that a
 * dump always walks a full table while entries leave it. RC QPs are
 * connected to themselves with a SEND and its receive posted, their CQEs
 * left unpolled; UC and UD QPs go to INIT. Meant to run unprivileged.
 *
 * usage: res_churn [-n CYCLES] [-t SECONDS] [-p POOL] [-s STOPFILE] IBDEV
 *		     [GID_INDEX]
 *   runs CYCLES cycles (default 1000000), for SECONDS at most (default
 *   60), or until STOPFILE exists, whichever comes first; POOL slots
 *   (default 16).
 */
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "loop_qp.h"

#define MAX_POOL	64
#define MSG		64

struct slot {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct slot pool[MAX_POOL];
static uint8_t buf[2 * MSG];
static struct ibv_mr *mr;
static unsigned long nr_qps[3], nr_resized;

/* To itself: one receive, one SEND, both completions left in the CQ. */
static int rc_self(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};
	struct ibv_sge rsge = { (uintptr_t)buf, MSG, mr->lkey };
	struct ibv_sge ssge = { (uintptr_t)buf + MSG, MSG, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge,
				   .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (!ret)
		ret = qp_rtr_rts(qp, qp->qp_num, &gid, gid_index,
				 IBV_MTU_1024, 14, 7, 7);
	if (!ret)
		ret = ibv_post_recv(qp, &rwr, &rbad);
	if (!ret)
		ret = ibv_post_send(qp, &swr, &sbad);
	return ret;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

static int slot_fill(struct slot *s, unsigned long cycle)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	int t = cycle % 3;
	struct ibv_qp_init_attr init = {
		.qp_type = types[t],
		.cap = { .max_send_wr = 1 + rand() % 64,
			 .max_recv_wr = 1 + rand() % 64,
			 .max_send_sge = 1 + rand() % 4,
			 .max_recv_sge = 1 + rand() % 4 },
	};
	int ret;

	s->cq = ibv_create_cq(ctx, 1 + rand() % 256, NULL, NULL, 0);
	if (!s->cq) {
		ret = errno;
		ktap_print("create_cq: %s", strerror(ret));
		return ret;
	}
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &init);
	if (!s->qp) {
		ret = errno;
		ktap_print("create_qp: %s", strerror(ret));
		return ret;
	}
	nr_qps[t]++;
	ret = types[t] == IBV_QPT_RC ? rc_self(s->qp) : to_init(s->qp);
	ktap_expect(!ret, "QP %u to %s: %s", s->qp->qp_num,
		    types[t] == IBV_QPT_RC ? "RTS" : "INIT", strerror(ret));
	return ret;
}

static int slot_empty(struct slot *s)
{
	int ret = 0;

	if (s->qp) {
		ret = ibv_destroy_qp(s->qp);
		ktap_expect(!ret, "destroy_qp: %s", strerror(ret));
		s->qp = NULL;
	}
	if (!s->cq)
		return ret;
	/* A resize swaps the ring the dumps read. */
	if (!ret && rand() % 4 == 0) {
		/* room for the two CQEs an RC QP left */
		ret = ibv_resize_cq(s->cq, 2 + rand() % 512);
		ktap_expect(!ret, "resize_cq: %s", strerror(ret));
		nr_resized++;
	}
	if (!ret) {
		ret = ibv_destroy_cq(s->cq);
		ktap_expect(!ret, "destroy_cq: %s", strerror(ret));
	}
	s->cq = NULL;
	return ret;
}

int main(int argc, char **argv)
{
	unsigned long cycles = 1000000, n = 0;
	unsigned int seconds = 60, npool = 16, i;
	const char *stopfile = NULL;
	bool stop = false;
	uint64_t end;
	int opt, err = 0;

	while ((opt = getopt(argc, argv, "n:t:p:s:")) != -1) {
		switch (opt) {
		case 'n':
			cycles = strtoul(optarg, NULL, 0);
			break;
		case 't':
			seconds = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			npool = strtoul(optarg, NULL, 0);
			break;
		case 's':
			stopfile = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc || !npool || npool > MAX_POOL)
		goto usage;
	gid_index = optind + 1 < argc ? atoi(argv[optind + 1]) : 1;
	srand(1);

	ktap_plan(2);
	ctx = open_by_name(argv[optind]);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		ktap_print("no device %s or GID %d", argv[optind], gid_index);
		ktap_result(0, "CQs and QPs created and destroyed in a loop");
		ktap_result(0, "every object destroyed at the end");
		return ktap_finish();
	}
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf),
			     IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr) {
		err = errno;
		ktap_print("alloc_pd/reg_mr: %s", strerror(err));
	}

	end = now_ms() + seconds * 1000ull;
	for (; !err && n < cycles && now_ms() < end; n++) {
		struct slot *s = &pool[n % npool];

		if (stopfile && !access(stopfile, F_OK)) {
			stop = true;
			break;
		}
		err = slot_empty(s);
		if (!err)
			err = slot_fill(s, n);
	}
	ktap_print("%lu cycles in a pool of %u (stopped by %s): RC %lu, UC %lu, UD %lu QPs, %lu CQs resized",
		   n, npool, err ? "an error" : stop ? "the stop file" :
		   n >= cycles ? "the count" : "the time limit",
		   nr_qps[0], nr_qps[1], nr_qps[2], nr_resized);
	ktap_result(!err && n > 0,
		    "CQs and QPs created, resized and destroyed in a loop");

	for (i = 0; i < npool; i++)
		err |= slot_empty(&pool[i]);
	if (mr)
		err |= ibv_dereg_mr(mr);
	if (pd)
		err |= ibv_dealloc_pd(pd);
	err |= ibv_close_device(ctx);
	ktap_result(!err, "every object destroyed at the end");
	return ktap_finish();

usage:
	fprintf(stderr, "usage: %s [-n CYCLES] [-t SECONDS] [-p POOL] [-s STOPFILE] IBDEV [GID_INDEX]\n",
		argv[0]);
	return KSFT_FAIL;
}
