/*
 * ERNIC-X UC QPs (docs/extension.md, "UC QPs"): the unreliable connected
 * service of IBTA 9.7 on the RC engines. The requester sends SEND and
 * WRITE (with Immediate) as UC opcodes, without AckReq, and a WQE
 * completes once its last packet is out; the responder executes them as
 * RC requests but never answers, and a packet lost or refused drops its
 * whole message (IBTA 9.7.5.1.1 for UC). Not PG332: with
 * EXTCTRL.UC off no QP is a UC QP and UC opcodes stay unknown.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * Is QP @qpn a UC QP (EXTQPCONFi[6] with the feature)? A QP that is
 * also marked UD is a UD QP: ernic_ud_qp() is asked first.
 */
bool ernic_uc_qp(ErnicCore *c, uint32_t qpn)
{
    uint32_t conf;

    if (qpn == ERNIC_QP_GSI || !ernic_ext_on(c, ERNIC_EXT_F_UC)) {
        return false;
    }
    conf = c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)];
    return (conf & ERNIC_EXTQPCONF_UC) && !(conf & ERNIC_EXTQPCONF_UD);
}

/* UC carries SEND and RDMA WRITE, with or without Immediate (IBTA 9.7). */
bool ernic_uc_opcode_ok(uint8_t opcode)
{
    return opcode == ERNIC_OP_SEND || opcode == ERNIC_OP_SEND_IMM ||
           opcode == ERNIC_OP_WRITE || opcode == ERNIC_OP_WRITE_IMM;
}

/*
 * A packet for UC QP @qpn, parsed again into @uc as a UC opcode's. False
 * when it is none (an RC request, an ACK, a UD datagram): dropped, as a
 * UC QP takes nothing else.
 */
bool ernic_uc_accept(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                     ErnicPkt *uc)
{
    *uc = *pkt;
    if (ernic_wire_parse_uc(uc) && (uc->flags & ERNIC_OPF_REQ) &&
        !(uc->flags & (ERNIC_OPF_READ | ERNIC_OPF_IETH))) {
        return true;
    }
    ernic_uc_drop(c, qpn, pkt, "not a UC SEND or WRITE");
    return false;
}

/*
 * Drop @pkt and the message it belongs to: the responder waits for the
 * next FIRST or ONLY packet (IBTA 9.7.5.1.1 for UC). A SEND's receive
 * WQE stays taken and the next SEND fills it (ernic_resp_take_slot()).
 */
void ernic_uc_drop(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                   const char *why)
{
    trace_ernic_uc_drop(qpn, pkt->opcode, pkt->psn, why);
    c->qp[qpn].rx_msg = ERNIC_RX_IDLE;
    ernic_gcsr_count16(c, ERNIC_INALLDRPPKTCNT, true);
}

/*
 * The PSN check of a UC responder: a FIRST or ONLY packet starts a
 * message whatever its PSN, and one in progress is abandoned; any other
 * packet must be the next expected, or it and the rest of its message
 * are dropped. There is no duplicate and no NAK: nothing is sent again.
 */
bool ernic_uc_check_psn(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t epsn = (ernic_qp_reg(c, qpn, ERNIC_LSTRQREQ) + 1) &
                    ERNIC_PSN_MASK;

    if (pkt->flags & ERNIC_OPF_FIRST) {
        if (pkt->psn != epsn || qp->rx_msg != ERNIC_RX_IDLE) {
            trace_ernic_uc_resync(qpn, pkt->psn, epsn, qp->rx_msg);
        }
        qp->rx_msg = ERNIC_RX_IDLE;
        return true;
    }
    if (pkt->psn != epsn || qp->rx_msg == ERNIC_RX_IDLE) {
        ernic_uc_drop(c, qpn, pkt, "a lost packet before it");
        return false;
    }
    return true;
}
