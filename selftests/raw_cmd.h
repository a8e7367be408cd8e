/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uverbs commands a test writes to the device fd by hand, as a hostile
 * program would, past the provider that would check or serialise them.
 * The command structs are the provider's (verbs_private.h, through
 * softrdma.h): include that first.
 */
#ifndef SRDMA_RAW_CMD_H
#define SRDMA_RAW_CMD_H

#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/* The SQ doorbell the provider rings: a POST_SEND with no WR. */
static inline int raw_sq_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.core = {
			.response = (uintptr_t)&resp,
			.qp_handle = qp->handle,
			/* Checked by the kernel even with no WRs. */
			.wqe_size = sizeof(struct ibv_send_wr),
		},
	};

	return write(qp->context->cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd) ?
	       0 : errno;
}

#endif /* SRDMA_RAW_CMD_H */
