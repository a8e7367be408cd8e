// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures in every create/register/modify verb (failslab.sh).
 *
 * usage: verbs_failslab IBDEV GID_INDEX
 *
 * For each verb, N = 1, 2, ...: /proc/thread-self/fail-nth makes the Nth
 * slab allocation of this thread fail (the failslab fault attribute with
 * ignore-gfp-wait=N, set up by failslab.sh), then the verb runs.  When the
 * injected failure was hit, the verb must fail with an errno (or, if it
 * absorbed the failure, give an object that works and can be destroyed);
 * when it was not hit, the verb made fewer than N allocations and the
 * loop ends.  The kernel must not crash or splat meanwhile, and a failed
 * verb must leave nothing behind (kmemleak, after the test).
 * IBDEV is a softrdma device with GID GID_INDEX (IPv4) on its port.
 * Device creation ("rdma link add" as RDMA netlink) gets a new veth each
 * round, deleted afterwards: a reference a failed creation leaked would
 * keep that deletion waiting (unregister_netdevice: waiting for ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_util.h"

#define MAX_NTH		20000	/* no verb makes this many allocations */
#define NETDEV_DEL_S	60	/* a veth deletion takes a second at most */
#define BUF_SIZE	(64 * 1024)

static int nth_fd = -1;
static struct ibv_device *dev;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_xrcd *xrcd;
static union ibv_gid gid;
static int gid_index;
static void *buf;
static char netdev[32];
static unsigned long total_injected, total_absorbed;

/* The object under test: what a run function made, for its undo. */
static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_mw *mw;
	struct ibv_ah *ah;
	struct ibv_xrcd *xrcd;
	char link[32];
} o;

/* Arm the fault: the @n-th slab allocation from now on fails. */
static void arm(unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	if (pwrite(nth_fd, s, len, 0) != len) {
		perror("fail-nth");
		exit(KSFT_FAIL);
	}
}

/*
 * Disarm; return how many allocations were still to come before the
 * armed one (0: the armed failure was injected).
 */
static unsigned int disarm_left(void)
{
	char s[16] = "";
	ssize_t len = pread(nth_fd, s, sizeof(s) - 1, 0);

	if (len <= 0 || pwrite(nth_fd, "0", 1, 0) != 1) {
		perror("fail-nth");
		exit(KSFT_FAIL);
	}
	return strtoul(s, NULL, 10);
}

/* Disarm; true if the armed failure was injected. */
static bool disarm(void)
{
	return disarm_left() == 0;
}

/* A verb under test: setup (not injected), the verb, its undo. */
struct verb {
	const char *name;
	int (*setup)(void);	/* NULL: nothing to prepare */
	int (*run)(void);	/* 0 or an errno */
	int (*undo)(void);	/* also after a failed run; 0 or an errno */
	/*
	 * 0: every N. Else every N up to this, then every N/4th: device
	 * creation makes a thousand allocations (the RDMA core's sysfs and
	 * GID tables), seconds each under the debug kernel.
	 */
	unsigned int dense;
	/* After a success: does the result hold? 0 or an errno. */
	int (*verify)(void);
	/*
	 * NULL: fail every allocation of the verb. Else only those made
	 * until this driver function returns: the RDMA core mishandles a
	 * failure after it (see the verb's run function).
	 */
	const char *driver_fn;
};

/* errno, or EIO if a failing verb did not set it (an error all the same). */
static int err(void)
{
	return errno ? errno : EIO;
}

#define RET_PTR(expr) ({ errno = 0; (expr) ? 0 : err(); })

/* --- the verbs ------------------------------------------------------------ */

static int run_open_device(void)
{
	return RET_PTR(o.ctx = ibv_open_device(dev));
}

static int undo_close_device(void)
{
	int ret = o.ctx ? ibv_close_device(o.ctx) : 0;

	o.ctx = NULL;
	return ret;
}

static int run_alloc_pd(void)
{
	return RET_PTR(o.pd = ibv_alloc_pd(ctx));
}

static int undo_pd(void)
{
	int ret = o.pd ? ibv_dealloc_pd(o.pd) : 0;

	o.pd = NULL;
	return ret;
}

