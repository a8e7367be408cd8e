// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile userspace: the other side of the hostile packet test. This
 * process garbles every ring it shares with the kernel (SQ, RQ, SRQ and
 * CQ: indices, every WQE field, whole slots) of "victim" QPs, rings
 * doorbells, resizes CQs, moves QPs through random states and destroys
 * objects under traffic, while a child process keeps "bystander" RC
 * pairs of the same device moving data that it checks byte for byte.
 *
 * The kernel must never take a garbled ring for more than an error of
 * the queue: bystander completions all succeed, their data and a canary
 * MR (remote write, MW bind) that no legitimate operation writes stay
 * intact, every completion status the kernel writes is one of verbs'
 * and a victim hit by a bad WQE completes it with a clear error status
 * and enters ERR.
 *
 * usage: hostile_user [-s SEED] [-n COUNT] [-t MAX_SECONDS] IBDEV [GID_INDEX]
 *
 * HOSTILE_USER_SKIP: comma-separated mutation kinds not to make (the names
 * in the kind tally), to work around a known bug while it is fixed.
 * HOSTILE_USER_ACK_TIMEOUT: the bystanders' local ACK timeout exponent
 * (default 14, about 67 ms, as ibv_rc_pingpong), for telling a slow
 * answer from a lost one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"
#include "pattern.h"

/* The provider's own objects: the rings' addresses and indices. */
#include "softrdma.h"
#include "send.h"	/* the provider's SQ doorbell */

#define QKEY		0x11111111u
#define VBUF_LEN	(256 * 1024)
#define WAIT_MS		20000

/* --------------------------------------------------------------- random */

static uint64_t rng_state;

static uint64_t r64(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static uint32_t r32(void)
{
	return r64() >> 32;
}

static uint32_t rnd(uint32_t n)
{
	return n ? r32() % n : 0;
}

static void rng_seed(uint64_t seed)
{
	rng_state = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	if (!rng_state)
		rng_state = 1;
	r64();
}

/* ----------------------------------------------------- bystanders (child) */

/* What the bystander process tells the mutator: targets for garbage. */
struct bys_info {
	uint64_t canary_addr;
	uint64_t data_addr;
	uint32_t canary_len;
	uint32_t canary_lkey;
	uint32_t canary_rkey;
	uint32_t data_lkey;
	uint32_t data_rkey;
	uint32_t ah_num;		/* an AH of the bystanders' PD */
	uint32_t xsrqn;			/* an XRC SRQ of their own domain */
	uint32_t qpn[4];
	int ok;
};

#define BYS_LEN		16384
#define CANARY_LEN	65536

struct bpair {
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
	uint8_t *abuf, *bbuf;		/* 3 * BYS_LEN each */
	struct ibv_mr *amr, *bmr;
};

static uint8_t *canary;

static void pattern(uint8_t *p, size_t len, uint64_t seed)
{
	pattern_fill(p, len, PAT_XS64B, seed, 0);
}

static bool canary_intact(void)
{
	size_t off;
	int64_t i;
	uint8_t want;

	for (off = 0; off < CANARY_LEN; off += 256) {
		i = pattern_check(canary + off, 256, PAT_XS64B, 0xC0FFEE + off,
				  0, &want);
		if (i >= 0) {
			ktap_print("bystander: canary byte %zu is %#x, expected %#x",
				   off + (size_t)i, canary[off + i], want);
			return false;
		}
	}
	return true;
}

static bool bys_pair(struct bpair *p)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS;

	p->abuf = calloc(1, 3 * BYS_LEN);
	p->bbuf = calloc(1, 3 * BYS_LEN);
	p->cqa = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	p->cqb = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!p->abuf || !p->bbuf || !p->cqa || !p->cqb)
		return false;
	p->amr = ibv_reg_mr(pd, p->abuf, 3 * BYS_LEN, access);
	p->bmr = ibv_reg_mr(pd, p->bbuf, 3 * BYS_LEN, access);
	init.send_cq = init.recv_cq = p->cqa;
	p->a = ibv_create_qp(pd, &init);
	init.send_cq = init.recv_cq = p->cqb;
	p->b = ibv_create_qp(pd, &init);
	if (!p->amr || !p->bmr || !p->a || !p->b)
		return false;
	/* HOSTILE_USER_ACK_TIMEOUT: the bystanders' (default 14, 67 ms). */
	const char *t = getenv("HOSTILE_USER_ACK_TIMEOUT");
	uint8_t to = t ? atoi(t) : 14;

	return !ibv_modify_qp(p->a, &a, mask) && !ibv_modify_qp(p->b, &a, mask) &&
	       !qp_rtr_rts(p->a, p->b->qp_num, &gid, gid_index, IBV_MTU_1024,
			   to, 7, 7) &&
	       !qp_rtr_rts(p->b, p->a->qp_num, &gid, gid_index, IBV_MTU_1024,
			   to, 7, 7);
}

/* One completion of @cq within the deadline: it must be wr_id @id, SUCCESS. */
static bool bys_wc(struct ibv_cq *cq, uint64_t id, uint32_t len)
{
	uint64_t end = now_ms() + 60000;
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			return ktap_expect(false, "bystander: poll_cq %d", n);
		if (n)
			return ktap_expect(wc.status == IBV_WC_SUCCESS &&
					   wc.wr_id == id &&
					   (!len || wc.byte_len == len),
					   "bystander: completion wr_id %llu status %s len %u, expected %llu SUCCESS len %u",
					   (unsigned long long)wc.wr_id,
					   ibv_wc_status_str(wc.status),
					   wc.byte_len, (unsigned long long)id,
					   len);
	} while (now_ms() < end);
	return ktap_expect(false, "bystander: no completion %llu in 60 s",
			   (unsigned long long)id);
}

static bool bys_same(const uint8_t *got, const uint8_t *want, size_t len,
		     const char *what, uint64_t it)
{
	int64_t i = bytes_differ(got, want, len);

	if (i < 0)
		return true;
	return ktap_expect(false, "bystander: iteration %llu: %s byte %zu of %zu is %#x, expected %#x",
			   (unsigned long long)it, what, (size_t)i, len, got[i],
			   want[i]);
}

/*
 * One round on @p: RDMA WRITE, SEND and a READ back of seeded patterns,
 * all signaled, all successful, every byte where it belongs.
 */
static bool bys_round(struct bpair *p, uint64_t it)
{
	uint32_t lw = 1 + rnd(BYS_LEN), ls = 1 + rnd(BYS_LEN);
	uint8_t *src = p->abuf, *ssrc = p->abuf + BYS_LEN,
		*rdst = p->abuf + 2 * BYS_LEN;
	uint8_t *wdst = p->bbuf, *rbuf = p->bbuf + BYS_LEN;
	struct ibv_sge rs = { (uintptr_t)rbuf, BYS_LEN, p->bmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = it, .sg_list = &rs, .num_sge = 1 };
	struct ibv_sge s[3] = {
		{ (uintptr_t)src, lw, p->amr->lkey },
		{ (uintptr_t)ssrc, ls, p->amr->lkey },
		{ (uintptr_t)rdst, lw, p->amr->lkey },
	};
	struct ibv_send_wr w[3] = {
		{ .wr_id = 3 * it, .sg_list = &s[0], .num_sge = 1,
		  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		  .wr.rdma = { (uintptr_t)wdst, p->bmr->rkey }, .next = &w[1] },
		{ .wr_id = 3 * it + 1, .sg_list = &s[1], .num_sge = 1,
		  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		  .next = &w[2] },
		{ .wr_id = 3 * it + 2, .sg_list = &s[2], .num_sge = 1,
		  .opcode = IBV_WR_RDMA_READ,
		  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE,
		  .wr.rdma = { (uintptr_t)wdst, p->bmr->rkey } },
	};
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;

	pattern(src, lw, it * 2);
	pattern(ssrc, ls, it * 2 + 1);
	memset(rdst, 0xee, lw);
	memset(rbuf, 0xee, ls);
	uint64_t t0 = now_ms();
	static const char *const cnt[] = {
		"retransmits", "retry_timeouts", "dup_requests", "drop_psn",
		"drop_nomem", "drop_qp_state", "seq_naks_rcvd",
	};
	unsigned int i;

	if (!ktap_expect(!ibv_post_recv(p->b, &rwr, &rbad) &&
			 !ibv_post_send(p->a, w, &bad),
			 "bystander: post: %s", strerror(errno)))
		return false;
	if (!bys_wc(p->cqa, 3 * it, 0) || !bys_wc(p->cqa, 3 * it + 1, 0) ||
	    !bys_wc(p->cqa, 3 * it + 2, 0) || !bys_wc(p->cqb, it, ls)) {
		ktap_print("bystander: round %llu (WRITE %u, SEND %u, READ %u bytes, QPs %u -> %u) failed %llu ms after posting; QP states %d, %d",
			   (unsigned long long)it, lw, ls, lw, p->a->qp_num,
			   p->b->qp_num, (unsigned long long)(now_ms() - t0),
			   qp_state(p->a), qp_state(p->b));
		for (i = 0; i < sizeof(cnt) / sizeof(cnt[0]); i++)
			ktap_print("bystander:   %s %lld", cnt[i],
				   (long long)hw_counter(ctx, cnt[i]));
		return false;
	}
	return bys_same(wdst, src, lw, "RDMA WRITE", it) &&
	       bys_same(rbuf, ssrc, ls, "SEND", it) &&
	       bys_same(rdst, src, lw, "RDMA READ", it);
}

/*
 * The bystander process: set up, tell the mutator (@wfd) the keys to aim
 * at, then move data until @stopfd is readable. Exit status 0: all well.
 */
