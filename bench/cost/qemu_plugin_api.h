/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of QEMU's TCG plugin API (API version 1, as QEMU 7.2 exports
 * it) that insn_cost.c uses, declared here since Debian ships no
 * qemu-plugin.h. QEMU resolves these functions in its own executable when
 * it loads the plugin, and checks the plugin's qemu_plugin_version
 * against the range of API versions it supports.
 */
#ifndef COST_QEMU_PLUGIN_API_H
#define COST_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COST_PLUGIN_API_VERSION	1

#define COST_EXPORT	__attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

/* What QEMU tells the plugin at install time. */
struct cost_qemu_info {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
};

struct qemu_plugin_tb;
struct qemu_plugin_insn;

/* Callback flags: none of ours reads or writes guest registers. */
enum { COST_CB_NO_REGS = 0 };
/* The one inline operation: add an immediate to a 64-bit word. */
enum { COST_INLINE_ADD_U64 = 0 };

typedef void (*cost_tb_trans_cb)(qemu_plugin_id_t id,
				 struct qemu_plugin_tb *tb);
typedef void (*cost_vcpu_udata_cb)(unsigned int vcpu_index, void *udata);
typedef void (*cost_udata_cb)(qemu_plugin_id_t id, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   cost_tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      int op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  cost_vcpu_udata_cb cb, int flags,
					  void *udata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    cost_vcpu_udata_cb cb, int flags,
					    void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, cost_udata_cb cb,
				    void *udata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

#endif /* COST_QEMU_PLUGIN_API_H */
