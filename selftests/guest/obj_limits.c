// SPDX-License-Identifier: GPL-2.0
/*
 * What one user can make of a device, and what it costs:
 * - count: every object count query_device reports (max_pd, max_cq,
 *   max_qp, max_srq, max_mr, max_mw, max_ah) holds exactly, per device:
 *   besides the objects already there (the caller's numbers) threads
 *   racing for the last ones make exactly the rest, each then refused
 *   with ENOMEM, as is one more; once one goes another can be made.
 * - memcg: in a memory cgroup (the caller moved us there) CQs, QPs and
 *   SRQs of the largest sizes are made until one is refused: with
 *   ENOMEM, by the cgroup's limit (memory.events "max"), before their
 *   rings exceed memory.max and without an OOM kill; while they exist
 *   memory.current holds at least their rings, and it drops when they go.
 *
 * usage: obj_limits count IBDEV GID_INDEX PD CQ QP MR SRQ
 *        obj_limits memcg IBDEV CGROUP_DIR
 * PD ... SRQ: how many of each the device has already ("rdma resource
 * show"); it must have no MW or AH, which that does not count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* More than a slow guest makes in a test's time: such a maximum fails. */
#define MAX_TESTED	0x20000
#define MAKERS		2	/* threads racing for the last objects */
#define BREAKERS	64	/* destroy in parallel: QPs, MWs, AHs wait an
				 * RCU grace period each, which they share */
#define BIG_OBJS	256	/* memcg: at most this many of a kind */
#define MiB		(1024.0 * 1024)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;	/* of the QPs */
static union ibv_gid gid;
static int gid_index;
static uint8_t page[4096] __attribute__((aligned(4096)));

/* ---- count ---- */

/*
 * IBDEV opened, its attributes and GID GID_INDEX read, a PD and the QPs'
 * CQ made; or a diagnostic and false.
 */
static bool set_up(const char *ibdev, const char *gid_arg,
		   struct ibv_device_attr *dev)
{
	gid_index = atoi(gid_arg);
	ctx = open_by_name(ibdev);
	if (ctx && !ibv_query_device(ctx, dev) &&
	    !ibv_query_gid(ctx, 1, gid_index, &gid) &&
	    (pd = ibv_alloc_pd(ctx)) &&
	    (cq = ibv_create_cq(ctx, 1, NULL, NULL, 0)))
		return true;
	ktap_print("set up %s: %s", ibdev, strerror(errno));
	return false;
}

struct kind {
	const char *name;
	int max;		/* query_device's */
	int in_use;		/* before us, ours included */
	void *(*make)(void);
	int (*destroy)(void *obj);
};

static void *make_pd(void)
{
	return ibv_alloc_pd(ctx);
}

static int destroy_pd(void *obj)
{
	return ibv_dealloc_pd(obj);
}

static void *make_cq(void)
{
	return ibv_create_cq(ctx, 1, NULL, NULL, 0);
}

static int destroy_cq(void *obj)
{
	return ibv_destroy_cq(obj);
}

static void *make_qp(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &init);
}

static int destroy_qp(void *obj)
{
	return ibv_destroy_qp(obj);
}

static void *make_srq(void)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 1, .max_sge = 1 } };

	return ibv_create_srq(pd, &init);
}

static int destroy_srq(void *obj)
{
	return ibv_destroy_srq(obj);
}

static void *make_mr(void)
{
	return ibv_reg_mr(pd, page, sizeof(page), IBV_ACCESS_LOCAL_WRITE);
}

static int destroy_mr(void *obj)
{
	return ibv_dereg_mr(obj);
}

static void *make_mw(void)
{
	return ibv_alloc_mw(pd, IBV_MW_TYPE_1);
}

static int destroy_mw(void *obj)
{
	return ibv_dealloc_mw(obj);
}

static void *make_ah(void)
{
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.grh = { .dgid = gid, .sgid_index = gid_index, .hop_limit = 64 },
		.port_num = 1,
	};

	return ibv_create_ah(pd, &attr);
}

static int destroy_ah(void *obj)
{
	return ibv_destroy_ah(obj);
}

/* The objects of one kind, made and destroyed by several threads. */
struct batch {
	const struct kind *k;
	void **objs;
	int n;			/* room in @objs */
	int next;		/* next slot to take (atomic) */
	int err[MAKERS];	/* each maker's first failure */
	int destroy_err;	/* a failed destroy's (atomic) */
};

