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

QEMU_BUILD_BUG_ON(ERNIC_MAX_FRAME > ERNIC_ETH_FRAME_MAX);

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

static const ErnicRegInfo ernic_ext_srq_info[ERNIC_EXT_SRQ_WORDS] = {
    ERNIC_EXT_SRQ_REGS(ERNIC_QP_INFO)
};

#define ERNIC_EXT_AH_INFO(...)  ERNIC_REG_INFO(ERNIC_EXT_AH_BASE, __VA_ARGS__)
static const ErnicRegInfo ernic_ext_ah_info[ERNIC_EXT_AH_WORDS] = {
    ERNIC_EXT_AH_REGS(ERNIC_EXT_AH_INFO)
};

#define ERNIC_EXT_MC_INFO(...)  ERNIC_REG_INFO(ERNIC_EXT_MC_BASE, __VA_ARGS__)
static const ErnicRegInfo ernic_ext_mc_info[ERNIC_EXT_MC_WORDS] = {
    ERNIC_EXT_MC_REGS(ERNIC_EXT_MC_INFO)
};

/* A register write, as its side effect sees it. */
typedef struct ErnicRegWrite {
    hwaddr addr;
    uint32_t qpn;               /* per-QP registers (PG332 block) only */
    uint32_t old;               /* the value before the write */
    uint32_t cleared;           /* W1C: the bits it cleared */
} ErnicRegWrite;

typedef void (*ErnicWriteOp)(ErnicCore *c, const ErnicRegWrite *w);

/* Which block an address falls in, and the register there. */
typedef struct ErnicRegRef {
    const ErnicRegInfo *info;   /* NULL: no register at this address */
    ErnicWriteOp op;            /* its side effect, if it has one */
    uint32_t *reg;
    uint32_t qpn;               /* per-QP registers only, else 0 */
    uint32_t index;             /* PD table entry, for tracing */
} ErnicRegRef;

static void ernic_core_inten_written(ErnicCore *c, const ErnicRegWrite *w)
{
    uint32_t val = ernic_gcsr(c, ERNIC_INTEN);

    /* Enabling a cause that is already pending interrupts at once. */
    ernic_irq_update(c, val & ~w->old & ernic_gcsr(c, ERNIC_INTSTS));
}

static void ernic_core_intsts_written(ErnicCore *c, const ErnicRegWrite *w)
{
    ernic_irq_update(c, w->cleared != 0);
}

/* Enabling ERNIC serves the doorbells rung while it was off. */
static void ernic_core_xrnicconf_written(ErnicCore *c,
                                         const ErnicRegWrite *w)
{
    uint32_t val = ernic_gcsr(c, ERNIC_XRNICCONF);
    uint32_t qpn;

    if ((val & ERNIC_XRNICCONF_EN) && !(w->old & ERNIC_XRNICCONF_EN)) {
        for (qpn = 1; qpn <= c->num_qp; qpn++) {
            ernic_up_kick(c, qpn);
        }
    }
}

/*
 * A write to SQPIi, QPCONFi or QDEPTHi lets ernic_req_can_run() log once
 * more why the QP cannot send.
 */
static void ernic_core_qdepth_written(ErnicCore *c, const ErnicRegWrite *w)
{
    c->qp[w->qpn].db_warned = false;
}

/* ERNIC-X DBREC: the value may come from the QP's record instead. */
static void ernic_core_sqpi_written(ErnicCore *c, const ErnicRegWrite *w)
{
    ernic_dbrec_sqpi_written(c, w->qpn, w->old);
}

/* The QP's doorbell ioeventfd exists only while it is enabled. */
static void ernic_core_qpconf_written(ErnicCore *c, const ErnicRegWrite *w)
{
    c->qp[w->qpn].db_warned = false;
    ernic_engine_qpconf_written(c, w->qpn, w->old);
    ernic_dbrec_sync(c, w->qpn);
}

static void ernic_core_statqp_written(ErnicCore *c, const ErnicRegWrite *w)
{
    ernic_qp_statqp_written(c, w->qpn);
}

/* Software override: the SQ processing position follows it. */
static void ernic_core_sqptr_written(ErnicCore *c, const ErnicRegWrite *w)
{
    c->qp[w->qpn].sq_next = ernic_qp_reg(c, w->qpn, ERNIC_STATCURSQPTR);
}

