/*
 * ERNIC Ethernet path: the non-RoCE traffic (ARP, IP, ...) that ERNIC
 * passes through its separate AXI-Stream ports (PG332 v3.1 p.8, Table
 * 2-5), modelled as a simple pair of descriptor rings in BAR4 with its own
 * MSI-X vector. This is not a PG332 interface: on a board the same role is
 * played by a DMA engine outside the IP. docs/engine.md, "Ethernet path",
 * defines it.
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

/* Frames one turn of the transmit bottom half may send. */
#define ERNIC_ETH_TX_BUDGET 256

#define ETH_REG(c, off)     ((c)->eth[(off) / 4])

static uint64_t ernic_eth_ring(ErnicCore *c, hwaddr lo, hwaddr hi)
{
    return ((uint64_t)ETH_REG(c, hi) << 32) | ETH_REG(c, lo);
}

/* Ring sizes are powers of two from 2 to ERNIC_ETH_RING_MAX, else 0. */
static uint32_t ernic_eth_size(ErnicCore *c, hwaddr off)
{
    uint32_t n = ETH_REG(c, off);

    return n >= 2 && n <= ERNIC_ETH_RING_MAX && is_power_of_2(n) ? n : 0;
}

static void ernic_eth_raise(ErnicCore *c, uint32_t cause)
{
    bool newly = cause & ~ETH_REG(c, ERNIC_ETH_INTSTS) &
                 ETH_REG(c, ERNIC_ETH_INTEN);

    ETH_REG(c, ERNIC_ETH_INTSTS) |= cause;
    ernic_irq_eth(c, newly);
}

static void ernic_eth_desc_done(ErnicCore *c, uint64_t desc, uint16_t len,
                                uint16_t flags)
{
    uint8_t b[4];

    stw_le_p(b, len);
    stw_le_p(b + 2, flags);
    ernic_dma_write(c, desc + ERNIC_ETH_DESC_LEN, b, sizeof(b));
}

/*
 * A descriptor that cannot be read halts its ring, as a DMA engine halts
 * on a bus error: the enable bit clears and the index stays on it until
 * software fixes the ring and enables it again (docs/engine.md).
 */
static void ernic_eth_halt(ErnicCore *c, uint32_t enable, uint64_t desc)
{
    ETH_REG(c, ERNIC_ETH_CTRL) &= ~enable;
    qemu_log_mask(LOG_GUEST_ERROR, "ernic: Ethernet %s descriptor read at "
                  "0x%" PRIx64 " failed: ring halted\n",
                  enable == ERNIC_ETH_CTRL_TX_EN ? "TX" : "RX", desc);
}

/* Send the frame of TX descriptor @ci; false when the ring halted. */
static bool ernic_eth_tx_one(ErnicCore *c, uint64_t ring, uint32_t ci)
{
    uint64_t desc = ring + (uint64_t)ci * ERNIC_ETH_DESC_SIZE;
    uint8_t d[ERNIC_ETH_DESC_SIZE];
    uint16_t len, flags = ERNIC_ETH_DESC_DONE;

    if (!ernic_dma_read(c, desc, d, sizeof(d))) {
        ernic_eth_halt(c, ERNIC_ETH_CTRL_TX_EN, desc);
        return false;
    }
    len = lduw_le_p(d + ERNIC_ETH_DESC_LEN);
    if (len < ERNIC_ETH_HLEN || len > ERNIC_ETH_FRAME_MAX ||
        !ernic_dma_read(c, ldq_le_p(d + ERNIC_ETH_DESC_ADDR), c->frame,
                        len)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: Ethernet TX descriptor %u "
                      "has a bad frame (%u bytes)\n", ci, len);
        flags |= ERNIC_ETH_DESC_ERR;
    } else {
        trace_ernic_eth_tx(ci, len);
        ETH_REG(c, ERNIC_ETH_TXPKTCNT)++;
        ernic_link_xmit(c, 0, c->frame, len);
    }
    ernic_eth_desc_done(c, desc, len, flags);
    return true;
}

