// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile RoCEv2 input against a softrdma device with live QPs.
 *
 * The device's netdev is in our network namespace; the impersonated peer
 * is the other end of its veth, in PEER_NETNS. We open the device with
 * libibverbs, connect RC QPs to a made-up QPN at the peer's address,
 * leave other QPs in RESET, INIT and ERR, and register MRs in two PDs.
 * From PEER_NETNS a raw IPv4 socket (we write the IP header, so we own
 * the IP ID the ICRC covers) sends packets that appear to come from the
 * peer, and a raw UDP socket sees everything the device answers.
 *
 * First targeted cases, each checked for its effect: valid requests land
 * and are ACKed, forged responses complete our requests; truncated
 * headers, bad ICRCs, unknown opcodes, opcodes of another QP type, bad
 * pad and length, QPNs of no QP or of a QP in RESET/INIT/ERR are dropped
 * without a trace (no reply, no completion, no byte written, the QP
 * still takes the next valid packet, the drop counted by its reason);
 * PSNs out of window get a sequence NAK or are treated as duplicates;
 * requests out of sequence, beyond an MR, over the path MTU, with the
 * rkey of another PD get the right NAK and write nothing. Duplicate
 * atomics are answered from what the responder executed only, never
 * from a previous connection; a NAK that fails QP R while another thread
 * modifies it RTS to RTS leaves it in ERR.
 *
 * Then COUNT seeded random mutations of valid packets (bit flips, byte
 * and field overwrites, truncation, extension; ICRC recomputed or not),
 * QPs reconnected whenever they fall into ERR. Last, the device must
 * still work and its counters must account for every packet: rx_pkts
 * for all of them, drop_bad_icrc for those with a bad ICRC.
 *
 * With PEER_IBDEV, a softrdma device in PEER_NETNS, a packet that names
 * one of its QPs but reaches IBDEV must be dropped: QPNs are global.
 *
 * usage: roce_inject IBDEV PEER_NETNS PEER_IPV4 [SEED [COUNT [PEER_IBDEV]]]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "pattern.h"
#include "roce_pkt.h"
#include "verbs_util.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define PMTU		IBV_MTU_1024
#define PMTU_B		1024u
#define BUF_SIZE	(256u << 10)
#define RDMA_LEN	(64u << 10)	/* [0, RDMA_LEN): target of WRITE/READ */
#define RECV_OFF	(64u << 10)	/* receive buffers of QP L */
#define RECV_LEN	4096u
#define NRECV		32u
#define READ_OFF	(192u << 10)	/* where QP R reads into */
#define SEND_OFF	(200u << 10)	/* what QP R sends */

#define PEER_QPN_L	0x00c0de	/* the QPNs we impersonate */
#define PEER_QPN_R	0x00c0df
#define NO_QPN		0xfffffe
#define SPORT		0xc000

#define TIMEOUT_L	14	/* ~67 ms: L sends nothing of its own */
#define TIMEOUT_R	18	/* ~1 s: R waits for our forged responses */
#define WAIT_MS		4000	/* longest wait for something expected */
#define QUIET_MS	150	/* a wait that must see nothing */
#define MAINT_EVERY	32	/* fuzz packets between fresh QPs */
#define ODP_PAGES	64
#define HELD_MAX	128	/* the responder's ring of executed atomics */
#define RACE_ROUNDS	50
#define RACE_READS	24	/* more than the first window sends */

enum { CTR_RX_PKTS, CTR_RX_DROPS, CTR_SEQ_NAKS, CTR_DUP, CTR_DROP_SHORT,
       CTR_DROP_VERSION, CTR_DROP_OPCODE, CTR_DROP_PAD, CTR_DROP_LENGTH,
       CTR_DROP_ICRC, CTR_DROP_NO_QP, CTR_DROP_QP_TYPE, CTR_DROP_QP_STATE,
       CTR_DROP_PSN, CTR_DROP_SOURCE, NR_CTR };

static const char *const ctr_names[NR_CTR] = {
	"rx_pkts", "rx_drops", "seq_naks_sent", "dup_requests", "drop_short",
	"drop_bad_version", "drop_bad_opcode", "drop_bad_pad",
	"drop_bad_length", "drop_bad_icrc", "drop_no_qp", "drop_qp_type",
	"drop_qp_state", "drop_psn", "drop_source",
};

struct ctrs {
	uint64_t v[NR_CTR];
};

struct tqp {
	const char *name;
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	uint32_t peer_qpn;
	uint8_t timeout;
	uint32_t epsn;		/* next PSN the QP expects from the peer */
	uint32_t sq_psn;	/* PSN of its first request */
	uint32_t outstanding;	/* R: requests posted, not completed */
};

static struct {
	const char *dev;
	const char *other;		/* a device in the peer's namespace */
	struct ibv_context *ctx;
	struct ibv_pd *pd[2];
	uint8_t *buf[2];
	struct ibv_mr *mr[2];
	int gid_index;
	union ibv_gid gid;
	uint32_t local_ip, peer_ip;	/* network order */
	int tx, rx, sink;		/* sockets in the peer's namespace */
	bool take_cnp;			/* rx_next() returns CNPs too */
	uint8_t *odp;			/* ODP_PAGES untouched pages */
	struct ibv_mr *odp_mr;		/* ... registered on demand, or NULL */
	bool have_ctr;
	struct ctrs start;
	uint64_t udp_start;
	uint16_t ip_id;
} g;

/* What we sent, as the device must count it. */
static struct {
	uint64_t sent;
	uint64_t bad_icrc;		/* ICRC wrong, >= BTH + ICRC long */
	uint64_t bad_icrc_parsed;	/* ... and structurally valid */
	uint64_t send_err;
	uint64_t dev_pkts;		/* packets the device sent us */
	uint64_t dev_cnps;		/* ... CNPs, passed over but in t_cnp */
	uint64_t dev_bad;		/* ... malformed or with a bad ICRC */
	uint64_t reconnects;
} st;

static struct tqp L = { .name = "L", .peer_qpn = PEER_QPN_L,
			.timeout = TIMEOUT_L };
static struct tqp R = { .name = "R", .peer_qpn = PEER_QPN_R,
			.timeout = TIMEOUT_R };
static struct tqp X[3] = {
	{ .name = "RESET", .peer_qpn = PEER_QPN_L },
	{ .name = "INIT", .peer_qpn = PEER_QPN_L },
	{ .name = "ERR", .peer_qpn = PEER_QPN_L },
};

/* A QP of a device in the peer's namespace: not reachable through ours. */
static struct tqp O = { .name = "O", .peer_qpn = PEER_QPN_L };

static uint8_t rdma_saved[2][RDMA_LEN];

/* ---- seeded randomness: splitmix64 ---- */

/*
 * Two streams: rng makes the fuzz packets, rng_aux everything else (PSNs
 * of reconnected QPs, requests of R), so the packets a seed makes do not
 * depend on what the device answered or when.
 */
static uint64_t rng, rng_aux;

static uint64_t rnd_from(uint64_t *s)
{
	uint64_t x = (*s += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(void)
{
	return rnd_from(&rng);
}

static uint32_t rndn(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pattern(uint8_t *p, uint32_t len, uint32_t seed)
{
	pattern_fill(p, len, PAT_XS32_BYTE, seed, 0);
}

/* ---- counters: ports/1/hw_counters in sysfs ---- */

static bool ctr_read(const char *name, uint64_t *v)
{
	int64_t x = hw_counter_by_name(g.dev, name);

	if (x < 0)
		return false;
	*v = x;
	return true;
}

static void ctr_snap(struct ctrs *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	if (!g.have_ctr)
		return;
	/* The RDMA core caches hw counters for 10 ms: read fresh values. */
	usleep(30 * 1000);
	for (i = 0; i < NR_CTR; i++)
		if (!ctr_read(ctr_names[i], &c->v[i]))
			c->v[i] = 0;
}

/* Did counter @i grow by exactly @n between @a and @b? */
static bool ctr_grew(const struct ctrs *a, const struct ctrs *b, int i,
		     uint64_t n)
{
	uint64_t d = b->v[i] - a->v[i];

	if (!g.have_ctr)
		return true;
	return ktap_expect(d == n, "%s grew by %" PRIu64 ", expected %" PRIu64,
			   ctr_names[i], d, n);
}

static int ctr_of_reason(const char *reason)
{
	char name[64];
	int i;

	snprintf(name, sizeof(name), "drop_%s", reason);
	for (i = 0; i < NR_CTR; i++)
		if (!strcmp(ctr_names[i], name))
			return i;
	return -1;
}

/* InDatagrams of /proc/net/snmp: datagrams UDP handed to a socket. */
static uint64_t udp_in_datagrams(void)
{
	char line[1024], hdr[1024] = "";
	uint64_t v = 0;
	FILE *f = fopen("/proc/net/snmp", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Udp:", 4))
			continue;
		if (!hdr[0]) {
			strcpy(hdr, line);
			continue;
		}
		/* The second Udp: line holds the values, InDatagrams first. */
		sscanf(line, "Udp: %" SCNu64, &v);
		break;
	}
	fclose(f);
	return v;
}

/* ---- the wire ---- */

static void desc_init(struct rpkt_desc *d, uint8_t opcode, uint32_t qpn,
		      uint32_t psn)
{
	memset(d, 0, sizeof(*d));
	d->opcode = opcode;
	d->pad = -1;
	d->qpn = qpn;
	d->psn = psn;
	d->saddr = g.peer_ip;
	d->daddr = g.local_ip;
	d->ip_id = ++g.ip_id ? g.ip_id : ++g.ip_id;
	d->sport = SPORT;
	d->syndrome = RPKT_SYN_ACK;
}

static void inject(const struct rpkt *p)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_addr.s_addr = g.local_ip };
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (sendto(g.tx, p->b, p->len, 0, (void *)&to,
			   sizeof(to)) == (ssize_t)p->len)
			break;
		if (errno != ENOBUFS && errno != EAGAIN) {
			tries = 100;
			break;
		}
		usleep(1000);
	}
	if (tries == 100) {
		if (!st.send_err++)
			ktap_print("sendto: %s", strerror(errno));
		return;
	}
	st.sent++;
	if (p->len >= RPKT_BTH + 16 && !rpkt_icrc_ok(p)) {
		st.bad_icrc++;
		if (!rpkt_parse(p))
			st.bad_icrc_parsed++;
	}
}

/*
 * Next packet the device sent to the peer, within @ms; the packet is in
 * @buf. Every one is checked: the device must send nothing malformed.
 */
