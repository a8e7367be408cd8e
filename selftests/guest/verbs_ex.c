// SPDX-License-Identifier: GPL-2.0
/*
 * The extended verbs on one device (loopback): QPs made with
 * ibv_create_qp_ex() post through the ibv_wr_* API, CQs made with
 * ibv_create_cq_ex() are polled with ibv_start_poll/next_poll/end_poll.
 * Every RC operation with its data checked, the completion fields, the
 * batch semantics (one doorbell, wr_abort, errors at wr_complete), a QP
 * reset emptying the CQ of its CQEs, a UD send through wr_set_ud_addr,
 * completion timestamps with each timestamp flag alone, both and neither,
 * and the EOPNOTSUPP/EINVAL answers to what softrdma does not have.
 *
 * usage: verbs_ex IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "pattern.h"
#include "verbs_util.h"

#define BUF_SIZE	(64 * 1024)
#define MSG		4000		/* a few packets at any path MTU */
#define GRH_LEN		40
#define WAIT_MS		30000
#define QKEY		0x11111111
#define MAX_INLINE	256

#define RC_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |	\
		 IBV_QP_EX_WITH_RDMA_WRITE |				\
		 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |			\
		 IBV_QP_EX_WITH_RDMA_READ |				\
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |			\
		 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |			\
		 IBV_QP_EX_WITH_SEND_WITH_INV |				\
		 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define UC_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |	\
		 IBV_QP_EX_WITH_RDMA_WRITE |				\
		 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |			\
		 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define UD_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

#define WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |	\
		  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |	\
		  IBV_WC_EX_WITH_SL)

struct ep {
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_qp_cap cap;		/* as granted */
};

/* One completion as the ibv_cq_ex readers give it. */
struct wcx {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
	uint32_t imm;			/* host order */
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *src_mr, *dst_mr;
static uint8_t *src, *dst;
static union ibv_gid gid;
static int gid_index;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* The readers the CQs that ep_open() makes have. */
static uint64_t cq_wc_flags = WC_FLAGS;

static struct ibv_cq_ex *cq_ex_open(struct ibv_comp_channel *channel)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256, .wc_flags = cq_wc_flags, .channel = channel,
	};

	return ibv_create_cq_ex(ctx, &ca);
}

static struct ibv_qp *qp_ex_open(struct ibv_cq_ex *cq, enum ibv_qp_type type,
				 uint64_t ops, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = type,
		.send_cq = ibv_cq_ex_to_cq(cq),
		.recv_cq = ibv_cq_ex_to_cq(cq),
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = MAX_INLINE },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = ops,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &init);

	if (qp && cap)
		*cap = init.cap;
	return qp;
}

/* @channel: for the CQ's events, or NULL. */
static int ep_open_ch(struct ep *e, enum ibv_qp_type type, uint64_t ops,
		      struct ibv_comp_channel *channel)
{
	e->cq = cq_ex_open(channel);
	if (!e->cq)
		return errno;
	e->qp = qp_ex_open(e->cq, type, ops, &e->cap);
	if (!e->qp)
		return errno;
	e->qpx = ibv_qp_to_qp_ex(e->qp);
	return e->qpx ? 0 : ENOSYS;
}

static int ep_open(struct ep *e, enum ibv_qp_type type, uint64_t ops)
{
	return ep_open_ch(e, type, ops, NULL);
}

static void ep_close(struct ep *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(e->cq));
	memset(e, 0, sizeof(*e));
}

