/*
 * ERNIC responder ("RX Packet Handler", PG332 v3.1 ch.1 and ch.2 "Incoming
 * RDMA SEND/WRITE/READ"): PSN and opcode sequence checks, SEND into RQ
 * buffers, WRITE and READ against the PD/MR table (Fig. 2-9), ACK, NAK and
 * RNR NAK generation, READ responses, and QP1 MAD reception.
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

/* The 40-byte IP area before the UDP header of a QP1 RQ buffer. */
#define ERNIC_GSI_IP_AREA       40

static uint32_t ernic_resp_msn(ErnicCore *c, uint32_t qpn)
{
    return ernic_qp_reg(c, qpn, ERNIC_STATMSN) & ERNIC_PSN_MASK;
}

/* Send an ACK (syndrome 0x1f: no credit count, as rxe), NAK or RNR NAK. */
static void ernic_resp_send_ack(ErnicCore *c, uint32_t qpn, uint8_t syndrome,
                                uint32_t psn)
{
    uint8_t f[ERNIC_MAX_HDR_LEN + ERNIC_ICRC_LEN];
    ErnicPath path;
    size_t end;

    ernic_qp_path(c, qpn, &path);
    end = ernic_wire_build(f, &path, IB_OPC_ACK, psn, false, ERNIC_AETH_LEN,
                           0);
    ernic_wire_put_aeth(f + end, syndrome, ernic_resp_msn(c, qpn));
    end = ernic_wire_finish(f, end + ERNIC_AETH_LEN, 0, path.ipv6);
    trace_ernic_tx_ack(qpn, syndrome, psn);

    switch (syndrome & IB_AETH_TYPE_MASK) {
    case IB_AETH_ACK:
        ernic_count16(c, ERNIC_OUTAMPKTCNT, false);
        break;
    case IB_AETH_RNR_NAK:
        ernic_gcsr_set(c, ERNIC_OUTRNRPKTSTS,
                       ((ernic_gcsr(c, ERNIC_OUTRNRPKTSTS) + 0x10000) &
                        0xffff0000) | (qpn & 0xff));
        break;
    default:
        ernic_count16(c, ERNIC_OUTNAKPKTCNT, false);
        break;
    }
    ernic_gcsr_set(c, ERNIC_LSTOUTPKT, IB_OPC_ACK | (qpn & 0xff) << 8 |
                   (psn & 0xffff) << 16);
    c->qp[qpn].ack_pending = false;
    ernic_net_xmit(c, f, end);
}

/*
 * A request error that PG332 Table 2-3/2-4 answers with NAK and FATAL.
 * @synd holds the Table 2-3 checks that failed, if any: the packet is
 * then logged in the error buffer too (docs/errors.md).
 */
static void ernic_resp_fatal(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                             uint8_t nak, uint16_t code, uint32_t synd)
{
    qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u request opcode 0x%x PSN 0x%x "
                  "failed, FATAL code 0x%x\n", qpn, pkt->opcode, pkt->psn,
                  code);
    if (synd) {
        ernic_net_rx_error(c, pkt->frame, pkt->len, synd, qpn);
    }
    ernic_resp_send_ack(c, qpn, nak, pkt->psn);
    ernic_qp_fatal(c, qpn, code);
}

void ernic_resp_ack_timer(void *opaque)
{
    ErnicQP *qp = opaque;
    ErnicCore *c = qp->core;

    if (qp->ack_pending) {
        ernic_resp_send_ack(c, qp->qpn, IB_AETH_CREDIT_INVALID,
                            ernic_qp_reg(c, qp->qpn, ERNIC_LSTRQREQ) &
                            ERNIC_PSN_MASK);
    }
}

