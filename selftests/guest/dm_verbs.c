// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory on one device: ibv_alloc_dm and its limits, the copies to
 * and from it (aligned words, inside the allocation), zero-based MRs over
 * it (ibv_reg_dm_mr), and RDMA WRITE, READ, SEND and atomics into and out
 * of it over an RC pair, with the errors a responder owes; an ATOMIC
 * WRITE into a DM MR whose memory is not aligned as its addresses are.
 *
 * usage: dm_verbs IBDEV [GID_INDEX]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "loop_qp.h"

#define DM_SIZE		(64 * 1024 + 100)	/* not a whole page */
#define MSG		(20 * 1024)
#define DM_ACCESS	(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

static size_t max_dm;
static uint8_t host[2 * MSG], want[MSG];
static struct ibv_mr *host_mr;

static struct ibv_dm *dm_alloc(size_t len, uint32_t log_align)
{
	struct ibv_alloc_dm_attr attr = { .length = len,
					  .log_align_req = log_align };

	return ibv_alloc_dm(ctx, &attr);
}

static void t_caps(void)
{
	struct ibv_device_attr_ex ex = {};

	if (!ibv_query_device_ex(ctx, NULL, &ex))
		max_dm = ex.max_dm_size;
	ktap_result(max_dm >= DM_SIZE, "query_device_ex reports max_dm_size");
	ktap_print("max_dm_size %zu", max_dm);
}

static void t_alloc_limits(void)
{
	struct ibv_alloc_dm_attr bad_mask = { .length = 64, .comp_mask = 1 };
	struct ibv_dm *dm;
	bool ok;

	dm = dm_alloc(max_dm, 0);
	ok = ktap_expect(dm, "alloc of max_dm_size: %s", strerror(errno)) &&
	     ktap_expect(!ibv_free_dm(dm), "free_dm");
	dm = dm_alloc(max_dm + 1, 0);
	ok = ok && ktap_expect(!dm && errno == EINVAL,
			       "alloc past max_dm_size: %s", strerror(errno));
	dm = dm_alloc(0, 0);
	ok = ok && ktap_expect(!dm && errno == EINVAL, "alloc of 0 bytes: %s",
			       strerror(errno));
	dm = dm_alloc(64, 20);
	ok = ok && ktap_expect(!dm && errno == EINVAL,
			       "alloc aligned to 1 MiB: %s", strerror(errno));
	dm = ibv_alloc_dm(ctx, &bad_mask);
	ok = ok && ktap_expect(!dm && errno == EINVAL,
			       "alloc with an unknown comp_mask: %s",
			       strerror(errno));
	ktap_result(ok, "alloc_dm refuses a size past max_dm_size, 0 bytes, an alignment past a page and an unknown comp_mask");
}

/* Fresh memory reads as zeros, and what is copied in reads back. */
static void t_copy(struct ibv_dm *dm)
{
	static uint8_t zero[DM_SIZE], got[DM_SIZE];
	bool ok;

	fill(want, MSG, 7);
	ok = ktap_expect(!ibv_memcpy_from_dm(got, dm, 0, DM_SIZE),
			 "memcpy_from_dm") &&
	     ktap_expect(!memcmp(got, zero, DM_SIZE), "new DM not zeroed") &&
	     ktap_expect(!ibv_memcpy_to_dm(dm, DM_SIZE - MSG, want, MSG),
			 "memcpy_to_dm") &&
	     ktap_expect(!ibv_memcpy_from_dm(got, dm, DM_SIZE - MSG, MSG),
			 "memcpy_from_dm") &&
	     same(got, want, MSG);
	ktap_result(ok, "memcpy to and from device memory, up to its last byte");
}

