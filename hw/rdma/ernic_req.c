/*
 * ERNIC requester: SQPIi doorbells, WQE fetch and the transmission of
 * request packets (PG332 v3.1 ch.1 "WQE Processor", Table 2-1, ch.6 "WQE
 * SQ Posting").
 *
 * Index convention (PG332 does not define wrap rules; docs/registers.md,
 * "Choices"): the slot of a WQE is its producer index modulo the SQ depth
 * (QDEPTHi[15:0]).
 *
 * A doorbell schedules the transmit bottom half. Each turn, every QP with
 * work takes WQEs from its SQ into its outstanding queue (at most
 * ERNIC_OSQ_DEPTH, PG332 STATQPi[3]) and sends up to ERNIC_TX_BUDGET
 * packets, so one QP cannot starve the others and no guest value can make
 * a turn unbounded. A WQE is segmented by the QP's PMTU; PSNs are given
 * when it enters the outstanding queue. Retransmission (ernic_comp.c)
 * rewinds the transmit position to the first packet of a WQE: whole-WQE
 * retransmission, PG332 p.10.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "ernic_core.h"
#include "trace.h"

static bool ernic_opcode_valid(uint8_t opcode)
{
    switch (opcode) {
    case ERNIC_OP_WRITE:
    case ERNIC_OP_WRITE_IMM:
    case ERNIC_OP_SEND:
    case ERNIC_OP_SEND_IMM:
    case ERNIC_OP_READ:
    case ERNIC_OP_SEND_INV:
        return true;
    default:
        return false;
    }
}

static uint32_t ernic_npkts(uint32_t len, uint32_t pmtu)
{
    return len ? DIV_ROUND_UP(len, pmtu) : 1;
}

/*
 * ERNIC-X keyed SGEs of the WQE @wqe (docs/extension.md, "Keyed SGEs"):
 * sampled, their L_Keys checked once; the message is their bytes. False
 * when the count or a key is refused: FATAL 0x05, as for a bad WQE.
 */
static bool ernic_req_take_sges(ErnicCore *c, uint32_t qpn, ErnicOsq *e,
                                const uint8_t *wqe)
{
    uint8_t n = wqe[ERNIC_XWQE_NSGE];
    uint64_t total;
    bool bad = n > ERNIC_XWQE_SGES;

    if (!n) {
        return true;
    }
    if (!bad) {
        total = ernic_sge_take(c, qpn, &wqe[ERNIC_XWQE_SGE], n,
                               e->opcode == ERNIC_OP_READ ?
                               ERNIC_MRACC_LOCAL_WRITE : 0, e->sge, &bad);
        e->nsge = n;
        e->len = MIN(total, UINT32_MAX);
    }
    if (bad) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u WQE %u: %u SGEs, or an "
                      "L_Key refused: FATAL\n", qpn, e->slot, n);
        ernic_qp_fatal(c, qpn, ERNIC_FATAL_WQE_PROCESSOR);
    }
    return !bad;
}

