/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels softrdma builds
 * for (Debian 12's 6.1, Debian 13's 6.12, unstable's 7.x), in one place:
 * the driver uses the names below and never tests a version itself.
 *
 * Where an interface changed is found by Kbuild's feature tests (the
 * SRDMA_HAVE_* flags, grepped from the kernel's own headers), not by
 * version numbers, so a distribution kernel with a backport builds too.
 * Included at the end of srdma.h: the glue needs the driver's verbs.
 */
#ifndef SRDMA_COMPAT_H
#define SRDMA_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/timer.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/uverbs_ioctl.h>

/*
 * IBA 1.5's memory placement operations (6.2). ATOMIC WRITE only travels
 * through our own rings, so 6.1 has it too, under uverbs' capability bit;
 * FLUSH needs MRs registered with a FLUSH access flag, which 6.1's core
 * refuses (EINVAL): no FLUSH there. Persistent memory we have none of:
 * FLUSH_PERSISTENT is never offered.
 */
#define SRDMA_ODP_FLUSH		BIT(6)	/* IB_UVERBS_ODP_SUPPORT_FLUSH */
#define SRDMA_ODP_ATOMIC_WRITE	BIT(7)	/* IB_UVERBS_ODP_SUPPORT_ATOMIC_WRITE */
#ifdef SRDMA_HAVE_FLUSH
#define SRDMA_ACCESS_FLUSH	IB_ACCESS_FLUSH_GLOBAL
#define SRDMA_DEVICE_PLACEMENT	(IB_DEVICE_FLUSH_GLOBAL | IB_DEVICE_ATOMIC_WRITE)
#define SRDMA_ODP_PLACEMENT	(SRDMA_ODP_FLUSH | SRDMA_ODP_ATOMIC_WRITE)
#else
#define IB_ACCESS_FLUSH_GLOBAL		BIT(8)	/* never granted */
#define IB_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define SRDMA_ACCESS_FLUSH	0
#define SRDMA_DEVICE_PLACEMENT	BIT_ULL(40)	/* IB_UVERBS_DEVICE_ATOMIC_WRITE */
#define SRDMA_ODP_PLACEMENT	SRDMA_ODP_ATOMIC_WRITE
#endif

/* 6.16 renamed from_timer(). */
#ifndef timer_container_of
#define timer_container_of(var, t, field) from_timer(var, t, field)
#endif

/* 6.13 added hrtimer_setup(); hrtimer_init() went in 6.15. */
static inline void
srdma_hrtimer_setup(struct hrtimer *timer,
		    enum hrtimer_restart (*fn)(struct hrtimer *),
		    clockid_t clock, enum hrtimer_mode mode)
{
#ifdef SRDMA_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/* 6.3 made a VMA's flags writable through vm_flags_set() only. */
static inline void srdma_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
#ifdef SRDMA_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* 7.x dropped the IPv6 stubs: IPv6 is built in. */
#ifdef SRDMA_HAVE_IPV6_STUBS
#include <net/ipv6_stubs.h>

static inline struct dst_entry *srdma_ip6_route(struct net *net,
						struct flowi6 *fl6)
{
	return ipv6_stub->ipv6_dst_lookup_flow(net, NULL, fl6, NULL);
}
#else
#include <net/ip6_route.h>

static inline struct dst_entry *srdma_ip6_route(struct net *net,
						struct flowi6 *fl6)
{
	return ip6_dst_lookup_flow(net, NULL, fl6, NULL);
}
#endif

/* The UDP tunnel calls take the struct sock since 7.x. */
static inline void srdma_udp_tunnel_setup(struct net *net, struct socket *sock,
					  struct udp_tunnel_sock_cfg *cfg)
{
#ifdef SRDMA_HAVE_UDP_TUNNEL_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

static inline void srdma_udp_tunnel_release(struct socket *sock)
{
#ifdef SRDMA_HAVE_UDP_TUNNEL_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/* Pinned user memory: ib_umem_get() became ib_umem_get_va() in 7.x. */
static inline struct ib_umem *srdma_umem_get(struct ib_device *dev, u64 addr,
					     u64 len, int access)
{
#ifdef SRDMA_HAVE_UMEM_GET_VA
	return ib_umem_get_va(dev, addr, len, access);
#else
	return ib_umem_get(dev, addr, len, access);
#endif
}

/*
 * ODP page state. 6.15 keeps an HMM PFN with its VALID/WRITE flags for
 * each small page (map.pfn_list); before, a "DMA address" (the page's
 * kernel address, for a virtual-DMA device) with READ/WRITE_ALLOWED bits
 * per umem page. srdma_odp_core_kva() reads it only right after
 * ib_umem_odp_map_dma_and_lock() mapped @addr, under the umem_mutex it
 * returns with: 6.15's hmm_range_fault() writes map.pfn_list before the
 * core checks for a racing invalidation, so at any other time an entry
 * may name a page already freed.
 */
#ifdef SRDMA_HAVE_ODP_HMM_MAP
#include <linux/hmm.h>

/*
 * ODP over huge pages (IB_ACCESS_HUGETLB): this core fills map.pfn_list
 * per small page but ib_umem_odp_unmap_dma_pages() clears it per huge
 * page, indexing it as if per huge page: not offered here.
 */
#define SRDMA_ODP_ACCESS_HUGETLB	0

static inline u64 srdma_odp_map_access(bool write)
{
	return write ? HMM_PFN_WRITE : 0;
}

/* Kernel address of the umem page at @addr | SRDMA_ODP_KVA_WRITE, or 0. */
static inline unsigned long srdma_odp_core_kva(struct ib_umem_odp *odp,
					       u64 addr)
{
	unsigned long pfn;

	lockdep_assert_held(&odp->umem_mutex);
	pfn = odp->map.pfn_list[(addr - ib_umem_start(odp)) >> PAGE_SHIFT];
	if (!(pfn & HMM_PFN_VALID))
		return 0;
	return (unsigned long)page_address(hmm_pfn_to_page(pfn)) |
	       (pfn & HMM_PFN_WRITE ? SRDMA_ODP_KVA_WRITE : 0);
}
#else
/* One dma_list entry per huge page, mapped and cleared alike. */
#define SRDMA_ODP_ACCESS_HUGETLB	IB_ACCESS_HUGETLB

static inline u64 srdma_odp_map_access(bool write)
{
	return ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
}

static inline unsigned long srdma_odp_core_kva(struct ib_umem_odp *odp,
					       u64 addr)
{
	dma_addr_t dma;

	lockdep_assert_held(&odp->umem_mutex);
	dma = odp->dma_list[(addr - ib_umem_start(odp)) >> odp->page_shift];
	if (!(dma & ODP_READ_ALLOWED_BIT))
		return 0;
	return (unsigned long)(dma & ODP_DMA_ADDR_MASK) |
	       (dma & ODP_WRITE_ALLOWED_BIT ? SRDMA_ODP_KVA_WRITE : 0);
}
#endif

/*
 * Verbs whose signature changed: create_cq gets the attribute bundle
 * (6.11; NULL for a kernel CQ), reg_user_mr a DMA handle (6.17), and
 * resize_cq became resize_user_cq with an unsigned size (7.x). The
 * driver keeps one signature; these adapt it. main.c adds them with
 * ib_set_device_ops().
 */
#ifdef SRDMA_HAVE_CREATE_CQ_ATTRS
static inline int srdma_compat_create_cq(struct ib_cq *ibcq,
					 const struct ib_cq_init_attr *attr,
					 struct uverbs_attr_bundle *attrs)
{
	return srdma_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define srdma_compat_create_cq srdma_create_cq
#endif

#ifdef SRDMA_HAVE_DMAH
static inline struct ib_mr *
srdma_compat_reg_user_mr(struct ib_pd *pd, u64 start, u64 length, u64 iova,
			 int access, struct ib_dmah *dmah,
			 struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return srdma_reg_user_mr(pd, start, length, iova, access, udata);
}
#else
#define srdma_compat_reg_user_mr srdma_reg_user_mr
#endif

#ifdef SRDMA_HAVE_RESIZE_USER_CQ
static inline int srdma_compat_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
					 struct ib_udata *udata)
{
	if (cqe > INT_MAX)
		return -EINVAL;
	return srdma_resize_cq(ibcq, cqe, udata);
}
#endif

/*
 * ibv_query_port_speed (7.x): the netdev's link speed in 100 Mb/s units;
 * an unknown speed counts as ib_get_eth_speed() counts it (SDR 1X, 2.5
 * Gb/s), so that it agrees with query_port.
 */
#ifdef SRDMA_HAVE_QUERY_PORT_SPEED
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>

static inline int srdma_query_port_speed(struct ib_device *ibdev, u32 port,
					 u64 *speed)
{
	struct ethtool_link_ksettings lks;
	int err;

	rtnl_lock();
	err = __ethtool_get_link_ksettings(to_sdev(ibdev)->ndev, &lks);
	rtnl_unlock();
	if (err)
		return err;
	*speed = lks.base.speed == SPEED_UNKNOWN || !lks.base.speed ?
		 25 : lks.base.speed / 100;
	return 0;
}
#endif

static const struct ib_device_ops srdma_compat_ops __maybe_unused = {
#ifdef SRDMA_HAVE_QUERY_PORT_SPEED
	.query_port_speed = srdma_query_port_speed,
#endif
	.create_cq = srdma_compat_create_cq,
	.reg_user_mr = srdma_compat_reg_user_mr,
#ifdef SRDMA_HAVE_RESIZE_USER_CQ
	.resize_user_cq = srdma_compat_resize_cq,
#else
	.resize_cq = srdma_resize_cq,
#endif
};

#endif /* SRDMA_COMPAT_H */