struct worker {
	struct batch *b;
	int id;
};

/* Make objects until the first refusal, a NULL slot (err 0: no slot). */
static void *maker(void *arg)
{
	struct worker *w = arg;
	struct batch *b = w->b;
	int i;

	while ((i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED)) < b->n) {
		b->objs[i] = b->k->make();
		if (!b->objs[i]) {
			b->err[w->id] = errno;
			break;
		}
	}
	return NULL;
}

static void *breaker(void *arg)
{
	struct worker *w = arg;
	struct batch *b = w->b;
	int i, err;

	for (i = w->id; i < b->n; i += BREAKERS) {
		if (!b->objs[i])
			continue;
		err = b->k->destroy(b->objs[i]);
		if (err)
			__atomic_store_n(&b->destroy_err, err, __ATOMIC_RELAXED);
		b->objs[i] = NULL;
	}
	return NULL;
}

static void run_workers(struct batch *b, void *(*fn)(void *), int n)
{
	struct worker w[BREAKERS];
	pthread_t t[BREAKERS];
	int i;

	for (i = 0; i < n; i++) {
		w[i] = (struct worker){ .b = b, .id = i };
		if (pthread_create(&t[i], NULL, fn, &w[i])) {
			fn(&w[i]);	/* no thread: do its share here */
			t[i] = 0;
		}
	}
	for (i = 0; i < n; i++)
		if (t[i])
			pthread_join(t[i], NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * All of @k the device has room for, made by racing threads; one more;
 * one destroyed and made again; all destroyed.
 */
static void t_count(const struct kind *k)
{
	int avail = k->max - k->in_use, made = 0, i;
	struct batch b = { .k = k };
	char name[160];
	void *extra;
	double t0 = now_s();
	bool ok;

	snprintf(name, sizeof(name),
		 "max_%s %d: %d made besides the %d there, then ENOMEM; one destroyed, one made",
		 k->name, k->max, avail, k->in_use);
	if (!ktap_expect(k->max > 0 && k->max <= MAX_TESTED && avail > 0,
			 "max_%s %d, %d in use: this test checks maxima up to %d",
			 k->name, k->max, k->in_use, MAX_TESTED)) {
		ktap_result(false, name);
		return;
	}
	/* Room for one too many per maker: each must be refused. */
	b.n = avail + MAKERS;
	b.objs = calloc(b.n, sizeof(*b.objs));
	if (!b.objs) {
		ktap_result(false, name);
		return;
	}
	run_workers(&b, maker, MAKERS);
	for (i = 0; i < b.n; i++)
		made += !!b.objs[i];
	ok = ktap_expect(made == avail, "%d %ss made, %d expected",
			 made, k->name, avail);
	for (i = 0; i < MAKERS; i++)
		ok = ktap_expect(b.err[i] == ENOMEM,
				 "maker %d stopped by %s (%d)", i,
				 strerror(b.err[i]), b.err[i]) && ok;

	/* One more, from a full device. */
	extra = k->make();
	ok = ktap_expect(!extra && errno == ENOMEM,
			 "one more: %s", extra ? "made" : strerror(errno)) && ok;
	if (extra)
		k->destroy(extra);

	/* A freed one can be had again. */
	for (i = b.n - 1; i >= 0 && !b.objs[i]; i--)
		;
	if (i >= 0) {
		ok = ktap_expect(!k->destroy(b.objs[i]), "destroy") && ok;
		b.objs[i] = k->make();
		ok = ktap_expect(b.objs[i], "one made after one destroyed: %s",
				 strerror(errno)) && ok;
	}
	run_workers(&b, breaker, BREAKERS);
	ok = ktap_expect(!b.destroy_err, "destroy: %s",
			 strerror(b.destroy_err)) && ok;
	ktap_print("%s: %d made and destroyed in %.1f s", k->name, made,
		   now_s() - t0);
	free(b.objs);
	ktap_result(ok, name);
}

static int run_count(int argc, char **argv)
{
	struct ibv_device_attr dev;
	struct kind kinds[] = {
		{ "pd", 0, 0, make_pd, destroy_pd },
		{ "cq", 0, 0, make_cq, destroy_cq },
		{ "qp", 0, 0, make_qp, destroy_qp },
		{ "srq", 0, 0, make_srq, destroy_srq },
		{ "mr", 0, 0, make_mr, destroy_mr },
		{ "mw", 0, 0, make_mw, destroy_mw },
		{ "ah", 0, 0, make_ah, destroy_ah },
	};
	size_t i;

	if (argc != 9) {
		fprintf(stderr, "usage: obj_limits count IBDEV GID_INDEX PD CQ QP MR SRQ\n");
		return KSFT_FAIL;
	}
	ktap_plan(ARRAY_SIZE(kinds));
	if (!set_up(argv[2], argv[3], &dev)) {
		for (i = 0; i < ARRAY_SIZE(kinds); i++)
			ktap_result(false, kinds[i].name);
		return ktap_finish();
	}
	kinds[0].max = dev.max_pd;
	kinds[0].in_use = atoi(argv[4]) + 1;	/* and our pd */
	kinds[1].max = dev.max_cq;
	kinds[1].in_use = atoi(argv[5]) + 1;	/* and our cq */
	kinds[2].max = dev.max_qp;
	kinds[2].in_use = atoi(argv[6]);
	kinds[3].max = dev.max_srq;
	kinds[3].in_use = atoi(argv[8]);
	kinds[4].max = dev.max_mr;
	kinds[4].in_use = atoi(argv[7]);
	kinds[5].max = dev.max_mw;
	kinds[6].max = dev.max_ah;
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		t_count(&kinds[i]);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ktap_finish();
}

/* ---- caps ---- */

struct cap {
	const char *name;
	int max;		/* query_device's */
	int (*try)(int value);	/* 0, or the errno of the refusal */
};

/* An RC QP with @cap, made and destroyed. */
static int try_qp_caps(struct ibv_qp_cap cap)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .cap = cap,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		return errno;
	return ibv_destroy_qp(qp);
}

static int try_send_wr(int v)
{
	return try_qp_caps((struct ibv_qp_cap){ .max_send_wr = v, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 });
}

static int try_recv_wr(int v)
{
	return try_qp_caps((struct ibv_qp_cap){ .max_send_wr = 1, .max_recv_wr = v,
						.max_send_sge = 1, .max_recv_sge = 1 });
}

static int try_send_sge(int v)
{
	return try_qp_caps((struct ibv_qp_cap){ .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = v, .max_recv_sge = 1 });
}

static int try_recv_sge(int v)
{
	return try_qp_caps((struct ibv_qp_cap){ .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = v });
}

static int try_cqe(int v)
{
	struct ibv_cq *c = ibv_create_cq(ctx, v, NULL, NULL, 0);

	if (!c)
		return errno;
	return ibv_destroy_cq(c);
}

static int try_srq(int wr, int sge)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = wr, .max_sge = sge } };
	struct ibv_srq *srq = ibv_create_srq(pd, &init);

	if (!srq)
		return errno;
	return ibv_destroy_srq(srq);
}