/* Take the WQE at sq_next into the outstanding queue. */
static bool ernic_req_fetch(ErnicCore *c, uint32_t qpn, uint16_t depth)
{
    ErnicQP *qp = &c->qp[qpn];
    uint64_t sqba = ernic_qp_addr(c, qpn, ERNIC_SQBA, ERNIC_SQBAMSB);
    bool xwqe = ernic_ext_xwqe_on(c, qpn);
    uint32_t wsize = xwqe ? ERNIC_XWQE_SIZE : ERNIC_WQE_SIZE;
    uint64_t addr = sqba + (uint64_t)qp->sq_next * wsize;
    uint8_t wqe[ERNIC_XWQE_SIZE];
    ErnicOsq *e;
    uint32_t psn;

    if (!ernic_dma_read(c, addr, wqe, wsize)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u WQE fetch from 0x%"
                      PRIx64 " failed\n", qpn, addr);
        ernic_qp_fatal(c, qpn, ERNIC_FATAL_WQE_PROCESSOR);
        return false;
    }

    e = &qp->osq[(qp->osq_head + qp->osq_count) % ERNIC_OSQ_DEPTH];
    memset(e, 0, sizeof(*e));
    e->slot = qp->sq_next;
    e->wrid = lduw_le_p(&wqe[ERNIC_WQE_WRID]);
    e->opcode = wqe[ERNIC_WQE_OPCODE];
    e->laddr = ldq_le_p(&wqe[ERNIC_WQE_LADDR]);
    e->len = ldl_le_p(&wqe[ERNIC_WQE_LENGTH]);
    e->raddr = ldq_le_p(&wqe[ERNIC_WQE_ROFFSET]);
    e->rkey = ldl_le_p(&wqe[ERNIC_WQE_RTAG]);
    e->imm = ldl_le_p(&wqe[ERNIC_WQE_IMMDT]);
    memcpy(e->sdata, &wqe[ERNIC_WQE_SDATA], ERNIC_WQE_SDATA_MAX);
    trace_ernic_sq_wqe(qpn, qp->sq_next, e->wrid, e->opcode, e->len);

    qp->sq_next = (qp->sq_next + 1) % depth;
    qp->osq_count++;
    ernic_qp_set_reg(c, qpn, ERNIC_STATWQE,
                     (ernic_qp_reg(c, qpn, ERNIC_STATWQE) + 1) & 0xffff);
    c->gcsr[ERNIC_GW(ERNIC_QPMSTS)] += 1u << 16;

    if (!ernic_ext_user_wqe_ok(c, qpn, e, xwqe ? wqe[ERNIC_XWQE_NSGE] : 0)) {
        /* A user QP names memory only through keys (docs/extension.md). */
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: user QP%u WQE %u (opcode "
                      "0x%x) names no keyed SGE: FATAL\n", qpn, e->slot,
                      e->opcode);
        ernic_qp_fatal(c, qpn, ERNIC_FATAL_WQE_PROCESSOR);
        return false;
    }
    if (qpn != ERNIC_QP_GSI && ernic_ext_local_op(c, e->opcode)) {
        /*
         * Fast registration runs here, in SQ order, and takes no PSN;
         * a failed check is a WQE processor error (docs/extension.md).
         */
        if (!ernic_ext_exec_local(c, qpn, e)) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u WQE %u: fast "
                          "registration of key 0x%x refused: FATAL\n",
                          qpn, e->slot, e->rkey);
            ernic_qp_fatal(c, qpn, ERNIC_FATAL_WQE_PROCESSOR);
            return false;
        }
        e->psn = ernic_qp_reg(c, qpn, ERNIC_SQPSN) & ERNIC_PSN_MASK;
        e->local = e->done = true;
        return true;
    }
    if (!ernic_opcode_valid(e->opcode)) {
        /*
         * A reserved opcode raises INTSTS[5] (PG332 p.38). The WQE is
         * completed, in order, with ERRFLAG set so that CQHEADi still
         * reaches SQPIi.
         */
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u WQE %u has reserved "
                      "opcode 0x%x\n", qpn, e->slot, e->opcode);
        e->error = e->done = true;
        ernic_core_raise(c, ERNIC_INT_ILLEGAL_OPCODE);
        return true;
    }
    if (xwqe && !ernic_req_take_sges(c, qpn, e, wqe)) {
        return false;
    }
    if (e->len > ERNIC_WQE_LEN_MAX) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u WQE %u length %u is "
                      "over 8 MiB (PG332 p.10)\n", qpn, e->slot, e->len);
        ernic_qp_fatal(c, qpn, ERNIC_FATAL_WQE_PROCESSOR);
        return false;
    }
    if (qpn == ERNIC_QP_GSI) {
        /* QP1 sends one prebuilt frame per WQE and takes no PSN. */
        e->npkts = 1;
        return true;
    }
    /*
     * The PMTU is sampled once: segmentation, READ response lengths and
     * their placement all follow the packet count fixed here, whatever
     * the guest writes to QPCONFi later.
     */
    e->pmtu = ernic_qp_pmtu(c, qpn);
    e->npkts = ernic_npkts(e->len, e->pmtu);
    psn = ernic_qp_reg(c, qpn, ERNIC_SQPSN) & ERNIC_PSN_MASK;
    e->psn = psn;
    ernic_qp_set_reg(c, qpn, ERNIC_SQPSN, (psn + e->npkts) & ERNIC_PSN_MASK);
    ernic_qp_set_reg(c, qpn, ERNIC_STATSSN,
                     (ernic_qp_reg(c, qpn, ERNIC_STATSSN) + 1) &
                     ERNIC_PSN_MASK);
    if (qp->osq_count == 1) {
        /* Nothing older is unacknowledged: responses start here. */
        ernic_qp_set_reg(c, qpn, ERNIC_STATRESPSN, psn);
        qp->sent_psn = psn;
    }
    return true;
}

