/*
 * ERNIC device DMA: every access the device makes to guest (or card)
 * memory, and the re-entrancy guard that keeps that DMA from reaching
 * the device's own BARs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci_device.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * @len bytes at bus address @addr into @rbuf, or from @wbuf: through
 * RecoNIC's card memory or bridge windows where the layout has them
 * (ernic_reconic.c), else PCI DMA.
 */
static bool ernic_dma_rw(ErnicCore *c, uint64_t addr, void *rbuf,
                         const void *wbuf, uint64_t len)
{
    bool ok;

    if (!len) {
        return true;
    }
    if (ernic_reconic_dma(c, addr, rbuf, wbuf, len, &ok)) {
        return ok;
    }
    if ((wbuf ? pci_dma_write(c->owner, addr, wbuf, len) :
                pci_dma_read(c->owner, addr, rbuf, len)) != MEMTX_OK) {
        trace_ernic_dma_error(addr, len, wbuf != NULL);
        return false;
    }
    return true;
}

bool ernic_dma_read(ErnicCore *c, uint64_t addr, void *buf, uint64_t len)
{
    return ernic_dma_rw(c, addr, buf, NULL, len);
}

bool ernic_dma_write(ErnicCore *c, uint64_t addr, const void *buf,
                     uint64_t len)
{
    return ernic_dma_rw(c, addr, NULL, buf, len);
}

/*
 * QEMU engages a device's re-entrancy guard around its MMIO handlers and
 * guarded bottom halves, and the net layer around receive; a timer runs
 * outside both. Engaged, the guard makes a DMA that reaches the device's
 * own registers fail (MEMTX_ACCESS_ERROR) instead of re-entering it.
 */
bool ernic_dma_guard_enter(ErnicCore *c)
{
    MemReentrancyGuard *g = &DEVICE(c->owner)->mem_reentrancy_guard;

    ernic_dma_enter();
    if (g->engaged_in_io) {
        return false;
    }
    g->engaged_in_io = true;
    return true;
}

void ernic_dma_guard_exit(ErnicCore *c, bool entered)
{
    if (entered) {
        DEVICE(c->owner)->mem_reentrancy_guard.engaged_in_io = false;
    }
    ernic_dma_leave();
}

/*
 * Device DMA can reach another ernic's registers, and a hub delivers a
 * frame inside the sender's transmit: an ernic may find another's (or its
 * own) engine below it on the stack. All of it runs under the BQL, so one
 * count serves every device of the process.
 */
static unsigned ernic_nesting;

void ernic_dma_enter(void)
{
    ernic_nesting++;
}

void ernic_dma_leave(void)
{
    ernic_nesting--;
}

bool ernic_dma_alone(void)
{
    return ernic_nesting == 1;
}
