/*
 * ERNIC responder ("RX Packet Handler", PG332 v3.1 ch.1 and ch.2 "Incoming
 * RDMA SEND/WRITE/READ"): PSN and opcode sequence checks, SEND into RQ
 * buffers, WRITE and READ through the memory regions of ernic_mr.c, ACK,
 * NAK and RNR NAK generation, READ responses, and QP1 MAD reception.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "ernic_core.h"
#include "trace.h"

/* XRNICCONF[4:3] ACK generation modes (PG332 p.32). */
#define ERNIC_ACKGEN_DEFAULT    0   /* on AckReq, or on timeout */
#define ERNIC_ACKGEN_TIMEOUT    1   /* only on timeout */
#define ERNIC_ACKGEN_ACKREQ     2   /* only on AckReq */

/* Coalesced ACKs leave this long after the last unacknowledged request. */
#define ERNIC_ACK_DELAY_NS      (8 * 1024)


static uint32_t ernic_resp_msn(ErnicCore *c, uint32_t qpn)
{
    return ernic_qp_reg(c, qpn, ERNIC_STATMSN) & ERNIC_PSN_MASK;
}

/*
 * Put an ACK (syndrome 0x1f: no credit count, as rxe), NAK or RNR NAK on
 * the wire now, with AETH MSN @msn.
 */
static void ernic_resp_xmit_ack(ErnicCore *c, uint32_t qpn, uint8_t syndrome,
                                uint32_t psn, uint32_t msn)
{
    uint8_t f[ERNIC_MAX_HDR_LEN + ERNIC_ICRC_LEN];
    ErnicPath path;
    size_t end;

    if (ernic_uc_qp(c, qpn)) {
        return;                 /* UC is never answered (IBTA 9.7) */
    }
    ernic_qp_path(c, qpn, &path);
    end = ernic_wire_build(f, &path, IB_OPC_ACK, psn, false, ERNIC_AETH_LEN,
                           0);
    ernic_wire_put_aeth(f + end, syndrome, msn);
    end = ernic_wire_finish(f, end + ERNIC_AETH_LEN, 0, path.ipv6);
    trace_ernic_tx_ack(qpn, syndrome, psn);

    switch (syndrome & IB_AETH_TYPE_MASK) {
    case IB_AETH_ACK:
        ernic_gcsr_count16(c, ERNIC_OUTAMPKTCNT, false);
        break;
    case IB_AETH_RNR_NAK:
        ernic_gcsr_set(c, ERNIC_OUTRNRPKTSTS,
                       ((ernic_gcsr(c, ERNIC_OUTRNRPKTSTS) + 0x10000) &
                        0xffff0000) | (qpn & 0xff));
        break;
    default:
        ernic_gcsr_count16(c, ERNIC_OUTNAKPKTCNT, false);
        break;
    }
    ernic_gcsr_set(c, ERNIC_LSTOUTPKT, IB_OPC_ACK | (qpn & 0xff) << 8 |
                   (psn & 0xffff) << 16);
    c->qp[qpn].ack_pending = false;
    ernic_link_xmit(c, qpn, f, end);
}

/*
 * Send an ACK, NAK or RNR NAK. Responses leave in the order of their
 * requests (IBTA 9.5): while READ responses are still to be sent, the ACK
 * waits behind them (ernic_resp_run()), or an ACK or NAK for a later PSN
 * would acknowledge READs whose responses the requester has not had, and
 * it would ask for them again (docs/engine.md, "Response order"). Only the
 * newest waits: ACKs are cumulative, and the READ responses before it
 * acknowledge everything older. A NAK waiting is not replaced by a
 * response for the same PSN (an RNR NAK keeps its timer meaning).
 */
static void ernic_resp_send_ack(ErnicCore *c, uint32_t qpn, uint8_t syndrome,
                                uint32_t psn)
{
    ErnicQP *qp = &c->qp[qpn];

    if (!qp->rd_count) {
        ernic_resp_xmit_ack(c, qpn, syndrome, psn, ernic_resp_msn(c, qpn));
        return;
    }
    qp->ack_pending = false;
    if (qp->ack_held &&
        (qp->held_synd & IB_AETH_TYPE_MASK) != IB_AETH_ACK &&
        ernic_psn_diff(psn, qp->held_psn) <= 0) {
        return;
    }
    qp->ack_held = true;
    qp->held_synd = syndrome;
    qp->held_psn = psn;
    qp->held_msn = ernic_resp_msn(c, qpn);
}

/*
 * A request error that PG332 Table 2-3/2-4 answers with NAK and FATAL.
 * @synd holds the Table 2-3 checks that failed, if any: the packet is
 * then logged in the error buffer too (docs/errors.md).
 */
static void ernic_resp_fatal(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                             uint8_t nak, uint16_t code, uint32_t synd)
{
    trace_ernic_rx_req_error(qpn, pkt->opcode, pkt->psn, code);
    if (ernic_uc_qp(c, qpn) && code != ERNIC_FATAL_RESPONSE_HANDLER) {
        /*
         * What the peer did wrong drops its UC message; only this side's
         * own failures stop the QP (docs/extension.md, "UC QPs").
         */
        if (synd) {
            ernic_err_rx(c, pkt->frame, pkt->len, synd, qpn);
        }
        ernic_uc_drop(c, qpn, pkt, "refused");
        return;
    }
    /* At once: the QP stops, and its READ responses with it. */
    ernic_resp_xmit_ack(c, qpn, nak, pkt->psn, ernic_resp_msn(c, qpn));
    ernic_qp_rx_fatal(c, pkt, synd, qpn, code);
}