static int to_init(struct ibv_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (type == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* RESET -> INIT -> RTR -> RTS, connected to @peer on this device. */
static int rc_connect(struct ep *e, const struct ep *peer)
{
	int ret = to_init(e->qp, IBV_QPT_RC);

	return ret ? ret : qp_rtr_rts(e->qp, peer->qp->qp_num, &gid,
				      gid_index, IBV_MTU_1024, 14, 7, 7);
}

/* @channel: for a's CQ's events, or NULL. */
static bool rc_pair_ch(struct ep *a, struct ep *b,
		       struct ibv_comp_channel *channel)
{
	int ret = ep_open_ch(a, IBV_QPT_RC, RC_OPS, channel);

	if (!ret)
		ret = ep_open(b, IBV_QPT_RC, RC_OPS);
	if (!ret)
		ret = rc_connect(a, b);
	if (!ret)
		ret = rc_connect(b, a);
	return ktap_expect(!ret, "set up a connected RC pair: %s",
			   strerror(ret));
}

static bool rc_pair(struct ep *a, struct ep *b)
{
	return rc_pair_ch(a, b, NULL);
}

static void wcx_read(struct ibv_cq_ex *cq, struct wcx *w)
{
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->byte_len = ibv_wc_read_byte_len(cq);
	w->qp_num = ibv_wc_read_qp_num(cq);
	w->src_qp = ibv_wc_read_src_qp(cq);
	w->wc_flags = ibv_wc_read_wc_flags(cq);
	w->imm = ntohl(ibv_wc_read_imm_data(cq));
}

/* ibv_start_poll until a completion is there or @end: false if none. */
static bool start_poll_wait(struct ibv_cq_ex *cq, uint64_t end)
{
	struct ibv_poll_cq_attr attr = {};
	int ret;

	do {
		ret = ibv_start_poll(cq, &attr);
	} while (ret == ENOENT && now_ms() < end);
	if (ret)
		ktap_print("start_poll: %s", strerror(ret));
	return !ret;
}

/*
 * Up to @n completions in one start_poll .. end_poll batch, waiting up to
 * WAIT_MS in all: start_poll and next_poll say ENOENT until one is there
 * (a batch stays open across next_poll's ENOENT). Returns how many.
 */
static int poll_ex(struct ibv_cq_ex *cq, struct wcx *w, int n)
{
	uint64_t end = now_ms() + WAIT_MS;
	int got = 0;
	int ret;

	if (!start_poll_wait(cq, end))
		return 0;
	wcx_read(cq, &w[got++]);
	while (got < n && now_ms() < end) {
		ret = ibv_next_poll(cq);
		if (ret == ENOENT)
			continue;
		if (ret) {
			ktap_print("next_poll: %s", strerror(ret));
			break;
		}
		wcx_read(cq, &w[got++]);
	}
	ibv_end_poll(cq);
	if (got < n)
		ktap_print("%d of %d completions in %d ms", got, n, WAIT_MS);
	return got;
}

/* The next completion is @wr_id, successful, of @opcode and @len bytes. */
static bool wc_is(struct ep *e, uint64_t wr_id, enum ibv_wc_opcode opcode,
		  uint32_t len, struct wcx *out)
{
	struct wcx w;

	if (poll_ex(e->cq, &w, 1) != 1)
		return false;
	if (out)
		*out = w;
	return ktap_expect(w.wr_id == wr_id && w.status == IBV_WC_SUCCESS &&
			   w.opcode == opcode && w.byte_len == len &&
			   w.qp_num == e->qp->qp_num,
			   "completion wr_id %llu %s opcode %d byte_len %u qp %u, expected %llu opcode %d byte_len %u qp %u",
			   (unsigned long long)w.wr_id,
			   ibv_wc_status_str(w.status), w.opcode, w.byte_len,
			   w.qp_num, (unsigned long long)wr_id, opcode, len,
			   e->qp->qp_num);
}

static bool post_recv(struct ep *e, uint64_t wr_id, void *buf, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = dst_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ktap_expect(!ibv_post_recv(e->qp, &wr, &bad), "post_recv: %s",
			   strerror(errno));
}

static bool complete(struct ep *e)
{
	int ret = ibv_wr_complete(e->qpx);

	return ktap_expect(!ret, "wr_complete: %s", strerror(ret));
}

/* Start a batch with one signaled WR's identity. */
static void wr_begin(struct ep *e, uint64_t wr_id)
{
	ibv_wr_start(e->qpx);
	e->qpx->wr_id = wr_id;
	e->qpx->wr_flags = IBV_SEND_SIGNALED;
}

/* Every operation of each type: an ibv_qp_ex with its builders. */
static void t_create_types(void)
{
	static const struct {
		enum ibv_qp_type type;
		uint64_t ops;
	} types[] = {
		{ IBV_QPT_RC, RC_OPS }, { IBV_QPT_UC, UC_OPS },
		{ IBV_QPT_UD, UD_OPS },
	};
	bool ok = true;
	size_t i;

	for (i = 0; ok && i < sizeof(types) / sizeof(types[0]); i++) {
		struct ep e = {};
		int ret = ep_open(&e, types[i].type, types[i].ops);

		ok = ktap_expect(!ret, "QP type %d: %s", types[i].type,
				 strerror(ret)) &&
		     ktap_expect(e.qpx->wr_start && e.qpx->wr_complete &&
				 e.qpx->wr_abort && e.qpx->wr_send &&
				 e.qpx->wr_send_imm && e.qpx->wr_set_sge &&
				 e.qpx->wr_set_sge_list &&
				 e.qpx->wr_set_inline_data &&
				 e.qpx->wr_set_inline_data_list,
				 "QP type %d: ops missing", types[i].type) &&
		     ktap_expect(!(types[i].ops & IBV_QP_EX_WITH_RDMA_READ) ||
				 (e.qpx->wr_rdma_read &&
				  e.qpx->wr_atomic_cmp_swp &&
				  e.qpx->wr_atomic_fetch_add),
				 "RC ops missing") &&
		     ktap_expect((types[i].type == IBV_QPT_UD) ==
				 !!e.qpx->wr_set_ud_addr,
				 "wr_set_ud_addr on QP type %d",
				 types[i].type);
		ep_close(&e);
	}
	ktap_result(ok, "create_qp_ex: RC, UC and UD QPs with every operation of their type");
}

/* Each bit alone on top of the type's own: EOPNOTSUPP, no QP. */
static void t_unsupported_ops(void)
{
	static const struct {
		enum ibv_qp_type type;
		uint64_t ops;
		const char *what;
	} bad[] = {
		{ IBV_QPT_UC, IBV_QP_EX_WITH_SEND_WITH_INV, "UC SEND_WITH_INV" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_LOCAL_INV, "UD LOCAL_INV" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_BIND_MW, "UD BIND_MW" },
		{ IBV_QPT_RC, IBV_QP_EX_WITH_TSO, "RC TSO" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_WRITE, "UC ATOMIC_WRITE" },
		{ IBV_QPT_RC, 1ull << 40, "RC bit 40" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, "UC RDMA_READ" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, "UC CMP_AND_SWP" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, "UC FETCH_AND_ADD" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, "UD RDMA_WRITE" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_READ, "UD RDMA_READ" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, "UD FETCH_AND_ADD" },
	};
	struct ibv_cq_ex *cq = cq_ex_open(NULL);
	bool ok = ktap_expect(cq, "create_cq_ex: %s", strerror(errno));
	size_t i;

	for (i = 0; ok && i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ibv_qp *qp;

		errno = 0;
		qp = qp_ex_open(cq, bad[i].type, IBV_QP_EX_WITH_SEND | bad[i].ops,
				NULL);
		ok = ktap_expect(!qp && errno == EOPNOTSUPP, "%s: %s",
				 bad[i].what, qp ? "created" : strerror(errno));
		if (qp)
			ibv_destroy_qp(qp);
	}
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ktap_result(ok, "create_qp_ex: unsupported send_ops_flags give EOPNOTSUPP");
}

/* create_qp_ex(init) must fail with @err. */
static bool qp_ex_fails(struct ibv_qp_init_attr_ex *init, int err,
			const char *what)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp_ex(ctx, init);
	if (qp)
		ibv_destroy_qp(qp);
	return ktap_expect(!qp && errno == err, "%s: %s, expected %s", what,
			   qp ? "created" : strerror(errno), strerror(err));
}

/*
 * The rest of ibv_qp_init_attr_ex: create_flags 0 and no send_ops_flags
 * give a plain QP, anything else we lack is EOPNOTSUPP, no PD EINVAL.
 */
static void t_create_attrs(void)
{
	struct ibv_cq_ex *cq = cq_ex_open(NULL);
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = pd,
	};
	struct ibv_qp *qp;
	bool ok;

	if (!ktap_expect(cq, "create_cq_ex: %s", strerror(errno))) {
		ktap_result(false, "create_qp_ex: create_flags 0 only, EOPNOTSUPP for what we lack, EINVAL without a PD");
		return;
	}
	init.send_cq = init.recv_cq = ibv_cq_ex_to_cq(cq);
	qp = ibv_create_qp_ex(ctx, &init);
	ok = ktap_expect(qp, "create_flags 0: %s", strerror(errno)) &&
	     ktap_expect(!ibv_qp_to_qp_ex(qp),
			 "an ibv_qp_ex without send_ops_flags");
	if (qp)
		ibv_destroy_qp(qp);

	init.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	ok = ok && qp_ex_fails(&init, EOPNOTSUPP, "create_flags");
	init.create_flags = 0;
	init.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	init.max_tso_header = 64;
	ok = ok && qp_ex_fails(&init, EOPNOTSUPP, "MAX_TSO_HEADER");
	init.comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ok = ok && qp_ex_fails(&init, EINVAL, "no PD");
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ktap_result(ok, "create_qp_ex: create_flags 0 only, EOPNOTSUPP for what we lack, EINVAL without a PD");
}

/* create_cq_ex(ca) must fail with @err. */
static bool cq_ex_fails(struct ibv_cq_init_attr_ex *ca, int err,
			const char *what)
{
	struct ibv_cq_ex *cq;

	errno = 0;
	cq = ibv_create_cq_ex(ctx, ca);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	return ktap_expect(!cq && errno == err, "%s: %s, expected %s", what,
			   cq ? "created" : strerror(errno), strerror(err));
}

/* An extended CQ in a parent domain of our PD. */
static bool parent_domain_cq(struct ibv_cq_init_attr_ex *ca)
{
	struct ibv_parent_domain_init_attr pa = { .pd = pd };
	struct ibv_pd *parent = ibv_alloc_parent_domain(ctx, &pa);
	struct ibv_cq_ex *cq;
	int err;

	if (!ktap_expect(parent, "alloc_parent_domain: %s", strerror(errno)))
		return false;
	ca->parent_domain = parent;
	cq = ibv_create_cq_ex(ctx, ca);
	err = errno;
	ca->parent_domain = NULL;
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ibv_dealloc_pd(parent);
	return ktap_expect(cq, "in a parent domain: %s", strerror(err));
}

