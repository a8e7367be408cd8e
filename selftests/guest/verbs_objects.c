// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs objects through libibverbs and the softrdma provider: memory
 * regions, completion queues, queue pairs and their state machine, and
 * posting work requests into the shared rings. Nothing here needs the
 * wire: sends are posted but their completions are never waited for.
 *
 * The "no system call" tests run the verb in a thread under a seccomp
 * filter that traps every system call but those made from one known
 * instruction; the SIGSYS handler counts the call and replays it from
 * there, so the verb still works (x86-64 only).
 *
 * usage: verbs_objects IBDEV
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define BUF_SIZE	(64 * 1024)
#define NR_KEYS		64
#define CQ_SIZE		64
#define QP_WR		16
#define QP_SGE		2

/* Made-up remote side of connected QPs: the path is our own IPv4 GID. */
#define DEST_QPN	0x00abcd
#define RQ_PSN		0x123456
#define SQ_PSN		0x654321
#define QP_TIMEOUT	14
#define RETRY_CNT	6
#define RNR_RETRY	5
#define MIN_RNR_TIMER	12
#define QKEY		0x11111111
#define RC_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

#define SQD_WAIT_MS	2000

/* A test returns one of these; a bool from ktap_expect() is FAIL or PASS. */
enum { T_FAIL, T_PASS, T_SKIP };

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	int gid_index;		/* IPv4-mapped RoCEv2 GID, or -1 */
	union ibv_gid gid;
	enum ibv_mtu mtu;
	void *buf;		/* BUF_SIZE bytes, page aligned */
	struct ibv_mr *mr;	/* over @buf, NULL without reg_mr */
	uint32_t lkey;
	char why[128];		/* skip reason of the running test */
};

static int skip(struct env *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->why, sizeof(e->why), fmt, ap);
	va_end(ap);
	return T_SKIP;
}

/* A verb the kernel does not offer (yet) skips; any other error fails. */
static int setup_failed(struct env *e, const char *what, int err)
{
	if (err == EOPNOTSUPP || err == ENOSYS)
		return skip(e, "%s: %s", what, strerror(err));
	ktap_print("%s: %s", what, strerror(err));
	return T_FAIL;
}

static int need_gid(struct env *e)
{
	return e->gid_index < 0 ? skip(e, "no IPv4 RoCEv2 GID on port 1") :
				  T_PASS;
}

/* Objects of one test, torn down in dependency order by fix_fini(). */
struct fix {
	struct ibv_cq *cq;
	struct ibv_qp *qp[3];
	struct ibv_qp_init_attr ia[3];	/* caps as granted */
};

static void fix_fini(struct fix *f)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f->qp); i++)
		if (f->qp[i])
			ibv_destroy_qp(f->qp[i]);
	if (f->cq)
		ibv_destroy_cq(f->cq);
}

/* Create f->qp[i] of @type (and the shared CQ); 0 or an errno. */
static int new_qp_wr(struct env *e, struct fix *f, int i,
		     enum ibv_qp_type type, uint32_t wr)
{
	struct ibv_qp_init_attr *ia = &f->ia[i];

	if (!f->cq) {
		f->cq = ibv_create_cq(e->ctx, CQ_SIZE, NULL, NULL, 0);
		if (!f->cq)
			return errno ? errno : EIO;
	}
	memset(ia, 0, sizeof(*ia));
	ia->send_cq = f->cq;
	ia->recv_cq = f->cq;
	ia->qp_type = type;
	ia->cap.max_send_wr = wr;
	ia->cap.max_recv_wr = wr;
	ia->cap.max_send_sge = QP_SGE;
	ia->cap.max_recv_sge = QP_SGE;
	f->qp[i] = ibv_create_qp(e->pd, ia);
	return f->qp[i] ? 0 : errno ? errno : EIO;
}

static int new_qp(struct env *e, struct fix *f, int i, enum ibv_qp_type type)
{
	return new_qp_wr(e, f, i, type, QP_WR);
}

/* One QP and its CQ, or the test's result (all released) if not. */
static int fix_qp(struct env *e, struct fix *f, enum ibv_qp_type type)
{
	int err = new_qp(e, f, 0, type);

	if (!err)
		return T_PASS;
	fix_fini(f);
	return setup_failed(e, f->cq ? "create_qp" : "create_cq", err);
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* Attributes of each legal step RESET->INIT->RTR->RTS; returns the mask. */
static int init_attr(struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = 1;
	if (qp->qp_type == IBV_QPT_UD) {
		a->qkey = QKEY;
		return mask | IBV_QP_QKEY;
	}
	a->qp_access_flags = qp->qp_type == IBV_QPT_RC ? RC_ACCESS :
						      IBV_ACCESS_REMOTE_WRITE;
	return mask | IBV_QP_ACCESS_FLAGS;
}

static int rtr_attr(struct env *e, struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	int mask = IBV_QP_STATE;

	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	if (qp->qp_type == IBV_QPT_UD)
		return mask;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = e->gid;
	a->ah_attr.grh.sgid_index = e->gid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
	a->path_mtu = e->mtu;
	a->dest_qp_num = DEST_QPN;
	a->rq_psn = RQ_PSN;
	mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (qp->qp_type != IBV_QPT_RC)
		return mask;
	a->max_dest_rd_atomic = e->dev.max_qp_rd_atom ? 1 : 0;
	a->min_rnr_timer = MIN_RNR_TIMER;
	return mask | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}

static int rts_attr(struct env *e, struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = SQ_PSN;
	if (qp->qp_type != IBV_QPT_RC)
		return mask;
	a->timeout = QP_TIMEOUT;
	a->retry_cnt = RETRY_CNT;
	a->rnr_retry = RNR_RETRY;
	a->max_rd_atomic = e->dev.max_qp_init_rd_atom ? 1 : 0;
	return mask | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	       IBV_QP_MAX_QP_RD_ATOMIC;
}

/* Take a new QP from RESET to @to (INIT, RTR or RTS); 0 or an errno. */
static int walk(struct env *e, struct ibv_qp *qp, enum ibv_qp_state to)
{
	struct ibv_qp_attr a;
	int ret;

	ret = ibv_modify_qp(qp, &a, init_attr(qp, &a));
	if (ret || to == IBV_QPS_INIT)
		return ret;
	ret = ibv_modify_qp(qp, &a, rtr_attr(e, qp, &a));
	if (ret || to == IBV_QPS_RTR)
		return ret;
	return ibv_modify_qp(qp, &a, rts_attr(e, qp, &a));
}

static int modify_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* A QP in RTS, or the test's result: skipped if RTS is out of reach. */
static int fix_rts(struct env *e, struct fix *f)
{
	int ret = need_gid(e);

	if (ret != T_PASS)
		return ret;
	ret = fix_qp(e, f, IBV_QPT_RC);
	if (ret != T_PASS)
		return ret;
	ret = walk(e, f->qp[0], IBV_QPS_RTS);
	if (!ret)
		return T_PASS;
	fix_fini(f);
	return skip(e, "RC QP cannot reach RTS: %s", strerror(ret));
}

/* Leave SQD's draining substate (needed before SQD->RTS); false on timeout. */
static bool wait_drained(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int i;

	for (i = 0; i < SQD_WAIT_MS / 10; i++) {
		if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
			return false;
		if (a.qp_state == IBV_QPS_SQD && !a.sq_draining)
			return true;
		usleep(10000);
	}
	return false;
}

static void set_sge(struct env *e, struct ibv_sge *sge, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)e->buf + i * 64;
		sge[i].length = 64;
		sge[i].lkey = e->lkey;
	}
}

