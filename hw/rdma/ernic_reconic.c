/*
 * RecoNIC's shell around ERNIC, for -device ernic,layout=reconic
 * (docs/boards.md).
 *
 * On a RecoNIC card (AMD RecoNIC on an Alveo U250) ERNIC sits behind a
 * QDMA PCIe bridge. The library that drives it from user space maps
 * resource2, a 4 MiB BAR, finds ERNIC's PG332 registers at 0x40000 of it,
 * programs the bridge's AXI-to-PCIe translation windows at 0x16420, and
 * keeps data in the card's DDR, which ERNIC reaches at AXI address
 * 0xa350000000000000 and the host through the QDMA driver's character
 * device. This file is that shell: the BAR, the window registers, and the
 * card memory, which the host reaches through BAR4.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "ernic_qemu.h"
#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * The bridge's window registers (QDMA "AXI bridge BDF table", docs/boards.md
 * "QDMA bridge windows"). Six words per window: translation LSB/MSB,
 * PASID, function, map control (access permission [31:30], the sticky
 * access error [29], window size [25:0] in 4 KiB pages) and a reserved
 * word. Every engine access to a host address goes through them
 * (ernic_reconic_dma()).
 */
/* The window word at @addr of the bridge's page, or -1 (unsigned wrap). */
static hwaddr ernic_reconic_axib_word(hwaddr addr, unsigned size)
{
    hwaddr off = addr - (ERNIC_RN_AXIB_BASE & 0xfff);

    if (size != 4 || (addr & 3) ||
        off >= ERNIC_RN_AXIB_WINDOWS * ERNIC_RN_AXIB_STRIDE) {
        return -1;
    }
    return off / 4;
}

static uint64_t ernic_reconic_axib_read(void *opaque, hwaddr addr,
                                        unsigned size)
{
    ErnicReconic *rn = opaque;
    hwaddr w = ernic_reconic_axib_word(addr, size);

    return w == (hwaddr)-1 ? 0 : rn->axib_regs[w];
}

static void ernic_reconic_axib_write(void *opaque, hwaddr addr, uint64_t val,
                                     unsigned size)
{
    ErnicReconic *rn = opaque;
    hwaddr w = ernic_reconic_axib_word(addr, size);

    if (w == (hwaddr)-1) {
        qemu_log_mask(LOG_UNIMP, "ernic: QDMA bridge register 0x%"
                      HWADDR_PRIx " (size %u) not modelled\n",
                      (hwaddr)(addr + (ERNIC_RN_AXIB_BASE & ~0xfff)), size);
        return;
    }
    if (w % (ERNIC_RN_AXIB_STRIDE / 4) == ERNIC_RN_AXIB_MAPCTL / 4) {
        /* [29] is the bridge's; programming the entry anew clears it. */
        val &= ~(uint64_t)ERNIC_RN_AXIB_ERROR;
    }
    rn->axib_regs[w] = val;
    trace_ernic_rn_axib(w * 4 / ERNIC_RN_AXIB_STRIDE,
                        w * 4 % ERNIC_RN_AXIB_STRIDE, val);
}

static const MemoryRegionOps ernic_axib_ops = {
    .read = ernic_reconic_axib_read,
    .write = ernic_reconic_axib_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};

/*
 * The rest of the shell (packet classification, compute logic, the QDMA
 * CSRs the library does not program): reads 0, writes are dropped.
 */
static uint64_t ernic_reconic_shell_read(void *opaque, hwaddr addr,
                                         unsigned size)
{
    return 0;
}

static void ernic_reconic_shell_write(void *opaque, hwaddr addr, uint64_t val,
                                      unsigned size)
{
    qemu_log_mask(LOG_UNIMP, "ernic: RecoNIC shell register 0x%" HWADDR_PRIx
                  " not modelled (write 0x%" PRIx64 " dropped)\n", addr, val);
}

static const MemoryRegionOps ernic_shell_ops = {
    .read = ernic_reconic_shell_read,
    .write = ernic_reconic_shell_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};

