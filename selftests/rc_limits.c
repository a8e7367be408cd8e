// SPDX-License-Identifier: GPL-2.0
/*
 * RC at its limits, on one device (loopback): a CQ overrun, a message of
 * the port's max_msg_sz, a message one byte longer, large WRITE and READ,
 * the SQE state, which an RC QP can never be moved into, retries and RNR
 * retries running out, and the asynchronous event of a responder error.
 *
 * usage: rc_limits IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"

#define CHUNK		(64u << 20)	/* one SGE of a max-size message */
#define BUF_SIZE	(CHUNK + 4096)	/* room for one byte more */
#define BIG		(16u << 20)	/* the large WRITE and READ */
#define WAIT_MS		120000		/* a 2 GiB loopback under TCG */

struct ep {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *src_mr, *dst_mr;
static uint8_t *src, *dst;
static union ibv_gid gid;
static int gid_index;
static uint32_t max_msg;
/* Connection attributes; the retry tests lower them. */
static uint8_t retry_cnt = 7, rnr_retry = 7, ack_timeout = 14;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static int ep_open(struct ep *e, int cqe)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 32, .max_recv_sge = 32 },
	};

	e->cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (!e->cq)
		return errno;
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = ibv_create_qp(pd, &init);
	return e->qp ? 0 : errno;
}

static void ep_close(struct ep *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	memset(e, 0, sizeof(*e));
}

/* RESET -> INIT -> RTR -> RTS, connected to @peer on this device. */
static int ep_connect(struct ep *e, const struct ep *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int ret;

	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = ack_timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 16;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static bool pair_open(struct ep *a, struct ep *b, int cqe)
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
static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	uint64_t end = now_ms() + WAIT_MS;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return ktap_expect(n == 1, "poll_cq: %d", n);
	} while (now_ms() < end);
	return ktap_expect(false, "no completion in %d ms", WAIT_MS);
}

static bool wc_ok(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	return poll_one(cq, &wc) &&
	       ktap_expect(wc.wr_id == wr_id && wc.status == st,
			   "completion wr_id %llu status %s, expected %llu %s",
			   (unsigned long long)wc.wr_id,
			   ibv_wc_status_str(wc.status),
			   (unsigned long long)wr_id, ibv_wc_status_str(st));
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 2654435761u) >> 13) ^ seed;
}

static bool same(const uint8_t *got, const uint8_t *want, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (got[i] != want[i])
			return ktap_expect(false, "byte %zu: %#x, expected %#x",
					   i, got[i], want[i]);
	return true;
}

/* Wait up to 10 s for @type on @qp (or @cq); other events are skipped. */
static bool async_event(enum ibv_event_type type, struct ibv_qp *qp,
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

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &init) ? -1 : (int)a.qp_state;
}

/* A CQ that overflows raises CQ_ERR and keeps the CQEs it holds intact. */
static void t_cq_overrun(void)
{
	struct ep a = {}, b = {};
	struct ibv_wc wc[64];
	bool ok = false;
	int i, n, ret, posted;

	if (!pair_open(&a, &b, 4))
		goto out;
	posted = a.cq->cqe + 4;
	for (i = 0; i < posted; i++) {
		struct ibv_send_wr wr = {
			.wr_id = i, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)dst,
				     .rkey = dst_mr->rkey },
		}, *bad;

		ret = ibv_post_send(a.qp, &wr, &bad);
		if (!ktap_expect(!ret, "post WRITE %d: %s", i, strerror(ret)))
			goto out;
	}
	if (!async_event(IBV_EVENT_CQ_ERR, NULL, a.cq))
		goto out;
	n = ibv_poll_cq(a.cq, 64, wc);
	ok = ktap_expect(n == a.cq->cqe, "the full CQ gave %d CQEs, expected %d",
			 n, a.cq->cqe);
	for (i = 0; ok && i < n; i++)
		ok = ktap_expect(wc[i].wr_id == (uint64_t)i &&
				 wc[i].status == IBV_WC_SUCCESS,
				 "CQE %d: wr_id %llu %s", i,
				 (unsigned long long)wc[i].wr_id,
				 ibv_wc_status_str(wc[i].status));
