// SPDX-License-Identifier: GPL-2.0
/*
 * CRC-32 for the ICRC through the crypto API, which picks the fastest
 * implementation of "crc32" the CPU allows (crc32-pclmul on x86): in
 * 6.1 the plain crc32_le() library call is table driven only.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>

#include "srdma.h"

#define SRDMA_CRC_SHORT	256

/* Lifetime: module load to unload; NULL means crc32_le() does the work. */
static struct crypto_shash *srdma_crc_tfm;

/*
 * Every "crc32" shash keeps its running value as the u32 at the start of
 * its descriptor context, without inversion, exactly crc32_le()'s state.
 */
u32 srdma_crc32(u32 crc, const void *p, size_t len)
{
	SHASH_DESC_ON_STACK(desc, srdma_crc_tfm);

	/*
	 * Headers and short payloads: the table is cheaper than saving the
	 * FPU state for PCLMULQDQ (crc32-pclmul itself falls back below 64).
	 */
	if (len < SRDMA_CRC_SHORT || !srdma_crc_tfm)
		return crc32_le(crc, p, len);
	desc->tfm = srdma_crc_tfm;
	*(u32 *)shash_desc_ctx(desc) = crc;
	crypto_shash_update(desc, p, len);
	return *(u32 *)shash_desc_ctx(desc);
}

void srdma_crc_init(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32", 0, 0);

	if (IS_ERR(tfm)) {
		pr_info("softrdma: no crc32 in the crypto API (%ld), using crc32_le\n",
			PTR_ERR(tfm));
		return;
	}
	srdma_crc_tfm = tfm;
}

void srdma_crc_exit(void)
{
	crypto_free_shash(srdma_crc_tfm);
}