/*
 * Card memory of our own: preallocated, because DDR on the card has no
 * first-touch cost, and QEMU's lazily backed RAM stalls the main loop for
 * 10-16 ms per 2 MiB the first time the engine writes there (issue 35;
 * docs/boards.md, "Card memory").
 */
static MemoryRegion *ernic_reconic_own_card(ErnicReconic *rn, Object *owner,
                                            uint64_t size, Error **errp)
{
    if (!memory_region_init_ram(&rn->own_card, owner, "ernic-card-mem",
                                size, errp) ||
        !qemu_prealloc_mem(-1, memory_region_get_ram_ptr(&rn->own_card),
                           size, 1, NULL, false, errp)) {
        return NULL;
    }
    return &rn->own_card;
}

/*
 * @card: a memory backend's region (card-memdev), which migrates as this
 * device's RAM as ivshmem's memdev does; NULL for memory of our own.
 */
bool ernic_reconic_init(ErnicReconic *rn, ErnicCore *c, Object *owner,
                        MemoryRegion *regs, MemoryRegion *card,
                        uint64_t card_size, Error **errp)
{
    if (card) {
        vmstate_register_ram(card, DEVICE(owner));
    } else {
        card = ernic_reconic_own_card(rn, owner, card_size, errp);
        if (!card) {
            return false;
        }
    }
    rn->card = card;
    memory_region_init(&rn->bar, owner, "ernic-reconic-bar2",
                       ERNIC_RN_SHELL_SIZE);
    memory_region_init_io(&rn->shell, owner, &ernic_shell_ops, rn,
                          "ernic-reconic-shell", ERNIC_RN_SHELL_SIZE);
    memory_region_init_io(&rn->axib, owner, &ernic_axib_ops, rn,
                          "ernic-qdma-axib", 0x1000);
    memory_region_add_subregion_overlap(&rn->bar, 0, &rn->shell, -1);
    memory_region_add_subregion(&rn->bar, ERNIC_RN_AXIB_BASE & ~0xfffull,
                                &rn->axib);
    memory_region_add_subregion(&rn->bar, ERNIC_RN_ERNIC_BASE, regs);

    c->rn = rn;
    c->card = card;
    c->card_ptr = memory_region_get_ram_ptr(card);
    c->card_size = card_size;
    return true;
}

/* A backend's region goes back to the backend, which may be reused. */
void ernic_reconic_exit(ErnicReconic *rn, DeviceState *owner)
{
    if (rn->card && rn->card != &rn->own_card) {
        vmstate_unregister_ram(rn->card, owner);
    }
}

void ernic_reconic_reset(ErnicReconic *rn)
{
    memset(rn->axib_regs, 0, sizeof(rn->axib_regs));
}

/*
 * An engine access to ERNIC_RN_CARD_ADDR's 1/4096 of the AXI space is the
 * card's DDR, never a host (PCIe) address. False when the access did not
 * fit the card memory: beyond it the interconnect answers with an error,
 * a failed DMA to the engine, and nothing wraps to offset 0.
 */
static bool ernic_reconic_card_dma(ErnicCore *c, uint64_t addr, void *rbuf,
                                   const void *wbuf, uint64_t len)
{
    uint64_t off = addr - ERNIC_RN_CARD_ADDR;

    if (off >= c->card_size || len > c->card_size - off) {
        trace_ernic_dma_error(addr, len, wbuf != NULL);
        return false;
    } else if (wbuf) {
        memcpy(c->card_ptr + off, wbuf, len);
        memory_region_set_dirty(c->card, off, len);
    } else {
        memcpy(rbuf, c->card_ptr + off, len);
    }
    return true;
}

/*
 * The PCIe address of @len bytes at AXI address @addr, all within one
 * window, or false: outside the AXI BAR (a decode error), or a window
 * that does not permit the access or is smaller than the offset reached
 * (the bridge answers with an error and sets the window's [29]).
 */