out:
	ktap_result(ok, "a CQ overrun raises IBV_EVENT_CQ_ERR, the CQEs in it stay intact");
	ep_close(&a);
	ep_close(&b);
}

/* 32 SGEs over one buffer: a message of up to 32 * CHUNK + 32 bytes. */
static void sges(struct ibv_sge *s, struct ibv_mr *mr, uint64_t total)
{
	int i;

	for (i = 0; i < 32; i++) {
		s[i].addr = (uintptr_t)mr->addr;
		s[i].length = total / 32 + (i < (int)(total % 32));
		s[i].lkey = mr->lkey;
	}
}

/*
 * A SEND of max_msg_sz bytes: 32 send SGEs read the source buffer over
 * and over, 32 receive SGEs write the destination over and over.
 */
static void t_max_msg(void)
{
	struct ibv_sge ssge[32], rsge[32];
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = rsge, .num_sge = 32 };
	struct ibv_send_wr swr = {
		.wr_id = 2, .opcode = IBV_WR_SEND, .sg_list = ssge,
		.num_sge = 32, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *sbad;
	struct ibv_recv_wr *rbad;
	struct ep a = {}, b = {};
	struct ibv_wc wc;
	uint64_t t0;
	bool ok = false;

	if ((uint64_t)max_msg > 32ull * CHUNK) {
		ktap_skip("a SEND of max_msg_sz bytes arrives whole",
			  "max_msg_sz is above 32 x 64 MiB");
		return;
	}
	if (!pair_open(&a, &b, 64))
		goto out;
	fill(src, CHUNK, 0x5a);
	memset(dst, 0, CHUNK);
	sges(ssge, src_mr, max_msg);
	sges(rsge, dst_mr, max_msg);
	if (!ktap_expect(!ibv_post_recv(b.qp, &rwr, &rbad) &&
			 !ibv_post_send(a.qp, &swr, &sbad), "post: %s",
			 strerror(errno)))
		goto out;
	t0 = now_ms();
	ok = wc_ok(a.cq, 2, IBV_WC_SUCCESS) && poll_one(b.cq, &wc) &&
	     ktap_expect(wc.status == IBV_WC_SUCCESS && wc.byte_len == max_msg,
			 "receive: %s, byte_len %u, expected %u",
			 ibv_wc_status_str(wc.status), wc.byte_len, max_msg) &&
	     same(dst, src, max_msg / 32);
	ktap_print("%u bytes in %llu ms", max_msg,
		   (unsigned long long)(now_ms() - t0));
out:
	ktap_result(ok, "a SEND of max_msg_sz bytes arrives whole");
	ep_close(&a);
	ep_close(&b);
}

/* One byte more than max_msg_sz: a local length error, nothing sent. */
static void t_over_max_msg(void)
{
	struct ibv_sge ssge[32];
	struct ibv_send_wr swr = {
		.wr_id = 3, .opcode = IBV_WR_RDMA_WRITE, .sg_list = ssge,
		.num_sge = 32, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst,
			     .rkey = dst_mr->rkey },
	};
	struct ibv_send_wr *bad;
	struct ep a = {}, b = {};
	bool ok = false;

	if ((uint64_t)max_msg + 1 > 32ull * BUF_SIZE) {
		ktap_skip("max_msg_sz + 1 bytes: IBV_WC_LOC_LEN_ERR",
			  "max_msg_sz is too large for this test");
		return;
	}
	if (!pair_open(&a, &b, 64))
		goto out;
	sges(ssge, src_mr, (uint64_t)max_msg + 1);
	ok = ktap_expect(!ibv_post_send(a.qp, &swr, &bad), "post: %s",
			 strerror(errno)) &&
	     wc_ok(a.cq, 3, IBV_WC_LOC_LEN_ERR);
