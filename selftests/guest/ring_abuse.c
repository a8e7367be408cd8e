// SPDX-License-Identifier: GPL-2.0
/*
 * A process that writes its shared rings and issues uverbs commands by
 * hand, past the provider, as a hostile program would:
 * - an SQ producer index moved back behind WQEs the kernel already took,
 *   or past a full ring, fails the QP at once (a catastrophic error
 *   event, its WQEs flushed), instead of sending the requester round the
 *   whole 32-bit index space with bottom halves off;
 * - two RESIZE_CQ commands racing on one CQ (uverbs runs them under a
 *   shared lock) each get back the ring they made.
 * Meant to run unprivileged.
 *
 * usage: ring_abuse IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"
#include "softrdma.h"	/* the provider's objects and command structs */
#include "send.h"	/* the provider's SQ doorbell */

#define NO_SUCH_QPN	0xabcdef	/* nothing ever ACKs our sends */
#define RESIZES		2000		/* per thread */

/* A QP whose one SEND is never acknowledged: it stays outstanding. */
static bool open_stuck(struct ep *e, uint8_t *buf, struct ibv_mr *mr)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret = ep_open(e, 256);

	if (!ret)
		ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE |
				    IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
	/* A 4 s ACK timeout, 7 retries: outstanding for the whole test. */
	if (!ret)
		ret = qp_rtr_rts(e->qp, NO_SUCH_QPN, &gid, gid_index,
				 IBV_MTU_1024, 20, 7, 7);
	if (!ret)
		ret = ibv_post_send(e->qp, &wr, &bad);
	return ktap_expect(!ret, "set up a QP with a SEND outstanding: %s",
			   strerror(ret));
}

/* The QP failed as a corrupt ring must make it: event, ERR, flushed. */
static bool failed_fatal(struct ep *e)
{
	struct ibv_wc wc;

	return async_event(IBV_EVENT_QP_FATAL, e->qp, NULL) &&
	       ktap_expect(qp_state(e->qp) == IBV_QPS_ERR, "QP state %d",
			   qp_state(e->qp)) &&
	       poll_one(e->cq, &wc) &&
	       ktap_expect(wc.wr_id == 1 && wc.status == IBV_WC_WR_FLUSH_ERR,
			   "the SEND completed with %s",
			   ibv_wc_status_str(wc.status));
}

/*
 * Fill the rest of the SQ with binds of @mw (local WQEs: no PSN, so no
 * window stops the requester), let the kernel take them all, turn the
 * SEND's slot (the kernel works from its copy) into a bind too, then move
 * the producer back to the outstanding SEND.
 */
static void t_producer_back(uint8_t *buf, struct ibv_mr *mr)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ep e = {};
	struct srdma_ring *sq;
	uint32_t start, i;
	bool ok;

	ok = ktap_expect(mw, "alloc_mw: %s", strerror(errno)) &&
	     open_stuck(&e, buf, mr);
	if (ok) {
		sq = &to_sqp(e.qp)->sq;
		start = sq->idx - 1;	/* the SEND */
		for (i = 1; i < sq->num_slots; i++) {
			struct softrdma_send_wqe *w =
				srdma_ring_slot(sq, start + i);

			memset(w, 0, sq->slot_size);
			w->wr_id = 100 + i;
			w->opcode = IBV_WR_BIND_MW;
			w->wr.bind.addr = (uintptr_t)buf;
			w->wr.bind.length = 4096;
			w->wr.bind.mr_lkey = mr->lkey;
			w->wr.bind.mw_rkey = mw->rkey;
			w->wr.bind.new_rkey = mw->rkey;
			w->wr.bind.access = IBV_ACCESS_REMOTE_READ;
		}
		srdma_store_release(&sq->hdr->producer, start + sq->num_slots);
		ok = ktap_expect(!srdma_sq_doorbell(e.qp), "doorbell") &&
		     ktap_expect(qp_state(e.qp) == IBV_QPS_RTS,
				 "a full ring of binds failed the QP");
		memcpy(srdma_ring_slot(sq, start),
		       srdma_ring_slot(sq, start + 1), sq->slot_size);
		srdma_store_release(&sq->hdr->producer, start);
		ok = ok && ktap_expect(!srdma_sq_doorbell(e.qp), "doorbell") &&
		     failed_fatal(&e);
	}
	ktap_result(ok, "an SQ producer index moved back behind fetched WQEs fails the QP at once");
	ep_close(&e);
	if (mw)
		ibv_dealloc_mw(mw);
}

