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
 * RC_INTEGRITY_LOSSY=1 (the client's): the link loses packets, so a
 * remote access error may end as a retry timeout (its NAK lost).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "pattern.h"
#include "sidechan.h"
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

/* A test returns one of these; a bool from ktap_expect() is FAIL or PASS. */
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

/* Each request and reply goes after a struct sc_hdr (sidechan.h). */

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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
		pattern_fill(ep->buf + r[i].off, r[i].len, PAT_HASH, r[i].seed,
			     r[i].base);
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
		at = pattern_check(ep->buf + r[i].off, r[i].len, PAT_HASH,
				   r[i].seed, r[i].base, &c->want);
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

/* ---- the control connection (lib/sidechan.c) ---- */

/*
 * Run @op on @ep: here, or over its control connection. @outlen holds
 * the room in @out, then what was written. Returns the operation's error.
 */
static int ep_call(struct ep *ep, int op, const void *in, size_t inlen,
		   void *out, size_t *outlen)
{
	int ret, val;

	if (ep->fd < 0)
		return ops[op](ep, in, inlen, out, outlen);
	if (ep->dead)
		return EPIPE;
	ret = sc_call(ep->fd, op, in, inlen, out, outlen, &val);
	if (ret) {
		ktap_print("control connection to the %s: %s", ep->name,
			   strerror(ret));
		ep->dead = true;
		return EPIPE;
	}
	return val;
}

static int serve_op(void *ep, int op, const void *in, size_t inlen,
		    void *out, size_t *outlen)
{
	if (op <= 0 || op >= NR_OPS || !ops[op]) {
		*outlen = 0;
		return EINVAL;
	}
	return ops[op](ep, in, inlen, out, outlen);
}

/* Execute a client's requests until it says bye; false if it vanished. */
static bool serve(struct ep *ep, int fd, unsigned long *nreq)
{
	static uint8_t in[IO_MAX], out[OUT_MAX];

	return !sc_serve(fd, serve_op, ep, in, sizeof(in), out, sizeof(out),
			 OP_BYE, nreq);
}

/* ---- the operations, on a local or a remote endpoint ---- */

static const char *const cq_name[] = { "send", "recv" };

static bool poll_timed_out;	/* a wait of the running test ran out */
static bool lossy;		/* RC_INTEGRITY_LOSSY=1: the link loses packets */

static int ep_new_qp(struct ep *ep)
{
	struct qp_info qi;
	size_t len = sizeof(qi);
	int ret = ep_call(ep, OP_NEW_QP, NULL, 0, &qi, &len);

	if (!ret && len != sizeof(qi))
		ret = EPROTO;
	if (!ret)
		ep->info = qi;
	return ret;
}

static int ep_connect(struct ep *ep, const struct qp_info *peer,
		      enum ibv_mtu mtu, uint32_t sq_psn, uint32_t rq_psn)
{
	struct connect_in c = { .peer = *peer, .mtu = mtu, .sq_psn = sq_psn,
				.rq_psn = rq_psn };
	size_t len = 0;

	return ep_call(ep, OP_CONNECT, &c, sizeof(c), NULL, &len);
}

/* Buffer ranges and the pattern each holds (or must hold). */
struct runs {
	int n;
	bool overflow;
	struct run r[MAX_RUNS];
	int msg[MAX_RUNS];	/* 1 + message number; 0: background */
};

static struct runs R;

static void runs_reset(struct runs *rs)
{
	rs->n = 0;
	rs->overflow = false;
}

static void runs_add(struct runs *rs, uint64_t off, uint64_t len,
		     uint32_t seed, uint64_t base, int msg)
{
	if (!len)
		return;
	if (rs->n == MAX_RUNS) {
		rs->overflow = true;
		return;
	}
	rs->r[rs->n] = (struct run){ .off = off, .len = len, .base = base,
				     .seed = seed };
	rs->msg[rs->n++] = msg;
}

/* Background of an area at @start, filled as one run, from @from to @to. */
static void runs_bg(struct runs *rs, uint64_t start, uint64_t from,
		    uint64_t to, uint32_t bg)
{
	if (to > from)
		runs_add(rs, from, to - from, bg, from - start, 0);
}

static bool ep_fill(struct ep *ep, const struct runs *rs, const char *what)
{
	size_t len = 0;
	int ret = rs->overflow ? EOVERFLOW :
		  ep_call(ep, OP_FILL, rs->r, rs->n * sizeof(rs->r[0]), NULL,
			  &len);

	return ktap_expect(!ret, "fill the %s on the %s: %s", what, ep->name,
		      strerror(ret));
}

/* Does @ep's buffer hold @rs? If not, say where it first does not. */
static bool ep_check(struct ep *ep, const struct runs *rs, const char *what)
{
	struct check_out c;
	size_t len = sizeof(c);
	const struct run *r;
	int ret = rs->overflow ? EOVERFLOW :
		  ep_call(ep, OP_CHECK, rs->r, rs->n * sizeof(rs->r[0]), &c,
			  &len);

	if (!ret && len != sizeof(c))
		ret = EPROTO;
	if (!ktap_expect(!ret, "check the %s on the %s: %s", what, ep->name,
		    strerror(ret)))
		return false;
	if (c.run < 0)
		return true;
	if (c.run >= rs->n)
		return ktap_expect(false, "check: bad run %d", c.run);
	r = &rs->r[c.run];
	if (rs->msg[c.run])
		ktap_print("%s on the %s: first mismatch at byte %llu of message %d (buffer offset %#llx): got %#04x, want %#04x",
			   what, ep->name,
			   (unsigned long long)(r->base + c.at),
			   rs->msg[c.run] - 1,
			   (unsigned long long)(r->off + c.at), c.got, c.want);
	else
		ktap_print("%s on the %s: byte outside the message changed at buffer offset %#llx: got %#04x, want %#04x",
			   what, ep->name,
			   (unsigned long long)(r->off + c.at), c.got, c.want);
	return false;
}

/* The WRs of one post, built here, executed by an endpoint. */
struct post {
	struct post_in h;
	struct wr_desc wr[MAX_WR];
	struct sge_desc sge[MAX_POST_SGE];
};

static struct post P;

static void post_reset(void)
{
	memset(&P.h, 0, sizeof(P.h));
}

static struct wr_desc *wr_add(uint64_t wr_id, int opcode, unsigned int flags)
{
	static struct wr_desc spare;
	struct wr_desc *w;

	if (P.h.nwr == MAX_WR)
		return &spare;	/* the test asked for too much: caught below */
	w = &P.wr[P.h.nwr++];
	*w = (struct wr_desc){ .wr_id = wr_id, .opcode = opcode,
			       .flags = flags, .sge = P.h.nsge };
	return w;
}

/* Another SGE for the WR added last. */
static void sge_add(uint64_t off, uint32_t len, uint32_t mr)
{
	if (P.h.nsge == MAX_POST_SGE || !P.h.nwr)
		return;
	P.sge[P.h.nsge++] = (struct sge_desc){ .off = off, .len = len,
					       .mr = mr };
	P.wr[P.h.nwr - 1].nsge++;
}

/* Post P on @ep: the verb's return value, *bad the index of bad_wr. */
static int ep_post(struct ep *ep, bool recv, int *bad)
{
	static uint8_t io[IO_MAX];
	size_t wl = P.h.nwr * sizeof(P.wr[0]), sl = P.h.nsge * sizeof(P.sge[0]);
	struct post_out po;
	size_t len = sizeof(po);
	int ret;

	memcpy(io, &P.h, sizeof(P.h));
	memcpy(io + sizeof(P.h), P.wr, wl);
	memcpy(io + sizeof(P.h) + wl, P.sge, sl);
	ret = ep_call(ep, recv ? OP_POST_RECV : OP_POST_SEND, io,
		      sizeof(P.h) + wl + sl, &po, &len);
	if (!ret && len != sizeof(po))
		ret = EPROTO;
	if (ret) {
		*bad = -2;
		return ret;
	}
	*bad = po.bad;
	return po.ret;
}

static bool post_ok(struct ep *ep, bool recv)
{
	int bad, ret = ep_post(ep, recv, &bad);

	return ktap_expect(!ret, "%s on the %s: %d (%s), bad_wr %d",
		      recv ? "post_recv" : "post_send", ep->name, ret,
		      strerror(ret < 0 ? -ret : ret), bad);
}

/* Up to @n completions of @ep's @cq within @ms; their number or -errno. */
static int ep_poll(struct ep *ep, int cq, int n, int ms, struct wc_desc *wc)
{
	static uint8_t buf[OUT_MAX];
	struct poll_in pi = { .cq = cq, .n = n, .ms = ms };
	struct poll_out *po = (void *)buf;
	size_t len = sizeof(buf);
	int ret = ep_call(ep, OP_POLL, &pi, sizeof(pi), buf, &len);

	if (!ret && (len < sizeof(*po) || po->n > (uint32_t)n ||
		     len != sizeof(*po) + po->n * sizeof(*wc)))
		ret = EPROTO;
	if (ret)
		return -ret;
	memcpy(wc, po->wc, po->n * sizeof(*wc));
	return po->n;
}

/* Exactly @n completions, waited for as long as POLL_MS allows. */
static bool poll_n(struct ep *ep, int cq, int n, struct wc_desc *wc)
{
	int got = ep_poll(ep, cq, n, POLL_MS, wc);

	if (got == n)
		return true;
	if (got < 0)
		return ktap_expect(false, "poll the %s's %s CQ: %s", ep->name,
			      cq_name[cq], strerror(-got));
	poll_timed_out = true;
	return ktap_expect(false, "%s's %s CQ: %d of %d completions in %d s",
		      ep->name, cq_name[cq], got, n, POLL_MS / 1000);
}

/* No completion on @ep's @cq for a while. */
static bool quiet(struct ep *ep, int cq)
{
	struct wc_desc wc[16] = {};
	int got = ep_poll(ep, cq, ARRAY_SIZE(wc), QUIET_MS, wc);

	if (got < 0)
		return ktap_expect(false, "poll the %s's %s CQ: %s", ep->name,
			      cq_name[cq], strerror(-got));
	return ktap_expect(!got, "%s's %s CQ: %d unexpected completions, the first wr_id %#llx, %s",
		      ep->name, cq_name[cq], got,
		      (unsigned long long)wc[0].wr_id,
		      ibv_wc_status_str(wc[0].status));
}

/* A completion as expected; @opcode -1: any (not defined for errors). */
static bool wc_is(const struct ep *ep, int cq, const struct wc_desc *wc,
		  uint64_t wr_id, enum ibv_wc_status status, int opcode)
{
	/*
	 * Across a lossy link the NAK of a remote access error may be lost;
	 * the responder's QP is in error by then and answers nothing more,
	 * so the requester retries until retry_cnt is spent.
	 */
	if (lossy && status == IBV_WC_REM_ACCESS_ERR &&
	    wc->status == IBV_WC_RETRY_EXC_ERR) {
		ktap_print("%s's %s CQ: wr_id %#llx retry exceeded: the NAK was lost",
			   ep->name, cq_name[cq], (unsigned long long)wc->wr_id);
		status = IBV_WC_RETRY_EXC_ERR;
	}
	return ktap_expect(wc->status == status,
		      "%s's %s CQ: wr_id %#llx status %s (%u), want %s",
		      ep->name, cq_name[cq], (unsigned long long)wc->wr_id,
		      ibv_wc_status_str(wc->status), wc->status,
		      ibv_wc_status_str(status)) &&
	       ktap_expect(wc->wr_id == wr_id, "%s's %s CQ: wr_id %#llx, want %#llx",
		      ep->name, cq_name[cq], (unsigned long long)wc->wr_id,
		      (unsigned long long)wr_id) &&
	       ktap_expect(opcode < 0 || wc->opcode == (uint32_t)opcode,
		      "%s's %s CQ: wr_id %#llx opcode %u, want %d", ep->name,
		      cq_name[cq], (unsigned long long)wc->wr_id, wc->opcode,
		      opcode);
}

static int ep_arm(struct ep *ep, int cq)
{
	struct arm_in a = { .cq = cq };
	size_t len = 0;

	return ep_call(ep, OP_ARM, &a, sizeof(a), NULL, &len);
}

/* Wait for a completion event; the CQ it came from, or -errno. */
static int ep_event(struct ep *ep)
{
	struct event_in e = { .ms = POLL_MS };
	struct event_out eo;
	size_t len = sizeof(eo);
	int ret = ep_call(ep, OP_EVENT, &e, sizeof(e), &eo, &len);

	if (!ret && len != sizeof(eo))
		ret = EPROTO;
	return ret ? -ret : (int)eo.cq;
}

/* ---- a connected QP pair ---- */

struct pair {
	struct ep *ep[2];	/* [0]: ours; [1]: B or the server */
	struct ep *req, *rsp;	/* their roles in the running test */
	bool loop;
	bool broken;		/* reconnect before the next test */
	enum ibv_mtu mtu;	/* path MTU of the connected QPs */
	enum ibv_mtu link_mtu;	/* the smaller active MTU of the two ports */
	uint32_t seed;		/* of the running test */
	char why[128];		/* why it skipped */
};

static uint32_t mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << mtu;
}