static int bystander(const char *dev, int wfd, int stopfd, uint64_t seed)
{
	struct bys_info info = {};
	struct bpair p[2] = {};
	struct ibv_mr *cmr;
	struct ibv_ah *ah;
	struct ibv_ah_attr aha = {
		.is_global = 1,
		.grh = { .sgid_index = 0, .hop_limit = 64 },
		.port_num = 1,
	};
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};
	struct ibv_xrcd *xrcd;
	struct ibv_srq *xsrq;
	struct ibv_cq *xcq;
	struct ibv_wc wc;
	uint64_t it = 0, start;
	bool ok = true;
	int i;

	rng_seed(seed ^ 0xB7B7B7B7ull);
	ctx = open_by_name(dev);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid))
		goto fail;
	pd = ibv_alloc_pd(ctx);
	canary = aligned_alloc(4096, CANARY_LEN);
	if (!pd || !canary)
		goto fail;
	for (i = 0; i < CANARY_LEN; i += 256)
		pattern(canary + i, 256, 0xC0FFEE + i);
	cmr = ibv_reg_mr(pd, canary, CANARY_LEN,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			 IBV_ACCESS_MW_BIND);
	aha.grh.dgid = gid;
	aha.grh.sgid_index = gid_index;
	ah = ibv_create_ah(pd, &aha);
	if (!cmr || !ah || !bys_pair(&p[0]) || !bys_pair(&p[1]))
		goto fail;

	/*
	 * An XRC SRQ of the bystanders' own domain, its WQEs aimed at the
	 * canary: a victim naming its number must never reach it.
	 */
	xrcd = ibv_open_xrcd(ctx, &xa);
	xcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	sa.pd = pd;
	sa.xrcd = xrcd;
	sa.cq = xcq;
	xsrq = xrcd && xcq ? ibv_create_srq_ex(ctx, &sa) : NULL;
	if (!xsrq || ibv_get_srq_num(xsrq, &info.xsrqn))
		goto fail;
	for (i = 0; i < 4; i++) {
		struct ibv_sge sge = { (uintptr_t)canary + i * 4096, 4096,
				       cmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 0xCA0 + i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(xsrq, &wr, &bad))
			goto fail;
	}

	info.canary_addr = (uintptr_t)canary;
	info.canary_len = CANARY_LEN;
	info.canary_lkey = cmr->lkey;
	info.canary_rkey = cmr->rkey;
	info.data_addr = (uintptr_t)p[0].bbuf;
	info.data_lkey = p[0].bmr->lkey;
	info.data_rkey = p[0].bmr->rkey;
	info.ah_num = to_sah(ah)->ah_num;
	info.qpn[0] = p[0].a->qp_num;
	info.qpn[1] = p[0].b->qp_num;
	info.qpn[2] = p[1].a->qp_num;
	info.qpn[3] = p[1].b->qp_num;
	info.ok = 1;
	if (write(wfd, &info, sizeof(info)) != sizeof(info))
		return KSFT_FAIL;

	start = now_ms();
	for (;;) {
		struct pollfd pfd = { .fd = stopfd, .events = POLLIN };

		if (poll(&pfd, 1, 0) != 0)
			break;
		if (!bys_round(&p[it & 1], it)) {
			ok = false;
			break;
		}
		it++;
		if (!(it & 15) && !canary_intact()) {
			ok = false;
			break;
		}
	}
	ok = canary_intact() && ok;
	if (ibv_poll_cq(xcq, 1, &wc)) {
		ktap_print("bystander: its XRC SRQ took a message: wr_id %#llx status %s",
			   (unsigned long long)wc.wr_id,
			   ibv_wc_status_str(wc.status));
		ok = false;
	}
	if (to_ssrq(xsrq)->rq.hdr->consumer != 0) {
		ktap_print("bystander: its XRC SRQ's WQEs were taken (consumer %u)",
			   to_ssrq(xsrq)->rq.hdr->consumer);
		ok = false;
	}
	ktap_print("bystander: %llu rounds (WRITE + SEND + READ, %llu completions) in %llu ms, %s",
		   (unsigned long long)it, (unsigned long long)it * 4,
		   (unsigned long long)(now_ms() - start),
		   ok ? "all successful, byte-exact, canary intact" : "FAILED");
	/* Enough traffic to mean something: the mutator checks the count. */
	if (write(wfd, &it, sizeof(it)) != sizeof(it))
		return KSFT_FAIL;
	return ok ? KSFT_PASS : KSFT_FAIL;

fail:
	ktap_print("bystander: setup failed: %s", strerror(errno));
	if (write(wfd, &info, sizeof(info)) != sizeof(info))
		return KSFT_FAIL;
	return KSFT_FAIL;
}

/* ------------------------------------------------------ victims (parent) */

enum vtype { VG_RC, VG_UC, VG_UD, VG_SRQ, VG_XRC, VG_NUM };

static const char *const vtype_name[VG_NUM] = {
	"RC", "UC", "UD", "RC on SRQ", "XRC",
};

/* A victim group: a QP pair with its own CQ(s), SRQ, domain, AH. */
struct vgroup {
	enum vtype type;
	struct ibv_cq *cq;		/* both QPs' (the XRC initiator's) */
	struct ibv_cq *cq2;		/* XRC: the SRQ's */
	struct ibv_qp *qa, *qb;		/* XRC: initiator, target */
	struct ibv_srq *srq;		/* SRQ group's, XRC SRQ */
	struct ibv_xrcd *xrcd;
	struct ibv_ah *ah;		/* UD: to this port */
	uint32_t srqn;
	/*
	 * Per CQ (cq, cq2): we wrote its producer index, so poll_cq may read
	 * slots the kernel never wrote (until a resize gives the provider a
	 * fresh ring): what is polled there is not the kernel's to judge.
	 */
	uint8_t taint[2];
	uint32_t taint_end[2];
	uint32_t steps;
	uint8_t hist[8];		/* its last mutation kinds, for reports */
	/* Per CQ: what last moved its indices, for reports. */
	struct cq_event {
		uint32_t step, idx, prod, cons, slots;
		int32_t arg, ret;
		uint8_t what, taint;
	} cqlog[2][16];
	uint32_t ncqlog[2];
};

static struct vgroup groups[VG_NUM];

#define TAINT_PROD	1	/* until a resize */
#define TAINT_UNTIL	2	/* until the provider reaches taint_end */

enum { CE_RESIZE, CE_CONS, CE_PROD, CE_RESET, CE_NUM };
static const char *const ce_name[CE_NUM] = {
	"resize", "wild consumer", "wild producer", "QP reset",
};

/* Log what was done to @g's CQ @c and the ring as it is now. */
static void cq_note(struct vgroup *g, int c, int what, int32_t arg,
		    int32_t ret)
{
	const struct srdma_ring *r = &to_scq(c ? g->cq2 : g->cq)->ring;
	struct cq_event *e = &g->cqlog[c][g->ncqlog[c]++ % 16];

	*e = (struct cq_event){
		.step = g->steps, .idx = r->idx, .prod = r->hdr->producer,
		.cons = r->hdr->consumer, .slots = r->num_slots,
		.arg = arg, .ret = ret, .what = what, .taint = g->taint[c],
	};
}

/*
 * The first implausible completion, and the last changes of its CQ's
 * indices, printed again just before the check's result: CI's list of
 * failures shows the 8 comment lines before a "not ok", not the ones
 * printed minutes earlier.
 */
#define BAD_LOG_LINES	6
#define REPORT_LEN	256
static char bad_first[REPORT_LEN], bad_log[BAD_LOG_LINES][REPORT_LEN];
static unsigned int bad_log_lines;

static void __attribute__((format(printf, 2, 3)))
report_print(char keep[REPORT_LEN], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (keep) {
		vsnprintf(keep, REPORT_LEN, fmt, ap);
		ktap_print("%s", keep);
	} else {
		ktap_vprint(fmt, ap);
	}
	va_end(ap);
}

static void cq_log_print(const struct vgroup *g, int c, bool keep)
{
	uint32_t n = g->ncqlog[c], i = n > 16 ? n - 16 : 0;

	for (; i < n; i++) {
		const struct cq_event *e = &g->cqlog[c][i % 16];

		report_print(keep ? bad_log[bad_log_lines++ % BAD_LOG_LINES] :
			     NULL, "  step %u: %s %d -> %d; idx %u producer %u consumer %u slots %u taint %u",
			     e->step, ce_name[e->what], e->arg, e->ret, e->idx,
			     e->prod, e->cons, e->slots, e->taint);
	}
}

static struct bys_info bys;
static uint8_t *vbuf;
static struct ibv_mr *vmr;
static struct ibv_mw *vmw;
static uint32_t old_keys[8];

enum kind {
	K_SQ_FIELD, K_SQ_RAW, K_SQ_PROD, K_SQ_BACK, K_RQ_FIELD, K_RQ_PROD,
	K_SRQ_FIELD, K_SRQ_PROD, K_CONS, K_CQ_PROD, K_CQE, K_RESIZE,
	K_MODIFY, K_DESTROY, K_MR, K_BUSY, K_NUM
};

static const char *const kind_name[K_NUM] = {
	"sq_field", "sq_raw", "sq_prod", "sq_back", "rq_field", "rq_prod",
	"srq_field", "srq_prod", "cons", "cq_prod", "cqe", "resize",
	"modify", "destroy", "mr", "busy",
};

static uint64_t kind_count[K_NUM];
static bool kind_skip[K_NUM];
static uint64_t mutations, doorbells;
static uint64_t wc_status[256], wc_tainted, wc_total;
static uint64_t bad_wcs, odd_err_opcodes;
static atomic_ulong async_count[32];
static atomic_bool async_stop;

