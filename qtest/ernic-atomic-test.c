/*
 * QTest: ERNIC-X atomics (docs/extension.md, "Atomics"). QP A of device
 * 0 and QP B of device 1 are connected RC QPs with PG332 WQEs, and
 * device 1's region (MR_INDEX, read/write) holds the 8-byte targets.
 * The frames of both devices are checked against IBTA's layouts; frames
 * the test builds play a requester that repeats itself, or a hostile
 * one.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "ernic-rig.h"

#define OPC_ATOMIC_ACK  0x12
#define OPC_CMP_SWAP    0x13
#define OPC_FETCH_ADD   0x14
#define TARGET_ON(i, n) (DEV_BASE(i) + MR_OFF + 0x100 + (n) * 8)
#define TARGET(n)       TARGET_ON(1, n)
#define TARGET_VA(n)    (MR_VA + 0x100 + (n) * 8)
#define RESULT_ON(i, n) (DEV_BASE(i) + SRC_OFF + (n) * 8)
#define RESULT(n)       RESULT_ON(0, n)

/* QP A and QP B connected, with @feat in EXTCTRL and @conf EXTQPCONF. */
static ErnicRig *atomic_pair_conf(uint32_t feat, uint32_t conf)
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

static ErnicRig *atomic_pair(uint32_t feat)
{
    return atomic_pair_conf(feat, ERNIC_EXTQPCONF_ATOMIC);
}

/*
 * An atomic WQE of device @i's QP: @swap_add and @compare in SDATA,
 * little-endian.
 */
static void post_atomic_on(ErnicRig *r, int i, uint16_t wrid, uint8_t op,
                           uint64_t result, uint32_t len, uint64_t va,
                           uint32_t rkey, uint64_t swap_add, uint64_t compare)
{
    uint8_t sdata[16];

    stq_le_p(sdata, swap_add);
    stq_le_p(sdata + 8, compare);
    ernic_rig_post(r, i, i ? QPN_B : QPN_A, DEV_BASE(i) + SQ_OFF, wrid, op,
                   result, len, va, rkey, 0, sdata);
}

static void post_atomic(ErnicRig *r, uint16_t wrid, uint8_t op,
                        uint64_t result, uint32_t len, uint64_t va,
                        uint32_t rkey, uint64_t swap_add, uint64_t compare)
{
    post_atomic_on(r, 0, wrid, op, result, len, va, rkey, swap_add, compare);
}

typedef struct AtomicWire {
    uint8_t req[FRAME_MAX];     /* device 0's last atomic request */
    uint8_t ack[FRAME_MAX];     /* device 1's last ATOMIC ACKNOWLEDGE */
    size_t req_len, ack_len;
    int nreq, nack;
} AtomicWire;

static ErnicRigVerdict atomic_filter(void *opaque, int from,
                                     const uint8_t *f, size_t len)
{
    AtomicWire *a = opaque;

    g_assert_cmphex(ernic_rig_le32(f + len - 4), ==, qernic_icrc(f, len));
    if (from == 0 && (f[F_BTH] == OPC_CMP_SWAP ||
                      f[F_BTH] == OPC_FETCH_ADD)) {
        memcpy(a->req, f, len);
        a->req_len = len;
        a->nreq++;
    } else if (from == 1 && f[F_BTH] == OPC_ATOMIC_ACK) {
        memcpy(a->ack, f, len);
        a->ack_len = len;
        a->nack++;
    }
    return ERNIC_RIG_FWD;
}

/*
 * The request is BTH (AckReq, the WQE's PSN) and AtomicETH: VA, R_Key,
 * swap or add, compare, big-endian (IBTA 9.3.3.3.3), and no payload; the
 * answer BTH with the same PSN, AETH (ACK, the MSN) and AtomicAckETH.
 */