/* Fresh QPs (and CQs) on both sides, connected at @mtu (0: link MTU). */
static bool pair_connect(struct pair *p, enum ibv_mtu mtu)
{
	struct ep *a = p->ep[0], *b = p->ep[1];
	int ret;

	p->broken = true;
	ret = ep_new_qp(a);
	if (!ktap_expect(!ret, "new QP on the %s: %s", a->name, strerror(ret)))
		return false;
	ret = ep_new_qp(b);
	if (!ktap_expect(!ret, "new QP on the %s: %s", b->name, strerror(ret)))
		return false;
	p->link_mtu = MIN(a->info.active_mtu, b->info.active_mtu);
	if (!mtu)
		mtu = p->link_mtu;
	ret = ep_connect(a, &b->info, mtu, PSN_A, PSN_B);
	if (!ret)
		ret = ep_connect(b, &a->info, mtu, PSN_B, PSN_A);
	if (!ktap_expect(!ret, "connect the QPs at path MTU %u: %s",
		    mtu_bytes(mtu), strerror(ret)))
		return false;
	p->mtu = mtu;
	p->broken = false;
	return true;
}

/* ---- one message from a source to a destination, then checked ---- */

struct seg {
	uint64_t off;
	uint32_t len;
};

struct xfer {
	int opcode;
	unsigned int flags;	/* IBV_SEND_INLINE */
	int nsrc;		/* gathered: requester SGEs, READ's range */
	int ndst;		/* scattered: receive SGEs, WRITE's range, */
	struct seg src[MAX_SGE + 1];	/* or READ's SGEs */
	struct seg dst[MAX_SGE + 1];
};

static bool is_send(int opcode)
{
	return opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM;
}

