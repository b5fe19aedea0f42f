/*
 * ERNIC-X memory placement (docs/extension.md, "Placement"): RDMA FLUSH
 * and RDMA ATOMIC WRITE of IBTA 1.5 annex A19 on RC QPs. Each is one
 * request packet that takes one of the responder's READ/atomic
 * resources and is answered with an RDMA READ Response Only of no
 * payload, as rxe and mlx5 answer it; the requester completes the WQE
 * on that response, as a READ's. Not PG332: with EXTCTRL.PLACE off both
 * opcodes stay reserved, and a WQE with them has a reserved opcode.
 *
 * The device's DMA into guest memory is done when a packet's processing
 * ends, so each WRITE accepted before a FLUSH is globally visible when
 * the FLUSH is executed: global placement needs a barrier, never a wait.
 * No memory behind the device is persistent, so a FLUSH that asks for
 * persistence is refused as an access no region grants.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

/* An RC QP (not QP1, UC, UD or XRC) with the feature on. */
bool ernic_place_qp(ErnicCore *c, uint32_t qpn)
{
    return qpn != ERNIC_QP_GSI && ernic_ext_on(c, ERNIC_EXT_F_PLACE) &&
           !ernic_ud_qp(c, qpn) && !ernic_uc_qp(c, qpn) &&
           !ernic_qp_xrc(c, qpn);
}

/*
 * A request for QP @qpn parsed again into @pl as a FLUSH's or ATOMIC
 * WRITE's. False when it is neither, or the QP takes neither: it goes on
 * as the reserved opcode it was, NAK Invalid Request and FATAL 0x04.
 */
bool ernic_place_accept(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                        ErnicPkt *pl)
{
    if (pkt->opcode != IB_OPC_FLUSH && pkt->opcode != IB_OPC_ATOMIC_WRITE) {
        return false;
    }
    if (!ernic_place_qp(c, qpn)) {
        return false;
    }
    *pl = *pkt;
    return ernic_wire_parse_place(pl);
}

/*
 * A FLUSH or ATOMIC WRITE WQE as fetched: on an RC QP, naming no local
 * data (LENGTH 0, no SGE). Else FATAL 0x05, nothing sent, as for a
 * refused keyed SGE.
 */
bool ernic_place_wqe_ok(ErnicCore *c, uint32_t qpn, const ErnicOsq *e)
{
    if (!e->len && !e->nsge && ernic_place_qp(c, qpn)) {
        return true;
    }
    ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                      "WQE %u (opcode 0x%x) names %u bytes or %u SGEs, or "
                      "the QP is not RC: FATAL", e->slot, e->opcode, e->len,
                      e->nsge);
    return false;
}

uint8_t ernic_place_bth_opcode(const ErnicOsq *e)
{
    return e->opcode == ERNIC_OP_FLUSH ? IB_OPC_FLUSH : IB_OPC_ATOMIC_WRITE;
}

/* Bytes after the BTH: FETH and RETH, or RETH and the 8 bytes. */
size_t ernic_place_ext_len(const ErnicOsq *e)
{
    return ERNIC_RETH_LEN + (e->opcode == ERNIC_OP_FLUSH ? ERNIC_FETH_LEN :
                                                           ERNIC_AWRITE_LEN);
}

/* The headers (and ATOMIC WRITE's 8 bytes) of WQE @e at @p; their end. */
uint8_t *ernic_place_put_ext(uint8_t *p, const ErnicOsq *e)
{
    const uint8_t *sd = e->sdata;

    if (e->opcode == ERNIC_OP_FLUSH) {
        stl_be_p(p, ldl_le_p(sd + ERNIC_WQE_FLUSH_FETH - ERNIC_WQE_SDATA));
        ernic_wire_put_reth(p + ERNIC_FETH_LEN, e->raddr, e->rkey,
                            ldl_le_p(sd + ERNIC_WQE_FLUSH_LEN -
                                     ERNIC_WQE_SDATA));
    } else {
        ernic_wire_put_reth(p, e->raddr, e->rkey, ERNIC_AWRITE_LEN);
        memcpy(p + ERNIC_RETH_LEN, sd + ERNIC_WQE_AWRITE_DATA -
               ERNIC_WQE_SDATA, ERNIC_AWRITE_LEN);
    }
    return p + ernic_place_ext_len(e);
}

