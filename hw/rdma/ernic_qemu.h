/*
 * ERNIC: what differs between the QEMU versions the device builds on,
 * in one place (README, "Which QEMU"). The device is written for the
 * newest QEMU; this header maps it back.
 *
 * - 10.1 moved exec/memory.h to system/memory.h and gave class_init a
 *   const data pointer;
 * - master moves hw/qdev-properties.h to hw/core/.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_ERNIC_QEMU_H
#define HW_RDMA_ERNIC_QEMU_H

#define ERNIC_QEMU_VERSION(major, minor) ((major) * 100 + (minor))
#define ERNIC_QEMU_THIS \
    ERNIC_QEMU_VERSION(QEMU_VERSION_MAJOR, QEMU_VERSION_MINOR)

#if ERNIC_QEMU_THIS >= ERNIC_QEMU_VERSION(10, 1)
#include "system/memory.h"
/* The data argument of a TypeInfo's class_init. */
typedef const void ErnicClassData;
#else
#include "exec/memory.h"
typedef void ErnicClassData;
#endif

#if __has_include("hw/core/qdev-properties.h")
#include "hw/core/qdev-properties.h"
#else
#include "hw/qdev-properties.h"
#endif

#endif