static bool has_imm(int opcode)
{
	return opcode == IBV_WR_SEND_WITH_IMM ||
	       opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

static int wc_opcode(int opcode)
{
	return is_send(opcode) ? IBV_WC_SEND :
	       opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
					    IBV_WC_RDMA_WRITE;
}

static uint32_t imm_of(uint32_t seed)
{
	return htonl(seed * 0x01000193u ^ 0xa5000000u);
}

/* The message in the destination segments in order, background around. */
static void runs_scatter(struct runs *rs, const struct seg *s, int n,
			 uint64_t len, uint32_t seed, uint64_t start,
			 uint64_t end, int msg)
{
	uint64_t cur = start, done = 0, k;
	int i;

	for (i = 0; i < n; i++) {
		runs_bg(rs, start, cur, s[i].off, seed ^ BG_XOR);
		k = MIN(s[i].len, len - done);
		runs_add(rs, s[i].off, k, seed, done, msg);
		done += k;
		cur = s[i].off + k;
	}
	runs_bg(rs, start, cur, end, seed ^ BG_XOR);
}

static bool xfer_run(struct pair *p, const struct xfer *x)
{
	bool read = x->opcode == IBV_WR_RDMA_READ;
	bool send = is_send(x->opcode), imm = has_imm(x->opcode);
	struct ep *from = read ? p->rsp : p->req, *to = read ? p->req : p->rsp;
	const struct seg *last = &x->dst[x->ndst - 1];
	uint64_t len = 0, base = 0, start, end;
	const struct seg *sg;
	struct wc_desc wc;
	struct wr_desc *w;
	int i, nsg;

	for (i = 0; i < x->nsrc; i++)
		len += x->src[i].len;
	start = x->dst[0].off - GUARD;
	end = last->off + last->len + GUARD;

	/* Background at the destination, the message at the source. */
	runs_reset(&R);
	runs_bg(&R, start, start, end, p->seed ^ BG_XOR);
	if (!ep_fill(to, &R, "destination"))
		return false;
	runs_reset(&R);
	for (i = 0; i < x->nsrc; base += x->src[i++].len)
		runs_add(&R, x->src[i].off, x->src[i].len, p->seed, base, 1);
	if (!ep_fill(from, &R, "source"))
		return false;

	if (send || imm) {
		post_reset();
		wr_add(RECV_ID, 0, 0);
		for (i = 0; send && i < x->ndst; i++)
			sge_add(x->dst[i].off, x->dst[i].len, MR_MAIN);
		if (!post_ok(p->rsp, true))
			return false;
	}

	post_reset();
	w = wr_add(SEND_ID, x->opcode, IBV_SEND_SIGNALED | x->flags);
	w->imm = imm_of(p->seed);
	w->rkey = p->rsp->info.rkey[MR_MAIN];
	w->raddr = p->rsp->info.addr + (read ? x->src[0].off : x->dst[0].off);
	sg = read ? x->dst : x->src;
	nsg = read ? x->ndst : x->nsrc;
	for (i = 0; len && i < nsg; i++)	/* no SGE at all for 0 bytes */
		sge_add(sg[i].off, sg[i].len, MR_MAIN);
	P.h.clobber = !!(x->flags & IBV_SEND_INLINE);
	if (!post_ok(p->req, false))
		return false;

	if (!poll_n(p->req, CQ_SEND, 1, &wc) ||
	    !wc_is(p->req, CQ_SEND, &wc, SEND_ID, IBV_WC_SUCCESS,
		   wc_opcode(x->opcode)))
		return false;
	if (read && !ktap_expect(wc.byte_len == len,
			    "READ completion byte_len %u, want %llu",
			    wc.byte_len, (unsigned long long)len))
		return false;
	if (send || imm) {
		if (!poll_n(p->rsp, CQ_RECV, 1, &wc) ||
		    !wc_is(p->rsp, CQ_RECV, &wc, RECV_ID, IBV_WC_SUCCESS,
			   send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM))
			return false;
		if (!ktap_expect(wc.byte_len == len,
			    "receive completion byte_len %u, want %llu",
			    wc.byte_len, (unsigned long long)len) ||
		    !ktap_expect(!!(wc.wc_flags & IBV_WC_WITH_IMM) == imm,
			    "receive completion wc_flags %#x", wc.wc_flags) ||
		    !ktap_expect(!imm || wc.imm == imm_of(p->seed),
			    "receive completion imm_data %#x, want %#x",
			    ntohl(wc.imm), ntohl(imm_of(p->seed))) ||
		    !ktap_expect(wc.qp_num == p->rsp->info.qpn,
			    "receive completion qp_num %#x, want %#x",
			    wc.qp_num, p->rsp->info.qpn))
			return false;
	}

	runs_reset(&R);
	runs_scatter(&R, x->dst, x->ndst, len, p->seed, start, end, 1);
	return ep_check(to, &R, "destination");
}

/* ---- the tests ---- */

struct test {
	char name[128];
	int (*fn)(struct pair *p, const struct test *t);
	bool reverse;		/* B (the server) is the requester */
	enum ibv_mtu mtu;	/* path MTU; 0: the link's */
	int opcode;
	uint32_t len;
	uint32_t src_off;
	uint32_t dst_off;
	int n;
};

static int skip(struct pair *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return T_SKIP;
}

static void seg_set(struct seg *s, uint64_t off, uint32_t len)
{
	s->off = off;
	s->len = len;
}

/* Lay @n segments out from @off on, apart and differently aligned. */
static void layout(struct seg *s, int n, const uint32_t *len, uint64_t off)
{
	int i;

	for (i = 0; i < n; i++) {
		off += GUARD + i * 5 % 8 + 1;
		seg_set(&s[i], off, len[i]);
		off += len[i];
	}
}

/* Split @total bytes into @n uneven pieces. */
static void split(uint32_t *len, int n, uint32_t total)
{
	uint32_t base = total / n, d = base / 3, sum = 0;
	int i;

	for (i = 0; i < n - 1; i++) {
		len[i] = i & 1 ? base + d : base - d;
		sum += len[i];
	}
	len[n - 1] = total - sum;
}

static int t_size(struct pair *p, const struct test *t)
{
	struct xfer x = { .opcode = t->opcode, .nsrc = 1, .ndst = 1 };

	seg_set(&x.src[0], SRC_OFF + t->src_off, t->len);
	seg_set(&x.dst[0], DST_OFF + t->dst_off,
		t->len + (is_send(t->opcode) ? RECV_SLACK : 0));
	return xfer_run(p, &x);
}

/* Odd SGE lengths: 2 and 4 SGEs cross packets mid-SGE, more are short. */
static uint32_t sge_len(int n, int i)
{
	static const uint32_t two[] = { 1, 4097 };
	static const uint32_t four[] = { 3, 255, 1025, 7 };

	if (n == 2)
		return two[i];
	if (n == 4)
		return four[i];
	return 1 + 2 * (i * 37 % 97);
}

/* t->n SGEs on the requester; for SEND, t->len receive SGEs. */
static int t_sge(struct pair *p, const struct test *t)
{
	struct xfer x = { .opcode = t->opcode };
	uint32_t len[MAX_SGE + 1], rlen[MAX_SGE + 1], total = 0;
	uint32_t max = p->req->info.max_send_sge;
	int i, n = t->n, m = t->len;

	if (t->opcode == IBV_WR_RDMA_READ)
		max = MIN(max, p->req->info.max_sge_rd);
	if (n > (int)max || n > MAX_SGE)
		return skip(p, "%d SGEs, the QP takes %u", n, max);
	if (is_send(t->opcode) && (m > (int)p->rsp->info.max_recv_sge ||
				   m > MAX_SGE))
		return skip(p, "%d receive SGEs, the QP takes %u", m,
			    p->rsp->info.max_recv_sge);
	for (i = 0; i < n; i++)
		total += len[i] = sge_len(n, i);

	if (t->opcode == IBV_WR_RDMA_READ) {
		x.nsrc = 1;
		seg_set(&x.src[0], SRC_OFF + 5, total);
		x.ndst = n;
		layout(x.dst, n, len, DST_OFF);
	} else {
		x.nsrc = n;
		layout(x.src, n, len, SRC_OFF);
		x.ndst = is_send(t->opcode) ? m : 1;
		if (is_send(t->opcode)) {
			split(rlen, m, total + RECV_SLACK);
			layout(x.dst, m, rlen, DST_OFF);
		} else {
			seg_set(&x.dst[0], DST_OFF + 7, total);
		}
	}
	return xfer_run(p, &x);
}

/* t->len bytes (0: max_inline_data) in t->n SGEs, source clobbered. */
static int t_inline(struct pair *p, const struct test *t)
{
	struct xfer x = { .opcode = t->opcode, .flags = IBV_SEND_INLINE };
	uint32_t max = p->req->info.max_inline;
	uint32_t len = t->len ? t->len : max;
	uint32_t piece[3] = { len };

	if (!max || len > max)
		return skip(p, "max_inline_data is %u", max);
	if (t->n == 3) {
		piece[0] = 1;
		piece[1] = 20;
		piece[2] = len - 21;
	}
	x.nsrc = t->n == 3 ? 3 : 1;
	layout(x.src, x.nsrc, piece, SRC_OFF);
	x.ndst = 1;
	seg_set(&x.dst[0], DST_OFF + 3,
		len + (is_send(t->opcode) ? RECV_SLACK : 0));
	return xfer_run(p, &x);
}

/* Sizes around the path MTU this test's pair was connected with. */
static int t_mtu(struct pair *p, const struct test *t)
{
	uint32_t m = mtu_bytes(p->mtu);
	const uint32_t sizes[] = { m - 1, m, m + 1, 3 * m + 5 };
	struct xfer x = { .opcode = t->opcode, .nsrc = 1, .ndst = 1 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		seg_set(&x.src[0], SRC_OFF + 1, sizes[i]);
		seg_set(&x.dst[0], DST_OFF + PAGE - 3, sizes[i] +
			(is_send(t->opcode) ? RECV_SLACK : 0));
		if (!xfer_run(p, &x))
			return ktap_expect(false, "at %u bytes", sizes[i]);
	}
	return T_PASS;
}

/* A SEND that finds no receive is retried (RNR) until one is posted. */
static int t_rnr(struct pair *p, const struct test *t)
{
	uint32_t len = 3 * mtu_bytes(p->mtu) + 5;
	uint64_t src = SRC_OFF + 1, dst = DST_OFF + 7;
	struct wc_desc wc;

	(void)t;
	runs_reset(&R);
	runs_bg(&R, dst - GUARD, dst - GUARD, dst + len + GUARD,
		p->seed ^ BG_XOR);
	if (!ep_fill(p->rsp, &R, "destination"))
		return T_FAIL;
	runs_reset(&R);
	runs_add(&R, src, len, p->seed, 0, 1);
	if (!ep_fill(p->req, &R, "source"))
		return T_FAIL;
	post_reset();
	wr_add(SEND_ID, IBV_WR_SEND, IBV_SEND_SIGNALED);
	sge_add(src, len, MR_MAIN);
	if (!post_ok(p->req, false) || !quiet(p->req, CQ_SEND))
		return T_FAIL;
	post_reset();
	wr_add(RECV_ID, 0, 0);
	sge_add(dst, len, MR_MAIN);
	if (!post_ok(p->rsp, true) ||
	    !poll_n(p->req, CQ_SEND, 1, &wc) ||
	    !wc_is(p->req, CQ_SEND, &wc, SEND_ID, IBV_WC_SUCCESS,
		   IBV_WC_SEND) ||
	    !poll_n(p->rsp, CQ_RECV, 1, &wc) ||
	    !wc_is(p->rsp, CQ_RECV, &wc, RECV_ID, IBV_WC_SUCCESS,
		   IBV_WC_RECV) ||
	    !ktap_expect(wc.byte_len == len, "byte_len %u, want %u", wc.byte_len,
		    len))
		return T_FAIL;
	runs_reset(&R);
	runs_bg(&R, dst - GUARD, dst - GUARD, dst, p->seed ^ BG_XOR);
	runs_add(&R, dst, len, p->seed, 0, 1);
	runs_bg(&R, dst - GUARD, dst + len, dst + len + GUARD,
		p->seed ^ BG_XOR);
	return ep_check(p->rsp, &R, "destination");
}

#define BATCH		64
#define SIGNAL_EVERY	16
#define BATCH_LEN	65
#define BATCH_STRIDE	128

/* Unsignaled WRITEs complete silently, the signaled ones in order. */
static int t_unsignaled(struct pair *p, const struct test *t)
{
	uint64_t end = DST_OFF + BATCH * BATCH_STRIDE + GUARD;
	struct wc_desc wc[BATCH / SIGNAL_EVERY];
	struct wr_desc *w;
	uint64_t dst;
	int i;

	(void)t;
	runs_reset(&R);
	runs_bg(&R, DST_OFF, DST_OFF, end, p->seed ^ BG_XOR);
	if (!ep_fill(p->rsp, &R, "destination"))
		return T_FAIL;
	runs_reset(&R);
	for (i = 0; i < BATCH; i++)
		runs_add(&R, SRC_OFF + i * BATCH_STRIDE + 1, BATCH_LEN,
			 p->seed + i, 0, i + 1);
	if (!ep_fill(p->req, &R, "sources"))
		return T_FAIL;

	post_reset();
	for (i = 0; i < BATCH; i++) {
		w = wr_add(SEND_ID + i, IBV_WR_RDMA_WRITE,
			   (i + 1) % SIGNAL_EVERY ? 0 : IBV_SEND_SIGNALED);
		w->raddr = p->rsp->info.addr + DST_OFF + i * BATCH_STRIDE + 3;
		w->rkey = p->rsp->info.rkey[MR_MAIN];
		sge_add(SRC_OFF + i * BATCH_STRIDE + 1, BATCH_LEN, MR_MAIN);
	}
	if (!post_ok(p->req, false) ||
	    !poll_n(p->req, CQ_SEND, ARRAY_SIZE(wc), wc))
		return T_FAIL;
	for (i = 0; i < (int)ARRAY_SIZE(wc); i++)
		if (!wc_is(p->req, CQ_SEND, &wc[i],
			   SEND_ID + (i + 1) * SIGNAL_EVERY - 1,
			   IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE))
			return T_FAIL;
	if (!quiet(p->req, CQ_SEND))
		return T_FAIL;

	runs_reset(&R);
	for (i = 0, dst = DST_OFF; i < BATCH; i++) {
		runs_bg(&R, DST_OFF, dst, DST_OFF + i * BATCH_STRIDE + 3,
			p->seed ^ BG_XOR);
		dst = DST_OFF + i * BATCH_STRIDE + 3;
		runs_add(&R, dst, BATCH_LEN, p->seed + i, 0, i + 1);
		dst += BATCH_LEN;
	}
	runs_bg(&R, DST_OFF, dst, end, p->seed ^ BG_XOR);
	return ep_check(p->rsp, &R, "destinations");
}

#define BURST		256
#define BURST_LEN	4096
#define BURST_STRIDE	(BURST_LEN + GUARD)

static struct wc_desc WC[CQ_DEPTH];

/* Back-to-back SENDs, a queue depth at a time: in order and intact. */
static int t_burst(struct pair *p, const struct test *t)
{
	uint32_t round = MIN(QP_DEPTH, MIN(p->req->info.max_send_wr,
					   p->rsp->info.max_recv_wr));
	uint64_t end = DST_OFF + BURST * BURST_STRIDE, dst;
	int i, j, k;

	(void)t;
	runs_reset(&R);
	runs_bg(&R, DST_OFF, DST_OFF, end, p->seed ^ BG_XOR);
	if (!ep_fill(p->rsp, &R, "destinations"))
		return T_FAIL;
	runs_reset(&R);
	for (i = 0; i < BURST; i++)
		runs_add(&R, SRC_OFF + i * BURST_LEN, BURST_LEN, p->seed + i,
			 0, i + 1);
	if (!ep_fill(p->req, &R, "sources"))
		return T_FAIL;

	for (i = 0; i < BURST; i += k) {
		k = MIN(round, (uint32_t)(BURST - i));
		post_reset();
		for (j = i; j < i + k; j++) {
			wr_add(RECV_ID + j, 0, 0);
			sge_add(DST_OFF + j * BURST_STRIDE, BURST_LEN, MR_MAIN);
		}
		if (!post_ok(p->rsp, true))
			return T_FAIL;
		post_reset();
		for (j = i; j < i + k; j++) {
			wr_add(SEND_ID + j, IBV_WR_SEND, IBV_SEND_SIGNALED);
			sge_add(SRC_OFF + j * BURST_LEN, BURST_LEN, MR_MAIN);
		}
		if (!post_ok(p->req, false) ||
		    !poll_n(p->req, CQ_SEND, k, WC))
			return T_FAIL;
		for (j = 0; j < k; j++)
			if (!wc_is(p->req, CQ_SEND, &WC[j], SEND_ID + i + j,
				   IBV_WC_SUCCESS, IBV_WC_SEND))
				return T_FAIL;
		if (!poll_n(p->rsp, CQ_RECV, k, WC))
			return T_FAIL;
		for (j = 0; j < k; j++)
			if (!wc_is(p->rsp, CQ_RECV, &WC[j], RECV_ID + i + j,
				   IBV_WC_SUCCESS, IBV_WC_RECV) ||
			    !ktap_expect(WC[j].byte_len == BURST_LEN,
				    "receive %d: byte_len %u", i + j,
				    WC[j].byte_len))
				return T_FAIL;
	}

	runs_reset(&R);
	for (i = 0, dst = DST_OFF; i < BURST; i++) {
		runs_bg(&R, DST_OFF, dst, DST_OFF + i * BURST_STRIDE,
			p->seed ^ BG_XOR);
		dst = DST_OFF + i * BURST_STRIDE;
		runs_add(&R, dst, BURST_LEN, p->seed + i, 0, i + 1);
		dst += BURST_LEN;
	}
	runs_bg(&R, DST_OFF, dst, end, p->seed ^ BG_XOR);
	return ep_check(p->rsp, &R, "destinations");
}

#define EVENT_ROUNDS	4
#define EVENT_LEN	1000
#define EVENT_STRIDE	2048

static bool event_on(struct ep *ep, int cq)
{
	int got = ep_event(ep);

	if (got == -ETIMEDOUT)
		poll_timed_out = true;
	if (got < 0)
		return ktap_expect(false, "%s: no completion event: %s", ep->name,
			      strerror(-got));
	return ktap_expect(got == cq, "%s: event on CQ %d, want its %s CQ",
		      ep->name, got, cq_name[cq]);
}

/* Armed CQs raise an event on the channel, like ibv_rc_pingpong -e. */
static int t_events(struct pair *p, const struct test *t)
{
	uint64_t end = DST_OFF + EVENT_ROUNDS * EVENT_STRIDE, dst;
	struct wc_desc wc;
	int i, ret;

	(void)t;
	runs_reset(&R);
	runs_bg(&R, DST_OFF, DST_OFF, end, p->seed ^ BG_XOR);
	if (!ep_fill(p->rsp, &R, "destinations"))
		return T_FAIL;
	runs_reset(&R);
	for (i = 0; i < EVENT_ROUNDS; i++)
		runs_add(&R, SRC_OFF + i * EVENT_STRIDE + 1, EVENT_LEN,
			 p->seed + i, 0, i + 1);
	if (!ep_fill(p->req, &R, "sources"))
		return T_FAIL;

	for (i = 0; i < EVENT_ROUNDS; i++) {
		ret = ep_arm(p->rsp, CQ_RECV);
		if (!ret)
			ret = ep_arm(p->req, CQ_SEND);
		if (!ktap_expect(!ret, "req_notify_cq: %s", strerror(ret)))
			return T_FAIL;
		post_reset();
		wr_add(RECV_ID + i, 0, 0);
		sge_add(DST_OFF + i * EVENT_STRIDE + 5,
			EVENT_LEN + RECV_SLACK, MR_MAIN);
		if (!post_ok(p->rsp, true))
			return T_FAIL;
		post_reset();
		wr_add(SEND_ID + i, IBV_WR_SEND, IBV_SEND_SIGNALED);
		sge_add(SRC_OFF + i * EVENT_STRIDE + 1, EVENT_LEN, MR_MAIN);
		if (!post_ok(p->req, false) ||
		    !event_on(p->req, CQ_SEND) ||
		    !poll_n(p->req, CQ_SEND, 1, &wc) ||
		    !wc_is(p->req, CQ_SEND, &wc, SEND_ID + i, IBV_WC_SUCCESS,
			   IBV_WC_SEND) ||
		    !event_on(p->rsp, CQ_RECV) ||
		    !poll_n(p->rsp, CQ_RECV, 1, &wc) ||
		    !wc_is(p->rsp, CQ_RECV, &wc, RECV_ID + i, IBV_WC_SUCCESS,
			   IBV_WC_RECV) ||
		    !ktap_expect(wc.byte_len == EVENT_LEN, "byte_len %u",
			    wc.byte_len))
			return T_FAIL;
	}

	runs_reset(&R);
	for (i = 0, dst = DST_OFF; i < EVENT_ROUNDS; i++) {
		runs_bg(&R, DST_OFF, dst, DST_OFF + i * EVENT_STRIDE + 5,
			p->seed ^ BG_XOR);
		dst = DST_OFF + i * EVENT_STRIDE + 5;
		runs_add(&R, dst, EVENT_LEN, p->seed + i, 0, i + 1);
		dst += EVENT_LEN;
	}
	runs_bg(&R, DST_OFF, dst, end, p->seed ^ BG_XOR);
	return ep_check(p->rsp, &R, "destinations");
}

/* ---- errors: each leaves the pair to be replaced ---- */

static int t_bad_lkey(struct pair *p, const struct test *t)
{
	struct wc_desc wc;

	(void)t;
	p->broken = true;
	post_reset();
	wr_add(SEND_ID, IBV_WR_SEND, IBV_SEND_SIGNALED);
	sge_add(SRC_OFF, 64, MR_BAD);
	return post_ok(p->req, false) && poll_n(p->req, CQ_SEND, 1, &wc) &&
	       wc_is(p->req, CQ_SEND, &wc, SEND_ID, IBV_WC_LOC_PROT_ERR, -1);
}

/*
 * An RDMA access the responder must refuse: @len bytes at @off of MR @mr
 * (its rkey spoilt if @bad_key). REM_ACCESS_ERR, and the bytes it would
 * have written (at the responder for WRITE, here for READ) untouched.
 */
static int access_err(struct pair *p, int opcode, int mr, uint64_t off,
		      uint32_t len, bool bad_key)
{
	bool read = opcode == IBV_WR_RDMA_READ;
	struct ep *to = read ? p->req : p->rsp;
	uint64_t dst = read ? DST_OFF + 3 : off;
	uint64_t start = dst - GUARD, end = dst + len + GUARD;
	struct wc_desc wc;
	struct wr_desc *w;

	p->broken = true;
	runs_reset(&R);
	runs_bg(&R, start, start, end, p->seed ^ BG_XOR);
	if (!ep_fill(to, &R, "destination"))
		return T_FAIL;
	runs_reset(&R);
	runs_add(&R, read ? off : SRC_OFF + 1, len, p->seed, 0, 1);
	if (!ep_fill(read ? p->rsp : p->req, &R, "source"))
		return T_FAIL;
	post_reset();
	w = wr_add(SEND_ID, opcode, IBV_SEND_SIGNALED);
	w->raddr = p->rsp->info.addr + off;
	w->rkey = p->rsp->info.rkey[mr] ^ (bad_key ? BAD_KEY_XOR : 0);
	sge_add(read ? dst : SRC_OFF + 1, len, MR_MAIN);
	if (!post_ok(p->req, false) || !poll_n(p->req, CQ_SEND, 1, &wc) ||
	    !wc_is(p->req, CQ_SEND, &wc, SEND_ID, IBV_WC_REM_ACCESS_ERR, -1))
		return T_FAIL;
	runs_reset(&R);
	runs_bg(&R, start, start, end, p->seed ^ BG_XOR);
	return ep_check(to, &R, "destination");
}

static int t_bad_rkey(struct pair *p, const struct test *t)
{
	(void)t;
	return access_err(p, IBV_WR_RDMA_WRITE, MR_MAIN, DST_OFF + 1,
			  2 * mtu_bytes(p->mtu) + 3, true);
}

static int t_write_past_end(struct pair *p, const struct test *t)
{
	(void)t;
	return access_err(p, IBV_WR_RDMA_WRITE, MR_NOREAD, AUX_OFF + AUX_LEN,
			  64, false);
}

static int t_write_over_end(struct pair *p, const struct test *t)
{
	uint32_t len = MIN(3 * mtu_bytes(p->mtu), AUX_LEN);

	(void)t;
	return access_err(p, IBV_WR_RDMA_WRITE, MR_NOREAD,
			  AUX_OFF + AUX_LEN - len + 1, len, false);
}

static int t_write_no_access(struct pair *p, const struct test *t)
{
	(void)t;
	return access_err(p, IBV_WR_RDMA_WRITE, MR_NOWRITE, AUX_OFF + 100,
			  100, false);
}

static int t_read_no_access(struct pair *p, const struct test *t)
{
	(void)t;
	return access_err(p, IBV_WR_RDMA_READ, MR_NOREAD, AUX_OFF + 100, 100,
			  false);
}

/* A post that must fail with @want at its first WR, nothing posted. */
static int post_refused(struct pair *p, int want, int want_bad)
{
	int bad, ret;

	p->broken = true;	/* in case it went in after all */
	ret = ep_post(p->req, false, &bad);
	return ktap_expect(ret == want && bad == want_bad,
		      "post_send: %d (%s), bad_wr %d; want %s, bad_wr %d",
		      ret, strerror(ret < 0 ? -ret : ret), bad,
		      strerror(want), want_bad);
}

/* No receive at the responder: the SENDs wait (RNR), the SQ fills up. */
static int t_sq_full(struct pair *p, const struct test *t)
{
	uint32_t i, depth = p->req->info.max_send_wr;

	(void)t;
	if (depth + 1 > MAX_WR)
		return skip(p, "max_send_wr %u is over the test's %d", depth,
			    MAX_WR - 1);
	post_reset();
	for (i = 0; i <= depth; i++) {
		wr_add(SEND_ID + i, IBV_WR_SEND, IBV_SEND_SIGNALED);
		sge_add(SRC_OFF + i, 1, MR_MAIN);
	}
	return post_refused(p, ENOMEM, depth);
}

static int t_bad_opcode(struct pair *p, const struct test *t)
{
	(void)t;
	post_reset();
	wr_add(SEND_ID, 0x7f, IBV_SEND_SIGNALED);
	sge_add(SRC_OFF, 64, MR_MAIN);
	return post_refused(p, EINVAL, 0);
}

static int t_too_many_sge(struct pair *p, const struct test *t)
{
	uint32_t i, n = p->req->info.max_send_sge + 1;

	(void)t;
	if (n > MAX_SGE + 1)
		return skip(p, "max_send_sge %u is over the test's %d", n - 1,
			    MAX_SGE);
	post_reset();
	wr_add(SEND_ID, IBV_WR_SEND, IBV_SEND_SIGNALED);
	for (i = 0; i < n; i++)
		sge_add(SRC_OFF + i * 8, 8, MR_MAIN);
	return post_refused(p, EINVAL, 0);
}

/* Queue a WRITE the responder refuses: the requester's QP goes to ERR. */
static void add_bad_write(struct pair *p, uint64_t wr_id)
{
	struct wr_desc *w = wr_add(wr_id, IBV_WR_RDMA_WRITE,
				   IBV_SEND_SIGNALED);

	w->raddr = p->rsp->info.addr + DST_OFF;
	w->rkey = p->rsp->info.rkey[MR_MAIN] ^ BAD_KEY_XOR;
	sge_add(SRC_OFF, 64, MR_MAIN);
}

static bool bad_write_failed(struct pair *p, uint64_t wr_id)
{
	struct wc_desc wc;

	return poll_n(p->req, CQ_SEND, 1, &wc) &&
	       wc_is(p->req, CQ_SEND, &wc, wr_id, IBV_WC_REM_ACCESS_ERR, -1);
}

static int t_flush_sq(struct pair *p, const struct test *t)
{
	static const int op[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE,
				  IBV_WR_RDMA_READ };
	struct wc_desc wc[ARRAY_SIZE(op)];
	struct wr_desc *w;
	size_t i;

	(void)t;
	p->broken = true;
	post_reset();
	add_bad_write(p, SEND_ID);
	for (i = 0; i < ARRAY_SIZE(op); i++) {
		w = wr_add(SEND_ID + 1 + i, op[i], IBV_SEND_SIGNALED);
		w->raddr = p->rsp->info.addr + DST_OFF + 4096;
		w->rkey = p->rsp->info.rkey[MR_MAIN];
		sge_add(DST_OFF + 4096 * (i + 1), 64, MR_MAIN);
	}
	if (!post_ok(p->req, false) || !bad_write_failed(p, SEND_ID) ||
	    !poll_n(p->req, CQ_SEND, ARRAY_SIZE(wc), wc))
		return T_FAIL;
	for (i = 0; i < ARRAY_SIZE(wc); i++)
		if (!wc_is(p->req, CQ_SEND, &wc[i], SEND_ID + 1 + i,
			   IBV_WC_WR_FLUSH_ERR, -1))
			return T_FAIL;
	return quiet(p->req, CQ_SEND);
}

static int t_flush_rq(struct pair *p, const struct test *t)
{
	struct wc_desc wc[2];
	int i;

	(void)t;
	p->broken = true;
	post_reset();
	for (i = 0; i < 2; i++) {
		wr_add(RECV_ID + i, 0, 0);
		sge_add(DST_OFF + i * 4096, 4096, MR_MAIN);
	}
	if (!post_ok(p->req, true))
		return T_FAIL;
	post_reset();
	add_bad_write(p, SEND_ID);
	if (!post_ok(p->req, false) || !bad_write_failed(p, SEND_ID) ||
	    !poll_n(p->req, CQ_RECV, 2, wc))
		return T_FAIL;
	for (i = 0; i < 2; i++)
		if (!wc_is(p->req, CQ_RECV, &wc[i], RECV_ID + i,
			   IBV_WC_WR_FLUSH_ERR, -1))
			return T_FAIL;
	return T_PASS;
}

static int t_post_in_err(struct pair *p, const struct test *t)
{
	struct wc_desc wc;

	(void)t;
	p->broken = true;
	post_reset();
	add_bad_write(p, SEND_ID);
	if (!post_ok(p->req, false) || !bad_write_failed(p, SEND_ID))
		return T_FAIL;
	post_reset();
	wr_add(SEND_ID + 1, IBV_WR_SEND, IBV_SEND_SIGNALED);
	sge_add(SRC_OFF, 64, MR_MAIN);
	return post_ok(p->req, false) && poll_n(p->req, CQ_SEND, 1, &wc) &&
	       wc_is(p->req, CQ_SEND, &wc, SEND_ID + 1, IBV_WC_WR_FLUSH_ERR,
		     -1);
}

/* ---- the list ---- */

static struct test tests[200];
static int ntests, dropped;
static const char *prefix = "";

static struct test *add(int (*fn)(struct pair *, const struct test *),
			const char *fmt, ...)
{
	static struct test spare;
	struct test *t;
	va_list ap;
	int n;

	if (ntests == ARRAY_SIZE(tests)) {
		dropped++;	/* planned, never run: the plan fails */
		return &spare;
	}
	t = &tests[ntests++];
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	n = snprintf(t->name, sizeof(t->name), "%s", prefix);
	va_start(ap, fmt);
	vsnprintf(t->name + n, sizeof(t->name) - n, fmt, ap);
	va_end(ap);
	return t;
}

static const struct {
	int opcode;
	const char *name;
	bool zero;	/* 0 bytes too */
	bool huge;	/* 1 MiB too: only a few, TCG is slow */
} opdefs[] = {
	{ IBV_WR_SEND, "SEND", true, true },
	{ IBV_WR_SEND_WITH_IMM, "SEND_WITH_IMM", true, false },
	{ IBV_WR_RDMA_WRITE, "RDMA_WRITE", true, true },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM", true, false },
	{ IBV_WR_RDMA_READ, "RDMA_READ", false, true },
};

static const char *op_name(int opcode)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opdefs); i++)
		if (opdefs[i].opcode == opcode)
			return opdefs[i].name;
	return "?";
}

