// SPDX-License-Identifier: GPL-2.0
/*
 * Bulk RC data integrity across a (lossy) link: QP A on device DEV_A sends
 * MIB MiB with SEND, then RDMA WRITE, then RDMA READ to QP B on DEV_B, a
 * window of messages in flight, and every byte of every message is checked
 * against a seeded pattern of its own, so a stale, misplaced or corrupted
 * byte is found. The two devices sit on two network namespaces joined by
 * a veth pair (see netns.sh); libibverbs opens both from here. Any error
 * completion fails the operation: with retry_cnt 7 and rnr_retry 7 the
 * transport must hide loss, reordering, duplication and corruption.
 *
 * Atomics (OPS a): ATOMICS FETCH_AND_ADDs of 1 on one word of B, in
 * order; the k-th must return k, so one executed twice (a replayed
 * duplicate) or lost is found. ATOMIC WRITEs (OPS x): the k-th places k + 1
 * in another word of B, which must hold at least k + 1 and at most what
 * was posted when the k-th completes: an old one placed again (a
 * duplicate executed, not replayed) moves it back.
 *
 * usage: rc_stream DEV_A DEV_B [MIB [SEED [OPS]]]
 *        OPS: any of s (SEND), w (WRITE), r (READ), a (FETCH_AND_ADD),
 *        x (ATOMIC WRITE), m (READ and WRITE in turn), l (SEND, receives
 *        late); default swr
 *
 * Mixed (OPS m): READs of 64 KiB and WRITEs of 64 bytes in turn,
 * MIXED_WINDOW in flight: the responder holds as many reads as it takes
 * (SRDMA_MAX_RD_ATOMIC) and the ACK of each WRITE waits behind the read
 * responses before it. On a loss-free path nothing may be resent (the
 * caller checks the counters).
 *
 * Late receives (OPS l): SENDs as in s, but B posts its WINDOW receives
 * only LATE_MS after the sender has filled its window and every earlier
 * receive has completed: each window's first SEND is RNR NAKed (and
 * retried every min_rnr_timer) until then, and the packets sent behind it
 * must wait for its retry (the caller checks the counters).
 *
 * RC_STREAM_PROGRESS_MS=N: every N ms, a line "# progress MS BYTES" (ms
 * since the stream began, its bytes completed so far) for a rate over time
 * (bench/wire.sh).
 *
 * RC_STREAM_ACK_TIMEOUT=N: the QPs' local ACK timeout code (4.096 us *
 * 2^N, 1..31; default ACK_TIMEOUT), for a slow path whose responses may
 * lag longer than 67 ms (congestion.sh's flows through a 20 Mbit/s queue).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "pattern.h"
#include "verbs_util.h"

#define MSG		(64u << 10)	/* bytes per message */
#define WINDOW		8		/* messages in flight */
#define MAX_RD		128		/* reads in flight: SRDMA_MAX_RD_ATOMIC */
#define MIXED_WINDOW	(2 * MAX_RD)	/* OPS m: READs and WRITEs */
#define MIXED_WRITE	64		/* OPS m: bytes per WRITE */
#define BUF		(MIXED_WINDOW * MSG)
#define ATOMICS		2000		/* FETCH_AND_ADDs, ATOMIC WRITEs (a, x) */
#define ACK_TIMEOUT	14		/* 4.096 us * 2^14 = 67 ms */
#define STALL_MS	15000		/* no completion for this long: fail */
#define LATE_MS		100		/* OPS l: receives this late */

struct end {
	const char *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *src, *dst;
	struct ibv_mr *src_mr, *dst_mr;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

static struct end A = { .dev = NULL }, B;
static uint32_t seed;
static uint32_t window = WINDOW;	/* messages in flight */
static bool mixed;			/* OPS m: odd messages WRITE */
static bool late;			/* OPS l: receives posted late */
static uint64_t progress_ms;		/* RC_STREAM_PROGRESS_MS */
static uint8_t ack_timeout = ACK_TIMEOUT; /* RC_STREAM_ACK_TIMEOUT */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Message @msg's length: a multiple of 8. */
static uint32_t msg_len(uint32_t msg)
{
	return mixed && msg % 2 ? MIXED_WRITE : MSG;
}

/* Message @msg's bytes: an xorshift stream seeded by (seed, msg). */
static void pat_fill(uint8_t *p, uint32_t msg)
{
	pattern_fill(p, msg_len(msg), PAT_XS64, (uint64_t)seed << 32 | msg, 0);
}

/* Offset of the first wrong byte, or -1. */
static int64_t pat_check(const uint8_t *p, uint32_t msg)
{
	return pattern_check(p, msg_len(msg), PAT_XS64,
			     (uint64_t)seed << 32 | msg, 0, NULL);
}

static bool end_open(struct end *e)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * MIXED_WINDOW,
			 .max_recv_wr = 2 * WINDOW,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		/* post_send for the rest, ibv_wr_* for ATOMIC WRITE */
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_port_attr port;
	struct ibv_gid_entry ge;
	int i;

