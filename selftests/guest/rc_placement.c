// SPDX-License-Identifier: GPL-2.0
/*
 * IBA 1.5 memory placement over one RC pair on one device: ATOMIC WRITE
 * (ibv_wr_atomic_write: 8 aligned bytes placed as one store) and FLUSH
 * (ibv_wr_flush: global visibility of a range or of a whole MR), each
 * with the errors a responder owes: bad key, bad alignment, out of range,
 * an MR without the access, a placement type we cannot give. And the
 * fence: a SEND with IBV_SEND_FENCE waits for the READ before it.
 *
 * FLUSH needs rdma-core 45 (ibv_wr_flush) and a kernel core that registers
 * MRs with IBV_ACCESS_FLUSH_GLOBAL (Linux 6.2): those tests skip without.
 *
 * Two hosts (server and client modes, the server a responder only): the
 * client places 100 values with ATOMIC WRITE into the server's MR and
 * flushes them (50 range FLUSHes, one of the whole MR), the server reads
 * back the last one, then the client's unaligned ATOMIC WRITE must come
 * back as an invalid request. Only
 * standard libibverbs is used, so either end can be rdma_rxe.
 *
 * usage: rc_placement IBDEV [GID_INDEX]
 *        rc_placement server IBDEV PORT [GID_INDEX]
 *        rc_placement client IBDEV HOST PORT [GID_INDEX]
 */
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#include "loop_qp.h"

#define BUF_SIZE	4096
/* device_cap_flags_ex bits (kernel's IB_UVERBS_DEVICE_*; no ibv names) */
#define CAP_FLUSH_GLOBAL	(1ull << 38)
#define CAP_ATOMIC_WRITE	(1ull << 40)

#if defined(IBVERBS_RELEASE) && IBVERBS_RELEASE >= 45
#define HAVE_WR_FLUSH	1
#endif

static uint8_t *lbuf, *rbuf;
static struct ibv_mr *lmr, *rmr;
static uint64_t caps;

static bool post_atomic_write(struct ep *e, uint64_t wr_id, uint32_t rkey,
			      uint64_t addr, uint64_t value)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(e->qp);

	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, rkey, addr, &value);
	return ktap_expect(!ibv_wr_complete(qpx), "wr_complete failed");
}

static bool wc_is(struct ep *e, uint64_t wr_id, enum ibv_wc_opcode op,
		  enum ibv_wc_status st)
{
	struct ibv_wc wc;

	return poll_one(e->cq, &wc) &&
	       ktap_expect(wc.wr_id == wr_id && wc.status == st &&
			   (st || wc.opcode == op),
			   "wr_id %llu %s opcode %d, expected %llu %s %d",
			   (unsigned long long)wc.wr_id,
			   ibv_wc_status_str(wc.status), wc.opcode,
			   (unsigned long long)wr_id, ibv_wc_status_str(st), op);
}

/* An error completion of @wr_id with status @a or @b. */
static bool wc_is_one_of(struct ep *e, uint64_t wr_id, enum ibv_wc_status a,
			 enum ibv_wc_status b)
{
	struct ibv_wc wc;

	return poll_one(e->cq, &wc) &&
	       ktap_expect(wc.wr_id == wr_id &&
			   (wc.status == a || wc.status == b),
			   "wr_id %llu %s, expected %llu %s or %s",
			   (unsigned long long)wc.wr_id,
			   ibv_wc_status_str(wc.status),
			   (unsigned long long)wr_id, ibv_wc_status_str(a),
			   ibv_wc_status_str(b));
}

/* A fresh connected pair: an error leaves the old one in ERR. */
static bool fresh_pair(struct ep *a, struct ep *b)
{
	pair_close(a, b);
	return pair_open(a, b, 64);
}

static void t_caps(void)
{
	struct ibv_device_attr_ex ex = {};

	ktap_result(!ibv_query_device_ex(ctx, NULL, &ex) &&
		    (ex.device_cap_flags_ex & CAP_ATOMIC_WRITE),
		    "query_device_ex reports ATOMIC_WRITE");
	caps = ex.device_cap_flags_ex;
}