/*
 * Request packets sent beyond the oldest unacknowledged PSN. Hardware is
 * bounded by its write-retry buffers (PG332 Table 2-6: 512 of 4 KiB, one
 * per packet); here the window also adapts to the link, as TCP's does:
 * it grows while ACKs come and halves on every retry, so that bursts and
 * whole-WQE retransmissions fit what a datagram socket on the way holds
 * (-netdev dgram drops the excess), while a stream socket, which holds
 * them all, gets the full window (docs/engine.md, choice 12).
 */
static uint32_t ernic_req_window(ErnicCore *c, uint32_t qpn)
{
    return c->qp[qpn].tx_window;
}

void ernic_req_window_reset(ErnicQP *qp)
{
    qp->tx_window = ERNIC_TXW_START;
    qp->tx_ssthresh = ERNIC_TXW_MAX;
    qp->tx_resend = false;
}

/* The PSN of the next request packet to send. */
static uint32_t ernic_req_next_psn(ErnicQP *qp)
{
    if (qp->tx_idx < qp->osq_count) {
        const ErnicOsq *e = &qp->osq[(qp->osq_head + qp->tx_idx) %
                                     ERNIC_OSQ_DEPTH];

        return (e->psn + qp->tx_pkt) & ERNIC_PSN_MASK;
    }
    return qp->sent_psn;
}

/*
 * The PSN the window counts from: STATRESPSNi, or while a retry sends
 * again packets the peer has, the oldest of those not yet answered.
 */
static uint32_t ernic_req_window_base(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t una = ernic_qp_reg(c, qpn, ERNIC_STATRESPSN) & ERNIC_PSN_MASK;

    if (qp->tx_resend && ernic_psn_diff(qp->tx_base, una) < 0) {
        return qp->tx_base;
    }
    qp->tx_resend = false;
    return una;
}

/*
 * Transmission went back to the first packet of a WQE (retry, RNR NAK;
 * PG332 p.10: whole WQEs only). The peer has its packets up to
 * STATRESPSNi already, but they are on the wire again all the same: they
 * count in the window from the first. Sent at once, a long WRITE's
 * overflowed a datagram socket at the same place on every retry
 * (docs/engine.md, choice 12).
 */
void ernic_req_window_rewound(ErnicQP *qp)
{
    uint32_t una = ernic_qp_reg(qp->core, qp->qpn, ERNIC_STATRESPSN);

    qp->tx_base = ernic_req_next_psn(qp);
    qp->tx_resend = ernic_psn_diff(qp->tx_base, una & ERNIC_PSN_MASK) < 0;
}

/*
 * An ACK while packets the peer has are sent again: one that moves
 * nothing (@dup) answers one of them, as each asks for an ACK
 * (ernic_req_send_packet()); one that moves STATRESPSNi answers all
 * before it. Never beyond what was sent. True if the window moved.
 */
bool ernic_req_window_answered(ErnicQP *qp, bool dup)
{
    uint32_t next = ernic_req_next_psn(qp), base;

    if (!qp->tx_resend) {
        return false;
    }
    base = dup ? qp->tx_base + 1 :
           ernic_qp_reg(qp->core, qp->qpn, ERNIC_STATRESPSN);
    if (ernic_psn_diff(base, next) > 0) {
        base = next;
    }
    if (ernic_psn_diff(base, qp->tx_base) <= 0) {
        return false;
    }
    qp->tx_base = base & ERNIC_PSN_MASK;
    return true;
}

/*
 * @acked packets were acknowledged (at most the 2^23 PSNs sent, so no
 * overflow): doubling per round trip, then +1, never beyond the most.
 */
void ernic_req_window_grow(ErnicQP *qp, uint32_t acked)
{
    uint32_t w = qp->tx_window;

    w += w < qp->tx_ssthresh ? acked : 1;
    qp->tx_window = MIN(w, ERNIC_TXW_MAX);
}

