/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The libibverbs provider interface (symbol version
 * IBVERBS_PRIVATE_<IBVERBS_PABI>), as far as this provider uses it.
 *
 * rdma-core keeps this interface in a private header that distributions do
 * not install, so we state it here ourselves. The struct tags and field
 * names follow the interface so the code reads like any other provider.
 * abi_check.c refuses to build if anything we rely on has moved.
 *
 * Only declare what the provider calls: every ibv_cmd_* added here must be
 * in libibverbs' IBVERBS_PRIVATE_<n> export list, or the provider fails to
 * dlopen (RTLD_NOW).
 */
#ifndef SOFTRDMA_VERBS_PRIVATE_H
#define SOFTRDMA_VERBS_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

/*
 * The Makefile passes the private ABI generation libibverbs exports
 * (IBVERBS_PABI) and the rdma-core release (IBVERBS_RELEASE). The
 * generation alone does not pin the layout: rdma-core added verbs to
 * verbs_context_ops within generation 34 (in v35 and v36) and 59 (in
 * v62). So accept only the releases whose sources we checked:
 *   34: rdma-core v36 to v56 (Debian 12: 44, Debian 13: 56)
 *   65: rdma-core v65 (Debian sid), which added verbs and arguments.
 * IF_PABI65(x) is x only for the latter.
 */
#if IBVERBS_PABI == 34 && IBVERBS_RELEASE >= 36 && IBVERBS_RELEASE <= 56
#define IF_PABI65(...)
#elif IBVERBS_PABI == 65 && IBVERBS_RELEASE == 65
#define IF_PABI65(...) __VA_ARGS__
#else
#error "libibverbs private ABI not checked: see the comment above"
#endif

/* libibverbs' intrusive list linkage; we never walk these lists. */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/* verbs_match_ent.kind */
enum {
	VERBS_MATCH_SENTINEL	= 0,
	VERBS_MATCH_PCI		= 1,
	VERBS_MATCH_MODALIAS	= 2,
	VERBS_MATCH_DRIVER_ID	= 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/*
 * What libibverbs learnt about one uverbs device (netlink, else sysfs)
 * before offering it to the providers. ibdev_path is
 * <sysfs>/class/infiniband/<ibdev_name>; driver_id is 0 when the kernel
 * reported none (or only sysfs was available).
 */
struct verbs_sysfs_dev {
	struct verbs_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;
/* Only passed as NULL. */
struct ibv_command_buffer;
struct verbs_create_cq_prov_attr;

/* Registered once per provider; tells libibverbs which devices are ours. */
struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	/* Called for every device, after (and whatever) the table said. */
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	/* Owns cmd_fd: must close it (via the init helpers) on failure. */
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* Embedded first in the provider's device; libibverbs fills all but ops. */
struct verbs_device {
	struct ibv_device device;
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* verbs_mr.mr_type: how the MR came to be; ibv_dereg_mr() reads it. */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/* The provider allocates these; ibv_cmd_reg_mr() fills them. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/* The provider allocates these; ibv_cmd_alloc_dm() fills them. */
struct verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* The provider allocates these; ibv_cmd_open_xrcd() fills them. */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

/*
 * An SRQ made by ibv_cmd_create_srq_ex(), which sets all but srq; the
 * SRQ number ibv_get_srq_num() returns is srq_num.
 */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask */
enum verbs_qp_mask {
	VERBS_QP_XRCD	= 1 << 0,
	VERBS_QP_EX	= 1 << 1,	/* qp_ex's wr_* ops are there */
};

/*
 * ibv_qp_to_qp_ex() casts any QP to this and trusts comp_mask, so every
 * provider QP must start with one, comp_mask zeroed unless it offers
 * ibv_qp_ex.
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/*
 * Every verb a provider may implement, sorted by name, so new verbs land
 * in the middle. verbs_set_ops() copies only the non-NULL slots, so
 * whatever we leave NULL keeps libibverbs' stub, which fails with
 * EOPNOTSUPP.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	IF_PABI65(void *(*alloc_buf)(struct ibv_pd *pd, size_t size,
				     struct ibv_buf **buf);)
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	IF_PABI65(struct ibv_dmah *(*alloc_dmah)(
		struct ibv_context *context,
		struct ibv_dmah_init_attr *attr);)
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
	IF_PABI65(struct ibv_comp_cntr *(*create_comp_cntr)(
		struct ibv_context *context,
		struct ibv_comp_cntr_init_attr *attr);)
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(
		struct ibv_context *context,
		struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	IF_PABI65(int (*dealloc_dmah)(struct ibv_dmah *dmah);)
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	IF_PABI65(int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);)
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	IF_PABI65(int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);)
	IF_PABI65(void (*free_buf)(struct ibv_buf *buf);)
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	IF_PABI65(int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				       uint64_t amount);)
	IF_PABI65(int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
					   uint64_t amount);)
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	IF_PABI65(int (*qp_attach_comp_cntr)(
		struct ibv_qp *qp, struct ibv_comp_cntr *comp_cntr,
		struct ibv_qp_attach_comp_cntr_attr *attr);)
	IF_PABI65(int (*query_comp_cntr_caps)(struct ibv_context *context,
					      struct ibv_comp_cntr_caps *caps,
					      size_t caps_size);)
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	IF_PABI65(int (*query_port_speed)(struct ibv_context *context,
					  uint32_t port_num, uint64_t *speed);)
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	IF_PABI65(int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
					uint64_t *value);)
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	IF_PABI65(int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
					    uint64_t *value);)
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	IF_PABI65(struct ibv_mr *(*reg_mr_ex)(
		struct ibv_pd *pd, struct ibv_mr_init_attr *mr_init_attr);)
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	IF_PABI65(int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				       uint64_t value);)
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	IF_PABI65(int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
					   uint64_t value);)
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/*
 * Legacy write() command buffers: the uverbs header, then the core request.
 * The ibv_cmd_* helpers treat any bytes past sizeof() of these (up to the
 * cmd_size they are given) as driver data, so no padding may creep in.
 */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_port core;
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd core;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_reg_mr core;
};

struct ibv_alloc_mw {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_mw core;
};

struct ibv_rereg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_rereg_mr core;
};

struct ibv_resize_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_resize_cq core;
};

