// SPDX-License-Identifier: GPL-2.0
/*
 * XRC on one device (loopback): an XRC initiator QP reaches SRQs of an
 * XRC domain through one target QP. A message lands on the SRQ its WQE
 * names and completes on that SRQ's CQ; every RC operation works; an SRQ
 * number that does not exist or belongs to another domain, or memory of
 * another PD than the SRQ's, is refused with the right error and nothing
 * delivered; the verbs refuse what XRC QPs cannot do.
 *
 * usage: xrc_verbs IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"

#define BUF_LEN		65536
#define SRC_OFF		0		/* what initiators send */
#define DST_OFF		16384		/* receive slots, write targets */
#define SLOT		8192
#define MSG_LEN		5000		/* several packets at MTU 1024 */

static uint8_t *buf;
static struct ibv_mr *mr;

/* One XRC domain with an SRQ (and its CQ), a target and an initiator. */
struct xrc {
	struct ibv_xrcd *xrcd;
	struct ibv_cq *scq;		/* the initiator's */
	struct ibv_cq *rcq[2];		/* one per SRQ */
	struct ibv_srq *srq[2];
	uint32_t srqn[2];
	struct ibv_qp *ini;
	struct ibv_qp *tgt;
};

static struct ibv_xrcd *xrcd_open(void)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xsrq_new(struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

static int to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* The initiator and target of @x, connected to each other. */
static int xrc_qps(struct xrc *x)
{
	struct ibv_qp_init_attr_ex ini = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = x->scq,
		.cap = { .max_send_wr = 32, .max_send_sge = 2 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp_init_attr_ex tgt = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = x->xrcd,
	};
	int ret;

	x->ini = ibv_create_qp_ex(ctx, &ini);
	if (!x->ini)
		return errno;
	x->tgt = ibv_create_qp_ex(ctx, &tgt);
	if (!x->tgt)
		return errno;
	ret = to_init(x->ini, 0);
	if (!ret)
		ret = to_init(x->tgt, IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!ret)
		ret = qp_rtr_rts(x->ini, x->tgt->qp_num, &gid, gid_index,
				 IBV_MTU_1024, 14, 7, 7);
	if (!ret)
		ret = qp_rtr_rts(x->tgt, x->ini->qp_num, &gid, gid_index,
				 IBV_MTU_1024, 14, 7, 7);
	return ret;
}

static void xrc_close(struct xrc *x)
{
	int i;

	if (x->ini)
		ibv_destroy_qp(x->ini);
	if (x->tgt)
		ibv_destroy_qp(x->tgt);
	for (i = 0; i < 2; i++) {
		if (x->srq[i])
			ibv_destroy_srq(x->srq[i]);
		if (x->rcq[i])
			ibv_destroy_cq(x->rcq[i]);
	}
	if (x->scq)
		ibv_destroy_cq(x->scq);
	if (x->xrcd)
		ibv_close_xrcd(x->xrcd);
	memset(x, 0, sizeof(*x));
}

/* A domain with two SRQs (each with its own CQ) and a connected pair. */
static bool xrc_open(struct xrc *x)
{
	int i, ret = 0;

	memset(x, 0, sizeof(*x));
	x->xrcd = xrcd_open();
	if (!x->xrcd)
		return ktap_expect(false, "open_xrcd: %s", strerror(errno));
	x->scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	for (i = 0; i < 2 && !ret; i++) {
		x->rcq[i] = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		x->srq[i] = x->rcq[i] ? xsrq_new(x->xrcd, x->rcq[i]) : NULL;
		ret = x->srq[i] ? ibv_get_srq_num(x->srq[i], &x->srqn[i]) :
				  errno;
	}
	if (!ret)
		ret = x->scq ? xrc_qps(x) : errno;
	return ktap_expect(!ret, "set up XRC objects: %s", strerror(ret)) &&
	       ktap_expect(x->srqn[0] != x->srqn[1], "SRQ numbers %u, %u",
			   x->srqn[0], x->srqn[1]);
}

static bool post_srq(struct ibv_srq *srq, uint64_t wr_id, void *addr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = SLOT, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ktap_expect(!ibv_post_srq_recv(srq, &wr, &bad),
			   "post_srq_recv");
}

/* Post one signaled WR of @op from the initiator to SRQ number @srqn. */
static bool post(struct xrc *x, enum ibv_wr_opcode op, uint32_t srqn,
		 uint64_t wr_id, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + SRC_OFF, .length = len,
		.lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
		wr.wr.atomic.swap = 77;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htobe32(0x1234 + (uint32_t)wr_id);
	return ktap_expect(!ibv_post_send(x->ini, &wr, &bad), "post_send %d",
			   op);
}

/* The receive on @cq: of @len bytes, by the target QP, WR @wr_id. */
static bool recv_ok(struct xrc *x, struct ibv_cq *cq, uint64_t wr_id,
		    enum ibv_wc_opcode opcode, uint32_t len)
{
	struct ibv_wc wc;

	return poll_one(cq, &wc) &&
	       ktap_expect(wc.status == IBV_WC_SUCCESS &&
			   wc.opcode == opcode && wc.wr_id == wr_id &&
			   wc.byte_len == len && wc.qp_num == x->tgt->qp_num,
			   "recv %s op %d wr_id %llu, %u bytes, qp %#x",
			   ibv_wc_status_str(wc.status), wc.opcode,
			   (unsigned long long)wc.wr_id, wc.byte_len,
			   wc.qp_num);
}

static bool cq_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	return ktap_expect(ibv_poll_cq(cq, 1, &wc) == 0,
			   "a completion where none belongs");
}