static void t_atomic_write(struct ep *a)
{
	uint64_t *word = (uint64_t *)(rbuf + 64), v = 0;
	bool ok = true;
	int i;

	for (i = 0; ok && i < 100; i++) {
		v = 0x0123456789abcdefull * (i + 1);
		ok = post_atomic_write(a, i, rmr->rkey, (uintptr_t)word, v) &&
		     wc_is(a, i, IBV_WC_ATOMIC_WRITE, IBV_WC_SUCCESS) &&
		     ktap_expect(*word == v, "placed %#llx, expected %#llx",
				 (unsigned long long)*word,
				 (unsigned long long)v);
	}
	ok = ok && ktap_expect(word[-1] == 0 && word[1] == 0,
			       "bytes around the word changed");
	ktap_result(ok, "atomic write: 100 values placed, completions ATOMIC_WRITE");
}

/* Into an ODP MR: the page is mapped on first touch (an RNR meanwhile). */
static void t_atomic_write_odp(struct ep *a, struct ep *b)
{
	struct ibv_device_attr_ex ex = {};
	uint64_t *odp_buf = aligned_alloc(4096, BUF_SIZE);
	struct ibv_mr *mr = NULL;
	bool ok;

	if (ibv_query_device_ex(ctx, NULL, &ex) || !odp_buf ||
	    !(ex.odp_caps.per_transport_caps.rc_odp_caps &
	      IBV_ODP_SUPPORT_WRITE)) {
		ktap_skip("atomic write into an ODP MR", "no ODP");
		free(odp_buf);
		return;
	}
	mr = ibv_reg_mr(pd, odp_buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	ok = ktap_expect(mr, "reg_mr ODP: %s", strerror(errno)) &&
	     fresh_pair(a, b) &&
	     post_atomic_write(a, 9, mr->rkey, (uintptr_t)(odp_buf + 3),
			       0xfeedfacecafebeefull) &&
	     wc_is(a, 9, IBV_WC_ATOMIC_WRITE, IBV_WC_SUCCESS) &&
	     ktap_expect(odp_buf[3] == 0xfeedfacecafebeefull, "not placed");
	ktap_result(ok, "atomic write into an ODP MR");
	if (mr)
		ibv_dereg_mr(mr);
	free(odp_buf);
}

/* @what: an ATOMIC WRITE to @addr under @rkey completes with @st. */
static void t_atomic_write_error(struct ep *a, struct ep *b, uint32_t rkey,
				 uint64_t addr, enum ibv_wc_status st,
				 const char *what)
{
	bool ok = fresh_pair(a, b) &&
		  post_atomic_write(a, 7, rkey, addr, 42) &&
		  wc_is(a, 7, IBV_WC_ATOMIC_WRITE, st);

	ktap_result(ok, what);
}

#ifdef HAVE_WR_FLUSH
static bool post_flush(struct ep *e, uint64_t wr_id, uint32_t rkey,
		       uint64_t addr, size_t len, uint8_t type, uint8_t level)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(e->qp);

	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(qpx, rkey, addr, len, type, level);
	return ktap_expect(!ibv_wr_complete(qpx), "wr_complete failed");
}

/* @what: a range FLUSH of @type completes with a remote access error. */
static void t_flush_denied(struct ep *a, struct ep *b, uint32_t rkey,
			   uint64_t addr, size_t len, uint8_t type,
			   const char *what)
{
	bool ok = fresh_pair(a, b) &&
		  post_flush(a, 4, rkey, addr, len, type, IBV_FLUSH_RANGE) &&
		  wc_is(a, 4, IBV_WC_FLUSH, IBV_WC_REM_ACCESS_ERR);

	ktap_result(ok, what);
}

static void t_flush(struct ep *a, struct ep *b, struct ibv_mr *fmr)
{
	uint64_t base = (uintptr_t)rbuf;
	bool ok;

	ok = fresh_pair(a, b) &&
	     post_flush(a, 1, fmr->rkey, base, BUF_SIZE, IBV_FLUSH_GLOBAL,
			IBV_FLUSH_RANGE) &&
	     wc_is(a, 1, IBV_WC_FLUSH, IBV_WC_SUCCESS) &&
	     post_flush(a, 2, fmr->rkey, base + 100, 0, IBV_FLUSH_GLOBAL,
			IBV_FLUSH_RANGE) &&
	     wc_is(a, 2, IBV_WC_FLUSH, IBV_WC_SUCCESS);
	ktap_result(ok, "flush: a range and an empty range, global placement");

	/* The whole MR: the range is ignored, however long. */
	ok = post_flush(a, 3, fmr->rkey, 0, 12345678, IBV_FLUSH_GLOBAL,
			IBV_FLUSH_MR) &&
	     wc_is(a, 3, IBV_WC_FLUSH, IBV_WC_SUCCESS);
	ktap_result(ok, "flush: the whole MR, whatever the range says");

	t_flush_denied(a, b, fmr->rkey, base, 64, IBV_FLUSH_PERSISTENT,
		       "flush: persistent placement on a global-only MR: remote access error");
	t_flush_denied(a, b, fmr->rkey, base + BUF_SIZE - 8, 16,
		       IBV_FLUSH_GLOBAL,
		       "flush: a range past the MR: remote access error");
	t_flush_denied(a, b, rmr->rkey, base, 64, IBV_FLUSH_GLOBAL,
		       "flush: an MR without FLUSH access: remote access error");
}
#endif