/*
 * A DMA of the responder failed (SEND or WRITE data, RQ doorbell, READ
 * source): the request is refused with Remote Operational Error (IBTA
 * 9.7.5.2.4) and the QP goes FATAL 0x06 (docs/errors.md, "DMA errors").
 */
static void ernic_resp_dma_fault(ErnicCore *c, uint32_t qpn,
                                 const ErnicPkt *pkt, const char *what)
{
    trace_ernic_qp_dma_fault(qpn, what);
    qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u DMA of %s failed: FATAL\n",
                  qpn, what);
    ernic_resp_fatal(c, qpn, pkt, IB_NAK_REMOTE_OP,
                     ERNIC_FATAL_RESPONSE_HANDLER, 0);
}

void ernic_resp_ack_timer(void *opaque)
{
    ErnicQP *qp = opaque;
    ErnicCore *c = qp->core;
    ernic_dma_timer_enter(c);

    if (qp->ack_pending) {
        ernic_resp_send_ack(c, qp->qpn, IB_AETH_CREDIT_INVALID,
                            ernic_qp_reg(c, qp->qpn, ERNIC_LSTRQREQ) &
                            ERNIC_PSN_MASK);
    }
    ernic_dma_timer_exit(c);
}

/* ACK a request per the XRNICCONF[4:3] mode. */
static void ernic_resp_ack(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t mode = ERNIC_FIELD_EX32(ernic_gcsr(c, ERNIC_XRNICCONF),
                                     ERNIC_XRNICCONF_ACKGEN_MASK);

    if (ernic_uc_qp(c, qpn)) {
        return;
    }
    if (pkt->ackreq && mode != ERNIC_ACKGEN_TIMEOUT) {
        timer_del(qp->ack_timer);
        ernic_resp_send_ack(c, qpn, IB_AETH_CREDIT_INVALID, pkt->psn);
        return;
    }
    if (mode == ERNIC_ACKGEN_ACKREQ) {
        return;
    }
    qp->ack_pending = true;
    if (!timer_pending(qp->ack_timer)) {
        timer_mod(qp->ack_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  ERNIC_ACK_DELAY_NS);
    }
}

static void ernic_resp_rnr_nak(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    uint32_t timer = ERNIC_FIELD_EX32(ernic_qp_reg(c, qpn, ERNIC_TIMEOUTCONF),
                                      ERNIC_TIMEOUTCONF_RNRTIMER_MASK);

    if (ernic_uc_qp(c, qpn)) {
        /* No RNR NAK for UC: the message is lost (IBTA 9.7.5.2.8). */
        ernic_uc_drop(c, qpn, pkt, "no receive WQE");
        return;
    }
    ernic_qp_set_reg(c, qpn, ERNIC_STATQP, ernic_qp_reg(c, qpn, ERNIC_STATQP) |
                     ERNIC_STATQP_RQ_OVFL);
    ernic_err_rx(c, pkt->frame, pkt->len, ERNIC_SYND_RQ_FULL, qpn);
    ernic_resp_send_ack(c, qpn, IB_AETH_RNR_NAK | timer, pkt->psn);
    ernic_irq_raise(c, ERNIC_INT_RNR_NAK_GENERATED);
}

/* Queue a READ for responses; the caller checked there is room. */
static void ernic_resp_queue_read(ErnicCore *c, uint32_t qpn, uint32_t psn,
                                  uint32_t len, const ErnicMrAccess *mr,
                                  bool replay)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicReadRes *r = &qp->rd[(qp->rd_head + qp->rd_count++) %
                              ERNIC_READ_RES];

    r->psn = psn;
    /* The PMTU is sampled once: it fixes the packet count and lengths. */
    r->pmtu = ernic_qp_pmtu(c, qpn);
    r->npkts = len ? DIV_ROUND_UP(len, r->pmtu) : 1;
    r->sent = 0;
    r->mr = *mr;
    r->len = len;
    r->msn = ernic_resp_msn(c, qpn);
    r->replay = replay;
    r->atomic = false;
    r->orig = 0;
}

static uint32_t ernic_resp_read_npkts(ErnicCore *c, uint32_t qpn, uint32_t len)
{
    return len ? DIV_ROUND_UP(len, ernic_qp_pmtu(c, qpn)) : 1;
}

/*
 * A duplicate READ is answered again (IBTA C9-86) only when its responses
 * lie within those of a READ accepted earlier (one of the last
 * ERNIC_READ_RES): a peer cannot make the responder send response PSNs it
 * never owed, nor data it was never asked for.
 */
static bool ernic_resp_dup_read_ok(ErnicCore *c, uint32_t qpn,
                                   const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t last = pkt->psn + ernic_resp_read_npkts(c, qpn, pkt->dmalen) - 1;
    int k;

    for (k = 0; k < ERNIC_READ_RES; k++) {
        const ErnicReadHist *h = &qp->rd_hist[k];
        uint32_t h_last = h->psn + h->npkts - 1;

        if (h->npkts && !h->atomic && ernic_psn_diff(pkt->psn, h->psn) >= 0 &&
            ernic_psn_diff(last, h_last) <= 0) {
            return true;
        }
    }
    return false;
}

/* Remove READ resource @k of the queue, keeping the others' order. */
static void ernic_resp_drop_read(ErnicQP *qp, uint32_t k)
{
    for (; k + 1 < qp->rd_count; k++) {
        qp->rd[(qp->rd_head + k) % ERNIC_READ_RES] =
            qp->rd[(qp->rd_head + k + 1) % ERNIC_READ_RES];
    }
    qp->rd_count--;
}

/*
 * A duplicate READ at @psn: the requester goes back to it and asks again
 * for every request after it (IBTA 9.7.5.1.1, go-back-N), so the
 * responses of newer READs are not sent now; each is answered when it is
 * asked again. Responses then leave in PSN order. Without this, a newer
 * READ's responses went out ahead of the duplicate's, the requester took
 * them for an implied NAK of the older READ (9.7.5.1.2), asked again, and
 * so on until its retry count was spent (docs/engine.md, choice 15).
 */
