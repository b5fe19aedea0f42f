/*
 * ERNIC device DMA: every access the device makes to guest (or card)
 * memory, and the check that keeps the DMA of timers from reaching the
 * device's own BARs.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "ernic_qemu.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * QEMU engages a device's re-entrancy guard around its MMIO handlers and
 * guarded bottom halves, and the net layer around receive: there a DMA
 * that reaches the device's own registers fails (MEMTX_ACCESS_ERROR)
 * instead of re-entering it. Timers and ioeventfd handlers run outside
 * the guard, so their DMA is checked here, range by range of the bus
 * address space, and refused the same way (docs/security.md, rule 4).
 */
void ernic_dma_timer_enter(ErnicCore *c)
{
    ernic_dma_enter();
    c->dma_unguarded++;
}

void ernic_dma_timer_exit(ErnicCore *c)
{
    c->dma_unguarded--;
    ernic_dma_leave();
}

/* Whether [@addr, @addr + @len) meets an MMIO region of the device. */
static bool ernic_dma_reaches_self(ErnicCore *c, uint64_t addr, uint64_t len)
{
    AddressSpace *as = pci_get_address_space(c->owner);
    MemoryRegion *mr;
    hwaddr xlat, plen;

    RCU_READ_LOCK_GUARD();
    while (len) {
        plen = len;
        mr = address_space_translate(as, addr, &xlat, &plen, false,
                                     MEMTXATTRS_UNSPECIFIED);
        if (mr->owner == OBJECT(c->owner) && !memory_region_is_ram(mr)) {
            return true;
        }
        if (!plen || plen >= len) {
            return false;
        }
        addr += plen;
        len -= plen;
    }
    return false;
}

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
    if (unlikely(c->dma_unguarded) && ernic_dma_reaches_self(c, addr, len)) {
        trace_ernic_dma_reentrant(addr, len, wbuf != NULL);
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: DMA at 0x%" PRIx64
                      " reaches the device's own registers: refused\n", addr);
        return false;
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