static void t_producer_past(uint8_t *buf, struct ibv_mr *mr)
{
	struct ep e = {};
	struct srdma_ring *sq;
	bool ok = open_stuck(&e, buf, mr);

	if (ok) {
		sq = &to_sqp(e.qp)->sq;
		srdma_store_release(&sq->hdr->producer,
				    sq->idx + sq->num_slots);
		ok = ktap_expect(!srdma_sq_doorbell(e.qp), "doorbell") &&
		     failed_fatal(&e);
	}
	ktap_result(ok, "an SQ producer index past a full ring fails the QP at once");
	ep_close(&e);
}

/*
 * The core's own part of the response (its cqe) is read after the driver
 * returns, so it may tell the other call's size: only the ring is ours.
 */
struct resize_arg {
	struct ibv_cq *cq;
	uint32_t cqe;		/* what this thread asks for */
	int wrong;		/* responses that told another ring */
	int err;		/* first command error */
};

struct resize_resp {
	struct ib_uverbs_resize_cq_resp core;
	struct softrdma_resize_cq_resp drv;
};

/* RESIZE_CQ by hand: the provider would serialise the two threads. */
static void *resizer(void *p)
{
	struct resize_arg *r = p;
	int i;

	for (i = 0; i < RESIZES && !r->err; i++) {
		struct resize_resp resp = {};
		struct ibv_resize_cq cmd = {
			.hdr = {
				.command = IB_USER_VERBS_CMD_RESIZE_CQ,
				.in_words = sizeof(cmd) / 4,
				.out_words = sizeof(resp) / 4,
			},
			.core = {
				.response = (uintptr_t)&resp,
				.cq_handle = r->cq->handle,
				.cqe = r->cqe,
			},
		};

		if (write(r->cq->context->cmd_fd, &cmd, sizeof(cmd)) !=
		    sizeof(cmd))
			r->err = errno;
		else if (resp.drv.cq.num_slots != r->cqe)
			r->wrong++;
	}
	return NULL;
}

static void t_resize_race(void)
{
	struct resize_arg r[2] = {
		{ .cqe = 64 }, { .cqe = 256 },
	};
	pthread_t t[2];
	bool ok;

	r[0].cq = r[1].cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ok = ktap_expect(r[0].cq, "create_cq: %s", strerror(errno)) &&
	     ktap_expect(!pthread_create(&t[0], NULL, resizer, &r[0]) &&
			 !pthread_create(&t[1], NULL, resizer, &r[1]),
			 "pthread_create");
	if (ok) {
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		ok = ktap_expect(!r[0].err && !r[1].err, "resize_cq: %s",
				 strerror(r[0].err ?: r[1].err)) &&
		     ktap_expect(!r[0].wrong && !r[1].wrong,
				 "%d + %d responses told the other call's ring",
				 r[0].wrong, r[1].wrong);
	}
	ktap_result(ok, "racing resize_cq calls each get their own ring back");
	if (r[0].cq)
		ibv_destroy_cq(r[0].cq);
}

int main(int argc, char **argv)
{
	uint8_t *buf;
	struct ibv_mr *mr;

	if (!loop_open(argc, argv, 3))
		return KSFT_FAIL;
	buf = aligned_alloc(4096, 4096);
	mr = buf ? ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_MW_BIND) : NULL;
	if (!mr) {
		ktap_print("reg_mr: %s", strerror(errno));
		return KSFT_FAIL;
	}
	t_producer_back(buf, mr);
	t_producer_past(buf, mr);
	t_resize_race();
	ibv_dereg_mr(mr);
	return ktap_finish();
}