static int run_reg_mr(void)
{
	return RET_PTR(o.mr = ibv_reg_mr(pd, buf, BUF_SIZE,
					 IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ));
}

static int run_reg_mr_odp(void)
{
	return RET_PTR(o.mr = ibv_reg_mr(pd, buf, BUF_SIZE,
					 IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_ON_DEMAND));
}

static int undo_mr(void)
{
	int ret = o.mr ? ibv_dereg_mr(o.mr) : 0;

	o.mr = NULL;
	return ret;
}

static int setup_mr(void)
{
	return run_reg_mr();
}

static int run_rereg_mr(void)
{
	/* New translation (half the buffer) and access: the whole path. */
	return ibv_rereg_mr(o.mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			    IBV_REREG_MR_CHANGE_ACCESS, NULL,
			    (char *)buf + BUF_SIZE / 2, BUF_SIZE / 2,
			    IBV_ACCESS_LOCAL_WRITE);
}

static int run_create_cq(void)
{
	return RET_PTR(o.cq = ibv_create_cq(ctx, 64, NULL, NULL, 0));
}

static int undo_cq(void)
{
	int ret = o.cq ? ibv_destroy_cq(o.cq) : 0;

	o.cq = NULL;
	return ret;
}

static int setup_cq(void)
{
	return RET_PTR(o.cq = ibv_create_cq(ctx, 16, NULL, NULL, 0));
}

static int run_resize_cq(void)
{
	return ibv_resize_cq(o.cq, 512);
}

static int create_qp(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
	};

	return RET_PTR(o.qp = ibv_create_qp(pd, &init));
}

static int run_create_rc(void) { return create_qp(IBV_QPT_RC); }
static int run_create_uc(void) { return create_qp(IBV_QPT_UC); }
static int run_create_ud(void) { return create_qp(IBV_QPT_UD); }

static int undo_qp(void)
{
	int ret = o.qp ? ibv_destroy_qp(o.qp) : 0;

	o.qp = NULL;
	return ret;
}

static int qp_to_init(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (o.qp->qp_type == IBV_QPT_UD) {
		a.qkey = 0x11111111;
		mask |= IBV_QP_QKEY;
	} else {
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(o.qp, &a, mask);
}

static int qp_to_rtr(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = o.qp->qp_num,	/* itself: loopback */
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
			.port_num = 1,
		},
	};

	if (o.qp->qp_type == IBV_QPT_UD)
		return ibv_modify_qp(o.qp, &a, IBV_QP_STATE);
	if (o.qp->qp_type == IBV_QPT_UC)
		return ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_AV |
				     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN);
	return ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static int qp_to_rts(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 4,
	};

	if (o.qp->qp_type != IBV_QPT_RC)
		return ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return ibv_modify_qp(o.qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int setup_rc_reset(void) { return run_create_rc(); }
static int setup_rc_init(void) { return run_create_rc() ?: qp_to_init(); }
static int setup_rc_rtr(void) { return setup_rc_init() ?: qp_to_rtr(); }
static int setup_ud_reset(void) { return run_create_ud(); }
static int setup_ud_init(void) { return run_create_ud() ?: qp_to_init(); }
static int setup_ud_rtr(void) { return setup_ud_init() ?: qp_to_rtr(); }
static int setup_uc_init(void) { return run_create_uc() ?: qp_to_init(); }

static int run_create_srq(void)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 64, .max_sge = 4 },
	};

	return RET_PTR(o.srq = ibv_create_srq(pd, &init));
}

static int undo_srq(void)
{
	int ret = o.srq ? ibv_destroy_srq(o.srq) : 0;

	o.srq = NULL;
	return ret;
}

static int run_modify_srq(void)
{
	struct ibv_srq_attr a = { .srq_limit = 8 };

	return ibv_modify_srq(o.srq, &a, IBV_SRQ_LIMIT);
}

static int alloc_mw(enum ibv_mw_type type)
{
	return RET_PTR(o.mw = ibv_alloc_mw(pd, type));
}