static bool rx_next(struct rpkt_rx *rx, uint8_t *buf, size_t size, int ms)
{
	uint64_t end = now_ms() + ms;
	struct pollfd pfd = { .fd = g.rx, .events = POLLIN };
	ssize_t n;

	for (;;) {
		n = recv(g.rx, buf, size, MSG_DONTWAIT);
		if (n < 0) {
			int64_t left = end - now_ms();

			if (errno != EAGAIN || left <= 0)
				return false;
			poll(&pfd, 1, left);
			continue;
		}
		if (!rpkt_decode(buf, n, rx) ||
		    memcmp(buf + 12, &g.local_ip, 4))
			continue;
		st.dev_pkts++;
		if (rx->parse || !rx->icrc_ok) {
			if (!st.dev_bad++)
				ktap_print("the device sent a bad packet: %s",
					   rx->parse ? rpkt_drop_name(rx->parse) :
					   "bad ICRC");
			continue;
		}
		/* A CE mark the fuzzer set in a TOS byte earns the peer one. */
		if (rx->opcode == RPKT_CNP && !g.take_cnp) {
			st.dev_cnps++;
			continue;
		}
		return true;
	}
}

static void rx_drain(void)
{
	static uint8_t buf[65536];
	struct rpkt_rx rx;

	while (rx_next(&rx, buf, sizeof(buf), 0))
		;
}

/* The next packet of the device for peer QPN @qpn, within @ms. */
static bool rx_for(uint32_t qpn, struct rpkt_rx *rx, uint8_t *buf,
		   size_t size, int ms)
{
	uint64_t end = now_ms() + ms;
	int64_t left;

	while ((left = end - now_ms()) > 0)
		if (rx_next(rx, buf, size, left) && rx->qpn == qpn)
			return true;
	return false;
}

/* Nothing from the device to @q's peer for QUIET_MS. */
static bool rx_quiet(const struct tqp *q)
{
	static uint8_t buf[65536];
	struct rpkt_rx rx;

	if (!rx_for(q->peer_qpn, &rx, buf, sizeof(buf), QUIET_MS))
		return true;
	return ktap_expect(false, "unexpected reply: opcode %#x PSN %#x syndrome %#x",
			   rx.opcode, rx.psn, rx.syndrome);
}

/* ---- QPs ---- */

static bool qp_create(struct tqp *q, int pd)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	q->scq = ibv_create_cq(g.ctx, 256, NULL, NULL, 0);
	q->rcq = ibv_create_cq(g.ctx, 256, NULL, NULL, 0);
	if (!q->scq || !q->rcq)
		return ktap_expect(false, "create_cq: %s", strerror(errno));
	ia.send_cq = q->scq;
	ia.recv_cq = q->rcq;
	q->qp = ibv_create_qp(g.pd[pd], &ia);
	return ktap_expect(q->qp, "create_qp: %s", strerror(errno));
}

static int qp_modify(struct tqp *q, enum ibv_qp_state to)
{
	struct ibv_qp_attr a = { .qp_state = to };
	int mask = IBV_QP_STATE;

	switch (to) {
	case IBV_QPS_INIT:
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPS_RTR:
		a.path_mtu = PMTU;
		a.dest_qp_num = q->peer_qpn;
		a.rq_psn = q->epsn;
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 12;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid.global.subnet_prefix = 0;
		a.ah_attr.grh.dgid.raw[10] = 0xff;
		a.ah_attr.grh.dgid.raw[11] = 0xff;
		memcpy(&a.ah_attr.grh.dgid.raw[12], &g.peer_ip, 4);
		a.ah_attr.grh.sgid_index = g.gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTS:
		a.sq_psn = q->sq_psn;
		a.timeout = q->timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		mask |= IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		break;
	}
	return ibv_modify_qp(q->qp, &a, mask);
}

static enum ibv_qp_state qp_state(struct tqp *q)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia))
		return IBV_QPS_UNKNOWN;
	return a.qp_state;
}

static void cq_drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
}

static bool post_recv_slot(struct tqp *q, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)g.buf[0] + RECV_OFF + slot * RECV_LEN,
		.length = RECV_LEN,
		.lkey = g.mr[0]->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return !ibv_post_recv(q->qp, &wr, &bad);
}

/* RESET, then up to @to, expecting PSN @epsn; L gets its receives back. */
static bool qp_connect_at(struct tqp *q, enum ibv_qp_state to, uint32_t epsn)
{
	static const enum ibv_qp_state path[] = { IBV_QPS_INIT, IBV_QPS_RTR,
						  IBV_QPS_RTS };
	size_t i;
	uint32_t s;

	if (qp_modify(q, IBV_QPS_RESET))
		return ktap_expect(false, "QP %s to RESET failed", q->name);
	cq_drain(q->scq);
	cq_drain(q->rcq);
	q->epsn = epsn & 0xffffff;
	q->sq_psn = rnd_from(&rng_aux) & 0xffffff;
	q->outstanding = 0;
	for (i = 0; i < ARRAY_SIZE(path) && to != IBV_QPS_RESET; i++) {
		if (qp_modify(q, path[i]))
			return ktap_expect(false, "QP %s to state %d failed: %s",
					   q->name, path[i], strerror(errno));
		if (path[i] == to)
			break;
	}
	if (q == &L)
		for (s = 0; s < NRECV; s++)
			if (!post_recv_slot(q, s))
				return ktap_expect(false, "post_recv failed");
	return true;
}

/* RESET, then up to @to with fresh PSNs. */
static bool qp_connect(struct tqp *q, enum ibv_qp_state to)
{
	return qp_connect_at(q, to, rnd_from(&rng_aux));
}

static bool qp_wait_state(struct tqp *q, enum ibv_qp_state want)
{
	uint64_t end = now_ms() + WAIT_MS;

	while (qp_state(q) != want) {
		if (now_ms() > end)
			return ktap_expect(false, "QP %s is in state %d, not %d",
					   q->name, qp_state(q), want);
		usleep(2000);
	}
	return true;
}

/* One completion of @cq within @ms. */
static bool cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	uint64_t end = now_ms() + ms;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && now_ms() < end)
		usleep(500);
	return n == 1;
}

static bool cq_quiet(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	if (ibv_poll_cq(cq, 1, &wc) != 1)
		return true;
	return ktap_expect(false, "unexpected %s completion: status %s, wr_id %" PRIu64,
			   what, ibv_wc_status_str(wc.status), wc.wr_id);
}

static void rdma_save(void)
{
	memcpy(rdma_saved[0], g.buf[0], RDMA_LEN);
	memcpy(rdma_saved[1], g.buf[1], RDMA_LEN);
}

static bool rdma_unchanged(void)
{
	int i;

	for (i = 0; i < 2; i++)
		if (memcmp(rdma_saved[i], g.buf[i], RDMA_LEN))
			return ktap_expect(false, "memory of MR %d was written",
					   i);
	return true;
}

/* ---- requests of the impersonated peer to L ---- */

static void build_send(struct rpkt *p, struct tqp *q, uint8_t opcode,
		       uint32_t psn, const uint8_t *data, uint32_t len)
{
	struct rpkt_desc d;

	desc_init(&d, opcode, q->qp->qp_num, psn);
	d.ackreq = true;
	d.data = data;
	d.len = len;
	d.imm = 0x1234abcd;
	rpkt_build(p, &d);
}

static void build_rdma(struct rpkt *p, struct tqp *q, uint8_t opcode,
		       uint32_t psn, int mr, uint32_t off, uint32_t dma_len,
		       const uint8_t *data, uint32_t len)
{
	struct rpkt_desc d;

	desc_init(&d, opcode, q->qp->qp_num, psn);
	d.ackreq = true;
	d.va = (uintptr_t)g.buf[mr] + off;
	d.rkey = g.mr[mr]->rkey;
	d.dma_len = dma_len;
	d.data = data;
	d.len = len;
	rpkt_build(p, &d);
}

/*
 * An ACK (or NAK) from @q for @psn, with syndrome @syn, within WAIT_MS;
 * ACKs of the packets just before @psn are passed over.
 */
static bool expect_ack(struct tqp *q, uint32_t psn, uint8_t syn)
{
	static uint8_t buf[65536];
	struct rpkt_rx rx;

	do {
		if (!rx_for(q->peer_qpn, &rx, buf, sizeof(buf), WAIT_MS))
			return ktap_expect(false, "no reply for PSN %#x", psn);
	} while (rx.opcode == RPKT_ACK && rx.syndrome == RPKT_SYN_ACK &&
		 ((psn - rx.psn) & 0xffffff) - 1 < 16);
	return ktap_expect(rx.opcode == RPKT_ACK && rx.psn == psn &&
			   rx.syndrome == syn,
			   "reply opcode %#x PSN %#x syndrome %#x, expected ACK PSN %#x syndrome %#x",
			   rx.opcode, rx.psn, rx.syndrome, psn, syn);
}

/* A receive completion of L carrying @data. */
static bool expect_recv(struct tqp *q, const uint8_t *data, uint32_t len,
			bool imm)
{
	struct ibv_wc wc;
	const uint8_t *got;

	if (!cq_wait(q->rcq, &wc, WAIT_MS))
		return ktap_expect(false, "no receive completion");
	got = g.buf[0] + RECV_OFF + wc.wr_id * RECV_LEN;
	if (!ktap_expect(wc.status == IBV_WC_SUCCESS &&
			 wc.opcode == IBV_WC_RECV && wc.byte_len == len &&
			 wc.wr_id < NRECV,
			 "receive completion: status %s, opcode %d, byte_len %u (expected %u)",
			 ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
			 len))
		return false;
	if (!ktap_expect(!memcmp(got, data, len), "received bytes differ"))
		return false;
	if (imm && !ktap_expect((wc.wc_flags & IBV_WC_WITH_IMM) &&
				ntohl(wc.imm_data) == 0x1234abcd,
				"immediate data missing or wrong"))
		return false;
	return ktap_expect(post_recv_slot(q, wc.wr_id), "post_recv failed");
}

/* After a failure: let stray packets pass, then start @q afresh. */
static void resync(struct tqp *q)
{
	usleep(QUIET_MS * 1000);
	rx_drain();
	st.reconnects++;
	qp_connect(q, IBV_QPS_RTS);
}

/*
 * A valid SEND at the expected PSN lands and is ACKed: L is alive. If not,
 * L is reconnected so that one failure does not spill into the next test.
 */
static bool probe(struct tqp *q)
{
	static uint32_t n;
	uint8_t data[256];
	uint32_t len = 60 + n % 128;
	struct rpkt p;

	pattern(data, len, ++n);
	build_send(&p, q, RPKT_SEND_ONLY, q->epsn, data, len);
	inject(&p);
	if (!expect_ack(q, q->epsn, RPKT_SYN_ACK) ||
	    !expect_recv(q, data, len, false)) {
		resync(q);
		return ktap_expect(false, "QP %s no longer takes a valid SEND",
				   q->name);
	}
	q->epsn = (q->epsn + 1) & 0xffffff;
	return true;
}

