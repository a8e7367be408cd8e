// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging while the kernel keeps replacing the pages: a thread
 * migrates the ODP region's pages between NUMA nodes (move_pages(), when
 * the guest has two nodes) or pages them out (MADV_PAGEOUT, to swap if
 * there is some), which invalidates them, copies their data to new pages
 * and frees the old ones, while a loopback RC QP writes a new pattern into
 * the region (RDMA WRITE to the ODP MR) and reads it back (RDMA READ from
 * it) round after round. Every round's data must be in the process's
 * pages and in what the READ returned: a write that went to a page
 * already replaced would be lost, a read from one would return old data.
 * The driver must use only pages it saw mapped after the kernel's ODP
 * core checked them against invalidations.
 *
 * usage: odp_churn IBDEV [GID_INDEX]   (ODP_CHURN_SECS: seconds, 10)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"

#define NPAGES		64
#define PG		4096
#define LEN		(NPAGES * PG)
#define CHUNK		(4 * PG)
#define NCHUNK		(LEN / CHUNK)
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE	(1 << 1)
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

static struct ep a, b;		/* a requests, b's MR is the ODP one */
static uint8_t *odp, *src, *dst;
static atomic_bool stop;
static atomic_ulong churns, moved;
static bool numa;

/*
 * Pause between page-outs: an RDMA access to a page paged out is RNR-NAKed
 * until the driver's fault work brings it back, and the requester retries
 * after the RNR timer (a jiffy at least). Paging out again sooner than
 * that retry keeps every transfer waiting, for ever with rnr_retry 7.
 */
#define PAGEOUT_PAUSE_US	20000

/* /proc/vmstat's @name, or -1. */
static long vmstat(const char *name)
{
	char key[64];
	long val, ret = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	while (f && fscanf(f, "%63s %ld", key, &val) == 2)
		if (!strcmp(key, name))
			ret = val;
	if (f)
		fclose(f);
	return ret;
}

/* Is there swap to page out to? (/proc/swaps: a header, then devices) */
static bool have_swap(void)
{
	char line[256];
	int n = 0;
	FILE *f = fopen("/proc/swaps", "r");

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n > 1;
}

/* Does the kernel see NUMA node 1 (so move_pages() has a target)? */
static bool two_nodes(void)
{
	return !access("/sys/devices/system/node/node1", F_OK);
}

static void *churn(void *arg)
{
	void *pages[NPAGES];
	int nodes[NPAGES], status[NPAGES], i, to = 1;

	(void)arg;
	for (i = 0; i < NPAGES; i++)
		pages[i] = odp + i * PG;
	while (!atomic_load(&stop)) {
		if (numa) {
			for (i = 0; i < NPAGES; i++)
				nodes[i] = to;
			if (!syscall(SYS_move_pages, 0, NPAGES, pages, nodes,
				     status, MPOL_MF_MOVE))
				for (i = 0; i < NPAGES; i++)
					moved += status[i] == to;
			to ^= 1;
		} else {
			madvise(odp, LEN, MADV_PAGEOUT);
			usleep(PAGEOUT_PAUSE_US);
		}
		churns++;
		usleep(1000);	/* let some transfers through */
	}
	return NULL;
}

/*
 * @op over the whole region, a WR per CHUNK: a READ's responder needs all
 * of its pages mapped at once, which pages replaced without pause would
 * rarely allow before the requester's retries ran out.
 */
static bool post(enum ibv_wr_opcode op, uint8_t *laddr, uint32_t lkey,
		 uint32_t rkey)
{
	struct ibv_send_wr wr[NCHUNK], *bad;
	struct ibv_sge sge[NCHUNK];
	bool ok = true;
	int i;

	for (i = 0; i < NCHUNK; i++) {
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)laddr + i * CHUNK,
					   .length = CHUNK, .lkey = lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = op, .send_flags = IBV_SEND_SIGNALED,
			.next = i + 1 < NCHUNK ? &wr[i + 1] : NULL };
		wr[i].wr.rdma.remote_addr = (uintptr_t)odp + i * CHUNK;
		wr[i].wr.rdma.rkey = rkey;
	}
	if (!ktap_expect(!ibv_post_send(a.qp, wr, &bad), "post_send"))
		return false;
	for (i = 0; i < NCHUNK && ok; i++)
		ok = wc_ok(a.cq, i, IBV_WC_SUCCESS);
	return ok;
}

