// SPDX-License-Identifier: GPL-2.0
/*
 * UD on one device (loopback), two UD QPs and an AH to our own GID: what a
 * datagram delivers (GRH, source QP, immediate data), the Q_Key rules,
 * and datagrams that cannot be taken: longer than the MTU, longer than
 * the receive buffer, or with no receive posted.
 *
 * usage: ud_verbs IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"
#include "ud_qp.h"

#define QKEY		0x11110000u
#define GRH_LEN		40
#define BUF_SIZE	8192

static struct ud s, r;		/* sender, receiver */
static struct ibv_ah *ah;
static struct ibv_mr *mr;
static uint8_t *buf;		/* send data in the first half */
static uint32_t mtu;

static bool post_recv_at(uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + off, .length = len, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ktap_expect(!ibv_post_recv(r.qp, &wr, &bad), "post_recv");
}

static bool send_dgram(uint32_t len, uint32_t qkey, bool imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = len, .sg_list = &sge, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0xabcd1234),
		.wr.ud = { .ah = ah, .remote_qpn = r.qp->qp_num,
			   .remote_qkey = qkey },
	}, *bad;

	return ktap_expect(!ibv_post_send(s.qp, &wr, &bad), "post_send");
}

/* Nothing arrives at the receiver within @ms. */
static bool nothing(int ms)
{
	uint64_t end = now_ms() + ms;
	struct ibv_wc wc;
	int n;

	while (now_ms() < end) {
		n = ibv_poll_cq(r.cq, 1, &wc);
		if (n)
			return ktap_expect(false, "got a completion, %s, qp %#x",
					   ibv_wc_status_str(wc.status),
					   wc.qp_num);
	}
	return true;
}

/* A datagram lands after 40 bytes of GRH that hold the IPv4 header. */
static void t_deliver(bool imm)
{
	const uint32_t len = 777, off = BUF_SIZE / 2;
	const struct iphdr *ip = (void *)(buf + off + GRH_LEN - 20);
	struct ibv_wc wc;
	bool ok;

	fill(buf, len, imm);
	memset(buf + off, 0, GRH_LEN + len);
	ok = post_recv_at(off, BUF_SIZE / 2) && send_dgram(len, QKEY, imm) &&
	     wc_ok(s.cq, len, IBV_WC_SUCCESS) && poll_one(r.cq, &wc) &&
	     ktap_expect(wc.status == IBV_WC_SUCCESS &&
			 wc.opcode == IBV_WC_RECV &&
			 wc.byte_len == GRH_LEN + len &&
			 wc.src_qp == s.qp->qp_num &&
			 wc.qp_num == r.qp->qp_num &&
			 (wc.wc_flags & IBV_WC_GRH),
			 "%s, opcode %d, %u bytes, src_qp %#x, flags %#x",
			 ibv_wc_status_str(wc.status), wc.opcode,
			 wc.byte_len, wc.src_qp, wc.wc_flags) &&
	     ktap_expect(!imm || ((wc.wc_flags & IBV_WC_WITH_IMM) &&
				  ntohl(wc.imm_data) == 0xabcd1234),
			 "immediate data %#x, flags %#x", ntohl(wc.imm_data),
			 wc.wc_flags) &&
	     ktap_expect(ip->version == 4 &&
			 !memcmp(&ip->saddr, &gid.raw[12], 4) &&
			 !memcmp(&ip->daddr, &gid.raw[12], 4),
			 "GRH: no IPv4 header from our address") &&
	     same(buf + off + GRH_LEN, buf, len);
	ktap_result(ok, imm ?
		    "SEND_WITH_IMM: immediate data, IBV_WC_WITH_IMM" :
		    "a datagram: GRH with the IPv4 header, source QP, payload at byte 40");
}

/* The wrong Q_Key is dropped and counted; the QP's own (high bit) is not. */
static void t_qkey(void)
{
	int64_t before = hw_counter(ctx, "drop_bad_qkey");
	struct ibv_wc wc;
	bool ok;

	ok = post_recv_at(BUF_SIZE / 2, BUF_SIZE / 2) &&
	     send_dgram(64, QKEY + 1, false) && wc_ok(s.cq, 64, IBV_WC_SUCCESS) &&
	     nothing(500) &&
	     ktap_expect(hw_counter(ctx, "drop_bad_qkey") == before + 1,
			 "drop_bad_qkey %lld -> %lld", (long long)before,
			 (long long)hw_counter(ctx, "drop_bad_qkey"));
	ktap_result(ok, "a datagram with the wrong Q_Key is dropped and counted");

	ok = send_dgram(65, 0x80000000u, false) &&
	     wc_ok(s.cq, 65, IBV_WC_SUCCESS) && poll_one(r.cq, &wc) &&
	     ktap_expect(wc.status == IBV_WC_SUCCESS &&
			 wc.byte_len == GRH_LEN + 65, "%s, %u bytes",
			 ibv_wc_status_str(wc.status), wc.byte_len);
	ktap_result(ok, "a Q_Key with the high bit set sends the QP's own Q_Key");
}

