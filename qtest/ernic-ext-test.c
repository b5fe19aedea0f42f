/*
 * QTest for ERNIC-X, the verbs extension (docs/extension.md): discovery,
 * the ext=off device, the EXTCTRL rules, the MR command window, remote
 * READ and WRITE through page-list regions of the extended MR table, fast
 * registration, receive metadata and remote invalidation, each refusal
 * with its PG332 FATAL code.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "qobject/qdict.h"

/* A page-list region on device 1: three pages, out of order in memory. */
#define XMR_INDEX       7
#define XMR_KEY         0x33
#define XRKEY           ((XMR_INDEX << 8) | XMR_KEY)
#define XMR_IOVA        0x500000000123ULL       /* 0x123 into page 0 */
#define XMR_LEN         (3 * 4096 - 0x123)
#define XMR_PBL_OFF     (MR_OFF + 0x40000)

static const uint32_t xmr_page_off[3] = {
    MR_OFF + 0x20000, MR_OFF + 0x10000, MR_OFF + 0x30000,
};

/* Offset of the extension's capability in config space, or 0. */
static uint8_t ext_cap(QPCIDevice *pci)
{
    uint8_t off = qpci_config_readb(pci, PCI_CAPABILITY_LIST);

    for (int n = 0; off && n < 48; n++) {
        if (qpci_config_readb(pci, off) == ERNIC_EXT_CAP_ID) {
            return off;
        }
        off = qpci_config_readb(pci, off + 1);
    }
    return 0;
}

static void mr_window(ErnicRig *r, int i, uint32_t state, uint32_t pd,
                      uint32_t acc, uint64_t iova, uint64_t len, uint64_t pbl,
                      uint32_t npages)
{
    ernic_rig_wr(r, i, ERNIC_MRKEY, XMR_KEY | state << ERNIC_MRKEY_STATE_SHIFT);
    ernic_rig_wr(r, i, ERNIC_MRPD, pd);
    ernic_rig_wr(r, i, ERNIC_MRACC, acc);
    ernic_rig_wr(r, i, ERNIC_MRIOVALO, iova);
    ernic_rig_wr(r, i, ERNIC_MRIOVAHI, iova >> 32);
    ernic_rig_wr(r, i, ERNIC_MRLENLO, len);
    ernic_rig_wr(r, i, ERNIC_MRLENHI, len >> 32);
    ernic_rig_wr(r, i, ERNIC_MRPBLLO, pbl);
    ernic_rig_wr(r, i, ERNIC_MRPBLHI, pbl >> 32);
    ernic_rig_wr(r, i, ERNIC_MRNPAGES, npages);
}

static uint32_t mr_cmd(ErnicRig *r, int i, uint32_t idx, uint32_t cmd)
{
    ernic_rig_wr(r, i, ERNIC_MRIDX, idx);
    ernic_rig_wr(r, i, ERNIC_MRCMD, cmd);
    return ernic_rig_rd(r, i, ERNIC_MRSTS);
}

/* Entry XMR_INDEX of device 1, written through the window. */
static void put_entry(ErnicRig *r, uint32_t state, uint32_t pd, uint32_t acc,
                      uint64_t iova, uint64_t len, uint64_t pbl,
                      uint32_t npages)
{
    mr_window(r, 1, state, pd, acc, iova, len, pbl, npages);
    g_assert_cmpuint(mr_cmd(r, 1, XMR_INDEX, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_OK);
}

/* The page-list region XRKEY on device 1, with access @acc, PD @pd. */
static void setup_paged_mr(ErnicRig *r, uint32_t acc, uint32_t pd)
{
    for (int p = 0; p < 3; p++) {
        qtest_writeq(r->qts, DEV_BASE(1) + XMR_PBL_OFF + p * 8,
                     DEV_BASE(1) + xmr_page_off[p]);
    }
    put_entry(r, ERNIC_MR_VALID, pd, acc | 12 << ERNIC_MRACC_SHIFT_SHIFT,
              XMR_IOVA, XMR_LEN, DEV_BASE(1) + XMR_PBL_OFF, 3);
}

/* Two devices with the extension features @feat on, QPs connected. */
static ErnicRig *ext_pair_with(uint32_t feat)
{
    ErnicRig *r = ernic_rig_start(NULL);

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, feat);
        g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_EXTCTRL), ==, feat);
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    return r;
}

static ErnicRig *ext_pair(void)
{
    return ext_pair_with(ERNIC_EXT_F_MR);
}

/* With ext=off: no capability, and the range is PG332's undefined space. */
static void test_off(void)
{
    QTestState *qts = qtest_init("-M q35 -nodefaults "
                                 "-device ernic,addr=04.0,ext=off");
    QPCIBus *bus = qpci_new_pc(qts, NULL);
    QPCIDevice *pci = qpci_device_find(bus, QPCI_DEVFN(4, 0));
    uint64_t size;
    QPCIBar bar;

    qpci_device_enable(pci);
    bar = qpci_iomap(pci, ERNIC_BAR_REGS, &size);
    g_assert_cmpuint(ext_cap(pci), ==, 0);
    g_assert_cmphex(qpci_config_readl(pci, PCI_BASE_ADDRESS_3), ==, 0);
    for (uint32_t off = ERNIC_EXT_BASE; off < ERNIC_EXT_BASE + 0x100;
         off += 4) {
        qpci_io_writel(pci, bar, off, 0xffffffff);
        g_assert_cmphex(qpci_io_readl(pci, bar, off), ==, 0);
    }
    g_free(pci);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_discovery(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    QPCIDevice *pci = r->d[0].e.pdev;
    uint8_t cap = ext_cap(pci);

    g_assert_cmpuint(cap, !=, 0);
    g_assert_cmpuint(qpci_config_readb(pci, cap + 2), ==, ERNIC_EXT_CAP_LEN);
    g_assert_cmpuint(qpci_config_readb(pci, cap + ERNIC_EXT_CAP_VERSION), ==,
                     ERNIC_EXT_VERSION);
    g_assert_cmphex(qpci_config_readl(pci, cap + ERNIC_EXT_CAP_LOC), ==,
                    ERNIC_EXT_BASE | ERNIC_BAR_REGS);
    g_assert_cmphex(qpci_config_readl(pci, cap + ERNIC_EXT_CAP_FEAT), ==,
                    ERNIC_EXT_F_ALL);
    g_assert_cmphex(qpci_config_readl(pci, cap + ERNIC_EXT_CAP_SIZE), ==,
                    ERNIC_EXT_SIZE);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTID), ==, ERNIC_EXT_ID_VALUE);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTFEAT), ==, ERNIC_EXT_F_ALL);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, 0);
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_EXTMRMAX), ==,
                     ERNIC_EXT_MR_DEFAULT);
    /* Read-only registers keep their value. */
    ernic_rig_wr(r, 0, ERNIC_EXTID, 0);
    ernic_rig_wr(r, 0, ERNIC_EXTFEAT, 0);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTID), ==, ERNIC_EXT_ID_VALUE);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTFEAT), ==, ERNIC_EXT_F_ALL);
    ernic_rig_stop(r);

    r = ernic_rig_start("-global ernic.mr-entries=256");
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_EXTMRMAX), ==, 256);
    ernic_rig_stop(r);
}

/*
 * EXTCTRL changes only while ERNIC is disabled; its reserved bits (the
 * features the device lacks) read 0, as every reserved bit does.
 */
static void test_ctrl(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    /* Remote invalidation and user QPs name MR keys: not without MR. */
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, ERNIC_EXT_F_RINV);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, 0);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, ERNIC_EXT_F_UDB);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, 0);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, ERNIC_EXT_F_RXMETA);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, ERNIC_EXT_F_RXMETA);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, 0);
    ernic_rig_wr(r, 0, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, ERNIC_EXT_F_MR);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, 0);
    ernic_rig_wr(r, 0, ERNIC_XRNICCONF, 0);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, 0xffffffff);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, ERNIC_EXT_F_ALL);
    ernic_rig_wr(r, 0, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, 0);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, ERNIC_EXT_F_ALL);
    ernic_rig_stop(r);
}

/* The MR command window: write, read back, invalidate, and refusals. */
static void test_mr_window(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t acc = ERNIC_MRACC_REMOTE_WRITE | 12 << ERNIC_MRACC_SHIFT_SHIFT;

    mr_window(r, 0, ERNIC_MR_VALID, PD_NUM, acc, XMR_IOVA, XMR_LEN,
              0x123450000ULL, 3);
    g_assert_cmpuint(mr_cmd(r, 0, XMR_INDEX, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_OK);
    mr_window(r, 0, 0, 0, 0, 0, 0, 0, 0);
    g_assert_cmpuint(mr_cmd(r, 0, XMR_INDEX, ERNIC_MRCMD_READ), ==,
                     ERNIC_MRSTS_OK);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRKEY), ==,
                    XMR_KEY | ERNIC_MR_VALID << ERNIC_MRKEY_STATE_SHIFT);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRPD), ==, PD_NUM);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRACC), ==, acc);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRIOVALO), ==, (uint32_t)XMR_IOVA);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRIOVAHI), ==, XMR_IOVA >> 32);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRLENLO), ==, XMR_LEN);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRPBLLO), ==, 0x23450000);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRPBLHI), ==, 1);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRNPAGES), ==, 3);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRCMD), ==, 0);

    g_assert_cmpuint(mr_cmd(r, 0, XMR_INDEX, ERNIC_MRCMD_INVALIDATE), ==,
                     ERNIC_MRSTS_OK);
    mr_cmd(r, 0, XMR_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRKEY), ==,
                    XMR_KEY | ERNIC_MR_INVALID << ERNIC_MRKEY_STATE_SHIFT);

    /* Past the table, an unknown command, fields out of range. */
    g_assert_cmpuint(mr_cmd(r, 0, ERNIC_EXT_MR_DEFAULT, ERNIC_MRCMD_READ),
                     ==, ERNIC_MRSTS_BAD_INDEX);
    g_assert_cmpuint(mr_cmd(r, 0, 0, 9), ==, ERNIC_MRSTS_BAD_COMMAND);
    mr_window(r, 0, ERNIC_MR_VALID, PD_NUM,
              ERNIC_MRACC_REMOTE_WRITE | 11 << ERNIC_MRACC_SHIFT_SHIFT,
              XMR_IOVA, XMR_LEN, 0x1000, 3);
    g_assert_cmpuint(mr_cmd(r, 0, 1, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_BAD_FIELD);
    mr_window(r, 0, ERNIC_MR_VALID, PD_NUM, acc, XMR_IOVA, XMR_LEN + 1,
              0x1000, 3);
    g_assert_cmpuint(mr_cmd(r, 0, 1, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_BAD_FIELD);
    mr_window(r, 0, ERNIC_MR_VALID, PD_NUM, acc, XMR_IOVA, XMR_LEN,
              0x1004, 3);
    g_assert_cmpuint(mr_cmd(r, 0, 1, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_BAD_FIELD);
    /*
     * Offset in the first page plus length is exactly 2^64: the region
     * ends at the top of the address space, far beyond its three pages.
     */
    mr_window(r, 0, ERNIC_MR_VALID, PD_NUM, acc, 0x123, -0x123ULL, 0x1000,
              3);
    g_assert_cmpuint(mr_cmd(r, 0, 1, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_BAD_FIELD);
    mr_window(r, 0, 3, PD_NUM, acc, XMR_IOVA, XMR_LEN, 0x1000, 3);
    g_assert_cmpuint(mr_cmd(r, 0, 1, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_BAD_FIELD);
    mr_window(r, 0, ERNIC_MR_VALID, PD_NUM, acc, ~0ULL - 10, 20, 0x1000, 3);
    g_assert_cmpuint(mr_cmd(r, 0, 1, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_BAD_FIELD);
    /* A refused write leaves the entry as it was. */
    mr_cmd(r, 0, 1, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRKEY), ==, 0);
    ernic_rig_stop(r);
}

/* mr-entries out of range: realize fails with a message. */
static void test_mr_property(void)
{
    ernic_rig_assert_refused("mr-entries=100",
                             "mr-entries must be between 256 and 65536");
}

/* A WRITE of 10000 bytes lands in the three pages, in IOVA order. */
static void test_write_paged(void)
{
    ErnicRig *r = ext_pair();
    uint32_t off = 50, len = 10000, pos = 0x123 + off, done = 0;
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, len, 11);
    g_autofree uint8_t *zero = g_malloc0(4096);

    setup_paged_mr(r, ERNIC_MRACC_REMOTE_WRITE, PD_NUM);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, len, XMR_IOVA + off, XRKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERNIC_OP_WRITE << 16);
    for (int pg = 0; pg < 3; pg++) {
        uint64_t base = DEV_BASE(1) + xmr_page_off[pg];
        uint32_t lo = pg ? 0 : pos, hi = MIN(4096, pos + len - pg * 4096);

        ernic_rig_assert_mem(r, base, zero, lo);
        ernic_rig_assert_mem(r, base + lo, p + done, hi - lo);
        ernic_rig_assert_mem(r, base + hi, zero, 4096 - hi);
        done += hi - lo;
    }
    g_assert_cmpuint(done, ==, len);
    g_free(p);
    ernic_rig_stop(r);
}

/* A READ of the whole region gathers the three pages in IOVA order. */
static void test_read_paged(void)
{
    ErnicRig *r = ext_pair();
    g_autofree uint8_t *want = g_malloc(XMR_LEN);
    uint32_t done = 0;

    for (int pg = 0; pg < 3; pg++) {
        uint32_t lo = pg ? 0 : 0x123;
        uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(1) + xmr_page_off[pg] +
                                           lo, 4096 - lo, 40 + pg);

        memcpy(want + done, p, 4096 - lo);
        done += 4096 - lo;
        g_free(p);
    }
    setup_paged_mr(r, ERNIC_MRACC_REMOTE_READ, PD_NUM);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF, XMR_LEN, XMR_IOVA, XRKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERNIC_OP_READ << 16);
    ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF, want, XMR_LEN);
    ernic_rig_stop(r);
}