/* ACK a request per the XRNICCONF[4:3] mode. */
static void ernic_resp_ack(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t mode = (ernic_gcsr(c, ERNIC_XRNICCONF) &
                     ERNIC_XRNICCONF_ACKGEN_MASK) >>
                    ERNIC_XRNICCONF_ACKGEN_SHIFT;

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

/*
 * R_Key validation against the PD/MR table (PG332 p.31, Fig. 2-9): the
 * R_Key's upper bits index the table, its low byte must equal BUFRKEY,
 * the PD must be the QP's and the access type must allow the operation
 * (FATAL 0x15); the RETH range must lie in the region (0x16). Hardware
 * checks both at once: both failing is 0x17. Returns 0 or a FATAL code.
 */
static uint16_t ernic_resp_check_rkey(ErnicCore *c, uint32_t qpn,
                                      uint32_t rkey, uint64_t va,
                                      uint32_t len, bool write,
                                      uint64_t *addr)
{
    uint32_t idx = rkey >> 8;
    uint32_t *mr;
    uint32_t access;
    uint64_t base, mrlen, off;
    uint16_t code = 0;

    if (idx >= ERNIC_PDT_ENTRIES) {
        return ERNIC_FATAL_RKEY;
    }
    mr = c->pdt[idx];
    access = mr[ERNIC_W(ERNIC_ACCESSDESC)] & ERNIC_ACCESSDESC_TYPE_MASK;
    if ((mr[ERNIC_W(ERNIC_BUFRKEY)] & 0xff) != (rkey & 0xff) ||
        (mr[ERNIC_W(ERNIC_PDPDNUM)] & 0xffffff) !=
        (ernic_qp_reg(c, qpn, ERNIC_PD) & 0xffffff) ||
        (write ? access != ERNIC_ACCESS_WRITE_ONLY &&
                 access != ERNIC_ACCESS_READ_WRITE
               : access != ERNIC_ACCESS_READ_ONLY &&
                 access != ERNIC_ACCESS_READ_WRITE)) {
        code = ERNIC_FATAL_RKEY;
    }
    base = ((uint64_t)mr[ERNIC_W(ERNIC_VIRTADDRMSB)] << 32) |
           mr[ERNIC_W(ERNIC_VIRTADDRLSB)];
    mrlen = ((uint64_t)(mr[ERNIC_W(ERNIC_ACCESSDESC)] >>
                        ERNIC_ACCESSDESC_LENMSB_SHIFT) << 32) |
            mr[ERNIC_W(ERNIC_WRRDBUFLEN)];
    off = va - base;
    if (va < base || off > mrlen || len > mrlen - off) {
        code = code ? ERNIC_FATAL_RKEY_AND_LENGTH : ERNIC_FATAL_RETH_LENGTH;
    }
    if (code) {
        return code;
    }
    *addr = (((uint64_t)mr[ERNIC_W(ERNIC_BUFBASEADDRMSB)] << 32) |
             mr[ERNIC_W(ERNIC_BUFBASEADDRLSB)]) + off;
    return 0;
}

static uint32_t ernic_rq_depth(ErnicCore *c, uint32_t qpn)
{
    return ernic_qp_reg(c, qpn, ERNIC_QDEPTH) >> ERNIC_QDEPTH_RQ_SHIFT;
}

static uint32_t ernic_rq_bufsize(ErnicCore *c, uint32_t qpn)
{
    return (ernic_qp_reg(c, qpn, ERNIC_QPCONF) >> ERNIC_QPCONF_RQBUFSZ_SHIFT)
           * 256;
}

/*
 * The RQ holds depth - 1 buffers: STATRQPIDBi == RQCIi means empty (both
 * modulo the depth; docs/engine.md).
 */
static bool ernic_rq_full(ErnicCore *c, uint32_t qpn)
{
    uint32_t depth = ernic_rq_depth(c, qpn);
    uint32_t pi, ci;

    if (depth < 2 || !ernic_rq_bufsize(c, qpn)) {
        return true;
    }
    pi = ernic_qp_reg(c, qpn, ERNIC_STATRQPIDB) % depth;
    ci = ernic_qp_reg(c, qpn, ERNIC_RQCI) % depth;
    return (pi + 1) % depth == ci;
}

static uint64_t ernic_rq_slot_addr(ErnicCore *c, uint32_t qpn)
{
    uint32_t depth = ernic_rq_depth(c, qpn);
    uint64_t rqba = ernic_qp_addr(c, qpn, ERNIC_RQBA, ERNIC_RQBAMSB);

    return rqba + (uint64_t)(ernic_qp_reg(c, qpn, ERNIC_STATRQPIDB) % depth) *
                  ernic_rq_bufsize(c, qpn);
}

/*
 * A buffer is full: advance STATRQPIDBi, write it to RQWPTRDBADDi and
 * raise the RQ interrupt (PG332 pp.18-19, p.60).
 */
static void ernic_rq_produce(ErnicCore *c, uint32_t qpn)
{
    uint32_t depth = ernic_rq_depth(c, qpn);
    uint32_t pi = (ernic_qp_reg(c, qpn, ERNIC_STATRQPIDB) + 1) % depth;
    uint64_t db = ernic_qp_addr(c, qpn, ERNIC_RQWPTRDBADD,
                                ERNIC_RQWPTRDBADDMSB);
    uint64_t next;
    uint8_t buf[4];

    ernic_qp_set_reg(c, qpn, ERNIC_STATRQPIDB, pi);
    next = ernic_rq_slot_addr(c, qpn);
    ernic_qp_set_reg(c, qpn, ERNIC_STATRQBUFCA, next & 0xffffff00u);
    ernic_qp_set_reg(c, qpn, ERNIC_STATRQBUFCAMSB, next >> 32);
    trace_ernic_rq_produce(qpn, pi);
    if (db) {
        stl_le_p(buf, pi);
        if (pci_dma_write(c->owner, db, buf, sizeof(buf)) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u RQ doorbell write to "
                          "0x%" PRIx64 " failed\n", qpn, db);
        }
    }
    if (qpn == ERNIC_QP_GSI) {
        ernic_core_raise(c, ERNIC_INT_MAD_RECEIVED);
    }
    ernic_core_raise_qp(c, ERNIC_INT_RQ_PKT_RECEIVED, qpn);
}

