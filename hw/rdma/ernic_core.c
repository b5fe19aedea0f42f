/*
 * ERNIC (Xilinx/AMD PG332 v3.1) device core: the register file and the
 * interrupt logic.
 *
 * The register file is described once, by the lists in
 * include/hw/rdma/ernic_regs.h. This file turns them into per-block lookup
 * tables and applies the access semantics of PG332 Table 2-7: RW, RO, W1C,
 * reserved bits reading 0, and the RO registers that become writable under
 * the XRNICADCONF[0] software override.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "ernic_core.h"
#include "trace.h"

typedef struct ErnicRegInfo {
    const char *name;
    uint32_t reset;
    uint32_t mask;
    uint32_t wmask;
    uint8_t access;
    uint8_t flags;
} ErnicRegInfo;

#define ERNIC_REG_INFO(base, name_, off, acc, rst, mask_, wmask_, flags_, pg) \
    [((off) - (base)) / 4] = {                                               \
        .name = #name_, .reset = (rst), .mask = (mask_),                     \
        .wmask = (wmask_), .access = ERNIC_ACC_##acc,                        \
        .flags = ERNIC_F_##flags_,                                           \
    },
#define ERNIC_PDT_INFO(...)  ERNIC_REG_INFO(0, __VA_ARGS__)
#define ERNIC_GCSR_INFO(...) ERNIC_REG_INFO(ERNIC_GCSR_BASE, __VA_ARGS__)
#define ERNIC_QP_INFO(...)   ERNIC_REG_INFO(0, __VA_ARGS__)
#define ERNIC_EXT_INFO(...)  ERNIC_REG_INFO(ERNIC_EXT_BASE, __VA_ARGS__)

static const ErnicRegInfo ernic_pdt_info[ERNIC_PDT_WORDS] = {
    ERNIC_PDT_REGS(ERNIC_PDT_INFO)
};

static const ErnicRegInfo ernic_gcsr_info[ERNIC_GCSR_WORDS] = {
    ERNIC_GCSR_REGS(ERNIC_GCSR_INFO)
};

static const ErnicRegInfo ernic_qp_info[ERNIC_QP_WORDS] = {
    ERNIC_QP_REGS(ERNIC_QP_INFO)
};

/* ERNIC-X (docs/extension.md): decoded only with the ext property. */
static const ErnicRegInfo ernic_ext_info[ERNIC_EXT_WORDS] = {
    ERNIC_EXT_REGS(ERNIC_EXT_INFO)
};

static const ErnicRegInfo ernic_ext_qp_info[ERNIC_EXT_QP_WORDS] = {
    ERNIC_EXT_QP_REGS(ERNIC_QP_INFO)
};

/* Which block an address falls in, and the register there. */
typedef struct ErnicRegRef {
    const ErnicRegInfo *info;   /* NULL: no register at this address */
    uint32_t *reg;
    uint32_t qpn;               /* per-QP registers only, else 0 */
    uint32_t index;             /* PD table entry, for tracing */
} ErnicRegRef;