/*
 * System call counting (x86-64): a seccomp filter lets through only
 * rt_sigreturn and system calls made by the instruction in srdma_sys;
 * everything else raises SIGSYS, whose handler counts it and replays it
 * through srdma_sys.
 */
#ifdef __x86_64__
#define HAVE_SYSCOUNT	1

long srdma_sys(long nr, long a1, long a2, long a3, long a4, long a5,
	       long a6) __attribute__((visibility("hidden")));
extern const char srdma_sys_ret[] __attribute__((visibility("hidden")));

asm(".pushsection .text\n"
    ".p2align 4\n"
    ".globl srdma_sys\n"
    ".hidden srdma_sys\n"
    ".type srdma_sys, @function\n"
    "srdma_sys:\n"
    "	movq %rdi, %rax\n"
    "	movq %rsi, %rdi\n"
    "	movq %rdx, %rsi\n"
    "	movq %rcx, %rdx\n"
    "	movq %r8, %r10\n"
    "	movq %r9, %r8\n"
    "	movq 8(%rsp), %r9\n"
    "	syscall\n"
    ".globl srdma_sys_ret\n"
    ".hidden srdma_sys_ret\n"
    "srdma_sys_ret:\n"
    "	ret\n"
    ".size srdma_sys, .-srdma_sys\n"
    ".popsection\n");

static volatile unsigned long sys_count;
static volatile int sys_counting;

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	greg_t *r = ((ucontext_t *)ucv)->uc_mcontext.gregs;

	(void)sig;
	if (sys_counting)
		sys_count++;
	r[REG_RAX] = srdma_sys(si->si_syscall, r[REG_RDI], r[REG_RSI],
			       r[REG_RDX], r[REG_R10], r[REG_R8], r[REG_R9]);
}
#endif

struct sysprobe {
	int (*call)(void *arg, int i);	/* one verb call: 0 if it did right */
	void *arg;
	int calls;
	int setup_err;			/* the filter could not be installed */
	int bad_call;			/* first call that did wrong, or -1 */
	int bad_ret;
	unsigned long total;		/* system calls made by all calls */
	unsigned long worst;		/* most made by one call */
};

#ifdef HAVE_SYSCOUNT
static void *sysprobe_thread(void *arg)
{
	uint64_t ip = (uintptr_t)srdma_sys_ret;
	struct sysprobe *sp = arg;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 4, 0),
		/* instruction_pointer, little endian: low word first */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ip >> 32), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };
	int i;

	/* Both apply to this thread only, not to the rest of the test. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		sp->setup_err = errno;
		return NULL;
	}
	for (i = 0; i < sp->calls; i++) {
		unsigned long before = sys_count, n;
		int ret;

		sys_counting = 1;
		ret = sp->call(sp->arg, i);
		sys_counting = 0;
		n = sys_count - before;
		sp->total += n;
		if (n > sp->worst)
			sp->worst = n;
		if (ret) {
			sp->bad_call = i;
			sp->bad_ret = ret;
			break;
		}
	}
	/* The filter stays with the thread: leave without libc's exit path. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	srdma_sys(SYS_exit, 0, 0, 0, 0, 0, 0);
	__builtin_unreachable();
}

/* Run sp->calls calls of sp->call in a filtered thread, or skip. */
static int sysprobe_run(struct env *e, struct sysprobe *sp)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys,
				.sa_flags = SA_SIGINFO };
	struct sigaction old;
	pthread_t t;
	int err;

	sp->bad_call = -1;
	if (sigaction(SIGSYS, &sa, &old))
		return skip(e, "sigaction: %s", strerror(errno));
	err = pthread_create(&t, NULL, sysprobe_thread, sp);
	if (!err)
		pthread_join(t, NULL);
	sigaction(SIGSYS, &old, NULL);
	if (err)
		return skip(e, "pthread_create: %s", strerror(err));
	if (sp->setup_err)
		return skip(e, "seccomp filter: %s", strerror(sp->setup_err));
	if (!ktap_expect(sp->bad_call < 0, "call %d of %d returned %d",
		    sp->bad_call, sp->calls, sp->bad_ret))
		return T_FAIL;
	return T_PASS;
}
#else
static int sysprobe_run(struct env *e, struct sysprobe *sp)
{
	(void)sp;
	return skip(e, "system call counting needs x86-64");
}
#endif

/* ---- memory regions ---- */

static int t_mr_reg(struct env *e)
{
	struct ibv_mr *mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, MR_ACCESS);
	bool ok;

	if (!mr)
		return setup_failed(e, "reg_mr", errno);
	ok = ktap_expect(mr->lkey && mr->rkey, "lkey %#x rkey %#x", mr->lkey,
		    mr->rkey);
	ok &= ktap_expect(mr->addr == e->buf && mr->length == BUF_SIZE,
		     "addr %p length %zu", mr->addr, mr->length);
	ok &= ktap_expect(!ibv_dereg_mr(mr), "dereg_mr: %s", strerror(errno));
	return ok;
}

static int t_mr_distinct(struct env *e)
{
	struct ibv_mr *a, *b;
	bool ok;

	a = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, MR_ACCESS);
	if (!a)
		return setup_failed(e, "reg_mr", errno);
	b = ibv_reg_mr(e->pd, e->buf, BUF_SIZE / 2, MR_ACCESS);
	if (!b) {
		ibv_dereg_mr(a);
		return setup_failed(e, "second reg_mr", errno);
	}
	ok = ktap_expect(a->lkey != b->lkey && a->rkey != b->rkey,
		    "keys %#x/%#x and %#x/%#x", a->lkey, a->rkey, b->lkey,
		    b->rkey);
	ibv_dereg_mr(b);
	ibv_dereg_mr(a);
	return ok;
}

static int t_mr_dereg(struct env *e)
{
	struct ibv_mr *mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, MR_ACCESS);
	int ret;

	if (!mr)
		return setup_failed(e, "reg_mr", errno);
	ret = ibv_dereg_mr(mr);
	return ktap_expect(!ret, "dereg_mr: %s", strerror(ret));
}

/* IB spec (o10-37) and ib_check_mr_access(): remote write needs local. */
static int t_mr_remote_write_needs_local(struct env *e)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, IBV_ACCESS_REMOTE_WRITE);
	if (mr) {
		ibv_dereg_mr(mr);
		return ktap_expect(false, "reg_mr succeeded");
	}
	return ktap_expect(errno == EINVAL, "errno %d (%s)", errno,
		      strerror(errno));
}

