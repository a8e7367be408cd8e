// SPDX-License-Identifier: GPL-2.0
/*
 * RC data integrity, byte for byte: SEND, SEND_WITH_IMM, RDMA_WRITE,
 * RDMA_WRITE_WITH_IMM and RDMA_READ across message sizes, unaligned
 * offsets, SGE lists, inline data, path MTUs, unsignaled WRs, a burst and
 * completion events; then the completions of bad keys, out-of-bounds and
 * forbidden remote accesses, refused posts, and WRs flushed after an error.
 *
 * Every test runs between two endpoints, each a QP with its own CQs and
 * a registered buffer: one is the requester, the other the responder.
 * Sources hold a seeded pattern, destinations another one, so a byte that
 * lands wrong, or a byte written outside the message, is found and its
 * offset reported.
 *
 * In loop mode both endpoints live in this process, on one device. In
 * two-host mode the client runs every test and the server executes the
 * verbs the client asks for, over a TCP connection (both ends run this
 * program on the same architecture). Only standard libibverbs is used,
 * so either end can be another RoCEv2 device, such as rdma_rxe. Every wait
 * is bounded: a hang is a "not ok", never a stuck test.
 *
 * usage: rc_integrity loop IBDEV [GID_INDEX]
 *        rc_integrity server IBDEV PORT [GID_INDEX]
 *        rc_integrity client IBDEV HOST PORT [GID_INDEX]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))

/* Each endpoint's buffer: one MR over all of it, two more over AUX. */
#define BUF_SIZE	(4u << 20)
#define SRC_OFF		0u		/* where transfers take data from */
#define DST_OFF		(2u << 20)	/* where they put it */
#define AUX_OFF		(7u << 19)	/* MRs with restricted access */
#define AUX_LEN		8192u
#define PAGE		4096u
#define GUARD		64u	/* bytes checked on each side of a destination */
#define RECV_SLACK	64u	/* room in a receive beyond the message */

#define QP_DEPTH	128
#define CQ_DEPTH	512
#define MAX_SGE		32
#define RD_ATOMIC	16
#define ACK_TIMEOUT	17	/* 0.5 s: TCG guests are slow */
#define RETRY_CNT	7
#define RNR_RETRY	7	/* retry forever: receives come when they come */
#define MIN_RNR_TIMER	12	/* 0.64 ms */
#define PSN_A		0xfffff0	/* close to the 24-bit PSN wrap */
#define PSN_B		0xffffe0

#define POLL_MS		20000	/* longest wait for completions or events */
#define QUIET_MS	200	/* a wait that must see nothing */
#define RPC_MS		(POLL_MS + 40000)
#define CONNECT_S	180	/* the peer may boot later than we do */
#define MAX_STALLS	3	/* tests in a row that time out: stop */

#define RECV_ID		0x7265637600000000ull
#define SEND_ID		0x73656e6400000000ull
#define BG_XOR		0x5bd1e995u	/* background seed from the message's */
#define BAD_KEY_XOR	0x5a	/* a key's low byte: same index, wrong tag */
#define CLOBBER		0xee	/* what an inline source holds after post */

/* A test returns one of these; a bool from expect() is FAIL or PASS. */
enum { T_FAIL, T_PASS, T_SKIP };

enum { CQ_SEND, CQ_RECV };
enum { MR_MAIN, MR_NOWRITE, MR_NOREAD, NR_MR, MR_BAD = 0xff };

/* ---- control protocol: structures sent as they are ---- */

enum {
	OP_NEW_QP = 1,	/* -> qp_info: a fresh QP and CQs */
	OP_CONNECT,	/* connect_in: to RTS towards the peer */
	OP_FILL,	/* run[]: write patterns into the buffer */
	OP_CHECK,	/* run[] -> check_out: compare the buffer */
	OP_POST_SEND,	/* post_in -> post_out */
	OP_POST_RECV,	/* post_in -> post_out */
	OP_POLL,	/* poll_in -> poll_out */
	OP_ARM,		/* arm_in: ibv_req_notify_cq */
	OP_EVENT,	/* event_in -> event_out: ibv_get_cq_event */
	OP_BYE,
	NR_OPS
};