static void t_create_cq_ex(void)
{
	struct ibv_device_attr dev;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct ibv_cq_ex *cq;
	bool ok;

	cq = ibv_create_cq_ex(ctx, &ca);
	ok = ktap_expect(cq, "standard wc_flags: %s", strerror(errno)) &&
	     ktap_expect(cq->read_byte_len && cq->read_imm_data &&
			 cq->read_qp_num && cq->read_src_qp &&
			 cq->read_slid && cq->read_sl &&
			 cq->read_dlid_path_bits && !cq->read_completion_ts,
			 "readers") &&
	     ktap_expect(!ibv_query_device(ctx, &dev), "query_device");
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	if (!ok)
		goto out;

	ca.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	ok = cq_ex_fails(&ca, EOPNOTSUPP, "IGNORE_OVERRUN");
	ca.flags = 0;
	ca.wc_flags = IBV_WC_EX_WITH_FLOW_TAG;
	ok = ok && cq_ex_fails(&ca, EOPNOTSUPP, "FLOW_TAG");
	ca.wc_flags = 0;
	ca.cqe = dev.max_cqe + 1;
	ok = ok && cq_ex_fails(&ca, EINVAL, "cqe > max_cqe");
	ca.cqe = 16;
	ca.comp_vector = ctx->num_comp_vectors + 1;
	ok = ok && cq_ex_fails(&ca, EINVAL, "comp_vector");
	ca.comp_vector = 0;

	/* IBV_CQ_INIT_ATTR_MASK_PD takes a parent domain, not a PD. */
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	ca.parent_domain = pd;
	ok = ok && cq_ex_fails(&ca, EINVAL, "a PD as parent domain");
	ok = ok && parent_domain_cq(&ca);
out:
	ktap_result(ok, "create_cq_ex: EOPNOTSUPP for FLOW_TAG and IGNORE_OVERRUN, EINVAL for cqe > max_cqe, a bad comp_vector, a PD for a parent domain");
}

/*
 * SEND: receiver and sender completions through the readers, the
 * sender's also through plain ibv_poll_cq() on the same extended CQ.
 */
static void t_send(struct ep *a, struct ep *b)
{
	struct ibv_wc wc;
	struct wcx w;
	uint64_t end;
	bool ok;
	int n;

	fill(src, MSG, 1);
	memset(dst, 0, MSG);
	ok = post_recv(b, 100, dst, MSG);
	wr_begin(a, 1);
	ibv_wr_send(a->qpx);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, MSG);
	ok = complete(a) && ok && wc_is(b, 100, IBV_WC_RECV, MSG, &w) &&
	     ktap_expect(w.src_qp == a->qp->qp_num &&
			 !(w.wc_flags & IBV_WC_WITH_IMM),
			 "src_qp %u, wc_flags %#x", w.src_qp, w.wc_flags) &&
	     same(dst, src, MSG);

	/* The same CQ polled the old way. */
	end = now_ms() + WAIT_MS;
	do {
		n = ibv_poll_cq(ibv_cq_ex_to_cq(a->cq), 1, &wc);
	} while (!n && now_ms() < end);
	ok = ok && ktap_expect(n == 1 && wc.wr_id == 1 &&
			       wc.status == IBV_WC_SUCCESS &&
			       wc.opcode == IBV_WC_SEND && wc.byte_len == MSG &&
			       wc.qp_num == a->qp->qp_num,
			       "sender: poll_cq %d, wr_id %llu %s opcode %d",
			       n, (unsigned long long)wc.wr_id,
			       ibv_wc_status_str(wc.status), wc.opcode);
	ktap_result(ok, "wr_send + wr_set_sge: SEND, both completions' fields, the sender's also by ibv_poll_cq");
}

static void t_send_imm(struct ep *a, struct ep *b)
{
	struct wcx w;
	bool ok;

	fill(src, MSG, 2);
	memset(dst, 0, MSG);
	ok = post_recv(b, 101, dst, MSG);
	wr_begin(a, 2);
	ibv_wr_send_imm(a->qpx, htonl(0x12345678));
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, MSG);
	ok = complete(a) && ok && wc_is(a, 2, IBV_WC_SEND, MSG, NULL) &&
	     wc_is(b, 101, IBV_WC_RECV, MSG, &w) &&
	     ktap_expect((w.wc_flags & IBV_WC_WITH_IMM) && w.imm == 0x12345678,
			 "wc_flags %#x imm %#x", w.wc_flags, w.imm) &&
	     same(dst, src, MSG);
	ktap_result(ok, "wr_send_imm: SEND_WITH_IMM, the receiver reads the immediate");
}

/* b binds type 2 window @mw over @mr's first page, known as @rkey. */
static bool bind_mw(struct ep *b, struct ibv_mw *mw, struct ibv_mr *mr,
		    uint32_t rkey, uint64_t wr_id)
{
	struct ibv_mw_bind_info info = {
		.mr = mr, .addr = (uintptr_t)dst, .length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	wr_begin(b, wr_id);
	ibv_wr_bind_mw(b->qpx, mw, rkey, &info);
	return complete(b) && wc_is(b, wr_id, IBV_WC_BIND_MW, 0, NULL);
}

/*
 * The window builders: wr_bind_mw opens a type 2 window that a WRITE goes
 * through; wr_send_inv closes it from the peer, wr_local_inv locally.
 * A type 2 window binds only while invalid, so each rebind proves the
 * invalidation before it took effect.
 */
static void t_mw(struct ep *a, struct ep *b)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, dst, BUF_SIZE,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = mr ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
	uint32_t rkey;
	struct wcx w;
	bool ok;

	ok = ktap_expect(mr && mw, "reg_mr/alloc_mw: %s", strerror(errno));
	if (ok) {
		rkey = ibv_inc_rkey(mw->rkey);
		fill(src, 1000, 9);
		memset(dst, 0, 1000);
		ok = bind_mw(b, mw, mr, rkey, 20);
		wr_begin(a, 21);
		ibv_wr_rdma_write(a->qpx, rkey, (uintptr_t)dst);
		ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, 1000);
		ok = ok && complete(a) &&
		     wc_is(a, 21, IBV_WC_RDMA_WRITE, 1000, NULL) &&
		     same(dst, src, 1000);

		ok = ok && post_recv(b, 22, dst + 8192, 64);
		wr_begin(a, 23);
		ibv_wr_send_inv(a->qpx, rkey);
		ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, 64);
		ok = ok && complete(a) && wc_is(a, 23, IBV_WC_SEND, 64, NULL) &&
		     wc_is(b, 22, IBV_WC_RECV, 64, &w) &&
		     ktap_expect(w.wc_flags & IBV_WC_WITH_INV,
				 "wc_flags %#x: no WITH_INV", w.wc_flags);

		rkey = ibv_inc_rkey(rkey);
		ok = ok && bind_mw(b, mw, mr, rkey, 24);
		wr_begin(b, 25);
		ibv_wr_local_inv(b->qpx, rkey);
		ok = ok && complete(b) &&
		     wc_is(b, 25, IBV_WC_LOCAL_INV, 0, NULL) &&
		     bind_mw(b, mw, mr, ibv_inc_rkey(rkey), 26);
	}
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
	ktap_result(ok, "wr_bind_mw, wr_send_inv, wr_local_inv: a type 2 window opened, written through, closed remotely and locally");
}

/* Two SGEs gathered into one WRITE. */
static void t_write(struct ep *a, struct ep *b)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)src, .length = 1000,
		  .lkey = src_mr->lkey },
		{ .addr = (uintptr_t)src + 3000, .length = MSG - 1000,
		  .lkey = src_mr->lkey },
	};
	bool ok;

	fill(src, MSG + 3000, 3);
	memset(dst, 0, MSG + 8);
	wr_begin(a, 3);
	ibv_wr_rdma_write(a->qpx, dst_mr->rkey, (uintptr_t)dst + 4);
	ibv_wr_set_sge_list(a->qpx, 2, sge);
	ok = complete(a) && wc_is(a, 3, IBV_WC_RDMA_WRITE, MSG, NULL) &&
	     same(dst + 4, src, 1000) &&
	     same(dst + 4 + 1000, src + 3000, MSG - 1000) &&
	     ktap_expect(!dst[3] && !dst[4 + MSG], "bytes written outside");
	(void)b;
	ktap_result(ok, "wr_rdma_write + wr_set_sge_list: WRITE of two SGEs, byte exact");
}

