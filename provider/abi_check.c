/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Compile-time proof that verbs_private.h lays the private interface out
 * as rdma-core's libibverbs/driver.h does, for the generation we build
 * for (LP64). The numbers come from rdma-core's sources: v44.0 and v56.1
 * for generation 34, v65.0 for 65. No code: the object is empty.
 *
 * The private structs that embed a public one (ibv_qp_ex and so on) are
 * checked relative to it: the installed verbs.h has the right size, and it
 * changes within a generation (ibv_qp_ex gained wr_flush in v56).
 */
#include <stddef.h>

#include "verbs_private.h"

#define VERBS_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), "size of " #type)
#define VERBS_ASSERT_OFF(type, member, off) \
	_Static_assert(offsetof(type, member) == (off), #type "." #member)

#if IBVERBS_PABI == 65
#define PABI_N(n34, n65)	(n65)
#else
#define PABI_N(n34, n65)	(n34)
#endif

/* Slot of a verb in verbs_context_ops, counted from 0 in the sorted list. */
#define VERBS_ASSERT_OP(member, n34, n65) \
	VERBS_ASSERT_OFF(struct verbs_context_ops, member, \
			 PABI_N(n34, n65) * sizeof(void *))

_Static_assert(sizeof(void *) == 8 && sizeof(long) == 8,
	       "the numbers below are for LP64");

VERBS_ASSERT_SIZE(struct verbs_match_ent, 24);
VERBS_ASSERT_OFF(struct verbs_match_ent, u, 8);
VERBS_ASSERT_OFF(struct verbs_match_ent, kind, 20);

VERBS_ASSERT_SIZE(struct verbs_sysfs_dev, 992);
VERBS_ASSERT_OFF(struct verbs_sysfs_dev, ibdev_name, 112);
VERBS_ASSERT_OFF(struct verbs_sysfs_dev, ibdev_path, 176);
VERBS_ASSERT_OFF(struct verbs_sysfs_dev, driver_id, 952);
VERBS_ASSERT_OFF(struct verbs_sysfs_dev, abi_ver, 968);

VERBS_ASSERT_SIZE(struct verbs_device_ops, 72);
VERBS_ASSERT_OFF(struct verbs_device_ops, match_device, 32);
VERBS_ASSERT_OFF(struct verbs_device_ops, alloc_context, 40);
VERBS_ASSERT_OFF(struct verbs_device_ops, alloc_device, 56);
VERBS_ASSERT_OFF(struct verbs_device_ops, uninit_device, 64);

/* v65 added 17 verbs: alloc_buf, alloc_dmah, create_comp_cntr, ... */
VERBS_ASSERT_SIZE(struct verbs_context_ops, PABI_N(76, 93) * sizeof(void *));
VERBS_ASSERT_OP(advise_mr, 0, 0);
VERBS_ASSERT_OP(alloc_mw, 2, 4);
VERBS_ASSERT_OP(alloc_parent_domain, 4, 6);
VERBS_ASSERT_OP(alloc_pd, 5, 7);
VERBS_ASSERT_OP(attach_mcast, 9, 11);
VERBS_ASSERT_OP(bind_mw, 10, 12);
VERBS_ASSERT_OP(close_xrcd, 11, 13);
VERBS_ASSERT_OP(create_ah, 13, 15);
VERBS_ASSERT_OP(create_cq, 15, 18);
VERBS_ASSERT_OP(create_cq_ex, 16, 19);
VERBS_ASSERT_OP(create_qp, 19, 22);
VERBS_ASSERT_OP(create_qp_ex, 20, 23);
VERBS_ASSERT_OP(create_srq, 22, 25);
VERBS_ASSERT_OP(create_srq_ex, 23, 26);
VERBS_ASSERT_OP(dealloc_mw, 25, 29);
VERBS_ASSERT_OP(dealloc_pd, 26, 30);
VERBS_ASSERT_OP(dereg_mr, 28, 32);
VERBS_ASSERT_OP(destroy_ah, 29, 33);
VERBS_ASSERT_OP(destroy_cq, 31, 36);
VERBS_ASSERT_OP(destroy_qp, 34, 39);
VERBS_ASSERT_OP(destroy_srq, 36, 41);
VERBS_ASSERT_OP(detach_mcast, 38, 43);
VERBS_ASSERT_OP(free_context, 39, 46);
VERBS_ASSERT_OP(get_srq_num, 41, 48);
VERBS_ASSERT_OP(modify_qp, 47, 56);
VERBS_ASSERT_OP(modify_srq, 49, 58);
VERBS_ASSERT_OP(open_xrcd, 52, 61);
VERBS_ASSERT_OP(poll_cq, 53, 62);
VERBS_ASSERT_OP(post_recv, 54, 63);
VERBS_ASSERT_OP(post_send, 55, 64);
VERBS_ASSERT_OP(post_srq_recv, 57, 66);
VERBS_ASSERT_OP(query_device_ex, 58, 69);
VERBS_ASSERT_OP(query_port, 60, 71);
VERBS_ASSERT_OP(query_qp, 61, 73);
VERBS_ASSERT_OP(query_srq, 64, 76);
VERBS_ASSERT_OP(reg_mr, 68, 82);
VERBS_ASSERT_OP(req_notify_cq, 69, 84);
VERBS_ASSERT_OP(rereg_mr, 70, 85);
VERBS_ASSERT_OP(resize_cq, 71, 86);
VERBS_ASSERT_OP(unimport_pd, 75, 92);

/* Private structs that extend a public one: their tail, from its end. */
#define VERBS_ASSERT_TAIL(type, member, base, off) \
	VERBS_ASSERT_OFF(type, member, sizeof(base) + (off))
#define VERBS_ASSERT_TAIL_SIZE(type, base, size) \
	VERBS_ASSERT_SIZE(type, sizeof(base) + (size))

VERBS_ASSERT_TAIL(struct verbs_device, ops, struct ibv_device, 0);
VERBS_ASSERT_TAIL(struct verbs_device, sysfs, struct ibv_device, 32);
VERBS_ASSERT_TAIL_SIZE(struct verbs_device, struct ibv_device, 48);

VERBS_ASSERT_TAIL(struct verbs_mr, mr_type, struct ibv_mr, 0);
VERBS_ASSERT_TAIL(struct verbs_mr, access, struct ibv_mr, 4);
VERBS_ASSERT_TAIL_SIZE(struct verbs_mr, struct ibv_mr, 8);

VERBS_ASSERT_TAIL(struct verbs_dm, handle, struct ibv_dm, 0);
VERBS_ASSERT_TAIL_SIZE(struct verbs_dm, struct ibv_dm, 8);

VERBS_ASSERT_TAIL_SIZE(struct verbs_cq, struct ibv_cq_ex, 0);

VERBS_ASSERT_TAIL(struct verbs_qp, comp_mask, struct ibv_qp_ex, 0);
VERBS_ASSERT_TAIL(struct verbs_qp, xrcd, struct ibv_qp_ex, 8);
VERBS_ASSERT_TAIL_SIZE(struct verbs_qp, struct ibv_qp_ex, 16);

VERBS_ASSERT_TAIL(struct verbs_xrcd, handle, struct ibv_xrcd, 4);
VERBS_ASSERT_TAIL_SIZE(struct verbs_xrcd, struct ibv_xrcd, 8);

VERBS_ASSERT_TAIL(struct verbs_srq, srq_num, struct ibv_srq, 24);
VERBS_ASSERT_TAIL_SIZE(struct verbs_srq, struct ibv_srq, 32);

/* write() commands: kernel uapi, the same in every release. */
VERBS_ASSERT_SIZE(struct ibv_get_context, 16);
VERBS_ASSERT_SIZE(struct ibv_query_port, 24);
VERBS_ASSERT_SIZE(struct ibv_alloc_pd, 16);
VERBS_ASSERT_SIZE(struct ibv_reg_mr, 48);
VERBS_ASSERT_SIZE(struct ex_hdr, 24);
VERBS_ASSERT_SIZE(struct ibv_create_cq_ex, 56);
VERBS_ASSERT_OFF(struct ibv_create_cq_ex, core, 24);
VERBS_ASSERT_SIZE(struct ibv_create_qp_ex, 88);
VERBS_ASSERT_OFF(struct ibv_create_qp_ex, core, 24);
VERBS_ASSERT_SIZE(struct ibv_modify_qp, 120);
VERBS_ASSERT_SIZE(struct ibv_query_qp, 24);
VERBS_ASSERT_SIZE(struct ibv_post_send, 32);
VERBS_ASSERT_SIZE(struct ibv_create_xsrq, 56);
VERBS_ASSERT_SIZE(struct ibv_open_xrcd, 24);