	e->ctx = open_by_name(e->dev);
	if (!e->ctx)
		return ktap_expect(false, "cannot open %s", e->dev);
	e->gid_index = -1;
	for (i = 0; i < 16 && e->gid_index < 0; i++)
		if (!ibv_query_gid_ex(e->ctx, 1, i, &ge, 0) &&
		    ge.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !ge.gid.global.subnet_prefix && ge.gid.raw[10] == 0xff &&
		    ge.gid.raw[11] == 0xff) {
			e->gid_index = i;
			e->gid = ge.gid;
		}
	if (e->gid_index < 0 || ibv_query_port(e->ctx, 1, &port))
		return ktap_expect(false, "%s: no IPv4 RoCEv2 GID", e->dev);
	e->mtu = port.active_mtu;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 4 * MIXED_WINDOW, NULL, NULL, 0);
	e->src = aligned_alloc(4096, BUF);
	e->dst = aligned_alloc(4096, BUF);
	if (!e->pd || !e->cq || !e->src || !e->dst)
		return ktap_expect(false, "%s: %s", e->dev, strerror(errno));
	memset(e->dst, 0, BUF);
	e->src_mr = ibv_reg_mr(e->pd, e->src, BUF, access);
	e->dst_mr = ibv_reg_mr(e->pd, e->dst, BUF, access);
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	ia.pd = e->pd;
	e->qp = ibv_create_qp_ex(e->ctx, &ia);
	return ktap_expect(e->src_mr && e->dst_mr && e->qp, "%s: %s", e->dev,
			   strerror(errno));
}

static bool end_connect(struct end *e, const struct end *peer,
			enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0xfff000;	/* the 24-bit PSN wraps during the run */
	a.max_dest_rd_atomic = MAX_RD;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = e->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return false;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0xfff000;
	a.timeout = ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = MAX_RD;
	return !ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			      IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static bool post_recv(uint32_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)B.dst + slot * MSG,
			       .length = MSG, .lkey = B.dst_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return !ibv_post_recv(B.qp, &wr, &bad);
}

/* Message @msg from A's slot into B's slot (READ: B's src into A's dst). */
static bool post_msg(enum ibv_wr_opcode op, uint32_t msg)
{
	uint32_t slot = msg % window;
	bool rd = op == IBV_WR_RDMA_READ;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(rd ? A.dst : A.src) + slot * MSG,
		.length = msg_len(msg),
		.lkey = rd ? A.dst_mr->lkey : A.src_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = msg, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_WRITE) {
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(A.qp);
		uint64_t v = (uint64_t)msg + 1;

		ibv_wr_start(qpx);
		qpx->wr_id = msg;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(qpx, B.dst_mr->rkey,
				    (uintptr_t)B.dst + sizeof(v), &v);
		return !ibv_wr_complete(qpx);
	}
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		/* Old value into A's dst slot; B's dst word 0 counts. */
		sge.addr = (uintptr_t)A.dst + slot * sizeof(uint64_t);
		sge.length = sizeof(uint64_t);
		sge.lkey = A.dst_mr->lkey;
		wr.wr.atomic.remote_addr = (uintptr_t)B.dst;
		wr.wr.atomic.rkey = B.dst_mr->rkey;
		wr.wr.atomic.compare_add = 1;
	} else if (rd) {
		pat_fill(B.src + slot * MSG, msg);
		wr.wr.rdma.remote_addr = (uintptr_t)B.src + slot * MSG;
		wr.wr.rdma.rkey = B.src_mr->rkey;
	} else {
		pat_fill(A.src + slot * MSG, msg);
		wr.wr.rdma.remote_addr = (uintptr_t)B.dst + slot * MSG;
		wr.wr.rdma.rkey = B.dst_mr->rkey;
	}
	return !ibv_post_send(A.qp, &wr, &bad);
}

/* The opcode of message @msg of a stream of @op. */
static enum ibv_wr_opcode msg_op(enum ibv_wr_opcode op, uint32_t msg)
{
	return mixed && msg % 2 ? IBV_WR_RDMA_WRITE : op;
}