static void t_write_imm(struct ep *a, struct ep *b)
{
	struct wcx w;
	bool ok;

	fill(src, MSG, 4);
	memset(dst, 0, MSG);
	/* The immediate takes a receive WQE; its buffer stays unused. */
	ok = post_recv(b, 102, dst + MSG, 64);
	wr_begin(a, 4);
	ibv_wr_rdma_write_imm(a->qpx, dst_mr->rkey, (uintptr_t)dst,
			      htonl(0xfeedf00d));
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, MSG);
	ok = complete(a) && ok &&
	     wc_is(a, 4, IBV_WC_RDMA_WRITE, MSG, NULL) &&
	     wc_is(b, 102, IBV_WC_RECV_RDMA_WITH_IMM, MSG, &w) &&
	     ktap_expect((w.wc_flags & IBV_WC_WITH_IMM) && w.imm == 0xfeedf00d,
			 "wc_flags %#x imm %#x", w.wc_flags, w.imm) &&
	     same(dst, src, MSG);
	ktap_result(ok, "wr_rdma_write_imm: WRITE_WITH_IMM, data and immediate");
}

static void t_read(struct ep *a, struct ep *b)
{
	bool ok;

	fill(dst, MSG, 5);
	memset(src, 0, MSG + 16);
	wr_begin(a, 5);
	ibv_wr_rdma_read(a->qpx, dst_mr->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src + 8, MSG);
	ok = complete(a) && wc_is(a, 5, IBV_WC_RDMA_READ, MSG, NULL) &&
	     same(src + 8, dst, MSG) &&
	     ktap_expect(!src[7] && !src[8 + MSG], "bytes written outside");
	(void)b;
	ktap_result(ok, "wr_rdma_read: READ, byte exact");
}

/* One 8-byte atomic on dst[0..7]; the original value lands in src. */
static bool atomic(struct ep *a, uint64_t wr_id, bool cas, uint64_t cmp_add,
		   uint64_t swap, uint64_t *old)
{
	volatile uint64_t *res = (uint64_t *)src;

	*res = 0xdeadbeefdeadbeefull;
	wr_begin(a, wr_id);
	if (cas)
		ibv_wr_atomic_cmp_swp(a->qpx, dst_mr->rkey, (uintptr_t)dst,
				      cmp_add, swap);
	else
		ibv_wr_atomic_fetch_add(a->qpx, dst_mr->rkey, (uintptr_t)dst,
					cmp_add);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, 8);
	if (!complete(a) ||
	    !wc_is(a, wr_id, cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD, 8,
		   NULL))
		return false;
	*old = *res;
	return true;
}

static void t_cmp_swp(struct ep *a, struct ep *b)
{
	volatile uint64_t *target = (uint64_t *)dst;
	uint64_t old = 0;
	bool ok;

	*target = 0x1111222233334444ull;
	ok = atomic(a, 6, true, 0x1111222233334444ull, 0x5555666677778888ull,
		    &old) &&
	     ktap_expect(old == 0x1111222233334444ull &&
			 *target == 0x5555666677778888ull,
			 "match: old %#llx, now %#llx",
			 (unsigned long long)old,
			 (unsigned long long)*target) &&
	     atomic(a, 7, true, 0x1111222233334444ull, 0x9999ull, &old) &&
	     ktap_expect(old == 0x5555666677778888ull &&
			 *target == 0x5555666677778888ull,
			 "mismatch: old %#llx, now %#llx",
			 (unsigned long long)old,
			 (unsigned long long)*target);
	(void)b;
	ktap_result(ok, "wr_atomic_cmp_swp: swaps on a match only, returns the old value");
}

static void t_fetch_add(struct ep *a, struct ep *b)
{
	volatile uint64_t *target = (uint64_t *)dst;
	uint64_t old = 0;
	bool ok;

	*target = 0xfffffffffffffff0ull;
	ok = atomic(a, 8, false, 0x21, 0, &old) &&
	     ktap_expect(old == 0xfffffffffffffff0ull && *target == 0x11,
			 "old %#llx, now %#llx", (unsigned long long)old,
			 (unsigned long long)*target) &&
	     atomic(a, 9, false, 1ull << 40, 0, &old) &&
	     ktap_expect(old == 0x11 && *target == 0x11 + (1ull << 40),
			 "old %#llx, now %#llx", (unsigned long long)old,
			 (unsigned long long)*target);
	(void)b;
	ktap_result(ok, "wr_atomic_fetch_add: adds (with carry and wrap), returns the old value");
}

/* Inline data is copied at the setter: the buffer is reused at once. */
static void t_inline(struct ep *a, struct ep *b)
{
	uint8_t buf[MAX_INLINE], want[MAX_INLINE];
	struct ibv_data_buf list[3] = {
		{ .addr = buf, .length = 10 },
		{ .addr = buf + 100, .length = 90 },
		{ .addr = buf + 200, .length = 56 },
	};
	bool ok;

	fill(buf, sizeof(buf), 10);
	memcpy(want, buf, sizeof(buf));
	memset(dst, 0, 2 * MAX_INLINE);
	ok = post_recv(b, 110, dst, MAX_INLINE);
	wr_begin(a, 10);
	ibv_wr_send(a->qpx);
	ibv_wr_set_inline_data(a->qpx, buf, MAX_INLINE);
	memset(buf, 0, sizeof(buf));
	ok = complete(a) && ok &&
	     wc_is(b, 110, IBV_WC_RECV, MAX_INLINE, NULL) &&
	     wc_is(a, 10, IBV_WC_SEND, MAX_INLINE, NULL) &&
	     same(dst, want, MAX_INLINE);

	memcpy(buf, want, sizeof(buf));
	wr_begin(a, 11);
	ibv_wr_rdma_write(a->qpx, dst_mr->rkey, (uintptr_t)dst + MAX_INLINE);
	ibv_wr_set_inline_data_list(a->qpx, 3, list);
	memset(buf, 0, sizeof(buf));
	ok = complete(a) && ok &&
	     wc_is(a, 11, IBV_WC_RDMA_WRITE, 156, NULL) &&
	     same(dst + MAX_INLINE, want, 10) &&
	     same(dst + MAX_INLINE + 10, want + 100, 90) &&
	     same(dst + MAX_INLINE + 100, want + 200, 56);
	ktap_result(ok, "wr_set_inline_data(_list): inline SEND and WRITE, the buffers reused at once");
}

/*
 * One batch of WRs, one wr_complete: they run in order. The completions
 * are taken in one start_poll/next_poll/end_poll batch; after it, the
 * empty CQ's start_poll says ENOENT.
 */
static void t_batch(struct ep *a, struct ep *b)
{
	enum { N = 8 };
	struct ibv_poll_cq_attr attr = {};
	struct wcx w[N];
	bool ok = true;
	int i, ret;

	for (i = 0; ok && i < N; i++)
		ok = post_recv(b, 200 + i, dst + i * 64, 64);
	fill(src, N * 64, 12);
	ibv_wr_start(a->qpx);
	for (i = 0; i < N; i++) {
		a->qpx->wr_id = 20 + i;
		/* Unsignaled WRs in between, as a pipeline would have. */
		a->qpx->wr_flags = i % 2 ? IBV_SEND_SIGNALED : 0;
		ibv_wr_send_imm(a->qpx, htonl(i));
		ibv_wr_set_sge(a->qpx, src_mr->lkey,
			       (uintptr_t)src + i * 64, 64);
	}
	ok = complete(a) && ok && ktap_expect(poll_ex(b->cq, w, N) == N,
					      "receives");
	for (i = 0; ok && i < N; i++)
		ok = ktap_expect(w[i].wr_id == 200u + i &&
				 w[i].status == IBV_WC_SUCCESS &&
				 w[i].opcode == IBV_WC_RECV &&
				 w[i].byte_len == 64 && w[i].imm == (uint32_t)i,
				 "receive %d: wr_id %llu opcode %d imm %u", i,
				 (unsigned long long)w[i].wr_id, w[i].opcode,
				 w[i].imm);
	ok = ok && same(dst, src, N * 64) &&
	     ktap_expect(poll_ex(a->cq, w, N / 2) == N / 2, "sends");
	for (i = 0; ok && i < N / 2; i++)
		ok = ktap_expect(w[i].wr_id == 21u + 2 * i,
				 "send completion %d: wr_id %llu", i,
				 (unsigned long long)w[i].wr_id);
	ret = ibv_start_poll(b->cq, &attr);
	if (!ret)
		ibv_end_poll(b->cq);
	ok = ok && ktap_expect(ret == ENOENT, "start_poll on an empty CQ: %d",
			       ret);
	ktap_result(ok, "a batch of 8 WRs, one wr_complete: in order, completions through next_poll, then ENOENT");
}