static void ernic_dma_write(ErnicCore *c, uint32_t qpn, uint64_t addr,
                            const uint8_t *buf, uint32_t len)
{
    if (len && pci_dma_write(c->owner, addr, buf, len) != MEMTX_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u write of %u bytes to 0x%"
                      PRIx64 " failed\n", qpn, len, addr);
    }
}

static void ernic_rnr_nak(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    uint32_t timer = (ernic_qp_reg(c, qpn, ERNIC_TIMEOUTCONF) &
                      ERNIC_TIMEOUTCONF_RNRTIMER_MASK) >>
                     ERNIC_TIMEOUTCONF_RNRTIMER_SHIFT;

    ernic_qp_set_reg(c, qpn, ERNIC_STATQP, ernic_qp_reg(c, qpn, ERNIC_STATQP) |
                     ERNIC_STATQP_RQ_OVFL);
    ernic_net_rx_error(c, pkt->frame, pkt->len, ERNIC_SYND_RQ_FULL, qpn);
    ernic_resp_send_ack(c, qpn, IB_AETH_RNR_NAK | timer, pkt->psn);
    ernic_core_raise(c, ERNIC_INT_RNR_NAK_GENERATED);
}

/* Queue a READ request for responses; the caller checked there is room. */
static ErnicReadRes *ernic_resp_queue_read(ErnicCore *c, uint32_t qpn,
                                           const ErnicPkt *pkt, uint64_t addr)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicReadRes *r = &qp->rd[(qp->rd_head + qp->rd_count++) %
                              ERNIC_READ_RES];

    r->psn = pkt->psn;
    r->npkts = pkt->dmalen ?
               DIV_ROUND_UP(pkt->dmalen, ernic_qp_pmtu(c, qpn)) : 1;
    r->sent = 0;
    r->addr = addr;
    r->len = pkt->dmalen;
    return r;
}

/* A duplicate request (PSN before the expected one), IBTA 9.7.5.1.1. */
static void ernic_resp_duplicate(ErnicCore *c, uint32_t qpn,
                                 const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint64_t addr = 0;

    ernic_count16(c, ERNIC_ININVDUPCNT, true);
    trace_ernic_rx_duplicate(qpn, pkt->opcode, pkt->psn);
    if (pkt->opcode != IB_OPC_READ_REQUEST) {
        /* Executed already: acknowledge again, up to the newest. */
        if (pkt->ackreq) {
            ernic_resp_send_ack(c, qpn, IB_AETH_CREDIT_INVALID,
                                ernic_qp_reg(c, qpn, ERNIC_LSTRQREQ) &
                                ERNIC_PSN_MASK);
        }
        return;
    }
    /* A duplicate READ is executed again (IBTA C9-86). */
    if (qp->rd_count == ERNIC_READ_RES ||
        (pkt->dmalen && ernic_resp_check_rkey(c, qpn, pkt->rkey, pkt->va,
                                              pkt->dmalen, false, &addr))) {
        return;
    }
    ernic_resp_queue_read(c, qpn, pkt, addr)->msn = ernic_resp_msn(c, qpn);
    ernic_sq_doorbell(c, qpn);
}

