/*
 * QTest of the ImmDt DMA (docs/immdt.md): the AXI DMA S2MM channel in
 * BAR4 that takes ERNIC's ieth_immdt_m_axis entries (PG332 Table 1-1) to
 * memory through scatter-gather descriptors (PG021), on the PG332 device
 * with ERNIC-X off.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "qemu/bswap.h"
#include "ernic-rig.h"

#define DESC_OFF    IMMDT_RING_OFF          /* rings of device 1 */
#define BUF_OFF     (IMMDT_RING_OFF + 0x1000)   /* their buffers */
#define D(k)        (DEV_BASE(1) + DESC_OFF + (k) * ERNIC_SGD_SIZE)
#define B(k)        (DEV_BASE(1) + BUF_OFF + (k) * 16)
#define IMM(k)      (0xc0de0000u + (k))
#define CMPLT_8     (ERNIC_SGD_ST_CMPLT | ERNIC_SGD_ST_RXSOF | \
                     ERNIC_SGD_ST_RXEOF | 8)

static void iwr(ErnicRig *r, uint32_t off, uint32_t v)
{
    qpci_io_writel(r->d[1].e.pdev, r->d[1].e.eth, ERNIC_IMMDT_BASE + off, v);
}

static uint32_t ird(ErnicRig *r, uint32_t off)
{
    return qpci_io_readl(r->d[1].e.pdev, r->d[1].e.eth, ERNIC_IMMDT_BASE + off);
}

/* A ring of @n descriptors from D(@first), buffers of @len bytes. */
static void ring(ErnicRig *r, int first, int n, uint32_t len)
{
    for (int k = 0; k < n; k++) {
        uint8_t d[ERNIC_SGD_SIZE] = { 0 };

        stq_le_p(d + ERNIC_SGD_NXTDESC, D(first + (k + 1) % n));
        stq_le_p(d + ERNIC_SGD_BUFFER, B(first + k));
        stl_le_p(d + ERNIC_SGD_CONTROL, len);
        qtest_memwrite(r->qts, D(first + k), d, sizeof(d));
        qtest_memset(r->qts, B(first + k), 0xee, 16);
    }
}

static uint32_t desc_status(ErnicRig *r, int k)
{
    return qtest_readl(r->qts, D(k) + ERNIC_SGD_STATUS);
}

static uint64_t entry(uint32_t data, uint8_t type, uint32_t rq_pi)
{
    return data | (uint64_t)type << 32 | (uint64_t)QPN_B << 40 |
           (uint64_t)rq_pi << 48;
}

/* Request @opcode to QP B of device 1 with @imm in its ImmDt or IETH. */
static void send_req(ErnicRig *r, uint8_t opcode, uint32_t psn, uint32_t imm)
{
    uint8_t f[FRAME_MAX], a[FRAME_MAX], ext[20];
    size_t n = 0, len;

    if (opcode == 0x0b) {                   /* WRITE ONLY with Immediate */
        stq_be_p(ext, MR_VA);
        stl_be_p(ext + 8, RKEY);
        stl_be_p(ext + 12, 8);
        n = 16;
    }
    stl_be_p(ext + n, imm);
    len = ernic_rig_inject(r, f, opcode, QPN_B, psn, ext, n + 4, 8);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x11);    /* ACK */
    g_assert_cmphex(a[F_EXT], ==, 0x1f);
}

static void start(ErnicRig *r, int first, int tail)
{
    iwr(r, ERNIC_IMMDT_S2MM_CURDESC, D(first));
    iwr(r, ERNIC_IMMDT_S2MM_CURDESC_MSB, D(first) >> 32);
    iwr(r, ERNIC_IMMDT_S2MM_DMACR, ERNIC_DMACR_RS | ERNIC_DMACR_IOC_IRQEN |
        ERNIC_DMACR_ERR_IRQEN | 1u << ERNIC_DMACR_THRESH_SHIFT);
    iwr(r, ERNIC_IMMDT_S2MM_TAILDESC_MSB, D(tail) >> 32);
    iwr(r, ERNIC_IMMDT_S2MM_TAILDESC, D(tail));
}

/*
 * SEND_IMM, WRITE_IMM and SEND_INV each give one entry, in arrival
 * order, through one descriptor each; the channel stops at the tail and
 * goes on when the tail moves.
 */
