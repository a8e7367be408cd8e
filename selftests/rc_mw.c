// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows on one device (loopback): type 1 bound with
 * ibv_bind_mw(), type 2 with a bind WQE; remote access inside the window
 * only, closed by a rebind, a local invalidate, a SEND with invalidate,
 * deallocation or the MR's deregistration; a type 2 window serves only
 * the QP it was bound through; and the binds that are refused.
 *
 * usage: rc_mw IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"

#define BUF_SIZE	16384
#define WIN_OFF		4096	/* the window: [WIN_OFF, WIN_OFF + WIN_LEN) */
#define WIN_LEN		4096
#define MSG		512

static uint8_t *src, *dst;
static struct ibv_mr *src_mr, *dst_mr;	/* dst_mr allows binding */
static const int win_access = IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ;

static struct ibv_mw_bind_info win_info(struct ibv_mr *mr)
{
	return (struct ibv_mw_bind_info) {
		.mr = mr, .addr = (uintptr_t)dst + WIN_OFF,
		.length = WIN_LEN, .mw_access_flags = win_access,
	};
}

/* Bind type 2 window @mw on @e's QP; its new key in *@rkey. */
static bool bind2(struct ep *e, struct ibv_mw *mw, uint32_t *rkey,
		  enum ibv_wc_status want)
{
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey),
			     .bind_info = win_info(dst_mr) },
	}, *bad;

	*rkey = wr.bind_mw.rkey;
	return ktap_expect(!ibv_post_send(e->qp, &wr, &bad), "post bind") &&
	       wc_ok(e->cq, 1, want);
}

/* One RDMA @op of MSG bytes from @e at @off of dst, under @rkey. */
static bool rdma(struct ep *e, enum ibv_wr_opcode op, uint32_t rkey,
		 uint32_t off, enum ibv_wc_status want)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src, .length = MSG, .lkey = src_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst + off, .rkey = rkey },
	}, *bad;

	return ktap_expect(!ibv_post_send(e->qp, &wr, &bad), "post") &&
	       wc_ok(e->cq, 2, want);
}

static bool write_ok(struct ep *e, uint32_t rkey, uint32_t off)
{
	fill(src, MSG, off);
	return rdma(e, IBV_WR_RDMA_WRITE, rkey, off, IBV_WC_SUCCESS) &&
	       same(dst + off, src, MSG);
}

/* A write that must be refused, leaving dst as it was. */
static bool write_refused(struct ep *e, uint32_t rkey, uint32_t off)
{
	memset(dst + off, 0x5a, MSG);
	fill(src, MSG, 77);
	return rdma(e, IBV_WR_RDMA_WRITE, rkey, off, IBV_WC_REM_ACCESS_ERR) &&
	       ktap_expect(dst[off] == 0x5a && dst[off + MSG - 1] == 0x5a,
			   "a refused write changed memory");
}

static void t_type1(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.wr_id = 3, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = win_info(dst_mr),
	};
	struct ep a = {}, b = {}, c = {}, d = {};
	uint32_t old = mw ? mw->rkey : 0;
	bool ok;

	ok = ktap_expect(mw, "alloc_mw: %s", strerror(errno)) &&
	     pair_open(&a, &b, 64) &&
	     ktap_expect(!ibv_bind_mw(b.qp, mw, &bind), "bind_mw") &&
	     wc_ok(b.cq, 3, IBV_WC_SUCCESS) &&
	     ktap_expect(mw->rkey != old, "the bind kept the key") &&
	     write_ok(&a, mw->rkey, WIN_OFF) &&
	     write_ok(&a, mw->rkey, WIN_OFF + WIN_LEN - MSG) &&
	     write_refused(&a, mw->rkey, WIN_OFF + WIN_LEN - MSG + 1);
	ktap_result(ok, "type 1: remote writes land inside the window, one past its end is refused");

	/* A zero-length rebind closes it: the key moves, nothing is open. */
	old = mw ? mw->rkey : 0;
	bind.bind_info.length = 0;
	ok = ok && pair_open(&c, &d, 64) &&
	     ktap_expect(!ibv_bind_mw(d.qp, mw, &bind), "rebind") &&
	     wc_ok(d.cq, 3, IBV_WC_SUCCESS) &&
	     write_refused(&c, old, WIN_OFF);
	ktap_result(ok, "type 1: after a zero-length rebind the old key is refused");
	pair_close(&a, &b);
	pair_close(&c, &d);
	if (mw)
		ibv_dealloc_mw(mw);
}

