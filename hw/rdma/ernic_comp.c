/*
 * ERNIC completer ("Response Handler", PG332 v3.1 ch.1): ACK, NAK, RNR NAK
 * and READ responses for the outstanding queue, the retransmit and RNR
 * timers, and completion reporting (CQHEADi, CQDBADDi, CQEs; PG332 Table
 * 2-2, ch.6 "Processing WQE Completions").
 *
 * CQHEADi reports the slot index of the next WQE to complete, except that
 * once every posted WQE has completed it equals SQPIi exactly, so that
 * "CQHEADi == SQPIi" (PG332 ch.6, QP deletion and fatal recovery) holds
 * whichever numbering software uses (docs/registers.md, "Choices").
 *
 * Timers run on QEMU_CLOCK_VIRTUAL. The retransmit period is 4.096 us x
 * 2^TIMEOUTCONFi[5:0] (IBTA C9-141; 0 disables it), the RNR wait is the
 * IBTA Table 45 value named by the RNR NAK.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "ernic_core.h"
#include "trace.h"

/* IBTA vol. 1 Table 45: RNR NAK timer field to microseconds. */
static const uint32_t ernic_rnr_us[32] = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
    1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
    40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

#define ERNIC_RETRY_INFINITE    7       /* IBTA: RNR retry 7 = no limit */

static ErnicOsq *ernic_comp_osq(ErnicQP *qp, uint32_t i)
{
    return &qp->osq[(qp->osq_head + i) % ERNIC_OSQ_DEPTH];
}

static uint32_t ernic_comp_last_psn(const ErnicOsq *e)
{
    return (e->psn + e->npkts - 1) & ERNIC_PSN_MASK;
}

/* An injected error completion (docs/debugging.md), if one is armed. */
static bool ernic_comp_fault_cqe(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];

    if (!qp->fault_cqe_left) {
        return false;
    }
    qp->fault_cqe_left--;
    c->fault.count[ERNIC_FC_CQE_ERROR]++;
    trace_ernic_fault_cqe(qpn, qp->fault_cqe_left);
    ernic_link_fault_rearm(c);
    return true;
}

/*
 * Complete the WQE at the CQ position: write its CQE when QPCONFi[5] is
 * set, advance CQHEADi and DMA it to CQDBADDi, and raise the completion
 * interrupt (PG332 pp.21-23). False when a DMA failed (docs/errors.md,
 * "DMA errors"): the completion still counts.
 */
static bool ernic_comp_cqe(ErnicCore *c, uint32_t qpn, uint16_t depth,
                           uint16_t wrid, uint8_t opcode, bool error)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t sqpi = ernic_qp_reg(c, qpn, ERNIC_SQPI);
    uint64_t cqdb = ernic_qp_addr(c, qpn, ERNIC_CQDBADD, ERNIC_CQDBADDMSB);
    uint32_t cqhead;
    uint8_t buf[4];
    bool ok = true;

    /* The depth in force now: the guest may have shrunk it (or CQHEADi). */
    qp->cq_next %= depth;
    if (ernic_qp_reg(c, qpn, ERNIC_QPCONF) & ERNIC_QPCONF_CQE_WR_EN) {
        uint64_t cqe_addr = ernic_qp_addr(c, qpn, ERNIC_CQBA, ERNIC_CQBAMSB) +
                            (uint64_t)qp->cq_next * ERNIC_CQE_SIZE;
        uint32_t cqe;

        if (unlikely(c->fault.armed) && !error) {
            error = ernic_comp_fault_cqe(c, qpn);
        }
        cqe = ERNIC_FIELD_DP32(wrid, ERNIC_CQE_OPCODE_MASK, opcode);
        cqe = ERNIC_FIELD_DP32(cqe, ERNIC_CQE_ERRFLAG_MASK, error);
        stl_le_p(buf, cqe);
        ok = ernic_dma_write(c, cqe_addr, buf, sizeof(buf));
    }

    qp->cq_next = (qp->cq_next + 1) % depth;
    cqhead = qp->cq_next == sqpi % depth ? sqpi : qp->cq_next;
    ernic_qp_set_reg(c, qpn, ERNIC_CQHEAD, cqhead);
    trace_ernic_sq_complete(qpn, wrid, opcode, error, cqhead);

    /* Address 0 means "no doorbell word": nothing is written there. */
    if (cqdb) {
        stl_le_p(buf, cqhead);
        ok &= ernic_dma_write(c, cqdb, buf, sizeof(buf));
    }
    ernic_irq_raise_qp(c, ERNIC_INT_WQE_COMPLETION, qpn);
    return ok;
}

/*
 * The first PSN at or before @psn still owed by a READ: its responses
 * are acknowledged only as they arrive, whatever an ACK covers.
 */