static void ernic_core_cqhead_written(ErnicCore *c, const ErnicRegWrite *w)
{
    c->qp[w->qpn].cq_next = ernic_qp_reg(c, w->qpn, ERNIC_CQHEAD);
}

/* ERNIC-X: every register goes to ernic_ext_written(), which sorts them. */
static void ernic_core_ext_written(ErnicCore *c, const ErnicRegWrite *w)
{
    ernic_ext_written(c, w->addr, w->old);
    if (w->addr == ERNIC_EXTCTRL) {
        ernic_dbrec_sync_all(c);
    }
}

static void ernic_core_srq_written(ErnicCore *c, const ErnicRegWrite *w)
{
    hwaddr rel = w->addr - ERNIC_EXT_SRQ_BASE;

    ernic_srq_written(c, rel / ERNIC_EXT_SRQ_STRIDE,
                      rel % ERNIC_EXT_SRQ_STRIDE, w->old);
}

static void ernic_core_ah_written(ErnicCore *c, const ErnicRegWrite *w)
{
    ernic_ud_written(c, w->addr);
}

static void ernic_core_mc_written(ErnicCore *c, const ErnicRegWrite *w)
{
    ernic_mcast_written(c, w->addr);
}

/* Side effects of register writes, by register (as igb's writeops[]). */
static const ErnicWriteOp ernic_gcsr_writeops[ERNIC_GCSR_WORDS] = {
    [ERNIC_GW(ERNIC_INTEN)] = ernic_core_inten_written,
    [ERNIC_GW(ERNIC_INTSTS)] = ernic_core_intsts_written,
    [ERNIC_GW(ERNIC_XRNICCONF)] = ernic_core_xrnicconf_written,
};

static const ErnicWriteOp ernic_qp_writeops[ERNIC_QP_WORDS] = {
    [ERNIC_W(ERNIC_SQPI)] = ernic_core_sqpi_written,
    [ERNIC_W(ERNIC_QPCONF)] = ernic_core_qpconf_written,
    [ERNIC_W(ERNIC_QDEPTH)] = ernic_core_qdepth_written,
    [ERNIC_W(ERNIC_STATQP)] = ernic_core_statqp_written,
    [ERNIC_W(ERNIC_STATCURSQPTR)] = ernic_core_sqptr_written,
    [ERNIC_W(ERNIC_CQHEAD)] = ernic_core_cqhead_written,
};

/* ERNIC-X's registers (docs/extension.md): decoded only with ext=on. */
static void ernic_core_decode_ext(ErnicCore *c, hwaddr addr, ErnicRegRef *r)
{
    const ErnicRegInfo *info;
    hwaddr off;

    if (!c->mrt) {
        return;
    }
    if (addr >= ERNIC_EXT_SRQ_BASE) {
        uint32_t n = (addr - ERNIC_EXT_SRQ_BASE) / ERNIC_EXT_SRQ_STRIDE;

        off = (addr - ERNIC_EXT_SRQ_BASE) % ERNIC_EXT_SRQ_STRIDE;
        info = &ernic_ext_srq_info[ERNIC_W(off)];
        if (n < ERNIC_SRQ_NUM && info->name) {
            r->info = info;
            r->op = ernic_core_srq_written;
            r->reg = &c->srq_regs[n][ERNIC_W(off)];
        }
    } else if (addr >= ERNIC_EXT_QP_BASE) {
        uint32_t qpn = (addr - ERNIC_EXT_QP_BASE) / ERNIC_EXT_QP_STRIDE + 1;

        off = (addr - ERNIC_EXT_QP_BASE) % ERNIC_EXT_QP_STRIDE;
        info = &ernic_ext_qp_info[ERNIC_W(off)];
        if (qpn <= c->num_qp && info->name) {
            r->info = info;
            r->op = ernic_core_ext_written;
            r->reg = &c->qp[qpn].ext_regs[ERNIC_W(off)];
        }
    } else if (addr >= ERNIC_EXT_AH_BASE &&
               addr < ERNIC_EXT_AH_BASE + ERNIC_EXT_AH_SIZE) {
        info = &ernic_ext_ah_info[ERNIC_EXT_AH_W(addr)];
        if (info->name) {
            r->info = info;
            r->op = ernic_core_ah_written;
            r->reg = &c->ah_regs[ERNIC_EXT_AH_W(addr)];
        }
    } else if (addr >= ERNIC_EXT_MC_BASE &&
               addr < ERNIC_EXT_MC_BASE + ERNIC_EXT_MC_SIZE) {
        info = &ernic_ext_mc_info[ERNIC_EXT_MC_W(addr)];
        if (info->name) {
            r->info = info;
            r->op = ernic_core_mc_written;
            r->reg = &c->mc_regs[ERNIC_EXT_MC_W(addr)];
        }
    } else if (ERNIC_EXT_W(addr) < ERNIC_EXT_WORDS &&
               ernic_ext_info[ERNIC_EXT_W(addr)].name) {
        r->info = &ernic_ext_info[ERNIC_EXT_W(addr)];
        r->op = ernic_core_ext_written;
        r->reg = &c->ext_regs[ERNIC_EXT_W(addr)];
    }
}

