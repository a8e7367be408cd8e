/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Portability shim for the RoCEv2 protocol core.
 *
 * The files in kernel/proto/ build both into the kernel module and into
 * host programs (unit tests, fuzzer).  They include only this header for
 * types, byte order and CRC-32, so nothing kernel-only leaks into them.
 *
 * roce_crc32() has crc32_le()'s contract (reflected, poly 0xedb88320, no
 * pre- or post-inversion): in the kernel it is the fastest "crc32" the
 * crypto API has (PCLMULQDQ where the CPU has it), on the host crc32_le().
 */
#ifndef SOFTRDMA_PROTO_PORT_H
#define SOFTRDMA_PROTO_PORT_H

#ifdef __KERNEL__

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/crc32.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>

u32 srdma_crc32(u32 crc, const void *p, size_t len);
#define roce_crc32(crc, p, len)	srdma_crc32(crc, p, len)

#else /* !__KERNEL__ */

#include <assert.h>		/* static_assert */
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

/* No sparse on the host: the bitwise types are plain integers. */
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;
typedef uint32_t __le32;

#define cpu_to_be16(x)	((__be16)htobe16(x))
#define cpu_to_be32(x)	((__be32)htobe32(x))
#define cpu_to_be64(x)	((__be64)htobe64(x))
#define be16_to_cpu(x)	((u16)be16toh(x))
#define be32_to_cpu(x)	((u32)be32toh(x))
#define be64_to_cpu(x)	((u64)be64toh(x))
#define cpu_to_le32(x)	((__le32)htole32(x))
#define le32_to_cpu(x)	((u32)le32toh(x))

#ifndef BIT
#define BIT(n)		(1UL << (n))
#endif
#define __packed	__attribute__((__packed__))
#define __pure		__attribute__((__pure__))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/**
 * crc32_le() - reflected CRC-32 (poly 0xedb88320), host build
 * @crc: running value; ~0 to start a standard CRC-32
 * @p: data
 * @len: bytes at @p
 *
 * Same contract as the kernel's crc32_le(): no pre- or post-inversion.
 *
 * Return: the updated running value.
 */
u32 __pure crc32_le(u32 crc, unsigned char const *p, size_t len);
#define roce_crc32(crc, p, len)	crc32_le(crc, (const unsigned char *)(p), len)

#endif /* __KERNEL__ */

#endif /* SOFTRDMA_PROTO_PORT_H */
