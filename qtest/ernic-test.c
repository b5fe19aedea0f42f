/*
 * qtest for the ernic device: the PG332 v3.1 register file.
 *
 * The tables below are built from the register lists of
 * include/hw/rdma/ernic_regs.h, the same lists docs/registers.md is
 * generated from: every register in the documentation is checked for its
 * reset value, its access type and its reserved bits. A handful of values
 * are also checked against literal PG332 numbers, so that an error in the
 * shared list itself does not go unnoticed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "libqos/pci.h"
#include "hw/pci/pci_regs.h"
#include "hw/rdma/ernic_regs.h"

#define ERNIC_DEVFN         QPCI_DEVFN(4, 0)
#define TEST_MAC            "52:54:00:12:34:56"

/* Guest memory used by the tests (the guest runs no code). */
#define SQ_ADDR             0x100000ULL
#define CQ_ADDR             0x110000ULL
#define CQDB_ADDR           0x120000ULL
#define MSI_ADDR            0x130000ULL
#define MSI_DATA            0x4e524943u     /* "ERNIC" */

typedef struct RegDesc {
    const char *name;
    uint32_t off;
    uint32_t access;
    uint32_t reset;
    uint32_t mask;
    uint32_t wmask;
    uint32_t flags;
} RegDesc;

#define REG_DESC(name_, off_, acc_, rst_, mask_, wmask_, flags_, page_) \
    { #name_, off_, ERNIC_ACC_##acc_, rst_, mask_, wmask_, ERNIC_F_##flags_ },

static const RegDesc pdt_regs[] = { ERNIC_PDT_REGS(REG_DESC) };
static const RegDesc gcsr_regs[] = { ERNIC_GCSR_REGS(REG_DESC) };
static const RegDesc qp_regs[] = { ERNIC_QP_REGS(REG_DESC) };

typedef struct Ernic {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    uint32_t num_qp;
} Ernic;

static Ernic *ernic_start(uint32_t num_qp, const char *extra)
{
    Ernic *e = g_new0(Ernic, 1);
    uint64_t size;

    e->num_qp = num_qp;
    e->qts = qtest_initf("-M q35 -nodefaults "
                         "-device ernic,addr=04.0,mac=" TEST_MAC
                         ",num-qp=%u %s", num_qp, extra ? extra : "");
    e->bus = qpci_new_pc(e->qts, NULL);
    e->dev = qpci_device_find(e->bus, ERNIC_DEVFN);
    g_assert(e->dev);
    qpci_device_enable(e->dev);
    e->bar = qpci_iomap(e->dev, ERNIC_BAR_REGS, &size);
    g_assert_cmphex(size, ==, ERNIC_REG_WINDOW_SIZE);
    return e;
}

static void ernic_stop(Ernic *e)
{
    qpci_iounmap(e->dev, e->bar);
    g_free(e->dev);
    qpci_free_pc(e->bus);
    qtest_quit(e->qts);
    g_free(e);
}

static uint32_t rd(Ernic *e, uint32_t off)
{
    return qpci_io_readl(e->dev, e->bar, off);
}

static void wr(Ernic *e, uint32_t off, uint32_t val)
{
    qpci_io_writel(e->dev, e->bar, off, val);
}

static uint32_t qp_rd(Ernic *e, uint32_t qpn, uint32_t off)
{
    return rd(e, ERNIC_QP_OFFSET(qpn) + off);
}

static void qp_wr(Ernic *e, uint32_t qpn, uint32_t off, uint32_t val)
{
    wr(e, ERNIC_QP_OFFSET(qpn) + off, val);
}

/* Let the device's bottom halves run until @cond holds (5 s at most). */
#define WAIT_FOR(e, cond)                                                   \
    do {                                                                    \
        gint64 deadline_ = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;    \
        while (!(cond)) {                                                   \
            g_assert(g_get_monotonic_time() < deadline_);                   \
            qtest_clock_step((e)->qts, 1000);                               \
        }                                                                   \
    } while (0)

/* The reset value a register reports on this device. */
static uint32_t expected_reset(const RegDesc *r, uint32_t base)
{
    /* The board MAC is strapped into MACXADD* (docs/registers.md). */
    if (base + r->off == ERNIC_MACXADDLSB) {
        return 0x00123456;
    }
    if (base + r->off == ERNIC_MACXADDMSB) {
        return 0x5254;
    }
    return r->reset & r->mask;
}

static bool reg_exists(const RegDesc *r, uint32_t qpn)
{
    return !(qpn == ERNIC_QP_GSI && (r->flags & ERNIC_F_NOQP1));
}

/*
 * Identity
 */

static void test_pci_id(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);

    g_assert_cmphex(qpci_config_readw(e->dev, PCI_VENDOR_ID), ==, 0x10ee);
    g_assert_cmphex(qpci_config_readw(e->dev, PCI_DEVICE_ID), ==, 0xe332);
    g_assert_cmphex(qpci_config_readb(e->dev, PCI_REVISION_ID), ==, 0x31);
    g_assert_cmphex(qpci_config_readw(e->dev, PCI_CLASS_DEVICE), ==,
                    0x0200);
    g_assert_cmpint(qpci_find_capability(e->dev, PCI_CAP_ID_MSIX, 0), !=, 0);
    g_assert_cmpint(qpci_find_capability(e->dev, PCI_CAP_ID_MSI, 0), !=, 0);
    g_assert_cmpint(qpci_find_capability(e->dev, PCI_CAP_ID_EXP, 0), !=, 0);
    ernic_stop(e);
}