static ErnicRegRef ernic_decode(ErnicCore *c, hwaddr addr)
{
    ErnicRegRef r = { 0 };
    const ErnicRegInfo *info;
    hwaddr off;

    if (addr < ERNIC_GCSR_BASE) {
        r.index = addr / ERNIC_PDT_STRIDE;
        off = addr % ERNIC_PDT_STRIDE;
        info = &ernic_pdt_info[ERNIC_W(off)];
        if (r.index < ERNIC_PDT_ENTRIES && info->name) {
            r.info = info;
            r.reg = &c->pdt[r.index][ERNIC_W(off)];
        }
    } else if (addr < ERNIC_QP_BASE) {
        info = &ernic_gcsr_info[ERNIC_GW(addr)];
        if (info->name) {
            r.info = info;
            r.reg = &c->gcsr[ERNIC_GW(addr)];
        }
    } else if (addr >= ERNIC_EXT_QP_BASE) {
        uint32_t qpn = (addr - ERNIC_EXT_QP_BASE) / ERNIC_EXT_QP_STRIDE + 1;

        off = (addr - ERNIC_EXT_QP_BASE) % ERNIC_EXT_QP_STRIDE;
        info = &ernic_ext_qp_info[ERNIC_W(off)];
        if (c->mrt && qpn <= c->num_qp && info->name) {
            r.info = info;
            r.reg = &c->qp[qpn].ext_regs[ERNIC_W(off)];
        }
    } else if (addr >= ERNIC_EXT_BASE) {
        if (c->mrt && ERNIC_EXT_W(addr) < ERNIC_EXT_WORDS &&
            ernic_ext_info[ERNIC_EXT_W(addr)].name) {
            r.info = &ernic_ext_info[ERNIC_EXT_W(addr)];
            r.reg = &c->ext_regs[ERNIC_EXT_W(addr)];
        }
    } else {
        r.qpn = (addr - ERNIC_QP_BASE) / ERNIC_QP_STRIDE + 1;
        off = (addr - ERNIC_QP_BASE) % ERNIC_QP_STRIDE;
        info = &ernic_qp_info[ERNIC_W(off)];
        /*
         * Per-QP blocks exist for QP1..C_NUM_QP only (PG332 p.41), and some
         * registers are "not present for QP1".
         */
        if (r.qpn <= c->num_qp && info->name &&
            !(r.qpn == ERNIC_QP_GSI && (info->flags & ERNIC_F_NOQP1))) {
            r.info = info;
            r.reg = &c->qp[r.qpn].regs[ERNIC_W(off)];
        }
    }
    return r;
}

/*
 * Interrupts (PG332 "Interrupts", p.48).
 *
 * The one ERNIC interrupt is the OR of INTSTS & INTEN. Over MSI-X and MSI a
 * message is sent when an enabled cause becomes pending, and again when
 * software acknowledges some causes while others stay pending, so that a
 * handler which clears only what it has seen never loses an interrupt. With
 * INTx the line follows the level.
 */
/* The board interrupt (vector 1): the Ethernet path and the ImmDt DMA. */
static bool ernic_eth_irq_pending(ErnicCore *c)
{
    return (c->eth[ERNIC_ETH_INTSTS / 4] & c->eth[ERNIC_ETH_INTEN / 4]) ||
           ernic_immdt_irq_pending(c);
}

/*
 * Without MSI-X the ERNIC and the Ethernet path share the one MSI message
 * or the INTx line.
 */
static void ernic_irq_signal(ErnicCore *c, unsigned vector, bool notify,
                             bool pending)
{
    PCIDevice *d = c->owner;

    if (msix_enabled(d)) {
        if (notify && pending) {
            msix_notify(d, vector);
        }
    } else if (msi_enabled(d)) {
        if (notify && pending) {
            msi_notify(d, 0);
        }
    } else {
        pci_set_irq(d, pending || ernic_eth_irq_pending(c) ||
                       (ernic_gcsr(c, ERNIC_INTSTS) &
                        ernic_gcsr(c, ERNIC_INTEN)));
    }
}

static void ernic_irq_update(ErnicCore *c, bool notify)
{
    uint32_t pending = ernic_gcsr(c, ERNIC_INTSTS) & ernic_gcsr(c, ERNIC_INTEN);

    trace_ernic_irq(ernic_gcsr(c, ERNIC_INTSTS), ernic_gcsr(c, ERNIC_INTEN),
                    notify && pending);
    ernic_irq_signal(c, ERNIC_MSIX_VEC_ERNIC, notify, pending);
}

void ernic_core_eth_irq(ErnicCore *c, bool notify)
{
    ernic_irq_signal(c, ERNIC_MSIX_VEC_ETH, notify, ernic_eth_irq_pending(c));
}