/* Something was lost: half the window, and grow slowly from there. */
void ernic_req_window_shrink(ErnicQP *qp)
{
    qp->tx_ssthresh = MAX(qp->tx_window / 2, ERNIC_TXW_FLOOR);
    qp->tx_window = qp->tx_ssthresh;
    trace_ernic_tx_window(qp->qpn, qp->tx_window);
}

/*
 * The retransmit period ran out while a retry was still sending packets
 * the peer has, and some went unanswered since the last period: they or
 * their ACKs were lost, which costs nothing, as the peer has them.
 * Without this the window, short of the answers, would stop the retry at
 * the same place every time. The window moves past them and the retry
 * goes on; true if so. A period in which nothing could be sent (a
 * blocked backend) is a retry as before, and counts.
 */
bool ernic_req_window_stalled(ErnicQP *qp)
{
    uint32_t una = ernic_qp_reg(qp->core, qp->qpn, ERNIC_STATRESPSN);
    uint32_t next = ernic_req_next_psn(qp);

    if (!qp->tx_resend || next == qp->tx_base ||
        ernic_psn_diff(next, una & ERNIC_PSN_MASK) >= 0) {
        return false;
    }
    qp->tx_base = next;
    return true;
}

/* The BTH opcode of packet @i of a WQE (IBTA Table 36). */
static uint8_t ernic_req_bth_opcode(const ErnicOsq *e, uint32_t i)
{
    bool first = i == 0, last = i + 1 == e->npkts;

    switch (e->opcode) {
    case ERNIC_OP_READ:
        return IB_OPC_READ_REQUEST;
    case ERNIC_OP_WRITE:
    case ERNIC_OP_WRITE_IMM:
        if (first && last) {
            return e->opcode == ERNIC_OP_WRITE ? IB_OPC_WRITE_ONLY :
                                                 IB_OPC_WRITE_ONLY_IMM;
        }
        if (last) {
            return e->opcode == ERNIC_OP_WRITE ? IB_OPC_WRITE_LAST :
                                                 IB_OPC_WRITE_LAST_IMM;
        }
        return first ? IB_OPC_WRITE_FIRST : IB_OPC_WRITE_MIDDLE;
    default:
        if (first && last) {
            return e->opcode == ERNIC_OP_SEND ? IB_OPC_SEND_ONLY :
                   e->opcode == ERNIC_OP_SEND_IMM ? IB_OPC_SEND_ONLY_IMM :
                   IB_OPC_SEND_ONLY_INV;
        }
        if (last) {
            return e->opcode == ERNIC_OP_SEND ? IB_OPC_SEND_LAST :
                   e->opcode == ERNIC_OP_SEND_IMM ? IB_OPC_SEND_LAST_IMM :
                   IB_OPC_SEND_LAST_INV;
        }
        return first ? IB_OPC_SEND_FIRST : IB_OPC_SEND_MIDDLE;
    }
}

void ernic_qp_path(ErnicCore *c, uint32_t qpn, ErnicPath *p)
{
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
    uint32_t adv = ernic_qp_reg(c, qpn, ERNIC_QPADVCONF);
    int i;

    stw_be_p(p->src_mac, ernic_gcsr(c, ERNIC_MACXADDMSB));
    stl_be_p(p->src_mac + 2, ernic_gcsr(c, ERNIC_MACXADDLSB));
    stw_be_p(p->dst_mac, ernic_qp_reg(c, qpn, ERNIC_MACDESADDMSB));
    stl_be_p(p->dst_mac + 2, ernic_qp_reg(c, qpn, ERNIC_MACDESADDLSB));
    p->ipv6 = qpconf & ERNIC_QPCONF_IPV6;
    if (p->ipv6) {
        /* IPv6XADD4 / IPDESADDR4 hold address bits [127:96] (p.33, p.44). */
        for (i = 0; i < 4; i++) {
            stl_be_p(p->src_ip + 4 * i,
                     ernic_gcsr(c, ERNIC_IPv6XADD4 - 4 * i));
            stl_be_p(p->dst_ip + 4 * i,
                     ernic_qp_reg(c, qpn, ERNIC_IPDESADDR4 - 4 * i));
        }
    } else {
        stl_be_p(p->src_ip, ernic_gcsr(c, ERNIC_IPv4XADD));
        stl_be_p(p->dst_ip, ernic_qp_reg(c, qpn, ERNIC_IPDESADDR1));
    }
    p->tclass = adv & ERNIC_QPADVCONF_TC_MASK;
    p->ttl = (adv & ERNIC_QPADVCONF_TTL_MASK) >> ERNIC_QPADVCONF_TTL_SHIFT;
    p->pkey = adv >> ERNIC_QPADVCONF_PKEY_SHIFT;
    p->sport = ernic_gcsr(c, ERNIC_XRNICCONF) >> ERNIC_XRNICCONF_UDPSRC_SHIFT;
    p->dqpn = ernic_qp_reg(c, qpn, ERNIC_DESTQPCONF) & ERNIC_QPN_MASK;
}