/* Type 2 closed by @how: 0 local invalidate, 1 SEND with invalidate. */
static void t_type2_invalidate(int how)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ep a = {}, b = {}, c = {}, d = {};
	struct ibv_send_wr wr = { .wr_id = 4, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_recv_wr rwr = { .wr_id = 5 }, *rbad;
	struct ibv_wc wc;
	uint32_t rkey = 0;
	bool ok;

	ok = ktap_expect(mw, "alloc_mw: %s", strerror(errno)) &&
	     pair_open(&a, &b, 64) && bind2(&b, mw, &rkey, IBV_WC_SUCCESS) &&
	     rdma(&a, IBV_WR_RDMA_READ, rkey, WIN_OFF, IBV_WC_SUCCESS) &&
	     write_ok(&a, rkey, WIN_OFF);
	if (ok && !how) {
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.invalidate_rkey = rkey;
		ok = ktap_expect(!ibv_post_send(b.qp, &wr, &bad), "LOCAL_INV") &&
		     wc_ok(b.cq, 4, IBV_WC_SUCCESS);
	} else if (ok) {
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.invalidate_rkey = rkey;
		ok = ktap_expect(!ibv_post_recv(b.qp, &rwr, &rbad), "recv") &&
		     ktap_expect(!ibv_post_send(a.qp, &wr, &bad), "SEND_INV") &&
		     wc_ok(a.cq, 4, IBV_WC_SUCCESS) && poll_one(b.cq, &wc) &&
		     ktap_expect(wc.status == IBV_WC_SUCCESS &&
				 (wc.wc_flags & IBV_WC_WITH_INV) &&
				 wc.invalidated_rkey == rkey,
				 "recv: %s, flags %#x, rkey %#x (sent %#x)",
				 ibv_wc_status_str(wc.status), wc.wc_flags,
				 wc.invalidated_rkey, rkey);
	}
	ok = ok && write_refused(&a, rkey, WIN_OFF);
	/* Invalidated, it can be bound again, on another QP. */
	ok = ok && pair_open(&c, &d, 64) && bind2(&d, mw, &rkey, IBV_WC_SUCCESS) &&
	     write_ok(&c, rkey, WIN_OFF);
	ktap_result(ok, how ? "type 2: SEND with invalidate closes the window, it binds again" :
			      "type 2: LOCAL_INV closes the window, it binds again");
	pair_close(&a, &b);
	pair_close(&c, &d);
	if (mw)
		ibv_dealloc_mw(mw);
}

/* Type 2 serves only the QP it was bound through; twice is an error. */
static void t_type2_qp(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ep a = {}, b = {}, c = {}, d = {};
	uint32_t rkey = 0, again;
	bool ok;

	ok = ktap_expect(mw, "alloc_mw: %s", strerror(errno)) &&
	     pair_open(&a, &b, 64) && pair_open(&c, &d, 64) &&
	     bind2(&b, mw, &rkey, IBV_WC_SUCCESS) &&
	     write_refused(&c, rkey, WIN_OFF) &&
	     bind2(&b, mw, &again, IBV_WC_MW_BIND_ERR);
	ktap_result(ok, "type 2: another QP is refused, a second bind fails with MW_BIND_ERR");
	pair_close(&a, &b);
	pair_close(&c, &d);
	if (mw)
		ibv_dealloc_mw(mw);
}

