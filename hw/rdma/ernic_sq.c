/*
 * ERNIC send queue: SQPIi doorbells, WQE fetch and completion reporting
 * (PG332 v3.1 Table 2-1, Table 2-2, ch.6 "WQE SQ Posting" and
 * "Processing WQE Completions").
 *
 * Index convention (PG332 does not define wrap rules; docs/registers.md,
 * "Choices"): the slot of a WQE is its producer index modulo the SQ depth
 * (QDEPTHi[15:0]). CQHEADi reports the slot index of the next WQE to
 * complete, except that once every posted WQE has completed it equals
 * SQPIi exactly, so that "CQHEADi == SQPIi" (PG332 ch.6, QP deletion and
 * fatal recovery) holds whichever numbering software uses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "ernic_core.h"
#include "trace.h"

static uint64_t ernic_qp_addr(ErnicCore *c, uint32_t qpn, hwaddr lo,
                              hwaddr hi)
{
    return ((uint64_t)ernic_qp_reg(c, qpn, hi) << 32) |
           ernic_qp_reg(c, qpn, lo);
}

static bool ernic_opcode_valid(uint8_t opcode)
{
    switch (opcode) {
    case ERNIC_OP_WRITE:
    case ERNIC_OP_WRITE_IMM:
    case ERNIC_OP_SEND:
    case ERNIC_OP_SEND_IMM:
    case ERNIC_OP_READ:
    case ERNIC_OP_SEND_INV:
        return true;
    default:
        return false;
    }
}

static void ernic_sq_update_status(ErnicCore *c, uint32_t qpn, uint16_t pi)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t statqp = ernic_qp_reg(c, qpn, ERNIC_STATQP);

    statqp &= ~(ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
    if (qp->sq_next == pi) {
        statqp |= ERNIC_STATQP_SQ_EMPTY;
    }
    if (qp->cq_next == qp->sq_next) {
        statqp |= ERNIC_STATQP_OSQ_EMPTY;
    }
    ernic_qp_set_reg(c, qpn, ERNIC_STATQP, statqp);
    ernic_qp_set_reg(c, qpn, ERNIC_STATCURSQPTR, qp->sq_next);
}

/*
 * Complete the WQE at the CQ position: write its CQE when QPCONFi[5] is
 * set, advance CQHEADi and DMA it to CQDBADDi, and raise the completion
 * interrupt (PG332 pp.21-23).
 */
static void ernic_sq_complete(ErnicCore *c, uint32_t qpn, uint16_t depth,
                              uint16_t wrid, uint8_t opcode, bool error)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t sqpi = ernic_qp_reg(c, qpn, ERNIC_SQPI);
    uint64_t cqdb = ernic_qp_addr(c, qpn, ERNIC_CQDBADD, ERNIC_CQDBADDMSB);
    uint32_t cqhead;
    uint8_t buf[4];

    if (ernic_qp_reg(c, qpn, ERNIC_QPCONF) & ERNIC_QPCONF_CQE_WR_EN) {
        uint64_t cqe_addr = ernic_qp_addr(c, qpn, ERNIC_CQBA, ERNIC_CQBAMSB) +
                            (uint64_t)qp->cq_next * ERNIC_CQE_SIZE;

        stl_le_p(buf, wrid | (opcode << ERNIC_CQE_OPCODE_SHIFT) |
                      ((uint32_t)error << ERNIC_CQE_ERRFLAG_SHIFT));
        if (pci_dma_write(c->owner, cqe_addr, buf, sizeof(buf)) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u CQE write to 0x%"
                          PRIx64 " failed\n", qpn, cqe_addr);
        }
    }

    qp->cq_next = (qp->cq_next + 1) % depth;
    cqhead = qp->cq_next == sqpi % depth ? sqpi : qp->cq_next;
    ernic_qp_set_reg(c, qpn, ERNIC_CQHEAD, cqhead);
    trace_ernic_sq_complete(qpn, wrid, opcode, error, cqhead);

    /* Address 0 means "no doorbell word": nothing is written there. */
    if (cqdb) {
        stl_le_p(buf, cqhead);
        if (pci_dma_write(c->owner, cqdb, buf, sizeof(buf)) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u CQ doorbell write to "
                          "0x%" PRIx64 " failed\n", qpn, cqdb);
        }
    }
    ernic_core_raise_qp(c, ERNIC_INT_WQE_COMPLETION, qpn);
}