static void ernic_resp_cancel_newer(ErnicCore *c, uint32_t qpn, uint32_t psn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t k, kept = 0;

    for (k = 0; k < qp->rd_count; k++) {
        ErnicReadRes *r = &qp->rd[(qp->rd_head + k) % ERNIC_READ_RES];

        if (ernic_psn_diff(r->psn, psn) <= 0) {
            qp->rd[(qp->rd_head + kept++) % ERNIC_READ_RES] = *r;
        }
    }
    qp->rd_count = kept;
}

/*
 * A duplicate READ whose responses are still being sent takes no resource
 * of its own: the responses start again at its PSN (as rxe does). Only a
 * READ already answered in full is queued again, so duplicates never use
 * up the resources that new READs need (PG332 p.22, FATAL 0x10).
 */
static bool ernic_resp_restart_read(ErnicCore *c, uint32_t qpn, uint32_t psn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t k;

    for (k = 0; k < qp->rd_count; k++) {
        ErnicReadRes *r = &qp->rd[(qp->rd_head + k) % ERNIC_READ_RES];
        int32_t d = ernic_psn_diff(psn, r->psn);

        if (d >= 0 && d < (int32_t)r->npkts) {
            r->sent = MIN(r->sent, (uint32_t)d);
            ernic_up_kick(c, qpn);
            return true;
        }
    }
    return false;
}

/*
 * A new READ found every resource taken. If some are duplicates queued
 * again, the one of the oldest READ gives its place: the requester has at
 * most 16 READs outstanding, the new one included, so of 17 different
 * READs it no longer waits for the oldest (whose responses it took
 * before it could ask for a new READ). Only a queue of 16 first requests
 * is PG332's full queue (p.22, FATAL 0x10). Without this, a requester
 * that timed out twice, after a lost link or a migration, re-asked READs
 * it then completed from the first answers, and its next new READ ended
 * the QP (docs/engine.md, choice 14).
 */
static bool ernic_resp_evict_replay(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t last = ernic_qp_reg(c, qpn, ERNIC_LSTRQREQ);
    uint32_t k, victim = ERNIC_READ_RES;
    int32_t oldest = 0;

    for (k = 0; k < qp->rd_count; k++) {
        ErnicReadRes *r = &qp->rd[(qp->rd_head + k) % ERNIC_READ_RES];
        int32_t age = ernic_psn_diff(last, r->psn);

        if (r->replay && (victim == ERNIC_READ_RES || age > oldest)) {
            victim = k;
            oldest = age;
        }
    }
    if (victim == ERNIC_READ_RES) {
        return false;
    }
    trace_ernic_rx_read_replay_evict(qpn,
        qp->rd[(qp->rd_head + victim) % ERNIC_READ_RES].psn);
    ernic_resp_drop_read(qp, victim);
    return true;
}

/*
 * Queue an atomic's answer: one response carrying @orig, the value its
 * target held (ernic_atomic.c). The caller checked there is room.
 */
static void ernic_resp_queue_atomic(ErnicCore *c, uint32_t qpn, uint32_t psn,
                                    uint64_t orig, bool replay)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicMrAccess none = { 0 };
    ErnicReadRes *r;

    ernic_resp_queue_read(c, qpn, psn, 0, &none, replay);
    r = &qp->rd[(qp->rd_head + qp->rd_count - 1) % ERNIC_READ_RES];
    r->atomic = true;
    r->orig = orig;
}

/*
 * A duplicate atomic, FLUSH or ATOMIC WRITE is never executed again: it
 * is answered with what it was answered (IBTA 9.4.5, C9-89; A19), the
 * value saved for an atomic, if it is one of the last ERNIC_READ_RES
 * READs and atomics; else it is dropped, and the requester's retries
 * end in its retry count.
 */
static void ernic_resp_dup_once(ErnicCore *c, uint32_t qpn,
                                const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    bool atomic = pkt->flags & ERNIC_OPF_ATOMICETH;
    const ErnicReadHist *h = NULL;
    ErnicMrAccess none = { 0 };
    int k;

    for (k = 0; k < ERNIC_READ_RES; k++) {
        if (qp->rd_hist[k].npkts == 1 && qp->rd_hist[k].atomic == atomic &&
            qp->rd_hist[k].psn == pkt->psn) {
            h = &qp->rd_hist[k];
        }
    }
    trace_ernic_rx_dup_atomic(qpn, pkt->psn, h != NULL);
    if (!h) {
        return;
    }
    ernic_resp_cancel_newer(c, qpn, pkt->psn);
    if (ernic_resp_restart_read(c, qpn, pkt->psn) ||
        qp->rd_count == ERNIC_READ_RES) {
        return;
    }
    if (atomic) {
        ernic_resp_queue_atomic(c, qpn, pkt->psn, h->orig, true);
    } else {
        ernic_resp_queue_read(c, qpn, pkt->psn, 0, &none, true);
    }
    ernic_up_kick(c, qpn);
}

