/*
 * ERNIC: the calls that go up the layers (docs/engine.md, "Layers").
 *
 * Device files call only files below their own, by name. The few things
 * a lower layer must make happen above it go through this header, as
 * rxe's tasks do:
 *
 * - ernic_up_kick(): a QP has transmit work (a doorbell, an ACK that
 *   moved the window, a READ to answer). It schedules the transmit
 *   bottom half (ernic_engine_tx_bh()), which runs the QP's READ
 *   responder and requester; nothing is called at once. ernic_up_pend()
 *   is the same without the trace, for work left by a doorbell served
 *   in its MMIO write.
 * - ernic_up_rx(): a frame came off the link (ernic_link.c) and goes to
 *   the receive path (ernic_net_rx()).
 * - ernic_up_qp_stop(): a QP went FATAL (ernic_qp.c); its engines stop
 *   and flush (ernic_engine_stop_qp()) before FATAL is reported.
 *
 * The last two call through ErnicCore's up_rx and up_qp_stop, which the
 * device's top (ernic_core_realize()) sets once. Timers and bottom
 * halves are created there too, with the functions of the layer they
 * belong to. Included by ernic_core.h, after ErnicCore.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_ERNIC_UP_H
#define HW_RDMA_ERNIC_UP_H

#include "qemu/main-loop.h"
#include "trace.h"

/*
 * QP @qpn has transmit work for the bottom half: RESPHNDSTS[16] reads 0
 * until it is done.
 */
static inline void ernic_up_pend(ErnicCore *c, uint32_t qpn)
{
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

static inline void ernic_up_kick(ErnicCore *c, uint32_t qpn)
{
    trace_ernic_sq_doorbell(qpn, ernic_qp_reg(c, qpn, ERNIC_SQPI));
    ernic_up_pend(c, qpn);
}

static inline void ernic_up_rx(ErnicCore *c, const uint8_t *buf, size_t len)
{
    c->up_rx(c, buf, len);
}

static inline void ernic_up_qp_stop(ErnicCore *c, uint32_t qpn)
{
    c->up_qp_stop(c, qpn);
}

#endif /* HW_RDMA_ERNIC_UP_H */
