// SPDX-License-Identifier: GPL-2.0
/*
 * UD multicast on one device: QPs attached to a group (IPv4 and IPv6)
 * each get every datagram sent to it, a detached one no more; attach and
 * detach refuse what the verbs say they must (a group address, a UD QP,
 * room in the group), and a QP cannot go while attached.
 *
 * usage: ud_mcast IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"
#include "ud_qp.h"

#define QKEY		0x22220000u
#define GRH_LEN		40
#define LEN		512
#define MCAST_QPN	0xffffff

static struct ud s, r1, r2;	/* sender; two group members */
static struct ibv_mr *mr;
static uint8_t buf[3][2 * (GRH_LEN + LEN)];	/* s, r1, r2 */
static uint32_t max_attach;

static union ibv_gid group4(void)
{
	union ibv_gid g = {};

	g.raw[10] = g.raw[11] = 0xff;
	inet_pton(AF_INET, "239.1.2.3", &g.raw[12]);
	return g;
}

static bool post_recv(struct ud *u, uint8_t *at)
{
	struct ibv_sge sge = { .addr = (uintptr_t)at,
			       .length = GRH_LEN + LEN, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uintptr_t)at, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ktap_expect(!ibv_post_recv(u->qp, &wr, &bad), "post_recv");
}

static bool send_to(struct ibv_ah *ah, uint8_t seed)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf[0], .length = LEN,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = seed, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = MCAST_QPN,
			   .remote_qkey = QKEY },
	}, *bad;

	fill(buf[0], LEN, seed);
	return ktap_expect(!ibv_post_send(s.qp, &wr, &bad), "post_send") &&
	       wc_ok(s.cq, seed, IBV_WC_SUCCESS);
}

/* @u got the datagram of @seed from s, sent to @grp. */
static bool got(struct ud *u, uint8_t *at, const union ibv_gid *grp)
{
	struct ibv_wc wc;

	return poll_one(u->cq, &wc) &&
	       ktap_expect(wc.status == IBV_WC_SUCCESS &&
			   wc.byte_len == GRH_LEN + LEN &&
			   wc.src_qp == s.qp->qp_num &&
			   wc.qp_num == u->qp->qp_num &&
			   (wc.wc_flags & IBV_WC_GRH),
			   "%s, %u bytes, src_qp %#x, qp %#x",
			   ibv_wc_status_str(wc.status), wc.byte_len,
			   wc.src_qp, wc.qp_num) &&
	       /* the GRH names the group as its destination */
	       ktap_expect(!memcmp(grp->raw[10] == 0xff ?
				   at + GRH_LEN - 4 : at + 24,
				   grp->raw[10] == 0xff ?
				   &grp->raw[12] : grp->raw,
				   grp->raw[10] == 0xff ? 4 : 16),
			   "GRH destination is not the group") &&
	       same(at + GRH_LEN, buf[0], LEN);
}

/* Nothing arrives at @u within @ms. */
static bool nothing(struct ud *u, int ms)
{
	uint64_t end = now_ms() + ms;
	struct ibv_wc wc;

	while (now_ms() < end)
		if (ibv_poll_cq(u->cq, 1, &wc))
			return ktap_expect(false, "got a completion, %s",
					   ibv_wc_status_str(wc.status));
	return true;
}

static struct ibv_ah *group_ah(const union ibv_gid *grp, int sgid_index)
{
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .hop_limit = 8, .dgid = *grp,
			 .sgid_index = sgid_index },
	};

	return ibv_create_ah(pd, &attr);
}

static void t_caps(void)
{
	struct ibv_device_attr attr;

	ktap_result(!ibv_query_device(ctx, &attr) && attr.max_mcast_grp > 0 &&
		    attr.max_mcast_qp_attach > 1 &&
		    attr.max_total_mcast_qp_attach >= attr.max_mcast_qp_attach,
		    "query_device reports multicast groups and attachments");
	max_attach = attr.max_mcast_qp_attach;
	ktap_print("max_mcast_grp %d, max_mcast_qp_attach %d",
		   attr.max_mcast_grp, attr.max_mcast_qp_attach);
}

