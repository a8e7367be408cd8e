// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "roce_hdr.h"
#include "roce_icrc.h"
#include "roce_opcode.h"
#include "testlib.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t tl_hex(const char *hex, u8 *out, size_t max)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v = hexval(*hex);

		if (v < 0)
			continue;
		if (hi < 0) {
			hi = v;
			continue;
		}
		if (n == max)
			abort();
		out[n++] = hi << 4 | v;
		hi = -1;
	}
	return n;
}

void tl_load(struct tl_pkt *p, const char *hex)
{
	p->len = tl_hex(hex, p->buf, sizeof(p->buf));
}

static void put16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(u8 *p, u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

void tl_ipv4(u8 *p, u8 tos, u16 tot_len, u16 id, u16 frag_off, u8 ttl,
	     u32 saddr, u32 daddr)
{
	u32 sum = 0;
	int i;

	p[0] = 0x45;
	p[1] = tos;
	put16(p + 2, tot_len);
	put16(p + 4, id);
	put16(p + 6, frag_off);
	p[8] = ttl;
	p[9] = 17;		/* UDP */
	put16(p + 10, 0);
	put32(p + 12, saddr);
	put32(p + 16, daddr);
	for (i = 0; i < IP4_LEN; i += 2)
		sum += p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(p + 10, ~sum);
}

void tl_ipv6(u8 *p, u8 tclass, u32 flow, u16 plen, u8 hop,
	     const u8 *saddr, const u8 *daddr)
{
	put32(p, 6u << 28 | (u32)tclass << 20 | (flow & 0xfffff));
	put16(p + 4, plen);
	p[6] = 17;		/* UDP */
	p[7] = hop;
	memcpy(p + 8, saddr, 16);
	memcpy(p + 24, daddr, 16);
}

void tl_udp(u8 *p, u16 sport, u16 dport, u16 len, u16 csum)
{
	put16(p, sport);
	put16(p + 2, dport);
	put16(p + 4, len);
	put16(p + 6, csum);
}

u8 *tl_dup(const u8 *p, size_t len)
{
	u8 *q = malloc(len ? len : 1);

	if (!q)
		abort();
	if (p)
		memcpy(q, p, len);
	return q;
}

size_t tl_build_v6_send(u8 *buf, size_t paylen)
{
	static const u8 src[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
				    0, 0, 0, 0, 0, 0, 0, 3 };
	static const u8 dst[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0,
				    0, 0, 0, 0, 0, 0, 0, 1 };
	struct roce_bth_fields f = {
		.opcode = ROCE_RC_SEND_ONLY,
		.pad = -paylen & 3,
		.pkey = ROCE_PKEY_DEFAULT,
		.qpn = 0xabcdef,
		.ackreq = true,
		.psn = 0xfffffe,
	};
	size_t roce_len = ROCE_BTH_LEN + paylen + f.pad + ROCE_ICRC_LEN;
	u8 *udp = buf + IP6_LEN, *bth = udp + UDP_LEN;
	size_t i;

	tl_ipv6(buf, 0x68, 0x12345, UDP_LEN + roce_len, 64, src, dst);
	tl_udp(udp, 0xd001, ROCE_UDP_PORT, UDP_LEN + roce_len, 0);
	roce_bth_encode((struct roce_bth *)bth, &f);
	for (i = 0; i < paylen + f.pad; i++)
		bth[ROCE_BTH_LEN + i] = i < paylen ? (u8)(0xa5 ^ i) : 0;
	roce_icrc_put(bth + roce_len - ROCE_ICRC_LEN,
		      roce_icrc_ipv6(buf, udp, roce_len));
	return ROCE_OFF6 + roce_len;
}
