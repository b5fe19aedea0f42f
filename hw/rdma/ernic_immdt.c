/*
 * ImmDt DMA: the board logic behind ERNIC's ieth_immdt_m_axis stream.
 *
 * ERNIC hands the ImmDt of SEND_IMM and WRITE_IMM, and the R_Key of
 * SEND_INV, off the IP as 64-bit entries on an AXI4-Stream (PG332 v3.1
 * Table 1-1, p.9) and leaves them to "external hardware logic ... for
 * example AXI DMA IP". The ERNIC reference design places an AXI DMA there,
 * and Xilinx's ERNIC driver reads the entries from its S2MM ring. This is
 * that AXI DMA (PG021 v7.1): the S2MM channel alone, in scatter-gather
 * mode, behind a small stream FIFO, in BAR4 at ERNIC_IMMDT_BASE. Each
 * entry is one stream packet. docs/immdt.md specifies it, and why QEMU's
 * hw/dma/xilinx_axidma.c is not reused.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "hw/pci/pci_device.h"
#include "ernic_core.h"
#include "trace.h"

#define IMMDT_REG(c, off)   ((c)->immdt[(off) / 4])

/* PG021: the delay timer counts units of 125 cycles of a 100 MHz clock. */
#define ERNIC_IMMDT_DELAY_UNIT_NS   1250

static uint64_t ernic_immdt_pair(ErnicCore *c, hwaddr lo)
{
    return ((uint64_t)IMMDT_REG(c, lo + 4) << 32) | IMMDT_REG(c, lo);
}

static bool ernic_immdt_running(ErnicCore *c)
{
    return !(IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR) &
             (ERNIC_DMASR_HALTED | ERNIC_DMASR_IDLE));
}

static void ernic_immdt_raise(ErnicCore *c, uint32_t cause)
{
    bool was = ernic_immdt_irq_pending(c);

    IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR) |= cause;
    ernic_irq_eth(c, !was && ernic_immdt_irq_pending(c));
}

/* A DMA or descriptor error halts the channel (PG021 "Errors"). */
static void ernic_immdt_error(ErnicCore *c, uint32_t err, const char *what)
{
    trace_ernic_immdt_error(what, ernic_immdt_pair(c,
                                                   ERNIC_IMMDT_S2MM_CURDESC));
    qemu_log_mask(LOG_GUEST_ERROR, "ernic: ImmDt DMA: %s: channel halted\n",
                  what);
    IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMACR) &= ~ERNIC_DMACR_RS;
    IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR) |= err | ERNIC_DMASR_HALTED;
    ernic_immdt_raise(c, ERNIC_DMASR_ERR_IRQ);
}

static uint32_t ernic_immdt_threshold(ErnicCore *c)
{
    uint32_t t = ERNIC_FIELD_EX32(IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMACR),
                                  ERNIC_DMACR_THRESH_MASK);

    return t ? t : 1;
}

/* A packet ended: IRQThreshold counting, and the delay timer restarts. */
static void ernic_immdt_packet_done(ErnicCore *c)
{
    uint32_t delay = ERNIC_FIELD_EX32(IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMACR),
                                      ERNIC_DMACR_DELAY_MASK);

    if (--c->immdt_left == 0) {
        c->immdt_left = ernic_immdt_threshold(c);
        ernic_immdt_raise(c, ERNIC_DMASR_IOC_IRQ);
    }
    if (delay) {
        timer_mod(c->immdt_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)delay * ERNIC_IMMDT_DELAY_UNIT_NS);
    }
}

static void ernic_immdt_delay_timer(void *opaque)
{
    ErnicCore *c = opaque;
    ernic_dma_timer_enter(c);

    c->immdt_left = ernic_immdt_threshold(c);
    ernic_immdt_raise(c, ERNIC_DMASR_DLY_IRQ);
    ernic_dma_timer_exit(c);
}

/*
 * Write what is left of the FIFO's oldest entry through the descriptor at
 * CURDESC. False when the channel stops (an error, or the tail reached
 * before the packet ended: it goes on from c->immdt_off when software
 * gives more descriptors, as a stalled stream would).
 */
