/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The uverbs ABI of the ernic guest driver (guest-driver/) and its
 * rdma-core provider (rdma-core/providers/ernic): the driver-private data
 * of get_context and create_qp. A uapi header, as Linux's
 * include/uapi/rdma/erdma-abi.h: the driver includes it as
 * <rdma/ernic-abi.h>; rdma-core takes it into kernel-headers/rdma/, where
 * buildlib/make_abi_structs.py turns its structs into the ones the
 * provider's DECLARE_DRV_CMD() wrappers embed (scripts/build-rdma-core.sh).
 *
 * A provider that sends none of this (an older one) gets what it got
 * before: every verb a command. A driver that answers none of it (an
 * older one) reads as "no direct QPs" to the provider.
 */
#ifndef ERNIC_ABI_USER_H
#define ERNIC_ABI_USER_H

#include <linux/types.h>

/* The uverbs ABI version of this header (ib_device_ops.uverbs_abi_ver). */
#define ERNIC_UVERBS_ABI_VERSION	1

/*
 * send_flags of the first WR of a chain built with ibv_wr_*(): the driver
 * posts the chain whole or not at all, as ibv_wr_complete(3) asks. The
 * first of the bits the kernel reserves for drivers
 * (IB_SEND_RESERVED_START); uverbs passes send_flags through as they are.
 */
#define ERNIC_SEND_WHOLE_CHAIN		(1u << 26)

/* get_context response: what this context may do. */
#define ERNIC_UCTX_DIRECT	(1u << 0)	/* direct QPs (ERNIC-X UDB) */
#define ERNIC_UCTX_ATOMIC	(1u << 1)	/* atomics (ERNIC-X ATOMIC) */
#define ERNIC_UCTX_MW		(1u << 2)	/* memory windows (ERNIC-X MW) */
#define ERNIC_UCTX_PLACE	(1u << 3)	/* FLUSH, ATOMIC WRITE (PLACE) */
#define ERNIC_UCTX_XRC		(1u << 4)	/* XRC (ERNIC-X XRC) */
/*
 * Direct QPs' doorbell pages read CQHEAD and RQPI (ERNIC-X UPOLL): a
 * process that keeps finding its CQ empty reads one now and then, which
 * gives its vCPU's host CPU to the device (docs/driver.md, "Polling").
 */
#define ERNIC_UCTX_UPOLL	(1u << 5)

struct ernic_alloc_ucontext_resp {
	__u32 flags;
	__u32 reserved;
};

/*
 * reg_mr: access beyond what the kernel's reg_mr takes (Linux 6.1 knows
 * no IB_ACCESS_FLUSH_*, and refuses the bits): FLUSH with global
 * placement, MRACC[15] of ERNIC-X PLACE (docs/driver.md, "FLUSH").
 */
#define ERNIC_MR_FLUSH_GLOBAL	(1u << 0)

struct ernic_reg_mr_cmd {
	__u32 access;				/* ERNIC_MR_* */
	__u32 reserved;
};

/*
 * create_qp: a direct QP is one whose rings and ERNIC-X doorbell page
 * (docs/extension.md, "User QPs") are mapped into the process, which
 * writes its WQEs and polls its completions without a system call
 * (docs/driver.md, "Direct QPs").
 */
#define ERNIC_QP_DIRECT		(1u << 0)
/*
 * With ERNIC_QP_DIRECT: the QP has an ERNIC-X SQ doorbell record
 * (docs/extension.md, "Doorbell records"), the last 4 bytes of the SQ
 * region (len[ERNIC_UQ_SQ] - 4), past its sq_depth 128-byte WQEs. The
 * process stores the producer index there, then writes SQPI of the
 * doorbell page with any value. Asked for in the command, granted in
 * the answer.
 */