/*
 * Packets the device must drop without a trace: no reply, no completion,
 * no byte written; L still takes its next PSN; each one counted in
 * rx_pkts, rx_drops and drop_<reason> (when the device has counters).
 */
/* The packets of a failed case, for the report. */
static void dump(const struct rpkt *p, int n)
{
	char hex[2 * RPKT_MAX + 1];
	uint32_t i;
	int k;

	for (k = 0; k < n; k++) {
		for (i = 0; i < p[k].len && i < 96; i++)
			sprintf(hex + 2 * i, "%02x", p[k].b[i]);
		ktap_print("packet %d (%u bytes from the IPv4 header): %s%s", k,
			   p[k].len, hex, p[k].len > 96 ? "..." : "");
	}
}

static void t_drop(const char *name, struct tqp *q, const struct rpkt *p,
		   int n, const char *reason)
{
	int ctr = ctr_of_reason(reason);
	struct ctrs a, b;
	bool ok = true;
	int i;

	rx_drain();
	rdma_save();
	ctr_snap(&a);
	for (i = 0; i < n; i++)
		inject(&p[i]);
	ok &= rx_quiet(q) && rx_quiet(&L);
	ok &= cq_quiet(q->rcq, "receive") && cq_quiet(L.rcq, "receive");
	ok &= rdma_unchanged();
	ctr_snap(&b);
	ok &= ctr_grew(&a, &b, CTR_RX_PKTS, n);
	ok &= ctr_grew(&a, &b, CTR_RX_DROPS, n);
	if (ctr >= 0)
		ok &= ctr_grew(&a, &b, ctr, n);
	ok &= probe(&L);
	if (!ok)
		dump(p, n);
	ktap_result(ok, name);
}

/*
 * Requests L must refuse with NAK @syn for PSN @psn, writing nothing;
 * that is fatal for L (IBA responder class C/D errors): it goes to ERR
 * and comes back after a reconnect.
 */
static void t_nak(const char *name, const struct rpkt *p, int n, uint32_t psn,
		  uint8_t syn)
{
	bool ok = true;
	int i;

	rx_drain();
	rdma_save();
	for (i = 0; i < n; i++)
		inject(&p[i]);
	ok &= expect_ack(&L, psn, syn);
	ok &= rdma_unchanged();
	ok &= qp_wait_state(&L, IBV_QPS_ERR);
	resync(&L);
	ok &= probe(&L);
	if (!ok)
		dump(p, n);
	ktap_result(ok, name);
}

/* ---- the targeted cases ---- */

static void t_vector(void)
{
	/* rdma_rxe's SEND_ONLY of roce-vectors.md, without the IP checksum. */
	static const char hex[] =
		"4500003c123440004011" "0000" "0a0900030a090001c00012b7"
		"002800000400ffff0000001180123456"
		"000102030405060708090a0b0c0d0e0f382ed30d";
	uint8_t want[60], data[16];
	struct rpkt_desc d;
	struct rpkt p;
	unsigned int i, x;

	for (i = 0; i < sizeof(want); i++) {
		sscanf(hex + 2 * i, "%2x", &x);
		want[i] = x;
	}
	for (i = 0; i < sizeof(data); i++)
		data[i] = i;
	memset(&d, 0, sizeof(d));
	d.opcode = RPKT_SEND_ONLY;
	d.pad = -1;
	d.ackreq = true;
	d.qpn = 0x11;
	d.psn = 0x123456;
	d.data = data;
	d.len = sizeof(data);
	d.ip_id = 0x1234;
	d.sport = 0xc000;
	d.saddr = htonl(0x0a090003);
	d.daddr = htonl(0x0a090001);
	rpkt_build(&p, &d);
	ktap_result(p.len == sizeof(want) && !memcmp(p.b, want, sizeof(want)),
		    "the packet builder reproduces rdma_rxe's SEND_ONLY byte for byte");
}

static void t_valid(void)
{
	uint8_t data[3 * PMTU_B], rd[512];
	static uint8_t buf[65536];
	struct rpkt p[3];
	struct rpkt_rx rx;
	uint32_t psn = L.epsn;
	bool ok;

	ktap_result(probe(&L), "a valid SEND_ONLY from the impersonated peer is delivered and ACKed");

	pattern(data, 100, 7);
	build_send(&p[0], &L, RPKT_SEND_ONLY_IMM, L.epsn, data, 100);
	rx_drain();
	inject(&p[0]);
	ok = expect_ack(&L, L.epsn, RPKT_SYN_ACK) &&
	     expect_recv(&L, data, 100, true);
	L.epsn++;
	ktap_result(ok, "SEND_ONLY_IMM is delivered with its immediate data");

	pattern(data, 2 * PMTU_B + 100, 8);
	build_send(&p[0], &L, RPKT_SEND_FIRST, psn = L.epsn, data, PMTU_B);
	build_send(&p[1], &L, RPKT_SEND_MIDDLE, psn + 1, data + PMTU_B, PMTU_B);
	build_send(&p[2], &L, RPKT_SEND_LAST, psn + 2, data + 2 * PMTU_B, 100);
	rx_drain();
	inject(&p[0]);
	inject(&p[1]);
	inject(&p[2]);
	/* ACKs may be coalesced: the last one must come. */
	ok = false;
	while (rx_for(L.peer_qpn, &rx, buf, sizeof(buf), WAIT_MS))
		if (rx.opcode == RPKT_ACK && rx.psn == psn + 2) {
			ok = rx.syndrome == RPKT_SYN_ACK;
			break;
		}
	ok = ktap_expect(ok, "no ACK for the last packet") &&
	     expect_recv(&L, data, 2 * PMTU_B + 100, false);
	L.epsn += 3;
	ktap_result(ok, "a 3-packet SEND (FIRST, MIDDLE, LAST) is delivered whole");

	/* TOS, TTL and BTH byte 4 are outside the ICRC: changing them is fine. */
	pattern(data, 64, 9);
	build_send(&p[0], &L, RPKT_SEND_ONLY, L.epsn, data, 64);
	p[0].b[1] = 0xb8;
	p[0].b[8] = 3;
	p[0].b[RPKT_BTH + 4] |= 0x80;	/* FECN */
	rx_drain();
	inject(&p[0]);
	ok = expect_ack(&L, L.epsn, RPKT_SYN_ACK) &&
	     expect_recv(&L, data, 64, false);
	L.epsn++;
	ktap_result(ok, "TOS, TTL and FECN changed after the ICRC (masked fields): still accepted");

	pattern(data, 1000, 10);
	build_rdma(&p[0], &L, RPKT_WRITE_ONLY, L.epsn, 0, 4096 + 3, 1000,
		   data, 1000);
	rx_drain();
	inject(&p[0]);
	ok = expect_ack(&L, L.epsn, RPKT_SYN_ACK) &&
	     ktap_expect(!memcmp(g.buf[0] + 4096 + 3, data, 1000),
			 "written bytes differ");
	L.epsn++;
	ktap_result(ok, "a valid RDMA WRITE_ONLY lands in the MR");

	pattern(g.buf[0] + 8192, 300, 11);
	memcpy(rd, g.buf[0] + 8192, 300);
	build_rdma(&p[0], &L, RPKT_READ_REQ, L.epsn, 0, 8192, 300, NULL, 0);
	rx_drain();
	inject(&p[0]);
	ok = ktap_expect(rx_for(L.peer_qpn, &rx, buf, sizeof(buf), WAIT_MS),
			 "no read response") &&
	     ktap_expect(rx.opcode == RPKT_READ_RESP_ONLY && rx.psn == L.epsn &&
			 rx.payload_len == 300 &&
			 !memcmp(rx.payload, rd, 300),
			 "read response: opcode %#x PSN %#x, %u bytes",
			 rx.opcode, rx.psn, rx.payload_len);
	L.epsn++;
	ktap_result(ok, "a valid RDMA READ request is answered with the MR's bytes");
}

