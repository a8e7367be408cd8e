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
 * Over 2 MiB huge pages (IBV_ACCESS_HUGETLB) the same holds, a huge page
 * at a time, where the kernel's ODP core tracks them so.
 * An implicit MR (the whole address space) does all of that for any
 * address of the process, across its 2 MiB children, and refuses others.
 *
 * usage: odp_verbs IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
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

/*
 * Does the process's page table map the page at @p (pagemap's "present"
 * bit)? Not mincore(): it also counts a page swapped out but still in
 * the swap cache, as the last one written often is (7.2).
 */
static bool resident(void *p)
{
	uint64_t e = 1ULL << 63;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &e, sizeof(e), (uintptr_t)p / 4096 * sizeof(e)) !=
		    sizeof(e))
			e = 1ULL << 63;
		close(fd);
	}
	return e >> 63;
}

/*
 * Push @n pages at @p out to swap; returns how many are out, -1 if
 * madvise fails. A page just faulted in may still sit in another CPU's
 * LRU batch, where reclaim cannot take it: mlock() drains every CPU's
 * batch first, and rounds give reclaim its chance. Reclaim may still
 * leave a page (it skips a page it cannot lock; CI's loaded host left
 * 1 of 16 after 10 rounds once): the caller needs some out, not all.
 */
static int page_out(uint8_t *p, int n)
{
	int round, i, left = n;

	for (round = 0; left && round < 40; round++) {
		if (!mlock(p, 4096))
			munlock(p, 4096);
		if (madvise(p, n * 4096, MADV_PAGEOUT))
			return -1;
		for (i = 0, left = 0; i < n; i++)
			left += resident(p + i * 4096);
		if (left)
			usleep(50000);
	}
	return n - left;
}

/*
 * Pages swapped out after a transfer mapped them come back for the next
 * one: the swap-out invalidated the MR's mapping of each, so the READ
 * faults them in again. Needs swap: odp_verbs.sh sets ODP_SWAP=1 once it
 * has some.
 */