static void check_frames(AtomicWire *a, uint8_t op, uint32_t psn,
                         uint64_t va, uint64_t swap_add, uint64_t compare,
                         uint64_t orig, uint32_t msn)
{
    g_assert_cmpuint(a->req_len, ==, F_EXT + 28 + 4);
    g_assert_cmphex(a->req[F_BTH], ==, op);
    g_assert_cmphex(ernic_rig_be32(a->req + F_BTH + 4), ==, QPN_B);
    g_assert_cmphex(ernic_rig_be32(a->req + F_BTH + 8), ==,
                    0x80000000u | psn);
    g_assert_cmphex(ldq_be_p(a->req + F_EXT), ==, va);
    g_assert_cmphex(ernic_rig_be32(a->req + F_EXT + 8), ==, RKEY);
    g_assert_cmphex(ldq_be_p(a->req + F_EXT + 12), ==, swap_add);
    g_assert_cmphex(ldq_be_p(a->req + F_EXT + 20), ==, compare);

    g_assert_cmpuint(a->ack_len, ==, F_EXT + 4 + 8 + 4);
    g_assert_cmphex(a->ack[F_BTH], ==, OPC_ATOMIC_ACK);
    g_assert_cmphex(ernic_rig_be32(a->ack + F_BTH + 4), ==, QPN_A);
    g_assert_cmphex(ernic_rig_be32(a->ack + F_BTH + 8) & 0xffffff, ==, psn);
    g_assert_cmphex(ernic_rig_be32(a->ack + F_EXT), ==, 0x1f000000u | msn);
    g_assert_cmphex(ldq_be_p(a->ack + F_EXT + 4), ==, orig);
}

static uint64_t rd64(ErnicRig *r, int i, uint64_t addr)
{
    return qtest_readq(r->d[i].e.qts, addr);
}

/*
 * FETCH_ADD, a CMP_SWP that swaps and one that does not: each request
 * and answer byte for byte, the target and the result buffer after each,
 * and the CQE with the WQE's opcode.
 */
static void test_ops(void)
{
    ErnicRig *r = atomic_pair(ERNIC_EXT_F_ATOMIC);
    AtomicWire a = { 0 };
    ErnicRigWire w = { .filter = atomic_filter, .opaque = &a };
    static const struct {
        uint8_t op, bth;
        uint64_t swap_add, compare, orig, after;
    } step[] = {
        { ERNIC_OP_ATOMIC_FETCH_ADD, OPC_FETCH_ADD, 5, 0,
          0x1122334455667788ull, 0x112233445566778dull },
        { ERNIC_OP_ATOMIC_CMP_SWP, OPC_CMP_SWAP, 0xdeadbeefcafef00dull,
          0x112233445566778dull, 0x112233445566778dull,
          0xdeadbeefcafef00dull },
        { ERNIC_OP_ATOMIC_CMP_SWP, OPC_CMP_SWAP, 1, 2,
          0xdeadbeefcafef00dull, 0xdeadbeefcafef00dull },
        { ERNIC_OP_ATOMIC_FETCH_ADD, OPC_FETCH_ADD, -3ull, 0,
          0xdeadbeefcafef00dull, 0xdeadbeefcafef00aull },
    };

    qtest_writeq(r->d[1].e.qts, TARGET(0), step[0].orig);
    for (int k = 0; k < ARRAY_SIZE(step); k++) {
        post_atomic(r, 0x30 + k, step[k].op, RESULT(k), 8, TARGET_VA(0),
                    RKEY, step[k].swap_add, step[k].compare);
        ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
        check_frames(&a, step[k].bth, (PSN_A + k) & 0xffffff, TARGET_VA(0),
                     step[k].swap_add, step[k].compare, step[k].orig, k + 1);
        g_assert_cmphex(rd64(r, 1, TARGET(0)), ==, step[k].after);
        g_assert_cmphex(rd64(r, 0, RESULT(k)), ==, step[k].orig);
        g_assert_cmphex(ernic_rig_cqe(r, 0, k), ==, CQE(step[k].op, 0x30 + k));
    }
    g_assert_cmpint(a.nreq, ==, 4);
    g_assert_cmpint(a.nack, ==, 4);
    ernic_rig_stop(r);
}

