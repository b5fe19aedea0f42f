/*
 * QTest for the ernic QP context: the states a QP is in, how errors are
 * reported (error buffer, incoming packet error status queue, STATQPi,
 * CQE ERRFLAG), every FATAL code of PG332 v3.1 Table 2-4 that the device
 * raises, each from its real cause, and the QP deletion and QP fatal
 * recovery procedures of PG332 ch.6, step by step (docs/qp-states.md,
 * docs/errors.md, docs/recovery.md).
 *
 * Two devices on socketpair netdevs (qtest/ernic-rig.h): the test is the
 * wire between them, or plays the peer itself to send what a faulty or
 * hostile peer would.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"

/*
 * Responder-side FATAL codes: a request the test sends to QP B. QP B has
 * a SEND of its own outstanding (sent, never acknowledged), which the
 * FATAL must complete with ERRFLAG.
 */
typedef struct RespCase {
    uint16_t code;
    uint8_t opcode;
    bool reth;
    uint64_t va;
    uint32_t rkey;
    uint32_t dmalen;
    uint32_t paylen;
    uint8_t nak;
    uint32_t synd;              /* error buffer syndrome; 0: not Table 2-3 */
} RespCase;

static const RespCase resp_cases[] = {
    /* SEND_MIDDLE with no SEND in progress. */
    { ERNIC_FATAL_OPCODE_SEQ, 0x01, false, 0, 0, 0, 1024, 0x61,
      ERNIC_SYND_OPCODE_SEQ },
    /* SEND_FIRST shorter than the PMTU (1024). */
    { ERNIC_FATAL_LENGTH, 0x00, false, 0, 0, 0, 512, 0x61, ERNIC_SYND_PMTU },
    /* Both: a short SEND_MIDDLE with no SEND in progress. */
    { ERNIC_FATAL_OPCODE_SEQ_AND_LENGTH, 0x01, false, 0, 0, 0, 512, 0x61,
      ERNIC_SYND_OPCODE_SEQ | ERNIC_SYND_PMTU },
    /* An atomic CMP_SWAP, with the expected PSN. */
    { ERNIC_FATAL_UNSUPPORTED_OPCODE, 0x13, false, 0, 0, 0, 28, 0x61,
      ERNIC_SYND_OPCODE_UNSUPPORTED },
    /* WRITE_MIDDLE with no WRITE in progress. */
    { ERNIC_FATAL_WRITE_OPCODE_SEQ, 0x07, false, 0, 0, 0, 1024, 0x61,
      ERNIC_SYND_OPCODE_SEQ },
    /* WRITE_FIRST shorter than the PMTU. */
    { ERNIC_FATAL_WRITE_LENGTH, 0x06, true, MR_VA, RKEY, 2048, 512, 0x61,
      ERNIC_SYND_PMTU },
    /* Both: a short WRITE_MIDDLE with no WRITE in progress. */
    { ERNIC_FATAL_WRITE_SEQ_AND_LENGTH, 0x07, false, 0, 0, 0, 512, 0x61,
      ERNIC_SYND_OPCODE_SEQ | ERNIC_SYND_PMTU },
    /* WRITE_ONLY with the wrong key byte: Remote Access Error. */
    { ERNIC_FATAL_RKEY, 0x0a, true, MR_VA, RKEY ^ 1, 64, 64, 0x62, 0 },
    /* WRITE_ONLY reaching past the region. */
    { ERNIC_FATAL_RETH_LENGTH, 0x0a, true, MR_VA + MR_LEN - 32, RKEY, 64, 64,
      0x62, 0 },
    /* Both. */
    { ERNIC_FATAL_RKEY_AND_LENGTH, 0x0a, true, MR_VA + MR_LEN - 32, RKEY ^ 1,
      64, 64, 0x62, 0 },
};

/* QP B sends a SEND the test never acknowledges; returns its frame. */
static void busy_qp_b(ErnicRig *r, uint16_t wrid)
{
    uint8_t f[FRAME_MAX];
    size_t len;

    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, wrid, ERNIC_OP_SEND,
                   DEV_BASE(1) + SRC_OFF, 100, 0, 0, 0, NULL);
    len = ernic_rig_wire_wait(r, 1, f);
    g_assert_cmphex(f[F_BTH], ==, 0x04);
    g_assert_cmpuint(len, >, F_EXT);
}