static bool ernic_reconic_axib_translate(ErnicReconic *rn, uint64_t addr,
                                         uint64_t len, bool write,
                                         uint64_t *pcie)
{
    uint64_t wmax = 1ULL << ERNIC_RN_AXIB_WIN_SHIFT;
    unsigned w = addr >> ERNIC_RN_AXIB_WIN_SHIFT;
    uint64_t off = addr & (wmax - 1);
    uint32_t *e, ctl;
    uint64_t size, xlate;

    if (addr >= ERNIC_RN_AXI_BAR_SIZE) {
        trace_ernic_rn_axib_error(-1, addr, len, write);
        return false;
    }
    e = &rn->axib_regs[w * ERNIC_RN_AXIB_STRIDE / 4];
    ctl = e[ERNIC_RN_AXIB_MAPCTL / 4];
    size = (uint64_t)(ctl & ERNIC_RN_AXIB_SIZE_MASK) << 12;
    if (!(ctl & (write ? ERNIC_RN_AXIB_WRITE : ERNIC_RN_AXIB_READ)) ||
        off >= size || len > size - off) {
        e[ERNIC_RN_AXIB_MAPCTL / 4] = ctl | ERNIC_RN_AXIB_ERROR;
        trace_ernic_rn_axib_error(w, addr, len, write);
        return false;
    }
    xlate = deposit64(e[ERNIC_RN_AXIB_XLATE_LSB / 4], 32, 32,
                      e[ERNIC_RN_AXIB_XLATE_MSB / 4]);
    *pcie = (xlate & ~(wmax - 1)) | off;
    return true;
}

/*
 * A host access through the bridge, cut at window boundaries as the
 * bridge cuts an AXI burst: each part translated by its own window.
 * Bounded: every part but the first starts a window, and the windows
 * end at 1 TiB.
 */
static bool ernic_reconic_axib_dma(ErnicCore *c, uint64_t addr, uint8_t *rbuf,
                                   const uint8_t *wbuf, uint64_t len)
{
    uint64_t wmax = 1ULL << ERNIC_RN_AXIB_WIN_SHIFT;

    while (len) {
        uint64_t part = MIN(len, wmax - (addr & (wmax - 1)));
        uint64_t pcie;
        MemTxResult res;

        if (!ernic_reconic_axib_translate(c->rn, addr, part, wbuf != NULL,
                                          &pcie)) {
            return false;
        }
        res = wbuf ? pci_dma_write(c->owner, pcie, wbuf, part) :
                     pci_dma_read(c->owner, pcie, rbuf, part);
        if (res != MEMTX_OK) {
            trace_ernic_dma_error(pcie, part, wbuf != NULL);
            return false;
        }
        rbuf = rbuf ? rbuf + part : NULL;
        wbuf = wbuf ? wbuf + part : NULL;
        addr += part;
        len -= part;
    }
    return true;
}

/*
 * Every engine access of layout=reconic: into @rbuf, or from @wbuf. True
 * when this layout took it (on the default layout it does not, and the
 * access is a PCIe address as it is); *ok then says whether it succeeded.
 */
bool ernic_reconic_dma(ErnicCore *c, uint64_t addr, void *rbuf,
                       const void *wbuf, uint64_t len, bool *ok)
{
    if (!c->rn) {
        return false;
    }
    if ((addr & ERNIC_RN_CARD_MASK) == ERNIC_RN_CARD_ADDR) {
        *ok = ernic_reconic_card_dma(c, addr, rbuf, wbuf, len);
    } else {
        *ok = ernic_reconic_axib_dma(c, addr, rbuf, wbuf, len);
    }
    return true;
}

const VMStateDescription ernic_vmstate_reconic = {
    .name = "ernic/reconic",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_ARRAY(axib_regs, ErnicReconic,
                             ERNIC_RN_AXIB_WINDOWS * ERNIC_RN_AXIB_STRIDE / 4),
        VMSTATE_END_OF_LIST()
    },
};
