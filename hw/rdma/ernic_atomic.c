/*
 * ERNIC-X atomics (docs/extension.md, "Atomics"): CmpSwap and FetchAdd
 * of IBTA 9.4.5 on RC QPs. The requester sends one request packet with
 * an AtomicETH and takes the ATOMIC ACKNOWLEDGE's original value into
 * the WQE's 8-byte buffer; the responder executes the request once,
 * keeps the value it found among its READ/atomic resources and answers
 * a duplicate with that value, never executing it again (IBTA 9.7.5.1.3
 * and C9-89). Not PG332: with EXTCTRL.ATOMIC off the atomic opcodes stay
 * unknown, and a WQE with them has a reserved opcode.
 *
 * The device executes each atomic whole between two of its own accesses
 * (the engine is single-threaded), so atomics are atomic against the
 * device's own operations: IBV_ATOMIC_HCA, as rxe.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

/* An RC QP (not QP1, UC or UD) with the feature on. */
bool ernic_atomic_qp(ErnicCore *c, uint32_t qpn)
{
    return qpn != ERNIC_QP_GSI && ernic_ext_on(c, ERNIC_EXT_F_ATOMIC) &&
           !ernic_ud_qp(c, qpn) && !ernic_uc_qp(c, qpn);
}

/*
 * Does QP @qpn execute its peer's atomics: an RC QP with its remote
 * atomic access, EXTQPCONFi[7] (IBTA 10.2.4's QP access, which rxe
 * checks too)?
 */
bool ernic_atomic_responder(ErnicCore *c, uint32_t qpn)
{
    return ernic_atomic_qp(c, qpn) &&
           (c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
            ERNIC_EXTQPCONF_ATOMIC);
}

/*
 * A request for QP @qpn parsed again into @at as an atomic's. False when
 * it is none, or the QP takes no atomics: it goes on as the unknown
 * opcode it was, NAK Invalid Request and FATAL 0x04.
 */
bool ernic_atomic_accept(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                         ErnicPkt *at)
{
    if (pkt->opcode != IB_OPC_CMP_SWAP && pkt->opcode != IB_OPC_FETCH_ADD) {
        return false;
    }
    if (!ernic_atomic_responder(c, qpn)) {
        return false;
    }
    *at = *pkt;
    return ernic_wire_parse_atomic(at);
}

/*
 * An atomic WQE as fetched: on an RC QP, its buffer exactly the 8-byte
 * result (IBTA 10.7.2.3: one SGE of 8 bytes). Else FATAL 0x05, nothing
 * sent, as for a refused keyed SGE.
 */
bool ernic_atomic_wqe_ok(ErnicCore *c, uint32_t qpn, const ErnicOsq *e)
{
    if (e->len == ERNIC_ATOMIC_LEN && ernic_atomic_qp(c, qpn)) {
        return true;
    }
    ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                      "atomic WQE %u names %u bytes, not 8, or the QP is "
                      "not RC: FATAL", e->slot, e->len);
    return false;
}

uint8_t ernic_atomic_bth_opcode(const ErnicOsq *e)
{
    return e->opcode == ERNIC_OP_ATOMIC_CMP_SWP ? IB_OPC_CMP_SWAP :
                                                  IB_OPC_FETCH_ADD;
}

/* The AtomicETH of WQE @e at @p; returns its end. */
uint8_t *ernic_atomic_put_eth(uint8_t *p, const ErnicOsq *e)
{
    ernic_wire_put_atomiceth(p, e->raddr, e->rkey,
                             ldq_le_p(&e->sdata[ERNIC_WQE_ATOMIC_SWAP -
                                                ERNIC_WQE_SDATA]),
                             ldq_le_p(&e->sdata[ERNIC_WQE_ATOMIC_COMPARE -
                                                ERNIC_WQE_SDATA]));
    return p + ERNIC_ATOMICETH_LEN;
}