/* An atomic request of the test's own to QP B; returns the answer. */
static size_t request(ErnicRig *r, uint8_t op, uint32_t psn, uint64_t va,
                      uint32_t rkey, uint64_t swap_add, uint64_t compare,
                      uint8_t *ans)
{
    uint8_t f[FRAME_MAX], eth[28];
    size_t len;

    stq_be_p(eth, va);
    stl_be_p(eth + 8, rkey);
    stq_be_p(eth + 12, swap_add);
    stq_be_p(eth + 20, compare);
    len = ernic_rig_inject(r, f, op, QPN_B, psn, eth, sizeof(eth), 0);
    return ernic_rig_exchange(r, f, len, ans);
}

/*
 * A duplicate is answered with the value saved when the atomic was
 * executed, and not executed again, even after newer requests (IBTA
 * 9.4.5); a duplicate PSN that was no atomic gets no answer.
 */
static void test_duplicate(void)
{
    ErnicRig *r = atomic_pair(ERNIC_EXT_F_ATOMIC);
    uint8_t ans[FRAME_MAX], f[FRAME_MAX], reth[16];
    size_t len;

    qtest_writeq(r->d[1].e.qts, TARGET(1), 100);
    for (int k = 0; k < 3; k++) {
        request(r, OPC_FETCH_ADD, PSN_A + k, TARGET_VA(1), RKEY, 10, 0, ans);
        g_assert_cmphex(ans[F_BTH], ==, OPC_ATOMIC_ACK);
        g_assert_cmphex(ldq_be_p(ans + F_EXT + 4), ==, 100 + 10 * k);
    }
    for (int k = 2; k >= 0; k--) {
        request(r, OPC_FETCH_ADD, PSN_A + k, TARGET_VA(1), RKEY, 10, 0, ans);
        g_assert_cmphex(ans[F_BTH], ==, OPC_ATOMIC_ACK);
        g_assert_cmphex(ernic_rig_be32(ans + F_BTH + 8) & 0xffffff, ==,
                        (PSN_A + k) & 0xffffff);
        g_assert_cmphex(ldq_be_p(ans + F_EXT + 4), ==, 100 + 10 * k);
    }
    g_assert_cmphex(rd64(r, 1, TARGET(1)), ==, 130);

    /* A WRITE at the next PSN, then a "duplicate atomic" at its PSN. */
    len = ernic_rig_inject(r, f, 0x0a, QPN_B, PSN_A + 3,
                           ernic_rig_reth(reth, MR_VA, RKEY, 8), 16, 8);
    ernic_rig_exchange(r, f, len, ans);
    g_assert_cmphex(ans[F_BTH], ==, 0x11);
    request(r, OPC_FETCH_ADD, PSN_A + 4, TARGET_VA(1), RKEY, 10, 0, ans);
    g_assert_cmphex(ldq_be_p(ans + F_EXT + 4), ==, 130);
    len = ernic_rig_inject(r, f, OPC_FETCH_ADD, QPN_B, PSN_A + 3,
                           (const uint8_t *)"\0\0\0\0\0\0\0\0\0\0\0\0"
                           "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 28, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    for (int k = 0; k < 20; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, ans, &len));
    g_assert_cmphex(rd64(r, 1, TARGET(1)), ==, 140);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/* One refused request: its NAK, the FATAL code, the target unchanged. */
#define KEEP_ACCESS     (-1)

static void refuse(uint64_t va, uint32_t rkey, int access, uint8_t nak,
                   uint16_t code)
{
    ErnicRig *r = atomic_pair(ERNIC_EXT_F_ATOMIC);
    uint8_t ans[FRAME_MAX];

    if (access != KEEP_ACCESS) {
        ernic_rig_wr(r, 1, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_ACCESSDESC,
                     access);
    }
    qtest_writeq(r->d[1].e.qts, TARGET(0), 7);
    g_test_message("refused: va 0x%" PRIx64 " key 0x%x access %d", va, rkey,
                   access);
    request(r, OPC_CMP_SWAP, PSN_A, va, rkey, 9, 7, ans);
    g_assert_cmphex(ans[F_BTH], ==, 0x11);
    g_assert_cmphex(ans[F_EXT], ==, nak);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | code);
    g_assert_cmphex(rd64(r, 1, TARGET(0)), ==, 7);
    ernic_rig_stop(r);
}

/*
 * Misaligned: NAK Invalid Request, FATAL 0x16. No atomic access (a
 * read-only or write-only region), an unknown key, a range past the
 * region: NAK Remote Access with the key's FATAL codes.
 */
static void test_refused(void)
{
    refuse(TARGET_VA(0) + 4, RKEY, KEEP_ACCESS, ERNIC_NAK_INVALID_REQ,
           ERNIC_FATAL_RETH_LENGTH);
    refuse(TARGET_VA(0), RKEY, ERNIC_ACCESS_READ_ONLY,
           ERNIC_NAK_REMOTE_ACCESS, ERNIC_FATAL_RKEY);
    refuse(TARGET_VA(0), RKEY, ERNIC_ACCESS_WRITE_ONLY,
           ERNIC_NAK_REMOTE_ACCESS, ERNIC_FATAL_RKEY);
    refuse(TARGET_VA(0), RKEY ^ 1, KEEP_ACCESS, ERNIC_NAK_REMOTE_ACCESS,
           ERNIC_FATAL_RKEY);
    refuse(MR_VA + MR_LEN, RKEY, KEEP_ACCESS, ERNIC_NAK_REMOTE_ACCESS,
           ERNIC_FATAL_RETH_LENGTH);
}

/*
 * EXTQPCONFi[7] may change while the QP is enabled, its other bits not;
 * a QP without remote atomic access takes no atomic: NAK Invalid
 * Request, FATAL 0x04, as for an unknown opcode.
 */
static void test_no_qp_access(void)
{
    ErnicRig *r = atomic_pair_conf(ERNIC_EXT_F_ATOMIC, 0);
    uint32_t conf = ERNIC_EXT_QP_OFFSET(QPN_B) + ERNIC_EXTQPCONF;
    uint8_t ans[FRAME_MAX];

    ernic_rig_wr(r, 1, conf, ERNIC_EXTQPCONF_ATOMIC | ERNIC_EXTQPCONF_UC);
    g_assert_cmphex(ernic_rig_rd(r, 1, conf), ==, ERNIC_EXTQPCONF_ATOMIC);
    ernic_rig_wr(r, 1, conf, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, conf), ==, 0);

    qtest_writeq(r->d[1].e.qts, TARGET(0), 7);
    request(r, OPC_FETCH_ADD, PSN_A, TARGET_VA(0), RKEY, 1, 0, ans);
    g_assert_cmphex(ans[F_BTH], ==, 0x11);
    g_assert_cmphex(ans[F_EXT], ==, ERNIC_NAK_INVALID_REQ);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_UNSUPPORTED_OPCODE);
    g_assert_cmphex(rd64(r, 1, TARGET(0)), ==, 7);
    ernic_rig_stop(r);
}