/* A duplicate request (PSN before the expected one), IBTA 9.7.5.1.1. */
static void ernic_resp_duplicate(ErnicCore *c, uint32_t qpn,
                                 const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicMrAccess mr = { 0 };

    ernic_gcsr_count16(c, ERNIC_ININVDUPCNT, true);
    trace_ernic_rx_duplicate(qpn, pkt->opcode, pkt->psn);
    if (!ernic_xrc_bind(c, qpn, pkt)) {
        /*
         * An XRC target's duplicate naming no SRQ of its domain is
         * dropped, as one that cannot be answered is; its keys would be
         * checked against another request's PD.
         */
        return;
    }
    if (pkt->flags & (ERNIC_OPF_ATOMICETH | ERNIC_OPF_PLACE)) {
        ernic_resp_dup_once(c, qpn, pkt);
        return;
    }
    if (pkt->opcode != IB_OPC_READ_REQUEST) {
        /* Executed already: acknowledge again, up to the newest. */
        if (pkt->ackreq) {
            ernic_resp_send_ack(c, qpn, IB_AETH_CREDIT_INVALID,
                                ernic_qp_reg(c, qpn, ERNIC_LSTRQREQ) &
                                ERNIC_PSN_MASK);
        }
        return;
    }
    if (!ernic_resp_dup_read_ok(c, qpn, pkt)) {
        trace_ernic_rx_dup_read_drop(qpn, pkt->psn);
        return;
    }
    ernic_resp_cancel_newer(c, qpn, pkt->psn);
    if (ernic_resp_restart_read(c, qpn, pkt->psn)) {
        return;
    }
    /* The region is checked again: it may have changed since. */
    if (qp->rd_count == ERNIC_READ_RES ||
        (pkt->dmalen && ernic_mr_check_rkey(c, qpn, pkt->rkey, pkt->va,
                                            pkt->dmalen, false, &mr))) {
        return;
    }
    ernic_resp_queue_read(c, qpn, pkt->psn, pkt->dmalen, &mr, true);
    ernic_up_kick(c, qpn);
}

/*
 * The states of the responder for one request, as rxe's resp_states; in
 * this order.
 */
typedef enum ErnicRespState {
    ERNIC_RESP_CHECK_PSN,       /* expected, duplicate, or after a gap */
    ERNIC_RESP_CHECK_OPCODE,    /* opcode, pad, length, opcode sequence */
    ERNIC_RESP_EXEC_SEND,       /* into the RQ buffer or receive WQE */
    ERNIC_RESP_EXEC_WRITE,      /* through the RETH's R_Key */
    ERNIC_RESP_EXEC_READ,       /* queued for responses */
    ERNIC_RESP_EXEC_ATOMIC,     /* executed, its result queued */
    ERNIC_RESP_EXEC_PLACE,      /* FLUSH, ATOMIC WRITE: executed, answered */
    ERNIC_RESP_COMPLETE,        /* LSTRQREQi, MSN, RQ doorbell, ACK */
    ERNIC_RESP_EXIT,
} ErnicRespState;

/*
 * PSN check (IBTA 9.7.5.1.1). The packet goes no further when it is a
 * duplicate (answered), or one after a gap (PG332 Table 2-3 bit 21: one
 * NAK per sequence error).
 */
static ErnicRespState ernic_resp_check_psn(ErnicCore *c, uint32_t qpn,
                                           const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t epsn = (ernic_qp_reg(c, qpn, ERNIC_LSTRQREQ) + 1) &
                    ERNIC_PSN_MASK;
    int32_t d = ernic_psn_diff(pkt->psn, epsn);

    if (ernic_uc_qp(c, qpn)) {
        return ernic_uc_check_psn(c, qpn, pkt) ? ERNIC_RESP_CHECK_OPCODE :
                                                 ERNIC_RESP_EXIT;
    }
    if (d < 0) {
        ernic_resp_duplicate(c, qpn, pkt);
        return ERNIC_RESP_EXIT;
    }
    if (d > 0) {
        ernic_err_rx(c, pkt->frame, pkt->len, ERNIC_SYND_PSN_SEQ, qpn);
        if (!qp->nak_sent) {
            qp->nak_sent = true;
            ernic_resp_send_ack(c, qpn, IB_NAK_PSN_SEQ, epsn);
        }
        return ERNIC_RESP_EXIT;
    }
    qp->nak_sent = false;
    return ERNIC_RESP_CHECK_OPCODE;
}

/*
 * Opcode, pad, length and opcode sequence checks (PG332 Table 2-3 bits
 * 16-19, Table 2-4 codes 0x01-0x04, 0x11-0x13). Whether a message is in
 * progress is the responder's own state (qp->rx_msg), never LSTRQREQi's
 * opcode field, which software seeds with differing values
 * (docs/registers.md, "Choices").
 */
