/*
 * ERNIC-X SQ doorbell records (docs/extension.md, "Doorbell records").
 *
 * A QP with EXTQPCONFi[11] takes its SQ producer index from a 4-byte
 * record in host memory each time SQPIi (or its doorbell page) is
 * written, so the write need carry nothing. That lets the device put an
 * ioeventfd on the register (property db-eventfd, on by default under
 * KVM): the vCPU's doorbell is then an eventfd signal in the host kernel
 * instead of an exit to QEMU, and the main loop serves the QP, as
 * virtio's notifications are served. Not PG332: with DBREC off SQPIi
 * is PG332's register, and no ioeventfd exists.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "ernic_core.h"
#include "trace.h"

static uint32_t ernic_dbrec_reg(ErnicCore *c, uint32_t qpn, hwaddr off)
{
    return c->qp[qpn].ext_regs[ERNIC_W(off)];
}

/* Does QP @qpn take SQPIi from its record? */
static bool ernic_dbrec_on(ErnicCore *c, uint32_t qpn)
{
    return ernic_ext_on(c, ERNIC_EXT_F_DBREC) &&
           (ernic_dbrec_reg(c, qpn, ERNIC_EXTQPCONF) & ERNIC_EXTQPCONF_DBREC);
}

/*
 * SQPIi from the record, read once. False when it cannot be read: SQPIi
 * keeps @old and an enabled QP goes FATAL 0x05, as when a WQE cannot be
 * fetched (either way the SQ cannot be followed); a disabled QP only
 * logs it.
 */
static bool ernic_dbrec_take(ErnicCore *c, uint32_t qpn, uint32_t old)
{
    uint64_t addr;
    uint32_t pi;

    if (!ernic_qp_dbrec_read(c, qpn, 0, &addr, &pi)) {
        ernic_qp_set_reg(c, qpn, ERNIC_SQPI, old);
        if (ernic_qp_reg(c, qpn, ERNIC_QPCONF) & ERNIC_QPCONF_QP_EN) {
            ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                              "doorbell record read from 0x%" PRIx64
                              " failed", addr);
        } else {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u doorbell record "
                          "read from 0x%" PRIx64 " failed\n", qpn, addr);
        }
        return false;
    }
    ernic_qp_set_reg(c, qpn, ERNIC_SQPI, pi);
    trace_ernic_dbrec_take(qpn, addr, pi);
    return true;
}

/*
 * SQPIi was written (@old: its value before), or the QP's ioeventfd
 * fired: with a record, SQPIi becomes the record's index; then the QP is
 * served as for any SQPIi write.
 */
void ernic_dbrec_sqpi_written(ErnicCore *c, uint32_t qpn, uint32_t old)
{
    c->qp[qpn].db_warned = false;
    if (ernic_dbrec_on(c, qpn) && !ernic_dbrec_take(c, qpn, old)) {
        return;
    }
    ernic_engine_doorbell(c, qpn);
}

/* A signal of QP @qpn's ioeventfd is served: an SQPIi write that was. */
static void ernic_dbrec_signalled(ErnicCore *c, uint32_t qpn)
{
    trace_ernic_dbrec_notified(qpn);
    ernic_dbrec_sqpi_written(c, qpn, ernic_qp_reg(c, qpn, ERNIC_SQPI));
}

/*
 * The ioeventfd fired: from the main loop, as a timer runs, outside the
 * re-entrancy guard (ernic_dma_timer_enter()).
 */
static void ernic_dbrec_notified(EventNotifier *e)
{
    ErnicQP *qp = container_of(e, ErnicQP, db_notifier);

    if (!event_notifier_test_and_clear(e)) {
        return;
    }
    ernic_dma_timer_enter(qp->core);
    ernic_dbrec_signalled(qp->core, qp->qpn);
    ernic_dma_timer_exit(qp->core);
}

/*
 * SQPIi of QP @qpn is about to be read (BAR0 or its doorbell page): a
 * doorbell whose signal is still pending is taken first, so that
 * software reading SQPIi after its doorbell reads that doorbell's index,
 * as it would without the eventfd. The QP is served by the bottom half.
 */
void ernic_dbrec_sqpi_read(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];

    if (qp->db_armed && event_notifier_test_and_clear(&qp->db_notifier)) {
        ernic_dbrec_signalled(c, qpn);
    }
}