static void ernic_note_out(ErnicCore *c, uint8_t opcode, uint32_t qpn,
                           uint32_t psn)
{
    ernic_gcsr_set(c, ERNIC_LSTOUTPKT, opcode | (qpn & 0xff) << 8 |
                   (psn & 0xffff) << 16);
}

/*
 * Send packet @i of WQE @e. False when its data cannot be read: the QP
 * is then FATAL (docs/errors.md, "DMA errors") and nothing was sent.
 */
static bool ernic_req_send_packet(ErnicCore *c, uint32_t qpn, ErnicOsq *e,
                                  uint32_t i, uint8_t *f)
{
    uint32_t pmtu = e->pmtu;
    uint8_t opcode = ernic_req_bth_opcode(e, i);
    uint32_t flags = ernic_opcode_flags(opcode);
    uint32_t off = i * pmtu, paylen = 0;
    size_t ext = 0, end;
    ErnicPath path;
    uint8_t *p;

    if (opcode != IB_OPC_READ_REQUEST) {
        paylen = MIN(pmtu, e->len - off);
    } else {
        /*
         * A READ sent again asks only for the responses still missing
         * (IBTA 9.7.5.1.4, as rxe does): whole-READ retries could never
         * complete a large READ on a lossy link. docs/engine.md.
         */
        i = e->read_base = e->read_pkts;
        off = i * pmtu;
    }
    ext = ((flags & ERNIC_OPF_RETH) ? ERNIC_RETH_LEN : 0) +
          ((flags & (ERNIC_OPF_IMM | ERNIC_OPF_IETH)) ? ERNIC_IMMDT_LEN : 0);

    ernic_qp_path(c, qpn, &path);
    /*
     * AckReq on the last packet of every message (as rxe), every quarter
     * window inside long ones so that the window keeps moving, and on
     * every packet sent again that the peer has: its ACK frees its place
     * in the window (ernic_req_window_answered()).
     */
    end = ernic_wire_build(f, &path, opcode, e->psn + i,
                           opcode == IB_OPC_READ_REQUEST ||
                           i + 1 == e->npkts ||
                           (i + 1) % (ernic_req_window(c, qpn) / 4) == 0 ||
                           ernic_psn_diff(e->psn + i,
                                          ernic_qp_reg(c, qpn,
                                                       ERNIC_STATRESPSN)) < 0,
                           ext, paylen);
    p = f + end;
    if (flags & ERNIC_OPF_RETH) {
        ernic_wire_put_reth(p, e->raddr + off, e->rkey, e->len - off);
        p += ERNIC_RETH_LEN;
    }
    if (flags & ERNIC_OPF_IMM) {
        stl_be_p(p, e->imm);
        p += ERNIC_IMMDT_LEN;
    } else if (flags & ERNIC_OPF_IETH) {
        stl_be_p(p, e->rkey);
        p += ERNIC_IMMDT_LEN;
    }
    if (paylen) {
        if (ernic_op_is_send(e->opcode) && e->len <= ERNIC_WQE_SDATA_MAX &&
            !e->nsge) {
            /* PG332 Table 2-1: SDATA carries SEND data of up to 16 B. */
            memcpy(p, e->sdata, paylen);
        } else if (!(e->nsge ? ernic_sge_dma(c, e->sge, e->nsge, off, p,
                                             NULL, paylen) :
                     ernic_dma_read(c, e->laddr + off, p, paylen))) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u read of WQE data at "
                          "0x%" PRIx64 " failed\n", qpn, e->laddr + off);
            ernic_qp_fatal(c, qpn, ERNIC_FATAL_WQE_PROCESSOR);
            return false;
        }
    }
    end = ernic_wire_finish(f, p - f + paylen, paylen, path.ipv6);
    trace_ernic_tx_req(qpn, opcode, (e->psn + i) & ERNIC_PSN_MASK, paylen);
    ernic_note_out(c, opcode, qpn, e->psn + i);
    if (opcode == IB_OPC_READ_REQUEST || !ernic_op_is_send(e->opcode)) {
        ernic_count16(c, ERNIC_OUTIOPKTCNT, true);
    } else {
        ernic_count16(c, ERNIC_OUTIOPKTCNT, false);
    }
    ernic_net_xmit(c, qpn, f, end);
    return true;
}

