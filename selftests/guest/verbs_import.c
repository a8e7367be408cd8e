// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing a context's objects (ibv_import_device, ibv_import_pd,
 * ibv_import_mr): a second context over the first one's command file
 * sees its PD and MR under the same handles and keys, and a QP of the
 * second context moves data with them to a QP of the first. Wrong handles
 * fail at import; what was imported is only forgotten by unimport, and
 * its owner still frees it.
 */
#include "loop_qp.h"

#define BUF_SIZE	8192
#define HALF		(BUF_SIZE / 2)

static uint8_t buf[BUF_SIZE] __attribute__((aligned(4096)));

/* A WRITE of the buffer's first half into its second, over @e. */
static bool write_half(struct ep *e, const struct ibv_mr *mr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = HALF, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)buf + HALF,
			     .rkey = mr->rkey },
	}, *bad;

	return ktap_expect(!ibv_post_send(e->qp, &wr, &bad), "post_send") &&
	       wc_ok(e->cq, 1, IBV_WC_SUCCESS);
}

int main(int argc, char **argv)
{
	struct ibv_context *own_ctx, *ictx;
	struct ibv_pd *own_pd, *ipd, *bad_pd;
	struct ibv_mr *mr, *imr, *bad_mr;
	struct ep a = {}, b = {};
	bool ok;

	if (!loop_open(argc, argv, 6))
		return KSFT_FAIL;
	own_ctx = ctx;
	own_pd = pd;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!ktap_expect(mr, "reg_mr: %s", strerror(errno)))
		return KSFT_FAIL;

	/* Its own copy of the file: closing the context closes it. */
	ictx = ibv_import_device(dup(ctx->cmd_fd));
	ok = ktap_expect(ictx, "import_device: %s", strerror(errno));
	ktap_result(ok, "ibv_import_device over the context's file");
	if (!ictx)
		return ktap_finish();

	ipd = ibv_import_pd(ictx, pd->handle);
	ktap_result(ipd && ipd->handle == pd->handle && ipd->context == ictx,
		    "ibv_import_pd: the PD under its handle");
	if (!ipd)
		return ktap_finish();

	imr = ibv_import_mr(ipd, mr->handle);
	ok = imr && ktap_expect(imr->lkey == mr->lkey && imr->rkey == mr->rkey &&
				imr->length == mr->length &&
				imr->handle == mr->handle && imr->pd == ipd,
				"imported keys %#x/%#x length %zu, registered %#x/%#x %zu",
				imr->lkey, imr->rkey, imr->length,
				mr->lkey, mr->rkey, mr->length);
	ktap_result(ok, "ibv_import_mr: the MR's keys and length");
	if (!imr)
		return ktap_finish();

	/* Handles that name nothing, or an object of another type. */
	bad_pd = ibv_import_pd(ictx, mr->handle + 1000);
	bad_mr = ibv_import_mr(ipd, pd->handle + 1000);
	ok = ktap_expect(!bad_pd && !bad_mr, "handles naming nothing imported");
	bad_pd = ibv_import_pd(ictx, mr->handle);
	bad_mr = ibv_import_mr(ipd, pd->handle);
	ok = ktap_expect(!bad_pd && !bad_mr, "handles of the other type imported") &&
	     ok;
	ktap_result(ok, "handles that name no object, or one of another type, are refused");

	/* b on the imported context and PD, a on the owner's. */
	ok = !ep_open(&a, 64);
	ctx = ictx;
	pd = ipd;
	ok = ok && !ep_open(&b, 64);
	ctx = own_ctx;
	pd = own_pd;
	ok = ok && !ep_connect(&a, &b) && !ep_connect(&b, &a);
	fill(buf, HALF, 0x1234);
	memset(buf + HALF, 0, HALF);
	ok = ktap_expect(ok, "a QP pair across the two contexts: %s",
			 strerror(errno)) &&
	     write_half(&b, imr) &&
	     ktap_expect(same(buf + HALF, buf, HALF), "the written half");
	ktap_result(ok, "a QP of the imported context writes with the imported MR");
	pair_close(&a, &b);

	/* Forgotten, not freed: the owner frees them. */
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	ok = ktap_expect(!ibv_close_device(ictx), "close the imported context: %s",
			 strerror(errno));
	ok = ktap_expect(!ibv_dereg_mr(mr), "dereg_mr: %s", strerror(errno)) &&
	     ok;
	ok = ktap_expect(!ibv_dealloc_pd(own_pd), "dealloc_pd: %s",
			 strerror(errno)) && ok;
	ok = ktap_expect(!ibv_close_device(own_ctx), "close_device: %s",
			 strerror(errno)) && ok;
	ktap_result(ok, "unimported, then the owner frees the MR and PD");
	return ktap_finish();
}
