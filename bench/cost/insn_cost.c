// SPDX-License-Identifier: GPL-2.0
/*
 * insn_cost.so: a QEMU TCG plugin (system emulation, API version 1 as in
 * QEMU 7.2) that counts the guest instructions executed between two
 * markers (cost_mark.h), by the address of the translation block they
 * belong to.
 *
 * Every translated block gets a record keyed by its start address and
 * length, and an inline "add the block's length" to the record's counter
 * that runs each time the block executes: no call out of generated code.
 * The start marker zeroes every counter; the stop marker writes the
 * nonzero ones to OUT.N (N counts the windows from 0): a line per block,
 * "ADDRESS INSNS COUNT", in hex, decimal, decimal. bench/cost/report.py
 * maps the addresses to symbols with the guest's /proc/kallsyms.
 *
 * The inline adds are not atomic: for exact counts run QEMU with one TCG
 * thread (-icount, as bench/cost/run.sh does, or -accel tcg,thread=single).
 * A block that faults midway counts whole, as if it had run to its end.
 *
 * usage: -plugin PATH/insn_cost.so,out=PREFIX
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"
#define COST_PLUGIN
#include "cost_mark.h"

COST_EXPORT int qemu_plugin_version = COST_PLUGIN_API_VERSION;

struct block {
	uint64_t insns;		/* executed in this window: the inline add's */
	uint64_t vaddr;
	uint32_t len;		/* instructions */
};

/* Records live in chunks that never move: generated code points at them. */
#define CHUNK		4096
struct chunk {
	struct chunk *next;
	unsigned int used;
	struct block b[CHUNK];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk *chunks;
static struct block **table;	/* open addressing on (vaddr, len) */
static size_t table_size, table_used;
static const char *out_prefix = "insn_cost";
static unsigned int windows;

static size_t slot_of(uint64_t vaddr, uint32_t len, size_t size)
{
	uint64_t h = (vaddr ^ ((uint64_t)len << 56)) * 0x9e3779b97f4a7c15ull;

	return (h >> 20) & (size - 1);
}

static int grow(void)
{
	size_t size = table_size ? table_size * 2 : 1 << 16, i, s;
	struct block **t = calloc(size, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < table_size; i++) {
		struct block *b = table[i];

		if (!b)
			continue;
		for (s = slot_of(b->vaddr, b->len, size); t[s];
		     s = (s + 1) & (size - 1))
			;
		t[s] = b;
	}
	free(table);
	table = t;
	table_size = size;
	return 0;
}

/* The record of block (vaddr, len), made if new; called under lock. */
static struct block *block_get(uint64_t vaddr, uint32_t len)
{
	struct block *b;
	size_t s;

	if (2 * (table_used + 1) > table_size && grow())
		return NULL;
	for (s = slot_of(vaddr, len, table_size); (b = table[s]);
	     s = (s + 1) & (table_size - 1))
		if (b->vaddr == vaddr && b->len == len)
			return b;
	if (!chunks || chunks->used == CHUNK) {
		struct chunk *c = calloc(1, sizeof(*c));

		if (!c)
			return NULL;
		c->next = chunks;
		chunks = c;
	}
	b = &chunks->b[chunks->used++];
	b->vaddr = vaddr;
	b->len = len;
	table[s] = b;
	table_used++;
	return b;
}

static void window_start(void)
{
	struct chunk *c;
	unsigned int i;

	for (c = chunks; c; c = c->next)
		for (i = 0; i < c->used; i++)
			c->b[i].insns = 0;
}

static void window_stop(void)
{
	char path[4096], msg[4200];
	uint64_t total = 0;
	struct chunk *c;
	unsigned int i;
	FILE *f;

	snprintf(path, sizeof(path), "%s.%u", out_prefix, windows++);
	f = fopen(path, "w");
	if (!f) {
		snprintf(msg, sizeof(msg), "insn_cost: cannot write %s\n", path);
		qemu_plugin_outs(msg);
		return;
	}
	for (c = chunks; c; c = c->next)
		for (i = 0; i < c->used; i++) {
			struct block *b = &c->b[i];

			if (!b->insns)
				continue;
			total += b->insns;
			fprintf(f, "%016" PRIx64 " %u %" PRIu64 "\n",
				b->vaddr, b->len, b->insns);
		}
	fprintf(f, "# total %" PRIu64 "\n", total);
	fclose(f);
}

/* A marker executed: its code is the udata. */
static void marker_exec(unsigned int vcpu, void *udata)
{
	uint32_t code = (uint32_t)(uintptr_t)udata;

	(void)vcpu;
	pthread_mutex_lock(&lock);
	if (code == COST_MARK_START)
		window_start();
	else
		window_stop();
	pthread_mutex_unlock(&lock);
}

/* The marker code of @insn, or 0 if it is no marker. */
static uint32_t marker_code(const struct qemu_plugin_insn *insn)
{
	const uint8_t *p;
	uint32_t code;

	if (qemu_plugin_insn_size(insn) != COST_MARK_LEN)
		return 0;
	p = qemu_plugin_insn_data(insn);
	if (p[0] != 0x0f || p[1] != 0x1f || p[2] != 0x80)
		return 0;
	code = p[3] | p[4] << 8 | p[5] << 16 | (uint32_t)p[6] << 24;
	return code == COST_MARK_START || code == COST_MARK_STOP ? code : 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct block *b;

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t code = marker_code(insn);

		if (code)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec,
				COST_CB_NO_REGS, (void *)(uintptr_t)code);
	}
	pthread_mutex_lock(&lock);
	b = block_get(qemu_plugin_tb_vaddr(tb), n);
	pthread_mutex_unlock(&lock);
	if (b)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, COST_INLINE_ADD_U64,
							 &b->insns, n);
	else
		qemu_plugin_outs("insn_cost: out of memory, a block not counted\n");
}

COST_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
				    const struct cost_qemu_info *info,
				    int argc, char **argv)
{
	int i;

	if (!info->system_emulation) {
		qemu_plugin_outs("insn_cost: system emulation only\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out_prefix = argv[i] + 4;
		} else {
			qemu_plugin_outs("insn_cost: unknown argument\n");
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