static ErnicRegRef ernic_core_decode(ErnicCore *c, hwaddr addr)
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
            r.op = ernic_gcsr_writeops[ERNIC_GW(addr)];
            r.reg = &c->gcsr[ERNIC_GW(addr)];
        }
    } else if (addr >= ERNIC_EXT_BASE) {
        ernic_core_decode_ext(c, addr, &r);
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
            r.op = ernic_qp_writeops[ERNIC_W(off)];
            r.reg = &c->qp[r.qpn].regs[ERNIC_W(off)];
        }
    }
    return r;
}

/*
 * Register access
 */

static bool ernic_core_swo_enabled(ErnicCore *c)
{
    return ernic_gcsr(c, ERNIC_XRNICADCONF) & ERNIC_XRNICADCONF_SWO;
}

static void ernic_core_trace_access(ErnicRegRef *r, hwaddr addr, uint32_t val,
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
static bool ernic_core_access_ok(hwaddr addr, unsigned size, bool is_write)
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

    if (!ernic_core_access_ok(addr, size, false)) {
        return 0;
    }
    r = ernic_core_decode(c, addr);
    if (!r.info) {
        trace_ernic_ub_mmio_unknown(addr, false);
        qemu_log_mask(LOG_GUEST_ERROR,
                      "ernic: read of undefined register 0x%" HWADDR_PRIx "\n",
                      addr);
        return 0;
    }
    if (r.qpn && r.reg == &c->qp[r.qpn].regs[ERNIC_W(ERNIC_SQPI)]) {
        ernic_dbrec_sqpi_read(c, r.qpn);
    }
    val = *r.reg & r.info->mask;
    ernic_core_trace_access(&r, addr, val, false);
    return val;
}

/*
 * A read of QP @qpn's CQHEADi (@cq) or STATRQPIDBi, in BAR0 or in its
 * doorbell page, found @val: true if its last read found the same.
 */
bool ernic_core_polled_again(ErnicCore *c, uint32_t qpn, bool cq,
                             uint32_t val)
{
    uint32_t *last = &c->qp[qpn].polled[!cq];

    if (*last != val) {
        *last = val;
        return false;
    }
    return true;
}

/*
 * Whether @val, just read at @addr, is CQHEADi or STATRQPIDBi unchanged
 * since the last read of it: software polling for a completion or a
 * receive and finding none yet (the PG332 ch.6 and RecoNIC way of
 * waiting). Host-side only: it changes no register and is not migrated.
 */
bool ernic_core_spinning(ErnicCore *c, hwaddr addr, uint32_t val)
{
    ErnicRegRef r = ernic_core_decode(c, addr);
    uint32_t *regs;
    bool cq;

    if (!r.qpn || !r.info) {
        return false;
    }
    regs = c->qp[r.qpn].regs;
    cq = r.reg == &regs[ERNIC_W(ERNIC_CQHEAD)];
    if (!cq && r.reg != &regs[ERNIC_W(ERNIC_STATRQPIDB)]) {
        return false;
    }
    return ernic_core_polled_again(c, r.qpn, cq, val);
}

