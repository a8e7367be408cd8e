// SPDX-License-Identifier: GPL-2.0
/*
 * RDS over RDMA between two hosts (pair_rds.sh): AF_RDS sockets bound to
 * each host's address, the IB transport forced (SO_RDS_TRANSPORT), so
 * rds_rdma carries every message over the RDMA device of that address.
 *
 * usage: rds_stream server LOCAL_IP PORT
 *        rds_stream client LOCAL_IP PEER_IP PORT
 *        rds_stream flood LOCAL_IP PEER_IP PORT SECONDS
 *
 * The client drives, the server answers:
 *  1. echo: messages of 1 B to 64 KiB, each a seeded pattern, sent back
 *     by the server once it checked them; the client checks the echo;
 *  2. RDMA through RDS: the server maps a buffer (RDS_CMSG_RDMA_MAP) and
 *     sends its cookie; the client RDMA WRITEs a pattern into it
 *     (RDS_CMSG_RDMA_ARGS) with a message the server receives only after
 *     the write, checks it, fills the buffer anew, and the client RDMA
 *     READs that back and checks it;
 *  3. latency: 1000 round trips of 64 B; bandwidth: 2000 messages of
 *     64 KiB one way, then an acknowledgement.
 * TAP output; exit status 0 when every check passed.
 *
 * flood sends 64 KiB messages for SECONDS without ever blocking, counting
 * those RDS took: the device may go away meanwhile (pair_rds.sh), and the
 * sender must still end on time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/rds.h>

#include "ktap.h"
#include "pattern.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif

#define MAX_MSG		(64 * 1024)
#define RDMA_LEN	(256 * 1024)
#define LAT_ROUNDS	1000
#define BW_MSGS		2000

enum { T_DATA = 1, T_ECHO, T_MAP, T_COOKIE, T_WRITTEN, T_REFILLED, T_PING, T_BULK,
       T_BULK_DONE, T_BYE };

struct hdr {
	uint32_t type;
	uint32_t len;		/* payload bytes after the header */
	uint64_t seed;
	uint64_t cookie;
};

static int sock;
static struct sockaddr_in peer;
static unsigned char *msg;	/* MAX_MSG + header */

static void pat_fill(unsigned char *p, size_t len, uint64_t seed)
{
	pattern_fill(p, len, PAT_XS64_BYTE, seed, 0);
}

static int pat_check(const unsigned char *p, size_t len, uint64_t seed)
{
	return pattern_check(p, len, PAT_XS64_BYTE, seed, 0, NULL) < 0 ? 0 : -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Send header + @len bytes of msg's payload (+ optional control data). */
static int send_msg(struct hdr *h, void *ctl, size_t ctl_len)
{
	struct iovec iov = { msg, sizeof(*h) + h->len };
	struct msghdr m = {
		.msg_name = &peer, .msg_namelen = sizeof(peer),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = ctl_len,
	};

	memcpy(msg, h, sizeof(*h));
	for (;;) {
		if (sendmsg(sock, &m, 0) >= 0)
			return 0;
		/* Send buffer full (RDS_SNDBUF): wait for acks to drain. */
		if (errno != ENOBUFS && errno != EAGAIN)
			return -1;
		usleep(1000);
	}
}

/* Receive one message into msg; its header in @h; learns the peer. */
static int recv_msg(struct hdr *h)
{
	struct sockaddr_in from;
	struct iovec iov = { msg, sizeof(*h) + MAX_MSG };
	char ctl[256];
	struct msghdr m = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	ssize_t n = recvmsg(sock, &m, 0);

	if (n < (ssize_t)sizeof(*h))
		return -1;
	memcpy(h, msg, sizeof(*h));
	if (n != (ssize_t)(sizeof(*h) + h->len))
		return -1;
	peer = from;
	return 0;
}

/* Send a header-only message of @type. */
static int send_type(uint32_t type, uint64_t seed, uint64_t cookie)
{
	struct hdr h = { .type = type, .seed = seed, .cookie = cookie };

	return send_msg(&h, NULL, 0);
}

static int rds_socket(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	int s = socket(AF_RDS, SOCK_SEQPACKET, 0), t = RDS_TRANS_IB;
	int buf = 4 * 1024 * 1024;

	if (s < 0) {
		ktap_print("socket(AF_RDS): %s", strerror(errno));
		return -1;
	}
	inet_pton(AF_INET, ip, &sin.sin_addr);
	if (setsockopt(s, SOL_RDS, SO_RDS_TRANSPORT, &t, sizeof(t)) ||
	    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf)) ||
	    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)) ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin))) {
		ktap_print("RDS socket on %s:%d over IB: %s", ip, port,
			   strerror(errno));
		close(s);
		return -1;
	}
	return s;
}