/* SENDs land on the SRQ they name, completed on that SRQ's CQ. */
static void t_send(void)
{
	uint8_t *dst = buf + DST_OFF;
	struct xrc x;
	bool ok;
	int i;

	ok = xrc_open(&x) && post_srq(x.srq[0], 100, dst) &&
	     post_srq(x.srq[1], 200, dst + SLOT);
	for (i = 0; ok && i < 2; i++) {
		fill(buf + SRC_OFF, MSG_LEN, 40 + i);
		ok = post(&x, i ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			  x.srqn[i], i, MSG_LEN, 0, 0) &&
		     wc_ok(x.scq, i, IBV_WC_SUCCESS) &&
		     recv_ok(&x, x.rcq[i], 100 * (i + 1), IBV_WC_RECV,
			     MSG_LEN) &&
		     cq_empty(x.rcq[!i]) &&
		     same(dst + i * SLOT, buf + SRC_OFF, MSG_LEN);
	}
	xrc_close(&x);
	ktap_result(ok, "XRC SENDs land on the SRQ they name, completed on its CQ by the target QP");
}

/* WRITE, WRITE_WITH_IMM, READ and both atomics through the target. */
static void t_ops(void)
{
	uint8_t *dst = buf + DST_OFF;
	uint64_t *word = (uint64_t *)(buf + DST_OFF + 3 * SLOT);
	struct xrc x;
	bool ok;

	ok = xrc_open(&x);
	/* WRITE */
	fill(buf + SRC_OFF, MSG_LEN, 7);
	memset(dst, 0, MSG_LEN);
	ok = ok && post(&x, IBV_WR_RDMA_WRITE, x.srqn[0], 1, MSG_LEN,
			(uintptr_t)dst, mr->rkey) &&
	     wc_ok(x.scq, 1, IBV_WC_SUCCESS) &&
	     same(dst, buf + SRC_OFF, MSG_LEN) && cq_empty(x.rcq[0]);
	/* WRITE_WITH_IMM consumes a WQE of the named SRQ */
	fill(buf + SRC_OFF, MSG_LEN, 8);
	ok = ok && post_srq(x.srq[1], 300, dst + 2 * SLOT) &&
	     post(&x, IBV_WR_RDMA_WRITE_WITH_IMM, x.srqn[1], 2, MSG_LEN,
		  (uintptr_t)dst, mr->rkey) &&
	     wc_ok(x.scq, 2, IBV_WC_SUCCESS) &&
	     recv_ok(&x, x.rcq[1], 300, IBV_WC_RECV_RDMA_WITH_IMM, MSG_LEN) &&
	     same(dst, buf + SRC_OFF, MSG_LEN);
	/* READ back what a write put there */
	fill(dst + SLOT, MSG_LEN, 9);
	memset(buf + SRC_OFF, 0, MSG_LEN);
	ok = ok && post(&x, IBV_WR_RDMA_READ, x.srqn[0], 3, MSG_LEN,
			(uintptr_t)(dst + SLOT), mr->rkey) &&
	     wc_ok(x.scq, 3, IBV_WC_SUCCESS) &&
	     same(buf + SRC_OFF, dst + SLOT, MSG_LEN);
	/* FETCH_ADD 5, then CMP_SWAP 5 -> 77 on the old value + 5 */
	*word = 100;
	ok = ok && post(&x, IBV_WR_ATOMIC_FETCH_AND_ADD, x.srqn[0], 4, 8,
			(uintptr_t)word, mr->rkey) &&
	     wc_ok(x.scq, 4, IBV_WC_SUCCESS) &&
	     ktap_expect(*(uint64_t *)(buf + SRC_OFF) == 100 && *word == 105,
			 "fetch_add: got %llu, now %llu",
			 (unsigned long long)*(uint64_t *)(buf + SRC_OFF),
			 (unsigned long long)*word);
	*word = 5;
	ok = ok && post(&x, IBV_WR_ATOMIC_CMP_AND_SWP, x.srqn[0], 5, 8,
			(uintptr_t)word, mr->rkey) &&
	     wc_ok(x.scq, 5, IBV_WC_SUCCESS) &&
	     ktap_expect(*(uint64_t *)(buf + SRC_OFF) == 5 && *word == 77,
			 "cmp_swap: got %llu, now %llu",
			 (unsigned long long)*(uint64_t *)(buf + SRC_OFF),
			 (unsigned long long)*word);
	xrc_close(&x);
	ktap_result(ok, "XRC WRITE, WRITE_WITH_IMM, READ, FETCH_ADD and CMP_SWAP through the target QP");
}