/* How test_read_paged_map_refused() runs. */
enum {
    MAP_REFUSED,                /* x-tx-map=on, PMTU 4096 */
    MAP_OFF,                    /* x-tx-map=off */
    MAP_SMALL,                  /* x-tx-map=on, PMTU 1024 */
};

/*
 * The READ of test_read_paged, device 1's responses sent in place
 * (docs/engine.md, "Payload in place"), with two of its mappings
 * refused: the first response's second run and the second's first. Its
 * three frames, a mapped run then a copied one, a copied then a mapped,
 * and one mapped run, carry the bytes of test_read_paged. With
 * x-tx-map=off nothing is mapped, so nothing is refused; nor at PMTU
 * 1024, whose payloads of 1 KiB are copied (ERNIC_XMIT_COPY_MAX).
 */
static void test_read_paged_map_refused(gconstpointer data)
{
    int mode = GPOINTER_TO_INT(data);
    ErnicRig *r = g_new0(ErnicRig, 1);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    g_autofree uint8_t *want = g_malloc(XMR_LEN);
    g_autoptr(QDict) rsp = NULL;
    uint32_t done = 0;

    ernic_rig_launch_dev(r, mode == MAP_OFF ? "x-tx-map=off" : NULL, NULL);
    ernic_rig_attach_all(r);
    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, ERNIC_EXT_F_MR);
    }
    /* At 4096, responses cross page boundaries. */
    cfg.pmtu = mode == MAP_SMALL ? ERNIC_PMTU_1024 : ERNIC_PMTU_4096;
    ernic_rig_connect_pair(r, &cfg);
    for (int pg = 0; pg < 3; pg++) {
        uint32_t lo = pg ? 0 : 0x123;
        g_autofree uint8_t *p = ernic_rig_put_pattern(
            r, DEV_BASE(1) + xmr_page_off[pg] + lo, 4096 - lo, 70 + pg);

        memcpy(want + done, p, 4096 - lo);
        done += 4096 - lo;
    }
    setup_paged_mr(r, ERNIC_MRACC_REMOTE_READ, PD_NUM);
    rsp = qtest_qmp(r->qts, "{'execute': 'qom-set', 'arguments': {"
                    "'path': '/machine/peripheral/ern1', 'property': "
                    "'fault', 'value': 'map-refuse,skip=1,count=2'}}");
    g_assert_false(qdict_haskey(rsp, "error"));
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF, XMR_LEN, XMR_IOVA, XRKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERNIC_OP_READ << 16);
    ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF, want, XMR_LEN);
    g_assert_cmpint(ernic_rig_fault_stat(r, 1, "map-refuse"), ==,
                    (mode == MAP_REFUSED ? 2 : 0));
    ernic_rig_stop(r);
}

/*
 * An entry written again while valid (MRCMD 1, what the driver's
 * ibv_rereg_mr does; docs/driver.md, "MR re-registration"): the same key
 * reaches the new page list from the next request on, the old pages no
 * longer; rewritten read-only, it refuses a WRITE.
 */
/* A WRITE to XMR_IOVA that device 1 refuses: QP_B FATAL, R_Key. */
static void write_refused(ErnicRig *r, uint16_t wrid, uint32_t len,
                          uint32_t rkey)
{
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, len, XMR_IOVA, rkey, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_RKEY);
}

static void test_mr_rewrite(void)
{
    ErnicRig *r = ext_pair();
    uint64_t page = DEV_BASE(1) + MR_OFF + 0x50000;
    uint64_t pbl = DEV_BASE(1) + XMR_PBL_OFF + 0x100;
    uint32_t acc = 12 << ERNIC_MRACC_SHIFT_SHIFT;
    uint8_t *a = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 100, 5);
    uint8_t *b = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF + 0x1000, 100,
                                       6);
    g_autofree uint8_t *zero = g_malloc0(4096);

    setup_paged_mr(r, ERNIC_MRACC_REMOTE_WRITE, PD_NUM);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 100, XMR_IOVA, XRKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, DEV_BASE(1) + xmr_page_off[0] + 0x123, a, 100);

    qtest_writeq(r->qts, pbl, page);
    put_entry(r, ERNIC_MR_VALID, PD_NUM, ERNIC_MRACC_REMOTE_WRITE | acc,
              XMR_IOVA, 1000, pbl, 1);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF + 0x1000, 100, XMR_IOVA, XRKEY, 0,
                   NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, ERNIC_OP_WRITE << 16 | 1);
    ernic_rig_assert_mem(r, page + 0x123, b, 100);
    ernic_rig_assert_mem(r, DEV_BASE(1) + xmr_page_off[0] + 0x123, a, 100);

    put_entry(r, ERNIC_MR_VALID, PD_NUM, ERNIC_MRACC_REMOTE_READ | acc,
              XMR_IOVA, 1000, pbl, 1);
    qtest_memwrite(r->qts, page, zero, 4096);
    write_refused(r, 2, 100, XRKEY);
    ernic_rig_assert_mem(r, page, zero, 4096);
    g_free(a);
    g_free(b);
    ernic_rig_stop(r);
}

/*
 * A page list may sit at bus address 0: the WRITE still goes through it,
 * and nothing lands at the low addresses the offset alone would give.
 */
static void test_pbl_at_zero(void)
{
    ErnicRig *r = ext_pair();
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 100, 9);
    g_autofree uint8_t *zero = g_malloc0(0x200);

    qtest_memwrite(r->qts, 0x100, zero, 0x200);
    qtest_writeq(r->qts, 0, DEV_BASE(1) + xmr_page_off[1]);
    put_entry(r, ERNIC_MR_VALID, PD_NUM, ERNIC_MRACC_REMOTE_WRITE |
              12 << ERNIC_MRACC_SHIFT_SHIFT, XMR_IOVA, 1000, 0, 1);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 100, XMR_IOVA + 0x10, XRKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERNIC_OP_WRITE << 16);
    ernic_rig_assert_mem(r, DEV_BASE(1) + xmr_page_off[1] + 0x133, p, 100);
    ernic_rig_assert_mem(r, 0x100, zero, 0x200);
    g_free(p);
    ernic_rig_stop(r);
}

/* A physical region: bus address = MRPBL + (va - IOVA). */
static void test_phys(void)
{
    ErnicRig *r = ext_pair();
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 3000, 5);

    put_entry(r, ERNIC_MR_VALID, PD_NUM,
              ERNIC_MRACC_REMOTE_WRITE | ERNIC_MRACC_PHYS, 0, ~0ULL,
              DEV_BASE(1) + MR_OFF, 0);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 3000, 0x777, XRKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + 0x777, p, 3000);
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * Each refusal of an access through the extended table: the responder
 * NAKs, the QP goes FATAL with the PG332 code of the R_Key check, and no
 * byte of any page changes.
 */
typedef struct Refusal {
    const char *name;
    uint32_t acc;
    uint32_t pd;
    bool invalidate;
    uint32_t rkey;
    uint64_t va;
    uint32_t len;
    uint16_t code;
} Refusal;

static const Refusal refusals[] = {
    { "beyond-end", ERNIC_MRACC_REMOTE_WRITE, PD_NUM, false, XRKEY,
      XMR_IOVA + XMR_LEN - 100, 200, ERNIC_FATAL_RETH_LENGTH },
    { "before-start", ERNIC_MRACC_REMOTE_WRITE, PD_NUM, false, XRKEY,
      XMR_IOVA - 1, 10, ERNIC_FATAL_RETH_LENGTH },
    { "invalidated", ERNIC_MRACC_REMOTE_WRITE, PD_NUM, true, XRKEY,
      XMR_IOVA, 10, ERNIC_FATAL_RKEY },
    { "other-pd", ERNIC_MRACC_REMOTE_WRITE, PD_NUM + 1, false, XRKEY,
      XMR_IOVA, 10, ERNIC_FATAL_RKEY },
    { "read-only", ERNIC_MRACC_REMOTE_READ, PD_NUM, false, XRKEY,
      XMR_IOVA, 10, ERNIC_FATAL_RKEY },
    { "key-byte", ERNIC_MRACC_REMOTE_WRITE, PD_NUM, false, XRKEY ^ 1,
      XMR_IOVA, 10, ERNIC_FATAL_RKEY },
    /* Valid in the PD/MR table, a free entry (no range) in the other. */
    { "pg332-key", ERNIC_MRACC_REMOTE_WRITE, PD_NUM, false, RKEY,
      MR_VA, 10, ERNIC_FATAL_RKEY_AND_LENGTH },
    { "past-table", ERNIC_MRACC_REMOTE_WRITE, PD_NUM, false,
      (ERNIC_EXT_MR_DEFAULT << 8) | XMR_KEY, XMR_IOVA, 10,
      ERNIC_FATAL_RKEY },
    { "both", ERNIC_MRACC_REMOTE_READ, PD_NUM, false, XRKEY,
      XMR_IOVA + XMR_LEN, 1, ERNIC_FATAL_RKEY_AND_LENGTH },
};

static void test_refused(const void *opaque)
{
    const Refusal *t = opaque;
    ErnicRig *r = ext_pair();
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, t->len, 3);
    g_autofree uint8_t *zero = g_malloc0(4096);

    setup_paged_mr(r, t->acc, t->pd);
    if (t->invalidate) {
        g_assert_cmpuint(mr_cmd(r, 1, XMR_INDEX, ERNIC_MRCMD_INVALIDATE), ==,
                         ERNIC_MRSTS_OK);
    }
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, t->len, t->va, t->rkey, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==, (QPN_B << 16) |
                    t->code);
    for (int pg = 0; pg < 3; pg++) {
        ernic_rig_assert_mem(r, DEV_BASE(1) + xmr_page_off[pg], zero, 4096);
    }
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, zero, 4096);
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * Fast registration (docs/extension.md): device 1 owns a fast-registration
 * entry (state invalid, FRWR bit), maps it with a REG_MR WQE on its own
 * SQ, the peer WRITEs through the new key, LOCAL_INV unmaps it, and the
 * next WRITE through it is refused.
 */
#define FR_KEY          0x44
#define FR_RKEY         ((XMR_INDEX << 8) | FR_KEY)
#define FR_ACC          (ERNIC_MRACC_FRWR | ERNIC_MRACC_REMOTE_WRITE | \
                         ERNIC_MRACC_LOCAL_WRITE | \
                         12 << ERNIC_MRACC_SHIFT_SHIFT)

static void alloc_fr_entry(ErnicRig *r)
{
    for (int p = 0; p < 3; p++) {
        qtest_writeq(r->qts, DEV_BASE(1) + XMR_PBL_OFF + p * 8,
                     DEV_BASE(1) + xmr_page_off[p]);
    }
    put_entry(r, ERNIC_MR_INVALID, PD_NUM, ERNIC_MRACC_FRWR, 0, 0, 0, 0);
}

static void post_reg_mr(ErnicRig *r, uint16_t wrid, uint32_t key, uint32_t acc)
{
    uint8_t sd[16] = { 0 };

    stl_le_p(sd, 3);
    stl_le_p(sd + 4, acc);
    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, wrid, ERNIC_OP_REG_MR,
                   DEV_BASE(1) + XMR_PBL_OFF, XMR_LEN, XMR_IOVA, key, 0, sd);
}

