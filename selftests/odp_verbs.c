// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging on one device (loopback), over memory the process
 * never touched or took back after registration: each operation faults
 * the pages it needs in (the odp_faults counter grows) and moves the
 * right bytes, on the responder side (SEND, WRITE, READ, atomics) and on
 * the requester side (send source, read target); an MR follows the
 * process's mapping when it changes (MADV_DONTNEED, a new mapping at the
 * same address) or swaps them out; memory unmapped for good fails with a
 * protection error;
 * a prefetch (ibv_advise_mr) maps ahead so the transfer faults nothing.
 *
 * usage: odp_verbs IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"

#define LEN		(256 * 1024)	/* per ODP region */
#define MSG		(64 * 1024)	/* many pages, many packets */

static struct ep a, b;		/* a sends/requests, b responds */
static struct ibv_mr *mr_a, *mr_b;
static uint8_t *mem_a, *mem_b;
static uint8_t want[MSG];

static uint8_t *odp_mmap(void)
{
	void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static struct ibv_mr *odp_reg(uint8_t *p)
{
	return ibv_reg_mr(pd, p, LEN, IBV_ACCESS_ON_DEMAND |
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
}

/* The core caches counters for 10 ms: read them after that. */
static int64_t faults(void)
{
	usleep(20000);
	return hw_counter(ctx, "odp_faults");
}

static bool post(struct ep *e, enum ibv_wr_opcode op, uint64_t id,
		 void *laddr, uint32_t lkey, uint32_t len, void *raddr,
		 uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)laddr, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 3;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ktap_expect(!ibv_post_send(e->qp, &wr, &bad), "post_send");
}

static bool post_recv(struct ep *e, void *addr, uint32_t lkey, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ktap_expect(!ibv_post_recv(e->qp, &wr, &bad), "post_recv");
}

/* The operation took page faults: the counter grew since @before. */
static bool faulted(int64_t before)
{
	int64_t now = faults();

	return ktap_expect(now > before, "odp_faults %lld -> %lld",
			   (long long)before, (long long)now);
}

/* SEND from untouched memory into untouched memory: both sides fault. */
static void t_send(void)
{
	int64_t f = faults();
	struct ibv_wc wc;
	bool ok;

	/* The source reads as zeros until written: compare with that. */
	memset(want, 0, MSG);
	ok = post_recv(&b, mem_b, mr_b->lkey, MSG) &&
	     post(&a, IBV_WR_SEND, 1, mem_a, mr_a->lkey, MSG, NULL, 0) &&
	     wc_ok(a.cq, 1, IBV_WC_SUCCESS) && poll_one(b.cq, &wc) &&
	     ktap_expect(wc.status == IBV_WC_SUCCESS && wc.byte_len == MSG,
			 "recv %s, %u bytes", ibv_wc_status_str(wc.status),
			 wc.byte_len) &&
	     same(mem_b, want, MSG) && faulted(f);
	ktap_result(ok, "SEND between untouched ODP buffers faults both sides in");
}

/* WRITE and READ into pages that are not there yet. */
static void t_write_read(void)
{
	uint8_t *src = mem_a + LEN / 2, *dst = mem_b + LEN / 2;
	int64_t f;
	bool ok;

	fill(src, MSG, 11);
	f = faults();
	ok = post(&a, IBV_WR_RDMA_WRITE, 2, src, mr_a->lkey, MSG, dst,
		  mr_b->rkey) &&
	     wc_ok(a.cq, 2, IBV_WC_SUCCESS) && same(dst, src, MSG) &&
	     faulted(f);
	/* READ it back into memory the process gave up meanwhile. */
	ok = ok && ktap_expect(!madvise(mem_a, MSG, MADV_DONTNEED),
			       "madvise");
	f = faults();
	ok = ok && post(&a, IBV_WR_RDMA_READ, 3, mem_a, mr_a->lkey, MSG, dst,
			mr_b->rkey) &&
	     wc_ok(a.cq, 3, IBV_WC_SUCCESS) && same(mem_a, src, MSG) &&
	     faulted(f);
	ktap_result(ok, "WRITE to absent pages, READ into pages dropped after registration (MADV_DONTNEED)");
}

/* An atomic on a page that went away and came back as zeros. */
static void t_atomic(void)
{
	uint64_t *word = (uint64_t *)(mem_b + LEN - 4096);
	uint64_t *res = (uint64_t *)(mem_a + LEN - 4096);
	int64_t f;
	bool ok;

	*word = 40;
	ok = ktap_expect(!madvise(word, 4096, MADV_DONTNEED), "madvise");
	f = faults();
	ok = ok && post(&a, IBV_WR_ATOMIC_FETCH_AND_ADD, 4, res, mr_a->lkey,
			8, word, mr_b->rkey) &&
	     wc_ok(a.cq, 4, IBV_WC_SUCCESS) &&
	     ktap_expect(*res == 0 && *word == 3,
			 "fetch_add: got %llu, now %llu (want 0, 3)",
			 (unsigned long long)*res, (unsigned long long)*word) &&
	     faulted(f);
	ktap_result(ok, "FETCH_ADD on a page dropped after registration works on its new (zero) page");
}

/* The MR follows a new mapping at the same address. */
static void t_remap(void)
{
	uint8_t *dst = mem_b + 8192;
	void *p;
	bool ok;

	p = mmap(mem_b, 8 * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ok = ktap_expect(p == mem_b, "mmap MAP_FIXED");
	fill(dst, 4096, 21);		/* new memory, new bytes */
	memset(mem_a, 0, 4096);
	ok = ok && post(&a, IBV_WR_RDMA_READ, 5, mem_a, mr_a->lkey, 4096,
			dst, mr_b->rkey) &&
	     wc_ok(a.cq, 5, IBV_WC_SUCCESS) && same(mem_a, dst, 4096);
	ktap_result(ok, "after a new mapping at the same address, a READ returns the new memory");
}

/* Is the page at @p in memory (not swapped out)? */
static bool resident(void *p)
{
	unsigned char vec = 0;

	return !mincore(p, 4096, &vec) && (vec & 1);
}

/*
 * Pages swapped out after a transfer mapped them come back for the next
 * one. Needs swap: odp_verbs.sh sets ODP_SWAP=1 once it has some.
 */
static void t_swap(void)
{
	uint8_t *src = mem_b + LEN / 2 + MSG;	/* untouched so far */
	uint8_t *dst = mem_a + LEN / 2 + MSG;
	int64_t f;
	bool ok;
	int i;

	if (!getenv("ODP_SWAP")) {
		ktap_skip("a READ from ODP pages swapped out after use",
			  "no swap");
		return;
	}
	fill(src, 16 * 4096, 41);
	memcpy(want, src, 16 * 4096);
	ok = post(&a, IBV_WR_RDMA_READ, 8, dst, mr_a->lkey, 16 * 4096, src,
		  mr_b->rkey) &&
	     wc_ok(a.cq, 8, IBV_WC_SUCCESS) && same(dst, want, 16 * 4096);
	ok = ok && ktap_expect(!madvise(src, 16 * 4096, MADV_PAGEOUT),
			       "madvise(MADV_PAGEOUT): %s", strerror(errno));
	for (i = 0; ok && i < 16; i++)
		ok = ktap_expect(!resident(src + i * 4096),
				 "page %d still resident after MADV_PAGEOUT", i);
	memset(dst, 0, 16 * 4096);
	f = faults();
	ok = ok && post(&a, IBV_WR_RDMA_READ, 9, dst, mr_a->lkey, 16 * 4096,
			src, mr_b->rkey) &&
	     wc_ok(a.cq, 9, IBV_WC_SUCCESS) && same(dst, want, 16 * 4096) &&
	     faulted(f);
	ktap_result(ok, "a READ from ODP pages swapped out after use brings them back");
}

/* Memory gone for good: a protection error, not a hang. */
static void t_unmapped(void)
{
	uint8_t *hole = mem_b + LEN - 8 * 4096;
	bool ok;

	ok = ktap_expect(!munmap(hole, 4096), "munmap") &&
	     post(&a, IBV_WR_RDMA_WRITE, 6, mem_a, mr_a->lkey, 64, hole,
		  mr_b->rkey) &&
	     wc_ok(a.cq, 6, IBV_WC_REM_ACCESS_ERR);
	ktap_result(ok, "a WRITE to unmapped ODP memory completes with REM_ACCESS_ERR");
}

/* ibv_advise_mr maps the range: the transfer after it faults nothing. */
static void t_prefetch(void)
{
	uint8_t *src = odp_mmap(), *dst = odp_mmap();
	struct ibv_mr *ms = src ? odp_reg(src) : NULL;
	struct ibv_mr *md = dst ? odp_reg(dst) : NULL;
	struct ibv_sge sge[2];
	int64_t f;
	bool ok;

	ok = ktap_expect(ms && md, "ODP reg_mr: %s", strerror(errno));
	if (ok) {
		fill(src, MSG, 31);
		sge[0] = (struct ibv_sge){ (uintptr_t)src, MSG, ms->lkey };
		sge[1] = (struct ibv_sge){ (uintptr_t)dst, MSG, md->lkey };
		ok = ktap_expect(!ibv_advise_mr(pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					IBV_ADVISE_MR_FLAG_FLUSH, sge, 2),
				 "advise_mr: %s", strerror(errno));
	}
	f = faults();
	ok = ok && post(&a, IBV_WR_RDMA_WRITE, 7, src, ms->lkey, MSG, dst,
		  md->rkey) &&
	     wc_ok(a.cq, 7, IBV_WC_SUCCESS) && same(dst, src, MSG) &&
	     ktap_expect(faults() == f, "odp_faults %lld -> %lld after a prefetch",
			 (long long)f, (long long)faults());
	if (md)
		ibv_dereg_mr(md);
	if (ms)
		ibv_dereg_mr(ms);
	if (src)
		munmap(src, LEN);
	if (dst)
		munmap(dst, LEN);
	ktap_result(ok, "after ibv_advise_mr(PREFETCH_WRITE, FLUSH) a WRITE takes no fault");
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dev = {};

	if (!loop_open(argc, argv, 7) || ibv_query_device_ex(ctx, NULL, &dev))
		return KSFT_FAIL;
	if (!(dev.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		ktap_print("the device reports no ODP");
		return KSFT_FAIL;
	}
	mem_a = odp_mmap();
	mem_b = odp_mmap();
	mr_a = mem_a ? odp_reg(mem_a) : NULL;
	mr_b = mem_b ? odp_reg(mem_b) : NULL;
	if (!mr_a || !mr_b || !pair_open(&a, &b, 64)) {
		ktap_print("ODP setup: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_send();
	t_write_read();
	t_atomic();
	t_remap();
	t_prefetch();
	t_swap();
	t_unmapped();	/* last: the error takes the QPs down */

	pair_close(&a, &b);
	ibv_dereg_mr(mr_a);
	ibv_dereg_mr(mr_b);
	return ktap_finish();
}