static int server(const char *ip, int port)
{
	unsigned char *rbuf = aligned_alloc(4096, RDMA_LEN);
	uint64_t cookie = 0;
	struct hdr h;
	unsigned int bulk = 0;
	int bad = 0;

	sock = rds_socket(ip, port);
	if (sock < 0 || !rbuf)
		return KSFT_FAIL;
	printf("# server ready on %s:%d\n", ip, port);
	while (!recv_msg(&h)) {
		switch (h.type) {
		case T_DATA:
			/* Checked here, echoed: the client checks the echo. */
			if (pat_check(msg + sizeof(h), h.len, h.seed)) {
				bad++;
				pat_fill(msg + sizeof(h), h.len, h.seed + 1);
			}
			h.type = T_ECHO;
			send_msg(&h, NULL, 0);
			break;
		case T_COOKIE: {
			/*
			 * RDS maps a buffer for remote access on a connection
			 * (RDS_CMSG_RDMA_MAP with a message to the peer; the
			 * RDS_GET_MR socket option has no FRWR support).
			 */
			struct rds_get_mr_args a = {
				.vec = { (uintptr_t)rbuf, RDMA_LEN },
				.cookie_addr = (uintptr_t)&cookie,
			};
			char ctl[CMSG_SPACE(sizeof(a))] = { 0 };
			struct cmsghdr *c = (struct cmsghdr *)ctl;
			struct hdr m = { .type = T_MAP };

			c->cmsg_level = SOL_RDS;
			c->cmsg_type = RDS_CMSG_RDMA_MAP;
			c->cmsg_len = CMSG_LEN(sizeof(a));
			memcpy(CMSG_DATA(c), &a, sizeof(a));
			memset(rbuf, 0, RDMA_LEN);
			cookie = 0;
			if (send_msg(&m, ctl, sizeof(ctl))) {
				printf("# RDS_CMSG_RDMA_MAP: %s\n", strerror(errno));
				cookie = 0;
			}
			send_type(T_COOKIE, 0, cookie);
			break;
		}
		case T_WRITTEN:
			/* The WRITE landed before this message. */
			send_type(T_WRITTEN, pat_check(rbuf, RDMA_LEN, h.seed) ? 1 : 0, 0);
			pat_fill(rbuf, RDMA_LEN, h.seed + 7);
			send_type(T_REFILLED, h.seed + 7, 0);
			break;
		case T_PING:
			send_msg(&h, NULL, 0);
			break;
		case T_BULK:
			bulk++;
			break;
		case T_BULK_DONE:
			send_type(T_BULK_DONE, bulk, 0);
			bulk = 0;
			break;
		case T_BYE:
			if (cookie) {
				struct rds_free_mr_args f = { .cookie = cookie };

				setsockopt(sock, SOL_RDS, RDS_FREE_MR, &f, sizeof(f));
			}
			printf("# server: %d bad messages\n", bad);
			close(sock);
			return bad ? KSFT_FAIL : KSFT_PASS;
		}
	}
	printf("# server: recvmsg: %s\n", strerror(errno));
	return KSFT_FAIL;
}

/* Wait for a message of @type (others are a protocol error). */
static int expect(uint32_t type, struct hdr *h)
{
	return recv_msg(h) || h->type != type ? -1 : 0;
}

/*
 * One RDMA operation through RDS with a message: @write from @local to
 * the server's MR (cookie), else the reverse. Completion status comes
 * as RDS_CMSG_RDMA_STATUS on a later recvmsg (NOTIFY_ME); the WRITE's
 * message is delivered after the data, so the server's answer is proof.
 */
static int rdma_op(uint64_t cookie, unsigned char *local, int write,
		   uint32_t type, uint64_t seed)
{
	struct rds_iovec lv = { (uintptr_t)local, RDMA_LEN };
	struct rds_rdma_args a = {
		.cookie = cookie,
		.remote_vec = { 0, RDMA_LEN },
		.local_vec_addr = (uintptr_t)&lv,
		.nr_local = 1,
		.flags = (write ? RDS_RDMA_READWRITE : 0) | RDS_RDMA_FENCE,
	};
	char ctl[CMSG_SPACE(sizeof(a))] = { 0 };
	struct cmsghdr *c = (struct cmsghdr *)ctl;
	struct hdr h = { .type = type, .seed = seed };

	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(a));
	memcpy(CMSG_DATA(c), &a, sizeof(a));
	return send_msg(&h, ctl, sizeof(ctl));
}

