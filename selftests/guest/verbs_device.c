// SPDX-License-Identifier: GPL-2.0
/*
 * Device-level verbs through libibverbs and the softrdma provider: open,
 * device/port/GID/P_Key queries, PDs, the errno of a verb not supported,
 * and port events that follow the netdev's carrier.
 *
 * usage: verbs_device IBDEV [PEER_NETDEV]   run the tests
 *        verbs_device --hold IBDEV          keep the device open until killed
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"

#define NR_PDS		256
#define EVENT_WAIT_MS	10000

static void test_query_device(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex ex = {};
	struct ibv_device_attr attr;
	int ok;

	ok = !ibv_query_device(ctx, &attr);
	ok = ok && attr.vendor_id == 0xffffff && attr.phys_port_cnt == 1 &&
	     attr.max_pd > 0 && attr.node_guid != 0 &&
	     attr.sys_image_guid == attr.node_guid;
	if (!ktap_result(ok, "query_device reports a one-port device"))
		ktap_print("vendor %#x ports %u max_pd %d", attr.vendor_id,
			   attr.phys_port_cnt, attr.max_pd);

	ok = !ibv_query_device_ex(ctx, NULL, &ex);
	ktap_result(ok && ex.orig_attr.node_guid == attr.node_guid &&
		    ex.orig_attr.max_pd == attr.max_pd,
		    "query_device_ex agrees with query_device");
}

static void test_query_port(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	uint16_t pkey;
	int ok;

	ok = !ibv_query_port(ctx, 1, &pa);
	ok = ok && pa.state == IBV_PORT_ACTIVE &&
	     pa.link_layer == IBV_LINK_LAYER_ETHERNET &&
	     pa.max_mtu == IBV_MTU_4096 && pa.active_mtu >= IBV_MTU_256 &&
	     pa.active_mtu <= pa.max_mtu && pa.gid_tbl_len > 1 &&
	     pa.pkey_tbl_len == 1;
	if (!ktap_result(ok, "query_port: active Ethernet port"))
		ktap_print("state %d ll %d mtu %d/%d", pa.state, pa.link_layer,
			   pa.active_mtu, pa.max_mtu);

	ktap_result(ibv_query_port(ctx, 2, &pa) != 0,
		    "query_port of a port that does not exist fails");

	/* GID 0 is the link-local address the core derives from the MAC. */
	ok = !ibv_query_gid_ex(ctx, 1, 0, &ge, 0) &&
	     ge.gid.raw[0] == 0xfe && ge.gid.raw[1] == 0x80 &&
	     ge.gid_type == IBV_GID_TYPE_ROCE_V2;
	ktap_result(ok, "GID 0 is a link-local RoCEv2 GID");

	ok = !ibv_query_pkey(ctx, 1, 0, &pkey) && pkey == 0xffff;
	ktap_result(ok, "P_Key 0 is the default partition");
	ktap_result(ibv_query_pkey(ctx, 1, 1, &pkey) != 0,
		    "P_Key index 1 is out of range");
}

static void test_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pds[NR_PDS];
	int i, n, ok = 1;

	for (n = 0; n < NR_PDS; n++) {
		pds[n] = ibv_alloc_pd(ctx);
		if (!pds[n])
			break;
	}
	ok = n == NR_PDS;
	for (i = 0; i < n; i++)
		ok = !ibv_dealloc_pd(pds[i]) && ok;
	ktap_result(ok, "alloc and dealloc of 256 PDs");
}

static void test_unsupported(struct ibv_pd *pd)
{
	struct ibv_cq *cq = ibv_create_cq(pd->context, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = NULL;

	/*
	 * A verb softrdma does not implement must say so, not fake it: a raw
	 * packet QP (Ethernet frames, no RoCE transport).
	 */
	errno = 0;
	if (cq)
		qp = ibv_create_qp(pd, &init);
	if (qp)
		ibv_destroy_qp(qp);
	if (!ktap_result(cq && !qp && errno == EOPNOTSUPP,
			 "unsupported verb (raw packet QP) fails with EOPNOTSUPP"))
		ktap_print("%s, errno %d (%s)", qp ? "created" : "refused",
			   errno, strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
}

/* Wait for @want on the async queue, skipping other events. */
static bool wait_event(struct ibv_context *ctx, enum ibv_event_type want)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (poll(&pfd, 1, EVENT_WAIT_MS) == 1) {
		if (ibv_get_async_event(ctx, &ev))
			return false;
		ibv_ack_async_event(&ev);
		if (ev.event_type == want && ev.element.port_num == 1)
			return true;
	}
	return false;
}

static int set_link(const char *netdev, const char *state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip link set dev %s %s", netdev, state);
	return system(cmd);
}

static void test_port_events(struct ibv_context *ctx, const char *peer)
{
	struct ibv_port_attr pa;
	int ok;

	if (!peer) {
		ktap_skip("carrier loss raises PORT_ERR", "no peer netdev");
		ktap_skip("carrier return raises PORT_ACTIVE", "no peer netdev");
		return;
	}
	ok = !set_link(peer, "down") && wait_event(ctx, IBV_EVENT_PORT_ERR) &&
	     !ibv_query_port(ctx, 1, &pa) && pa.state == IBV_PORT_DOWN;
	ktap_result(ok, "carrier loss raises PORT_ERR and the port goes down");

	ok = !set_link(peer, "up") &&
	     wait_event(ctx, IBV_EVENT_PORT_ACTIVE) &&
	     !ibv_query_port(ctx, 1, &pa) && pa.state == IBV_PORT_ACTIVE;
	ktap_result(ok, "carrier return raises PORT_ACTIVE");
}

static int hold(const char *name)
{
	struct ibv_context *ctx = open_by_name(name);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;

	if (!pd) {
		fprintf(stderr, "cannot open %s\n", name);
		return KSFT_FAIL;
	}
	printf("holding %s\n", name);
	fflush(stdout);
	pause();	/* until a signal ends us */
	return KSFT_PASS;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	if (argc == 3 && !strcmp(argv[1], "--hold"))
		return hold(argv[2]);
	if (argc < 2) {
		fprintf(stderr, "usage: %s IBDEV [PEER_NETDEV]\n", argv[0]);
		return KSFT_FAIL;
	}

	ktap_plan(13);
	ctx = open_by_name(argv[1]);
	if (!ktap_result(ctx != NULL, "open device by name")) {
		ktap_print("cannot open %s: is the provider loaded?", argv[1]);
		return KSFT_FAIL;
	}
	test_query_device(ctx);
	test_query_port(ctx);
	test_pd(ctx);
	pd = ibv_alloc_pd(ctx);
	test_unsupported(pd);
	if (pd)
		ibv_dealloc_pd(pd);
	test_port_events(ctx, argc > 2 ? argv[2] : NULL);
	ktap_result(!ibv_close_device(ctx), "close device");
	return ktap_finish();
}