/*
 * QP1 sends what software built: a whole frame from Ethernet to the end
 * of the MAD (PG332 p.13, ch.6 "QP1"); the device appends the ICRC.
 */
static void ernic_req_send_gsi(ErnicCore *c, ErnicOsq *e, uint8_t *f)
{
    ErnicPkt pkt;
    bool roce;
    size_t len = e->len;

    if (len + ERNIC_ICRC_LEN > ERNIC_MAX_FRAME ||
        len < ERNIC_ETH_HLEN + ERNIC_IPV4_HLEN + ERNIC_UDP_HLEN +
              ERNIC_BTH_LEN) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP1 frame of %zu bytes is "
                      "not a RoCEv2 frame\n", len);
        return;
    }
    /*
     * Longer than SDATA (16 B) by the check above: from LADDR, or with
     * ERNIC-X gathered from keyed SGEs (docs/extension.md, "QP1").
     */
    if (!(e->nsge ? ernic_sge_dma(c, e->sge, e->nsge, 0, f, NULL, len) :
                    ernic_dma_read(c, e->laddr, f, len))) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP1 read of frame at 0x%"
                      PRIx64 " failed\n", e->nsge ? e->sge[0].a.addr :
                      e->laddr);
        return;
    }
    stl_le_p(f + len, 0);
    ernic_wire_parse(f, len + ERNIC_ICRC_LEN, &pkt, &roce);
    if (!roce || !pkt.bth) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP1 frame is not RoCEv2 "
                      "(UDP port 4791, consistent lengths); sent as is\n");
        ernic_net_xmit(c, ERNIC_QP_GSI, f, len);
        return;
    }
    stl_le_p(f + pkt.len - ERNIC_ICRC_LEN,
             ernic_icrc(f, pkt.l3, pkt.len, pkt.ipv6));
    trace_ernic_tx_req(ERNIC_QP_GSI, pkt.opcode, pkt.psn, pkt.paylen);
    ernic_note_out(c, pkt.opcode, ERNIC_QP_GSI, pkt.psn);
    ernic_count16(c, ERNIC_OUTAMPKTCNT, true);
    ernic_net_xmit(c, ERNIC_QP_GSI, f, pkt.len);
}

/*
 * A QP whose transmit side may run. Why it may not is logged once per
 * guest write of SQPIi, QPCONFi or QDEPTHi: ACKs from the peer ask again
 * for every packet, and the peer must not be able to flood the log.
 */
static bool ernic_req_can_run(ErnicCore *c, uint32_t qpn, uint16_t depth)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
    const char *why;

    if (!(ernic_gcsr(c, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN) ||
        !(qpconf & ERNIC_QPCONF_QP_EN)) {
        /* Disabled: the doorbell stays in SQPIi until the QP is enabled. */
        return false;
    }
    if (!(qpconf & ERNIC_QPCONF_HW_HS_DIS)) {
        why = "in hardware-handshake mode (QPCONF[4]=0); the emulated "
              "device has no handshake ports";
    } else if (depth < 2) {
        why = "with an SQ depth below 2";
    } else {
        return true;
    }
    if (!qp->db_warned) {
        qp->db_warned = true;
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u SQPI doorbell %s\n", qpn,
                      why);
    }
    return false;
}

/*
 * One turn of a QP's requester. Returns true when it has more to send and
 * wants another turn.
 */