static struct test *add_size(int opcode, uint32_t len, const char *label,
			     uint32_t src_off, uint32_t dst_off)
{
	struct test *t = add(t_size, "%s %u B%s, src +%u, dst +%u",
			     op_name(opcode), len, label, src_off, dst_off);

	t->opcode = opcode;
	t->len = len;
	t->src_off = src_off;
	t->dst_off = dst_off;
	return t;
}

static void add_sge(int opcode, int n, int m, const char *what)
{
	struct test *t;

	if (is_send(opcode))
		t = add(t_sge, "SEND gathered from %d SGEs%s into %d receive SGEs",
			n, what, m);
	else if (opcode == IBV_WR_RDMA_READ)
		t = add(t_sge, "RDMA_READ scattered into %d SGEs%s", n, what);
	else
		t = add(t_sge, "RDMA_WRITE gathered from %d SGEs%s", n, what);
	t->opcode = opcode;
	t->n = n;
	t->len = m;
}

static void add_inline(int opcode, uint32_t len, int n, uint32_t max)
{
	struct test *t;

	if (len)
		t = add(t_inline, "inline %s of %u B from %d SGE%s, source reused at once",
			op_name(opcode), len, n, n > 1 ? "s" : "");
	else
		t = add(t_inline, "inline %s of max_inline_data (%u B), source reused at once",
			op_name(opcode), max);
	t->opcode = opcode;
	t->len = len;
	t->n = n;
}

