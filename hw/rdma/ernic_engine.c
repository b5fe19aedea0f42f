/*
 * ERNIC engine: the top of the packet engine. The transmit bottom half
 * runs each QP's READ responder and requester in turn, and an SQPIi
 * doorbell runs its own QP's at once (docs/engine.md, "Doorbells"); a
 * QP that stops (FATAL, recovery) or starts again has all three engines
 * stopped or reset here; and the QPCONFi writes of PG332's QP deletion
 * and fatal recovery procedures (ch.6 pp.61-63) act on them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * QP @qpn's transport starts afresh: requester, completer and responder
 * state and their timers (QP enabled or disabled, device reset).
 */
void ernic_engine_reset_qp(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];

    timer_del(qp->retry_timer);
    timer_del(qp->rnr_timer);
    timer_del(qp->ack_timer);
    qp->osq_head = qp->osq_count = 0;
    qp->tx_idx = qp->tx_pkt = 0;
    qp->sent_psn = 0;
    ernic_txw_reset(qp);
    qp->rnr_wait = false;
    ernic_qp_reload_counts(c, qpn);
    qp->rx_msg = ERNIC_RX_IDLE;
    qp->rq_off = 0;
    qp->rq_held = qp->rx_inv = false;
    qp->wr_off = 0;
    memset(&qp->wr_mr, 0, sizeof(qp->wr_mr));
    qp->wr_left = 0;
    qp->nak_sent = false;
    qp->ack_pending = qp->ack_held = false;
    qp->rd_head = qp->rd_count = 0;
    memset(qp->rd_hist, 0, sizeof(qp->rd_hist));
}

/*
 * The QP stops taking part in traffic (FATAL, or recovery begun): no
 * more ACKs or READ responses, and every outstanding WQE completes with
 * ERRFLAG (PG332 p.14: "the QP stops transmitting").
 */
void ernic_engine_stop_qp(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];

    timer_del(qp->ack_timer);
    qp->ack_pending = qp->ack_held = false;
    qp->rd_count = 0;
    ernic_xrc_stop(c, qpn);
    ernic_comp_flush(c, qpn);
}

/*
 * QPCONFi was written (@old: its previous value).
 *
 * Enabling starts the transport afresh: FATAL and the other sticky status
 * bits of STATQPi clear, the retry counts reload from TIMEOUTCONFi, and
 * doorbells posted meanwhile are served. Disabling drops the transport
 * state; the SQ and CQ positions (STATCURSQPTRi, CQHEADi) stay until
 * software rewrites them under the software override.
 *
 * "QP under recovery" set on an enabled QP begins the clearing of PG332
 * ch.6: nothing more is sent and every WQE, outstanding or posted up to
 * SQPIi, completes with ERRFLAG, so that STATQPi reports both queues
 * empty and CQHEADi reaches SQPIi (steps 4-6 of "Steps to clear traffic").
 * A FATAL or recovering QP that is disabled is cleared the same way first,
 * so that a driver disabling it at once (as the Xilinx drivers do) still
 * sees every WQE complete.
 */
void ernic_engine_qpconf_written(ErnicCore *c, uint32_t qpn, uint32_t old)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
    uint32_t up = qpconf & ~old, down = old & ~qpconf;
    bool stopped = qp->state == ERNIC_QPS_FATAL ||
                   qp->state == ERNIC_QPS_RECOVERY;

    if ((up & ERNIC_QPCONF_UNDER_RECOVERY) &&
        (qpconf & ERNIC_QPCONF_QP_EN)) {
        ernic_engine_stop_qp(c, qpn);
        ernic_req_flush_sq(c, qpn);
    }
    if (down & ERNIC_QPCONF_QP_EN) {
        if (stopped || (qpconf & ERNIC_QPCONF_UNDER_RECOVERY)) {
            ernic_engine_stop_qp(c, qpn);
            ernic_req_flush_sq(c, qpn);
        }
        ernic_engine_reset_qp(c, qpn);
    }
    if (up & ERNIC_QPCONF_QP_EN) {
        ernic_qp_set_reg(c, qpn, ERNIC_STATQP,
                         ernic_qp_reg(c, qpn, ERNIC_STATQP) &
                         ~(ERNIC_STATQP_FATAL | ERNIC_STATQP_RQ_OVFL |
                           ERNIC_STATQP_RETRIED | ERNIC_STATQP_NAK_SYND_MASK));
        ernic_engine_reset_qp(c, qpn);
    }
    ernic_qp_note_state(c, qpn);
    ernic_qp_update_status(c, qpn);
    if (up & ERNIC_QPCONF_QP_EN || qp->state == ERNIC_QPS_RECOVERY) {
        ernic_up_kick(c, qpn);
    }
}