/*
 * Extended write() commands: the uverbs header, then the extended header
 * (response pointer, driver data sizes in 8-byte words), then the core
 * request.
 */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

struct ibv_create_cq_ex {
	struct ex_hdr hdr;
	struct ib_uverbs_ex_create_cq core;
};

struct ibv_create_qp_ex {
	struct ex_hdr hdr;
	struct ib_uverbs_ex_create_qp core;
};

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_qp core;
};

struct ibv_create_xsrq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_xsrq core;
};

struct ibv_open_xrcd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_xrcd core;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_srq core;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_srq core;
};

/* Not passed to libibverbs: the SQ doorbell writes it to cmd_fd itself. */
struct ibv_post_send {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send core;
};

/* Registration; the suffix pins the private ABI generation. */
#define VERBS_PASTE(a, b)		a##b
#define VERBS_REGISTER_DRIVER(pabi)	VERBS_PASTE(verbs_register_driver_, pabi)
#define verbs_register_driver		VERBS_REGISTER_DRIVER(IBVERBS_PABI)
void verbs_register_driver(const struct verbs_device_ops *ops);

/*
 * Allocates alloc_size zeroed bytes and initialises the verbs_context found
 * context_offset bytes in (passed as a pointer, as libibverbs declares it).
 * On failure cmd_fd is closed.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
/* Releases what the above set up (and cmd_fd), but not the memory. */
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* Reads <ibdev_path>/<fnfmt...>; strips one trailing newline. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/* fd_arr: files to hand the kernel with the context; NULL for none. */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			IF_PABI65(struct ibv_fd_arr *fd_arr,)
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
IF_PABI65(int ibv_cmd_query_port_speed(struct ibv_context *context,
				       uint32_t port_num, uint64_t *speed);)
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
/* Updates vmr's keys from the response. */
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/*
 * Import (ibv_import_*): fills vmr (keys, length, handle, context, pd;
 * mr_type IMPORTED) from the kernel's MR @mr_handle of this context's
 * file. query_context checks the file has a context and reads its
 * generic attributes; driver: more ioctl attributes, NULL for none.
 */
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);
int ibv_cmd_query_context(struct ibv_context *ctx,
			  struct ibv_command_buffer *driver);
/*
 * Device memory. @link: driver attributes to add to the command, NULL for
 * none. alloc fills @dm (handle, context, comp_mask); reg_dm_mr fills
 * @vmr as reg_mr does (addr NULL: DM MRs are zero-based).
 */
int ibv_cmd_alloc_dm(struct ibv_context *ctx,
		     const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
int ibv_cmd_free_dm(struct verbs_dm *dm);
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm,
		      uint64_t offset, size_t length, unsigned int access,
		      struct verbs_mr *vmr, struct ibv_command_buffer *link);
/* Prefetch of on-demand-paging MRs: the kernel maps the ranges. */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);
/* Fills mw (context, pd, handle, rkey, type) from the response. */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/*
 * The create helpers try the ioctl interface first: there the core
 * response is not written into resp (only the driver data past it is), so
 * read the results from the objects and attributes the helpers fill in.
 */
/*
 * cq_attr's comp_mask may hold FLAGS and PD (else EOPNOTSUPP); of the
 * flags, and of wc_flags, only IGNORE_OVERRUN and the timestamps reach
 * the kernel. cmd_flags: 0 here. prov_attr: a CQ buffer of the provider's
 * (with CREATE_CQ_CMD_FLAGS_WITH_MEM_*); NULL, ours is the kernel's.
 */
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 IF_PABI65(struct verbs_create_cq_prov_attr *prov_attr,)
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* Sets cq->cqe from the response. */
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);

/*
 * ibv_qp_init_attr_ex's comp_mask may hold PD, XRCD, CREATE_FLAGS,
 * MAX_TSO_HEADER, IND_TABLE, RX_HASH and SEND_OPS_FLAGS (else EINVAL); the
 * last is ours alone to act on. Writes the granted capabilities back to
 * attr->cap and sets the verbs_qp's comp_mask to 0 (or VERBS_QP_XRCD).
 * driver: more ioctl attributes; NULL, we have none.
 */
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *attr_ex,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size
			  IF_PABI65(, struct ibv_command_buffer *driver));
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
/* The kernel attaches a UD QP to a multicast group and detaches it. */
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

/* attr->fd and attr->oflags as ibv_open_xrcd() takes them. */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);

/*
 * Any SRQ type; comp_mask must hold PD. Writes the granted max_wr and
 * max_sge back to attr_ex->attr and fills srq's type, XRCD, CQ and number.
 */
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

/* resp_size covers the driver data that follows the core response. */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

#endif /* SOFTRDMA_VERBS_PRIVATE_H */