static int run_alloc_mw1(void) { return alloc_mw(IBV_MW_TYPE_1); }
static int run_alloc_mw2(void) { return alloc_mw(IBV_MW_TYPE_2); }

static int undo_mw(void)
{
	int ret = o.mw ? ibv_dealloc_mw(o.mw) : 0;

	o.mw = NULL;
	return ret;
}

static int run_create_ah(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = { .dgid = gid, .sgid_index = gid_index,
			 .hop_limit = 64 },
		.port_num = 1,
	};

	return RET_PTR(o.ah = ibv_create_ah(pd, &a));
}

static int undo_ah(void)
{
	int ret = o.ah ? ibv_destroy_ah(o.ah) : 0;

	o.ah = NULL;
	return ret;
}

static int run_open_xrcd(void)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};

	return RET_PTR(o.xrcd = ibv_open_xrcd(ctx, &a));
}

static int undo_xrcd(void)
{
	int ret = o.xrcd ? ibv_close_xrcd(o.xrcd) : 0;

	o.xrcd = NULL;
	return ret;
}

static int run_create_xsrq(void)
{
	struct ibv_srq_init_attr_ex init = {
		.attr = { .max_wr = 64, .max_sge = 4 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return RET_PTR(o.srq = ibv_create_srq_ex(ctx, &init));
}

static int run_create_xrc_ini(void)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = cq,
		.cap = { .max_send_wr = 32, .max_send_sge = 4 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};

	return RET_PTR(o.qp = ibv_create_qp_ex(ctx, &init));
}

/*
 * The RDMA core's create_xrc_qp_user() (Linux 6.1) takes a use count on
 * the XRCD after the driver's create_qp, then allocates (__ib_open_qp()'s
 * QP handle, the XRCD's tgt_qps xarray node); when either fails it
 * destroys the QP without dropping that count, so the XRCD can never be
 * closed (kmemleak, and a WARNING when the process exits). That is the
 * core's bug, not softrdma's: this verb's allocations are failed only up
 * to the return of srdma_create_qp() (driver_fn).
 */
static int run_create_xrc_tgt(void)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return RET_PTR(o.qp = ibv_create_qp_ex(ctx, &init));
}

/*
 * "rdma link add NAME type softrdma netdev NETDEV" as the rdma tool sends
 * it (RDMA netlink), so that the whole device creation runs in this
 * thread.  Every attempt gets a new name: a name is free again only once
 * the RDMA core released the device.
 */
static int nl_attr(char *p, int type, const char *s)
{
	struct nlattr *a = (struct nlattr *)p;
	int len = strlen(s) + 1;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy(p + NLA_HDRLEN, s, len);
	return NLA_ALIGN(a->nla_len);
}

static int run_link_add(void)
{
	static unsigned int seq, gen;
	char msg[512] __attribute__((aligned(4))) = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)msg;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char reply[4096] __attribute__((aligned(4)));
	struct nlmsgerr *e;
	int fd, len, ret;

	snprintf(o.link, sizeof(o.link), "srdmafs%u", gen++);
	len = NLMSG_HDRLEN;
	len += nl_attr(msg + len, RDMA_NLDEV_ATTR_DEV_NAME, o.link);
	len += nl_attr(msg + len, RDMA_NLDEV_ATTR_LINK_TYPE, "softrdma");
	len += nl_attr(msg + len, RDMA_NLDEV_ATTR_NDEV_NAME, netdev);
	h->nlmsg_len = len;
	h->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK);
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = ++seq;

	/* The socket is part of the run: its allocations are tested too. */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0)
		return err();
	if (sendto(fd, msg, len, 0, (struct sockaddr *)&sa, sizeof(sa)) != len) {
		ret = err();
		close(fd);
		return ret;
	}
	len = recv(fd, reply, sizeof(reply), 0);
	ret = len < 0 ? err() : 0;
	close(fd);
	if (ret)
		return ret;
	h = (struct nlmsghdr *)reply;
	if (len < (int)NLMSG_HDRLEN + (int)sizeof(*e) || h->nlmsg_type != NLMSG_ERROR)
		return EPROTO;
	e = NLMSG_DATA(h);
	return -e->error;
}