static void t_malformed(void)
{
	static const uint32_t cut[] = { 0, 1, 8, 11, 12, 15 };
	uint8_t data[PMTU_B + 64];
	static const uint8_t unknown[] = { 0x15, 0x18, 0x1f, 0x40, 0x64 + 0x1b,
					   0x82, 0xc0, 0xff };
	struct rpkt p[ARRAY_SIZE(unknown)];
	struct rpkt_desc d;
	unsigned int i;

	pattern(data, sizeof(data), 20);

	/* Shorter than a BTH, and a BTH without an ICRC. */
	for (i = 0; i < ARRAY_SIZE(cut); i++) {
		build_send(&p[i], &L, RPKT_SEND_ONLY, L.epsn, data, 0);
		rpkt_set_len(&p[i], RPKT_BTH + cut[i]);
	}
	t_drop("truncated to 0, 1, 8, 11 bytes (no whole BTH) and 12, 15 (no ICRC): dropped",
	       &L, p, ARRAY_SIZE(cut), "short");

	build_rdma(&p[0], &L, RPKT_WRITE_ONLY, L.epsn, 0, 0, 0, NULL, 0);
	rpkt_set_len(&p[0], RPKT_BTH + 12 + 8 + 4);
	rpkt_seal(&p[0]);
	t_drop("WRITE_ONLY cut inside its RETH (ICRC right): dropped", &L, p,
	       1, "short");

	build_send(&p[0], &L, RPKT_SEND_ONLY, L.epsn, data, 64);
	p[0].b[p[0].len - 1] ^= 0x01;
	build_send(&p[1], &L, RPKT_SEND_ONLY, L.epsn, data, 64);
	p[1].b[RPKT_BTH + 12 + 5] ^= 0x20;
	build_send(&p[2], &L, RPKT_SEND_ONLY, L.epsn, data, 64);
	p[2].b[5] ^= 0x01;		/* IP ID: covered by the ICRC */
	t_drop("bad ICRC: ICRC bit, payload bit, IP ID changed after sealing: dropped",
	       &L, p, 3, "bad_icrc");

	build_rdma(&p[0], &L, RPKT_WRITE_ONLY, L.epsn, 0, 0, 64, data, 64);
	p[0].b[RPKT_BTH + 12 + 11] ^= 0x01;	/* rkey, stale ICRC */
	t_drop("WRITE with a changed rkey and the old ICRC: dropped, nothing written",
	       &L, p, 1, "bad_icrc");

	desc_init(&d, RPKT_SEND_ONLY, L.qp->qp_num, L.epsn);
	d.tver = 1;
	d.data = data;
	d.len = 16;
	rpkt_build(&p[0], &d);
	t_drop("transport version 1: dropped", &L, p, 1, "bad_version");

	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		desc_init(&d, unknown[i], L.qp->qp_num, L.epsn);
		d.data = data;
		d.len = 16;
		rpkt_build(&p[i], &d);
	}
	t_drop("unknown opcodes 0x15 0x18 0x1f (RC reserved), 0x40 (RD), 0x7f, 0x82 (CNP's transport), 0xc0 0xff (vendor): dropped",
	       &L, p, ARRAY_SIZE(unknown), "bad_opcode");

	build_send(&p[0], &L, RPKT_UC_SEND_ONLY, L.epsn, data, 16);
	desc_init(&d, RPKT_UD_SEND_ONLY, L.qp->qp_num, L.epsn);
	d.data = data;
	d.len = 16;
	rpkt_build(&p[1], &d);
	desc_init(&d, RPKT_XRC_SEND_ONLY, L.qp->qp_num, L.epsn);
	d.data = data;
	d.len = 16;
	rpkt_build(&p[2], &d);
	t_drop("UC, UD and XRC SEND_ONLY to an RC QP: dropped", &L, p, 3,
	       "qp_type");

	desc_init(&d, RPKT_SEND_ONLY, L.qp->qp_num, L.epsn);
	d.pad = 3;		/* three pad bytes, no room for them */
	rpkt_build(&p[0], &d);
	build_rdma(&p[1], &L, RPKT_READ_REQ, L.epsn, 0, 0, 16, NULL, 0);
	p[1].b[RPKT_BTH + 1] |= 1 << 4;	/* pad on a payload-less opcode */
	rpkt_seal(&p[1]);
	t_drop("pad count larger than the payload, pad on a READ request: dropped",
	       &L, p, 2, "bad_pad");

	build_send(&p[0], &L, RPKT_SEND_ONLY, L.epsn, data, 8);
	rpkt_set_len(&p[0], p[0].len - 3);	/* 5 payload bytes, pad 0 */
	rpkt_seal(&p[0]);
	desc_init(&d, RPKT_ACK, L.qp->qp_num, L.epsn);
	d.data = data;
	d.len = 4;		/* an ACK carries no payload */
	rpkt_build(&p[1], &d);
	t_drop("length not a multiple of 4, payload on an ACK: dropped", &L, p,
	       2, "bad_length");

	build_send(&p[0], &L, RPKT_SEND_ONLY, L.epsn, data, 16);
	p[0].b[RPKT_BTH + 5] = (uint8_t)(NO_QPN >> 16);
	p[0].b[RPKT_BTH + 6] = (uint8_t)(NO_QPN >> 8);
	p[0].b[RPKT_BTH + 7] = (uint8_t)NO_QPN;
	rpkt_seal(&p[0]);
	for (i = 1; i < 3; i++) {
		p[i] = p[0];
		p[i].b[RPKT_BTH + 5] = 0;
		p[i].b[RPKT_BTH + 6] = 0;
		p[i].b[RPKT_BTH + 7] = 2 * (i - 1);	/* no QP0 on RoCE, QP2 */
		rpkt_seal(&p[i]);
	}
	t_drop("QPN of no QP (0xfffffe, 0, 2): dropped", &L, p, 3, "no_qp");
	/* QP1 is the MAD layer's GSI QP: datagrams only. */
	p[0].b[RPKT_BTH + 7] = 1;
	p[0].b[RPKT_BTH + 5] = p[0].b[RPKT_BTH + 6] = 0;
	rpkt_seal(&p[0]);
	t_drop("an RC SEND to QP1, the GSI QP: dropped", &L, p, 1, "qp_type");

	for (i = 0; i < ARRAY_SIZE(X); i++) {
		char name[128];

		build_send(&p[0], &X[i], RPKT_SEND_ONLY, 0, data, 16);
		build_rdma(&p[1], &X[i], RPKT_WRITE_ONLY, 0, 0, 0, 16, data, 16);
		snprintf(name, sizeof(name),
			 "SEND and WRITE to a QP in %s: dropped, nothing written",
			 X[i].name);
		t_drop(name, &X[i], p, 2, "qp_state");
	}
}

/*
 * QPNs are unique across devices, so a packet that reaches our device
 * may name the QP of a device in another namespace: it must not get there.
 */
static void t_isolation(void)
{
	uint8_t data[64];
	struct rpkt p;

	/* Well formed, right QPN and PSN, but not from L's peer (10.9.0.3). */
	pattern(data, sizeof(data), 26);
	build_send(&p, &L, RPKT_SEND_ONLY, L.epsn, data, sizeof(data));
	p.b[RPKT_IP + 15] ^= 0x01;	/* IPv4 source address, last byte */
	rpkt_seal(&p);
	t_drop("a valid SEND to L from an address other than its peer's: dropped",
	       &L, &p, 1, "source");
	build_send(&p, &L, RPKT_SEND_ONLY, L.epsn, data, sizeof(data));
	p.b[RPKT_BTH + 2] = 0x12;	/* P_Key 0x1234: another partition */
	p.b[RPKT_BTH + 3] = 0x34;
	rpkt_seal(&p);
	t_drop("a valid SEND to L with a P_Key of another partition: dropped",
	       &L, &p, 1, "source");

	if (!O.qp) {
		ktap_skip("a valid SEND to the QP of a device in another namespace: dropped",
			  "no second device given");
		return;
	}
	pattern(data, sizeof(data), 25);
	build_send(&p, &O, RPKT_SEND_ONLY, O.epsn, data, sizeof(data));
	t_drop("a valid SEND to the QP of a device in another namespace: dropped",
	       &O, &p, 1, "no_qp");
}

/* ---- congestion notification (cc.c) ---- */

#define CNP_PARAM	"/sys/module/softrdma/parameters/cnp_interval_us"

static bool param_rw(const char *path, char *old, size_t n, const char *val)
{
	ssize_t r;
	int fd = open(path, O_RDWR);

	if (fd < 0)
		return false;
	r = read(fd, old, n - 1);
	if (r > 0)
		old[r] = '\0';
	r = r > 0 ? pwrite(fd, val, strlen(val), 0) : -1;
	close(fd);
	return r == (ssize_t)strlen(val);
}

static uint64_t ctr_now(const char *name)
{
	uint64_t v = 0;

	usleep(30 * 1000);	/* past the core's 10 ms counter cache */
	ctr_read(name, &v);
	return v;
}

/*
 * Two SENDs to L marked CE on the way: both land, L's ACK leaves
 * ECN-capable, and one CNP (interval 1 s) goes to L's peer QP, Not-ECT,
 * BECN set. Then a CNP from the peer to L is taken and counted, a CNP of
 * another address is dropped, and a datagram QP has no CNP to take.
 */
static void t_cnp(void)
{
	uint64_t marked, sent, handled;
	static uint8_t buf[65536];
	char old[32] = "50", scratch[32];
	uint8_t data[2][64];
	struct rpkt p[2];
	struct rpkt_desc d;
	struct rpkt_rx rx;
	int acks = 0, cnps = 0, ect_acks = 0;
	bool ok, cnp_ok = true;
	int i;

	if (!g.have_ctr || !param_rw(CNP_PARAM, old, sizeof(old), "1000000")) {
		for (i = 0; i < 4; i++)
			ktap_skip("congestion notification",
				  "no counters or no cnp_interval_us parameter");
		return;
	}
	marked = ctr_now("np_ecn_marked_roce_packets");
	sent = ctr_now("np_cnp_sent");
	for (i = 0; i < 2; i++) {
		pattern(data[i], sizeof(data[i]), 40 + i);
		build_send(&p[i], &L, RPKT_SEND_ONLY, L.epsn + i, data[i],
			   sizeof(data[i]));
		p[i].b[RPKT_IP + 1] = 0x03;	/* CE; the ICRC masks the TOS */
	}
	rx_drain();
	g.take_cnp = true;
	inject(&p[0]);
	inject(&p[1]);
	while (rx_for(L.peer_qpn, &rx, buf, sizeof(buf), 2 * QUIET_MS)) {
		if (rx.opcode == RPKT_CNP) {
			cnps++;
			cnp_ok &= rx.becn && rx.psn == 0 && !(rx.tos & 3);
		} else if (rx.opcode == RPKT_ACK) {
			acks++;
			ect_acks += (rx.tos & 3) == 2;
		}
	}
	g.take_cnp = false;
	ok = expect_recv(&L, data[0], sizeof(data[0]), false) &&
	     expect_recv(&L, data[1], sizeof(data[1]), false);
	L.epsn += 2;
	ktap_print("%d of %d ACKs ECN-capable (ECT(0))", ect_acks, acks);
	ktap_result(ok && acks && ect_acks == acks,
		    "two CE-marked SENDs land, and L's ACKs leave ECN-capable");
	ok = ktap_expect(cnps == 1 && cnp_ok,
			 "%d CNPs to the peer QP (want 1: BECN, PSN 0, Not-ECT)",
			 cnps) &
	     ktap_expect(ctr_now("np_ecn_marked_roce_packets") - marked == 2,
			 "np_ecn_marked_roce_packets did not grow by 2") &
	     ktap_expect(ctr_now("np_cnp_sent") - sent == 1,
			 "np_cnp_sent did not grow by 1");
	ktap_result(ok, "the notification point answers them with one CNP per interval, counted");
	param_rw(CNP_PARAM, scratch, sizeof(scratch), old);

	handled = ctr_now("rp_cnp_handled");
	desc_init(&d, RPKT_CNP, L.qp->qp_num, 0);
	rpkt_build(&p[0], &d);
	p[0].b[RPKT_BTH + 4] |= 0x40;		/* BECN */
	rx_drain();
	inject(&p[0]);
	ok = rx_quiet(&L) &&
	     ktap_expect(ctr_now("rp_cnp_handled") - handled == 1,
			 "rp_cnp_handled did not grow by 1") &&
	     probe(&L);
	ktap_result(ok, "a CNP from L's peer is taken and counted, with no reply");

	p[0].b[RPKT_IP + 15] ^= 0x01;	/* IPv4 source address, last byte */
	rpkt_seal(&p[0]);
	t_drop("a CNP to L from an address other than its peer's: dropped",
	       &L, p, 1, "source");
}