/*
 * One QP's turn: its READ responder first (the peer is waiting on the
 * responses), then its requester, within @budget packets. True if it has
 * more to send.
 */
static bool ernic_engine_serve_qp(ErnicCore *c, uint32_t qpn,
                                  unsigned *budget)
{
    bool more = ernic_resp_run(c, qpn, budget);

    return ernic_req_run(c, qpn, budget) || more;
}

/* RESPHNDSTS[16] reads 1 again once no QP has a doorbell outstanding. */
static void ernic_engine_idle(ErnicCore *c)
{
    c->gcsr[ERNIC_GW(ERNIC_RESPHNDSTS)] |=
        ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN;
}

/*
 * The transmit bottom half: requesters and READ responders of every QP
 * with work, round robin, ERNIC_TX_BUDGET packets per QP and
 * ERNIC_TURN_BUDGET for the whole turn; the next turn starts after the
 * last QP served, so that none waits behind the others for long.
 */
void ernic_engine_tx_bh(void *opaque)
{
    ErnicCore *c = opaque;
    uint32_t n = c->num_qp + 1, k, qpn;
    unsigned turn = ERNIC_TURN_BUDGET;

    if (!ernic_may_run()) {
        return;
    }
    for (k = 0; k < n && turn && !c->tx_blocked; k++) {
        unsigned budget = ERNIC_TX_BUDGET;
        bool more;

        qpn = (c->sq_rr + k) % n;
        if (!test_and_clear_bit(qpn, c->sq_pending)) {
            continue;
        }
        more = ernic_engine_serve_qp(c, qpn, &budget);
        turn -= MIN(turn, ERNIC_TX_BUDGET - budget);
        /* Held up by the backend: this QP runs again on resume. */
        if (more || c->tx_blocked) {
            set_bit(qpn, c->sq_pending);
        }
        c->sq_rr = (qpn + 1) % n;
    }
    if (c->tx_blocked) {
        /* ernic_link_resume() reschedules us. */
        return;
    }
    if (find_first_bit(c->sq_pending, n) < n) {
        qemu_bh_schedule(c->sq_bh);
        return;
    }
    ernic_engine_idle(c);
}

/*
 * SQPIi was written. The QP is served at once, within the MMIO write, for
 * ERNIC_TX_BUDGET packets (as QEMU NICs such as e1000 transmit): the WQE
 * is fetched and its first frames sent before the guest's next
 * instruction, instead of after the main loop's next turn, which under
 * TCG can be milliseconds away (docs/engine.md, "Doorbells"). What is
 * left goes to the bottom half.
 *
 * Only when this write is the only ernic code on the stack: a write from
 * another device's DMA, or from under a hub's delivery, could otherwise
 * run an engine inside another's, or inside its own (docs/security.md,
 * rule 4). Those, and a backend that is full or a VM that is not running,
 * wait for the bottom half as before.
 */
void ernic_engine_doorbell(ErnicCore *c, uint32_t qpn)
{
    uint32_t n = c->num_qp + 1;
    unsigned budget = ERNIC_TX_BUDGET;

    if (!ernic_dma_alone() || c->tx_blocked || !ernic_may_run()) {
        ernic_up_kick(c, qpn);
        return;
    }
    trace_ernic_sq_doorbell(qpn, ernic_qp_reg(c, qpn, ERNIC_SQPI));
    /* The bottom half is scheduled only for what is left. */
    if (ernic_engine_serve_qp(c, qpn, &budget) || c->tx_blocked) {
        ernic_up_pend(c, qpn);
    } else if (find_first_bit(c->sq_pending, n) >= n) {
        ernic_engine_idle(c);
    }
}