static void t_copy_errors(struct ibv_dm *dm)
{
	static const struct { uint64_t off; size_t len; } bad[] = {
		{ 3, 4 }, { 4, 3 }, { DM_SIZE, 4 }, { 0, DM_SIZE + 4 },
		{ DM_SIZE - 4, 8 }, { UINT64_MAX - 3, 8 },
	};
	uint8_t buf[DM_SIZE + 8];
	bool ok = true;
	size_t i;

	for (i = 0; ok && i < sizeof(bad) / sizeof(bad[0]); i++)
		ok = ktap_expect(ibv_memcpy_to_dm(dm, bad[i].off, buf,
						  bad[i].len) == EINVAL &&
				 ibv_memcpy_from_dm(buf, dm, bad[i].off,
						    bad[i].len) == EINVAL,
				 "offset %llu length %zu not refused",
				 (unsigned long long)bad[i].off, bad[i].len);
	ktap_result(ok, "memcpy with an unaligned offset or length, or past the end: EINVAL");
}

static void t_reg_errors(struct ibv_dm *dm)
{
	struct ibv_mr *mr;
	bool ok;

	mr = ibv_reg_dm_mr(pd, dm, 0, 64, DM_ACCESS & ~IBV_ACCESS_ZERO_BASED);
	ok = ktap_expect(!mr && errno == EINVAL, "not zero-based: %s",
			 strerror(errno));
	mr = ibv_reg_dm_mr(pd, dm, 0, DM_SIZE + 4, DM_ACCESS);
	ok = ok && ktap_expect(!mr && errno == EINVAL, "past the DM: %s",
			       strerror(errno));
	mr = ibv_reg_dm_mr(pd, dm, DM_SIZE - 4, 8, DM_ACCESS);
	ok = ok && ktap_expect(!mr && errno == EINVAL, "straddling the end: %s",
			       strerror(errno));
	mr = ibv_reg_dm_mr(pd, dm, 0, 64, DM_ACCESS | IBV_ACCESS_ON_DEMAND);
	ok = ok && ktap_expect(!mr, "on-demand device memory registered");
	mr = ibv_reg_dm_mr(pd, dm, 8, 0, DM_ACCESS);
	ok = ok && ktap_expect(mr, "an empty MR: %s", strerror(errno)) &&
	     ktap_expect(!ibv_dereg_mr(mr), "dereg");
	ktap_result(ok, "reg_dm_mr: refused unless zero-based and inside the DM; empty MR allowed");
}

/* The MR pins the DM: free_dm fails while it is registered. */
static void t_free_busy(void)
{
	struct ibv_dm *dm = dm_alloc(4096, 0);
	struct ibv_mr *mr = dm ? ibv_reg_dm_mr(pd, dm, 0, 4096, DM_ACCESS) :
			    NULL;
	bool ok;

	ok = ktap_expect(mr, "alloc and reg: %s", strerror(errno)) &&
	     ktap_expect(ibv_free_dm(dm) == EBUSY, "free_dm with an MR") &&
	     ktap_expect(!ibv_memcpy_to_dm(dm, 0, want, 64),
			 "DM unusable after a refused free") &&
	     ktap_expect(!ibv_dereg_mr(mr), "dereg") &&
	     ktap_expect(!ibv_free_dm(dm), "free_dm");
	ktap_result(ok, "free_dm is refused (EBUSY) while an MR is registered over it");
}

static bool post(struct ep *e, enum ibv_wr_opcode op, uint64_t wr_id,
		 void *buf, uint32_t lkey, uint32_t len, uint64_t raddr,
		 uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	}
	return ktap_expect(!ibv_post_send(e->qp, &wr, &bad), "post_send");
}

/*
 * The DM MR covers [off, off + MSG + 8) of the DM: its address 0 is the
 * DM's byte off (zero-based), so RDMA lands where memcpy_from_dm reads.
 */