struct rpc_hdr {
	int32_t val;	/* request: OP_*; reply: 0 or an errno */
	uint32_t len;	/* bytes that follow */
};

struct qp_info {
	uint32_t qpn;
	uint32_t active_mtu;	/* enum ibv_mtu of the port */
	uint8_t gid[16];
	uint64_t addr;		/* of the buffer */
	uint32_t rkey[NR_MR];
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	uint32_t max_sge_rd;
};

struct connect_in {
	struct qp_info peer;
	uint32_t mtu;
	uint32_t sq_psn;
	uint32_t rq_psn;
};

/* buf[off + k] is byte base + k of the pattern of @seed. */
struct run {
	uint64_t off;
	uint64_t len;
	uint64_t base;
	uint32_t seed;
};

struct check_out {
	int32_t run;	/* first run with a wrong byte, -1 if none */
	uint32_t at;	/* its offset in the run */
	uint8_t want;
	uint8_t got;
};

struct sge_desc {
	uint64_t off;	/* in the buffer of the endpoint that posts */
	uint32_t len;
	uint32_t mr;	/* MR_* */
};

struct wr_desc {
	uint64_t wr_id;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;	/* as ibv_send_wr.imm_data: big endian */
	uint32_t opcode;
	uint32_t flags;
	uint32_t nsge;
	uint32_t sge;	/* its first SGE in the list that follows */
};

struct post_in {
	uint32_t nwr;
	uint32_t nsge;
	uint32_t clobber;	/* overwrite the SGEs once posted */
	uint32_t pad;
	/* struct wr_desc[nwr], then struct sge_desc[nsge] */
};

struct post_out {
	int32_t ret;
	int32_t bad;	/* index of *bad_wr, -1 if none */
};

struct poll_in {
	uint32_t cq;
	uint32_t n;	/* wait for this many completions ... */
	uint32_t ms;	/* ... but no longer than this */
};

struct wc_desc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t wc_flags;
	uint32_t qp_num;
};

struct poll_out {
	uint32_t n;
	uint32_t pad;
	struct wc_desc wc[];
};

struct arm_in {
	uint32_t cq;
};

struct event_in {
	uint32_t ms;
};

struct event_out {
	uint32_t cq;
};

#define MAX_WR		300
#define MAX_POST_SGE	600
#define MAX_RUNS	600
#define IO_MAX		(sizeof(struct post_in) + \
			 MAX_WR * sizeof(struct wr_desc) + \
			 MAX_POST_SGE * sizeof(struct sge_desc))
#define OUT_MAX		(sizeof(struct poll_out) + \
			 CQ_DEPTH * sizeof(struct wc_desc))

/* ---- endpoints ---- */

struct ep {
	const char *name;
	int fd;			/* control connection of a remote one, or -1 */
	bool dead;		/* that connection failed */
	struct qp_info info;	/* of its current QP */
	/* local endpoints */
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr[NR_MR];
	int gid_index;
	union ibv_gid gid;
};

