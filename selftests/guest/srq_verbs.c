// SPDX-License-Identifier: GPL-2.0
/*
 * SRQs on one device (loopback): several QPs take their receives off one
 * SRQ, the limit event fires once below the armed limit, the SRQ verbs
 * refuse what they cannot do, a resize keeps the WQEs posted, and a QP on
 * an SRQ that errors raises the last-WQE event and leaves the SRQ's WQEs
 * to the others.
 *
 * usage: srq_verbs IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"

#define MSG		1000	/* bytes per SEND */
#define SLOT		4096	/* receive buffer per SRQ WQE */
#define NSLOTS		16

static struct ibv_mr *mr;
static uint8_t *buf;		/* send data, then NSLOTS receive slots */
static struct ibv_device_attr dev;

static struct ibv_srq *srq_new(uint32_t max_wr)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = max_wr, .max_sge = 1 },
	};

	return ibv_create_srq(pd, &init);
}

static bool srq_post(struct ibv_srq *srq, int first, int n)
{
	int i;

	for (i = first; i < first + n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)buf + SLOT * (1 + i % NSLOTS),
			.length = SLOT, .lkey = mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad))
			return ktap_expect(false, "post_srq_recv %d", i);
	}
	return true;
}

static bool send_one(struct ep *e, uint32_t seed)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = MSG, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	fill(buf, MSG, seed);
	return ktap_expect(!ibv_post_send(e->qp, &wr, &bad), "post_send") &&
	       wc_ok(e->cq, seed, IBV_WC_SUCCESS);
}

/* The receive of @seed landed, whole, on @qp in some SRQ slot. */
static bool recv_one(struct ep *e, uint32_t seed)
{
	struct ibv_wc wc;

	return poll_one(e->cq, &wc) &&
	       ktap_expect(wc.status == IBV_WC_SUCCESS &&
			   wc.opcode == IBV_WC_RECV && wc.byte_len == MSG &&
			   wc.qp_num == e->qp->qp_num,
			   "%s, %u bytes, qp %#x (want %#x)",
			   ibv_wc_status_str(wc.status), wc.byte_len,
			   wc.qp_num, e->qp->qp_num) &&
	       (fill(buf, MSG, seed),
		same(buf + SLOT * (1 + wc.wr_id % NSLOTS), buf, MSG));
}

/* Wait up to 5 s for @type on @srq. */
static bool srq_event(enum ibv_event_type type, struct ibv_srq *srq)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool got = false;

	while (!got && poll(&pfd, 1, 5000) == 1 &&
	       !ibv_get_async_event(ctx, &ev)) {
		got = ev.event_type == type && ev.element.srq == srq;
		ibv_ack_async_event(&ev);
	}
	return ktap_expect(got, "no %s", ibv_event_type_str(type));
}

/* Two QPs, one SRQ: each message arrives on its own QP, from the SRQ. */
static void t_shared(void)
{
	struct ep a1 = {}, b1 = {}, a2 = {}, b2 = {};
	struct ibv_srq *srq = srq_new(NSLOTS);
	struct ibv_recv_wr wr = {}, *bad;
	bool ok;
	int i;

	ep_srq = srq;
	ok = ktap_expect(srq, "create_srq: %s", strerror(errno)) &&
	     pair_open(&a1, &b1, 64) && pair_open(&a2, &b2, 64) &&
	     srq_post(srq, 0, 6) &&
	     ktap_expect(ibv_post_recv(b1.qp, &wr, &bad) == EINVAL,
			 "post_recv on a QP of an SRQ was taken");
	for (i = 0; ok && i < 3; i++)
		ok = send_one(&a1, 10 + i) && recv_one(&b1, 10 + i) &&
		     send_one(&a2, 20 + i) && recv_one(&b2, 20 + i);
	ep_srq = NULL;
	pair_close(&a1, &b1);
	pair_close(&a2, &b2);
	if (srq)
		ibv_destroy_srq(srq);
	ktap_result(ok, "two QPs take their receives off one SRQ");
}

/* Armed at 4 with 8 posted: the 5th message fires the event, once. */
static void t_limit(void)
{
	struct ibv_srq *srq = srq_new(NSLOTS);
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	struct ep a = {}, b = {};
	bool ok;
	int i;

	ep_srq = srq;
	ok = ktap_expect(srq, "create_srq: %s", strerror(errno)) &&
	     pair_open(&a, &b, 64) && srq_post(srq, 0, 8) &&
	     ktap_expect(!ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT),
			 "arm the limit") &&
	     ktap_expect(!ibv_query_srq(srq, &attr) && attr.srq_limit == 4,
			 "query: limit %u", attr.srq_limit);
	for (i = 0; ok && i < 5; i++)
		ok = send_one(&a, i) && recv_one(&b, i);
	ok = ok && srq_event(IBV_EVENT_SRQ_LIMIT_REACHED, srq) &&
	     ktap_expect(!ibv_query_srq(srq, &attr) && !attr.srq_limit,
			 "still armed: limit %u", attr.srq_limit);
	ep_srq = NULL;
	pair_close(&a, &b);
	if (srq)
		ibv_destroy_srq(srq);
	ktap_result(ok, "the SRQ limit event fires below the armed limit and disarms it");
}