#define NR_FLUSH_TESTS	5

static void t_flushes(struct ep *a, struct ep *b)
{
	const char *why = NULL;
	struct ibv_mr *fmr = NULL;
	int i;

#ifdef HAVE_WR_FLUSH
	fmr = ibv_reg_mr(pd, rbuf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_FLUSH_GLOBAL);
	if (!(caps & CAP_FLUSH_GLOBAL)) {
		why = "the kernel's core has no FLUSH (Linux < 6.2)";
		ktap_result(!fmr, "no FLUSH_GLOBAL MR where FLUSH is not reported");
	} else if (ktap_result(fmr != NULL, "reg_mr with IBV_ACCESS_FLUSH_GLOBAL")) {
		t_flush(a, b, fmr);
	} else {
		why = "no FLUSH_GLOBAL MR";
	}
	if (fmr)
		ibv_dereg_mr(fmr);
#else
	why = "rdma-core before 45 has no ibv_wr_flush";
	ktap_skip("reg_mr with IBV_ACCESS_FLUSH_GLOBAL", why);
#endif
	for (i = 0; why && i < NR_FLUSH_TESTS; i++)
		ktap_skip("flush", why);
	(void)fmr, (void)a, (void)b;
}

/* Two hosts: what each end tells the other over TCP. */
struct peer_info {
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
	uint8_t gid[16];
};

#define PEER_WAIT_S	60

/*
 * A TCP connection: to @host:@port (retried while the server is not up
 * yet), or, @host NULL, the first client on @port. -1 on failure.
 */
static int tcp_open(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = host ? 0 : AI_PASSIVE }, *ai;
	uint64_t end = now_ms() + PEER_WAIT_S * 1000;
	int fd = -1, one = 1, lfd;
	struct pollfd pfd;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	if (host) {
		do {
			fd = socket(ai->ai_family, SOCK_STREAM, 0);
			if (fd >= 0 && !connect(fd, ai->ai_addr, ai->ai_addrlen))
				break;
			if (fd >= 0)
				close(fd);
			fd = -1;
			usleep(200000);
		} while (now_ms() < end);
	} else {
		lfd = socket(ai->ai_family, SOCK_STREAM, 0);
		pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
		if (lfd >= 0 &&
		    !setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) &&
		    !bind(lfd, ai->ai_addr, ai->ai_addrlen) && !listen(lfd, 1) &&
		    poll(&pfd, 1, PEER_WAIT_S * 1000) == 1)
			fd = accept(lfd, NULL, NULL);
		if (lfd >= 0)
			close(lfd);
	}
	freeaddrinfo(ai);
	return fd;
}

/* Send @len bytes and receive as many; false on a short transfer. */
static bool tcp_swap(int fd, const void *out, void *in, size_t len)
{
	return write(fd, out, len) == (ssize_t)len &&
	       recv(fd, in, len, MSG_WAITALL) == (ssize_t)len;
}

/* Our QP and @mr for the peer, theirs for us, and the QP connected. */
static bool peer_connect(int fd, struct ep *e, struct ibv_mr *mr,
			 struct peer_info *peer)
{
	struct peer_info me = { .qpn = e->qp->qp_num, .rkey = mr->rkey,
				.addr = (uintptr_t)mr->addr };
	uint8_t ready = 1, peer_ready = 0;
	union ibv_gid pgid;