static void build(struct pair *p)
{
	static const uint32_t offs[] = { 0, 1, 7, PAGE - 3 };
	const struct qp_info *a = &p->ep[0]->info, *b = &p->ep[1]->info;
	uint32_t m = mtu_bytes(p->link_mtu);
	const struct {
		uint32_t len;
		const char *label;
	} sizes[] = {
		{ 0, "" }, { 1, "" }, { 3, "" }, { 255, "" }, { 256, "" },
		{ 257, "" }, { m - 1, " (MTU-1)" }, { m, " (MTU)" },
		{ m + 1, " (MTU+1)" }, { 4095, "" }, { 4096, "" },
		{ 4097, "" }, { 3 * m + 5, " (3*MTU+5)" },
		{ 65536 + 7, " (64 KiB+7)" }, { (1 << 20) + 13, " (1 MiB+13)" },
	};
	static const enum ibv_mtu mtus[] = { IBV_MTU_256, IBV_MTU_1024,
					     IBV_MTU_4096 };
	uint32_t rd = MIN(a->max_send_sge, a->max_sge_rd);
	struct test *t;
	size_t o, i;

	for (o = 0; o < ARRAY_SIZE(opdefs); o++)
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			if ((!sizes[i].len && !opdefs[o].zero) ||
			    (sizes[i].len > (1 << 20) && !opdefs[o].huge))
				continue;
			add_size(opdefs[o].opcode, sizes[i].len,
				 sizes[i].label, offs[(i + o) % 4],
				 offs[(i + o + 2) % 4]);
		}
	add(t_rnr, "a SEND that finds no receive is retried after RNR, then delivered");
	add_sge(IBV_WR_SEND, 2, 3, "");
	add_sge(IBV_WR_SEND, 4, 3, "");
	add_sge(IBV_WR_SEND, a->max_send_sge, b->max_recv_sge,
		" (max_send_sge)");
	add_sge(IBV_WR_RDMA_WRITE, a->max_send_sge, 0, " (max_send_sge)");
	add_sge(IBV_WR_RDMA_READ, rd, 0, " (max_send_sge, max_sge_rd)");
	add_inline(IBV_WR_SEND, 1, 1, 0);
	add_inline(IBV_WR_SEND, 64, 3, 0);
	add_inline(IBV_WR_SEND, 0, 1, a->max_inline);
	add_inline(IBV_WR_RDMA_WRITE, 0, 1, a->max_inline);
	add(t_unsignaled, "%d RDMA_WRITEs, every %dth signaled: only those complete, in order",
	    BATCH, SIGNAL_EVERY);
	add(t_burst, "%d SENDs of %d B back to back arrive in order and intact",
	    BURST, BURST_LEN);
	add(t_events, "completion events on the send and receive CQs (req_notify_cq, get_cq_event)");
	for (i = 0; i < ARRAY_SIZE(mtus); i++)
		for (o = 0; o < ARRAY_SIZE(opdefs); o++) {
			if (has_imm(opdefs[o].opcode))
				continue;
			t = add(t_mtu, "path MTU %u: %s of MTU-1, MTU, MTU+1, 3*MTU+5 B",
				mtu_bytes(mtus[i]), opdefs[o].name);
			t->mtu = mtus[i];
			t->opcode = opdefs[o].opcode;
		}

	/* The other way round: the peer requests, we respond. */
	prefix = p->loop ? "QP B as requester: " : "server as requester: ";
	i = ntests;
	add_size(IBV_WR_SEND, 4097, "", 1, 7);
	add_size(IBV_WR_SEND_WITH_IMM, 257, "", 7, 0);
	add_size(IBV_WR_RDMA_WRITE, 65536 + 7, " (64 KiB+7)", 7, PAGE - 3);
	add_size(IBV_WR_RDMA_WRITE_WITH_IMM, 3 * m + 5, " (3*MTU+5)", 1,
		 PAGE - 3);
	add_size(IBV_WR_RDMA_READ, 65536 + 7, " (64 KiB+7)", PAGE - 3, 1);
	add_sge(IBV_WR_SEND, 4, 3, "");
	add_sge(IBV_WR_RDMA_READ, MIN(b->max_send_sge, b->max_sge_rd), 0,
		" (max_send_sge, max_sge_rd)");
	add_inline(IBV_WR_SEND, 0, 1, b->max_inline);
	for (; i < (size_t)ntests; i++)
		tests[i].reverse = true;
	prefix = "";

	add(t_bad_lkey, "SEND with a bad lkey completes LOC_PROT_ERR");
	add(t_bad_rkey, "RDMA_WRITE with a bad rkey completes REM_ACCESS_ERR, target unchanged");
	add(t_write_past_end, "RDMA_WRITE starting past the end of the remote MR completes REM_ACCESS_ERR, nothing written");
	add(t_write_over_end, "RDMA_WRITE ending 1 byte past the remote MR completes REM_ACCESS_ERR, nothing written");
	add(t_write_no_access, "RDMA_WRITE to an MR without REMOTE_WRITE completes REM_ACCESS_ERR, target unchanged");
	add(t_read_no_access, "RDMA_READ of an MR without REMOTE_READ completes REM_ACCESS_ERR, local buffer unchanged");
	add(t_sq_full, "post_send beyond the send queue depth fails ENOMEM at the first WR that does not fit");
	add(t_bad_opcode, "post_send with an invalid opcode fails EINVAL");
	add(t_too_many_sge, "post_send with max_send_sge + 1 SGEs fails EINVAL");
	add(t_flush_sq, "WRs behind a failed one complete WR_FLUSH_ERR, in order");
	add(t_flush_rq, "receives of a QP that failed complete WR_FLUSH_ERR, in order");
	add(t_post_in_err, "a SEND posted to a QP in ERR completes WR_FLUSH_ERR");
}

