/*
 * ERNIC-X shared receive queues (docs/extension.md, "Shared receive
 * queues"): rings of receive WQEs that any number of QPs of one PD take
 * from in arrival order, their registers and their limit event (their
 * doorbell pages are ernic_udb.c's). Not PG332: with EXTCTRL.SRQ off no
 * QP takes from them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

static uint32_t ernic_srq_reg(ErnicCore *c, uint32_t n, hwaddr off)
{
    return c->srq_regs[n][ERNIC_W(off)];
}

static void ernic_srq_set(ErnicCore *c, uint32_t n, hwaddr off, uint32_t val)
{
    c->srq_regs[n][ERNIC_W(off)] = val;
}

static bool ernic_srq_enabled(ErnicCore *c, uint32_t n)
{
    return ernic_srq_reg(c, n, ERNIC_SRQCONF) & ERNIC_SRQCONF_EN;
}

/*
 * A write to SRQ @n's block at @off, whose value was @old. The ring's
 * configuration changes only while the SRQ is disabled, so that no WQE
 * is taken half under one setting; enabling it starts SRQCIn at 0.
 */
void ernic_srq_written(ErnicCore *c, uint32_t n, hwaddr off, uint32_t old)
{
    uint32_t val = ernic_srq_reg(c, n, off);
    bool was_on = (off == ERNIC_SRQCONF ? old :
                   ernic_srq_reg(c, n, ERNIC_SRQCONF)) & ERNIC_SRQCONF_EN;

    switch (off) {
    case ERNIC_SRQCONF:
        if (was_on && (val & ERNIC_SRQCONF_EN) && val != old) {
            break;
        }
        if (!was_on && (val & ERNIC_SRQCONF_EN)) {
            ernic_srq_set(c, n, ERNIC_SRQCI, 0);
        }
        trace_ernic_srq_conf(n, val);
        return;
    case ERNIC_SRQBA:
    case ERNIC_SRQBAMSB:
    case ERNIC_SRQDEPTH:
    case ERNIC_SRQPD:
        if (!was_on) {
            return;
        }
        break;
    default:
        trace_ernic_srq_doorbell(n, off, val);
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "ernic: SRQ%u register 0x%" HWADDR_PRIx
                  " write ignored: the SRQ is enabled\n", n, off);
    ernic_srq_set(c, n, off, old);
}

/* Does QP @qpn take its receive WQEs from an SRQ (EXTQPCONFi[4])? */
bool ernic_srq_attached(ErnicCore *c, uint32_t qpn)
{
    return qpn != ERNIC_QP_GSI && ernic_ext_on(c, ERNIC_EXT_F_SRQ) &&
           ernic_ext_rx_wqe_on(c, qpn) &&
           (c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
            ERNIC_EXTQPCONF_SRQ);
}

/*
 * SRQLIMITn armed and the SRQ now holds fewer WQEs than it says: the
 * limit disarms (reads 0) and EXTEVT[0] tells the driver, as IBTA's SRQ
 * limit event (10.2.9.3: it fires once per arming).
 */
static void ernic_srq_check_limit(ErnicCore *c, uint32_t n, uint32_t left)
{
    uint32_t limit = ernic_srq_reg(c, n, ERNIC_SRQLIMIT);
    uint32_t *evt = &c->ext_regs[ERNIC_EXT_W(ERNIC_EXTEVT)];

    if (!limit || left >= limit) {
        return;
    }
    trace_ernic_srq_limit(n, left, limit);
    ernic_srq_set(c, n, ERNIC_SRQLIMIT, 0);
    if (!(*evt & ERNIC_EXTEVT_SRQ_LIMIT)) {
        *evt |= ERNIC_EXTEVT_SRQ_LIMIT;
        ernic_irq_update(c, true);
    }
}