static int t_mr_zero_length(struct env *e)
{
	struct ibv_mr *mr = ibv_reg_mr(e->pd, e->buf, 0, MR_ACCESS);

	if (mr) {
		ibv_dereg_mr(mr);
		return ktap_expect(false, "reg_mr of 0 bytes succeeded");
	}
	ktap_print("errno %d (%s)", errno, strerror(errno));
	return errno == EOPNOTSUPP ? skip(e, "reg_mr not supported") : T_PASS;
}

static int t_mr_unmapped(struct env *e)
{
	size_t len = 4 * getpagesize();
	struct ibv_mr *mr;
	void *p;

	p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || munmap(p, len))
		return skip(e, "mmap: %s", strerror(errno));
	mr = ibv_reg_mr(e->pd, p, len, MR_ACCESS);
	if (mr) {
		ibv_dereg_mr(mr);
		return ktap_expect(false, "reg_mr of an unmapped range succeeded");
	}
	ktap_print("errno %d (%s)", errno, strerror(errno));
	return errno == EOPNOTSUPP ? skip(e, "reg_mr not supported") : T_PASS;
}

/*
 * Keys one can predict from an earlier one let a peer reach memory it was
 * never told about. Weak, deterministic check: register and deregister
 * NR_KEYS MRs in turn; a counter (+1, +256, or the same key reused) makes
 * most consecutive rkey differences equal.
 */
static int t_mr_keys_unguessable(struct env *e)
{
	uint32_t key[NR_KEYS], diff[NR_KEYS - 1];
	int i, j, same, most = 0;
	struct ibv_mr *mr;

	for (i = 0; i < NR_KEYS; i++) {
		mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, MR_ACCESS);
		if (!mr)
			return setup_failed(e, "reg_mr", errno);
		key[i] = mr->rkey;
		if (ibv_dereg_mr(mr))
			return ktap_expect(false, "dereg_mr: %s", strerror(errno));
	}
	for (i = 0; i < NR_KEYS - 1; i++)
		diff[i] = key[i + 1] - key[i];
	for (i = 0; i < NR_KEYS - 1; i++) {
		for (same = 0, j = 0; j < NR_KEYS - 1; j++)
			same += diff[j] == diff[i];
		if (same > most)
			most = same;
	}
	return ktap_expect(most < (NR_KEYS - 1) / 2,
		      "%d of %d consecutive rkey differences are equal (%#x, %#x, %#x, ...)",
		      most, NR_KEYS - 1, key[0], key[1], key[2]);
}

/* The core refuses to free a PD that objects still use (EBUSY). */
static int t_pd_busy_mr(struct env *e)
{
	struct ibv_pd *pd = ibv_alloc_pd(e->ctx);
	struct ibv_mr *mr;
	int ret;
	bool ok;

	if (!pd)
		return ktap_expect(false, "alloc_pd: %s", strerror(errno));
	mr = ibv_reg_mr(pd, e->buf, BUF_SIZE, MR_ACCESS);
	if (!mr) {
		ibv_dealloc_pd(pd);
		return setup_failed(e, "reg_mr", errno);
	}
	ret = ibv_dealloc_pd(pd);
	ok = ktap_expect(ret == EBUSY, "dealloc_pd: %d (%s)", ret, strerror(ret));
	ibv_dereg_mr(mr);
	if (!ret)	/* freed under the MR: nothing more to release */
		return T_FAIL;
	ibv_dealloc_pd(pd);
	return ok;
}

static int t_pd_free_after_dereg(struct env *e)
{
	struct ibv_pd *pd = ibv_alloc_pd(e->ctx);
	struct ibv_mr *mr;
	int ret;

	if (!pd)
		return ktap_expect(false, "alloc_pd: %s", strerror(errno));
	mr = ibv_reg_mr(pd, e->buf, BUF_SIZE, MR_ACCESS);
	if (!mr) {
		ibv_dealloc_pd(pd);
		return setup_failed(e, "reg_mr", errno);
	}
	ret = ibv_dereg_mr(mr);
	if (!ktap_expect(!ret, "dereg_mr: %s", strerror(ret)))
		return T_FAIL;
	ret = ibv_dealloc_pd(pd);
	return ktap_expect(!ret, "dealloc_pd: %s", strerror(ret));
}

/* ---- completion queues ---- */

static int t_cq_sizes(struct env *e)
{
	int sizes[] = { 1, 2, 3, 15, 16, 17, 255, 256, 1000, 0 };
	struct ibv_cq *cq;
	bool ok = true;
	size_t i;

	if (!ktap_expect(e->dev.max_cqe > 0, "query_device: max_cqe %d",
		    e->dev.max_cqe))
		return T_FAIL;
	/* Last, the largest allowed, if its ring is of a sane size. */
	sizes[ARRAY_SIZE(sizes) - 1] = e->dev.max_cqe <= (1 << 18) ?
				       e->dev.max_cqe : 1 << 18;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		if (sizes[i] > e->dev.max_cqe)
			continue;
		cq = ibv_create_cq(e->ctx, sizes[i], NULL, NULL, 0);
		if (!cq) {
			if (i == 0)
				return setup_failed(e, "create_cq", errno);
			ok = ktap_expect(false, "create_cq(%d): %s", sizes[i],
				    strerror(errno));
			continue;
		}
		ok &= ktap_expect(cq->cqe >= sizes[i], "create_cq(%d): cqe %d",
			     sizes[i], cq->cqe);
		ok &= ktap_expect(!ibv_destroy_cq(cq), "destroy_cq(%d) failed",
			     sizes[i]);
	}
	return ok;
}

static int t_cq_too_big(struct env *e)
{
	struct ibv_cq *cq;

	if (e->dev.max_cqe <= 0 || e->dev.max_cqe == INT32_MAX)
		return skip(e, "max_cqe is %d", e->dev.max_cqe);
	errno = 0;
	cq = ibv_create_cq(e->ctx, e->dev.max_cqe + 1, NULL, NULL, 0);
	if (cq) {
		ibv_destroy_cq(cq);
		return ktap_expect(false, "create_cq(max_cqe + 1) succeeded");
	}
	if (errno == EOPNOTSUPP)
		return skip(e, "create_cq not supported");
	return ktap_expect(errno == EINVAL, "errno %d (%s)", errno,
		      strerror(errno));
}

static int t_cq_poll_empty(struct env *e)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, CQ_SIZE, NULL, NULL, 0);
	struct ibv_wc wc[4];
	int n;

	if (!cq)
		return setup_failed(e, "create_cq", errno);
	n = ibv_poll_cq(cq, ARRAY_SIZE(wc), wc);
	ibv_destroy_cq(cq);
	return ktap_expect(n == 0, "poll_cq returned %d", n);
}

static int call_poll_cq(void *arg, int i)
{
	struct ibv_wc wc;

	(void)i;
	return ibv_poll_cq(arg, 1, &wc);
}