static void t_swap(void)
{
	const char *name = "a READ from ODP pages swapped out after use brings them back";
	uint8_t *src = mem_b + LEN / 2 + MSG;	/* untouched so far */
	uint8_t *dst = mem_a + LEN / 2 + MSG;
	int64_t f;
	bool ok;
	int out;

	if (!getenv("ODP_SWAP")) {
		ktap_skip(name, "no swap");
		return;
	}
	fill(src, 16 * 4096, 41);
	memcpy(want, src, 16 * 4096);
	ok = post(&a, IBV_WR_RDMA_READ, 8, dst, mr_a->lkey, 16 * 4096, src,
		  mr_b->rkey) &&
	     wc_ok(a.cq, 8, IBV_WC_SUCCESS) && same(dst, want, 16 * 4096);
	out = ok ? page_out(src, 16) : 0;
	ok = ok && ktap_expect(out >= 0, "madvise(MADV_PAGEOUT): %s",
			       strerror(errno));
	if (ok && !out) {
		ktap_skip(name, "reclaim took none of the 16 pages");
		return;
	}
	if (out > 0 && out < 16)
		ktap_print("%d of 16 pages swapped out", out);
	memset(dst, 0, 16 * 4096);
	f = faults();
	ok = ok && post(&a, IBV_WR_RDMA_READ, 9, dst, mr_a->lkey, 16 * 4096,
			src, mr_b->rkey) &&
	     wc_ok(a.cq, 9, IBV_WC_SUCCESS) && same(dst, want, 16 * 4096) &&
	     faulted(f);
	ktap_result(ok, name);
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

/* ---------------------------------------------------------- huge pages */

#define HUGE_SZ		(2UL << 20)
#define NR_HUGE_TESTS	4

/*
 * Kernels from 6.15 keep ODP page state per small page but clear it per
 * huge page on invalidation, so softrdma refuses IBV_ACCESS_HUGETLB there
 * (kernel/compat.h).
 */
static bool odp_huge_offered(void)
{
	struct utsname u;
	unsigned int maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		return false;
	return maj < 6 || (maj == 6 && min < 15);
}

/*
 * Two huge pages under one ODP MR: a WRITE across the boundary between
 * them; after the process drops them (MADV_DONTNEED) a READ sees the new,
 * zeroed pages, and after the process writes there, its bytes.
 */
static void t_huge_traffic(struct ibv_mr *hmr, uint8_t *h)
{
	uint8_t *at = h + HUGE_SZ - MSG / 2, *src = mem_a, *dst = mem_a + MSG;
	bool ok;

	fill(src, MSG, 31);
	ok = post(&a, IBV_WR_RDMA_WRITE, 11, src, mr_a->lkey, MSG, at,
		  hmr->rkey) &&
	     wc_ok(a.cq, 11, IBV_WC_SUCCESS) && same(at, src, MSG);
	ktap_result(ok, "ODP over huge pages: a WRITE across two 2 MiB pages lands");

	ok = ktap_expect(!madvise(h, 2 * HUGE_SZ, MADV_DONTNEED), "madvise");
	memset(want, 0, MSG);
	memset(dst, 0xa5, MSG);
	ok = ok && post(&a, IBV_WR_RDMA_READ, 12, dst, mr_a->lkey, MSG, at,
			hmr->rkey) &&
	     wc_ok(a.cq, 12, IBV_WC_SUCCESS) && same(dst, want, MSG);
	fill(at, MSG, 32);
	ok = ok && post(&a, IBV_WR_RDMA_READ, 13, dst, mr_a->lkey, MSG, at,
			hmr->rkey) &&
	     wc_ok(a.cq, 13, IBV_WC_SUCCESS) && same(dst, at, MSG);
	ktap_result(ok, "ODP over huge pages: after MADV_DONTNEED a READ returns the new pages, then what the process wrote there");
}

/* The traffic checks of t_huge_traffic(), skipped for @why. */
static void skip_huge_traffic(const char *why)
{
	ktap_skip("ODP over huge pages: WRITE", why);
	ktap_skip("ODP over huge pages: READ after MADV_DONTNEED", why);
}

static void t_huge(void)
{
	int access = IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB |
		     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *hmr, *bad;
	uint8_t *h;

	bad = ibv_reg_mr(pd, mem_b, LEN, access & ~IBV_ACCESS_ON_DEMAND);
	ktap_result(!bad && errno == EINVAL,
		    "reg_mr with IBV_ACCESS_HUGETLB but not ON_DEMAND: EINVAL");
	if (bad)
		ibv_dereg_mr(bad);

	h = mmap(NULL, 2 * HUGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (h == MAP_FAILED) {
		ktap_skip("ODP over huge pages: reg_mr", "no 2 MiB huge pages");
		skip_huge_traffic("no 2 MiB huge pages");
		return;
	}
	errno = 0;
	hmr = ibv_reg_mr(pd, h, 2 * HUGE_SZ, access);
	if (!odp_huge_offered()) {
		ktap_result(!hmr && errno == EOPNOTSUPP,
			    "ODP over huge pages on this kernel: EOPNOTSUPP (its core cannot track them)");
		skip_huge_traffic("refused on this kernel");
	} else {
		ktap_result(ktap_expect(hmr, "reg_mr: %s", strerror(errno)),
			    "ODP over huge pages: reg_mr with IBV_ACCESS_HUGETLB");
		if (hmr)
			t_huge_traffic(hmr, h);
		else
			skip_huge_traffic("no MR");
	}
	if (hmr)
		ibv_dereg_mr(hmr);
	munmap(h, 2 * HUGE_SZ);
}

#define IMP_LEN		(6 << 20)	/* three implicit children and more */
#define IMP_MSG		(1 << 20)

static struct ibv_mr *imr;	/* implicit: [0, SIZE_MAX) */

static uint8_t *imp_mmap(void)
{
	void *p = mmap(NULL, IMP_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* An address that straddles a 2 MiB boundary inside [p, p + IMP_LEN). */
static uint8_t *straddle(uint8_t *p)
{
	uintptr_t b = ((uintptr_t)p + (4 << 20)) & ~(uintptr_t)((2 << 20) - 1);

	return (uint8_t *)(b - IMP_MSG / 2 - 4096 + 12);
}

static struct ibv_mr *implicit_reg(void)
{
	return ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_ON_DEMAND |
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
}

/* WRITE and READ between untouched memory, across children, one key. */
static void t_implicit_rdma(uint8_t *m1, uint8_t *m2)
{
	uint8_t *src = straddle(m1), *dst = straddle(m2);
	int64_t f = faults();
	bool ok;

	fill(src, IMP_MSG, 51);
	ok = post(&a, IBV_WR_RDMA_WRITE, 20, src, imr->lkey, IMP_MSG, dst,
		  imr->rkey) &&
	     wc_ok(a.cq, 20, IBV_WC_SUCCESS) && same(dst, src, IMP_MSG);
	memset(src, 0, IMP_MSG);
	ok = ok && post(&a, IBV_WR_RDMA_READ, 21, src, imr->lkey, IMP_MSG,
			dst, imr->rkey) &&
	     wc_ok(a.cq, 21, IBV_WC_SUCCESS) && same(src, dst, IMP_MSG) &&
	     faulted(f);
	ktap_result(ok, "implicit ODP: 1 MiB WRITE and READ across 2 MiB children, untouched memory");
}

static void t_implicit_send(uint8_t *m1, uint8_t *m2)
{
	uint8_t *src = m1 + IMP_LEN - MSG, *dst = m2 + IMP_LEN - MSG - 100;
	struct ibv_wc wc;
	bool ok;

	fill(src, MSG, 53);
	ok = post_recv(&b, dst, imr->lkey, MSG) &&
	     post(&a, IBV_WR_SEND, 22, src, imr->lkey, MSG, NULL, 0) &&
	     wc_ok(a.cq, 22, IBV_WC_SUCCESS) && poll_one(b.cq, &wc) &&
	     ktap_expect(wc.status == IBV_WC_SUCCESS && wc.byte_len == MSG,
			 "recv %s, %u bytes", ibv_wc_status_str(wc.status),
			 wc.byte_len) && same(dst, src, MSG);
	ktap_result(ok, "implicit ODP: SEND and RECV through the implicit lkey");
}

/* The implicit MR follows the process's mappings too. */
static void t_implicit_remap(uint8_t *m1, uint8_t *m2)
{
	uint8_t *src = m2 + (3 << 20);
	void *p;
	bool ok;

	p = mmap(src, 4 * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ok = ktap_expect(p == src, "mmap MAP_FIXED");
	fill(src, 4096, 57);
	ok = ok && post(&a, IBV_WR_RDMA_READ, 23, m1, imr->lkey, 4096, src,
			imr->rkey) &&
	     wc_ok(a.cq, 23, IBV_WC_SUCCESS) && same(m1, src, 4096);
	ktap_result(ok, "implicit ODP: after a new mapping at an address, a READ returns the new memory");
}

static void t_implicit_prefetch(void)
{
	uint8_t *m = imp_mmap();
	struct ibv_sge sge;
	int64_t f;
	bool ok = ktap_expect(m, "mmap");

	if (ok) {
		sge = (struct ibv_sge){ (uintptr_t)m, IMP_LEN, imr->lkey };
		ok = ktap_expect(!ibv_advise_mr(pd,
					IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1),
				 "advise_mr: %s", strerror(errno));
	}
	f = faults();
	ok = ok && post(&a, IBV_WR_RDMA_WRITE, 24, m, imr->lkey, IMP_MSG,
			m + IMP_LEN - IMP_MSG, imr->rkey) &&
	     wc_ok(a.cq, 24, IBV_WC_SUCCESS) &&
	     ktap_expect(faults() == f, "odp_faults %lld -> %lld after a prefetch",
			 (long long)f, (long long)faults());
	if (m)
		munmap(m, IMP_LEN);
	ktap_result(ok, "implicit ODP: after ibv_advise_mr over 6 MiB a WRITE takes no fault");
}

/* A WRITE to @where through the implicit rkey: a protection error. */
static void t_implicit_denied(void *where, const char *what)
{
	bool ok;

	pair_close(&a, &b);
	ok = pair_open(&a, &b, 64) &&
	     post(&a, IBV_WR_RDMA_WRITE, 25, mem_a, mr_a->lkey, 64, where,
		  imr->rkey) &&
	     wc_ok(a.cq, 25, IBV_WC_REM_ACCESS_ERR);
	ktap_result(ok, what);
}

/* A process may exit with an implicit MR whose children hold pages. */
static int exit_implicit(struct ibv_context *c, struct ibv_pd *p)
{
	uint8_t *m = imp_mmap();
	struct ibv_mr *mr = m ? ibv_reg_mr(p, NULL, SIZE_MAX,
					   IBV_ACCESS_ON_DEMAND |
					   IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_sge sge;

	(void)c;
	if (!mr)
		return 1;
	sge = (struct ibv_sge){ (uintptr_t)m, IMP_LEN, mr->lkey };
	return ibv_advise_mr(p, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			     IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1) ? 2 : 0;
}

static void t_implicit_exit(void)
{
	ktap_result(in_child(exit_implicit),
		    "implicit ODP: a process may exit holding a mapped implicit MR");
}

#define NR_IMPLICIT_TESTS	8

static void t_implicit(struct ibv_device_attr_ex *dev)
{
	uint8_t *m1, *m2;
	int i;

	if (!(dev->odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT)) {
		for (i = 0; i < NR_IMPLICIT_TESTS; i++)
			ktap_skip("implicit ODP", "not reported");
		return;
	}
	m1 = imp_mmap();
	m2 = imp_mmap();
	imr = implicit_reg();
	ktap_result(m1 && m2 && imr, "implicit ODP: reg_mr(NULL, SIZE_MAX) is one MR over the address space");
	if (!imr || !m1 || !m2) {
		for (i = 1; i < NR_IMPLICIT_TESTS; i++)
			ktap_result(false, "implicit ODP");
		return;
	}
	t_implicit_rdma(m1, m2);
	t_implicit_send(m1, m2);
	t_implicit_remap(m1, m2);
	t_implicit_prefetch();
	t_implicit_exit();
	munmap(m2, 4096);
	t_implicit_denied(m2, "implicit ODP: a WRITE to unmapped memory: REM_ACCESS_ERR");
	/* past any process's address space (a kernel address) */
	t_implicit_denied((void *)0xffff888000000000ull,
			  "implicit ODP: a WRITE to a kernel address: REM_ACCESS_ERR");
	pair_close(&a, &b);
	if (!pair_open(&a, &b, 64))
		ktap_print("no new pair after the implicit tests");
	ibv_dereg_mr(imr);
	munmap(m1, IMP_LEN);
	munmap(m2 + 4096, IMP_LEN - 4096);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dev = {};

	if (!loop_open(argc, argv, 7 + NR_HUGE_TESTS + NR_IMPLICIT_TESTS) ||
	    ibv_query_device_ex(ctx, NULL, &dev))
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
	t_huge();
	t_implicit(&dev);
	t_unmapped();	/* last: the error takes the QPs down */

	pair_close(&a, &b);
	ibv_dereg_mr(mr_a);
	ibv_dereg_mr(mr_b);
	return ktap_finish();
}
