/*
 * ERNIC QP context state: which state a QP is in (QPCONFi[0] "QP enable",
 * QPCONFi[6] "QP under recovery", STATQPi[0] "QP in fatal status"; PG332
 * v3.1 pp.41-45), entering FATAL (Table 2-4 and the incoming packet error
 * status queue, p.17, Fig. 2-3), and what the QPCONFi and STATQPi writes
 * of the QP deletion and QP fatal recovery procedures (ch.6 pp.61-63) do
 * to the transport engine.
 *
 * The states, their transitions and their IBTA counterparts are drawn in
 * docs/qp-states.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "ernic_core.h"
#include "trace.h"

static const char *const ernic_qp_state_names[] = {
    [ERNIC_QPS_DISABLED] = "disabled",
    [ERNIC_QPS_ENABLED] = "enabled",
    [ERNIC_QPS_FATAL] = "fatal",
    [ERNIC_QPS_RECOVERY] = "recovery",
};

ErnicQpState ernic_qp_state(ErnicCore *c, uint32_t qpn)
{
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);

    if (qpconf & ERNIC_QPCONF_UNDER_RECOVERY) {
        return ERNIC_QPS_RECOVERY;
    }
    if (ernic_qp_reg(c, qpn, ERNIC_STATQP) & ERNIC_STATQP_FATAL) {
        return ERNIC_QPS_FATAL;
    }
    return (qpconf & ERNIC_QPCONF_QP_EN) ? ERNIC_QPS_ENABLED
                                         : ERNIC_QPS_DISABLED;
}

/* Trace a state change; the state itself is always derived afresh. */
static void ernic_qp_note_state(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicQpState s = ernic_qp_state(c, qpn);

    if (s != qp->state) {
        trace_ernic_qp_state(qpn, ernic_qp_state_names[qp->state],
                             ernic_qp_state_names[s]);
        qp->state = s;
    }
}

void ernic_qp_engine_reset(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];

    timer_del(qp->retry_timer);
    timer_del(qp->rnr_timer);
    timer_del(qp->ack_timer);
    qp->osq_head = qp->osq_count = 0;
    qp->tx_idx = qp->tx_pkt = 0;
    qp->sent_psn = 0;
    ernic_req_window_reset(qp);
    qp->rnr_wait = false;
    ernic_comp_reload_counts(c, qpn);
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
static void ernic_qp_stop(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];

    timer_del(qp->ack_timer);
    qp->ack_pending = qp->ack_held = false;
    qp->rd_count = 0;
    ernic_comp_flush(c, qpn);
}

void ernic_qp_fatal(ErnicCore *c, uint32_t qpn, uint16_t code)
{
    uint32_t statqp = ernic_qp_reg(c, qpn, ERNIC_STATQP);
    uint64_t base = ((uint64_t)ernic_gcsr(c, ERNIC_IPKTERRQBAMSB) << 32) |
                    ernic_gcsr(c, ERNIC_IPKTERRQBA);
    uint32_t num = ernic_gcsr(c, ERNIC_IPKTERRQSZ) & 0xffff;
    uint32_t wptr = ernic_gcsr(c, ERNIC_IPKTERRQWPTR);
    uint8_t entry[ERNIC_IPKTERRQ_ENTRY_SIZE] = { 0 };

    /* One entry per QP: FATAL is left only by re-enabling the QP. */
    if (statqp & ERNIC_STATQP_FATAL) {
        return;
    }
    trace_ernic_qp_fatal(qpn, code);
    c->fault.last_code = code;
    ernic_qp_set_reg(c, qpn, ERNIC_STATQP, statqp | ERNIC_STATQP_FATAL);

    /*
     * The status queue is written circularly; overflow is software's
     * problem (PG332 p.34). With no entries configured nothing is written.
     */
    if (num) {
        uint64_t addr = base + (uint64_t)(wptr % num) *
                               ERNIC_IPKTERRQ_ENTRY_SIZE;

        stl_le_p(entry, code | (qpn << ERNIC_IPKTERRQ_QPID_SHIFT));
        if (!ernic_dma_write(c, addr, entry, sizeof(entry))) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: status queue write to 0x%"
                          PRIx64 " failed\n", addr);
        }
        ernic_gcsr_set(c, ERNIC_IPKTERRQWPTR, (wptr % num + 1) % num);
    }

    ernic_qp_stop(c, qpn);
    ernic_qp_note_state(c, qpn);
    ernic_core_raise(c, ERNIC_INT_FATAL);
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
void ernic_qp_conf_written(ErnicCore *c, uint32_t qpn, uint32_t old)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
    uint32_t up = qpconf & ~old, down = old & ~qpconf;
    bool stopped = qp->state == ERNIC_QPS_FATAL ||
                   qp->state == ERNIC_QPS_RECOVERY;

    if ((up & ERNIC_QPCONF_UNDER_RECOVERY) &&
        (qpconf & ERNIC_QPCONF_QP_EN)) {
        ernic_qp_stop(c, qpn);
        ernic_req_flush_sq(c, qpn);
    }
    if (down & ERNIC_QPCONF_QP_EN) {
        if (stopped || (qpconf & ERNIC_QPCONF_UNDER_RECOVERY)) {
            ernic_qp_stop(c, qpn);
            ernic_req_flush_sq(c, qpn);
        }
        ernic_qp_engine_reset(c, qpn);
    }
    if (up & ERNIC_QPCONF_QP_EN) {
        ernic_qp_set_reg(c, qpn, ERNIC_STATQP,
                         ernic_qp_reg(c, qpn, ERNIC_STATQP) &
                         ~(ERNIC_STATQP_FATAL | ERNIC_STATQP_RQ_OVFL |
                           ERNIC_STATQP_RETRIED | ERNIC_STATQP_NAK_SYND_MASK));
        ernic_qp_engine_reset(c, qpn);
    }
    ernic_qp_note_state(c, qpn);
    ernic_sq_update_status(c, qpn);
    if (up & ERNIC_QPCONF_QP_EN || qp->state == ERNIC_QPS_RECOVERY) {
        ernic_sq_doorbell(c, qpn);
    }
}

/*
 * STATQPi[26:24] and [30:28] are read/write (PG332 p.45): software
 * re-initialises the retry and RNR counts there (fatal recovery, re-init
 * step 9), and the engine counts down from what it wrote.
 */
void ernic_qp_statqp_written(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t statqp = ernic_qp_reg(c, qpn, ERNIC_STATQP);

    qp->retries_left = (statqp & ERNIC_STATQP_RETRY_CNT_MASK) >>
                       ERNIC_STATQP_RETRY_CNT_SHIFT;
    qp->rnr_left = (statqp & ERNIC_STATQP_RNR_CNT_MASK) >>
                   ERNIC_STATQP_RNR_CNT_SHIFT;
}
