// SPDX-License-Identifier: GPL-2.0
/*
 * The ICRC of the packets we send and take (proto/roce_icrc.h defines
 * it): over an skb's headers and its linear part and frags alike.
 *
 * Its CRC-32 runs through the crypto API, which picks the fastest
 * implementation of "crc32" the CPU allows (crc32-pclmul on x86): in
 * 6.1 the plain crc32_le() library call is table driven only.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "srdma.h"
#include "proto/roce_icrc.h"

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

/**
 * srdma_skb_crc - continue a CRC over bytes of an skb, linear or not
 * @skb: the packet
 * @off: first byte, from skb->data
 * @len: bytes; the skb must hold them
 * @crc: running value (see roce_crc32())
 */
static u32 srdma_skb_crc(struct sk_buff *skb, u32 off, u32 len, u32 crc)
{
	struct skb_seq_state st;
	u32 consumed = 0, n;
	const u8 *data;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (consumed < len && (n = skb_seq_read(consumed, &data, &st))) {
		/* A block may run past the upper bound: stop there. */
		n = min(n, len - consumed);
		crc = roce_crc32(crc, data, n);
		consumed += n;
	}
	skb_abort_seq_read(&st);
	return crc;
}

/*
 * Send side: the ICRC over the IP, UDP and BT headers (their invariant
 * fields) and the rest of the packet, linear or in frags, stored in its
 * last 4 bytes. The IP header must be final, IP ID included. @roce_len:
 * BTH to ICRC.
 */
void srdma_icrc_tx(struct sk_buff *skb, u32 roce_len)
{
	u32 off = skb_transport_offset(skb) + sizeof(struct udphdr);
	const struct udphdr *udph = udp_hdr(skb);
	u8 icrc[ROCE_ICRC_LEN];
	u32 crc;

	if (skb->protocol == htons(ETH_P_IP))
		crc = roce_icrc_begin_ipv4(ip_hdr(skb), udph);
	else
		crc = roce_icrc_begin_ipv6(ipv6_hdr(skb), udph);

	crc = srdma_skb_crc(skb, off + ROCE_BTH_LEN,
			    roce_len - ROCE_BTH_LEN - ROCE_ICRC_LEN, crc);
	if (unlikely(srdma_tx_cb(skb)->rxe_flush_icrc))
		crc = srdma_skb_crc(skb, off, roce_len - ROCE_ICRC_LEN, crc);
	roce_icrc_put(icrc, roce_icrc_final(crc));
	skb_store_bits(skb, skb->len - ROCE_ICRC_LEN, icrc, ROCE_ICRC_LEN);
}

/*
 * Receive side: check the ICRC of the packet of @len bytes (BTH through
 * ICRC) after the UDP header at skb->data; only the headers need be
 * linear.
 * Return: 0, ROCE_ICRC_RXE_FLUSH or -ROCE_DROP_BAD_ICRC.
 */
int srdma_icrc_rx(struct sk_buff *skb, u32 len)
{
	const struct udphdr *udph = (void *)skb->data;
	u32 off = sizeof(*udph) + ROCE_BTH_LEN, crc;
	u8 buf[ROCE_ICRC_LEN];
	const void *field;
	bool quirk;

	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		/* The ICRC covers exactly a 20-byte IPv4 header. */
		if (iph->ihl != 5)
			return -ROCE_DROP_BAD_ICRC;
		crc = roce_icrc_begin_ipv4(iph, udph);
	} else {
		crc = roce_icrc_begin_ipv6(ipv6_hdr(skb), udph);
	}
	crc = srdma_skb_crc(skb, off, len - ROCE_BTH_LEN - ROCE_ICRC_LEN, crc);
	field = skb_header_pointer(skb, sizeof(*udph) + len - ROCE_ICRC_LEN,
				   ROCE_ICRC_LEN, buf);
	if (!field)
		return -ROCE_DROP_BAD_ICRC;
	quirk = roce_icrc_rxe_quirk(skb->data[sizeof(*udph)]);
	return roce_icrc_verdict(roce_icrc_get(field), crc, quirk,
				 quirk ? srdma_skb_crc(skb, sizeof(*udph),
						       len - ROCE_ICRC_LEN, crc) : 0);
}
