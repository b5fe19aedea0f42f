/*
 * QTest: ERNIC-X XRC (docs/extension.md, "XRC"). QP A of device 0 is an
 * XRC initiator; QP B of device 1 an XRC target of domain XRCD, taking
 * its messages into device 1's XRC SRQ SRQ_N. The frames of both devices
 * are checked against IBTA's XRC layout (transport bits 101, XRCETH
 * after the BTH of each request); frames the test builds play an
 * initiator naming SRQs it may not.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "ernic-rig.h"

#define XRCD            7
#define SRQ_N           5
#define SRQ_OTHER       6               /* an XRC SRQ of another domain */
#define SRQ_PLAIN       7               /* an SRQ that is not XRC */
#define SRQ_DEPTH       8
#define SRQ_RING(n)     (DEV_BASE(1) + MR_OFF + 0x100000 + (n) * 0x1000)
#define SRQ_BUF(i)      (DEV_BASE(1) + MR_OFF + 0x110000 + (i) * 0x2000)
#define SRQ_REG(n, reg) (ERNIC_EXT_SRQ_OFFSET(n) + (reg))
#define FEAT            (ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE | \
                         ERNIC_EXT_F_SRQ | ERNIC_EXT_F_XRC | \
                         ERNIC_EXT_F_ATOMIC)
#define OPC_XRC         0xa0
#define OPC_SEND_ONLY   0x04
#define OPC_SEND_FIRST  0x00
#define OPC_ACK         0x11
#define IMM             0x5566aa77u

/* SRQ @n of device 1: XRC of @xrcd when @xrc, PD @pd, WQEs 0..@post-1. */
static void srq_setup_pd(ErnicRig *r, uint32_t n, bool xrc, uint32_t xrcd,
                         uint32_t post, uint32_t pd)
{
    for (uint32_t i = 0; i < post; i++) {
        uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

        stq_le_p(&w[ERNIC_SGE_ADDR], SRQ_BUF(i));
        stl_le_p(&w[ERNIC_SGE_LEN], 0x2000);
        qtest_memwrite(r->d[1].e.qts, SRQ_RING(n) + i * ERNIC_RWQE_SIZE, w,
                       sizeof(w));
    }
    ernic_rig_wr(r, 1, SRQ_REG(n, ERNIC_SRQBA), (uint32_t)SRQ_RING(n));
    ernic_rig_wr(r, 1, SRQ_REG(n, ERNIC_SRQBAMSB), SRQ_RING(n) >> 32);
    ernic_rig_wr(r, 1, SRQ_REG(n, ERNIC_SRQDEPTH), SRQ_DEPTH);
    ernic_rig_wr(r, 1, SRQ_REG(n, ERNIC_SRQPD), pd);
    ernic_rig_wr(r, 1, SRQ_REG(n, ERNIC_SRQPI), post);
    ernic_rig_wr(r, 1, SRQ_REG(n, ERNIC_SRQCONF), ERNIC_SRQCONF_EN |
                 (xrc ? ERNIC_SRQCONF_XRC | xrcd << 8 : 0));
}

static void srq_setup(ErnicRig *r, uint32_t n, bool xrc, uint32_t xrcd,
                      uint32_t post)
{
    srq_setup_pd(r, n, xrc, xrcd, post, PD_NUM);
}

/*
 * QP A an initiator naming SRQ_N, QP B a target of XRCD with a PD of its
 * own that is not the SRQ's (keys are checked against the SRQ's), and
 * the three SRQs of device 1.
 */
static ErnicRig *xrc_pair(uint32_t feat)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t xb = ERNIC_EXT_QP_OFFSET(QPN_B);

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, feat);
    }
    ernic_rig_wr(r, 0, ERNIC_EXT_QP_OFFSET(QPN_A) + ERNIC_EXTQPCONF,
                 ERNIC_EXTQPCONF_XRC_INI);
    ernic_rig_wr(r, 1, xb + ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_RXMETA |
                 ERNIC_EXTQPCONF_RXWQE | ERNIC_EXTQPCONF_XRC_TGT |
                 ERNIC_EXTQPCONF_ATOMIC);
    ernic_rig_wr(r, 1, xb + ERNIC_XRCD, XRCD);
    g_assert_cmphex(ernic_rig_rd(r, 1, xb + ERNIC_XRCD), ==, XRCD);
    srq_setup(r, SRQ_N, true, XRCD, 4);
    srq_setup(r, SRQ_OTHER, true, XRCD + 1, 4);
    srq_setup(r, SRQ_PLAIN, false, 0, 4);
    r->d[0].xrc_srqn = SRQ_N;
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_PD, PD_NUM + 1);
    return r;
}