static void test_frwr(void)
{
    ErnicRig *r = ext_pair_with(ERNIC_EXT_F_MR | ERNIC_EXT_F_FRWR);
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 3000, 21);
    uint32_t in0 = 4096 - 0x123 - 3000;     /* bytes left in page 0 */

    alloc_fr_entry(r);
    post_reg_mr(r, 0, FR_RKEY, FR_ACC);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 1, QPN_B));
    g_assert_cmphex(ernic_rig_cqe(r, 1, 0), ==, ERNIC_OP_REG_MR << 16);
    mr_cmd(r, 1, XMR_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY), ==,
                    FR_KEY | ERNIC_MR_VALID << ERNIC_MRKEY_STATE_SHIFT);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRNPAGES), ==, 3);

    /* 3000 bytes from IOVA + 3000: the end of page 0 and into page 1. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 3000, XMR_IOVA + 3000, FR_RKEY, 0,
                   NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERNIC_OP_WRITE << 16);
    ernic_rig_assert_mem(r, DEV_BASE(1) + xmr_page_off[0] + 4096 - in0, p, in0);
    ernic_rig_assert_mem(r, DEV_BASE(1) + xmr_page_off[1], p + in0, 3000 - in0);

    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, 1, ERNIC_OP_LOCAL_INV, 0,
                   0, 0, FR_RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 1, QPN_B));
    g_assert_cmphex(ernic_rig_cqe(r, 1, 1), ==, ERNIC_OP_LOCAL_INV << 16 | 1);
    write_refused(r, 1, 10, FR_RKEY);
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * Refused fast registrations: the WQE completes with ERRFLAG and the QP
 * goes FATAL 0x05; the entry keeps its state.
 */
typedef struct FrRefusal {
    const char *name;
    bool map_first;             /* the entry is valid already */
    uint8_t opcode;
    uint32_t key;
    uint32_t acc;
} FrRefusal;

static const FrRefusal fr_refusals[] = {
    { "reg-valid", true, ERNIC_OP_REG_MR, FR_RKEY, FR_ACC },
    { "reg-no-frwr-bit", false, ERNIC_OP_REG_MR, FR_RKEY,
      FR_ACC & ~ERNIC_MRACC_FRWR },
    { "reg-bad-shift", false, ERNIC_OP_REG_MR, FR_RKEY,
      ERNIC_MRACC_FRWR | 40 << ERNIC_MRACC_SHIFT_SHIFT },
    { "reg-past-table", false, ERNIC_OP_REG_MR,
      (ERNIC_EXT_MR_DEFAULT << 8) | FR_KEY, FR_ACC },
    { "inv-not-valid", false, ERNIC_OP_LOCAL_INV, FR_RKEY, 0 },
    { "inv-key-byte", true, ERNIC_OP_LOCAL_INV, FR_RKEY ^ 1, 0 },
};

static void test_frwr_refused(const void *opaque)
{
    const FrRefusal *t = opaque;
    ErnicRig *r = ext_pair_with(ERNIC_EXT_F_MR | ERNIC_EXT_F_FRWR);
    uint16_t n = 0;
    uint32_t state;

    alloc_fr_entry(r);
    if (t->map_first) {
        post_reg_mr(r, n++, FR_RKEY, FR_ACC);
        ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 1, QPN_B));
    }
    state = t->map_first ? ERNIC_MR_VALID : ERNIC_MR_INVALID;
    if (t->opcode == ERNIC_OP_REG_MR) {
        post_reg_mr(r, n, t->key, t->acc);
    } else {
        ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, n, ERNIC_OP_LOCAL_INV,
                       0, 0, 0, t->key, 0, NULL);
    }
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 1, QPN_B));
    g_assert_cmphex(ernic_rig_cqe(r, 1, n) >> ERNIC_CQE_ERRFLAG_SHIFT, !=, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    mr_cmd(r, 1, XMR_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY) >> ERNIC_MRKEY_STATE_SHIFT,
                    ==, state);
    ernic_rig_stop(r);
}

/* With FRWR off, 0x20 is a reserved opcode as in PG332. */
static void test_frwr_off(void)
{
    ErnicRig *r = ext_pair();

    alloc_fr_entry(r);
    post_reg_mr(r, 0, FR_RKEY, FR_ACC);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 1, QPN_B));
    g_assert_cmphex(ernic_rig_cqe(r, 1, 0) >> ERNIC_CQE_ERRFLAG_SHIFT, !=, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INTSTS) & ERNIC_INT_ILLEGAL_OPCODE,
                    ==, ERNIC_INT_ILLEGAL_OPCODE);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    mr_cmd(r, 1, XMR_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY), ==,
                    ERNIC_MR_INVALID << ERNIC_MRKEY_STATE_SHIFT | XMR_KEY);
    ernic_rig_stop(r);
}

/*
 * Receive metadata and remote invalidation (docs/extension.md): the test
 * plays device 0 and sends requests to QP B of device 1, whose metadata
 * ring is META_OFF; the RQ holds 3 messages (RQ_DEPTH - 1).
 */
#define META_OFF        (MR_OFF + 0x80000)
#define META(slot)      (DEV_BASE(1) + META_OFF + (slot) * ERNIC_RXMETA_SIZE)
#define AETH_ACK        0x1f            /* ACK, no credit count */
#define AETH_NAK_INV    0x61            /* NAK, Invalid Request */
#define OPC_SEND_ONLY   0x04
#define OPC_SEND_IMM    0x05            /* SEND ONLY with Immediate */
#define OPC_WRITE_IMM   0x0b            /* RDMA WRITE ONLY with Immediate */
#define OPC_SEND_INV    0x17            /* SEND ONLY with Invalidate */
#define IMM             0x11223344u

/* Device 1 with @feat, metadata for QP B if @qp_meta, QPs connected. */
static ErnicRig *meta_pair(uint32_t feat, bool qp_meta)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_wr(r, 1, ERNIC_EXTCTRL, feat);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXTCTRL), ==, feat);
    if (qp_meta) {
        uint32_t x = ERNIC_EXT_QP_OFFSET(QPN_B);

        ernic_rig_wr(r, 1, x + ERNIC_RXMETABA, DEV_BASE(1) + META_OFF);
        ernic_rig_wr(r, 1, x + ERNIC_RXMETABAMSB, 0);
        ernic_rig_wr(r, 1, x + ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_RXMETA);
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    return r;
}

/* Send one single-packet request to QP B; the AETH syndrome of the reply. */
static uint8_t request(ErnicRig *r, uint8_t opcode, uint32_t psn,
                       const uint8_t *ext, size_t ext_len, size_t paylen)
{
    return ernic_rig_request(r, QPN_B, opcode, psn, ext, ext_len, paylen);
}

static void assert_meta(ErnicRig *r, uint32_t slot, uint32_t len,
                        uint8_t opcode, uint8_t flags, uint32_t data)
{
    uint8_t m[ERNIC_RXMETA_SIZE];

    qtest_memread(r->d[1].e.qts, META(slot), m, sizeof(m));
    g_assert_cmpuint(ldl_le_p(&m[ERNIC_RXMETA_LEN]), ==, len);
    g_assert_cmphex(m[ERNIC_RXMETA_OPCODE], ==, opcode);
    g_assert_cmphex(m[ERNIC_RXMETA_FLAGS], ==, flags);
    g_assert_cmphex(ldl_le_p(&m[ERNIC_RXMETA_DATA]), ==, data);
}

/* RETH + ImmDt of a WRITE ONLY with Immediate of @len bytes at MR_VA. */
static uint8_t *reth_imm(uint8_t *ext, uint32_t len)
{
    ernic_rig_reth(ext, MR_VA, RKEY, len);
    stl_be_p(ext + 16, IMM);
    return ext;
}

/*
 * SEND, SEND with Immediate and WRITE with Immediate each take an RQ slot
 * in arrival order, and each slot's metadata says what arrived.
 */
static void test_rxmeta(void)
{
    ErnicRig *r = meta_pair(ERNIC_EXT_F_RXMETA, true);
    uint8_t ext[20], imm[4];

    stl_be_p(imm, IMM);
    g_assert_cmphex(request(r, OPC_SEND_ONLY, PSN_A, NULL, 0, 300), ==,
                    AETH_ACK);
    g_assert_cmphex(request(r, OPC_WRITE_IMM, PSN_A + 1, reth_imm(ext, 64),
                            20, 64), ==, AETH_ACK);
    g_assert_cmphex(request(r, OPC_SEND_IMM, PSN_A + 2, imm, 4, 100), ==,
                    AETH_ACK);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 3);
    assert_meta(r, 0, 300, OPC_SEND_ONLY, 0, 0);
    assert_meta(r, 1, 64, OPC_WRITE_IMM, ERNIC_RXMETA_F_IMM, IMM);
    assert_meta(r, 2, 100, OPC_SEND_IMM, ERNIC_RXMETA_F_IMM, IMM);
    ernic_rig_stop(r);
}

/*
 * A WRITE with Immediate that finds the RQ full is RNR NAKed and writes
 * nothing; once software frees a slot its retry completes into it.
 */
static void test_rxmeta_rnr(void)
{
    ErnicRig *r = meta_pair(ERNIC_EXT_F_RXMETA, true);
    g_autofree uint8_t *zero = g_malloc0(64);
    uint8_t ext[20];
    uint32_t psn = PSN_A;

    for (int k = 0; k < 3; k++) {
        g_assert_cmphex(request(r, OPC_SEND_ONLY, psn++, NULL, 0, 16), ==,
                        AETH_ACK);
    }
    g_assert_cmphex(request(r, OPC_WRITE_IMM, psn, reth_imm(ext, 64), 20,
                            64) & 0xe0, ==, 0x20);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, zero, 64);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 3);

    ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, 1);
    g_assert_cmphex(request(r, OPC_WRITE_IMM, psn, reth_imm(ext, 64), 20,
                            64), ==, AETH_ACK);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    assert_meta(r, 3, 64, OPC_WRITE_IMM, ERNIC_RXMETA_F_IMM, IMM);
    ernic_rig_stop(r);
}

/*
 * End to end: device 0's requester sends a 3-packet WRITE with Immediate
 * to a full RQ. The RNR NAK of its last packet is retried until software
 * on device 1 frees a slot; then the data and the entry are complete.
 */
static void test_rxmeta_rnr_retry(void)
{
    ErnicRig *r = meta_pair(ERNIC_EXT_F_RXMETA, true);
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 3000, 77);
    ErnicRigWire w = { 0 };

    for (int k = 0; k < 3; k++) {
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, k, ERNIC_OP_SEND,
                       DEV_BASE(0) + SRC_OFF, 16, 0, 0, 0, p);
    }
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3, ERNIC_OP_WRITE_IMM,
                   DEV_BASE(0) + SRC_OFF, 3000, MR_VA, RKEY, IMM, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB) == 3);
    for (int k = 0; k < 300; k++) {
        ernic_rig_pump_once(r, &w);
    }
    g_assert_false(ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpuint(ernic_rig_rd(r, 1, ERNIC_OUTRNRPKTSTS) >> 16, >, 0);

    ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, 1);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 3), ==, CQE(ERNIC_OP_WRITE_IMM, 3));
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, 3000);
    assert_meta(r, 3, 3000, 0x09 /* WRITE LAST with Immediate */,
                ERNIC_RXMETA_F_IMM, IMM);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * Without RXMETA in EXTCTRL the QP's switch does nothing: PG332, where a
 * WRITE with Immediate takes no RQ buffer and no metadata is written.
 */
static void test_rxmeta_off(void)
{
    ErnicRig *r = meta_pair(0, true);
    g_autofree uint8_t *zero = g_malloc0(4 * ERNIC_RXMETA_SIZE);
    uint8_t ext[20], imm[4];

    stl_be_p(imm, IMM);
    g_assert_cmphex(request(r, OPC_WRITE_IMM, PSN_A, reth_imm(ext, 64), 20,
                            64), ==, AETH_ACK);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(request(r, OPC_SEND_IMM, PSN_A + 1, imm, 4, 100), ==,
                    AETH_ACK);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_assert_mem(r, META(0), zero, 4 * ERNIC_RXMETA_SIZE);
    ernic_rig_stop(r);
}

#define EXTQPCONF_ALL   (ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_XWQE | \
                         ERNIC_EXTQPCONF_USER | ERNIC_EXTQPCONF_RXWQE | \
                         ERNIC_EXTQPCONF_SRQ | ERNIC_EXTQPCONF_SRQN_MASK | \
                         ERNIC_EXTQPCONF_UD | ERNIC_EXTQPCONF_UC | \
                         ERNIC_EXTQPCONF_ATOMIC | ERNIC_EXTQPCONF_FLUSH | \
                         ERNIC_EXTQPCONF_XRC_TGT | ERNIC_EXTQPCONF_XRC_INI | \
                         ERNIC_EXTQPCONF_DBREC | ERNIC_EXTQPCONF_RQREC)