static uint32_t ernic_comp_owed(ErnicQP *qp, uint32_t psn)
{
    uint32_t i;

    for (i = 0; i < qp->osq_count; i++) {
        ErnicOsq *e = ernic_comp_osq(qp, i);
        uint32_t owed = e->psn + e->read_pkts;

        if (ernic_psn_diff(e->psn, psn) >= 0) {
            break;
        }
        if (ernic_op_reads(e->opcode) && !e->done &&
            ernic_psn_diff(owed, psn) < 0) {
            return owed & ERNIC_PSN_MASK;
        }
    }
    return psn;
}

/*
 * The peer has everything before @psn: when that moves STATRESPSNi on,
 * the retry and RNR counts start again (they count retries without
 * progress, IBTA C9-142). An ACK beyond a READ whose responses are still
 * owed (a duplicate request answered after the READ arrived) moves it
 * only to the READ's first missing response: before, it moved past the
 * whole READ, so the READ's own responses were no progress any more, and
 * a long READ over a lossy link spent its retry count on re-asks spread
 * over the whole transfer (FATAL 0x06; `/ernic/rc/read-progress`).
 */
static void ernic_comp_progress(ErnicCore *c, uint32_t qpn, uint32_t psn)
{
    int32_t acked;

    psn = ernic_comp_owed(&c->qp[qpn], psn & ERNIC_PSN_MASK);
    acked = ernic_psn_diff(psn, ernic_qp_reg(c, qpn, ERNIC_STATRESPSN));
    if (acked > 0 && ernic_psn_diff(psn, c->qp[qpn].sent_psn) <= 0) {
        ernic_qp_set_reg(c, qpn, ERNIC_STATRESPSN, psn);
        ernic_txw_answered(&c->qp[qpn], false);
        ernic_txw_grow(&c->qp[qpn], acked);
        ernic_qp_reload_counts(c, qpn);
        /*
         * The transmit window has moved: packets it held may go. Only
         * packets of fetched WQEs wait for it; fetching waits for room in
         * the outstanding queue, which ernic_comp_complete_ready() rings
         * for. So a READ response, which moves the window by one packet
         * while every request is out, rings nothing.
         */
        if (c->qp[qpn].tx_idx < c->qp[qpn].osq_count) {
            ernic_up_kick(c, qpn);
        }
    }
}

/*
 * A DMA of the completer failed (CQE, doorbell, READ data): the bus error
 * makes the QP FATAL 0x06 (docs/errors.md, "DMA errors").
 */
static void ernic_comp_dma_fault(ErnicCore *c, uint32_t qpn, const char *what)
{
    trace_ernic_qp_dma_fault(qpn, what);
    if (!(ernic_qp_reg(c, qpn, ERNIC_STATQP) & ERNIC_STATQP_FATAL)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u DMA of %s failed: "
                      "FATAL\n", qpn, what);
    }
    ernic_qp_fatal(c, qpn, ERNIC_FATAL_RESPONSE_HANDLER);
}

/* Complete, in SQ order, the finished WQEs at the head. */
void ernic_comp_complete_ready(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint16_t depth = ernic_qp_reg(c, qpn, ERNIC_QDEPTH) & ERNIC_QDEPTH_SQ_MASK;
    bool progress = false, ok = true;

    while (qp->osq_count && ernic_comp_osq(qp, 0)->done) {
        ErnicOsq e = *ernic_comp_osq(qp, 0);

        /* Taken off the queue before anything that could act on it. */
        qp->osq_head = (qp->osq_head + 1) % ERNIC_OSQ_DEPTH;
        qp->osq_count--;
        if (qp->tx_idx) {
            qp->tx_idx--;
        } else {
            /* It was being sent again: the next one starts afresh. */
            qp->tx_pkt = 0;
        }
        if (depth >= 2) {
            ok &= ernic_comp_cqe(c, qpn, depth, e.wrid, e.opcode, e.error);
        }
        progress = true;
    }
    if (!progress) {
        return;
    }
    if (qp->osq_count) {
        uint32_t head = ernic_comp_osq(qp, 0)->psn;

        if (ernic_psn_diff(head, ernic_qp_reg(c, qpn, ERNIC_STATRESPSN)) > 0) {
            ernic_qp_set_reg(c, qpn, ERNIC_STATRESPSN, head);
        }
        /* The retransmit period restarts on progress. */
        timer_del(qp->retry_timer);
        ernic_comp_arm_retry(c, qpn);
    } else {
        ernic_qp_set_reg(c, qpn, ERNIC_STATRESPSN,
                         ernic_qp_reg(c, qpn, ERNIC_SQPSN));
        timer_del(qp->retry_timer);
    }
    ernic_txw_answered(qp, false);
    ernic_qp_update_status(c, qpn);
    if (!ok) {
        ernic_comp_dma_fault(c, qpn, "a completion");
    }
    /* Room in the outstanding queue: fetch more. */
    ernic_up_kick(c, qpn);
}