static bool link_exists(const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", name);
	return access(path, F_OK) == 0;
}

/* A fresh veth pair for each round of device creation. */
static int setup_link(void)
{
	static unsigned int gen;
	char cmd[160];

	snprintf(netdev, sizeof(netdev), "fsv%u", gen++);
	snprintf(cmd, sizeof(cmd),
		 "ip link add %s type veth peer name %sp && ip link set %s up",
		 netdev, netdev, netdev);
	return system(cmd) ? EIO : 0;
}

/*
 * Delete the device, then the veth: "ip link del" returns once every
 * reference to the netdev is gone, so one that does not return in time
 * means a leaked reference. It then stays blocked: it is left behind.
 */
static int undo_link(void)
{
	char cmd[96];
	int ret = 0, status, i;
	pid_t pid;

	if (o.link[0] && link_exists(o.link)) {
		snprintf(cmd, sizeof(cmd), "rdma link delete %s", o.link);
		ret = system(cmd) ? EIO : 0;
	}
	o.link[0] = 0;
	pid = fork();
	if (pid == 0) {
		execlp("ip", "ip", "link", "del", netdev, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return errno;
	for (i = 0; i < NETDEV_DEL_S * 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return ret ?: WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : EIO;
		usleep(100000);
	}
	ktap_print("ip link del %s still waits after %d s: a reference to it leaked",
		   netdev, NETDEV_DEL_S);
	return ETIMEDOUT;
}

/* A verb that absorbed a failure must still have done its work. */
static int qp_in(enum ibv_qp_state want)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int ret = ibv_query_qp(o.qp, &a, IBV_QP_STATE, &init);

	return ret ?: a.qp_state == want ? 0 : EPROTO;
}

static int verify_init(void) { return qp_in(IBV_QPS_INIT); }
static int verify_rtr(void) { return qp_in(IBV_QPS_RTR); }
static int verify_rts(void) { return qp_in(IBV_QPS_RTS); }
static int verify_reset(void) { return qp_in(IBV_QPS_RESET); }

static int verify_resize_cq(void)
{
	struct ibv_wc wc;

	if (o.cq->cqe < 512)
		return ERANGE;
	return ibv_poll_cq(o.cq, 1, &wc) == 0 ? 0 : EPROTO;
}

static int verify_cq(void)
{
	struct ibv_wc wc;

	return ibv_poll_cq(o.cq, 1, &wc) == 0 ? 0 : EPROTO;
}

static int verify_srq_limit(void)
{
	struct ibv_srq_attr a;
	int ret = ibv_query_srq(o.srq, &a);

	return ret ?: a.srq_limit == 8 ? 0 : EPROTO;
}

static int verify_mr(void)
{
	return o.mr->length == BUF_SIZE / 2 &&
	       o.mr->addr == (char *)buf + BUF_SIZE / 2 ? 0 : EPROTO;
}

static int verify_link(void)
{
	return link_exists(o.link) ? 0 : ENODEV;
}

/* --- the driver --------------------------------------------------------- */

/*
 * A failed run must leave no object; the handle fields are only set on
 * success, but a half-made device would still be visible in sysfs.
 */
static bool nothing_left(const struct verb *v)
{
	if (v->run == run_link_add && o.link[0] && link_exists(o.link))
		return ktap_expect(false, "%s: failed, yet device %s exists",
				   v->name, o.link);
	return true;
}

/* --- counting allocations up to a driver function's return ------------- */

static const char *const tracefs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};
static const char *trace_dir;

/* Write @val to tracefs file @file (appending if @append); 0 or an errno. */
static int trace_write(const char *file, const char *val, bool append)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", trace_dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = errno ?: EIO;
	close(fd);
	return ret;
}

static void probes_remove(void)
{
	trace_write("events/srdma_fs/enable", "0", false);
	trace_write("kprobe_events", "-:srdma_fs/alloc\n", true);
	trace_write("kprobe_events", "-:srdma_fs/done\n", true);
}