/* ------------------------------------------------------------ ring access */

static struct srdma_ring *sq_of(struct ibv_qp *qp)
{
	struct srdma_ring *r = &to_sqp(qp)->sq;

	return r->hdr ? r : NULL;
}

static struct srdma_ring *rq_of(struct ibv_qp *qp)
{
	struct srdma_ring *r = &to_sqp(qp)->rq;

	return r->hdr ? r : NULL;
}

static void set_prod(struct srdma_ring *r, uint32_t v)
{
	srdma_store_release(&r->hdr->producer, v);
}

/* The SQ doorbell the provider rings, counted. */
static int doorbell(struct ibv_qp *qp)
{
	doorbells++;
	return srdma_sq_doorbell(qp);
}

/* ------------------------------------------------------- value pools */

static uint32_t key_pool(void)
{
	switch (rnd(14)) {
	case 0: return vmr->lkey;
	case 1: return vmr->rkey;
	case 2: return bys.canary_lkey;
	case 3: return bys.canary_rkey;
	case 4: return bys.data_lkey;
	case 5: return bys.data_rkey;
	case 6: return old_keys[rnd(8)];
	case 7: return vmr->lkey + 0x100;	/* the next MR index */
	case 8: return vmr->lkey ^ (1 + rnd(255));	/* another key byte */
	case 9: return 0;
	case 10: return vmw->rkey;
	case 11: return bys.canary_lkey + 0x100;
	case 12: return 0xffffffff;
	default: return r32();
	}
}

static uint64_t addr_pool(void)
{
	switch (rnd(12)) {
	case 0: return (uintptr_t)vbuf;
	case 1: return (uintptr_t)vbuf + VBUF_LEN - rnd(16);
	case 2: return (uintptr_t)vbuf - 1 - rnd(4096);
	case 3: return bys.canary_addr + rnd(bys.canary_len);
	case 4: return bys.data_addr + rnd(BYS_LEN);
	case 5: return 0;
	case 6: return ~0ull - rnd(4096);
	case 7: return 0xffff888000000000ull + r32();	/* kernel memory */
	case 8: return (uintptr_t)vbuf + rnd(VBUF_LEN);
	case 9: return 1ull << 63;
	case 10: return bys.canary_addr + bys.canary_len - 8;
	default: return r64();
	}
}

static uint32_t len_pool(void)
{
	static const uint32_t v[] = {
		0, 1, 8, 4096, VBUF_LEN, VBUF_LEN + 1, 0x7fffffff,
		0x80000000, 0xffffffff, 1u << 30, (1u << 30) + 1, 65536,
	};

	return rnd(4) ? v[rnd(sizeof(v) / sizeof(v[0]))] :
			(rnd(2) ? rnd(8192) : r32());
}

static uint32_t count_pool(uint32_t max)
{
	switch (rnd(8)) {
	case 0: return r32();
	case 1: return 0xffffffff;
	case 2: return max + 1;
	case 3: return max;
	case 4: return 0;
	case 5: return 0x80000000;
	case 6: return 33;		/* the kernel's SGE limit + 1 */
	default: return rnd(max + 2);
	}
}

static uint32_t opcode_pool(void)
{
	switch (rnd(6)) {
	case 0: return 31;		/* SRDMA_WR_REG_MR: kernel only */
	case 1: return r32();
	case 2: return 32 + rnd(256);
	case 3: return 0x80000000 | rnd(16);
	default: return rnd(13);	/* IBV_WR_* incl. TSO, DRIVER1 */
	}
}

static uint32_t flags_pool(void)
{
	switch (rnd(4)) {
	case 0: return r32();
	case 1: return IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	default: return r32() & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				 IBV_SEND_SOLICITED | IBV_SEND_INLINE |
				 IBV_SEND_IP_CSUM);
	}
}

static uint32_t qpn_pool(void)
{
	switch (rnd(10)) {
	case 0: return 0;
	case 1: return 1;
	case 2: case 3: return bys.qpn[rnd(4)];
	case 4: return groups[rnd(VG_NUM)].qa ? groups[rnd(VG_NUM)].qa->qp_num : 0;
	case 5: return 0xffffff;
	case 6: return 0xffffffff;
	default: return rnd(2) ? r32() : r32() & 0xffffff;
	}
}

static uint32_t index_near(uint32_t idx, uint32_t n)
{
	switch (rnd(9)) {
	case 0: return idx + 1;
	case 1: return idx + n;
	case 2: return idx + n + 1;
	case 3: return idx - 1;
	case 4: return idx - n;
	case 5: return idx + 0x80000000u;
	case 6: return 0;
	case 7: return idx + rnd(n);
	default: return r32();
	}
}

/* ----------------------------------------------------------- QP states */

static int qp_init(struct vgroup *g, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
		.qkey = QKEY,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (g->type == VG_UD)
		mask |= IBV_QP_QKEY;
	else
		mask |= IBV_QP_ACCESS_FLAGS;
	if (g->type == VG_UC)
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (g->type == VG_XRC && qp == g->qa)
		a.qp_access_flags = 0;
	return ibv_modify_qp(qp, &a, mask);
}

/* INIT -> RTR -> RTS toward @peer; short retry budgets: errors end fast. */
static int qp_rts(struct vgroup *g, struct ibv_qp *qp, struct ibv_qp *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qp_num,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
			.port_num = 1,
		},
	};
	int ret;

	if (g->type == VG_RC || g->type == VG_SRQ || g->type == VG_XRC)
		return qp_rtr_rts(qp, peer->qp_num, &gid, gid_index,
				  IBV_MTU_1024, 8, 2, 1);
	if (g->type == VG_UD)
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	else
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int qp_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/*
 * A QP reset drops the QP's unpolled CQEs (the provider's
 * srdma_cq_clean()), sliding the others toward the producer index: slots
 * the kernel never wrote, let in by a resize after a wild index, move
 * with them past where they ended, so now everything up to the producer
 * index is unverified.
 */
static void reset_noted(struct vgroup *g, uint32_t qpn, int ret)
{
	int c;

	for (c = 0; c < 2; c++) {
		struct ibv_cq *cq = c ? g->cq2 : g->cq;

		if (cq && g->taint[c] == TAINT_UNTIL)
			g->taint_end[c] = srdma_load_acquire(
				&to_scq(cq)->ring.hdr->producer);
	}
	cq_note(g, 0, CE_RESET, (int32_t)qpn, ret);
}

/* Both QPs of @g from whatever state to RTS, connected afresh. */
static int group_revive(struct vgroup *g)
{
	int ret;

	ret = qp_reset(g->qa) ?: qp_reset(g->qb);
	reset_noted(g, -1, ret);
	ret = ret ?: qp_init(g, g->qa) ?: qp_init(g, g->qb) ?:
	      qp_rts(g, g->qa, g->qb) ?: qp_rts(g, g->qb, g->qa);
	return ret;
}

/* ----------------------------------------------------- group lifetime */

static struct ibv_srq *xsrq_new(struct vgroup *g)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 16, .max_sge = 4 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = g->xrcd,
		.cq = g->cq2,
	};
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &sa);

	if (srq && ibv_get_srq_num(srq, &g->srqn)) {
		ibv_destroy_srq(srq);
		srq = NULL;
	}
	return srq;
}

static void group_close(struct vgroup *g)
{
	if (g->qa && ibv_destroy_qp(g->qa))
		ktap_print("destroy_qp: %s", strerror(errno));
	if (g->qb && ibv_destroy_qp(g->qb))
		ktap_print("destroy_qp: %s", strerror(errno));
	if (g->srq && ibv_destroy_srq(g->srq))
		ktap_print("destroy_srq: %s", strerror(errno));
	if (g->cq && ibv_destroy_cq(g->cq))
		ktap_print("destroy_cq: %s", strerror(errno));
	if (g->cq2 && ibv_destroy_cq(g->cq2))
		ktap_print("destroy_cq: %s", strerror(errno));
	if (g->ah && ibv_destroy_ah(g->ah))
		ktap_print("destroy_ah: %s", strerror(errno));
	if (g->xrcd && ibv_close_xrcd(g->xrcd))
		ktap_print("close_xrcd: %s", strerror(errno));
	g->qa = g->qb = NULL;
	g->srq = NULL;
	g->cq = g->cq2 = NULL;
	g->ah = NULL;
	g->xrcd = NULL;
}