/* An atomic WQE whose buffer is not 8 bytes: ERRFLAG, FATAL 0x05. */
static void test_bad_wqe(void)
{
    ErnicRig *r = atomic_pair(ERNIC_EXT_F_ATOMIC);

    post_atomic(r, 0x40, ERNIC_OP_ATOMIC_FETCH_ADD, RESULT(0), 4,
                TARGET_VA(0), RKEY, 1, 0);
    ernic_rig_poll_cqhead(r, 0, QPN_A);
    ernic_rig_check_fatal(r, 0, QPN_A, ERNIC_FATAL_WQE_PROCESSOR,
                          ERRFLAG | CQE(ERNIC_OP_ATOMIC_FETCH_ADD, 0x40));
    ernic_rig_stop(r);
}

/*
 * With EXTCTRL.ATOMIC clear the device is PG332's: an atomic request is
 * an unsupported opcode (NAK Invalid Request, FATAL 0x04), an ATOMIC
 * ACKNOWLEDGE a wrong response (FATAL 0x0C), and an atomic WQE has a
 * reserved opcode (ERRFLAG, INTSTS[5]).
 */
static void test_off(void)
{
    ErnicRig *r = atomic_pair(ERNIC_EXT_F_MR);
    uint8_t ans[FRAME_MAX];

    request(r, OPC_FETCH_ADD, PSN_A, TARGET_VA(0), RKEY, 1, 0, ans);
    g_assert_cmphex(ans[F_BTH], ==, 0x11);
    g_assert_cmphex(ans[F_EXT], ==, ERNIC_NAK_INVALID_REQ);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_UNSUPPORTED_OPCODE);

    post_atomic(r, 0x50, ERNIC_OP_ATOMIC_CMP_SWP, RESULT(0), 8,
                TARGET_VA(0), RKEY, 1, 0);
    ernic_rig_poll_cqhead(r, 0, QPN_A);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==,
                    ERRFLAG | CQE(ERNIC_OP_ATOMIC_CMP_SWP, 0x50));
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_INTSTS) &
                    ERNIC_INT_ILLEGAL_OPCODE, !=, 0);
    ernic_rig_stop(r);
}

