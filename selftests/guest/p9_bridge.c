// SPDX-License-Identifier: GPL-2.0
/*
 * 9P over RDMA to 9P over TCP, for p9_rdma.sh. Linux's 9P client
 * (mount -t 9p -o trans=rdma) sends each request in one RDMA SEND, and
 * takes each reply in a receive it posted for that request; the 9P
 * servers Debian ships (diod) speak TCP only. This bridge accepts the
 * client's connection with librdmacm on whatever device it comes in on,
 * and relays every message, whole, to and from a TCP server, each
 * message framed by its own 9P size field. So the kernel's 9P/RDMA client
 * runs on the device's kernel verbs, and the bridge on its userspace
 * verbs.
 *
 * usage: p9_bridge RDMA_PORT TCP_IP TCP_PORT
 *
 * It listens on every address. One connection at a time (a mount is
 * one); when it ends (unmount, device removal), the next is accepted.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MSG_MAX		(128u << 10)	/* mount with msize at most this */
#define RECVS		64		/* the client sends up to sq=32 at once */
#define SENDS		64
#define SEND_ID		(1ull << 32)	/* wr_id: a send slot, else a receive */

struct conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;			/* RECVS receive, then SENDS send slots */
	uint32_t free_sends[SENDS];
	uint32_t nfree;
	int tcp;
	bool closing;			/* disconnected: wait for the event */
	uint8_t tin[2 * MSG_MAX];	/* from TCP, not yet sent */
	size_t tlen;
};

static struct sockaddr_in server;
static struct conn *conn;		/* the one connection, or NULL */
static unsigned long relayed;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint8_t *slot(struct conn *c, uint32_t i)
{
	return c->buf + (size_t)i * MSG_MAX;
}