/* Deallocating the window, or deregistering its MR, closes it. */
static void t_gone(void)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, dst, BUF_SIZE,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ep a = {}, b = {}, c = {}, d = {};
	uint32_t rkey = 0, rkey2 = 0;
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	bool ok;

	ok = ktap_expect(mr && mw && mw2, "reg_mr/alloc_mw: %s",
			 strerror(errno)) &&
	     pair_open(&a, &b, 64) && bind2(&b, mw, &rkey, IBV_WC_SUCCESS);
	if (ok) {
		/* mw2 opens the second MR, which then goes away. */
		wr.bind_mw.mw = mw2;
		wr.bind_mw.rkey = rkey2 = ibv_inc_rkey(mw2->rkey);
		wr.bind_mw.bind_info = win_info(mr);
		ok = ktap_expect(!ibv_post_send(b.qp, &wr, &bad), "bind") &&
		     wc_ok(b.cq, 1, IBV_WC_SUCCESS) &&
		     ktap_expect(!ibv_dereg_mr(mr), "dereg_mr: %s",
				 strerror(errno));
		mr = NULL;
	}
	ok = ok && ktap_expect(!ibv_dealloc_mw(mw), "dealloc_mw");
	mw = NULL;
	ok = ok && write_refused(&a, rkey, WIN_OFF) && pair_open(&c, &d, 64);
	ktap_result(ok, "a deallocated window refuses access");
	pair_close(&a, &b);
	ok = ok && write_refused(&c, rkey2, WIN_OFF);
	ktap_result(ok, "a window whose MR was deregistered refuses access");
	pair_close(&c, &d);
	if (mr)
		ibv_dereg_mr(mr);
	if (mw)
		ibv_dealloc_mw(mw);
	if (mw2)
		ibv_dealloc_mw(mw2);
}

/* Binds that are refused: through the wrong verb, or on a plain MR. */
static void t_refused(void)
{
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw *bad_type = ibv_alloc_mw(pd, 3);
	struct ibv_mw_bind bind = { .wr_id = 3, .bind_info = win_info(dst_mr) };
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ep a = {}, b = {};
	bool ok;

	ok = ktap_expect(mw1 && mw2, "alloc_mw: %s", strerror(errno)) &&
	     ktap_expect(!bad_type, "a type 3 window was allocated") &&
	     pair_open(&a, &b, 64);
	if (ok) {
		wr.bind_mw.mw = mw1;
		wr.bind_mw.rkey = ibv_inc_rkey(mw1->rkey);
		wr.bind_mw.bind_info = win_info(dst_mr);
		ok = ktap_expect(ibv_post_send(b.qp, &wr, &bad) == EINVAL,
				 "type 1 through post_send was taken") &&
		     ktap_expect(ibv_bind_mw(b.qp, mw2, &bind) == EINVAL,
				 "type 2 through ibv_bind_mw was taken");
		/* src_mr has no MW_BIND access. */
		wr.bind_mw.mw = mw2;
		wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
		wr.bind_mw.bind_info.mr = src_mr;
		wr.bind_mw.bind_info.addr = (uintptr_t)src;
		ok = ok && ktap_expect(!ibv_post_send(b.qp, &wr, &bad), "post") &&
		     wc_ok(b.cq, 1, IBV_WC_MW_BIND_ERR);
	}
	ktap_result(ok, "type 3, a bind through the wrong verb and one on an MR without MW_BIND are refused");
	pair_close(&a, &b);
	if (bad_type)
		ibv_dealloc_mw(bad_type);
	if (mw1)
		ibv_dealloc_mw(mw1);
	if (mw2)
		ibv_dealloc_mw(mw2);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dev;

	if (!loop_open(argc, argv, 8) || ibv_query_device(ctx, &dev))
		return KSFT_FAIL;
	if (!(dev.device_cap_flags & IBV_DEVICE_MEM_WINDOW) || !dev.max_mw) {
		ktap_print("%s reports no memory windows", argv[1]);
		return KSFT_FAIL;
	}
	src = aligned_alloc(4096, BUF_SIZE);
	dst = aligned_alloc(4096, BUF_SIZE);
	if (!src || !dst)
		return KSFT_FAIL;
	src_mr = ibv_reg_mr(pd, src, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	dst_mr = ibv_reg_mr(pd, dst, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_MW_BIND);
	if (!src_mr || !dst_mr) {
		ktap_print("reg_mr: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_type1();
	t_type2_invalidate(0);
	t_type2_invalidate(1);
	t_type2_qp();
	t_gone();
	t_refused();
	return ktap_finish();
}