/*
 * The per-QP block: reserved bits read 0, it exists for QP1..C_NUM_QP,
 * and it does not change while its QP is enabled.
 */
static void test_qp_block(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t x = ERNIC_EXT_QP_OFFSET(QPN_B);

    ernic_rig_wr(r, 1, x + ERNIC_RXMETABA, 0x1234567f);
    g_assert_cmphex(ernic_rig_rd(r, 1, x + ERNIC_RXMETABA), ==, 0x12345670);
    ernic_rig_wr(r, 1, x + ERNIC_EXTQPCONF, 0xffffffff);
    g_assert_cmphex(ernic_rig_rd(r, 1, x + ERNIC_EXTQPCONF), ==,
                    EXTQPCONF_ALL);
    ernic_rig_wr(r, 1, ERNIC_EXT_QP_OFFSET(ERNIC_NUM_QP_DEFAULT + 1) +
                 ERNIC_EXTQPCONF, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1,
                                 ERNIC_EXT_QP_OFFSET(ERNIC_NUM_QP_DEFAULT + 1) +
                                 ERNIC_EXTQPCONF), ==, 0);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_wr(r, 1, x + ERNIC_EXTQPCONF, 0);
    ernic_rig_wr(r, 1, x + ERNIC_RXMETABA, 0);
    /* All but remote atomic and FLUSH access, which may change in RTS. */
    g_assert_cmphex(ernic_rig_rd(r, 1, x + ERNIC_EXTQPCONF), ==,
                    EXTQPCONF_ALL & ~(ERNIC_EXTQPCONF_ATOMIC |
                                      ERNIC_EXTQPCONF_FLUSH));
    g_assert_cmphex(ernic_rig_rd(r, 1, x + ERNIC_RXMETABA), ==, 0x12345670);
    ernic_rig_stop(r);
}

/*
 * Receive WQEs (docs/extension.md): QP B's RQ slots are 64-byte WQEs of
 * four SGEs; device 0's requester sends a 2500-byte SEND (3 packets).
 */
#define RXA             (DEV_BASE(1) + MR_OFF + 0x10000)
#define RXC             (DEV_BASE(1) + MR_OFF + 0x20000)
#define RX_FEAT         (ERNIC_EXT_F_MR | ERNIC_EXT_F_RXMETA | \
                         ERNIC_EXT_F_RXWQE)

static void put_rwqe(ErnicRig *r, uint32_t slot, const uint64_t *addr,
                     const uint32_t *len, const uint32_t *lkey)
{
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

    for (int i = 0; i < ERNIC_RWQE_SGES; i++) {
        stq_le_p(&w[i * ERNIC_SGE_SIZE + ERNIC_SGE_ADDR], addr[i]);
        stl_le_p(&w[i * ERNIC_SGE_SIZE + ERNIC_SGE_LEN], len[i]);
        stl_le_p(&w[i * ERNIC_SGE_SIZE + ERNIC_SGE_LKEY], lkey[i]);
    }
    qtest_memwrite(r->qts, DEV_BASE(1) + RQ_OFF + slot * ERNIC_RWQE_SIZE, w,
                   sizeof(w));
}

static ErnicRig *rxwqe_pair(uint32_t feat)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t x = ERNIC_EXT_QP_OFFSET(QPN_B);

    ernic_rig_wr(r, 1, ERNIC_EXTCTRL, feat);
    ernic_rig_wr(r, 1, x + ERNIC_RXMETABA, DEV_BASE(1) + META_OFF);
    ernic_rig_wr(r, 1, x + ERNIC_EXTQPCONF,
                 ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    return r;
}

/* Send @len bytes from device 0 and run until device 0 completes it. */
static uint8_t *send_2500(ErnicRig *r)
{
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 2500, 61);

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 2500, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    return p;
}

/* The SEND is scattered over the SGEs, skipping the empty one. */
static void test_rxwqe(void)
{
    ErnicRig *r = rxwqe_pair(RX_FEAT);
    const uint64_t addr[4] = { RXA, RXA + 0x8000, RXC, 0 };
    const uint32_t len[4] = { 1000, 0, 3000, 0 }, lkey[4] = { 0 };
    g_autofree uint8_t *zero = g_malloc0(4096);
    g_autofree uint8_t *p = NULL;

    put_rwqe(r, 0, addr, len, lkey);
    p = send_2500(r);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 0));
    ernic_rig_assert_mem(r, RXA, p, 1000);
    ernic_rig_assert_mem(r, RXA + 1000, zero, 16);
    ernic_rig_assert_mem(r, RXC, p + 1000, 1500);
    ernic_rig_assert_mem(r, RXC + 1500, zero, 1500);
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF + ERNIC_RWQE_SIZE, zero, 64);
    assert_meta(r, 0, 2500, 0x02 /* SEND LAST */, 0, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_stop(r);
}

/*
 * An SGE of the extended table by L_Key (a physical region with local
 * write), and its refusals: the slot completes with status 2 and the QP
 * goes FATAL 0x06; a SEND longer than the SGEs completes it with status 1,
 * FATAL 0x02.
 */
static void test_rxwqe_lkey(void)
{
    ErnicRig *r = rxwqe_pair(RX_FEAT);
    const uint64_t addr[4] = { XMR_IOVA, 0, 0, 0 };
    const uint32_t len[4] = { 4000, 0, 0, 0 }, lkey[4] = { XRKEY };
    g_autofree uint8_t *p = NULL;

    put_entry(r, ERNIC_MR_VALID, PD_NUM, ERNIC_MRACC_LOCAL_WRITE |
              ERNIC_MRACC_PHYS, XMR_IOVA, 4096, RXC, 0);
    put_rwqe(r, 0, addr, len, lkey);
    p = send_2500(r);
    ernic_rig_assert_mem(r, RXC, p, 2500);
    assert_meta(r, 0, 2500, 0x02, 0, 0);
    ernic_rig_stop(r);
}

typedef struct RxRefusal {
    const char *name;
    uint32_t acc;               /* of the entry behind XRKEY */
    uint32_t sge_len;
    uint8_t status;
    uint16_t fatal;
} RxRefusal;

static const RxRefusal rx_refusals[] = {
    { "no-local-write", ERNIC_MRACC_REMOTE_WRITE, 4000,
      ERNIC_RXMETA_ST_PROT, ERNIC_FATAL_RESPONSE_HANDLER },
    { "too-short", ERNIC_MRACC_LOCAL_WRITE, 2000,
      ERNIC_RXMETA_ST_LEN, ERNIC_FATAL_LENGTH },
};

static void test_rxwqe_refused(const void *opaque)
{
    const RxRefusal *t = opaque;
    ErnicRig *r = rxwqe_pair(RX_FEAT);
    const uint64_t addr[4] = { XMR_IOVA, 0, 0, 0 };
    const uint32_t len[4] = { t->sge_len, 0, 0, 0 }, lkey[4] = { XRKEY };
    g_autofree uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF,
                                                  2500, 3);
    uint8_t m[ERNIC_RXMETA_SIZE];

    put_entry(r, ERNIC_MR_VALID, PD_NUM, t->acc | ERNIC_MRACC_PHYS,
              XMR_IOVA, 4096, RXC, 0);
    put_rwqe(r, 0, addr, len, lkey);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 2500, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==, (QPN_B << 16) |
                    t->fatal);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    qtest_memread(r->qts, META(0), m, sizeof(m));
    g_assert_cmphex(m[ERNIC_RXMETA_FLAGS] >> ERNIC_RXMETA_STATUS_SHIFT, ==,
                    t->status);
    ernic_rig_stop(r);
}

/* Without RXWQE in EXTCTRL the slot is PG332's RQ buffer. */
static void test_rxwqe_off(void)
{
    ErnicRig *r = rxwqe_pair(RX_FEAT & ~ERNIC_EXT_F_RXWQE);
    const uint64_t addr[4] = { RXA, 0, 0, 0 };
    const uint32_t len[4] = { 4000, 0, 0, 0 }, lkey[4] = { 0 };
    g_autofree uint8_t *zero = g_malloc0(4096);
    g_autofree uint8_t *p = NULL;

    put_rwqe(r, 0, addr, len, lkey);
    p = send_2500(r);
    ernic_rig_assert_mem(r, RXA, zero, 4096);
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, p, 2500);
    assert_meta(r, 0, 2500, 0x02, 0, 0);
    ernic_rig_stop(r);
}

/*
 * Keyed SGEs (docs/extension.md): QP A's SQ entries are 128 bytes with
 * up to four SGEs; device 1 is the PG332 device. SGE 0 names bus
 * addresses (L_Key 0), SGE 1 is empty, SGE 2 goes through entry
 * XMR_INDEX of device 0, a physical region over XS_C.
 */
#define XS_A            (DEV_BASE(0) + SRC_OFF)
#define XS_C            (DEV_BASE(0) + SRC_OFF + 0x40000)
#define XS_IOVA         0x900000000000ULL

typedef struct XSge {
    uint64_t addr;
    uint32_t len;
    uint32_t lkey;
} XSge;

/*
 * A 128-byte WQE at device 0's next QP A slot, not rung yet; @laddr and
 * @len are PG332's LADDR and LENGTH, for a count of 0.
 */
static void put_x(ErnicRig *r, uint16_t wrid, uint8_t opcode, uint8_t n,
                  const XSge *sge, uint64_t raddr, uint32_t rkey,
                  uint64_t laddr, uint32_t len)
{
    uint8_t w[ERNIC_XWQE_SIZE] = { 0 };
    ErnicRigDev *d = &r->d[0];

    stw_le_p(&w[ERNIC_WQE_WRID], wrid);
    w[ERNIC_XWQE_NSGE] = n;
    w[ERNIC_WQE_OPCODE] = opcode;
    stq_le_p(&w[ERNIC_WQE_LADDR], laddr);
    stl_le_p(&w[ERNIC_WQE_LENGTH], len);
    stq_le_p(&w[ERNIC_WQE_ROFFSET], raddr);
    stl_le_p(&w[ERNIC_WQE_RTAG], rkey);
    for (int i = 0; i < MIN(n, ERNIC_XWQE_SGES); i++) {
        uint8_t *g = &w[ERNIC_XWQE_SGE + i * ERNIC_SGE_SIZE];

        stq_le_p(g + ERNIC_SGE_ADDR, sge[i].addr);
        stl_le_p(g + ERNIC_SGE_LEN, sge[i].len);
        stl_le_p(g + ERNIC_SGE_LKEY, sge[i].lkey);
    }
    qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF +
                   (d->sqpi % SQ_DEPTH) * ERNIC_XWQE_SIZE, w, sizeof(w));
    d->sqpi++;
}

static void post_x(ErnicRig *r, uint16_t wrid, uint8_t opcode, uint8_t n,
                   const XSge *sge, uint64_t raddr, uint32_t rkey)
{
    put_x(r, wrid, opcode, n, sge, raddr, rkey, 0, 0);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, r->d[0].sqpi % SQ_DEPTH);
}

/*
 * Device 0 with @feat, EXTQPCONF @qpconf on QP A, entry XMR_INDEX with
 * @acc.
 */
static ErnicRig *xwqe_pair_conf(uint32_t feat, uint32_t acc, uint32_t qpconf)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, feat);
    ernic_rig_wr(r, 0, ERNIC_EXT_QP_OFFSET(QPN_A) + ERNIC_EXTQPCONF, qpconf);
    mr_window(r, 0, ERNIC_MR_VALID, PD_NUM, acc | ERNIC_MRACC_PHYS, XS_IOVA,
              4096, XS_C, 0);
    g_assert_cmpuint(mr_cmd(r, 0, XMR_INDEX, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_OK);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    return r;
}

/* Device 0 with @feat, keyed SGEs on QP A, entry XMR_INDEX with @acc. */
static ErnicRig *xwqe_pair(uint32_t feat, uint32_t acc)
{
    return xwqe_pair_conf(feat, acc, ERNIC_EXTQPCONF_XWQE);
}

#define XS_FEAT (ERNIC_EXT_F_MR | ERNIC_EXT_F_XWQE)
static const XSge xs_sges[3] = {
    { XS_A, 1000, 0 }, { XS_A + 0x8000, 0, 0 }, { XS_IOVA, 2000, XRKEY },
};