static int t_cq_poll_no_syscall(struct env *e)
{
	struct ibv_cq *cq = ibv_create_cq(e->ctx, CQ_SIZE, NULL, NULL, 0);
	struct sysprobe sp = { .call = call_poll_cq, .calls = 1000 };
	int ret;

	if (!cq)
		return setup_failed(e, "create_cq", errno);
	sp.arg = cq;
	ret = sysprobe_run(e, &sp);
	ibv_destroy_cq(cq);
	if (ret != T_PASS)
		return ret;
	return ktap_expect(sp.total == 0, "%lu system calls in %d poll_cq calls",
		      sp.total, sp.calls);
}

static int t_cq_req_notify(struct env *e)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(e->ctx);
	struct ibv_cq *cq;
	int r0, r1;

	if (!ch)
		return setup_failed(e, "create_comp_channel", errno);
	cq = ibv_create_cq(e->ctx, CQ_SIZE, NULL, ch, 0);
	if (!cq) {
		ibv_destroy_comp_channel(ch);
		return setup_failed(e, "create_cq", errno);
	}
	r0 = ibv_req_notify_cq(cq, 0);
	r1 = ibv_req_notify_cq(cq, 1);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
	if (r0 == EOPNOTSUPP)
		return skip(e, "req_notify_cq not supported");
	return ktap_expect(!r0 && !r1, "req_notify_cq: %d, solicited: %d", r0, r1);
}

/* An armed CQ that gets no completion raises no event. */
static int t_cq_no_spurious_event(struct env *e)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(e->ctx);
	struct pollfd pfd;
	struct ibv_cq *cq;
	int ret, n;

	if (!ch)
		return setup_failed(e, "create_comp_channel", errno);
	cq = ibv_create_cq(e->ctx, CQ_SIZE, NULL, ch, 0);
	if (!cq) {
		ibv_destroy_comp_channel(ch);
		return setup_failed(e, "create_cq", errno);
	}
	ret = ibv_req_notify_cq(cq, 0);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	n = poll(&pfd, 1, 100);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
	if (ret)
		return ret == EOPNOTSUPP ? skip(e, "req_notify_cq not supported") :
			ktap_expect(false, "req_notify_cq: %s", strerror(ret));
	return ktap_expect(n == 0, "poll on the channel returned %d", n);
}

/* IBA C11-17; the core checks it first and answers EBUSY. */
static int t_cq_busy(struct env *e)
{
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);

	if (ret != T_PASS)
		return ret;
	ret = ibv_destroy_cq(f.cq);
	if (!ret)
		f.cq = NULL;	/* gone: don't destroy it twice */
	fix_fini(&f);
	return ktap_expect(ret == EBUSY, "destroy_cq: %d (%s)", ret, strerror(ret));
}

static int t_cq_free_after_qp(struct env *e)
{
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);

	if (ret != T_PASS)
		return ret;
	ret = ibv_destroy_qp(f.qp[0]);
	if (!ktap_expect(!ret, "destroy_qp: %s", strerror(ret)))
		return T_FAIL;
	f.qp[0] = NULL;
	ret = ibv_destroy_cq(f.cq);
	if (!ret)
		f.cq = NULL;
	fix_fini(&f);
	return ktap_expect(!ret, "destroy_cq: %s", strerror(ret));
}

/* ---- queue pairs: creation ---- */

static bool caps_ok(const struct ibv_qp_cap *c, uint32_t wr)
{
	return ktap_expect(c->max_send_wr >= wr && c->max_recv_wr >= wr &&
		      c->max_send_sge >= QP_SGE && c->max_recv_sge >= QP_SGE,
		      "caps: send %u/%u recv %u/%u", c->max_send_wr,
		      c->max_send_sge, c->max_recv_wr, c->max_recv_sge);
}

/* QPN 0 and 1 are the special QPs; QPNs are 24 bits. */
static bool qpn_ok(const struct ibv_qp *qp)
{
	return ktap_expect(qp->qp_num > 1 && qp->qp_num <= 0xffffff,
		      "qp_num %#x", qp->qp_num);
}

static int t_qp_create(struct env *e, enum ibv_qp_type type)
{
	struct fix f = {};
	int ret = fix_qp(e, &f, type);
	bool ok;

	if (ret != T_PASS)
		return ret;
	ok = caps_ok(&f.ia[0].cap, QP_WR);
	ok &= qpn_ok(f.qp[0]);
	ok &= ktap_expect(f.qp[0]->qp_type == type, "qp_type %d", f.qp[0]->qp_type);
	fix_fini(&f);
	return ok;
}

static int t_qp_create_rc(struct env *e)
{
	return t_qp_create(e, IBV_QPT_RC);
}

static int t_qp_create_uc(struct env *e)
{
	return t_qp_create(e, IBV_QPT_UC);
}

static int t_qp_create_ud(struct env *e)
{
	return t_qp_create(e, IBV_QPT_UD);
}

static int t_qp_distinct_qpn(struct env *e)
{
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);
	bool ok;

	if (ret != T_PASS)
		return ret;
	ret = new_qp(e, &f, 1, IBV_QPT_RC) ?: new_qp(e, &f, 2, IBV_QPT_UD);
	if (ret) {
		fix_fini(&f);
		return ktap_expect(false, "create_qp: %s", strerror(ret));
	}
	ok = ktap_expect(f.qp[0]->qp_num != f.qp[1]->qp_num &&
		    f.qp[0]->qp_num != f.qp[2]->qp_num &&
		    f.qp[1]->qp_num != f.qp[2]->qp_num,
		    "qp_nums %#x %#x %#x", f.qp[0]->qp_num, f.qp[1]->qp_num,
		    f.qp[2]->qp_num);
	fix_fini(&f);
	return ok;
}

static int t_qp_new_is_reset(struct env *e)
{
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);

	if (ret != T_PASS)
		return ret;
	ret = qp_state(f.qp[0]);
	fix_fini(&f);
	return ktap_expect(ret == IBV_QPS_RESET, "query_qp: state %d", ret);
}

/* ---- queue pairs: the state machine (IBA 10.3.1, ib_modify_qp_is_ok) ---- */

static int t_qp_path(struct env *e, enum ibv_qp_type type)
{
	struct fix f = {};
	int ret = type == IBV_QPT_UD ? T_PASS : need_gid(e);
	enum ibv_qp_state s;
	struct ibv_qp_attr a;
	bool ok = true;

	if (ret == T_PASS)
		ret = fix_qp(e, &f, type);
	if (ret != T_PASS)
		return ret;
	for (s = IBV_QPS_INIT; ok && s <= IBV_QPS_RTS; s++) {
		if (s == IBV_QPS_INIT)
			ret = ibv_modify_qp(f.qp[0], &a, init_attr(f.qp[0], &a));
		else if (s == IBV_QPS_RTR)
			ret = ibv_modify_qp(f.qp[0], &a,
					    rtr_attr(e, f.qp[0], &a));
		else
			ret = ibv_modify_qp(f.qp[0], &a,
					    rts_attr(e, f.qp[0], &a));
		ok = ktap_expect(!ret, "to state %d: %s", s, strerror(ret)) &&
		     ktap_expect(qp_state(f.qp[0]) == (int)s, "query_qp: state %d",
			    qp_state(f.qp[0]));
	}
	fix_fini(&f);
	return ok;
}

