/*
 * QTest: ERNIC-X memory placement (docs/extension.md, "Placement"):
 * RDMA FLUSH and RDMA ATOMIC WRITE of IBTA 1.5 annex A19. QP A of
 * device 0 and QP B of device 1 are connected RC QPs with PG332 WQEs.
 * ATOMIC WRITE goes to device 1's PG332 region; FLUSH to an extended
 * region of device 1 with MRACC's FLUSH bit. The frames of both devices
 * are checked against the layouts rxe and mlx5 send; frames the test
 * builds play a requester that repeats itself, or a hostile one.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "ernic-rig.h"

#define OPC_READ_RESP_ONLY  0x10
#define OPC_ACK             0x11
#define OPC_FLUSH           0x1c
#define OPC_ATOMIC_WRITE    0x1d
#define OPC_WRITE_ONLY      0x0a
#define TARGET(n)           (DEV_BASE(1) + MR_OFF + 0x200 + (n) * 8)
#define TARGET_VA(n)        (MR_VA + 0x200 + (n) * 8)
#define FETH(plt, sel)      ((plt) | (sel) << ERNIC_FETH_SEL_SHIFT)
#define XMR_LEN             0x10000

/* QP A and QP B connected, with @feat in EXTCTRL and @conf EXTQPCONF. */
static ErnicRig *place_pair(uint32_t feat, uint32_t conf)
{
    ErnicRig *r = ernic_rig_start(NULL);

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, feat);
        ernic_rig_wr(r, i, ERNIC_EXT_QP_OFFSET(i ? QPN_B : QPN_A) +
                     ERNIC_EXTQPCONF, conf);
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    return r;
}

/*
 * For FLUSH: device 1's region RKEY as an extended entry of XMR_LEN
 * bytes at MR_VA, with @acc (and its bus address: MRACC_PHYS).
 */
static ErnicRig *flush_pair(uint32_t conf, uint32_t acc)
{
    ErnicRig *r = place_pair(ERNIC_EXT_F_MR | ERNIC_EXT_F_PLACE, conf);

    g_assert_cmpuint(ernic_rig_xmr(r, 1, MR_INDEX,
                                   MR_KEY | ERNIC_MR_VALID << 8, PD_NUM,
                                   ERNIC_MRACC_PHYS | acc, MR_VA, XMR_LEN,
                                   DEV_BASE(1) + MR_OFF, 0), ==, 0);
    return r;
}

static void post_awrite(ErnicRig *r, uint16_t wrid, uint32_t len,
                        uint64_t va, uint64_t val)
{
    uint8_t sd[16] = { 0 };

    stq_le_p(sd, val);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid,
                   ERNIC_OP_ATOMIC_WRITE, 0, len, va, RKEY, 0, sd);
}

static void post_flush(ErnicRig *r, uint16_t wrid, uint64_t va,
                       uint32_t len, uint32_t feth)
{
    uint8_t sd[16] = { 0 };

    stl_le_p(sd, len);
    stl_le_p(sd + 4, feth);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid, ERNIC_OP_FLUSH,
                   0, 0, va, RKEY, 0, sd);
}

typedef struct PlaceWire {
    uint8_t req[FRAME_MAX];     /* device 0's last FLUSH or ATOMIC WRITE */
    uint8_t resp[FRAME_MAX];    /* device 1's last READ Response Only */
    size_t req_len, resp_len;
    int nreq, nresp;
} PlaceWire;

static ErnicRigVerdict place_filter(void *opaque, int from,
                                    const uint8_t *f, size_t len)
{
    PlaceWire *p = opaque;

    g_assert_cmphex(ernic_rig_le32(f + len - 4), ==, qernic_icrc(f, len));
    if (from == 0 && (f[F_BTH] == OPC_FLUSH ||
                      f[F_BTH] == OPC_ATOMIC_WRITE)) {
        memcpy(p->req, f, len);
        p->req_len = len;
        p->nreq++;
    } else if (from == 1 && f[F_BTH] == OPC_READ_RESP_ONLY) {
        memcpy(p->resp, f, len);
        p->resp_len = len;
        p->nresp++;
    }
    return ERNIC_RIG_FWD;
}

static uint64_t rd64(ErnicRig *r, int i, uint64_t addr)
{
    return qtest_readq(r->d[i].e.qts, addr);
}

