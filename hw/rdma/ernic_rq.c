/*
 * ERNIC receive queue: the RQ buffer a SEND (or with receive metadata a
 * WRITE with Immediate) takes, STATRQPIDBi and the RQ doorbell (PG332
 * v3.1 pp.18-19, p.60), and ERNIC-X's receive WQEs and receive metadata
 * ring (docs/extension.md, "Receive WQEs", "Receive metadata").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

static uint32_t ernic_rq_depth(ErnicCore *c, uint32_t qpn)
{
    return ERNIC_FIELD_EX32(ernic_qp_reg(c, qpn, ERNIC_QDEPTH),
                            ERNIC_QDEPTH_RQ_MASK);
}

static uint32_t ernic_rq_bufsize(ErnicCore *c, uint32_t qpn)
{
    return ERNIC_FIELD_EX32(ernic_qp_reg(c, qpn, ERNIC_QPCONF),
                            ERNIC_QPCONF_RQBUFSZ_MASK) * 256;
}

/*
 * ERNIC-X RQ doorbell records (docs/extension.md, "RQ records"): the RQ
 * of QP @qpn looks empty by RQCIi, so with EXTQPCONFi[12] RQCIi is taken
 * again from the record's second word, read once here. Software grants
 * buffers with a store, without an exit for a register write. A record
 * that cannot be read leaves RQCIi: the message finds no buffer (an RNR
 * NAK, as for an empty RQ), and the failure is logged.
 */
static void ernic_rq_record(ErnicCore *c, uint32_t qpn)
{
    uint64_t addr;
    uint32_t ci;

    if (!ernic_ext_on(c, ERNIC_EXT_F_RQREC) ||
        !(c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
          ERNIC_EXTQPCONF_RQREC)) {
        return;
    }
    if (!ernic_qp_dbrec_read(c, qpn, ERNIC_RQREC_OFFSET, &addr, &ci)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u RQ record read from 0x%"
                      PRIx64 " failed\n", qpn, addr);
        return;
    }
    ernic_qp_set_reg(c, qpn, ERNIC_RQCI, ci);
    trace_ernic_rq_record(qpn, addr, ci);
}

/*
 * Take the RQ buffer at STATRQPIDBi for a new message, sampling its
 * address, size and the RQ depth once (they hold until the message ends,
 * whatever the guest writes meanwhile). False when there is none: the RQ
 * holds depth - 1 buffers, STATRQPIDBi == RQCIi means empty (both modulo
 * the depth; docs/engine.md), and a depth below 2 or a size of 0 means no
 * RQ at all.
 */
bool ernic_rq_take(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t depth = ernic_rq_depth(c, qpn);
    uint32_t size = ernic_rq_bufsize(c, qpn);
    bool wqe = ernic_ext_rx_wqe_on(c, qpn);
    uint32_t pi, ci;

    if (ernic_xrc_tgt(c, qpn)) {
        /* An XRC target has no ring: the WQE is its request's SRQ's. */
        return ernic_xrc_take(c, qpn);
    }
    if (depth < 2 || (!size && !wqe)) {
        return false;
    }
    pi = ernic_qp_reg(c, qpn, ERNIC_STATRQPIDB) % depth;
    ci = ernic_qp_reg(c, qpn, ERNIC_RQCI) % depth;
    if ((pi + 1) % depth == ci) {
        ernic_rq_record(c, qpn);
        ci = ernic_qp_reg(c, qpn, ERNIC_RQCI) % depth;
    }
    if ((pi + 1) % depth == ci) {
        return false;
    }
    /* With an SRQ the QP's ring only reports; the WQE is the SRQ's. */
    qp->rx_srq = wqe && ernic_srq_attached(c, qpn);
    if (qp->rx_srq &&
        !ernic_srq_take(c, qpn, ernic_srq_of(c, qpn), &qp->rq_addr)) {
        qp->rx_srq = false;
        return false;
    }
    qp->rq_depth = depth;
    qp->rq_size = size;
    qp->rq_off = 0;
    qp->rq_slot = pi;
    qp->rq_held = true;
    /* An ERNIC-X receive WQE is a 64-byte slot (docs/extension.md). */
    qp->rx_wqe = wqe;
    qp->rx_status = ERNIC_RXMETA_ST_OK;
    if (!qp->rx_srq) {
        qp->rq_addr = ernic_qp_addr(c, qpn, ERNIC_RQBA, ERNIC_RQBAMSB) +
                      (uint64_t)pi * (wqe ? ERNIC_RWQE_SIZE : size);
    }
    return true;
}