/* FATAL: everything outstanding completes with ERRFLAG (PG332 p.14). */
void ernic_comp_flush(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t i;

    for (i = 0; i < qp->osq_count; i++) {
        ernic_comp_osq(qp, i)->done = true;
        ernic_comp_osq(qp, i)->error = true;
    }
    qp->tx_idx = qp->osq_count;
    qp->rnr_wait = false;
    timer_del(qp->retry_timer);
    timer_del(qp->rnr_timer);
    ernic_comp_complete_ready(c, qpn);
}

/*
 * Retries that no count limits (retry-fatal disabled with the count spent,
 * or RNR retry 7) go on for ever, as IBTA has it; each waits at least this
 * long, so that a dead or hostile peer costs a bounded share of the CPU.
 */
#define ERNIC_UNLIMITED_RETRY_NS    (1 * SCALE_MS)

static bool ernic_comp_retry_unlimited(ErnicCore *c, uint32_t qpn)
{
    return c->qp[qpn].retries_left == 0 &&
           (ernic_gcsr(c, ERNIC_XRNICADCONF) &
            ERNIC_XRNICADCONF_RETRY_FATAL_DIS);
}

/* The retransmit period in ns, or 0 when nothing sent waits for one. */
static int64_t ernic_comp_retry_period(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t t = ernic_qp_reg(c, qpn, ERNIC_TIMEOUTCONF) &
                 ERNIC_TIMEOUTCONF_TIMEOUT_MASK;
    int64_t period;

    if (qpn == ERNIC_QP_GSI || ernic_uc_qp(c, qpn) || !qp->osq_count ||
        (!qp->tx_idx && !qp->tx_pkt) || t == 0) {
        return 0;
    }
    /* 4.096 us << t, t capped at 31 as IBTA's 5-bit field. */
    period = 4096LL << MIN(t, 31);
    if (ernic_comp_retry_unlimited(c, qpn)) {
        period = MAX(period, ERNIC_UNLIMITED_RETRY_NS);
    }
    return period;
}

void ernic_comp_arm_retry(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    int64_t period = ernic_comp_retry_period(c, qpn);

    if (period && !timer_pending(qp->retry_timer)) {
        timer_mod(qp->retry_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  period);
    }
}

/*
 * A READ response restarts the retransmit period, one per packet. Moving
 * a timer that heads the clock's list wakes the main loop (an eventfd
 * write), and that cost a READ requester's main loop a quarter of its
 * time; so a timer with a whole period still to run stays where it is,
 * and one that is moved gets 1/16 of a period more. The timeout comes
 * between one period and 17/16 of one after the last response (IBTA
 * allows the timer up to four times its value; docs/engine.md, Timers).
 */
static void ernic_comp_restart_retry(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    int64_t period = ernic_comp_retry_period(c, qpn);
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (!period) {
        timer_del(qp->retry_timer);
    } else if (!timer_pending(qp->retry_timer) ||
               timer_expire_time_ns(qp->retry_timer) - now < period) {
        timer_mod(qp->retry_timer, now + period + period / 16);
    }
}

/* Rewind transmission to the first packet of outstanding entry @from. */
static void ernic_comp_retransmit(ErnicCore *c, uint32_t qpn, uint32_t from)
{
    ErnicQP *qp = &c->qp[qpn];

    if (from >= qp->osq_count) {
        return;
    }
    trace_ernic_retransmit(qpn, qp->osq[(qp->osq_head + from) %
                                         ERNIC_OSQ_DEPTH].psn);
    qp->tx_idx = from;
    qp->tx_pkt = 0;
    ernic_txw_rewound(qp);
    ernic_gcsr_count32(c, ERNIC_RETRYCNTSTS);
    ernic_qp_set_reg(c, qpn, ERNIC_STATQP,
                     ernic_qp_reg(c, qpn, ERNIC_STATQP) |
                     ERNIC_STATQP_RETRIED);
    ernic_up_kick(c, qpn);
}

/* Retry: whole WQEs again from @from (PG332 p.10), while counts last. */
static void ernic_comp_retry(ErnicCore *c, uint32_t qpn, uint32_t from)
{
    ErnicQP *qp = &c->qp[qpn];

    if (qp->retries_left == 0 && !ernic_comp_retry_unlimited(c, qpn)) {
        trace_ernic_retry_exhausted(qpn, "transport");
        ernic_qp_fatal(c, qpn, ERNIC_FATAL_RESPONSE_HANDLER);
        return;
    }
    if (qp->retries_left) {
        qp->retries_left--;
    }
    timer_del(qp->retry_timer);
    ernic_txw_shrink(qp);
    ernic_comp_retransmit(c, qpn, from);
    ernic_qp_update_status(c, qpn);
}

