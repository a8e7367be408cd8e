/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connected RC QP pairs on one device (loopback) and the checks the tests
 * that use them share: polling with a deadline, async events, patterns.
 * The including program sets ctx, pd, gid and gid_index up first.
 */
#ifndef SRDMA_LOOP_QP_H
#define SRDMA_LOOP_QP_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "pattern.h"
#include "verbs_util.h"

#ifndef LOOP_WAIT_MS
#define LOOP_WAIT_MS	10000	/* for one completion */
#endif

struct ep {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
/* Connection attributes; a test may change them before connecting. */
static uint8_t retry_cnt = 7, rnr_retry = 7, ack_timeout = 14;
static int qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		       IBV_ACCESS_REMOTE_ATOMIC;
/* Set: the QPs ep_open() makes take their receives from this SRQ. */
static struct ibv_srq *ep_srq;
/* Set: ep_open() makes extended QPs with these ibv_wr_* builders. */
static uint64_t ep_send_ops;

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static inline int ep_open(struct ep *e, int cqe)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 32, .max_recv_sge = 32 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     (ep_send_ops ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0),
		.pd = pd,
		.send_ops_flags = ep_send_ops,
	};

	e->cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (!e->cq)
		return errno;
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	init.srq = ep_srq;
	e->qp = ibv_create_qp_ex(ctx, &init);
	return e->qp ? 0 : errno;
}

static inline void ep_close(struct ep *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	memset(e, 0, sizeof(*e));
}

static inline void pair_close(struct ep *a, struct ep *b)
{
	ep_close(a);
	ep_close(b);
}

/* RESET -> INIT -> RTR -> RTS, connected to QP @qpn at @dgid. */
static inline int ep_connect_to(struct ep *e, uint32_t qpn,
				const union ibv_gid *dgid, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = qp_access,
	};
	int ret;

	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	return qp_rtr_rts(e->qp, qpn, dgid, gid_index, mtu, ack_timeout,
			  retry_cnt, rnr_retry);
}

/* ... to @peer on this device. */
static inline int ep_connect(struct ep *e, const struct ep *peer)
{
	return ep_connect_to(e, peer->qp->qp_num, &gid, IBV_MTU_4096);
}

static inline bool pair_open(struct ep *a, struct ep *b, int cqe)
{
	int ret = ep_open(a, cqe);

	if (!ret)
		ret = ep_open(b, 64);
	if (!ret)
		ret = ep_connect(a, b);
	if (!ret)
		ret = ep_connect(b, a);
	return ktap_expect(!ret, "set up a connected QP pair: %s",
			   strerror(ret));
}

/* Wait for one completion; false on timeout or a poll error. */
static inline bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	uint64_t end = now_ms() + LOOP_WAIT_MS;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return ktap_expect(n == 1, "poll_cq: %d", n);
	} while (now_ms() < end);
	return ktap_expect(false, "no completion in %d ms", LOOP_WAIT_MS);
}

static inline bool wc_ok(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	return poll_one(cq, &wc) &&
	       ktap_expect(wc.wr_id == wr_id && wc.status == st,
			   "completion wr_id %llu status %s, expected %llu %s",
			   (unsigned long long)wc.wr_id,
			   ibv_wc_status_str(wc.status),
			   (unsigned long long)wr_id, ibv_wc_status_str(st));
}

/* Wait up to 10 s for @type on @qp (or @cq); other events are skipped. */
static inline bool async_event(enum ibv_event_type type, struct ibv_qp *qp,
			struct ibv_cq *cq)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool got = false;

	while (!got && poll(&pfd, 1, 10000) == 1) {
		if (ibv_get_async_event(ctx, &ev))
			break;
		got = ev.event_type == type &&
		      (qp ? ev.element.qp == qp : ev.element.cq == cq);
		if (!got)
			ktap_print("other event: %s",
				   ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	return ktap_expect(got, "no %s", ibv_event_type_str(type));
}

static inline int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &init) ? -1 : (int)a.qp_state;
}

/*
 * Run @fn in a child process with its own context and PD on our device,
 * which exits with what @fn returns, holding whatever @fn left behind.
 * Return: the child exited 0.
 */
static inline bool in_child(int (*fn)(struct ibv_context *c, struct ibv_pd *p))
{
	int status = -1;
	pid_t pid = fork();

	if (!pid) {
		struct ibv_context *c = open_by_name(ibv_get_device_name(
						     ctx->device));
		struct ibv_pd *p = c ? ibv_alloc_pd(c) : NULL;

		_exit(p ? fn(c, p) : 100);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       WIFEXITED(status) && !WEXITSTATUS(status);
}

/*
 * The start of a loopback test program: "usage: PROG IBDEV [GID_INDEX]",
 * the TAP plan, then ctx, gid and pd. Return: false after saying why.
 */
static inline bool loop_open(int argc, char **argv, int plan)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s IBDEV [GID_INDEX]\n", argv[0]);
		return false;
	}
	gid_index = argc > 2 ? atoi(argv[2]) : 1;
	ktap_plan(plan);
	ctx = open_by_name(argv[1]);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		ktap_print("cannot open %s GID %d", argv[1], gid_index);
		return false;
	}
	pd = ibv_alloc_pd(ctx);
	return ktap_expect(pd, "alloc_pd: %s", strerror(errno));
}

#endif /* SRDMA_LOOP_QP_H */
