// SPDX-License-Identifier: GPL-2.0
/*
 * libfabric over an RDMA device: tagged messages and RMA on a reliable
 * datagram (FI_EP_RDM) endpoint, by default of "verbs;ofi_rxm", the
 * endpoint MPI libraries and most libfabric applications use
 * (libfabric.sh api).
 *
 * usage: fabric_rdm server [-p PROV] [-P PORT] [-n ROUNDS] ADDR
 *        fabric_rdm client [-p PROV] [-P PORT] [-n ROUNDS] SERVER
 *
 * The server listens on ADDR:PORT. The client sends its own address in a
 * first message (the server has no other way to reach it), then each
 * round:
 *  1. tagged: the client sends one message per size (1 B to 1 MiB: ofi_rxm's
 *     eager, segmented and rendezvous protocols), each with its own tag
 *     and pattern; the server has posted its receives in the reverse
 *     order, so only tag matching puts each where it belongs. It checks
 *     them and sends each back under another tag; the client checks the
 *     echoes;
 *  2. RMA: the server offers a zeroed region and one it filled with a
 *     pattern (address and key in a message). The client fi_write()s
 *     pieces of 1 B to 896 KiB into the first, fi_read()s it back and the
 *     second, and checks both; the server checks its region holds what
 *     was written once the client says it is done.
 * Each side prints TAP 13 results of what it checked; exit status 0 when
 * every check passed.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "ktap.h"
#include "pattern.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define WAIT_S		60	/* for one completion */

/* ofi_rxm 1.17: eager up to 16 KiB, segmented to 128 KiB, then rendezvous. */
static const size_t sizes[] = {
	1, 64, 1000, 4096, 16384, 16385, 65536, 131073, 200000, 1 << 20,
};

#define TAG_DATA	0x5a00000000ULL
#define TAG_ECHO	0xa500000000ULL

/* The RMA pieces the client writes into the server's region. */
static const struct { size_t off, len; } pieces[] = {
	{ 0, 1 }, { 100, 4000 }, { 8192, 65536 }, { 131072, 917504 },
};

#define RMA_LEN		(1 << 20)
#define SLICE_ALIGN	64

enum ctrl_type { C_HELLO = 1, C_READY, C_DONE, C_RESULT };

struct ctrl {
	uint32_t type;
	uint32_t ok;		/* C_RESULT: the server's checks passed */
	uint64_t target;	/* C_READY: the zeroed region */
	uint64_t source;	/* C_READY: the region with a pattern */
	uint64_t key;
	uint32_t addrlen;	/* C_HELLO: the client's endpoint name */
	uint8_t addr[128];
};

/* One operation: its completion sets done (and len, for a receive). */
struct op {
	struct fi_context ctx;	/* first: the completion's op_context */
	bool done;
	bool failed;
	size_t len;
	uint64_t tag;
};

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_cq *cq;
static struct fid_av *av;
static struct fid_ep *ep;
static struct fid_mr *mr;
static struct fi_info *info;
static fi_addr_t peer;
static void *desc;

/*
 * The registered memory: control messages, the tagged slices (sent and
 * received), the two RMA regions the server offers and the client's
 * local copies.
 */
static uint8_t *mem;
static size_t mem_len;
static struct ctrl *ctrl_tx, *ctrl_rx;
static uint8_t *tx_area, *rx_area, *rma_target, *rma_source, *rma_local;
static size_t slice_off[ARRAY_SIZE(sizes)];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool fi_ok(int ret, const char *what)
{
	if (ret)
		ktap_print("%s: %d (%s)", what, ret, fi_strerror(-ret));
	return !ret;
}

