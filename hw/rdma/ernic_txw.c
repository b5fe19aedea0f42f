/*
 * ERNIC transmit window (docs/engine.md, choice 12): how many request
 * packets a QP may have sent beyond the oldest unacknowledged PSN, and
 * how the ACKs, retries and timeouts of the completer move it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * Request packets sent beyond the oldest unacknowledged PSN. Hardware is
 * bounded by its write-retry buffers (PG332 Table 2-6: 512 of 4 KiB, one
 * per packet); here the window also adapts to the link, as TCP's does:
 * it grows while ACKs come and halves on every retry, so that bursts and
 * whole-WQE retransmissions fit what a datagram socket on the way holds
 * (-netdev dgram drops the excess), while a stream socket, which holds
 * them all, gets the full window (docs/engine.md, choice 12).
 */
uint32_t ernic_txw_size(ErnicCore *c, uint32_t qpn)
{
    return c->qp[qpn].tx_window;
}

void ernic_txw_reset(ErnicQP *qp)
{
    qp->tx_window = ERNIC_TXW_START;
    qp->tx_ssthresh = ERNIC_TXW_MAX;
    qp->tx_resend = false;
}

/* The PSN of the next request packet to send. */
static uint32_t ernic_txw_next_psn(ErnicQP *qp)
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
uint32_t ernic_txw_base(ErnicCore *c, uint32_t qpn)
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
void ernic_txw_rewound(ErnicQP *qp)
{
    uint32_t una = ernic_qp_reg(qp->core, qp->qpn, ERNIC_STATRESPSN);

    qp->tx_base = ernic_txw_next_psn(qp);
    qp->tx_resend = ernic_psn_diff(qp->tx_base, una & ERNIC_PSN_MASK) < 0;
}

/*
 * An ACK while packets the peer has are sent again: one that moves
 * nothing (@dup) answers one of them, as each asks for an ACK
 * (ernic_req_send_packet()); one that moves STATRESPSNi answers all
 * before it. Never beyond what was sent. True if the window moved.
 */
bool ernic_txw_answered(ErnicQP *qp, bool dup)
{
    uint32_t next = ernic_txw_next_psn(qp), base;

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
void ernic_txw_grow(ErnicQP *qp, uint32_t acked)
{
    uint32_t w = qp->tx_window;

    w += w < qp->tx_ssthresh ? acked : 1;
    qp->tx_window = MIN(w, ERNIC_TXW_MAX);
}

/* Something was lost: half the window, and grow slowly from there. */
void ernic_txw_shrink(ErnicQP *qp)
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
bool ernic_txw_stalled(ErnicQP *qp)
{
    uint32_t una = ernic_qp_reg(qp->core, qp->qpn, ERNIC_STATRESPSN);
    uint32_t next = ernic_txw_next_psn(qp);

    if (!qp->tx_resend || next == qp->tx_base ||
        ernic_psn_diff(next, una & ERNIC_PSN_MASK) >= 0) {
        return false;
    }
    qp->tx_base = next;
    return true;
}