static int group_open(struct vgroup *g, enum vtype type)
{
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
	};
	int ret;

	memset(g, 0, sizeof(*g));
	g->type = type;
	g->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!g->cq)
		return errno;
	init.send_cq = init.recv_cq = g->cq;

	switch (type) {
	case VG_XRC: {
		struct ibv_xrcd_init_attr xa = {
			.comp_mask = IBV_XRCD_INIT_ATTR_FD |
				     IBV_XRCD_INIT_ATTR_OFLAGS,
			.fd = -1, .oflags = O_CREAT,
		};
		struct ibv_qp_init_attr_ex ini = {
			.qp_type = IBV_QPT_XRC_SEND,
			.send_cq = g->cq,
			.cap = init.cap,
			.comp_mask = IBV_QP_INIT_ATTR_PD,
			.pd = pd,
		};
		struct ibv_qp_init_attr_ex tgt = {
			.qp_type = IBV_QPT_XRC_RECV,
			.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		};

		ini.cap.max_recv_wr = ini.cap.max_recv_sge = 0;
		g->xrcd = ibv_open_xrcd(ctx, &xa);
		g->cq2 = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		if (!g->xrcd || !g->cq2)
			return errno;
		tgt.xrcd = g->xrcd;
		g->srq = xsrq_new(g);
		if (!g->srq)
			return errno;
		g->qa = ibv_create_qp_ex(ctx, &ini);
		if (!g->qa)
			return errno;
		g->qb = ibv_create_qp_ex(ctx, &tgt);
		if (!g->qb)
			return errno;
		break;
	}
	case VG_SRQ: {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 16, .max_sge = 4 },
		};

		g->srq = ibv_create_srq(pd, &sa);
		if (!g->srq)
			return errno;
		init.qp_type = IBV_QPT_RC;
		g->qa = ibv_create_qp(pd, &init);
		if (!g->qa)
			return errno;
		init.srq = g->srq;
		g->qb = ibv_create_qp(pd, &init);
		if (!g->qb)
			return errno;
		break;
	}
	case VG_UD: {
		struct ibv_ah_attr aha = {
			.is_global = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
			.port_num = 1,
		};

		g->ah = ibv_create_ah(pd, &aha);
		if (!g->ah)
			return errno;
	}
		/* fall through */
	default:
		init.qp_type = type == VG_RC ? IBV_QPT_RC :
			       type == VG_UC ? IBV_QPT_UC : IBV_QPT_UD;
		g->qa = ibv_create_qp(pd, &init);
		if (!g->qa)
			return errno;
		g->qb = ibv_create_qp(pd, &init);
		if (!g->qb)
			return errno;
		break;
	}
	ret = group_revive(g);
	return ret;
}

/* ------------------------------------------------------------- polling */

/* IBV_WC_FLUSH: rdma-core names it from 45 on. */
#define WC_FLUSH	8

static bool known_wc_opcode(int op)
{
	return (op >= IBV_WC_SEND && op <= IBV_WC_LOCAL_INV) ||
	       op == IBV_WC_TSO || op == WC_FLUSH ||
	       op == IBV_WC_ATOMIC_WRITE || op == IBV_WC_RECV ||
	       op == IBV_WC_RECV_RDMA_WITH_IMM;
}

static bool qpn_of_group(const struct vgroup *g, uint32_t qpn)
{
	return (g->qa && qpn == g->qa->qp_num) ||
	       (g->qb && qpn == g->qb->qp_num);
}

/*
 * Tally one completion of @g's CQ @c (0: cq, 1: cq2); the kernel's must be
 * plausible: a verbs status, a QP of the CQ, an opcode if successful (an
 * error's opcode is undefined in verbs; odd ones are only counted).
 */
static void wc_check(struct vgroup *g, int c, const struct ibv_wc *wc)
{
	wc_total++;
	if (g->taint[c]) {
		wc_tainted++;
		return;
	}
	wc_status[wc->status & 0xff]++;
	if (wc->status && !known_wc_opcode(wc->opcode) && odd_err_opcodes++ < 3)
		ktap_print("note: an error completion (%s) with opcode %u, not a verbs one",
			   ibv_wc_status_str(wc->status), wc->opcode);
	if (wc->status > IBV_WC_GENERAL_ERR ||
	    (!wc->status && !known_wc_opcode(wc->opcode)) ||
	    !qpn_of_group(g, wc->qp_num)) {
		if (bad_wcs++ < 10) {
			const struct srdma_ring *r =
				&to_scq(c ? g->cq2 : g->cq)->ring;
			uint32_t i, st = g->steps;
			char h[128];
			size_t l = 0;

			for (i = st > 8 ? st - 8 : 0; i < st; i++)
				l += snprintf(h + l, sizeof(h) - l, " %s",
					      g->hist[i % 8] < K_NUM ?
					      kind_name[g->hist[i % 8]] :
					      "traffic");
			report_print(bad_wcs == 1 ? bad_first : NULL,
				     "implausible completion on a %s CQ%d: status %u opcode %u qp_num %u wr_id %#llx; ring idx %u producer %u consumer %u slots %u; last steps:%s",
				     vtype_name[g->type], c, wc->status,
				     wc->opcode, wc->qp_num,
				     (unsigned long long)wc->wr_id, r->idx,
				     r->hdr->producer, r->hdr->consumer,
				     r->num_slots, h);
			if (bad_wcs == 1) {
				ktap_print(" the CQ's last index changes (of %u), step now %u, taint %u until %u:",
					   g->ncqlog[c], g->steps, g->taint[c],
					   g->taint_end[c]);
				cq_log_print(g, c, true);
			}
		}
	}
}

static int poll_group(struct vgroup *g)
{
	struct ibv_wc wc[16];
	int n, i, total = 0;

	n = ibv_poll_cq(g->cq, 16, wc);
	for (i = 0; i < n; i++)
		wc_check(g, 0, &wc[i]);
	total += n > 0 ? n : 0;
	if (g->cq2) {
		n = ibv_poll_cq(g->cq2, 16, wc);
		for (i = 0; i < n; i++)
			wc_check(g, 1, &wc[i]);
		total += n > 0 ? n : 0;
	}
	for (i = 0; i < 2; i++)
		if (g->taint[i] == TAINT_UNTIL &&
		    (int32_t)(to_scq(i ? g->cq2 : g->cq)->ring.idx -
			      g->taint_end[i]) >= 0)
			g->taint[i] = 0;
	return total;
}

/* Wait for the completion of @wr_id on @cq; its status, or -1. */
static int wait_wc(struct vgroup *g, struct ibv_cq *cq, uint64_t wr_id)
{
	uint64_t end = now_ms() + WAIT_MS;
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n) {
			wc_check(g, cq == g->cq2, &wc);
			if (wc.wr_id == wr_id)
				return wc.status;
		}
	} while (now_ms() < end);
	return -1;
}

/* --------------------------------------------------------- async events */

static void *async_thread(void *arg)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	(void)arg;
	while (!atomic_load(&async_stop)) {
		if (poll(&pfd, 1, 100) != 1)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			continue;
		atomic_fetch_add(&async_count[ev.event_type & 31], 1);
		ibv_ack_async_event(&ev);
	}
	return NULL;
}

/* ------------------------------------------------------- WQE building */

static bool qp_sends(const struct vgroup *g, struct ibv_qp *qp)
{
	return sq_of(qp) != NULL && !(g->type == VG_XRC && qp == g->qb);
}

static struct ibv_qp *peer_of(struct vgroup *g, struct ibv_qp *qp)
{
	return qp == g->qa ? g->qb : g->qa;
}

/* A valid opcode of @g's transport. */
static uint32_t valid_opcode(const struct vgroup *g)
{
	static const uint32_t rc[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_SEND_WITH_INV, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
	};

	switch (g->type) {
	case VG_UD:
		return rnd(2) ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
	case VG_UC:
		return rc[rnd(4)];
	default:
		return rc[rnd(10)];
	}
}

/* A sound WQE of @op for @qp of @g into @w (slot_size bytes). */
static void wqe_base(struct vgroup *g, struct ibv_qp *qp,
		     struct softrdma_send_wqe *w, uint32_t op, uint64_t wr_id)
{
	uint32_t len = 1 + rnd(2048);

	memset(w, 0, sizeof(*w) + sizeof(struct softrdma_sge));
	w->wr_id = wr_id;
	w->opcode = op;
	w->send_flags = IBV_SEND_SIGNALED;
	w->num_sge = 1;
	w->sge[0].addr = (uintptr_t)vbuf + rnd(VBUF_LEN / 2);
	w->sge[0].length = len;
	w->sge[0].lkey = vmr->lkey;
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->wr.rdma.remote_addr = (uintptr_t)vbuf + VBUF_LEN / 2 +
					 rnd(VBUF_LEN / 4);
		w->wr.rdma.rkey = vmr->rkey;
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		w->sge[0].length = 8;
		w->sge[0].addr &= ~7ull;
		w->wr.atomic.remote_addr = ((uintptr_t)vbuf + VBUF_LEN / 2 +
					    rnd(VBUF_LEN / 4)) & ~7ull;
		w->wr.atomic.rkey = vmr->rkey;
		w->wr.atomic.compare_add = r64();
		w->wr.atomic.swap = r64();
		break;
	case IBV_WR_BIND_MW:
		w->num_sge = 0;
		w->wr.bind.addr = (uintptr_t)vbuf;
		w->wr.bind.length = 4096;
		w->wr.bind.mr_lkey = vmr->lkey;
		w->wr.bind.mw_rkey = vmw->rkey;
		w->wr.bind.new_rkey = ibv_inc_rkey(vmw->rkey);
		w->wr.bind.access = IBV_ACCESS_REMOTE_WRITE;
		break;
	case IBV_WR_LOCAL_INV:
		w->num_sge = 0;
		w->ex = vmw->rkey;
		break;
	case IBV_WR_SEND_WITH_INV:
		w->ex = vmw->rkey;
		break;
	default:
		w->ex = r32();
		break;
	}
	if (g->type == VG_UD) {
		w->sge[0].length = 1 + rnd(512);
		w->wr.ud.remote_qpn = peer_of(g, qp)->qp_num;
		w->wr.ud.remote_qkey = QKEY;
		w->wr.ud.ah_num = to_sah(g->ah)->ah_num;
		w->wr.ud.reserved = 0;
	}
	if (g->type == VG_XRC)
		w->xrc_srqn = g->srqn;
}