/* wr_abort: nothing of the batch runs; the next batch comes first. */
static void t_abort(struct ep *a, struct ep *b)
{
	struct wcx w;
	bool ok;

	fill(src, 64, 13);
	memset(dst, 0, 128);
	ok = post_recv(b, 300, dst, 64);
	wr_begin(a, 30);
	ibv_wr_send(a->qpx);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src + 64, 64);
	ibv_wr_rdma_write(a->qpx, dst_mr->rkey, (uintptr_t)dst + 64);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, 64);
	ibv_wr_abort(a->qpx);

	wr_begin(a, 31);
	ibv_wr_send(a->qpx);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, 64);
	ok = complete(a) && ok && wc_is(a, 31, IBV_WC_SEND, 64, NULL) &&
	     wc_is(b, 300, IBV_WC_RECV, 64, &w) && same(dst, src, 64) &&
	     ktap_expect(!dst[64], "the aborted WRITE ran");
	ktap_result(ok, "wr_abort drops the batch: nothing of it runs");
}

/*
 * A batch with a bad WR fails at wr_complete with nothing posted: the
 * good WR before it does not run either, and the next batch comes first.
 */
static bool bad_batch(struct ep *a, int err, const char *what, int kind)
{
	struct ibv_sge sge[40];
	uint32_t i;
	int ret;

	for (i = 0; i < 40; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)src, .length = 8,
					   .lkey = src_mr->lkey };
	wr_begin(a, 40);
	ibv_wr_rdma_write(a->qpx, dst_mr->rkey, (uintptr_t)dst + 512);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, 8);
	switch (kind) {
	case 0:
		ibv_wr_rdma_write(a->qpx, dst_mr->rkey, (uintptr_t)dst);
		ibv_wr_set_sge_list(a->qpx, a->cap.max_send_sge + 1, sge);
		break;
	case 1:
		ibv_wr_rdma_read(a->qpx, dst_mr->rkey, (uintptr_t)dst);
		ibv_wr_set_inline_data(a->qpx, src, 8);
		break;
	case 2:
		ibv_wr_send(a->qpx);
		ibv_wr_set_inline_data(a->qpx, src, a->cap.max_inline_data + 1);
		break;
	case 3:
		/* The SQ holds max_send_wr; one of them is taken above. */
		for (i = 0; i < a->cap.max_send_wr; i++) {
			ibv_wr_rdma_write(a->qpx, dst_mr->rkey,
					  (uintptr_t)dst);
			ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src,
				       8);
		}
		break;
	}
	ret = ibv_wr_complete(a->qpx);
	return ktap_expect(ret == err, "%s: wr_complete %s, expected %s",
			   what, strerror(ret), strerror(err));
}

/* A WRITE of 8 bytes to dst + 800 on a QP not in RTS: refused. */
static bool not_before_rts(struct ep *e, uint64_t wr_id, const char *state)
{
	int ret;

	wr_begin(e, wr_id);
	ibv_wr_rdma_write(e->qpx, dst_mr->rkey, (uintptr_t)dst + 800);
	ibv_wr_set_sge(e->qpx, src_mr->lkey, (uintptr_t)src, 8);
	ret = ibv_wr_complete(e->qpx);
	return ktap_expect(ret == EINVAL, "%s: wr_complete %s", state,
			   strerror(ret));
}

static void t_errors(struct ep *a, struct ep *b)
{
	struct ep c = {}, d = {};
	bool ok;
	int ret;

	memset(dst, 0, 1024);
	fill(src, 8, 14);
	ok = bad_batch(a, EINVAL, "max_send_sge + 1 SGEs", 0) &&
	     bad_batch(a, EINVAL, "inline data on a READ", 1) &&
	     bad_batch(a, EINVAL, "max_inline_data + 1 bytes inline", 2) &&
	     bad_batch(a, ENOMEM, "max_send_wr + 1 WRs", 3);

	/* A setter with no WR built: EINVAL too. */
	wr_begin(a, 41);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, 8);
	ret = ibv_wr_complete(a->qpx);
	ok = ok && ktap_expect(ret == EINVAL, "setter first: %s",
			       strerror(ret));

	/* None of it ran: the next WR is the first completion. */
	wr_begin(a, 42);
	ibv_wr_rdma_write(a->qpx, dst_mr->rkey, (uintptr_t)dst + 600);
	ibv_wr_set_sge(a->qpx, src_mr->lkey, (uintptr_t)src, 8);
	ok = complete(a) && ok && wc_is(a, 42, IBV_WC_RDMA_WRITE, 8, NULL) &&
	     ktap_expect(!dst[512] && !dst[0], "a failed batch ran") &&
	     same(dst + 600, src, 8);

	/*
	 * A QP in RESET, then INIT, may not post; and what it was refused
	 * must not run once the QP is connected: the next WR comes first.
	 */
	ret = ep_open(&c, IBV_QPT_RC, RC_OPS);
	if (!ret)
		ret = ep_open(&d, IBV_QPT_RC, RC_OPS);
	ok = ok && ktap_expect(!ret, "QPs: %s", strerror(ret));
	if (ok) {
		ok = not_before_rts(&c, 43, "RESET") &&
		     ktap_expect(!to_init(c.qp, IBV_QPT_RC), "to INIT") &&
		     not_before_rts(&c, 44, "INIT") &&
		     ktap_expect(!rc_connect(&c, &d) && !rc_connect(&d, &c),
				 "connect");
	}
	if (ok) {
		wr_begin(&c, 45);
		ibv_wr_rdma_write(c.qpx, dst_mr->rkey, (uintptr_t)dst + 700);
		ibv_wr_set_sge(c.qpx, src_mr->lkey, (uintptr_t)src, 8);
		ok = complete(&c) &&
		     wc_is(&c, 45, IBV_WC_RDMA_WRITE, 8, NULL) &&
		     ktap_expect(!dst[800], "a refused WR ran");
	}
	ep_close(&c);
	ep_close(&d);
	(void)b;
	ktap_result(ok, "wr_complete fails the whole batch: EINVAL for SGEs, inline data, a lone setter, a QP before RTS; ENOMEM for a full SQ");
}