/* No response within the retransmit period: retry from the oldest WQE. */
void ernic_comp_retry_timer(void *opaque)
{
    ErnicQP *qp = opaque;
    ernic_dma_timer_enter(qp->core);

    /* Something sent (entry 0 may be partly sent) and unanswered. */
    if (qp->osq_count && (qp->tx_idx || qp->tx_pkt)) {
        if (ernic_txw_stalled(qp)) {
            /* Only packets the peer has went unanswered: no retry. */
            trace_ernic_timeout(qp->qpn, "resend window");
            ernic_comp_arm_retry(qp->core, qp->qpn);
            ernic_up_kick(qp->core, qp->qpn);
        } else {
            trace_ernic_timeout(qp->qpn, "retransmit");
            ernic_comp_retry(qp->core, qp->qpn, 0);
        }
    }
    ernic_dma_timer_exit(qp->core);
}

/* The RNR NAK wait is over: send again from the rewound position. */
void ernic_comp_rnr_timer(void *opaque)
{
    ErnicQP *qp = opaque;
    ernic_dma_timer_enter(qp->core);

    trace_ernic_timeout(qp->qpn, "rnr");
    qp->rnr_wait = false;
    ernic_gcsr_count32(qp->core, ERNIC_RETRYCNTSTS);
    ernic_up_kick(qp->core, qp->qpn);
    ernic_dma_timer_exit(qp->core);
}

/* The outstanding entry whose PSN range holds @psn, or -1. */
static int ernic_comp_find(ErnicQP *qp, uint32_t psn)
{
    uint32_t i;

    for (i = 0; i < qp->osq_count; i++) {
        ErnicOsq *e = ernic_comp_osq(qp, i);

        if (ernic_psn_diff(psn, e->psn) >= 0 &&
            ernic_psn_diff(psn, ernic_comp_last_psn(e)) <= 0) {
            return i;
        }
    }
    return -1;
}

/*
 * Mark as acknowledged the entries that end at or before @psn. A READ
 * whose response has not fully arrived cannot be acknowledged by an ACK:
 * its response was lost (implied NAK, IBTA 9.7.5.1.3); its index is
 * returned so that it is retried, else -1. The index is the one after the
 * acknowledged entries have left the queue: an index taken before would
 * name a later entry (found by the wire-fault soak, docs/fuzzing.md).
 */
static int ernic_comp_ack_upto(ErnicCore *c, uint32_t qpn, uint32_t psn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t i, implied_psn = 0;
    bool progress = false;
    int implied = -1;

    /* @psn was sent (ernic_comp_receive), so is all before it. */
    for (i = 0; i < qp->osq_count; i++) {
        ErnicOsq *e = ernic_comp_osq(qp, i);

        if (e->done) {
            continue;
        }
        if (ernic_psn_diff(ernic_comp_last_psn(e), psn) > 0) {
            break;
        }
        if (ernic_op_reads(e->opcode)) {
            implied = i;
            implied_psn = e->psn;
            break;
        }
        e->done = true;
        progress = true;
    }
    if (progress) {
        ernic_qp_reload_counts(c, qpn);
        ernic_comp_complete_ready(c, qpn);
        if (implied >= 0) {
            /* Not done, so still queued, now at a lower index. */
            implied = ernic_comp_find(qp, implied_psn);
        }
    }
    return implied;
}

static void ernic_comp_rnr(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    int64_t wait;
    int i;

    ernic_comp_ack_upto(c, qpn, pkt->psn - 1);
    ernic_comp_progress(c, qpn, pkt->psn);
    i = ernic_comp_find(qp, pkt->psn);
    if (i < 0) {
        return;
    }
    if (qp->rnr_left == 0) {
        trace_ernic_retry_exhausted(qpn, "RNR");
        ernic_qp_rx_fatal(c, pkt, 0, qpn, ERNIC_FATAL_RNR_COUNTER);
        return;
    }
    wait = (int64_t)ernic_rnr_us[pkt->syndrome & 0x1f] * SCALE_US;
    if (qp->rnr_left != ERNIC_RETRY_INFINITE) {
        qp->rnr_left--;
    } else {
        wait = MAX(wait, ERNIC_UNLIMITED_RETRY_NS);
    }
    timer_del(qp->retry_timer);
    qp->tx_idx = i;
    qp->tx_pkt = 0;
    ernic_txw_rewound(qp);
    qp->rnr_wait = true;
    timer_mod(qp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + wait);
    ernic_qp_update_status(c, qpn);
}