static bool ernic_req_run(ErnicCore *c, uint32_t qpn, unsigned *budget)
{
    ErnicQP *qp = &c->qp[qpn];
    uint16_t depth = ernic_qp_reg(c, qpn, ERNIC_QDEPTH) & ERNIC_QDEPTH_SQ_MASK;
    uint8_t *frame = c->frame;
    uint16_t pi;
    uint32_t psn;
    bool sent = false;

    if (!ernic_req_can_run(c, qpn, depth)) {
        return false;
    }
    qp->sq_next %= depth;
    qp->cq_next %= depth;
    pi = ernic_qp_reg(c, qpn, ERNIC_SQPI) % depth;

    for (;;) {
        if (c->tx_blocked || !*budget) {
            break;
        }
        if (ernic_qp_state(c, qpn) != ERNIC_QPS_ENABLED) {
            /*
             * A FATAL QP, or one under recovery, sends nothing; new WQEs
             * complete in error (ernic_qp.c).
             */
            if (qp->sq_next == pi || qp->osq_count == ERNIC_OSQ_DEPTH ||
                !ernic_req_fetch(c, qpn, depth)) {
                break;
            }
            ernic_comp_flush(c, qpn);
            (*budget)--;
            continue;
        }
        if (qp->tx_idx < qp->osq_count) {
            ErnicOsq *e = &qp->osq[(qp->osq_head + qp->tx_idx) %
                                   ERNIC_OSQ_DEPTH];

            if (qp->rnr_wait) {
                break;
            }
            if (e->done && e->opcode == ERNIC_OP_READ) {
                /*
                 * A READ whose responses all came, behind an older one
                 * being retried: nothing of it is asked again.
                 */
                qp->tx_idx++;
                qp->tx_pkt = 0;
                continue;
            }
            if (e->error || e->local) {
                /* Completing costs budget: a ring of bad WQEs is bounded. */
                qp->tx_idx++;
                ernic_comp_complete_ready(c, qpn);
                (*budget)--;
                continue;
            }
            if (qpn == ERNIC_QP_GSI) {
                ernic_req_send_gsi(c, e, frame);
                qp->tx_idx++;
                /* Unreliable datagram: complete once sent. */
                e->done = true;
                ernic_comp_complete_ready(c, qpn);
                (*budget)--;
                continue;
            }
            if (e->opcode != ERNIC_OP_READ &&
                ernic_psn_diff(e->psn + qp->tx_pkt,
                               ernic_req_window_base(c, qpn)) >=
                (int32_t)ernic_req_window(c, qpn)) {
                /*
                 * Window full: an ACK that moves it resumes us, and the
                 * retransmit timer stands in for one that never comes.
                 * Whatever stopped the timer (an RNR NAK) must not leave
                 * the QP waiting for good (`/ernic/rc/late-rnr`).
                 */
                ernic_comp_arm_retry(c, qpn);
                break;
            }
            (*budget)--;
            if (!ernic_req_send_packet(c, qpn, e, qp->tx_pkt, frame)) {
                /* FATAL: the loop now flushes. */
                continue;
            }
            sent = true;
            psn = e->psn + (e->opcode == ERNIC_OP_READ ? e->npkts :
                            qp->tx_pkt + 1);
            if (ernic_psn_diff(psn, qp->sent_psn) > 0) {
                qp->sent_psn = psn & ERNIC_PSN_MASK;
            }
            /* A READ request is one packet that stands for npkts PSNs. */
            if (e->opcode == ERNIC_OP_READ || ++qp->tx_pkt == e->npkts) {
                qp->tx_idx++;
                qp->tx_pkt = 0;
            }
            continue;
        }
        if (qp->sq_next == pi || qp->osq_count == ERNIC_OSQ_DEPTH) {
            break;
        }
        if (!ernic_req_fetch(c, qpn, depth)) {
            break;
        }
    }
    if (sent) {
        ernic_comp_arm_retry(c, qpn);
    }
    ernic_sq_update_status(c, qpn);
    return !c->tx_blocked && !*budget &&
           (qp->tx_idx < qp->osq_count ||
            (qp->sq_next != pi && qp->osq_count < ERNIC_OSQ_DEPTH));
}

/*
 * Complete with ERRFLAG every WQE from the fetch position up to SQPIi, at
 * once (FATAL or recovery; ernic_qp.c). Each turn takes one slot of the
 * SQ, so the work is bounded by the SQ depth.
 */