/* Wait up to WAIT_MS for a completion event of @cq on @channel. */
static bool cq_event(struct ibv_comp_channel *channel, struct ibv_cq_ex *cq)
{
	struct pollfd pfd = { .fd = channel->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (!ktap_expect(poll(&pfd, 1, WAIT_MS) == 1, "no CQ event") ||
	    !ktap_expect(!ibv_get_cq_event(channel, &ev_cq, &ev_ctx),
			 "get_cq_event: %s", strerror(errno)))
		return false;
	ibv_ack_cq_events(ev_cq, 1);
	return ktap_expect(ev_cq == ibv_cq_ex_to_cq(cq), "event of another CQ");
}

static int to_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/*
 * A QP reset drops the QP's CQEs nobody polled: afterwards start_poll
 * finds the CQ empty, and once connected again the QP's new completions
 * come through as usual.
 */
static void t_reset(void)
{
	struct ibv_comp_channel *channel = ibv_create_comp_channel(ctx);
	struct ibv_poll_cq_attr attr = {};
	struct ep a = {}, b = {};
	bool ok;
	int ret;

	ok = ktap_expect(channel, "create_comp_channel: %s",
			 strerror(errno)) &&
	     rc_pair_ch(&a, &b, channel) &&
	     ktap_expect(!ibv_req_notify_cq(ibv_cq_ex_to_cq(a.cq), 0),
			 "req_notify_cq");
	if (!ok)
		goto out;

	/* A CQE in the ring, unpolled: the event says it is there. */
	fill(src, 64, 16);
	wr_begin(&a, 60);
	ibv_wr_rdma_write(a.qpx, dst_mr->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(a.qpx, src_mr->lkey, (uintptr_t)src, 64);
	ok = complete(&a) && cq_event(channel, a.cq) &&
	     ktap_expect(!to_reset(a.qp) && !to_reset(b.qp), "to RESET");
	if (!ok)
		goto out;
	ret = ibv_start_poll(a.cq, &attr);
	if (!ret) {
		ktap_print("after the reset: a CQE, wr_id %llu status %s",
			   (unsigned long long)a.cq->wr_id,
			   ibv_wc_status_str(a.cq->status));
		ibv_end_poll(a.cq);
	}
	ok = ktap_expect(ret == ENOENT, "start_poll after the reset: %d", ret);

	/* Connected again, from RESET: the CQ goes on as before. */
	memset(dst, 0, 128);
	ok = ok && ktap_expect(!rc_connect(&a, &b) && !rc_connect(&b, &a),
			       "connect again");
	if (ok) {
		wr_begin(&a, 61);
		ibv_wr_rdma_write(a.qpx, dst_mr->rkey, (uintptr_t)dst + 64);
		ibv_wr_set_sge(a.qpx, src_mr->lkey, (uintptr_t)src, 64);
		ok = complete(&a) &&
		     wc_is(&a, 61, IBV_WC_RDMA_WRITE, 64, NULL) &&
		     same(dst + 64, src, 64);
	}
out:
	ktap_result(ok, "a QP reset drops its unpolled CQEs: then start_poll says ENOENT, new ones come through");
	ep_close(&a);
	ep_close(&b);
	if (channel)
		ibv_destroy_comp_channel(channel);
}

/* UD: wr_set_ud_addr names the AH, the QPN and the Q_Key. */
static void t_ud(void)
{
	struct ibv_ah_attr ah_attr = {
		.is_global = 1,
		.grh = { .dgid = gid, .sgid_index = gid_index,
			 .hop_limit = 64 },
		.port_num = 1,
	};
	struct ibv_qp_attr rtr = { .qp_state = IBV_QPS_RTR };
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .sq_psn = 7 };
	struct ep a = {}, b = {};
	struct ibv_ah *ah = NULL;
	struct wcx w;
	bool ok;
	int ret;

	ret = ep_open(&a, IBV_QPT_UD, UD_OPS);
	if (!ret)
		ret = ep_open(&b, IBV_QPT_UD, UD_OPS);
	if (!ret)
		ret = to_init(a.qp, IBV_QPT_UD);
	if (!ret)
		ret = to_init(b.qp, IBV_QPT_UD);
	if (!ret)
		ret = ibv_modify_qp(a.qp, &rtr, IBV_QP_STATE);
	if (!ret)
		ret = ibv_modify_qp(b.qp, &rtr, IBV_QP_STATE);
	if (!ret)
		ret = ibv_modify_qp(a.qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (!ret)
		ret = ibv_modify_qp(b.qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN);
	ok = ktap_expect(!ret, "UD QPs: %s", strerror(ret));
	if (ok) {
		ah = ibv_create_ah(pd, &ah_attr);
		ok = ktap_expect(ah, "create_ah: %s", strerror(errno));
	}
	if (!ok)
		goto out;

	fill(src, 512, 15);
	memset(dst, 0, 1024);
	ok = post_recv(&b, 400, dst, GRH_LEN + 512);
	wr_begin(&a, 50);
	ibv_wr_send_imm(a.qpx, htonl(0xabcd));
	ibv_wr_set_ud_addr(a.qpx, ah, b.qp->qp_num, QKEY);
	ibv_wr_set_sge(a.qpx, src_mr->lkey, (uintptr_t)src, 512);
	ok = complete(&a) && ok && wc_is(&a, 50, IBV_WC_SEND, 512, NULL) &&
	     wc_is(&b, 400, IBV_WC_RECV, GRH_LEN + 512, &w) &&
	     ktap_expect(w.src_qp == a.qp->qp_num &&
			 (w.wc_flags & IBV_WC_GRH) &&
			 (w.wc_flags & IBV_WC_WITH_IMM) && w.imm == 0xabcd,
			 "src_qp %u (expected %u), wc_flags %#x, imm %#x",
			 w.src_qp, a.qp->qp_num, w.wc_flags, w.imm) &&
	     same(dst + GRH_LEN, src, 512);

	/*
	 * A wrong Q_Key: the datagram is dropped, the receive stays for the
	 * right one after it (two WRs, two UD addresses, one batch).
	 */
	ok = ok && post_recv(&b, 401, dst, GRH_LEN + 64);
	ibv_wr_start(a.qpx);
	a.qpx->wr_flags = IBV_SEND_SIGNALED;
	a.qpx->wr_id = 51;
	ibv_wr_send(a.qpx);
	ibv_wr_set_ud_addr(a.qpx, ah, b.qp->qp_num, QKEY + 1);
	ibv_wr_set_sge(a.qpx, src_mr->lkey, (uintptr_t)src, 64);
	a.qpx->wr_id = 52;
	ibv_wr_send(a.qpx);
	ibv_wr_set_sge(a.qpx, src_mr->lkey, (uintptr_t)src + 64, 64);
	ibv_wr_set_ud_addr(a.qpx, ah, b.qp->qp_num, QKEY);
	ok = complete(&a) && ok && wc_is(&a, 51, IBV_WC_SEND, 64, NULL) &&
	     wc_is(&a, 52, IBV_WC_SEND, 64, NULL) &&
	     wc_is(&b, 401, IBV_WC_RECV, GRH_LEN + 64, NULL) &&
	     same(dst + GRH_LEN, src + 64, 64);
out:
	ktap_result(ok, "UD: wr_send_imm + wr_set_ud_addr: src_qp, GRH, immediate; the Q_Key is the one set");
	if (ah)
		ibv_destroy_ah(ah);
	ep_close(&a);
	ep_close(&b);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

/*
 * Completion timestamps, on the device's clock (CLOCK_MONOTONIC, its
 * hca_core_clock 1 GHz): each lies between the post and the poll and none
 * goes backwards; the wall-clock reading agrees with CLOCK_REALTIME (to
 * the millisecond the two clocks' readings may lie apart).
 */
static void t_timestamps(void)
{
	struct ibv_values_ex rt = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t t0, t1, w0, w1, ts = 0, wall = 0, last = 0, end;
	struct ibv_device_attr_ex dev = {};
	struct ibv_poll_cq_attr pa = {};
	enum ibv_wc_status st = IBV_WC_GENERAL_ERR;
	struct ep a = {}, b = {};
	bool ok;
	int i, ret;

	ok = ktap_expect(!ibv_query_device_ex(ctx, NULL, &dev) &&
			 dev.hca_core_clock == 1000000 &&
			 dev.completion_timestamp_mask == UINT64_MAX,
			 "hca_core_clock %llu kHz, mask %#llx",
			 (unsigned long long)dev.hca_core_clock,
			 (unsigned long long)dev.completion_timestamp_mask);
	t0 = clock_ns(CLOCK_MONOTONIC);
	ok = ok && ktap_expect(!ibv_query_rt_values_ex(ctx, &rt) &&
			       (rt.comp_mask & IBV_VALUES_MASK_RAW_CLOCK) &&
			       rt.raw_clock.tv_sec * 1000000000ull +
			       rt.raw_clock.tv_nsec >= t0,
			       "query_rt_values_ex");
	cq_wc_flags = WC_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
		      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	ok = ok && rc_pair(&a, &b);
	cq_wc_flags = WC_FLAGS;
	for (i = 0; ok && i < 20; i++) {
		t0 = clock_ns(CLOCK_MONOTONIC);
		w0 = clock_ns(CLOCK_REALTIME);
		wr_begin(&a, i);
		ibv_wr_rdma_write(a.qpx, dst_mr->rkey, (uintptr_t)dst);
		ibv_wr_set_sge(a.qpx, src_mr->lkey, (uintptr_t)src, 64);
		ok = complete(&a);
		end = now_ms() + WAIT_MS;
		do {
			ret = ibv_start_poll(a.cq, &pa);
		} while (ok && ret == ENOENT && now_ms() < end);
		if (ok && !ret) {
			st = a.cq->status;
			ts = ibv_wc_read_completion_ts(a.cq);
			wall = ibv_wc_read_completion_wallclock_ns(a.cq);
			ibv_end_poll(a.cq);
		}
		t1 = clock_ns(CLOCK_MONOTONIC);
		w1 = clock_ns(CLOCK_REALTIME);
		ok = ok && ktap_expect(!ret && st == IBV_WC_SUCCESS &&
				       ts >= t0 && ts <= t1 && ts >= last &&
				       wall + 1000000 >= w0 &&
				       wall <= w1 + 1000000,
				       "%d: %s, ts %llu in [%llu, %llu] after %llu, wall %llu in [%llu, %llu]",
				       i, ret ? strerror(ret) : ibv_wc_status_str(st),
				       (unsigned long long)ts,
				       (unsigned long long)t0,
				       (unsigned long long)t1,
				       (unsigned long long)last,
				       (unsigned long long)wall,
				       (unsigned long long)w0,
				       (unsigned long long)w1);
		last = ts;
	}
	ep_close(&a);
	ep_close(&b);
	ktap_result(ok, "completion timestamps: monotonic, between post and poll, wall clock agrees");
}

#define TS_FLAGS	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |		\
			 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
/* How far apart two clocks' readings, or a wall clock conversion, may lie. */
#define TS_SLACK_NS	1000000ull

/* Each timestamp flag alone, both and neither. */
static const struct {
	uint64_t flags;
	const char *name;
} ts_combos[] = {
	{ 0, "no timestamps" },
	{ IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, "COMPLETION_TIMESTAMP" },
	{ IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	  "COMPLETION_TIMESTAMP_WALLCLOCK" },
	{ TS_FLAGS, "both timestamps" },
};

/* One completion with the timestamps its CQ's readers give (0: none). */
struct wcts {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint64_t ts;
	uint64_t wall;
};

/* Both clocks at one moment. */
struct ts_mark {
	uint64_t mono;
	uint64_t real;
};

static struct ts_mark ts_mark_now(void)
{
	struct ts_mark m;

	m.mono = clock_ns(CLOCK_MONOTONIC);
	m.real = clock_ns(CLOCK_REALTIME);
	return m;
}

static void wcts_read(struct ibv_cq_ex *cq, uint64_t flags, struct wcts *w)
{
	w->wr_id = cq->wr_id;
	w->status = cq->status;
	w->opcode = ibv_wc_read_opcode(cq);
	w->ts = flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP ?
		ibv_wc_read_completion_ts(cq) : 0;
	w->wall = flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK ?
		  ibv_wc_read_completion_wallclock_ns(cq) : 0;
}

/*
 * Every completion there is, up to @n, in one batch: waits up to WAIT_MS
 * for the first @want, then takes what else the CQ holds (none should).
 * Returns how many.
 */
static int poll_ts(struct ibv_cq_ex *cq, uint64_t flags, struct wcts *w,
		   int want, int n)
{
	uint64_t end = now_ms() + WAIT_MS;
	int got = 0;
	int ret;

	if (!start_poll_wait(cq, end))
		return 0;
	wcts_read(cq, flags, &w[got++]);
	while (got < n) {
		ret = ibv_next_poll(cq);
		if (ret == ENOENT && got < want && now_ms() < end)
			continue;
		if (ret) {
			if (ret != ENOENT)
				ktap_print("next_poll: %s", strerror(ret));
			break;
		}
		wcts_read(cq, flags, &w[got++]);
	}
	ibv_end_poll(cq);
	return got;
}

/*
 * @w is completion @i, expected as @wr_id, successful, of @opcode, taken
 * between @lo and @hi: each timestamp its CQ has is nonzero, lies in
 * between and does not go back from the one before (@last).
 */
static bool wcts_ok(const struct wcts *w, int i, uint64_t flags,
		    uint64_t wr_id, enum ibv_wc_opcode opcode,
		    struct ts_mark lo, struct ts_mark hi, struct ts_mark *last)
{
	bool ok;

	ok = ktap_expect(w->wr_id == wr_id && w->status == IBV_WC_SUCCESS &&
			 w->opcode == opcode,
			 "completion %d: wr_id %llu %s opcode %d, expected %llu opcode %d",
			 i, (unsigned long long)w->wr_id,
			 ibv_wc_status_str(w->status), w->opcode,
			 (unsigned long long)wr_id, opcode);
	if (ok && (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP))
		ok = ktap_expect(w->ts && w->ts >= lo.mono &&
				 w->ts <= hi.mono && w->ts >= last->mono,
				 "completion %d: ts %llu not in [%llu, %llu] or before %llu",
				 i, (unsigned long long)w->ts,
				 (unsigned long long)lo.mono,
				 (unsigned long long)hi.mono,
				 (unsigned long long)last->mono);
	if (ok && (flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK))
		ok = ktap_expect(w->wall &&
				 w->wall + TS_SLACK_NS >= lo.real &&
				 w->wall <= hi.real + TS_SLACK_NS &&
				 w->wall + TS_SLACK_NS >= last->real,
				 "completion %d: wall %llu not in [%llu, %llu] or before %llu",
				 i, (unsigned long long)w->wall,
				 (unsigned long long)lo.real,
				 (unsigned long long)hi.real,
				 (unsigned long long)last->real);
	last->mono = w->ts;
	last->real = w->wall;
	return ok;
}

/* The CQ has the readers of @flags' timestamps, and no others. */
static bool ts_readers(struct ibv_cq_ex *cq, uint64_t flags)
{
	return ktap_expect(!cq->read_completion_ts ==
			   !(flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) &&
			   !cq->read_completion_wallclock_ns ==
			   !(flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK),
			   "timestamp readers: ts %p wallclock %p",
			   (void *)cq->read_completion_ts,
			   (void *)cq->read_completion_wallclock_ns);
}

/*
 * A CQ made with either timestamp flag alone, both or neither: the
 * kernel's CQE slots must be as wide as the provider reads them, or the
 * completions come out shifted, lost or with garbage for timestamps. A
 * batch of WRITEs and SENDs, and the receives: every completion once,
 * in order, and only those; the timestamps between post and poll.
 */
static void t_ts_flags(uint64_t flags, const char *name)
{
	enum { N = 8 };
	struct wcts w[2 * N];
	struct ts_mark t0, t1, last = {};
	struct ep a = {}, b = {};
	char what[160];
	bool ok;
	int i, n;

	cq_wc_flags = WC_FLAGS | flags;
	ok = rc_pair(&a, &b);
	cq_wc_flags = WC_FLAGS;
	ok = ok && ts_readers(a.cq, flags) && ts_readers(b.cq, flags);
	for (i = 0; ok && i < N / 2; i++)
		ok = post_recv(&b, 500 + i, dst + i * 64, 64);
	if (!ok)
		goto out;

	fill(src, N * 64, 17);
	t0 = ts_mark_now();
	ibv_wr_start(a.qpx);
	for (i = 0; i < N; i++) {
		a.qpx->wr_id = 400 + i;
		a.qpx->wr_flags = IBV_SEND_SIGNALED;
		if (i & 1)
			ibv_wr_send(a.qpx);
		else
			ibv_wr_rdma_write(a.qpx, dst_mr->rkey,
					  (uintptr_t)dst + 1024 + i * 64);
		ibv_wr_set_sge(a.qpx, src_mr->lkey, (uintptr_t)src + i * 64,
			       64);
	}
	ok = complete(&a);
	n = ok ? poll_ts(a.cq, flags, w, N, 2 * N) : 0;
	t1 = ts_mark_now();
	ok = ok && ktap_expect(n == N, "%d send completions, expected %d",
			       n, N);
	for (i = 0; ok && i < N; i++)
		ok = wcts_ok(&w[i], i, flags, 400 + i,
			     i & 1 ? IBV_WC_SEND : IBV_WC_RDMA_WRITE,
			     t0, t1, &last);

	n = ok ? poll_ts(b.cq, flags, w, N / 2, 2 * N) : 0;
	t1 = ts_mark_now();
	ok = ok && ktap_expect(n == N / 2, "%d receive completions, expected %d",
			       n, N / 2);
	last = (struct ts_mark){};
	for (i = 0; ok && i < N / 2; i++)
		ok = wcts_ok(&w[i], i, flags, 500 + i, IBV_WC_RECV, t0, t1,
			     &last);
	for (i = 0; ok && i < N; i++)
		ok = same(i & 1 ? dst + i / 2 * 64 : dst + 1024 + i * 64,
			  src + i * 64, 64);
out:
	ep_close(&a);
	ep_close(&b);
	snprintf(what, sizeof(what), "%s: a batch of WRITEs and SENDs, each completion once, in order; timestamps in range and monotonic",
		 name);
	ktap_result(ok, what);
}

/*
 * A QP reset drops its unpolled CQEs from a CQ it shares: the others
 * slide up the ring, each with its own timestamp. Two QPs take turns at
 * one WRITE each, the CQ's event marking when each CQE is in; then one
 * QP is reset, and the other's CQEs must keep the times they had.
 */
static void t_ts_reset(uint64_t flags, const char *name)
{
	enum { N = 4 };
	struct ibv_comp_channel *channel = ibv_create_comp_channel(ctx);
	struct ep a = {}, a2 = {}, b = {}, b2 = {};
	struct ts_mark mark[N + 1], last = {};
	struct wcts w[2 * N];
	char what[160];
	bool ok;
	int i, n;

	cq_wc_flags = WC_FLAGS | flags;
	ok = ktap_expect(channel, "create_comp_channel: %s",
			 strerror(errno)) &&
	     rc_pair_ch(&a, &b, channel);
	cq_wc_flags = WC_FLAGS;
	if (ok) {
		/* Second QPs on the same CQs: a2 shares a's, b2 b's. */
		a2.qp = qp_ex_open(a.cq, IBV_QPT_RC, RC_OPS, NULL);
		b2.qp = qp_ex_open(b.cq, IBV_QPT_RC, RC_OPS, NULL);
		a2.qpx = a2.qp ? ibv_qp_to_qp_ex(a2.qp) : NULL;
		ok = ktap_expect(a2.qpx && b2.qp, "second QPs: %s",
				 strerror(errno)) &&
		     ktap_expect(!rc_connect(&a2, &b2) && !rc_connect(&b2, &a2),
				 "connect the second pair");
	}

	fill(src, 64, 18);
	mark[0] = ts_mark_now();
	for (i = 0; ok && i < N; i++) {
		struct ep *e = i & 1 ? &a2 : &a;

		ok = ktap_expect(!ibv_req_notify_cq(ibv_cq_ex_to_cq(a.cq), 0),
				 "req_notify_cq");
		wr_begin(e, 600 + i);
		ibv_wr_rdma_write(e->qpx, dst_mr->rkey,
				  (uintptr_t)dst + 2048 + i * 64);
		ibv_wr_set_sge(e->qpx, src_mr->lkey, (uintptr_t)src, 64);
		ok = ok && complete(e) && cq_event(channel, a.cq);
		mark[i + 1] = ts_mark_now();
		/* Far more time between the CQEs than the clocks' slack. */
		usleep(20000);
	}
	ok = ok && ktap_expect(!to_reset(a2.qp), "a2 to RESET");
	n = ok ? poll_ts(a.cq, flags, w, N / 2, 2 * N) : 0;
	ok = ok && ktap_expect(n == N / 2,
			       "%d completions after the reset, expected %d",
			       n, N / 2);
	/* a's were WRITEs 0 and 2, each in the CQ by mark[i + 1]. */
	for (i = 0; ok && i < N / 2; i++)
		ok = wcts_ok(&w[i], i, flags, 600 + 2 * i, IBV_WC_RDMA_WRITE,
			     mark[2 * i], mark[2 * i + 1], &last);
	ep_close(&a2);
	ep_close(&b2);
	ep_close(&a);
	ep_close(&b);
	if (channel)
		ibv_destroy_comp_channel(channel);
	snprintf(what, sizeof(what), "%s: a QP reset on a shared CQ keeps the other QP's CQEs in order, each with its own timestamps",
		 name);
	ktap_result(ok, what);
}

int main(int argc, char **argv)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ep a = {}, b = {};
	size_t i;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s IBDEV [GID_INDEX]\n", argv[0]);
		return KSFT_FAIL;
	}
	gid_index = argc > 2 ? atoi(argv[2]) : 1;
	ktap_plan(19 + 2 * (int)(sizeof(ts_combos) / sizeof(ts_combos[0])));
	ctx = open_by_name(argv[1]);
	if (!ctx || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		ktap_print("cannot open %s port 1 GID %d", argv[1], gid_index);
		return KSFT_FAIL;
	}
	pd = ibv_alloc_pd(ctx);
	src = aligned_alloc(4096, BUF_SIZE);
	dst = aligned_alloc(4096, BUF_SIZE);
	if (!pd || !src || !dst)
		return KSFT_FAIL;
	src_mr = ibv_reg_mr(pd, src, BUF_SIZE, access);
	dst_mr = ibv_reg_mr(pd, dst, BUF_SIZE, access);
	if (!src_mr || !dst_mr) {
		ktap_print("reg_mr: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_create_types();
	t_unsupported_ops();
	t_create_attrs();
	t_create_cq_ex();
	if (!rc_pair(&a, &b)) {
		ktap_print("no RC pair: the traffic tests cannot run");
		return KSFT_FAIL;
	}
	t_send(&a, &b);
	t_send_imm(&a, &b);
	t_write(&a, &b);
	t_write_imm(&a, &b);
	t_read(&a, &b);
	t_cmp_swp(&a, &b);
	t_fetch_add(&a, &b);
	t_inline(&a, &b);
	t_batch(&a, &b);
	t_abort(&a, &b);
	t_mw(&a, &b);
	t_errors(&a, &b);
	ep_close(&a);
	ep_close(&b);
	t_reset();
	t_ud();
	t_timestamps();
	for (i = 0; i < sizeof(ts_combos) / sizeof(ts_combos[0]); i++) {
		t_ts_flags(ts_combos[i].flags, ts_combos[i].name);
		t_ts_reset(ts_combos[i].flags, ts_combos[i].name);
	}
	return ktap_finish();
}
