// SPDX-License-Identifier: GPL-2.0
/*
 * RC at its limits, on one device (loopback): a CQ overrun, a message of
 * the port's max_msg_sz, a message one byte longer, large WRITE and READ,
 * the SQE state, which an RC QP can never be moved into, retries and RNR
 * retries running out (and what "rdma resource" shows meanwhile), and the
 * asynchronous event of a responder error.
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
#define LOOP_WAIT_MS	120000		/* a 2 GiB loopback under TCG */

#include "loop_qp.h"

static struct ibv_mr *src_mr, *dst_mr;
static uint8_t *src, *dst;
static uint32_t max_msg;

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
 * IBV_WC_RETRY_EXC_ERR, no sooner and not much later. The QP measured a
 * round trip first (eight WRITEs answered), so tail loss probes go out
 * between the timeouts: they must neither use a retry nor delay the error.
 */
static void t_retry_exceeded(void)
{
	/* 4.096 us * 2^timeout, (retry_cnt + 1) times */
	uint64_t budget = 4096ull * (1u << 14) / 1000000 * 4, t0, ms = 0;
	struct ep a = {}, b = {};
	int64_t probes = -1;
	bool ok = false;
	int i;

	retry_cnt = 3;
	if (!pair_open(&a, &b, 64))
		goto out;
	for (i = 0; i < 8; i++)
		if (!post_one(&a, IBV_WR_RDMA_WRITE, dst_mr->rkey) ||
		    !wc_ok(a.cq, 7, IBV_WC_SUCCESS))
			goto out;
	probes = hw_counter(ctx, "tlp_probes");
	ibv_destroy_qp(b.qp);
	b.qp = NULL;
	t0 = now_ms();
	ok = post_one(&a, IBV_WR_RDMA_WRITE, dst_mr->rkey) &&
	     wc_ok(a.cq, 7, IBV_WC_RETRY_EXC_ERR);
	ms = now_ms() - t0;
	probes = hw_counter(ctx, "tlp_probes") - probes;
	ktap_print("RETRY_EXC_ERR after %llu ms, budget %llu ms, %lld probes",
		   (unsigned long long)ms, (unsigned long long)budget,
		   (long long)probes);
	ok = ok && ktap_expect(ms >= budget * 9 / 10 && ms <= 2 * budget + 2000,
			       "not within the budget") &&
	     ktap_expect(probes > 0, "no tail loss probe") &&
	     ktap_expect(qp_state(a.qp) == IBV_QPS_ERR, "state %d",
			 qp_state(a.qp));
out:
	retry_cnt = 7;
	ktap_result(ok, "peer QP gone: IBV_WC_RETRY_EXC_ERR after retry_cnt timeouts, probes between");
	ep_close(&a);
	ep_close(&b);
}

/* The line of "rdma resource" res_read() read last. */
static char res_line[1024];

/*
 * The line "rdma -dd resource show WHAT FILTER" prints for one object,
 * into res_line (empty if none).
 */
static void res_read(const char *what, const char *filter)
{
	char cmd[256], *line = NULL;
	size_t len = 0;
	FILE *f;

	res_line[0] = 0;
	snprintf(cmd, sizeof(cmd), "rdma -dd resource show %s %s", what, filter);
	f = popen(cmd, "r");
	if (!f)
		return;
	while (getline(&line, &len, f) > 0)
		if (strstr(line, " drv_"))
			snprintf(res_line, sizeof(res_line), "%s", line);
	free(line);
	pclose(f);
}

/* The driver attribute NAME (printed drv_NAME) in res_line, or -1. */
static long long res_val(const char *name)
{
	char key[64], *p;

	snprintf(key, sizeof(key), " drv_%s ", name);
	p = strstr(res_line, key);
	return p ? strtoll(p + strlen(key), NULL, 0) : -1;
}

/* The completions not polled of this process's one CQ on the device. */
static long long cq_unpolled(const char *filter)
{
	res_read("cq", filter);
	return res_val("unpolled");
}

/*
 * A QP whose peer is gone, as "rdma resource" shows it: while it retries,
 * its one WQE open and sent, a PSN unacknowledged, the ACK timer armed
 * and a retry spent; once the retries ran out, its CQ holding the error
 * completion not polled yet.
 */
static void t_stalled_state(void)
{
	/* 4.096 us * 2^19 = 2.1 s, retry_cnt + 1 = 8 times */
	struct ep a = {}, b = {};
	char qp[96], cq[64];
	bool ok = false;
	uint64_t t0;

	ack_timeout = 19;
	if (!pair_open(&a, &b, 64))
		goto out;
	snprintf(qp, sizeof(qp), "link %s/1 lqpn %u",
		 ibv_get_device_name(ctx->device), a.qp->qp_num);
	/* a's CQ is then this process's one CQ. */
	snprintf(cq, sizeof(cq), "dev %s pid %d",
		 ibv_get_device_name(ctx->device), getpid());
	ep_close(&b);
	if (!post_one(&a, IBV_WR_RDMA_WRITE, dst_mr->rkey))
		goto out;
	sleep(3);
	res_read("qp", qp);
	ok = ktap_expect(res_val("sq_open_wqes") == 1 &&
			 res_val("sq_unsent_wqes") == 0 &&
			 res_val("una_psn") != res_val("next_psn") &&
			 res_val("ack_timer") == 1 &&
			 res_val("retry_left") >= 0 && res_val("retry_left") < 7,
			 "expected 1 open WQE, 0 unsent, a PSN unacknowledged, the ACK timer armed, a retry spent: %s",
			 res_line);
	/* The rest of the 8 timeouts (17 s in all), then the completion. */
	for (t0 = now_ms(); cq_unpolled(cq) < 1 && now_ms() - t0 < 60000; )
		usleep(500 * 1000);
	ok = ok && ktap_expect(res_val("unpolled") == 1,
			       "unpolled completions: %s", res_line) &&
	     wc_ok(a.cq, 7, IBV_WC_RETRY_EXC_ERR) &&
	     ktap_expect(qp_state(a.qp) == IBV_QPS_ERR, "state %d",
			 qp_state(a.qp)) &&
	     ktap_expect(cq_unpolled(cq) == 0,
			 "unpolled completions after the poll: %s", res_line);
out:
	ack_timeout = 14;
	ktap_result(ok, "peer QP gone: rdma resource shows the open WQE, the ACK timer, the retries, then the unpolled completion");
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
	ktap_plan(10);
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
	t_stalled_state();
	t_rnr_exceeded();
	return ktap_finish();
}