/*
 * How many times this thread consults fault injection (should_fail_ex(),
 * where fail-nth counts down: every slab allocation) during a clean run
 * of @v, until the driver function @v->driver_fn returns: two kprobe
 * events, the trace read back. Allocations in interrupt context do not
 * count (fail-nth counts task context only): each event records its stack
 * pointer, and interrupts run on the CPU's own stacks (x86-64), so only
 * those on the thread's stack, where the driver function returned, count.
 * Not the trace's context flags: an event hit through the probe's int3
 * is recorded in the breakpoint's NMI-like context, whatever the probed
 * code ran in. 0 on error (printed).
 */
static unsigned int allocs_until_return(const struct verb *v)
{
	char buf[256], filter[64], path[160];
	unsigned long long sp, done_sp = 0;
	static unsigned long long alloc_sp[MAX_NTH];
	unsigned int n = 0, nsp = 0, total, i;
	bool returned = false, pinned = false;
	cpu_set_t cpus, one;
	int ret, uret;
	FILE *f;

	for (i = 0; i < sizeof(tracefs) / sizeof(tracefs[0]); i++) {
		snprintf(path, sizeof(path), "%s/kprobe_events", tracefs[i]);
		if (!access(path, W_OK))
			trace_dir = tracefs[i];
	}
	if (!trace_dir) {
		ktap_print("%s: no kprobe events (tracefs)", v->name);
		return 0;
	}
	/*
	 * On one CPU: the trace merges per-CPU buffers by their clocks,
	 * which a guest without a stable TSC does not keep in step.
	 */
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu(), &one);
		pinned = !sched_setaffinity(0, sizeof(one), &one);
	}
	probes_remove();
	snprintf(buf, sizeof(buf), "r:srdma_fs/done softrdma:%s sp=%%sp:x64\n",
		 v->driver_fn);
	snprintf(filter, sizeof(filter), "common_pid == %d", gettid());
	if ((ret = trace_write("kprobe_events", "p:srdma_fs/alloc should_fail_ex sp=%sp:x64\n", true)) ||
	    (ret = trace_write("kprobe_events", buf, true)) ||
	    (ret = trace_write("events/srdma_fs/filter", filter, false)) ||
	    (ret = trace_write("trace", "", false)) ||
	    (ret = trace_write("events/srdma_fs/enable", "1", false))) {
		ktap_print("%s: kprobe events: %s", v->name, strerror(ret));
		probes_remove();
		return 0;
	}
	arm(MAX_NTH);
	errno = 0;
	ret = v->run();
	total = MAX_NTH - disarm_left();
	uret = v->undo();
	trace_write("events/srdma_fs/enable", "0", false);
	if (pinned)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	snprintf(path, sizeof(path), "%s/trace", trace_dir);
	f = fopen(path, "re");
	/* "task-pid [cpu] flags time: event: (where) sp=0x..." */
	while (f && !returned && fgets(buf, sizeof(buf), f)) {
		char *at = strstr(buf, " sp=");

		if (buf[0] == '#' || !at || sscanf(at, " sp=%llx", &sp) != 1)
			continue;
		if (strstr(buf, " done: ")) {
			returned = true;
			done_sp = sp;
		} else if (strstr(buf, " alloc: ") && nsp < MAX_NTH) {
			alloc_sp[nsp++] = sp;
		}
	}
	if (f)
		fclose(f);
	probes_remove();
	/*
	 * A thread's stack is at least 16 KiB, aligned to its size: the
	 * 16 KiB block the driver function returned in holds the frames
	 * below it (a few KiB), and no interrupt stack.
	 */
	for (i = 0; i < nsp; i++)
		n += alloc_sp[i] / 16384 == done_sp / 16384;
	/* The core allocates after the driver: fewer than all, or wrong. */
	if (ret || uret || !returned || !n || n >= total) {
		ktap_print("%s: clean run: %s, undo: %s, %s returned: %s, %u of %u allocations before (%u events)",
			   v->name, strerror(ret), strerror(uret), v->driver_fn,
			   returned ? "yes" : "not seen", n, total, nsp);
		return 0;
	}
	ktap_print("%s: %u allocations on this thread's stack before %s returned (%u in interrupts), %u in all",
		   v->name, n, v->driver_fn, nsp - n, total);
	return n;
}