void ernic_core_raise(ErnicCore *c, uint32_t causes)
{
    uint32_t *sts = &c->gcsr[ERNIC_GW(ERNIC_INTSTS)];
    uint32_t en = ernic_gcsr(c, ERNIC_INTEN);
    uint32_t newly = causes & ~*sts & en;

    *sts |= causes & ERNIC_INT_ALL;
    ernic_irq_update(c, newly != 0);
}

/*
 * Causes that have a per-QP bank (PG332 p.38): WQE completion (CQINTSTSn)
 * and RQ packet received (RQINTSTSn). The bank bit is set for every event;
 * INTSTS is raised only for QPs whose QPCONF[3] (CQ) or QPCONF[2] (RQ)
 * interrupt enable is set.
 */
void ernic_core_raise_qp(ErnicCore *c, uint32_t cause, uint32_t qpn)
{
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
    hwaddr bank;
    uint32_t enable;

    if (cause == ERNIC_INT_WQE_COMPLETION) {
        bank = ERNIC_CQINTSTS1;
        enable = ERNIC_QPCONF_CQ_INT_EN;
    } else {
        g_assert(cause == ERNIC_INT_RQ_PKT_RECEIVED);
        bank = ERNIC_RQINTSTS1;
        enable = ERNIC_QPCONF_RQ_INT_EN;
    }
    if (!(qpconf & enable)) {
        return;
    }
    /*
     * The eight banks cover QP numbers 0..255 (PG332 p.38); with num-qp=256,
     * QP256 has no bank bit and is reported through INTSTS alone.
     */
    if (ERNIC_QP_BANK(qpn) < ERNIC_INTSTS_BANKS) {
        c->gcsr[ERNIC_GW(bank) + ERNIC_QP_BANK(qpn)] |=
            ERNIC_QP_BANK_BIT(qpn);
    }
    ernic_core_raise(c, cause);
}

/*
 * Register access
 */

static bool ernic_swo_enabled(ErnicCore *c)
{
    return ernic_gcsr(c, ERNIC_XRNICADCONF) & ERNIC_XRNICADCONF_SWO;
}

static void ernic_trace_access(ErnicRegRef *r, hwaddr addr, uint32_t val,
                               bool is_write)
{
    if (r->qpn) {
        if (is_write) {
            trace_ernic_mmio_qp_write(r->qpn, r->info->name, val);
        } else {
            trace_ernic_mmio_qp_read(r->qpn, r->info->name, val);
        }
    } else if (addr < ERNIC_GCSR_BASE) {
        if (is_write) {
            trace_ernic_mmio_pdt_write(r->index, r->info->name, val);
        } else {
            trace_ernic_mmio_pdt_read(r->index, r->info->name, val);
        }
    } else if (is_write) {
        trace_ernic_mmio_write(addr, r->info->name, val);
    } else {
        trace_ernic_mmio_read(addr, r->info->name, val);
    }
}

/*
 * Only naturally aligned 32-bit accesses exist on ERNIC's AXI4-Lite slave
 * (PG332 "Register Space": all registers are 32 bits). Others read 0 and
 * are not written.
 */
static bool ernic_access_ok(hwaddr addr, unsigned size, bool is_write)
{
    if (size == 4 && !(addr & 3)) {
        return true;
    }
    trace_ernic_ub_mmio_size(addr, size, is_write);
    qemu_log_mask(LOG_GUEST_ERROR,
                  "ernic: %u-byte %s at 0x%" HWADDR_PRIx
                  " (only aligned 32-bit accesses exist)\n",
                  size, is_write ? "write" : "read", addr);
    return false;
}

uint64_t ernic_core_read(ErnicCore *c, hwaddr addr, unsigned size)
{
    ErnicRegRef r;
    uint32_t val;

    if (!ernic_access_ok(addr, size, false)) {
        return 0;
    }
    r = ernic_decode(c, addr);
    if (!r.info) {
        trace_ernic_ub_mmio_unknown(addr, false);
        qemu_log_mask(LOG_GUEST_ERROR,
                      "ernic: read of undefined register 0x%" HWADDR_PRIx "\n",
                      addr);
        return 0;
    }
    val = *r.reg & r.info->mask;
    ernic_trace_access(&r, addr, val, false);
    return val;
}