/*
 * Reset values and access types, table driven
 */

static void check_reset_block(Ernic *e, const RegDesc *regs, size_t n,
                              uint32_t base, uint32_t qpn)
{
    for (size_t i = 0; i < n; i++) {
        const RegDesc *r = &regs[i];
        uint32_t exp = reg_exists(r, qpn) ? expected_reset(r, base) : 0;
        uint32_t got = rd(e, base + r->off);

        if (got != exp) {
            g_test_message("%s at 0x%x: reset 0x%08x, expected 0x%08x",
                           r->name, base + r->off, got, exp);
        }
        g_assert_cmphex(got, ==, exp);
    }
}

static void test_reset_values(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t entries[] = { 0, 1, 128, ERNIC_PDT_ENTRIES - 1 };
    uint32_t qps[] = { 1, 2, 17, ERNIC_NUM_QP_DEFAULT };

    for (size_t i = 0; i < ARRAY_SIZE(entries); i++) {
        check_reset_block(e, pdt_regs, ARRAY_SIZE(pdt_regs),
                          ERNIC_PDT_OFFSET(entries[i]), 0);
    }
    check_reset_block(e, gcsr_regs, ARRAY_SIZE(gcsr_regs), 0, 0);
    for (size_t i = 0; i < ARRAY_SIZE(qps); i++) {
        check_reset_block(e, qp_regs, ARRAY_SIZE(qp_regs),
                          ERNIC_QP_OFFSET(qps[i]), qps[i]);
    }
    ernic_stop(e);
}

/*
 * Write all ones, then all zeros, to every register of a block and check
 * what reads back: RW bits follow the write, RO and reserved bits do not
 * change, W1C bits cannot be set. Registers are visited in list order, and
 * each is restored to its reset value before the next, so that enable and
 * doorbell registers do not leave the device busy.
 */
static void check_access_block(Ernic *e, const RegDesc *regs, size_t n,
                               uint32_t base, uint32_t qpn)
{
    for (size_t i = 0; i < n; i++) {
        const RegDesc *r = &regs[i];
        uint32_t addr = base + r->off;
        uint32_t reset = reg_exists(r, qpn) ? expected_reset(r, base) : 0;
        uint32_t wmask = reg_exists(r, qpn) ? r->wmask : 0;
        uint32_t ones, zeros;

        if (r->access == ERNIC_ACC_W1C) {
            /* Nothing is pending at reset: ones neither clear nor set. */
            ones = reset;
            zeros = reset;
        } else {
            ones = (reset & ~wmask) | wmask;
            zeros = reset & ~wmask;
        }
        wr(e, addr, 0xffffffff);
        if (rd(e, addr) != ones) {
            g_test_message("%s at 0x%x after writing ones", r->name, addr);
        }
        g_assert_cmphex(rd(e, addr), ==, ones);
        wr(e, addr, 0);
        g_assert_cmphex(rd(e, addr), ==, zeros);
        if (r->access != ERNIC_ACC_W1C && wmask) {
            wr(e, addr, reset);
            g_assert_cmphex(rd(e, addr), ==, reset);
        }
    }
}

static void test_access_types(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qps[] = { 1, 2, ERNIC_NUM_QP_DEFAULT };

    check_access_block(e, pdt_regs, ARRAY_SIZE(pdt_regs),
                       ERNIC_PDT_OFFSET(0), 0);
    check_access_block(e, pdt_regs, ARRAY_SIZE(pdt_regs),
                       ERNIC_PDT_OFFSET(ERNIC_PDT_ENTRIES - 1), 0);
    check_access_block(e, gcsr_regs, ARRAY_SIZE(gcsr_regs), 0, 0);
    for (size_t i = 0; i < ARRAY_SIZE(qps); i++) {
        check_access_block(e, qp_regs, ARRAY_SIZE(qp_regs),
                           ERNIC_QP_OFFSET(qps[i]), qps[i]);
    }
    ernic_stop(e);
}

/* Literal PG332 v3.1 Table 2-7 values, independent of the shared lists. */
static void test_pg332_literals(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);

    g_assert_cmphex(rd(e, 0x20008), ==, 0x965a);  /* BUF_THRESHOLD_ROCE */
    g_assert_cmphex(rd(e, 0x20018), ==, 0x965a);  /* ..._NON_ROCE */
    g_assert_cmphex(rd(e, 0x2000c), ==, 0x800);   /* XRNIC_PAUSE_CONF */

    /* XRNICCONF: [2:1] and [7:6] reserved */
    wr(e, 0x20000, 0xffffffff);
    g_assert_cmphex(rd(e, 0x20000), ==, 0xffffff39);
    wr(e, 0x20000, 0);
    /* XRNICADCONF: [0], [2], [19:16], [31:24] */
    wr(e, 0x20004, 0xfffffffe);
    g_assert_cmphex(rd(e, 0x20004), ==, 0xff0f0004);
    wr(e, 0x20004, 0);
    /* QPCONF1: bit 1 and [15:11] reserved */
    wr(e, 0x20200, 0xfffffffe);
    g_assert_cmphex(rd(e, 0x20200), ==, 0xffff07fc);
    /* TIMEOUTCONF2 at 0x2034c: [5:0] [10:8] [13:11] [20:16] */
    wr(e, 0x2034c, 0xffffffff);
    g_assert_cmphex(rd(e, 0x2034c), ==, 0x001f3f3f);
    /* BUFRKEY of PD entry 3 is 8 bits wide */
    wr(e, 0x314, 0x12345678);
    g_assert_cmphex(rd(e, 0x314), ==, 0x78);
    /* ACCESSDESC: [3:0] and [31:16] */
    wr(e, 0x31c, 0xffffffff);
    g_assert_cmphex(rd(e, 0x31c), ==, 0xffff000f);
    /* CQHEAD2 (0x20330) is read-only without the software override */
    wr(e, 0x20330, 0x1234);
    g_assert_cmphex(rd(e, 0x20330), ==, 0);
    /* STATQP2 idle: SQ empty and outstanding queue empty */
    g_assert_cmphex(rd(e, 0x20388), ==, 0x600);
    ernic_stop(e);
}