/*
 * The original value an ATOMIC ACKNOWLEDGE carries, into the WQE's
 * buffer as a little-endian word (as the responder's memory held it).
 * False on a DMA error.
 */
bool ernic_atomic_take_ack(ErnicCore *c, const ErnicOsq *e,
                           const ErnicPkt *pkt)
{
    uint8_t v[ERNIC_ATOMIC_LEN];

    stq_le_p(v, pkt->orig);
    return ernic_mr_msg_dma(c, e->sge, e->nsge, e->laddr, e->len, 0, NULL, v,
                            sizeof(v));
}

/*
 * Check an atomic request: an 8-byte aligned address (else NAK Invalid
 * Request, IBTA C9-88.1) in a region that allows remote atomics (NAK
 * Remote Access). 0 and the checked access in @a, or the FATAL code.
 */
static uint16_t ernic_atomic_check(ErnicCore *c, uint32_t qpn,
                                   const ErnicPkt *pkt, ErnicMrAccess *a,
                                   uint8_t *nak)
{
    uint16_t code;

    if (pkt->va & (ERNIC_ATOMIC_LEN - 1)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u atomic at 0x%" PRIx64
                      " is not 8-byte aligned\n", qpn, pkt->va);
        *nak = IB_NAK_INVALID_REQ;
        return ERNIC_FATAL_RETH_LENGTH;
    }
    code = ernic_mr_check_atomic(c, qpn, pkt->rkey, pkt->va, a);
    *nak = IB_NAK_REMOTE_ACCESS;
    return code;
}

uint16_t ernic_atomic_execute(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                              uint64_t *orig, uint8_t *nak)
{
    ErnicMrAccess a;
    uint8_t v[ERNIC_ATOMIC_LEN];
    uint64_t val;
    uint16_t code = ernic_atomic_check(c, qpn, pkt, &a, nak);

    if (code) {
        return code;
    }
    *nak = IB_NAK_REMOTE_OP;
    if (!ernic_mr_read(c, &a, 0, v, sizeof(v))) {
        trace_ernic_qp_dma_fault(qpn, "atomic target (read)");
        return ERNIC_FATAL_RESPONSE_HANDLER;
    }
    *orig = val = ldq_le_p(v);
    if (pkt->opcode == IB_OPC_FETCH_ADD) {
        val += pkt->swap_add;
    } else if (val == pkt->compare) {
        val = pkt->swap_add;
    }
    trace_ernic_atomic_exec(qpn, pkt->opcode, pkt->psn, pkt->va, *orig, val);
    stq_le_p(v, val);
    if (val != *orig && !ernic_mr_write(c, &a, 0, v, sizeof(v))) {
        trace_ernic_qp_dma_fault(qpn, "atomic target (write)");
        return ERNIC_FATAL_RESPONSE_HANDLER;
    }
    return 0;
}

/* The ATOMIC ACKNOWLEDGE of resource @r: AETH, then AtomicAckETH. */
void ernic_atomic_send_ack(ErnicCore *c, uint32_t qpn, const ErnicReadRes *r)
{
    uint8_t *f = c->frame;
    ErnicPath path;
    size_t end;

    ernic_qp_path(c, qpn, &path);
    end = ernic_wire_build(f, &path, IB_OPC_ATOMIC_ACK, r->psn, false,
                           ERNIC_AETH_LEN + ERNIC_ATOMICACKETH_LEN, 0);
    ernic_wire_put_aeth(f + end, IB_AETH_CREDIT_INVALID, r->msn);
    stq_be_p(f + end + ERNIC_AETH_LEN, r->orig);
    end = ernic_wire_finish(f, end + ERNIC_AETH_LEN + ERNIC_ATOMICACKETH_LEN,
                            0, path.ipv6);
    trace_ernic_tx_atomic_ack(qpn, r->psn, r->orig, r->replay);
    ernic_gcsr_count16(c, ERNIC_OUTAMPKTCNT, false);
    ernic_link_xmit(c, qpn, f, end);
}
