/*
 * ERNIC-X user doorbell pages (docs/extension.md, "User QPs", "Shared
 * receive queues"): BAR3, a page per QP that holds its SQPIi and RQCIi
 * and nothing else, then a page per SRQ with its SRQPIn and SRQCIn, so
 * that a driver may map them into the process owning the queue. A write
 * there is the same write to the queue's register. Not PG332: with
 * EXTCTRL.UDB off the doorbell BAR reads 0 and ignores writes. The rule
 * that a user QP names memory only through keys is ernic_ext.c's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

/*
 * The page of QP @qpn at @addr of the doorbell BAR, if it decodes: the
 * feature on, an aligned 32-bit access, a QP of this device marked user.
 */
static bool ernic_udb_decode(ErnicCore *c, hwaddr addr, unsigned size,
                             uint32_t *qpn)
{
    *qpn = addr / ERNIC_UDB_PAGE + 1;
    return size == 4 && !(addr & 3) && *qpn <= c->num_qp &&
           ernic_ext_user_qp(c, *qpn);
}

static uint32_t ernic_udb_srq_reg(ErnicCore *c, uint32_t n, hwaddr off)
{
    return c->srq_regs[n][ERNIC_W(off)];
}

/*
 * The page of SRQ @n at @addr (past ERNIC_UDB_SRQ_BASE) decodes: an
 * aligned 32-bit access, the feature on, a user SRQ.
 */
static bool ernic_udb_srq_decode(ErnicCore *c, hwaddr addr, unsigned size,
                                 uint32_t *n)
{
    *n = (addr - ERNIC_UDB_SRQ_BASE) / ERNIC_UDB_PAGE;
    return size == 4 && !(addr & 3) && *n < ERNIC_SRQ_NUM &&
           ernic_ext_on(c, ERNIC_EXT_F_SRQ) &&
           (ernic_udb_srq_reg(c, *n, ERNIC_SRQCONF) & ERNIC_SRQCONF_USER);
}

static uint32_t ernic_udb_srq_read(ErnicCore *c, hwaddr addr, unsigned size)
{
    uint32_t n;

    if (!ernic_udb_srq_decode(c, addr, size, &n)) {
        return 0;
    }
    switch (addr % ERNIC_UDB_PAGE) {
    case ERNIC_UDB_SRQPI:
        return ernic_udb_srq_reg(c, n, ERNIC_SRQPI);
    case ERNIC_UDB_SRQCI:
        return ernic_udb_srq_reg(c, n, ERNIC_SRQCI);
    default:
        return 0;
    }
}

/* Only SRQPIn is written there, as the same write to the register. */
static void ernic_udb_srq_write(ErnicCore *c, hwaddr addr, uint32_t val,
                                unsigned size)
{
    uint32_t n;

    if (!ernic_udb_srq_decode(c, addr, size, &n) ||
        addr % ERNIC_UDB_PAGE != ERNIC_UDB_SRQPI) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: doorbell page write at 0x%"
                      HWADDR_PRIx " ignored (not a user SRQ's SRQPI, or "
                      "SRQ off)\n", addr);
        return;
    }
    ernic_core_write(c, ERNIC_EXT_SRQ_OFFSET(n) + ERNIC_SRQPI, val, size);
}

uint64_t ernic_udb_read(void *opaque, hwaddr addr, unsigned size)
{
    ErnicCore *c = opaque;
    hwaddr off = addr % ERNIC_UDB_PAGE;
    uint32_t qpn;

    if (addr >= ERNIC_UDB_SRQ_BASE) {
        return ernic_udb_srq_read(c, addr, size);
    }
    if (!ernic_udb_decode(c, addr, size, &qpn)) {
        return 0;
    }
    switch (off) {
    case ERNIC_UDB_SQPI:
        ernic_dbrec_sqpi_read(c, qpn);
        return ernic_qp_reg(c, qpn, ERNIC_SQPI);
    case ERNIC_UDB_RQCI:
        return ernic_qp_reg(c, qpn, ERNIC_RQCI);
    case ERNIC_UDB_CQHEAD:
        return ernic_ext_on(c, ERNIC_EXT_F_UPOLL) ?
               ernic_qp_reg(c, qpn, ERNIC_CQHEAD) : 0;
    case ERNIC_UDB_RQPI:
        return ernic_ext_on(c, ERNIC_EXT_F_UPOLL) ?
               ernic_qp_reg(c, qpn, ERNIC_STATRQPIDB) : 0;
    default:
        return 0;
    }
}

/*
 * A read of a QP page's CQHEAD or RQPI (UPOLL) that found @val, the same
 * as the QP's last read of that register: a process polling for a
 * completion that has not come (ernic_core_spinning(), for BAR0's).
 */
bool ernic_udb_spinning(ErnicCore *c, hwaddr addr, uint32_t val)
{
    hwaddr off = addr % ERNIC_UDB_PAGE;
    uint32_t qpn;
    bool again;

    if (addr >= ERNIC_UDB_SRQ_BASE || !ernic_udb_decode(c, addr, 4, &qpn) ||
        !ernic_ext_on(c, ERNIC_EXT_F_UPOLL) ||
        (off != ERNIC_UDB_CQHEAD && off != ERNIC_UDB_RQPI)) {
        return false;
    }
    again = ernic_core_polled_again(c, qpn, off == ERNIC_UDB_CQHEAD, val);
    trace_ernic_udb_poll(qpn, off, val, again);
    return again;
}

/* A doorbell written here is the same write to the QP's register. */
void ernic_udb_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    ErnicCore *c = opaque;
    hwaddr off = addr % ERNIC_UDB_PAGE;
    uint32_t qpn;

    if (addr >= ERNIC_UDB_SRQ_BASE) {
        ernic_udb_srq_write(c, addr, val, size);
        return;
    }
    if (!ernic_udb_decode(c, addr, size, &qpn) ||
        (off != ERNIC_UDB_SQPI && off != ERNIC_UDB_RQCI)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: doorbell page write at 0x%"
                      HWADDR_PRIx " ignored (not a user QP's SQPI or RQCI, "
                      "or UDB off)\n", addr);
        return;
    }
    trace_ernic_udb_write(qpn, off, val);
    ernic_core_write(c, ERNIC_QP_OFFSET(qpn) +
                     (off == ERNIC_UDB_SQPI ? ERNIC_SQPI : ERNIC_RQCI),
                     val, size);
}
