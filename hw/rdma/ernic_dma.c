/*
 * ERNIC device DMA: every access the device makes to guest (or card)
 * memory, and the re-entrancy guard that keeps that DMA from reaching
 * the device's own BARs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci_device.h"
#include "exec/memory.h"
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

/* An injected refusal (docs/debugging.md, "map-refuse"). */
static bool ernic_dma_map_faulted(ErnicCore *c)
{
    if (c->fault.map_skip) {
        c->fault.map_skip--;
        return false;
    }
    c->fault.map_refuse--;
    c->fault.count[ERNIC_FC_MAP_REFUSE]++;
    return true;
}

/*
 * Map @len bytes at bus address @addr for the device to read in place
 * (docs/engine.md, "Payload in place"): only guest RAM the device could
 * read directly, and all of it; anything else (MMIO, a ROM device, the
 * end of RAM, RecoNIC's windows, an IOMMU fault) is NULL, and the caller
 * reads it with ernic_dma_read() as before. The region is checked before
 * it is mapped so that MMIO is never read twice: address_space_map()
 * would read it into a bounce buffer.
 */
const void *ernic_dma_map(ErnicCore *c, uint64_t addr, uint32_t len)
{
    AddressSpace *as = pci_get_address_space(c->owner);
    hwaddr xlat, plen = len;
    dma_addr_t mlen = len;
    MemoryRegion *mr;
    void *p;

    if (c->rn || !len ||
        (unlikely(c->fault.map_refuse) && ernic_dma_map_faulted(c))) {
        return NULL;
    }
    WITH_RCU_READ_LOCK_GUARD() {
        mr = address_space_translate(as, addr, &xlat, &plen, false,
                                     MEMTXATTRS_UNSPECIFIED);
        if (!memory_access_is_direct(mr, false, MEMTXATTRS_UNSPECIFIED)) {
            plen = 0;
        }
        if (plen < len) {
            trace_ernic_dma_map_refused(addr, len, plen);
            return NULL;
        }
    }
    p = pci_dma_map(c->owner, addr, &mlen, DMA_DIRECTION_TO_DEVICE);
    if (p && mlen < len) {
        /* The memory map changed in between: take none of it. */
        pci_dma_unmap(c->owner, p, mlen, DMA_DIRECTION_TO_DEVICE, 0);
        p = NULL;
    }
    if (!p) {
        trace_ernic_dma_map_refused(addr, len, mlen);
    }
    return p;
}

void ernic_dma_unmap(ErnicCore *c, const void *p, uint32_t len)
{
    pci_dma_unmap(c->owner, (void *)p, len, DMA_DIRECTION_TO_DEVICE, len);
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

bool ernic_dma_idle(void)
{
    return ernic_nesting == 0;
}