#define ERNIC_QP_DBREC		(1u << 1)
/*
 * With ERNIC_QP_DBREC: the record has a second word, the RQ's (ERNIC-X
 * RQREC), and is then the last 8 bytes of the SQ region
 * (len[ERNIC_UQ_SQ] - 8), the SQ's index first. The process stores the
 * RQ consumer index in the second word and writes no RQCI: the device
 * reads the word when a message finds the RQ empty. Asked for in the
 * command, granted in the answer.
 */
#define ERNIC_QP_RQREC		(1u << 2)

struct ernic_create_qp_cmd {
	__u32 flags;				/* ERNIC_QP_DIRECT: asked for */
	__u32 reserved;
};

/* The regions of a direct QP, each mapped at its own key. */
enum ernic_uq_region {
	ERNIC_UQ_SQ,		/* sq_depth 128-byte WQEs, read-write */
	ERNIC_UQ_RQ,		/* rq_depth 64-byte receive WQEs, read-write */
	ERNIC_UQ_CQ,		/* sq_depth 4-byte CQEs, read-only */
	ERNIC_UQ_META,		/* rq_depth receive metadata entries, read-only */
	ERNIC_UQ_STATUS,	/* struct ernic_uq_status, read-only */
	ERNIC_UQ_UDB,		/* the QP's doorbell page in BAR3 */
	ERNIC_UQ_NR
};

struct ernic_create_qp_resp {
	__u32 flags;				/* ERNIC_QP_DIRECT: granted */
	__u32 sq_depth;				/* powers of two */
	__u32 rq_depth;
	__u32 ud_mtu;				/* a UD QP's message limit */
	__aligned_u64 key[ERNIC_UQ_NR];		/* mmap offsets */
	__aligned_u64 len[ERNIC_UQ_NR];		/* mapping lengths */
};

/*
 * create_srq: a direct SRQ (ERNIC-X SRQ with UDB, docs/extension.md,
 * "Shared receive queues") has its ring and its doorbell page mapped
 * into the process, which writes its receive WQEs and rings SRQPIn; its
 * direct QPs report which WQE each message took. A user SRQ is always
 * direct: the driver refuses one that is not asked for as such.
 */
#define ERNIC_SRQ_DIRECT	(1u << 0)

struct ernic_create_srq_cmd {
	__u32 flags;				/* ERNIC_SRQ_DIRECT: asked for */
	__u32 reserved;
};

enum ernic_usrq_region {
	ERNIC_USRQ_RING,	/* depth 64-byte receive WQEs, read-write */
	ERNIC_USRQ_UDB,		/* the SRQ's doorbell page in BAR3 */
	ERNIC_USRQ_NR
};

struct ernic_create_srq_resp {
	__u32 flags;				/* ERNIC_SRQ_DIRECT: granted */
	__u32 depth;				/* ring slots, a power of two */
	__aligned_u64 key[ERNIC_USRQ_NR];	/* mmap offsets */
	__aligned_u64 len[ERNIC_USRQ_NR];	/* mapping lengths */
};

/*
 * create_ah: the entry of the device's AH table (ERNIC-X UD) that a
 * direct UD QP's WQEs name, or -1 where there is none.
 */
struct ernic_create_ah_resp {
	__s32 idx;
	__u32 reserved;
};

/*
 * The status page of a direct QP. The device writes the two doorbell
 * words (PG332 CQDBADDi, RQWPTRDBADDi); the driver writes the rest, the
 * IBTA state as enum ib_qp_state (= enum ibv_qp_state) and the status of
 * the first ERRFLAG completion as enum ib_wc_status (= enum
 * ibv_wc_status), or ERNIC_UQ_NO_STATUS.
 */
struct ernic_uq_status {
	__le32 cq_db;				/* CQHEADi */
	__le32 rq_db;				/* the RQ producer index */
	__u32 state;
	__u32 err_status;
};

#define ERNIC_UQ_NO_STATUS	0xffffffffu

#endif /* ERNIC_ABI_USER_H */