void ernic_eth_bh(void *opaque)
{
    ErnicCore *c = opaque;
    uint32_t size = ernic_eth_size(c, ERNIC_ETH_TXSZ);
    uint64_t ring = ernic_eth_ring(c, ERNIC_ETH_TXBA, ERNIC_ETH_TXBAMSB);
    unsigned budget = ERNIC_ETH_TX_BUDGET;
    bool sent = false;
    uint32_t ci = 0;

    if (!ernic_may_run() ||
        !(ETH_REG(c, ERNIC_ETH_CTRL) & ERNIC_ETH_CTRL_TX_EN) || !size) {
        return;
    }
    /* Both indexes reduced by the size in force: it may have shrunk. */
    while (!c->tx_blocked && budget--) {
        ci = ETH_REG(c, ERNIC_ETH_TXCI) % size;
        if (ci == ETH_REG(c, ERNIC_ETH_TXPI) % size ||
            !ernic_eth_tx_one(c, ring, ci)) {
            break;
        }
        ETH_REG(c, ERNIC_ETH_TXCI) = ci = (ci + 1) % size;
        sent = true;
    }
    if (sent) {
        ernic_eth_raise(c, ERNIC_ETH_INT_TX);
    }
    if (!c->tx_blocked &&
        (ETH_REG(c, ERNIC_ETH_CTRL) & ERNIC_ETH_CTRL_TX_EN) &&
        ci != ETH_REG(c, ERNIC_ETH_TXPI) % size) {
        qemu_bh_schedule(c->eth_bh);
    }
}

void ernic_eth_receive(ErnicCore *c, const uint8_t *buf, size_t len)
{
    uint32_t size = ernic_eth_size(c, ERNIC_ETH_RXSZ);
    uint64_t ring = ernic_eth_ring(c, ERNIC_ETH_RXBA, ERNIC_ETH_RXBAMSB);
    uint32_t ci;
    uint64_t desc;
    uint8_t d[ERNIC_ETH_DESC_SIZE];
    uint16_t cap, flags = ERNIC_ETH_DESC_DONE;

    if (!(ETH_REG(c, ERNIC_ETH_CTRL) & ERNIC_ETH_CTRL_RX_EN) || !size ||
        len < ERNIC_ETH_HLEN) {
        return;
    }
    /* Our unicast address (MACXADD*), broadcast and multicast. */
    if (!(buf[0] & 1) &&
        (lduw_be_p(buf) != ernic_gcsr(c, ERNIC_MACXADDMSB) ||
         ldl_be_p(buf + 2) != ernic_gcsr(c, ERNIC_MACXADDLSB))) {
        return;
    }
    ci = ETH_REG(c, ERNIC_ETH_RXCI) % size;
    if (ci == ETH_REG(c, ERNIC_ETH_RXPI) % size) {
        ETH_REG(c, ERNIC_ETH_RXDROPCNT)++;
        trace_ernic_eth_rx_drop(len);
        return;
    }
    desc = ring + (uint64_t)ci * ERNIC_ETH_DESC_SIZE;
    if (!ernic_dma_read(c, desc, d, sizeof(d))) {
        ernic_eth_halt(c, ERNIC_ETH_CTRL_RX_EN, desc);
        return;
    }
    cap = lduw_le_p(d + ERNIC_ETH_DESC_LEN);
    if (len > cap) {
        /* The buffer is too small: the frame is dropped, the slot used. */
        flags |= ERNIC_ETH_DESC_ERR;
        len = 0;
    } else if (!ernic_dma_write(c, ldq_le_p(d + ERNIC_ETH_DESC_ADDR), buf,
                                len)) {
        flags |= ERNIC_ETH_DESC_ERR;
    }
    trace_ernic_eth_rx(ci, len);
    ernic_eth_desc_done(c, desc, len, flags);
    ETH_REG(c, ERNIC_ETH_RXCI) = (ci + 1) % size;
    ETH_REG(c, ERNIC_ETH_RXPKTCNT)++;
    ernic_eth_raise(c, ERNIC_ETH_INT_RX);
}