/* Garble one field of send WQE @w (@room: bytes of SGEs/inline after it). */
static void wqe_garble(struct softrdma_send_wqe *w, uint32_t room)
{
	uint32_t nsge = room / sizeof(struct softrdma_sge);
	struct softrdma_sge *s = &w->sge[rnd(nsge)];

	switch (rnd(20)) {
	case 0: w->opcode = opcode_pool(); break;
	case 1: w->send_flags = flags_pool(); break;
	case 2: w->num_sge = count_pool(nsge); break;
	case 3: s->length = len_pool(); break;
	case 4: s->lkey = key_pool(); break;
	case 5: s->addr = addr_pool(); break;
	case 6:
		w->send_flags |= IBV_SEND_INLINE;
		w->inline_len = count_pool(room);
		break;
	case 7: w->wr.rdma.rkey = key_pool(); break;
	case 8: w->wr.rdma.remote_addr = addr_pool(); break;
	case 9:
		w->wr.atomic.rkey = key_pool();
		w->wr.atomic.remote_addr = addr_pool() | rnd(8);
		break;
	case 10:
		w->wr.bind.mr_lkey = key_pool();
		w->wr.bind.mw_rkey = rnd(2) ? vmw->rkey : key_pool();
		break;
	case 11:
		w->wr.bind.addr = addr_pool();
		w->wr.bind.length = rnd(2) ? r64() : len_pool();
		w->wr.bind.access = r32();
		w->wr.bind.new_rkey = key_pool();
		break;
	case 12: w->wr.ud.ah_num = rnd(2) ? bys.ah_num : rnd(4) ? rnd(64) : r32(); break;
	case 13: w->wr.ud.remote_qpn = qpn_pool(); break;
	case 14: w->wr.ud.remote_qkey = rnd(2) ? r32() : 0x80010000u; break;
	case 15: w->xrc_srqn = rnd(3) == 0 ? r32() :
			       rnd(2) ? bys.xsrqn : groups[VG_XRC].srqn + rnd(3) - 1;
		 break;
	case 16: w->ex = key_pool(); break;
	case 17: w->wr_id = r64(); break;
	case 18:
		w->wr.atomic.compare_add = r64();
		w->wr.atomic.swap = r64();
		break;
	default:
		w->wr.ud.reserved = r32();
		w->sge[nsge ? rnd(nsge) : 0].lkey = bys.canary_lkey;
		break;
	}
}

static void recv_garble(struct softrdma_recv_wqe *w, uint32_t room)
{
	uint32_t nsge = room / sizeof(struct softrdma_sge);
	struct softrdma_sge *s = &w->sge[rnd(nsge)];

	switch (rnd(6)) {
	case 0: w->num_sge = count_pool(nsge); break;
	case 1: s->length = len_pool(); break;
	case 2: s->lkey = key_pool(); break;
	case 3: s->addr = addr_pool(); break;
	case 4: w->reserved = r32(); w->wr_id = r64(); break;
	default: {
		uint32_t i;

		for (i = 0; i < nsge; i++) {
			w->sge[i].addr = addr_pool();
			w->sge[i].length = len_pool();
			w->sge[i].lkey = key_pool();
		}
		break;
	}
	}
}

static void recv_base(struct softrdma_recv_wqe *w, uint64_t wr_id)
{
	w->wr_id = wr_id;
	w->num_sge = 1;
	w->reserved = 0;
	w->sge[0].addr = (uintptr_t)vbuf + VBUF_LEN / 2 + rnd(VBUF_LEN / 4);
	w->sge[0].length = 4096;
	w->sge[0].lkey = vmr->lkey;
}

/* ---------------------------------------------------------- mutations */

/*
 * A resize starts the provider afresh on a new ring, with the entries the
 * kernel took for unpolled: those between the consumer index and its own.
 * After a wild producer or consumer index they may be slots the kernel
 * never wrote; once the provider has read them all, it is on firm ground.
 */
static void cq_resize(struct vgroup *g, int c, int cqe)
{
	struct ibv_cq *cq = c ? g->cq2 : g->cq;
	int ret = ibv_resize_cq(cq, cqe);

	if (!ret && g->taint[c]) {
		g->taint[c] = TAINT_UNTIL;
		g->taint_end[c] =
			srdma_load_acquire(&to_scq(cq)->ring.hdr->producer);
	}
	cq_note(g, c, CE_RESIZE, cqe, ret);
}

static bool can(enum kind k)
{
	return !kind_skip[k];
}

static struct vgroup *cur_group;

static void counted(enum kind k, unsigned int n)
{
	kind_count[k] += n;
	mutations += n;
	if (cur_group)
		cur_group->hist[(cur_group->steps - 1) % 8] = k;
}

