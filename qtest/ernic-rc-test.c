/*
 * qtest for the ernic packet engine: RoCEv2 RC between two devices, the
 * wire format, packet validation, loss recovery, RNR, QP1 MADs and the
 * Ethernet path.
 *
 * Each device's netdev is a socketpair held by the test (the pattern of
 * igb-test.c), so the test is the wire: it sees every frame, checks
 * headers and ICRC with its own implementation, and forwards, drops,
 * duplicates, reorders or injects frames.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <zlib.h>
#include "ernic-rig.h"
#include "qemu/cutils.h"
/* The device's CRC-32, each of its paths checked against zlib's. */
#include "../../hw/rdma/ernic_crc32.c"
#include <sched.h>
#include <sys/wait.h>

static const uint32_t sizes[] = {
    1, 15, 16, 17, 255, 1023, 1024, 1025, 4096, 65536, 1024 * 1024,
};

/*
 * Data movement between two devices
 */

static void test_send(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t n = 0;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (size_t s = 0; s < ARRAY_SIZE(sizes); s++, n++) {
        uint32_t len = sizes[s];
        uint64_t buf = DEV_BASE(1) + RQ_OFF + (n % RQ_DEPTH) * 0x100000;
        uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, len, n);

        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x100 + n,
                       ERNIC_OP_SEND, DEV_BASE(0) + SRC_OFF, len, 0, 0, 0, p);
        ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A) &&
                       ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB) ==
                       (n + 1) % RQ_DEPTH);
        ernic_rig_assert_mem(r, buf, p, len);
        /* CQE: WRID, opcode, no error (PG332 Table 2-2). */
        g_assert_cmphex(ernic_rig_cqe(r, 0, n), ==, (ERNIC_OP_SEND << 16) |
                        (0x100 + n));
        g_assert_cmphex(qtest_readl(r->qts, DEV_BASE(0) + CQDB_OFF), ==,
                        (n + 1) % SQ_DEPTH);
        g_assert_cmphex(qtest_readl(r->qts, DEV_BASE(1) + RQDB_OFF), ==,
                        (n + 1) % RQ_DEPTH);
        /* Software consumes the buffer. */
        ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, (n + 1) % RQ_DEPTH);
        g_free(p);
    }
    /* One message each: MSN on the responder, SSN on the requester. */
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATMSN), ==, n);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATSSN), ==, n);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATRESPSN), ==,
                    ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPSN));
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    (ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY |
                     ERNIC_STATQP_FATAL), ==,
                    ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
    /* RQ interrupt bank of QP3 (bank 1 bit 3) and WQE completion. */
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_RQINTSTS1) & (1u << QPN_B), ==,
                    1u << QPN_B);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_CQINTSTS1) & (1u << QPN_A), ==,
                    1u << QPN_A);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_INTSTS) & ERNIC_INT_WQE_COMPLETION,
                    ==, ERNIC_INT_WQE_COMPLETION);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INTSTS) &
                    ERNIC_INT_RQ_PKT_RECEIVED, ==, ERNIC_INT_RQ_PKT_RECEIVED);
    ernic_rig_stop(r);
}

static void test_write(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t n = 0;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (size_t s = 0; s < ARRAY_SIZE(sizes); s++, n++) {
        uint32_t len = sizes[s];
        uint32_t off = (n * 4096) % 0x80000;
        uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, len,
                                           77 + n);

        if (off + len > MR_LEN) {
            off = 0;
        }
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, n,
                       n & 1 ? ERNIC_OP_WRITE_IMM : ERNIC_OP_WRITE,
                       DEV_BASE(0) + SRC_OFF, len, MR_VA + off, RKEY,
                       0xabcd0000 + n, NULL);
        ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
        ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + off, p, len);
        g_assert_cmphex(ernic_rig_cqe(r, 0, n) & 0xffffff, ==,
                        ((n & 1 ? ERNIC_OP_WRITE_IMM : ERNIC_OP_WRITE) << 16)
                        | n);
        g_free(p);
    }
    /* WRITE consumes no RQ buffer. */
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    ernic_rig_stop(r);
}

/*
 * A doorbell is served within its MMIO write (docs/engine.md,
 * "Doorbells"): when QEMU acknowledges the SQPIi write, all the WRITE's
 * request frames (FIRST, MIDDLEs, LAST) are already on the wire, before
 * any main loop turn or clock step. Before, they left from the next
 * turn's bottom half, after the acknowledgement.
 */
#define ERNIC_TX_BUDGET_QP      64      /* hw/rdma/ernic_core.h */

static void test_doorbell_inline(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];
    size_t len;
    g_autofree uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF,
                                                  10000, 5);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 10000, MR_VA, RKEY, 0, NULL);
    for (int k = 0; k < ERNIC_TX_BUDGET_QP; k++) {
        g_assert_true(ernic_rig_wire_read(r->d[0].fd, f, &len));
        g_assert_cmphex(f[F_BTH], ==, k == 0 ? 0x06 : f[F_BTH] == 0x08 ?
                        0x08 : 0x07);
        ernic_rig_wire_write(r->d[1].fd, f, len);
        if (f[F_BTH] == 0x08) {
            break;
        }
    }
    g_assert_cmphex(f[F_BTH], ==, 0x08);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, 10000);
    /* RESPHNDSTS[16]: no SQ doorbell outstanding any more. */
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_RESPHNDSTS) &
                    ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN, !=, 0);
    ernic_rig_stop(r);
}

static void test_read(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t n = 0;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (size_t s = 0; s < ARRAY_SIZE(sizes); s++, n++) {
        uint32_t len = sizes[s];
        uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF + 64, len,
                                           300 + n);

        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, n, ERNIC_OP_READ,
                       DEV_BASE(0) + SRC_OFF, len, MR_VA + 64, RKEY, 0, NULL);
        ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
        ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF, p, len);
        g_assert_cmphex(ernic_rig_cqe(r, 0, n), ==, (ERNIC_OP_READ << 16) | n);
        g_free(p);
    }
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_OUTRDRSPPKTCNT), >=,
                    ARRAY_SIZE(sizes));
    ernic_rig_stop(r);
}

/* Both directions at once, many WQEs in flight, mixed opcodes. */
static void test_bidirectional(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t *pa[8], *pb[8];
    int k;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (k = 0; k < 8; k++) {
        pa[k] = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF + k * 0x10000,
                                      5000 + k, k);
        pb[k] = ernic_rig_put_pattern(r, DEV_BASE(1) + SRC_OFF + k * 0x10000,
                                      7000 + k, k + 50);
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, k, ERNIC_OP_WRITE,
                       DEV_BASE(0) + SRC_OFF + k * 0x10000, 5000 + k,
                       MR_VA + k * 0x10000, RKEY, 0, NULL);
        ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, k, ERNIC_OP_WRITE,
                       DEV_BASE(1) + SRC_OFF + k * 0x10000, 7000 + k,
                       MR_VA + k * 0x10000, RKEY, 0, NULL);
    }
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A) &&
                   ernic_rig_all_done(r, 1, QPN_B));
    for (k = 0; k < 8; k++) {
        ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + k * 0x10000, pa[k],
                             5000 + k);
        ernic_rig_assert_mem(r, DEV_BASE(0) + MR_OFF + k * 0x10000, pb[k],
                             7000 + k);
        g_free(pa[k]);
        g_free(pb[k]);
    }
    ernic_rig_stop(r);
}

/*
 * Wire format, checked byte by byte against the test's own encoder.
 */

typedef struct Capture {
    uint8_t f[32][FRAME_MAX];
    size_t len[32];
    int n;
    bool drop;
} Capture;

static ErnicRigVerdict capture_filter(void *opaque, int from, const uint8_t *f,
                                      size_t len)
{
    Capture *c = opaque;

    if (from == 0 && c->n < 32) {
        memcpy(c->f[c->n], f, len);
        c->len[c->n++] = len;
    }
    return c->drop && from == 0 ? ERNIC_RIG_DROP : ERNIC_RIG_FWD;
}