uint64_t ernic_eth_read(ErnicCore *c, hwaddr addr, unsigned size)
{
    if (size == 4 && !(addr & 3) && addr >= ERNIC_IMMDT_BASE &&
        addr < ERNIC_IMMDT_BASE + ERNIC_IMMDT_SIZE) {
        return ernic_immdt_read(c, addr - ERNIC_IMMDT_BASE);
    }
    if (size != 4 || (addr & 3) || addr > ERNIC_ETH_STATUS) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: Ethernet path: bad %u-byte "
                      "read at 0x%" HWADDR_PRIx "\n", size, addr);
        return 0;
    }
    if (addr == ERNIC_ETH_ID) {
        return ERNIC_ETH_ID_VALUE;
    }
    if (addr == ERNIC_ETH_STATUS) {
        return ERNIC_ETH_STATUS_VALID |
               (c->link_down ? 0 : ERNIC_ETH_STATUS_LINK_UP);
    }
    return ETH_REG(c, addr);
}

void ernic_eth_write(ErnicCore *c, hwaddr addr, uint64_t val64, unsigned size)
{
    uint32_t val = val64;

    if (size != 4 || (addr & 3)) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: Ethernet path: bad %u-byte "
                      "write at 0x%" HWADDR_PRIx "\n", size, addr);
        return;
    }
    if (addr >= ERNIC_IMMDT_BASE &&
        addr < ERNIC_IMMDT_BASE + ERNIC_IMMDT_SIZE) {
        ernic_immdt_write(c, addr - ERNIC_IMMDT_BASE, val);
        return;
    }
    switch (addr) {
    case ERNIC_ETH_CTRL:
        ETH_REG(c, addr) = val & (ERNIC_ETH_CTRL_TX_EN | ERNIC_ETH_CTRL_RX_EN);
        qemu_bh_schedule(c->eth_bh);
        break;
    case ERNIC_ETH_INTSTS:
        ETH_REG(c, addr) &= ~val;
        /* Causes still pending after a partial acknowledge signal again. */
        ernic_irq_eth(c, val != 0);
        break;
    case ERNIC_ETH_INTEN:
        val &= ERNIC_ETH_INT_TX | ERNIC_ETH_INT_RX | ERNIC_ETH_INT_LINK;
        ETH_REG(c, addr) = val;
        ernic_irq_eth(c, true);
        break;
    case ERNIC_ETH_TXBA:
    case ERNIC_ETH_RXBA:
        ETH_REG(c, addr) = val & ~(uint32_t)(ERNIC_ETH_DESC_SIZE - 1);
        break;
    case ERNIC_ETH_TXBAMSB:
    case ERNIC_ETH_RXBAMSB:
    case ERNIC_ETH_TXSZ:
    case ERNIC_ETH_RXSZ:
        ETH_REG(c, addr) = val;
        if ((addr == ERNIC_ETH_TXSZ || addr == ERNIC_ETH_RXSZ) &&
            !ernic_eth_size(c, addr)) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: Ethernet ring size %u is "
                          "not a power of two in 2..%u; ring disabled\n",
                          val, ERNIC_ETH_RING_MAX);
        }
        break;
    case ERNIC_ETH_TXPI:
        ETH_REG(c, addr) = val & 0xffff;
        qemu_bh_schedule(c->eth_bh);
        break;
    case ERNIC_ETH_RXPI:
        ETH_REG(c, addr) = val & 0xffff;
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: Ethernet path: write 0x%" PRIx32
                      " to read-only or undefined 0x%" HWADDR_PRIx "\n",
                      val, addr);
        break;
    }
}

/*
 * The netdev's link went down or up (QMP/HMP set_link): the board's MAC
 * reports it in STATUS and with INTSTS[2], so that a driver can report
 * the port's state (docs/engine.md, "Ethernet path"). Frames are dropped
 * by QEMU's net layer while the link is down, in both directions.
 */
void ernic_eth_link(ErnicCore *c, bool up)
{
    if (c->link_down == !up) {
        return;
    }
    c->link_down = !up;
    c->fault.count[up ? ERNIC_FC_LINK_UP : ERNIC_FC_LINK_DOWN]++;
    ETH_REG(c, ERNIC_ETH_INTSTS) |= ERNIC_ETH_INT_LINK;
    ernic_irq_eth(c, true);
}

void ernic_eth_reset(ErnicCore *c)
{
    if (c->eth_bh) {
        qemu_bh_cancel(c->eth_bh);
    }
    memset(c->eth, 0, sizeof(c->eth));
    ernic_immdt_reset(c);
}