static void test_entries(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR), ==,
                    ERNIC_DMASR_HALTED | ERNIC_DMASR_SGINCLD |
                    1u << ERNIC_DMACR_THRESH_SHIFT);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMACR), ==,
                    1u << ERNIC_DMACR_THRESH_SHIFT);
    ring(r, 0, 4, 8);
    start(r, 0, 2);
    send_req(r, 0x05, PSN_A, IMM(0));           /* SEND ONLY Immediate */
    send_req(r, 0x0b, PSN_A + 1, IMM(1));       /* WRITE ONLY Immediate */
    send_req(r, 0x17, PSN_A + 2, 0x1234);       /* SEND ONLY Invalidate */
    g_assert_cmphex(qtest_readq(r->qts, B(0)), ==,
                    entry(IMM(0), ERNIC_IMMDT_TYPE_SEND_IMM, 0));
    g_assert_cmphex(qtest_readq(r->qts, B(1)), ==,
                    entry(IMM(1), ERNIC_IMMDT_TYPE_WRITE_IMM, 1));
    g_assert_cmphex(qtest_readq(r->qts, B(2)), ==,
                    entry(0x1234, ERNIC_IMMDT_TYPE_SEND_INV, 1));
    for (int k = 0; k < 3; k++) {
        g_assert_cmphex(desc_status(r, k), ==, CMPLT_8);
    }
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR) & 0xffff, ==,
                    ERNIC_DMASR_IDLE | ERNIC_DMASR_SGINCLD |
                    ERNIC_DMASR_IOC_IRQ);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_CURDESC), ==, (uint32_t)D(3));

    /* Idle: the next entry waits in the FIFO until the tail moves. */
    send_req(r, 0x05, PSN_A + 3, IMM(3));
    g_assert_cmphex(desc_status(r, 3), ==, 0);
    iwr(r, ERNIC_IMMDT_S2MM_DMASR, ERNIC_DMASR_IOC_IRQ);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR) & ERNIC_DMASR_IRQS, ==, 0);
    iwr(r, ERNIC_IMMDT_S2MM_TAILDESC, D(3));
    g_assert_cmphex(desc_status(r, 3), ==, CMPLT_8);
    g_assert_cmphex(qtest_readq(r->qts, B(3)), ==,
                    entry(IMM(3), ERNIC_IMMDT_TYPE_SEND_IMM, 2));
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR) & ERNIC_DMASR_IOC_IRQ, ==,
                    ERNIC_DMASR_IOC_IRQ);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_DROPCNT), ==, 0);
    ernic_rig_stop(r);
}

/*
 * Descriptors of 3 bytes: an entry spans three (SOF on the first, EOF on
 * the last); a tail in the middle of an entry stalls it there.
 */
static void test_split_entry(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ring(r, 0, 4, 3);
    start(r, 0, 1);
    send_req(r, 0x0b, PSN_A, IMM(7));
    g_assert_cmphex(desc_status(r, 0), ==,
                    ERNIC_SGD_ST_CMPLT | ERNIC_SGD_ST_RXSOF | 3);
    g_assert_cmphex(desc_status(r, 1), ==, ERNIC_SGD_ST_CMPLT | 3);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR) & ERNIC_DMASR_IOC_IRQ, ==,
                    0);
    iwr(r, ERNIC_IMMDT_S2MM_TAILDESC, D(2));
    g_assert_cmphex(desc_status(r, 2), ==,
                    ERNIC_SGD_ST_CMPLT | ERNIC_SGD_ST_RXEOF | 2);
    g_assert_cmphex(qtest_readl(r->qts, B(0)) & 0xffffff, ==,
                    IMM(7) & 0xffffff);
    g_assert_cmphex(qtest_readb(r->qts, B(2)), ==, 0);   /* RQ PI 0 */
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR) & ERNIC_DMASR_IOC_IRQ, ==,
                    ERNIC_DMASR_IOC_IRQ);
    ernic_rig_stop(r);
}

/*
 * A halted channel keeps entries in its 64-entry FIFO, oldest first; a
 * full FIFO drops and counts them; Reset empties it.
 */