/* A valid send from @qp to its peer: the trigger for the peer's RQ. */
static void valid_send(struct vgroup *g, struct ibv_qp *qp)
{
	struct ibv_sge sge = { (uintptr_t)vbuf + rnd(4096), 1 + rnd(512),
			       vmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x5e4d, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (g->type == VG_UD) {
		wr.wr.ud.ah = g->ah;
		wr.wr.ud.remote_qpn = peer_of(g, qp)->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	if (g->type == VG_XRC)
		wr.qp_type.xrc.remote_srqn = g->srqn;
	/* Fails in a state that takes no sends: fine. */
	ibv_post_send(qp, &wr, &bad);
}

static void valid_recv(struct vgroup *g)
{
	struct ibv_sge sge = { (uintptr_t)vbuf + VBUF_LEN / 2, 4096,
			       vmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 0x5ecf, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (g->srq)
		ibv_post_srq_recv(g->srq, &wr, &bad);
	if (rq_of(g->qa))
		ibv_post_recv(g->qa, &wr, &bad);
	if (rq_of(g->qb))
		ibv_post_recv(g->qb, &wr, &bad);
}

/* SQ: 1-3 WQEs at the provider's index, some fields garbled, doorbell. */
static void mut_sq_wqes(struct vgroup *g, struct ibv_qp *qp)
{
	struct srdma_ring *sq = sq_of(qp);
	uint32_t room = sq->slot_size - sizeof(struct softrdma_send_wqe);
	uint32_t k = 1 + rnd(3), j, m, n = 0;

	for (j = 0; j < k; j++) {
		struct softrdma_send_wqe *w = srdma_ring_slot(sq, sq->idx + j);

		if (can(K_SQ_RAW) && !rnd(8)) {
			uint64_t *p = (uint64_t *)w;
			uint32_t i;

			for (i = 0; i < sq->slot_size / 8; i++)
				p[i] = r64();
			counted(K_SQ_RAW, 1);
			continue;
		}
		wqe_base(g, qp, w, valid_opcode(g), 0x100 + j);
		if (!can(K_SQ_FIELD))
			continue;
		for (m = rnd(4); m; m--, n++)
			wqe_garble(w, room);
	}
	counted(K_SQ_FIELD, n);
	sq->idx += k;
	set_prod(sq, sq->idx);
	doorbell(qp);
}

/* SQ producer index: anywhere, then the doorbell. */
static void mut_sq_prod(struct vgroup *g, struct ibv_qp *qp)
{
	struct srdma_ring *sq = sq_of(qp);
	uint32_t v;
	int tries = 0;

	(void)g;
	do {
		v = index_near(sq->idx, sq->num_slots);
		/* Without sq_back: never behind what may have been fetched. */
	} while (!can(K_SQ_BACK) && sq->idx - v - 1 < 2 * sq->num_slots &&
		 ++tries < 10);
	if (!can(K_SQ_BACK) && sq->idx - v - 1 < 2 * sq->num_slots)
		v = sq->idx + sq->num_slots + 1;
	set_prod(sq, v);
	counted(K_SQ_PROD, 1);
	doorbell(qp);
	/*
	 * Half the time the provider goes on from there (a forward move
	 * within the ring runs whatever the slots hold), else its next post
	 * publishes its own index again.
	 */
	if (rnd(2) && v - sq->idx <= sq->num_slots)
		sq->idx = v;
}

/* The producer moved back below what the kernel may have fetched. */
static void mut_sq_back(struct vgroup *g, struct ibv_qp *qp)
{
	struct srdma_ring *sq = sq_of(qp);
	uint32_t back = 1 + rnd(sq->num_slots + 1);

	/* Work in flight first, so the kernel has fetched ahead. */
	mut_sq_wqes(g, qp);
	set_prod(sq, sq->idx - back);
	counted(K_SQ_BACK, 1);
	doorbell(qp);
	if (rnd(2)) {
		set_prod(sq, sq->idx);
		doorbell(qp);
	}
}

/* RQ or SRQ: WQEs with garbled fields, or a wild producer; a trigger. */
static void mut_rq(struct vgroup *g, struct srdma_ring *rq, bool srq,
		   struct ibv_qp *sender)
{
	uint32_t room = rq->slot_size - sizeof(struct softrdma_recv_wqe);
	enum kind kf = srq ? K_SRQ_FIELD : K_RQ_FIELD;
	enum kind kp = srq ? K_SRQ_PROD : K_RQ_PROD;

	if (can(kp) && !rnd(4)) {
		uint32_t v = index_near(rq->idx, rq->num_slots);

		set_prod(rq, v);
		counted(kp, 1);
		if (rnd(2) && v - rq->idx <= rq->num_slots)
			rq->idx = v;
	} else {
		uint32_t k = 1 + rnd(2), j, m, n = 0;

		for (j = 0; j < k; j++) {
			struct softrdma_recv_wqe *w =
				srdma_ring_slot(rq, rq->idx + j);

			recv_base(w, 0x200 + j);
			if (!can(kf))
				continue;
			for (m = 1 + rnd(3); m; m--, n++)
				recv_garble(w, room);
		}
		counted(kf, n);
		rq->idx += k;
		set_prod(rq, rq->idx);
	}
	if (sender && qp_sends(g, sender))
		valid_send(g, sender);
}

/* The kernel's own index of a ring, written by us: it must not care. */
static void mut_cons(struct vgroup *g)
{
	struct srdma_ring *r[5];
	int n = 0;
	struct srdma_ring *t;

	if (sq_of(g->qa))
		r[n++] = sq_of(g->qa);
	if (rq_of(g->qa))
		r[n++] = rq_of(g->qa);
	if (rq_of(g->qb))
		r[n++] = rq_of(g->qb);
	if (g->srq)
		r[n++] = &to_ssrq(g->srq)->rq;
	r[n++] = &to_scq(g->cq)->ring;
	t = r[rnd(n)];
	counted(K_CONS, 1);
	if (t != &to_scq(g->cq)->ring) {
		srdma_store_release(&t->hdr->consumer,
				    index_near(t->hdr->consumer, t->num_slots));
		if (qp_sends(g, g->qa))
			doorbell(g->qa);
		return;
	}
	/*
	 * The CQ's consumer index is the provider's, which publishes it
	 * again with its next poll: meanwhile the kernel goes by ours (a full
	 * CQ, or a resize that takes stale slots for unpolled).
	 */
	srdma_store_release(&t->hdr->consumer, index_near(t->idx, t->num_slots));
	cq_note(g, 0, CE_CONS, (int32_t)(t->hdr->consumer - t->idx), 0);
	if (qp_sends(g, g->qa))
		doorbell(g->qa);
	if (rnd(2)) {
		uint8_t was = g->taint[0];

		g->taint[0] = TAINT_PROD;
		cq_resize(g, 0, 1 + rnd(128));
		if (g->taint[0] == TAINT_PROD)
			g->taint[0] = was;	/* refused: nothing changed */
	}
	srdma_ring_cons_publish(&to_scq(g->cq)->ring);
}

static bool mut_destroy(struct vgroup *g);

/*
 * The CQ's producer index or CQEs: the kernel's, written by us. CQE bytes
 * go into slots the provider has consumed and the kernel has not filled
 * again (it only ever writes them), so what poll_cq returns stays the
 * kernel's. A wild producer index makes poll_cq return slots the kernel
 * never wrote: those are counted apart until a resize gives the provider
 * a fresh ring, or, if the CQ cannot be resized any more (the provider's
 * consumer index went past the kernel's producer), the group is rebuilt.
 */
static bool mut_cq(struct vgroup *g)
{
	int c = g->cq2 && rnd(2);
	struct ibv_cq *cq = c ? g->cq2 : g->cq;
	struct srdma_ring *r = &to_scq(cq)->ring;
	uint32_t used = srdma_load_acquire(&r->hdr->producer) - r->idx;

	if (can(K_CQE) && (rnd(16) || !can(K_CQ_PROD))) {
		struct softrdma_cqe *e;

		uint32_t at;

		if (g->taint[c] || r->num_slots < 16 ||
		    used >= r->num_slots / 4)
			return true;
		/*
		 * The kernel may fill the slot again as soon as it is a lap
		 * ahead (a QP's flush can be that burst): the consumer index
		 * at the slot holds it off until the bytes are in, checked
		 * against a write already under way (one past the producer).
		 */
		at = r->idx - 1 - rnd(r->num_slots / 2);
		srdma_store_release(&r->hdr->consumer, at);
		atomic_thread_fence(memory_order_seq_cst);
		if (srdma_load_acquire(&r->hdr->producer) - at <
		    r->num_slots - 1) {
			e = srdma_ring_slot(r, at);
			e->status = r32();
			e->opcode = r32();
			e->qp_num = rnd(2) ? r32() : bys.qpn[rnd(4)];
			e->byte_len = r32();
			e->wr_id = r64();
			counted(K_CQE, 1);
		}
		srdma_ring_cons_publish(r);
		return true;
	}
	if (!can(K_CQ_PROD))
		return true;
	/*
	 * The kernel never reads it (it stores its own): only a poll
	 * between here and the resize would take the provider astray.
	 */
	set_prod(r, index_near(r->idx, r->num_slots));
	g->taint[c] = TAINT_PROD;
	cq_note(g, c, CE_PROD, (int32_t)(r->hdr->producer - r->idx), 0);
	counted(K_CQ_PROD, 1);
	if (qp_sends(g, g->qa))
		doorbell(g->qa);
	if (!rnd(4))
		poll_group(g);
	/* Room for whatever is unpolled: only a provider gone astray fails. */
	cq_resize(g, c, r->num_slots > 64 ? r->num_slots : 64);
	if (g->taint[c] && can(K_DESTROY))
		return mut_destroy(g);
	return true;
}

static void mut_resize(struct vgroup *g)
{
	static const int sizes[] = { 0, -1, 1, 2, 15, 16, 64, 256, 0x8000,
				     0x8001, 0x7fffffff };
	int c = g->cq2 && rnd(2);

	cq_resize(g, c, rnd(3) ? 1 + (int)rnd(512) :
		  sizes[rnd(sizeof(sizes) / sizeof(sizes[0]))]);
	counted(K_RESIZE, 1);
}

static void mut_modify(struct vgroup *g)
{
	static const enum ibv_qp_state st[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR,
	};
	struct ibv_qp *qp = rnd(2) ? g->qa : g->qb;
	struct ibv_qp_attr a = { .qp_state = st[rnd(7)] };
	int ret;

	switch (rnd(4)) {
	case 0:
		group_revive(g);
		break;
	case 1:
		reset_noted(g, qp->qp_num, qp_reset(qp));
		qp_init(g, qp);
		if (rnd(2))
			qp_rts(g, qp, peer_of(g, qp));
		break;
	default:
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		if (a.qp_state == IBV_QPS_RESET)
			reset_noted(g, qp->qp_num, ret);
		break;
	}
	counted(K_MODIFY, 1);
}

/* Destroy a group under traffic (work posted, doorbell rung) and rebuild. */
static bool mut_destroy(struct vgroup *g)
{
	enum vtype type = g->type;
	int ret;

	if (qp_sends(g, g->qa))
		mut_sq_wqes(g, g->qa);
	valid_recv(g);
	if (qp_sends(g, g->qb))
		valid_send(g, g->qb);
	group_close(g);
	counted(K_DESTROY, 1);
	ret = group_open(g, type);
	return ktap_expect(!ret, "recreate the %s group: %s",
			   vtype_name[type], strerror(ret));
}

/* Deregister the victims' MR under traffic and register it again. */
static bool mut_mr(void)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		     IBV_ACCESS_MW_BIND;
	int i;

	for (i = 0; i < VG_NUM; i++)
		if (qp_sends(&groups[i], groups[i].qa))
			mut_sq_wqes(&groups[i], groups[i].qa);
	old_keys[rnd(8)] = vmr->lkey;
	old_keys[rnd(8)] = vmr->rkey;
	/* A window bound to it keeps it: the window goes first then. */
	if (ibv_dereg_mr(vmr)) {
		old_keys[rnd(8)] = vmw->rkey;
		if (!ktap_expect(!ibv_dealloc_mw(vmw), "dealloc_mw: %s",
				 strerror(errno)))
			return false;
		vmw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!ktap_expect(vmw && !ibv_dereg_mr(vmr),
				 "dereg_mr with no window bound: %s",
				 strerror(errno)))
			return false;
	}
	vmr = ibv_reg_mr(pd, vbuf, VBUF_LEN, access);
	counted(K_MR, 1);
	return ktap_expect(vmr, "reg_mr: %s", strerror(errno));
}

/*
 * What is in use cannot be destroyed: EBUSY, the object unharmed. An XRC
 * SRQ is not attached to its target QP: it goes under traffic and a new
 * one (a new number) takes its place.
 */
static bool mut_busy(struct vgroup *g)
{
	if (g->type == VG_XRC) {
		valid_recv(g);
		valid_send(g, g->qa);
		if (!ktap_expect(!ibv_destroy_srq(g->srq),
				 "destroy_srq of an XRC SRQ: %s",
				 strerror(errno)))
			return false;
		g->srq = xsrq_new(g);
		counted(K_DESTROY, 1);
		return ktap_expect(g->srq, "recreate an XRC SRQ: %s",
				   strerror(errno));
	}
	if (rnd(2) || g->type != VG_SRQ)
		ktap_expect(ibv_destroy_cq(g->cq) != 0,
			    "destroy_cq of a CQ in use succeeded");
	else
		ktap_expect(ibv_destroy_srq(g->srq) != 0,
			    "destroy_srq of an SRQ in use succeeded");
	counted(K_BUSY, 1);
	return true;
}

/* One step: a burst of mutations on one group, then polling. */
static bool step(void)
{
	struct vgroup *g = &groups[rnd(VG_NUM)];
	struct ibv_qp *qp = rnd(2) ? g->qa : g->qb;
	uint32_t r = rnd(1000);

	if (!qp_sends(g, qp))
		qp = g->qa;
	g->steps++;
	g->hist[(g->steps - 1) % 8] = K_NUM;
	cur_group = g;
	if (r < 400 && (can(K_SQ_FIELD) || can(K_SQ_RAW))) {
		mut_sq_wqes(g, qp);
	} else if (r < 470 && can(K_SQ_PROD)) {
		mut_sq_prod(g, qp);
	} else if (r < 480 && can(K_SQ_BACK)) {
		mut_sq_back(g, qp);
	} else if (r < 640) {
		struct ibv_qp *rqp = rnd(2) ? g->qa : g->qb;

		if (g->srq && (rnd(2) || !rq_of(rqp)))
			mut_rq(g, &to_ssrq(g->srq)->rq, true, g->qa);
		else if (rq_of(rqp))
			mut_rq(g, rq_of(rqp), false, peer_of(g, rqp));
	} else if (r < 700 && can(K_CONS)) {
		mut_cons(g);
	} else if (r < 740) {
		if (!mut_cq(g))
			return false;
	} else if (r < 750 && can(K_RESIZE)) {
		mut_resize(g);
	} else if (r < 765 && can(K_MODIFY)) {
		mut_modify(g);
	} else if (r < 766 && can(K_BUSY)) {
		if (!mut_busy(g))
			return false;
	} else if (r < 767 && can(K_DESTROY) && !rnd(3)) {
		if (!mut_destroy(g))
			return false;
	} else if (r < 768 && can(K_MR) && !rnd(4)) {
		if (!mut_mr())
			return false;
	} else {
		/* Valid traffic both ways: the victims keep working too. */
		valid_recv(g);
		if (qp_sends(g, g->qa))
			valid_send(g, g->qa);
		if (qp_sends(g, g->qb))
			valid_send(g, g->qb);
	}
	poll_group(g);
	/* Victims in ERR get another life now and then. */
	if (!(g->steps % 48)) {
		group_revive(g);
		/* A resize syncs the provider with a CQ whose index we broke. */
		if (g->taint[0] || !rnd(4))
			cq_resize(g, 0, 64);
		if (g->cq2 && (g->taint[1] || !rnd(4)))
			cq_resize(g, 1, 64);
	}
	return true;
}

/* ------------------------------------------------------ targeted cases */

enum tcase {
	T_OPCODE, T_REG_MR, T_NUM_SGE, T_INLINE, T_LKEY_FOREIGN,
	T_WRITE_CANARY, T_READ_CANARY, T_ATOMIC_CANARY, T_BIND_FOREIGN,
	T_INV_FOREIGN, T_UD_AH_FOREIGN, T_XRC_SRQN_FOREIGN, T_SQ_PROD_WILD,
	T_RQ_NUM_SGE, T_RQ_LKEY_FOREIGN, T_SRQ_PROD_WILD, T_NUM
};

static const struct {
	const char *name;
	enum vtype type;
	int want[3];			/* the sender's status: one of these */
} tcases[T_NUM] = {
	[T_OPCODE] = { "RC opcode 99", VG_RC, { IBV_WC_LOC_QP_OP_ERR, -2, -2 } },
	[T_REG_MR] = { "RC opcode 31 (kernel REG_MR)", VG_RC,
		       { IBV_WC_LOC_QP_OP_ERR, -2, -2 } },
	[T_NUM_SGE] = { "RC num_sge 2^32-1", VG_RC, { IBV_WC_LOC_LEN_ERR, -2, -2 } },
	[T_INLINE] = { "RC inline_len 2^32-1", VG_RC, { IBV_WC_LOC_LEN_ERR, -2, -2 } },
	[T_LKEY_FOREIGN] = { "RC SEND from the bystanders' canary lkey", VG_RC,
			     { IBV_WC_LOC_PROT_ERR, -2, -2 } },
	[T_WRITE_CANARY] = { "RC WRITE to the bystanders' canary rkey", VG_RC,
			     { IBV_WC_REM_ACCESS_ERR, -2, -2 } },
	[T_READ_CANARY] = { "RC READ of the bystanders' canary rkey", VG_RC,
			    { IBV_WC_REM_ACCESS_ERR, -2, -2 } },
	[T_ATOMIC_CANARY] = { "RC FETCH_ADD on the bystanders' canary rkey", VG_RC,
			      { IBV_WC_REM_ACCESS_ERR, -2, -2 } },
	[T_BIND_FOREIGN] = { "RC BIND_MW over the bystanders' canary MR", VG_RC,
			     { IBV_WC_MW_BIND_ERR, IBV_WC_LOC_PROT_ERR,
			       IBV_WC_LOC_QP_OP_ERR } },
	[T_INV_FOREIGN] = { "RC LOCAL_INV of the bystanders' data rkey", VG_RC,
			    { IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_PROT_ERR,
			      IBV_WC_MW_BIND_ERR } },
	[T_UD_AH_FOREIGN] = { "UD SEND through the bystanders' AH", VG_UD,
			      { IBV_WC_LOC_QP_OP_ERR, -2, -2 } },
	[T_XRC_SRQN_FOREIGN] = { "XRC SEND to the bystanders' XRC SRQ", VG_XRC,
				 { IBV_WC_REM_OP_ERR, IBV_WC_REM_INV_REQ_ERR,
				   IBV_WC_REM_ACCESS_ERR } },
	[T_SQ_PROD_WILD] = { "RC SQ producer index + num_slots + 1", VG_RC,
			     { -1, -2, -2 } },
	[T_RQ_NUM_SGE] = { "RC receive WQE num_sge 2^32-1", VG_RC,
			   { IBV_WC_REM_OP_ERR, IBV_WC_REM_INV_REQ_ERR, -2 } },
	[T_RQ_LKEY_FOREIGN] = { "RC receive WQE into the bystanders' canary lkey",
				VG_RC, { IBV_WC_REM_OP_ERR,
					 IBV_WC_REM_INV_REQ_ERR,
					 IBV_WC_REM_ACCESS_ERR } },
	[T_SRQ_PROD_WILD] = { "SRQ producer index + num_slots + 1", VG_SRQ,
			      { IBV_WC_REM_OP_ERR, IBV_WC_REM_INV_REQ_ERR, -2 } },
};

/*
 * Drain what a group had: its CQs empty (as far as a CQ whose producer
 * index we broke can be), its QPs fresh in RTS.
 */
static int group_fresh(struct vgroup *g)
{
	int ret = group_revive(g), i;

	for (i = 0; i < 64 && poll_group(g); i++)
		;
	return ret;
}

/*
 * One bad WQE (or index) on a fresh group: the sender's completion says
 * what went wrong and the QP that took the garbage is in ERR.
 */
static bool targeted(enum tcase t)
{
	struct vgroup *g = &groups[tcases[t].type];
	struct ibv_qp *qp = g->qa, *bad_qp = g->qa;
	struct srdma_ring *sq = sq_of(qp);
	struct softrdma_send_wqe *w;
	uint64_t id = 0x7a000 + t;
	int st = -1, qs, i;
	bool ok;

	if (!ktap_expect(!group_fresh(g), "revive: %s", strerror(errno)))
		return false;
	w = srdma_ring_slot(sq, sq->idx);
	wqe_base(g, qp, w, IBV_WR_SEND, id);
	switch (t) {
	case T_OPCODE: w->opcode = 99; break;
	case T_REG_MR: w->opcode = 31; break;
	case T_NUM_SGE: w->num_sge = 0xffffffff; break;
	case T_INLINE:
		w->send_flags |= IBV_SEND_INLINE;
		w->inline_len = 0xffffffff;
		break;
	case T_LKEY_FOREIGN:
		w->sge[0].addr = bys.canary_addr;
		w->sge[0].lkey = bys.canary_lkey;
		break;
	case T_WRITE_CANARY:
	case T_READ_CANARY:
		wqe_base(g, qp, w, t == T_WRITE_CANARY ? IBV_WR_RDMA_WRITE :
			 IBV_WR_RDMA_READ, id);
		w->wr.rdma.remote_addr = bys.canary_addr;
		w->wr.rdma.rkey = bys.canary_rkey;
		break;
	case T_ATOMIC_CANARY:
		wqe_base(g, qp, w, IBV_WR_ATOMIC_FETCH_AND_ADD, id);
		w->wr.atomic.remote_addr = bys.canary_addr;
		w->wr.atomic.rkey = bys.canary_rkey;
		break;
	case T_BIND_FOREIGN:
		wqe_base(g, qp, w, IBV_WR_BIND_MW, id);
		w->wr.bind.addr = bys.canary_addr;
		w->wr.bind.mr_lkey = bys.canary_lkey;
		break;
	case T_INV_FOREIGN:
		wqe_base(g, qp, w, IBV_WR_LOCAL_INV, id);
		w->ex = bys.data_rkey;
		break;
	case T_UD_AH_FOREIGN: w->wr.ud.ah_num = bys.ah_num; break;
	case T_XRC_SRQN_FOREIGN: w->xrc_srqn = bys.xsrqn; break;
	case T_SQ_PROD_WILD:
		set_prod(sq, sq->idx + sq->num_slots + 1);
		doorbell(qp);
		goto state;
	case T_RQ_NUM_SGE:
	case T_RQ_LKEY_FOREIGN:
	case T_SRQ_PROD_WILD: {
		struct srdma_ring *rq = t == T_SRQ_PROD_WILD ?
					&to_ssrq(g->srq)->rq : rq_of(g->qb);
		struct softrdma_recv_wqe *rw = srdma_ring_slot(rq, rq->idx);

		bad_qp = g->qb;
		recv_base(rw, id + 0x100);
		if (t == T_RQ_NUM_SGE) {
			rw->num_sge = 0xffffffff;
		} else if (t == T_RQ_LKEY_FOREIGN) {
			rw->sge[0].addr = bys.canary_addr;
			rw->sge[0].lkey = bys.canary_lkey;
		}
		if (t == T_SRQ_PROD_WILD) {
			set_prod(rq, rq->idx + rq->num_slots + 1);
		} else {
			rq->idx++;
			set_prod(rq, rq->idx);
		}
		break;
	}
	default:
		break;
	}
	sq->idx++;
	set_prod(sq, sq->idx);
	doorbell(qp);
	st = wait_wc(g, g->cq, id);
state:
	/* The QP learns of its error from the completion; give it time. */
	for (i = 0; i < 100 && (qs = qp_state(bad_qp)) != IBV_QPS_ERR; i++)
		usleep(10000);
	ok = false;
	for (i = 0; i < 3; i++)
		ok |= st == tcases[t].want[i];
	ok = ktap_expect(ok, "%s: status %d (%s), expected %s",
			 tcases[t].name, st,
			 st >= 0 ? ibv_wc_status_str(st) : "none",
			 tcases[t].want[0] >= 0 ?
			 ibv_wc_status_str(tcases[t].want[0]) : "none") &&
	     ktap_expect(qs == IBV_QPS_ERR, "%s: QP state %d, not ERR",
			 tcases[t].name, qs);
	ktap_print("%-48s -> %s, QP %s", tcases[t].name,
		   st >= 0 ? ibv_wc_status_str(st) : "no completion",
		   qs == IBV_QPS_ERR ? "in ERR" : "NOT in ERR");
	return ok;
}

/* ---------------------------------------------------------------- main */

/*
 * A crash of ours says where (addr2line -e hostile_user OFFSET): the
 * backtrace, and the return address on top of the stack for a call
 * through a bad function pointer.
 */
static void crash(int sig, siginfo_t *si, void *uc_)
{
	static const char msg[] = "# hostile_user: fatal signal, backtrace:\n";
	ucontext_t *uc = uc_;
	void *bt[32], *top[2];
	int n = backtrace(bt, 32);

	(void)si;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(128 + sig);
	backtrace_symbols_fd(bt, n, STDOUT_FILENO);
	top[0] = (void *)uc->uc_mcontext.gregs[REG_RIP];
	top[1] = *(void **)uc->uc_mcontext.gregs[REG_RSP];
	backtrace_symbols_fd(top, 2, STDOUT_FILENO);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void parse_skip(void)
{
	const char *s = getenv("HOSTILE_USER_SKIP");
	char *copy, *tok, *save;
	int k;

	if (!s || !*s)
		return;
	copy = strdup(s);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		for (k = 0; k < K_NUM; k++)
			if (!strcmp(tok, kind_name[k]))
				kind_skip[k] = true;
	free(copy);
}

int main(int argc, char **argv)
{
	uint64_t seed = 1, count = 1000000, max_s = 0, start, last, t_ms;
	uint64_t shown = 0;
	int tofd[2], stopfd[2], status = 0, opt, i, ret;
	struct sigaction sa = { .sa_sigaction = crash, .sa_flags = SA_SIGINFO };
	uint64_t bys_rounds = 0;
	pthread_t athr;
	bool ok = true, child_ok;
	char line[512];
	size_t len;
	pid_t pid;

	while ((opt = getopt(argc, argv, "s:n:t:")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 't': max_s = strtoull(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (argc - optind < 1 || argc - optind > 2) {
usage:
		fprintf(stderr, "usage: %s [-s SEED] [-n COUNT] [-t MAX_SECONDS] IBDEV [GID_INDEX]\n",
			argv[0]);
		return KSFT_FAIL;
	}
	gid_index = argc - optind > 1 ? atoi(argv[optind + 1]) : 1;
	parse_skip();
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a bystander that ended early */

	ktap_plan(T_NUM + 5);
	ktap_print("seed %llu, %llu mutations, uid %d",
		   (unsigned long long)seed, (unsigned long long)count,
		   (int)getuid());
	for (i = 0, len = 0; i < K_NUM; i++)
		if (kind_skip[i])
			len += snprintf(line + len, sizeof(line) - len, " %s",
					kind_name[i]);
	if (len)
		ktap_print("HOSTILE_USER_SKIP: not making%s", line);

	if (pipe(tofd) || pipe(stopfd))
		return KSFT_FAIL;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return KSFT_FAIL;
	if (!pid) {
		close(tofd[0]);
		close(stopfd[1]);
		_exit(bystander(argv[optind], tofd[1], stopfd[0], seed));
	}
	close(tofd[1]);
	close(stopfd[0]);

	if (read(tofd[0], &bys, sizeof(bys)) != sizeof(bys) || !bys.ok) {
		ktap_print("the bystander process did not start");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return KSFT_FAIL;
	}

	rng_seed(seed);
	ctx = open_by_name(argv[optind]);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		ktap_print("cannot open %s GID %d", argv[optind], gid_index);
		goto out_child;
	}
	pd = ibv_alloc_pd(ctx);
	vbuf = aligned_alloc(4096, VBUF_LEN);
	if (!pd || !vbuf)
		goto out_child;
	memset(vbuf, 0x5a, VBUF_LEN);
	vmr = ibv_reg_mr(pd, vbuf, VBUF_LEN,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
			 IBV_ACCESS_MW_BIND);
	vmw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!vmr || !vmw) {
		ktap_print("victim MR/MW: %s", strerror(errno));
		goto out_child;
	}
	for (i = 0; i < 8; i++)
		old_keys[i] = r32();
	if (pthread_create(&athr, NULL, async_thread, NULL))
		goto out_child;
	for (i = 0; i < VG_NUM; i++) {
		ret = group_open(&groups[i], i);
		if (ret) {
			ktap_print("set up the %s victims: %s", vtype_name[i],
				   strerror(ret));
			goto out_thread;
		}
	}

	/* Targeted: each kind of garbage has its error, the QP is in ERR. */
	for (i = 0; i < T_NUM; i++)
		ktap_result(targeted(i), tcases[i].name);
	for (i = 0; i < VG_NUM; i++)
		group_fresh(&groups[i]);
	memset(wc_status, 0, sizeof(wc_status));
	wc_total = wc_tainted = 0;

	/* Random: COUNT mutations. */
	start = last = now_ms();
	while (mutations < count) {
		if (!step()) {
			ok = false;
			break;
		}
		if (mutations / 100000 != shown / 100000 ||
		    now_ms() - last > 15000) {
			uint64_t ms = now_ms() - start;

			last = now_ms();
			shown = mutations;
			ktap_print("%llu mutations, %llu doorbells in %llu ms (%llu/s)",
				   (unsigned long long)mutations,
				   (unsigned long long)doorbells,
				   (unsigned long long)ms,
				   (unsigned long long)(ms ? mutations * 1000 / ms : 0));
			if (waitpid(pid, &status, WNOHANG) == pid) {
				ktap_print("the bystander process ended early");
				pid = 0;
				ok = false;
				break;
			}
		}
		if (max_s && now_ms() - start > max_s * 1000) {
			ktap_print("time limit of %llu s reached",
				   (unsigned long long)max_s);
			ok = false;
			break;
		}
	}
	t_ms = now_ms() - start;
	for (i = 0; i < VG_NUM; i++)
		group_fresh(&groups[i]);
	ktap_print("%llu mutations, %llu doorbells in %llu ms: %llu mutations/s",
		   (unsigned long long)mutations, (unsigned long long)doorbells,
		   (unsigned long long)t_ms,
		   (unsigned long long)(t_ms ? mutations * 1000 / t_ms : 0));
	for (i = 0, len = 0; i < K_NUM; i++)
		len += snprintf(line + len, sizeof(line) - len, " %s=%llu",
				kind_name[i], (unsigned long long)kind_count[i]);
	ktap_print("mutations by kind:%s", line);
	ktap_print("%llu victim completions (%llu unverified: read past a producer index we garbled)",
		   (unsigned long long)wc_total,
		   (unsigned long long)wc_tainted);
	for (i = 0; i < 256; i++)
		if (wc_status[i])
			ktap_print("  %-28s %llu",
				   i <= IBV_WC_TM_RNDV_INCOMPLETE ?
				   ibv_wc_status_str(i) : "(not a status)",
				   (unsigned long long)wc_status[i]);
	for (i = 0, len = 0; i < 32; i++)
		if (atomic_load(&async_count[i]))
			len += snprintf(line + len, sizeof(line) - len,
					" %s=%lu", ibv_event_type_str(i),
					atomic_load(&async_count[i]));
	ktap_print("async events:%s", len ? line : " none");
	ktap_result(ok && mutations >= count,
		    "random ring mutations done, the victims' device still works");
	if (bad_wcs) {
		unsigned int n = bad_log_lines, j;

		ktap_print("%llu implausible, the first: %s",
			   (unsigned long long)bad_wcs, bad_first);
		for (j = n > BAD_LOG_LINES ? n - BAD_LOG_LINES : 0; j < n; j++)
			ktap_print("%s", bad_log[j % BAD_LOG_LINES]);
	}
	ktap_result(!bad_wcs && (count < 10000 ||
				 (wc_status[IBV_WC_LOC_QP_OP_ERR] &&
				  wc_status[IBV_WC_LOC_LEN_ERR] &&
				  wc_status[IBV_WC_WR_FLUSH_ERR])),
		    "every victim completion has a verbs status and opcode, of a QP of its CQ");

	/* Everything of the victims goes away. */
	ret = 0;
	for (i = 0; i < VG_NUM; i++)
		group_close(&groups[i]);
	ret |= ibv_dealloc_mw(vmw);
	ret |= ibv_dereg_mr(vmr);
	ret |= ibv_dealloc_pd(pd);
	ktap_result(!ret, "the victims' objects are destroyed");

out_thread:
	atomic_store(&async_stop, true);
	pthread_join(athr, NULL);
out_child:
	/* The bystanders stop, check their canary and report. */
	if (write(stopfd[1], "x", 1) != 1)
		ok = false;
	child_ok = false;
	/* Its count, also from one that ended early (EOF if it died). */
	if (read(tofd[0], &bys_rounds, sizeof(bys_rounds)) !=
	    sizeof(bys_rounds))
		bys_rounds = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	ktap_result(child_ok && bys_rounds > 0,
		    "bystanders: all completions successful, data byte-exact, canary and foreign XRC SRQ untouched");
	ktap_result(bys_rounds >= 10,
		    "bystanders kept moving data during the mutations");
	if (ctx)
		ibv_close_device(ctx);
	return ktap_finish();
}