static bool ernic_immdt_desc(ErnicCore *c, const uint8_t *entry)
{
    uint64_t cur = ernic_immdt_pair(c, ERNIC_IMMDT_S2MM_CURDESC);
    uint32_t off = c->immdt_off, take, len, st;
    uint8_t d[ERNIC_SGD_STATUS + 4], s[4];

    if (!ernic_dma_read(c, cur, d, sizeof(d))) {
        ernic_immdt_error(c, ERNIC_DMASR_SGSLVERR, "descriptor fetch failed");
        return false;
    }
    if (ldl_le_p(d + ERNIC_SGD_STATUS) & ERNIC_SGD_ST_CMPLT) {
        ernic_immdt_error(c, ERNIC_DMASR_SGINTERR, "descriptor completed "
                          "already");
        return false;
    }
    len = ldl_le_p(d + ERNIC_SGD_CONTROL) & ERNIC_SGD_LEN_MASK;
    if (!len) {
        ernic_immdt_error(c, ERNIC_DMASR_DMAINTERR, "buffer length 0");
        return false;
    }
    take = MIN(len, ERNIC_IMMDT_ENTRY_LEN - off);
    if (!ernic_dma_write(c, ldq_le_p(d + ERNIC_SGD_BUFFER), entry + off,
                         take)) {
        ernic_immdt_error(c, ERNIC_DMASR_DMASLVERR, "buffer write failed");
        return false;
    }
    st = ERNIC_SGD_ST_CMPLT | take | (off ? 0 : ERNIC_SGD_ST_RXSOF) |
         (off + take == ERNIC_IMMDT_ENTRY_LEN ? ERNIC_SGD_ST_RXEOF : 0);
    stl_le_p(s, st);
    if (!ernic_dma_write(c, cur + ERNIC_SGD_STATUS, s, sizeof(s))) {
        ernic_immdt_error(c, ERNIC_DMASR_SGSLVERR, "status write failed");
        return false;
    }
    c->immdt_off = off + take;
    IMMDT_REG(c, ERNIC_IMMDT_S2MM_CURDESC) =
        ldl_le_p(d + ERNIC_SGD_NXTDESC) & ~(uint32_t)(ERNIC_SGD_SIZE - 1);
    IMMDT_REG(c, ERNIC_IMMDT_S2MM_CURDESC_MSB) =
        ldl_le_p(d + ERNIC_SGD_NXTDESC + 4);
    if (cur == ernic_immdt_pair(c, ERNIC_IMMDT_S2MM_TAILDESC)) {
        IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR) |= ERNIC_DMASR_IDLE;
    }
    return true;
}

/*
 * Move entries from the FIFO to memory while the channel runs. Bounded:
 * each descriptor takes at least one byte of the oldest entry, and the
 * FIFO holds ERNIC_IMMDT_FIFO entries.
 */
static void ernic_immdt_drain(ErnicCore *c)
{
    while (c->immdt_count && ernic_immdt_running(c)) {
        uint8_t e[ERNIC_IMMDT_ENTRY_LEN];

        stq_le_p(e, c->immdt_fifo[c->immdt_head]);
        if (!ernic_immdt_desc(c, e)) {
            return;
        }
        if (c->immdt_off == ERNIC_IMMDT_ENTRY_LEN) {
            c->immdt_off = 0;
            c->immdt_head = (c->immdt_head + 1) % ERNIC_IMMDT_FIFO;
            c->immdt_count--;
            ernic_immdt_packet_done(c);
        }
    }
}

/*
 * An entry from the responder (PG332 Table 1-1): [31:0] ImmDt or R_Key,
 * [39:32] type, [47:40] QPID, [55:48] RQ PI. A full FIFO drops it and
 * counts it in DROPCNT (docs/immdt.md).
 */
void ernic_immdt_push(ErnicCore *c, uint32_t qpn, uint8_t type,
                      uint32_t data, uint32_t rq_pi)
{
    uint64_t e = data | (uint64_t)type << 32 | (uint64_t)(qpn & 0xff) << 40 |
                 (uint64_t)(rq_pi & 0xff) << 48;

    trace_ernic_immdt_entry(qpn, type, data, rq_pi & 0xff);
    if (c->immdt_count == ERNIC_IMMDT_FIFO) {
        IMMDT_REG(c, ERNIC_IMMDT_DROPCNT)++;
        return;
    }
    c->immdt_fifo[(c->immdt_head + c->immdt_count++) % ERNIC_IMMDT_FIFO] = e;
    ernic_immdt_drain(c);
}

