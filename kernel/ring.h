/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rings shared with userspace (layout in uapi/softrdma-abi.h): the kernel
 * side of a CQ (we produce) or a work queue (we consume).
 *
 * The kernel's own index lives here, never only in shared memory; the
 * peer's index is read once per use and checked, so a corrupt user index
 * can make a queue fail but never makes us touch memory outside it.
 */
#ifndef SRDMA_RING_H
#define SRDMA_RING_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "softrdma-abi.h"

/**
 * struct srdma_ring - one shared ring
 * @hdr: srdma_vmalloc() memory: the index header, then the slots
 * @num_slots: a power of two
 * @slot_size: bytes per slot, a multiple of 16
 * @idx: the index we own (producer of a CQ, consumer of a WQ)
 * @mmap: its mmap entry for userspace, NULL for a kernel-only ring
 *
 * Lifetime: allocated with its queue. A user ring's memory belongs to its
 * mmap entry from srdma_ring_alloc() on: srdma_ring_free() only removes
 * the entry and the core calls srdma_mmap_free() once no mmap() can still
 * be using it; pages already mapped stay valid until unmapped.
 */
struct srdma_ring {
	struct softrdma_ring_hdr *hdr;
	u32 num_slots;
	u32 slot_size;
	u32 idx;
	struct rdma_user_mmap_entry *mmap;
};

/*
 * The mmap entry of a ring or of device memory (dm.c): owns the vmalloc
 * memory once inserted.
 */
struct srdma_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *addr;
};

static inline struct srdma_mmap_entry *
to_mmap_entry(struct rdma_user_mmap_entry *rdma)
{
	return container_of(rdma, struct srdma_mmap_entry, rdma);
}

void *srdma_vmalloc(size_t size, bool user);
int srdma_ring_alloc(struct srdma_ring *ring, struct ib_ucontext *uctx,
		     u32 num_slots, u32 slot_size);
void srdma_ring_free(struct srdma_ring *ring);
void srdma_ring_info(const struct srdma_ring *ring,
		     struct softrdma_ring_info *info);
void srdma_ring_reset(struct srdma_ring *ring);

static inline void *srdma_ring_slot(const struct srdma_ring *ring, u32 idx)
{
	return (u8 *)ring->hdr + SOFTRDMA_RING_HDR_SIZE +
	       (size_t)(idx & (ring->num_slots - 1)) * ring->slot_size;
}

/*
 * Consumer side (SQ, RQ): entries the producer has published beyond ours.
 * Return: the count, or -EIO if the producer index is impossible.
 */
static inline int srdma_ring_avail(const struct srdma_ring *ring)
{
	u32 n = smp_load_acquire(&ring->hdr->producer) - ring->idx;

	return n > ring->num_slots ? -EIO : n;
}

static inline void srdma_ring_consume(struct srdma_ring *ring)
{
	smp_store_release(&ring->hdr->consumer, ++ring->idx);
}

/*
 * Producer side (CQ): entries produced and not yet consumed; room for one
 * more? A consumer index that is ahead of us or too far behind reads as
 * full, so a corrupt user index ends in an overflow, never in overwriting
 * unread entries.
 */
static inline u32 srdma_ring_used(const struct srdma_ring *ring)
{
	/*
	 * acquire: the consumer is done reading a slot before we reuse it
	 */
	u32 cons = smp_load_acquire(&ring->hdr->consumer);

	return ring->idx - cons;
}

static inline bool srdma_ring_full(const struct srdma_ring *ring)
{
	return srdma_ring_used(ring) >= ring->num_slots;
}

static inline void srdma_ring_produce(struct srdma_ring *ring)
{
	smp_store_release(&ring->hdr->producer, ++ring->idx);
}

/*
 * Take a queue's ring for srdma_ring_free(), leaving @from without one
 * (hdr NULL). Under the lock that a reader which may outlive the queue's
 * destroy (a netlink dump) checks @from->hdr under; the free, which may
 * sleep, after that lock is dropped.
 */
static inline void srdma_ring_move(struct srdma_ring *to,
				   struct srdma_ring *from)
{
	*to = *from;
	from->hdr = NULL;
	from->mmap = NULL;
}

#endif /* SRDMA_RING_H */
