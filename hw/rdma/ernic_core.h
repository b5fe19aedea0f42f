/*
 * ERNIC (Xilinx/AMD PG332 v3.1) device core: register file, interrupts and
 * queue state. No PCI or QOM knowledge lives here; hw/rdma/ernic.c is the
 * PCI glue.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_ERNIC_CORE_H
#define HW_RDMA_ERNIC_CORE_H

#include "exec/hwaddr.h"
#include "hw/rdma/ernic_regs.h"

#define ERNIC_PDT_WORDS     (ERNIC_PDT_STRIDE / 4)
#define ERNIC_GCSR_WORDS    (ERNIC_GCSR_SIZE / 4)
#define ERNIC_QP_WORDS      (ERNIC_QP_STRIDE / 4)

/* Register word index within its block. */
#define ERNIC_W(off)        ((off) / 4)
#define ERNIC_GW(off)       (((off) - ERNIC_GCSR_BASE) / 4)

typedef struct ErnicQP {
    uint32_t regs[ERNIC_QP_WORDS];
    /*
     * Send queue position of the next WQE to fetch, as a slot index
     * (0 .. SQ depth - 1). Not a register: STATCURSQPTRi reports it.
     */
    uint16_t sq_next;
    /* Completed WQEs, as a slot index (0 .. SQ depth - 1). */
    uint16_t cq_next;
} ErnicQP;

typedef struct ErnicCore {
    PCIDevice *owner;           /* DMA master and interrupt source */
    uint32_t num_qp;            /* C_NUM_QP */
    uint8_t mac[6];             /* board MAC: reset value of MACXADD* */

    uint32_t pdt[ERNIC_PDT_ENTRIES][ERNIC_PDT_WORDS];
    uint32_t gcsr[ERNIC_GCSR_WORDS];
    ErnicQP qp[ERNIC_NUM_QP_MAX + 1];   /* indexed by QPN; [0] unused */

    /* Doorbell work is done in a bottom half, never in MMIO context. */
    QEMUBH *sq_bh;
    unsigned long sq_pending[BITS_TO_LONGS(ERNIC_NUM_QP_MAX + 1)];
} ErnicCore;

void ernic_core_realize(ErnicCore *c, PCIDevice *owner, uint32_t num_qp,
                        const uint8_t *mac);
void ernic_core_unrealize(ErnicCore *c);
void ernic_core_reset(ErnicCore *c);

uint64_t ernic_core_read(ErnicCore *c, hwaddr addr, unsigned size);
void ernic_core_write(ErnicCore *c, hwaddr addr, uint64_t val, unsigned size);

/* Interrupts (ernic_core.c) */
void ernic_core_raise(ErnicCore *c, uint32_t causes);
void ernic_core_raise_qp(ErnicCore *c, uint32_t cause, uint32_t qpn);

static inline uint32_t ernic_qp_reg(ErnicCore *c, uint32_t qpn, hwaddr off)
{
    return c->qp[qpn].regs[ERNIC_W(off)];
}

static inline void ernic_qp_set_reg(ErnicCore *c, uint32_t qpn, hwaddr off,
                                    uint32_t val)
{
    c->qp[qpn].regs[ERNIC_W(off)] = val;
}

static inline uint32_t ernic_gcsr(ErnicCore *c, hwaddr off)
{
    return c->gcsr[ERNIC_GW(off)];
}

/* Send queue (ernic_sq.c) */
void ernic_sq_doorbell(ErnicCore *c, uint32_t qpn);
void ernic_sq_process_pending(void *opaque);

#endif /* HW_RDMA_ERNIC_CORE_H */
