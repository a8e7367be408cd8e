// SPDX-License-Identifier: GPL-2.0
/*
 * The device's counters as the RDMA core's port hw counters, so that
 * "rdma statistic show link DEV/1" and sysfs hw_counters/ show them.
 */
#include "srdma.h"

static const struct rdma_stat_desc srdma_counter_descs[SRDMA_CNT_MAX] = {
	[SRDMA_CNT_TX_PKTS].name		= "tx_pkts",
	[SRDMA_CNT_TX_BYTES].name		= "tx_bytes",
	[SRDMA_CNT_RX_PKTS].name		= "rx_pkts",
	[SRDMA_CNT_RX_BYTES].name		= "rx_bytes",
	[SRDMA_CNT_RETRANSMITS].name		= "retransmits",
	[SRDMA_CNT_RETRY_TIMEOUTS].name		= "retry_timeouts",
	[SRDMA_CNT_TLP_PROBES].name		= "tlp_probes",
	[SRDMA_CNT_TLP_RECOVERIES].name		= "tlp_recoveries",
	[SRDMA_CNT_SEQ_NAKS_SENT].name		= "seq_naks_sent",
	[SRDMA_CNT_SEQ_NAKS_RCVD].name		= "seq_naks_rcvd",
	[SRDMA_CNT_SEQ_NAKS_ONE].name		= "seq_naks_one_resent",
	[SRDMA_CNT_RNR_NAKS_SENT].name		= "rnr_naks_sent",
	[SRDMA_CNT_RNR_NAKS_RCVD].name		= "rnr_naks_rcvd",
	[SRDMA_CNT_DUP_REQUESTS].name		= "dup_requests",
	[SRDMA_CNT_OOO_HELD].name		= "ooo_held",
	[SRDMA_CNT_RESP_GAPS_ASKED].name	= "resp_gaps_asked",
	[SRDMA_CNT_ODP_FAULTS].name		= "odp_faults",
	[SRDMA_CNT_NP_ECN_MARKED].name		= "np_ecn_marked_roce_packets",
	[SRDMA_CNT_NP_CNP_SENT].name		= "np_cnp_sent",
	[SRDMA_CNT_RP_CNP_HANDLED].name		= "rp_cnp_handled",
	[SRDMA_CNT_RP_RATE_CUTS].name		= "rp_rate_cuts",
	[SRDMA_CNT_RP_PACE_WAITS].name		= "rp_pace_waits",
	[SRDMA_CNT_RX_DROPS].name		= "rx_drops",
	[SRDMA_CNT_DROP_SHORT].name		= "drop_short",
	[SRDMA_CNT_DROP_BAD_VERSION].name	= "drop_bad_version",
	[SRDMA_CNT_DROP_BAD_OPCODE].name	= "drop_bad_opcode",
	[SRDMA_CNT_DROP_BAD_PAD].name		= "drop_bad_pad",
	[SRDMA_CNT_DROP_BAD_LENGTH].name	= "drop_bad_length",
	[SRDMA_CNT_DROP_BAD_ICRC].name		= "drop_bad_icrc",
	[SRDMA_CNT_DROP_NO_QP].name		= "drop_no_qp",
	[SRDMA_CNT_DROP_QP_TYPE].name		= "drop_qp_type",
	[SRDMA_CNT_DROP_QP_STATE].name		= "drop_qp_state",
	[SRDMA_CNT_DROP_PSN].name		= "drop_psn",
	[SRDMA_CNT_DROP_SOURCE].name		= "drop_source",
	[SRDMA_CNT_DROP_NOMEM].name		= "drop_nomem",
	[SRDMA_CNT_DROP_BAD_QKEY].name		= "drop_bad_qkey",
	[SRDMA_CNT_DROP_NO_RECV].name		= "drop_no_recv",
	[SRDMA_CNT_DROP_BAD_REQUEST].name	= "drop_bad_request",
};

int srdma_counters_init(struct srdma_dev *sdev)
{
	sdev->counters = alloc_percpu(struct srdma_counters);
	return sdev->counters ? 0 : -ENOMEM;
}

void srdma_counters_fini(struct srdma_dev *sdev)
{
	free_percpu(sdev->counters);
	sdev->counters = NULL;
}

struct rdma_hw_stats *srdma_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(srdma_counter_descs, SRDMA_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int srdma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct srdma_dev *sdev = to_sdev(ibdev);
	int cpu, i;

	for (i = 0; i < SRDMA_CNT_MAX; i++)
		stats->value[i] = 0;
	for_each_possible_cpu(cpu) {
		const struct srdma_counters *c = per_cpu_ptr(sdev->counters, cpu);

		for (i = 0; i < SRDMA_CNT_MAX; i++)
			stats->value[i] += READ_ONCE(c->cnt[i]);
	}
	return SRDMA_CNT_MAX;
}
