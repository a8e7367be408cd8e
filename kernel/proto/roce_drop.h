/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Why the protocol core refused a packet.  Functions return the negated
 * value, so callers can index per-reason drop counters with -ret.
 */
#ifndef SOFTRDMA_ROCE_DROP_H
#define SOFTRDMA_ROCE_DROP_H

enum roce_drop_reason {
	ROCE_DROP_NONE = 0,
	/* Shorter than the BTH, or than the opcode's headers plus ICRC. */
	ROCE_DROP_SHORT,
	/* BTH TVer is not 0. */
	ROCE_DROP_BAD_VERSION,
	/* Opcode unknown here (RD, CNP, reserved, vendor specific). */
	ROCE_DROP_BAD_OPCODE,
	/* Pad count exceeds the payload, or is set on a no-payload opcode. */
	ROCE_DROP_BAD_PAD,
	/* Not a whole number of 4-byte words, or payload where none belongs. */
	ROCE_DROP_BAD_LENGTH,
	/* ICRC does not match the packet. */
	ROCE_DROP_BAD_ICRC,
	ROCE_DROP_REASON_MAX
};

static inline const char *roce_drop_reason_name(int reason)
{
	static const char * const names[ROCE_DROP_REASON_MAX] = {
		[ROCE_DROP_NONE]	= "none",
		[ROCE_DROP_SHORT]	= "short",
		[ROCE_DROP_BAD_VERSION]	= "bad_version",
		[ROCE_DROP_BAD_OPCODE]	= "bad_opcode",
		[ROCE_DROP_BAD_PAD]	= "bad_pad",
		[ROCE_DROP_BAD_LENGTH]	= "bad_length",
		[ROCE_DROP_BAD_ICRC]	= "bad_icrc",
	};
	unsigned int r = reason < 0 ? 0u - reason : (unsigned int)reason;

	return r < ROCE_DROP_REASON_MAX ? names[r] : "unknown";
}

#endif /* SOFTRDMA_ROCE_DROP_H */
