// SPDX-License-Identifier: GPL-2.0
/*
 * RC atomics on one device (loopback): what CMP_AND_SWP and FETCH_AND_ADD
 * return and leave in memory, their atomicity across QPs, and the errors
 * of a misaligned target, a target without remote atomic access and a
 * local buffer that is not 8 bytes.
 *
 * usage: rc_atomic IBDEV [GID_INDEX]
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"
#include "loop_qp.h"

#define NPAIRS		4	/* QPs adding to one counter at once */
#define NADDS		500	/* FETCH_AND_ADDs each */
#define DEPTH		32	/* outstanding per QP */

static uint64_t *target;	/* remote side: the atomics' 8-byte words */
static uint64_t *result;	/* local side: one word per atomic */
static struct ibv_mr *target_mr, *result_mr, *noatomic_mr;

static int post_atomic(struct ep *e, uint64_t wr_id, enum ibv_wr_opcode op,
		       uint64_t raddr, uint32_t rkey, uint64_t compare_add,
		       uint64_t swap, uint64_t *res, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)res, .length = len, .lkey = result_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr, .rkey = rkey,
			       .compare_add = compare_add, .swap = swap },
	}, *bad;

	return ibv_post_send(e->qp, &wr, &bad);
}

/* One atomic on a fresh pair; its completion must carry @status. */
static bool one_atomic(enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		       uint64_t compare_add, uint64_t swap, uint32_t len,
		       enum ibv_wc_status status)
{
	struct ep a = {}, b = {};
	bool ok = pair_open(&a, &b, 64);
	int ret;

	if (ok) {
		ret = post_atomic(&a, 7, op, raddr, rkey, compare_add, swap,
				  result, len);
		ok = ktap_expect(!ret, "post: %s", strerror(ret)) &&
		     wc_ok(a.cq, 7, status);
	}
	pair_close(&a, &b);
	return ok;
}

static void t_fetch_add(void)
{
	bool ok;

	target[0] = 0x1122334455667788ull;
	result[0] = 0;
	ok = one_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)target,
			target_mr->rkey, 0x100000001ull, 0, 8, IBV_WC_SUCCESS) &&
	     ktap_expect(result[0] == 0x1122334455667788ull &&
			 target[0] == 0x1122334555667789ull,
			 "returned %#llx, memory %#llx",
			 (unsigned long long)result[0],
			 (unsigned long long)target[0]);
	ktap_result(ok, "FETCH_AND_ADD returns the old value and adds");
}

static void t_cmp_swap(bool match)
{
	uint64_t old = 0xdeadbeefcafef00dull, swap = 0x0123456789abcdefull;
	bool ok;

	target[1] = old;
	result[0] = 0;
	ok = one_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)&target[1],
			target_mr->rkey, match ? old : old + 1, swap, 8,
			IBV_WC_SUCCESS) &&
	     ktap_expect(result[0] == old &&
			 target[1] == (match ? swap : old),
			 "returned %#llx, memory %#llx",
			 (unsigned long long)result[0],
			 (unsigned long long)target[1]);
	ktap_result(ok, match ?
		    "CMP_AND_SWP that matches swaps and returns the old value" :
		    "CMP_AND_SWP that does not match leaves memory as it was");
}

/*
 * NPAIRS QPs add 1 to one counter NADDS times each, DEPTH in flight: the
 * counter ends at NPAIRS * NADDS and every value before it was returned
 * exactly once.
 */