typedef struct XrcWire {
    uint8_t req[FRAME_MAX];     /* device 0's last request */
    uint8_t resp[FRAME_MAX];    /* device 1's last answer */
    size_t req_len, resp_len;
    int nreq;
} XrcWire;

static ErnicRigVerdict xrc_filter(void *opaque, int from, const uint8_t *f,
                                  size_t len)
{
    XrcWire *x = opaque;

    g_assert_cmphex(ernic_rig_le32(f + len - 4), ==, qernic_icrc(f, len));
    /* Every packet of an XRC QP is of transport class 101. */
    g_assert_cmphex(f[F_BTH] & 0xe0, ==, OPC_XRC);
    if (from == 0) {
        memcpy(x->req, f, len);
        x->req_len = len;
        x->nreq++;
    } else {
        memcpy(x->resp, f, len);
        x->resp_len = len;
    }
    return ERNIC_RIG_FWD;
}

/* Device 0's frames, whatever their class. */
static ErnicRigVerdict capture_filter(void *opaque, int from,
                                                const uint8_t *f, size_t len)
{
    XrcWire *x = opaque;

    if (from == 0) {
        memcpy(x->req, f, len);
        x->req_len = len;
        x->nreq++;
    }
    return ERNIC_RIG_FWD;
}

/* WQE @i of SRQ_N once written back: its metadata and the target QP. */
static void assert_wb(ErnicRig *r, uint32_t i, uint32_t len, uint8_t opcode,
                      uint8_t flags, uint32_t data)
{
    uint8_t m[ERNIC_RXMETA_SIZE];

    qtest_memread(r->d[1].e.qts, SRQ_RING(SRQ_N) + i * ERNIC_RWQE_SIZE, m,
                  sizeof(m));
    g_assert_cmpuint(ldl_le_p(&m[ERNIC_RXMETA_LEN]), ==, len);
    g_assert_cmphex(m[ERNIC_RXMETA_OPCODE], ==, opcode);
    g_assert_cmphex(m[ERNIC_RXMETA_FLAGS], ==, flags);
    g_assert_cmpuint(lduw_le_p(&m[ERNIC_RXMETA_SRQ_WQE]), ==, i);
    g_assert_cmphex(ldl_le_p(&m[ERNIC_RXMETA_DATA]), ==, data);
    g_assert_cmphex((uint32_t)ldl_le_p(&m[ERNIC_XRC_WB_QPN]), ==,
                    QPN_B | ERNIC_XRC_WB_DONE);
}

/*
 * SENDs from the initiator: a SEND ONLY (0xA4) and a SEND with Immediate
 * of three packets (0xA0, 0xA1, 0xA3), each request with the XRCETH
 * naming SRQ_N, answered with XRC ACKs (0xB1); the data in the SRQ's
 * WQEs 0 and 1, each written back with its length, RC opcode, flags and
 * the target QP; then a WRITE with Immediate, which takes WQE 2.
 */