static int post_recv(struct conn *c, uint32_t i)
{
	struct ibv_sge sge = { (uintptr_t)slot(c, i), MSG_MAX, c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

static void conn_free(struct conn *c)
{
	if (c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	rdma_destroy_id(c->id);
	if (c->tcp >= 0)
		close(c->tcp);
	free(c->buf);
	free(c);
	fprintf(stderr, "p9_bridge: connection closed, %lu messages relayed\n",
		relayed);
}

/* A connection request on @id: set up its QP and the TCP side, accept. */
static void conn_new(struct rdma_cm_id *id)
{
	struct rdma_conn_param param = { .rnr_retry_count = 7 };
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = SENDS, .max_recv_wr = RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	size_t len = (size_t)(RECVS + SENDS) * MSG_MAX;
	struct conn *c;
	uint32_t i;

	if (conn) {		/* one at a time */
		rdma_reject(id, NULL, 0);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		die("calloc");
	c->id = id;
	c->tcp = -1;
	c->buf = aligned_alloc(4096, len);
	c->pd = ibv_alloc_pd(id->verbs);
	c->ch = ibv_create_comp_channel(id->verbs);
	if (!c->buf || !c->pd || !c->ch)
		goto fail;
	c->cq = ibv_create_cq(id->verbs, RECVS + SENDS, NULL, c->ch, 0);
	if (!c->cq || ibv_req_notify_cq(c->cq, 0))
		goto fail;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	c->mr = ibv_reg_mr(c->pd, c->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr || rdma_create_qp(id, c->pd, &qa))
		goto fail;
	for (i = 0; i < RECVS; i++)
		if (post_recv(c, i))
			goto fail;
	for (i = 0; i < SENDS; i++)
		c->free_sends[c->nfree++] = RECVS + i;
	c->tcp = socket(AF_INET, SOCK_STREAM, 0);
	if (c->tcp < 0 ||
	    connect(c->tcp, (struct sockaddr *)&server, sizeof(server)))
		goto fail;
	if (rdma_accept(id, &param))
		goto fail;
	conn = c;
	relayed = 0;
	fprintf(stderr, "p9_bridge: connection on %s\n",
		ibv_get_device_name(id->verbs->device));
	return;
fail:
	perror("p9_bridge: connection refused");
	rdma_reject(id, NULL, 0);
	conn_free(c);
}

static void cm_event(struct rdma_event_channel *ec)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;

	if (rdma_get_cm_event(ec, &ev))
		die("rdma_get_cm_event");
	type = ev->event;
	id = ev->id;
	/* Acknowledged first: destroying an id waits for its events. */
	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		conn_new(id);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (conn && conn->id == id) {
			rdma_disconnect(id);
			conn_free(conn);
			conn = NULL;
		}
		break;
	default:
		break;
	}
}

/* Whole messages read from TCP go out as SENDs, while slots are free. */
static int send_whole(struct conn *c)
{
	uint32_t size;

	while (c->tlen >= 4 && c->nfree) {
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED,
					  .num_sge = 1 }, *bad;
		struct ibv_sge sge;
		uint32_t s;

		memcpy(&size, c->tin, 4);
		size = le32toh(size);
		if (size < 7 || size > MSG_MAX) {
			fprintf(stderr, "p9_bridge: bad 9P size %u\n", size);
			return -1;
		}
		if (c->tlen < size)
			break;
		s = c->free_sends[--c->nfree];
		memcpy(slot(c, s), c->tin, size);
		sge = (struct ibv_sge){ (uintptr_t)slot(c, s), size,
					c->mr->lkey };
		wr.wr_id = SEND_ID | s;
		wr.sg_list = &sge;
		if (ibv_post_send(c->id->qp, &wr, &bad))
			return -1;
		memmove(c->tin, c->tin + size, c->tlen - size);
		c->tlen -= size;
		relayed++;
	}
	return 0;
}

static int tcp_to_rdma(struct conn *c)
{
	ssize_t n;

	n = read(c->tcp, c->tin + c->tlen, sizeof(c->tin) - c->tlen);
	if (n <= 0)
		return -1;	/* the server went away */
	c->tlen += n;
	return send_whole(c);
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* Requests received go to the TCP server; sent slots come back. */
static int completions(struct conn *c)
{
	struct ibv_cq *cq;
	struct ibv_wc wc[16];
	void *ctx;
	int n, i;

	if (ibv_get_cq_event(c->ch, &cq, &ctx))
		return -1;
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(cq, 0))
		return -1;
	while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			uint32_t s = (uint32_t)wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS)
				return -1;	/* flushed: the end */
			if (wc[i].wr_id & SEND_ID) {
				c->free_sends[c->nfree++] = s;
				continue;
			}
			if (write_all(c->tcp, slot(c, s), wc[i].byte_len) ||
			    post_recv(c, s))
				return -1;
			relayed++;
		}
	}
	/* Slots back: messages already read may go now. */
	return n < 0 ? n : send_whole(c);
}

int main(int argc, char **argv)
{
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listener;

	if (argc != 4) {
		fprintf(stderr, "usage: %s RDMA_PORT TCP_IP TCP_PORT\n", argv[0]);
		return 2;
	}
	any.sin_port = htons(atoi(argv[1]));
	server.sin_family = AF_INET;
	server.sin_port = htons(atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &server.sin_addr) != 1)
		die("TCP_IP");
	ec = rdma_create_event_channel();
	if (!ec || rdma_create_id(ec, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, (struct sockaddr *)&any) ||
	    rdma_listen(listener, 4))
		die("p9_bridge: listen");
	fprintf(stderr, "p9_bridge: listening on port %s\n", argv[1]);
	for (;;) {
		struct pollfd p[3] = { { .fd = ec->fd, .events = POLLIN } };
		int np = 1, err = 0;

		if (conn && !conn->closing) {
			p[np++] = (struct pollfd){ conn->ch->fd, POLLIN, 0 };
			/* Read TCP only with a send slot to put it in. */
			if (conn->nfree)
				p[np++] = (struct pollfd){ conn->tcp, POLLIN, 0 };
		}
		if (poll(p, np, -1) < 0 && errno != EINTR)
			die("poll");
		if (conn && np > 1 && (p[1].revents & POLLIN))
			err = completions(conn) < 0;
		if (conn && !err && np > 2 && p[2].revents)
			err = tcp_to_rdma(conn) < 0;
		if (err) {
			/* Disconnect; the DISCONNECTED event frees it. */
			rdma_disconnect(conn->id);
			conn->closing = true;
		}
		if (p[0].revents & POLLIN)
			cm_event(ec);
	}
}