static void ernic_sq_process(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
    uint16_t depth = ernic_qp_reg(c, qpn, ERNIC_QDEPTH) & ERNIC_QDEPTH_SQ_MASK;
    uint64_t sqba = ernic_qp_addr(c, qpn, ERNIC_SQBA, ERNIC_SQBAMSB);
    uint8_t wqe[ERNIC_WQE_SIZE];
    uint16_t pi, budget;

    if (!(ernic_gcsr(c, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN) ||
        !(qpconf & ERNIC_QPCONF_QP_EN)) {
        /* Disabled: the doorbell stays in SQPIi until the QP is enabled. */
        return;
    }
    if (!(qpconf & ERNIC_QPCONF_HW_HS_DIS)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u SQPI doorbell while in "
                      "hardware-handshake mode (QPCONF[4]=0); the emulated "
                      "device has no handshake ports\n", qpn);
        return;
    }
    if (depth < 2) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u SQPI doorbell with SQ "
                      "depth %u\n", qpn, depth);
        return;
    }
    qp->sq_next %= depth;
    qp->cq_next %= depth;
    pi = ernic_qp_reg(c, qpn, ERNIC_SQPI) % depth;

    /* At most one pass over the ring per doorbell. */
    for (budget = depth; qp->sq_next != pi && budget; budget--) {
        uint64_t addr = sqba + (uint64_t)qp->sq_next * ERNIC_WQE_SIZE;
        uint8_t opcode;
        uint16_t wrid;

        if (pci_dma_read(c->owner, addr, wqe, sizeof(wqe)) != MEMTX_OK) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u WQE fetch from 0x%"
                          PRIx64 " failed\n", qpn, addr);
            break;
        }
        opcode = wqe[ERNIC_WQE_OPCODE];
        wrid = lduw_le_p(&wqe[ERNIC_WQE_WRID]);
        trace_ernic_sq_wqe(qpn, qp->sq_next, wrid, opcode,
                           ldl_le_p(&wqe[ERNIC_WQE_LENGTH]));

        if (ernic_opcode_valid(opcode)) {
            /*
             * Execution of valid WQEs is the transport engine's work; it
             * stays posted until then.
             */
            qemu_log_mask(LOG_UNIMP, "ernic: QP%u WQE opcode 0x%x: transport "
                          "engine not implemented\n", qpn, opcode);
            break;
        }

        /*
         * A reserved opcode raises INTSTS[5] (PG332 p.38). The WQE is then
         * completed with ERRFLAG set so that CQHEADi still reaches SQPIi.
         */
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u WQE %u has reserved "
                      "opcode 0x%x\n", qpn, qp->sq_next, opcode);
        qp->sq_next = (qp->sq_next + 1) % depth;
        ernic_qp_set_reg(c, qpn, ERNIC_STATWQE,
                         (ernic_qp_reg(c, qpn, ERNIC_STATWQE) + 1) & 0xffff);
        ernic_core_raise(c, ERNIC_INT_ILLEGAL_OPCODE);
        ernic_sq_complete(c, qpn, depth, wrid, opcode, true);
    }
    ernic_sq_update_status(c, qpn, pi);
}

void ernic_sq_doorbell(ErnicCore *c, uint32_t qpn)
{
    trace_ernic_sq_doorbell(qpn, ernic_qp_reg(c, qpn, ERNIC_SQPI));
    set_bit(qpn, c->sq_pending);
    /* RESPHNDSTS[16] reads 1 only while no SQ doorbell is outstanding. */
    c->gcsr[ERNIC_GW(ERNIC_RESPHNDSTS)] &=
        ~ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN;
    qemu_bh_schedule(c->sq_bh);
}

void ernic_sq_process_pending(void *opaque)
{
    ErnicCore *c = opaque;
    unsigned long qpn;

    for (qpn = find_first_bit(c->sq_pending, c->num_qp + 1);
         qpn <= c->num_qp;
         qpn = find_next_bit(c->sq_pending, c->num_qp + 1, qpn + 1)) {
        clear_bit(qpn, c->sq_pending);
        ernic_sq_process(c, qpn);
    }
    c->gcsr[ERNIC_GW(ERNIC_RESPHNDSTS)] |=
        ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN;
}