/*
 * Software override (XRNICADCONF[0])
 */

static void test_sw_override(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qps[] = { 1, 2, ERNIC_NUM_QP_DEFAULT };

    for (size_t q = 0; q < ARRAY_SIZE(qps); q++) {
        uint32_t qpn = qps[q];

        for (size_t i = 0; i < ARRAY_SIZE(qp_regs); i++) {
            const RegDesc *r = &qp_regs[i];

            if (!(r->flags & ERNIC_F_SWO)) {
                continue;
            }
            /* Gated: RO without the override. */
            wr(e, ERNIC_XRNICADCONF, 0);
            qp_wr(e, qpn, r->off, 0xffffffff);
            g_assert_cmphex(qp_rd(e, qpn, r->off), ==, 0);

            /* Writable with it (for QP1 only where the register exists). */
            wr(e, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_SWO);
            qp_wr(e, qpn, r->off, 0xa5a5a5a5);
            g_assert_cmphex(qp_rd(e, qpn, r->off), ==,
                            reg_exists(r, qpn) ? 0xa5a5a5a5 & r->mask : 0);

            /* Read-only again once the override is cleared. */
            wr(e, ERNIC_XRNICADCONF, 0);
            qp_wr(e, qpn, r->off, 0);
            g_assert_cmphex(qp_rd(e, qpn, r->off), ==,
                            reg_exists(r, qpn) ? 0xa5a5a5a5 & r->mask : 0);

            /* The recovery procedure zeroes them under the override. */
            wr(e, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_SWO);
            qp_wr(e, qpn, r->off, 0);
            g_assert_cmphex(qp_rd(e, qpn, r->off), ==, 0);
            wr(e, ERNIC_XRNICADCONF, 0);
        }
    }

    /* Registers without the flag stay RO under the override. */
    wr(e, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_SWO);
    qp_wr(e, 2, ERNIC_STATSSN, 0x123);
    qp_wr(e, 2, ERNIC_STATRESPSN, 0x123);
    qp_wr(e, 2, ERNIC_STATWQE, 0x123);
    wr(e, ERNIC_IPKTERRQWPTR, 0x12);
    g_assert_cmphex(qp_rd(e, 2, ERNIC_STATSSN), ==, 0);
    g_assert_cmphex(qp_rd(e, 2, ERNIC_STATRESPSN), ==, 0);
    g_assert_cmphex(qp_rd(e, 2, ERNIC_STATWQE), ==, 0);
    g_assert_cmphex(rd(e, ERNIC_IPKTERRQWPTR), ==, 0);
    ernic_stop(e);
}

/*
 * QP block addressing
 */

static void check_qp_addressing(uint32_t num_qp)
{
    Ernic *e = ernic_start(num_qp, NULL);
    uint32_t qpn;

    /* Every QP block is its own storage: no aliasing between blocks. */
    for (qpn = 1; qpn <= num_qp; qpn++) {
        qp_wr(e, qpn, ERNIC_DESTQPCONF, 0x100000 + qpn);
        qp_wr(e, qpn, ERNIC_QDEPTH, (qpn << 16) | qpn);
    }
    for (qpn = 1; qpn <= num_qp; qpn++) {
        g_assert_cmphex(qp_rd(e, qpn, ERNIC_DESTQPCONF), ==, 0x100000 + qpn);
        g_assert_cmphex(qp_rd(e, qpn, ERNIC_QDEPTH), ==, (qpn << 16) | qpn);
    }
    /* The literal addresses of QP1 and QP2 (PG332 p.41). */
    g_assert_cmphex(rd(e, 0x20248), ==, 0x100001);
    g_assert_cmphex(rd(e, 0x20348), ==, 0x100002);
    g_assert_cmphex(rd(e, 0x20200 + (num_qp - 1) * 0x100 + 0x48), ==,
                    0x100000 + num_qp);

    /* Registers QP1 does not have read 0 and ignore writes. */
    qp_wr(e, 1, ERNIC_SQPSN, 0x1234);
    qp_wr(e, 1, ERNIC_TIMEOUTCONF, 0x1234);
    qp_wr(e, 1, ERNIC_QPADVCONF, 0x1234);
    qp_wr(e, 1, ERNIC_PD, 0x1234);
    g_assert_cmphex(qp_rd(e, 1, ERNIC_SQPSN), ==, 0);
    g_assert_cmphex(qp_rd(e, 1, ERNIC_TIMEOUTCONF), ==, 0);
    g_assert_cmphex(qp_rd(e, 1, ERNIC_QPADVCONF), ==, 0);
    g_assert_cmphex(qp_rd(e, 1, ERNIC_PD), ==, 0);
    qp_wr(e, 2, ERNIC_SQPSN, 0x1234);
    g_assert_cmphex(qp_rd(e, 2, ERNIC_SQPSN), ==, 0x1234);

    /* Blocks above num-qp do not exist, up to the end of the window. */
    if (num_qp < ERNIC_NUM_QP_MAX) {
        qp_wr(e, num_qp + 1, ERNIC_DESTQPCONF, 0x777);
        qp_wr(e, num_qp + 1, ERNIC_QPCONF, 0xffffffff);
        g_assert_cmphex(qp_rd(e, num_qp + 1, ERNIC_DESTQPCONF), ==, 0);
        g_assert_cmphex(qp_rd(e, num_qp + 1, ERNIC_QPCONF), ==, 0);
    }
    wr(e, ERNIC_QP_OFFSET(ERNIC_NUM_QP_MAX + 1), 0xffffffff);
    g_assert_cmphex(rd(e, ERNIC_QP_OFFSET(ERNIC_NUM_QP_MAX + 1)), ==, 0);
    wr(e, ERNIC_REG_WINDOW_SIZE - 4, 0xffffffff);
    g_assert_cmphex(rd(e, ERNIC_REG_WINDOW_SIZE - 4), ==, 0);
    /* ...and they did not disturb the last real block. */
    g_assert_cmphex(qp_rd(e, num_qp, ERNIC_DESTQPCONF), ==, 0x100000 + num_qp);
    ernic_stop(e);
}