static void check_headers(ErnicRig *r, const uint8_t *f, size_t len,
                          uint8_t opcode, uint32_t psn, bool ackreq,
                          size_t paylen)
{
    size_t pad = -paylen & 3;

    g_assert_cmpmem(f, 6, r->d[1].e.mac, 6);
    g_assert_cmpmem(f + 6, 6, r->d[0].e.mac, 6);
    g_assert_cmphex(lduw_be_p(f + 12), ==, 0x0800);
    g_assert_cmphex(f[F_IP], ==, 0x45);
    g_assert_cmphex(lduw_be_p(f + F_IP + 2), ==, len - 14);
    g_assert_cmphex(lduw_be_p(f + F_IP + 6), ==, 0x4000);   /* DF */
    g_assert_cmphex(f[F_IP + 8], ==, TTL);
    g_assert_cmphex(f[F_IP + 9], ==, 17);
    g_assert_cmphex(qernic_ip_csum(f + F_IP, 20), ==, 0);
    g_assert_cmphex(ernic_rig_be32(f + F_IP + 12), ==, r->d[0].e.ip);
    g_assert_cmphex(ernic_rig_be32(f + F_IP + 16), ==, r->d[1].e.ip);
    g_assert_cmphex(lduw_be_p(f + F_UDP), ==, UDP_SPORT);
    g_assert_cmphex(lduw_be_p(f + F_UDP + 2), ==, 4791);
    g_assert_cmphex(lduw_be_p(f + F_UDP + 4), ==, len - F_UDP);
    g_assert_cmphex(lduw_be_p(f + F_UDP + 6), ==, 0);
    g_assert_cmphex(f[F_BTH], ==, opcode);
    g_assert_cmphex(f[F_BTH + 1], ==, pad << 4);
    g_assert_cmphex(lduw_be_p(f + F_BTH + 2), ==, PKEY);
    g_assert_cmphex(ernic_rig_be32(f + F_BTH + 4), ==, QPN_B);
    g_assert_cmphex(ernic_rig_be32(f + F_BTH + 8), ==,
                    (psn & 0xffffff) | (ackreq ? 0x80000000u : 0));
    g_assert_cmphex(ernic_rig_le32(f + len - 4), ==, qernic_icrc(f, len));
}

static void test_wire_format(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    Capture *c = g_new0(Capture, 1);
    ErnicRigWire w = { .filter = capture_filter, .opaque = c };
    uint8_t inl[16] = "inline-16-bytes";
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 2500, 9);
    const uint8_t *f;
    uint32_t psn = PSN_A;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);

    /* SEND of 2500 B at PMTU 1024: FIRST, MIDDLE, LAST; AckReq on LAST. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 2500, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpint(c->n, ==, 3);
    check_headers(r, c->f[0], c->len[0], 0x00, psn, false, 1024);
    check_headers(r, c->f[1], c->len[1], 0x01, psn + 1, false, 1024);
    check_headers(r, c->f[2], c->len[2], 0x02, psn + 2, true, 452);
    g_assert_cmpuint(c->len[0], ==, F_EXT + 1024 + 4);
    g_assert_cmpmem(c->f[0] + F_EXT, 1024, p, 1024);
    g_assert_cmpmem(c->f[2] + F_EXT, 452, p + 2048, 452);
    psn += 3;

    /* SEND of 5 B inline from SDATA (PG332 Table 2-1): pad 3. */
    c->n = 0;
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_SEND, 0, 5, 0,
                   0, 0, inl);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpint(c->n, ==, 1);
    check_headers(r, c->f[0], c->len[0], 0x04, psn++, true, 5);
    g_assert_cmpmem(c->f[0] + F_EXT, 5, inl, 5);
    g_assert_cmphex(ernic_rig_be32(c->f[0] + F_EXT + 5) >> 8, ==, 0);  /* pad */

    /* WRITE_IMM ONLY: RETH then ImmDt. */
    c->n = 0;
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3, ERNIC_OP_WRITE_IMM,
                   DEV_BASE(0) + SRC_OFF, 100, MR_VA + 8, RKEY, 0xfeedf00d,
                   NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpint(c->n, ==, 1);
    f = c->f[0];
    check_headers(r, f, c->len[0], 0x0b, psn++, true, 100);
    g_assert_cmphex(ldq_be_p(f + F_EXT), ==, MR_VA + 8);
    g_assert_cmphex(ernic_rig_be32(f + F_EXT + 8), ==, RKEY);
    g_assert_cmphex(ernic_rig_be32(f + F_EXT + 12), ==, 100);
    g_assert_cmphex(ernic_rig_be32(f + F_EXT + 16), ==, 0xfeedf00d);
    g_assert_cmpmem(f + F_EXT + 20, 100, p, 100);

    /* READ of 3000 B: one request, three PSNs. */
    c->n = 0;
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 4, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF, 3000, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpint(c->n, ==, 1);
    f = c->f[0];
    check_headers(r, f, c->len[0], 0x0c, psn, true, 0);
    g_assert_cmphex(ernic_rig_be32(f + F_EXT + 12), ==, 3000);
    psn += 3;

    /* SEND_INV ONLY: IETH carries the key. */
    c->n = 0;
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 5, ERNIC_OP_SEND_INV,
                   DEV_BASE(0) + SRC_OFF, 64, 0, 0x1234, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpint(c->n, ==, 1);
    check_headers(r, c->f[0], c->len[0], 0x17, psn++, true, 64);
    g_assert_cmphex(ernic_rig_be32(c->f[0] + F_EXT), ==, 0x1234);

    /* SQPSN advanced by every PSN used. */
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPSN), ==,
                    psn & 0xffffff);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_LSTOUTPKT) & 0xffff, ==, 0x17 |
                    (QPN_A << 8));
    g_free(p);
    g_free(c);
    ernic_rig_stop(r);
}

/* The same over IPv6 (QPCONF[7], IPv6XADD, IPDESADDR1..4). */
static void test_ipv6(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    Capture *c = g_new0(Capture, 1);
    ErnicRigWire w = { .filter = capture_filter, .opaque = c };
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 300, 4);
    const uint8_t *f;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (int i = 0; i < NDEV; i++) {
        uint32_t q = i ? QPN_B : QPN_A;

        ernic_rig_wr(r, i, ERNIC_IPv6XADD4, 0xfd000000);
        ernic_rig_wr(r, i, ERNIC_IPv6XADD1, 0x100 + i);
        ernic_rig_qwr(r, i, q, ERNIC_IPDESADDR4, 0xfd000000);
        ernic_rig_qwr(r, i, q, ERNIC_IPDESADDR1, 0x101 - i);
        ernic_rig_qwr(r, i, q, ERNIC_QPCONF,
                      ernic_rig_qrd(r, i, q, ERNIC_QPCONF) | ERNIC_QPCONF_IPV6);
    }
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 300, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    f = c->f[0];
    g_assert_cmphex(lduw_be_p(f + 12), ==, 0x86dd);
    g_assert_cmphex(f[14] >> 4, ==, 6);
    g_assert_cmphex(lduw_be_p(f + 18), ==, c->len[0] - 54);
    g_assert_cmphex(f[20], ==, 17);
    g_assert_cmphex(f[21], ==, TTL);
    g_assert_cmphex(ernic_rig_be32(f + 22), ==, 0xfd000000);
    g_assert_cmphex(ernic_rig_be32(f + 34), ==, 0x100);
    g_assert_cmphex(ernic_rig_be32(f + 50), ==, 0x101);
    g_assert_cmphex(lduw_be_p(f + 56), ==, 4791);
    g_assert_cmphex(f[62], ==, 0x04);
    g_assert_cmphex(ernic_rig_le32(f + c->len[0] - 4), ==,
                    qernic_icrc(f, c->len[0]));
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, p, 300);
    g_free(p);
    g_free(c);
    ernic_rig_stop(r);
}

/* Two QPs of one device talk without the wire (own MAC). */
static void test_loopback(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 70000, 5);
    size_t len;
    uint8_t f[FRAME_MAX];

    ernic_rig_setup_global(r, 0, 0);
    /* QP2 and QP3 of device 0; QP3's queues live at device 0 + 32 MiB. */
    ernic_rig_setup_qp(r, 0, QPN_A, 0, QPN_B, PSN_A, PSN_B, &cfg, DEV_BASE(0));
    ernic_rig_setup_qp(r, 0, QPN_B, 0, QPN_A, PSN_B, PSN_A, &cfg,
                       DEV_BASE(0) + 0x2000000);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 70000, 0, 0, 0, NULL);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 70000, MR_VA, RKEY, 0, NULL);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF + 0x100000, 70000, MR_VA, RKEY, 0,
                   NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, DEV_BASE(0) + 0x2000000 + RQ_OFF, p, 70000);
    ernic_rig_assert_mem(r, DEV_BASE(0) + MR_OFF, p, 70000);
    ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF + 0x100000, p, 70000);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * Loss, duplication and reordering: exactly once, in order.
 */

typedef struct Chaos {
    uint32_t rng;               /* fixed seed: the same run every time */
    unsigned dropped, duped, held;
} Chaos;

/* 10% loss, 5% duplication, 5% reordering, in both directions. */
static ErnicRigVerdict chaos_filter(void *opaque, int from, const uint8_t *f,
                                    size_t len)
{
    Chaos *c = opaque;
    uint32_t x;

    c->rng = c->rng * 1103515245u + 12345u;
    x = (c->rng >> 16) % 100;
    if (x < 10) {
        c->dropped++;
        return ERNIC_RIG_DROP;
    }
    if (x < 15) {
        c->duped++;
        return ERNIC_RIG_DUP;
    }
    if (x < 20) {
        c->held++;
        return ERNIC_RIG_HOLD;
    }
    return ERNIC_RIG_FWD;
}

