/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What differs between the kernels the driver builds on, Debian 12's 6.1
 * to the newest of trixie-backports, in one place, keyed on
 * LINUX_VERSION_CODE as out-of-tree RDMA drivers do. The driver is
 * written for the newest kernel; this header maps it back.
 *
 * Built and checked on Debian's 6.1, 6.12 and 7.3 (scripts/test.sh,
 * test guest-driver-kernels). Where a change came between 6.12 and 7.3
 * and its release was not verified, the boundary is 7.0 and says so.
 */
#ifndef ERNIC_COMPAT_H
#define ERNIC_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>
#include <rdma/ib_umem.h>

/* 6.12: <asm/unaligned.h> became <linux/unaligned.h>. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.11: create_cq takes the uverbs attribute bundle (whose driver_udata
 * is the udata it took before).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define ERNIC_CQ_ATTRS struct uverbs_attr_bundle
#else
#define ERNIC_CQ_ATTRS struct ib_udata
#endif

/*
 * 6.17: reg_user_mr takes a DMA handle (struct ib_dmah). The driver has
 * no alloc_dmah, so the core passes none.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define ERNIC_MR_DMAH struct ib_dmah *dmah,
#else
#define ERNIC_MR_DMAH
#endif

/*
 * 7.0 (not verified; 6.12 has the old, 7.3 the new): the resize_cq op
 * became resize_user_cq with an unsigned count, and ib_umem_get() of a
 * user address became ib_umem_get_va().
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define ERNIC_RESIZE_CQ_OP resize_user_cq
#define ERNIC_CQE_T unsigned int
#else
#define ERNIC_RESIZE_CQ_OP resize_cq
#define ERNIC_CQE_T int
#endif

static inline struct ib_umem *ernic_umem_get(struct ib_device *ibdev,
					     unsigned long addr, size_t size,
					     int access)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return ib_umem_get_va(ibdev, addr, size, access);
#else
	return ib_umem_get(ibdev, addr, size, access);
#endif
}

/* 6.3: vm_flags is written through vm_flags_set() and _clear() only. */
static inline void ernic_vm_flags_clear(struct vm_area_struct *vma,
					vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

#endif /* ERNIC_COMPAT_H */
