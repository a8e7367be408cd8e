// SPDX-License-Identifier: GPL-2.0
/*
 * One device at scale, its QPs connected over loopback to its own GID:
 * - memory: the memory one QP (RC, 16 WRs a queue, one SGE), one CQ (256
 *   CQEs) and one MR (one page) take, from /proc/meminfo around making
 *   many of each: the kernel's (Slab and VmallocUsed, where the rings
 *   are) and all of it (MemFree); printed, checked only to be > 0.
 * - traffic: 1,024 RC QP pairs in 4 processes (256 each, a context each)
 *   move data at once: in each of 4 rounds every QP WRITEs 3000 bytes and
 *   SENDs 3000 bytes of a pattern of its own to its peer, every process
 *   posting all its pairs' WRs before it reaps any completion. Every byte
 *   is checked where it landed; every completion must succeed, and there
 *   must be exactly 6 a pair a round.
 * - connect: QPS QPs (default 4,096) created and taken to RTS in pairs in
 *   one process, one SEND each way checked, then destroyed; the time to
 *   create and connect the first 1,024 and all is printed.
 * - mr: 100,000 MRs registered, MR i over page i % 16 of a 64 KiB buffer;
 *   each is then the local SGE and the target of an RDMA WRITE of 16
 *   bytes that encode i, checked; then all are deregistered.
 * Times are printed, never checked.
 *
 * usage: scale [-t PARTS] [-q QPS] IBDEV [GID_INDEX]
 *   PARTS: comma-separated, of memory, traffic, connect and mr (default:
 *   all, in that order); GID_INDEX (default 1): an IPv4 GID of IBDEV.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

/* The slow guest under load from 2,048 QPs: a stall, not a slow poll. */
#define LOOP_WAIT_MS	30000
#include "loop_qp.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define PAGE		4096
#define MTU		IBV_MTU_1024
#define SMALL_WR	16	/* the small caps: WRs a queue, one SGE */
#define MiB		(1024.0 * 1024)

#define MEM_OBJS	1024	/* memory: QPs and CQs made */
#define MEM_MRS		16384
#define MEM_CQE		256

#define PROCS		4	/* traffic: processes, a context each */
#define PAIRS		256	/* QP pairs a process */
#define ROUNDS		4
/* A WRITE's and a SEND's bytes: 3 packets, the last short; slots straddle pages. */
#define MSG		3000

#define CONNECT_QPS	4096
#define CONNECT_MARK	1024	/* the time to here is printed too */
#define SMALL_MSG	64

#define NR_MRS		100000
#define MR_PAGES	16
#define MR_BATCH	1024	/* WRITEs in flight */
/* A slot a WRITE in flight on its page: source, then target at +32. */
#define MR_SLOT		(PAGE / (MR_BATCH / MR_PAGES))
#define MR_BYTES	16

static const char *ibdev;
static int connect_qps = CONNECT_QPS;

static double secs(uint64_t ms)
{
	return ms / 1000.0;
}

static struct ibv_qp *qp_small(struct ibv_cq *cq, int send_wr)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = SMALL_WR,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &init);
}

/* Both QPs of a pair to RTS, each connected to the other. */
static int pair_connect(struct ep *a, struct ep *b)
{
	return ep_connect_to(a, b->qp->qp_num, &gid, MTU) ?:
	       ep_connect_to(b, a->qp->qp_num, &gid, MTU);
}

/* Reap @n completions into @wc; false after LOOP_WAIT_MS without one. */
static bool reap(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	uint64_t end = now_ms() + LOOP_WAIT_MS;
	int got = 0, k;

	while (got < n) {
		k = ibv_poll_cq(cq, n - got, wc + got);
		if (k < 0)
			return ktap_expect(false, "poll_cq: %d", k);
		if (k)
			end = now_ms() + LOOP_WAIT_MS;
		else if (now_ms() > end)
			return ktap_expect(false, "%d of %d completions, then none in %d ms",
					   got, n, LOOP_WAIT_MS);
		got += k;
	}
	return true;
}