static int try_srq_wr(int v)
{
	return try_srq(v, 1);
}

static int try_srq_sge(int v)
{
	return try_srq(1, v);
}

/*
 * A QP taken to RTS, connected to itself, with @dest reads and atomics
 * in flight as a responder and @init as a requester.
 */
static int try_rd_atomic(int dest, int init)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	int err;

	if (!qp)
		return errno;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (!err) {
		a = (struct ibv_qp_attr){
			.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
			.dest_qp_num = qp->qp_num, .max_dest_rd_atomic = dest,
			.min_rnr_timer = 12,
			.ah_attr = { .is_global = 1, .port_num = 1,
				     .grh = { .dgid = gid, .sgid_index = gid_index,
					      .hop_limit = 64 } },
		};
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	}
	if (!err) {
		a = (struct ibv_qp_attr){
			.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
			.rnr_retry = 7, .max_rd_atomic = init,
		};
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	}
	ibv_destroy_qp(qp);
	return err;
}

static int try_rd_atom(int v)
{
	return try_rd_atomic(v, 1);
}

static int try_init_rd_atom(int v)
{
	return try_rd_atomic(1, v);
}

static void t_cap(const struct cap *c)
{
	int at = c->try(c->max), above = c->try(c->max + 1);
	char name[120];

	snprintf(name, sizeof(name), "%s %d allowed, %d refused with EINVAL",
		 c->name, c->max, c->max + 1);
	ktap_expect(!at, "%s at %d: %s", c->name, c->max, strerror(at));
	ktap_expect(above == EINVAL, "%s at %d: %s", c->name, c->max + 1,
		    above ? strerror(above) : "allowed");
	ktap_result(!at && above == EINVAL, name);
}