void ernic_core_write(ErnicCore *c, hwaddr addr, uint64_t val64,
                      unsigned size)
{
    uint32_t val = val64;
    uint32_t old, wmask, cleared = 0;
    ErnicRegRef r;

    if (!ernic_core_access_ok(addr, size, true)) {
        return;
    }
    r = ernic_core_decode(c, addr);
    if (!r.info) {
        trace_ernic_ub_mmio_unknown(addr, true);
        qemu_log_mask(LOG_GUEST_ERROR,
                      "ernic: write of undefined register 0x%" HWADDR_PRIx
                      " (value 0x%" PRIx32 ")\n", addr, val);
        return;
    }
    ernic_core_trace_access(&r, addr, val, true);

    old = *r.reg;
    wmask = r.info->wmask;
    if ((r.info->flags & ERNIC_F_SWO) && ernic_core_swo_enabled(c)) {
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

    if (r.op) {
        ErnicRegWrite w = {
            .addr = addr, .qpn = r.qpn, .old = old, .cleared = cleared,
        };

        r.op(c, &w);
    }
}

/*
 * Lifecycle
 */

static void ernic_core_reset_block(uint32_t *regs, const ErnicRegInfo *info,
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
    ernic_dbrec_reset(c);
    qemu_bh_cancel(c->sq_bh);
    bitmap_zero(c->sq_pending, ERNIC_NUM_QP_MAX + 1);
    ernic_link_reset(c);
    ernic_eth_reset(c);

    for (i = 0; i < ERNIC_PDT_ENTRIES; i++) {
        ernic_core_reset_block(c->pdt[i], ernic_pdt_info, ERNIC_PDT_WORDS);
    }
    ernic_core_reset_block(c->gcsr, ernic_gcsr_info, ERNIC_GCSR_WORDS);
    ernic_core_reset_block(c->ext_regs, ernic_ext_info, ERNIC_EXT_WORDS);
    ernic_ext_reset(c);
    for (i = 0; i < ERNIC_SRQ_NUM; i++) {
        ernic_core_reset_block(c->srq_regs[i], ernic_ext_srq_info,
                               ERNIC_EXT_SRQ_WORDS);
    }
    ernic_core_reset_block(c->ah_regs, ernic_ext_ah_info, ERNIC_EXT_AH_WORDS);
    ernic_core_reset_block(c->mc_regs, ernic_ext_mc_info, ERNIC_EXT_MC_WORDS);
    for (i = 0; i <= ERNIC_NUM_QP_MAX; i++) {
        ernic_core_reset_block(c->qp[i].regs, ernic_qp_info, ERNIC_QP_WORDS);
        ernic_core_reset_block(c->qp[i].ext_regs, ernic_ext_qp_info,
                               ERNIC_EXT_QP_WORDS);
        c->qp[i].rx_srq = false;
        c->qp[i].sq_next = 0;
        c->qp[i].cq_next = 0;
        c->qp[i].state = ERNIC_QPS_DISABLED;
        if (c->qp[i].retry_timer) {
            ernic_engine_reset_qp(c, i);
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

/* The bottom halves count as ernic code on the stack (ernic_dma_enter()). */
static void ernic_core_tx_bh(void *opaque)
{
    ernic_dma_enter();
    ernic_engine_tx_bh(opaque);
    ernic_dma_leave();
}

static void ernic_core_lo_bh(void *opaque)
{
    ernic_dma_enter();
    ernic_link_loopback_bh(opaque);
    ernic_dma_leave();
}

static void ernic_core_eth_bh(void *opaque)
{
    ernic_dma_enter();
    ernic_eth_bh(opaque);
    ernic_dma_leave();
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
    c->sq_bh = qemu_bh_new_guarded(ernic_core_tx_bh, c, guard);
    c->lo_bh = qemu_bh_new_guarded(ernic_core_lo_bh, c, guard);
    c->eth_bh = qemu_bh_new_guarded(ernic_core_eth_bh, c, guard);
    c->vmse = qemu_add_vm_change_state_handler(ernic_core_vm_state, c);
    c->up_rx = ernic_net_rx;
    c->up_qp_stop = ernic_engine_stop_qp;
    ernic_immdt_realize(c);
    ernic_link_realize(c);
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
    ernic_dbrec_reset(c);
    ernic_link_reset(c);
    qemu_bh_delete(c->sq_bh);
    qemu_bh_delete(c->lo_bh);
    qemu_bh_delete(c->eth_bh);
    ernic_immdt_unrealize(c);
    ernic_link_unrealize(c);
    c->sq_bh = NULL;
}