/*
 * Implied NAK of READ @i (IBTA 9.7.5.1.3): its responses were lost, so it
 * is asked again, once for each state of its responses. ACKs and
 * responses that were on the wire before it was asked again imply the
 * same loss; before this rule each of them was a retry, and a burst of
 * stale responses (a link that came back after a migration delivered the
 * frames it held) spent the retry count at once: FATAL 0x06 with no
 * timeout (docs/engine.md, choice 16). If the responses are lost again,
 * the retransmit timer asks again.
 */
static void ernic_comp_implied_nak(ErnicCore *c, uint32_t qpn, int i)
{
    ErnicOsq *e = ernic_comp_osq(&c->qp[qpn], i);

    if (e->read_reask != e->read_pkts + 1) {
        e->read_reask = e->read_pkts + 1;
        ernic_comp_retry(c, qpn, i);
    }
}

/*
 * An ACK that moves nothing while a retry sends again packets the peer
 * has answers one of them: the window moves on by one, and the peer,
 * alive, gets a new retransmit period (not a new retry count: this is no
 * progress, IBTA C9-142). A long WQE resent into a window of 16 would
 * otherwise need many periods (docs/engine.md, choice 12).
 */
static void ernic_comp_resend_answered(ErnicCore *c, uint32_t qpn,
                                       uint32_t psn)
{
    ErnicQP *qp = &c->qp[qpn];

    if (((psn + 1) & ERNIC_PSN_MASK) != ernic_qp_reg(c, qpn, ERNIC_STATRESPSN)
        || !ernic_txw_answered(qp, true)) {
        return;
    }
    timer_del(qp->retry_timer);
    ernic_comp_arm_retry(c, qpn);
    ernic_up_kick(c, qpn);
}

/* A response that is not what the outstanding request asked for. */
static void ernic_comp_bad_response(ErnicCore *c, uint32_t qpn,
                                    const ErnicPkt *pkt, uint32_t synd,
                                    uint16_t code)
{
    trace_ernic_rx_resp_error(qpn, pkt->opcode, pkt->psn, code);
    ernic_qp_rx_fatal(c, pkt, synd, qpn, code);
}

/*
 * The states of the completer for one response, as rxe's comp_state; in
 * this order.
 */
typedef enum ErnicCompState {
    ERNIC_COMP_CHECK_PACKET,    /* a response to what we sent, well formed */
    ERNIC_COMP_CHECK_OPCODE,    /* ACK/NAK, READ response, or neither */
    ERNIC_COMP_ACK,             /* acknowledges up to its PSN */
    ERNIC_COMP_NAK,             /* NAK or RNR NAK: recorded */
    ERNIC_COMP_RNR,             /* wait, then send again (IBTA 9.7.5.2.8) */
    ERNIC_COMP_NAK_SEQ,         /* PSN sequence error: send again */
    ERNIC_COMP_NAK_FATAL,       /* any other NAK: FATAL */
    ERNIC_COMP_READ_PSN,        /* READ response: which READ, which packet */
    ERNIC_COMP_READ_OPCODE,     /* FIRST/MIDDLE/LAST/ONLY as expected */
    ERNIC_COMP_READ_LENGTH,     /* the length its position has */
    ERNIC_COMP_READ_DATA,       /* placed in the READ's local buffer */
    ERNIC_COMP_DONE,
} ErnicCompState;

/* The response being completed. */
typedef struct ErnicCompPkt {
    ErnicCore *c;
    ErnicQP *qp;
    uint32_t qpn;
    const ErnicPkt *pkt;
    ErnicOsq *e;                /* READ responses: the READ */
    int i;                      /* ... its index in the outstanding queue */
    uint32_t idx;               /* ... and the response's packet */
} ErnicCompPkt;

static ErnicCompState ernic_comp_check_packet(ErnicCompPkt *r)
{
    ErnicCore *c = r->c;
    const ErnicPkt *pkt = r->pkt;
    uint32_t una = ernic_qp_reg(c, r->qpn, ERNIC_STATRESPSN);

    if (!r->qp->osq_count || ernic_psn_diff(pkt->psn, r->qp->sent_psn) >= 0) {
        /* A response to nothing we sent ("ghost"): dropped, counted. */
        ernic_gcsr_count16(c, ERNIC_ININVDUPCNT, false);
        trace_ernic_rx_drop_resp(r->qpn, pkt->opcode, pkt->psn);
        return ERNIC_COMP_DONE;
    }
    if (ernic_psn_diff(pkt->psn, una) < 0 &&
        ernic_psn_diff(pkt->psn, ernic_comp_osq(r->qp, 0)->psn) < 0) {
        /* Older than anything outstanding: a duplicate. */
        ernic_gcsr_count16(c, ERNIC_ININVDUPCNT, true);
        return ERNIC_COMP_DONE;
    }
    if (!(pkt->flags & ERNIC_OPF_LAST) && pkt->padcnt) {
        /* Table 2-3 bit 18: FIRST or MIDDLE response with pad, dropped. */
        ernic_err_rx(c, pkt->frame, pkt->len, ERNIC_SYND_PAD, r->qpn);
        return ERNIC_COMP_DONE;
    }
    if (pkt->paylen > ernic_qp_pmtu(c, r->qpn)) {
        /* Table 2-3 bit 19: more than any packet may carry, dropped. */
        ernic_err_rx(c, pkt->frame, pkt->len, ERNIC_SYND_PMTU, r->qpn);
        return ERNIC_COMP_DONE;
    }
    return ERNIC_COMP_CHECK_OPCODE;
}