static bool expect(bool cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return true;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return false;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the pattern: byte i of seed s is byte i % 8 of a hash of i / 8 ---- */

static uint64_t pat_word(uint32_t seed, uint64_t i)
{
	uint64_t x = (((uint64_t)seed << 32) ^ i) + 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void pat_fill(uint8_t *p, const struct run *r)
{
	uint64_t k, i, w = 0, wi = UINT64_MAX;

	for (k = 0; k < r->len; k++) {
		i = r->base + k;
		if (i >> 3 != wi) {
			wi = i >> 3;
			w = pat_word(r->seed, wi);
		}
		p[k] = w >> (8 * (i & 7));
	}
}

/* Offset of the first byte that differs, or -1. */
static int64_t pat_check(const uint8_t *p, const struct run *r, uint8_t *want)
{
	uint64_t k, i, w = 0, wi = UINT64_MAX;

	for (k = 0; k < r->len; k++) {
		i = r->base + k;
		if (i >> 3 != wi) {
			wi = i >> 3;
			w = pat_word(r->seed, wi);
		}
		*want = w >> (8 * (i & 7));
		if (p[k] != *want)
			return k;
	}
	return -1;
}

/* ---- local execution of every operation ---- */

static void ep_drop_qp(struct ep *ep)
{
	int i;

	if (ep->qp)
		ibv_destroy_qp(ep->qp);
	ep->qp = NULL;
	for (i = 0; i < 2; i++) {
		if (ep->cq[i])
			ibv_destroy_cq(ep->cq[i]);
		ep->cq[i] = NULL;
	}
}

static int op_new_qp(struct ep *ep, const void *in, size_t inlen, void *out,
		     size_t *outlen)
{
	/* Not every device takes 512 bytes inline: ask for less then. */
	static const uint32_t inl[] = { 512, 256, 64, 0 };
	uint32_t sge = MIN(MAX_SGE, ep->dev.max_sge);
	struct qp_info *qi = &ep->info;
	struct ibv_qp_init_attr ia;
	struct ibv_port_attr port;
	size_t i;

	(void)in;
	(void)inlen;
	ep_drop_qp(ep);
	for (i = 0; i < 2; i++) {
		ep->cq[i] = ibv_create_cq(ep->ctx, CQ_DEPTH, NULL, ep->ch, 0);
		if (!ep->cq[i])
			return errno ? errno : EIO;
	}
	for (i = 0; i < ARRAY_SIZE(inl) && !ep->qp; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = ep->cq[CQ_SEND];
		ia.recv_cq = ep->cq[CQ_RECV];
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = QP_DEPTH;
		ia.cap.max_recv_wr = QP_DEPTH;
		ia.cap.max_send_sge = sge;
		ia.cap.max_recv_sge = sge;
		ia.cap.max_inline_data = inl[i];
		ep->qp = ibv_create_qp(ep->pd, &ia);
	}
	if (!ep->qp)
		return errno ? errno : EIO;
	if (ibv_query_port(ep->ctx, 1, &port))
		return errno ? errno : EIO;

	qi->qpn = ep->qp->qp_num;
	qi->active_mtu = port.active_mtu;
	memcpy(qi->gid, ep->gid.raw, sizeof(qi->gid));
	qi->addr = (uintptr_t)ep->buf;
	for (i = 0; i < NR_MR; i++)
		qi->rkey[i] = ep->mr[i]->rkey;
	qi->max_send_wr = ia.cap.max_send_wr;
	qi->max_recv_wr = ia.cap.max_recv_wr;
	qi->max_send_sge = ia.cap.max_send_sge;
	qi->max_recv_sge = ia.cap.max_recv_sge;
	qi->max_inline = ia.cap.max_inline_data;
	qi->max_sge_rd = ep->dev.max_sge_rd ? ep->dev.max_sge_rd :
					      ep->dev.max_sge;
	memcpy(out, qi, sizeof(*qi));
	*outlen = sizeof(*qi);
	return 0;
}

static int op_connect(struct ep *ep, const void *in, size_t inlen, void *out,
		      size_t *outlen)
{
	const struct connect_in *c = in;
	struct ibv_qp_attr a;
	int ret;

	(void)out;
	*outlen = 0;
	if (inlen != sizeof(*c) || !ep->qp)
		return EINVAL;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	a.dest_qp_num = c->peer.qpn;
	a.rq_psn = c->rq_psn;
	a.max_dest_rd_atomic = MIN(RD_ATOMIC, ep->dev.max_qp_rd_atom);
	a.min_rnr_timer = MIN_RNR_TIMER;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, c->peer.gid, 16);
	a.ah_attr.grh.sgid_index = ep->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	ret = ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->sq_psn;
	a.timeout = ACK_TIMEOUT;
	a.retry_cnt = RETRY_CNT;
	a.rnr_retry = RNR_RETRY;
	a.max_rd_atomic = MIN(RD_ATOMIC, ep->dev.max_qp_init_rd_atom);
	return ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static bool run_fits(const struct run *r)
{
	return r->off <= BUF_SIZE && r->len <= BUF_SIZE - r->off;
}

static int op_fill(struct ep *ep, const void *in, size_t inlen, void *out,
		   size_t *outlen)
{
	const struct run *r = in;
	size_t i, n = inlen / sizeof(*r);

	(void)out;
	*outlen = 0;
	if (inlen % sizeof(*r))
		return EINVAL;
	for (i = 0; i < n; i++)
		if (!run_fits(&r[i]))
			return EINVAL;
	for (i = 0; i < n; i++)
		pat_fill(ep->buf + r[i].off, &r[i]);
	return 0;
}

static int op_check(struct ep *ep, const void *in, size_t inlen, void *out,
		    size_t *outlen)
{
	const struct run *r = in;
	size_t i, n = inlen / sizeof(*r);
	struct check_out *c = out;
	int64_t at;

	*outlen = sizeof(*c);
	memset(c, 0, sizeof(*c));
	c->run = -1;
	if (inlen % sizeof(*r))
		return EINVAL;
	for (i = 0; i < n; i++)
		if (!run_fits(&r[i]))
			return EINVAL;
	for (i = 0; i < n; i++) {
		at = pat_check(ep->buf + r[i].off, &r[i], &c->want);
		if (at >= 0) {
			c->run = i;
			c->at = at;
			c->got = ep->buf[r[i].off + at];
			break;
		}
	}
	return 0;
}

/* Post the WRs of @in as one chain to the send or the receive queue. */
static int op_post(struct ep *ep, const void *in, size_t inlen, void *out,
		   size_t *outlen, bool recv)
{
	const struct post_in *h = in;
	const struct wr_desc *wd = (const void *)(h + 1);
	const struct sge_desc *sd;
	struct post_out *po = out;
	struct ibv_send_wr *swr = NULL, *sbad = NULL;
	struct ibv_recv_wr *rwr = NULL, *rbad = NULL;
	struct ibv_sge *sg = NULL;
	uint32_t i, j;
	int ret = ENOMEM;

	*outlen = sizeof(*po);
	po->ret = EINVAL;
	po->bad = -1;
	if (inlen < sizeof(*h) || h->nwr > MAX_WR || h->nsge > MAX_POST_SGE ||
	    inlen != sizeof(*h) + h->nwr * sizeof(*wd) +
		     h->nsge * sizeof(*sd) || !h->nwr || !ep->qp)
		return 0;
	sd = (const void *)(wd + h->nwr);
	for (i = 0; i < h->nwr; i++)
		if (wd[i].sge > h->nsge || wd[i].nsge > h->nsge - wd[i].sge)
			return 0;
	for (j = 0; j < h->nsge; j++)
		if (sd[j].off > BUF_SIZE || sd[j].len > BUF_SIZE - sd[j].off ||
		    (sd[j].mr >= NR_MR && sd[j].mr != MR_BAD))
			return 0;

	sg = calloc(h->nsge + 1, sizeof(*sg));
	swr = calloc(h->nwr, sizeof(*swr));
	rwr = calloc(h->nwr, sizeof(*rwr));
	if (!sg || !swr || !rwr)
		goto out;
	for (j = 0; j < h->nsge; j++) {
		uint32_t lkey = ep->mr[sd[j].mr == MR_BAD ? MR_MAIN :
				      sd[j].mr]->lkey;

		sg[j].addr = (uintptr_t)ep->buf + sd[j].off;
		sg[j].length = sd[j].len;
		sg[j].lkey = sd[j].mr == MR_BAD ? lkey ^ BAD_KEY_XOR : lkey;
	}
	for (i = 0; i < h->nwr; i++) {
		struct ibv_send_wr *s = &swr[i];
		struct ibv_recv_wr *r = &rwr[i];

		s->wr_id = r->wr_id = wd[i].wr_id;
		s->sg_list = r->sg_list = &sg[wd[i].sge];
		s->num_sge = r->num_sge = wd[i].nsge;
		s->next = i + 1 < h->nwr ? &swr[i + 1] : NULL;
		r->next = i + 1 < h->nwr ? &rwr[i + 1] : NULL;
		s->opcode = wd[i].opcode;
		s->send_flags = wd[i].flags;
		s->imm_data = wd[i].imm;
		s->wr.rdma.remote_addr = wd[i].raddr;
		s->wr.rdma.rkey = wd[i].rkey;
	}
	if (recv) {
		ret = ibv_post_recv(ep->qp, rwr, &rbad);
		if (rbad)
			po->bad = rbad - rwr;
	} else {
		ret = ibv_post_send(ep->qp, swr, &sbad);
		if (sbad)
			po->bad = sbad - swr;
	}
	/* Inline data was copied by the post: the memory is ours again. */
	if (!ret && h->clobber)
		for (j = 0; j < h->nsge; j++)
			memset(ep->buf + sd[j].off, CLOBBER, sd[j].len);
out:
	free(sg);
	free(swr);
	free(rwr);
	po->ret = ret;
	return 0;
}

static int op_post_send(struct ep *ep, const void *in, size_t inlen,
			void *out, size_t *outlen)
{
	return op_post(ep, in, inlen, out, outlen, false);
}

static int op_post_recv(struct ep *ep, const void *in, size_t inlen,
			void *out, size_t *outlen)
{
	return op_post(ep, in, inlen, out, outlen, true);
}

/* Collect up to n completions; stop early when pi->ms have passed. */
static int op_poll(struct ep *ep, const void *in, size_t inlen, void *out,
		   size_t *outlen)
{
	const struct poll_in *pi = in;
	struct poll_out *po = out;
	struct ibv_wc wc[16];
	uint64_t deadline;
	unsigned int idle = 0;
	int i, k;

	*outlen = sizeof(*po);
	po->n = 0;
	if (inlen != sizeof(*pi) || pi->cq > CQ_RECV || pi->n > CQ_DEPTH ||
	    !ep->cq[pi->cq])
		return EINVAL;
	deadline = now_ms() + pi->ms;
	while (po->n < pi->n) {
		k = ibv_poll_cq(ep->cq[pi->cq], MIN(16u, pi->n - po->n), wc);
		if (k < 0)
			return EIO;
		for (i = 0; i < k; i++) {
			struct wc_desc *d = &po->wc[po->n++];

			d->wr_id = wc[i].wr_id;
			d->status = wc[i].status;
			d->opcode = wc[i].opcode;
			d->byte_len = wc[i].byte_len;
			d->imm = wc[i].imm_data;
			d->wc_flags = wc[i].wc_flags;
			d->qp_num = wc[i].qp_num;
		}
		if (k) {
			idle = 0;
			continue;
		}
		if (now_ms() >= deadline)
			break;
		/* Spin a little, then leave the CPU to the device. */
		if (++idle > 64)
			usleep(200);
	}
	*outlen = sizeof(*po) + po->n * sizeof(po->wc[0]);
	return 0;
}

static int op_arm(struct ep *ep, const void *in, size_t inlen, void *out,
		  size_t *outlen)
{
	const struct arm_in *a = in;

	(void)out;
	*outlen = 0;
	if (inlen != sizeof(*a) || a->cq > CQ_RECV || !ep->cq[a->cq])
		return EINVAL;
	return ibv_req_notify_cq(ep->cq[a->cq], 0);
}

static int op_event(struct ep *ep, const void *in, size_t inlen, void *out,
		    size_t *outlen)
{
	const struct event_in *e = in;
	struct event_out *eo = out;
	struct pollfd pfd = { .fd = ep->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;
	int ret;

	*outlen = sizeof(*eo);
	eo->cq = UINT32_MAX;
	if (inlen != sizeof(*e))
		return EINVAL;
	ret = poll(&pfd, 1, e->ms);
	if (ret <= 0)
		return ret ? errno : ETIMEDOUT;
	if (ibv_get_cq_event(ep->ch, &cq, &cq_ctx))
		return errno ? errno : EIO;
	ibv_ack_cq_events(cq, 1);
	eo->cq = cq == ep->cq[CQ_SEND] ? CQ_SEND :
		 cq == ep->cq[CQ_RECV] ? CQ_RECV : UINT32_MAX;
	return 0;
}

typedef int (*op_fn)(struct ep *ep, const void *in, size_t inlen, void *out,
		     size_t *outlen);

static const op_fn ops[NR_OPS] = {
	[OP_NEW_QP] = op_new_qp,
	[OP_CONNECT] = op_connect,
	[OP_FILL] = op_fill,
	[OP_CHECK] = op_check,
	[OP_POST_SEND] = op_post_send,
	[OP_POST_RECV] = op_post_recv,
	[OP_POLL] = op_poll,
	[OP_ARM] = op_arm,
	[OP_EVENT] = op_event,
};

/* ---- the control connection ---- */

static int io_all(int fd, void *p, size_t len, bool wr)
{
	ssize_t n;

	while (len) {
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? errno : EPIPE;
		p = (uint8_t *)p + n;
		len -= n;
	}
	return 0;
}

/*
 * Run @op on @ep: here, or over its control connection. @outlen holds
 * the room in @out, then what was written. Returns the operation's error.
 */
static int ep_call(struct ep *ep, int op, const void *in, size_t inlen,
		   void *out, size_t *outlen)
{
	struct rpc_hdr h = { .val = op, .len = inlen };
	size_t room = *outlen;
	int ret;

	if (ep->fd < 0)
		return ops[op](ep, in, inlen, out, outlen);
	if (ep->dead)
		return EPIPE;
	ret = io_all(ep->fd, &h, sizeof(h), true) ?:
	      io_all(ep->fd, (void *)in, inlen, true) ?:
	      io_all(ep->fd, &h, sizeof(h), false);
	if (!ret && h.len > room)
		ret = EPROTO;
	if (!ret)
		ret = io_all(ep->fd, out, h.len, false);
	if (ret) {
		ktap_print("control connection to the %s: %s", ep->name,
			   strerror(ret));
		ep->dead = true;
		return EPIPE;
	}
	*outlen = h.len;
	return h.val;
}

static void sock_opts(int fd, int timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000 };
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A connection to HOST:PORT, retried while the server is not up yet. */
static int tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	uint64_t deadline = now_ms() + CONNECT_S * 1000ull;
	int fd = -1, err;

	do {
		err = getaddrinfo(host, port, &hints, &ai);
		if (err) {
			ktap_print("%s: %s", host, gai_strerror(err));
			return -1;
		}
		for (a = ai; a && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, a->ai_socktype, 0);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
				close(fd);
				fd = -1;
			}
		}
		freeaddrinfo(ai);
		if (fd < 0)
			sleep(1);
	} while (fd < 0 && now_ms() < deadline);
	if (fd < 0)
		ktap_print("no server at %s port %s after %d s", host, port,
			   CONNECT_S);
	return fd;
}