static void ernic_dbrec_eventfd(MemoryRegion *mr, hwaddr addr,
                                EventNotifier *e, bool add)
{
    if (add) {
        memory_region_add_eventfd(mr, addr, 4, false, 0, e);
    } else {
        memory_region_del_eventfd(mr, addr, 4, false, 0, e);
    }
}

/*
 * The QP's doorbell addresses signal its notifier: SQPIi in BAR0, and
 * with @udb its doorbell page's SQPI. Without an eventfd the writes stay
 * MMIO writes, which do the same.
 */
static void ernic_dbrec_arm(ErnicCore *c, uint32_t qpn, bool udb)
{
    ErnicQP *qp = &c->qp[qpn];

    if (event_notifier_init(&qp->db_notifier, false) < 0) {
        qemu_log_mask(LOG_UNIMP, "ernic: QP%u: no eventfd for its doorbell; "
                      "it stays an MMIO write\n", qpn);
        return;
    }
    event_notifier_set_handler(&qp->db_notifier, ernic_dbrec_notified);
    ernic_dbrec_eventfd(c->db_regs, ERNIC_QP_OFFSET(qpn) + ERNIC_SQPI,
                        &qp->db_notifier, true);
    if (udb) {
        ernic_dbrec_eventfd(c->db_udb, ERNIC_UDB_OFFSET(qpn) +
                            ERNIC_UDB_SQPI, &qp->db_notifier, true);
    }
    qp->db_armed = true;
    qp->db_armed_udb = udb;
    trace_ernic_dbrec_arm(qpn, true, udb);
}

/* Undo ernic_dbrec_arm(); true if a signal was still pending. */
static bool ernic_dbrec_disarm(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    bool pending;

    ernic_dbrec_eventfd(c->db_regs, ERNIC_QP_OFFSET(qpn) + ERNIC_SQPI,
                        &qp->db_notifier, false);
    if (qp->db_armed_udb) {
        ernic_dbrec_eventfd(c->db_udb, ERNIC_UDB_OFFSET(qpn) +
                            ERNIC_UDB_SQPI, &qp->db_notifier, false);
    }
    event_notifier_set_handler(&qp->db_notifier, NULL);
    pending = event_notifier_test_and_clear(&qp->db_notifier);
    event_notifier_cleanup(&qp->db_notifier);
    qp->db_armed = qp->db_armed_udb = false;
    trace_ernic_dbrec_arm(qpn, false, false);
    return pending;
}

/*
 * QP @qpn's ioeventfd exists while the device has them, the QP has a
 * record and is enabled: a disabled QP's SQPIi writes stay synchronous,
 * so that the pointer resets of PG332 ch.6 (software override, QP
 * disabled) take effect before the QP is enabled again. A doorbell still
 * pending when the eventfd goes is served then.
 */
void ernic_dbrec_sync(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    bool want = c->db_eventfd && ernic_dbrec_on(c, qpn) &&
                (ernic_qp_reg(c, qpn, ERNIC_QPCONF) & ERNIC_QPCONF_QP_EN);
    bool udb = want && c->db_udb && ernic_ext_user_qp(c, qpn);

    if (want == qp->db_armed && udb == qp->db_armed_udb) {
        return;
    }
    if (qp->db_armed && ernic_dbrec_disarm(c, qpn)) {
        ernic_dbrec_signalled(c, qpn);
    }
    if (want) {
        ernic_dbrec_arm(c, qpn, udb);
    }
}

/* EXTCTRL was written: DBREC or UDB may have changed for every QP. */
void ernic_dbrec_sync_all(ErnicCore *c)
{
    for (uint32_t qpn = 1; qpn <= c->num_qp; qpn++) {
        ernic_dbrec_sync(c, qpn);
    }
}

/*
 * Migration loaded the registers: ioeventfds as they say, and each one
 * signalled once, so that a doorbell whose signal the source had not yet
 * served is taken from the record, which came with guest memory.
 */
void ernic_dbrec_loaded(ErnicCore *c)
{
    ernic_dbrec_sync_all(c);
    for (uint32_t qpn = 1; qpn <= c->num_qp; qpn++) {
        if (c->qp[qpn].db_armed) {
            event_notifier_set(&c->qp[qpn].db_notifier);
        }
    }
}

/* Device reset: every ioeventfd goes, and what was pending with it. */
void ernic_dbrec_reset(ErnicCore *c)
{
    for (uint32_t qpn = 1; qpn <= c->num_qp; qpn++) {
        if (c->qp[qpn].db_armed) {
            ernic_dbrec_disarm(c, qpn);
        }
    }
}