void ernic_resp_receive(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t lst = ernic_qp_reg(c, qpn, ERNIC_LSTRQREQ);
    uint32_t epsn = (lst + 1) & ERNIC_PSN_MASK;
    uint8_t last_op = lst >> ERNIC_LSTRQREQ_OPCODE_SHIFT;
    uint32_t pmtu = ernic_qp_pmtu(c, qpn);
    uint32_t f = pkt->flags;
    uint32_t last_psn = pkt->psn;
    bool in_send, in_write, is_write = f & ERNIC_OPF_WRITE;
    uint64_t addr;
    uint16_t code;
    uint32_t synd;
    int32_t d = ernic_psn_diff(pkt->psn, epsn);

    if (d < 0) {
        ernic_resp_duplicate(c, qpn, pkt);
        return;
    }
    if (d > 0) {
        /* PG332 Table 2-3 bit 21: one NAK per sequence error. */
        ernic_net_rx_error(c, pkt->frame, pkt->len, ERNIC_SYND_PSN_SEQ, qpn);
        if (!qp->nak_sent) {
            qp->nak_sent = true;
            ernic_resp_send_ack(c, qpn, IB_NAK_PSN_SEQ, epsn);
        }
        return;
    }
    qp->nak_sent = false;

    if (!(f & ERNIC_OPF_REQ) || (f & ERNIC_OPF_DETH)) {
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                         ERNIC_FATAL_UNSUPPORTED_OPCODE,
                         ERNIC_SYND_OPCODE_UNSUPPORTED);
        return;
    }
    if (!(f & ERNIC_OPF_LAST) && pkt->padcnt) {
        /* Table 2-3 bit 18: dropped. */
        ernic_net_rx_error(c, pkt->frame, pkt->len, ERNIC_SYND_PAD, qpn);
        return;
    }
    if (pkt->paylen > pmtu) {
        /* Table 2-3 bit 19: more than any packet may carry, dropped. */
        ernic_net_rx_error(c, pkt->frame, pkt->len, ERNIC_SYND_PMTU, qpn);
        return;
    }
    /*
     * Opcode sequence and packet length are checked together (same
     * precedence in Table 2-3); Table 2-4 has a code for each and for
     * both, SEND and WRITE apart.
     */
    in_send = last_op == IB_OPC_SEND_FIRST || last_op == IB_OPC_SEND_MIDDLE;
    in_write = last_op == IB_OPC_WRITE_FIRST ||
               last_op == IB_OPC_WRITE_MIDDLE;
    synd = 0;
    if (in_send ? !(f & ERNIC_OPF_SEND) || (f & ERNIC_OPF_FIRST) :
        in_write ? !is_write || (f & ERNIC_OPF_FIRST) :
        !(f & ERNIC_OPF_FIRST)) {
        synd |= ERNIC_SYND_OPCODE_SEQ;
    }
    if (!(f & ERNIC_OPF_LAST) && pkt->paylen != pmtu) {
        synd |= ERNIC_SYND_PMTU;
    }
    if (synd) {
        bool w = is_write || in_write;

        if (synd == ERNIC_SYND_OPCODE_SEQ) {
            code = w ? ERNIC_FATAL_WRITE_OPCODE_SEQ : ERNIC_FATAL_OPCODE_SEQ;
        } else if (synd == ERNIC_SYND_PMTU) {
            code = w ? ERNIC_FATAL_WRITE_LENGTH : ERNIC_FATAL_LENGTH;
        } else {
            code = w ? ERNIC_FATAL_WRITE_SEQ_AND_LENGTH :
                       ERNIC_FATAL_OPCODE_SEQ_AND_LENGTH;
        }
        ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ, code, synd);
        return;
    }

    if (f & ERNIC_OPF_SEND) {
        if (f & ERNIC_OPF_FIRST) {
            if (ernic_rq_full(c, qpn)) {
                ernic_rnr_nak(c, qpn, pkt);
                return;
            }
            qp->rq_off = 0;
        }
        if (qp->rq_off + pkt->paylen > ernic_rq_bufsize(c, qpn)) {
            /* Longer than an RQ buffer (docs/engine.md). */
            ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                             ERNIC_FATAL_LENGTH, 0);
            return;
        }
        ernic_dma_write(c, qpn, ernic_rq_slot_addr(c, qpn) + qp->rq_off,
                        pkt->payload, pkt->paylen);
        qp->rq_off += pkt->paylen;
        ernic_count16(c, ERNIC_INSRRPKTCNT, false);
    } else if (is_write) {
        if (f & ERNIC_OPF_FIRST) {
            qp->wr_left = pkt->dmalen;
            qp->wr_addr = 0;
            code = pkt->dmalen ?
                   ernic_resp_check_rkey(c, qpn, pkt->rkey, pkt->va,
                                         pkt->dmalen, true, &qp->wr_addr) : 0;
            if (code) {
                ernic_resp_fatal(c, qpn, pkt, IB_NAK_REMOTE_ACCESS, code, 0);
                return;
            }
        }
        if (pkt->paylen > qp->wr_left ||
            ((f & ERNIC_OPF_LAST) && pkt->paylen != qp->wr_left)) {
            /* The packets do not add up to the RETH DMA length. */
            ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                             ERNIC_FATAL_WRITE_LENGTH, 0);
            return;
        }
        ernic_dma_write(c, qpn, qp->wr_addr, pkt->payload, pkt->paylen);
        qp->wr_addr += pkt->paylen;
        qp->wr_left -= pkt->paylen;
    } else {
        ErnicReadRes *r;

        addr = 0;
        code = pkt->dmalen ? ernic_resp_check_rkey(c, qpn, pkt->rkey, pkt->va,
                                                   pkt->dmalen, false, &addr)
                           : 0;
        if (code) {
            ernic_resp_fatal(c, qpn, pkt, IB_NAK_REMOTE_ACCESS, code, 0);
            return;
        }
        if (qp->rd_count == ERNIC_READ_RES) {
            /* PG332 p.22: outstanding READ queue full. */
            ernic_resp_fatal(c, qpn, pkt, IB_NAK_INVALID_REQ,
                             ERNIC_FATAL_READ_RESOURCES, 0);
            return;
        }
        r = ernic_resp_queue_read(c, qpn, pkt, addr);
        last_psn = (pkt->psn + r->npkts - 1) & ERNIC_PSN_MASK;
    }

    ernic_qp_set_reg(c, qpn, ERNIC_LSTRQREQ,
                     last_psn | (uint32_t)pkt->opcode <<
                     ERNIC_LSTRQREQ_OPCODE_SHIFT);
    if (f & ERNIC_OPF_LAST) {
        /* Each message, READ requests included, takes an MSN. */
        ernic_qp_set_reg(c, qpn, ERNIC_STATMSN,
                         (ernic_resp_msn(c, qpn) + 1) & ERNIC_PSN_MASK);
        if (f & ERNIC_OPF_SEND) {
            ernic_rq_produce(c, qpn);
        }
        if (f & (ERNIC_OPF_IMM | ERNIC_OPF_IETH)) {
            /*
             * ImmDt and invalidated R_Keys leave on the ieth_immdt_m_axis
             * side band (PG332 Table 1-1), which is not modelled.
             */
            trace_ernic_rx_immdt(qpn, pkt->opcode, pkt->imm);
        }
    }
    if (f & ERNIC_OPF_READ) {
        qp->rd[(qp->rd_head + qp->rd_count - 1) % ERNIC_READ_RES].msn =
            ernic_resp_msn(c, qpn);
        ernic_sq_doorbell(c, qpn);
        return;
    }
    ernic_resp_ack(c, qpn, pkt);
}

