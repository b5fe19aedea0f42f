// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * User-space verbs on ernic: what a process may ask of the device.
 *
 * The rdma-core provider (rdma-core/providers/ernic) maps nothing of the
 * device. ERNIC's per-QP register blocks are 256 bytes, sixteen to a 4 KiB
 * page, and hold ring base addresses (PG332 Table 2-9), so no page of BAR0
 * can be handed to one process. Every verb, posting and polling included,
 * goes through uverbs' commands into this driver, as rxe's doorbell and
 * the ipath provider's verbs do, and the driver writes every WQE itself
 * (docs/driver.md, "User space"). What keeps a process to its own memory:
 *
 * - a user QP is an RC QP on a device with ERNIC-X MR, keyed SGEs,
 *   receive WQEs and receive metadata (docs/extension.md): the device
 *   then reaches a process's memory only through an MR, checking key,
 *   PD (the QP's), bounds and access on every local and remote access;
 * - every SGE of a user WR has a non-zero L_Key: L_Key 0 names a bus
 *   address (docs/extension.md, "Keyed SGEs");
 * - only the opcodes uverbs passes on, and no local (REG_MR, LOCAL_INV)
 *   ones;
 * - inline data is read with copy_from_user() into the driver's own
 *   buffer (ernic_wr.c);
 * - uverbs gives a process handles of its own objects only, so it cannot
 *   name another process's QP, CQ, PD or MR.
 */

#include "ernic.h"

/* The ERNIC-X features without which a process could name bus memory. */
#define ERNIC_USER_FEATURES	(ERNIC_EXT_F_MR | ERNIC_EXT_F_XWQE | \
				 ERNIC_EXT_F_RXWQE | ERNIC_EXT_F_RXMETA)

bool ernic_user_capable(struct ernic_dev *dev)
{
	return (dev->ext & ERNIC_USER_FEATURES) == ERNIC_USER_FEATURES;
}

/*
 * Any process may open the device (ibv_devinfo, queries); without
 * ERNIC-X, reg_user_mr and user QPs are refused with -EOPNOTSUPP.
 */
int ernic_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(uctx->device);

	if (!ernic_user_capable(dev))
		ibdev_dbg(&dev->ibdev,
			  "user context without ERNIC-X: no user MRs or QPs\n");
	return 0;
}

void ernic_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/* Nothing of the device or of the driver's queues is mapped. */
int ernic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	return -EINVAL;
}

/* No SGE may name bus memory: L_Key 0 is the reserved L_Key. */
static bool ernic_sges_keyed(const struct ib_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!sg[i].lkey)
			return false;
	return true;
}

int ernic_user_check_send(struct ernic_qp *qp, const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		break;
	default:
		return -EINVAL;
	}
	if (wr->num_sge < 0 || wr->num_sge > ERNIC_MAX_RW_SGE)
		return -EINVAL;
	if (wr->send_flags & IB_SEND_INLINE)
		return 0;	/* copied from user space, no key */
	return ernic_sges_keyed(wr->sg_list, wr->num_sge) ? 0 : -EINVAL;
}

int ernic_user_check_recv(const struct ib_recv_wr *wr)
{
	return ernic_sges_keyed(wr->sg_list, wr->num_sge) ? 0 : -EINVAL;
}