static void test_resp_case(gconstpointer data)
{
    const RespCase *tc = data;
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX], ext[16];
    size_t len, alen;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    busy_qp_b(r, 0x31);
    len = ernic_rig_inject(r, f, tc->opcode, QPN_B, PSN_A, tc->reth ?
                           ernic_rig_reth(ext, tc->va, tc->rkey, tc->dmalen) :
                           NULL, tc->reth ? 16 : 0, tc->paylen);
    alen = ernic_rig_exchange(r, f, len, a);
    /* The NAK, with the request's PSN (IBTA 9.7.5.2.2). */
    g_assert_cmphex(a[F_BTH], ==, 0x11);
    g_assert_cmphex(a[F_EXT], ==, tc->nak);
    g_assert_cmphex(ernic_rig_be32(a + F_BTH + 8) & 0xffffff, ==, PSN_A);
    g_assert_cmphex(ernic_rig_le32(a + alen - 4), ==, qernic_icrc(a, alen));
    ernic_rig_check_fatal(r, 1, QPN_B, tc->code, ERRFLAG |
                          CQE(ERNIC_OP_SEND, 0x31));
    /* Logged: every packet that makes a QP FATAL is (PG332 p.33). */
    ernic_rig_check_errbuf(r, 1, 1, tc->synd, f);
    /* Nothing of the request was executed. */
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_LSTRQREQ) & 0xffffff, ==,
                    (PSN_A - 1) & 0xffffff);
    /* A FATAL QP answers nothing more: the same request again. */
    ernic_rig_wire_write(r->d[1].fd, f, len);
    qtest_clock_step(r->qts, 1000000);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, a, &alen));
    ernic_rig_stop(r);
}

/* A 17th READ while 16 are outstanding: resources full, 0x10 (p.22). */
static void test_read_resources(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], ext[16], a[FRAME_MAX];
    g_autoptr(GByteArray) burst = g_byte_array_new();
    size_t len, alen;
    bool nak = false;
    int k;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    busy_qp_b(r, 0x32);
    ernic_rig_reth(ext, MR_VA, RKEY, 0x100000);   /* 1024 responses each */
    for (k = 0; k < 17; k++) {
        uint32_t be;

        len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A + k * 1024, ext, 16, 0);
        be = cpu_to_be32(len);
        g_byte_array_append(burst, (uint8_t *)&be, 4);
        g_byte_array_append(burst, f, len);
    }
    /* All 17 in one write: the device reads them before answering. */
    g_assert_cmpint(send(r->d[1].fd, burst->data, burst->len, 0), ==,
                    burst->len);
    for (k = 0; k < 100000 && !nak; k++) {
        if (!ernic_rig_wire_read(r->d[1].fd, a, &alen)) {
            qtest_clock_step(r->qts, 100);
            continue;
        }
        nak = a[F_BTH] == 0x11 && a[F_EXT] == 0x61;
    }
    g_assert_true(nak);
    /* The NAK names the 17th READ. */
    g_assert_cmphex(ernic_rig_be32(a + F_BTH + 8) & 0xffffff, ==,
                    (PSN_A + 16 * 1024) & 0xffffff);
    /* After the NAK, silence: no more READ responses. */
    qtest_clock_step(r->qts, 1000000);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, a, &alen));
    ernic_rig_check_fatal(r, 1, QPN_B, ERNIC_FATAL_READ_RESOURCES,
                          ERRFLAG | CQE(ERNIC_OP_SEND, 0x32));
    /* The 17th READ made the QP FATAL: logged, with no Table 2-3 bit. */
    ernic_rig_check_errbuf(r, 1, 1, 0, f);
    ernic_rig_stop(r);
}

/*
 * Requester-side FATAL codes: QP A sends a request, the test answers it
 * as a faulty peer would, with up to three response packets.
 */
typedef struct Resp {
    uint8_t opcode;             /* 0: no more responses */
    uint8_t psn_off;            /* from the request's PSN */
    int16_t aeth;               /* AETH syndrome, or -1 for none */
    uint8_t extra;              /* zero bytes after the AETH */
    uint16_t paylen;
} Resp;

#define NO_AETH         (-1)

typedef struct ReqCase {
    const char *name;           /* test path */
    uint16_t code;
    uint8_t wqe_op;
    uint32_t wqe_len;
    Resp ans[3];
    uint32_t synd;              /* error buffer syndrome; 0: not Table 2-3 */
    uint8_t nak_synd;           /* STATQPi[22:16] afterwards */
} ReqCase;

static uint32_t req_psn(const uint8_t *req)
{
    return ernic_rig_be32(req + F_BTH + 8) & 0xffffff;
}

/* The last frame the test answered with. */
static uint8_t answer_frame[FRAME_MAX];

static void answer(ErnicRig *r, uint8_t opcode, uint32_t psn, int aeth_synd,
                   size_t extra, size_t paylen)
{
    uint8_t ext[16] = { 0 };
    size_t ext_len = 0, len;

    if (aeth_synd != NO_AETH) {
        stl_be_p(ext, (uint32_t)aeth_synd << 24 | 1);
        ext_len = 4 + extra;
    }
    len = ernic_rig_respond(r, answer_frame, opcode, psn, ext, ext_len, paylen);
    ernic_rig_wire_write(r->d[0].fd, answer_frame, len);
}