static ErnicCompState ernic_comp_check_opcode(ErnicCompPkt *r)
{
    const ErnicPkt *pkt = r->pkt;

    switch (pkt->opcode) {
    case IB_OPC_ACK:
        ernic_gcsr_count16(r->c, ERNIC_INAMPKTCNT, false);
        switch (pkt->syndrome & IB_AETH_TYPE_MASK) {
        case IB_AETH_ACK:
            return ERNIC_COMP_ACK;
        case IB_AETH_RNR_NAK:
        case IB_AETH_NAK:
            return ERNIC_COMP_NAK;
        }
        /* PG332 Table 2-3 bit 22: reserved AETH type, malformed, dropped. */
        ernic_err_rx(r->c, pkt->frame, pkt->len, ERNIC_SYND_AETH, r->qpn);
        return ERNIC_COMP_DONE;
    case IB_OPC_ATOMIC_ACK:
        if (ernic_atomic_qp(r->c, r->qpn)) {
            /* The one response of an ERNIC-X atomic, as a READ's. */
            ernic_gcsr_count16(r->c, ERNIC_INAMPKTCNT, false);
            return ERNIC_COMP_READ_PSN;
        }
        /*
         * ERNIC sends no atomics (PG332 p.4): an ATOMIC ACKNOWLEDGE is
         * never the right answer (Table 2-4, 0x0C).
         */
        ernic_comp_bad_response(r->c, r->qpn, pkt, ERNIC_SYND_BAD_RESPONSE,
                                ERNIC_FATAL_ACK_OPCODE);
        return ERNIC_COMP_DONE;
    default:
        ernic_gcsr_count16(r->c, ERNIC_INSRRPKTCNT, true);
        return ERNIC_COMP_READ_PSN;
    }
}

static ErnicCompState ernic_comp_do_ack(ErnicCompPkt *r)
{
    int i;

    ernic_comp_resend_answered(r->c, r->qpn, r->pkt->psn);
    ernic_comp_progress(r->c, r->qpn, r->pkt->psn + 1);
    i = ernic_comp_ack_upto(r->c, r->qpn, r->pkt->psn);
    if (i >= 0) {
        ernic_comp_implied_nak(r->c, r->qpn, i);
    }
    return ERNIC_COMP_DONE;
}

/* A NAK or RNR NAK is recorded: STATQPi, INNCKPKTSTS, the counter. */
static ErnicCompState ernic_comp_do_nak(ErnicCompPkt *r)
{
    ErnicCore *c = r->c;
    const ErnicPkt *pkt = r->pkt;
    uint32_t statqp;

    statqp = ERNIC_FIELD_DP32(ernic_qp_reg(c, r->qpn, ERNIC_STATQP),
                              ERNIC_STATQP_NAK_SYND_MASK, pkt->syndrome);
    ernic_qp_set_reg(c, r->qpn, ERNIC_STATQP, statqp);
    ernic_gcsr_set(c, ERNIC_INNCKPKTSTS,
                   ((ernic_gcsr(c, ERNIC_INNCKPKTSTS) + 0x10000) & 0xffff0000) |
                   (r->qpn & 0xff));
    ernic_gcsr_count16(c, ERNIC_INNAKPKTCNT, false);
    trace_ernic_rx_nak(r->qpn, pkt->syndrome, pkt->psn);
    if ((pkt->syndrome & IB_AETH_TYPE_MASK) == IB_AETH_RNR_NAK) {
        return ERNIC_COMP_RNR;
    }
    ernic_comp_ack_upto(c, r->qpn, pkt->psn - 1);
    return pkt->syndrome == IB_NAK_PSN_SEQ ? ERNIC_COMP_NAK_SEQ :
                                             ERNIC_COMP_NAK_FATAL;
}

/*
 * A NAK for a PSN that a retransmission already in progress will send
 * again is stale: rewinding once more would only repeat it.
 */
