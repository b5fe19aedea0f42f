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
#include "exec/memory.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * The bridge's window registers (QDMA "AXI bridge BDF table"): stored and
 * read back. Translation is identity: RecoNIC programs each window to map
 * its AXI range onto the same PCIe range (its library masks host
 * addresses with the 1 TiB window size and writes the high bits back as
 * the translation), so the engine's AXI address is the bus address.
 */
/* The window word at @addr of the bridge's page, or -1 (unsigned wrap). */
static hwaddr ernic_axib_word(hwaddr addr, unsigned size)
{
    hwaddr off = addr - (ERNIC_RN_AXIB_BASE & 0xfff);

    if (size != 4 || (addr & 3) ||
        off >= ERNIC_RN_AXIB_WINDOWS * ERNIC_RN_AXIB_STRIDE) {
        return -1;
    }
    return off / 4;
}

static uint64_t ernic_axib_read(void *opaque, hwaddr addr, unsigned size)
{
    ErnicReconic *rn = opaque;
    hwaddr w = ernic_axib_word(addr, size);

    return w == (hwaddr)-1 ? 0 : rn->axib_regs[w];
}

static void ernic_axib_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    ErnicReconic *rn = opaque;
    hwaddr w = ernic_axib_word(addr, size);

    if (w == (hwaddr)-1) {
        qemu_log_mask(LOG_UNIMP, "ernic: QDMA bridge register 0x%"
                      HWADDR_PRIx " (size %u) not modelled\n",
                      (hwaddr)(addr + (ERNIC_RN_AXIB_BASE & ~0xfff)), size);
        return;
    }
    rn->axib_regs[w] = val;
    trace_ernic_rn_axib(w * 4 / ERNIC_RN_AXIB_STRIDE,
                        w * 4 % ERNIC_RN_AXIB_STRIDE, val);
}

static const MemoryRegionOps ernic_axib_ops = {
    .read = ernic_axib_read,
    .write = ernic_axib_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};

/*
 * The rest of the shell (packet classification, compute logic, the QDMA
 * CSRs the library does not program): reads 0, writes are dropped.
 */
static uint64_t ernic_shell_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void ernic_shell_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
    qemu_log_mask(LOG_UNIMP, "ernic: RecoNIC shell register 0x%" HWADDR_PRIx
                  " not modelled (write 0x%" PRIx64 " dropped)\n", addr, val);
}

static const MemoryRegionOps ernic_shell_ops = {
    .read = ernic_shell_read,
    .write = ernic_shell_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 8 },
};

bool ernic_reconic_init(ErnicReconic *rn, ErnicCore *c, Object *owner,
                        MemoryRegion *regs, uint64_t card_size,
                        Error **errp)
{
    if (!memory_region_init_ram(&rn->card, owner, "ernic-card-mem",
                                card_size, errp)) {
        return false;
    }
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

    c->card = &rn->card;
    c->card_ptr = memory_region_get_ram_ptr(&rn->card);
    c->card_size = card_size;
    return true;
}

void ernic_reconic_reset(ErnicReconic *rn)
{
    memset(rn->axib_regs, 0, sizeof(rn->axib_regs));
}

/*
 * An engine access to ERNIC_RN_CARD_ADDR's 1/4096 of the AXI space is the
 * card's DDR, never a host (PCIe) address: into @rbuf, or from @wbuf.
 * True when @addr is there; *ok then says whether the access fit the
 * card memory (beyond it the interconnect answers with an error, a failed
 * DMA to the engine).
 */
bool ernic_card_dma(ErnicCore *c, uint64_t addr, void *rbuf,
                    const void *wbuf, uint64_t len, bool *ok)
{
    uint64_t off = addr - ERNIC_RN_CARD_ADDR;

    if (!c->card_ptr || (addr & ERNIC_RN_CARD_MASK) != ERNIC_RN_CARD_ADDR) {
        return false;
    }
    *ok = off < c->card_size && len <= c->card_size - off;
    if (!*ok) {
        trace_ernic_dma_error(addr, len, wbuf != NULL);
    } else if (wbuf) {
        memcpy(c->card_ptr + off, wbuf, len);
        memory_region_set_dirty(c->card, off, len);
    } else {
        memcpy(rbuf, c->card_ptr + off, len);
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