static const ReqCase req_cases[] = {
    /* An ATOMIC ACKNOWLEDGE (with its AtomicAckETH) for a SEND. */
    { "0x0c", ERNIC_FATAL_ACK_OPCODE, ERNIC_OP_SEND, 100,
      { { 0x12, 0, 0x1f, 8, 0 } }, ERNIC_SYND_BAD_RESPONSE, 0 },
    /* A NAK with a reserved code. */
    { "0x19", ERNIC_FATAL_AETH, ERNIC_OP_SEND, 100,
      { { 0x11, 0, 0x65, 0, 0 } }, ERNIC_SYND_AETH, 0x65 },
    { "0x0a/remote-op", ERNIC_FATAL_NAK_RECEIVED, ERNIC_OP_WRITE, 100,
      { { 0x11, 0, 0x63, 0, 0 } }, 0, 0x63 },
    { "0x0a/nak-invalid", ERNIC_FATAL_NAK_RECEIVED, ERNIC_OP_SEND, 100,
      { { 0x11, 0, 0x61, 0, 0 } }, ERNIC_SYND_BAD_RESPONSE, 0x61 },
    /* READ of 100 B answered by an ONLY of 50 B. */
    { "0x1a", ERNIC_FATAL_READ_RESP_ONLY_LEN, ERNIC_OP_READ, 100,
      { { 0x10, 0, 0x1f, 0, 50 } }, ERNIC_SYND_PMTU, 0 },
    /* A READ response for a SEND. */
    { "0x1b", ERNIC_FATAL_BAD_RESPONSE, ERNIC_OP_SEND, 100,
      { { 0x10, 0, 0x1f, 0, 100 } }, ERNIC_SYND_BAD_RESPONSE, 0 },
    /* READ of 100 B answered by a LAST. */
    { "0x1c", ERNIC_FATAL_READ_RESP_LAST_ONLY, ERNIC_OP_READ, 100,
      { { 0x0f, 0, 0x1f, 0, 100 } }, ERNIC_SYND_BAD_RESPONSE, 0 },
    /* READ of 3000 B: FIRST, then a short MIDDLE. */
    { "0x1e", ERNIC_FATAL_READ_RESP_MID_LEN, ERNIC_OP_READ, 3000,
      { { 0x0d, 0, 0x1f, 0, 1024 }, { 0x0e, 1, NO_AETH, 0, 512 } },
      ERNIC_SYND_PMTU, 0 },
    /* READ of 3000 B: FIRST, MIDDLE, then a LAST of the wrong length. */
    { "0x1f", ERNIC_FATAL_READ_RESP_LAST, ERNIC_OP_READ, 3000,
      { { 0x0d, 0, 0x1f, 0, 1024 }, { 0x0e, 1, NO_AETH, 0, 1024 },
        { 0x0f, 2, 0x1f, 0, 500 } }, ERNIC_SYND_PMTU, 0 },
};

static void test_req_case(gconstpointer data)
{
    const ReqCase *tc = data;
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x41, tc->wqe_op,
                   DEV_BASE(0) + SRC_OFF, tc->wqe_len, MR_VA, RKEY, 0, NULL);
    /* The whole request (a SEND or WRITE of 100 B is one packet). */
    ernic_rig_wire_wait(r, 0, f);
    g_assert_cmphex(req_psn(f), ==, PSN_A);
    for (int k = 0; k < 3 && tc->ans[k].opcode; k++) {
        const Resp *a = &tc->ans[k];

        answer(r, a->opcode, PSN_A + a->psn_off, a->aeth, a->extra,
               a->paylen);
    }
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_STATQP), ERNIC_STATQP_FATAL,
                       ERNIC_STATQP_FATAL);
    ernic_rig_check_fatal(r, 0, QPN_A, tc->code, ERRFLAG |
                          CQE(tc->wqe_op, 0x41));
    ernic_rig_check_errbuf(r, 0, 1, tc->synd, answer_frame);
    g_assert_cmphex(ernic_rig_nak_syndrome(r, 0, QPN_A), ==, tc->nak_synd);
    /* Nothing of a refused READ response reached memory. */
    if (tc->wqe_op == ERNIC_OP_READ && tc->code != ERNIC_FATAL_READ_RESP_LAST
        && tc->code != ERNIC_FATAL_READ_RESP_MID_LEN) {
        g_assert_cmphex(qtest_readl(r->qts, DEV_BASE(0) + SRC_OFF), ==, 0);
    }
    ernic_rig_stop(r);
}

/* A WQE longer than 8 MiB (PG332 p.10): the WQE processor's FATAL, 0x05. */
static void test_wqe_processor(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x51, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 9 * 1024 * 1024, MR_VA, RKEY, 0,
                   NULL);
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_STATQP), ERNIC_STATQP_FATAL,
                       ERNIC_STATQP_FATAL);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    ernic_rig_check_fatal(r, 0, QPN_A, ERNIC_FATAL_WQE_PROCESSOR,
                          ERRFLAG | CQE(ERNIC_OP_WRITE, 0x51));
    ernic_rig_check_errbuf(r, 0, 0, 0, NULL);
    ernic_rig_stop(r);
}