static int t_qp_path_rc(struct env *e)
{
	return t_qp_path(e, IBV_QPT_RC);
}

static int t_qp_path_uc(struct env *e)
{
	return t_qp_path(e, IBV_QPT_UC);
}

static int t_qp_path_ud(struct env *e)
{
	return t_qp_path(e, IBV_QPT_UD);
}

#define EXPECT_ATTR(field, want) \
	ktap_expect(a.field == (want), #field " %u, set %u", \
	       (unsigned int)a.field, (unsigned int)(want))

static int t_qp_query_attrs(struct env *e)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct fix f = {};
	int ret = fix_rts(e, &f);
	bool ok;

	if (ret != T_PASS)
		return ret;
	memset(&a, 0, sizeof(a));
	ret = ibv_query_qp(f.qp[0], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_AV |
			   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |
			   IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			   IBV_QP_RNR_RETRY, &ia);
	fix_fini(&f);
	if (!ktap_expect(!ret, "query_qp: %s", strerror(ret)))
		return T_FAIL;
	ok = EXPECT_ATTR(qp_state, IBV_QPS_RTS);
	ok &= EXPECT_ATTR(pkey_index, 0);
	ok &= EXPECT_ATTR(port_num, 1);
	ok &= EXPECT_ATTR(qp_access_flags, RC_ACCESS);
	ok &= EXPECT_ATTR(path_mtu, e->mtu);
	ok &= EXPECT_ATTR(dest_qp_num, DEST_QPN);
	ok &= EXPECT_ATTR(rq_psn, RQ_PSN);
	ok &= EXPECT_ATTR(sq_psn, SQ_PSN);
	ok &= EXPECT_ATTR(min_rnr_timer, MIN_RNR_TIMER);
	ok &= EXPECT_ATTR(timeout, QP_TIMEOUT);
	ok &= EXPECT_ATTR(retry_cnt, RETRY_CNT);
	ok &= EXPECT_ATTR(rnr_retry, RNR_RETRY);
	ok &= EXPECT_ATTR(ah_attr.is_global, 1);
	ok &= EXPECT_ATTR(ah_attr.port_num, 1);
	ok &= EXPECT_ATTR(ah_attr.grh.sgid_index, e->gid_index);
	ok &= ktap_expect(!memcmp(&a.ah_attr.grh.dgid, &e->gid, sizeof(e->gid)),
		     "ah_attr.grh.dgid differs from the one set");
	return ok;
}

/* Expect @ret to be EINVAL from a refused transition. */
static int refused(int ret, const char *what)
{
	return ktap_expect(ret == EINVAL, "%s: %d (%s)", what, ret, strerror(ret));
}

static int t_qp_reset_to_rtr(struct env *e)
{
	struct ibv_qp_attr a;
	struct fix f = {};
	int ret = need_gid(e);

	if (ret == T_PASS)
		ret = fix_qp(e, &f, IBV_QPT_RC);
	if (ret != T_PASS)
		return ret;
	ret = ibv_modify_qp(f.qp[0], &a, rtr_attr(e, f.qp[0], &a));
	fix_fini(&f);
	return refused(ret, "RESET->RTR");
}

static int t_qp_reset_to_rts(struct env *e)
{
	struct ibv_qp_attr a;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);

	if (ret != T_PASS)
		return ret;
	ret = ibv_modify_qp(f.qp[0], &a, rts_attr(e, f.qp[0], &a));
	fix_fini(&f);
	return refused(ret, "RESET->RTS");
}

static int t_qp_init_to_rts(struct env *e)
{
	struct ibv_qp_attr a;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);

	if (ret != T_PASS)
		return ret;
	ret = walk(e, f.qp[0], IBV_QPS_INIT);
	if (!ktap_expect(!ret, "RESET->INIT: %s", strerror(ret))) {
		fix_fini(&f);
		return T_FAIL;
	}
	ret = ibv_modify_qp(f.qp[0], &a, rts_attr(e, f.qp[0], &a));
	fix_fini(&f);
	return refused(ret, "INIT->RTS");
}

static int t_qp_init_missing_port(struct env *e)
{
	struct ibv_qp_attr a;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);

	if (ret != T_PASS)
		return ret;
	ret = ibv_modify_qp(f.qp[0], &a, init_attr(f.qp[0], &a) & ~IBV_QP_PORT);
	fix_fini(&f);
	return refused(ret, "RESET->INIT without PORT");
}

static int t_qp_init_extra_attr(struct env *e)
{
	struct ibv_qp_attr a;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);
	int mask;

	if (ret != T_PASS)
		return ret;
	mask = init_attr(f.qp[0], &a) | IBV_QP_SQ_PSN;
	a.sq_psn = SQ_PSN;
	ret = ibv_modify_qp(f.qp[0], &a, mask);
	fix_fini(&f);
	return refused(ret, "RESET->INIT with SQ_PSN");
}

static int t_qp_refused_keeps_state(struct env *e)
{
	struct ibv_qp_attr a;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);
	bool ok;

	if (ret != T_PASS)
		return ret;
	ibv_modify_qp(f.qp[0], &a, rts_attr(e, f.qp[0], &a));
	ok = ktap_expect(qp_state(f.qp[0]) == IBV_QPS_RESET,
		    "after RESET->RTS: state %d", qp_state(f.qp[0]));
	ret = walk(e, f.qp[0], IBV_QPS_INIT);
	ok &= ktap_expect(!ret, "RESET->INIT: %s", strerror(ret));
	ibv_modify_qp(f.qp[0], &a, rts_attr(e, f.qp[0], &a));
	ok &= ktap_expect(qp_state(f.qp[0]) == IBV_QPS_INIT,
		     "after INIT->RTS: state %d", qp_state(f.qp[0]));
	fix_fini(&f);
	return ok;
}

/*
 * Every state but RESET may move to ERR (the core's table has no
 * RESET->ERR). SQD is left out if the device has no SQD.
 */
static int t_qp_to_err(struct env *e)
{
	enum ibv_qp_state from[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
				     IBV_QPS_SQD };
	int ret = need_gid(e);
	bool ok = true;
	size_t i;

	if (ret != T_PASS)
		return ret;
	for (i = 0; i < ARRAY_SIZE(from); i++) {
		struct fix f = {};

		ret = fix_qp(e, &f, IBV_QPT_RC);
		if (ret != T_PASS)
			return ret;
		ret = walk(e, f.qp[0], from[i] == IBV_QPS_SQD ? IBV_QPS_RTS :
								 from[i]);
		if (!ret && from[i] == IBV_QPS_SQD) {
			ret = modify_state(f.qp[0], IBV_QPS_SQD);
			if (ret == EOPNOTSUPP) {
				ktap_print("SQD not supported: not checked");
				fix_fini(&f);
				continue;
			}
		}
		if (!ktap_expect(!ret, "reaching state %d: %s", from[i],
			    strerror(ret))) {
			fix_fini(&f);
			return T_FAIL;
		}
		ret = modify_state(f.qp[0], IBV_QPS_ERR);
		ok &= ktap_expect(!ret, "%d->ERR: %s", from[i], strerror(ret)) &&
		      ktap_expect(qp_state(f.qp[0]) == IBV_QPS_ERR,
			     "after %d->ERR: state %d", from[i],
			     qp_state(f.qp[0]));
		fix_fini(&f);
	}
	return ok;
}