static int client(const char *ip, const char *peer_ip, int port)
{
	static const unsigned int sizes[] = { 1, 7, 64, 1000, 4095, 4096,
					      4097, 8192, 16385, 32768, 65536 };
	unsigned char *lbuf = aligned_alloc(4096, RDMA_LEN);
	unsigned int i, n, ok = 1;
	uint64_t cookie;
	double t0, t;
	struct hdr h;

	ktap_plan(5);
	sock = rds_socket(ip, port);
	if (sock < 0 || !lbuf)
		return KSFT_FAIL;
	peer.sin_family = AF_INET;
	peer.sin_port = htons(port);
	inet_pton(AF_INET, peer_ip, &peer.sin_addr);

	/* 1. echo */
	for (n = 0; n < 10 && ok; n++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && ok; i++) {
			struct hdr e = { .type = T_DATA, .len = sizes[i],
					 .seed = n * 100 + i };

			pat_fill(msg + sizeof(e), e.len, e.seed);
			ok = !send_msg(&e, NULL, 0) && !expect(T_ECHO, &h) &&
			     h.len == e.len && !pat_check(msg + sizeof(h), h.len, e.seed);
			if (!ok)
				ktap_print("echo of %u B (round %u) wrong or lost", sizes[i], n);
		}
	ktap_result(ok, "110 messages of 1 B to 64 KiB echoed, contents checked both ways");

	/* 2. RDMA WRITE then READ through the server's RDS MR */
	ok = !send_type(T_COOKIE, 0, 0) && !recv_msg(&h);
	if (ok && h.type == T_MAP)	/* the message that carried the mapping */
		ok = !recv_msg(&h);
	ok = ok && h.type == T_COOKIE && h.cookie;
	cookie = h.cookie;
	if (ok) {
		pat_fill(lbuf, RDMA_LEN, 4242);
		ok = !rdma_op(cookie, lbuf, 1, T_WRITTEN, 4242) &&
		     !expect(T_WRITTEN, &h) && h.seed == 0;
	}
	ktap_result(ok, "RDMA WRITE of 256 KiB into the peer's RDS MR (RDS_CMSG_RDMA_ARGS), checked there");
	ok = ok && !expect(T_REFILLED, &h);
	if (ok) {
		uint64_t seed = h.seed;

		memset(lbuf, 0, RDMA_LEN);
		/* The READ's data is in lbuf once the ping after it returns. */
		ok = !rdma_op(cookie, lbuf, 0, T_PING, 0) && !expect(T_PING, &h) &&
		     !pat_check(lbuf, RDMA_LEN, seed);
	}
	ktap_result(ok, "RDMA READ of 256 KiB from the peer's RDS MR, checked here");

	/* 3. latency and bandwidth */
	t0 = now();
	for (i = 0, ok = 1; i < LAT_ROUNDS && ok; i++) {
		struct hdr p = { .type = T_PING, .len = 64 - sizeof(p), .seed = i };

		ok = !send_msg(&p, NULL, 0) && !expect(T_PING, &h) && h.seed == i;
	}
	t = now() - t0;
	ktap_print("latency: %u round trips of 64 B, %.1f us each", LAT_ROUNDS,
		   t / LAT_ROUNDS * 1e6);
	ktap_result(ok, "ping-pong of 64 B messages");

	t0 = now();
	for (i = 0, ok = 1; i < BW_MSGS && ok; i++) {
		struct hdr b = { .type = T_BULK, .len = MAX_MSG, .seed = i };

		ok = !send_msg(&b, NULL, 0);
	}
	ok = ok && !send_type(T_BULK_DONE, 0, 0) && !expect(T_BULK_DONE, &h) &&
	     h.seed == BW_MSGS;
	t = now() - t0;
	ktap_print("bandwidth: %u messages of 64 KiB in %.2f s: %.2f MB/s",
		   BW_MSGS, t, (double)BW_MSGS * MAX_MSG / t / 1e6);
	ktap_result(ok, "2000 messages of 64 KiB one way, all received");

	send_type(T_BYE, 0, 0);
	close(sock);
	return ktap_finish();
}

static int flood(const char *ip, const char *peer_ip, int port, int secs)
{
	struct hdr b = { .type = T_BULK, .len = MAX_MSG };
	struct iovec iov = { msg, sizeof(b) + MAX_MSG };
	struct msghdr m = {
		.msg_name = &peer, .msg_namelen = sizeof(peer),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	unsigned long sent = 0, refused = 0;
	double end = now() + secs;

	sock = rds_socket(ip, port);
	if (sock < 0)
		return KSFT_FAIL;
	peer.sin_family = AF_INET;
	peer.sin_port = htons(port);
	inet_pton(AF_INET, peer_ip, &peer.sin_addr);
	memcpy(msg, &b, sizeof(b));
	while (now() < end) {
		if (sendmsg(sock, &m, MSG_DONTWAIT) >= 0) {
			sent++;
		} else {
			refused++;
			usleep(10000);
		}
	}
	printf("# flood: %lu messages of 64 KiB taken, %lu times refused (%s last)\n",
	       sent, refused, strerror(errno));
	close(sock);
	return sent ? KSFT_PASS : KSFT_FAIL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	msg = malloc(sizeof(struct hdr) + MAX_MSG);
	if (!msg)
		return KSFT_FAIL;
	if (argc == 4 && !strcmp(argv[1], "server"))
		return server(argv[2], atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], atoi(argv[4]));
	if (argc == 6 && !strcmp(argv[1], "flood"))
		return flood(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	fprintf(stderr, "usage: %s server LOCAL_IP PORT\n"
		"       %s client LOCAL_IP PEER_IP PORT\n"
		"       %s flood LOCAL_IP PEER_IP PORT SECONDS\n",
		argv[0], argv[0], argv[0]);
	return KSFT_FAIL;
}