out:
	ktap_result(ok, "max_msg_sz + 1 bytes: IBV_WC_LOC_LEN_ERR");
	ep_close(&a);
	ep_close(&b);
}

/*
 * A 16 MiB WRITE or READ, byte exact, at an odd offset. The remote side is
 * always the dst buffer: a WRITE goes src -> dst, a READ dst -> src.
 */
static void t_big(enum ibv_wr_opcode op, const char *name)
{
	bool read = op == IBV_WR_RDMA_READ;
	uint8_t *from = (read ? dst : src) + 3;
	uint8_t *to = (read ? src : dst) + 3;
	struct ibv_sge sge = {
		.addr = (uintptr_t)src + 3, .length = BIG, .lkey = src_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 4, .opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst + 3,
			     .rkey = dst_mr->rkey },
	}, *bad;
	struct ep a = {}, b = {};
	bool ok = false;

	if (!pair_open(&a, &b, 64))
		goto out;
	fill(from, BIG, op);
	memset(to - 3, 0, BIG + 8);
	ok = ktap_expect(!ibv_post_send(a.qp, &wr, &bad), "post: %s",
			 strerror(errno)) &&
	     wc_ok(a.cq, 4, IBV_WC_SUCCESS) && same(to, from, BIG) &&
	     ktap_expect(!to[-1] && !to[BIG], "bytes written outside");
out:
	ktap_result(ok, name);
	ep_close(&a);
	ep_close(&b);
}

/* SQE is entered only by a send error of UD/UC QPs, never by modify. */
static void t_no_sqe(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQE };
	struct ibv_qp_init_attr init;
	struct ep a = {}, b = {};
	bool ok = false;
	int ret;

	if (!pair_open(&a, &b, 64))
		goto out;
	ret = ibv_modify_qp(a.qp, &attr, IBV_QP_STATE);
	ok = ktap_expect(ret == EINVAL, "RTS->SQE: %s", strerror(ret)) &&
	     ktap_expect(!ibv_query_qp(a.qp, &attr, IBV_QP_STATE, &init) &&
			 attr.qp_state == IBV_QPS_RTS, "state now %d",
			 attr.qp_state);
out:
	ktap_result(ok, "RTS->SQE is refused with EINVAL, the QP stays in RTS");
	ep_close(&a);
	ep_close(&b);
}

/* Post one signaled WR of @op and 8 bytes on @e. */
static bool post_one(struct ep *e, enum ibv_wr_opcode op, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = 8, .lkey = src_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = op, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst, .rkey = rkey },
	}, *bad;

	return ktap_expect(!ibv_post_send(e->qp, &wr, &bad), "post: %s",
			   strerror(errno));
}

/*
 * A WRITE with a foreign rkey: the requester completes with a remote
 * access error, the responder's QP enters ERR with IBV_EVENT_QP_ACCESS_ERR.
 */
static void t_access_event(void)
{
	struct ep a = {}, b = {};
	bool ok;

	ok = pair_open(&a, &b, 64) &&
	     post_one(&a, IBV_WR_RDMA_WRITE, dst_mr->rkey ^ 0x80) &&
	     wc_ok(a.cq, 7, IBV_WC_REM_ACCESS_ERR) &&
	     async_event(IBV_EVENT_QP_ACCESS_ERR, b.qp, NULL) &&
	     ktap_expect(qp_state(b.qp) == IBV_QPS_ERR &&
			 qp_state(a.qp) == IBV_QPS_ERR, "states %d %d",
			 qp_state(a.qp), qp_state(b.qp));
	ktap_result(ok, "a bad rkey: REM_ACCESS_ERR, the responder gets IBV_EVENT_QP_ACCESS_ERR");
	ep_close(&a);
	ep_close(&b);
}