/*
 * Move @n messages with @op; true if every one completed successfully in
 * order with every byte right.
 */
static bool stream(enum ibv_wr_opcode op, uint32_t n, const char *name)
{
	uint32_t posted = 0, done = 0, recvd = 0, rposted = 0;
	uint64_t t0 = now_ms(), last = t0, report = t0 + progress_ms;
	uint64_t bytes = 0;
	const uint8_t *got;
	struct ibv_wc wc[16];
	int k, j;
	int64_t at;

	volatile uint64_t *placed = (volatile uint64_t *)B.dst + 1;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		*(uint64_t *)B.dst = 0;
	*placed = 0;
	for (; op == IBV_WR_SEND && !late && rposted < WINDOW; rposted++)
		if (!post_recv(rposted))
			return ktap_expect(false, "post_recv failed");
	while (done < n || (op == IBV_WR_SEND && recvd < n)) {
		while (posted < n && posted - done < window &&
		       (op != IBV_WR_SEND || posted - recvd < WINDOW)) {
			if (!post_msg(msg_op(op, posted), posted))
				return ktap_expect(false, "post_send failed: %s",
						   strerror(errno));
			posted++;
		}
		if (late && rposted == recvd && posted > recvd) {
			usleep(LATE_MS * 1000);
			for (; rposted < posted; rposted++)
				if (!post_recv(rposted % WINDOW))
					return ktap_expect(false, "post_recv failed");
		}
		if (progress_ms && now_ms() >= report) {
			ktap_print("progress %" PRIu64 " %" PRIu64, now_ms() - t0,
				   bytes);
			fflush(stdout);
			report += progress_ms;
		}
		k = ibv_poll_cq(A.cq, 16, wc);
		if (k < 0)
			return ktap_expect(false, "poll_cq failed");
		if (!k && B.cq != A.cq)
			k = ibv_poll_cq(B.cq, 16, wc);
		if (!k) {
			if (now_ms() - last > STALL_MS)
				return ktap_expect(false, "%s: nothing completed for %d s (%u of %u done)",
						   name, STALL_MS / 1000, done, n);
			usleep(100);
			continue;
		}
		last = now_ms();
		for (j = 0; j < k; j++) {
			if (wc[j].status != IBV_WC_SUCCESS)
				return ktap_expect(false, "%s: message %" PRIu64 " completed with %s",
						   name, wc[j].wr_id,
						   ibv_wc_status_str(wc[j].status));
			if (wc[j].opcode == IBV_WC_RECV) {
				if (wc[j].wr_id != recvd % WINDOW ||
				    wc[j].byte_len != MSG)
					return ktap_expect(false, "receive %u: slot %" PRIu64 ", %u bytes",
							   recvd, wc[j].wr_id, wc[j].byte_len);
				got = B.dst + wc[j].wr_id * MSG;
				at = pat_check(got, recvd);
				if (at >= 0)
					return ktap_expect(false, "%s: message %u byte %" PRId64 " wrong",
							   name, recvd, at);
				recvd++;
				if (!late && rposted < n) {
					if (!post_recv(wc[j].wr_id))
						return ktap_expect(false, "post_recv failed");
					rposted++;
				}
				continue;
			}
			if (wc[j].wr_id != done)
				return ktap_expect(false, "%s: completion of message %" PRIu64 ", expected %u",
						   name, wc[j].wr_id, done);
			if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
				uint64_t old = ((uint64_t *)A.dst)[done % window];

				if (old != done)
					return ktap_expect(false, "%s: atomic %u returned %" PRIu64,
							   name, done, old);
			} else if (op == IBV_WR_ATOMIC_WRITE) {
				uint64_t now = *placed;

				if (now < done + 1 || now > posted)
					return ktap_expect(false, "%s: %u done, %u posted, the word holds %" PRIu64,
							   name, done, posted, now);
			} else if (op != IBV_WR_SEND) {
				got = (msg_op(op, done) == IBV_WR_RDMA_READ ?
				       A.dst : B.dst) + done % window * MSG;
				at = pat_check(got, done);
				if (at >= 0)
					return ktap_expect(false, "%s: message %u byte %" PRId64 " wrong",
							   name, done, at);
			}
			bytes += msg_len(done);
			done++;
		}
	}
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_WRITE) {
		uint64_t last = op == IBV_WR_ATOMIC_WRITE ? *placed :
							    *(uint64_t *)B.dst;

		if (last != n)
			return ktap_expect(false, "%s: word %" PRIu64 ", expected %u",
					   name, last, n);
		ktap_print("%s: %u verified in %.1f s", name, n,
			   (now_ms() - t0) / 1000.0);
		return true;
	}
	if (mixed)
		ktap_print("%s: %u READs, %u WRITEs verified in %.1f s", name,
			   (n + 1) / 2, n / 2, (now_ms() - t0) / 1000.0);
	else
		ktap_print("%s: %.1f MiB verified in %.1f s", name,
			   (double)n * MSG / (1 << 20),
			   (now_ms() - t0) / 1000.0);
	return true;
}

