/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cost meter's markers: a guest program executes one to start a
 * measured window and one to end it, and the QEMU plugin (insn_cost.c)
 * recognises them by their bytes when it translates them. Each is a
 * 7-byte NOP, "nopl DISP32(%rax)" (0f 1f 80 + a 32-bit displacement),
 * whose displacement is the marker's code: it does nothing on any x86
 * CPU, with or without the plugin, and no compiler emits a NOP with
 * these displacements.
 */
#ifndef COST_MARK_H
#define COST_MARK_H

#define COST_MARK_LEN		7
#define COST_MARK_START		0x31545343	/* "CST1" */
#define COST_MARK_STOP		0x30545343	/* "CST0" */

#ifndef COST_PLUGIN
#define cost_mark_(code) \
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x80\n\t.long " #code ::: "memory")
#define cost_mark(code)	cost_mark_(code)

static inline void cost_start(void)
{
	cost_mark(COST_MARK_START);
}

static inline void cost_stop(void)
{
	cost_mark(COST_MARK_STOP);
}
#endif

#endif /* COST_MARK_H */