/*
 * The peer QP is gone: retry_cnt retries of the local ACK timeout, then
 * IBV_WC_RETRY_EXC_ERR, no sooner and not much later.
 */
static void t_retry_exceeded(void)
{
	/* 4.096 us * 2^timeout, (retry_cnt + 1) times */
	uint64_t budget = 4096ull * (1u << 14) / 1000000 * 4, t0, ms = 0;
	struct ep a = {}, b = {};
	bool ok = false;

	retry_cnt = 3;
	if (!pair_open(&a, &b, 64))
		goto out;
	ibv_destroy_qp(b.qp);
	b.qp = NULL;
	t0 = now_ms();
	ok = post_one(&a, IBV_WR_RDMA_WRITE, dst_mr->rkey) &&
	     wc_ok(a.cq, 7, IBV_WC_RETRY_EXC_ERR);
	ms = now_ms() - t0;
	ktap_print("RETRY_EXC_ERR after %llu ms, budget %llu ms",
		   (unsigned long long)ms, (unsigned long long)budget);
	ok = ok && ktap_expect(ms >= budget * 9 / 10 && ms <= 2 * budget + 2000,
			       "not within the budget") &&
	     ktap_expect(qp_state(a.qp) == IBV_QPS_ERR, "state %d",
			 qp_state(a.qp));
out:
	retry_cnt = 7;
	ktap_result(ok, "peer QP gone: IBV_WC_RETRY_EXC_ERR after retry_cnt timeouts");
	ep_close(&a);
	ep_close(&b);
}

/* No receive ever posted: rnr_retry RNR NAKs, then RNR_RETRY_EXC_ERR. */
static void t_rnr_exceeded(void)
{
	struct ep a = {}, b = {};
	bool ok;

	rnr_retry = 2;
	ok = pair_open(&a, &b, 64) && post_one(&a, IBV_WR_SEND, 0) &&
	     wc_ok(a.cq, 7, IBV_WC_RNR_RETRY_EXC_ERR) &&
	     ktap_expect(qp_state(a.qp) == IBV_QPS_ERR, "state %d",
			 qp_state(a.qp));
	rnr_retry = 7;
	ktap_result(ok, "no receive posted: IBV_WC_RNR_RETRY_EXC_ERR after rnr_retry retries");
	ep_close(&a);
	ep_close(&b);
}

int main(int argc, char **argv)
{
	struct ibv_port_attr port;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s IBDEV [GID_INDEX]\n", argv[0]);
		return KSFT_FAIL;
	}
	gid_index = argc > 2 ? atoi(argv[2]) : 1;
	ktap_plan(9);
	ctx = open_by_name(argv[1]);
	if (!ctx || ibv_query_port(ctx, 1, &port) ||
	    ibv_query_gid(ctx, 1, gid_index, &gid)) {
		ktap_print("cannot open %s port 1 GID %d", argv[1], gid_index);
		return KSFT_FAIL;
	}
	max_msg = port.max_msg_sz;
	pd = ibv_alloc_pd(ctx);
	src = aligned_alloc(4096, BUF_SIZE);
	dst = aligned_alloc(4096, BUF_SIZE);
	if (!pd || !src || !dst)
		return KSFT_FAIL;
	src_mr = ibv_reg_mr(pd, src, BUF_SIZE, access);
	dst_mr = ibv_reg_mr(pd, dst, BUF_SIZE, access);
	if (!src_mr || !dst_mr) {
		ktap_print("reg_mr: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_cq_overrun();
	t_big(IBV_WR_RDMA_WRITE, "a 16 MiB RDMA WRITE, byte exact");
	t_big(IBV_WR_RDMA_READ, "a 16 MiB RDMA READ, byte exact");
	t_max_msg();
	t_over_max_msg();
	t_no_sqe();
	t_access_event();
	t_retry_exceeded();
	t_rnr_exceeded();
	return ktap_finish();
}
