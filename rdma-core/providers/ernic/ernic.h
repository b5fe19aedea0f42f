/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rdma-core provider for ernic, QEMU's model of the Xilinx/AMD ERNIC
 * RoCEv2 RNIC (PG332 v3.1) with its ERNIC-X extension.
 */
#ifndef ERNIC_PROVIDER_H
#define ERNIC_PROVIDER_H

#include <infiniband/driver.h>

/* The PCI identity of -device ernic (ERNIC_PCI_VENDOR_ID, _DEVICE_ID). */
#include "hw/rdma/ernic_regs.h"

/* The kernel driver's uverbs_abi_ver (guest-driver/ernic_ib.c). */
#define ERNIC_UVERBS_ABI	1

struct ernic_device {
	struct verbs_device ibv_dev;
};

struct ernic_context {
	struct verbs_context ibv_ctx;
};

#endif /* ERNIC_PROVIDER_H */
