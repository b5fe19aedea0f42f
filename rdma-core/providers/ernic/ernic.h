/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rdma-core provider for ernic, QEMU's model of the Xilinx/AMD ERNIC
 * RoCEv2 RNIC (PG332 v3.1) with its ERNIC-X extension.
 */
#ifndef ERNIC_PROVIDER_H
#define ERNIC_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>

#include <infiniband/driver.h>

/* The PCI identity of -device ernic (ERNIC_PCI_VENDOR_ID, _DEVICE_ID). */
#include "hw/rdma/ernic_regs.h"

/* The kernel driver's uverbs_abi_ver (guest-driver/ernic_ib.c). */
#define ERNIC_UVERBS_ABI	1
/*
 * On the first WR of a chain posted by ibv_wr_complete(): the driver
 * posts the chain whole or not at all (guest-driver/ernic.h, the same
 * bit: the first of the send flags the kernel reserves for drivers).
 */
#define ERNIC_SEND_WHOLE_CHAIN	(1u << 26)

struct ernic_device {
	struct verbs_device ibv_dev;
};

struct ernic_context {
	struct verbs_context ibv_ctx;
};

struct ernic_cq {
	struct verbs_cq vcq;		/* first: freed through it */
	struct ibv_wc wc;		/* the completion ibv_*_poll() took */
	/* ibv_start_poll() to ibv_end_poll(): one thread at a time */
	pthread_spinlock_t poll_lock;
	bool poll_api;			/* made by ibv_create_cq_ex() */
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
};

struct ibv_cq_ex *ernic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *ernic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
void ernic_qp_ex_free(struct ernic_qp *qp);
void ernic_cq_ex_free(struct ernic_cq *cq);

#endif /* ERNIC_PROVIDER_H */