/* Side effects of per-QP register writes. */
static void ernic_qp_written(ErnicCore *c, uint32_t qpn, hwaddr off,
                             uint32_t old)
{
    if (off == ERNIC_SQPI || off == ERNIC_QPCONF || off == ERNIC_QDEPTH) {
        c->qp[qpn].db_warned = false;
    }
    switch (off) {
    case ERNIC_SQPI:
        ernic_sq_doorbell(c, qpn);
        break;
    case ERNIC_QPCONF:
        ernic_qp_conf_written(c, qpn, old);
        break;
    case ERNIC_STATQP:
        ernic_qp_statqp_written(c, qpn);
        break;
    case ERNIC_STATCURSQPTR:
        /* Software override: the SQ processing position follows it. */
        c->qp[qpn].sq_next = ernic_qp_reg(c, qpn, off);
        break;
    case ERNIC_CQHEAD:
        c->qp[qpn].cq_next = ernic_qp_reg(c, qpn, off);
        break;
    default:
        break;
    }
}

/* Side effects of global register writes. */
static void ernic_gcsr_written(ErnicCore *c, hwaddr addr, uint32_t old,
                               uint32_t cleared)
{
    uint32_t val = ernic_gcsr(c, addr);
    uint32_t qpn;

    switch (addr) {
    case ERNIC_INTEN:
        /* Enabling a cause that is already pending interrupts at once. */
        ernic_irq_update(c, val & ~old & ernic_gcsr(c, ERNIC_INTSTS));
        break;
    case ERNIC_INTSTS:
        ernic_irq_update(c, cleared != 0);
        break;
    case ERNIC_XRNICCONF:
        if ((val & ERNIC_XRNICCONF_EN) && !(old & ERNIC_XRNICCONF_EN)) {
            for (qpn = 1; qpn <= c->num_qp; qpn++) {
                ernic_sq_doorbell(c, qpn);
            }
        }
        break;
    default:
        break;
    }
}

void ernic_core_write(ErnicCore *c, hwaddr addr, uint64_t val64,
                      unsigned size)
{
    uint32_t val = val64;
    uint32_t old, wmask, cleared = 0;
    ErnicRegRef r;

    if (!ernic_access_ok(addr, size, true)) {
        return;
    }
    r = ernic_decode(c, addr);
    if (!r.info) {
        trace_ernic_ub_mmio_unknown(addr, true);
        qemu_log_mask(LOG_GUEST_ERROR,
                      "ernic: write of undefined register 0x%" HWADDR_PRIx
                      " (value 0x%" PRIx32 ")\n", addr, val);
        return;
    }
    ernic_trace_access(&r, addr, val, true);

    old = *r.reg;
    wmask = r.info->wmask;
    if ((r.info->flags & ERNIC_F_SWO) && ernic_swo_enabled(c)) {
        wmask = r.info->mask;
    }

    switch (r.info->access) {
    case ERNIC_ACC_W1C:
        cleared = old & val & wmask;
        *r.reg = old & ~cleared;
        break;
    default:
        if ((val ^ old) & ~wmask & r.info->mask) {
            /* Changing RO bits has no effect; note it for driver authors. */
            trace_ernic_ub_mmio_ro(addr, r.info->name, val);
            qemu_log_mask(LOG_GUEST_ERROR,
                          "ernic: write 0x%" PRIx32 " to read-only bits of "
                          "%s at 0x%" HWADDR_PRIx "\n", val, r.info->name,
                          addr);
        }
        *r.reg = (old & ~wmask) | (val & wmask);
        break;
    }

    if (r.qpn) {
        ernic_qp_written(c, r.qpn, addr - ERNIC_QP_OFFSET(r.qpn), old);
    } else if (addr >= ERNIC_EXT_BASE) {
        ernic_ext_written(c, addr, old);
    } else if (addr >= ERNIC_GCSR_BASE) {
        ernic_gcsr_written(c, addr, old, cleared);
    }
}