/* A SEND and a WRITE gather the SGEs; a READ scatters into them. */
static void test_xwqe(void)
{
    ErnicRig *r = xwqe_pair(XS_FEAT, ERNIC_MRACC_LOCAL_WRITE);
    g_autofree uint8_t *a = ernic_rig_put_pattern(r, XS_A, 1000, 1);
    g_autofree uint8_t *cc = ernic_rig_put_pattern(r, XS_C, 2000, 2);
    g_autofree uint8_t *want = g_malloc(3000);
    g_autofree uint8_t *rd_src = NULL;

    memcpy(want, a, 1000);
    memcpy(want + 1000, cc, 2000);
    post_x(r, 0, ERNIC_OP_SEND, 3, xs_sges, 0, 0);
    post_x(r, 1, ERNIC_OP_WRITE, 3, xs_sges, MR_VA, RKEY);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 0));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, CQE(ERNIC_OP_WRITE, 1));
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, want, 3000);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, want, 3000);

    rd_src = ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF + 0x10000, 3000, 3);
    post_x(r, 2, ERNIC_OP_READ, 3, xs_sges, MR_VA + 0x10000, RKEY);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 2), ==, CQE(ERNIC_OP_READ, 2));
    ernic_rig_assert_mem(r, XS_A, rd_src, 1000);
    ernic_rig_assert_mem(r, XS_C, rd_src + 1000, 2000);
    ernic_rig_stop(r);
}

/*
 * Refused keyed SGEs: ERRFLAG and FATAL 0x05, nothing sent. A READ into
 * a region without local write; a key byte that does not match; more
 * than four SGEs.
 */
typedef struct XRefusal {
    const char *name;
    uint8_t opcode;
    uint8_t n;
    uint32_t acc;
    uint32_t key_xor;
} XRefusal;

static const XRefusal x_refusals[] = {
    { "read-no-local-write", ERNIC_OP_READ, 3, 0, 0 },
    { "key-byte", ERNIC_OP_SEND, 3, ERNIC_MRACC_LOCAL_WRITE, 1 },
    { "five-sges", ERNIC_OP_SEND, 5, ERNIC_MRACC_LOCAL_WRITE, 0 },
};

static void test_xwqe_refused(const void *opaque)
{
    const XRefusal *t = opaque;
    ErnicRig *r = xwqe_pair(XS_FEAT, t->acc);
    XSge sg[3];
    g_autofree uint8_t *zero = g_malloc0(4096);

    memcpy(sg, xs_sges, sizeof(sg));
    sg[2].lkey ^= t->key_xor;
    post_x(r, 0, t->opcode, t->n, sg, MR_VA, RKEY);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0) >> ERNIC_CQE_ERRFLAG_SHIFT, !=, 0);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, zero, 4096);
    ernic_rig_stop(r);
}

/*
 * A keyed WQE of no SGE and no length is a SEND of 0 bytes (PG332 p.10
 * has none; IBTA and ERNIC-X do): one SEND ONLY with no payload, which
 * fills an RQ slot of the peer with nothing.
 */
static void test_xwqe_zero_send(void)
{
    ErnicRig *r = xwqe_pair(XS_FEAT, ERNIC_MRACC_LOCAL_WRITE);

    post_x(r, 0x70, ERNIC_OP_SEND, 0, NULL, 0, 0);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A) &&
                   ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB) == 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 0x70));
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATMSN), ==, 1);
    ernic_rig_stop(r);
}

/* Without XWQE in EXTCTRL the QP's SQ entries stay PG332's 64 bytes. */
static void test_xwqe_off(void)
{
    ErnicRig *r = xwqe_pair(ERNIC_EXT_F_MR, 0);
    uint8_t *p = ernic_rig_put_pattern(r, XS_A, 3000, 4);

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE, XS_A,
                   3000, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 0));
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * User QPs (docs/extension.md, "User QPs"): QP A of device 0 is marked
 * user, with keyed SGEs; its doorbell page in BAR3 rings it.
 */
#define UDB_FEAT        (XS_FEAT | ERNIC_EXT_F_FRWR | ERNIC_EXT_F_UDB)
#define UDB_QPCONF      (ERNIC_EXTQPCONF_XWQE | ERNIC_EXTQPCONF_USER)

static QPCIBar udb_bar(ErnicRig *r)
{
    uint64_t size;
    QPCIBar bar = qpci_iomap(r->d[0].e.pdev, ERNIC_BAR_UDB, &size);

    g_assert_cmphex(size, ==, ERNIC_UDB_BAR_SIZE);
    return bar;
}

static void udb_ring(ErnicRig *r, QPCIBar bar, uint32_t qpn, uint32_t val)
{
    qpci_io_writel(r->d[0].e.pdev, bar, ERNIC_UDB_OFFSET(qpn) + ERNIC_UDB_SQPI,
                   val);
}

static uint32_t udb_rd(ErnicRig *r, QPCIBar bar, uint32_t qpn, uint32_t off)
{
    return qpci_io_readl(r->d[0].e.pdev, bar, ERNIC_UDB_OFFSET(qpn) + off);
}

/*
 * The page rings its own QP: a keyed WRITE, a SEND from SDATA and a
 * zero-length WRITE go out. It reads back SQPIi and RQCIi and nothing
 * else; another QP's page (not a user QP) neither reads nor rings.
 */
static void test_udb_doorbell(void)
{
    ErnicRig *r = xwqe_pair_conf(UDB_FEAT, ERNIC_MRACC_LOCAL_WRITE, UDB_QPCONF);
    QPCIBar bar = udb_bar(r);
    g_autofree uint8_t *cc = ernic_rig_put_pattern(r, XS_C, 2000, 7);
    const uint8_t sdata[8] = "sdata-8";
    uint8_t w[ERNIC_XWQE_SIZE];

    put_x(r, 0, ERNIC_OP_WRITE, 1, &xs_sges[2], MR_VA, RKEY, 0, 0);
    put_x(r, 1, ERNIC_OP_SEND, 0, NULL, 0, 0, 0, sizeof(sdata));
    qtest_memread(r->qts, DEV_BASE(0) + SQ_OFF + ERNIC_XWQE_SIZE, w,
                  sizeof(w));
    memcpy(&w[ERNIC_WQE_SDATA], sdata, sizeof(sdata));
    qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF + ERNIC_XWQE_SIZE, w,
                   sizeof(w));
    put_x(r, 2, ERNIC_OP_WRITE, 0, NULL, MR_VA, RKEY, 0, 0);
    udb_ring(r, bar, QPN_A, 3);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 3);
    g_assert_cmphex(udb_rd(r, bar, QPN_A, ERNIC_UDB_SQPI), ==, 3);
    g_assert_cmphex(udb_rd(r, bar, QPN_A, ERNIC_UDB_RQCI), ==,
                    ernic_rig_qrd(r, 0, QPN_A, ERNIC_RQCI));
    g_assert_cmphex(udb_rd(r, bar, QPN_A, 8), ==, 0);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 0));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, CQE(ERNIC_OP_SEND, 1));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 2), ==, CQE(ERNIC_OP_WRITE, 2));
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, cc, 2000);
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, sdata, sizeof(sdata));

    /* QP A + 1 is not a user QP: its page is inert. */
    udb_ring(r, bar, QPN_A + 1, 5);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A + 1, ERNIC_SQPI), ==, 0);
    ernic_rig_qwr(r, 0, QPN_A + 1, ERNIC_SQPI, 1);
    g_assert_cmphex(udb_rd(r, bar, QPN_A + 1, ERNIC_UDB_SQPI), ==, 0);
    ernic_rig_qwr(r, 0, QPN_A + 1, ERNIC_SQPI, 0);
    /* Past num-qp (256 pages, 32 QPs by default): inert too. */
    qpci_io_writel(r->d[0].e.pdev, bar, ERNIC_UDB_BAR_SIZE - ERNIC_UDB_PAGE, 1);
    g_assert_cmphex(qpci_io_readl(r->d[0].e.pdev, bar,
                                  ERNIC_UDB_BAR_SIZE - ERNIC_UDB_PAGE), ==, 0);
    ernic_rig_stop(r);
}

/*
 * With UPOLL the page also reads CQHEADi and STATRQPIDBi (a polling
 * process's view of its queues), which writes there do not change;
 * without UPOLL (test_udb_doorbell) those words read 0.
 */
static void test_udb_poll(void)
{
    ErnicRig *r = xwqe_pair_conf(UDB_FEAT | ERNIC_EXT_F_UPOLL,
                                 ERNIC_MRACC_LOCAL_WRITE, UDB_QPCONF);
    QPCIBar bar = udb_bar(r);

    g_assert_true(ernic_rig_rd(r, 0, ERNIC_EXTCTRL) & ERNIC_EXT_F_UPOLL);
    g_assert_cmphex(udb_rd(r, bar, QPN_A, ERNIC_UDB_CQHEAD), ==, 0);
    put_x(r, 0, ERNIC_OP_WRITE, 1, &xs_sges[2], MR_VA, RKEY, 0, 0);
    put_x(r, 1, ERNIC_OP_WRITE, 1, &xs_sges[2], MR_VA, RKEY, 0, 0);
    udb_ring(r, bar, QPN_A, 2);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 2);
    g_assert_cmphex(udb_rd(r, bar, QPN_A, ERNIC_UDB_CQHEAD), ==, 2);
    g_assert_cmphex(udb_rd(r, bar, QPN_A, ERNIC_UDB_RQPI), ==,
                    ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATRQPIDB));
    qpci_io_writel(r->d[0].e.pdev, bar,
                   ERNIC_UDB_OFFSET(QPN_A) + ERNIC_UDB_CQHEAD, 7);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 2);
    g_assert_cmphex(udb_rd(r, bar, QPN_A, ERNIC_UDB_CQHEAD), ==, 2);
    /* Not a user QP: its page reads nothing. */
    g_assert_cmphex(udb_rd(r, bar, QPN_A + 1, ERNIC_UDB_CQHEAD), ==, 0);
    ernic_rig_stop(r);
}

/*
 * Without UDB in EXTCTRL the page is inert and EXTQPCONFi[2] means
 * nothing: L_Key 0 names bus addresses as before.
 */
static void test_udb_off(void)
{
    ErnicRig *r = xwqe_pair_conf(XS_FEAT, ERNIC_MRACC_LOCAL_WRITE, UDB_QPCONF);
    QPCIBar bar = udb_bar(r);
    g_autofree uint8_t *a = ernic_rig_put_pattern(r, XS_A, 1000, 9);

    put_x(r, 0, ERNIC_OP_WRITE, 1, &xs_sges[0], MR_VA, RKEY, 0, 0);
    udb_ring(r, bar, QPN_A, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 0);
    g_assert_cmphex(udb_rd(r, bar, QPN_A, ERNIC_UDB_SQPI), ==, 0);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, 1);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 0));
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, a, 1000);
    ernic_rig_stop(r);
}

/*
 * What a user QP refuses: ERRFLAG, FATAL 0x05, nothing sent. A bus
 * address through L_Key 0; PG332's LADDR (a count of 0) for more than
 * SDATA; a fast registration, whose page list is a bus address.
 */
typedef struct UdbRefusal {
    const char *name;
    uint8_t opcode;
    uint8_t n;
    uint32_t len;               /* LENGTH, for a count of 0 */
} UdbRefusal;

static const UdbRefusal udb_refusals[] = {
    { "lkey-0", ERNIC_OP_WRITE, 1, 0 },
    { "laddr", ERNIC_OP_WRITE, 0, 1000 },
    { "laddr-send", ERNIC_OP_SEND, 0, 17 },
    { "reg-mr", ERNIC_OP_REG_MR, 0, 4096 },
};

/*
 * A REG_MR that a kernel QP would execute: entry UDB_FR_INDEX of QP A's
 * PD is an unmapped fast-registration entry; the page list is XS_A.
 */
#define UDB_FR_INDEX    9

static void udb_reg_mr(ErnicRig *r)
{
    uint32_t acc = ERNIC_MRACC_LOCAL_WRITE | ERNIC_MRACC_FRWR |
                   12 << ERNIC_MRACC_SHIFT_SHIFT;
    uint64_t sq = DEV_BASE(0) + SQ_OFF;
    uint8_t w[ERNIC_XWQE_SIZE];

    mr_window(r, 0, ERNIC_MR_INVALID, PD_NUM, acc, 0, 0, 0, 0);
    g_assert_cmpuint(mr_cmd(r, 0, UDB_FR_INDEX, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_OK);
    put_x(r, 0, ERNIC_OP_REG_MR, 0, NULL, XS_IOVA,
          UDB_FR_INDEX << 8 | XMR_KEY, XS_A, 4096);
    qtest_memread(r->qts, sq, w, sizeof(w));
    stl_le_p(&w[ERNIC_WQE_REG_NPAGES], 1);
    stl_le_p(&w[ERNIC_WQE_REG_ACC], acc);
    qtest_memwrite(r->qts, sq, w, sizeof(w));
}

static void test_udb_refused(const void *opaque)
{
    const UdbRefusal *t = opaque;
    ErnicRig *r = xwqe_pair_conf(UDB_FEAT, ERNIC_MRACC_LOCAL_WRITE, UDB_QPCONF);
    g_autofree uint8_t *a = ernic_rig_put_pattern(r, XS_A, 4096, 11);
    g_autofree uint8_t *zero = g_malloc0(4096);

    if (t->opcode == ERNIC_OP_REG_MR) {
        udb_reg_mr(r);
    } else {
        put_x(r, 0, t->opcode, t->n, &xs_sges[0], MR_VA, RKEY, XS_A,
              t->len);
    }
    udb_ring(r, udb_bar(r), QPN_A, 1);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0) >> ERNIC_CQE_ERRFLAG_SHIFT, !=, 0);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, zero, 4096);
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, zero, 4096);
    /* The fast-registration entry stays unmapped. */
    mr_cmd(r, 0, UDB_FR_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MRKEY) >> ERNIC_MRKEY_STATE_SHIFT,
                    ==, t->opcode == ERNIC_OP_REG_MR ? ERNIC_MR_INVALID : 0);
    ernic_rig_stop(r);
}