/*
 * The buffer taken by ernic_rq_take() is full: advance STATRQPIDBi, write
 * it to RQWPTRDBADDi and raise the RQ interrupt (PG332 pp.18-19, p.60).
 * False when the doorbell write failed.
 */
bool ernic_rq_produce(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t depth = qp->rq_depth, pi;
    uint64_t db, next;
    uint8_t buf[4];
    bool ok = true;

    qp->rq_held = false;
    if (ernic_xrc_tgt(c, qpn) || !depth) {
        /*
         * An XRC target has no ring (and rq_depth 0): its WQE was
         * written back into its SRQ already (ernic_rq_meta()).
         */
        ernic_irq_raise_qp(c, ERNIC_INT_RQ_PKT_RECEIVED, qpn);
        return true;
    }
    pi = (ernic_qp_reg(c, qpn, ERNIC_STATRQPIDB) + 1) % depth;
    db = ernic_qp_addr(c, qpn, ERNIC_RQWPTRDBADD, ERNIC_RQWPTRDBADDMSB);
    next = ernic_qp_addr(c, qpn, ERNIC_RQBA, ERNIC_RQBAMSB) +
           (uint64_t)pi * (qp->rx_wqe ? ERNIC_RWQE_SIZE : qp->rq_size);
    ernic_qp_set_reg(c, qpn, ERNIC_STATRQPIDB, pi);
    ernic_qp_set_reg(c, qpn, ERNIC_STATRQBUFCA, next & 0xffffff00u);
    ernic_qp_set_reg(c, qpn, ERNIC_STATRQBUFCAMSB, next >> 32);
    trace_ernic_rq_produce(qpn, pi);
    if (db) {
        stl_le_p(buf, pi);
        ok = ernic_dma_write(c, db, buf, sizeof(buf));
    }
    if (qpn == ERNIC_QP_GSI) {
        ernic_irq_raise(c, ERNIC_INT_MAD_RECEIVED);
    }
    ernic_irq_raise_qp(c, ERNIC_INT_RQ_PKT_RECEIVED, qpn);
    return ok;
}

/*
 * The metadata entry of RQ slot @slot for the message whose last packet
 * is @pkt, @len bytes long (docs/extension.md, "Receive metadata"). False
 * when its DMA failed. Nothing to do for a QP without metadata.
 */
bool ernic_rq_meta(ErnicCore *c, uint32_t qpn, uint32_t slot,
                   const ErnicPkt *pkt, uint32_t len)
{
    const uint32_t *x = c->qp[qpn].ext_regs;
    uint8_t m[ERNIC_RXMETA_SIZE] = { 0 };
    uint64_t ba;

    if (!ernic_ext_rx_meta_on(c, qpn) && !ernic_xrc_tgt(c, qpn)) {
        return true;
    }
    ba = (uint64_t)x[ERNIC_W(ERNIC_RXMETABAMSB)] << 32 |
         x[ERNIC_W(ERNIC_RXMETABA)];
    stl_le_p(&m[ERNIC_RXMETA_LEN], len);
    m[ERNIC_RXMETA_OPCODE] = pkt->opcode;
    m[ERNIC_RXMETA_FLAGS] = ERNIC_FIELD_DP32(0, ERNIC_RXMETA_STATUS_MASK,
                                             c->qp[qpn].rx_status);
    if (qpn == ERNIC_QP_GSI) {
        /* A MAD: where it came from, and how to read its IP area. */
        stl_le_p(&m[ERNIC_RXMETA_DATA], pkt->deth_sqpn);
        m[ERNIC_RXMETA_FLAGS] |= pkt->ipv6 ? ERNIC_RXMETA_F_IPV6 : 0;
    } else if (pkt->flags & ERNIC_OPF_IMM) {
        m[ERNIC_RXMETA_FLAGS] |= ERNIC_RXMETA_F_IMM;
        stl_le_p(&m[ERNIC_RXMETA_DATA], pkt->imm);
    } else if ((pkt->flags & ERNIC_OPF_IETH) && c->qp[qpn].rx_inv) {
        m[ERNIC_RXMETA_FLAGS] |= ERNIC_RXMETA_F_INV;
        stl_le_p(&m[ERNIC_RXMETA_DATA], pkt->imm);
    }
    if (qpn != ERNIC_QP_GSI && (pkt->flags & ERNIC_OPF_DETH)) {
        /* A UD receive: its source QP, and how to read its GRH area. */
        stl_le_p(&m[ERNIC_RXMETA_SQPN], pkt->deth_sqpn);
        m[ERNIC_RXMETA_FLAGS] |= pkt->ipv6 ? ERNIC_RXMETA_F_IPV6 : 0;
    }
    if (c->qp[qpn].rx_srq) {
        m[ERNIC_RXMETA_FLAGS] |= ERNIC_RXMETA_F_SRQ;
        stw_le_p(&m[ERNIC_RXMETA_SRQ_WQE], c->qp[qpn].rx_srq_wqe);
    }
    trace_ernic_ext_rx_meta(qpn, slot, pkt->opcode, len,
                            m[ERNIC_RXMETA_FLAGS]);
    if (ernic_xrc_tgt(c, qpn)) {
        return ernic_xrc_write_back(c, qpn, m);
    }
    return ernic_dma_write(c, ba + (uint64_t)slot * ERNIC_RXMETA_SIZE, m,
                           sizeof(m));
}

