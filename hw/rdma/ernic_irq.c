/*
 * ERNIC interrupts (PG332 v3.1 "Interrupts", p.48): INTSTS and its
 * per-QP banks, the board interrupt of the Ethernet path and the ImmDt
 * DMA, and their delivery over MSI-X, MSI or INTx.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * The one ERNIC interrupt is the OR of INTSTS & INTEN. Over MSI-X and MSI a
 * message is sent when an enabled cause becomes pending, and again when
 * software acknowledges some causes while others stay pending, so that a
 * handler which clears only what it has seen never loses an interrupt. With
 * INTx the line follows the level.
 */

/* The board interrupt (vector 1): the Ethernet path and the ImmDt DMA. */
static bool ernic_irq_eth_pending(ErnicCore *c)
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
        pci_set_irq(d, pending || ernic_irq_eth_pending(c) ||
                       (ernic_gcsr(c, ERNIC_INTSTS) &
                        ernic_gcsr(c, ERNIC_INTEN)));
    }
}

/* ERNIC-X events, EXTEVT & EXTEVTEN, share the ERNIC interrupt. */
static bool ernic_irq_ext_pending(ErnicCore *c)
{
    return c->mrt && (c->ext_regs[ERNIC_EXT_W(ERNIC_EXTEVT)] &
                      c->ext_regs[ERNIC_EXT_W(ERNIC_EXTEVTEN)]);
}

void ernic_irq_update(ErnicCore *c, bool notify)
{
    bool pending = (ernic_gcsr(c, ERNIC_INTSTS) & ernic_gcsr(c, ERNIC_INTEN)) ||
                   ernic_irq_ext_pending(c);

    trace_ernic_irq(ernic_gcsr(c, ERNIC_INTSTS), ernic_gcsr(c, ERNIC_INTEN),
                    notify && pending);
    ernic_irq_signal(c, ERNIC_MSIX_VEC_ERNIC, notify, pending);
}

void ernic_irq_eth(ErnicCore *c, bool notify)
{
    ernic_irq_signal(c, ERNIC_MSIX_VEC_ETH, notify, ernic_irq_eth_pending(c));
}

void ernic_irq_raise(ErnicCore *c, uint32_t causes)
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
void ernic_irq_raise_qp(ErnicCore *c, uint32_t cause, uint32_t qpn)
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
    ernic_irq_raise(c, cause);
}