/*
 * A request naming no SRQ of the target's domain (a number nobody has,
 * or an SRQ of another domain) is refused: REM_INV_REQ_ERR at the
 * initiator, nothing taken from or completed on any SRQ.
 */
static void t_bad_srq(void)
{
	uint8_t *dst = buf + DST_OFF;
	struct xrc x, other;
	bool ok;
	int i;

	ok = xrc_open(&other) && post_srq(other.srq[0], 900, dst);
	for (i = 0; ok && i < 2; i++) {
		uint32_t srqn = i ? other.srqn[0] : other.srqn[1] + 4096;

		ok = xrc_open(&x) && post_srq(x.srq[0], 500, dst + SLOT) &&
		     post(&x, IBV_WR_SEND, srqn, 10 + i, 64, 0, 0) &&
		     wc_ok(x.scq, 10 + i, IBV_WC_REM_INV_REQ_ERR) &&
		     cq_empty(x.rcq[0]) && cq_empty(other.rcq[0]);
		xrc_close(&x);
	}
	/* The other domain's WQE is still there for its own target. */
	fill(buf + SRC_OFF, 64, 3);
	ok = ok && post(&other, IBV_WR_SEND, other.srqn[0], 12, 64, 0, 0) &&
	     wc_ok(other.scq, 12, IBV_WC_SUCCESS) &&
	     recv_ok(&other, other.rcq[0], 900, IBV_WC_RECV, 64) &&
	     same(dst, buf + SRC_OFF, 64);
	xrc_close(&other);
	ktap_result(ok, "a request naming an unknown SRQ or one of another domain gets REM_INV_REQ_ERR, and takes no WQE");
}