/*
 * Sample the receive WQE at @addr for the SEND that takes its slot: each
 * SGE is read once, its L_Key checked once for local write. A failed key
 * makes the status a protection error (the caller reacts). Sets rq_size
 * to the bytes the SGEs hold. False when the WQE could not be read.
 */
bool ernic_rq_wqe_take(ErnicCore *c, uint32_t qpn, uint64_t addr)
{
    ErnicQP *qp = &c->qp[qpn];
    uint8_t w[ERNIC_RWQE_SIZE];
    uint64_t total;
    bool bad;

    if (!ernic_dma_read(c, addr, w, sizeof(w))) {
        return false;
    }
    total = ernic_mr_sge_take(c, qpn, w, ERNIC_RWQE_SGES,
                              ERNIC_MRACC_LOCAL_WRITE, qp->rx_sge, &bad);
    if (bad || !ernic_srq_wqe_ok(c, qpn, w)) {
        qp->rx_status = ERNIC_RXMETA_ST_PROT;
    }
    qp->rq_size = MIN(total, UINT32_MAX);
    return true;
}

/*
 * @len bytes at offset @off of the message in the slot ernic_rq_take()
 * took: its RQ buffer, or the SGEs its receive WQE gave, both through
 * the one payload path (ernic_mr_msg_dma()). The caller has checked that
 * they fit (rq_size).
 */
bool ernic_rq_write(ErnicCore *c, uint32_t qpn, uint64_t off,
                    const uint8_t *buf, uint32_t len)
{
    ErnicQP *qp = &c->qp[qpn];

    return ernic_mr_msg_dma(c, qp->rx_sge, qp->rx_wqe ? ERNIC_RWQE_SGES : 0,
                            qp->rq_addr, qp->rq_size, off, NULL, buf, len);
}

/* QP1's IP area and a UD receive's GRH area are the same 40 bytes. */
QEMU_BUILD_BUG_ON(ERNIC_GSI_IP_AREA != ERNIC_UD_GRH_AREA);

/*
 * The 40-byte IP area before a datagram's payload (IBTA 11.4.1.2, the
 * RoCEv2 annex A17.4.5.2): an IPv6 header, or 20 zero bytes and the IPv4
 * header.
 */
void ernic_rq_dgram_area(const ErnicPkt *pkt, uint8_t *area)
{
    size_t iphl = pkt->ipv6 ? ERNIC_IPV6_HLEN : ERNIC_IPV4_HLEN;

    memset(area, 0, ERNIC_UD_GRH_AREA);
    memcpy(area + ERNIC_UD_GRH_AREA - iphl, pkt->frame + pkt->l3, iphl);
}

/*
 * A datagram (QP1's MAD, a UD QP's message) into the receive WQE of the
 * slot it took: the IP area @area, then the payload, over its SGEs, and
 * the metadata entry with the length of both. A refused WQE completes
 * its slot with the status and no data: datagrams are unreliable, so
 * there is no NAK and no FATAL. False when the WQE or a DMA failed: the
 * datagram is lost.
 */
bool ernic_rq_place_dgram(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                          const uint8_t *area)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t len = ERNIC_UD_GRH_AREA + pkt->paylen;

    if (!ernic_rq_wqe_take(c, qpn, qp->rq_addr)) {
        return false;
    }
    if (!qp->rx_status && len > qp->rq_size) {
        qp->rx_status = ERNIC_RXMETA_ST_LEN;
    }
    if (!qp->rx_status &&
        (!ernic_rq_write(c, qpn, 0, area, ERNIC_UD_GRH_AREA) ||
         !ernic_rq_write(c, qpn, ERNIC_UD_GRH_AREA, pkt->payload,
                         pkt->paylen))) {
        return false;
    }
    return ernic_rq_meta(c, qpn, qp->rq_slot, pkt, len);
}