static void ernic_immdt_write_cr(ErnicCore *c, uint32_t val)
{
    uint32_t *sr = &IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR);

    if (val & ERNIC_DMACR_RESET) {
        /* Self-clearing; the stream FIFO shares the reset. */
        ernic_immdt_reset(c);
        ernic_irq_eth(c, false);
        return;
    }
    IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMACR) = val &
        (ERNIC_DMACR_RS | ERNIC_DMACR_IOC_IRQEN | ERNIC_DMACR_DLY_IRQEN |
         ERNIC_DMACR_ERR_IRQEN | ERNIC_DMACR_THRESH_MASK |
         ERNIC_DMACR_DELAY_MASK);
    c->immdt_left = ernic_immdt_threshold(c);
    if ((val & ERNIC_DMACR_RS) && (*sr & ERNIC_DMASR_ERRS)) {
        /* PG021: after an error only a reset lets the channel run. */
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: ImmDt DMA: started after an "
                      "error without a reset: stays halted\n");
        IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMACR) &= ~ERNIC_DMACR_RS;
    } else if (!(val & ERNIC_DMACR_RS)) {
        *sr |= ERNIC_DMASR_HALTED;
    } else if (*sr & ERNIC_DMASR_HALTED) {
        /* Started: idle until the tail pointer is written. */
        *sr = (*sr & ~ERNIC_DMASR_HALTED) | ERNIC_DMASR_IDLE;
    }
    ernic_irq_eth(c, true);
}

uint64_t ernic_immdt_read(ErnicCore *c, hwaddr addr)
{
    if (addr == ERNIC_IMMDT_S2MM_DMASR) {
        /* [23:16] IRQThresholdSts: packets left before IOC_Irq. */
        return (IMMDT_REG(c, addr) & 0xffff) | (c->immdt_left & 0xff) << 16;
    }
    return addr < ERNIC_IMMDT_SIZE ? IMMDT_REG(c, addr) : 0;
}

void ernic_immdt_write(ErnicCore *c, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case ERNIC_IMMDT_S2MM_DMACR:
        ernic_immdt_write_cr(c, val);
        break;
    case ERNIC_IMMDT_S2MM_DMASR:
        IMMDT_REG(c, addr) &= ~(val & ERNIC_DMASR_IRQS);
        /* Causes still pending after a partial acknowledge signal again. */
        ernic_irq_eth(c, val != 0);
        break;
    case ERNIC_IMMDT_S2MM_CURDESC:
    case ERNIC_IMMDT_S2MM_CURDESC_MSB:
        /* PG021: CURDESC is written only while the channel is halted. */
        if (!(IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR) & ERNIC_DMASR_HALTED)) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: ImmDt DMA: CURDESC "
                          "written while running: ignored\n");
            break;
        }
        IMMDT_REG(c, addr) = addr == ERNIC_IMMDT_S2MM_CURDESC ?
                             val & ~(uint32_t)(ERNIC_SGD_SIZE - 1) : val;
        c->immdt_off = 0;
        break;
    case ERNIC_IMMDT_S2MM_TAILDESC_MSB:
        IMMDT_REG(c, addr) = val;
        break;
    case ERNIC_IMMDT_S2MM_TAILDESC:
        IMMDT_REG(c, addr) = val & ~(uint32_t)(ERNIC_SGD_SIZE - 1);
        if (!(IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR) & ERNIC_DMASR_HALTED)) {
            IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR) &= ~ERNIC_DMASR_IDLE;
            ernic_immdt_drain(c);
        }
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: ImmDt DMA: write 0x%" PRIx32
                      " to read-only or undefined 0x%" HWADDR_PRIx "\n",
                      val, addr);
        break;
    }
}

void ernic_immdt_reset(ErnicCore *c)
{
    if (c->immdt_timer) {
        timer_del(c->immdt_timer);
    }
    memset(c->immdt, 0, sizeof(c->immdt));
    IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMACR) =
        ERNIC_FIELD_DP32(0, ERNIC_DMACR_THRESH_MASK, 1);
    IMMDT_REG(c, ERNIC_IMMDT_S2MM_DMASR) = ERNIC_DMASR_HALTED |
                                           ERNIC_DMASR_SGINCLD;
    c->immdt_head = c->immdt_count = c->immdt_off = 0;
    c->immdt_left = 1;
}

void ernic_immdt_realize(ErnicCore *c)
{
    c->immdt_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                  ernic_immdt_delay_timer, c);
}

void ernic_immdt_unrealize(ErnicCore *c)
{
    timer_free(c->immdt_timer);
    c->immdt_timer = NULL;
}
