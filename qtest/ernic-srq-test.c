/*
 * QTest: ERNIC-X shared receive queues (docs/extension.md, "Shared
 * receive queues"). Two QPs of device 1 take receive WQEs from one SRQ;
 * the requests come from the test as device 0's frames.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "ernic-rig.h"

#define QPN_C           4               /* a second QP of device 1 */
#define QPC_BASE        (DEV_BASE(1) + 0x2000000)
#define SRQ_N           5
#define SRQ_DEPTH       8
#define SRQ_RING        (DEV_BASE(1) + MR_OFF + 0x100000)
#define SRQ_BUF(i)      (DEV_BASE(1) + MR_OFF + 0x110000 + (i) * 0x1000)
#define META_OFF        (MR_OFF + 0x80000)
#define META_C_OFF      (MR_OFF + 0x90000)
#define SRQ_FEAT        (ERNIC_EXT_F_MR | ERNIC_EXT_F_RXMETA | \
                         ERNIC_EXT_F_RXWQE | ERNIC_EXT_F_SRQ)
#define SRQ_REG(reg)    (ERNIC_EXT_SRQ_OFFSET(SRQ_N) + (reg))
#define XLKEY           ((9 << 8) | 0x44)
#define OPC_SEND_ONLY   0x04
#define OPC_WRITE_IMM   0x0b
#define AETH_ACK        0x1f
#define IMM             0x11223344u

static uint64_t meta_addr(uint32_t qpn, uint32_t slot)
{
    return DEV_BASE(1) + (qpn == QPN_B ? META_OFF : META_C_OFF) +
           slot * ERNIC_RXMETA_SIZE;
}

/* QP @qpn of device 1 reports into its metadata ring, WQEs from SRQ_N. */
static void attach(ErnicRig *r, uint32_t qpn, uint32_t conf)
{
    uint32_t x = ERNIC_EXT_QP_OFFSET(qpn);

    ernic_rig_wr(r, 1, x + ERNIC_RXMETABA, meta_addr(qpn, 0));
    ernic_rig_wr(r, 1, x + ERNIC_RXMETABAMSB, 0);
    ernic_rig_wr(r, 1, x + ERNIC_EXTQPCONF, conf);
}

/* SRQ_N of device 1 with PD @pd and @conf (enable, user). */
static void srq_setup(ErnicRig *r, uint32_t pd, uint32_t conf)
{
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQBA), (uint32_t)SRQ_RING);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQBAMSB), SRQ_RING >> 32);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQDEPTH), SRQ_DEPTH);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQPD), pd);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQCONF), conf);
}

/* Receive WQE @i of the SRQ: one SGE of @len bytes at SRQ_BUF(i). */
static void put_wqe(ErnicRig *r, uint32_t i, uint32_t len, uint32_t lkey)
{
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

    stq_le_p(&w[ERNIC_SGE_ADDR], SRQ_BUF(i));
    stl_le_p(&w[ERNIC_SGE_LEN], len);
    stl_le_p(&w[ERNIC_SGE_LKEY], lkey);
    qtest_memwrite(r->qts, SRQ_RING + i * ERNIC_RWQE_SIZE, w, sizeof(w));
}

static void post_wqes(ErnicRig *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        put_wqe(r, i, 0x1000, 0);
    }
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQPI), n);
}

/*
 * Device 1's QPs B and C attached to SRQ_N (@feat in EXTCTRL, @pd its
 * PD), device 0 connected to B.
 */
static ErnicRig *srq_pair(uint32_t feat, uint32_t pd, uint32_t srq_conf)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t conf = ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE |
                    ERNIC_EXTQPCONF_SRQ |
                    SRQ_N << ctz32(ERNIC_EXTQPCONF_SRQN_MASK);

    ernic_rig_wr(r, 1, ERNIC_EXTCTRL, feat);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXTCTRL), ==, feat);
    attach(r, QPN_B, conf);
    attach(r, QPN_C, conf);
    srq_setup(r, pd, srq_conf);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_setup_qp(r, 1, QPN_C, 0, QPN_A, PSN_B, PSN_A,
                       &ernic_rig_default_cfg, QPC_BASE);
    return r;
}

/* A SEND ONLY of @len bytes to @qpn; the AETH syndrome of its answer. */
static uint8_t send_only(ErnicRig *r, uint32_t qpn, uint32_t psn, size_t len)
{
    return ernic_rig_request(r, qpn, OPC_SEND_ONLY, psn, NULL, 0, len);
}

