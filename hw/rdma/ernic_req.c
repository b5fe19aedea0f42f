/*
 * ERNIC requester: SQPIi doorbells, WQE fetch and the transmission of
 * request packets (PG332 v3.1 ch.1 "WQE Processor", Table 2-1, ch.6 "WQE
 * SQ Posting").
 *
 * Index convention (PG332 does not define wrap rules; docs/registers.md,
 * "Choices"): the slot of a WQE is its producer index modulo the SQ depth
 * (QDEPTHi[15:0]).
 *
 * A doorbell schedules the transmit bottom half (ernic_engine.c). Each
 * turn, every QP with work takes WQEs from its SQ into its outstanding
 * queue (at most ERNIC_OSQ_DEPTH, PG332 STATQPi[3]) and sends up to
 * ERNIC_TX_BUDGET packets, so one QP cannot starve the others and no
 * guest value can make a turn unbounded. A WQE is segmented by the QP's
 * PMTU; PSNs are given when it enters the outstanding queue.
 * Retransmission (ernic_comp.c) rewinds the transmit position to the
 * first packet of a WQE: whole-WQE retransmission, PG332 p.10.
 *
 * A turn is a state machine, as rxe's requester: ernic_req_next() looks
 * at the QP and names the one step to take, and each step returns the
 * state that follows (docs/engine.md, "Requester").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

/* Table 2-1's opcodes, and ERNIC-X's atomics and placement once on. */
static bool ernic_req_opcode_valid(ErnicCore *c, uint8_t opcode)
{
    switch (opcode) {
    case ERNIC_OP_WRITE:
    case ERNIC_OP_WRITE_IMM:
    case ERNIC_OP_SEND:
    case ERNIC_OP_SEND_IMM:
    case ERNIC_OP_READ:
    case ERNIC_OP_SEND_INV:
        return true;
    case ERNIC_OP_ATOMIC_CMP_SWP:
    case ERNIC_OP_ATOMIC_FETCH_ADD:
        return ernic_ext_on(c, ERNIC_EXT_F_ATOMIC);
    case ERNIC_OP_ATOMIC_WRITE:
    case ERNIC_OP_FLUSH:
        return ernic_ext_on(c, ERNIC_EXT_F_PLACE);
    default:
        return false;
    }
}

static uint32_t ernic_req_npkts(uint32_t len, uint32_t pmtu)
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
        total = ernic_mr_sge_take(c, qpn, &wqe[ERNIC_XWQE_SGE], n,
                                  ernic_op_reads(e->opcode) ?
                                  ERNIC_MRACC_LOCAL_WRITE : 0, e->sge, &bad);
        e->nsge = n;
        e->len = MIN(total, UINT32_MAX);
    }
    if (bad) {
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "WQE %u: %u SGEs, or an L_Key refused: FATAL",
                          e->slot, n);
    }
    return !bad;
}

/*
 * Read the WQE at sq_next into a new outstanding entry: sampled once, as
 * the guest may rewrite the slot at any time. NULL when it could not be
 * read (FATAL 0x05).
 */
static ErnicOsq *ernic_req_read_wqe(ErnicCore *c, uint32_t qpn,
                                    uint16_t depth, uint8_t *wqe, bool xwqe)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t wsize = xwqe ? ERNIC_XWQE_SIZE : ERNIC_WQE_SIZE;
    uint64_t addr = ernic_qp_addr(c, qpn, ERNIC_SQBA, ERNIC_SQBAMSB) +
                    (uint64_t)qp->sq_next * wsize;
    ErnicOsq *e;

    if (!ernic_dma_read(c, addr, wqe, wsize)) {
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "WQE fetch from 0x%" PRIx64 " failed", addr);
        return NULL;
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
    e->xrc_srqn = ernic_xrc_wqe_srqn(c, qpn, wqe);
    trace_ernic_sq_wqe(qpn, qp->sq_next, e->wrid, e->opcode, e->len);

    qp->sq_next = (qp->sq_next + 1) % depth;
    qp->osq_count++;
    ernic_qp_set_reg(c, qpn, ERNIC_STATWQE,
                     (ernic_qp_reg(c, qpn, ERNIC_STATWQE) + 1) & 0xffff);
    c->gcsr[ERNIC_GW(ERNIC_QPMSTS)] += 1u << 16;
    return e;
}