static void test_verb(const struct verb *v)
{
	unsigned long injected = 0, absorbed = 0, failed = 0;
	unsigned int n, step, last = MAX_NTH;
	bool ok = true, done = false;
	int ret, uret;

	if (v->driver_fn) {
		last = allocs_until_return(v);
		if (!last) {
			ktap_result(false, v->name);
			return;
		}
	}
	for (n = 1; n <= last && ok && !done; n += step) {
		step = v->dense && n > v->dense ? n / 4 : 1;
		if (v->setup && (ret = v->setup())) {
			ok = ktap_expect(false, "%s: setup: %s", v->name,
					 strerror(ret));
			break;
		}
		arm(n);
		errno = 0;
		ret = v->run();
		if (disarm()) {
			injected++;
			if (ret) {
				failed++;
				ok = nothing_left(v);
			} else {
				/*
				 * Absorbed: an allocation with a fallback
				 * (kmemleak's and debugobjects' pools, vmalloc
				 * after kmalloc, ...). The result must hold.
				 */
				absorbed++;
				if (v->verify && (ret = v->verify()))
					ok = ktap_expect(false, "%s: succeeded with allocation %u failed, but the result is wrong: %s",
							 v->name, n, strerror(ret));
			}
		} else {
			/* Fewer than n allocations: the verb's last round. */
			done = true;
			if (ret)
				ok = ktap_expect(false, "%s failed (%s) with no failure injected",
						 v->name, strerror(ret));
			else if (v->verify && (ret = v->verify()))
				ok = ktap_expect(false, "%s: wrong result: %s",
						 v->name, strerror(ret));
		}
		uret = v->undo();
		if (uret && (!ret || v->setup))
			ok = ktap_expect(false, "%s with allocation %u failing returned %s; undoing it then: %s",
					 v->name, n, ret ? strerror(ret) : "success",
					 strerror(uret));
	}
	if (ok && !done && v->driver_fn)
		ktap_print("%s: allocations 1 to %u failed in turn, the last before %s returned; the core's after it not",
			   v->name, last, v->driver_fn);
	else if (ok && !done)
		ok = ktap_expect(false, "%s: still allocating after %u", v->name,
				 MAX_NTH);
	total_injected += injected;
	total_absorbed += absorbed;
	ktap_print("%s: %lu allocations failed by injection (%s up to %u): %lu errors, %lu absorbed",
		   v->name, injected, v->dense ? "sampled" : "each", n - step,
		   failed, absorbed);
	ktap_result(ok, v->name);
}