static void t_refused(void)
{
	struct ibv_srq *srq = srq_new(NSLOTS), *big;
	struct ibv_srq_attr attr = { .srq_limit = NSLOTS + 1 };
	bool ok;

	ok = ktap_expect(srq, "create_srq: %s", strerror(errno)) &&
	     ktap_expect(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) == EINVAL,
			 "a limit above max_wr was taken");
	attr.max_wr = 0;
	ok = ok && ktap_expect(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) ==
			       EINVAL, "a resize to 0 was not refused");
	attr.max_wr = 4;
	attr.srq_limit = 5;
	ok = ok && ktap_expect(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR |
					      IBV_SRQ_LIMIT) == EINVAL,
			       "a limit above the new size was taken") &&
	     ktap_expect(!ibv_query_srq(srq, &attr) && attr.max_wr == NSLOTS,
			 "a refused resize changed max_wr to %u", attr.max_wr);
	big = srq_new(dev.max_srq_wr + 1);
	ok = ok && ktap_expect(!big && errno == EINVAL,
			       "max_wr above max_srq_wr: %s",
			       big ? "created" : strerror(errno));
	if (big)
		ibv_destroy_srq(big);
	if (srq)
		ibv_destroy_srq(srq);
	ktap_result(ok, "a limit over max_wr, a resize to 0 or below the limit, max_wr over the device's: EINVAL");
}

/* The receives of SENDs @from..@to - 1 arrive on @e in that order. */
static bool recv_in_order(struct ep *s, struct ep *e, int from, int to)
{
	struct ibv_wc wc;
	int i;

	for (i = from; i < to; i++)
		if (!send_one(s, i) || !poll_one(e->cq, &wc) ||
		    !ktap_expect(wc.status == IBV_WC_SUCCESS &&
				 wc.wr_id == (uint64_t)i,
				 "receive %d: wr_id %llu %s", i,
				 (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status)) ||
		    (fill(buf, MSG, i),
		     !same(buf + SLOT * (1 + i % NSLOTS), buf, MSG)))
			return false;
	return true;
}

/*
 * ibv_modify_srq(IBV_SRQ_MAX_WR): 3 WQEs posted on a 4-slot SRQ move to a
 * 16-slot one, 8 more fit beside them, all 11 arrive in order; a shrink
 * below what is posted is EINVAL, one above it works.
 */
static void t_resize(void)
{
	struct ibv_srq *srq = srq_new(4);
	struct ibv_srq_attr attr = {};
	struct ep a = {}, b = {};
	bool ok;

	ep_srq = srq;
	ok = ktap_expect(dev.device_cap_flags & IBV_DEVICE_SRQ_RESIZE,
			 "IBV_DEVICE_SRQ_RESIZE not reported") &&
	     ktap_expect(srq, "create_srq: %s", strerror(errno)) &&
	     pair_open(&a, &b, 64) && srq_post(srq, 0, 4) &&
	     recv_in_order(&a, &b, 0, 1);
	attr.max_wr = NSLOTS;
	ok = ok && ktap_expect(!ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR),
			       "grow: %s", strerror(errno)) &&
	     ktap_expect(!ibv_query_srq(srq, &attr) && attr.max_wr >= NSLOTS,
			 "query: max_wr %u", attr.max_wr) &&
	     srq_post(srq, 4, 8) && recv_in_order(&a, &b, 1, 12);
	attr.max_wr = 4;
	ok = ok && srq_post(srq, 12, 6) &&
	     ktap_expect(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) == EINVAL,
			 "a shrink below the 6 posted was taken") &&
	     recv_in_order(&a, &b, 12, 14) &&
	     ktap_expect(!ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR),
			 "shrink: %s", strerror(errno)) &&
	     ktap_expect(!ibv_query_srq(srq, &attr) && attr.max_wr == 4,
			 "query: max_wr %u", attr.max_wr) &&
	     recv_in_order(&a, &b, 14, 18);
	ep_srq = NULL;
	pair_close(&a, &b);
	if (srq)
		ibv_destroy_srq(srq);
	ktap_result(ok, "a resized SRQ keeps its posted WQEs in order, grows and shrinks");
}

/*
 * b1 errors: the last-WQE event, and the SRQ's WQEs stay for b2 (a QP in
 * ERR flushes its own work, not the SRQ's).
 */
static void t_qp_error(void)
{
	struct ep a1 = {}, b1 = {}, a2 = {}, b2 = {};
	struct ibv_srq *srq = srq_new(NSLOTS);
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	bool ok;

	ep_srq = srq;
	ok = ktap_expect(srq, "create_srq: %s", strerror(errno)) &&
	     pair_open(&a1, &b1, 64) && pair_open(&a2, &b2, 64) &&
	     srq_post(srq, 0, 2) &&
	     ktap_expect(!ibv_modify_qp(b1.qp, &attr, IBV_QP_STATE),
			 "modify to ERR") &&
	     async_event(IBV_EVENT_QP_LAST_WQE_REACHED, b1.qp, NULL) &&
	     send_one(&a2, 30) && recv_one(&b2, 30) &&
	     send_one(&a2, 31) && recv_one(&b2, 31);
	ep_srq = NULL;
	pair_close(&a1, &b1);
	pair_close(&a2, &b2);
	if (srq)
		ibv_destroy_srq(srq);
	ktap_result(ok, "a QP of an SRQ in ERR raises LAST_WQE_REACHED, the SRQ's WQEs stay");
}

int main(int argc, char **argv)
{
	if (!loop_open(argc, argv, 5) || ibv_query_device(ctx, &dev))
		return KSFT_FAIL;
	buf = aligned_alloc(4096, SLOT * (NSLOTS + 1));
	if (!buf)
		return KSFT_FAIL;
	mr = ibv_reg_mr(pd, buf, SLOT * (NSLOTS + 1), IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		ktap_print("reg_mr: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_shared();
	t_limit();
	t_refused();
	t_resize();
	t_qp_error();
	return ktap_finish();
}
