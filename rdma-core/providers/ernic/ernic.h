/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rdma-core provider for ernic, QEMU's model of the Xilinx/AMD ERNIC
 * RoCEv2 RNIC (PG332 v3.1) with its ERNIC-X extension.
 */
#ifndef ERNIC_PROVIDER_H
#define ERNIC_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>

#include <ccan/list.h>
#include <infiniband/driver.h>

/* The PCI identity of -device ernic (ERNIC_PCI_VENDOR_ID, _DEVICE_ID). */
#include "hw/rdma/ernic_regs.h"
/* ERNIC-X: WQE, SGE and metadata layouts, the doorbell page. */
#include "hw/rdma/ernic_ext_regs.h"
/* The driver-private uverbs data, and its command wrappers. */
#include "ernic_abi.h"

/*
 * A UD receive's wc.sl, as the kernel driver sets it (guest-driver/
 * ernic.h): the RoCEv2 packet type as mlx5 reports it, bit 3 UDP and
 * bits 2:0 the IP version (1 IPv6, 2 IPv4). UCX reads the GRH area by it.
 */
#define ERNIC_UD_SL_ROCEV2_IPV6	0x9
#define ERNIC_UD_SL_ROCEV2_IPV4	0xa

struct ernic_device {
	struct verbs_device ibv_dev;
};

struct ernic_context {
	struct verbs_context ibv_ctx;
	bool direct;			/* the driver gives direct QPs */
	bool atomic;			/* the device has atomics */
	bool mw;			/* ... and memory windows */
	bool place;			/* direct QPs FLUSH, ATOMIC WRITE */
	bool xrc;			/* XRC domains, SRQs and QPs */
	/* Empty polls of a CQ before a read of a doorbell page (UPOLL) */
	unsigned int spin_polls;
};

struct ernic_cq {
	struct verbs_cq vcq;		/* first: freed through it */
	struct ibv_wc wc;		/* the completion ibv_*_poll() took */
	/* ibv_start_poll() to ibv_end_poll(): one thread at a time */
	pthread_spinlock_t poll_lock;
	bool poll_api;			/* made by ibv_create_cq_ex() */
	/* The QPs it completes for: direct ones polled here, others counted */
	pthread_spinlock_t lock;	/* the lists, and polling them */
	struct list_head sq_qps;
	struct list_head rq_qps;
	struct list_head xrc_srqs;	/* XRC SRQs: WQEs written back */
	unsigned int kernel_qps;	/* polled through the kernel */
	unsigned int empty_polls;	/* in a row, up to the context's */
};

/* What a direct QP remembers of a send WR: its CQE has 16 bits of it. */
struct ernic_dswqe {
	uint64_t wr_id;
	uint32_t byte_len;
	uint8_t opcode;			/* enum ibv_wc_opcode */
	bool signaled;
};

/*
 * A direct QP (ernic_direct.c): its rings, status page and doorbell page
 * are mapped here; WQEs are written and completions read with no system
 * call.
 */
struct ernic_dq {
	void *map[ERNIC_UQ_NR];
	size_t len[ERNIC_UQ_NR];
	uint8_t *sq;			/* 128-byte WQEs */
	const volatile uint32_t *cqe;
	uint8_t *rq;			/* 64-byte receive WQEs */
	const uint8_t *meta;
	const volatile struct ernic_uq_status *st;
	volatile uint32_t *udb;		/* the QP's page of BAR3 */
	/*
	 * The SQ doorbell record, the SQ region's end (ERNIC-X DBREC); with
	 * rqrec, dbrec[1] is the RQ's, which grants receive WQEs (RQREC).
	 */
	volatile __le32 *dbrec;
	bool rqrec;
	uint32_t sq_depth, rq_depth;

	pthread_spinlock_t sq_lock;	/* the SQ indices and swqe[] */
	uint32_t sq_pi;
	uint32_t sq_ci;
	bool sq_unrung;			/* posted in SQD: rung in RTS */
	bool err_taken;			/* the first ERRFLAG's status given */
	struct ernic_dswqe *swqe;
	uint8_t *inl;			/* ERNIC_DQ_INLINE bytes per slot */
	struct ibv_mr *inl_mr;

	pthread_spinlock_t rq_lock;	/* the RQ indices and rwr_id[] */
	uint32_t rq_ci;			/* RQCIi as last written */
	uint32_t rq_seen;		/* next RQ slot the device fills */
	uint32_t rwqe_pi, rwqe_ci;	/* posted receive WRs, FIFO */
	uint64_t *rwr_id;
	uint32_t poll_state;		/* read before a poll's SQ pass */

	uint32_t dest_qpn;		/* src_qp of receive completions */
	bool ud;			/* a UD QP (ERNIC-X UD) */
	bool uc;			/* a UC QP (ERNIC-X UC) */
	uint32_t ud_mtu;		/* ... its message limit */
	uint32_t qkey;			/* ... its Q_Key (IBV_QP_QKEY) */
	bool sig_all;
	struct list_node scq_node;
	struct list_node rcq_node;
};

/*
 * A user SRQ, always direct (ernic_srq.c): its ring and doorbell page
 * are mapped here; the WR ID of each slot is kept until a QP's receive
 * metadata names the slot.
 */
