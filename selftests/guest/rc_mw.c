// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows on one device (loopback): type 1 bound with
 * ibv_bind_mw(), type 2 with a bind WQE; remote access inside the window
 * only, closed by a rebind, a local invalidate, a SEND with invalidate or
 * deallocation; a type 2 window serves only the QP it was bound through;
 * the binds that are refused; and a window pins its MR: it can be neither
 * deregistered nor changed while a window is bound to it, so a window's
 * key never opens memory registered later (read-only file pages above
 * all). Meant to run unprivileged.
 *
 * usage: rc_mw IBDEV GID_INDEX FILE   (FILE: readable, not writable by us)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"

#define BUF_SIZE	16384
#define WIN_OFF		4096	/* the window: [WIN_OFF, WIN_OFF + WIN_LEN) */
#define WIN_LEN		4096
#define MSG		512

static const char *ro_path;	/* a file we may read, not write */
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
	int err;
	bool ok;

	ok = ktap_expect(mr && mw && mw2, "reg_mr/alloc_mw: %s",
			 strerror(errno)) &&
	     pair_open(&a, &b, 64) && bind2(&b, mw, &rkey, IBV_WC_SUCCESS);
	if (ok) {
		/* mw2 opens the second MR, which must outlive the window. */
		wr.bind_mw.mw = mw2;
		wr.bind_mw.rkey = rkey2 = ibv_inc_rkey(mw2->rkey);
		wr.bind_mw.bind_info = win_info(mr);
		ok = ktap_expect(!ibv_post_send(b.qp, &wr, &bad), "bind") &&
		     wc_ok(b.cq, 1, IBV_WC_SUCCESS);
		err = ok ? ibv_dereg_mr(mr) : EBUSY;
		if (!err)
			mr = NULL;
		ok = ok && ktap_expect(err == EBUSY,
				       "dereg_mr of an MR with a bound window: %s",
				       err ? strerror(err) : "done");
	}
	ok = ok && ktap_expect(!ibv_dealloc_mw(mw), "dealloc_mw");
	mw = NULL;
	ok = ok && write_refused(&a, rkey, WIN_OFF) && pair_open(&c, &d, 64);
	ktap_result(ok, "a deallocated window refuses access");
	pair_close(&a, &b);
	/* Invalidated, mw2 lets its MR go; its key opens nothing. */
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = rkey2;
	ok = ok && ktap_expect(!ibv_post_send(d.qp, &wr, &bad), "local inv") &&
	     wc_ok(d.cq, 1, IBV_WC_SUCCESS) &&
	     ktap_expect(!ibv_dereg_mr(mr), "dereg_mr: %s", strerror(errno));
	if (ok)
		mr = NULL;
	ok = ok && write_refused(&c, rkey2, WIN_OFF);
	ktap_result(ok, "an MR with a bound window is not deregistered; once the window is invalidated it is, and the key opens nothing");
	pair_close(&c, &d);
	if (mr)
		ibv_dereg_mr(mr);
	if (mw)
		ibv_dealloc_mw(mw);
	if (mw2)
		ibv_dealloc_mw(mw2);
}