static void t_psn(void)
{
	static uint8_t buf[65536];
	uint8_t data[64];
	struct ctrs a, b;
	struct rpkt p;
	struct rpkt_rx rx;
	bool ok;

	pattern(data, sizeof(data), 30);
	rx_drain();
	rdma_save();
	ctr_snap(&a);
	build_send(&p, &L, RPKT_SEND_ONLY, (L.epsn + 0x400000) & 0xffffff,
		   data, 64);
	inject(&p);
	ok = expect_ack(&L, L.epsn, RPKT_SYN_NAK_SEQ) &&
	     cq_quiet(L.rcq, "receive");
	ctr_snap(&b);
	ok &= ctr_grew(&a, &b, CTR_SEQ_NAKS, 1) && ctr_grew(&a, &b, CTR_RX_PKTS, 1);
	ok &= probe(&L);
	ktap_result(ok, "PSN 2^22 ahead: one sequence NAK for the expected PSN, nothing delivered");

	rx_drain();
	ctr_snap(&a);
	build_send(&p, &L, RPKT_SEND_ONLY, (L.epsn - 0x400000) & 0xffffff,
		   data, 64);
	inject(&p);
	ok = cq_quiet(L.rcq, "receive");
	/* A duplicate may be re-ACKed, never NAKed. */
	if (rx_for(L.peer_qpn, &rx, buf, sizeof(buf), QUIET_MS))
		ok &= ktap_expect(rx.opcode == RPKT_ACK &&
				  rx.syndrome == RPKT_SYN_ACK,
				  "duplicate answered by opcode %#x syndrome %#x",
				  rx.opcode, rx.syndrome);
	ctr_snap(&b);
	ok &= ctr_grew(&a, &b, CTR_DUP, 1);
	ok &= probe(&L);
	ktap_result(ok, "PSN 2^22 behind (duplicate): nothing delivered, no NAK");
}

/* A read response of L: @op for @psn carrying the @len bytes at @want. */
static bool expect_read_resp(uint8_t op, uint32_t psn, const uint8_t *want,
			     uint32_t len)
{
	static uint8_t buf[65536];
	struct rpkt_rx rx;

	psn &= 0xffffff;
	return ktap_expect(rx_for(L.peer_qpn, &rx, buf, sizeof(buf), WAIT_MS),
			   "no read response for PSN %#x", psn) &&
	       ktap_expect(rx.opcode == op && rx.psn == psn &&
			   rx.payload_len == len &&
			   !memcmp(rx.payload, want, len),
			   "read response: opcode %#x PSN %#x, %u bytes; expected %#x PSN %#x, %u bytes",
			   rx.opcode, rx.psn, rx.payload_len, op, psn, len);
}

/*
 * Duplicate READs: one that repeats a read L still holds as a responder
 * resource, whole or from one of its packets on, is answered again; any
 * other is dropped, never NAKed (a NAK would carry L's current PSN and
 * kill the real peer's work) and never executed.
 */
static void t_dup_read(void)
{
	uint8_t want[2 * PMTU_B];
	uint32_t psn = L.epsn;
	struct ctrs a, b;
	struct rpkt p[4];
	int i;
	bool ok;

	pattern(g.buf[0] + 16384, sizeof(want), 50);
	memcpy(want, g.buf[0] + 16384, sizeof(want));
	build_rdma(&p[0], &L, RPKT_READ_REQ, psn, 0, 16384, sizeof(want),
		   NULL, 0);
	build_rdma(&p[1], &L, RPKT_READ_REQ, (psn + 1) & 0xffffff, 0,
		   16384 + PMTU_B, PMTU_B, NULL, 0);
	rx_drain();
	inject(&p[0]);
	ok = expect_read_resp(RPKT_READ_RESP_FIRST, psn, want, PMTU_B) &&
	     expect_read_resp(RPKT_READ_RESP_LAST, psn + 1, want + PMTU_B,
			      PMTU_B);
	L.epsn = (L.epsn + 2) & 0xffffff;
	ctr_snap(&a);
	inject(&p[0]);
	ok = ok && expect_read_resp(RPKT_READ_RESP_FIRST, psn, want, PMTU_B) &&
	     expect_read_resp(RPKT_READ_RESP_LAST, psn + 1, want + PMTU_B,
			      PMTU_B);
	inject(&p[1]);
	ok = ok && expect_read_resp(RPKT_READ_RESP_ONLY, psn + 1,
				    want + PMTU_B, PMTU_B);
	ctr_snap(&b);
	ok = ok && ctr_grew(&a, &b, CTR_DUP, 2);
	ok = probe(&L) && ok;
	ktap_result(ok, "a duplicate of a READ the responder holds is answered again, whole or from one of its packets on");

	/*
	 * A PSN far back with a valid key; the held read's PSN with another
	 * address; its second PSN with its first packet's address; its PSN
	 * with the key of another PD.
	 */
	build_rdma(&p[0], &L, RPKT_READ_REQ, (L.epsn - 0x100000) & 0xffffff,
		   0, 0, RDMA_LEN, NULL, 0);
	build_rdma(&p[1], &L, RPKT_READ_REQ, psn, 0, 16384 + 8, sizeof(want),
		   NULL, 0);
	build_rdma(&p[2], &L, RPKT_READ_REQ, (psn + 1) & 0xffffff, 0, 16384,
		   PMTU_B, NULL, 0);
	build_rdma(&p[3], &L, RPKT_READ_REQ, psn, 1, 16384, sizeof(want),
		   NULL, 0);
	rx_drain();
	ctr_snap(&a);
	for (i = 0; i < 4; i++)
		inject(&p[i]);
	ok = rx_quiet(&L) &&
	     ktap_expect(qp_state(&L) == IBV_QPS_RTS, "L left RTS");
	ctr_snap(&b);
	ok = ok && ctr_grew(&a, &b, CTR_DROP_PSN, 4) &&
	     ctr_grew(&a, &b, CTR_DUP, 0);
	ok = probe(&L) && ok;
	if (!ok)
		dump(p, 4);
	ktap_result(ok, "duplicate READs that repeat no held read (forged PSN, other address, other key) are dropped: no response, no NAK");
}

static void t_fatal(void)
{
	uint8_t data[PMTU_B + 64];
	struct rpkt p[2];
	struct rpkt_desc d;

	pattern(data, sizeof(data), 40);

	build_send(&p[0], &L, RPKT_SEND_MIDDLE, L.epsn, data, PMTU_B);
	t_nak("SEND_MIDDLE with no message open: NAK invalid request", p, 1,
	      L.epsn, RPKT_SYN_NAK_INV);

	build_rdma(&p[0], &L, RPKT_WRITE_LAST, L.epsn, 0, 0, 0, data, 64);
	t_nak("WRITE_LAST with no message open: NAK invalid request, nothing written",
	      p, 1, L.epsn, RPKT_SYN_NAK_INV);

	build_send(&p[0], &L, RPKT_SEND_FIRST, L.epsn, data, PMTU_B);
	build_rdma(&p[1], &L, RPKT_WRITE_MIDDLE, L.epsn + 1, 0, 0, 0, data,
		   PMTU_B);
	t_nak("WRITE_MIDDLE inside an open SEND: NAK invalid request", p, 2,
	      (L.epsn + 1) & 0xffffff, RPKT_SYN_NAK_INV);

	/* MR 1 is in the other PD: its own rkey and address. */
	build_rdma(&p[0], &L, RPKT_WRITE_ONLY, L.epsn, 1, 0, 64, data, 64);
	t_nak("WRITE with the rkey of an MR of another PD: NAK remote access, nothing written",
	      p, 1, L.epsn, RPKT_SYN_NAK_ACC);

	build_rdma(&p[0], &L, RPKT_WRITE_ONLY, L.epsn, 0, BUF_SIZE - 32, 64,
		   data, 64);
	t_nak("WRITE running 32 bytes past the end of the MR: NAK remote access, nothing written",
	      p, 1, L.epsn, RPKT_SYN_NAK_ACC);

	build_rdma(&p[0], &L, RPKT_READ_REQ, L.epsn, 0, BUF_SIZE - 100, 200,
		   NULL, 0);
	t_nak("READ request running past the end of the MR: NAK remote access",
	      p, 1, L.epsn, RPKT_SYN_NAK_ACC);

	build_rdma(&p[0], &L, RPKT_WRITE_ONLY, L.epsn, 0, 0, PMTU_B + 64, data,
		   PMTU_B + 64);
	t_nak("WRITE_ONLY with a payload over the path MTU: NAK invalid request, nothing written",
	      p, 1, L.epsn, RPKT_SYN_NAK_INV);

	build_rdma(&p[0], &L, RPKT_WRITE_FIRST, L.epsn, 0, 0, 2 * PMTU_B, data,
		   PMTU_B / 2);
	t_nak("WRITE_FIRST shorter than the path MTU: NAK invalid request, nothing written",
	      p, 1, L.epsn, RPKT_SYN_NAK_INV);

	build_rdma(&p[0], &L, RPKT_WRITE_ONLY, L.epsn, 0, 0, 4096, data, 64);
	t_nak("WRITE_ONLY whose RETH length (4096) exceeds its payload (64): NAK invalid request, nothing written",
	      p, 1, L.epsn, RPKT_SYN_NAK_INV);

	/* 2052 bytes fit the receive (RECV_LEN): only the MTU is wrong. */
	build_send(&p[0], &L, RPKT_SEND_FIRST, L.epsn, data, PMTU_B);
	build_send(&p[1], &L, RPKT_SEND_LAST, L.epsn + 1, data, PMTU_B + 4);
	t_nak("SEND_LAST with a payload over the path MTU: NAK invalid request",
	      p, 2, (L.epsn + 1) & 0xffffff, RPKT_SYN_NAK_INV);

	desc_init(&d, RPKT_CMP_SWAP, L.qp->qp_num, L.epsn);
	d.ackreq = true;
	d.va = (uintptr_t)g.buf[0] + 4;
	d.rkey = g.mr[0]->rkey;
	rpkt_build(&p[0], &d);
	t_nak("CMP_SWAP on an address not 8-byte aligned: NAK invalid request, nothing written",
	      p, 1, L.epsn, RPKT_SYN_NAK_INV);
}

/* ---- forged responses to QP R's requests ---- */

static bool post_r_at(enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		      uint64_t id, uint64_t raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)g.buf[0] + off,
		.length = len,
		.lkey = g.mr[0]->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = 0x1234 },
	}, *bad;

	if (ibv_post_send(R.qp, &wr, &bad))
		return false;
	R.outstanding++;
	return true;
}

static bool post_r(enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		   uint64_t id)
{
	return post_r_at(op, off, len, id, 0x10000);
}

/* The impersonated peer's memory: a byte for every address. */
static uint8_t peer_byte(uint64_t addr)
{
	return (addr * 0x9e3779b1u) >> 24;
}

/*
 * Answer the READ request @rx of QP R from the peer's memory, all its
 * response packets but the last if @drop_last.
 */