static void test_qp_addressing_8(void)
{
    check_qp_addressing(8);
}

static void test_qp_addressing_default(void)
{
    check_qp_addressing(ERNIC_NUM_QP_DEFAULT);
}

static void test_qp_addressing_256(void)
{
    check_qp_addressing(ERNIC_NUM_QP_MAX);
}

/*
 * Odd accesses: undefined offsets, sizes other than 32 bits, misalignment
 */

static void test_bad_access(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    /* Holes in the map: PDT entry tail, GCSR gaps, QP block gaps. */
    uint32_t holes[] = {
        0x20, 0xfc, ERNIC_PDT_OFFSET(7) + 0x80, 0x1fffc,
        0x2001c, 0x20030, 0x2005c, 0x20074, 0x20098, 0x20128, 0x20144,
        0x20170, 0x20188, 0x2018c, 0x201f0, 0x201fc,
        ERNIC_QP_OFFSET(2) + 0x0c, ERNIC_QP_OFFSET(2) + 0x58,
        ERNIC_QP_OFFSET(2) + 0x70, ERNIC_QP_OFFSET(2) + 0xa0,
        ERNIC_QP_OFFSET(2) + 0xfc,
    };
    uint32_t a;

    for (size_t i = 0; i < ARRAY_SIZE(holes); i++) {
        wr(e, holes[i], 0xffffffff);
        g_assert_cmphex(rd(e, holes[i]), ==, 0);
    }
    /* The holes did not alias real registers. */
    g_assert_cmphex(rd(e, ERNIC_PDT_OFFSET(0) + ERNIC_PDPDNUM), ==, 0);
    g_assert_cmphex(rd(e, ERNIC_XRNIC_BUF_THRESHOLD_NON_ROCE), ==, 0x965a);
    g_assert_cmphex(rd(e, ERNIC_INTEN), ==, 0);
    g_assert_cmphex(qp_rd(e, 2, ERNIC_RQBA), ==, 0);

    /* Sizes other than 4 and misaligned 4-byte accesses: read 0, no write. */
    a = ERNIC_IPv4XADD;
    wr(e, a, 0x11223344);
    g_assert_cmphex(qpci_io_readb(e->dev, e->bar, a), ==, 0);
    g_assert_cmphex(qpci_io_readw(e->dev, e->bar, a), ==, 0);
    g_assert_cmphex(qpci_io_readq(e->dev, e->bar, a), ==, 0);
    g_assert_cmphex(qpci_io_readl(e->dev, e->bar, a + 1), ==, 0);
    qpci_io_writeb(e->dev, e->bar, a, 0xff);
    qpci_io_writew(e->dev, e->bar, a + 2, 0xffff);
    qpci_io_writeq(e->dev, e->bar, a, 0xffffffffffffffffULL);
    qpci_io_writel(e->dev, e->bar, a + 2, 0xffffffff);
    g_assert_cmphex(rd(e, a), ==, 0x11223344);
    g_assert_cmphex(rd(e, a + 4), ==, 0);       /* hole after IPv4XADD */
    ernic_stop(e);
}

/*
 * Interrupts: INTEN/INTSTS, the per-QP banks, MSI-X and MSI delivery.
 * The register-visible trigger available here is the illegal-opcode check
 * of the WQE processor (INTSTS[5]); a WQE with a reserved opcode is
 * completed with ERRFLAG set (INTSTS[4], CQINTSTSn).
 */

static void setup_qp(Ernic *e, uint32_t qpn, uint32_t qpconf_extra)
{
    wr(e, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN);
    qp_wr(e, qpn, ERNIC_SQBA, SQ_ADDR);
    qp_wr(e, qpn, ERNIC_SQBAMSB, 0);
    qp_wr(e, qpn, ERNIC_CQBA, CQ_ADDR);
    qp_wr(e, qpn, ERNIC_CQDBADD, CQDB_ADDR);
    qp_wr(e, qpn, ERNIC_QDEPTH, (16 << 16) | 16);
    qp_wr(e, qpn, ERNIC_QPCONF, ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_HW_HS_DIS |
          ERNIC_QPCONF_CQE_WR_EN | qpconf_extra);
}