static ErnicRespState ernic_resp_check_opcode(ErnicCore *c, uint32_t qpn,
                                              const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t f = pkt->flags, pmtu = ernic_qp_pmtu(c, qpn), synd = 0;
    bool is_write = f & ERNIC_OPF_WRITE, w;
    uint16_t code;

    if (!(f & ERNIC_OPF_REQ) || (f & ERNIC_OPF_DETH)) {
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                         ERNIC_FATAL_UNSUPPORTED_OPCODE,
                         ERNIC_SYND_OPCODE_UNSUPPORTED);
        return ERNIC_RESP_EXIT;
    }
    if ((!(f & ERNIC_OPF_LAST) && pkt->padcnt) || pkt->paylen > pmtu) {
        /*
         * Table 2-3 bits 18 and 19: pad on a FIRST or MIDDLE packet, or
         * more than any packet may carry: dropped.
         */
        ernic_err_rx(c, pkt->frame, pkt->len,
                     !(f & ERNIC_OPF_LAST) && pkt->padcnt ?
                           ERNIC_SYND_PAD : ERNIC_SYND_PMTU, qpn);
        return ERNIC_RESP_EXIT;
    }
    if (qp->rx_msg == ERNIC_RX_SEND ? !(f & ERNIC_OPF_SEND) ||
                                      (f & ERNIC_OPF_FIRST) :
        qp->rx_msg == ERNIC_RX_WRITE ? !is_write || (f & ERNIC_OPF_FIRST) :
        !(f & ERNIC_OPF_FIRST)) {
        synd |= ERNIC_SYND_OPCODE_SEQ;
    }
    if (!(f & ERNIC_OPF_LAST) && pkt->paylen != pmtu) {
        synd |= ERNIC_SYND_PMTU;
    }
    if (!synd && !ernic_xrc_bind(c, qpn, pkt)) {
        /* An XRC SRQ of another domain, as a key of another PD. */
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_REMOTE_ACCESS,
                         ERNIC_FATAL_RKEY, 0);
        return ERNIC_RESP_EXIT;
    }
    if (!synd) {
        return (f & ERNIC_OPF_SEND) ? ERNIC_RESP_EXEC_SEND :
               is_write ? ERNIC_RESP_EXEC_WRITE :
               (f & ERNIC_OPF_ATOMICETH) ? ERNIC_RESP_EXEC_ATOMIC :
               (f & ERNIC_OPF_PLACE) ? ERNIC_RESP_EXEC_PLACE :
               ERNIC_RESP_EXEC_READ;
    }
    /* Table 2-4 has a code for each and for both, SEND and WRITE apart. */
    w = is_write || qp->rx_msg == ERNIC_RX_WRITE;
    if (synd == ERNIC_SYND_OPCODE_SEQ) {
        code = w ? ERNIC_FATAL_WRITE_OPCODE_SEQ : ERNIC_FATAL_OPCODE_SEQ;
    } else if (synd == ERNIC_SYND_PMTU) {
        code = w ? ERNIC_FATAL_WRITE_LENGTH : ERNIC_FATAL_LENGTH;
    } else {
        code = w ? ERNIC_FATAL_WRITE_SEQ_AND_LENGTH :
                   ERNIC_FATAL_OPCODE_SEQ_AND_LENGTH;
    }
    ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ, code, synd);
    return ERNIC_RESP_EXIT;
}

/*
 * An ERNIC-X receive WQE cannot take the SEND (its L_Key, or its length):
 * the slot completes with @status in its metadata, then the request is
 * refused and the QP goes FATAL (docs/extension.md, "Receive WQEs").
 */
static void ernic_resp_rx_error(ErnicCore *c, uint32_t qpn,
                                const ErnicPkt *pkt, uint8_t status)
{
    ErnicQP *qp = &c->qp[qpn];

    qp->rx_status = status;
    if (ernic_rq_meta(c, qpn, qp->rq_slot, pkt, qp->rq_off)) {
        ernic_rq_produce(c, qpn);
    }
    if (status == ERNIC_RXMETA_ST_LEN) {
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                         ERNIC_FATAL_LENGTH, 0);
    } else {
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_REMOTE_OP,
                         ERNIC_FATAL_RESPONSE_HANDLER, 0);
    }
}

/* The slot of a SEND's FIRST packet; false when the packet goes no further. */
static bool ernic_resp_take_slot(ErnicCore *c, uint32_t qpn,
                                 const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];

    if (qp->rq_held && ernic_uc_qp(c, qpn)) {
        /*
         * Taken by a UC SEND that was dropped: this SEND fills it, and
         * an SRQ gives no second WQE (IBTA 9.7.5.1.1). Only UC: every
         * other take reads the RQ registers afresh.
         */
        qp->rq_off = 0;
        qp->rx_status = ERNIC_RXMETA_ST_OK;
    } else if (!ernic_rq_take(c, qpn)) {
        ernic_resp_rnr_nak(c, qpn, pkt);
        return false;
    }
    if (!qp->rx_wqe) {
        return true;
    }
    if (!ernic_rq_wqe_take(c, qpn, qp->rq_addr)) {
        ernic_resp_dma_fault(c, qpn, pkt, "a receive WQE");
        return false;
    }
    if (qp->rx_status) {
        ernic_resp_rx_error(c, qpn, pkt, qp->rx_status);
        return false;
    }
    return true;
}

/* A SEND packet into the RQ buffer taken by its FIRST packet. */
static ErnicRespState ernic_resp_exec_send(ErnicCore *c, uint32_t qpn,
                                           const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint16_t code;

    if ((pkt->flags & ERNIC_OPF_FIRST) && !ernic_resp_take_slot(c, qpn, pkt)) {
        return ERNIC_RESP_EXIT;
    }
    if (pkt->paylen > qp->rq_size - qp->rq_off) {
        /* Longer than an RQ buffer (docs/engine.md) or its WQE's SGEs. */
        if (qp->rx_wqe) {
            ernic_resp_rx_error(c, qpn, pkt, ERNIC_RXMETA_ST_LEN);
        } else {
            ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                             ERNIC_FATAL_LENGTH, 0);
        }
        return ERNIC_RESP_EXIT;
    }
    code = (pkt->flags & ERNIC_OPF_IETH) ?
           ernic_ext_remote_inv(c, qpn, pkt->imm) : 0;
    if (code) {
        /* IBTA 9.4.1.2.2: an IETH naming no key to invalidate. */
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ, code, 0);
        return ERNIC_RESP_EXIT;
    }
    if (!ernic_rq_write(c, qpn, qp->rq_off, pkt->payload, pkt->paylen)) {
        ernic_resp_dma_fault(c, qpn, pkt, "SEND data");
        return ERNIC_RESP_EXIT;
    }
    qp->rq_off += pkt->paylen;
    ernic_gcsr_count16(c, ERNIC_INSRRPKTCNT, false);
    return ERNIC_RESP_COMPLETE;
}