static int t_qp_err_to_reset(struct env *e)
{
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);
	bool ok;

	if (ret != T_PASS)
		return ret;
	ret = walk(e, f.qp[0], IBV_QPS_INIT) ?:
	      modify_state(f.qp[0], IBV_QPS_ERR);
	if (!ktap_expect(!ret, "reaching ERR: %s", strerror(ret))) {
		fix_fini(&f);
		return T_FAIL;
	}
	ret = modify_state(f.qp[0], IBV_QPS_RESET);
	ok = ktap_expect(!ret, "ERR->RESET: %s", strerror(ret)) &&
	     ktap_expect(qp_state(f.qp[0]) == IBV_QPS_RESET, "state %d",
		    qp_state(f.qp[0]));
	/* A reset QP is as good as new. */
	ret = walk(e, f.qp[0], IBV_QPS_INIT);
	ok &= ktap_expect(!ret, "RESET->INIT after ERR: %s", strerror(ret));
	fix_fini(&f);
	return ok;
}

static int t_qp_sqd(struct env *e)
{
	struct fix f = {};
	int ret = fix_rts(e, &f);
	bool ok;

	if (ret != T_PASS)
		return ret;
	ret = modify_state(f.qp[0], IBV_QPS_SQD);
	if (ret == EOPNOTSUPP) {
		fix_fini(&f);
		return skip(e, "SQD not supported");
	}
	ok = ktap_expect(!ret, "RTS->SQD: %s", strerror(ret)) &&
	     ktap_expect(wait_drained(f.qp[0]),
		    "not drained to SQD in %d ms (state %d)", SQD_WAIT_MS,
		    qp_state(f.qp[0]));
	if (ok) {
		ret = modify_state(f.qp[0], IBV_QPS_RTS);
		ok = ktap_expect(!ret, "SQD->RTS: %s", strerror(ret)) &&
		     ktap_expect(qp_state(f.qp[0]) == IBV_QPS_RTS, "state %d",
			    qp_state(f.qp[0]));
	}
	fix_fini(&f);
	return ok;
}

/* ---- receive queue ---- */

static int post_one_recv(struct env *e, struct ibv_qp *qp, uint64_t id,
			 struct ibv_recv_wr **bad)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	int ret;

	set_sge(e, &sge, 1);
	*bad = NULL;
	ret = ibv_post_recv(qp, &wr, bad);
	if (*bad == &wr)	/* don't hand back a dead stack address */
		*bad = (struct ibv_recv_wr *)1;
	return ret;
}

/*
 * IBA C10-97.2.1: no receives before INIT. rxe's provider refuses them
 * with EINVAL; libibverbs documents bad_wr as the first WR that failed.
 */
static int t_recv_in_reset(struct env *e)
{
	struct ibv_recv_wr *bad;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);

	if (ret != T_PASS)
		return ret;
	ret = post_one_recv(e, f.qp[0], 1, &bad);
	fix_fini(&f);
	return ktap_expect(ret == EINVAL && bad == (void *)1,
		      "post_recv: %d (%s), bad_wr %s", ret, strerror(ret),
		      bad ? "set" : "not set");
}

/* Post single receives until one fails; returns how many went in. */
static int fill_rq(struct env *e, struct ibv_qp *qp, int limit, int *ret,
		   struct ibv_recv_wr **bad)
{
	int n;

	for (n = 0; n < limit; n++) {
		*ret = post_one_recv(e, qp, n, bad);
		if (*ret)
			break;
	}
	return n;
}

static int t_recv_overflow(struct env *e)
{
	struct ibv_recv_wr *bad;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC), n;
	uint32_t cap;

	if (ret != T_PASS)
		return ret;
	cap = f.ia[0].cap.max_recv_wr;
	ret = walk(e, f.qp[0], IBV_QPS_INIT);
	if (!ktap_expect(!ret, "RESET->INIT: %s", strerror(ret))) {
		fix_fini(&f);
		return T_FAIL;
	}
	n = fill_rq(e, f.qp[0], cap + 4096, &ret, &bad);
	fix_fini(&f);
	return ktap_expect((uint32_t)n >= cap && ret == ENOMEM && bad == (void *)1,
		      "%d receives went in (max_recv_wr %u), then %d (%s), bad_wr %s",
		      n, cap, ret, strerror(ret), bad ? "set" : "not set");
}

/* A chain that overflows: the WRs before bad_wr are posted, none after. */
static int t_recv_chain_overflow(struct env *e)
{
	struct ibv_recv_wr wr[2], *bad;
	struct ibv_sge sge[2];
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC), depth, n;
	uint32_t cap;

	if (ret != T_PASS)
		return ret;
	cap = f.ia[0].cap.max_recv_wr;
	ret = new_qp(e, &f, 1, IBV_QPT_RC) ?:
	      walk(e, f.qp[0], IBV_QPS_INIT) ?: walk(e, f.qp[1], IBV_QPS_INIT);
	if (!ktap_expect(!ret, "setup: %s", strerror(ret)))
		goto fail;
	/* Learn the real depth on one QP, fill the other to one short. */
	depth = fill_rq(e, f.qp[0], cap + 4096, &ret, &bad);
	if (!ktap_expect(ret == ENOMEM && depth > 0, "depth %d, then %d (%s)",
		    depth, ret, strerror(ret)))
		goto fail;
	n = fill_rq(e, f.qp[1], depth - 1, &ret, &bad);
	if (!ktap_expect(n == depth - 1, "second QP took %d of %d", n, depth - 1))
		goto fail;
	set_sge(e, sge, 2);
	wr[0] = (struct ibv_recv_wr){ .wr_id = 100, .next = &wr[1],
				      .sg_list = &sge[0], .num_sge = 1 };
	wr[1] = (struct ibv_recv_wr){ .wr_id = 101, .sg_list = &sge[1],
				      .num_sge = 1 };
	bad = NULL;
	ret = ibv_post_recv(f.qp[1], wr, &bad);
	fix_fini(&f);
	return ktap_expect(ret == ENOMEM && bad == &wr[1],
		      "post_recv of 2 into 1 free slot: %d (%s), bad_wr %s",
		      ret, strerror(ret),
		      bad == &wr[1] ? "2nd" : bad == wr ? "1st" : "other");
fail:
	fix_fini(&f);
	return T_FAIL;
}