/*
 * The seed is fixed, so that every run is the same; ERNIC_LOSSY_SEED
 * runs another (docs/engine.md, "Tests": a sweep of seeds).
 */
static uint32_t lossy_seed(void)
{
    const char *s = g_getenv("ERNIC_LOSSY_SEED");
    unsigned long seed = 20261121;

    if (s) {
        g_assert_cmpint(qemu_strtoul(s, NULL, 0, &seed), ==, 0);
    }
    return seed;
}

static void test_lossy(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    Chaos ch = { .rng = lossy_seed() };
    ErnicRigWire w = { .filter = chaos_filter, .opaque = &ch, .step_ns =
        100000 };
    uint8_t *p[12], *big, *rdp;
    int k, nsend = 12;

    cfg.timeout = 10;           /* 4.2 ms */
    cfg.rq_depth = 16;
    cfg.rqbuf = 0x10000;
    ernic_rig_connect_pair(r, &cfg);
    for (k = 0; k < nsend; k++) {
        p[k] = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF + k * 0x10000,
                                     1000 + k * 997, k + 1);
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, k, ERNIC_OP_SEND,
                       DEV_BASE(0) + SRC_OFF + k * 0x10000, 1000 + k * 997, 0,
                       0, 0, NULL);
    }
    big = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF + 0x100000, 262144,
                                99);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 100, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF + 0x100000, 262144, MR_VA, RKEY, 0,
                   NULL);
    rdp = ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF + 0x100000, 200000, 7);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 101, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF + 0xc0000, 200000, MR_VA + 0x100000,
                   RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));

    g_assert_cmpuint(ch.dropped, >, 10);
    g_assert_cmpuint(ch.duped, >, 5);
    g_assert_cmpuint(ch.held, >, 5);
    /* First the completions: data is only owed for a WQE that succeeded. */
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    for (k = 0; k < nsend; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 0, k), ==, (ERNIC_OP_SEND << 16) | k);
    }
    g_assert_cmphex(ernic_rig_cqe(r, 0, nsend), ==, (ERNIC_OP_WRITE << 16) |
                    100);
    g_assert_cmphex(ernic_rig_cqe(r, 0, nsend + 1), ==, (ERNIC_OP_READ << 16) |
                    101);
    /* Every SEND once, in order, intact. */
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, nsend);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATMSN), ==, nsend + 2);
    for (k = 0; k < nsend; k++) {
        ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF + k * 0x10000, p[k],
                             1000 + k * 997);
        g_free(p[k]);
    }
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, big, 262144);
    ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF + 0xc0000, rdp, 200000);
    /* Recovery was by retransmission, and it is visible. */
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_RETRYCNTSTS), >, 0);
    g_free(big);
    g_free(rdp);
    ernic_rig_stop(r);
}

/*
 * Retransmission limits, stepping the virtual clock.
 */

/*
 * The ICRC of every frame, against the test's own bitwise CRC-32: the
 * device folds 64 bytes at a time where the host has PCLMULQDQ
 * (ernic_crc32.c), and its head and tail bytes the table way, so that
 * payload lengths of every remainder modulo 64 are sent, from 0 to two
 * packets. Both devices check the ICRC of what they receive too.
 */
typedef struct IcrcCheck {
    unsigned frames, bad;
} IcrcCheck;

static ErnicRigVerdict icrc_filter(void *opaque, int from, const uint8_t *f,
                                   size_t len)
{
    IcrcCheck *c = opaque;

    c->frames++;
    c->bad += ernic_rig_le32(f + len - 4) != qernic_icrc(f, len);
    return ERNIC_RIG_FWD;
}

static void test_icrc_lengths(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    IcrcCheck ic = { 0 };
    ErnicRigWire w = { .filter = icrc_filter, .opaque = &ic };
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 2100, 17);
    uint32_t n = 0, len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    /* 7 is prime to 64: every remainder, within 0 .. 2 KiB + 50. */
    for (len = 0; len <= 2100; len += 7, n++) {
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, n, ERNIC_OP_WRITE,
                       DEV_BASE(0) + SRC_OFF, len, MR_VA + len, RKEY, 0, NULL);
        if (n % 16 == 15) {
            ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
        }
    }
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    for (uint32_t k = 0; k < n; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 0, k) >> 24, ==,
                        0);     /* no ERRFLAG */
    }
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + 2100, p, 2100);
    g_assert_cmpuint(ic.frames, >, n);
    g_assert_cmpuint(ic.bad, ==, 0);
    /* Nothing dropped for a bad ICRC: no retry was needed. */
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_RETRYCNTSTS), ==, 0);
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * Each path of the device's CRC-32 that this host has (ernic_crc32.c:
 * zlib's tables, PCLMULQDQ, VPCLMULQDQ with AVX-512), against zlib, for
 * every length of a 4096-byte-MTU frame and more at 8 alignments, each
 * continued from a CRC as the ICRC is over a frame's pieces.
 */
static void test_crc32_paths(void)
{
    enum { MAX_LEN = 4300, ALIGNS = 64 };
    g_autofree uint8_t *buf = g_malloc(MAX_LEN + ALIGNS);
    int top = ernic_crc32_path();

    for (size_t i = 0; i < MAX_LEN + ALIGNS; i++) {
        buf[i] = i * 151 + (i >> 8);
    }
    for (int path = 0; path <= top; path++) {
        ernic_crc_max = path;
        for (size_t off = 0; off < ALIGNS; off += 9) {
            for (size_t len = 0; len <= MAX_LEN; len++) {
                uint32_t seed = len * 0x9e3779b9u;

                g_assert_cmphex(ernic_crc32(seed, buf + off, len), ==,
                                crc32(seed, buf + off, len));
            }
        }
    }
    ernic_crc_max = ERNIC_CRC_VPCLMUL;
    g_test_message("CRC-32 paths checked: %d (0 tables, 1 PCLMULQDQ, "
                   "2 VPCLMULQDQ)", top + 1);
}

/*
 * The transmit window (docs/engine.md, choice 12): request packets sent
 * beyond the newest PSN the peer acknowledged. It starts at 64, grows
 * on ACKs up to 512, and halves on every loss that makes the QP retry.
 */
#define WINDOW_LOSSES   3

/* @a - @b in the 24-bit PSN space, as the device's ernic_psn_diff(). */
static int32_t psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

typedef struct Window {
    uint32_t acked;             /* PSN after the newest acknowledged */
    uint32_t next;              /* PSN after the newest ever sent */
    unsigned fresh;             /* packets sent for the first time */
    unsigned lost;              /* ... of which the link lost */
    unsigned phase;             /* retries begun so far */
    int32_t peak[WINDOW_LOSSES + 1];    /* most packets beyond acked */
} Window;

static ErnicRigVerdict window_filter(void *opaque, int from, const uint8_t *f,
                                     size_t len)
{
    Window *w = opaque;
    uint32_t psn = ernic_rig_be32(f + F_BTH + 8) & 0xffffff;
    int32_t out = psn_diff(psn + 1, w->acked);

    if (from == 1) {
        /* An ACK covers its PSN; a NAK's PSN is the one expected. */
        bool nak = f[F_BTH] == 0x11 && (f[F_BTH + 12] & 0x60);

        w->acked = nak ? psn : psn + 1;
        return ERNIC_RIG_FWD;
    }
    if (psn != w->next) {
        /* Sent before: a retry, after the loss of the newest packet. */
        w->phase = w->lost;
    }
    w->peak[w->phase] = MAX(w->peak[w->phase], out);
    if (psn != w->next) {
        return ERNIC_RIG_FWD;
    }
    w->next = (psn + 1) & 0xffffff;
    /*
     * Lose the 250th, 500th and 750th packet of the 1024, or the first
     * after them once the retry of the last loss has begun: a window
     * grown beyond 250 would otherwise lose two in one round trip.
     */
    if (++w->fresh >= 250 * (w->lost + 1) && w->phase == w->lost &&
        w->lost < WINDOW_LOSSES) {
        w->lost++;
        return ERNIC_RIG_DROP;
    }
    return ERNIC_RIG_FWD;
}