static void post_wqe(Ernic *e, uint32_t slot, uint16_t wrid, uint8_t opcode)
{
    uint8_t wqe[ERNIC_WQE_SIZE] = { 0 };

    stw_le_p(&wqe[ERNIC_WQE_WRID], wrid);
    wqe[ERNIC_WQE_OPCODE] = opcode;
    qtest_memwrite(e->qts, SQ_ADDR + slot * ERNIC_WQE_SIZE, wqe, sizeof(wqe));
}

/* Post an illegal-opcode WQE at slot @slot and wait for its completion. */
static void trigger_illegal_opcode(Ernic *e, uint32_t qpn, uint32_t slot)
{
    post_wqe(e, slot, 0xbe00 + slot, 0x07);
    qp_wr(e, qpn, ERNIC_SQPI, slot + 1);
    WAIT_FOR(e, qp_rd(e, qpn, ERNIC_CQHEAD) == slot + 1);
}

static void test_illegal_opcode_w1c(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qpn = 2;

    setup_qp(e, qpn, ERNIC_QPCONF_CQ_INT_EN);
    trigger_illegal_opcode(e, qpn, 0);

    /* Completion reported in CQHEAD, the CQ doorbell word and the CQE. */
    g_assert_cmphex(qp_rd(e, qpn, ERNIC_CQHEAD), ==, 1);
    g_assert_cmphex(qtest_readl(e->qts, CQDB_ADDR), ==, 1);
    g_assert_cmphex(qtest_readl(e->qts, CQ_ADDR), ==,
                    (1u << ERNIC_CQE_ERRFLAG_SHIFT) |
                    (0x07 << ERNIC_CQE_OPCODE_SHIFT) | 0xbe00);
    g_assert_cmphex(qp_rd(e, qpn, ERNIC_STATQP) &
                    (ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY), ==,
                    ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);

    /* INTSTS is set whether or not INTEN enables the line. */
    g_assert_cmphex(rd(e, ERNIC_INTSTS), ==,
                    ERNIC_INT_ILLEGAL_OPCODE | ERNIC_INT_WQE_COMPLETION);
    /* Bank 1, bit 2 is QP2; no RQ event. */
    g_assert_cmphex(rd(e, ERNIC_CQINTSTS(1)), ==, 1u << 2);
    g_assert_cmphex(rd(e, ERNIC_RQINTSTS(1)), ==, 0);

    /* W1C: zeros and unrelated ones change nothing, a one clears its bit. */
    wr(e, ERNIC_INTSTS, 0);
    wr(e, ERNIC_INTSTS, ERNIC_INT_FATAL | ERNIC_INT_MAD_RECEIVED);
    g_assert_cmphex(rd(e, ERNIC_INTSTS), ==,
                    ERNIC_INT_ILLEGAL_OPCODE | ERNIC_INT_WQE_COMPLETION);
    wr(e, ERNIC_INTSTS, ERNIC_INT_ILLEGAL_OPCODE);
    g_assert_cmphex(rd(e, ERNIC_INTSTS), ==, ERNIC_INT_WQE_COMPLETION);
    wr(e, ERNIC_CQINTSTS(1), 1u << 3);
    g_assert_cmphex(rd(e, ERNIC_CQINTSTS(1)), ==, 1u << 2);
    wr(e, ERNIC_CQINTSTS(1), 1u << 2);
    g_assert_cmphex(rd(e, ERNIC_CQINTSTS(1)), ==, 0);
    wr(e, ERNIC_INTSTS, 0xffffffff);
    g_assert_cmphex(rd(e, ERNIC_INTSTS), ==, 0);
    ernic_stop(e);
}

/* QPCONF[3] clear: no CQ bank bit and no INTSTS[4]; INTSTS[5] still. */
static void test_cq_int_gating(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qpn = 32;                  /* bank 2, bit 0 */

    setup_qp(e, qpn, 0);
    trigger_illegal_opcode(e, qpn, 0);
    g_assert_cmphex(rd(e, ERNIC_INTSTS), ==, ERNIC_INT_ILLEGAL_OPCODE);
    g_assert_cmphex(rd(e, ERNIC_CQINTSTS(2)), ==, 0);

    qp_wr(e, qpn, ERNIC_QPCONF, qp_rd(e, qpn, ERNIC_QPCONF) |
          ERNIC_QPCONF_CQ_INT_EN);
    trigger_illegal_opcode(e, qpn, 1);
    g_assert_cmphex(rd(e, ERNIC_CQINTSTS(1)), ==, 0);
    g_assert_cmphex(rd(e, ERNIC_CQINTSTS(2)), ==, 1u << 0);
    ernic_stop(e);
}

/* QP256 (num-qp=256) lies beyond the last bank: no bank bit anywhere. */
static void test_cq_bank_qp256(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_MAX, NULL);
    uint32_t n;

    setup_qp(e, ERNIC_NUM_QP_MAX, ERNIC_QPCONF_CQ_INT_EN);
    trigger_illegal_opcode(e, ERNIC_NUM_QP_MAX, 0);
    g_assert_cmphex(rd(e, ERNIC_INTSTS), ==,
                    ERNIC_INT_ILLEGAL_OPCODE | ERNIC_INT_WQE_COMPLETION);
    for (n = 1; n <= ERNIC_INTSTS_BANKS; n++) {
        g_assert_cmphex(rd(e, ERNIC_CQINTSTS(n)), ==, 0);
        g_assert_cmphex(rd(e, ERNIC_CNPSCHDSTSREG(n)), ==, 0);
    }
    /* QP255 is bank 8, bit 31. */
    setup_qp(e, 255, ERNIC_QPCONF_CQ_INT_EN);
    trigger_illegal_opcode(e, 255, 0);
    g_assert_cmphex(rd(e, ERNIC_CQINTSTS(8)), ==, 1u << 31);
    ernic_stop(e);
}