/* Both members get each datagram; after a detach only the other one. */
static void t_group(const union ibv_gid *grp, int sgid_index,
		    const char *what)
{
	struct ibv_ah *ah = group_ah(grp, sgid_index);
	char name[128];
	bool ok;
	int i;

	ok = ktap_expect(ah, "create_ah: %s", strerror(errno)) &&
	     ktap_expect(!ibv_attach_mcast(r1.qp, grp, 0) &&
			 !ibv_attach_mcast(r2.qp, grp, 0), "attach: %s",
			 strerror(errno));
	for (i = 0; ok && i < 5; i++)
		ok = post_recv(&r1, buf[1]) && post_recv(&r2, buf[2]) &&
		     send_to(ah, 10 + i) && got(&r1, buf[1], grp) &&
		     got(&r2, buf[2], grp);
	snprintf(name, sizeof(name), "%s: two attached QPs each get every datagram", what);
	ktap_result(ok, name);

	ok = ktap_expect(!ibv_detach_mcast(r2.qp, grp, 0), "detach: %s",
			 strerror(errno)) &&
	     post_recv(&r1, buf[1]) && post_recv(&r2, buf[2]) &&
	     send_to(ah, 20) && got(&r1, buf[1], grp) && nothing(&r2, 300);
	snprintf(name, sizeof(name), "%s: a detached QP gets nothing more", what);
	ktap_result(ok, name);

	ok = ktap_expect(!ibv_detach_mcast(r1.qp, grp, 0), "detach: %s",
			 strerror(errno)) && send_to(ah, 21) &&
	     nothing(&r1, 300);
	/* the receive posted above stays for the next test: take it back */
	ud_close(&r2);
	ok = ktap_expect(!ud_open(&r2, QKEY), "reopen: %s", strerror(errno)) &&
	     ok;
	ud_close(&r1);
	ok = ktap_expect(!ud_open(&r1, QKEY), "reopen: %s", strerror(errno)) &&
	     ok;
	snprintf(name, sizeof(name), "%s: with no member left, nobody gets it", what);
	ktap_result(ok, name);
	if (ah)
		ibv_destroy_ah(ah);
}

static void t_refused(void)
{
	union ibv_gid grp = group4();
	struct ep a = {}, b = {};
	bool ok;

	ok = ktap_expect(ibv_attach_mcast(r1.qp, &gid, 0) == EINVAL,
			 "a unicast GID") &&
	     ktap_expect(ibv_detach_mcast(r1.qp, &grp, 0) == EINVAL,
			 "detach of a QP not attached") &&
	     pair_open(&a, &b, 16) &&
	     ktap_expect(ibv_attach_mcast(a.qp, &grp, 0) == EINVAL,
			 "an RC QP");
	pair_close(&a, &b);
	ok = ok && ktap_expect(!ibv_attach_mcast(r1.qp, &grp, 0) &&
			       !ibv_attach_mcast(r1.qp, &grp, 0),
			       "attach twice") &&
	     ktap_expect(ibv_destroy_qp(r1.qp) == EBUSY,
			 "destroy_qp of an attached QP") &&
	     ktap_expect(!ibv_detach_mcast(r1.qp, &grp, 0), "detach");
	ktap_result(ok, "attach refuses a unicast GID and an RC QP, detach a QP not attached, destroy_qp an attached QP (EBUSY)");
}

/* A group takes max_mcast_qp_attach QPs, and no more. */
static void t_full(void)
{
	union ibv_gid grp = group4();
	struct ud *u = calloc(max_attach + 1, sizeof(*u));
	uint32_t i, n = 0;
	bool ok = ktap_expect(u, "calloc");
	int err = 0;

	for (i = 0; ok && i <= max_attach; i++) {
		ok = ktap_expect(!ud_open(&u[i], QKEY), "ud_open: %s",
				 strerror(errno));
		if (!ok)
			break;
		err = ibv_attach_mcast(u[i].qp, &grp, 0);
		if (err)
			break;
		n++;
	}
	ok = ok && ktap_expect(n == max_attach && err == ENOMEM,
			       "%u attached, then %s", n, strerror(err));
	for (i = 0; u && i <= max_attach; i++) {
		if (i < n)
			ok = ktap_expect(!ibv_detach_mcast(u[i].qp, &grp, 0),
					 "detach") && ok;
		ud_close(&u[i]);
	}
	free(u);
	ktap_result(ok, "a group takes max_mcast_qp_attach QPs, then ENOMEM");
}

int main(int argc, char **argv)
{
	union ibv_gid g4 = group4(), g6 = {}, link;
	int err;

	if (!loop_open(argc, argv, 10))
		return KSFT_FAIL;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	err = !mr ? errno : ud_open(&s, QKEY);
	err = err ?: ud_open(&r1, QKEY);
	err = err ?: ud_open(&r2, QKEY);
	if (err) {
		ktap_print("set up: %s", strerror(err));
		return KSFT_FAIL;
	}
	t_caps();
	t_group(&g4, gid_index, "IPv4 group 239.1.2.3");
	/* IPv6: from the link-local GID (index 0) to a site-local group */
	inet_pton(AF_INET6, "ff05::5eed", g6.raw);
	if (ibv_query_gid(ctx, 1, 0, &link) || link.raw[0] != 0xfe) {
		for (err = 0; err < 3; err++)
			ktap_skip("IPv6 group", "no IPv6 GID at index 0");
	} else {
		t_group(&g6, 0, "IPv6 group ff05::5eed");
	}
	t_refused();
	t_full();
	ud_close(&s);
	ud_close(&r1);
	ud_close(&r2);
	ktap_result(!ibv_dereg_mr(mr) && !ibv_dealloc_pd(pd) &&
		    !ibv_close_device(ctx), "everything is destroyed");
	return ktap_finish();
}