/*
 * Retry count spent (0x06) and RNR retry count spent (0x09), by stepping
 * the virtual clock past each timeout.
 */
static void test_retry_counts(gconstpointer data)
{
    bool rnr = GPOINTER_TO_INT(data);
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint8_t f[FRAME_MAX];
    size_t len;
    int sends = 0;

    cfg.timeout = 10;               /* 4.2 ms */
    cfg.retry = 1;
    cfg.rnr_retry = 1;
    ernic_rig_connect_pair(r, &cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x61, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 100, 0, 0, 0, NULL);
    for (int k = 0; k < 200 && !(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                                 ERNIC_STATQP_FATAL); k++) {
        if (ernic_rig_wire_read(r->d[0].fd, f, &len)) {
            sends++;
            if (rnr) {
                /* RNR NAK, timer code 1: 10 us (IBTA Table 45). */
                answer(r, 0x11, req_psn(f), 0x21, 0, 0);
            }
            continue;
        }
        qtest_clock_step(r->qts, 1000000);
    }
    /* The first try and one retry, then FATAL. */
    g_assert_cmpint(sends, ==, 2);
    ernic_rig_check_fatal(r, 0, QPN_A, rnr ? ERNIC_FATAL_RNR_COUNTER :
                          ERNIC_FATAL_RESPONSE_HANDLER,
                          ERRFLAG | CQE(ERNIC_OP_SEND, 0x61));
    g_assert_cmphex(ernic_rig_nak_syndrome(r, 0, QPN_A), ==, rnr ? 0x21 : 0);
    ernic_rig_stop(r);
}

static void test_remote_access(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_cause_remote_access(r, 0x71);
    ernic_rig_check_fatal(r, 0, QPN_A, ERNIC_FATAL_NAK_RECEIVED,
                          ERRFLAG | CQE(ERNIC_OP_WRITE, 0x71));
    g_assert_cmphex(ernic_rig_nak_syndrome(r, 0, QPN_A), ==, 0x62);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_RKEY);
    /* Not one byte landed in device 1's region. */
    g_assert_cmphex(qtest_readl(r->qts, DEV_BASE(1) + MR_OFF), ==, 0);
    ernic_rig_stop(r);
}

/*
 * Error reporting
 */

/*
 * Transport checks of Table 2-3 that do not end in FATAL are logged too:
 * PSN sequence (NAK), RQ full (RNR NAK), pad and PMTU (dropped),
 * malformed AETH (dropped). With XRNICCONF[5] clear nothing is logged.
 */
static void test_errbuf_transport(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint8_t f[FRAME_MAX], a[FRAME_MAX];
    size_t len;
    uint32_t n = 0;

    cfg.rq_depth = 2;               /* one buffer */
    ernic_rig_connect_pair(r, &cfg);
    /* PSN sequence error: NAK 0x60, logged with bit 21. */
    len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A + 5, NULL, 0, 8);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_EXT], ==, 0x60);
    ernic_rig_check_errbuf(r, 1, ++n, ERNIC_SYND_PSN_SEQ, f);
    /* Pad on a SEND_FIRST: dropped, bit 18. */
    len = ernic_rig_inject(r, f, 0x00, QPN_B, PSN_A, NULL, 0, 1023);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_poll_reg(r, 1, ERNIC_ERRBUFWPTR, 0xffff, ++n);
    ernic_rig_check_errbuf(r, 1, n, ERNIC_SYND_PAD, f);
    /* More payload than the PMTU: dropped, bit 19. */
    len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A, NULL, 0, 2048);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_poll_reg(r, 1, ERNIC_ERRBUFWPTR, 0xffff, ++n);
    ernic_rig_check_errbuf(r, 1, n, ERNIC_SYND_PMTU, f);
    /* Fill the one RQ buffer, then RQ full: RNR NAK, bit 20. */
    len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A, NULL, 0, 8);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_EXT], ==, 0x1f);
    len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A + 1, NULL, 0, 8);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_EXT] & 0xe0, ==, 0x20);
    ernic_rig_check_errbuf(r, 1, ++n, ERNIC_SYND_RQ_FULL, f);
    /* Reserved AETH type (0x40..0x5f) on an ACK to device 0: bit 22. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 8, 0, 0, 0, NULL);
    len = ernic_rig_wire_wait(r, 0, f);
    answer(r, 0x11, req_psn(f), 0x40, 0, 0);
    ernic_rig_poll_reg(r, 0, ERNIC_ERRBUFWPTR, 0xffff, 1);
    ernic_rig_check_errbuf(r, 0, 1, ERNIC_SYND_AETH, answer_frame);
    /* Dropped, not acted on: the SEND is still outstanding, no FATAL. */
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    /* XRNICCONF[5] clear: checks still act, nothing is logged... */
    ernic_rig_wr(r, 1, ERNIC_XRNICCONF, ernic_rig_rd(r, 1, ERNIC_XRNICCONF) &
                 ~ERNIC_XRNICCONF_ERRBUF_EN);
    len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A + 9, NULL, 0, 8);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_EXT], ==, 0x60);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_ERRBUFWPTR), ==, n);
    /*
     * ...except a packet that makes the QP FATAL (PG332 p.33, ERRBUFBA):
     * a SEND_MIDDLE with no SEND in progress, expected PSN.
     */
    len = ernic_rig_inject(r, f, 0x01, QPN_B, PSN_A + 1, NULL, 0, 1024);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_EXT], ==, 0x61);
    ernic_rig_check_errbuf(r, 1, ++n, ERNIC_SYND_OPCODE_SEQ, f);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_OPCODE_SEQ);
    ernic_rig_stop(r);
}