	memcpy(me.gid, gid.raw, sizeof(me.gid));
	if (!ktap_expect(tcp_swap(fd, &me, peer, sizeof(me)),
			 "exchange with the peer"))
		return false;
	memcpy(pgid.raw, peer->gid, sizeof(pgid.raw));
	/*
	 * 1024: the payload MTU of a 1500-byte link. Both QPs are in RTS
	 * before a request leaves: a first request lost to a peer still in
	 * INIT is retried, and rdma_rxe's retry of an ATOMIC WRITE or a
	 * FLUSH carries a remote address of 0 (its req_retry() takes the
	 * address of atomics, reads and writes only), which the peer's MR
	 * check refuses.
	 */
	return ktap_expect(!ep_connect_to(e, peer->qpn, &pgid, IBV_MTU_1024),
			   "connect: %s", strerror(errno)) &&
	       ktap_expect(tcp_swap(fd, &ready, &peer_ready, 1) && peer_ready,
			   "the peer's QP connected");
}

/* The responder: its MR takes the client's values; it reads back one. */
static int serve(char *prog, char *dev, const char *port, char *gidx)
{
	char *args[] = { prog, dev, gidx };
	struct peer_info peer;
	struct ep e = {};
	uint64_t want, got;
	struct ibv_mr *mr;
	uint8_t verdict;
	int fd;
	bool ok;

	if (!loop_open(3, args, 1) || ep_open(&e, 64))
		return KSFT_FAIL;
	rbuf = aligned_alloc(4096, BUF_SIZE);
	memset(rbuf, 0, BUF_SIZE);
	mr = ibv_reg_mr(pd, rbuf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ
#ifdef HAVE_WR_FLUSH
			| IBV_ACCESS_FLUSH_GLOBAL
#endif
			);
	fd = tcp_open(NULL, port);
	ok = ktap_expect(mr, "reg_mr: %s", strerror(errno)) &&
	     ktap_expect(fd >= 0, "no client") &&
	     peer_connect(fd, &e, mr, &peer) &&
	     /* the client's last value, once it has placed it */
	     ktap_expect(recv(fd, &want, sizeof(want), MSG_WAITALL) ==
			 sizeof(want), "the client's value");
	memcpy(&got, rbuf + 64, sizeof(got));
	ok = ok && ktap_expect(got == want, "read back %#llx, the client placed %#llx",
			       (unsigned long long)got,
			       (unsigned long long)want);
	verdict = ok;
	ok = ok && write(fd, &verdict, 1) == 1;
	/* until the client is done with its last (failing) request */
	ok = ok && recv(fd, &verdict, 1, MSG_WAITALL) == 1;
	ktap_result(ok, "served: the client's ATOMIC WRITEs landed in our MR");
	if (fd >= 0)
		close(fd);
	ep_close(&e);
	return ktap_finish();
}