/*
 * Engine helpers
 */

QEMU_BUILD_BUG_ON(ERNIC_MAX_FRAME > ERNIC_ETH_FRAME_MAX);

bool ernic_dma_read(ErnicCore *c, uint64_t addr, void *buf, uint64_t len)
{
    bool ok;

    if (!len) {
        return true;
    }
    if (ernic_reconic_dma(c, addr, buf, NULL, len, &ok)) {
        return ok;
    }
    if (pci_dma_read(c->owner, addr, buf, len) != MEMTX_OK) {
        trace_ernic_dma_error(addr, len, false);
        return false;
    }
    return true;
}

bool ernic_dma_write(ErnicCore *c, uint64_t addr, const void *buf,
                     uint64_t len)
{
    bool ok;

    if (!len) {
        return true;
    }
    if (ernic_reconic_dma(c, addr, NULL, buf, len, &ok)) {
        return ok;
    }
    if (pci_dma_write(c->owner, addr, buf, len) != MEMTX_OK) {
        trace_ernic_dma_error(addr, len, true);
        return false;
    }
    return true;
}

/*
 * QEMU engages a device's re-entrancy guard around its MMIO handlers and
 * guarded bottom halves, and the net layer around receive; a timer runs
 * outside both. Engaged, the guard makes a DMA that reaches the device's
 * own registers fail (MEMTX_ACCESS_ERROR) instead of re-entering it.
 */
bool ernic_timer_enter(ErnicCore *c)
{
    MemReentrancyGuard *g = &DEVICE(c->owner)->mem_reentrancy_guard;

    if (g->engaged_in_io) {
        return false;
    }
    g->engaged_in_io = true;
    return true;
}

void ernic_timer_exit(ErnicCore *c, bool entered)
{
    if (entered) {
        DEVICE(c->owner)->mem_reentrancy_guard.engaged_in_io = false;
    }
}

uint32_t ernic_qp_pmtu(ErnicCore *c, uint32_t qpn)
{
    uint32_t code = (ernic_qp_reg(c, qpn, ERNIC_QPCONF) &
                     ERNIC_QPCONF_PMTU_MASK) >> ERNIC_QPCONF_PMTU_SHIFT;

    /* Codes 5..7 are reserved (PG332 p.41); they act as 4096. */
    return 256u << MIN(code, ERNIC_PMTU_4096);
}

void ernic_count16(ErnicCore *c, hwaddr reg, bool high)
{
    uint32_t v = ernic_gcsr(c, reg);

    if (high) {
        v = (v & 0xffff) | ((v + 0x10000) & 0xffff0000);
    } else {
        v = (v & 0xffff0000) | ((v + 1) & 0xffff);
    }
    ernic_gcsr_set(c, reg, v);
}

void ernic_count32(ErnicCore *c, hwaddr reg)
{
    ernic_gcsr_set(c, reg, ernic_gcsr(c, reg) + 1);
}

/*
 * Lifecycle
 */

static void ernic_reset_block(uint32_t *regs, const ErnicRegInfo *info,
                              unsigned words)
{
    for (unsigned i = 0; i < words; i++) {
        regs[i] = info[i].name ? info[i].reset : 0;
    }
}