static ErnicCompState ernic_comp_do_nak_seq(ErnicCompPkt *r)
{
    ErnicQP *qp = r->qp;
    uint32_t psn = r->pkt->psn;
    int i;

    ernic_comp_progress(r->c, r->qpn, psn);
    i = ernic_comp_find(qp, psn);
    if (i >= 0 && !(qp->tx_idx < qp->osq_count &&
                    ernic_psn_diff(ernic_comp_osq(qp, qp->tx_idx)->psn +
                                   qp->tx_pkt, psn) <= 0)) {
        ernic_comp_retry(r->c, r->qpn, i);
    }
    return ERNIC_COMP_DONE;
}

static ErnicCompState ernic_comp_do_nak_fatal(ErnicCompPkt *r)
{
    const ErnicPkt *pkt = r->pkt;

    trace_ernic_rx_resp_error(r->qpn, pkt->opcode, pkt->psn, pkt->syndrome);
    if (pkt->syndrome > IB_NAK_REMOTE_OP) {
        /* A reserved NAK code: bad AETH syndrome (Table 2-4, 0x19). */
        ernic_qp_rx_fatal(r->c, pkt, ERNIC_SYND_AETH, r->qpn,
                          ERNIC_FATAL_AETH);
        return ERNIC_COMP_DONE;
    }
    /*
     * NAK-Invalid, Remote Access or Remote Operational error (p.18); the
     * first of them is also Table 2-3 bit 23.
     */
    ernic_qp_rx_fatal(r->c, pkt, pkt->syndrome == IB_NAK_INVALID_REQ ?
                      ERNIC_SYND_BAD_RESPONSE : 0, r->qpn,
                      ERNIC_FATAL_NAK_RECEIVED);
    return ERNIC_COMP_DONE;
}

/*
 * An ATOMIC ACKNOWLEDGE answers an atomic, a READ response a READ, a
 * FLUSH or an ATOMIC WRITE (whose response is a READ Response Only of
 * no payload, IBTA A19: checked as a READ of no data).
 */
static bool ernic_comp_answers(const ErnicOsq *e, const ErnicPkt *pkt)
{
    return (pkt->opcode == IB_OPC_ATOMIC_ACK) ?
           ernic_op_is_atomic(e->opcode) :
           e->opcode == ERNIC_OP_READ || ernic_op_is_place(e->opcode);
}

/*
 * Which READ a response answers, and which of its packets it is (IBTA
 * 9.7.5.1.2): a response implicitly acknowledges every older request;
 * one that comes before the packet expected is a duplicate, one after it
 * means responses were lost (implied NAK: ask again from the first
 * missing one; later responses to the earlier request keep arriving and
 * are dropped without asking again each time).
 */
static ErnicCompState ernic_comp_read_psn(ErnicCompPkt *r)
{
    ErnicQP *qp = r->qp;
    const ErnicPkt *pkt = r->pkt;
    int i = ernic_comp_ack_upto(r->c, r->qpn, pkt->psn - 1);
    int32_t d;

    if (i >= 0 && ernic_comp_find(qp, pkt->psn) != i) {
        ernic_comp_implied_nak(r->c, r->qpn, i);
        return ERNIC_COMP_DONE;
    }
    r->i = ernic_comp_find(qp, pkt->psn);
    if (r->i < 0 &&
        (!qp->osq_count ||
         ernic_psn_diff(pkt->psn, ernic_comp_osq(qp, 0)->psn) < 0)) {
        /*
         * The READ it answers was done and has just completed with the
         * older requests this response acknowledged: a duplicate.
         */
        ernic_gcsr_count16(r->c, ERNIC_ININVDUPCNT, true);
        return ERNIC_COMP_DONE;
    }
    if (r->i < 0 || !ernic_comp_answers(ernic_comp_osq(qp, r->i), pkt)) {
        ernic_comp_bad_response(r->c, r->qpn, pkt, ERNIC_SYND_BAD_RESPONSE,
                                ERNIC_FATAL_BAD_RESPONSE);
        return ERNIC_COMP_DONE;
    }
    r->e = ernic_comp_osq(qp, r->i);
    r->idx = (pkt->psn - r->e->psn) & ERNIC_PSN_MASK;
    d = r->idx - r->e->read_pkts;
    if (d < 0) {
        ernic_gcsr_count16(r->c, ERNIC_ININVDUPCNT, true);
        return ERNIC_COMP_DONE;
    }
    if (d > 0) {
        ernic_comp_implied_nak(r->c, r->qpn, r->i);
        return ERNIC_COMP_DONE;
    }
    return ERNIC_COMP_READ_OPCODE;
}

/*
 * Responses count from the request that asked for them: after a partial
 * re-issue (ernic_req.c) the first one may be a FIRST or ONLY again, or
 * a MIDDLE or LAST still coming from the earlier request.
 */
