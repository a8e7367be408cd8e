/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address handles. The kernel resolves the address once, at creation,
 * and names the AH by a number that UD send WQEs carry.
 */
#include <stdlib.h>

#include "softrdma.h"

/*
 * Our driver data right behind the core response. The core struct ends in
 * a flexible array, which no member may follow, so the driver data goes
 * over it in a union (same layout as core followed by drv).
 */
union srdma_create_ah_resp {
	struct ib_uverbs_create_ah_resp core;
	struct {
		__u8 core_space[sizeof(struct ib_uverbs_create_ah_resp)];
		struct softrdma_create_ah_resp drv;
	};
};

_Static_assert(offsetof(union srdma_create_ah_resp, drv) ==
	       sizeof(struct ib_uverbs_create_ah_resp), "create_ah resp");
_Static_assert(sizeof(union srdma_create_ah_resp) == 12, "create_ah resp");

struct ibv_ah *srdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	union srdma_create_ah_resp resp = {};
	struct srdma_ah *ah;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	if (ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.core, sizeof(resp))) {
		free(ah);
		return NULL;
	}
	ah->ah_num = resp.drv.ah_num;
	return &ah->ibah;
}

int srdma_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	free(to_sah(ibah));
	return 0;
}