/*
 * The status queue wraps (PG332 p.34: software handles overflow): with
 * room for 2 entries, the 3rd FATAL overwrites entry 0.
 */
static void test_fatal_queue_wrap(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX];
    static const uint32_t qps[] = { QPN_B, 4, 5 };
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (int k = 1; k < 3; k++) {
        ernic_rig_setup_qp(r, 1, qps[k], 0, QPN_A, PSN_B, PSN_A,
                           &ernic_rig_default_cfg, DEV_BASE(1));
    }
    ernic_rig_wr(r, 1, ERNIC_IPKTERRQSZ, 2);
    for (int k = 0; k < 3; k++) {
        len = ernic_rig_inject(r, f, 0x13, qps[k], PSN_A, NULL, 0, 28);
        ernic_rig_exchange(r, f, len, a);
        g_assert_cmphex(a[F_EXT], ==, 0x61);
        g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_IPKTERRQWPTR), ==,
                        (k + 1) % 2);
    }
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (5 << 16) | ERNIC_FATAL_UNSUPPORTED_OPCODE);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 1), ==,
                    (4 << 16) | ERNIC_FATAL_UNSUPPORTED_OPCODE);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 2), ==, 0);
    ernic_rig_stop(r);
}

/*
 * QP context states (docs/qp-states.md)
 */

/* Disabled (Reset): packets are dropped with Table 2-3 bit 15, unanswered. */
static void test_state_disabled(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX];
    uint32_t qpconf;
    size_t len, alen;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    qpconf = ernic_rig_qrd(r, 1, QPN_B, ERNIC_QPCONF);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_QPCONF, qpconf & ~ERNIC_QPCONF_QP_EN);
    for (int k = 0; k < 2; k++) {
        len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A, NULL, 0, 8);
        ernic_rig_wire_write(r->d[1].fd, f, len);
        ernic_rig_poll_reg(r, 1, ERNIC_ERRBUFWPTR, 0xffff, k + 1);
        ernic_rig_check_errbuf(r, 1, k + 1, ERNIC_SYND_QP_NOT_ENABLED, f);
        qtest_clock_step(r->qts, 1000000);
        g_assert_false(ernic_rig_wire_read(r->d[1].fd, a, &alen));
        g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
        g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP), ==,
                        ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY |
                        (7u << 24) | (7u << 28));
        /* The same holds disabled and under recovery (deleted). */
        ernic_rig_qwr(r, 1, QPN_B, ERNIC_QPCONF,
                      (qpconf & ~ERNIC_QPCONF_QP_EN) |
                      ERNIC_QPCONF_UNDER_RECOVERY);
    }
    /* Doorbells wait in SQPIi while disabled: nothing is sent. */
    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(1) + SRC_OFF, 8, 0, 0, 0, NULL);
    qtest_clock_step(r->qts, 1000000);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, a, &alen));
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_CQHEAD), ==, 0);
    /* Enabled again, it serves both the doorbell and requests. */
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_QPCONF, qpconf);
    alen = ernic_rig_wire_wait(r, 1, a);
    g_assert_cmphex(a[F_BTH], ==, 0x04);
    len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A, NULL, 0, 8);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_EXT], ==, 0x1f);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_stop(r);
}

/* Enabled with an SQ never rung: receives and acknowledges only (RTR). */
static void test_state_receive_only(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX], ext[16];
    size_t len, alen;
    uint32_t psn = PSN_A;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (int k = 0; k < 3; k++) {
        len = ernic_rig_inject(r, f, 0x04, QPN_B, psn++, NULL, 0, 200);
        ernic_rig_exchange(r, f, len, a);
        g_assert_cmphex(a[F_BTH], ==, 0x11);
        g_assert_cmphex(a[F_EXT], ==, 0x1f);
    }
    len = ernic_rig_inject(r, f, 0x0a, QPN_B, psn++,
                           ernic_rig_reth(ext, MR_VA, RKEY, 64), 16, 64);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_EXT], ==, 0x1f);
    qtest_clock_step(r->qts, 100000000);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, a, &alen));
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 3);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATMSN), ==, 4);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATSSN), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATWQE), ==, 0);
    ernic_rig_stop(r);
}