/* Program MSI-X vector 0 to write MSI_DATA to guest RAM, and unmask it. */
static void msix_vector_to_ram(Ernic *e)
{
    uint64_t entry = e->dev->msix_table_off + 0 * PCI_MSIX_ENTRY_SIZE;

    qpci_msix_enable(e->dev);
    qpci_io_writel(e->dev, e->dev->msix_table_bar,
                   entry + PCI_MSIX_ENTRY_LOWER_ADDR, MSI_ADDR);
    qpci_io_writel(e->dev, e->dev->msix_table_bar,
                   entry + PCI_MSIX_ENTRY_UPPER_ADDR, 0);
    qpci_io_writel(e->dev, e->dev->msix_table_bar,
                   entry + PCI_MSIX_ENTRY_DATA, MSI_DATA);
    qpci_io_writel(e->dev, e->dev->msix_table_bar,
                   entry + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
}

static bool msi_seen(Ernic *e)
{
    bool seen = qtest_readl(e->qts, MSI_ADDR) == MSI_DATA;

    qtest_writel(e->qts, MSI_ADDR, 0);
    return seen;
}

static void test_msix(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qpn = 2;

    msix_vector_to_ram(e);
    qtest_writel(e->qts, MSI_ADDR, 0);
    setup_qp(e, qpn, ERNIC_QPCONF_CQ_INT_EN);

    /* INTEN clear: the cause is recorded, no message. */
    trigger_illegal_opcode(e, qpn, 0);
    g_assert_cmphex(rd(e, ERNIC_INTSTS) & ERNIC_INT_ILLEGAL_OPCODE, !=, 0);
    g_assert_false(msi_seen(e));

    /* Enabling a pending cause delivers it at once. */
    wr(e, ERNIC_INTEN, ERNIC_INT_ILLEGAL_OPCODE);
    g_assert_true(msi_seen(e));

    /* A new event of a cause still pending is coalesced into it. */
    trigger_illegal_opcode(e, qpn, 1);
    g_assert_false(msi_seen(e));

    /* Acknowledging everything: no message. A new event: a message. */
    wr(e, ERNIC_INTSTS, ERNIC_INT_ALL);
    g_assert_false(msi_seen(e));
    trigger_illegal_opcode(e, qpn, 2);
    g_assert_true(msi_seen(e));

    /*
     * Partial acknowledge: with INTSTS[4] enabled too, clearing only [5]
     * leaves [4] pending, and the device signals again.
     */
    wr(e, ERNIC_INTEN, ERNIC_INT_ILLEGAL_OPCODE | ERNIC_INT_WQE_COMPLETION);
    g_assert_true(msi_seen(e));
    wr(e, ERNIC_INTSTS, ERNIC_INT_ILLEGAL_OPCODE);
    g_assert_true(msi_seen(e));
    wr(e, ERNIC_INTSTS, ERNIC_INT_WQE_COMPLETION);
    g_assert_false(msi_seen(e));

    /* A masked vector leaves the message pending in the PBA. */
    qpci_io_writel(e->dev, e->dev->msix_table_bar,
                   e->dev->msix_table_off + PCI_MSIX_ENTRY_VECTOR_CTRL,
                   PCI_MSIX_ENTRY_CTRL_MASKBIT);
    trigger_illegal_opcode(e, qpn, 3);
    g_assert_false(msi_seen(e));
    g_assert_true(qpci_msix_pending(e->dev, ERNIC_MSIX_VEC_ERNIC));
    ernic_stop(e);
}

static void test_msi(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint8_t cap = qpci_find_capability(e->dev, PCI_CAP_ID_MSI, 0);
    uint16_t flags = qpci_config_readw(e->dev, cap + PCI_MSI_FLAGS);
    uint32_t data_off = (flags & PCI_MSI_FLAGS_64BIT) ? PCI_MSI_DATA_64
                                                      : PCI_MSI_DATA_32;

    qpci_config_writel(e->dev, cap + PCI_MSI_ADDRESS_LO, MSI_ADDR);
    if (flags & PCI_MSI_FLAGS_64BIT) {
        qpci_config_writel(e->dev, cap + PCI_MSI_ADDRESS_HI, 0);
    }
    qpci_config_writew(e->dev, cap + data_off, MSI_DATA & 0xffff);
    qpci_config_writew(e->dev, cap + PCI_MSI_FLAGS,
                       flags | PCI_MSI_FLAGS_ENABLE);
    qtest_writel(e->qts, MSI_ADDR, 0);

    setup_qp(e, 2, 0);
    wr(e, ERNIC_INTEN, ERNIC_INT_ILLEGAL_OPCODE);
    trigger_illegal_opcode(e, 2, 0);
    /* MSI data is 16 bits wide. */
    g_assert_cmphex(qtest_readl(e->qts, MSI_ADDR), ==, MSI_DATA & 0xffff);
    ernic_stop(e);
}

/* INTx: with MSI-X and MSI off, the line follows INTSTS & INTEN. */
static int intx_level(Ernic *e)
{
    int high = 0;

    /* q35 routes PCI INTx pins to IOAPIC inputs 16..23. */
    for (int gsi = 16; gsi < 24; gsi++) {
        high += qtest_get_irq(e->qts, gsi);
    }
    return high;
}

static void test_intx(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);

    qtest_irq_intercept_in(e->qts, "ioapic");
    g_assert_cmpint(qpci_config_readb(e->dev, PCI_INTERRUPT_PIN), ==, 1);
    setup_qp(e, 2, 0);
    trigger_illegal_opcode(e, 2, 0);
    g_assert_cmpint(intx_level(e), ==, 0);          /* INTEN clear */
    wr(e, ERNIC_INTEN, ERNIC_INT_ILLEGAL_OPCODE);
    g_assert_cmpint(intx_level(e), ==, 1);
    wr(e, ERNIC_INTEN, 0);
    g_assert_cmpint(intx_level(e), ==, 0);
    wr(e, ERNIC_INTEN, ERNIC_INT_ILLEGAL_OPCODE);
    g_assert_cmpint(intx_level(e), ==, 1);
    wr(e, ERNIC_INTSTS, ERNIC_INT_ILLEGAL_OPCODE);
    g_assert_cmpint(intx_level(e), ==, 0);
    ernic_stop(e);
}