/*
 * A FLUSH's checks, in this order: a FETH of IBTA's values (else NAK
 * Invalid Request, FATAL 0x04); no persistence (NAK Remote Access, as a
 * region without that access: FATAL 0x15); the QP's FLUSH access,
 * EXTQPCONFi[8] (as an opcode the QP does not take, 0x04); the region's
 * (0x15, 0x16, 0x17).
 */
static uint16_t ernic_place_flush(ErnicCore *c, uint32_t qpn,
                                  const ErnicPkt *pkt, uint8_t *nak)
{
    uint32_t plt = pkt->feth & ERNIC_FETH_PLT_MASK;
    uint32_t sel = (pkt->feth & ERNIC_FETH_SEL_MASK) >> ERNIC_FETH_SEL_SHIFT;
    uint16_t code;

    *nak = IB_NAK_INVALID_REQ;
    if (!plt || (plt & ~(ERNIC_FETH_PLT_GLOBAL | ERNIC_FETH_PLT_PERSISTENT)) ||
        sel > ERNIC_FETH_SEL_MR ||
        (pkt->feth & ~(ERNIC_FETH_PLT_MASK | ERNIC_FETH_SEL_MASK))) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u FLUSH with reserved "
                      "FETH 0x%x\n", qpn, pkt->feth);
        return ERNIC_FATAL_UNSUPPORTED_OPCODE;
    }
    if (plt & ERNIC_FETH_PLT_PERSISTENT) {
        *nak = IB_NAK_REMOTE_ACCESS;
        return ERNIC_FATAL_RKEY;
    }
    if (!(c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
          ERNIC_EXTQPCONF_FLUSH)) {
        return ERNIC_FATAL_UNSUPPORTED_OPCODE;
    }
    *nak = IB_NAK_REMOTE_ACCESS;
    code = ernic_mr_check_flush(c, qpn, pkt->rkey, pkt->va, pkt->dmalen,
                                sel == ERNIC_FETH_SEL_MR);
    if (!code) {
        /* Every accepted write is in memory: order, do not wait. */
        smp_mb();
    }
    return code;
}

/*
 * An ATOMIC WRITE: 8 bytes (else NAK Invalid Request, FATAL 0x12) at an
 * 8-byte aligned address (else 0x16, as an atomic's) of a region with
 * remote write access (0x15, 0x16, 0x17), written in one DMA between the
 * device's own accesses, as atomics are (IBV_ATOMIC_HCA).
 */
static uint16_t ernic_place_atomic_write(ErnicCore *c, uint32_t qpn,
                                         const ErnicPkt *pkt, uint8_t *nak)
{
    ErnicMrAccess a;
    uint16_t code;

    *nak = IB_NAK_INVALID_REQ;
    if (pkt->dmalen != ERNIC_AWRITE_LEN) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u ATOMIC WRITE of %u "
                      "bytes, not 8\n", qpn, pkt->dmalen);
        return ERNIC_FATAL_WRITE_LENGTH;
    }
    if (pkt->va & (ERNIC_AWRITE_LEN - 1)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u ATOMIC WRITE at 0x%"
                      PRIx64 " is not 8-byte aligned\n", qpn, pkt->va);
        return ERNIC_FATAL_RETH_LENGTH;
    }
    *nak = IB_NAK_REMOTE_ACCESS;
    code = ernic_mr_check_rkey(c, qpn, pkt->rkey, pkt->va, ERNIC_AWRITE_LEN,
                               true, &a);
    if (code) {
        return code;
    }
    *nak = IB_NAK_REMOTE_OP;
    if (!ernic_mr_write(c, &a, 0, pkt->payload, ERNIC_AWRITE_LEN)) {
        trace_ernic_qp_dma_fault(qpn, "ATOMIC WRITE target");
        return ERNIC_FATAL_RESPONSE_HANDLER;
    }
    return 0;
}

/*
 * Execute a FLUSH or ATOMIC WRITE accepted in sequence: 0, or the FATAL
 * code with the NAK in @nak. A duplicate never comes here: it is
 * answered without executing it again (ernic_resp.c).
 */
uint16_t ernic_place_execute(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                             uint8_t *nak)
{
    trace_ernic_place_exec(qpn, pkt->opcode, pkt->psn, pkt->va, pkt->dmalen,
                           pkt->feth);
    if (pkt->opcode == IB_OPC_FLUSH) {
        return ernic_place_flush(c, qpn, pkt, nak);
    }
    return ernic_place_atomic_write(c, qpn, pkt, nak);
}