/* A fast-registration entry of device 1, mapped (valid) or not. */
static void fr_entry(ErnicRig *r, uint32_t state, uint32_t acc, uint32_t pd)
{
    put_entry(r, state, pd, acc | ERNIC_MRACC_PHYS, XMR_IOVA, 4096,
              DEV_BASE(1) + MR_OFF, 0);
}

static uint32_t fr_state(ErnicRig *r)
{
    mr_cmd(r, 1, XMR_INDEX, ERNIC_MRCMD_READ);
    return ernic_rig_rd(r, 1, ERNIC_MRKEY) >> ERNIC_MRKEY_STATE_SHIFT;
}

#define ALL_RX  (ERNIC_EXT_F_MR | ERNIC_EXT_F_FRWR | ERNIC_EXT_F_RXMETA | \
                 ERNIC_EXT_F_RINV)

/* A SEND with Invalidate naming a mapped entry of the PD unmaps it. */
static void test_rinv(void)
{
    ErnicRig *r = meta_pair(ALL_RX, true);
    uint8_t ieth[4];

    fr_entry(r, ERNIC_MR_VALID, ERNIC_MRACC_FRWR | ERNIC_MRACC_REMOTE_WRITE,
             PD_NUM);
    stl_be_p(ieth, XRKEY);
    g_assert_cmphex(request(r, OPC_SEND_INV, PSN_A, ieth, 4, 40), ==,
                    AETH_ACK);
    g_assert_cmpuint(fr_state(r), ==, ERNIC_MR_INVALID);
    assert_meta(r, 0, 40, OPC_SEND_INV, ERNIC_RXMETA_F_INV, XRKEY);
    ernic_rig_stop(r);
}

/*
 * An IETH that names no mapped fast-registration entry of the QP's PD:
 * NAK Invalid Request, FATAL 0x15, no RQ slot, the entry unchanged.
 */
typedef struct InvRefusal {
    const char *name;
    uint32_t key;
    uint32_t state;
    uint32_t acc;
    uint32_t pd;
} InvRefusal;

#define INV_ACC (ERNIC_MRACC_FRWR | ERNIC_MRACC_REMOTE_WRITE)

static const InvRefusal inv_refusals[] = {
    { "key-byte", XRKEY ^ 1, ERNIC_MR_VALID, INV_ACC, PD_NUM },
    { "not-mapped", XRKEY, ERNIC_MR_INVALID, INV_ACC, PD_NUM },
    { "not-frwr", XRKEY, ERNIC_MR_VALID, ERNIC_MRACC_REMOTE_WRITE, PD_NUM },
    { "other-pd", XRKEY, ERNIC_MR_VALID, INV_ACC, PD_NUM + 1 },
    { "past-table", ERNIC_EXT_MR_DEFAULT << 8 | XMR_KEY, ERNIC_MR_VALID,
      INV_ACC, PD_NUM },
};

static void test_rinv_refused(const void *opaque)
{
    const InvRefusal *t = opaque;
    ErnicRig *r = meta_pair(ALL_RX, true);
    uint8_t ieth[4];

    fr_entry(r, t->state, t->acc, t->pd);
    stl_be_p(ieth, t->key);
    g_assert_cmphex(request(r, OPC_SEND_INV, PSN_A, ieth, 4, 40), ==,
                    AETH_NAK_INV);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==, (QPN_B << 16) |
                    ERNIC_FATAL_RKEY);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmpuint(fr_state(r), ==, t->state);
    ernic_rig_stop(r);
}

/* Without RINV a SEND with Invalidate is a SEND, as in PG332. */
static void test_rinv_off(void)
{
    ErnicRig *r = meta_pair(ALL_RX & ~ERNIC_EXT_F_RINV, true);
    uint8_t ieth[4];

    fr_entry(r, ERNIC_MR_VALID, INV_ACC, PD_NUM);
    stl_be_p(ieth, XRKEY ^ 1);
    g_assert_cmphex(request(r, OPC_SEND_INV, PSN_A, ieth, 4, 40), ==,
                    AETH_ACK);
    stl_be_p(ieth, XRKEY);
    g_assert_cmphex(request(r, OPC_SEND_INV, PSN_A + 1, ieth, 4, 40), ==,
                    AETH_ACK);
    g_assert_cmpuint(fr_state(r), ==, ERNIC_MR_VALID);
    assert_meta(r, 0, 40, OPC_SEND_INV, 0, 0);
    assert_meta(r, 1, 40, OPC_SEND_INV, 0, 0);
    ernic_rig_stop(r);
}

/*
 * QP1 with ERNIC-X (docs/extension.md, "QP1"): keyed SGEs gather a MAD
 * frame, a receive WQE gets the IP area and the MAD, and the metadata
 * entry the length, the source QP and the IP version.
 */
#define QP1_FEAT        (ERNIC_EXT_F_XWQE | ERNIC_EXT_F_RXMETA | \
                         ERNIC_EXT_F_RXWQE | ERNIC_EXT_F_QP1)
#define QP1_HDRS        (F_EXT + 8)     /* Ethernet to the end of DETH */
#define QP1_MAD         (DEV_BASE(0) + SRC_OFF + 0x1000)
#define OPC_UD_SEND     0x64

/* EXTCTRL while ERNIC is disabled, then QP1's block while it is. */
static void qp1_ext(ErnicRig *r, int i, uint32_t feat, uint32_t conf)
{
    uint32_t x = ERNIC_EXT_QP_OFFSET(1);

    ernic_rig_wr(r, i, ERNIC_EXTCTRL, feat);
    g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_EXTCTRL), ==, feat);
    ernic_rig_setup_global(r, i, 0);
    ernic_rig_wr(r, i, x + ERNIC_RXMETABA, DEV_BASE(i) + META_OFF);
    ernic_rig_wr(r, i, x + ERNIC_EXTQPCONF, conf);
}

/* Both devices' QP1, each with its ERNIC-X setting. */
static ErnicRig *qp1_pair(uint32_t feat0, uint32_t conf0, uint32_t feat1,
                          uint32_t conf1)
{
    ErnicRig *r = ernic_rig_start(NULL);

    for (int i = 0; i < NDEV; i++) {
        uint64_t b = DEV_BASE(i);
        uint32_t q = ERNIC_QP_OFFSET(1);

        qp1_ext(r, i, i ? feat1 : feat0, i ? conf1 : conf0);
        ernic_rig_wr(r, i, q + ERNIC_SQBA, b + GSI_SQ_OFF);
        ernic_rig_wr(r, i, q + ERNIC_CQBA, b + GSI_CQ_OFF);
        ernic_rig_wr(r, i, q + ERNIC_RQBA, b + GSI_RQ_OFF);
        ernic_rig_wr(r, i, q + ERNIC_QDEPTH, (64 << 16) | 16);
        ernic_rig_wr(r, i, q + ERNIC_QPCONF, ERNIC_QPCONF_QP_EN |
                     ERNIC_QPCONF_HW_HS_DIS | ERNIC_QPCONF_CQE_WR_EN |
                     (2 << ERNIC_QPCONF_RQBUFSZ_SHIFT));
    }
    return r;
}

/*
 * Device 0 sends a 256-byte MAD from QP1 to QP1: the frame without its
 * ICRC at SRC_OFF, from one LADDR, or (@keyed) from two keyed SGEs, the
 * headers at SRC_OFF and the MAD at QP1_MAD. Returns the frame's length
 * with its ICRC; runs until device 1's QP1 has taken it.
 */
static size_t qp1_send(ErnicRig *r, uint8_t *f, bool keyed)
{
    uint8_t deth[8], mad[256], w[ERNIC_XWQE_SIZE] = { 0 }, *g;
    size_t len;

    stl_be_p(deth, 0x80010000);
    stl_be_p(deth + 4, 1);
    ernic_rig_fill(mad, sizeof(mad), 43);
    len = ernic_rig_frame(f, &r->d[0], &r->d[1], OPC_UD_SEND, 1, 0x77, false,
                          deth, 8, mad, sizeof(mad));
    w[ERNIC_WQE_OPCODE] = ERNIC_OP_SEND;
    if (keyed) {
        qtest_memwrite(r->qts, DEV_BASE(0) + SRC_OFF, f, QP1_HDRS);
        qtest_memwrite(r->qts, QP1_MAD, mad, sizeof(mad));
        w[ERNIC_XWQE_NSGE] = 2;
        g = &w[ERNIC_XWQE_SGE];
        stq_le_p(g + ERNIC_SGE_ADDR, DEV_BASE(0) + SRC_OFF);
        stl_le_p(g + ERNIC_SGE_LEN, QP1_HDRS);
        g += ERNIC_SGE_SIZE;
        stq_le_p(g + ERNIC_SGE_ADDR, QP1_MAD);
        stl_le_p(g + ERNIC_SGE_LEN, sizeof(mad));
    } else {
        qtest_memwrite(r->qts, DEV_BASE(0) + SRC_OFF, f, len - 4);
        stq_le_p(&w[ERNIC_WQE_LADDR], DEV_BASE(0) + SRC_OFF);
        stl_le_p(&w[ERNIC_WQE_LENGTH], len - 4);
    }
    qtest_memwrite(r->qts, DEV_BASE(0) + GSI_SQ_OFF, w,
                   keyed ? ERNIC_XWQE_SIZE : ERNIC_WQE_SIZE);
    ernic_rig_wr(r, 0, ERNIC_QP_OFFSET(1) + ERNIC_SQPI, 1);
    ERNIC_RIG_PUMP(r, NULL,
                   ernic_rig_rd(r, 1, ERNIC_QP_OFFSET(1) + ERNIC_STATRQPIDB) ==
                   1);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_QP_OFFSET(1) + ERNIC_CQHEAD), ==,
                    1);
    return len;
}

/* A PG332 QP1 RQ buffer: 20 zero bytes, then the frame from IPv4 on. */
static void assert_qp1_buffer(ErnicRig *r, const uint8_t *f, size_t len)
{
    g_autofree uint8_t *want = g_malloc0(20 + len - 4 - F_IP);

    memcpy(want + 20, f + F_IP, len - 4 - F_IP);
    ernic_rig_assert_mem(r, DEV_BASE(1) + GSI_RQ_OFF, want, 20 + len - 4 -
                         F_IP);
}

/* Keyed SGEs gather the frame; a PG332 peer receives it whole. */
static void test_qp1_gather(void)
{
    ErnicRig *r = qp1_pair(QP1_FEAT, ERNIC_EXTQPCONF_XWQE, 0, 0);
    uint8_t f[FRAME_MAX];
    size_t len = qp1_send(r, f, true);

    assert_qp1_buffer(r, f, len);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_OUTAMPKTCNT) >> 16, ==, 1);
    ernic_rig_stop(r);
}

/* Device 1's receive WQE of two SGEs: @len0 bytes at RXA, 400 at RXC. */
static void qp1_rwqe(ErnicRig *r, uint32_t len0)
{
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

    stq_le_p(&w[ERNIC_SGE_ADDR], RXA);
    stl_le_p(&w[ERNIC_SGE_LEN], len0);
    stq_le_p(&w[ERNIC_SGE_SIZE + ERNIC_SGE_ADDR], RXC);
    stl_le_p(&w[ERNIC_SGE_SIZE + ERNIC_SGE_LEN], len0 < 100 ? 0 : 400);
    qtest_memwrite(r->qts, DEV_BASE(1) + GSI_RQ_OFF, w, sizeof(w));
}

/*
 * A receive WQE gets the IP area (20 zero bytes and the IPv4 header) and
 * the MAD, over its SGEs; the metadata: 296 bytes, UD SEND ONLY, IPv4,
 * from QP1.
 */
