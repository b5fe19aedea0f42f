/*
 * QTest: ERNIC-X UC QPs (docs/extension.md, "UC QPs"). QP A of device 0
 * and QP B of device 1 are connected UC QPs with PG332 WQEs and RQ
 * buffers: the requester's frames are checked, the responder gets
 * frames injected by the test as device 0's, and nothing may ever come
 * back: UC has no ACK, NAK or retransmission (IBTA 9.7).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "ernic-rig.h"

#define UC              0x20
#define OPC_SEND_FIRST  0x00
#define OPC_SEND_MIDDLE 0x01
#define OPC_SEND_LAST   0x02
#define OPC_SEND_ONLY   0x04
#define OPC_WRITE_FIRST 0x06
#define OPC_WRITE_MID   0x07
#define OPC_WRITE_LAST  0x08
#define OPC_WRITE_ONLY  0x0a
#define OPC_ACK         0x11
#define PMTU            1024
#define RQBUF(n)        (DEV_BASE(1) + RQ_OFF + (uint64_t)(n) * 0x100000)

/* QP @qpn of device @i a UC QP (@feat in EXTCTRL), before it is enabled. */
static void uc_qp(ErnicRig *r, int i, uint32_t qpn, uint32_t feat)
{
    ernic_rig_wr(r, i, ERNIC_EXTCTRL, feat);
    ernic_rig_wr(r, i, ERNIC_EXT_QP_OFFSET(qpn) + ERNIC_EXTQPCONF,
                 ERNIC_EXTQPCONF_UC);
}

static ErnicRig *uc_pair(uint32_t feat)
{
    ErnicRig *r = ernic_rig_start(NULL);

    uc_qp(r, 0, QPN_A, feat);
    uc_qp(r, 1, QPN_B, feat);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    return r;
}

typedef struct UcWire {
    uint8_t op[32];
    uint32_t bth2[32];          /* AckReq and PSN */
    int n;
    int from1;                  /* frames device 1 sent: must stay 0 */
} UcWire;

/* Record device 0's frames; drop anything device 1 sends. */
static ErnicRigVerdict uc_filter(void *opaque, int from, const uint8_t *f,
                                 size_t len)
{
    UcWire *u = opaque;

    if (from == 1) {
        u->from1++;
        return ERNIC_RIG_DROP;
    }
    g_assert_cmphex(ernic_rig_le32(f + len - 4), ==, qernic_icrc(f, len));
    if (u->n < 32) {
        u->op[u->n] = f[F_BTH];
        u->bth2[u->n++] = ernic_rig_be32(f + F_BTH + 8);
    }
    return ERNIC_RIG_FWD;
}

/* Device 0's frames were @ops, from PSN @psn on, none with AckReq. */
static void check_ops(UcWire *u, const uint8_t *ops, int n, uint32_t psn)
{
    g_assert_cmpint(u->n, ==, n);
    for (int k = 0; k < n; k++) {
        g_assert_cmphex(u->op[k], ==, ops[k]);
        g_assert_cmphex(u->bth2[k], ==, (psn + k) & 0xffffff);
    }
    u->n = 0;
}

/*
 * A SEND and a WRITE of three packets each: UC opcodes, no AckReq, the
 * data in place, and each WQE completed with no answer from the peer
 * (the filter drops whatever device 1 sends, and it sends nothing).
 */
static void test_send_write(void)
{
    ErnicRig *r = uc_pair(ERNIC_EXT_F_UC);
    UcWire u = { 0 };
    ErnicRigWire w = { .filter = uc_filter, .opaque = &u };
    static const uint8_t send[] = { UC | OPC_SEND_FIRST, UC | OPC_SEND_MIDDLE,
                                    UC | OPC_SEND_LAST };
    static const uint8_t write[] = { UC | OPC_WRITE_FIRST,
                                     UC | OPC_WRITE_MID, UC | OPC_WRITE_LAST };
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 2500, 1);

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x10, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 2500, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A) &&
                   ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB) == 1);
    check_ops(&u, send, 3, PSN_A);
    ernic_rig_assert_mem(r, RQBUF(0), p, 2500);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 0x10));

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x11, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 2500, MR_VA + 8, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A) &&
                   ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATMSN) == 2);
    check_ops(&u, write, 3, PSN_A + 3);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + 8, p, 2500);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, CQE(ERNIC_OP_WRITE, 0x11));

    /* Nothing answered, nothing sent again, however long we wait. */
    for (int k = 0; k < 20; k++) {
        qtest_clock_step(r->qts, 100 * 1000 * 1000);
        ernic_rig_pump_once(r, &w);
    }
    g_assert_cmpint(u.from1, ==, 0);
    g_assert_cmpint(u.n, ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPSN), ==,
                    (PSN_A + 6) & 0xffffff);
    g_free(p);
    ernic_rig_stop(r);
}

/* Inject @opcode at @psn into device 1's QP B; nothing may come back. */
static void inject(ErnicRig *r, uint8_t opcode, uint32_t psn,
                   const uint8_t *ext, size_t ext_len, size_t paylen)
{
    uint8_t f[FRAME_MAX];
    size_t len = ernic_rig_inject(r, f, opcode, QPN_B, psn, ext, ext_len,
                                  paylen);

    ernic_rig_wire_write(r->d[1].fd, f, len);
    for (int k = 0; k < 20; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, f, &len));
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
}