/* A WRITE packet, checked against the RETH of its FIRST packet. */
static ErnicRespState ernic_resp_exec_write(ErnicCore *c, uint32_t qpn,
                                            const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint16_t code;

    /*
     * With receive metadata a WRITE with Immediate takes an RQ slot, and
     * finding none is an RNR NAK of its last packet, as for a SEND's
     * first (IBTA 9.7.5.2.8; rxe checks the same packet).
     */
    if ((pkt->flags & ERNIC_OPF_LAST) && (pkt->flags & ERNIC_OPF_IMM) &&
        ernic_ext_rx_meta_on(c, qpn) && !ernic_rq_take(c, qpn)) {
        ernic_resp_rnr_nak(c, qpn, pkt);
        return ERNIC_RESP_EXIT;
    }
    if (pkt->flags & ERNIC_OPF_FIRST) {
        qp->wr_left = pkt->dmalen;
        qp->wr_off = 0;
        memset(&qp->wr_mr, 0, sizeof(qp->wr_mr));
        code = pkt->dmalen ?
               ernic_mr_check_rkey(c, qpn, pkt->rkey, pkt->va, pkt->dmalen,
                                   true, &qp->wr_mr) : 0;
        if (code) {
            ernic_resp_fatal(c, qpn, pkt, IB_NAK_REMOTE_ACCESS, code, 0);
            return ERNIC_RESP_EXIT;
        }
    }
    if (pkt->paylen > qp->wr_left ||
        ((pkt->flags & ERNIC_OPF_LAST) && pkt->paylen != qp->wr_left)) {
        /* The packets do not add up to the RETH DMA length. */
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                         ERNIC_FATAL_WRITE_LENGTH, 0);
        return ERNIC_RESP_EXIT;
    }
    if (!ernic_mr_write(c, &qp->wr_mr, qp->wr_off, pkt->payload,
                        pkt->paylen)) {
        ernic_resp_dma_fault(c, qpn, pkt, "WRITE data");
        return ERNIC_RESP_EXIT;
    }
    qp->wr_off += pkt->paylen;
    qp->wr_left -= pkt->paylen;
    return ERNIC_RESP_COMPLETE;
}

/*
 * A READ or atomic takes one of the 16 resources (PG332 p.22; IBTA
 * counts atomics with READs, max_dest_rd_atomic); false, with NAK and
 * FATAL 0x10, when none is free.
 */
static bool ernic_resp_take_resource(ErnicCore *c, uint32_t qpn,
                                     const ErnicPkt *pkt)
{
    if (c->qp[qpn].rd_count < ERNIC_READ_RES ||
        ernic_resp_evict_replay(c, qpn)) {
        return true;
    }
    ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                     ERNIC_FATAL_READ_RESOURCES, 0);
    return false;
}

/*
 * Remember a request that took a resource, for its duplicates: the last
 * ERNIC_READ_RES READs, atomics (with the value found), FLUSHes and
 * ATOMIC WRITEs.
 */
static void ernic_resp_remember(ErnicQP *qp, uint32_t psn, uint32_t npkts,
                                bool atomic, uint64_t orig)
{
    ErnicReadHist *h = &qp->rd_hist[qp->rd_hist_next++ % ERNIC_READ_RES];

    h->psn = psn;
    h->npkts = npkts;
    h->atomic = atomic;
    h->orig = orig;
}

/*
 * A READ request: checked, queued for responses (its MSN is set once it
 * has taken one, ernic_resp_done()) and remembered for duplicates.
 */
static ErnicRespState ernic_resp_exec_read(ErnicCore *c, uint32_t qpn,
                                           const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicMrAccess mr = { 0 };
    uint16_t code;

    code = pkt->dmalen ? ernic_mr_check_rkey(c, qpn, pkt->rkey, pkt->va,
                                             pkt->dmalen, false, &mr)
                       : 0;
    if (code) {
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_REMOTE_ACCESS, code, 0);
        return ERNIC_RESP_EXIT;
    }
    if (!ernic_resp_take_resource(c, qpn, pkt)) {
        return ERNIC_RESP_EXIT;
    }
    ernic_resp_queue_read(c, qpn, pkt->psn, pkt->dmalen, &mr, false);
    ernic_resp_remember(qp, pkt->psn,
                        qp->rd[(qp->rd_head + qp->rd_count - 1) %
                               ERNIC_READ_RES].npkts, false, 0);
    return ERNIC_RESP_COMPLETE;
}

/*
 * An ERNIC-X atomic (ernic_atomic.c): executed once, its result queued
 * for the ATOMIC ACKNOWLEDGE and remembered for duplicates.
 */
static ErnicRespState ernic_resp_exec_atomic(ErnicCore *c, uint32_t qpn,
                                             const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint64_t orig = 0;
    uint8_t nak;
    uint16_t code;

    if (!ernic_resp_take_resource(c, qpn, pkt)) {
        return ERNIC_RESP_EXIT;
    }
    code = ernic_atomic_execute(c, qpn, pkt, &orig, &nak);
    if (code) {
        ernic_resp_fatal(c, qpn, pkt, nak, code, 0);
        return ERNIC_RESP_EXIT;
    }
    ernic_resp_queue_atomic(c, qpn, pkt->psn, orig, false);
    ernic_resp_remember(qp, pkt->psn, 1, true, orig);
    return ERNIC_RESP_COMPLETE;
}

/*
 * An ERNIC-X FLUSH or ATOMIC WRITE (ernic_place.c): executed once, and
 * answered by a READ Response Only of no payload (IBTA A19) queued with
 * READ responses; remembered as a one-packet READ, so that a duplicate
 * is answered again, never executed again.
 */