static void t_too_long(void)
{
	int64_t before;
	struct ibv_wc wc;
	bool ok;

	/* Longer than the MTU: the sender refuses it. */
	ok = send_dgram(mtu + 1, QKEY, false) &&
	     wc_ok(s.cq, mtu + 1, IBV_WC_LOC_LEN_ERR);
	ktap_result(ok, "a datagram longer than the MTU: LOC_LEN_ERR at the sender");
	/* The sender's QP is in ERR now: start over. */
	ud_close(&s);
	ok = ktap_expect(!ud_open(&s, QKEY), "reopen the sender: %s",
			 strerror(errno));

	/* Longer than the receive buffer: that WQE fails, the QP lives. */
	ok = ok && post_recv_at(BUF_SIZE / 2, GRH_LEN + 100) &&
	     post_recv_at(BUF_SIZE / 2 + 1024, 1024) &&
	     send_dgram(101, QKEY, false) && wc_ok(s.cq, 101, IBV_WC_SUCCESS) &&
	     poll_one(r.cq, &wc) &&
	     ktap_expect(wc.status == IBV_WC_LOC_LEN_ERR, "first: %s",
			 ibv_wc_status_str(wc.status)) &&
	     send_dgram(100, QKEY, false) && wc_ok(s.cq, 100, IBV_WC_SUCCESS) &&
	     poll_one(r.cq, &wc) &&
	     ktap_expect(wc.status == IBV_WC_SUCCESS &&
			 wc.byte_len == GRH_LEN + 100, "second: %s",
			 ibv_wc_status_str(wc.status));
	ktap_result(ok, "a datagram longer than the receive buffer fails that WQE only");

	/* No receive posted: dropped and counted, the next one arrives. */
	before = hw_counter(ctx, "drop_no_recv");
	ok = send_dgram(10, QKEY, false) && wc_ok(s.cq, 10, IBV_WC_SUCCESS) &&
	     nothing(300) &&
	     ktap_expect(hw_counter(ctx, "drop_no_recv") == before + 1,
			 "drop_no_recv %lld -> %lld", (long long)before,
			 (long long)hw_counter(ctx, "drop_no_recv")) &&
	     post_recv_at(BUF_SIZE / 2, BUF_SIZE / 2) &&
	     send_dgram(11, QKEY, false) && wc_ok(s.cq, 11, IBV_WC_SUCCESS) &&
	     poll_one(r.cq, &wc) &&
	     ktap_expect(wc.status == IBV_WC_SUCCESS, "%s",
			 ibv_wc_status_str(wc.status));
	ktap_result(ok, "with no receive posted a datagram is dropped and counted");
}

/* RoCE addresses are IP addresses: an AH needs a GRH. */
static void t_ah_no_grh(void)
{
	struct ibv_ah_attr attr = { .port_num = 1, .dlid = 1 };
	struct ibv_ah *bad = ibv_create_ah(pd, &attr);

	ktap_result(ktap_expect(!bad && errno == EINVAL,
				"create_ah: %s", bad ? "created" :
				strerror(errno)),
		    "an AH without a GRH is refused with EINVAL");
	if (bad)
		ibv_destroy_ah(bad);
}

int main(int argc, char **argv)
{
	struct ibv_port_attr port;
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .hop_limit = 64 },
	};

	if (!loop_open(argc, argv, 8) || ibv_query_port(ctx, 1, &port))
		return KSFT_FAIL;
	mtu = 128u << port.active_mtu;
	buf = aligned_alloc(4096, BUF_SIZE);
	if (!buf)
		return KSFT_FAIL;
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	attr.grh.dgid = gid;
	attr.grh.sgid_index = gid_index;
	ah = ibv_create_ah(pd, &attr);
	if (!mr || !ah || ud_open(&s, QKEY) || ud_open(&r, QKEY)) {
		ktap_print("set up: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_deliver(false);
	t_deliver(true);
	t_qkey();
	t_too_long();
	t_ah_no_grh();
	return ktap_finish();
}