static void test_window(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    Window win = { .acked = PSN_A, .next = PSN_A };
    ErnicRigWire w = { .filter = window_filter, .opaque = &win };
    uint8_t *p;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MR_LEN / 2, 41);
    /* 1024 packets of 1 KiB: far more than the first window. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, MR_LEN / 2, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0) & 0xffffff, ==, ERNIC_OP_WRITE <<
                    16);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, MR_LEN / 2);
    g_test_message("window peaks: %d, after losses %d %d %d", win.peak[0],
                   win.peak[1], win.peak[2], win.peak[3]);
    g_assert_cmpuint(win.phase, ==, WINDOW_LOSSES);
    /* Grown beyond its start on ACKs, never beyond 512. */
    g_assert_cmpint(win.peak[0], >, 64);
    g_assert_cmpint(win.peak[0], <=, 512);
    /*
     * Each loss halved it: at most 256, 128, 64 after the three, and a
     * few packets more for the ACKs of each retry (one packet each).
     */
    for (int k = 1; k <= WINDOW_LOSSES; k++) {
        g_assert_cmpint(win.peak[k], >, 0);
        g_assert_cmpint(win.peak[k], <=, (512 >> k) + 8);
    }
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * A retry sends whole WQEs again (PG332 p.10), packets the peer already
 * has included: they count in the window too. Each asks for an ACK, and
 * each ACK that moves nothing frees one (docs/engine.md, choice 12).
 * Before, a loss near the end of a long WRITE sent everything from its
 * first packet at once, far beyond the window; over -netdev dgram the
 * socket dropped the same packets on every retry until the retry count
 * was spent (FATAL 0x06, /ernic/netdev/dgram, 1 run in 7 on a busy host).
 */
typedef struct Resend {
    uint32_t acked;             /* PSN after the newest acknowledged */
    uint32_t next;              /* PSN after the newest ever sent */
    unsigned fresh;             /* packets sent for the first time */
    int resent;                 /* packets sent again the peer had */
    int answers;                /* ACKs that moved nothing */
    int peak;                   /* most of the resent ones unanswered */
    bool lose_answers;          /* the link loses the ACKs that move nothing */
} Resend;

static ErnicRigVerdict resend_filter(void *opaque, int from, const uint8_t *f,
                                     size_t len)
{
    Resend *s = opaque;
    uint32_t psn = ernic_rig_be32(f + F_BTH + 8) & 0xffffff;

    if (from == 1) {
        if (f[F_BTH] == 0x11 && !(f[F_BTH + 12] & 0x60)) {
            if (((psn + 1) & 0xffffff) == s->acked) {
                if (s->lose_answers) {
                    return ERNIC_RIG_DROP;
                }
                s->answers++;
            }
            s->acked = (psn + 1) & 0xffffff;
        }
        return ERNIC_RIG_FWD;
    }
    if (psn_diff(psn, s->acked) < 0) {
        s->resent++;
        s->peak = MAX(s->peak, s->resent - s->answers);
        return ERNIC_RIG_FWD;
    }
    if (psn != s->next) {
        return ERNIC_RIG_FWD;
    }
    s->next = (psn + 1) & 0xffffff;
    /* Lose the 1000th packet of the 1024: most are acknowledged by then. */
    return ++s->fresh == 1000 ? ERNIC_RIG_DROP : ERNIC_RIG_FWD;
}

/* A 1 MiB WRITE whose 1000th packet is lost, through @s. */
static void resend_write(ErnicRig *r, Resend *s)
{
    ErnicRigWire w = { .filter = resend_filter, .opaque = s };
    uint8_t *p;

    s->acked = s->next = PSN_A;
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MR_LEN / 2, 43);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, MR_LEN / 2, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERNIC_OP_WRITE <<
                    16);   /* no error */
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, MR_LEN / 2);
    g_test_message("resent %d, answered %d, at most %d unanswered",
                   s->resent, s->answers, s->peak);
    g_free(p);
}

static void test_resend_window(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    Resend s = { 0 };

    resend_write(r, &s);
    /* The retry went back to the first packet... */
    g_assert_cmpint(s.resent, >=, 488);
    /*
     * ...within the window: halved by the loss to at most 256, and one
     * more for each ACK that moves STATRESPSNi past it since.
     */
    g_assert_cmpint(s.peak, >, 0);
    g_assert_cmpint(s.peak, <=, 256 + 8);
    ernic_rig_stop(r);
}

/*
 * The ACKs of the resent packets are all lost: each retransmit period
 * then moves the window past the unanswered ones, and the retry goes on
 * without spending the retry count. Before, the window stopped the retry
 * at the same place every time until the QP went FATAL 0x06.
 */
static void test_resend_unanswered(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    Resend s = { .lose_answers = true };

    resend_write(r, &s);
    g_assert_cmpint(s.resent, >=, 488);
    g_assert_cmpint(s.answers, ==, 0);
    /* One retry, for the NAK of the lost packet; the periods are none. */
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_RETRYCNTSTS), ==, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * Progress through a long READ starts the retry count again (IBTA
 * C9-142), even after an ACK that covers the whole READ: a responder
 * answering a duplicate request after the READ ACKs up to the READ's
 * last PSN, while responses the requester lost are still owed. Then
 * nine more responses are lost one at a time, more than the retry count
 * of 7: each costs a re-ask, and the responses between them are
 * progress. Before, that ACK moved STATRESPSNi past the READ, its
 * responses stopped counting as progress, and the eighth re-ask ended
 * the QP (FATAL 0x06): about one run in 125 of /ernic/rc/lossy.
 */
#define RP_READ_PKTS    200
#define RP_LOSSES       10

typedef struct ReadProgress {
    bool acked;                 /* the test has sent the ACK */
    uint32_t expect;            /* the response PSN the requester takes */
    unsigned since;             /* responses it took since the last loss */
    unsigned lost;
} ReadProgress;

static ErnicRigVerdict read_progress_filter(void *opaque, int from,
                                            const uint8_t *f, size_t len)
{
    ReadProgress *p = opaque;
    uint8_t op = f[F_BTH];
    uint32_t psn = ernic_rig_be32(f + F_BTH + 8) & 0xffffff;

    /* READ responses (First, Middle, Last) the requester would take. */
    if (from != 1 || op < 0x0d || op > 0x0f || psn != p->expect ||
        p->lost == RP_LOSSES) {
        return ERNIC_RIG_FWD;
    }
    /* Lose the 4th, then after the ACK one after every ten taken. */
    if ((!p->lost && psn == PSN_A + 3) || (p->acked && p->since >= 10)) {
        p->lost++;
        p->since = 0;
        return ERNIC_RIG_DROP;
    }
    p->expect++;
    p->since++;
    return ERNIC_RIG_FWD;
}

static void test_read_progress(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ReadProgress rp = { .expect = PSN_A };
    ErnicRigWire w = { .filter = read_progress_filter, .opaque = &rp };
    uint8_t *rdp, f[FRAME_MAX], aeth[4];
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    rdp = ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF + 0x100000,
                                RP_READ_PKTS * 1024, 6);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF, RP_READ_PKTS * 1024, MR_VA + 0x100000,
                   RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, rp.lost == 1);
    /* An ACK of the READ's last PSN, with its 3rd response still owed. */
    stl_be_p(aeth, 0x1f000001);
    len = ernic_rig_respond(r, f, 0x11, PSN_A + RP_READ_PKTS - 1, aeth, 4, 0);
    ernic_rig_wire_write(r->d[0].fd, f, len);
    rp.acked = true;
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpuint(rp.lost, ==, RP_LOSSES);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, (ERNIC_OP_READ << 16) | 2);
    ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF, rdp, RP_READ_PKTS * 1024);
    g_free(rdp);
    ernic_rig_stop(r);
}

/*
 * The retransmit period restarts on each READ response, lazily
 * (docs/engine.md, Timers): the re-ask comes no sooner than one period
 * after the last response and no later than 17/16 of one. Responses 1-2
 * arrive at once, 3-4 half a period later, 5-8 are lost.
 */
typedef struct ReadTimer {
    int reqs;                   /* READ requests from A */
    int resp;                   /* responses from B */
    uint8_t held[2][FRAME_MAX];
    size_t held_len[2];
} ReadTimer;

static ErnicRigVerdict read_timer_filter(void *opaque, int from,
                                         const uint8_t *f, size_t len)
{
    ReadTimer *t = opaque;
    int n;

    if (from == 0) {
        return t->reqs++ ? ERNIC_RIG_DROP : ERNIC_RIG_FWD;
    }
    n = t->resp++;
    if (n >= 2 && n < 4) {
        memcpy(t->held[n - 2], f, len);
        t->held_len[n - 2] = len;
    }
    return n < 2 ? ERNIC_RIG_FWD : ERNIC_RIG_DROP;
}

static void test_read_timer(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    ReadTimer t = { 0 };
    ErnicRigWire w = { .filter = read_timer_filter, .opaque = &t };
    const int64_t period = 4096LL << 12;
    int64_t last;

    cfg.timeout = 12;           /* 16.8 ms */
    ernic_rig_connect_pair(r, &cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF, 8 * 1024, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, t.resp == 8);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATRESPSN) ==
                   PSN_A + 2);
    qtest_clock_step(r->qts, period / 2);
    for (int i = 0; i < 2; i++) {
        ernic_rig_wire_write(r->d[0].fd, t.held[i], t.held_len[i]);
    }
    ERNIC_RIG_PUMP(r, &w, ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATRESPSN) ==
                   PSN_A + 4);
    last = qtest_clock_step(r->qts, 1);
    qtest_clock_step(r->qts, period - 1000);
    for (int i = 0; i < 20; i++) {
        ernic_rig_pump_once(r, &w);
    }
    g_assert_cmpint(t.reqs, ==, 1);
    qtest_clock_set(r->qts, last + period + period / 16 + 1000);
    ERNIC_RIG_PUMP(r, &w, t.reqs == 2);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