static const struct verb verbs[] = {
	{ "open_device (alloc_ucontext)", NULL, run_open_device, undo_close_device, 0, NULL, NULL },
	{ "alloc_pd", NULL, run_alloc_pd, undo_pd, 0, NULL, NULL },
	{ "reg_mr", NULL, run_reg_mr, undo_mr, 0, NULL, NULL },
	{ "reg_mr on demand (ODP)", NULL, run_reg_mr_odp, undo_mr, 0, NULL, NULL },
	{ "rereg_mr translation and access", setup_mr, run_rereg_mr, undo_mr, 0, verify_mr, NULL },
	{ "create_cq", NULL, run_create_cq, undo_cq, 0, verify_cq, NULL },
	{ "resize_cq", setup_cq, run_resize_cq, undo_cq, 0, verify_resize_cq, NULL },
	{ "create_qp RC", NULL, run_create_rc, undo_qp, 0, verify_reset, NULL },
	{ "create_qp UC", NULL, run_create_uc, undo_qp, 0, verify_reset, NULL },
	{ "create_qp UD", NULL, run_create_ud, undo_qp, 0, verify_reset, NULL },
	{ "modify_qp RC RESET->INIT", setup_rc_reset, qp_to_init, undo_qp, 0, verify_init, NULL },
	{ "modify_qp RC INIT->RTR", setup_rc_init, qp_to_rtr, undo_qp, 0, verify_rtr, NULL },
	{ "modify_qp RC RTR->RTS", setup_rc_rtr, qp_to_rts, undo_qp, 0, verify_rts, NULL },
	{ "modify_qp UC INIT->RTR", setup_uc_init, qp_to_rtr, undo_qp, 0, verify_rtr, NULL },
	{ "modify_qp UD RESET->INIT", setup_ud_reset, qp_to_init, undo_qp, 0, verify_init, NULL },
	{ "modify_qp UD INIT->RTR", setup_ud_init, qp_to_rtr, undo_qp, 0, verify_rtr, NULL },
	{ "modify_qp UD RTR->RTS", setup_ud_rtr, qp_to_rts, undo_qp, 0, verify_rts, NULL },
	{ "create_srq", NULL, run_create_srq, undo_srq, 0, NULL, NULL },
	{ "modify_srq limit", run_create_srq, run_modify_srq, undo_srq, 0, verify_srq_limit, NULL },
	{ "alloc_mw type 1", NULL, run_alloc_mw1, undo_mw, 0, NULL, NULL },
	{ "alloc_mw type 2", NULL, run_alloc_mw2, undo_mw, 0, NULL, NULL },
	{ "create_ah", NULL, run_create_ah, undo_ah, 0, NULL, NULL },
	{ "open_xrcd", NULL, run_open_xrcd, undo_xrcd, 0, NULL, NULL },
	{ "create_srq_ex XRC", NULL, run_create_xsrq, undo_srq, 0, NULL, NULL },
	{ "create_qp_ex XRC initiator", NULL, run_create_xrc_ini, undo_qp, 0, verify_reset, NULL },
	{ "create_qp_ex XRC target", NULL, run_create_xrc_tgt, undo_qp, 0, NULL,
	  "srdma_create_qp" },
	/* Device creation: the rdma tool's request, in this thread. */
	{ "rdma link add (netlink)", setup_link, run_link_add, undo_link, 48, verify_link, NULL },
};

#define NVERBS	(sizeof(verbs) / sizeof(verbs[0]))

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_device_attr_ex attr;
	unsigned int i;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IBDEV GID_INDEX\n", argv[0]);
		return KSFT_FAIL;
	}
	gid_index = atoi(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_plan(NVERBS);

	/* Page faults under injection would only be retried: avoid them. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		ktap_print("mlockall: %s", strerror(errno));
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0) {
		ktap_print("no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION): %s",
			   strerror(errno));
		return KSFT_SKIP;
	}
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			dev = list[i];
	if (!dev || !(ctx = ibv_open_device(dev))) {
		ktap_print("cannot open %s", argv[1]);
		return KSFT_FAIL;
	}
	buf = aligned_alloc(4096, BUF_SIZE);
	memset(buf, 0, BUF_SIZE);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	ret = ibv_query_gid(ctx, 1, gid_index, &gid);
	if (!buf || !pd || !cq || ret) {
		ktap_print("setup failed: %s", strerror(errno));
		return KSFT_FAIL;
	}
	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_device_ex(ctx, NULL, &attr);

	for (i = 0; i < NVERBS; i++) {
		const struct verb *v = &verbs[i];
		bool xrc = strstr(v->name, "XRC") || v->run == run_open_xrcd;

		if (xrc && !(attr.orig_attr.device_cap_flags & IBV_DEVICE_XRC)) {
			ktap_skip(v->name, "no XRC");
			continue;
		}
		if (v->run == run_reg_mr_odp &&
		    !(attr.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
			ktap_skip(v->name, "no ODP");
			continue;
		}
		if (xrc && v->run != run_open_xrcd && !xrcd) {
			struct ibv_xrcd_init_attr a = {
				.comp_mask = IBV_XRCD_INIT_ATTR_FD |
					     IBV_XRCD_INIT_ATTR_OFLAGS,
				.fd = -1, .oflags = O_CREAT,
			};

			xrcd = ibv_open_xrcd(ctx, &a);
			if (!xrcd) {
				ktap_result(false, v->name);
				continue;
			}
		}
		test_verb(v);
	}
	ktap_print("in all: %lu allocations failed by injection, %lu absorbed by a verb that then worked",
		   total_injected, total_absorbed);

	if (xrcd)
		ibv_close_xrcd(xrcd);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return ktap_finish();
}