/* Nothing left in @cq: no completion beyond those counted. */
static bool cq_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n = ibv_poll_cq(cq, 1, &wc);

	return ktap_expect(!n, "a completion more than WRs posted: wr_id %#llx status %s",
			   n > 0 ? (unsigned long long)wc.wr_id : 0,
			   n > 0 ? ibv_wc_status_str(wc.status) : "-");
}

/* ---- memory ---- */

/* Of /proc/meminfo, in KiB. */
struct meminfo {
	long long slab, vmalloc, free;
};

static bool meminfo_read(struct meminfo *m)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	int found = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		found += sscanf(line, "Slab: %lld", &m->slab) +
			 sscanf(line, "VmallocUsed: %lld", &m->vmalloc) +
			 sscanf(line, "MemFree: %lld", &m->free);
	fclose(f);
	return ktap_expect(found == 3, "/proc/meminfo: no Slab, VmallocUsed or MemFree");
}

static struct ibv_cq *mem_cq;		/* the QPs' */
static uint8_t mr_buf[MR_PAGES * PAGE] __attribute__((aligned(PAGE)));

static void *make_qp(int i)
{
	(void)i;
	return qp_small(mem_cq, SMALL_WR);
}

static int destroy_qp(void *obj)
{
	return ibv_destroy_qp(obj);
}

static void *make_cq(int i)
{
	(void)i;
	return ibv_create_cq(ctx, MEM_CQE, NULL, NULL, 0);
}

static int destroy_cq(void *obj)
{
	return ibv_destroy_cq(obj);
}