static void run_tests(struct pair *p)
{
	int i, ret, stalls = 0;

	for (i = 0; i < ntests; i++) {
		struct test *t = &tests[i];
		enum ibv_mtu mtu = t->mtu ? t->mtu : p->link_mtu;

		if (stalls >= MAX_STALLS) {
			ktap_result(false, t->name);
			continue;
		}
		/* Frames over the link MTU are dropped, not looped back. */
		if (!p->loop && mtu > p->link_mtu) {
			ktap_skip(t->name, "path MTU over the link's active MTU");
			continue;
		}
		if ((p->broken || p->mtu != mtu) && !pair_connect(p, mtu)) {
			ktap_result(false, t->name);
			continue;
		}
		p->req = p->ep[t->reverse];
		p->rsp = p->ep[!t->reverse];
		p->seed = (i + 1) * 0x10001u;
		p->why[0] = '\0';
		poll_timed_out = false;
		ret = t->fn(p, t);
		if (ret == T_SKIP)
			ktap_skip(t->name, p->why);
		else
			ktap_result(ret == T_PASS, t->name);
		if (ret == T_FAIL)
			p->broken = true;
		stalls = ret == T_FAIL && poll_timed_out ? stalls + 1 : 0;
		if (stalls == MAX_STALLS)
			ktap_print("%d tests in a row timed out: not running the rest",
				   MAX_STALLS);
	}
}

