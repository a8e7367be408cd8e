// SPDX-License-Identifier: GPL-2.0
/*
 * Host half of the portability shim: what the kernel provides and a host
 * build of the protocol core lacks.  Never part of the kernel module.
 */
#ifdef __KERNEL__
#error "proto_port_host.c is for host builds only"
#endif

#include "proto_port.h"

#define CRC32_POLY_LE	0xedb88320u

static u32 crc32_table[256];

/* Filled before main() so crc32_le() stays a pure, lock-free function. */
__attribute__((constructor))
static void crc32_table_init(void)
{
	unsigned int i, k;

	for (i = 0; i < 256; i++) {
		u32 c = i;

		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? CRC32_POLY_LE : 0);
		crc32_table[i] = c;
	}
}

u32 crc32_le(u32 crc, unsigned char const *p, size_t len)
{
	while (len--)
		crc = (crc >> 8) ^ crc32_table[(crc ^ *p++) & 0xff];
	return crc;
}