void ernic_core_reset(ErnicCore *c)
{
    unsigned i;

    trace_ernic_reset();
    qemu_bh_cancel(c->sq_bh);
    bitmap_zero(c->sq_pending, ERNIC_NUM_QP_MAX + 1);
    ernic_net_reset(c);
    ernic_eth_reset(c);

    for (i = 0; i < ERNIC_PDT_ENTRIES; i++) {
        ernic_reset_block(c->pdt[i], ernic_pdt_info, ERNIC_PDT_WORDS);
    }
    ernic_reset_block(c->gcsr, ernic_gcsr_info, ERNIC_GCSR_WORDS);
    ernic_reset_block(c->ext_regs, ernic_ext_info, ERNIC_EXT_WORDS);
    ernic_ext_reset(c);
    for (i = 0; i <= ERNIC_NUM_QP_MAX; i++) {
        ernic_reset_block(c->qp[i].regs, ernic_qp_info, ERNIC_QP_WORDS);
        ernic_reset_block(c->qp[i].ext_regs, ernic_ext_qp_info,
                          ERNIC_EXT_QP_WORDS);
        c->qp[i].sq_next = 0;
        c->qp[i].cq_next = 0;
        c->qp[i].state = ERNIC_QPS_DISABLED;
        if (c->qp[i].retry_timer) {
            ernic_qp_engine_reset(c, i);
        }
    }

    /*
     * The board MAC address is strapped into MACXADDLSB/MSB, so that a
     * driver can learn it; see docs/registers.md, "Choices".
     */
    c->gcsr[ERNIC_GW(ERNIC_MACXADDLSB)] = ldl_be_p(&c->mac[2]);
    c->gcsr[ERNIC_GW(ERNIC_MACXADDMSB)] = lduw_be_p(&c->mac[0]);

    if (c->owner) {
        ernic_irq_update(c, false);
    }
}

bool ernic_core_may_run(void)
{
    return runstate_is_running();
}

/*
 * The bottom halves return at once while the VM is stopped, keeping their
 * work pending (docs/migration.md); here they take it up again. Loaded
 * state is not worked on before every device has loaded.
 */
static void ernic_core_vm_state(void *opaque, bool running, RunState state)
{
    ErnicCore *c = opaque;

    if (running) {
        qemu_bh_schedule(c->sq_bh);
        qemu_bh_schedule(c->eth_bh);
        qemu_bh_schedule(c->lo_bh);
    }
}

void ernic_core_realize(ErnicCore *c, PCIDevice *owner, uint32_t num_qp,
                        const uint8_t *mac, ErnicTxFn tx, void *tx_opaque)
{
    MemReentrancyGuard *guard = &DEVICE(owner)->mem_reentrancy_guard;
    uint32_t i;

    c->owner = owner;
    c->num_qp = num_qp;
    c->tx = tx;
    c->tx_opaque = tx_opaque;
    memcpy(c->mac, mac, sizeof(c->mac));
    c->sq_bh = qemu_bh_new_guarded(ernic_sq_process_pending, c, guard);
    c->lo_bh = qemu_bh_new_guarded(ernic_net_loopback_bh, c, guard);
    c->eth_bh = qemu_bh_new_guarded(ernic_eth_bh, c, guard);
    c->vmse = qemu_add_vm_change_state_handler(ernic_core_vm_state, c);
    ernic_immdt_realize(c);
    ernic_fault_realize(c);
    g_queue_init(&c->lo_queue);
    for (i = 1; i <= num_qp; i++) {
        ErnicQP *qp = &c->qp[i];

        qp->core = c;
        qp->qpn = i;
        qp->retry_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                       ernic_comp_retry_timer, qp);
        qp->rnr_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                     ernic_comp_rnr_timer, qp);
        qp->ack_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                     ernic_resp_ack_timer, qp);
    }
    ernic_core_reset(c);
}

void ernic_core_unrealize(ErnicCore *c)
{
    uint32_t i;

    for (i = 1; i <= c->num_qp; i++) {
        timer_free(c->qp[i].retry_timer);
        timer_free(c->qp[i].rnr_timer);
        timer_free(c->qp[i].ack_timer);
    }
    qemu_del_vm_change_state_handler(c->vmse);
    ernic_net_reset(c);
    qemu_bh_delete(c->sq_bh);
    qemu_bh_delete(c->lo_bh);
    qemu_bh_delete(c->eth_bh);
    ernic_immdt_unrealize(c);
    ernic_fault_unrealize(c);
    c->sq_bh = NULL;
}