static void answer_read(const struct rpkt_rx *rx, bool drop_last)
{
	uint32_t n = (rx->dma_len + PMTU_B - 1) / PMTU_B, i, k, len;
	uint8_t data[PMTU_B];
	struct rpkt_desc d;
	struct rpkt p;
	uint8_t op;

	if (!n)
		n = 1;
	for (i = 0; i < n - drop_last; i++) {
		len = rx->dma_len - i * PMTU_B;
		if (len > PMTU_B)
			len = PMTU_B;
		for (k = 0; k < len; k++)
			data[k] = peer_byte(rx->va + i * PMTU_B + k);
		op = n == 1 ? RPKT_READ_RESP_ONLY : !i ? RPKT_READ_RESP_FIRST :
		     i == n - 1 ? RPKT_READ_RESP_LAST : RPKT_READ_RESP_FIRST + 1;
		desc_init(&d, op, R.qp->qp_num, (rx->psn + i) & 0xffffff);
		d.data = data;
		d.len = len;
		rpkt_build(&p, &d);
		inject(&p);
	}
}

/*
 * READ A (2 response packets) and READ B (1) in flight; A's last response
 * is lost, B's arrives. R must ask for A again (after its ACK timeout)
 * and complete both, in order, with the right bytes: a later READ's
 * response is no acknowledgement of an unfinished earlier one.
 */
static void t_read_loss(void)
{
	static uint8_t buf[65536];
	const uint64_t va[2] = { 0x30000, 0x40000 };
	const uint32_t len[2] = { 2 * PMTU_B, PMTU_B };
	uint64_t end;
	struct rpkt_rx rx;
	struct ibv_wc wc;
	bool ok = true;
	int seen = 0, again = 0, done = 0, i;
	uint32_t k;

	rx_drain();
	memset(g.buf[0] + READ_OFF, 0, 3 * PMTU_B);
	for (i = 0; i < 2; i++)
		ok &= ktap_expect(post_r_at(IBV_WR_RDMA_READ,
					    READ_OFF + i * 2 * PMTU_B, len[i],
					    10 + i, va[i]), "post_send failed");
	end = now_ms() + 4 * WAIT_MS;
	while (ok && done < 2 && now_ms() < end) {
		if (cq_wait(R.scq, &wc, 0)) {
			ok = ktap_expect(wc.status == IBV_WC_SUCCESS &&
					 wc.wr_id == 10u + done,
					 "READ completion %" PRIu64 ": %s",
					 wc.wr_id, ibv_wc_status_str(wc.status));
			done++;
			R.outstanding--;
			continue;
		}
		if (!rx_for(R.peer_qpn, &rx, buf, sizeof(buf), 50) ||
		    rx.opcode != RPKT_READ_REQ)
			continue;
		/* The first request for A goes without its last response. */
		answer_read(&rx, !seen++ && rx.va == va[0]);
		again += seen > 2;
	}
	ktap_print("%d READ requests seen, %d repeated, %d READs completed",
		   seen, again, done);
	ok = ok && ktap_expect(done == 2, "READ A %s", seen > 2 ?
			       "was asked again but did not complete" :
			       "was never asked again: the requester stalls");
	for (i = 0; ok && i < 2; i++)
		for (k = 0; k < len[i]; k++)
			if (g.buf[0][READ_OFF + i * 2 * PMTU_B + k] !=
			    peer_byte(va[i] + k)) {
				ok = ktap_expect(false, "READ %c byte %u wrong",
						 'A' + i, k);
				break;
			}
	if (!ok)
		resync(&R);
	ktap_result(ok, "QP R: a READ whose last response is lost is asked again and completes, though a later READ's response came");
}

static void t_requester(void)
{
	static uint8_t buf[65536];
	uint8_t data[512];
	struct rpkt_desc d;
	struct rpkt_rx rx;
	struct ibv_wc wc;
	struct rpkt p;
	uint32_t psn;
	bool ok;

	rx_drain();
	pattern(g.buf[0] + SEND_OFF, 200, 50);
	ok = ktap_expect(post_r(IBV_WR_SEND, SEND_OFF, 200, 1), "post_send failed") &&
	     ktap_expect(rx_for(R.peer_qpn, &rx, buf, sizeof(buf), WAIT_MS),
			 "QP R sent nothing") &&
	     ktap_expect(rx.opcode == RPKT_SEND_ONLY && rx.payload_len == 200 &&
			 rx.psn == R.sq_psn &&
			 !memcmp(rx.payload, g.buf[0] + SEND_OFF, 200),
			 "QP R sent opcode %#x PSN %#x, %u bytes",
			 rx.opcode, rx.psn, rx.payload_len);
	psn = R.sq_psn;
	if (ok) {
		/* An ACK for a PSN never sent is ignored. */
		desc_init(&d, RPKT_ACK, R.qp->qp_num, (psn + 1000) & 0xffffff);
		rpkt_build(&p, &d);
		inject(&p);
		usleep(QUIET_MS * 1000);
		ok = cq_quiet(R.scq, "send");
		desc_init(&d, RPKT_ACK, R.qp->qp_num, psn);
		rpkt_build(&p, &d);
		inject(&p);
		ok &= ktap_expect(cq_wait(R.scq, &wc, WAIT_MS) &&
				  wc.status == IBV_WC_SUCCESS &&
				  wc.opcode == IBV_WC_SEND,
				  "the SEND did not complete on our ACK");
		R.outstanding--;
	}
	ktap_result(ok, "QP R's SEND reaches the peer intact; an ACK beyond it is ignored, its own ACK completes it");

	rx_drain();
	memset(g.buf[0] + READ_OFF, 0, 512);
	ok = ktap_expect(post_r(IBV_WR_RDMA_READ, READ_OFF, 300, 2), "post_send failed") &&
	     ktap_expect(rx_for(R.peer_qpn, &rx, buf, sizeof(buf), WAIT_MS),
			 "QP R sent nothing") &&
	     ktap_expect(rx.opcode == RPKT_READ_REQ && rx.has_reth &&
			 rx.dma_len == 300 && rx.va == 0x10000 &&
			 rx.rkey == 0x1234,
			 "QP R sent opcode %#x, RETH va %#" PRIx64 " rkey %#x len %u",
			 rx.opcode, rx.va, rx.rkey, rx.dma_len);
	psn = rx.psn;
	if (ok) {
		pattern(data, 300, 51);
		desc_init(&d, RPKT_READ_RESP_ONLY, R.qp->qp_num,
			  (psn + 5) & 0xffffff);
		d.data = data;
		d.len = 300;
		rpkt_build(&p, &d);
		inject(&p);		/* a PSN of no read: ignored */
		usleep(QUIET_MS * 1000);
		ok = cq_quiet(R.scq, "send") &&
		     ktap_expect(!g.buf[0][READ_OFF], "a stray response was placed");
		desc_init(&d, RPKT_READ_RESP_ONLY, R.qp->qp_num, psn);
		d.data = data;
		d.len = 300;
		rpkt_build(&p, &d);
		inject(&p);
		ok &= ktap_expect(cq_wait(R.scq, &wc, WAIT_MS) &&
				  wc.status == IBV_WC_SUCCESS &&
				  wc.opcode == IBV_WC_RDMA_READ,
				  "the READ did not complete on our response") &&
		      ktap_expect(!memcmp(g.buf[0] + READ_OFF, data, 300),
				  "the read data differ");
		R.outstanding--;
	}
	ktap_result(ok, "QP R's READ: a response of the wrong PSN is ignored, the right one lands and completes");
	R.sq_psn = (psn + 1) & 0xffffff;
}

/* ---- held atomics, and a NAK racing a modify ---- */

/* CMP_SWAP (compare 0, swap 0: the memory never changes) to L at @psn. */
static void inject_atomic(uint32_t psn, int page)
{
	struct rpkt_desc d;
	struct rpkt p;

	desc_init(&d, RPKT_CMP_SWAP, L.qp->qp_num, psn & 0xffffff);
	d.ackreq = true;
	d.va = (uintptr_t)g.odp + page * 4096;
	d.rkey = g.odp_mr->rkey;
	rpkt_build(&p, &d);
	inject(&p);
}

/* L's reply to an atomic: 1 atomic ACK, 0 RNR NAK, -1 none or another. */
static int atomic_reply(uint32_t psn)
{
	static uint8_t buf[65536];
	struct rpkt_rx rx;

	if (!rx_for(L.peer_qpn, &rx, buf, sizeof(buf), WAIT_MS) ||
	    rx.psn != (psn & 0xffffff))
		return -1;
	if (rx.opcode == RPKT_ATOMIC_ACK)
		return 1;
	return rx.opcode == RPKT_ACK && (rx.syndrome & 0xe0) == RPKT_SYN_RNR ?
	       0 : -1;
}

/* An atomic at L.epsn on ODP page @page, asked again after RNR NAKs. */
static bool atomic_done(int page)
{
	int tries, r = -1;

	for (tries = 0; tries < 50; tries++) {
		inject_atomic(L.epsn, page);
		r = atomic_reply(L.epsn);
		if (r)
			break;
		usleep(10000);	/* the page is being mapped */
	}
	if (r != 1)
		return ktap_expect(false, "no atomic ACK for PSN %#x", L.epsn);
	L.epsn = (L.epsn + 1) & 0xffffff;
	return true;
}

/*
 * The responder keeps what it executed for a duplicate to be answered
 * again (IBA 9.7.5.1.3): only requests it executed. An atomic NAKed for
 * an ODP page not yet mapped took a place there and left another
 * request's stale entry as the newest: enough such NAKs pushed a real
 * atomic out of what a duplicate can find, and after a reconnect the
 * stale entry answered a duplicate from the previous connection.
 */
static void t_held(void)
{
	const char *dup = "a duplicate atomic after 20 RNR-NAKed ones is answered from its saved result";
	const char *old = "after a reconnect, no duplicate is answered from the previous connection's atomics";
	uint32_t a, first, i;
	bool ok;

	if (!g.odp_mr) {
		ktap_skip(dup, "no ODP");
		ktap_skip(old, "no ODP");
		return;
	}
	rx_drain();
	a = L.epsn;
	ok = atomic_done(0);
	for (i = 1; ok && i <= 20; i++) {
		inject_atomic(L.epsn, i);	/* a page not mapped yet */
		ok = ktap_expect(atomic_reply(L.epsn) == 0,
				 "no RNR NAK for an atomic on ODP page %u", i);
	}
	if (ok) {
		inject_atomic(a, 0);
		ok = ktap_expect(atomic_reply(a) == 1,
				 "no atomic ACK for the duplicate of PSN %#x", a);
	}
	ktap_result(ok, dup);
	if (!ok)
		resync(&L);

	/* Every place of the ring filled by this connection... */
	rx_drain();
	first = L.epsn;
	for (i = 0; ok && i < HELD_MAX; i++)
		ok = atomic_done(0);
	/* ...then a new one, with those PSNs just behind it. */
	ok = ok && qp_connect_at(&L, IBV_QPS_RTS, first + HELD_MAX + 1000);
	if (ok) {
		inject_atomic(L.epsn, 21);	/* RNR NAK */
		ok = ktap_expect(atomic_reply(L.epsn) == 0,
				 "no RNR NAK for an atomic on ODP page 21");
	}
	for (i = 0; ok && i < HELD_MAX; i++)
		inject_atomic(first + i, 0);
	ok = ok && rx_quiet(&L);
	ktap_result(ok, old);
	resync(&L);
}