static void t_concurrent(void)
{
	struct ep a[NPAIRS] = {}, b[NPAIRS] = {};
	int posted[NPAIRS] = {}, done[NPAIRS] = {}, total = 0, i, ret;
	uint8_t *seen = calloc(NPAIRS * NADDS, 1);
	uint64_t end = now_ms() + 120000;
	bool ok = seen != NULL;

	target[2] = 0;
	for (i = 0; ok && i < NPAIRS; i++)
		ok = pair_open(&a[i], &b[i], 2 * DEPTH);
	while (ok && total < NPAIRS * NADDS && now_ms() < end) {
		for (i = 0; ok && i < NPAIRS; i++) {
			struct ibv_wc wc;
			int slot;

			while (ok && posted[i] < NADDS &&
			       posted[i] - done[i] < DEPTH) {
				slot = i * NADDS + posted[i];
				ret = post_atomic(&a[i], slot,
						  IBV_WR_ATOMIC_FETCH_AND_ADD,
						  (uintptr_t)&target[2],
						  target_mr->rkey, 1, 0,
						  &result[slot], 8);
				ok = ktap_expect(!ret, "post: %s",
						 strerror(ret));
				posted[i]++;
			}
			while (ok && ibv_poll_cq(a[i].cq, 1, &wc) == 1) {
				ok = ktap_expect(wc.status == IBV_WC_SUCCESS,
						 "QP %d: %s", i,
						 ibv_wc_status_str(wc.status));
				done[i]++;
				total++;
			}
		}
	}
	ok = ok && ktap_expect(total == NPAIRS * NADDS,
			       "%d of %d completed", total, NPAIRS * NADDS) &&
	     ktap_expect(target[2] == NPAIRS * NADDS, "counter %llu",
			 (unsigned long long)target[2]);
	for (i = 0; ok && i < NPAIRS * NADDS; i++) {
		ok = ktap_expect(result[i] < NPAIRS * NADDS &&
				 !seen[result[i]],
				 "value %llu returned twice or out of range",
				 (unsigned long long)result[i]);
		if (ok)
			seen[result[i]] = 1;
	}
	for (i = 0; i < NPAIRS; i++) {
		pair_close(&a[i], &b[i]);
	}
	free(seen);
	ktap_result(ok, "FETCH_AND_ADDs of 4 QPs on one word are atomic: each old value returned once");
}

static void t_errors(void)
{
	bool ok;

	target[3] = 42;
	ok = one_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD,
			(uintptr_t)&target[3] + 4, target_mr->rkey, 1, 0, 8,
			IBV_WC_REM_INV_REQ_ERR) &&
	     ktap_expect(target[3] == 42, "memory changed: %llu",
			 (unsigned long long)target[3]);
	ktap_result(ok, "a misaligned target completes with REM_INV_REQ_ERR, memory unchanged");

	ok = one_atomic(IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)noatomic_mr->addr,
			noatomic_mr->rkey, 0, 1, 8, IBV_WC_REM_ACCESS_ERR) &&
	     ktap_expect(*(uint64_t *)noatomic_mr->addr == 0,
			 "memory changed");
	ktap_result(ok, "a target without remote atomic access completes with REM_ACCESS_ERR");

	ok = one_atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)&target[3],
			target_mr->rkey, 1, 0, 4, IBV_WC_LOC_LEN_ERR) &&
	     ktap_expect(target[3] == 42, "memory changed");
	ktap_result(ok, "a local buffer that is not 8 bytes completes with LOC_LEN_ERR");
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dev;
	void *plain;

	if (!loop_open(argc, argv, 7) || ibv_query_device(ctx, &dev))
		return KSFT_FAIL;
	if (dev.atomic_cap == IBV_ATOMIC_NONE) {
		ktap_print("%s has no atomics", argv[1]);
		return KSFT_FAIL;
	}
	target = aligned_alloc(4096, 4096);
	result = aligned_alloc(4096, NPAIRS * NADDS * 8);
	plain = calloc(1, 4096);
	if (!target || !result || !plain)
		return KSFT_FAIL;
	target_mr = ibv_reg_mr(pd, target, 4096, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_ATOMIC);
	result_mr = ibv_reg_mr(pd, result, NPAIRS * NADDS * 8,
			       IBV_ACCESS_LOCAL_WRITE);
	noatomic_mr = ibv_reg_mr(pd, plain, 4096, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ);
	if (!target_mr || !result_mr || !noatomic_mr) {
		ktap_print("reg_mr: %s", strerror(errno));
		return KSFT_FAIL;
	}

	t_fetch_add();
	t_cmp_swap(true);
	t_cmp_swap(false);
	t_concurrent();
	t_errors();
	return ktap_finish();
}