/* Is the file as it was? @want: its first bytes, read at the start. */
static bool file_unchanged(const uint8_t *want, size_t len)
{
	uint8_t now[BUF_SIZE];
	int fd = open(ro_path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : pread(fd, now, len, 0);

	if (fd >= 0)
		close(fd);
	return ktap_expect(n == (ssize_t)len, "read %s: %s", ro_path,
			   strerror(errno)) &&
	       ktap_expect(!memcmp(now, want, len), "%s was written", ro_path);
}

/*
 * The attack a window used to allow: bind a writable MR to a type 1
 * window, deregister the MR, register read-only file pages until an MR
 * gets the dead MR's key, then write through the window's key. The
 * deregistration must be refused (and if it were not, the write).
 */
static void t_pinned(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mr *mr = ibv_reg_mr(pd, dst, BUF_SIZE,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);
	struct ibv_mw_bind bind = {
		.wr_id = 3, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = win_info(mr),
	};
	uint8_t before[BUF_SIZE];
	int fd = open(ro_path, O_RDONLY);
	void *ro = fd < 0 ? MAP_FAILED :
		   mmap(NULL, BUF_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	struct ibv_mr *fmr = NULL;
	struct ep a = {}, b = {};
	uint32_t dead_key = mr ? mr->lkey : 0;
	int err = -1, i;
	bool ok;

	ok = ktap_expect(mw && mr, "alloc_mw/reg_mr: %s", strerror(errno)) &&
	     ktap_expect(ro != MAP_FAILED, "map %s: %s", ro_path,
			 strerror(errno)) &&
	     ktap_expect(pread(fd, before, BUF_SIZE, 0) == BUF_SIZE,
			 "read %s", ro_path) &&
	     ktap_expect(open(ro_path, O_RDWR) < 0 && errno == EACCES,
			 "%s is writable by this user", ro_path) &&
	     pair_open(&a, &b, 64) &&
	     ktap_expect(!ibv_bind_mw(b.qp, mw, &bind), "bind_mw") &&
	     wc_ok(b.cq, 3, IBV_WC_SUCCESS);
	if (ok) {
		err = ibv_dereg_mr(mr);
		ok = ktap_expect(err == EBUSY, "dereg_mr with a bound window: %s",
				 err ? strerror(err) : "done");
	}
	if (!err) {
		/* It went: try for its key on the file's pages. */
		mr = NULL;
		for (i = 0; i < 4096 && !fmr; i++) {
			fmr = ibv_reg_mr(pd, ro, BUF_SIZE,
					 IBV_ACCESS_REMOTE_READ);
			if (fmr && fmr->lkey != dead_key) {
				ibv_dereg_mr(fmr);
				fmr = NULL;
			}
		}
		if (fmr)
			ktap_print("a read-only MR got the dead MR's key");
	}
	/* Through the window: into the bound MR, or refused; never the file. */
	fill(src, MSG, 9);
	ok = ok && rdma(&a, IBV_WR_RDMA_WRITE, mw->rkey, WIN_OFF,
			IBV_WC_SUCCESS) && same(dst + WIN_OFF, src, MSG);
	ok = file_unchanged(before, BUF_SIZE) && ok;
	ktap_result(ok, "an MR with a bound window cannot be deregistered: its key never opens read-only pages registered later");

	/* Nor changed in place: the window was checked against it. */
	if (mr) {
		err = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				   0, IBV_ACCESS_MW_BIND);
		ok = ktap_expect(err, "rereg_mr dropped LOCAL_WRITE under a window") &&
		     write_ok(&a, mw->rkey, WIN_OFF);
	} else {
		ok = false;
	}
	ktap_result(ok, "an MR with a bound window cannot be re-registered");

	/* A zero-length bind unbinds a type 1 window: the MR may go. */
	bind.bind_info.length = 0;
	bind.bind_info.addr = 0;
	bind.bind_info.mr = NULL;
	ok = ok && ktap_expect(!ibv_bind_mw(b.qp, mw, &bind), "unbind") &&
	     wc_ok(b.cq, 3, IBV_WC_SUCCESS) &&
	     ktap_expect(!ibv_dereg_mr(mr), "dereg_mr after unbind: %s",
			 strerror(errno));
	if (ok)
		mr = NULL;
	ktap_result(ok, "a zero-length bind unbinds a type 1 window, and its MR can then be deregistered");
	pair_close(&a, &b);
	if (fmr)
		ibv_dereg_mr(fmr);
	if (mr)
		ibv_dereg_mr(mr);
	if (mw)
		ibv_dealloc_mw(mw);
	if (ro != MAP_FAILED)
		munmap(ro, BUF_SIZE);
	if (fd >= 0)
		close(fd);
}

/*
 * A process that exits with a window bound to an MR registered after the
 * window: the core destroys the MR first, which is refused until the
 * window is gone, and must then go on to free both (the VM harness fails
 * a run whose kernel log shows a warning).
 */
static void t_exit_bound(void)
{
	struct ep a = {}, b = {};
	int status = -1;
	pid_t pid = fork();

	if (!pid) {
		/* A context of its own, closed when the child exits. */
		struct ibv_mw *mw = NULL;
		struct ibv_mr *mr = NULL;
		struct ibv_mw_bind bind = {
			.wr_id = 3, .send_flags = IBV_SEND_SIGNALED,
		};

		ctx = ibv_open_device(ctx->device);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		if (pd) {
			mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
			mr = ibv_reg_mr(pd, dst, BUF_SIZE,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_MW_BIND);
		}
		bind.bind_info = win_info(mr);
		_exit(mw && mr && pair_open(&a, &b, 64) &&
		      !ibv_bind_mw(b.qp, mw, &bind) &&
		      wc_ok(b.cq, 3, IBV_WC_SUCCESS) ? 0 : 1);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	ktap_result(pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status),
		    "a process exits with a window bound to a later MR");
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

	if (argc < 4) {
		fprintf(stderr, "usage: %s IBDEV GID_INDEX FILE\n", argv[0]);
		return KSFT_FAIL;
	}
	ro_path = argv[3];
	if (!loop_open(3, argv, 12) || ibv_query_device(ctx, &dev))
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
	t_pinned();
	t_exit_bound();
	t_refused();
	return ktap_finish();
}