/*
 * Send queue index handling used by the software procedures of PG332 ch.6
 */

static void test_sq_wrap_and_override(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qpn = 3, i;

    setup_qp(e, qpn, 0);
    qp_wr(e, qpn, ERNIC_QDEPTH, (4 << 16) | 4);

    /* XIB-style numbering: SQPI cycles 1..depth; CQHEAD follows it. */
    for (i = 1; i <= 9; i++) {
        uint32_t pi = (i - 1) % 4 + 1;

        post_wqe(e, (i - 1) % 4, i, 0x0f);
        qp_wr(e, qpn, ERNIC_SQPI, pi);
        WAIT_FOR(e, qp_rd(e, qpn, ERNIC_CQHEAD) == pi);
        g_assert_cmphex(qtest_readl(e->qts, CQDB_ADDR), ==, pi);
        g_assert_cmphex(qtest_readl(e->qts, CQ_ADDR + 4 * ((i - 1) % 4)) &
                        ERNIC_CQE_WRID_MASK, ==, i);
    }
    g_assert_cmphex(qp_rd(e, qpn, ERNIC_STATWQE), ==, 9);

    /* A batch of three WQEs behind one doorbell. */
    for (i = 0; i < 3; i++) {
        post_wqe(e, (1 + i) % 4, 0x100 + i, 0x0f);
    }
    qp_wr(e, qpn, ERNIC_SQPI, 4);
    WAIT_FOR(e, qp_rd(e, qpn, ERNIC_CQHEAD) == 4);
    g_assert_cmphex(qtest_readl(e->qts, CQ_ADDR + 4 * 3) &
                    ERNIC_CQE_WRID_MASK, ==, 0x102);

    /*
     * Zeroing the pointers under the software override (QP deletion and
     * fatal recovery, PG332 ch.6) restarts the SQ at slot 0.
     */
    qp_wr(e, qpn, ERNIC_QPCONF, qp_rd(e, qpn, ERNIC_QPCONF) &
          ~ERNIC_QPCONF_QP_EN);
    wr(e, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_SWO);
    qp_wr(e, qpn, ERNIC_SQPI, 0);
    qp_wr(e, qpn, ERNIC_CQHEAD, 0);
    qp_wr(e, qpn, ERNIC_STATCURSQPTR, 0);
    g_assert_cmphex(qp_rd(e, qpn, ERNIC_CQHEAD), ==, 0);
    wr(e, ERNIC_XRNICADCONF, 0);
    qp_wr(e, qpn, ERNIC_QPCONF, qp_rd(e, qpn, ERNIC_QPCONF) |
          ERNIC_QPCONF_QP_EN);
    post_wqe(e, 0, 0x200, 0x0f);
    qp_wr(e, qpn, ERNIC_SQPI, 1);
    WAIT_FOR(e, qp_rd(e, qpn, ERNIC_CQHEAD) == 1);
    g_assert_cmphex(qtest_readl(e->qts, CQ_ADDR) & ERNIC_CQE_WRID_MASK, ==,
                    0x200);
    ernic_stop(e);
}

/* Doorbells on a disabled QP or device are kept until it is enabled. */
static void test_sq_disabled(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qpn = 2;

    setup_qp(e, qpn, 0);
    wr(e, ERNIC_XRNICCONF, 0);
    post_wqe(e, 0, 1, 0x0f);
    qp_wr(e, qpn, ERNIC_SQPI, 1);
    qtest_clock_step(e->qts, 1000000);
    g_assert_cmphex(qp_rd(e, qpn, ERNIC_CQHEAD), ==, 0);
    g_assert_cmphex(rd(e, ERNIC_INTSTS), ==, 0);
    wr(e, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN);
    WAIT_FOR(e, qp_rd(e, qpn, ERNIC_CQHEAD) == 1);
    ernic_stop(e);
}

/* Guest-controlled queue geometry cannot hang or crash the device. */
static void test_sq_hostile(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qpn = 2;

    setup_qp(e, qpn, 0);
    /* Depth 0 and 1: doorbell ignored. */
    qp_wr(e, qpn, ERNIC_QDEPTH, 0);
    qp_wr(e, qpn, ERNIC_SQPI, 0xffff);
    qp_wr(e, qpn, ERNIC_QDEPTH, 1);
    qp_wr(e, qpn, ERNIC_SQPI, 0x1234);
    qtest_clock_step(e->qts, 1000000);
    g_assert_cmphex(qp_rd(e, qpn, ERNIC_CQHEAD), ==, 0);

    /* SQ at the top of the address space: the fetch fails, nothing else. */
    qp_wr(e, qpn, ERNIC_QDEPTH, 0xffffffff);
    qp_wr(e, qpn, ERNIC_SQBA, 0xffffffe0);
    qp_wr(e, qpn, ERNIC_SQBAMSB, 0xffffffff);
    qp_wr(e, qpn, ERNIC_SQPI, 0xfffe);
    qtest_clock_step(e->qts, 1000000);
    g_assert_cmphex(qp_rd(e, qpn, ERNIC_CQHEAD), ==, 0);

    /* The device still answers. */
    g_assert_cmphex(rd(e, ERNIC_XRNIC_BUF_THRESHOLD_ROCE), ==, 0x965a);
    ernic_stop(e);
}