static void test_send(void)
{
    ErnicRig *r = xrc_pair(FEAT);
    XrcWire x = { 0 };
    ErnicRigWire w = { .filter = xrc_filter, .opaque = &x };
    g_autofree uint8_t *p0 = NULL, *p1 = NULL;

    p0 = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 100, 1);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 100, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(x.req[F_BTH], ==, OPC_XRC | OPC_SEND_ONLY);
    g_assert_cmphex(ernic_rig_be32(x.req + F_BTH + 4), ==, QPN_B);
    g_assert_cmphex(ernic_rig_be32(x.req + F_EXT), ==, SRQ_N);
    g_assert_cmpuint(x.req_len, ==, F_EXT + 4 + 100 + 4);
    g_assert_cmphex(x.resp[F_BTH], ==, OPC_XRC | OPC_ACK);
    g_assert_cmphex(ernic_rig_be32(x.resp + F_BTH + 4), ==, QPN_A);
    ernic_rig_assert_mem(r, SRQ_BUF(0), p0, 100);
    assert_wb(r, 0, 100, OPC_SEND_ONLY, ERNIC_RXMETA_F_SRQ, 0);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 1));

    p1 = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 2500, 2);
    x.nreq = 0;
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_SEND_IMM,
                   DEV_BASE(0) + SRC_OFF, 2500, 0, 0, IMM, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpint(x.nreq, ==, 3);
    g_assert_cmphex(x.req[F_BTH], ==, OPC_XRC | 0x03);
    g_assert_cmphex(ernic_rig_be32(x.req + F_EXT), ==, SRQ_N);
    g_assert_cmphex(ernic_rig_be32(x.req + F_EXT + 4), ==, IMM);
    ernic_rig_assert_mem(r, SRQ_BUF(1), p1, 2500);
    assert_wb(r, 1, 2500, 0x03, ERNIC_RXMETA_F_SRQ | ERNIC_RXMETA_F_IMM,
              IMM);

    /* A WRITE with Immediate (0xAB) takes WQE 2 unread, its data not. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3, ERNIC_OP_WRITE_IMM,
                   DEV_BASE(0) + SRC_OFF, 100, MR_VA + 0x80, RKEY, IMM + 1,
                   NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(x.req[F_BTH], ==, OPC_XRC | 0x0b);
    g_assert_cmphex(ernic_rig_be32(x.req + F_EXT), ==, SRQ_N);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + 0x80, p1, 100);
    assert_wb(r, 2, 100, 0x0b, ERNIC_RXMETA_F_SRQ | ERNIC_RXMETA_F_IMM,
              IMM + 1);
    g_assert_cmpuint(ernic_rig_rd(r, 1, SRQ_REG(SRQ_N, ERNIC_SRQCI)), ==, 3);
    ernic_rig_stop(r);
}

/*
 * WRITE (0xAA, XRCETH then RETH), READ (0xAC) answered by XRC READ
 * responses (0xB0), and FetchAdd (0xB4) answered by an XRC ATOMIC
 * ACKNOWLEDGE (0xB2), through RKEY, whose region is of the SRQ's PD and
 * not the target QP's: the keys are checked against the SRQ's.
 */
static void test_rdma(void)
{
    ErnicRig *r = xrc_pair(FEAT);
    XrcWire x = { 0 };
    ErnicRigWire w = { .filter = xrc_filter, .opaque = &x };
    g_autofree uint8_t *p = NULL;
    uint8_t sd[16] = { 0 };

    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 300, 3);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 300, MR_VA + 0x40, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(x.req[F_BTH], ==, OPC_XRC | 0x0a);
    g_assert_cmphex(ernic_rig_be32(x.req + F_EXT), ==, SRQ_N);
    g_assert_cmphex(ldq_be_p(x.req + F_EXT + 4), ==, MR_VA + 0x40);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + 0x40, p, 300);

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF + 0x1000, 300, MR_VA + 0x40, RKEY,
                   0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(x.req[F_BTH], ==, OPC_XRC | 0x0c);
    g_assert_cmphex(x.resp[F_BTH], ==, OPC_XRC | 0x10);
    ernic_rig_assert_mem(r, DEV_BASE(0) + SRC_OFF + 0x1000, p, 300);

    qtest_writeq(r->d[1].e.qts, DEV_BASE(1) + MR_OFF + 0x800, 40);
    stq_le_p(sd, 2);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3,
                   ERNIC_OP_ATOMIC_FETCH_ADD, DEV_BASE(0) + SRC_OFF, 8,
                   MR_VA + 0x800, RKEY, 0, sd);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(x.req[F_BTH], ==, OPC_XRC | 0x14);
    g_assert_cmphex(ernic_rig_be32(x.req + F_EXT), ==, SRQ_N);
    g_assert_cmphex(x.resp[F_BTH], ==, OPC_XRC | 0x12);
    g_assert_cmphex(qtest_readq(r->d[1].e.qts, DEV_BASE(1) + MR_OFF + 0x800),
                    ==, 42);
    g_assert_cmphex(qtest_readq(r->d[0].e.qts, DEV_BASE(0) + SRC_OFF), ==,
                    40);
    for (int k = 0; k < 3; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 0, k) & ERRFLAG, ==, 0);
    }
    ernic_rig_stop(r);
}

/* A request of the test's own to QP B naming SRQ @n; the answer. */
static size_t request(ErnicRig *r, uint8_t op, uint32_t n, uint8_t *ans)
{
    uint8_t f[FRAME_MAX], ext[4];

    stl_be_p(ext, n);
    return ernic_rig_exchange(r, f, ernic_rig_inject(r, f, op, QPN_B, PSN_A,
                                                     ext, 4, 64), ans);
}

/*
 * A SEND naming an XRC SRQ of another domain, an SRQ that is not XRC,
 * or no SRQ at all (past the 256) is NAK Remote Access Error with FATAL
 * 0x15, and no WQE is taken; an RC SEND (no XRCETH) to the target is an
 * unknown opcode (FATAL 0x04), answered in class 101.
 */