static ErnicCompState ernic_comp_read_opcode(ErnicCompPkt *r)
{
    const ErnicOsq *e = r->e;
    uint8_t op = r->pkt->opcode;
    bool last = r->idx + 1 == e->npkts, fresh = r->idx == e->read_base;
    bool ok;

    if (ernic_op_is_atomic(e->opcode)) {
        return ERNIC_COMP_READ_DATA;    /* ernic_comp_answers() checked it */
    }
    if (fresh && last) {
        ok = op == IB_OPC_READ_RESP_ONLY ||
             (r->idx && op == IB_OPC_READ_RESP_LAST);
    } else if (last) {
        ok = op == IB_OPC_READ_RESP_LAST;
    } else {
        ok = op == IB_OPC_READ_RESP_MIDDLE ||
             (fresh && op == IB_OPC_READ_RESP_FIRST);
        if (!r->idx && op != IB_OPC_READ_RESP_FIRST) {
            ok = false;
        }
    }
    if (!ok) {
        ernic_comp_bad_response(r->c, r->qpn, r->pkt,
                                ERNIC_SYND_BAD_RESPONSE,
                                e->npkts == 1 &&
                                op == IB_OPC_READ_RESP_LAST ?
                                ERNIC_FATAL_READ_RESP_LAST_ONLY :
                                ERNIC_FATAL_BAD_RESPONSE);
        return ERNIC_COMP_DONE;
    }
    return ERNIC_COMP_READ_LENGTH;
}

/* Table 2-3 bit 19, with the Table 2-4 code for the packet's position. */
static ErnicCompState ernic_comp_read_length(ErnicCompPkt *r)
{
    const ErnicOsq *e = r->e;
    uint32_t pmtu = e->pmtu;             /* as when the READ was segmented */

    if (r->pkt->paylen == MIN(pmtu, e->len - r->idx * pmtu)) {
        return ERNIC_COMP_READ_DATA;
    }
    ernic_comp_bad_response(r->c, r->qpn, r->pkt, ERNIC_SYND_PMTU,
                            e->npkts == 1 ? ERNIC_FATAL_READ_RESP_ONLY_LEN :
                            r->idx + 1 == e->npkts ?
                            ERNIC_FATAL_READ_RESP_LAST :
                            ERNIC_FATAL_READ_RESP_MID_LEN);
    return ERNIC_COMP_DONE;
}

/*
 * idx < npkts and the length checked: within the WQE's buffer. An
 * atomic's buffer takes the original value (ernic_atomic.c).
 */
static ErnicCompState ernic_comp_read_data(ErnicCompPkt *r)
{
    ErnicOsq *e = r->e;
    const ErnicPkt *pkt = r->pkt;
    bool ok = ernic_op_is_atomic(e->opcode) ?
              ernic_atomic_take_ack(r->c, e, pkt) :
              ernic_mr_msg_dma(r->c, e->sge, e->nsge, e->laddr, e->len,
                               (uint64_t)r->idx * e->pmtu, NULL, pkt->payload,
                               pkt->paylen);

    if (!ok) {
        ernic_comp_dma_fault(r->c, r->qpn, "READ response data");
        return ERNIC_COMP_DONE;
    }
    e->read_pkts++;
    ernic_comp_progress(r->c, r->qpn, pkt->psn + 1);
    ernic_comp_restart_retry(r->c, r->qpn);
    if (e->read_pkts == e->npkts) {
        e->done = true;
        ernic_qp_reload_counts(r->c, r->qpn);
        ernic_comp_complete_ready(r->c, r->qpn);
    }
    return ERNIC_COMP_DONE;
}

static ErnicCompState ernic_comp_do_rnr(ErnicCompPkt *r)
{
    ernic_comp_rnr(r->c, r->qpn, r->pkt);
    return ERNIC_COMP_DONE;
}

/* The step of each state but ERNIC_COMP_DONE, in ErnicCompState's order. */
static ErnicCompState (*const ernic_comp_steps[])(ErnicCompPkt *r) = {
    ernic_comp_check_packet, ernic_comp_check_opcode, ernic_comp_do_ack,
    ernic_comp_do_nak, ernic_comp_do_rnr, ernic_comp_do_nak_seq,
    ernic_comp_do_nak_fatal, ernic_comp_read_psn, ernic_comp_read_opcode,
    ernic_comp_read_length, ernic_comp_read_data,
};
QEMU_BUILD_BUG_ON(ARRAY_SIZE(ernic_comp_steps) != ERNIC_COMP_DONE);

/* A response packet for an enabled QP (ernic_net.c). */
void ernic_comp_receive(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    ErnicCompPkt r = { .c = c, .qp = &c->qp[qpn], .qpn = qpn, .pkt = pkt };
    ErnicCompState s = ERNIC_COMP_CHECK_PACKET;

    while (s != ERNIC_COMP_DONE) {
        s = ernic_comp_steps[s](&r);
    }
}