static int t_recv_too_many_sge(struct env *e)
{
	struct ibv_recv_wr wr = {}, *bad = NULL;
	struct ibv_sge *sge = NULL;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC), n;

	if (ret != T_PASS)
		return ret;
	n = f.ia[0].cap.max_recv_sge + 1;
	ret = walk(e, f.qp[0], IBV_QPS_INIT);
	if (!ret) {
		sge = calloc(n, sizeof(*sge));
		ret = sge ? 0 : ENOMEM;
	}
	if (!ktap_expect(!ret, "setup: %s", strerror(ret))) {
		fix_fini(&f);
		return T_FAIL;
	}
	set_sge(e, sge, 1);
	wr.sg_list = sge;
	wr.num_sge = n;
	ret = ibv_post_recv(f.qp[0], &wr, &bad);
	fix_fini(&f);
	free(sge);
	return ktap_expect(ret == EINVAL && bad == &wr,
		      "post_recv with %d SGEs: %d (%s), bad_wr %s", n, ret,
		      strerror(ret), bad ? "set" : "not set");
}

struct recv_probe {
	struct env *e;
	struct ibv_qp *qp;
};

static int call_post_recv(void *arg, int i)
{
	struct recv_probe *rp = arg;
	struct ibv_recv_wr *bad;

	return post_one_recv(rp->e, rp->qp, i, &bad);
}

static int t_recv_no_syscall(struct env *e)
{
	struct sysprobe sp = { .call = call_post_recv };
	struct recv_probe rp = { .e = e };
	uint32_t depth = e->dev.max_qp_wr < 256 ? e->dev.max_qp_wr : 256;
	struct fix f = {};
	int ret = new_qp_wr(e, &f, 0, IBV_QPT_RC, depth);

	if (ret) {
		fix_fini(&f);
		return setup_failed(e, f.cq ? "create_qp" : "create_cq", ret);
	}
	ret = walk(e, f.qp[0], IBV_QPS_INIT);
	if (!ktap_expect(!ret, "RESET->INIT: %s", strerror(ret))) {
		fix_fini(&f);
		return T_FAIL;
	}
	rp.qp = f.qp[0];
	sp.arg = &rp;
	sp.calls = depth;
	ret = sysprobe_run(e, &sp);
	fix_fini(&f);
	if (ret != T_PASS)
		return ret;
	return ktap_expect(sp.total == 0, "%lu system calls in %d post_recv calls",
		      sp.total, sp.calls);
}

/* ---- send queue ---- */

static int post_send1(struct env *e, struct ibv_qp *qp, int opcode,
		      int nsge, bool *bad_ok)
{
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_sge sge[64];
	int ret;

	if (nsge > (int)ARRAY_SIZE(sge))
		nsge = ARRAY_SIZE(sge);
	set_sge(e, sge, nsge);
	wr.wr_id = 1;
	wr.opcode = opcode;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	ret = ibv_post_send(qp, &wr, &bad);
	*bad_ok = bad == &wr;
	return ret;
}

/*
 * IBA: sends are refused before RTS. rxe fails the doorbell with EINVAL
 * ("qp not ready to send"); bad_wr must name the first WR.
 */
static int t_send_before_rts(struct env *e)
{
	enum ibv_qp_state s, last = e->gid_index < 0 ? IBV_QPS_INIT :
							 IBV_QPS_RTR;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC);
	struct ibv_qp_attr a;
	bool ok = true, bad_ok;

	if (ret != T_PASS)
		return ret;
	for (s = IBV_QPS_RESET; ok && s <= last; s++) {
		ret = 0;
		if (s == IBV_QPS_INIT)
			ret = ibv_modify_qp(f.qp[0], &a, init_attr(f.qp[0], &a));
		else if (s == IBV_QPS_RTR)
			ret = ibv_modify_qp(f.qp[0], &a,
					    rtr_attr(e, f.qp[0], &a));
		if (!ktap_expect(!ret, "to state %d: %s", s, strerror(ret))) {
			ok = false;
			break;
		}
		ret = post_send1(e, f.qp[0], IBV_WR_SEND, 1, &bad_ok);
		ok = ktap_expect(ret == EINVAL && bad_ok,
			    "post_send in state %d: %d (%s), bad_wr %s", s,
			    ret, strerror(ret), bad_ok ? "set" : "not set");
	}
	if (last == IBV_QPS_INIT)
		ktap_print("no IPv4 GID: RTR not checked");
	fix_fini(&f);
	return ok;
}

static int t_send_bad_opcode(struct env *e)
{
	struct fix f = {};
	int ret = fix_rts(e, &f);
	bool bad_ok;

	if (ret != T_PASS)
		return ret;
	ret = post_send1(e, f.qp[0], 0x7f, 1, &bad_ok);
	fix_fini(&f);
	return ktap_expect(ret == EINVAL && bad_ok,
		      "post_send with opcode 0x7f: %d (%s), bad_wr %s", ret,
		      strerror(ret), bad_ok ? "set" : "not set");
}

static int t_send_too_many_sge(struct env *e)
{
	struct fix f = {};
	int ret = fix_rts(e, &f), n;
	bool bad_ok;

	if (ret != T_PASS)
		return ret;
	n = f.ia[0].cap.max_send_sge + 1;
	if (n > 64) {
		fix_fini(&f);
		return skip(e, "max_send_sge %d is over the test's 63", n - 1);
	}
	ret = post_send1(e, f.qp[0], IBV_WR_SEND, n, &bad_ok);
	fix_fini(&f);
	return ktap_expect(ret == EINVAL && bad_ok,
		      "post_send with %d SGEs: %d (%s), bad_wr %s", n, ret,
		      strerror(ret), bad_ok ? "set" : "not set");
}

#define SEND_SINGLE	8
#define SEND_CHAIN	4

struct send_probe {
	struct env *e;
	struct ibv_qp *qp;
	struct ibv_sge sge;
	struct ibv_send_wr wr[SEND_CHAIN];
};

/* SEND_SINGLE calls of one WR, then one call with a chain. */
static int call_post_send(void *arg, int i)
{
	struct send_probe *p = arg;
	struct ibv_send_wr *bad;
	int k;

	for (k = 0; k < SEND_CHAIN; k++) {
		p->wr[k] = (struct ibv_send_wr){
			.wr_id = i * SEND_CHAIN + k,
			.sg_list = &p->sge,
			.num_sge = 1,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};
		if (i == SEND_SINGLE && k + 1 < SEND_CHAIN)
			p->wr[k].next = &p->wr[k + 1];
	}
	return ibv_post_send(p->qp, p->wr, &bad);
}

static int t_send_one_syscall(struct env *e)
{
	struct sysprobe sp = { .call = call_post_send,
			       .calls = SEND_SINGLE + 1 };
	struct send_probe p = { .e = e };
	struct fix f = {};
	int ret = fix_rts(e, &f);

	if (ret != T_PASS)
		return ret;
	p.qp = f.qp[0];
	set_sge(e, &p.sge, 1);
	sp.arg = &p;
	ret = sysprobe_run(e, &sp);
	fix_fini(&f);
	if (ret != T_PASS)
		return ret;
	ktap_print("%lu system calls in %d post_send calls", sp.total,
		   sp.calls);
	return ktap_expect(sp.worst <= 1, "a post_send call made %lu system calls",
		      sp.worst);
}