/* BTH of a request to QP B at @psn with AckReq; RETH @va, RKEY, @len. */
static void check_req(const PlaceWire *p, uint8_t op, uint32_t psn,
                      const uint8_t *reth, uint64_t va, uint32_t len)
{
    g_assert_cmphex(p->req[F_BTH], ==, op);
    g_assert_cmphex(ernic_rig_be32(p->req + F_BTH + 4), ==, QPN_B);
    g_assert_cmphex(ernic_rig_be32(p->req + F_BTH + 8), ==,
                    0x80000000u | psn);
    g_assert_cmphex(ldq_be_p(reth), ==, va);
    g_assert_cmphex(ernic_rig_be32(reth + 8), ==, RKEY);
    g_assert_cmphex(ernic_rig_be32(reth + 12), ==, len);
}

/* The answer: READ Response Only at @psn, AETH ACK with @msn, no data. */
static void check_resp(const PlaceWire *p, uint32_t psn, uint32_t msn)
{
    g_assert_cmpuint(p->resp_len, ==, F_EXT + 4 + 4);
    g_assert_cmphex(p->resp[F_BTH], ==, OPC_READ_RESP_ONLY);
    g_assert_cmphex(ernic_rig_be32(p->resp + F_BTH + 4), ==, QPN_A);
    g_assert_cmphex(ernic_rig_be32(p->resp + F_BTH + 8) & 0xffffff, ==, psn);
    g_assert_cmphex(ernic_rig_be32(p->resp + F_EXT), ==, 0x1f000000u | msn);
}

/*
 * ATOMIC WRITE: BTH, RETH (length 8) and the 8 bytes as the WQE's SDATA
 * holds them; answered with an empty READ Response Only; the target
 * holds the bytes and the CQE names the WQE.
 */
static void test_atomic_write(void)
{
    ErnicRig *r = place_pair(ERNIC_EXT_F_PLACE, 0);
    PlaceWire p = { 0 };
    ErnicRigWire w = { .filter = place_filter, .opaque = &p };
    static const uint64_t val[] = {
        0x0123456789abcdefull, 0xfedcba9876543210ull, 0,
    };

    qtest_writeq(r->d[1].e.qts, TARGET(0), 0x5555555555555555ull);
    for (int k = 0; k < ARRAY_SIZE(val); k++) {
        post_awrite(r, 0x20 + k, 0, TARGET_VA(0), val[k]);
        ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
        g_assert_cmpuint(p.req_len, ==, F_EXT + 16 + 8 + 4);
        check_req(&p, OPC_ATOMIC_WRITE, (PSN_A + k) & 0xffffff,
                  p.req + F_EXT, TARGET_VA(0), 8);
        g_assert_cmphex(ldq_le_p(p.req + F_EXT + 16), ==, val[k]);
        check_resp(&p, (PSN_A + k) & 0xffffff, k + 1);
        g_assert_cmphex(rd64(r, 1, TARGET(0)), ==, val[k]);
        g_assert_cmphex(ernic_rig_cqe(r, 0, k), ==,
                        CQE(ERNIC_OP_ATOMIC_WRITE, 0x20 + k));
    }
    g_assert_cmpint(p.nreq, ==, 3);
    g_assert_cmpint(p.nresp, ==, 3);
    ernic_rig_stop(r);
}

/*
 * FLUSH after a WRITE: BTH, FETH (before the RETH, as rxe sends it),
 * RETH with the range; answered with an empty READ Response Only. Of a
 * range, then of the whole region (whose RETH range is ignored: here
 * one past the region).
 */