static void t_rdma(struct ep *a, struct ep *b, struct ibv_dm *dm)
{
	const uint64_t off = 4096 + 12;
	struct ibv_mr *mr = ibv_reg_dm_mr(pd, dm, off, MSG + 8, DM_ACCESS);
	uint8_t got[MSG];
	uint64_t word = 0, old = 0;
	bool ok;

	if (!ktap_expect(mr, "reg_dm_mr: %s", strerror(errno))) {
		ktap_result(false, "reg_dm_mr: zero-based MR, keys");
		ktap_result(false, "RDMA WRITE into device memory");
		ktap_result(false, "RDMA READ from device memory");
		ktap_result(false, "SEND from device memory, local SGE");
		ktap_result(false, "atomic fetch-and-add on device memory");
		ktap_result(false, "RDMA past the DM MR: remote access error");
		return;
	}
	ktap_result(mr->addr == NULL && mr->length == MSG + 8 &&
		    mr->lkey == mr->rkey, "reg_dm_mr: zero-based MR, keys");

	fill(want, MSG, 11);
	memcpy(host, want, MSG);
	ok = post(a, IBV_WR_RDMA_WRITE, 1, host, host_mr->lkey, MSG, 0,
		  mr->rkey) && wc_ok(a->cq, 1, IBV_WC_SUCCESS) &&
	     ktap_expect(!ibv_memcpy_from_dm(got, dm, off, MSG),
			 "memcpy_from_dm") && same(got, want, MSG);
	ktap_result(ok, "RDMA WRITE into device memory lands at the DM MR's offset");

	fill(want, MSG, 23);
	ok = ktap_expect(!ibv_memcpy_to_dm(dm, off, want, MSG),
			 "memcpy_to_dm") &&
	     post(a, IBV_WR_RDMA_READ, 2, host + MSG, host_mr->lkey, MSG, 0,
		  mr->rkey) && wc_ok(a->cq, 2, IBV_WC_SUCCESS) &&
	     same(host + MSG, want, MSG);
	ktap_result(ok, "RDMA READ from device memory");

	/* Device memory as a local SGE: SEND out of it into host memory. */
	memset(host, 0, MSG);
	{
		struct ibv_sge rsge = { .addr = (uintptr_t)host, .length = MSG,
					.lkey = host_mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = &rsge,
					   .num_sge = 1 }, *rbad;

		ok = ktap_expect(!ibv_post_recv(b->qp, &rwr, &rbad),
				 "post_recv") &&
		     post(a, IBV_WR_SEND, 4, NULL, mr->lkey, MSG, 0, 0) &&
		     wc_ok(a->cq, 4, IBV_WC_SUCCESS) &&
		     wc_ok(b->cq, 3, IBV_WC_SUCCESS) && same(host, want, MSG);
	}
	ktap_result(ok, "SEND from device memory: the DM MR as a local SGE");

	word = 37;
	ok = ktap_expect(!ibv_memcpy_to_dm(dm, off + MSG, &word, 8),
			 "memcpy_to_dm") &&
	     post(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 5, host, host_mr->lkey, 8,
		  MSG, mr->rkey) && wc_ok(a->cq, 5, IBV_WC_SUCCESS);
	memcpy(&old, host, 8);
	ok = ok && ktap_expect(!ibv_memcpy_from_dm(&word, dm, off + MSG, 8),
			       "memcpy_from_dm") &&
	     ktap_expect(word == 42 && old == 37,
			 "DM word %llu, returned %llu: expected 42, 37",
			 (unsigned long long)word, (unsigned long long)old);
	ktap_result(ok, "atomic fetch-and-add on device memory");

	ok = post(a, IBV_WR_RDMA_WRITE, 6, host, host_mr->lkey, 16, MSG,
		  mr->rkey) && wc_ok(a->cq, 6, IBV_WC_REM_ACCESS_ERR);
	ktap_result(ok, "RDMA WRITE past the DM MR: remote access error");
	ibv_dereg_mr(mr);
}

/*
 * A DM MR at an offset that is not 8-aligned: its addresses are, its
 * memory is not. Alignment is checked on the address, and the 8 bytes of
 * an ATOMIC WRITE still land.
 */
