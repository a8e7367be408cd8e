// SPDX-License-Identifier: GPL-2.0
/*
 * Shared ring memory and its mmap() into user contexts.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "srdma.h"

/**
 * srdma_vmalloc - zeroed memory that srdma_mmap() can map to a user
 * @size: bytes, a multiple of PAGE_SIZE
 * @user: a user's: charged to its memory cgroup (srdma_gfp())
 *
 * Not vmalloc_user(), whose memory remap_vmalloc_range() maps: that
 * cannot be charged to a memory cgroup, and no kernel exports a variant
 * with flags to modules.
 */
void *srdma_vmalloc(size_t size, bool user)
{
	return __vmalloc(size, srdma_gfp(user) | __GFP_ZERO);
}

/**
 * srdma_ring_alloc - allocate a ring and, for a user queue, its mmap entry
 * @ring: the ring to fill
 * @uctx: user context that will mmap it, or NULL for a kernel queue
 * @num_slots: a power of two
 * @slot_size: bytes per slot
 */
int srdma_ring_alloc(struct srdma_ring *ring, struct ib_ucontext *uctx,
		     u32 num_slots, u32 slot_size)
{
	size_t size = PAGE_ALIGN(SOFTRDMA_RING_HDR_SIZE +
				 (size_t)num_slots * slot_size);
	struct srdma_mmap_entry *entry;
	int err;

	ring->num_slots = num_slots;
	ring->slot_size = slot_size;
	ring->idx = 0;
	ring->mmap = NULL;
	ring->hdr = srdma_vmalloc(size, uctx);
	if (!ring->hdr)
		return -ENOMEM;
	ring->hdr->magic = SOFTRDMA_RING_MAGIC;
	if (!uctx)
		return 0;

	entry = kzalloc(sizeof(*entry), srdma_gfp(true));
	if (!entry)
		goto err_free;
	entry->addr = ring->hdr;
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma, size);
	if (err) {
		kfree(entry);
		goto err_free;
	}
	ring->mmap = &entry->rdma;
	return 0;

err_free:
	vfree(ring->hdr);
	ring->hdr = NULL;
	return -ENOMEM;
}

void srdma_ring_free(struct srdma_ring *ring)
{
	/*
	 * A process may still have the ring mapped (its pages outlive us
	 * until unmapped), and after a device removal it still polls it:
	 * the cleared magic tells its provider that nothing will come.
	 */
	if (ring->hdr)
		WRITE_ONCE(ring->hdr->magic, 0);
	if (ring->mmap)
		rdma_user_mmap_entry_remove(ring->mmap);	/* frees later */
	else
		vfree(ring->hdr);
	ring->hdr = NULL;
	ring->mmap = NULL;
}

void srdma_ring_info(const struct srdma_ring *ring,
		     struct softrdma_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!ring->mmap)
		return;
	info->mmap_offset = rdma_user_mmap_get_offset(ring->mmap);
	info->mmap_size = ring->mmap->npages << PAGE_SHIFT;
	info->num_slots = ring->num_slots;
	info->slot_size = ring->slot_size;
}

/* Discard every entry: our index catches up with the peer's. */
void srdma_ring_reset(struct srdma_ring *ring)
{
	u32 peer = READ_ONCE(ring->hdr->producer);

	ring->idx = peer;
	smp_store_release(&ring->hdr->consumer, peer);
}

/*
 * Map an srdma_vmalloc() area whole, as remap_vmalloc_range() maps a
 * vmalloc_user() one: each page inserted (the mapping holds a reference,
 * so pages outlive a vfree() until unmapped), the VMA neither growable
 * by mremap() nor dumped.
 */
int srdma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma;
	unsigned long off, len = vma->vm_end - vma->vm_start;
	u8 *addr;
	int err = 0;

	rdma = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma)
		return -EINVAL;
	addr = to_mmap_entry(rdma)->addr;
	if (len != rdma->npages << PAGE_SHIFT)
		err = -EINVAL;
	for (off = 0; off < len && !err; off += PAGE_SIZE)
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(addr + off));
	if (!err)
		srdma_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	rdma_user_mmap_entry_put(rdma);
	return err;
}

void srdma_mmap_free(struct rdma_user_mmap_entry *rdma)
{
	struct srdma_mmap_entry *entry = to_mmap_entry(rdma);

	vfree(entry->addr);
	kfree(entry);
}