static void test_flush(void)
{
    ErnicRig *r = flush_pair(ERNIC_EXTQPCONF_FLUSH,
                             ERNIC_MRACC_FLUSH | ERNIC_MRACC_REMOTE_WRITE);
    PlaceWire p = { 0 };
    ErnicRigWire w = { .filter = place_filter, .opaque = &p };
    g_autofree uint8_t *pat = NULL;

    pat = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 256, 3);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 256, MR_VA, RKEY, 0, NULL);
    post_flush(r, 2, MR_VA, 256, FETH(ERNIC_FETH_PLT_GLOBAL,
                                      ERNIC_FETH_SEL_RANGE));
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmpuint(p.req_len, ==, F_EXT + 4 + 16 + 4);
    g_assert_cmphex(ernic_rig_be32(p.req + F_EXT), ==, 1);
    check_req(&p, OPC_FLUSH, (PSN_A + 1) & 0xffffff, p.req + F_EXT + 4,
              MR_VA, 256);
    check_resp(&p, (PSN_A + 1) & 0xffffff, 2);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, pat, 256);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, CQE(ERNIC_OP_FLUSH, 2));

    post_flush(r, 3, MR_VA + XMR_LEN, 0x1000000,
               FETH(ERNIC_FETH_PLT_GLOBAL, ERNIC_FETH_SEL_MR));
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_be32(p.req + F_EXT), ==, 0x11);
    check_resp(&p, (PSN_A + 2) & 0xffffff, 3);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 2), ==, CQE(ERNIC_OP_FLUSH, 3));
    g_assert_cmpint(p.nresp, ==, 2);
    ernic_rig_stop(r);
}

/* A request of the test's own to QP B; returns the answer's opcode. */
static uint8_t request(ErnicRig *r, uint8_t op, uint32_t psn, uint64_t va,
                       uint32_t len, uint32_t feth_or_val, uint8_t *ans)
{
    uint8_t f[FRAME_MAX], ext[28];
    size_t n = 0;

    if (op == OPC_FLUSH) {
        stl_be_p(ext, feth_or_val);
        n = 4;
    }
    ernic_rig_reth(ext + n, va, RKEY, len);
    n += 16;
    if (op == OPC_ATOMIC_WRITE) {
        stq_le_p(ext + n, feth_or_val);
        n += 8;
    }
    ernic_rig_exchange(r, f, ernic_rig_inject(r, f, op, QPN_B, psn, ext, n,
                                              0), ans);
    return ans[F_BTH];
}

/*
 * A duplicate ATOMIC WRITE or FLUSH is answered again at its own PSN
 * and never executed again (A19, as atomics in IBTA 9.4.5): the WRITE
 * that came after the ATOMIC WRITE keeps its value.
 */
static void test_duplicate(void)
{
    ErnicRig *r = flush_pair(ERNIC_EXTQPCONF_FLUSH,
                             ERNIC_MRACC_FLUSH | ERNIC_MRACC_REMOTE_WRITE);
    uint8_t ans[FRAME_MAX], f[FRAME_MAX], reth[16];
    size_t len;

    g_assert_cmphex(request(r, OPC_ATOMIC_WRITE, PSN_A, TARGET_VA(1), 8, 7,
                            ans), ==, OPC_READ_RESP_ONLY);
    g_assert_cmphex(rd64(r, 1, TARGET(1)), ==, 7);
    g_assert_cmphex(request(r, OPC_FLUSH, PSN_A + 1, MR_VA, 64,
                            FETH(ERNIC_FETH_PLT_GLOBAL, 0), ans), ==,
                    OPC_READ_RESP_ONLY);
    /* An 8-byte WRITE over the target: 8 bytes of the PSN's pattern. */
    len = ernic_rig_inject(r, f, OPC_WRITE_ONLY, QPN_B, PSN_A + 2,
                           ernic_rig_reth(reth, TARGET_VA(1), RKEY, 8), 16,
                           8);
    ernic_rig_exchange(r, f, len, ans);
    g_assert_cmphex(ans[F_BTH], ==, OPC_ACK);
    g_assert_cmphex(rd64(r, 1, TARGET(1)), !=, 7);

    for (int k = 1; k >= 0; k--) {
        g_assert_cmphex(request(r, k ? OPC_FLUSH : OPC_ATOMIC_WRITE,
                                PSN_A + k, k ? MR_VA : TARGET_VA(1),
                                k ? 64 : 8,
                                k ? FETH(ERNIC_FETH_PLT_GLOBAL, 0) : 7, ans),
                        ==, OPC_READ_RESP_ONLY);
        g_assert_cmphex(ernic_rig_be32(ans + F_BTH + 8) & 0xffffff, ==,
                        (PSN_A + k) & 0xffffff);
    }
    g_assert_cmphex(rd64(r, 1, TARGET(1)), !=, 7);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/* One refused request: its NAK, the FATAL code, the target unchanged. */
static void refuse(uint32_t conf, uint32_t acc, uint8_t op, uint64_t va,
                   uint32_t len, uint32_t feth_or_val, uint8_t nak,
                   uint16_t code)
{
    ErnicRig *r = flush_pair(conf, acc);
    uint8_t ans[FRAME_MAX];

    g_test_message("refused: opcode 0x%x va 0x%" PRIx64 " len %u 0x%x",
                   op, va, len, feth_or_val);
    qtest_writeq(r->d[1].e.qts, TARGET(0), 3);
    g_assert_cmphex(request(r, op, PSN_A, va, len, feth_or_val, ans), ==,
                    OPC_ACK);
    g_assert_cmphex(ans[F_EXT], ==, nak);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | code);
    g_assert_cmphex(rd64(r, 1, TARGET(0)), ==, 3);
    ernic_rig_stop(r);
}