/* The requester: places, flushes, has the server check, then a bad one. */
static int drive(char *prog, char *dev, const char *host, const char *port,
		 char *gidx)
{
	char *args[] = { prog, dev, gidx };
	struct peer_info peer;
	struct ep e = {};
	uint64_t v = 0;
	uint8_t verdict = 0;
	bool ok;
	int fd, i;

	if (!loop_open(3, args, 4) || ep_open(&e, 64))
		return KSFT_FAIL;
	lbuf = aligned_alloc(4096, BUF_SIZE);
	lmr = ibv_reg_mr(pd, lbuf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	fd = tcp_open(host, port);
	ok = ktap_expect(lmr, "reg_mr: %s", strerror(errno)) &&
	     ktap_expect(fd >= 0, "no server at %s port %s", host, port) &&
	     peer_connect(fd, &e, lmr, &peer);
	for (i = 0; ok && i < 100; i++) {
		v = 0x0123456789abcdefull * (i + 1);
		ok = post_atomic_write(&e, i, peer.rkey, peer.addr + 64, v) &&
		     wc_is(&e, i, IBV_WC_ATOMIC_WRITE, IBV_WC_SUCCESS);
	}
	ktap_result(ok, "100 ATOMIC WRITEs to the peer complete as ATOMIC_WRITE");
#ifdef HAVE_WR_FLUSH
	if (getenv("RC_PLACEMENT_NO_FLUSH")) {
		ktap_skip("FLUSH at the peer", getenv("RC_PLACEMENT_NO_FLUSH"));
		goto placed;
	}
	/* Enough of them that a lossy link retries some. */
	for (i = 0; ok && i < 50; i++)
		ok = post_flush(&e, 200 + i, peer.rkey,
				peer.addr + i % 4 * (BUF_SIZE / 4), BUF_SIZE / 4,
				IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE) &&
		     wc_is(&e, 200 + i, IBV_WC_FLUSH, IBV_WC_SUCCESS);
	ok = ok && post_flush(&e, 299, peer.rkey, 0, 0, IBV_FLUSH_GLOBAL,
			      IBV_FLUSH_MR) &&
	     wc_is(&e, 299, IBV_WC_FLUSH, IBV_WC_SUCCESS);
	ktap_result(ok, "FLUSH of a range and of the whole MR at the peer");
placed:
#else
	ktap_skip("FLUSH at the peer", "rdma-core before 45 has no ibv_wr_flush");
#endif
	ok = ok && write(fd, &v, sizeof(v)) == sizeof(v) &&
	     recv(fd, &verdict, 1, MSG_WAITALL) == 1 && verdict;
	ktap_result(ok, "the peer read back the last value placed");
	/*
	 * Its NAK is the responder's last word (its QP goes to error): on a
	 * lossy link (RC_PLACEMENT_LOSSY) the NAK may be lost, and the
	 * retries then run out.
	 */
	ok = post_atomic_write(&e, 300, peer.rkey, peer.addr + 4, 1) &&
	     (getenv("RC_PLACEMENT_LOSSY") ?
	      wc_is_one_of(&e, 300, IBV_WC_REM_INV_REQ_ERR,
			   IBV_WC_RETRY_EXC_ERR) :
	      wc_is(&e, 300, IBV_WC_ATOMIC_WRITE, IBV_WC_REM_INV_REQ_ERR));
	ktap_result(ok, "an unaligned ATOMIC WRITE to the peer: invalid request");
	if (fd >= 0) {
		verdict = 1;
		if (write(fd, &verdict, 1) != 1)
			ktap_print("the server left early");
		close(fd);
	}
	ep_close(&e);
	return ktap_finish();
}

#define FENCE_LEN	(1u << 20)

/* Two signaled RDMA WRITEs of FENCE_LEN from @from to @to, completed. */
static bool warm_up(struct ep *a, void *to, uint32_t rkey, void *from,
		    uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)from, FENCE_LEN, lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int i;

	memcpy(from, to, FENCE_LEN);	/* @to keeps its pattern */
	wr.wr.rdma.remote_addr = (uintptr_t)to;
	wr.wr.rdma.rkey = rkey;
	for (i = 0; i < 2; i++) {
		wr.wr_id = 60 + i;
		if (!ktap_expect(!ibv_post_send(a->qp, &wr, &bad),
				 "post_send: %s", strerror(errno)) ||
		    !wc_ok(a->cq, 60 + i, IBV_WC_SUCCESS))
			return false;
	}
	return true;
}

/*
 * IBV_SEND_FENCE: a SEND posted right behind a 512 KiB READ leaves only
 * once the READ is answered, so when the SEND lands the READ has
 * completed, with its data in place. Unfenced, it lands long before.
 */
static void t_fence(struct ep *a, struct ep *b)
{
	uint8_t *src = aligned_alloc(4096, FENCE_LEN);
	uint8_t *dst = aligned_alloc(4096, FENCE_LEN);
	struct ibv_mr *smr = NULL, *dmr = NULL;
	struct ibv_sge rv, rs, ss;
	struct ibv_recv_wr rwr = { .wr_id = 50, .sg_list = &rv, .num_sge = 1 };
	struct ibv_send_wr snd = { .wr_id = 52, .sg_list = &ss, .num_sge = 1,
				   .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED |
						 IBV_SEND_FENCE };
	struct ibv_send_wr rd = { .wr_id = 51, .sg_list = &rs, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED,
				  .next = &snd };
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	bool ok = src && dst && fresh_pair(a, b);
	int n = 0;

	if (ok) {
		memset(src, 0x5a, FENCE_LEN);
		memset(dst, 0, FENCE_LEN);
		smr = ibv_reg_mr(pd, src, FENCE_LEN, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_WRITE);
		dmr = ibv_reg_mr(pd, dst, FENCE_LEN, IBV_ACCESS_LOCAL_WRITE);
	}
	ok = ktap_expect(ok && smr && dmr, "reg_mr: %s", strerror(errno));
	if (ok) {
		rv = (struct ibv_sge){ (uintptr_t)rbuf, 64, rmr->lkey };
		rs = (struct ibv_sge){ (uintptr_t)dst, FENCE_LEN, dmr->lkey };
		ss = (struct ibv_sge){ (uintptr_t)lbuf, 64, lmr->lkey };
		rd.wr.rdma.remote_addr = (uintptr_t)src;
		rd.wr.rdma.rkey = smr->rkey;
		/* Two 1 MiB WRITEs first open the window to 256 packets: the
		 * READ's 128 then leave the SEND room to go at once.
		 */
		ok = warm_up(a, src, smr->rkey, dst, dmr->lkey);
		memset(dst, 0, FENCE_LEN);
		rs.length = FENCE_LEN / 2;
		ok = ok && ktap_expect(!ibv_post_recv(b->qp, &rwr, &rbad) &&
				 !ibv_post_send(a->qp, &rd, &bad),
				 "post: %s", strerror(errno));
	}
	ok = ok && poll_one(b->cq, &wc) &&
	     ktap_expect(wc.wr_id == 50 && wc.status == IBV_WC_SUCCESS,
			 "receive: wr_id %llu %s", (unsigned long long)wc.wr_id,
			 ibv_wc_status_str(wc.status));
	if (ok)
		n = ibv_poll_cq(a->cq, 1, &wc);
	ok = ok && ktap_expect(n == 1 && wc.wr_id == 51 &&
			       wc.status == IBV_WC_SUCCESS,
			       "the fenced SEND landed before the READ completed") &&
	     ktap_expect(!memcmp(dst, src, FENCE_LEN / 2),
			 "the READ's data differ") &&
	     wc_ok(a->cq, 52, IBV_WC_SUCCESS);
	ktap_result(ok, "a fenced SEND leaves once the 512 KiB READ before it is answered");
	if (smr)
		ibv_dereg_mr(smr);
	if (dmr)
		ibv_dereg_mr(dmr);
	free(src);
	free(dst);
}