static void assert_meta(ErnicRig *r, uint32_t qpn, uint32_t slot,
                        uint32_t len, uint8_t opcode, uint8_t flags,
                        uint32_t wqe)
{
    uint8_t m[ERNIC_RXMETA_SIZE];

    qtest_memread(r->qts, meta_addr(qpn, slot), m, sizeof(m));
    g_assert_cmpuint(ldl_le_p(&m[ERNIC_RXMETA_LEN]), ==, len);
    g_assert_cmphex(m[ERNIC_RXMETA_OPCODE], ==, opcode);
    g_assert_cmphex(m[ERNIC_RXMETA_FLAGS], ==, flags);
    g_assert_cmpuint(lduw_le_p(&m[ERNIC_RXMETA_SRQ_WQE]), ==, wqe);
}

/* The payload ernic_rig_inject() sends with @psn is at SRQ_BUF(@i). */
static void assert_data(ErnicRig *r, uint32_t i, uint32_t psn, size_t len)
{
    g_autofree uint8_t *want = g_malloc(len);

    ernic_rig_fill(want, len, psn);
    ernic_rig_assert_mem(r, SRQ_BUF(i), want, len);
}

/*
 * The block: masks, the ring fixed while enabled, SRQCIn reset by the
 * enable, no block past ERNIC_SRQ_NUM.
 */
static void test_regs(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQBA), 0x1234567f);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQBA)), ==, 0x12345640);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQCONF), 0xffffffff);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCONF)), ==,
                    ERNIC_SRQCONF_EN | ERNIC_SRQCONF_USER |
                    ERNIC_SRQCONF_XRC | ERNIC_SRQCONF_XRCD_MASK);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQBA), 0);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQDEPTH), 16);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQCONF), ERNIC_SRQCONF_EN);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQBA)), ==, 0x12345640);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQDEPTH)), ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCONF)), ==,
                    ERNIC_SRQCONF_EN | ERNIC_SRQCONF_USER |
                    ERNIC_SRQCONF_XRC | ERNIC_SRQCONF_XRCD_MASK);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQPI), 0x12345);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQPI)), ==, 0x2345);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQCI), 3);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCI)), ==, 0);
    ernic_rig_wr(r, 1, ERNIC_EXT_SRQ_OFFSET(ERNIC_SRQ_NUM) + ERNIC_SRQPD, 7);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXT_SRQ_OFFSET(ERNIC_SRQ_NUM) +
                                 ERNIC_SRQPD), ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXTFEAT) & ERNIC_EXT_F_SRQ, ==,
                    ERNIC_EXT_F_SRQ);
    ernic_rig_stop(r);
}

/*
 * Two QPs take WQEs from one SRQ in arrival order, whichever receives;
 * each QP's metadata names the SRQ WQE its message took.
 */
static void test_shared(void)
{
    ErnicRig *r = srq_pair(SRQ_FEAT, PD_NUM, ERNIC_SRQCONF_EN);
    const uint8_t f = ERNIC_RXMETA_F_SRQ;

    post_wqes(r, 3);
    g_assert_cmphex(send_only(r, QPN_B, PSN_A, 100),
                    ==, AETH_ACK);
    g_assert_cmphex(send_only(r, QPN_C, PSN_A, 200),
                    ==, AETH_ACK);
    g_assert_cmphex(send_only(r, QPN_B, PSN_A + 1, 300),
                    ==, AETH_ACK);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCI)), ==, 3);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 2);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_C, ERNIC_STATRQPIDB), ==, 1);
    assert_meta(r, QPN_B, 0, 100, OPC_SEND_ONLY, f, 0);
    assert_meta(r, QPN_C, 0, 200, OPC_SEND_ONLY, f, 1);
    assert_meta(r, QPN_B, 1, 300, OPC_SEND_ONLY, f, 2);
    assert_data(r, 0, PSN_A, 100);
    assert_data(r, 1, PSN_A, 200);
    assert_data(r, 2, PSN_A + 1, 300);
    ernic_rig_stop(r);
}

/*
 * An empty SRQ is an RNR NAK and takes no slot; once the driver posts,
 * the retried SEND lands. A WRITE with Immediate takes an SRQ WQE too,
 * without reading it.
 */
static void test_empty(void)
{
    ErnicRig *r = srq_pair(SRQ_FEAT, PD_NUM, ERNIC_SRQCONF_EN);
    uint8_t ext[20];

    g_assert_cmphex(send_only(r, QPN_B, PSN_A, 64) &
                    0xe0, ==, 0x20);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    post_wqes(r, 2);
    g_assert_cmphex(send_only(r, QPN_B, PSN_A, 64), ==,
                    AETH_ACK);
    assert_data(r, 0, PSN_A, 64);
    ernic_rig_reth(ext, MR_VA, RKEY, 0);
    stl_be_p(ext + 16, IMM);
    g_assert_cmphex(ernic_rig_request(r, QPN_B, OPC_WRITE_IMM, PSN_A + 1,
                                      ext, 20, 0), ==, AETH_ACK);
    assert_meta(r, QPN_B, 1, 0, OPC_WRITE_IMM,
                ERNIC_RXMETA_F_SRQ | ERNIC_RXMETA_F_IMM, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCI)), ==, 2);
    ernic_rig_stop(r);
}