/*
 * FLUSH: a reserved FETH (placement 0, selectivity 2, a reserved bit)
 * is an Invalid Request (0x04); persistence a Remote Access error
 * (0x15), as no region grants it; a QP without FLUSH access takes none
 * (0x04); a region without the FLUSH bit, a range past the region and
 * an unknown key are the key's errors. ATOMIC WRITE: misaligned (0x16)
 * or not 8 bytes (0x12) is Invalid; a region without remote write is
 * a Remote Access error.
 */
static void test_refused(void)
{
    uint32_t qf = ERNIC_EXTQPCONF_FLUSH;
    uint32_t all = ERNIC_MRACC_FLUSH | ERNIC_MRACC_REMOTE_WRITE;
    uint32_t g = ERNIC_FETH_PLT_GLOBAL;

    refuse(qf, all, OPC_FLUSH, MR_VA, 8, FETH(0, 0), ERNIC_NAK_INVALID_REQ,
           ERNIC_FATAL_UNSUPPORTED_OPCODE);
    refuse(qf, all, OPC_FLUSH, MR_VA, 8, FETH(g, 2), ERNIC_NAK_INVALID_REQ,
           ERNIC_FATAL_UNSUPPORTED_OPCODE);
    refuse(qf, all, OPC_FLUSH, MR_VA, 8, FETH(g, 0) | 0x100,
           ERNIC_NAK_INVALID_REQ, ERNIC_FATAL_UNSUPPORTED_OPCODE);
    refuse(qf, all, OPC_FLUSH, MR_VA, 8, FETH(ERNIC_FETH_PLT_PERSISTENT, 0),
           ERNIC_NAK_REMOTE_ACCESS, ERNIC_FATAL_RKEY);
    refuse(0, all, OPC_FLUSH, MR_VA, 8, FETH(g, 0), ERNIC_NAK_INVALID_REQ,
           ERNIC_FATAL_UNSUPPORTED_OPCODE);
    refuse(qf, ERNIC_MRACC_REMOTE_WRITE, OPC_FLUSH, MR_VA, 8, FETH(g, 0),
           ERNIC_NAK_REMOTE_ACCESS, ERNIC_FATAL_RKEY);
    refuse(qf, all, OPC_FLUSH, MR_VA + XMR_LEN - 4, 8, FETH(g, 0),
           ERNIC_NAK_REMOTE_ACCESS, ERNIC_FATAL_RETH_LENGTH);
    refuse(qf, all, OPC_ATOMIC_WRITE, TARGET_VA(0) + 4, 8, 1,
           ERNIC_NAK_INVALID_REQ, ERNIC_FATAL_RETH_LENGTH);
    refuse(qf, all, OPC_ATOMIC_WRITE, TARGET_VA(0), 4, 1,
           ERNIC_NAK_INVALID_REQ, ERNIC_FATAL_WRITE_LENGTH);
    refuse(qf, ERNIC_MRACC_FLUSH | ERNIC_MRACC_REMOTE_READ, OPC_ATOMIC_WRITE,
           TARGET_VA(0), 8, 1, ERNIC_NAK_REMOTE_ACCESS, ERNIC_FATAL_RKEY);
}