static void test_refused(void)
{
    static const struct {
        uint8_t op;
        uint32_t n;
        uint8_t nak;
        uint16_t code;
    } bad[] = {
        { OPC_XRC | OPC_SEND_ONLY, SRQ_OTHER, ERNIC_NAK_REMOTE_ACCESS,
          ERNIC_FATAL_RKEY },
        { OPC_XRC | OPC_SEND_ONLY, SRQ_PLAIN, ERNIC_NAK_REMOTE_ACCESS,
          ERNIC_FATAL_RKEY },
        { OPC_XRC | OPC_SEND_ONLY, 300, ERNIC_NAK_REMOTE_ACCESS,
          ERNIC_FATAL_RKEY },
        { OPC_SEND_ONLY, SRQ_N, ERNIC_NAK_INVALID_REQ,
          ERNIC_FATAL_UNSUPPORTED_OPCODE },
    };

    for (int k = 0; k < ARRAY_SIZE(bad); k++) {
        ErnicRig *r = xrc_pair(FEAT);
        uint8_t ans[FRAME_MAX];

        g_test_message("opcode 0x%x SRQ %u", bad[k].op, bad[k].n);
        request(r, bad[k].op, bad[k].n, ans);
        g_assert_cmphex(ans[F_BTH], ==, OPC_XRC | OPC_ACK);
        g_assert_cmphex(ans[F_EXT], ==, bad[k].nak);
        g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                        (QPN_B << 16) | bad[k].code);
        for (uint32_t n = SRQ_N; n <= SRQ_PLAIN; n++) {
            g_assert_cmpuint(ernic_rig_rd(r, 1, SRQ_REG(n, ERNIC_SRQCI)), ==,
                             0);
        }
        ernic_rig_stop(r);
    }
}

/* A READ of 64 bytes at MR_VA to QP B at @psn naming SRQ @n; the answer. */
static uint8_t read_req(ErnicRig *r, uint32_t psn, uint32_t n, uint8_t *ans)
{
    uint8_t f[FRAME_MAX], ext[20];

    stl_be_p(ext, n);
    ernic_rig_reth(ext + 4, MR_VA, RKEY, 64);
    ernic_rig_exchange(r, f, ernic_rig_inject(r, f, OPC_XRC | 0x0c, QPN_B,
                                              psn, ext, 20, 0), ans);
    return ans[F_BTH];
}

/*
 * Bytes after the headers of an XRC opcode without payload (a READ
 * request with 4 more) are a length error, as for RC: dropped, logged
 * in the error buffer with PG332 Table 2-3's syndrome, not answered,
 * the QP still usable. Before, an XRC packet was parsed as RC only after
 * those checks, and the READ was answered.
 */
static void test_trailing(void)
{
    ErnicRig *r = xrc_pair(FEAT);
    uint8_t f[FRAME_MAX], ext[20], ans[FRAME_MAX];
    size_t len;

    stl_be_p(ext, SRQ_N);
    ernic_rig_reth(ext + 4, MR_VA, RKEY, 64);
    len = ernic_rig_inject(r, f, OPC_XRC | 0x0c, QPN_B, PSN_A, ext, 20, 4);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_poll_reg(r, 1, ERNIC_ERRBUFWPTR, 0xffff, 1);
    ernic_rig_check_errbuf(r, 1, 1, ERNIC_SYND_PMTU, f);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, ans, &len));
    g_assert_cmphex(read_req(r, PSN_A, SRQ_N, ans), ==, OPC_XRC | 0x10);
    ernic_rig_stop(r);
}

/*
 * A duplicate request to a target has its keys checked against the PD
 * of the SRQ it names, not of the last request's: a READ through SRQ_N
 * (PD_NUM, RKEY's), a SEND through SRQ 4 of the same domain and another
 * PD, then the READ again is answered again. A duplicate naming an SRQ
 * of another domain is dropped, and the QP stays usable.
 */