int main(int argc, char **argv)
{
	const char *s = getenv("ODP_CHURN_SECS");
	struct ibv_mr *mr_o, *mr_s, *mr_d;
	unsigned long rounds = 0, bad_mem = 0, bad_read = 0;
	long swapped;
	uint64_t end;
	pthread_t th;
	bool ok = true;

	if (!loop_open(argc, argv, 3))
		return KSFT_FAIL;
	numa = two_nodes();
	odp = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = malloc(LEN);
	dst = malloc(LEN);
	if (odp == MAP_FAILED || !src || !dst)
		return KSFT_FAIL;
	memset(odp, 0, LEN);
	mr_o = ibv_reg_mr(pd, odp, LEN, IBV_ACCESS_ON_DEMAND |
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ);
	mr_s = ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE);
	mr_d = ibv_reg_mr(pd, dst, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr_o) {
		ktap_skip("RDMA over pages the kernel replaces",
			  "no ODP MR on this device");
		ktap_skip("pages were replaced", "no ODP");
		ktap_skip("connection survived", "no ODP");
		return ktap_finish();
	}
	if (!ktap_expect(mr_s && mr_d, "reg_mr: %s", strerror(errno)) ||
	    !pair_open(&a, &b, 64))
		return KSFT_FAIL;
	ktap_print("churn: %s", numa ? "move_pages() between nodes 0 and 1" :
		   "MADV_PAGEOUT (one NUMA node)");
	swapped = vmstat("pswpout");
	if (pthread_create(&th, NULL, churn, NULL))
		return KSFT_FAIL;

	end = now_ms() + 1000ull * (s ? atoi(s) : 10);
	while (ok && now_ms() < end) {
		int64_t at;

		pattern_fill(src, LEN, PAT_HASH, rounds, 0);
		memset(dst, 0, LEN);
		ok = post(IBV_WR_RDMA_WRITE, src, mr_s->lkey, mr_o->rkey);
		/* The region as the process sees it now. */
		at = ok ? pattern_check(odp, LEN, PAT_HASH, rounds, 0, NULL) : -1;
		if (at >= 0 && bad_mem++ < 4)
			ktap_print("round %lu: written byte %lld (page %lld) lost",
				   rounds, (long long)at, (long long)at / PG);
		ok = ok && post(IBV_WR_RDMA_READ, dst, mr_d->lkey, mr_o->rkey);
		at = ok ? pattern_check(dst, LEN, PAT_HASH, rounds, 0, NULL) : -1;
		if (at >= 0 && bad_read++ < 4)
			ktap_print("round %lu: byte %lld (page %lld) read wrong",
				   rounds, (long long)at, (long long)at / PG);
		rounds++;
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	swapped = vmstat("pswpout") - swapped;
	ktap_print("%lu rounds, %lu churns, %lu pages moved, %ld swapped out",
		   rounds, (unsigned long)churns, (unsigned long)moved, swapped);
	ktap_result(ok && rounds && !bad_mem && !bad_read,
		    "RDMA over pages the kernel replaces");
	if (numa)
		ktap_result(moved > 0, "pages were replaced");
	else if (have_swap())
		ktap_result(swapped > 0, "pages were replaced");
	else
		ktap_skip("pages were replaced",
			  "one NUMA node and no swap: none paged out");
	ktap_result(ok, "connection survived");
	pair_close(&a, &b);
	ibv_dereg_mr(mr_o);
	ibv_dereg_mr(mr_s);
	ibv_dereg_mr(mr_d);
	return ktap_finish();
}