static void test_retry_exhausted(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    Capture *c = g_new0(Capture, 1);
    ErnicRigWire w = { .filter = capture_filter, .opaque = c, .step_ns = 1000 };
    int k;

    c->drop = true;
    cfg.timeout = 12;           /* 4.096 us << 12 = 16.8 ms */
    cfg.retry = 2;
    ernic_rig_connect_pair(r, &cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 7, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 100, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, c->n == 1);
    /* Nothing happens before the timeout... */
    for (k = 0; k < 16; k++) {
        qtest_clock_step(r->qts, 1000000);
        ernic_rig_pump_once(r, &w);
    }
    g_assert_cmpint(c->n, ==, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 0);
    /* ...then two retries, each a copy of the original... */
    qtest_clock_step(r->qts, 1000000);
    ERNIC_RIG_PUMP(r, &w, c->n == 2);
    g_assert_cmpmem(c->f[1], c->len[1], c->f[0], c->len[0]);
    g_assert_cmphex((ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) >> 24) & 7, ==,
                    1);
    qtest_clock_step(r->qts, 17000000);
    ERNIC_RIG_PUMP(r, &w, c->n == 3);
    /* ...and when the count is spent, FATAL (code 0x06, PG332 Table 2-4). */
    qtest_clock_step(r->qts, 17000000);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmpint(c->n, ==, 3);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_RESPONSE_HANDLER);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_IPKTERRQWPTR), ==, 1);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_INTSTS) & ERNIC_INT_FATAL, ==,
                    ERNIC_INT_FATAL);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, (1u << 24) |
                    (ERNIC_OP_SEND << 16) | 7);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_RETRYCNTSTS), ==, 2);
    /* A FATAL QP sends nothing more; new WQEs complete in error. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 8, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 100, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpint(c->n, ==, 3);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, (1u << 24) |
                    (ERNIC_OP_SEND << 16) | 8);
    g_free(c);
    ernic_rig_stop(r);
}

/* RQ full: RNR NAK; the requester waits the RNR time and sends again. */
static void test_rnr(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    ErnicRigWire w = { .step_ns = 1000 };
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 64, 1);

    cfg.rq_depth = 2;           /* holds one buffer */
    cfg.rnr_timer = 14;         /* 1.28 ms */
    cfg.rnr_retry = 2;
    cfg.rqbuf = 4096;
    ernic_rig_connect_pair(r, &cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 64, 0, 0, 0, NULL);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 64, 0, 0, 0, NULL);
    /*
     * B answers the second SEND with an RNR NAK once it has it; the relay
     * may hand B the two SENDs in two turns, and then the ACK reaches A
     * before the RNR NAK is generated: wait for A to have the NAK too.
     */
    ERNIC_RIG_PUMP(r, &w, ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD) == 1 &&
                   (ernic_rig_rd(r, 1, ERNIC_OUTRNRPKTSTS) >> 16) == 1 &&
                   (ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_NAK_SYND_MASK));
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_OUTRNRPKTSTS) & 0xff, ==, QPN_B);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INTSTS) &
                    ERNIC_INT_RNR_NAK_GENERATED, ==,
                    ERNIC_INT_RNR_NAK_GENERATED);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_RQ_OVFL, ==, ERNIC_STATQP_RQ_OVFL);
    g_assert_cmphex((ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) >> 16) & 0x7f, ==,
                    0x20 | 14);
    /* Software frees the buffer; after the RNR time the SEND lands. */
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, 1);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, (ERNIC_OP_SEND << 16) | 2);

    /* Never freed again: two RNR retries, then FATAL code 0x09. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 64, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_OUTRNRPKTSTS) >> 16, ==, 4);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_RNR_COUNTER);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 2), ==, (1u << 24) |
                    (ERNIC_OP_SEND << 16) | 3);
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * A full window waits for an ACK under the retransmit timer. A SEND sent
 * behind a READ is answered with an RNR NAK that arrives late, after a
 * retry has halved the window so that the SEND no longer fits behind the
 * READ, whose responses are all lost. The RNR NAK stopped the retransmit
 * timer, the SEND could not be sent when its wait ended, and nothing was
 * left to start the timer again: the QP sat idle for good, with no
 * FATAL (found by the 10 % wire-fault soak, docs/fuzzing.md).
 */
typedef struct LateRnr {
    int fd0;                    /* the requester's end of the wire */
    uint8_t rnr[FRAME_MAX];     /* the RNR NAK, held back */
    size_t rnr_len;
    int reads;                  /* READ requests sent */
    bool injected;
} LateRnr;

static ErnicRigVerdict late_rnr_filter(void *opaque, int from, const uint8_t *f,
                                       size_t len)
{
    LateRnr *s = opaque;
    uint8_t op = f[F_BTH];

    if (from == 1 && op >= 0x0d && op <= 0x10) {
        return ERNIC_RIG_DROP;            /* every READ response is lost */
    }
    if (from == 1 && op == 0x11 && (f[F_BTH + 12] & 0x60) == 0x20 &&
        !s->rnr_len) {
        memcpy(s->rnr, f, len);
        s->rnr_len = len;
        return ERNIC_RIG_DROP;
    }
    if (from == 0 && op == 0x0c && ++s->reads == 2 && s->rnr_len) {
        /* The READ asked again: the window has been halved. */
        ernic_rig_wire_write(s->fd0, s->rnr, s->rnr_len);
        s->injected = true;
    }
    return ERNIC_RIG_FWD;
}

static void test_late_rnr(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    LateRnr s = { .fd0 = r->d[0].fd };
    ErnicRigWire w = { .filter = late_rnr_filter, .opaque = &s, .step_ns =
        100000 };
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 64, 5);

    cfg.rq_depth = 2;           /* holds one buffer, never given back */
    cfg.rqbuf = 4096;
    cfg.timeout = 10;           /* 4.2 ms */
    cfg.rnr_retry = 2;
    ernic_rig_connect_pair(r, &cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 64, 0, 0, 0, NULL);
    /* 40 PSNs: within the first window of 64, beyond a halved one. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF + 0x100000, 40 * 1024, MR_VA, RKEY, 0,
                   NULL);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 64, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_true(s.injected);
    /* The READ's retries ran out: FATAL 0x06, not an idle QP. */
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_RESPONSE_HANDLER);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, (ERNIC_OP_SEND << 16) | 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, (1u << 24) |
                    (ERNIC_OP_READ << 16) | 2);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 2), ==, (1u << 24) |
                    (ERNIC_OP_SEND << 16) | 3);
    g_free(p);
    ernic_rig_stop(r);
}

/*
 * Injected frames: PG332 Table 2-3 checks, each with its reaction.
 */

static size_t inject_req(ErnicRig *r, uint8_t *f, uint8_t opcode, uint32_t psn,
                         const uint8_t *ext, size_t ext_len, size_t paylen)
{
    uint8_t pay[4096];

    ernic_rig_fill(pay, paylen, psn);
    return ernic_rig_frame(f, &r->d[0], &r->d[1], opcode, QPN_B, psn, true, ext,
                           ext_len, pay, paylen);
}

/* Send @f to device 1 and check that it is dropped with @synd. */
static void expect_drop(ErnicRig *r, uint8_t *f, size_t len, uint32_t synd)
{
    uint32_t wptr = ernic_rig_rd(r, 1, ERNIC_ERRBUFWPTR);
    uint32_t drops = ernic_rig_rd(r, 1, ERNIC_INALLDRPPKTCNT) >> 16;
    uint8_t ans[FRAME_MAX];
    size_t alen;

    ernic_rig_wire_write(r->d[1].fd, f, len);
    for (int k = 0; k < 1000 && ernic_rig_rd(r, 1, ERNIC_ERRBUFWPTR) ==
         wptr; k++) {
        qtest_clock_step(r->qts, 100);
    }
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_ERRBUFWPTR), ==, wptr + 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INALLDRPPKTCNT) >> 16, ==,
                    drops + 1);
    /* Error buffer entry: syndrome, then the frame (PG332 p.16). */
    g_assert_cmphex(qtest_readl(r->qts, DEV_BASE(1) + ERRBUF_OFF +
                                (wptr % 16) * 256) & synd, ==, synd);
    g_assert_cmphex(qtest_readl(r->qts, DEV_BASE(1) + ERRBUF_OFF +
                                (wptr % 16) * 256 + 4), ==, ernic_rig_le32(f));
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, ans, &alen));
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INTSTS) &
                    ERNIC_INT_PKT_VALIDATION_ERR, ==,
                    ERNIC_INT_PKT_VALIDATION_ERR);
}