/* @n bytes as ernic_rig_inject() fills a packet at @psn, at @addr. */
static void assert_payload(ErnicRig *r, uint64_t addr, uint32_t psn,
                           size_t n)
{
    g_autofree uint8_t *want = g_malloc(n);

    ernic_rig_fill(want, n, psn);
    ernic_rig_assert_mem(r, addr, want, n);
}

/*
 * A SEND that lost its MIDDLE packet is dropped whole, and its RQ
 * buffer is filled by the next SEND; a SEND cut short by the FIRST of
 * the next message is abandoned the same way (IBTA 9.7.5.1.1).
 */
static void test_lost_packet(void)
{
    ErnicRig *r = uc_pair(ERNIC_EXT_F_UC);
    uint32_t psn = PSN_A;

    inject(r, UC | OPC_SEND_FIRST, psn, NULL, 0, PMTU);
    inject(r, UC | OPC_SEND_LAST, psn + 2, NULL, 0, 100);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    inject(r, UC | OPC_SEND_ONLY, psn + 3, NULL, 0, 200);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    assert_payload(r, RQBUF(0), psn + 3, 200);

    inject(r, UC | OPC_SEND_FIRST, psn + 4, NULL, 0, PMTU);
    inject(r, UC | OPC_SEND_ONLY, psn + 6, NULL, 0, 300);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 2);
    assert_payload(r, RQBUF(1), psn + 6, 300);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATMSN), ==, 2);
    ernic_rig_stop(r);
}

/*
 * What an RC responder would NAK and go FATAL for drops the UC message
 * and nothing more: an R_Key it does not know, a MIDDLE with no FIRST,
 * an RC opcode, an ACK, and a SEND with no RQ buffer free. The QP then
 * takes the next message.
 */
static void test_refused(void)
{
    ErnicRig *r = uc_pair(ERNIC_EXT_F_UC);
    uint32_t psn = PSN_A, drops = ernic_rig_rd(r, 1, ERNIC_INALLDRPPKTCNT);
    uint8_t reth[16];
    int k;

    ernic_rig_reth(reth, MR_VA, RKEY ^ 1, 64);
    inject(r, UC | OPC_WRITE_ONLY, psn, reth, 16, 64);
    inject(r, UC | OPC_SEND_MIDDLE, psn, NULL, 0, PMTU);
    inject(r, OPC_SEND_ONLY, psn, NULL, 0, 64);
    inject(r, OPC_ACK, psn, reth, 4, 0);
    for (k = 0; k < RQ_DEPTH - 1; k++) {
        inject(r, UC | OPC_SEND_ONLY, psn + k, NULL, 0, 32);
    }
    inject(r, UC | OPC_SEND_ONLY, psn + k, NULL, 0, 32);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==,
                    RQ_DEPTH - 1);
    g_assert_cmphex((ernic_rig_rd(r, 1, ERNIC_INALLDRPPKTCNT) >> 16) -
                    (drops >> 16), ==, 5);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_IPKTERRQWPTR), ==, 0);

    ernic_rig_reth(reth, MR_VA + 0x100, RKEY, 64);
    inject(r, UC | OPC_WRITE_ONLY, psn + 0x100, reth, 16, 64);
    assert_payload(r, DEV_BASE(1) + MR_OFF + 0x100, psn + 0x100, 64);
    ernic_rig_stop(r);
}

/* A READ has no UC form: ERRFLAG, FATAL 0x05, nothing sent. */
static void test_read_wqe(void)
{
    ErnicRig *r = uc_pair(ERNIC_EXT_F_UC);

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x20, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF, 64, MR_VA, RKEY, 0, NULL);
    ernic_rig_poll_cqhead(r, 0, QPN_A);
    ernic_rig_check_fatal(r, 0, QPN_A, ERNIC_FATAL_WQE_PROCESSOR,
                          ERRFLAG | CQE(ERNIC_OP_READ, 0x20));
    ernic_rig_stop(r);
}

/*
 * With EXTCTRL.UC clear the QP is the PG332 RC QP it always was: a UC
 * opcode is an unsupported one, NAKed with FATAL 0x04.
 */
static void test_off(void)
{
    ErnicRig *r = uc_pair(ERNIC_EXT_F_MR);

    g_assert_cmphex(ernic_rig_request(r, QPN_B, UC | OPC_SEND_ONLY, PSN_A,
                                      NULL, 0, 16), ==,
                    ERNIC_NAK_INVALID_REQ);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_UNSUPPORTED_OPCODE);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/uc/send-write", test_send_write);
    qtest_add_func("/ernic/uc/lost-packet", test_lost_packet);
    qtest_add_func("/ernic/uc/refused", test_refused);
    qtest_add_func("/ernic/uc/read-wqe", test_read_wqe);
    qtest_add_func("/ernic/uc/off", test_off);
    return g_test_run();
}