/*
 * "QP under recovery" on a healthy, busy QP: nothing more is sent, all
 * outstanding and posted WQEs complete with ERRFLAG, incoming requests
 * are dropped unanswered.
 */
static void test_state_recovery_clears(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX];
    size_t len, alen;
    uint32_t qpconf;
    int k;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (k = 0; k < 20; k++) {
        ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, 0x100 + k,
                       ERNIC_OP_SEND, DEV_BASE(1) + SRC_OFF, 100, 0, 0, 0,
                       NULL);
    }
    /* 16 go out (the outstanding queue), none acknowledged. */
    for (k = 0; k < 16; k++) {
        ernic_rig_wire_wait(r, 1, f);
    }
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_OSQ_FULL, ==, ERNIC_STATQP_OSQ_FULL);
    qpconf = ernic_rig_qrd(r, 1, QPN_B, ERNIC_QPCONF);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_QPCONF,
                  qpconf | ERNIC_QPCONF_UNDER_RECOVERY);
    /* At once: everything complete, in order, in error. */
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_CQHEAD), ==,
                    ernic_rig_qrd(r, 1, QPN_B, ERNIC_SQPI));
    for (k = 0; k < 20; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 1, k), ==,
                        ERRFLAG | CQE(ERNIC_OP_SEND, 0x100 + k));
    }
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    (ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY |
                     ERNIC_STATQP_FATAL), ==,
                    ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
    /* No FATAL entry: recovery is not an error. */
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_IPKTERRQWPTR), ==, 0);
    len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A, NULL, 0, 8);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    qtest_clock_step(r->qts, 100000000);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, a, &alen));
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    ernic_rig_stop(r);
}

/*
 * A FATAL QP disabled at once, as the Xilinx drivers do, while the netdev
 * backend is full: the WQEs rung after the FATAL could not be flushed by
 * the transmit engine, and disabling completes them, so that the
 * driver's CQHEADi == SQPIi poll ends.
 */
static void test_state_fatal_disable_blocked(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], ext[16];
    size_t len;
    int k;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    /* 1 MiB of READ responses that nobody reads: the socket fills up. */
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A,
                           ernic_rig_reth(ext, MR_VA, RKEY, 0x100000), 16, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    for (k = 0; k < 100; k++) {
        qtest_clock_step(r->qts, 10000);
    }
    for (k = 0; k < 3; k++) {
        ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, 0x200 + k,
                       ERNIC_OP_SEND, DEV_BASE(1) + SRC_OFF, 10, 0, 0, 0, NULL);
    }
    len = ernic_rig_inject(r, f, 0x13, QPN_B, PSN_A + 1024, NULL, 0, 28);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_poll_reg(r, 1, QOFF(QPN_B, ERNIC_STATQP), ERNIC_STATQP_FATAL,
                       ERNIC_STATQP_FATAL);
    for (k = 0; k < 100; k++) {
        qtest_clock_step(r->qts, 10000);
    }
    /* The backend holds the transmit engine: nothing completed yet. */
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_CQHEAD), ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_RESPHNDSTS) &
                    ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN, ==, 0);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_QPCONF,
                  (ernic_rig_qrd(r, 1, QPN_B, ERNIC_QPCONF) &
                   ~ERNIC_QPCONF_QP_EN) | ERNIC_QPCONF_UNDER_RECOVERY);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_CQHEAD), ==,
                    ernic_rig_qrd(r, 1, QPN_B, ERNIC_SQPI));
    for (k = 0; k < 3; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 1, k), ==,
                        ERRFLAG | CQE(ERNIC_OP_SEND, 0x200 + k));
    }
    ernic_rig_stop(r);
}

/*
 * The procedures of PG332 ch.6
 */

/*
 * Into FATAL through a real cause (a remote access error), then seed 003
 * literally, on both QPs, then traffic again with new PSNs.
 */