static int run_caps(int argc, char **argv)
{
	struct cap caps[] = {
		{ "max_qp_wr (send)", 0, try_send_wr },
		{ "max_qp_wr (receive)", 0, try_recv_wr },
		{ "max_sge (send)", 0, try_send_sge },
		{ "max_sge (receive)", 0, try_recv_sge },
		{ "max_cqe", 0, try_cqe },
		{ "max_srq_wr", 0, try_srq_wr },
		{ "max_srq_sge", 0, try_srq_sge },
		{ "max_qp_rd_atom", 0, try_rd_atom },
		{ "max_qp_init_rd_atom", 0, try_init_rd_atom },
	};
	struct ibv_device_attr dev;
	size_t i;

	if (argc != 4) {
		fprintf(stderr, "usage: obj_limits caps IBDEV GID_INDEX\n");
		return KSFT_FAIL;
	}
	ktap_plan(ARRAY_SIZE(caps));
	if (!set_up(argv[2], argv[3], &dev)) {
		for (i = 0; i < ARRAY_SIZE(caps); i++)
			ktap_result(false, caps[i].name);
		return ktap_finish();
	}
	caps[0].max = caps[1].max = dev.max_qp_wr;
	caps[2].max = caps[3].max = dev.max_sge;
	caps[4].max = dev.max_cqe;
	caps[5].max = dev.max_srq_wr;
	caps[6].max = dev.max_srq_sge;
	caps[7].max = dev.max_qp_rd_atom;
	caps[8].max = dev.max_qp_init_rd_atom;
	for (i = 0; i < ARRAY_SIZE(caps); i++)
		t_cap(&caps[i]);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ktap_finish();
}

/* ---- memcg ---- */

static const char *cgroup;

/* A number of a cgroup file, or of a "KEY value" line in it; -1 if none. */
static long long cg_read(const char *file, const char *key)
{
	char path[512], line[256];
	long long v = -1;
	size_t n = key ? strlen(key) : 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cgroup, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = strcmp(line, "max\n") ? atoll(line) : -1;
			break;
		}
		if (!strncmp(line, key, n) && line[n] == ' ') {
			v = atoll(line + n + 1);
			break;
		}
	}
	fclose(f);
	return v;
}

/* Bytes of the device's mappings (its rings) in our address space. */
static long long uverbs_mapped(void)
{
	char line[512];
	unsigned long long from, to;
	long long sum = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/infiniband/uverbs") &&
		    sscanf(line, "%llx-%llx", &from, &to) == 2)
			sum += to - from;
	fclose(f);
	return sum;
}

struct big {
	const char *name;
	void *(*make)(void);
	int (*destroy)(void *obj);
};

static void *make_big_cq(void)
{
	struct ibv_device_attr dev;

	if (ibv_query_device(ctx, &dev))
		return NULL;
	return ibv_create_cq(ctx, dev.max_cqe, NULL, NULL, 0);
}

static void *make_big_qp(void)
{
	struct ibv_device_attr dev;
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
	};

	if (ibv_query_device(ctx, &dev))
		return NULL;
	init.cap.max_send_wr = dev.max_qp_wr;
	init.cap.max_recv_wr = dev.max_qp_wr;
	init.cap.max_send_sge = dev.max_sge;
	init.cap.max_recv_sge = dev.max_sge;
	return ibv_create_qp(pd, &init);
}

static void *make_big_srq(void)
{
	struct ibv_device_attr dev;
	struct ibv_srq_init_attr init = {};

	if (ibv_query_device(ctx, &dev))
		return NULL;
	init.attr.max_wr = dev.max_srq_wr;
	init.attr.max_sge = dev.max_srq_sge;
	return ibv_create_srq(pd, &init);
}

/*
 * memory.current less its file and anon pages: what the kernel charged for
 * itself, rings included. Reclaim near memory.max drops page cache (and
 * swaps anon out), which would hide part of a ring's charge otherwise.
 */
static long long cg_kernel(void)
{
	long long cur = cg_read("memory.current", NULL);
	long long file = cg_read("memory.stat", "file");
	long long anon = cg_read("memory.stat", "anon");

	return cur < 0 || file < 0 || anon < 0 ? -1 : cur - file - anon;
}

/*
 * Largest @b until one is refused: at most twice memory.max of rings, so
 * that a kernel that charges nothing fails here, not in the OOM killer.
 */