static ErnicRespState ernic_resp_exec_place(ErnicCore *c, uint32_t qpn,
                                            const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicMrAccess none = { 0 };
    uint8_t nak;
    uint16_t code;

    if (!ernic_resp_take_resource(c, qpn, pkt)) {
        return ERNIC_RESP_EXIT;
    }
    code = ernic_place_execute(c, qpn, pkt, &nak);
    if (code) {
        ernic_resp_fatal(c, qpn, pkt, nak, code, 0);
        return ERNIC_RESP_EXIT;
    }
    ernic_resp_queue_read(c, qpn, pkt->psn, 0, &none, false);
    ernic_resp_remember(qp, pkt->psn, 1, false, 0);
    return ERNIC_RESP_COMPLETE;
}

/* After a request was executed: LSTRQREQi, MSN, RQ doorbell, ACK. */
static ErnicRespState ernic_resp_done(ErnicCore *c, uint32_t qpn,
                                      const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t f = pkt->flags, last_psn = pkt->psn;

    if (f & ERNIC_OPF_READ) {
        /* A READ request stands for the PSNs of all its responses. */
        last_psn += ernic_resp_read_npkts(c, qpn, pkt->dmalen) - 1;
    }
    ernic_qp_set_reg(c, qpn, ERNIC_LSTRQREQ,
                     ERNIC_FIELD_DP32(last_psn & ERNIC_PSN_MASK,
                                      ERNIC_LSTRQREQ_OPCODE_MASK,
                                      pkt->opcode));
    if (!(f & ERNIC_OPF_LAST)) {
        qp->rx_msg = (f & ERNIC_OPF_SEND) ? ERNIC_RX_SEND : ERNIC_RX_WRITE;
        ernic_resp_ack(c, qpn, pkt);
        return ERNIC_RESP_EXIT;
    }
    qp->rx_msg = ERNIC_RX_IDLE;
    /* Each message, READ requests included, takes an MSN. */
    ernic_qp_set_reg(c, qpn, ERNIC_STATMSN,
                     (ernic_resp_msn(c, qpn) + 1) & ERNIC_PSN_MASK);
    if (f & (ERNIC_OPF_IMM | ERNIC_OPF_IETH)) {
        /*
         * ImmDt and invalidated R_Keys leave on the ieth_immdt_m_axis
         * stream (PG332 Table 1-1) for the board's DMA (ernic_immdt.c),
         * before the RQ doorbell, so that software which sees a SEND's
         * slot filled finds its entry. RQ PI is the SEND's slot; for
         * WRITE_IMM, the next slot.
         */
        trace_ernic_rx_immdt(qpn, pkt->opcode, pkt->imm);
        ernic_immdt_push(c, qpn, (f & ERNIC_OPF_IETH) ?
                         ERNIC_IMMDT_TYPE_SEND_INV :
                         (f & ERNIC_OPF_SEND) ? ERNIC_IMMDT_TYPE_SEND_IMM :
                         ERNIC_IMMDT_TYPE_WRITE_IMM, pkt->imm,
                         (f & ERNIC_OPF_SEND) ? qp->rq_slot :
                         ernic_qp_reg(c, qpn, ERNIC_STATRQPIDB));
    }
    if (qp->rq_held) {
        /* The message's RQ slot: its metadata, then STATRQPIDBi. */
        uint32_t len = (f & ERNIC_OPF_SEND) ? qp->rq_off : qp->wr_off;

        if (!ernic_rq_meta(c, qpn, qp->rq_slot, pkt, len) ||
            !ernic_rq_produce(c, qpn)) {
            ernic_resp_dma_fault(c, qpn, pkt, "the RQ doorbell");
            return ERNIC_RESP_EXIT;
        }
    }
    if (f & (ERNIC_OPF_READ | ERNIC_OPF_ATOMICETH | ERNIC_OPF_PLACE)) {
        qp->rd[(qp->rd_head + qp->rd_count - 1) % ERNIC_READ_RES].msn =
            ernic_resp_msn(c, qpn);
        ernic_up_kick(c, qpn);
        return ERNIC_RESP_EXIT;
    }
    ernic_resp_ack(c, qpn, pkt);
    return ERNIC_RESP_EXIT;
}

/* The step of each state but ERNIC_RESP_EXIT, in ErnicRespState's order. */
static ErnicRespState (*const ernic_resp_steps[])(ErnicCore *c, uint32_t qpn,
                                                  const ErnicPkt *pkt) = {
    ernic_resp_check_psn, ernic_resp_check_opcode, ernic_resp_exec_send,
    ernic_resp_exec_write, ernic_resp_exec_read, ernic_resp_exec_atomic,
    ernic_resp_exec_place, ernic_resp_done,
};
QEMU_BUILD_BUG_ON(ARRAY_SIZE(ernic_resp_steps) != ERNIC_RESP_EXIT);

/*
 * A request packet for an enabled QP: checks, each of which may end it
 * with its PG332 reaction, then execution (as rxe_resp.c's states).
 */
void ernic_resp_receive(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    ErnicRespState s = ERNIC_RESP_CHECK_PSN;
    ErnicPkt at;

    if (ernic_atomic_accept(c, qpn, pkt, &at) ||
        ernic_place_accept(c, qpn, pkt, &at)) {
        pkt = &at;
    }
    while (s != ERNIC_RESP_EXIT) {
        s = ernic_resp_steps[s](c, qpn, pkt);
    }
}

/* The BTH opcode of READ response @i of @r. */
static uint8_t ernic_resp_read_opcode(const ErnicReadRes *r, uint32_t i)
{
    if (r->npkts == 1) {
        return IB_OPC_READ_RESP_ONLY;
    }
    if (i == 0) {
        return IB_OPC_READ_RESP_FIRST;
    }
    return i + 1 == r->npkts ? IB_OPC_READ_RESP_LAST :
                               IB_OPC_READ_RESP_MIDDLE;
}

/*
 * Send the next response of READ @r; false when its source could not be
 * read: the NAK takes its place and the QP is FATAL.
 */