/* Accesses are checked against the PD of the SRQ the request names. */
static void t_pd(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	uint8_t *dst = buf + DST_OFF + 4 * SLOT;
	struct ibv_mr *mr2 = NULL;
	struct xrc x;
	bool ok;

	ok = ktap_expect(pd2, "alloc_pd: %s", strerror(errno));
	if (ok)
		mr2 = ibv_reg_mr(pd2, dst, SLOT, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE);
	ok = ok && ktap_expect(mr2, "reg_mr: %s", strerror(errno));
	memset(dst, 0x5a, 64);
	fill(buf + SRC_OFF, 64, 1);
	ok = ok && xrc_open(&x) &&
	     post(&x, IBV_WR_RDMA_WRITE, x.srqn[0], 20, 64, (uintptr_t)dst,
		  mr2->rkey) &&
	     wc_ok(x.scq, 20, IBV_WC_REM_ACCESS_ERR);
	memset(buf + SRC_OFF, 0x5a, 64);
	ok = ok && same(dst, buf + SRC_OFF, 64);
	xrc_close(&x);
	if (mr2)
		ibv_dereg_mr(mr2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	ktap_result(ok, "an rkey of another PD than the named SRQ's gets REM_ACCESS_ERR and writes nothing");
}

/* What XRC objects cannot do is refused. */
static void t_refused(void)
{
	struct ibv_srq_init_attr basic = {
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	struct ibv_qp_init_attr_ex no_xrcd = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	uint32_t num;
	struct xrc x;
	bool ok;

	srq = ibv_create_srq(pd, &basic);
	ok = ktap_expect(srq, "create_srq: %s", strerror(errno)) &&
	     ktap_expect(ibv_get_srq_num(srq, &num) == EINVAL,
			 "get_srq_num of a basic SRQ");
	if (srq)
		ibv_destroy_srq(srq);
	qp = ibv_create_qp_ex(ctx, &no_xrcd);
	ok = ktap_expect(!qp && errno == EINVAL,
			 "an XRC_RECV QP without a domain: %s",
			 qp ? "created" : strerror(errno)) && ok;
	if (qp)
		ibv_destroy_qp(qp);
	ok = xrc_open(&x) &&
	     ktap_expect(ibv_post_send(x.tgt, &swr, &sbad),
			 "post_send on an XRC target QP was taken") &&
	     ktap_expect(ibv_post_recv(x.ini, &rwr, &rbad),
			 "post_recv on an XRC initiator QP was taken") && ok;
	xrc_close(&x);
	ktap_result(ok, "get_srq_num of a basic SRQ, a target without domain, posting what XRC QPs lack: refused");
}

/*
 * A target QP has no SQ: drained (SQD) and back to RTS, it still takes
 * requests. (The way back to RTS once ran the requester over the SQ
 * ring it does not have: a NULL dereference.)
 */
static void t_tgt_sqd(void)
{
	struct ibv_qp_attr sqd = { .qp_state = IBV_QPS_SQD };
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS };
	uint8_t *dst = buf + DST_OFF;
	struct xrc x;
	int ret = 0;
	bool ok;

	ok = xrc_open(&x);
	if (ok) {
		ret = ibv_modify_qp(x.tgt, &sqd, IBV_QP_STATE);
		if (!ret)
			ret = ibv_modify_qp(x.tgt, &rts, IBV_QP_STATE);
		ok = ktap_expect(!ret, "target RTS -> SQD -> RTS: %s",
				 strerror(ret));
	}
	fill(buf + SRC_OFF, MSG_LEN, 90);
	ok = ok && post_srq(x.srq[0], 300, dst) &&
	     post(&x, IBV_WR_SEND, x.srqn[0], 3, MSG_LEN, 0, 0) &&
	     wc_ok(x.scq, 3, IBV_WC_SUCCESS) &&
	     recv_ok(&x, x.rcq[0], 300, IBV_WC_RECV, MSG_LEN) &&
	     same(dst, buf + SRC_OFF, MSG_LEN);
	xrc_close(&x);
	ktap_result(ok, "an XRC target QP drained (SQD) and back in RTS takes SENDs");
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dev;

	if (!loop_open(argc, argv, 6) || ibv_query_device(ctx, &dev))
		return KSFT_FAIL;
	if (!(dev.device_cap_flags & IBV_DEVICE_XRC)) {
		ktap_print("the device does not report XRC");
		return KSFT_FAIL;
	}
	buf = aligned_alloc(4096, BUF_LEN);
	if (!buf)
		return KSFT_FAIL;
	mr = ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr) {
		ktap_print("reg_mr: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_send();
	t_ops();
	t_bad_srq();
	t_pd();
	t_refused();
	t_tgt_sqd();
	return ktap_finish();
}