/*
 * The limit fires once, when fewer WQEs than it are left: SRQLIMITn
 * reads 0 and EXTEVT[0] is set until the driver clears it.
 */
static void test_limit(void)
{
    ErnicRig *r = srq_pair(SRQ_FEAT, PD_NUM, ERNIC_SRQCONF_EN);

    post_wqes(r, 4);
    ernic_rig_wr(r, 1, ERNIC_EXTEVTEN, ERNIC_EXTEVT_SRQ_LIMIT);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQLIMIT), 3);
    send_only(r, QPN_B, PSN_A, 8);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXTEVT), ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQLIMIT)), ==, 3);
    send_only(r, QPN_B, PSN_A + 1, 8);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXTEVT), ==,
                    ERNIC_EXTEVT_SRQ_LIMIT);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQLIMIT)), ==, 0);
    ernic_rig_wr(r, 1, ERNIC_EXTEVT, ERNIC_EXTEVT_SRQ_LIMIT);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXTEVT), ==, 0);
    send_only(r, QPN_B, PSN_A + 2, 8);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXTEVT), ==, 0);
    ernic_rig_stop(r);
}

/*
 * Refusals. An SRQ of another PD counts as empty (RNR NAK, no slot). A
 * WQE whose L_Key fails, or a user SRQ's WQE with L_Key 0, completes its
 * slot with status 2 and makes the QP FATAL 0x06, as a QP's own receive
 * WQE does.
 */
static void test_other_pd(void)
{
    ErnicRig *r = srq_pair(SRQ_FEAT, PD_NUM + 1, ERNIC_SRQCONF_EN);

    post_wqes(r, 2);
    g_assert_cmphex(send_only(r, QPN_B, PSN_A, 64) &
                    0xe0, ==, 0x20);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCI)), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    ernic_rig_stop(r);
}

/* XLKEY of device 1: a physical region with local write, of @pd. */
static void put_entry(ErnicRig *r, uint32_t pd)
{
    ernic_rig_wr(r, 1, ERNIC_MRKEY, (XLKEY & 0xff) |
                 ERNIC_MR_VALID << ERNIC_MRKEY_STATE_SHIFT);
    ernic_rig_wr(r, 1, ERNIC_MRPD, pd);
    ernic_rig_wr(r, 1, ERNIC_MRACC, ERNIC_MRACC_LOCAL_WRITE |
                 ERNIC_MRACC_PHYS);
    ernic_rig_wr(r, 1, ERNIC_MRIOVALO, (uint32_t)SRQ_BUF(0));
    ernic_rig_wr(r, 1, ERNIC_MRIOVAHI, SRQ_BUF(0) >> 32);
    ernic_rig_wr(r, 1, ERNIC_MRLENLO, 0x10000);
    ernic_rig_wr(r, 1, ERNIC_MRLENHI, 0);
    ernic_rig_wr(r, 1, ERNIC_MRPBLLO, (uint32_t)SRQ_BUF(0));
    ernic_rig_wr(r, 1, ERNIC_MRPBLHI, SRQ_BUF(0) >> 32);
    ernic_rig_wr(r, 1, ERNIC_MRIDX, XLKEY >> 8);
    ernic_rig_wr(r, 1, ERNIC_MRCMD, ERNIC_MRCMD_WRITE);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRSTS), ==, ERNIC_MRSTS_OK);
}

static void refused(uint32_t srq_conf, uint32_t lkey)
{
    ErnicRig *r = srq_pair(SRQ_FEAT, PD_NUM, srq_conf);
    g_autofree uint8_t *zero = g_malloc0(64);
    uint8_t m[ERNIC_RXMETA_SIZE];

    put_entry(r, PD_NUM + 1);
    put_wqe(r, 0, 0x1000, lkey);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQPI), 1);
    g_assert_cmphex(send_only(r, QPN_B, PSN_A, 64), ==,
                    0x63 /* NAK Remote Operational Error */);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_RESPONSE_HANDLER);
    qtest_memread(r->qts, meta_addr(QPN_B, 0), m, sizeof(m));
    g_assert_cmphex(m[ERNIC_RXMETA_FLAGS], ==, ERNIC_RXMETA_F_SRQ |
                    ERNIC_RXMETA_ST_PROT << ERNIC_RXMETA_STATUS_SHIFT);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCI)), ==, 1);
    ernic_rig_assert_mem(r, SRQ_BUF(0), zero, 64);
    ernic_rig_stop(r);
}