/* Read what completed; false on an error completion or a CQ error. */
static bool progress(void)
{
	struct fi_cq_tagged_entry e[8];
	struct fi_cq_err_entry err = {};
	struct op *op;
	ssize_t n, i;

	n = fi_cq_read(cq, e, ARRAY_SIZE(e));
	if (n == -FI_EAGAIN) {
		sched_yield();
		return true;
	}
	if (n == -FI_EAVAIL) {
		if (fi_cq_readerr(cq, &err, 0) < 0)
			return false;
		ktap_print("completion error: %s (prov %d: %s)",
			   fi_strerror(err.err), err.prov_errno,
			   fi_cq_strerror(cq, err.prov_errno, err.err_data,
					  NULL, 0));
		op = err.op_context;
		if (op) {
			op->failed = true;
			op->done = true;
		}
		return false;
	}
	if (n < 0)
		return fi_ok((int)n, "fi_cq_read");
	for (i = 0; i < n; i++) {
		op = e[i].op_context;
		op->len = e[i].len;
		op->tag = e[i].tag;
		op->done = true;
	}
	return true;
}

static bool wait_ops(struct op *ops, size_t n, const char *what)
{
	double end = now() + WAIT_S;
	size_t i = 0;

	while (i < n) {
		if (ops[i].done) {
			if (ops[i].failed)
				return false;
			i++;
			continue;
		}
		if (!progress())
			return false;
		if (now() > end) {
			ktap_print("%s: no completion in %d s", what, WAIT_S);
			return false;
		}
	}
	return true;
}

/* Post with a retry while the provider says -FI_EAGAIN (it progresses). */
#define POST(call, what) ({						\
	ssize_t _r;							\
	double _end = now() + WAIT_S;					\
	while ((_r = (call)) == -FI_EAGAIN && now() < _end)		\
		progress();						\
	fi_ok((int)_r, what);						\
})

static bool send_ctrl(struct ctrl *c)
{
	struct op op = {};

	*ctrl_tx = *c;
	return POST(fi_send(ep, ctrl_tx, sizeof(*ctrl_tx), desc, peer, &op),
		    "fi_send") && wait_ops(&op, 1, "control send");
}

static bool post_ctrl_recv(struct op *op)
{
	memset(op, 0, sizeof(*op));
	return POST(fi_recv(ep, ctrl_rx, sizeof(*ctrl_rx), desc,
			    FI_ADDR_UNSPEC, op), "fi_recv");
}

static bool recv_ctrl(struct op *op, enum ctrl_type type)
{
	if (!wait_ops(op, 1, "control receive"))
		return false;
	return ktap_expect(op->len == sizeof(*ctrl_rx) && ctrl_rx->type == type,
			   "control message %u of %zu bytes, want %u",
			   ctrl_rx->type, op->len, type);
}

static bool setup(const char *prov, const char *node, const char *port,
		  bool server)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	size_t off = 0, i;
	int ret;

	if (!hints)
		return false;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
	hints->mode = FI_CONTEXT;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	ret = fi_getinfo(FI_VERSION(1, 9), node, port,
			 server ? FI_SOURCE : 0, hints, &info);
	fi_freeinfo(hints);
	if (!fi_ok(ret, "fi_getinfo"))
		return false;
	ktap_print("%s: provider %s, domain %s, mr_mode 0x%x", node,
		   info->fabric_attr->prov_name, info->domain_attr->name,
		   info->domain_attr->mr_mode);

	if (!fi_ok(fi_fabric(info->fabric_attr, &fabric, NULL), "fi_fabric") ||
	    !fi_ok(fi_domain(fabric, info, &domain, NULL), "fi_domain") ||
	    !fi_ok(fi_cq_open(domain, &cq_attr, &cq, NULL), "fi_cq_open") ||
	    !fi_ok(fi_av_open(domain, &av_attr, &av, NULL), "fi_av_open") ||
	    !fi_ok(fi_endpoint(domain, info, &ep, NULL), "fi_endpoint") ||
	    !fi_ok(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV),
		   "fi_ep_bind cq") ||
	    !fi_ok(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind av") ||
	    !fi_ok(fi_enable(ep), "fi_enable"))
		return false;

	/* The layout of the registered memory. */
	off = 2 * sizeof(struct ctrl);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		slice_off[i] = off;
		off += (sizes[i] + SLICE_ALIGN - 1) & ~(size_t)(SLICE_ALIGN - 1);
	}
	mem_len = 2 * off + 3 * RMA_LEN;
	mem = aligned_alloc(4096, mem_len);
	if (!mem)
		return false;
	memset(mem, 0, mem_len);
	ctrl_tx = (struct ctrl *)mem;
	ctrl_rx = ctrl_tx + 1;
	tx_area = mem;
	rx_area = mem + off;
	rma_target = mem + 2 * off;
	rma_source = rma_target + RMA_LEN;
	rma_local = rma_source + RMA_LEN;
	ret = fi_mr_reg(domain, mem, mem_len,
			FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL);
	if (!fi_ok(ret, "fi_mr_reg"))
		return false;
	desc = fi_mr_desc(mr);

	if (server)
		return true;
	ret = fi_av_insert(av, info->dest_addr, 1, &peer, 0, NULL);
	return ktap_expect(ret == 1, "fi_av_insert of the server: %d", ret);
}

