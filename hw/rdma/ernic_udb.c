/*
 * ERNIC-X user doorbell pages (docs/extension.md, "User QPs"): BAR3, a
 * page per QP that holds its SQPIi and RQCIi and nothing else, so that a
 * driver may map it into the process owning the QP. A write there is
 * the same write to the QP's register. Not PG332: with EXTCTRL.UDB off
 * the doorbell BAR reads 0 and ignores writes. The rule that a user QP
 * names memory only through keys is ernic_ext.c's.
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

uint64_t ernic_udb_read(void *opaque, hwaddr addr, unsigned size)
{
    ErnicCore *c = opaque;
    hwaddr off = addr % ERNIC_UDB_PAGE;
    uint32_t qpn;

    if (!ernic_udb_decode(c, addr, size, &qpn)) {
        return 0;
    }
    switch (off) {
    case ERNIC_UDB_SQPI:
        return ernic_qp_reg(c, qpn, ERNIC_SQPI);
    case ERNIC_UDB_RQCI:
        return ernic_qp_reg(c, qpn, ERNIC_RQCI);
    default:
        return 0;
    }
}

/* A doorbell written here is the same write to the QP's register. */
void ernic_udb_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    ErnicCore *c = opaque;
    hwaddr off = addr % ERNIC_UDB_PAGE;
    uint32_t qpn;

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