/* The SRQ QP @qpn is attached to (EXTQPCONFi[23:16]). */
uint32_t ernic_srq_of(ErnicCore *c, uint32_t qpn)
{
    return ERNIC_FIELD_EX32(c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)],
                            ERNIC_EXTQPCONF_SRQN_MASK);
}

/*
 * Is SRQ @n an enabled XRC SRQ of XRC domain @xrcd (ERNIC-X XRC)? Its PD
 * in *@pd if so.
 */
bool ernic_srq_xrc_of(ErnicCore *c, uint32_t n, uint32_t xrcd, uint32_t *pd)
{
    uint32_t conf;

    if (n >= ERNIC_SRQ_NUM || !ernic_ext_on(c, ERNIC_EXT_F_SRQ)) {
        return false;
    }
    conf = ernic_srq_reg(c, n, ERNIC_SRQCONF);
    if (!(conf & ERNIC_SRQCONF_EN) || !(conf & ERNIC_SRQCONF_XRC) ||
        ERNIC_FIELD_EX32(conf, ERNIC_SRQCONF_XRCD_MASK) != xrcd) {
        return false;
    }
    *pd = ernic_srq_reg(c, n, ERNIC_SRQPD);
    return true;
}

/*
 * Take the WQE at SRQCIn of SRQ @n for QP @qpn, for a message that
 * takes an RQ slot; *@addr is its bus address. The depth, base and
 * indices are sampled once. False when there is none: the SRQ is empty,
 * or it is disabled, too shallow or of another PD than the QP, which the
 * device treats as empty (an RNR NAK; docs/extension.md).
 */
bool ernic_srq_take(ErnicCore *c, uint32_t qpn, uint32_t n, uint64_t *addr)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t depth = ernic_srq_reg(c, n, ERNIC_SRQDEPTH);
    uint32_t pi, ci;

    if (!ernic_srq_enabled(c, n) || depth < 2 ||
        ernic_srq_reg(c, n, ERNIC_SRQPD) !=
        ernic_qp_pd(c, qpn)) {
        /* Traced, not logged: each retry of the peer would log again. */
        trace_ernic_srq_unusable(n, qpn);
        return false;
    }
    pi = ernic_srq_reg(c, n, ERNIC_SRQPI) % depth;
    ci = ernic_srq_reg(c, n, ERNIC_SRQCI) % depth;
    if (pi == ci) {
        trace_ernic_srq_empty(n, qpn);
        return false;
    }
    *addr = ((uint64_t)ernic_srq_reg(c, n, ERNIC_SRQBAMSB) << 32 |
             ernic_srq_reg(c, n, ERNIC_SRQBA)) +
            (uint64_t)ci * ERNIC_RWQE_SIZE;
    qp->rx_srq_n = n;
    qp->rx_srq_wqe = ci;
    trace_ernic_srq_take(n, qpn, ci);
    ci = (ci + 1) % depth;
    ernic_srq_set(c, n, ERNIC_SRQCI, ci);
    ernic_srq_check_limit(c, n, (pi + depth - ci) % depth);
    return true;
}

/*
 * May receive WQE @w of the SRQ QP @qpn took be used? A user SRQ's WQEs
 * name memory only through keys: an SGE with L_Key 0 (bus addresses) is
 * refused as a failed key is, as on a user QP.
 */
bool ernic_srq_wqe_ok(ErnicCore *c, uint32_t qpn, const uint8_t *w)
{
    ErnicQP *qp = &c->qp[qpn];
    const uint8_t *sge;
    unsigned i;

    if (!qp->rx_srq ||
        !(ernic_srq_reg(c, qp->rx_srq_n, ERNIC_SRQCONF) & ERNIC_SRQCONF_USER)) {
        return true;
    }
    for (i = 0; i < ERNIC_RWQE_SGES; i++) {
        sge = w + i * ERNIC_SGE_SIZE;
        if (ldl_le_p(sge + ERNIC_SGE_LEN) && !ldl_le_p(sge + ERNIC_SGE_LKEY)) {
            return false;
        }
    }
    return true;
}