static bool ernic_resp_send_read_resp(ErnicCore *c, uint32_t qpn,
                                      ErnicReadRes *r)
{
    uint8_t *f = c->frame;
    uint32_t i = r->sent, off = i * r->pmtu;
    uint32_t paylen = MIN(r->pmtu, r->len - off);
    uint8_t opcode = ernic_resp_read_opcode(r, i);
    bool aeth = ernic_wire_opcode_flags(opcode) & ERNIC_OPF_AETH;
    ErnicSge src = { .a = r->mr, .len = r->len };
    size_t end;
    ErnicPath path;
    ErnicXmit x;

    ernic_qp_path(c, qpn, &path);
    end = ernic_wire_build(f, &path, opcode, r->psn + i, false,
                           aeth ? ERNIC_AETH_LEN : 0, paylen);
    if (aeth) {
        ernic_wire_put_aeth(f + end, IB_AETH_CREDIT_INVALID, r->msn);
        end += ERNIC_AETH_LEN;
    }
    ernic_xmit_init(c, &x, f, end, paylen, path.ipv6);
    if (!ernic_xmit_gather(c, &x, &src, 1, 0, 0, off)) {
        /* Nothing of the region is sent; the NAK takes its place. */
        trace_ernic_qp_dma_fault(qpn, "READ source data");
        ernic_resp_xmit_ack(c, qpn, IB_NAK_REMOTE_OP, r->psn + i, r->msn);
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_RESPONSE_HANDLER,
                          "DMA of READ source data failed: FATAL");
        return false;
    }
    trace_ernic_tx_read_resp(qpn, opcode, (r->psn + i) & ERNIC_PSN_MASK,
                             paylen);
    ernic_gcsr_count32(c, ERNIC_OUTRDRSPPKTCNT);
    ernic_xmit_send(c, &x, qpn);
    return true;
}

/*
 * Send READ responses and ATOMIC ACKNOWLEDGEs, oldest request first.
 * Returns true when some are still to be sent after this turn.
 */
bool ernic_resp_run(ErnicCore *c, uint32_t qpn, unsigned *budget)
{
    ErnicQP *qp = &c->qp[qpn];

    while (qp->rd_count && *budget && !c->tx_blocked) {
        ErnicReadRes *r = &qp->rd[qp->rd_head];

        (*budget)--;
        if (r->atomic) {
            ernic_atomic_send_ack(c, qpn, r);
        } else if (!ernic_resp_send_read_resp(c, qpn, r)) {
            break;
        }
        if (++r->sent == r->npkts) {
            qp->rd_head = (qp->rd_head + 1) % ERNIC_READ_RES;
            qp->rd_count--;
        }
    }
    if (!qp->rd_count && qp->ack_held && *budget && !c->tx_blocked) {
        /* The ACK or NAK that waited for these responses. */
        (*budget)--;
        qp->ack_held = false;
        ernic_resp_xmit_ack(c, qpn, qp->held_synd, qp->held_psn,
                            qp->held_msn);
    }
    return (qp->rd_count || qp->ack_held) && !c->tx_blocked;
}

/* PG332's QP1 RQ buffer: the IP area, then UDP to the end of the MAD. */
static bool ernic_resp_gsi_copy(ErnicCore *c, const ErnicPkt *pkt,
                                const uint8_t *area, size_t iphl, size_t rest)
{
    return ernic_rq_write(c, ERNIC_QP_GSI, 0, area, ERNIC_GSI_IP_AREA) &&
           ernic_rq_write(c, ERNIC_QP_GSI, ERNIC_GSI_IP_AREA,
                          pkt->frame + pkt->l3 + iphl, rest);
}

/*
 * QP1 receives MADs: the RQ buffer gets a 40-byte IP area (an IPv6 header,
 * or 20 zero bytes and an IPv4 header), then UDP, BTH, DETH and the MAD
 * (docs/engine.md; the layout the Xilinx drivers parse), or with ERNIC-X
 * the receive WQE the IP area and the MAD. There is no ACK: QP1 traffic
 * is unreliable datagrams, and a full RQ, a MAD too long for a PG332
 * buffer or a failed DMA drops the MAD (traced).
 */
void ernic_resp_gsi_receive(ErnicCore *c, const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[ERNIC_QP_GSI];
    uint32_t qpn = ERNIC_QP_GSI;
    size_t iphl = pkt->ipv6 ? ERNIC_IPV6_HLEN : ERNIC_IPV4_HLEN;
    size_t rest = pkt->len - ERNIC_ICRC_LEN - pkt->l3 - iphl;
    uint8_t area[ERNIC_GSI_IP_AREA];

    if (pkt->opcode != IB_OPC_UD_SEND_ONLY || !ernic_rq_take(c, qpn) ||
        (!qp->rx_wqe && ERNIC_GSI_IP_AREA + rest > qp->rq_size)) {
        trace_ernic_rx_drop_resp(qpn, pkt->opcode, pkt->psn);
        ernic_gcsr_count16(c, ERNIC_INALLDRPPKTCNT, true);
        return;
    }
    ernic_rq_dgram_area(pkt, area);
    /*
     * With ERNIC-X (docs/extension.md, "QP1") the receive WQE gets the IP
     * area and the MAD as a UD receive's GRH and payload.
     */
    if (!(qp->rx_wqe ? ernic_rq_place_dgram(c, qpn, pkt, area) :
                       ernic_resp_gsi_copy(c, pkt, area, iphl, rest))) {
        trace_ernic_qp_dma_fault(qpn, "a MAD");
        return;
    }
    ernic_gcsr_count16(c, ERNIC_INAMPKTCNT, true);
    if (!ernic_rq_produce(c, qpn)) {
        trace_ernic_qp_dma_fault(qpn, "the RQ doorbell");
    }
}