/*
 * Fast registration runs at fetch, in SQ order, and takes no PSN; a
 * failed check is a WQE processor error (docs/extension.md).
 */
static bool ernic_req_exec_local(ErnicCore *c, uint32_t qpn, ErnicOsq *e)
{
    if (!ernic_ext_exec_local(c, qpn, e)) {
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "WQE %u: fast registration of key 0x%x refused: "
                          "FATAL", e->slot, e->rkey);
        return false;
    }
    e->psn = ernic_qp_reg(c, qpn, ERNIC_SQPSN) & ERNIC_PSN_MASK;
    e->local = e->done = true;
    return true;
}

/*
 * The PMTU is sampled once: segmentation, READ response lengths and
 * their placement all follow the packet count fixed here, whatever the
 * guest writes to QPCONFi later. The WQE takes its PSNs.
 */
static void ernic_req_assign_psn(ErnicCore *c, uint32_t qpn, ErnicOsq *e)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t psn = ernic_qp_reg(c, qpn, ERNIC_SQPSN) & ERNIC_PSN_MASK;

    e->pmtu = ernic_qp_pmtu(c, qpn);
    e->npkts = ernic_req_npkts(e->len, e->pmtu);
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
}

/* The packets a fetched WQE will be sent as, and their PSNs. */
static void ernic_req_packets(ErnicCore *c, uint32_t qpn, ErnicOsq *e)
{
    if (qpn == ERNIC_QP_GSI) {
        /* QP1 sends one prebuilt frame per WQE and takes no PSN. */
        e->npkts = 1;
    } else if (ernic_ud_qp(c, qpn)) {
        /*
         * One packet to the AH the WQE names, checked as it is sent
         * (docs/extension.md); its PMTU is sampled now.
         */
        e->npkts = 1;
        e->pmtu = ernic_qp_pmtu(c, qpn);
    } else {
        ernic_req_assign_psn(c, qpn, e);
    }
}

/* Take the WQE at sq_next into the outstanding queue. */
static bool ernic_req_fetch(ErnicCore *c, uint32_t qpn, uint16_t depth)
{
    bool xwqe = ernic_ext_xwqe_on(c, qpn);
    uint8_t wqe[ERNIC_XWQE_SIZE];
    ErnicOsq *e = ernic_req_read_wqe(c, qpn, depth, wqe, xwqe);

    if (!e) {
        return false;
    }
    if (!ernic_ext_user_wqe_ok(c, qpn, e, xwqe ? wqe[ERNIC_XWQE_NSGE] : 0)) {
        /* A user QP names memory only through keys (docs/extension.md). */
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "user WQE %u (opcode 0x%x) names no keyed SGE: "
                          "FATAL", e->slot, e->opcode);
        return false;
    }
    if (qpn != ERNIC_QP_GSI && ernic_ext_local_op(c, e->opcode)) {
        return ernic_req_exec_local(c, qpn, e);
    }
    if (!ernic_req_opcode_valid(c, e->opcode)) {
        /*
         * A reserved opcode raises INTSTS[5] (PG332 p.38). The WQE is
         * completed, in order, with ERRFLAG set so that CQHEADi still
         * reaches SQPIi.
         */
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u WQE %u has reserved "
                      "opcode 0x%x\n", qpn, e->slot, e->opcode);
        e->error = e->done = true;
        ernic_irq_raise(c, ERNIC_INT_ILLEGAL_OPCODE);
        return true;
    }
    if (ernic_uc_qp(c, qpn) && !ernic_uc_opcode_ok(e->opcode)) {
        /* A READ, SEND with Invalidate or atomic has no UC form (9.7). */
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "UC WQE %u has opcode 0x%x: FATAL", e->slot,
                          e->opcode);
        return false;
    }
    if (xwqe && !ernic_req_take_sges(c, qpn, e, wqe)) {
        return false;
    }
    if (ernic_op_is_atomic(e->opcode) && !ernic_atomic_wqe_ok(c, qpn, e)) {
        return false;
    }
    if (ernic_op_is_place(e->opcode) && !ernic_place_wqe_ok(c, qpn, e)) {
        return false;
    }
    if (e->len > ERNIC_MAX_MSG_SIZE) {
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "WQE %u length %u is over 8 MiB (PG332 p.10)",
                          e->slot, e->len);
        return false;
    }
    ernic_req_packets(c, qpn, e);
    return true;
}