static void test_recovery_procedure(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigFirst first = { 0 };
    static const ErnicRigReinit ri[NDEV] = {
        { .sqpsn = 0x000777, .rqpsn = 0xabcdef, .ttl = 33 },
        { .sqpsn = 0xabcdef, .rqpsn = 0x000777, .ttl = 44 },
    };

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_traffic(r, &first, 1);
    ernic_rig_cause_remote_access(r, 0x90);
    /* Work posted after the FATAL, before the driver noticed it. */
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x91, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 10, 0, 0, 0, NULL);
    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, 0x92, ERNIC_OP_SEND,
                   DEV_BASE(1) + SRC_OFF, 10, 0, 0, 0, NULL);

    ernic_rig_fatal_recovery(r, 0, QPN_A, 1, 0, ERNIC_FATAL_NAK_RECEIVED,
                             &ri[0]);
    ernic_rig_fatal_recovery(r, 1, QPN_B, 0, 0, ERNIC_FATAL_RKEY, &ri[1]);
    /* The interrupt handler's last act: clear INTSTS[7] (W1C). */
    ernic_rig_wr(r, 0, ERNIC_INTSTS, ERNIC_INT_FATAL);
    ernic_rig_wr(r, 1, ERNIC_INTSTS, ERNIC_INT_FATAL);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_INTSTS) & ERNIC_INT_FATAL, ==, 0);

    memset(&first, 0, sizeof(first));
    ernic_rig_traffic(r, &first, 7);
    /* The first packets after recovery carry the new PSNs and TTLs. */
    for (int i = 0; i < NDEV; i++) {
        g_assert_true(first.seen[i]);
        g_assert_cmphex(ernic_rig_be32(first.f[i] + F_BTH + 8) & 0xffffff, ==,
                        ri[i].sqpsn);
        g_assert_cmphex(first.f[i][F_IP + 8], ==, ri[i].ttl);
    }
    /* No new FATAL on the way. */
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_IPKTERRQWPTR), ==, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_IPKTERRQWPTR), ==, 1);
    ernic_rig_stop(r);
}

/*
 * "QP Deletion" (PG332 p.61), then the QP created again from scratch (a
 * different PMTU and queue memory) and used.
 */
static void delete_qp(ErnicRig *r, int i, uint32_t qpn)
{
    uint32_t qpconf = ernic_rig_qrd(r, i, qpn, ERNIC_QPCONF);
    static const uint32_t zeroed[] = {
        ERNIC_RQWPTRDBADD, ERNIC_SQPI, ERNIC_CQHEAD, ERNIC_RQCI,
        ERNIC_STATRQPIDB, ERNIC_STATCURSQPTR, ERNIC_SQPSN, ERNIC_LSTRQREQ,
        ERNIC_STATMSN,
    };

    /* 1: SQ and outstanding queue empty. */
    ernic_rig_poll_reg(r, i, QOFF(qpn, ERNIC_STATQP),
                       ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY,
                       ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
    /* 2: every completion in. */
    ernic_rig_poll_cqhead(r, i, qpn);
    /* 3: software override on, QP disabled. */
    ernic_rig_wr(r, i, ERNIC_XRNICADCONF,
                 ernic_rig_rd(r, i, ERNIC_XRNICADCONF) | ERNIC_XRNICADCONF_SWO);
    ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF, qpconf & ~ERNIC_QPCONF_QP_EN);
    /* 4: pointers to 0, then disabled and under recovery. */
    for (size_t k = 0; k < ARRAY_SIZE(zeroed); k++) {
        ernic_rig_qwr(r, i, qpn, zeroed[k], 0);
        g_assert_cmphex(ernic_rig_qrd(r, i, qpn, zeroed[k]), ==, 0);
    }
    ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF, (qpconf & ~ERNIC_QPCONF_QP_EN) |
                  ERNIC_QPCONF_UNDER_RECOVERY);
    /* 5: software override off. */
    ernic_rig_wr(r, i, ERNIC_XRNICADCONF,
                 ernic_rig_rd(r, i, ERNIC_XRNICADCONF) &
                 ~ERNIC_XRNICADCONF_SWO);
    r->d[i].sqpi = 0;
}

static void test_deletion(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    ErnicRigFirst first = { 0 };
    uint8_t junk[4096], f[FRAME_MAX];
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_traffic(r, &first, 3);
    delete_qp(r, 0, QPN_A);
    delete_qp(r, 1, QPN_B);
    /* 6: the memory is freed: scribble over the old queues. */
    memset(junk, 0xa5, sizeof(junk));
    for (int i = 0; i < NDEV; i++) {
        qtest_memwrite(r->d[i].e.qts, DEV_BASE(i) + SQ_OFF, junk, sizeof(junk));
        qtest_memwrite(r->d[i].e.qts, DEV_BASE(i) + CQ_OFF, junk, sizeof(junk));
    }
    /* A deleted QP takes nothing: bit 15, unanswered. */
    len = ernic_rig_inject(r, f, 0x04, QPN_B, PSN_A, NULL, 0, 8);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_poll_reg(r, 1, ERNIC_ERRBUFWPTR, 0xffff, 1);
    ernic_rig_check_errbuf(r, 1, 1, ERNIC_SYND_QP_NOT_ENABLED, f);
    qtest_clock_step(r->qts, 1000000);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, f, &len));

    /* Created again: PG332 ch.6 QP setup, new PSNs, PMTU 4096. */
    memset(junk, 0, sizeof(junk));
    for (int i = 0; i < NDEV; i++) {
        qtest_memwrite(r->d[i].e.qts, DEV_BASE(i) + CQ_OFF, junk, sizeof(junk));
    }
    cfg.pmtu = ERNIC_PMTU_4096;
    ernic_rig_setup_qp(r, 0, QPN_A, 1, QPN_B, 0x55, 0x66, &cfg, DEV_BASE(0));
    ernic_rig_setup_qp(r, 1, QPN_B, 0, QPN_A, 0x66, 0x55, &cfg, DEV_BASE(1));
    ernic_rig_traffic(r, &first, 5);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_IPKTERRQWPTR), ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_IPKTERRQWPTR), ==, 0);
    ernic_rig_stop(r);
}