int main(int argc, char **argv)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ep a = {}, b = {};
	struct ibv_mr *ro_mr;

	ep_send_ops = IBV_QP_EX_WITH_ATOMIC_WRITE;
#ifdef HAVE_WR_FLUSH
	ep_send_ops |= IBV_QP_EX_WITH_FLUSH;
	qp_access |= IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT;
#endif
	if (argc >= 4 && argc <= 5 && !strcmp(argv[1], "server"))
		return serve(argv[0], argv[2], argv[3],
			     argc > 4 ? argv[4] : "1");
	if (argc >= 5 && argc <= 6 && !strcmp(argv[1], "client"))
		return drive(argv[0], argv[2], argv[3], argv[4],
			     argc > 5 ? argv[5] : "1");
	if (!loop_open(argc, argv, 10 + NR_FLUSH_TESTS))
		return KSFT_FAIL;
	lbuf = aligned_alloc(4096, BUF_SIZE);
	rbuf = aligned_alloc(4096, BUF_SIZE);
	if (!lbuf || !rbuf)
		return KSFT_FAIL;
	memset(rbuf, 0, BUF_SIZE);
	lmr = ibv_reg_mr(pd, lbuf, BUF_SIZE, access);
	rmr = ibv_reg_mr(pd, rbuf, BUF_SIZE, access);
	ro_mr = ibv_reg_mr(pd, lbuf, BUF_SIZE, IBV_ACCESS_REMOTE_READ);
	if (!ktap_expect(lmr && rmr && ro_mr, "reg_mr: %s", strerror(errno)) ||
	    !pair_open(&a, &b, 64))
		return KSFT_FAIL;

	t_caps();
	t_atomic_write(&a);
	t_atomic_write_odp(&a, &b);
	t_atomic_write_error(&a, &b, rmr->rkey, (uintptr_t)rbuf + 4,
			     IBV_WC_REM_INV_REQ_ERR,
			     "atomic write to an unaligned address: invalid request");
	t_atomic_write_error(&a, &b, rmr->rkey ^ 0x80, (uintptr_t)rbuf,
			     IBV_WC_REM_ACCESS_ERR,
			     "atomic write with a bad rkey: remote access error");
	t_atomic_write_error(&a, &b, rmr->rkey, (uintptr_t)rbuf + BUF_SIZE,
			     IBV_WC_REM_ACCESS_ERR,
			     "atomic write past the MR: remote access error");
	t_atomic_write_error(&a, &b, ro_mr->rkey, (uintptr_t)lbuf,
			     IBV_WC_REM_ACCESS_ERR,
			     "atomic write to an MR without remote write: remote access error");
	t_fence(&a, &b);
	t_flushes(&a, &b);

	pair_close(&a, &b);
	ktap_result(!ibv_dereg_mr(ro_mr) && !ibv_dereg_mr(rmr) &&
		    !ibv_dereg_mr(lmr) && !ibv_dealloc_pd(pd) &&
		    !ibv_close_device(ctx), "everything is destroyed");
	return ktap_finish();
}