/* An SRQ WQE with an L_Key of its PD is used; one of another PD is not. */
static void test_lkey(void)
{
    ErnicRig *r = srq_pair(SRQ_FEAT, PD_NUM, ERNIC_SRQCONF_EN);

    put_entry(r, PD_NUM);
    put_wqe(r, 0, 0x1000, XLKEY);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQPI), 1);
    g_assert_cmphex(send_only(r, QPN_B, PSN_A, 64), ==,
                    AETH_ACK);
    assert_data(r, 0, PSN_A, 64);
    ernic_rig_stop(r);
}

static void test_foreign_lkey(void)
{
    refused(ERNIC_SRQCONF_EN, XLKEY);
}

static void test_user_lkey0(void)
{
    refused(ERNIC_SRQCONF_EN | ERNIC_SRQCONF_USER, 0);
}

/* Without EXTCTRL.SRQ the QP's own RQ holds its receive WQEs. */
static void test_off(void)
{
    ErnicRig *r = srq_pair(SRQ_FEAT & ~ERNIC_EXT_F_SRQ, PD_NUM,
                           ERNIC_SRQCONF_EN);
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };
    g_autofree uint8_t *want = g_malloc(64);

    post_wqes(r, 2);
    stq_le_p(&w[ERNIC_SGE_ADDR], SRQ_BUF(7));
    stl_le_p(&w[ERNIC_SGE_LEN], 0x1000);
    qtest_memwrite(r->qts, DEV_BASE(1) + RQ_OFF, w, sizeof(w));
    g_assert_cmphex(send_only(r, QPN_B, PSN_A, 64), ==,
                    AETH_ACK);
    ernic_rig_fill(want, 64, PSN_A);
    ernic_rig_assert_mem(r, SRQ_BUF(7), want, 64);
    assert_meta(r, QPN_B, 0, 64, OPC_SEND_ONLY, 0, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCI)), ==, 0);
    ernic_rig_stop(r);
}

/*
 * BAR3's SRQ pages: a user SRQ's SRQPIn written and SRQPIn, SRQCIn read
 * there; a kernel SRQ's page is inert.
 */
static void test_page(void)
{
    ErnicRig *r = srq_pair(SRQ_FEAT, PD_NUM,
                           ERNIC_SRQCONF_EN | ERNIC_SRQCONF_USER);
    QPCIDevice *d = r->d[1].e.pdev;
    uint64_t size, page = ERNIC_UDB_SRQ_OFFSET(SRQ_N);
    QPCIBar bar = qpci_iomap(d, ERNIC_BAR_UDB, &size);

    g_assert_cmphex(size, ==, ERNIC_UDB_BAR_SIZE);
    ernic_rig_wr(r, 1, ERNIC_EXT_SRQ_OFFSET(0) + ERNIC_SRQCONF,
                 ERNIC_SRQCONF_EN);
    qpci_io_writel(d, bar, ERNIC_UDB_SRQ_OFFSET(0) + ERNIC_UDB_SRQPI, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXT_SRQ_OFFSET(0) + ERNIC_SRQPI),
                    ==, 0);
    qpci_io_writel(d, bar, page + ERNIC_UDB_SRQPI, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQPI)), ==, 1);
    g_assert_cmphex(qpci_io_readl(d, bar,
                                  page + ERNIC_UDB_SRQPI), ==, 1);
    qpci_io_writel(d, bar, page + ERNIC_UDB_SRQCI, 5);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQCI)), ==, 0);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQCONF), 0);
    ernic_rig_wr(r, 1, SRQ_REG(ERNIC_SRQCONF), ERNIC_SRQCONF_EN);
    qpci_io_writel(d, bar, page + ERNIC_UDB_SRQPI, 2);
    g_assert_cmphex(ernic_rig_rd(r, 1, SRQ_REG(ERNIC_SRQPI)), ==, 1);
    g_assert_cmphex(qpci_io_readl(d, bar,
                                  page + ERNIC_UDB_SRQPI), ==, 0);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/srq/regs", test_regs);
    qtest_add_func("/ernic/srq/shared", test_shared);
    qtest_add_func("/ernic/srq/empty-rnr", test_empty);
    qtest_add_func("/ernic/srq/limit", test_limit);
    qtest_add_func("/ernic/srq/lkey", test_lkey);
    qtest_add_func("/ernic/srq/refused/other-pd", test_other_pd);
    qtest_add_func("/ernic/srq/refused/foreign-lkey", test_foreign_lkey);
    qtest_add_func("/ernic/srq/refused/user-lkey-0", test_user_lkey0);
    qtest_add_func("/ernic/srq/off", test_off);
    qtest_add_func("/ernic/srq/doorbell-page", test_page);
    return g_test_run();
}