/* Where the peer addresses a byte of our memory for RMA. */
static uint64_t rma_addr(const void *p)
{
	if (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
		return (uintptr_t)p;
	return (uint64_t)((const uint8_t *)p - mem);
}

/* The image of the target region after the client's writes. */
static void rma_image(uint8_t *p, uint64_t seed)
{
	size_t i;

	memset(p, 0, RMA_LEN);
	for (i = 0; i < ARRAY_SIZE(pieces); i++)
		pattern_fill(p + pieces[i].off, pieces[i].len, PAT_HASH,
			     seed + i, 0);
}

static bool check_bytes(const uint8_t *got, const uint8_t *want, size_t len,
			const char *what)
{
	int64_t at = bytes_differ(got, want, len);

	return ktap_expect(at < 0, "%s: byte %lld is 0x%02x, want 0x%02x", what,
			   (long long)at, at < 0 ? 0 : got[at],
			   at < 0 ? 0 : want[at]);
}

static bool check_pattern(const uint8_t *p, size_t len, uint64_t seed,
			  const char *what)
{
	uint8_t want;
	int64_t at = pattern_check(p, len, PAT_HASH, seed, 0, &want);

	return ktap_expect(at < 0, "%s (%zu bytes): byte %lld is 0x%02x, want 0x%02x",
			   what, len, (long long)at, at < 0 ? 0 : p[at], want);
}

static int server(int rounds)
{
	struct op ops[ARRAY_SIZE(sizes)], ctl;
	struct ctrl c = {};
	uint8_t *image;
	char name[96];
	int round, ret;
	size_t i;
	bool ok;

	image = malloc(RMA_LEN);
	ok = image && post_ctrl_recv(&ctl) && recv_ctrl(&ctl, C_HELLO);
	if (ok) {
		ret = fi_av_insert(av, ctrl_rx->addr, 1, &peer, 0, NULL);
		ok = ktap_expect(ret == 1, "fi_av_insert of the client: %d", ret);
	}
	ktap_result(ok, "server: the client's first message, its address");
	for (round = 0; round < rounds; round++) {
		uint64_t seed = 1000 * (round + 1);

		/* 1. tagged: receives posted last tag first. */
		memset(rx_area + slice_off[0], 0, rma_target - rx_area - slice_off[0]);
		memset(rma_target, 0, RMA_LEN);
		pattern_fill(rma_source, RMA_LEN, PAT_HASH, seed + 500, 0);
		memset(ops, 0, sizeof(ops));
		for (i = ARRAY_SIZE(sizes); ok && i-- > 0;)
			ok = POST(fi_trecv(ep, rx_area + slice_off[i], sizes[i],
					   desc, peer, TAG_DATA + seed + i, 0,
					   &ops[i]), "fi_trecv");
		ok = ok && post_ctrl_recv(&ctl);
		c.type = C_READY;
		c.target = rma_addr(rma_target);
		c.source = rma_addr(rma_source);
		c.key = fi_mr_key(mr);
		ok = ok && send_ctrl(&c);
		ok = ok && wait_ops(ops, ARRAY_SIZE(ops), "tagged receive");
		for (i = 0; ok && i < ARRAY_SIZE(sizes); i++) {
			snprintf(name, sizeof(name), "tag %zu", i);
			ok = ktap_expect(ops[i].len == sizes[i] &&
					 ops[i].tag == TAG_DATA + seed + i,
					 "%s: %zu bytes, tag 0x%llx", name,
					 ops[i].len,
					 (unsigned long long)ops[i].tag) &&
			     check_pattern(rx_area + slice_off[i], sizes[i],
					   seed + i, name);
		}
		/* The echoes, from where they arrived. */
		memset(ops, 0, sizeof(ops));
		for (i = 0; ok && i < ARRAY_SIZE(sizes); i++)
			ok = POST(fi_tsend(ep, rx_area + slice_off[i], sizes[i],
					   desc, peer, TAG_ECHO + seed + i,
					   &ops[i]), "fi_tsend");
		ok = ok && wait_ops(ops, ARRAY_SIZE(ops), "tagged echo");
		snprintf(name, sizeof(name),
			 "server: round %d: %zu tagged messages matched by tag, checked, echoed",
			 round + 1, ARRAY_SIZE(sizes));
		ktap_result(ok, name);

		/* 2. RMA: the client says when it is done. */
		ok = ok && recv_ctrl(&ctl, C_DONE);
		if (ok) {
			rma_image(image, seed + 700);
			ok = check_bytes(rma_target, image, RMA_LEN,
					 "written region");
		}
		c = (struct ctrl){ .type = C_RESULT, .ok = ok };
		ok = send_ctrl(&c) && ok;
		snprintf(name, sizeof(name),
			 "server: round %d: the region holds what the client fi_write()s put there",
			 round + 1);
		ktap_result(ok, name);
	}
	free(image);
	return ktap_finish();
}

static bool client_rma(const struct ctrl *r, uint64_t seed)
{
	struct op ops[ARRAY_SIZE(pieces)], rd[2];
	uint8_t *image = malloc(RMA_LEN);
	uint8_t *src = rma_local;
	size_t i;
	bool ok = image;

	memset(ops, 0, sizeof(ops));
	memset(rd, 0, sizeof(rd));
	/* Each piece from the local region at its own offset. */
	if (ok)
		rma_image(src, seed + 700);
	for (i = 0; ok && i < ARRAY_SIZE(pieces); i++)
		ok = POST(fi_write(ep, src + pieces[i].off, pieces[i].len, desc,
				   peer, r->target + pieces[i].off, r->key,
				   &ops[i]), "fi_write");
	ok = ok && wait_ops(ops, ARRAY_SIZE(ops), "fi_write");
	if (ok)
		memcpy(image, src, RMA_LEN);
	/* Both regions back, each into the cleared local region. */
	if (ok)
		memset(src, 0, RMA_LEN);
	ok = ok && POST(fi_read(ep, src, RMA_LEN, desc, peer, r->target, r->key,
				&rd[0]), "fi_read");
	ok = ok && wait_ops(&rd[0], 1, "fi_read");
	ok = ok && check_bytes(src, image, RMA_LEN, "region read back");
	if (ok)
		memset(src, 0, RMA_LEN);
	ok = ok && POST(fi_read(ep, src, RMA_LEN, desc, peer, r->source, r->key,
				&rd[1]), "fi_read");
	ok = ok && wait_ops(&rd[1], 1, "fi_read");
	ok = ok && check_pattern(src, RMA_LEN, seed + 500, "server's pattern");
	free(image);
	return ok;
}

static int client(int rounds)
{
	struct op ops[2 * ARRAY_SIZE(sizes)], ctl;
	struct ctrl c = { .type = C_HELLO }, r;
	size_t namelen = sizeof(c.addr), i, n = ARRAY_SIZE(sizes);
	double t0;
	char name[128];
	int round;
	bool ok;

	ok = fi_ok(fi_getname(&ep->fid, c.addr, &namelen), "fi_getname");
	c.addrlen = namelen;
	ok = ok && post_ctrl_recv(&ctl) && send_ctrl(&c);
	ktap_result(ok, "client: its address sent to the server");
	for (round = 0; round < rounds; round++) {
		uint64_t seed = 1000 * (round + 1);

		ok = ok && recv_ctrl(&ctl, C_READY);
		r = *ctrl_rx;
		ok = ok && post_ctrl_recv(&ctl);

		/* 1. tagged: each size under its tag, the echoes back. */
		t0 = now();
		memset(ops, 0, sizeof(ops));
		memset(rx_area + slice_off[0], 0, rma_target - rx_area - slice_off[0]);
		for (i = 0; ok && i < n; i++)
			ok = POST(fi_trecv(ep, rx_area + slice_off[i], sizes[i],
					   desc, peer, TAG_ECHO + seed + i, 0,
					   &ops[n + i]), "fi_trecv");
		for (i = 0; ok && i < n; i++) {
			pattern_fill(tx_area + slice_off[i], sizes[i], PAT_HASH,
				     seed + i, 0);
			ok = POST(fi_tsend(ep, tx_area + slice_off[i], sizes[i],
					   desc, peer, TAG_DATA + seed + i,
					   &ops[i]), "fi_tsend");
		}
		ok = ok && wait_ops(ops, 2 * n, "tagged send and echo");
		for (i = 0; ok && i < n; i++) {
			snprintf(name, sizeof(name), "echo %zu", i);
			ok = ktap_expect(ops[n + i].len == sizes[i],
					 "%s: %zu bytes", name, ops[n + i].len) &&
			     check_pattern(rx_area + slice_off[i], sizes[i],
					   seed + i, name);
		}
		snprintf(name, sizeof(name),
			 "client: round %d: %zu tagged messages, 1 B to 1 MiB, echoed intact (%.2f s)",
			 round + 1, n, now() - t0);
		ktap_result(ok, name);

		/* 2. RMA. */
		t0 = now();
		ok = ok && client_rma(&r, seed);
		c = (struct ctrl){ .type = C_DONE };
		ok = ok && send_ctrl(&c) && recv_ctrl(&ctl, C_RESULT);
		ok = ok && ktap_expect(ctrl_rx->ok, "the server found the region wrong");
		ok = ok && (round + 1 == rounds || post_ctrl_recv(&ctl));
		snprintf(name, sizeof(name),
			 "client: round %d: fi_write of 4 pieces, fi_read of 2 MiB, data intact (%.2f s)",
			 round + 1, now() - t0);
		ktap_result(ok, name);
	}
	return ktap_finish();
}

static void teardown(void)
{
	if (ep)
		fi_close(&ep->fid);
	if (mr)
		fi_close(&mr->fid);
	if (av)
		fi_close(&av->fid);
	if (cq)
		fi_close(&cq->fid);
	if (domain)
		fi_close(&domain->fid);
	if (fabric)
		fi_close(&fabric->fid);
	fi_freeinfo(info);
	free(mem);
}

int main(int argc, char **argv)
{
	const char *prov = "verbs;ofi_rxm", *port = "47601";
	int rounds = 2, opt, rc;
	bool server_side;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	server_side = !strcmp(argv[1], "server");
	if (!server_side && strcmp(argv[1], "client"))
		goto usage;
	optind = 2;
	while ((opt = getopt(argc, argv, "p:P:n:")) != -1) {
		switch (opt) {
		case 'p':
			prov = optarg;
			break;
		case 'P':
			port = optarg;
			break;
		case 'n':
			rounds = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || rounds < 1)
		goto usage;

	ktap_plan(1 + 2 * rounds);
	if (!setup(prov, argv[optind], port, server_side)) {
		ktap_result(false, "set up: fabric, domain, RDM endpoint, memory");
		teardown();
		return KSFT_FAIL;
	}
	/* libfabric.sh starts the client once it sees this. */
	if (server_side)
		ktap_print("server: listening on %s port %s", argv[optind], port);
	rc = server_side ? server(rounds) : client(rounds);
	teardown();
	return rc;
usage:
	fprintf(stderr, "usage: %s server|client [-p PROV] [-P PORT] [-n ROUNDS] ADDR\n",
		argv[0]);
	return KSFT_FAIL;
}