static void test_fifo(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (int k = 0; k < 66; k++) {
        send_req(r, 0x0b, PSN_A + k, IMM(k));
    }
    g_assert_cmphex(ird(r, ERNIC_IMMDT_DROPCNT), ==, 2);
    ring(r, 0, 2, 8);
    start(r, 0, 0);
    g_assert_cmphex(qtest_readq(r->qts, B(0)), ==,
                    entry(IMM(0), ERNIC_IMMDT_TYPE_WRITE_IMM, 0));
    g_assert_cmphex(desc_status(r, 1), ==, 0);
    iwr(r, ERNIC_IMMDT_S2MM_TAILDESC, D(1));
    g_assert_cmphex(qtest_readq(r->qts, B(1)), ==,
                    entry(IMM(1), ERNIC_IMMDT_TYPE_WRITE_IMM, 0));
    iwr(r, ERNIC_IMMDT_S2MM_DMACR, ERNIC_DMACR_RESET);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR) & 0xffff, ==,
                    ERNIC_DMASR_HALTED | ERNIC_DMASR_SGINCLD);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_DROPCNT), ==, 0);
    ring(r, 0, 2, 8);
    start(r, 0, 1);
    g_assert_cmphex(desc_status(r, 0), ==, 0);      /* the FIFO is empty */
    send_req(r, 0x0b, PSN_A + 66, IMM(66));
    g_assert_cmphex(qtest_readq(r->qts, B(0)), ==,
                    entry(IMM(66), ERNIC_IMMDT_TYPE_WRITE_IMM, 0));
    ernic_rig_stop(r);
}

/* Entry @k meets descriptor 0 as @d; the channel must halt with @err. */
static void expect_error(ErnicRig *r, const uint8_t *d, int k, uint32_t err)
{
    uint32_t want = ERNIC_DMASR_HALTED | ERNIC_DMASR_ERR_IRQ | err;

    iwr(r, ERNIC_IMMDT_S2MM_DMACR, ERNIC_DMACR_RESET);
    qtest_memwrite(r->qts, D(0), d, ERNIC_SGD_SIZE);
    start(r, 0, 0);
    send_req(r, 0x0b, PSN_A + k, IMM(k));
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR) & want, ==, want);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMACR) & ERNIC_DMACR_RS, ==, 0);
    /* Only a reset lets it run again. */
    iwr(r, ERNIC_IMMDT_S2MM_DMACR, ERNIC_DMACR_RS);
    g_assert_cmphex(ird(r, ERNIC_IMMDT_S2MM_DMASR) & ERNIC_DMASR_HALTED, ==,
                    ERNIC_DMASR_HALTED);
}

/*
 * Errors halt the channel (PG021): a descriptor completed already, a
 * buffer of length 0, a buffer in the device's own BAR0 (the DMA may not
 * re-enter the device: nothing is written there).
 */
static void test_errors(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t d[ERNIC_SGD_SIZE] = { 0 };
    uint32_t conf;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    stq_le_p(d + ERNIC_SGD_NXTDESC, D(0));
    stq_le_p(d + ERNIC_SGD_BUFFER, B(0));
    stl_le_p(d + ERNIC_SGD_CONTROL, 8);
    stl_le_p(d + ERNIC_SGD_STATUS, ERNIC_SGD_ST_CMPLT);
    qtest_memset(r->qts, B(0), 0xee, 16);
    expect_error(r, d, 0, ERNIC_DMASR_SGINTERR);
    g_assert_cmphex(qtest_readq(r->qts, B(0)), ==, 0xeeeeeeeeeeeeeeeeULL);

    stl_le_p(d + ERNIC_SGD_STATUS, 0);
    stl_le_p(d + ERNIC_SGD_CONTROL, 0);
    expect_error(r, d, 1, ERNIC_DMASR_DMAINTERR);

    stl_le_p(d + ERNIC_SGD_CONTROL, 8);
    stq_le_p(d + ERNIC_SGD_BUFFER, r->d[1].e.regs.addr + ERNIC_XRNICCONF);
    conf = ernic_rig_rd(r, 1, ERNIC_XRNICCONF);
    expect_error(r, d, 2, ERNIC_DMASR_DMASLVERR);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_XRNICCONF), ==, conf);
    g_assert_cmphex(desc_status(r, 0), ==, 0);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/immdt/entries", test_entries);
    qtest_add_func("/ernic/immdt/split-entry", test_split_entry);
    qtest_add_func("/ernic/immdt/fifo", test_fifo);
    qtest_add_func("/ernic/immdt/errors", test_errors);
    return g_test_run();
}