static void t_memcg(const struct big *b, long long max)
{
	long long base = cg_read("memory.current", NULL), kbase = cg_kernel();
	long long maps0 = uverbs_mapped(), rings = 0, peak, kpeak, after;
	long long ev_max = cg_read("memory.events", "max");
	long long ooms = cg_read("memory.events", "oom_kill");
	void *objs[BIG_OBJS];
	char name[160];
	int n, err = 0, i;
	bool ok;

	snprintf(name, sizeof(name),
		 "memcg: big %ss refused with ENOMEM within memory.max, charged while they exist",
		 b->name);
	for (n = 0; n < BIG_OBJS && rings <= 2 * max; n++) {
		objs[n] = b->make();
		if (!objs[n]) {
			err = errno;
			break;
		}
		rings = uverbs_mapped() - maps0;
	}
	peak = cg_read("memory.current", NULL);
	kpeak = cg_kernel();
	ktap_print("%s: %d made, %.1f MiB of rings, then %s; memory.current %.1f -> %.1f MiB (+%.1f), less file and anon +%.1f",
		   b->name, n, rings / MiB, err ? strerror(err) : "no refusal",
		   base / MiB, peak / MiB, (peak - base) / MiB,
		   (kpeak - kbase) / MiB);
	ok = ktap_expect(err == ENOMEM, "stopped by %s", strerror(err));
	ok = ktap_expect(n > 0, "not one made") && ok;
	ok = ktap_expect(rings <= max, "%.1f MiB of rings past memory.max %.1f MiB",
			 rings / MiB, max / MiB) && ok;
	/*
	 * memory.stat lags memory.current by the charges still batched per
	 * CPU (64 pages each): 1 MiB of slack, against rings of 32 MiB and
	 * more.
	 */
	ok = ktap_expect(kbase >= 0 && kpeak - kbase + MiB >= rings,
			 "memory.current less file and anon rose %.1f MiB, less than the rings",
			 (kpeak - kbase) / MiB) && ok;
	ok = ktap_expect(cg_read("memory.events", "max") > ev_max,
			 "memory.events max did not count the refusal") && ok;

	for (i = 0; i < n; i++)
		b->destroy(objs[i]);
	after = cg_read("memory.current", NULL);
	ktap_print("%s: destroyed; memory.current %.1f MiB", b->name,
		   after / MiB);
	/* The per-CPU charge caches keep a little, and the CQ of the QPs. */
	ok = ktap_expect(after - base <= (peak - base) / 10 + 4 * MiB,
			 "memory.current stayed %.1f MiB above its start",
			 (after - base) / MiB) && ok;
	ok = ktap_expect(cg_read("memory.events", "oom_kill") == ooms,
			 "the OOM killer was called") && ok;
	ktap_result(ok, name);
}

static int run_memcg(int argc, char **argv)
{
	static const struct big bigs[] = {
		{ "cq", make_big_cq, destroy_cq },
		{ "qp", make_big_qp, destroy_qp },
		{ "srq", make_big_srq, destroy_srq },
	};
	long long max;
	size_t i;

	if (argc != 4) {
		fprintf(stderr, "usage: obj_limits memcg IBDEV CGROUP_DIR\n");
		return KSFT_FAIL;
	}
	cgroup = argv[3];
	ktap_plan(ARRAY_SIZE(bigs));
	max = cg_read("memory.max", NULL);
	ctx = open_by_name(argv[2]);
	if (max <= 0 || cg_read("memory.current", NULL) < 0 || !ctx ||
	    !(pd = ibv_alloc_pd(ctx)) ||
	    !(cq = ibv_create_cq(ctx, 1, NULL, NULL, 0))) {
		ktap_print("set up: memory.max %lld, %s: %s", max, argv[2],
			   strerror(errno));
		for (i = 0; i < ARRAY_SIZE(bigs); i++)
			ktap_result(false, bigs[i].name);
		return ktap_finish();
	}
	ktap_print("memory.max %.1f MiB", max / MiB);
	for (i = 0; i < ARRAY_SIZE(bigs); i++)
		t_memcg(&bigs[i], max);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ktap_finish();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "count"))
		return run_count(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "caps"))
		return run_caps(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "memcg"))
		return run_memcg(argc, argv);
	fprintf(stderr, "usage: obj_limits count|caps|memcg IBDEV ...\n");
	return KSFT_FAIL;
}