static void reicrc(uint8_t *f, size_t len)
{
    stl_le_p(f + len - 4, qernic_icrc(f, len));
}

static void test_validation_drops(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
#define FRESH() (len = inject_req(r, f, 0x04, PSN_A, NULL, 0, 32))
    FRESH();
    f[len - 1] ^= 1;
    expect_drop(r, f, len, ERNIC_SYND_ICRC);                    /* bit 30 */
    FRESH();
    f[5] ^= 0x40;
    expect_drop(r, f, len, ERNIC_SYND_DST_MAC);                 /* bit 0 */
    FRESH();
    f[F_IP + 19] ^= 1;
    stw_be_p(f + F_IP + 10, 0);
    stw_be_p(f + F_IP + 10, qernic_ip_csum(f + F_IP, 20));
    reicrc(f, len);
    expect_drop(r, f, len, ERNIC_SYND_DST_IP);                  /* bit 8 */
    FRESH();
    f[F_IP + 10] ^= 0x55;
    expect_drop(r, f, len, ERNIC_SYND_IPV4_CSUM);               /* bit 9 */
    FRESH();
    stw_be_p(f + F_IP + 6, 0);
    stw_be_p(f + F_IP + 10, 0);
    stw_be_p(f + F_IP + 10, qernic_ip_csum(f + F_IP, 20));
    reicrc(f, len);
    expect_drop(r, f, len, ERNIC_SYND_IPV4_FLAGS);              /* bit 5 */
    FRESH();
    stw_be_p(f + F_UDP + 4, lduw_be_p(f + F_UDP + 4) - 4);
    expect_drop(r, f, len, ERNIC_SYND_UDP_LEN);                 /* bit 12 */
    FRESH();
    f[F_BTH + 1] |= 1;
    reicrc(f, len);
    expect_drop(r, f, len, ERNIC_SYND_BTH_TVER);                /* bit 13 */
    FRESH();
    stl_be_p(f + F_BTH + 4, 200);
    reicrc(f, len);
    expect_drop(r, f, len, ERNIC_SYND_QP_UNSUPPORTED);          /* bit 14 */
    FRESH();
    stl_be_p(f + F_BTH + 4, 9);
    reicrc(f, len);
    expect_drop(r, f, len, ERNIC_SYND_QP_NOT_ENABLED);          /* bit 15 */
    FRESH();
    f[11] ^= 1;
    expect_drop(r, f, len, ERNIC_SYND_SRC_MAC);                 /* bit 28 */
    FRESH();
    f[F_IP + 15] ^= 2;
    stw_be_p(f + F_IP + 10, 0);
    stw_be_p(f + F_IP + 10, qernic_ip_csum(f + F_IP, 20));
    reicrc(f, len);
    expect_drop(r, f, len, ERNIC_SYND_SRC_IP);                  /* bit 27 */
#undef FRESH
    /* Nothing reached the RQ, the PSN did not move. */
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_LSTRQREQ) & 0xffffff, ==,
                    (PSN_A - 1) & 0xffffff);
    /* And a good one still goes through. */
    len = inject_req(r, f, 0x04, PSN_A, NULL, 0, 32);
    len = ernic_rig_exchange(r, f, len, f);
    g_assert_cmphex(f[F_BTH], ==, 0x11);
    g_assert_cmphex(ernic_rig_be32(f + F_EXT) >> 24, ==, 0x1f);     /* ACK */
    g_assert_cmphex(ernic_rig_be32(f + F_BTH + 8) & 0xffffff, ==, PSN_A);
    g_assert_cmphex(ernic_rig_le32(f + len - 4), ==, qernic_icrc(f, len));
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_stop(r);
}

/* PSN sequence error: one NAK; duplicates are re-ACKed, not re-executed. */
static void test_validation_sequence(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX], reth[16];
    size_t len, alen;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    len = inject_req(r, f, 0x04, PSN_A + 2, NULL, 0, 8);
    alen = ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x11);
    g_assert_cmphex(a[F_EXT], ==, 0x60);                      /* NAK seq */
    g_assert_cmphex(ernic_rig_be32(a + F_BTH + 8) & 0xffffff, ==, PSN_A);
    g_assert_cmphex(ernic_rig_le32(a + alen - 4), ==, qernic_icrc(a, alen));
    /* A second out-of-sequence packet gets no second NAK (Table 2-3). */
    ernic_rig_wire_write(r->d[1].fd, f, len);
    qtest_clock_step(r->qts, 100000);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, a, &alen));

    len = inject_req(r, f, 0x04, PSN_A, NULL, 0, 8);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    /* The same PSN again: a duplicate, ACKed, not delivered twice. */
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_EXT], ==, 0x1f);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_ININVDUPCNT) >> 16, ==, 1);

    /* A duplicate READ is executed again: same response twice. */
    ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF, 100, 3);
    stq_be_p(reth, MR_VA);
    stl_be_p(reth + 8, RKEY);
    stl_be_p(reth + 12, 100);
    len = inject_req(r, f, 0x0c, PSN_A + 1, reth, 16, 0);
    alen = ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x10);                      /* RESP ONLY */
    len = ernic_rig_exchange(r, f, len, f);
    g_assert_cmpmem(f, len, a, alen);
    ernic_rig_stop(r);
}

/*
 * Responses leave in the order of their requests (IBTA 9.5): the ACK of a
 * SEND that follows a READ comes after every response of that READ. Both
 * requests arrive in one read of the socket, before the READ's responses
 * are sent; an ACK sent at once would acknowledge the READ's PSNs, which
 * a requester takes for lost responses (an SRP target re-asked the same
 * READs without end: docs/engine.md, "Response order").
 */
static void test_response_order(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[2 * FRAME_MAX + 8], a[FRAME_MAX], ext[16];
    static const uint8_t want[] = { 0x0d, 0x0e, 0x0e, 0x0f, 0x11 };
    size_t len, len2, alen;
    uint32_t be;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF, 4096, 5);
    len = inject_req(r, f + 4, 0x0c, PSN_A,
                     ernic_rig_reth(ext, MR_VA, RKEY, 4096), 16, 0);
    be = cpu_to_be32(len);
    memcpy(f, &be, 4);
    len2 = inject_req(r, f + 8 + len, 0x04, PSN_A + 4, NULL, 0, 8);
    be = cpu_to_be32(len2);
    memcpy(f + 4 + len, &be, 4);
    g_assert_cmpint(send(r->d[1].fd, f, len + len2 + 8, 0), ==,
                    len + len2 + 8);
    for (size_t k = 0; k < ARRAY_SIZE(want); k++) {
        alen = ernic_rig_wire_wait(r, 1, a);
        g_assert_cmpuint(alen, >, F_BTH + 12);
        g_assert_cmphex(a[F_BTH], ==, want[k]);
        g_assert_cmphex(ernic_rig_be32(a + F_BTH + 8) & 0xffffff, ==,
                        PSN_A + k);
    }
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_stop(r);
}

/*
 * QP1: whole MAD frames out, MADs with their headers in.
 */

static void setup_gsi(ErnicRig *r, int i)
{
    uint64_t b = DEV_BASE(i);

    ernic_rig_wr(r, i, ERNIC_QP_OFFSET(1) + ERNIC_SQBA, b + GSI_SQ_OFF);
    ernic_rig_wr(r, i, ERNIC_QP_OFFSET(1) + ERNIC_CQBA, b + GSI_CQ_OFF);
    ernic_rig_wr(r, i, ERNIC_QP_OFFSET(1) + ERNIC_RQBA, b + GSI_RQ_OFF);
    ernic_rig_wr(r, i, ERNIC_QP_OFFSET(1) + ERNIC_QDEPTH, (64 << 16) | 16);
    ernic_rig_wr(r, i, ERNIC_QP_OFFSET(1) + ERNIC_QPCONF, ERNIC_QPCONF_QP_EN |
                 ERNIC_QPCONF_HW_HS_DIS | ERNIC_QPCONF_CQE_WR_EN |
                 (2 << ERNIC_QPCONF_RQBUFSZ_SHIFT));
}