/* An ATOMIC WRITE WQE naming local data (LENGTH 8): ERRFLAG, 0x05. */
static void test_bad_wqe(void)
{
    ErnicRig *r = place_pair(ERNIC_EXT_F_PLACE, 0);

    post_awrite(r, 0x40, 8, TARGET_VA(0), 1);
    ernic_rig_poll_cqhead(r, 0, QPN_A);
    ernic_rig_check_fatal(r, 0, QPN_A, ERNIC_FATAL_WQE_PROCESSOR,
                          ERRFLAG | CQE(ERNIC_OP_ATOMIC_WRITE, 0x40));
    ernic_rig_stop(r);
}

/*
 * With EXTCTRL.PLACE clear the device is PG332's: both requests are
 * unsupported opcodes (NAK Invalid Request, FATAL 0x04), and their WQEs
 * have reserved opcodes (ERRFLAG, INTSTS[5]).
 */
static void test_off(void)
{
    ErnicRig *r = place_pair(ERNIC_EXT_F_ATOMIC, ERNIC_EXTQPCONF_ATOMIC);
    uint8_t ans[FRAME_MAX];

    g_assert_cmphex(request(r, OPC_ATOMIC_WRITE, PSN_A, TARGET_VA(0), 8, 1,
                            ans), ==, OPC_ACK);
    g_assert_cmphex(ans[F_EXT], ==, ERNIC_NAK_INVALID_REQ);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_UNSUPPORTED_OPCODE);

    post_flush(r, 0x50, MR_VA, 8, FETH(ERNIC_FETH_PLT_GLOBAL, 0));
    ernic_rig_poll_cqhead(r, 0, QPN_A);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==,
                    ERRFLAG | CQE(ERNIC_OP_FLUSH, 0x50));
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_INTSTS) &
                    ERNIC_INT_ILLEGAL_OPCODE, !=, 0);
    ernic_rig_stop(r);
}

enum { ROUNDS = 10, SLOTS = 8 };

/*
 * Through a wire that drops and duplicates 10 % of frames, each round
 * ATOMIC WRITEs a value to each slot, WRITEs another over it and
 * FLUSHes: every slot ends with the WRITE's value (an ATOMIC WRITE
 * executed again after it would bring the old one back), and no QP is
 * FATAL.
 */
static void test_lossy(void)
{
    ErnicRig *r = flush_pair(ERNIC_EXTQPCONF_FLUSH,
                             ERNIC_MRACC_FLUSH | ERNIC_MRACC_REMOTE_WRITE);
    ErnicRigLossy l = { .rng = 0x2545f4914f6cdd1dull, .permille = 100 };
    ErnicRigWire w = { .filter = ernic_rig_lossy_filter, .opaque = &l };
    uint16_t wrid = 0;

    for (int k = 0; k < ROUNDS; k++) {
        for (int s = 0; s < SLOTS; s++) {
            uint64_t src = DEV_BASE(0) + SRC_OFF + s * 8;

            qtest_writeq(r->d[0].e.qts, src, (uint64_t)k << 32 | s | 0x100);
            post_awrite(r, wrid++, 0, TARGET_VA(s), (uint64_t)k << 32 | s);
            ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid++,
                           ERNIC_OP_WRITE, src, 8, TARGET_VA(s), RKEY, 0,
                           NULL);
        }
        post_flush(r, wrid++, MR_VA, XMR_LEN,
                   FETH(ERNIC_FETH_PLT_GLOBAL, ERNIC_FETH_SEL_RANGE));
        ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
        for (int s = 0; s < SLOTS; s++) {
            g_assert_cmphex(rd64(r, 1, TARGET(s)), ==,
                            (uint64_t)k << 32 | s | 0x100);
        }
    }
    for (int n = 0; n < SQ_DEPTH && n < wrid; n++) {
        g_assert_cmphex(ernic_rig_cqe(r, 0, n) & ERRFLAG, ==, 0);
    }
    g_assert_cmpuint(l.dropped, >, 0);
    g_assert_cmpuint(l.duplicated, >, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/place/atomic-write", test_atomic_write);
    qtest_add_func("/ernic/place/flush", test_flush);
    qtest_add_func("/ernic/place/duplicate", test_duplicate);
    qtest_add_func("/ernic/place/refused", test_refused);
    qtest_add_func("/ernic/place/bad-wqe", test_bad_wqe);
    qtest_add_func("/ernic/place/off", test_off);
    qtest_add_func("/ernic/place/lossy", test_lossy);
    return g_test_run();
}