static void test_qp1_place(void)
{
    ErnicRig *r = qp1_pair(0, 0, QP1_FEAT,
                           ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE);
    uint8_t f[FRAME_MAX], want[40 + 256] = { 0 };
    g_autofree uint8_t *zero = g_malloc0(512);

    qp1_rwqe(r, 100);
    qp1_send(r, f, false);
    memcpy(want + 20, f + F_IP, 20);
    memcpy(want + 40, f + QP1_HDRS, 256);
    ernic_rig_assert_mem(r, RXA, want, 100);
    ernic_rig_assert_mem(r, RXA + 100, zero, 16);
    ernic_rig_assert_mem(r, RXC, want + 100, sizeof(want) - 100);
    ernic_rig_assert_mem(r, RXC + sizeof(want) - 100, zero, 400 + 100 -
                         sizeof(want));
    assert_meta(r, 0, sizeof(want), OPC_UD_SEND, 0, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INTSTS) & ERNIC_INT_MAD_RECEIVED,
                    ==, ERNIC_INT_MAD_RECEIVED);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INAMPKTCNT) >> 16, ==, 1);
    ernic_rig_stop(r);
}

/*
 * A MAD longer than the WQE's SGEs completes the slot with status 1 and
 * no data; QP1 is unreliable: no FATAL, and the next MAD is taken.
 */
static void test_qp1_short(void)
{
    ErnicRig *r = qp1_pair(0, 0, QP1_FEAT,
                           ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE);
    uint8_t f[FRAME_MAX];
    g_autofree uint8_t *zero = g_malloc0(512);

    qp1_rwqe(r, 64);
    qp1_send(r, f, false);
    ernic_rig_assert_mem(r, RXA, zero, 512);
    assert_meta(r, 0, 40 + 256, OPC_UD_SEND,
                ERNIC_RXMETA_ST_LEN << ERNIC_RXMETA_STATUS_SHIFT, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_QP_OFFSET(1) + ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_IPKTERRQWPTR), ==, 0);
    ernic_rig_stop(r);
}

/*
 * Without the QP1 feature in EXTCTRL, QP1 is PG332's whatever its
 * EXTQPCONF1 says: a 64-byte WQE from LADDR, a whole frame into the RQ
 * buffer, no metadata.
 */
static void test_qp1_off(void)
{
    uint32_t feat = ERNIC_EXT_F_ALL & ~ERNIC_EXT_F_QP1;
    ErnicRig *r = qp1_pair(feat, ERNIC_EXTQPCONF_XWQE, feat,
                           ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE);
    uint8_t f[FRAME_MAX], m[ERNIC_RXMETA_SIZE], zero[ERNIC_RXMETA_SIZE] = { 0 };
    size_t len = qp1_send(r, f, false);

    assert_qp1_buffer(r, f, len);
    qtest_memread(r->qts, META(0), m, sizeof(m));
    g_assert_cmpmem(m, sizeof(m), zero, sizeof(zero));
    ernic_rig_stop(r);
}

/*
 * One test per element of a table whose elements start with their name:
 * @prefix/<name>.
 */
static void add_cases(const char *prefix, const void *cases, size_t n,
                      size_t size, GTestDataFunc fn)
{
    for (size_t i = 0; i < n; i++) {
        const void *t = (const char *)cases + i * size;
        g_autofree char *path = g_strdup_printf("%s/%s", prefix,
                                                *(const char *const *)t);

        qtest_add_data_func(path, t, fn);
    }
}

/*
 * Memory windows (feature MW, docs/extension.md): windows at entries
 * MW2_INDEX (type 2) and MW1_INDEX (type 1) of device 1, bound by BIND
 * WQEs of QP B to part of the page-list region XRKEY, which has MW bind
 * access but no remote access of its own.
 */
#define MW2_INDEX       9
#define MW1_INDEX       10
#define MW_KEY(idx, k)  ((uint32_t)(idx) << 8 | (k))
#define MW_VA           (XMR_IOVA + 100)
#define MW_LEN          8000
#define MW_FEAT         (ERNIC_EXT_F_MR | ERNIC_EXT_F_MW)
#define MW_RW           (ERNIC_MRACC_REMOTE_READ | ERNIC_MRACC_REMOTE_WRITE)

/* Window @idx of device 1: allocated (invalid), of @pd. */
static void put_window(ErnicRig *r, uint32_t idx, bool type2, uint32_t pd)
{
    mr_window(r, 1, ERNIC_MR_INVALID, pd, ERNIC_MRACC_MW |
              (type2 ? ERNIC_MRACC_MW_TYPE2 : 0), 0, 0, 0, 0);
    g_assert_cmpuint(mr_cmd(r, 1, idx, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_OK);
}

static ErnicRig *mw_pair(uint32_t feat, uint32_t region_acc)
{
    ErnicRig *r = ext_pair_with(feat);

    setup_paged_mr(r, region_acc, PD_NUM);
    put_window(r, MW2_INDEX, true, PD_NUM);
    put_window(r, MW1_INDEX, false, PD_NUM);
    return r;
}

/* A BIND WQE on QP B, rung, not waited for. */
static void post_bind(ErnicRig *r, uint16_t wrid, uint32_t rkey, uint64_t va,
                      uint64_t len, uint32_t lkey, uint32_t acc)
{
    uint8_t sd[16];

    stq_le_p(sd, len);
    stl_le_p(sd + 8, lkey);
    stl_le_p(sd + 12, acc);
    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, wrid, ERNIC_OP_BIND_MW,
                   0, 0, va, rkey, 0, sd);
}

/* A BIND, LOCAL_INV, ... of QP B that completes without error. */
static void local_done(ErnicRig *r, uint16_t wrid, uint8_t op)
{
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 1, QPN_B));
    g_assert_cmphex(ernic_rig_cqe(r, 1, wrid), ==, CQE(op, wrid));
}

/*
 * WQE @wrid (@op, in slot @wrid) of device @i's QP ends in ERRFLAG and
 * FATAL 0x05.
 */
static void wqe_refused_on(ErnicRig *r, int i, uint16_t wrid, uint8_t op)
{
    uint32_t qpn = i ? QPN_B : QPN_A;

    ernic_rig_poll_cqhead(r, i, qpn);
    g_assert_cmphex(ernic_rig_cqe(r, i, wrid), ==, ERRFLAG | CQE(op, wrid));
    g_assert_cmphex(ernic_rig_fatal_entry(r, i, 0), ==,
                    (qpn << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    g_assert_cmphex(ernic_rig_qrd(r, i, qpn, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, !=, 0);
}

static void local_refused(ErnicRig *r, uint16_t wrid, uint8_t op)
{
    wqe_refused_on(r, 1, wrid, op);
}

/* Device 0 moves @len bytes through @rkey at @va; returns the CQE. */
static uint32_t via(ErnicRig *r, uint16_t wrid, uint8_t op, uint32_t rkey,
                    uint64_t va, uint32_t len)
{
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid, op,
                   DEV_BASE(0) + SRC_OFF + (op == ERNIC_OP_READ ? 0x40000 : 0),
                   len, va, rkey, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    return ernic_rig_cqe(r, 0, wrid);
}

/* Device 1 refused the last request with FATAL @code. */
static void refused_with(ErnicRig *r, uint16_t code)
{
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | code);
}

/*
 * A type 2 window over part of the region: a WRITE through it lands in
 * the region's pages and a READ brings it back; the region's own key has
 * no remote access; past the window's end is a range error (0x16).
 */
static void test_mw_type2(void)
{
    ErnicRig *r = mw_pair(MW_FEAT, ERNIC_MRACC_MW_BIND |
                          ERNIC_MRACC_LOCAL_WRITE);
    uint32_t key = MW_KEY(MW2_INDEX, 0x51);
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 3000, 61);
    uint32_t pos = 0x123 + 100 + 3000;      /* byte MW_VA + 3000 */

    post_bind(r, 0, key, MW_VA, MW_LEN, XRKEY, MW_RW);
    local_done(r, 0, ERNIC_OP_BIND_MW);
    mr_cmd(r, 1, MW2_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY), ==,
                    0x51 | ERNIC_MR_VALID << ERNIC_MRKEY_STATE_SHIFT);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRLENLO), ==, MW_LEN);

    g_assert_cmphex(via(r, 0, ERNIC_OP_WRITE, key, MW_VA + 3000, 3000), ==,
                    CQE(ERNIC_OP_WRITE, 0));
    ernic_rig_assert_mem(r, DEV_BASE(1) + xmr_page_off[0] + pos, p,
                         4096 - pos);
    ernic_rig_assert_mem(r, DEV_BASE(1) + xmr_page_off[1],
                         p + 4096 - pos, 3000 - (4096 - pos));
    g_assert_cmphex(via(r, 1, ERNIC_OP_READ, key, MW_VA + 3000, 3000), ==,
                    CQE(ERNIC_OP_READ, 1));
    ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF + 0x40000, p, 3000);

    via(r, 2, ERNIC_OP_WRITE, key, MW_VA + MW_LEN - 10, 20);
    refused_with(r, ERNIC_FATAL_RETH_LENGTH);
    g_free(p);
    ernic_rig_stop(r);
}

/* The region's own key has no remote access: only the window does. */
static void test_mw_region_key(void)
{
    ErnicRig *r = mw_pair(MW_FEAT, ERNIC_MRACC_MW_BIND |
                          ERNIC_MRACC_LOCAL_WRITE);

    post_bind(r, 0, MW_KEY(MW2_INDEX, 1), MW_VA, MW_LEN, XRKEY, MW_RW);
    local_done(r, 0, ERNIC_OP_BIND_MW);
    via(r, 0, ERNIC_OP_WRITE, XRKEY, MW_VA, 16);
    refused_with(r, ERNIC_FATAL_RKEY);
    ernic_rig_stop(r);
}

/*
 * A window bound for READ only refuses a WRITE; after LOCAL_INV a type 2
 * window is free again: bound anew with another key byte it takes
 * WRITEs, and the old key is refused.
 */
static void test_mw_invalidate(void)
{
    ErnicRig *r = mw_pair(MW_FEAT, ERNIC_MRACC_MW_BIND |
                          ERNIC_MRACC_LOCAL_WRITE);
    uint32_t k1 = MW_KEY(MW2_INDEX, 1), k2 = MW_KEY(MW2_INDEX, 2);

    post_bind(r, 0, k1, MW_VA, MW_LEN, XRKEY, ERNIC_MRACC_REMOTE_READ);
    local_done(r, 0, ERNIC_OP_BIND_MW);
    g_assert_cmphex(via(r, 0, ERNIC_OP_READ, k1, MW_VA, 64), ==,
                    CQE(ERNIC_OP_READ, 0));
    /* Bound already: a second bind of a type 2 window is refused... */
    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, 1, ERNIC_OP_LOCAL_INV,
                   0, 0, 0, k1, 0, NULL);
    local_done(r, 1, ERNIC_OP_LOCAL_INV);
    post_bind(r, 2, k2, MW_VA, MW_LEN, XRKEY, MW_RW);
    local_done(r, 2, ERNIC_OP_BIND_MW);
    g_assert_cmphex(via(r, 1, ERNIC_OP_WRITE, k2, MW_VA, 64), ==,
                    CQE(ERNIC_OP_WRITE, 1));
    via(r, 2, ERNIC_OP_WRITE, k1, MW_VA, 64);
    refused_with(r, ERNIC_FATAL_RKEY);
    ernic_rig_stop(r);
}

/* A SEND with Invalidate naming a bound type 2 window invalidates it. */
static void test_mw_remote_inv(void)
{
    ErnicRig *r = mw_pair(MW_FEAT | ERNIC_EXT_F_RINV,
                          ERNIC_MRACC_MW_BIND | ERNIC_MRACC_LOCAL_WRITE);
    uint32_t key = MW_KEY(MW2_INDEX, 7);
    uint8_t ieth[4];

    post_bind(r, 0, key, MW_VA, MW_LEN, XRKEY, MW_RW);
    local_done(r, 0, ERNIC_OP_BIND_MW);
    stl_be_p(ieth, key);
    g_assert_cmphex(request(r, 0x17, PSN_A, ieth, 4, 40), ==, 0x1f);
    mr_cmd(r, 1, MW2_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY), ==,
                    7 | ERNIC_MR_INVALID << ERNIC_MRKEY_STATE_SHIFT);
    ernic_rig_stop(r);
}

/*
 * A type 1 window is bound again with a new key (the old one refused),
 * unbound by a bind of length 0, and never invalidated: LOCAL_INV of it
 * fails (FATAL 0x05).
 */