/* The BTH opcode of packet @i of a WQE (IBTA Table 36). */
static uint8_t ernic_req_bth_opcode(const ErnicOsq *e, uint32_t i)
{
    bool first = i == 0, last = i + 1 == e->npkts;

    switch (e->opcode) {
    case ERNIC_OP_READ:
        return IB_OPC_READ_REQUEST;
    case ERNIC_OP_ATOMIC_CMP_SWP:
    case ERNIC_OP_ATOMIC_FETCH_ADD:
        return ernic_atomic_bth_opcode(e);
    case ERNIC_OP_ATOMIC_WRITE:
    case ERNIC_OP_FLUSH:
        return ernic_place_bth_opcode(e);
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

static void ernic_req_note_out(ErnicCore *c, uint8_t opcode, uint32_t qpn,
                               uint32_t psn)
{
    ernic_gcsr_set(c, ERNIC_LSTOUTPKT, opcode | (qpn & 0xff) << 8 |
                   (psn & 0xffff) << 16);
}

/*
 * AckReq on the last packet of every message (as rxe), every quarter
 * window inside long ones so that the window keeps moving, and on every
 * packet sent again that the peer has: its ACK frees its place in the
 * window (ernic_txw_answered()).
 */
static bool ernic_req_ackreq(ErnicCore *c, uint32_t qpn, const ErnicOsq *e,
                             uint8_t opcode, uint32_t i)
{
    return ernic_op_reads(e->opcode) || i + 1 == e->npkts ||
           (i + 1) % (ernic_txw_size(c, qpn) / 4) == 0 ||
           ernic_psn_diff(e->psn + i,
                          ernic_qp_reg(c, qpn, ERNIC_STATRESPSN)) < 0;
}

/*
 * RETH and ImmDt or IETH, AtomicETH, or FETH and RETH, of packet @opcode
 * at offset @off, from @p.
 */
static uint8_t *ernic_req_put_ext(uint8_t *p, const ErnicOsq *e,
                                  uint32_t flags, uint32_t off)
{
    if (flags & ERNIC_OPF_ATOMICETH) {
        return ernic_atomic_put_eth(p, e);
    }
    if (flags & ERNIC_OPF_PLACE) {
        return ernic_place_put_ext(p, e);
    }
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
    return p;
}

/* Bytes of the headers ernic_req_put_ext() writes. */
static size_t ernic_req_ext_len(const ErnicOsq *e, uint32_t flags)
{
    if (flags & ERNIC_OPF_PLACE) {
        return ernic_place_ext_len(e);
    }
    return ernic_wire_ext_len(flags & (ERNIC_OPF_RETH | ERNIC_OPF_IMM |
                                       ERNIC_OPF_IETH | ERNIC_OPF_ATOMICETH));
}

/*
 * The payload of a packet: SDATA (PG332 Table 2-1: SEND data of up to
 * 16 B), or the WQE's message at @off through ernic_mr.c. False when it
 * cannot be read: the QP is then FATAL (docs/errors.md, "DMA errors").
 */
static bool ernic_req_put_payload(ErnicCore *c, uint32_t qpn,
                                  const ErnicOsq *e, uint32_t off,
                                  ErnicXmit *x)
{
    if (ernic_op_is_send(e->opcode) && e->len <= ERNIC_WQE_SDATA_MAX &&
        !e->nsge) {
        memcpy(x->f + x->end, e->sdata, x->paylen);
        return true;
    }
    if (!ernic_xmit_gather(c, x, e->sge, e->nsge, e->laddr, e->len, off)) {
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "read of WQE data at 0x%" PRIx64 " failed",
                          e->laddr + off);
        return false;
    }
    return true;
}

/*
 * Send packet @i of WQE @e. False when its data cannot be read: the QP
 * is then FATAL (docs/errors.md, "DMA errors") and nothing was sent.
 */
static bool ernic_req_send_packet(ErnicCore *c, uint32_t qpn, ErnicOsq *e,
                                  uint32_t i, uint8_t *f)
{
    uint8_t opcode = ernic_req_bth_opcode(e, i);
    uint32_t flags = ernic_op_is_atomic(e->opcode) ? ERNIC_OPF_ATOMICETH :
                     ernic_op_is_place(e->opcode) ? ERNIC_OPF_PLACE :
                     ernic_wire_opcode_flags(opcode);
    uint32_t off = i * e->pmtu, paylen = 0;
    bool uc = ernic_uc_qp(c, qpn);
    size_t xrceth = ernic_xrc_ini(c, qpn) ? ERNIC_XRCETH_LEN : 0;
    ErnicPath path;
    ErnicXmit x;
    size_t end;
    uint8_t *p;

    if (!ernic_op_reads(e->opcode)) {
        paylen = MIN(e->pmtu, e->len - off);
    } else {
        /*
         * A READ sent again asks only for the responses still missing
         * (IBTA 9.7.5.1.4, as rxe does): whole-READ retries could never
         * complete a large READ on a lossy link. docs/engine.md. An
         * atomic has one response: it is sent again whole.
         */
        i = e->read_base = e->read_pkts;
        off = i * e->pmtu;
    }
    ernic_qp_path(c, qpn, &path);
    end = ernic_wire_build(f, &path, uc ? opcode | IB_OPC_UC : opcode,
                           e->psn + i,
                           !uc && ernic_req_ackreq(c, qpn, e, opcode, i),
                           ernic_req_ext_len(e, flags) + xrceth, paylen);
    p = f + end;
    if (xrceth) {
        /* An XRC initiator names the remote XRC SRQ first. */
        p = ernic_xrc_put_eth(p, e);
    }
    p = ernic_req_put_ext(p, e, flags, off);
    ernic_xmit_init(c, &x, f, p - f, paylen, path.ipv6);
    if (paylen && !ernic_req_put_payload(c, qpn, e, off, &x)) {
        return false;
    }
    trace_ernic_tx_req(qpn, opcode, (e->psn + i) & ERNIC_PSN_MASK, paylen);
    ernic_req_note_out(c, opcode, qpn, e->psn + i);
    ernic_gcsr_count16(c, ERNIC_OUTIOPKTCNT,
                       !ernic_op_is_send(e->opcode));
    ernic_xmit_send(c, &x, qpn);
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
    if (!ernic_mr_msg_dma(c, e->sge, e->nsge, e->laddr, e->len, 0, f, NULL,
                          len)) {
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
        ernic_link_xmit(c, ERNIC_QP_GSI, f, len);
        return;
    }
    stl_le_p(f + pkt.len - ERNIC_ICRC_LEN,
             ernic_wire_icrc(f, pkt.l3, pkt.len, pkt.ipv6));
    trace_ernic_tx_req(ERNIC_QP_GSI, pkt.opcode, pkt.psn, pkt.paylen);
    ernic_req_note_out(c, pkt.opcode, ERNIC_QP_GSI, pkt.psn);
    ernic_gcsr_count16(c, ERNIC_OUTAMPKTCNT, true);
    ernic_link_xmit(c, ERNIC_QP_GSI, f, pkt.len);
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

/* The states of a requester turn, as rxe's requester; in this order. */
typedef enum ErnicReqState {
    ERNIC_REQ_NEXT,             /* look at the QP: which step is next */
    ERNIC_REQ_FLUSH,            /* stopped QP: fetch, complete in error */
    ERNIC_REQ_FETCH,            /* take the next WQE from the SQ */
    ERNIC_REQ_SKIP,             /* a READ answered in full: send nothing */
    ERNIC_REQ_COMPLETE,         /* a refused or local WQE: complete it */
    ERNIC_REQ_SEND_DGRAM,       /* QP1 or a UD QP: the WQE's datagram */
    ERNIC_REQ_WINDOW_FULL,      /* wait for an ACK (or the timer) */
    ERNIC_REQ_SEND,             /* the next packet of the WQE in hand */
    ERNIC_REQ_DONE,             /* the turn is over */
} ErnicReqState;

/* One turn of one QP's requester. */
typedef struct ErnicReqTurn {
    ErnicCore *c;
    ErnicQP *qp;
    uint32_t qpn;
    uint16_t depth;
    uint16_t pi;                /* SQPIi modulo the depth */
    unsigned *budget;
    bool sent;                  /* a packet went out: arm the timer */
} ErnicReqTurn;

static ErnicOsq *ernic_req_cur(ErnicReqTurn *t)
{
    return &t->qp->osq[(t->qp->osq_head + t->qp->tx_idx) % ERNIC_OSQ_DEPTH];
}

/* Whether the SQ has a WQE to fetch and the outstanding queue room. */
static bool ernic_req_can_fetch(ErnicReqTurn *t)
{
    return t->qp->sq_next != t->pi && t->qp->osq_count < ERNIC_OSQ_DEPTH;
}

/*
 * A packet of the WQE in hand may go: not a READ or atomic, and the
 * window full.
 */
static bool ernic_req_window_full(ErnicReqTurn *t, const ErnicOsq *e)
{
    return !ernic_op_reads(e->opcode) &&
           ernic_psn_diff(e->psn + t->qp->tx_pkt,
                          ernic_txw_base(t->c, t->qpn)) >=
           (int32_t)ernic_txw_size(t->c, t->qpn);
}

static ErnicReqState ernic_req_next(ErnicReqTurn *t)
{
    ErnicQP *qp = t->qp;
    ErnicOsq *e;

    if (t->c->tx_blocked || !*t->budget) {
        return ERNIC_REQ_DONE;
    }
    if (ernic_qp_state(t->c, t->qpn) != ERNIC_QPS_ENABLED) {
        return ERNIC_REQ_FLUSH;
    }
    if (qp->tx_idx >= qp->osq_count) {
        return ernic_req_can_fetch(t) ? ERNIC_REQ_FETCH : ERNIC_REQ_DONE;
    }
    e = ernic_req_cur(t);
    if (qp->rnr_wait) {
        return ERNIC_REQ_DONE;
    }
    if (e->error || e->local) {
        return ERNIC_REQ_COMPLETE;
    }
    if (e->done && ernic_op_reads(e->opcode)) {
        return ERNIC_REQ_SKIP;
    }
    if (t->qpn == ERNIC_QP_GSI || ernic_ud_qp(t->c, t->qpn)) {
        return ERNIC_REQ_SEND_DGRAM;
    }
    /* UC has no window: nothing it sends is acknowledged. */
    return !ernic_uc_qp(t->c, t->qpn) && ernic_req_window_full(t, e) ?
           ERNIC_REQ_WINDOW_FULL : ERNIC_REQ_SEND;
}

/*
 * A FATAL QP, or one under recovery, sends nothing; new WQEs complete in
 * error (ernic_qp.c).
 */
static ErnicReqState ernic_req_do_flush(ErnicReqTurn *t)
{
    if (!ernic_req_can_fetch(t) ||
        !ernic_req_fetch(t->c, t->qpn, t->depth)) {
        return ERNIC_REQ_DONE;
    }
    ernic_comp_flush(t->c, t->qpn);
    (*t->budget)--;
    return ERNIC_REQ_NEXT;
}

/*
 * A READ or atomic whose responses all came, behind an older one being
 * retried: nothing of it is asked again.
 */
static ErnicReqState ernic_req_do_skip(ErnicReqTurn *t)
{
    t->qp->tx_idx++;
    t->qp->tx_pkt = 0;
    return ERNIC_REQ_NEXT;
}

/* Completing costs budget: a ring of bad WQEs is bounded. */
static ErnicReqState ernic_req_do_complete(ErnicReqTurn *t)
{
    t->qp->tx_idx++;
    ernic_comp_complete_ready(t->c, t->qpn);
    (*t->budget)--;
    return ERNIC_REQ_NEXT;
}

/*
 * QP1 and UD QPs send unreliable datagrams: a WQE completes once sent
 * (IBTA 9.8.3), with no PSN window and no retransmit timer.
 */
static ErnicReqState ernic_req_do_send_dgram(ErnicReqTurn *t)
{
    ErnicOsq *e = ernic_req_cur(t);

    if (t->qpn == ERNIC_QP_GSI) {
        ernic_req_send_gsi(t->c, e, t->c->frame);
    } else {
        ernic_ud_send(t->c, t->qpn, e, t->c->frame);
    }
    t->qp->tx_idx++;
    e->done = true;
    ernic_comp_complete_ready(t->c, t->qpn);
    (*t->budget)--;
    return ERNIC_REQ_NEXT;
}

/*
 * Window full: an ACK that moves it resumes us, and the retransmit timer
 * stands in for one that never comes. Whatever stopped the timer (an RNR
 * NAK) must not leave the QP waiting for good (`/ernic/rc/late-rnr`).
 */
static ErnicReqState ernic_req_do_window_full(ErnicReqTurn *t)
{
    ernic_comp_arm_retry(t->c, t->qpn);
    return ERNIC_REQ_DONE;
}

static ErnicReqState ernic_req_do_send(ErnicReqTurn *t)
{
    ErnicQP *qp = t->qp;
    ErnicOsq *e = ernic_req_cur(t);
    uint32_t psn;

    (*t->budget)--;
    if (!ernic_req_send_packet(t->c, t->qpn, e, qp->tx_pkt, t->c->frame)) {
        return ERNIC_REQ_NEXT;              /* FATAL: the turn now flushes */
    }
    t->sent = true;
    psn = e->psn + (ernic_op_reads(e->opcode) ? e->npkts : qp->tx_pkt + 1);
    if (ernic_psn_diff(psn, qp->sent_psn) > 0) {
        qp->sent_psn = psn & ERNIC_PSN_MASK;
    }
    /* A READ request is one packet that stands for npkts PSNs. */
    if (ernic_op_reads(e->opcode) || ++qp->tx_pkt == e->npkts) {
        qp->tx_idx++;
        qp->tx_pkt = 0;
        if (ernic_uc_qp(t->c, t->qpn)) {
            /* UC: nothing answers, the WQE is done once sent (IBTA 9.7). */
            e->done = true;
            ernic_comp_complete_ready(t->c, t->qpn);
        }
    }
    return ERNIC_REQ_NEXT;
}

static ErnicReqState ernic_req_do_fetch(ErnicReqTurn *t)
{
    return ernic_req_fetch(t->c, t->qpn, t->depth) ? ERNIC_REQ_NEXT :
                                                     ERNIC_REQ_DONE;
}

/* The step of each state but ERNIC_REQ_DONE, in ErnicReqState's order. */
static ErnicReqState (*const ernic_req_steps[])(ErnicReqTurn *t) = {
    ernic_req_next, ernic_req_do_flush, ernic_req_do_fetch, ernic_req_do_skip,
    ernic_req_do_complete, ernic_req_do_send_dgram, ernic_req_do_window_full,
    ernic_req_do_send,
};
QEMU_BUILD_BUG_ON(ARRAY_SIZE(ernic_req_steps) != ERNIC_REQ_DONE);

/*
 * One turn of a QP's requester. Returns true when it has more to send and
 * wants another turn.
 */
bool ernic_req_run(ErnicCore *c, uint32_t qpn, unsigned *budget)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicReqTurn t = {
        .c = c, .qp = qp, .qpn = qpn, .budget = budget,
        .depth = ernic_qp_reg(c, qpn, ERNIC_QDEPTH) & ERNIC_QDEPTH_SQ_MASK,
    };
    ErnicReqState s = ERNIC_REQ_NEXT;

    if (!ernic_req_can_run(c, qpn, t.depth)) {
        return false;
    }
    qp->sq_next %= t.depth;
    qp->cq_next %= t.depth;
    t.pi = ernic_qp_reg(c, qpn, ERNIC_SQPI) % t.depth;
    while (s != ERNIC_REQ_DONE) {
        s = ernic_req_steps[s](&t);
    }
    if (t.sent) {
        ernic_comp_arm_retry(c, qpn);
    }
    ernic_qp_update_status(c, qpn);
    return !c->tx_blocked && !*budget &&
           (qp->tx_idx < qp->osq_count || ernic_req_can_fetch(&t));
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
    ernic_qp_update_status(c, qpn);
}