/*
 * Send READ responses, oldest request first. Returns true when some are
 * still to be sent after this turn.
 */
bool ernic_resp_run(ErnicCore *c, uint32_t qpn, unsigned *budget)
{
    ErnicQP *qp = &c->qp[qpn];
    static uint8_t f[ERNIC_MAX_FRAME];
    uint32_t pmtu = ernic_qp_pmtu(c, qpn);

    while (qp->rd_count && *budget && !c->tx_blocked) {
        ErnicReadRes *r = &qp->rd[qp->rd_head];
        uint32_t i = r->sent, off = i * pmtu;
        uint32_t paylen = MIN(pmtu, r->len - off);
        uint8_t opcode;
        size_t end;
        ErnicPath path;

        if (r->npkts == 1) {
            opcode = IB_OPC_READ_RESP_ONLY;
        } else if (i == 0) {
            opcode = IB_OPC_READ_RESP_FIRST;
        } else if (i + 1 == r->npkts) {
            opcode = IB_OPC_READ_RESP_LAST;
        } else {
            opcode = IB_OPC_READ_RESP_MIDDLE;
        }
        ernic_qp_path(c, qpn, &path);
        end = ernic_wire_build(f, &path, opcode, r->psn + i, false,
                               (ernic_opcode_flags(opcode) & ERNIC_OPF_AETH) ?
                               ERNIC_AETH_LEN : 0, paylen);
        if (ernic_opcode_flags(opcode) & ERNIC_OPF_AETH) {
            ernic_wire_put_aeth(f + end, IB_AETH_CREDIT_INVALID, r->msn);
            end += ERNIC_AETH_LEN;
        }
        if (paylen && pci_dma_read(c->owner, r->addr + off, f + end,
                                   paylen) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u READ source 0x%"
                          PRIx64 " unreadable\n", qpn, r->addr + off);
            memset(f + end, 0, paylen);
        }
        end = ernic_wire_finish(f, end + paylen, paylen, path.ipv6);
        trace_ernic_tx_read_resp(qpn, opcode, (r->psn + i) & ERNIC_PSN_MASK,
                                 paylen);
        ernic_count32(c, ERNIC_OUTRDRSPPKTCNT);
        ernic_net_xmit(c, f, end);
        (*budget)--;
        if (++r->sent == r->npkts) {
            qp->rd_head = (qp->rd_head + 1) % ERNIC_READ_RES;
            qp->rd_count--;
        }
    }
    return qp->rd_count && !c->tx_blocked;
}