/* Wait for one client on PORT. */
static int tcp_accept(const char *port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	struct pollfd pfd = { .events = POLLIN };
	int one = 1, fd = -1;

	sa.sin6_port = htons(atoi(port));
	pfd.fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (pfd.fd < 0 ||
	    setsockopt(pfd.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(pfd.fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(pfd.fd, 1)) {
		ktap_print("listen on port %s: %s", port, strerror(errno));
	} else if (poll(&pfd, 1, CONNECT_S * 1000) != 1) {
		ktap_print("no client in %d s", CONNECT_S);
	} else {
		fd = accept(pfd.fd, NULL, NULL);
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	return fd;
}

/* Execute a client's requests until it says bye; false if it vanished. */
static bool serve(struct ep *ep, int fd, unsigned long *nreq)
{
	static uint8_t in[IO_MAX], out[OUT_MAX];
	struct rpc_hdr h;
	size_t outlen;
	int op, ret;

	for (;;) {
		ret = io_all(fd, &h, sizeof(h), false);
		if (!ret && h.len > sizeof(in))
			ret = EPROTO;
		if (!ret)
			ret = io_all(fd, in, h.len, false);
		if (ret) {
			ktap_print("client connection: %s", strerror(ret));
			return false;
		}
		(*nreq)++;
		op = h.val;
		outlen = sizeof(out);
		if (op == OP_BYE) {
			outlen = 0;
			ret = 0;
		} else if (op <= 0 || op >= NR_OPS || !ops[op]) {
			outlen = 0;
			ret = EINVAL;
		} else {
			ret = ops[op](ep, in, h.len, out, &outlen);
		}
		h.val = ret;
		h.len = outlen;
		ret = io_all(fd, &h, sizeof(h), true) ?:
		      io_all(fd, out, outlen, true);
		if (ret) {
			ktap_print("client connection: %s", strerror(ret));
			return false;
		}
		if (op == OP_BYE)
			return true;
	}
}