/* ---- setup ---- */

static bool ep_open(struct ep *ep, const char *dev, int gid_index)
{
	struct ibv_gid_entry ge;
	char s[INET6_ADDRSTRLEN];
	size_t i;
	static const struct {
		uint64_t off;
		uint32_t len;
		int access;
	} mrs[NR_MR] = {
		[MR_MAIN] = { 0, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ },
		[MR_NOWRITE] = { AUX_OFF, AUX_LEN, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_READ },
		[MR_NOREAD] = { AUX_OFF, AUX_LEN, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE },
	};

	ep->fd = -1;
	ep->gid_index = gid_index;
	ep->ctx = open_by_name(dev);
	if (!ep->ctx)
		return ktap_expect(false, "cannot open %s: is the provider loaded?",
			      dev);
	if (ibv_query_device(ep->ctx, &ep->dev))
		return ktap_expect(false, "query_device: %s", strerror(errno));
	if (ibv_query_gid_ex(ep->ctx, 1, gid_index, &ge, 0))
		return ktap_expect(false, "GID %d of %s: %s", gid_index, dev,
			      strerror(errno));
	ep->gid = ge.gid;
	ktap_print("%s: %s GID %d %s (%s)", ep->name, dev, gid_index,
		   inet_ntop(AF_INET6, ge.gid.raw, s, sizeof(s)),
		   ge.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" :
		   ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB");
	ep->pd = ibv_alloc_pd(ep->ctx);
	ep->ch = ibv_create_comp_channel(ep->ctx);
	ep->buf = aligned_alloc(PAGE, BUF_SIZE);
	if (!ep->pd || !ep->ch || !ep->buf)
		return ktap_expect(false, "alloc_pd, create_comp_channel: %s",
			      strerror(errno));
	memset(ep->buf, 0, BUF_SIZE);
	for (i = 0; i < NR_MR; i++) {
		ep->mr[i] = ibv_reg_mr(ep->pd, ep->buf + mrs[i].off,
				       mrs[i].len, mrs[i].access);
		if (!ep->mr[i])
			return ktap_expect(false, "reg_mr: %s", strerror(errno));
	}
	return true;
}

/* Release what ep_open() and the tests made; false if anything failed. */
static bool ep_close(struct ep *ep)
{
	int i, ret = 0;

	if (ep->qp)
		ret |= ibv_destroy_qp(ep->qp);
	for (i = 0; i < 2; i++)
		if (ep->cq[i])
			ret |= ibv_destroy_cq(ep->cq[i]);
	for (i = 0; i < NR_MR; i++)
		if (ep->mr[i])
			ret |= ibv_dereg_mr(ep->mr[i]);
	if (ep->ch)
		ret |= ibv_destroy_comp_channel(ep->ch);
	if (ep->pd)
		ret |= ibv_dealloc_pd(ep->pd);
	if (ep->ctx)
		ret |= ibv_close_device(ep->ctx);
	free(ep->buf);
	return !ret;
}

static void print_caps(const struct ep *ep)
{
	const struct qp_info *q = &ep->info;

	ktap_print("%s: QP %#x, max_send_wr %u, max_recv_wr %u, max_send_sge %u, max_recv_sge %u, max_inline_data %u, max_sge_rd %u, active MTU %u",
		   ep->name, q->qpn, q->max_send_wr, q->max_recv_wr,
		   q->max_send_sge, q->max_recv_sge, q->max_inline,
		   q->max_sge_rd, mtu_bytes(q->active_mtu));
}

/* Loop and client mode: we run the tests, against @b. */
static int run_all(struct ep *a, struct ep *b, bool loop)
{
	static struct pair pr;
	struct pair *p = &pr;
	uint64_t t0 = now_ms();
	size_t len = 0;
	bool ok;

	p->ep[0] = a;
	p->ep[1] = b;
	p->loop = loop;
	if (!pair_connect(p, 0)) {
		ktap_plan_count(1);
		ktap_result(false, "connect a QP pair");
		ep_close(a);
		return ktap_finish();
	}
	print_caps(a);
	print_caps(b);
	ktap_print("path MTU %u", mtu_bytes(p->link_mtu));
	build(p);
	ktap_plan_count(ntests + dropped + 1);
	run_tests(p);
	ok = true;
	if (!loop)
		ok = ktap_expect(!ep_call(b, OP_BYE, NULL, 0, NULL, &len),
			    "the server did not say bye");
	ok &= ktap_expect(ep_close(a), "releasing the %s's objects failed",
		     a->name);
	if (loop)
		ok &= ktap_expect(ep_close(b), "releasing the %s's objects failed",
			     b->name);
	ktap_result(ok, "everything released");
	ktap_print("%d tests in %llu s", ntests, (unsigned long long)
		   (now_ms() - t0 + 500) / 1000);
	return ktap_finish();
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s loop IBDEV [GID_INDEX]\n"
		"       %s server IBDEV PORT [GID_INDEX]\n"
		"       %s client IBDEV HOST PORT [GID_INDEX]\n",
		prog, prog, prog);
	return KSFT_FAIL;
}