struct ernic_srq {
	union {				/* first: freed through it */
		struct ibv_srq ibsrq;
		struct verbs_srq vsrq;	/* ibv_create_srq_ex() */
	};
	/* XRC (ERNIC-X XRC): its CQ polls the WQEs written back */
	struct ernic_cq *xrc_cq;
	struct list_node xrc_node;
	uint32_t xrc_ci;		/* oldest slot posted, not reported */
	void *map[ERNIC_USRQ_NR];
	size_t len[ERNIC_USRQ_NR];
	uint8_t *ring;			/* 64-byte receive WQEs */
	volatile uint32_t *udb;		/* its page of BAR3 */
	uint32_t depth;			/* ring slots: twice the WRs */
	uint32_t max_wr;
	pthread_spinlock_t lock;	/* pi, outstanding, busy[], wr_id[] */
	uint32_t pi;
	uint32_t outstanding;
	uint8_t *busy;			/* slot posted, not yet completed */
	uint64_t *wr_id;
};

struct ernic_qp {
	struct verbs_qp vqp;		/* first: freed through it */
	/* ibv_wr_*(): the WRs built since ibv_wr_start() (ernic_ex.c) */
	struct ibv_send_wr *wr;
	struct ibv_sge *sge;		/* max_sge for each WR */
	uint8_t *inl;			/* max_inline bytes for each WR */
	uint32_t max_wr, max_sge, max_inline;
	uint32_t nwr;
	int err;			/* the first error since wr_start */
	/* wr_start() to wr_complete()/wr_abort(): one thread at a time */
	pthread_spinlock_t wr_lock;
	bool wr_api;			/* created with send_ops_flags */
	bool direct;
	struct ernic_dq dq;		/* a direct QP's own */
	struct ernic_srq *srq;		/* its receive WQEs' */
	struct ernic_cq *scq, *rcq;
};

static inline struct ernic_context *to_ectx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct ernic_context, ibv_ctx.context);
}

static inline struct ernic_cq *to_ecq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct ernic_cq, vcq.cq);
}

/* An AH and its entry of the device's table (ERNIC-X UD), or -1. */
struct ernic_ah {
	struct ibv_ah ibah;		/* first: freed through it */
	int32_t idx;
};

static inline struct ernic_ah *to_eah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct ernic_ah, ibah);
}

static inline struct ernic_srq *to_esrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct ernic_srq, ibsrq);
}

static inline struct ernic_qp *to_eqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct ernic_qp, vqp.qp);
}

struct ibv_cq_ex *ernic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *ernic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
void ernic_qp_ex_free(struct ernic_qp *qp);
void ernic_cq_ex_free(struct ernic_cq *cq);
int ernic_cq_init(struct ernic_cq *cq);
int ernic_create_qp_cmd(struct ibv_context *context, struct ernic_qp *qp,
			struct ibv_qp_init_attr_ex *attr,
			struct ernic_create_qp_resp *resp);
int ernic_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
void ernic_cq_attach(struct ernic_qp *qp);
void ernic_cq_detach(struct ernic_qp *qp);

/* ernic_direct.c: direct QPs */
int ernic_dq_map(struct ernic_qp *qp, struct ibv_pd *pd,
		 const struct ernic_create_qp_resp *resp,
		 const struct ibv_qp_cap *cap);
void ernic_dq_unmap(struct ernic_qp *qp);
int ernic_dq_post_send(struct ernic_qp *qp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad, bool whole);
int ernic_dq_post_recv(struct ernic_qp *qp, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad);
int ernic_dq_poll_sq(struct ernic_qp *qp, int n, struct ibv_wc *wc);
void ernic_dq_poll_begin(struct ernic_qp *qp);
int ernic_dq_poll_rq(struct ernic_qp *qp, int n, struct ibv_wc *wc);
void ernic_dq_modified(struct ernic_qp *qp, const struct ibv_qp_attr *attr,
		       int mask);
void ernic_put_sges(uint8_t *g, const struct ibv_sge *sg, int n);
void ernic_meta_wc(const uint8_t *m, bool ud, struct ibv_wc *wc);

/* ernic_srq.c: shared receive queues */
struct ibv_srq *ernic_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int ernic_destroy_srq(struct ibv_srq *ibsrq);
int ernic_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int mask);
int ernic_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int ernic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad);
uint64_t ernic_srq_complete(struct ernic_srq *srq, uint32_t slot);
struct ibv_srq *ernic_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr);
int ernic_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int ernic_srq_poll_xrc(struct ernic_srq *srq, int n, struct ibv_wc *wc);

/*
 * The uverbs commands whose driver API changed in rdma-core 57, for any
 * rdma-core (CMakeLists.txt finds which): no file descriptors passed, no
 * provider attributes.
 */
static inline int
ernic_cmd_get_context(struct verbs_context *ctx, struct ibv_get_context *cmd,
		      size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
		      size_t resp_size)
{
#ifdef ERNIC_CMD_FD_ARR
	return ibv_cmd_get_context(ctx, cmd, cmd_size, NULL, resp, resp_size);
#else
	return ibv_cmd_get_context(ctx, cmd, cmd_size, resp, resp_size);
#endif
}

static inline int
ernic_cmd_create_cq_ex(struct ibv_context *context,
		       const struct ibv_cq_init_attr_ex *attr,
		       struct verbs_cq *cq,
		       struct ib_uverbs_ex_create_cq_resp *resp,
		       size_t resp_size)
{
#ifdef ERNIC_CMD_CQ_PROV_ATTR
	return ibv_cmd_create_cq_ex(context, attr, NULL, cq, NULL, 0, resp,
				    resp_size, 0);
#else
	return ibv_cmd_create_cq_ex(context, attr, cq, NULL, 0, resp,
				    resp_size, 0);
#endif
}

#endif /* ERNIC_PROVIDER_H */