static void test_duplicate(void)
{
    ErnicRig *r = xrc_pair(FEAT);
    uint8_t ans[FRAME_MAX], f[FRAME_MAX], ext[4], reth[20];
    size_t len;

    srq_setup_pd(r, 4, true, XRCD, 4, PD_NUM + 2);
    g_assert_cmphex(read_req(r, PSN_A, SRQ_N, ans), ==, OPC_XRC | 0x10);
    stl_be_p(ext, 4);
    len = ernic_rig_inject(r, f, OPC_XRC | OPC_SEND_ONLY, QPN_B, PSN_A + 1,
                           ext, 4, 64);
    ernic_rig_exchange(r, f, len, ans);
    g_assert_cmphex(ans[F_EXT], ==, 0x1f);
    g_assert_cmphex(read_req(r, PSN_A, SRQ_N, ans), ==, OPC_XRC | 0x10);
    g_assert_cmphex(ernic_rig_be32(ans + F_BTH + 8) & 0xffffff, ==, PSN_A);

    stl_be_p(reth, SRQ_OTHER);
    ernic_rig_reth(reth + 4, MR_VA, RKEY, 64);
    len = ernic_rig_inject(r, f, OPC_XRC | 0x0c, QPN_B, PSN_A, reth, 20, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    for (int k = 0; k < 20; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, ans, &len));
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * A target that fails holding a WQE (a SEND FIRST, then a SEND ONLY out
 * of sequence: FATAL 0x01) gives it back written back with status 3
 * (flushed) and the bytes received.
 */
static void test_flush(void)
{
    ErnicRig *r = xrc_pair(FEAT);
    uint8_t f[FRAME_MAX], ans[FRAME_MAX], ext[4];
    size_t len;

    stl_be_p(ext, SRQ_N);
    len = ernic_rig_inject(r, f, OPC_XRC | OPC_SEND_FIRST, QPN_B, PSN_A, ext,
                           4, 1024);
    ernic_rig_exchange(r, f, len, ans);
    g_assert_cmphex(ans[F_EXT], ==, 0x1f);
    len = ernic_rig_inject(r, f, OPC_XRC | OPC_SEND_ONLY, QPN_B, PSN_A + 1,
                           ext, 4, 64);
    ernic_rig_exchange(r, f, len, ans);
    g_assert_cmphex(ans[F_EXT], ==, ERNIC_NAK_INVALID_REQ);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_OPCODE_SEQ);
    assert_wb(r, 0, 1024, 0, ERNIC_RXMETA_F_SRQ |
              ERNIC_RXMETA_ST_FLUSH << ERNIC_RXMETA_STATUS_SHIFT, 0);
    ernic_rig_stop(r);
}

/*
 * With EXTCTRL.XRC clear the device is PG332's: an XRC SEND is an
 * unknown opcode (NAK Invalid Request, FATAL 0x04), answered as RC, and
 * no SRQ WQE is taken.
 */
static void test_off(void)
{
    ErnicRig *r = xrc_pair(FEAT & ~ERNIC_EXT_F_XRC);
    uint8_t ans[FRAME_MAX];

    request(r, OPC_XRC | OPC_SEND_ONLY, SRQ_N, ans);
    g_assert_cmphex(ans[F_BTH], ==, OPC_ACK);
    g_assert_cmphex(ans[F_EXT], ==, ERNIC_NAK_INVALID_REQ);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_UNSUPPORTED_OPCODE);
    g_assert_cmpuint(ernic_rig_rd(r, 1, SRQ_REG(SRQ_N, ERNIC_SRQCI)), ==, 0);
    ernic_rig_stop(r);
}

/*
 * A UC QP is never XRC, whatever EXTQPCONFi[10] says: its SEND is a UC
 * SEND ONLY (0x24) with the payload right after the BTH, no XRCETH.
 */
static void test_not_uc(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    XrcWire x = { 0 };
    ErnicRigWire w = { .filter = capture_filter, .opaque = &x };
    g_autofree uint8_t *p = NULL;

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, ERNIC_EXT_F_UC | ERNIC_EXT_F_XRC);
        ernic_rig_wr(r, i, ERNIC_EXT_QP_OFFSET(i ? QPN_B : QPN_A) +
                     ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_UC |
                     ERNIC_EXTQPCONF_XRC_INI);
    }
    r->d[0].xrc_srqn = SRQ_N;
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 64, 4);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 64, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, x.nreq > 0);
    g_assert_cmphex(x.req[F_BTH], ==, 0x24);
    g_assert_cmpuint(x.req_len, ==, F_EXT + 64 + 4);
    g_assert_cmpmem(x.req + F_EXT, 64, p, 64);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/xrc/send", test_send);
    qtest_add_func("/ernic/xrc/rdma", test_rdma);
    qtest_add_func("/ernic/xrc/refused", test_refused);
    qtest_add_func("/ernic/xrc/duplicate", test_duplicate);
    qtest_add_func("/ernic/xrc/trailing", test_trailing);
    qtest_add_func("/ernic/xrc/flush", test_flush);
    qtest_add_func("/ernic/xrc/off", test_off);
    qtest_add_func("/ernic/xrc/not-uc", test_not_uc);
    return g_test_run();
}
