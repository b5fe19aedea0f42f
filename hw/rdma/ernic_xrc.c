/*
 * ERNIC-X XRC (docs/extension.md, "XRC"): IBTA's extended reliable
 * connected transport (IBTA 9.3.2, 10.2.9.2-3; the XRC annex of 1.2.1).
 * An initiator QP sends RC messages with transport bits 101 and an
 * XRCETH naming an XRC SRQ of the responder's node; a target QP takes
 * them into that SRQ, which must belong to its XRC domain, and checks
 * their keys against the SRQ's PD. Not PG332: with EXTCTRL.XRC off the
 * XRC opcodes stay unknown to every QP.
 *
 * A target QP has no ring of its own: the receive WQE its message took
 * is written back when the message ends (its receive metadata in the
 * WQE's first 16 bytes, the QP's number last), so that the process
 * owning the SRQ, which owns none of the target QPs, learns of it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "ernic_core.h"
#include "trace.h"

static uint32_t ernic_xrc_conf(ErnicCore *c, uint32_t qpn)
{
    return ernic_qp_xrc(c, qpn) ?
           c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] : 0;
}

/* An XRC target QP (EXTQPCONFi[9]), which wins over [10]. */
bool ernic_xrc_tgt(ErnicCore *c, uint32_t qpn)
{
    return ernic_xrc_conf(c, qpn) & ERNIC_EXTQPCONF_XRC_TGT;
}

/* An XRC initiator QP (EXTQPCONFi[10]). */
bool ernic_xrc_ini(ErnicCore *c, uint32_t qpn)
{
    return (ernic_xrc_conf(c, qpn) &
            (ERNIC_EXTQPCONF_XRC_TGT | ERNIC_EXTQPCONF_XRC_INI)) ==
           ERNIC_EXTQPCONF_XRC_INI;
}

/*
 * A packet for XRC QP @qpn parsed again into @x as an XRC opcode's: a
 * target takes requests, an initiator responses. Anything else (an RC
 * opcode, a response to a target, a request to an initiator) keeps
 * flags 0: the unknown opcode PG332 refuses (NAK Invalid Request, FATAL
 * 0x04). False, and @x untouched, for a QP that is not XRC.
 */
bool ernic_xrc_accept(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                      ErnicPkt *x)
{
    bool tgt;

    if (!ernic_qp_xrc(c, qpn)) {
        return false;
    }
    tgt = ernic_xrc_tgt(c, qpn);
    *x = *pkt;
    if (!ernic_wire_parse_xrc(x) ||
        !(x->flags & ERNIC_OPF_RESP) != tgt) {
        *x = *pkt;
        x->flags = 0;
    }
    return true;
}

/*
 * The XRC SRQ a target's request names must be an enabled XRC SRQ of
 * the QP's XRC domain (XRCDi); its PD is then the one the request's keys
 * are checked against (ernic_qp_pd()). False when it is not: the caller
 * NAKs with Remote Access Error and FATAL 0x15, as for a key of another
 * PD (docs/extension.md). True for any QP but a target.
 */
bool ernic_xrc_bind(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t xrcd = qp->ext_regs[ERNIC_W(ERNIC_XRCD)];

    if (!ernic_xrc_tgt(c, qpn)) {
        return true;
    }
    if (!ernic_srq_xrc_of(c, pkt->xrc_srqn, xrcd, &qp->xrc_pd)) {
        trace_ernic_xrc_refused(qpn, pkt->xrc_srqn, xrcd);
        return false;
    }
    qp->xrc_srq = pkt->xrc_srqn;
    return true;
}

/*
 * A target's message takes the WQE at SRQCIn of the SRQ its request
 * named (ernic_xrc_bind()): no ring of its own to report in. False when
 * the SRQ has none (an RNR NAK, as for any SRQ).
 */
bool ernic_xrc_take(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];

    if (!ernic_srq_take(c, qpn, qp->xrc_srq, &qp->rq_addr)) {
        return false;
    }
    qp->rx_srq = true;
    qp->rx_wqe = true;
    qp->rq_held = true;
    qp->rq_off = 0;
    qp->rq_size = 0;
    qp->rq_slot = 0;
    qp->rx_status = ERNIC_RXMETA_ST_OK;
    return true;
}

/*
 * The message's receive metadata @m into the first 16 bytes of the WQE
 * it took, the target QP's number with ERNIC_XRC_WB_DONE last: software
 * that sees the mark sees the entry. False when a DMA failed.
 */
bool ernic_xrc_write_back(ErnicCore *c, uint32_t qpn, const uint8_t *m)
{
    uint64_t addr = c->qp[qpn].rq_addr;
    uint8_t done[4];

    trace_ernic_xrc_write_back(qpn, c->qp[qpn].rx_srq_n,
                               c->qp[qpn].rx_srq_wqe);
    stl_le_p(done, qpn | ERNIC_XRC_WB_DONE);
    if (!ernic_dma_write(c, addr, m, ERNIC_XRC_WB_QPN)) {
        return false;
    }
    /* The entry before the mark: a guest that sees the mark sees it. */
    smp_wmb();
    return ernic_dma_write(c, addr + ERNIC_XRC_WB_QPN, done, sizeof(done));
}

/*
 * Target QP @qpn stops (FATAL, or recovery) holding a WQE of an SRQ: it
 * is written back with status 3 (flushed), so that the SRQ's owner gets
 * it back; without this a peer that breaks off a message would leak one
 * WQE of the SRQ each time.
 */
void ernic_xrc_stop(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint8_t m[ERNIC_RXMETA_SIZE] = { 0 };

    if (!ernic_xrc_tgt(c, qpn) || !qp->rq_held || !qp->rx_srq) {
        return;
    }
    qp->rq_held = false;
    stl_le_p(&m[ERNIC_RXMETA_LEN], qp->rq_off);
    m[ERNIC_RXMETA_FLAGS] = ERNIC_RXMETA_F_SRQ |
                            ERNIC_FIELD_DP32(0, ERNIC_RXMETA_STATUS_MASK,
                                             ERNIC_RXMETA_ST_FLUSH);
    stw_le_p(&m[ERNIC_RXMETA_SRQ_WQE], qp->rx_srq_wqe);
    if (!ernic_xrc_write_back(c, qpn, m)) {
        trace_ernic_qp_dma_fault(qpn, "an XRC WQE's flush");
    }
}

/* The remote XRC SRQ an initiator's WQE names; 0 for any other QP. */
uint32_t ernic_xrc_wqe_srqn(ErnicCore *c, uint32_t qpn, const uint8_t *wqe)
{
    return ernic_xrc_ini(c, qpn) ?
           ldl_le_p(&wqe[ERNIC_WQE_XRC_SRQN]) & ERNIC_QPN_MASK : 0;
}

/* An initiator's XRCETH (IBTA 9.3.2) at @p; returns its end. */
uint8_t *ernic_xrc_put_eth(uint8_t *p, const ErnicOsq *e)
{
    stl_be_p(p, e->xrc_srqn);
    return p + ERNIC_XRCETH_LEN;
}