static struct {
	pthread_t thread;
	int run, stop;		/* __atomic */
	unsigned long done, refused;
} race;

/* ibv_modify_qp RTS to RTS on QP R, as fast as it goes, while race.run. */
static void *race_modify(void *arg)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };

	(void)arg;
	while (!__atomic_load_n(&race.stop, __ATOMIC_ACQUIRE)) {
		if (!__atomic_load_n(&race.run, __ATOMIC_ACQUIRE)) {
			usleep(100);
			continue;
		}
		if (ibv_modify_qp(R.qp, &a, IBV_QP_STATE))
			race.refused++;
		else
			race.done++;
	}
	return NULL;
}

/* One round: READs posted, the oldest NAKed while the modify loop runs. */
static bool race_round(void)
{
	static uint8_t buf[65536];
	struct rpkt_desc d;
	struct rpkt_rx rx;
	struct ibv_wc wc;
	struct rpkt p;
	int i, sent = 0, n = 0, flushed = 0;
	bool ok = qp_connect(&R, IBV_QPS_RTS);

	rx_drain();
	for (i = 0; ok && i < RACE_READS; i++)
		ok = ktap_expect(post_r(IBV_WR_RDMA_READ, READ_OFF, 8, 100 + i),
				 "post_send failed");
	/* The window sends some; the rest wait, fetched or not. */
	while (ok && rx_for(R.peer_qpn, &rx, buf, sizeof(buf),
			    sent ? 20 : WAIT_MS))
		sent += rx.opcode == RPKT_READ_REQ;
	ok = ok && ktap_expect(sent > 0 && sent < RACE_READS,
			       "QP R sent %d of %d READ requests", sent,
			       RACE_READS);
	if (!ok)
		return false;
	__atomic_store_n(&race.run, 1, __ATOMIC_RELEASE);
	usleep(rnd_from(&rng_aux) % 2000);
	desc_init(&d, RPKT_ACK, R.qp->qp_num, R.sq_psn);
	d.syndrome = RPKT_SYN_NAK_ACC;
	rpkt_build(&p, &d);
	inject(&p);
	ok = ktap_expect(cq_wait(R.scq, &wc, WAIT_MS), "no completion for the NAK");
	__atomic_store_n(&race.run, 0, __ATOMIC_RELEASE);
	usleep(2000);	/* the modify under way ends */
	ok = ok && ktap_expect(wc.status == IBV_WC_REM_ACCESS_ERR &&
			       wc.wr_id == 100,
			       "first completion: %s, wr_id %" PRIu64,
			       ibv_wc_status_str(wc.status), wc.wr_id);
	ok = ok && ktap_expect(qp_state(&R) == IBV_QPS_ERR,
			       "QP R is in state %d after the NAK, not ERR: a modify undid the error",
			       qp_state(&R));
	/* Every other READ flushed, in order, once. */
	while (ok && n < RACE_READS - 1 && cq_wait(R.scq, &wc, WAIT_MS)) {
		n++;
		flushed += wc.status == IBV_WC_WR_FLUSH_ERR &&
			   wc.wr_id == 100u + n;
	}
	R.outstanding = 0;
	return ok && ktap_expect(n == RACE_READS - 1 && flushed == n,
				 "%d more completions, %d flushed in order, expected %d",
				 n, flushed, RACE_READS - 1) &&
	       cq_quiet(R.scq, "send");
}

/*
 * A NAK fails QP R while another thread modifies it RTS to RTS: the
 * error must win. A modify that wrote RTS over it left the QP sending on
 * from rings the error had flushed, and its next ACK walked 2^32 WQEs
 * under a spinlock with BHs off (a soft lockup). The window is a few
 * instructions wide: the module before the fix passed 100 rounds (24k
 * modifies) too; this guards the fix, it cannot show the bug.
 */
static void t_nak_race(void)
{
	int i;
	bool ok = ktap_expect(!pthread_create(&race.thread, NULL, race_modify,
					      NULL), "pthread_create");

	for (i = 0; ok && i < RACE_ROUNDS; i++)
		ok = race_round();
	__atomic_store_n(&race.stop, 1, __ATOMIC_RELEASE);
	pthread_join(race.thread, NULL);
	ktap_print("%d rounds; modify RTS->RTS: %lu done, %lu refused",
		   i, race.done, race.refused);
	ok = qp_connect(&R, IBV_QPS_RTS) && ok;
	ktap_result(ok, "QP R: a NAK racing modify RTS->RTS leaves it in ERR, every WQE completed once");
}

/* ---- the random part ---- */

static const uint8_t fuzz_ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
	0x17, 0x24, 0x2a, 0x64,
};

/* Offsets from the BTH: opcode, flags, QPN, PSN, RETH va/rkey/len, AETH. */
static const uint8_t fields[] = { 0, 1, 5, 9, 12, 20, 24, 13, 26 };

static const uint8_t interesting[] = { 0x00, 0x01, 0x03, 0x0f, 0x10, 0x30,
				       0x7f, 0x80, 0xfe, 0xff };

/* A valid packet to a random target, then a random mutation. */
static void fuzz_one(struct rpkt *p)
{
	static uint8_t data[PMTU_B + 64];
	struct tqp *q = NULL;
	struct rpkt_desc d;
	uint32_t r = rndn(100), qpn, psn, i, n, room;
	int m, rounds;

	if (r < 65)
		q = &L;
	else if (r < 80)
		q = &R;
	else if (r < 92)
		q = &X[rndn(ARRAY_SIZE(X))];
	qpn = q ? q->qp->qp_num : rndn(4) ? rnd() & 0xffffff : rndn(32);
	psn = q == &R ? R.sq_psn : q ? q->epsn : rnd();
	r = rndn(8);
	if (r == 1)
		psn += rndn(9) - 4;
	else if (r == 2)
		psn = rnd();
	desc_init(&d, rndn(10) ? fuzz_ops[rndn(ARRAY_SIZE(fuzz_ops))] :
		  (uint8_t)rnd(), qpn, psn & 0xffffff);
	d.ackreq = rndn(2);
	d.se = !rndn(8);
	n = rndn(3) ? rndn(128) : rndn(PMTU_B + 64 + 1);
	for (i = 0; i < n; i++)
		data[i] = rnd();
	d.data = data;
	d.len = n;
	i = rndn(2);
	d.va = rndn(8) ? (uintptr_t)g.buf[i] + rndn(BUF_SIZE + 64) : rnd();
	d.rkey = rndn(8) ? g.mr[i]->rkey : (uint32_t)rnd();
	d.dma_len = rndn(4) ? n : rndn(3) ? rndn(BUF_SIZE) : (uint32_t)rnd();
	d.syndrome = rndn(2) ? RPKT_SYN_ACK : (uint8_t)rnd();
	d.msn = rnd();
	rpkt_build(p, &d);

	rounds = rndn(100) < 85 ? 1 : 2 + rndn(3);
	while (rounds--) {
		room = p->len - RPKT_BTH;
		m = rndn(100);
		if (m < 15) {
			;	/* valid, as built */
		} else if (m < 40) {
			for (i = rndn(4) + 1; i; i--) {
				n = RPKT_BTH + rndn(room);
				p->b[n] ^= 1 << rndn(8);
			}
		} else if (m < 55) {
			for (i = rndn(3) + 1; i; i--)
				p->b[RPKT_BTH + rndn(room)] =
					interesting[rndn(ARRAY_SIZE(interesting))];
		} else if (m < 72) {
			/* A header field: opcode, flags, QPN, PSN, RETH/AETH. */
			n = RPKT_BTH + fields[rndn(ARRAY_SIZE(fields))];
			if (n + 4 <= p->len)
				for (i = rndn(4) + 1; i; i--)
					p->b[n + rndn(4)] = rnd();
		} else if (m < 88) {
			rpkt_set_len(p, RPKT_BTH + rndn(room + 1));
		} else {
			n = rndn(64) + 1;
			if (p->len + n > 1400)
				n = 1400 > p->len ? 1400 - p->len : 0;
			for (i = 0; i < n; i++)
				p->b[p->len + i] = rnd();
			rpkt_set_len(p, p->len + n);
		}
		if (m >= 15 && rndn(100) < 60)
			rpkt_seal(p);
	}
	if (!rndn(32)) {
		p->b[1] = rnd();	/* TOS, TTL: outside the ICRC */
		p->b[8] = rnd() | 1;
	}
}

/*
 * Fresh live QPs at known PSNs for the next batch, whatever the last one
 * did to them: the packets stay a function of the seed (and of the QPNs,
 * keys and addresses the device gave us).
 */
static void fuzz_upkeep(void)
{
	int i;

	rx_drain();
	for (i = 0; i < 2; i++) {
		struct tqp *q = i ? &R : &L;

		if (qp_state(q) != IBV_QPS_RTS)
			st.reconnects++;	/* the batch broke it */
		qp_connect(q, IBV_QPS_RTS);
	}
	/* Requests in flight, so forged responses meet a live requester. */
	while (R.outstanding < 4 &&
	       post_r(rnd_from(&rng_aux) & 1 ? IBV_WR_RDMA_READ : IBV_WR_SEND,
		      READ_OFF, rnd_from(&rng_aux) % (3 * PMTU_B), 100))
		;
}

static void t_fuzz(uint64_t seed, uint64_t count)
{
	uint64_t t0 = now_ms(), i, sent0 = st.sent, bad0 = st.bad_icrc;
	uint64_t rc0 = st.reconnects;
	struct rpkt p;
	bool ok;

	rng = seed;
	rng_aux = ~seed;
	g.ip_id = 0;
	for (i = 0; i < count; i++) {
		if (i % MAINT_EVERY == 0)
			fuzz_upkeep();
		fuzz_one(&p);
		inject(&p);
	}
	fuzz_upkeep();
	ktap_print("fuzz: %" PRIu64 " packets (%" PRIu64 " with a bad ICRC) in %.1f s, seed %" PRIu64 "; %" PRIu64 " batches of %d left a live QP in ERR",
		   st.sent - sent0, st.bad_icrc - bad0,
		   (now_ms() - t0) / 1000.0, seed, st.reconnects - rc0,
		   MAINT_EVERY);
	ok = ktap_expect(st.sent - sent0 == count && !st.send_err,
			 "%" PRIu64 " sendto failures", st.send_err);
	ktap_result(ok, "every fuzz packet was sent");

	/* Let retransmissions and read responses settle, then a clean start. */
	usleep(300 * 1000);
	rx_drain();
	ok = qp_connect(&L, IBV_QPS_RTS) && qp_connect(&R, IBV_QPS_RTS) &&
	     probe(&L) && probe(&L);
	ktap_result(ok, "after the fuzzing a reconnected QP takes valid SENDs again");
}