static void test_mw_type1(void)
{
    ErnicRig *r = mw_pair(MW_FEAT, ERNIC_MRACC_MW_BIND |
                          ERNIC_MRACC_LOCAL_WRITE);
    uint32_t k1 = MW_KEY(MW1_INDEX, 1), k2 = MW_KEY(MW1_INDEX, 2);

    post_bind(r, 0, k1, MW_VA, MW_LEN, XRKEY, MW_RW);
    local_done(r, 0, ERNIC_OP_BIND_MW);
    post_bind(r, 1, k2, MW_VA, 64, XRKEY, MW_RW);
    local_done(r, 1, ERNIC_OP_BIND_MW);
    g_assert_cmphex(via(r, 0, ERNIC_OP_WRITE, k2, MW_VA, 64), ==,
                    CQE(ERNIC_OP_WRITE, 0));
    post_bind(r, 2, k1, 0, 0, 0, 0);
    local_done(r, 2, ERNIC_OP_BIND_MW);
    mr_cmd(r, 1, MW1_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY), ==,
                    1 | ERNIC_MR_INVALID << ERNIC_MRKEY_STATE_SHIFT);
    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, 3, ERNIC_OP_LOCAL_INV,
                   0, 0, 0, k1, 0, NULL);
    local_refused(r, 3, ERNIC_OP_LOCAL_INV);
    ernic_rig_stop(r);
}

/*
 * When the region changes (written again, here freed) its windows are
 * unbound at once: none outlives the pages it reached.
 */
static void test_mw_region_gone(void)
{
    ErnicRig *r = mw_pair(MW_FEAT, ERNIC_MRACC_MW_BIND |
                          ERNIC_MRACC_LOCAL_WRITE);
    uint32_t key = MW_KEY(MW2_INDEX, 3);

    post_bind(r, 0, key, MW_VA, MW_LEN, XRKEY, MW_RW);
    local_done(r, 0, ERNIC_OP_BIND_MW);
    put_entry(r, ERNIC_MR_FREE, 0, 0, 0, 0, 0, 0);
    mr_cmd(r, 1, MW2_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY) >>
                    ERNIC_MRKEY_STATE_SHIFT, ==, ERNIC_MR_INVALID);
    via(r, 0, ERNIC_OP_WRITE, key, MW_VA, 16);
    refused_with(r, ERNIC_FATAL_RKEY);
    ernic_rig_stop(r);
}

/* Refused binds: ERRFLAG, FATAL 0x05, the window unchanged. */
typedef struct MwRefusal {
    const char *name;
    uint32_t region_acc;        /* the region's access */
    uint32_t window_pd;
    uint32_t rkey;
    uint64_t va, len;
    uint32_t lkey, acc;
    bool bind_first;            /* the type 2 window is bound already */
} MwRefusal;

#define MWB     (ERNIC_MRACC_MW_BIND | ERNIC_MRACC_LOCAL_WRITE)

static const MwRefusal mw_refusals[] = {
    { "no-bind-access", ERNIC_MRACC_LOCAL_WRITE, PD_NUM,
      MW_KEY(MW2_INDEX, 1), MW_VA, 64, XRKEY, MW_RW },
    { "window-other-pd", MWB, PD_NUM + 1, MW_KEY(MW2_INDEX, 1), MW_VA, 64,
      XRKEY, MW_RW },
    { "region-key-byte", MWB, PD_NUM, MW_KEY(MW2_INDEX, 1), MW_VA, 64,
      XRKEY ^ 1, MW_RW },
    { "past-region", MWB, PD_NUM, MW_KEY(MW2_INDEX, 1), MW_VA, XMR_LEN,
      XRKEY, MW_RW },
    { "write-without-local-write", ERNIC_MRACC_MW_BIND, PD_NUM,
      MW_KEY(MW2_INDEX, 1), MW_VA, 64, XRKEY, ERNIC_MRACC_REMOTE_WRITE },
    { "region-as-window", MWB, PD_NUM, MW_KEY(XMR_INDEX, 1), MW_VA, 64,
      XRKEY, MW_RW },
    { "window-as-region", MWB, PD_NUM, MW_KEY(MW2_INDEX, 1), 0, 0,
      MW_KEY(MW1_INDEX, 0x33), 0 },
    { "type2-bound", MWB, PD_NUM, MW_KEY(MW2_INDEX, 2), MW_VA, 64, XRKEY,
      MW_RW, true },
};

static void test_mw_refused(const void *opaque)
{
    const MwRefusal *t = opaque;
    ErnicRig *r = mw_pair(MW_FEAT, t->region_acc);
    uint16_t wrid = 0;

    put_window(r, MW2_INDEX, true, t->window_pd);
    if (t->bind_first) {
        post_bind(r, wrid, MW_KEY(MW2_INDEX, 1), MW_VA, 64, XRKEY, MW_RW);
        local_done(r, wrid++, ERNIC_OP_BIND_MW);
    }
    post_bind(r, wrid, t->rkey, t->va, t->len, t->lkey, t->acc);
    local_refused(r, wrid, ERNIC_OP_BIND_MW);
    mr_cmd(r, 1, MW2_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY), ==,
                    t->bind_first ? 1 | ERNIC_MR_VALID << 8 :
                    XMR_KEY | ERNIC_MR_INVALID << 8);
    ernic_rig_stop(r);
}

/* A window is no L_Key: a keyed SGE naming one is refused (FATAL 0x05). */
static void test_mw_lkey(void)
{
    ErnicRig *r = xwqe_pair_conf(MW_FEAT | ERNIC_EXT_F_XWQE,
                                 ERNIC_MRACC_LOCAL_WRITE, ERNIC_EXTQPCONF_XWQE);
    XSge sg = { XS_IOVA, 64, MW_KEY(MW2_INDEX, XMR_KEY) };

    mr_window(r, 0, ERNIC_MR_VALID, PD_NUM, ERNIC_MRACC_MW |
              ERNIC_MRACC_MW_TYPE2 | ERNIC_MRACC_LOCAL_WRITE |
              ERNIC_MRACC_PHYS, XS_IOVA, 4096, XS_C, 0);
    g_assert_cmpuint(mr_cmd(r, 0, MW2_INDEX, ERNIC_MRCMD_WRITE), ==,
                     ERNIC_MRSTS_OK);
    post_x(r, 0, ERNIC_OP_WRITE, 1, &sg, MR_VA, RKEY);
    wqe_refused_on(r, 0, 0, ERNIC_OP_WRITE);
    ernic_rig_stop(r);
}

/* Without EXTCTRL.MW a BIND WQE has a reserved opcode (INTSTS[5]). */
static void test_mw_off(void)
{
    ErnicRig *r = mw_pair(ERNIC_EXT_F_MR, ERNIC_MRACC_MW_BIND |
                          ERNIC_MRACC_LOCAL_WRITE);

    post_bind(r, 0, MW_KEY(MW2_INDEX, 1), MW_VA, MW_LEN, XRKEY, MW_RW);
    ernic_rig_poll_cqhead(r, 1, QPN_B);
    g_assert_cmphex(ernic_rig_cqe(r, 1, 0), ==,
                    ERRFLAG | CQE(ERNIC_OP_BIND_MW, 0));
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INTSTS) &
                    ERNIC_INT_ILLEGAL_OPCODE, !=, 0);
    mr_cmd(r, 1, MW2_INDEX, ERNIC_MRCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY) >>
                    ERNIC_MRKEY_STATE_SHIFT, ==, ERNIC_MR_INVALID);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/ext/off", test_off);
    qtest_add_func("/ernic/ext/discovery", test_discovery);
    qtest_add_func("/ernic/ext/ctrl", test_ctrl);
    qtest_add_func("/ernic/ext/mr/window", test_mr_window);
    qtest_add_func("/ernic/ext/mr/property", test_mr_property);
    qtest_add_func("/ernic/ext/mr/write-paged", test_write_paged);
    qtest_add_func("/ernic/ext/mr/read-paged", test_read_paged);
    qtest_add_data_func("/ernic/ext/mr/read-paged/map-refused",
                        GINT_TO_POINTER(MAP_REFUSED),
                        test_read_paged_map_refused);
    qtest_add_data_func("/ernic/ext/mr/read-paged/map-off",
                        GINT_TO_POINTER(MAP_OFF), test_read_paged_map_refused);
    qtest_add_data_func("/ernic/ext/mr/read-paged/map-small",
                        GINT_TO_POINTER(MAP_SMALL),
                        test_read_paged_map_refused);
    qtest_add_func("/ernic/ext/mr/phys", test_phys);
    qtest_add_func("/ernic/ext/mr/page-list-at-0", test_pbl_at_zero);
    qtest_add_func("/ernic/ext/mr/rewrite", test_mr_rewrite);
    add_cases("/ernic/ext/mr/refused", refusals, ARRAY_SIZE(refusals),
              sizeof(refusals[0]), test_refused);
    qtest_add_func("/ernic/ext/frwr/map-write-invalidate", test_frwr);
    qtest_add_func("/ernic/ext/frwr/off", test_frwr_off);
    add_cases("/ernic/ext/frwr/refused", fr_refusals,
              ARRAY_SIZE(fr_refusals), sizeof(fr_refusals[0]),
              test_frwr_refused);
    qtest_add_func("/ernic/ext/rxmeta/receive", test_rxmeta);
    qtest_add_func("/ernic/ext/rxmeta/write-imm-rnr", test_rxmeta_rnr);
    qtest_add_func("/ernic/ext/rxmeta/write-imm-rnr-retry",
                   test_rxmeta_rnr_retry);
    qtest_add_func("/ernic/ext/rxmeta/off", test_rxmeta_off);
    qtest_add_func("/ernic/ext/rxmeta/qp-block", test_qp_block);
    qtest_add_func("/ernic/ext/rxwqe/scatter", test_rxwqe);
    qtest_add_func("/ernic/ext/rxwqe/lkey", test_rxwqe_lkey);
    add_cases("/ernic/ext/rxwqe/refused", rx_refusals,
              ARRAY_SIZE(rx_refusals), sizeof(rx_refusals[0]),
              test_rxwqe_refused);
    qtest_add_func("/ernic/ext/rxwqe/off", test_rxwqe_off);
    qtest_add_func("/ernic/ext/xwqe/gather-scatter", test_xwqe);
    add_cases("/ernic/ext/xwqe/refused", x_refusals, ARRAY_SIZE(x_refusals),
              sizeof(x_refusals[0]), test_xwqe_refused);
    qtest_add_func("/ernic/ext/xwqe/zero-send", test_xwqe_zero_send);
    qtest_add_func("/ernic/ext/xwqe/off", test_xwqe_off);
    qtest_add_func("/ernic/ext/udb/doorbell", test_udb_doorbell);
    qtest_add_func("/ernic/ext/udb/poll", test_udb_poll);
    qtest_add_func("/ernic/ext/udb/off", test_udb_off);
    add_cases("/ernic/ext/udb/refused", udb_refusals,
              G_N_ELEMENTS(udb_refusals), sizeof(udb_refusals[0]),
              test_udb_refused);
    qtest_add_func("/ernic/ext/rinv/invalidate", test_rinv);
    add_cases("/ernic/ext/rinv/refused", inv_refusals,
              ARRAY_SIZE(inv_refusals), sizeof(inv_refusals[0]),
              test_rinv_refused);
    qtest_add_func("/ernic/ext/rinv/off", test_rinv_off);
    qtest_add_func("/ernic/ext/qp1/gather", test_qp1_gather);
    qtest_add_func("/ernic/ext/qp1/place", test_qp1_place);
    qtest_add_func("/ernic/ext/qp1/too-short", test_qp1_short);
    qtest_add_func("/ernic/ext/qp1/off", test_qp1_off);
    qtest_add_func("/ernic/ext/mw/type2", test_mw_type2);
    qtest_add_func("/ernic/ext/mw/region-key", test_mw_region_key);
    qtest_add_func("/ernic/ext/mw/invalidate", test_mw_invalidate);
    qtest_add_func("/ernic/ext/mw/remote-inv", test_mw_remote_inv);
    qtest_add_func("/ernic/ext/mw/type1", test_mw_type1);
    qtest_add_func("/ernic/ext/mw/region-gone", test_mw_region_gone);
    for (size_t k = 0; k < ARRAY_SIZE(mw_refusals); k++) {
        g_autofree char *name = g_strdup_printf("/ernic/ext/mw/refused/%s",
                                                mw_refusals[k].name);

        qtest_add_data_func(name, &mw_refusals[k], test_mw_refused);
    }
    qtest_add_func("/ernic/ext/mw/lkey", test_mw_lkey);
    qtest_add_func("/ernic/ext/mw/off", test_mw_off);
    return g_test_run();
}