static struct ibv_mr *reg_page(int i)
{
	return ibv_reg_mr(pd, mr_buf + i % MR_PAGES * PAGE, PAGE,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

static void *make_mr(int i)
{
	return reg_page(i);
}

static int destroy_mr(void *obj)
{
	return ibv_dereg_mr(obj);
}

struct mem_kind {
	const char *name;
	int n;
	void *(*make)(int i);
	int (*destroy)(void *obj);
};

/* What one of @k costs, from @k->n made; false if one failed or not > 0. */
static bool mem_measure(const struct mem_kind *k, void **objs)
{
	struct meminfo a, b;
	double slab, vmalloc, all;	/* KiB each */
	int i, made, err = 0;
	bool ok;

	/* Frees of the kind before (RCU, workqueues) land first. */
	usleep(200000);
	if (!meminfo_read(&a))
		return false;
	for (made = 0; made < k->n; made++) {
		objs[made] = k->make(made);
		if (!objs[made]) {
			err = errno;
			break;
		}
	}
	ok = ktap_expect(made == k->n, "%s %d: %s", k->name, made, strerror(err)) &&
	     meminfo_read(&b);
	for (i = 0; i < made; i++)
		ok = ktap_expect(!k->destroy(objs[i]), "destroy %s", k->name) && ok;
	if (!ok)
		return false;
	slab = (double)(b.slab - a.slab) / made;
	vmalloc = (double)(b.vmalloc - a.vmalloc) / made;
	all = (double)(a.free - b.free) / made;
	ktap_print("memory per %s: kernel %.2f KiB (Slab %+.2f, VmallocUsed %+.2f), MemFree -%.2f KiB; %d made",
		   k->name, slab + vmalloc, slab, vmalloc, all, made);
	return ktap_expect(slab + vmalloc > 0 && all > 0,
			   "%s: a cost not above 0", k->name);
}

static void t_memory(void)
{
	static const struct mem_kind kinds[] = {
		{ "QP (RC, 16 WRs a queue, 1 SGE)", MEM_OBJS, make_qp, destroy_qp },
		{ "CQ (256 CQEs)", MEM_OBJS, make_cq, destroy_cq },
		{ "MR (one page)", MEM_MRS, make_mr, destroy_mr },
	};
	void **objs = calloc(MEM_MRS, sizeof(*objs));
	bool ok = objs;
	size_t i;

	mem_cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	ok = ktap_expect(mem_cq, "create_cq: %s", strerror(errno)) && ok;
	for (i = 0; ok && i < ARRAY_SIZE(kinds); i++)
		ok = mem_measure(&kinds[i], objs);
	if (mem_cq)
		ibv_destroy_cq(mem_cq);
	free(objs);
	ktap_result(ok, "memory per QP, CQ and MR measured: each above 0");
}

/* ---- traffic ---- */

enum { OP_WRITE, OP_SEND, OP_RECV, NR_OPS };
/* A QP's buffers: what it WRITEs and SENDs, where its peer's land. */
enum { SRC_WRITE, SRC_SEND, DST_WRITE, DST_RECV, NR_SLOTS };
#define NQ	(2 * PAIRS)	/* QP q's peer is q ^ 1 */

/* One process's pairs. */
static struct {
	int proc;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ep ep[NQ];
	uint8_t *buf;
	uint8_t seen[NQ][NR_OPS];
	struct ibv_wc wc[NQ * NR_OPS];
	unsigned long wcs;	/* successful and expected */
	int complaints;
} tr;

/* What a process tells the parent. */
struct traffic_res {
	unsigned long wcs;
	uint64_t setup_ms;
	uint64_t run_ms;
};

static uint8_t *slot(int q, int s)
{
	return tr.buf + ((size_t)q * NR_SLOTS + s) * MSG;
}

/* QP @q's pattern of @op in @round: unique over all processes. */
static uint64_t seed(int q, int round, int op)
{
	return (uint64_t)(tr.proc * NQ + q) << 8 | round << 1 | op;
}

static uint64_t wr_id(int round, int q, int op)
{
	return (uint64_t)round << 32 | q << 2 | op;
}

static bool complain(void)
{
	return tr.complaints++ < 5;
}

static bool traffic_wc(const struct ibv_wc *wc, int round)
{
	static const enum ibv_wc_opcode opcode[NR_OPS] = {
		IBV_WC_RDMA_WRITE, IBV_WC_SEND, IBV_WC_RECV,
	};
	unsigned int q = (uint32_t)wc->wr_id >> 2, op = wc->wr_id & 3;

	if (wc->status == IBV_WC_SUCCESS && wc->wr_id >> 32 == (uint64_t)round &&
	    q < NQ && op < NR_OPS && wc->opcode == opcode[op] &&
	    (op != OP_RECV || wc->byte_len == MSG) && !tr.seen[q][op]++) {
		tr.wcs++;
		return true;
	}
	if (complain())
		ktap_print("process %d round %d: completion wr_id %#llx status %s opcode %d byte_len %u",
			   tr.proc, round, (unsigned long long)wc->wr_id,
			   ibv_wc_status_str(wc->status), wc->opcode,
			   wc->byte_len);
	return false;
}

static bool traffic_check(int q, int s, int round, int op)
{
	uint8_t want;
	int64_t at = pattern_check(slot(q, s), MSG, PAT_HASH,
				   seed(q ^ 1, round, op), 0, &want);

	if (at < 0)
		return true;
	if (complain())
		ktap_print("process %d round %d QP %d: %s byte %lld is %#x, expected %#x",
			   tr.proc, round, q, op == OP_WRITE ? "WRITE" : "SEND",
			   (long long)at, slot(q, s)[at], want);
	return false;
}

/* Every QP's receive, then every QP's WRITE and SEND; then reap, check. */
static bool traffic_round(int round)
{
	int q, i, ret;
	bool ok = true;

	for (q = 0; q < NQ; q++) {
		struct ibv_sge sge = {
			(uintptr_t)slot(q, DST_RECV), MSG, tr.mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = wr_id(round, q, OP_RECV),
			.sg_list = &sge, .num_sge = 1,
		}, *bad;

		ret = ibv_post_recv(tr.ep[q].qp, &wr, &bad);
		if (ret)
			return ktap_expect(false, "post_recv: %s", strerror(ret));
	}
	for (q = 0; q < NQ; q++) {
		struct ibv_sge sge[] = {
			{ (uintptr_t)slot(q, SRC_WRITE), MSG, tr.mr->lkey },
			{ (uintptr_t)slot(q, SRC_SEND), MSG, tr.mr->lkey },
		};
		struct ibv_send_wr send = {
			.wr_id = wr_id(round, q, OP_SEND),
			.sg_list = &sge[1], .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		};
		struct ibv_send_wr write = {
			.wr_id = wr_id(round, q, OP_WRITE), .next = &send,
			.sg_list = &sge[0], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)slot(q ^ 1, DST_WRITE),
				     tr.mr->rkey },
		}, *bad;

		pattern_fill(slot(q, SRC_WRITE), MSG, PAT_HASH,
			     seed(q, round, OP_WRITE), 0);
		pattern_fill(slot(q, SRC_SEND), MSG, PAT_HASH,
			     seed(q, round, OP_SEND), 0);
		ret = ibv_post_send(tr.ep[q].qp, &write, &bad);
		if (ret)
			return ktap_expect(false, "post_send: %s", strerror(ret));
	}
	if (!reap(tr.cq, tr.wc, NQ * NR_OPS))
		return false;
	memset(tr.seen, 0, sizeof(tr.seen));
	for (i = 0; i < NQ * NR_OPS; i++)
		ok = traffic_wc(&tr.wc[i], round) && ok;
	for (q = 0; q < NQ; q++)
		ok = traffic_check(q, DST_WRITE, round, OP_WRITE) &&
		     traffic_check(q, DST_RECV, round, OP_SEND) && ok;
	return ok;
}