enum { ROUNDS = 12, BATCH = 8 };

/*
 * The FETCH_ADD results device @i got, in order of posting, are distinct
 * values of the counter: the adds of both devices interleave, but none
 * of them was seen twice or executed twice.
 */
static void check_results(ErnicRig *r, int i)
{
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash,
                                                       g_int64_equal,
                                                       g_free, NULL);

    for (int n = 0; n < ROUNDS * BATCH; n++) {
        uint64_t *v = g_new(uint64_t, 1);

        *v = rd64(r, i, RESULT_ON(i, n));
        g_assert_false(g_hash_table_contains(seen, v));
        g_hash_table_add(seen, v);
        g_assert_cmphex(ernic_rig_cqe(r, i, n % SQ_DEPTH) & ERRFLAG, ==, 0);
    }
}

/*
 * Both devices hammer each other's counters with FETCH_ADD, then CMP_SWP,
 * through a wire that drops and duplicates 10 % of frames: every result
 * is a value the counter held once, and the counters end exactly at the
 * sum of the operations (a duplicate executed twice would add twice; a
 * lost answer not asked for again would hang).
 */
static void test_hammer(void)
{
    ErnicRig *r = atomic_pair(ERNIC_EXT_F_ATOMIC);
    ErnicRigLossy l = { .rng = 0x9e3779b97f4a7c15ull, .permille = 100 };
    ErnicRigWire w = { .filter = ernic_rig_lossy_filter, .opaque = &l };
    uint64_t sum = 0;

    qtest_writeq(r->d[1].e.qts, TARGET(2), 0);
    qtest_writeq(r->d[0].e.qts, TARGET_ON(0, 2), 0);
    for (int k = 0; k < ROUNDS; k++) {
        for (int b = 0; b < BATCH; b++) {
            int n = k * BATCH + b;

            for (int i = 0; i < NDEV; i++) {
                post_atomic_on(r, i, n, ERNIC_OP_ATOMIC_FETCH_ADD,
                               RESULT_ON(i, n), 8, TARGET_VA(2), RKEY, n + 1,
                               0);
            }
            sum += n + 1;
        }
        ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A) &&
                       ernic_rig_all_done(r, 1, QPN_B));
    }
    g_assert_cmphex(rd64(r, 1, TARGET(2)), ==, sum);
    g_assert_cmphex(rd64(r, 0, TARGET_ON(0, 2)), ==, sum);
    check_results(r, 0);
    check_results(r, 1);
    /* Then CMP_SWP steps of +1, each expecting the value it last saw. */
    for (int k = 0; k < 40; k++) {
        uint64_t v = rd64(r, 1, TARGET(2));

        post_atomic(r, 0x100 + k, ERNIC_OP_ATOMIC_CMP_SWP, RESULT(0), 8,
                    TARGET_VA(2), RKEY, v + 1, v);
        ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
        g_assert_cmphex(rd64(r, 0, RESULT(0)), ==, v);
    }
    g_assert_cmphex(rd64(r, 1, TARGET(2)), ==, sum + 40);
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
    qtest_add_func("/ernic/atomic/ops", test_ops);
    qtest_add_func("/ernic/atomic/duplicate", test_duplicate);
    qtest_add_func("/ernic/atomic/refused", test_refused);
    qtest_add_func("/ernic/atomic/no-qp-access", test_no_qp_access);
    qtest_add_func("/ernic/atomic/bad-wqe", test_bad_wqe);
    qtest_add_func("/ernic/atomic/off", test_off);
    qtest_add_func("/ernic/atomic/hammer", test_hammer);
    return g_test_run();
}