int main(int argc, char **argv)
{
	static struct ep a, b;
	unsigned long nreq = 0;
	const char *env = getenv("RC_INTEGRITY_LOSSY");
	int fd;

	lossy = env && !strcmp(env, "1");
	if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "loop")) {
		ktap_header();
		a.name = "QP A";
		b.name = "QP B";
		if (!ep_open(&a, argv[2], argc > 3 ? atoi(argv[3]) : 1) ||
		    !ep_open(&b, argv[2], argc > 3 ? atoi(argv[3]) : 1)) {
			ktap_plan_count(1);
			ktap_result(false, "open the device twice");
			return ktap_finish();
		}
		return run_all(&a, &b, true);
	}
	if (argc >= 5 && argc <= 6 && !strcmp(argv[1], "client")) {
		ktap_header();
		a.name = "client";
		b.name = "server";
		if (!ep_open(&a, argv[2], argc > 5 ? atoi(argv[5]) : 1)) {
			ktap_plan_count(1);
			ktap_result(false, "open the device");
			return ktap_finish();
		}
		b.fd = sc_connect(argv[3], argv[4], CONNECT_S);
		if (b.fd < 0) {
			ktap_plan_count(1);
			ktap_result(false, "connect to the server");
			return ktap_finish();
		}
		sc_sock_opts(b.fd, RPC_MS);
		return run_all(&a, &b, false);
	}
	if (argc >= 4 && argc <= 5 && !strcmp(argv[1], "server")) {
		a.name = "server";
		ktap_plan(4);
		if (!ktap_result(ep_open(&a, argv[2],
					 argc > 4 ? atoi(argv[4]) : 1),
				 "open the device"))
			return KSFT_FAIL;
		fd = sc_accept(argv[3], CONNECT_S);
		if (!ktap_result(fd >= 0, "a client connected"))
			return KSFT_FAIL;
		sc_sock_opts(fd, RPC_MS + 60000);
		ktap_result(serve(&a, fd, &nreq),
			    "served the client until it said bye");
		ktap_print("%lu requests", nreq);
		close(fd);
		ktap_result(ep_close(&a), "everything released");
		return ktap_finish();
	}
	return usage(argv[0]);
}