/* This process's context, PD, CQ, MR and pairs, connected. */
static bool traffic_setup(void)
{
	size_t len = (size_t)NQ * NR_SLOTS * MSG;
	int q, ret = 0;

	ctx = open_by_name(ibdev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	tr.cq = ctx ? ibv_create_cq(ctx, NQ * NR_OPS, NULL, NULL, 0) : NULL;
	tr.buf = calloc(1, len);
	tr.mr = pd && tr.buf ? ibv_reg_mr(pd, tr.buf, len,
					  IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!tr.cq || !tr.mr)
		return ktap_expect(false, "process %d: context, PD, CQ or MR: %s",
				   tr.proc, strerror(errno));
	for (q = 0; q < NQ; q++) {
		tr.ep[q].qp = qp_small(tr.cq, SMALL_WR);
		if (!tr.ep[q].qp)
			return ktap_expect(false, "process %d: create_qp %d: %s",
					   tr.proc, q, strerror(errno));
	}
	for (q = 0; !ret && q < NQ; q += 2)
		ret = pair_connect(&tr.ep[q], &tr.ep[q + 1]);
	return ktap_expect(!ret, "process %d: connect pair %d: %s", tr.proc,
			   q / 2 - 1, strerror(ret));
}

static bool traffic_teardown(void)
{
	int q, err = 0;

	for (q = 0; q < NQ; q++)
		if (tr.ep[q].qp)
			err |= ibv_destroy_qp(tr.ep[q].qp);
	if (tr.mr)
		err |= ibv_dereg_mr(tr.mr);
	if (tr.cq)
		err |= ibv_destroy_cq(tr.cq);
	if (pd)
		err |= ibv_dealloc_pd(pd);
	if (ctx)
		err |= ibv_close_device(ctx);
	free(tr.buf);
	return ktap_expect(!err, "process %d: a destroy failed", tr.proc);
}

/*
 * One process: set up, say so on @ready (1 byte: ready or not), wait for
 * @go to close (every process ready), then the rounds.
 */
static int traffic_proc(int proc, int ready, int go, struct traffic_res *res)
{
	uint64_t t0 = now_ms();
	char c;
	int round;
	bool ok;

	tr.proc = proc;
	ok = traffic_setup();
	res->setup_ms = now_ms() - t0;
	c = ok;
	ok = write(ready, &c, 1) == 1 && ok;
	/* A process that dies closes it too: the parent never waits for it. */
	close(ready);
	ok = read(go, &c, 1) == 0 && ok;
	t0 = now_ms();
	for (round = 0; ok && round < ROUNDS; round++)
		ok = traffic_round(round);
	ok = ok && cq_empty(tr.cq);
	res->run_ms = now_ms() - t0;
	res->wcs = tr.wcs;
	return !(traffic_teardown() && ok);
}

static void t_traffic(void)
{
	unsigned long want = (unsigned long)PROCS * NQ * NR_OPS * ROUNDS, wcs = 0;
	struct traffic_res *res;
	uint64_t t0, setup_ms = 0, run_ms = 0;
	int ready[2], go[2], p, status = 0, started = 0, nready = 0;
	pid_t pid[PROCS];
	char c, name[200];
	bool ok = true;

	snprintf(name, sizeof(name),
		 "%d RC QP pairs in %d processes at once: WRITE and SEND of %d B each way, %d rounds, every byte checked, %lu completions all successful",
		 PROCS * PAIRS, PROCS, MSG, ROUNDS, want);
	res = mmap(NULL, PROCS * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED || pipe(ready) || pipe(go)) {
		ktap_print("mmap or pipe: %s", strerror(errno));
		ktap_result(false, name);
		return;
	}
	fflush(stdout);
	for (p = 0; p < PROCS; p++) {
		pid[p] = fork();
		if (!pid[p]) {
			close(ready[0]);
			close(go[1]);
			_exit(traffic_proc(p, ready[1], go[0], &res[p]));
		}
		ok = ktap_expect(pid[p] > 0, "fork: %s", strerror(errno)) && ok;
		started += pid[p] > 0;
	}
	close(ready[1]);
	close(go[0]);
	while (read(ready[0], &c, 1) == 1) {
		ok = c && ok;
		nready++;
	}
	ok = ktap_expect(nready == started, "%d of %d processes set up",
			 nready, started) && ok;
	t0 = now_ms();
	close(go[1]);
	for (p = 0; p < PROCS; p++) {
		if (pid[p] <= 0)
			continue;
		if (waitpid(pid[p], &status, 0) != pid[p])
			status = -1;
		ok = ktap_expect(WIFEXITED(status) && !WEXITSTATUS(status),
				 "process %d failed (status %#x)", p, status) && ok;
		wcs += res[p].wcs;
		setup_ms = setup_ms > res[p].setup_ms ? setup_ms : res[p].setup_ms;
		run_ms = run_ms > res[p].run_ms ? run_ms : res[p].run_ms;
	}
	ktap_print("traffic: %d processes set up and connected %d QPs each in %.1f s (the slowest), moved and checked %.1f MiB in %d rounds in %.1f s (the slowest); all had destroyed their QPs and exited %.1f s after they began",
		   PROCS, NQ, secs(setup_ms),
		   PROCS * NQ * 2 * MSG * ROUNDS / MiB, ROUNDS,
		   secs(run_ms), secs(now_ms() - t0));
	ok = ktap_expect(wcs == want, "%lu successful completions, %lu expected",
			 wcs, want) && ok;
	close(ready[0]);
	munmap(res, PROCS * sizeof(*res));
	ktap_result(ok, name);
}

/* ---- connect ---- */

/*
 * One SEND each way on every pair: QP q's SMALL_MSG bytes, of pattern q,
 * land in its peer's receive buffer; buffer q is 2 * SMALL_MSG, what it
 * sends then what it receives.
 */
static bool connect_exchange(struct ep *ep, int nq, struct ibv_cq *cq,
			     struct ibv_mr *mr, uint8_t *buf)
{
	struct ibv_wc *wc = calloc(2 * nq, sizeof(*wc));
	uint8_t *seen = calloc(2 * nq, 1);
	int q, i, ret, bad = 0;

	if (!wc || !seen)
		return ktap_expect(false, "calloc");
	for (q = 0; q < nq; q++) {
		struct ibv_sge sge = {
			(uintptr_t)buf + (2 * q + 1) * SMALL_MSG, SMALL_MSG,
			mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = 2 * q + 1, .sg_list = &sge, .num_sge = 1,
		}, *rbad;

		ret = ibv_post_recv(ep[q].qp, &wr, &rbad);
		if (ret)
			goto fail;
	}
	for (q = 0; q < nq; q++) {
		struct ibv_sge sge = {
			(uintptr_t)buf + 2 * q * SMALL_MSG, SMALL_MSG, mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = 2 * q, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *sbad;

		pattern_fill(buf + 2 * q * SMALL_MSG, SMALL_MSG, PAT_HASH, q, 0);
		ret = ibv_post_send(ep[q].qp, &wr, &sbad);
		if (ret)
			goto fail;
	}
	if (!reap(cq, wc, 2 * nq)) {
		bad = 1;
		goto out;
	}
	for (i = 0; i < 2 * nq; i++) {
		uint64_t id = wc[i].wr_id;

		if (wc[i].status == IBV_WC_SUCCESS && id < 2U * nq &&
		    wc[i].opcode == (id & 1 ? IBV_WC_RECV : IBV_WC_SEND) &&
		    !seen[id]++)
			continue;
		if (bad++ < 5)
			ktap_print("completion wr_id %llu status %s opcode %d",
				   (unsigned long long)id,
				   ibv_wc_status_str(wc[i].status), wc[i].opcode);
	}
	for (q = 0; q < nq; q++)
		if (pattern_check(buf + (2 * q + 1) * SMALL_MSG, SMALL_MSG,
				  PAT_HASH, q ^ 1, 0, NULL) >= 0 && bad++ < 5)
			ktap_print("QP %d: not what its peer sent", q);
	bad += !cq_empty(cq);
out:
	free(seen);
	free(wc);
	return !bad;
fail:
	free(seen);
	free(wc);
	return ktap_expect(false, "post: %s", strerror(ret));
}

static void t_connect(void)
{
	struct ibv_device_attr dev;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	uint8_t *buf = NULL;
	struct ep *ep = NULL;
	uint64_t t0, mark_ms = 0, all_ms, destroy_ms;
	int nq = connect_qps, i, ret = 0;
	char name[200];
	bool ok;

	if (!ibv_query_device(ctx, &dev)) {
		ktap_print("%s: max_qp %d", ibdev, dev.max_qp);
		nq = dev.max_qp < nq ? dev.max_qp & ~1 : nq;
	}
	snprintf(name, sizeof(name),
		 "%d QPs created and connected (INIT, RTR, RTS) in one process, one SEND each way checked, all destroyed",
		 nq);
	cq = ibv_create_cq(ctx, 2 * nq, NULL, NULL, 0);
	buf = calloc(nq, 2 * SMALL_MSG);
	ep = calloc(nq, sizeof(*ep));
	mr = buf ? ibv_reg_mr(pd, buf, (size_t)nq * 2 * SMALL_MSG,
			      IBV_ACCESS_LOCAL_WRITE) : NULL;
	ok = ktap_expect(cq && mr && ep, "CQ, MR: %s", strerror(errno));

	t0 = now_ms();
	for (i = 0; ok && !ret && i < nq; i += 2) {
		ep[i].qp = qp_small(cq, SMALL_WR);
		ep[i + 1].qp = ep[i].qp ? qp_small(cq, SMALL_WR) : NULL;
		if (!ep[i + 1].qp) {
			ret = errno;
			break;
		}
		ret = pair_connect(&ep[i], &ep[i + 1]);
		if (i + 2 == CONNECT_MARK)
			mark_ms = now_ms() - t0;
	}
	all_ms = now_ms() - t0;
	ok = ok && ktap_expect(!ret, "QPs %d and %d: %s", i, i + 1, strerror(ret));
	if (ok && nq > CONNECT_MARK)
		ktap_print("%d QPs created and connected in %.3f s", CONNECT_MARK,
			   secs(mark_ms));
	if (ok)
		ktap_print("%d QPs created and connected in %.3f s (%.0f a second)",
			   nq, secs(all_ms), nq / secs(all_ms ?: 1));
	ok = ok && connect_exchange(ep, nq, cq, mr, buf);

	t0 = now_ms();
	for (i = 0; ep && i < nq; i++)
		if (ep[i].qp)
			ok = ktap_expect(!ibv_destroy_qp(ep[i].qp),
					 "destroy_qp") && ok;
	destroy_ms = now_ms() - t0;
	ktap_print("%d QPs destroyed in %.3f s", nq, secs(destroy_ms));
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	free(ep);
	free(buf);
	ktap_result(ok, name);
}

/* ---- mr ---- */

/* MRs @s .. @s + @n - 1 each WRITE MR_BYTES of pattern i within page i % 16. */
static bool mr_batch(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr **mrs,
		     int s, int n)
{
	static struct ibv_send_wr wr[MR_BATCH];
	static struct ibv_sge sge[MR_BATCH];
	static struct ibv_wc wc[MR_BATCH];
	static uint8_t seen[MR_BATCH];
	struct ibv_send_wr *bad;
	int k, ret, errs = 0;

	for (k = 0; k < n; k++) {
		int i = s + k;
		uint8_t *p = mr_buf + i % MR_PAGES * PAGE +
			     (i / MR_PAGES) % (MR_BATCH / MR_PAGES) * MR_SLOT;

		pattern_fill(p, MR_BYTES, PAT_HASH, i, 0);
		memset(p + MR_SLOT / 2, 0, MR_BYTES);
		sge[k] = (struct ibv_sge){ (uintptr_t)p, MR_BYTES, mrs[i]->lkey };
		wr[k] = (struct ibv_send_wr){
			.wr_id = i, .next = k + 1 < n ? &wr[k + 1] : NULL,
			.sg_list = &sge[k], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)p + MR_SLOT / 2, mrs[i]->rkey },
		};
	}
	ret = ibv_post_send(qp, wr, &bad);
	if (ret)
		return ktap_expect(false, "post_send MR %d: %s", s, strerror(ret));
	if (!reap(cq, wc, n))
		return false;
	memset(seen, 0, sizeof(seen));
	for (k = 0; k < n; k++) {
		uint64_t i = wc[k].wr_id;

		if (wc[k].status == IBV_WC_SUCCESS &&
		    wc[k].opcode == IBV_WC_RDMA_WRITE && i >= (uint64_t)s &&
		    i < (uint64_t)s + n && !seen[i - s]++)
			continue;
		if (errs++ < 5)
			ktap_print("completion wr_id %llu status %s opcode %d",
				   (unsigned long long)i,
				   ibv_wc_status_str(wc[k].status), wc[k].opcode);
	}
	for (k = 0; k < n; k++) {
		int i = s + k;
		uint8_t *p = mr_buf + i % MR_PAGES * PAGE +
			     (i / MR_PAGES) % (MR_BATCH / MR_PAGES) * MR_SLOT;

		if (pattern_check(p + MR_SLOT / 2, MR_BYTES, PAT_HASH, i, 0,
				  NULL) >= 0 && errs++ < 5)
			ktap_print("MR %d: its WRITE did not land", i);
	}
	return !errs;
}