static void test_gsi_mad(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    Capture *c = g_new0(Capture, 1);
    ErnicRigWire w = { .filter = capture_filter, .opaque = c };
    uint8_t deth[8], mad[256], f[FRAME_MAX], buf[512];
    uint8_t wqe[ERNIC_WQE_SIZE] = { 0 };
    size_t len;

    ernic_rig_setup_global(r, 0, 0);
    ernic_rig_setup_global(r, 1, 0);
    setup_gsi(r, 0);
    setup_gsi(r, 1);
    stl_be_p(deth, 0x80010000);
    stl_be_p(deth + 4, 1);
    ernic_rig_fill(mad, sizeof(mad), 42);
    /* Software builds the frame; its ICRC bytes are the device's job. */
    len = ernic_rig_frame(f, &r->d[0], &r->d[1], 0x64, 1, 0x77, false, deth, 8,
                          mad, sizeof(mad));
    qtest_memwrite(r->qts, DEV_BASE(0) + SRC_OFF, f, len - 4);
    stq_le_p(&wqe[ERNIC_WQE_LADDR], DEV_BASE(0) + SRC_OFF);
    stl_le_p(&wqe[ERNIC_WQE_LENGTH], len - 4);
    wqe[ERNIC_WQE_OPCODE] = ERNIC_OP_SEND;
    qtest_memwrite(r->qts, DEV_BASE(0) + GSI_SQ_OFF, wqe, sizeof(wqe));
    ernic_rig_wr(r, 0, ERNIC_QP_OFFSET(1) + ERNIC_SQPI, 1);
    ERNIC_RIG_PUMP(r, &w,
                   ernic_rig_rd(r, 1, ERNIC_QP_OFFSET(1) + ERNIC_STATRQPIDB) ==
                   1);
    g_assert_cmpint(c->n, ==, 1);
    g_assert_cmpmem(c->f[0], c->len[0], f, len);      /* ICRC appended */
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_QP_OFFSET(1) + ERNIC_CQHEAD), ==,
                    1);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_OUTAMPKTCNT) >> 16, ==, 1);
    /* RQ buffer: 20 zero bytes, IPv4 header, UDP, BTH, DETH, MAD. */
    qtest_memread(r->qts, DEV_BASE(1) + GSI_RQ_OFF, buf, 40 + 8 + 12 + 8 +
                  256);
    for (int k = 0; k < 20; k++) {
        g_assert_cmphex(buf[k], ==, 0);
    }
    g_assert_cmpmem(buf + 20, 20 + 8 + 12 + 8 + 256, f + F_IP,
                    20 + 8 + 12 + 8 + 256);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INTSTS) & ERNIC_INT_MAD_RECEIVED,
                    ==, ERNIC_INT_MAD_RECEIVED);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_INAMPKTCNT) >> 16, ==, 1);
    g_free(c);
    ernic_rig_stop(r);
}

/*
 * Ethernet path: non-RoCE frames through BAR4 rings.
 */

static void ewr(ErnicRig *r, int i, uint32_t off, uint32_t v)
{
    qpci_io_writel(r->d[i].e.pdev, r->d[i].e.eth, off, v);
}

static uint32_t erd(ErnicRig *r, int i, uint32_t off)
{
    return qpci_io_readl(r->d[i].e.pdev, r->d[i].e.eth, off);
}

static void test_eth_path(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint64_t b = DEV_BASE(0);
    uint8_t arp[60], f[FRAME_MAX], desc[16] = { 0 };
    size_t len;
    int k;

    g_assert_cmphex(erd(r, 0, ERNIC_ETH_ID), ==, ERNIC_ETH_ID_VALUE);
    ernic_rig_setup_global(r, 0, 0);
    ewr(r, 0, ERNIC_ETH_TXBA, b + ETH_TX_OFF);
    ewr(r, 0, ERNIC_ETH_TXSZ, 8);
    ewr(r, 0, ERNIC_ETH_RXBA, b + ETH_RX_OFF);
    ewr(r, 0, ERNIC_ETH_RXSZ, 8);
    ewr(r, 0, ERNIC_ETH_INTEN, ERNIC_ETH_INT_TX | ERNIC_ETH_INT_RX);
    ewr(r, 0, ERNIC_ETH_CTRL, ERNIC_ETH_CTRL_TX_EN | ERNIC_ETH_CTRL_RX_EN);

    /* Transmit: a broadcast ARP request goes out as is. */
    ernic_rig_fill(arp, sizeof(arp), 8);
    memset(arp, 0xff, 6);
    memcpy(arp + 6, r->d[0].e.mac, 6);
    stw_be_p(arp + 12, 0x0806);
    qtest_memwrite(r->qts, b + ETH_BUF_OFF, arp, sizeof(arp));
    stq_le_p(desc, b + ETH_BUF_OFF);
    stw_le_p(desc + 8, sizeof(arp));
    qtest_memwrite(r->qts, b + ETH_TX_OFF, desc, 16);
    ewr(r, 0, ERNIC_ETH_TXPI, 1);
    for (k = 0; k < 1000 && !ernic_rig_wire_read(r->d[0].fd, f, &len); k++) {
        qtest_clock_step(r->qts, 1000);
    }
    g_assert_cmpmem(f, len, arp, sizeof(arp));
    g_assert_cmphex(erd(r, 0, ERNIC_ETH_TXCI), ==, 1);
    g_assert_cmphex(qtest_readw(r->qts, b + ETH_TX_OFF + 10), ==,
                    ERNIC_ETH_DESC_DONE);
    g_assert_cmphex(erd(r, 0, ERNIC_ETH_INTSTS), ==, ERNIC_ETH_INT_TX);

    /* Receive: no buffer posted, dropped and counted... */
    memcpy(arp, r->d[0].e.mac, 6);
    ernic_rig_wire_write(r->d[0].fd, arp, sizeof(arp));
    for (k = 0; k < 1000 && !erd(r, 0, ERNIC_ETH_RXDROPCNT); k++) {
        qtest_clock_step(r->qts, 1000);
    }
    g_assert_cmphex(erd(r, 0, ERNIC_ETH_RXDROPCNT), ==, 1);
    /* ...then with two buffers posted it lands in slot 0. */
    for (k = 0; k < 2; k++) {
        stq_le_p(desc, b + ETH_BUF_OFF + 0x1000 * (k + 1));
        stw_le_p(desc + 8, 2048);
        qtest_memwrite(r->qts, b + ETH_RX_OFF + 16 * k, desc, 16);
    }
    ewr(r, 0, ERNIC_ETH_RXPI, 2);
    ernic_rig_wire_write(r->d[0].fd, arp, sizeof(arp));
    for (k = 0; k < 1000 && erd(r, 0, ERNIC_ETH_RXCI) != 1; k++) {
        qtest_clock_step(r->qts, 1000);
    }
    g_assert_cmphex(erd(r, 0, ERNIC_ETH_RXCI), ==, 1);
    g_assert_cmphex(qtest_readw(r->qts, b + ETH_RX_OFF + 8), ==, sizeof(arp));
    g_assert_cmphex(qtest_readw(r->qts, b + ETH_RX_OFF + 10), ==,
                    ERNIC_ETH_DESC_DONE);
    ernic_rig_assert_mem(r, b + ETH_BUF_OFF + 0x1000, arp, sizeof(arp));
    g_assert_cmphex(erd(r, 0, ERNIC_ETH_INTSTS), ==,
                    ERNIC_ETH_INT_TX | ERNIC_ETH_INT_RX);
    /* A frame for another MAC is not ours. */
    arp[0] ^= 2;
    ernic_rig_wire_write(r->d[0].fd, arp, sizeof(arp));
    qtest_clock_step(r->qts, 100000);
    g_assert_cmphex(erd(r, 0, ERNIC_ETH_RXCI), ==, 1);
    g_assert_cmphex(erd(r, 0, ERNIC_ETH_RXPKTCNT), ==, 1);
    ernic_rig_stop(r);
}

/*
 * Two QEMU processes on real QEMU netdevs: stream (TCP) and dgram (UDP),
 * both on 127.0.0.1. Loss on dgram, if any, is recovered by RC.
 */
static void run_two_procs(const char *nd0, const char *nd1)
{
    ErnicRig *r = ernic_rig_start_procs(nd0, nd1);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    ErnicRigWire w = { .step_ns = 100000 };
    uint8_t *s, *wr_, *rd_;

    /*
     * 33.5 ms: frames cross the host in real time while the pump steps
     * virtual time; with 4.2 ms a loaded host (CI, two tests at once)
     * let all 7 retries of the 256 KiB WRITE expire before the peer had
     * read them, about once in 60 runs (whole-WQE retransmission over
     * -netdev dgram, docs/engine.md choice 12).
     */
    cfg.timeout = 13;
    ernic_rig_connect_pair(r, &cfg);
    s = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 65536, 1);
    wr_ = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF + 0x100000, 262144, 2);
    rd_ = ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF + 0x100000, 100000, 3);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 65536, 0, 0, 0, NULL);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF + 0x100000, 262144, MR_VA, RKEY, 0,
                   NULL);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF + 0x80000, 100000, MR_VA + 0x100000,
                   RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    /* First the completions: data is only owed for a WQE that succeeded. */
    for (int k = 0; k < 3; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 0, k) >> 24, ==,
                        0);     /* no ERRFLAG */
    }
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, s, 65536);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, wr_, 262144);
    ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF + 0x80000, rd_, 100000);
    g_free(s);
    g_free(wr_);
    g_free(rd_);
    ernic_rig_stop(r);
}

