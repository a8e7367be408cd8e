/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One side of a ring shared with the kernel (layout in softrdma-abi.h).
 *
 * We keep a private copy of the index we own, so publishing never reads
 * shared memory back, and cache the last value seen of the kernel's index,
 * so the cache line it writes is only read when the cached value says the
 * ring is full (producer) or empty (consumer). The caller serialises each
 * ring with its lock; nothing here makes a system call.
 */
#ifndef SOFTRDMA_RING_H
#define SOFTRDMA_RING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <softrdma-abi.h>

struct srdma_ring {
	struct softrdma_ring_hdr *hdr;	/* NULL: the queue does not exist */
	uint8_t *slots;
	size_t map_size;		/* of the mapping at hdr, if mmapped */
	uint32_t num_slots;		/* a power of two */
	uint32_t slot_size;
	uint32_t idx;			/* the index this side owns */
	uint32_t peer;			/* last seen index of the other side */
	pthread_spinlock_t lock;
};

enum srdma_ring_side {
	SRDMA_RING_PRODUCER,		/* SQ, RQ: we post, the kernel takes */
	SRDMA_RING_CONSUMER,		/* CQ: the kernel posts, we take */
};

static inline uint32_t srdma_load_acquire(const uint32_t *p)
{
	return atomic_load_explicit((const _Atomic uint32_t *)p,
				    memory_order_acquire);
}

static inline void srdma_store_release(uint32_t *p, uint32_t v)
{
	atomic_store_explicit((_Atomic uint32_t *)p, v, memory_order_release);
}

static inline void *srdma_ring_slot(const struct srdma_ring *r, uint32_t idx)
{
	return r->slots + (size_t)(idx & (r->num_slots - 1)) * r->slot_size;
}

/*
 * (Re)load our view from the shared header: at attach time, and whenever
 * the kernel may have moved the indices itself (a QP reset).
 */
static inline void srdma_ring_sync(struct srdma_ring *r,
				   enum srdma_ring_side side)
{
	if (side == SRDMA_RING_PRODUCER) {
		r->idx = srdma_load_acquire(&r->hdr->producer);
		r->peer = srdma_load_acquire(&r->hdr->consumer);
	} else {
		r->idx = srdma_load_acquire(&r->hdr->consumer);
		r->peer = r->idx;	/* nothing seen yet: look next time */
	}
}

/*
 * False once the kernel destroyed the queue (see SOFTRDMA_RING_MAGIC):
 * the device is gone, and what was read from the ring since the last check
 * is not to be reported. The fence orders the reads before it (slots, the
 * kernel's index) ahead of the magic's; the magic shares its cache line
 * with the producer index, so the check costs no extra miss.
 */
static inline bool srdma_ring_live(const struct srdma_ring *r)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit((const _Atomic uint32_t *)&r->hdr->magic,
				    memory_order_relaxed) == SOFTRDMA_RING_MAGIC;
}

/* base: the 128-byte header, followed by num_slots * slot_size bytes. */
static inline void srdma_ring_attach(struct srdma_ring *r, void *base,
				     uint32_t num_slots, uint32_t slot_size,
				     enum srdma_ring_side side)
{
	r->hdr = base;
	r->slots = (uint8_t *)base + SOFTRDMA_RING_HDR_SIZE;
	r->num_slots = num_slots;
	r->slot_size = slot_size;
	srdma_ring_sync(r, side);
}

/*
 * Producer: the next free slot, or NULL when the ring is full. Free-running
 * u32 indices make idx - consumer the fill level across wraparound; a
 * consumer index ahead of ours (a kernel bug) reads as full, never as room.
 * The acquire pairs with the kernel's release of the consumer index, so it
 * has finished reading a slot before we may overwrite it.
 */
static inline void *srdma_ring_prod_slot(struct srdma_ring *r)
{
	if (r->idx - r->peer >= r->num_slots) {
		r->peer = srdma_load_acquire(&r->hdr->consumer);
		if (r->idx - r->peer >= r->num_slots)
			return NULL;
	}
	return srdma_ring_slot(r, r->idx);
}

/* Release: the kernel sees the slots' contents before the new index. */
static inline void srdma_ring_prod_publish(struct srdma_ring *r)
{
	srdma_store_release(&r->hdr->producer, r->idx);
}

/*
 * Consumer: the oldest filled slot, or NULL when the ring is empty. The
 * acquire pairs with the kernel's release of the producer index.
 */
static inline const void *srdma_ring_cons_slot(struct srdma_ring *r)
{
	if (r->idx == r->peer) {
		r->peer = srdma_load_acquire(&r->hdr->producer);
		if (r->idx == r->peer)
			return NULL;
	}
	return srdma_ring_slot(r, r->idx);
}

/* Release: we are done reading the slots before the kernel may reuse them. */
static inline void srdma_ring_cons_publish(struct srdma_ring *r)
{
	srdma_store_release(&r->hdr->consumer, r->idx);
}

/* Fill or consume one slot; published in batches by the *_publish above. */
static inline void srdma_ring_advance(struct srdma_ring *r)
{
	r->idx++;
}

/* ring.c */
int srdma_ring_map(struct srdma_ring *r, const struct softrdma_ring_info *info,
		   size_t min_slot_size, int cmd_fd, enum srdma_ring_side side);
int srdma_ring_remap(struct srdma_ring *r, const struct softrdma_ring_info *info,
		     size_t min_slot_size, int cmd_fd,
		     enum srdma_ring_side side);
void srdma_ring_unmap(struct srdma_ring *r);

#endif /* SOFTRDMA_RING_H */
