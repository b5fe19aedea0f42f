/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The provider's uverbs commands with the driver-private data of
 * <rdma/ernic-abi.h>, the one ABI header the driver includes too
 * (include/uapi/rdma/ernic-abi.h; scripts/build-rdma-core.sh puts it in
 * kernel-headers/rdma/ and registers it with rdma_kernel_provider_abi()).
 */
#ifndef ERNIC_PROVIDER_ABI_H
#define ERNIC_PROVIDER_ABI_H

#include <infiniband/kern-abi.h>
#include <rdma/ernic-abi.h>
#include <kernel-abi/ernic-abi.h>

DECLARE_DRV_CMD(ernic_cmd_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, ernic_alloc_ucontext_resp);
DECLARE_DRV_CMD(ernic_cmd_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		ernic_create_qp_cmd, ernic_create_qp_resp);
DECLARE_DRV_CMD(ernic_cmd_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		ernic_create_srq_cmd, ernic_create_srq_resp);
DECLARE_DRV_CMD(ernic_cmd_create_xsrq, IB_USER_VERBS_CMD_CREATE_XSRQ,
		ernic_create_srq_cmd, ernic_create_srq_resp);
DECLARE_DRV_CMD(ernic_cmd_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, ernic_create_ah_resp);
DECLARE_DRV_CMD(ernic_cmd_reg_mr, IB_USER_VERBS_CMD_REG_MR,
		ernic_reg_mr_cmd, empty);

#endif /* ERNIC_PROVIDER_ABI_H */