static void t_mr(void)
{
	const char *name = "100000 MRs registered, each the local SGE and the target of a checked RDMA WRITE, all deregistered";
	struct ibv_device_attr dev;
	struct ibv_mr **mrs = calloc(NR_MRS, sizeof(*mrs));
	struct ibv_cq *cq = ibv_create_cq(ctx, MR_BATCH, NULL, NULL, 0);
	struct ep a = { .cq = cq }, b = { .cq = cq };
	uint64_t t0, reg_ms, use_ms, dereg_ms;
	int i, s, made, err = 0;
	bool ok;

	if (ibv_query_device(ctx, &dev) || dev.max_mr < NR_MRS) {
		ktap_skip(name, "max_mr below 100000");
		goto out;
	}
	a.qp = cq ? qp_small(cq, MR_BATCH) : NULL;
	b.qp = a.qp ? qp_small(cq, SMALL_WR) : NULL;
	ok = ktap_expect(mrs && b.qp && !pair_connect(&a, &b),
			 "CQ and a connected pair: %s", strerror(errno));

	t0 = now_ms();
	for (made = 0; ok && made < NR_MRS; made++) {
		mrs[made] = reg_page(made);
		if (!mrs[made]) {
			err = errno;
			break;
		}
	}
	reg_ms = now_ms() - t0;
	ok = ok && ktap_expect(made == NR_MRS, "MR %d: %s", made, strerror(err));

	t0 = now_ms();
	for (s = 0; ok && s < NR_MRS; s += MR_BATCH)
		ok = mr_batch(a.qp, cq, mrs, s,
			      NR_MRS - s < MR_BATCH ? NR_MRS - s : MR_BATCH);
	ok = ok && cq_empty(cq);
	use_ms = now_ms() - t0;

	t0 = now_ms();
	for (i = 0; i < made; i++)
		ok = ktap_expect(!ibv_dereg_mr(mrs[i]), "dereg_mr %d", i) && ok;
	dereg_ms = now_ms() - t0;
	ktap_print("%d MRs registered in %.1f s, each used in %.1f s, deregistered in %.1f s",
		   made, secs(reg_ms), secs(use_ms), secs(dereg_ms));
	ktap_result(ok, name);
out:
	if (b.qp)
		ibv_destroy_qp(b.qp);
	if (a.qp)
		ibv_destroy_qp(a.qp);
	if (cq)
		ibv_destroy_cq(cq);
	free(mrs);
}