/*
 * What skipping a step does (docs/recovery.md, "Skipped steps"). Without
 * the software override (re-init step 3) the writes of step 4 to the RO
 * registers are ignored: CQHEADi keeps its value and the poll of step 5
 * never ends. Without new PSNs (step 6) the QP starts at PSN 0, which
 * the peer, expecting its new PSN, takes for a sequence error (or, had
 * 0 been behind that PSN, a duplicate): nothing is delivered.
 */
static void test_recovery_skipped_steps(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];
    uint32_t qpconf;
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_cause_remote_access(r, 0xa0);
    qpconf = ernic_rig_qrd(r, 0, QPN_A, ERNIC_QPCONF);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_QPCONF,
                  qpconf | ERNIC_QPCONF_UNDER_RECOVERY);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_QPCONF, (qpconf & ~ERNIC_QPCONF_QP_EN) |
                  ERNIC_QPCONF_UNDER_RECOVERY);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 1);
    /* Step 3 skipped. */
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_CQHEAD, 0);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_STATCURSQPTR, 0);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATCURSQPTR), ==, 1);
    /* Done right, but step 6 skipped: SQPSNi stays 0. */
    ernic_rig_wr(r, 0, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_SWO);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_CQHEAD, 0);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_STATCURSQPTR, 0);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPSN, 0);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_QPCONF, qpconf);
    ernic_rig_wr(r, 0, ERNIC_XRNICADCONF, 0);
    r->d[0].sqpi = 0;
    /* The peer was recovered properly and expects PSN 0xfff000. */
    ernic_rig_fatal_recovery(r, 1, QPN_B, 0, 0, ERNIC_FATAL_RKEY,
                             &(ErnicRigReinit){ .sqpsn = 0x2000,
                             .rqpsn = 0xfff000, .ttl = 64 });
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0xa1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 10, 0, 0, 0, NULL);
    len = ernic_rig_wire_wait(r, 0, f);
    g_assert_cmphex(req_psn(f), ==, 0);
    len = ernic_rig_exchange(r, f, len, f);
    g_assert_cmphex(f[F_BTH], ==, 0x11);
    g_assert_cmphex(f[F_EXT], ==, 0x60);        /* NAK: PSN sequence */
    g_assert_cmphex(req_psn(f), ==, 0xfff000);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    for (size_t k = 0; k < ARRAY_SIZE(resp_cases); k++) {
        g_autofree char *path = g_strdup_printf("/ernic/fatal/code/0x%02x",
                                                resp_cases[k].code);
        qtest_add_data_func(path, &resp_cases[k], test_resp_case);
    }
    for (size_t k = 0; k < ARRAY_SIZE(req_cases); k++) {
        g_autofree char *path = g_strdup_printf("/ernic/fatal/code/%s",
                                                req_cases[k].name);
        qtest_add_data_func(path, &req_cases[k], test_req_case);
    }
    qtest_add_func("/ernic/fatal/code/0x05", test_wqe_processor);
    qtest_add_data_func("/ernic/fatal/code/0x06", GINT_TO_POINTER(false),
                        test_retry_counts);
    qtest_add_data_func("/ernic/fatal/code/0x09", GINT_TO_POINTER(true),
                        test_retry_counts);
    qtest_add_func("/ernic/fatal/code/0x10", test_read_resources);
    qtest_add_func("/ernic/fatal/remote-access", test_remote_access);
    qtest_add_func("/ernic/fatal/queue-wrap", test_fatal_queue_wrap);
    qtest_add_func("/ernic/errbuf/transport", test_errbuf_transport);
    qtest_add_func("/ernic/state/disabled", test_state_disabled);
    qtest_add_func("/ernic/state/receive-only", test_state_receive_only);
    qtest_add_func("/ernic/state/recovery-clears", test_state_recovery_clears);
    qtest_add_func("/ernic/state/fatal-disable-blocked",
                   test_state_fatal_disable_blocked);
    qtest_add_func("/ernic/recovery/procedure", test_recovery_procedure);
    qtest_add_func("/ernic/recovery/deletion", test_deletion);
    qtest_add_func("/ernic/recovery/skipped-steps",
                   test_recovery_skipped_steps);
    return g_test_run();
}