static int free_port(int type)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, type, 0), port;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    g_assert_cmpint(bind(fd, (struct sockaddr *)&a, sizeof(a)), ==, 0);
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&a, &len), ==, 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static void test_netdev_stream(void)
{
    int p = free_port(SOCK_STREAM);
    g_autofree char *srv = g_strdup_printf(
        "stream,server=on,addr.type=inet,addr.host=127.0.0.1,addr.port=%d",
        p);
    g_autofree char *cli = g_strdup_printf(
        "stream,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=%d",
        p);

    run_two_procs(srv, cli);
}

static void test_netdev_dgram(void)
{
    int p0 = free_port(SOCK_DGRAM), p1 = free_port(SOCK_DGRAM);
    g_autofree char *a = g_strdup_printf(
        "dgram,local.type=inet,local.host=127.0.0.1,local.port=%d,"
        "remote.type=inet,remote.host=127.0.0.1,remote.port=%d", p0, p1);
    g_autofree char *b = g_strdup_printf(
        "dgram,local.type=inet,local.host=127.0.0.1,local.port=%d,"
        "remote.type=inet,remote.host=127.0.0.1,remote.port=%d", p1, p0);

    run_two_procs(a, b);
}

/*
 * The Ethernet path asks @target for its MAC over the netdev @netdev; the
 * ARP reply must come back through the RX ring. @host_cmd, if any, runs
 * once QEMU is up (to configure the host side).
 */
static void arp_probe(const char *netdev, uint32_t me, uint32_t target,
                      const char *host_cmd)
{
    ErnicRig *r = g_new0(ErnicRig, 1);
    uint64_t b = DEV_BASE(0);
    uint8_t arp[42] = { 0 }, desc[16] = { 0 }, reply[64];
    int k;

    r->qts = qtest_initf(RIG_MACHINE " -netdev %s,id=n0 "
                         "-device ernic,addr=04.0,netdev=n0,"
                         "mac=52:54:00:e3:32:00", netdev);
    ernic_rig_attach(r, 0, r->qts, qpci_new_pc(r->qts, NULL));
    r->d[0].fd = -1;
    r->d[1].fd = -1;
    if (host_cmd) {
        g_assert_cmpint(system(host_cmd), ==, 0);
    }
    ewr(r, 0, ERNIC_ETH_TXBA, b + ETH_TX_OFF);
    ewr(r, 0, ERNIC_ETH_TXSZ, 8);
    ewr(r, 0, ERNIC_ETH_RXBA, b + ETH_RX_OFF);
    ewr(r, 0, ERNIC_ETH_RXSZ, 8);
    stq_le_p(desc, b + ETH_BUF_OFF + 0x1000);
    stw_le_p(desc + 8, 2048);
    qtest_memwrite(r->qts, b + ETH_RX_OFF, desc, 16);
    ewr(r, 0, ERNIC_ETH_RXPI, 1);
    ewr(r, 0, ERNIC_ETH_CTRL, ERNIC_ETH_CTRL_TX_EN | ERNIC_ETH_CTRL_RX_EN);

    memset(arp, 0xff, 6);
    memcpy(arp + 6, r->d[0].e.mac, 6);
    stw_be_p(arp + 12, 0x0806);
    stw_be_p(arp + 14, 1);
    stw_be_p(arp + 16, 0x0800);
    arp[18] = 6;
    arp[19] = 4;
    stw_be_p(arp + 20, 1);                                  /* who-has */
    memcpy(arp + 22, r->d[0].e.mac, 6);
    stl_be_p(arp + 28, me);
    stl_be_p(arp + 38, target);
    qtest_memwrite(r->qts, b + ETH_BUF_OFF, arp, sizeof(arp));
    stq_le_p(desc, b + ETH_BUF_OFF);
    stw_le_p(desc + 8, sizeof(arp));
    qtest_memwrite(r->qts, b + ETH_TX_OFF, desc, 16);
    ewr(r, 0, ERNIC_ETH_TXPI, 1);
    for (k = 0; k < 2000 && erd(r, 0, ERNIC_ETH_RXCI) != 1; k++) {
        qtest_clock_step(r->qts, 100000);
        g_usleep(1000);         /* a tap's host side answers in real time */
    }
    g_assert_cmphex(erd(r, 0, ERNIC_ETH_RXCI), ==, 1);
    qtest_memread(r->qts, b + ETH_BUF_OFF + 0x1000, reply, sizeof(reply));
    g_assert_cmpmem(reply, 6, r->d[0].e.mac, 6);
    g_assert_cmphex(lduw_be_p(reply + 12), ==, 0x0806);
    g_assert_cmphex(lduw_be_p(reply + 20), ==, 2);          /* is-at */
    g_assert_cmphex(ernic_rig_be32(reply + 28), ==, target);
    g_free(r->d[0].e.pdev);
    qpci_free_pc(r->d[0].bus);
    qtest_quit(r->qts);
    g_free(r);
}

/* user (slirp): its gateway 10.0.2.2 answers. */
static void test_netdev_user(void)
{
    arp_probe("user", 0x0a00020f, 0x0a000202, NULL);
}

/* Whether this process may make a network namespace of its own. */
static bool can_unshare_net(void)
{
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        _exit(unshare(CLONE_NEWNET) == 0 ? 0 : 1);
    }
    return pid > 0 && waitpid(pid, &status, 0) == pid &&
           WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * tap: the host kernel answers for an address given to the tap. The tap,
 * its address and QEMU live in a child process with a network namespace
 * of its own, so the host's network configuration is never touched.
 */
static void test_netdev_tap(void)
{
    g_autofree char *name = g_strdup_printf("ernict%d", getpid() % 100000);
    g_autofree char *nd = g_strdup_printf("tap,ifname=%s,script=no,"
                                          "downscript=no", name);
    g_autofree char *up = g_strdup_printf("ip addr add 10.231.0.1/24 dev %s "
                                          "&& ip link set %s up", name, name);

    if (g_test_subprocess()) {
        g_assert_cmpint(unshare(CLONE_NEWNET), ==, 0);
        arp_probe(nd, 0x0ae70002, 0x0ae70001, up);
        return;
    }
    if (geteuid() != 0 || access("/dev/net/tun", R_OK | W_OK) ||
        !can_unshare_net() || system("command -v ip >/dev/null 2>&1")) {
        g_test_skip("tap needs root, /dev/net/tun, a network namespace "
                    "and ip(8)");
        return;
    }
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
    g_test_trap_assert_passed();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/ernic/rc/wire-format", test_wire_format);
    qtest_add_func("/ernic/rc/ipv6", test_ipv6);
    qtest_add_func("/ernic/rc/send", test_send);
    qtest_add_func("/ernic/rc/write", test_write);
    qtest_add_func("/ernic/rc/doorbell-inline", test_doorbell_inline);
    qtest_add_func("/ernic/rc/read", test_read);
    qtest_add_func("/ernic/rc/bidirectional", test_bidirectional);
    qtest_add_func("/ernic/rc/loopback", test_loopback);
    qtest_add_func("/ernic/rc/lossy", test_lossy);
    qtest_add_func("/ernic/rc/read-progress", test_read_progress);
    qtest_add_func("/ernic/rc/read-timer", test_read_timer);
    qtest_add_func("/ernic/rc/window", test_window);
    qtest_add_func("/ernic/rc/resend-window", test_resend_window);
    qtest_add_func("/ernic/rc/resend-unanswered", test_resend_unanswered);
    qtest_add_func("/ernic/rc/icrc-lengths", test_icrc_lengths);
    qtest_add_func("/ernic/rc/crc32-paths", test_crc32_paths);
    qtest_add_func("/ernic/rc/retry-exhausted", test_retry_exhausted);
    qtest_add_func("/ernic/rc/rnr", test_rnr);
    qtest_add_func("/ernic/rc/late-rnr", test_late_rnr);
    qtest_add_func("/ernic/rc/response-order", test_response_order);
    qtest_add_func("/ernic/validation/drops", test_validation_drops);
    qtest_add_func("/ernic/validation/sequence", test_validation_sequence);
    qtest_add_func("/ernic/gsi/mad", test_gsi_mad);
    qtest_add_func("/ernic/eth/path", test_eth_path);
    qtest_add_func("/ernic/netdev/stream", test_netdev_stream);
    qtest_add_func("/ernic/netdev/dgram", test_netdev_dgram);
    qtest_add_func("/ernic/netdev/user", test_netdev_user);
    qtest_add_func("/ernic/netdev/tap", test_netdev_tap);

    return g_test_run();
}