/* Hardware-handshake mode (QPCONF[4]=0): register doorbells are not used. */
static void test_sq_hw_handshake(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);
    uint32_t qpn = 2;

    setup_qp(e, qpn, 0);
    qp_wr(e, qpn, ERNIC_QPCONF, ERNIC_QPCONF_QP_EN);
    post_wqe(e, 0, 1, 0x0f);
    qp_wr(e, qpn, ERNIC_SQPI, 1);
    qtest_clock_step(e->qts, 1000000);
    g_assert_cmphex(qp_rd(e, qpn, ERNIC_CQHEAD), ==, 0);
    g_assert_cmphex(rd(e, ERNIC_INTSTS), ==, 0);
    ernic_stop(e);
}

/*
 * Reset
 */

/*
 * -device ernic,help describes every property of the device's own (a
 * property without a description prints as "name=<type>  -  (default:").
 */
static void test_properties_described(void)
{
    static const char *const props[] = {
        "num-qp", "ext", "mr-entries", "layout", "card-mem",
        "card-memdev", "db-eventfd",
    };
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *out = NULL, *err = NULL;
    const char *argv[] = { qemu, "-device", "ernic,help", NULL };
    g_auto(GStrv) lines = NULL;
    int status;

    g_assert(qemu);
    g_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL,
                          NULL, &out, &err, &status, NULL));
    g_assert_cmpint(status, ==, 0);
    lines = g_strsplit(out, "\n", -1);
    for (size_t i = 0; i < G_N_ELEMENTS(props); i++) {
        g_autofree char *key = g_strdup_printf("  %s=<", props[i]);
        const char *desc = NULL;

        for (char **l = lines; *l; l++) {
            if (g_str_has_prefix(*l, key)) {
                desc = strstr(*l, " - ");
            }
        }
        g_test_message("%s: %s", props[i], desc ? desc : "(none)");
        g_assert(desc);
        desc += 3;
        g_assert(*desc && *desc != ' ' && !g_str_has_prefix(desc, "on/off"));
    }
}

static void test_system_reset(void)
{
    Ernic *e = ernic_start(ERNIC_NUM_QP_DEFAULT, NULL);

    setup_qp(e, 2, ERNIC_QPCONF_CQ_INT_EN);
    trigger_illegal_opcode(e, 2, 0);
    wr(e, ERNIC_PDT_OFFSET(5) + ERNIC_BUFRKEY, 0x42);
    g_assert_cmphex(rd(e, ERNIC_INTSTS), !=, 0);

    qtest_system_reset(e->qts);
    /* Reset unassigned the BARs: map them again. */
    qpci_iounmap(e->dev, e->bar);
    qpci_device_enable(e->dev);
    e->bar = qpci_iomap(e->dev, ERNIC_BAR_REGS, NULL);
    check_reset_block(e, gcsr_regs, ARRAY_SIZE(gcsr_regs), 0, 0);
    check_reset_block(e, qp_regs, ARRAY_SIZE(qp_regs), ERNIC_QP_OFFSET(2), 2);
    check_reset_block(e, pdt_regs, ARRAY_SIZE(pdt_regs),
                      ERNIC_PDT_OFFSET(5), 0);
    ernic_stop(e);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/ernic/pci-id", test_pci_id);
    qtest_add_func("/ernic/regs/reset-values", test_reset_values);
    qtest_add_func("/ernic/regs/access-types", test_access_types);
    qtest_add_func("/ernic/regs/pg332-literals", test_pg332_literals);
    qtest_add_func("/ernic/regs/sw-override", test_sw_override);
    qtest_add_func("/ernic/regs/qp-addressing/8", test_qp_addressing_8);
    qtest_add_func("/ernic/regs/qp-addressing/32",
                   test_qp_addressing_default);
    qtest_add_func("/ernic/regs/qp-addressing/256", test_qp_addressing_256);
    qtest_add_func("/ernic/regs/bad-access", test_bad_access);
    qtest_add_func("/ernic/irq/illegal-opcode-w1c", test_illegal_opcode_w1c);
    qtest_add_func("/ernic/irq/cq-int-gating", test_cq_int_gating);
    qtest_add_func("/ernic/irq/cq-bank-qp256", test_cq_bank_qp256);
    qtest_add_func("/ernic/irq/msix", test_msix);
    qtest_add_func("/ernic/irq/msi", test_msi);
    qtest_add_func("/ernic/irq/intx", test_intx);
    qtest_add_func("/ernic/sq/wrap-and-override", test_sq_wrap_and_override);
    qtest_add_func("/ernic/sq/disabled", test_sq_disabled);
    qtest_add_func("/ernic/sq/hostile", test_sq_hostile);
    qtest_add_func("/ernic/sq/hw-handshake", test_sq_hw_handshake);
    qtest_add_func("/ernic/reset", test_system_reset);
    qtest_add_func("/ernic/properties/described", test_properties_described);

    return g_test_run();
}