int main(int argc, char **argv)
{
	static const struct {
		char key;
		enum ibv_wr_opcode op;
		const char *name;
	} ops[] = {
		{ 's', IBV_WR_SEND, "SEND" },
		{ 'w', IBV_WR_RDMA_WRITE, "RDMA_WRITE" },
		{ 'r', IBV_WR_RDMA_READ, "RDMA_READ" },
		{ 'a', IBV_WR_ATOMIC_FETCH_AND_ADD, "FETCH_AND_ADD" },
		{ 'x', IBV_WR_ATOMIC_WRITE, "ATOMIC_WRITE" },
		{ 'm', IBV_WR_RDMA_READ, "READ_WRITE" },
		{ 'l', IBV_WR_SEND, "SEND_LATE_RECV" },
	};
	const char *which = argc > 5 ? argv[5] : "swr";
	uint32_t mib = argc > 3 ? strtoul(argv[3], NULL, 0) : 20;
	uint32_t n = (uint64_t)mib * (1 << 20) / MSG;
	enum ibv_mtu mtu;
	char name[64];
	size_t i;
	int plan = 0;
	bool ok;

	if (argc < 3 || argc > 6) {
		fprintf(stderr, "usage: %s DEV_A DEV_B [MIB [SEED [OPS]]]\n",
			argv[0]);
		return KSFT_FAIL;
	}
	seed = argc > 4 ? strtoul(argv[4], NULL, 0) : 1;
	if (getenv("RC_STREAM_PROGRESS_MS"))
		progress_ms = strtoull(getenv("RC_STREAM_PROGRESS_MS"), NULL, 0);
	if (getenv("RC_STREAM_ACK_TIMEOUT")) {
		unsigned long t = strtoul(getenv("RC_STREAM_ACK_TIMEOUT"), NULL, 0);

		if (t < 1 || t > 31) {
			fprintf(stderr, "RC_STREAM_ACK_TIMEOUT: 1..31\n");
			return KSFT_FAIL;
		}
		ack_timeout = t;
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		plan += !!strchr(which, ops[i].key);
	ktap_plan(plan + 1);
	A.dev = argv[1];
	B.dev = argv[2];
	ok = end_open(&A) && end_open(&B);
	mtu = A.mtu < B.mtu ? A.mtu : B.mtu;
	ok = ok && ktap_expect(end_connect(&A, &B, mtu) &&
			       end_connect(&B, &A, mtu),
			       "connect: %s", strerror(errno));
	if (ok)
		ktap_print("QP %#x on %s <-> QP %#x on %s, path MTU %d, %u messages of %u KiB, seed %u",
			   A.qp->qp_num, A.dev, B.qp->qp_num, B.dev,
			   128 << mtu, n, MSG >> 10, seed);
	if (!ktap_result(ok, "connect a QP pair across the link"))
		return ktap_finish();
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strchr(which, ops[i].key))
			continue;
		bool atomic = ops[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
			      ops[i].op == IBV_WR_ATOMIC_WRITE;

		mixed = ops[i].key == 'm';
		late = ops[i].key == 'l';
		window = mixed ? MIXED_WINDOW : WINDOW;
		if (atomic)
			snprintf(name, sizeof(name), "%u %ss, each executed once, in order",
				 ATOMICS, ops[i].name);
		else if (mixed)
			snprintf(name, sizeof(name), "READs and WRITEs in turn, %u reads in flight, every byte right",
				 MAX_RD);
		else if (late)
			snprintf(name, sizeof(name), "SENDs %u ahead of receives posted %d ms late, every byte right",
				 WINDOW, LATE_MS);
		else
			snprintf(name, sizeof(name), "%s of %u MiB, every byte right",
				 ops[i].name, mib);
		if (!ktap_result(ok && stream(ops[i].op, atomic ? ATOMICS : n,
					      ops[i].name), name))
			ok = false;	/* the QP is in ERR: the rest fail */
	}
	return ktap_finish();
}