static void t_atomic_write(struct ep *a, struct ep *b, struct ibv_dm *dm)
{
	const uint64_t v = 0x1122334455667788ull;
	struct ibv_mr *mr = ibv_reg_dm_mr(pd, dm, 4, 64, DM_ACCESS);
	struct ibv_qp_ex *qpx;
	uint64_t got = 0;
	bool ok = ktap_expect(mr, "reg_dm_mr: %s", strerror(errno));

	/* the last test of t_rdma() left the pair in ERR */
	pair_close(a, b);
	ok = pair_open(a, b, 64) && ok;
	if (ok) {
		qpx = ibv_qp_to_qp_ex(a->qp);
		ibv_wr_start(qpx);
		qpx->wr_id = 30;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(qpx, mr->rkey, 8, &v);
		ok = ktap_expect(!ibv_wr_complete(qpx), "wr_complete") &&
		     wc_ok(a->cq, 30, IBV_WC_SUCCESS) &&
		     ktap_expect(!ibv_memcpy_from_dm(&got, dm, 12, 8),
				 "memcpy_from_dm") &&
		     ktap_expect(got == v, "placed %#llx, expected %#llx",
				 (unsigned long long)got,
				 (unsigned long long)v);
	}
	if (mr)
		ibv_dereg_mr(mr);
	ktap_result(ok, "ATOMIC WRITE into a DM MR at an unaligned offset lands");
}

/* A process that exits holding DMs and MRs over them leaves nothing. */
static int exit_holding(struct ibv_context *c, struct ibv_pd *p)
{
	struct ibv_alloc_dm_attr attr = { .length = 8192 };
	struct ibv_dm *dm = ibv_alloc_dm(c, &attr);

	return !(dm && ibv_reg_dm_mr(p, dm, 0, 8192, DM_ACCESS));
}

static void t_exit_holding(void)
{
	ktap_result(in_child(exit_holding),
		    "a process may exit holding a DM and an MR over it");
}

/* The device's budget: SRDMA's 256 DMs, then ENOMEM; all come back. */
static void t_budget(void)
{
	struct ibv_dm *dms[300];
	int n = 0, err = 0, i;
	bool ok;

	while (n < 300) {
		dms[n] = dm_alloc(4096, 0);
		if (!dms[n]) {
			err = errno;
			break;
		}
		n++;
	}
	ok = ktap_expect(n > 0 && n < 300 && err == ENOMEM,
			 "%d DMs, then %s", n, strerror(err));
	for (i = 0; i < n; i++)
		ok = ktap_expect(!ibv_free_dm(dms[i]), "free_dm") && ok;
	ktap_print("%d DMs of a page each", n);
	ok = ok && ktap_expect((dms[0] = dm_alloc(4096, 0)) &&
			       !ibv_free_dm(dms[0]), "alloc after the frees");
	ktap_result(ok, "the device's DM budget ends in ENOMEM and comes back after the frees");
}

int main(int argc, char **argv)
{
	struct ep a = {}, b = {};
	struct ibv_dm *dm;

	ep_send_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
		      IBV_QP_EX_WITH_RDMA_READ |
		      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		      IBV_QP_EX_WITH_ATOMIC_WRITE;
	if (!loop_open(argc, argv, 16))
		return KSFT_FAIL;
	t_caps();
	if (!max_dm) {
		ktap_print("no device memory");
		return ktap_finish();
	}
	t_alloc_limits();
	dm = dm_alloc(DM_SIZE, 0);
	host_mr = ibv_reg_mr(pd, host, sizeof(host), IBV_ACCESS_LOCAL_WRITE);
	if (!ktap_expect(dm && host_mr, "alloc_dm, reg_mr: %s",
			 strerror(errno)) || !pair_open(&a, &b, 64))
		return KSFT_FAIL;
	t_copy(dm);
	t_copy_errors(dm);
	t_reg_errors(dm);
	t_free_busy();
	t_rdma(&a, &b, dm);
	t_atomic_write(&a, &b, dm);
	t_exit_holding();
	t_budget();

	pair_close(&a, &b);
	ktap_result(!ibv_free_dm(dm) && !ibv_dereg_mr(host_mr) &&
		    !ibv_dealloc_pd(pd) && !ibv_close_device(ctx),
		    "everything is destroyed");
	return ktap_finish();
}