/* ---- accounting ---- */

static void t_accounting(void)
{
	uint64_t udp = udp_in_datagrams() - g.udp_start;
	struct ctrs c;
	uint64_t d_pkts, d_drops, d_icrc;

	ktap_result(ktap_expect(udp == st.sent,
				"UDP delivered %" PRIu64 " datagrams, we sent %" PRIu64,
				udp, st.sent),
		    "UDP handed every injected packet to the device's socket");
	ktap_result(ktap_expect(st.dev_bad == 0, "%" PRIu64 " of %" PRIu64 " bad",
				st.dev_bad, st.dev_pkts),
		    "every packet the device sent parses and has a valid ICRC");

	if (!g.have_ctr) {
		ktap_skip("rx_pkts counts every injected packet", "no rx_drops counter");
		ktap_skip("rx_drops counts at least every packet with a bad ICRC", "no rx_drops counter");
		ktap_skip("drop_bad_icrc counts the packets with a bad ICRC", "no rx_drops counter");
		return;
	}
	ctr_snap(&c);
	d_pkts = c.v[CTR_RX_PKTS] - g.start.v[CTR_RX_PKTS];
	d_drops = c.v[CTR_RX_DROPS] - g.start.v[CTR_RX_DROPS];
	d_icrc = c.v[CTR_DROP_ICRC] - g.start.v[CTR_DROP_ICRC];
	ktap_print("sent %" PRIu64 ", bad ICRC %" PRIu64 " (%" PRIu64 " otherwise well-formed); rx_pkts +%" PRIu64 ", rx_drops +%" PRIu64 ", drop_bad_icrc +%" PRIu64,
		   st.sent, st.bad_icrc, st.bad_icrc_parsed, d_pkts, d_drops,
		   d_icrc);
	ktap_result(ktap_expect(d_pkts == st.sent, "rx_pkts +%" PRIu64, d_pkts),
		    "rx_pkts counts every injected packet");
	ktap_result(ktap_expect(d_drops >= st.bad_icrc, "rx_drops +%" PRIu64, d_drops),
		    "rx_drops counts at least every packet with a bad ICRC");
	/* The parser may look before the ICRC: bad ones with bad headers count elsewhere. */
	ktap_result(ktap_expect(d_icrc >= st.bad_icrc_parsed &&
				d_icrc <= st.bad_icrc,
				"drop_bad_icrc +%" PRIu64 ", expected %" PRIu64 "..%" PRIu64,
				d_icrc, st.bad_icrc_parsed, st.bad_icrc),
		    "drop_bad_icrc counts the packets with a bad ICRC");
}

/* ---- setup ---- */

static bool find_gid(void)
{
	struct ibv_gid_entry ge;
	int i;

	for (i = 0; i < 16; i++) {
		if (ibv_query_gid_ex(g.ctx, 1, i, &ge, 0) ||
		    ge.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (ge.gid.raw[10] == 0xff && ge.gid.raw[11] == 0xff &&
		    !ge.gid.global.subnet_prefix) {
			g.gid_index = i;
			g.gid = ge.gid;
			memcpy(&g.local_ip, &ge.gid.raw[12], 4);
			return true;
		}
	}
	return false;
}

/* The sockets of the impersonated peer, made inside its namespace. */
static bool peer_sockets(const char *netns)
{
	char path[256];
	int self, ns, one = 1, big = 8 << 20, ok = false;
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(RPKT_ROCE_PORT) };

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	self = open("/proc/self/ns/net", O_RDONLY);
	ns = open(path, O_RDONLY);
	if (self < 0 || ns < 0 || setns(ns, CLONE_NEWNET))
		return ktap_expect(false, "enter netns %s: %s", netns,
				   strerror(errno));
	g.tx = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	g.rx = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
	/* Someone owns the peer's UDP 4791: no ICMP unreachables back. */
	g.sink = socket(AF_INET, SOCK_DGRAM, 0);
	/* EADDRINUSE: a softrdma device of the peer's namespace owns it. */
	if (g.tx >= 0 && g.rx >= 0 && g.sink >= 0 &&
	    !setsockopt(g.tx, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)) &&
	    (!bind(g.sink, (void *)&a, sizeof(a)) || errno == EADDRINUSE))
		ok = true;
	if (setsockopt(g.rx, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(g.rx, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (!ok)
		ktap_print("peer sockets: %s", strerror(errno));
	if (setns(self, CLONE_NEWNET))
		ok = false;
	close(self);
	close(ns);
	return ok;
}

/* O: an RTS QP with a receive posted, on @dev, in the peer's namespace. */
static bool other_setup(const char *dev)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_context *ctx = open_by_name(dev);
	struct ibv_sge sge = { .length = 4096 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_gid_entry ge;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	void *buf;
	int i;

	if (!ctx)
		return ktap_expect(false, "cannot open %s", dev);
	for (i = 0; i < 16; i++)
		if (!ibv_query_gid_ex(ctx, 1, i, &ge, 0) &&
		    ge.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    ge.gid.raw[10] == 0xff && ge.gid.raw[11] == 0xff)
			break;
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, 4096);
	O.scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	O.rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (i == 16 || !pd || !buf || !O.scq || !O.rcq)
		return ktap_expect(false, "%s: no IPv4 GID, or %s", dev,
				   strerror(errno));
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	ia.send_cq = O.scq;
	ia.recv_cq = O.rcq;
	O.qp = ibv_create_qp(pd, &ia);
	if (!mr || !O.qp ||
	    ibv_modify_qp(O.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return ktap_expect(false, "%s: QP setup: %s", dev,
				   strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = PMTU;
	a.dest_qp_num = PEER_QPN_L;
	a.rq_psn = O.epsn = 0x123;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = g.gid;	/* it "talks" to our device */
	a.ah_attr.grh.sgid_index = i;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	sge.addr = (uintptr_t)buf;
	sge.lkey = mr->lkey;
	if (ibv_modify_qp(O.qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) ||
	    ibv_post_recv(O.qp, &wr, &bad))
		return ktap_expect(false, "%s: QP to RTR: %s", dev,
				   strerror(errno));
	return true;
}

static bool setup(const char *netns, const char *peer)
{
	int i;

	g.ctx = open_by_name(g.dev);
	if (!g.ctx)
		return ktap_expect(false, "cannot open %s", g.dev);
	if (!find_gid())
		return ktap_expect(false, "%s has no IPv4 RoCEv2 GID", g.dev);
	if (inet_pton(AF_INET, peer, &g.peer_ip) != 1)
		return ktap_expect(false, "bad peer address %s", peer);
	for (i = 0; i < 2; i++) {
		g.pd[i] = ibv_alloc_pd(g.ctx);
		g.buf[i] = aligned_alloc(4096, BUF_SIZE);
		if (!g.pd[i] || !g.buf[i])
			return ktap_expect(false, "alloc_pd: %s", strerror(errno));
		pattern(g.buf[i], BUF_SIZE, 100 + i);
		g.mr[i] = ibv_reg_mr(g.pd[i], g.buf[i], BUF_SIZE,
				     IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ);
		if (!g.mr[i])
			return ktap_expect(false, "reg_mr: %s", strerror(errno));
	}
	/* Untouched: every page's first RDMA access waits for its mapping. */
	g.odp = mmap(NULL, ODP_PAGES * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.odp != MAP_FAILED)
		g.odp_mr = ibv_reg_mr(g.pd[0], g.odp, ODP_PAGES * 4096,
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_ATOMIC |
				      IBV_ACCESS_ON_DEMAND);
	if (!qp_create(&L, 0) || !qp_create(&R, 0))
		return false;
	for (i = 0; i < 3; i++)
		if (!qp_create(&X[i], 0))
			return false;
	if (!qp_connect(&L, IBV_QPS_RTS) || !qp_connect(&R, IBV_QPS_RTS) ||
	    !qp_connect(&X[0], IBV_QPS_RESET) ||
	    !qp_connect(&X[1], IBV_QPS_INIT) ||
	    !qp_connect(&X[2], IBV_QPS_RTS) || qp_modify(&X[2], IBV_QPS_ERR))
		return ktap_expect(false, "QP setup failed");
	if (!peer_sockets(netns))
		return false;
	if (g.other && !other_setup(g.other))
		return false;
	g.have_ctr = ctr_read("rx_drops", &g.start.v[0]);
	ctr_snap(&g.start);
	g.udp_start = udp_in_datagrams();
	ktap_print("%s: GID %d, QP L %#x, R %#x, RESET %#x, INIT %#x, ERR %#x; counters: %s",
		   g.dev, g.gid_index, L.qp->qp_num, R.qp->qp_num,
		   X[0].qp->qp_num, X[1].qp->qp_num, X[2].qp->qp_num,
		   g.have_ctr ? "yes" : "no (their checks are skipped)");
	return true;
}

int main(int argc, char **argv)
{
	uint64_t seed = 1, count = 100000, t0 = now_ms();

	if (argc < 4 || argc > 7) {
		fprintf(stderr, "usage: %s IBDEV PEER_NETNS PEER_IPV4 [SEED [COUNT [PEER_IBDEV]]]\n",
			argv[0]);
		return KSFT_FAIL;
	}
	g.dev = argv[1];
	if (argc > 4)
		seed = strtoull(argv[4], NULL, 0);
	if (argc > 5)
		count = strtoull(argv[5], NULL, 0);
	if (argc > 6)
		g.other = argv[6];
	rng = seed ^ 0x5eed;
	rng_aux = seed;

	ktap_plan(57);
	ktap_print("seed %" PRIu64 ", %" PRIu64 " fuzz packets", seed, count);
	t_vector();
	if (!ktap_result(setup(argv[2], argv[3]), "set up QPs, MRs in two PDs and the peer's sockets"))
		return ktap_finish();
	t_valid();
	t_malformed();
	t_isolation();
	t_cnp();
	t_psn();
	t_dup_read();
	t_fatal();
	t_requester();
	t_read_loss();
	t_held();
	t_nak_race();
	t_fuzz(seed, count);
	t_accounting();
	ktap_print("%" PRIu64 " packets injected, %" PRIu64 " received from the device, %.1f s",
		   st.sent, st.dev_pkts, (now_ms() - t0) / 1000.0);
	return ktap_finish();
}