static int t_destroy_qp_with_recvs(struct env *e)
{
	struct ibv_recv_wr *bad;
	struct fix f = {};
	int ret = fix_qp(e, &f, IBV_QPT_RC), i;

	if (ret != T_PASS)
		return ret;
	ret = walk(e, f.qp[0], IBV_QPS_INIT);
	for (i = 0; !ret && i < 4; i++)
		ret = post_one_recv(e, f.qp[0], i, &bad);
	if (!ktap_expect(!ret, "setup: %s", strerror(ret))) {
		fix_fini(&f);
		return T_FAIL;
	}
	ret = ibv_destroy_qp(f.qp[0]);
	if (!ret)
		f.qp[0] = NULL;
	fix_fini(&f);
	return ktap_expect(!ret, "destroy_qp: %s", strerror(ret));
}

static const struct {
	const char *name;
	int (*fn)(struct env *e);
} tests[] = {
	{ "reg_mr: non-zero lkey and rkey, addr and length as given", t_mr_reg },
	{ "reg_mr: two MRs have different keys", t_mr_distinct },
	{ "dereg_mr of a registered MR succeeds", t_mr_dereg },
	{ "reg_mr with REMOTE_WRITE but not LOCAL_WRITE fails EINVAL",
	  t_mr_remote_write_needs_local },
	{ "reg_mr of length 0 fails", t_mr_zero_length },
	{ "reg_mr of an unmapped range fails", t_mr_unmapped },
	{ "rkeys are not a simple sequence", t_mr_keys_unguessable },
	{ "dealloc_pd with a live MR fails EBUSY", t_pd_busy_mr },
	{ "dealloc_pd succeeds once its MR is deregistered",
	  t_pd_free_after_dereg },
	{ "create_cq grants at least the CQEs asked for", t_cq_sizes },
	{ "create_cq beyond max_cqe fails EINVAL", t_cq_too_big },
	{ "poll_cq on an empty CQ returns 0", t_cq_poll_empty },
	{ "poll_cq makes no system call", t_cq_poll_no_syscall },
	{ "req_notify_cq, all and solicited, succeeds", t_cq_req_notify },
	{ "an armed CQ without completions raises no event",
	  t_cq_no_spurious_event },
	{ "destroy_cq of a CQ a QP uses fails EBUSY", t_cq_busy },
	{ "destroy_cq succeeds once its QP is destroyed", t_cq_free_after_qp },
	{ "create_qp RC: caps as asked or more, a valid qp_num",
	  t_qp_create_rc },
	{ "create_qp UC", t_qp_create_uc },
	{ "create_qp UD", t_qp_create_ud },
	{ "QPs have different qp_nums", t_qp_distinct_qpn },
	{ "query_qp of a new QP reports RESET", t_qp_new_is_reset },
	{ "RC QP: RESET->INIT->RTR->RTS", t_qp_path_rc },
	{ "UC QP: RESET->INIT->RTR->RTS", t_qp_path_uc },
	{ "UD QP: RESET->INIT->RTR->RTS", t_qp_path_ud },
	{ "query_qp returns the attributes set", t_qp_query_attrs },
	{ "modify_qp RESET->RTR fails EINVAL", t_qp_reset_to_rtr },
	{ "modify_qp RESET->RTS fails EINVAL", t_qp_reset_to_rts },
	{ "modify_qp INIT->RTS fails EINVAL", t_qp_init_to_rts },
	{ "modify_qp RESET->INIT without PORT fails EINVAL",
	  t_qp_init_missing_port },
	{ "modify_qp RESET->INIT with SQ_PSN fails EINVAL",
	  t_qp_init_extra_attr },
	{ "a refused modify_qp leaves the state as it was",
	  t_qp_refused_keeps_state },
	{ "INIT, RTR, RTS and SQD move to ERR", t_qp_to_err },
	{ "ERR->RESET succeeds and the QP can be used again",
	  t_qp_err_to_reset },
	{ "RTS->SQD->RTS", t_qp_sqd },
	{ "post_recv in RESET fails EINVAL", t_recv_in_reset },
	{ "post_recv past the queue depth fails ENOMEM", t_recv_overflow },
	{ "post_recv of a chain stops at the first WR that does not fit",
	  t_recv_chain_overflow },
	{ "post_recv with more SGEs than max_recv_sge fails EINVAL",
	  t_recv_too_many_sge },
	{ "post_recv makes no system call", t_recv_no_syscall },
	{ "post_send before RTS fails EINVAL", t_send_before_rts },
	{ "post_send with an invalid opcode fails EINVAL", t_send_bad_opcode },
	{ "post_send with more SGEs than max_send_sge fails EINVAL",
	  t_send_too_many_sge },
	{ "post_send makes at most one system call", t_send_one_syscall },
	{ "destroy_qp with posted receives succeeds", t_destroy_qp_with_recvs },
};

/* The IPv4-mapped RoCEv2 GID of port 1: the destination of our paths. */
static void find_gid(struct env *e)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_gid_entry ge;
	int i;

	e->gid_index = -1;
	for (i = 0; i < e->port.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(e->ctx, 1, i, &ge, 0))
			continue;
		if (ge.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(ge.gid.raw, v4mapped, sizeof(v4mapped))) {
			e->gid_index = i;
			e->gid = ge.gid;
			return;
		}
	}
	ktap_print("no IPv4 RoCEv2 GID: tests that need a path will skip");
}

static bool env_init(struct env *e, const char *name)
{
	e->ctx = open_by_name(name);
	if (!e->ctx)
		return ktap_expect(false, "cannot open %s: is the provider loaded?",
			      name);
	if (ibv_query_device(e->ctx, &e->dev) ||
	    ibv_query_port(e->ctx, 1, &e->port))
		return ktap_expect(false, "query_device/query_port: %s",
			      strerror(errno));
	e->pd = ibv_alloc_pd(e->ctx);
	if (!e->pd)
		return ktap_expect(false, "alloc_pd: %s", strerror(errno));
	if (posix_memalign(&e->buf, getpagesize(), BUF_SIZE))
		return ktap_expect(false, "out of memory");
	memset(e->buf, 0, BUF_SIZE);
	/* SGEs of posted WRs point here; lkey 0 if there is no reg_mr. */
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	e->lkey = e->mr ? e->mr->lkey : 0;
	e->mtu = e->port.active_mtu < IBV_MTU_1024 ? e->port.active_mtu :
						     IBV_MTU_1024;
	find_gid(e);
	return true;
}

int main(int argc, char **argv)
{
	static struct env e;
	size_t i;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s IBDEV\n", argv[0]);
		return KSFT_FAIL;
	}

	ktap_plan(ARRAY_SIZE(tests) + 2);
	if (!ktap_result(env_init(&e, argv[1]), "open device, allocate a PD"))
		return KSFT_FAIL;
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		e.why[0] = '\0';
		ret = tests[i].fn(&e);
		if (ret == T_SKIP)
			ktap_skip(tests[i].name, e.why);
		else
			ktap_result(ret == T_PASS, tests[i].name);
	}
	ret = e.mr ? ibv_dereg_mr(e.mr) : 0;
	ret |= ibv_dealloc_pd(e.pd);
	ret |= ibv_close_device(e.ctx);
	ktap_result(!ret, "everything released, device closed");
	free(e.buf);
	return ktap_finish();
}