/* ---- main ---- */

static const struct part {
	const char *name;
	void (*run)(void);
} parts[] = {
	{ "memory", t_memory },
	{ "traffic", t_traffic },
	{ "connect", t_connect },
	{ "mr", t_mr },
};

int main(int argc, char **argv)
{
	bool want[ARRAY_SIZE(parts)] = { 0 }, any = false;
	char *list = NULL, *tok;
	int opt, plan = 0;
	size_t i;

	while ((opt = getopt(argc, argv, "t:q:")) != -1) {
		switch (opt) {
		case 't':
			list = optarg;
			break;
		case 'q':
			connect_qps = atoi(optarg) & ~1;
			break;
		default:
			goto usage;
		}
	}
	if (optind >= argc || optind + 2 < argc || connect_qps <= 0)
		goto usage;
	for (tok = list ? strtok(list, ",") : NULL; tok; tok = strtok(NULL, ",")) {
		for (i = 0; i < ARRAY_SIZE(parts) && strcmp(tok, parts[i].name); i++)
			;
		if (i == ARRAY_SIZE(parts))
			goto usage;
		want[i] = any = true;
	}
	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		want[i] = want[i] || !any;
		plan += want[i];
	}
	ibdev = argv[optind];
	gid_index = optind + 1 < argc ? atoi(argv[optind + 1]) : 1;

	ktap_plan(plan);
	ctx = open_by_name(ibdev);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		ktap_print("cannot open %s GID %d", ibdev, gid_index);
		for (i = 0; i < ARRAY_SIZE(parts); i++)
			if (want[i])
				ktap_result(false, parts[i].name);
		return ktap_finish();
	}
	for (i = 0; i < ARRAY_SIZE(parts); i++)
		if (want[i])
			parts[i].run();
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ktap_finish();

usage:
	fprintf(stderr, "usage: %s [-t PARTS] [-q QPS] IBDEV [GID_INDEX]\n",
		argv[0]);
	return KSFT_FAIL;
}