/*
 * QP1 receives MADs: the RQ buffer gets a 40-byte IP area (an IPv6 header,
 * or 20 zero bytes and an IPv4 header), then UDP, BTH, DETH and the MAD
 * (docs/engine.md; the layout the Xilinx drivers parse). There is no ACK:
 * QP1 traffic is unreliable datagrams, a full RQ drops the MAD.
 */
void ernic_resp_gsi_receive(ErnicCore *c, const ErnicPkt *pkt)
{
    uint32_t qpn = ERNIC_QP_GSI;
    size_t iphl = pkt->ipv6 ? ERNIC_IPV6_HLEN : ERNIC_IPV4_HLEN;
    size_t rest = pkt->len - ERNIC_ICRC_LEN - pkt->l3 - iphl;
    uint8_t zero[ERNIC_GSI_IP_AREA] = { 0 };
    uint64_t addr;

    if (pkt->opcode != IB_OPC_UD_SEND_ONLY) {
        trace_ernic_rx_drop_resp(qpn, pkt->opcode, pkt->psn);
        ernic_count16(c, ERNIC_INALLDRPPKTCNT, true);
        return;
    }
    if (ernic_rq_full(c, qpn) ||
        ERNIC_GSI_IP_AREA + rest > ernic_rq_bufsize(c, qpn)) {
        trace_ernic_rx_drop_resp(qpn, pkt->opcode, pkt->psn);
        ernic_count16(c, ERNIC_INALLDRPPKTCNT, true);
        return;
    }
    addr = ernic_rq_slot_addr(c, qpn);
    ernic_dma_write(c, qpn, addr, zero, ERNIC_GSI_IP_AREA - iphl);
    ernic_dma_write(c, qpn, addr + ERNIC_GSI_IP_AREA - iphl,
                    pkt->frame + pkt->l3, iphl + rest);
    ernic_count16(c, ERNIC_INAMPKTCNT, true);
    ernic_rq_produce(c, qpn);
}