void ernic_req_flush_sq(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint16_t depth = ernic_qp_reg(c, qpn, ERNIC_QDEPTH) & ERNIC_QDEPTH_SQ_MASK;
    uint16_t pi;

    if (depth < 2) {
        return;
    }
    qp->sq_next %= depth;
    qp->cq_next %= depth;
    pi = ernic_qp_reg(c, qpn, ERNIC_SQPI) % depth;
    while (qp->sq_next != pi && qp->osq_count < ERNIC_OSQ_DEPTH) {
        uint16_t slot = qp->sq_next;

        /* A WQE that cannot be read stays: nothing can complete it. */
        ernic_req_fetch(c, qpn, depth);
        ernic_comp_flush(c, qpn);
        if (qp->sq_next == slot) {
            break;
        }
    }
    ernic_sq_update_status(c, qpn);
}

/* Rewind transmission to the first packet of outstanding entry @from. */
void ernic_req_retransmit(ErnicCore *c, uint32_t qpn, uint32_t from)
{
    ErnicQP *qp = &c->qp[qpn];

    if (from >= qp->osq_count) {
        return;
    }
    trace_ernic_retransmit(qpn, qp->osq[(qp->osq_head + from) %
                                         ERNIC_OSQ_DEPTH].psn);
    qp->tx_idx = from;
    qp->tx_pkt = 0;
    ernic_req_window_rewound(qp);
    ernic_count32(c, ERNIC_RETRYCNTSTS);
    ernic_qp_set_reg(c, qpn, ERNIC_STATQP,
                     ernic_qp_reg(c, qpn, ERNIC_STATQP) |
                     ERNIC_STATQP_RETRIED);
    ernic_sq_doorbell(c, qpn);
}

void ernic_sq_doorbell(ErnicCore *c, uint32_t qpn)
{
    trace_ernic_sq_doorbell(qpn, ernic_qp_reg(c, qpn, ERNIC_SQPI));
    /* RESPHNDSTS[16] reads 1 only while no SQ doorbell is outstanding. */
    c->gcsr[ERNIC_GW(ERNIC_RESPHNDSTS)] &=
        ~ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN;
    /*
     * A QP already pending has the bottom half scheduled or running, or
     * waits for the backend's resume or the VM's start, which schedule
     * it. Scheduling it again costs an eventfd write (aio_notify).
     */
    if (!test_and_set_bit(qpn, c->sq_pending)) {
        qemu_bh_schedule(c->sq_bh);
    }
}

/*
 * The transmit bottom half: requesters and READ responders of every QP
 * with work, round robin, ERNIC_TX_BUDGET packets per QP and
 * ERNIC_TURN_BUDGET for the whole turn; the next turn starts after the
 * last QP served, so that none waits behind the others for long.
 */
void ernic_sq_process_pending(void *opaque)
{
    ErnicCore *c = opaque;
    uint32_t n = c->num_qp + 1, k, qpn;
    unsigned turn = ERNIC_TURN_BUDGET;
    bool again = false;

    if (!ernic_core_may_run()) {
        return;
    }
    for (k = 0; k < n && turn && !c->tx_blocked; k++) {
        unsigned budget = ERNIC_TX_BUDGET;
        bool more;

        qpn = (c->sq_rr + k) % n;
        if (!test_and_clear_bit(qpn, c->sq_pending)) {
            continue;
        }
        /* Responses first: the peer is waiting on them. */
        more = ernic_resp_run(c, qpn, &budget);
        more |= ernic_req_run(c, qpn, &budget);
        turn -= MIN(turn, ERNIC_TX_BUDGET - budget);
        /* Held up by the backend: this QP runs again on resume. */
        if (more || c->tx_blocked) {
            set_bit(qpn, c->sq_pending);
        }
        c->sq_rr = (qpn + 1) % n;
    }
    again = find_first_bit(c->sq_pending, n) < n;
    if (c->tx_blocked) {
        /* ernic_core_tx_resume() reschedules us. */
        return;
    }
    if (again) {
        qemu_bh_schedule(c->sq_bh);
        return;
    }
    c->gcsr[ERNIC_GW(ERNIC_RESPHNDSTS)] |=
        ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN;
}
