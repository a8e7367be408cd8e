/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Mapping the rings the kernel describes in its create responses.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "ring.h"

/*
 * The slot arithmetic in ring.h trusts num_slots and slot_size, so check
 * them against the mapping before the first access instead of faulting
 * (or worse) later. min_slot_size is what one entry of this queue needs
 * at the capabilities the kernel granted.
 */
static int srdma_ring_info_ok(const struct softrdma_ring_info *info,
			      size_t min_slot_size)
{
	uint64_t need;

	if (!info->num_slots || (info->num_slots & (info->num_slots - 1)))
		return 0;
	/* Slots hold __u64 fields. */
	if (info->slot_size < min_slot_size || info->slot_size % 8)
		return 0;

	need = SOFTRDMA_RING_HDR_SIZE +
	       (uint64_t)info->num_slots * info->slot_size;
	return info->mmap_size >= need && info->mmap_size <= SIZE_MAX;
}

/* Map the ring @info describes over @r's mapping, if any (hdr NULL). */
static int srdma_ring_mmap(struct srdma_ring *r,
			   const struct softrdma_ring_info *info,
			   size_t min_slot_size, int cmd_fd,
			   enum srdma_ring_side side)
{
	void *base;

	if (!srdma_ring_info_ok(info, min_slot_size))
		return EINVAL;
	base = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    cmd_fd, info->mmap_offset);
	if (base == MAP_FAILED)
		return errno;
	/* No magic: a kernel module of another ABI, or a device gone. */
	if (((struct softrdma_ring_hdr *)base)->magic != SOFTRDMA_RING_MAGIC) {
		munmap(base, info->mmap_size);
		return EPROTO;
	}
	if (r->hdr)
		munmap(r->hdr, r->map_size);
	r->map_size = info->mmap_size;
	srdma_ring_attach(r, base, info->num_slots, info->slot_size, side);
	return 0;
}

int srdma_ring_map(struct srdma_ring *r, const struct softrdma_ring_info *info,
		   size_t min_slot_size, int cmd_fd, enum srdma_ring_side side)
{
	int ret;

	memset(r, 0, sizeof(*r));
	ret = pthread_spin_init(&r->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		return ret;
	ret = srdma_ring_mmap(r, info, min_slot_size, cmd_fd, side);
	if (ret)
		pthread_spin_destroy(&r->lock);
	return ret;
}

/*
 * Move @r to the ring @info describes and unmap the old one; the caller
 * holds r->lock, which stays. Return: 0, or an errno with @r unchanged.
 */
int srdma_ring_remap(struct srdma_ring *r, const struct softrdma_ring_info *info,
		     size_t min_slot_size, int cmd_fd,
		     enum srdma_ring_side side)
{
	return srdma_ring_mmap(r, info, min_slot_size, cmd_fd, side);
}

void srdma_ring_unmap(struct srdma_ring *r)
{
	if (!r->hdr)
		return;

	pthread_spin_destroy(&r->lock);
	munmap(r->hdr, r->map_size);
	r->hdr = NULL;
}
