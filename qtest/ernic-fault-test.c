/*
 * QTest for ernic fault injection (docs/debugging.md, "Fault injection"):
 * the "fault" and "fault-stats" QOM properties through QMP qom-set and
 * qom-get, and QMP set_link. Each injected FATAL code is checked for the
 * reaction PG332 gives its real cause (status queue entry, STATQPi,
 * error buffer, NAK, interrupt, flush); error CQEs, NAKs and wire faults
 * for the verbs-level outcome (completions, data); the link for the
 * Ethernet path's STATUS and interrupt.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "qobject/qdict.h"

/* qom-set "fault" on device @i; NULL on success, else the error text. */
static char *fault(ErnicRig *r, int i, const char *cmd)
{
    g_autoptr(QDict) rsp = qtest_qmp(r->qts,
        "{'execute': 'qom-set', 'arguments': {'path': %s, "
        "'property': 'fault', 'value': %s}}",
        i ? "/machine/peripheral/ern1" : "/machine/peripheral/ern0", cmd);
    QDict *err = qdict_get_qdict(rsp, "error");

    return err ? g_strdup(qdict_get_str(err, "desc")) : NULL;
}

/* What device @i reports armed ("fault" read back). */
static char *armed(ErnicRig *r, int i)
{
    g_autoptr(QDict) rsp = qtest_qmp(r->qts,
        "{'execute': 'qom-get', 'arguments': {'path': %s, "
        "'property': 'fault'}}",
        i ? "/machine/peripheral/ern1" : "/machine/peripheral/ern0");

    return g_strdup(qdict_get_str(rsp, "return"));
}

static void fault_ok(ErnicRig *r, int i, const char *cmd)
{
    g_autofree char *err = fault(r, i, cmd);

    g_assert_null(err);
}

/* Counter @name of device @i's "fault-stats". */
static uint64_t injected(ErnicRig *r, int i, const char *name)
{
    return ernic_rig_fault_stat(r, i, name);
}

static uint32_t eth_rd(ErnicRig *r, int i, uint32_t off)
{
    return qpci_io_readl(r->d[i].e.pdev, r->d[i].e.eth, off);
}

/* The AETH syndrome of the NAK device 1 sent, reading past responses. */
static uint8_t nak_sent(ErnicRig *r)
{
    uint8_t f[FRAME_MAX];
    size_t len;

    do {
        len = ernic_rig_wire_wait(r, 1, f);
    } while (f[F_BTH] != 0x11);
    g_assert_cmphex(ernic_rig_le32(f + len - 4), ==, qernic_icrc(f, len));
    return f[F_EXT];
}

/*
 * Responder codes: "fatal" on QP B, whose cause is a request from its
 * peer. The NAK goes out, the request is logged with its Table 2-3
 * syndrome, and the QP is FATAL with every PG332 trace of it.
 */
typedef struct RespCode {
    uint16_t code;
    uint8_t nak;
    uint32_t synd;
    uint8_t opcode;             /* of the frame in the error buffer */
} RespCode;

static const RespCode resp_codes[] = {
    { 0x01, 0x61, ERNIC_SYND_OPCODE_SEQ, 0x01 },
    { 0x02, 0x61, ERNIC_SYND_PMTU, 0x00 },
    { 0x03, 0x61, ERNIC_SYND_OPCODE_SEQ | ERNIC_SYND_PMTU, 0x01 },
    { 0x04, 0x61, ERNIC_SYND_OPCODE_UNSUPPORTED, 0x13 },
    { 0x10, 0x61, 0, 0x0c },
    { 0x11, 0x61, ERNIC_SYND_OPCODE_SEQ, 0x07 },
    { 0x12, 0x61, ERNIC_SYND_PMTU, 0x06 },
    { 0x13, 0x61, ERNIC_SYND_OPCODE_SEQ | ERNIC_SYND_PMTU, 0x07 },
    { 0x15, 0x62, 0, 0x0a },
    { 0x16, 0x62, 0, 0x0a },
    { 0x17, 0x62, 0, 0x0a },
};

static void test_fatal_resp(gconstpointer data)
{
    const RespCode *tc = data;
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree char *cmd = g_strdup_printf("fatal,qp=%u,code=0x%x", QPN_B,
                                           tc->code);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    fault_ok(r, 1, cmd);
    g_assert_cmphex(nak_sent(r), ==, tc->nak);
    ernic_rig_check_fatal(r, 1, QPN_B, tc->code, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_ERRBUFWPTR), ==, 1);
    g_assert_cmphex(ernic_rig_errbuf_word(r, 1, 0, 0), ==, tc->synd);
    g_assert_cmphex(ernic_rig_errbuf_word(r, 1, 0, 4 + F_BTH) & 0xff, ==,
                    tc->opcode);
    g_assert_cmpuint(injected(r, 1, "fatal"), ==, 1);
    g_assert_cmpuint(injected(r, 1, "fatal-direct"), ==, 0);
    ernic_rig_stop(r);
}

/*
 * With ERNIC-X atomics taken by QP B, 0x04's cause is a reserved RC
 * opcode (a COMPARE_SWAP would be executed); with them on QP A, 0x0C has
 * no cause (an ATOMIC ACKNOWLEDGE for a SEND is 0x1B) and is raised
 * directly.
 */
static void test_fatal_atomic_qp(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, ERNIC_EXT_F_ATOMIC);
        ernic_rig_wr(r, i, ERNIC_EXT_QP_OFFSET(i ? QPN_B : QPN_A) +
                     ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_ATOMIC);
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    fault_ok(r, 1, "fatal,qp=3,code=0x04");
    g_assert_cmphex(nak_sent(r), ==, 0x61);
    ernic_rig_check_fatal(r, 1, QPN_B, 0x04, 0);
    g_assert_cmphex(ernic_rig_errbuf_word(r, 1, 0, 0), ==,
                    ERNIC_SYND_OPCODE_UNSUPPORTED);
    g_assert_cmphex(ernic_rig_errbuf_word(r, 1, 0, 4 + F_BTH) & 0xff, ==,
                    0x18);

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 100, 0, 0, 0, NULL);
    ernic_rig_wire_wait(r, 0, f);           /* the SEND, not delivered */
    fault_ok(r, 0, "fatal,qp=2,code=0x0c");
    ernic_rig_check_fatal(r, 0, QPN_A, 0x0c, ERRFLAG | CQE(ERNIC_OP_SEND, 1));
    g_assert_cmpuint(injected(r, 0, "fatal-direct"), ==, 1);
    ernic_rig_stop(r);
}

/*
 * Requester codes: "fatal" on QP A with a request outstanding; the cause
 * is a response to it. @wqe_len 3000 is three packets.
 */
typedef struct ReqCode {
    uint16_t code;
    uint8_t wqe_op;
    uint32_t wqe_len;
    uint32_t synd;
    uint8_t statqp_synd;        /* STATQPi[22:16] */
} ReqCode;

static const ReqCode req_codes[] = {
    { 0x0a, ERNIC_OP_WRITE, 100, 0, 0x62 },
    { 0x0c, ERNIC_OP_SEND, 100, ERNIC_SYND_BAD_RESPONSE, 0 },
    { 0x19, ERNIC_OP_SEND, 100, ERNIC_SYND_AETH, 0x64 },
    { 0x1a, ERNIC_OP_READ, 100, ERNIC_SYND_PMTU, 0 },
    { 0x1b, ERNIC_OP_SEND, 100, ERNIC_SYND_BAD_RESPONSE, 0 },
    { 0x1c, ERNIC_OP_READ, 100, ERNIC_SYND_BAD_RESPONSE, 0 },
    { 0x1e, ERNIC_OP_READ, 3000, ERNIC_SYND_PMTU, 0 },
};

static void test_fatal_req(gconstpointer data)
{
    const ReqCode *tc = data;
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree char *cmd = g_strdup_printf("fatal,qp=%u,code=0x%x,nak=0x62",
                                           QPN_A, tc->code);
    uint8_t f[FRAME_MAX];

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x41, tc->wqe_op,
                   DEV_BASE(0) + SRC_OFF, tc->wqe_len, MR_VA, RKEY, 0, NULL);
    ernic_rig_wire_wait(r, 0, f);
    fault_ok(r, 0, cmd);
    ernic_rig_check_fatal(r, 0, QPN_A, tc->code, ERRFLAG |
                          CQE(tc->wqe_op, 0x41));
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_ERRBUFWPTR), ==, 1);
    g_assert_cmphex(ernic_rig_errbuf_word(r, 0, 0, 0), ==, tc->synd);
    g_assert_cmphex(ernic_rig_nak_syndrome(r, 0, QPN_A), ==, tc->statqp_synd);
    g_assert_cmpuint(injected(r, 0, "fatal-direct"), ==, 0);
    ernic_rig_stop(r);
}

/*
 * Local causes (and a NAK with nothing outstanding) are raised directly:
 * every PG332 trace but the error buffer entry.
 */
static void test_fatal_direct(void)
{
    static const uint16_t codes[] = { 0x05, 0x06, 0x09, 0x0d, 0x0a, 0x1f };

    for (size_t k = 0; k < ARRAY_SIZE(codes); k++) {
        ErnicRig *r = ernic_rig_start(NULL);
        g_autofree char *cmd = g_strdup_printf("fatal,qp=%u,code=0x%x,"
                                               "nak=0x63", QPN_A, codes[k]);

        ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
        fault_ok(r, 0, cmd);
        ernic_rig_check_fatal(r, 0, QPN_A, codes[k], 0);
        g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_ERRBUFWPTR), ==, 0);
        g_assert_cmphex(ernic_rig_nak_syndrome(r, 0, QPN_A), ==,
                        codes[k] == 0x0a ? 0x63 : 0);
        g_assert_cmpuint(injected(r, 0, "fatal-direct"), ==, 1);
        ernic_rig_stop(r);
    }
}

/* Refused commands say why and change nothing. */
static void test_refused(void)
{
    static const struct {
        const char *cmd, *why;
    } bad[] = {
        { "explode", "unknown command 'explode'" },
        { "fatal,qp=2,code=0x07", "not a FATAL code of PG332 Table 2-4" },
        { "fatal,qp=1,code=0x01", "an RC QP is 2..32" },
        { "fatal,qp=33,code=0x01", "expected a number up to 32" },
        { "fatal,qp=9,code=0x01", "QP9 is not in service" },
        { "fatal,qp=2,code=0x0a,nak=0x60", "nak=0x60" },
        { "drop,dir=up", "dir=up: expected rx, tx or both" },
        { "drop,colour=red", "unknown parameter 'colour'" },
        { "corrupt,field=crc", "field=crc" },
        { "nak,qp=2,type=soft", "nak needs type=" },
        { "delay,percent=101", "percent=101" },
    };
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t intsts;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    intsts = ernic_rig_rd(r, 0, ERNIC_INTSTS);
    for (size_t k = 0; k < ARRAY_SIZE(bad); k++) {
        g_autofree char *err = fault(r, 0, bad[k].cmd);

        g_assert_nonnull(err);
        g_assert_nonnull(strstr(err, bad[k].why));
    }
    for (int k = 0; k < 8; k++) {           /* ERNIC_FAULT_RULES */
        fault_ok(r, 0, "drop,dir=rx,opcode=0xff");
    }
    {
        g_autofree char *err = fault(r, 0, "drop");

        g_assert_nonnull(strstr(err, "rules armed already"));
    }
    fault_ok(r, 0, "clear");
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_INTSTS), ==, intsts);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    /* Stopped, the device takes no command. */
    qtest_qmp_assert_success(r->qts, "{'execute': 'stop'}");
    {
        g_autofree char *err = fault(r, 0, "drop");

        g_assert_nonnull(strstr(err, "the VM is not running"));
    }
    qtest_qmp_assert_success(r->qts, "{'execute': 'cont'}");
    ernic_rig_stop(r);
}

/* A WRITE of @len from A to B through the test's wire; data checked. */
static void write_through(ErnicRig *r, uint16_t wrid, uint32_t len,
                          uint32_t seed)
{
    g_autofree uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, len,
                                                  seed);

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, len, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, len);
}

/* cqe-error: the next two completions carry ERRFLAG; the QP goes on. */
static void test_cqe_error(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    fault_ok(r, 0, "cqe-error,qp=2,count=2");
    {
        g_autofree char *a = armed(r, 0);

        g_assert_cmpstr(a, ==, "cqe-error,qp=2,left=2");
    }
    for (int k = 0; k < 3; k++) {
        write_through(r, k, 4096, k);
    }
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERRFLAG |
                    CQE(ERNIC_OP_WRITE, 0));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, ERRFLAG |
                    CQE(ERNIC_OP_WRITE, 1));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 2), ==, CQE(ERNIC_OP_WRITE, 2));
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    g_assert_cmpuint(injected(r, 0, "cqe-error"), ==, 2);
    ernic_rig_stop(r);
}

/* nak: the peer's answer replaced by a chosen NAK. */
static void test_nak_fatal(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    fault_ok(r, 0, "nak,qp=2,type=remote-access");
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 7, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 64, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERRFLAG |
                    CQE(ERNIC_OP_WRITE, 7));
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_NAK_RECEIVED);
    g_assert_cmphex(ernic_rig_nak_syndrome(r, 0, QPN_A), ==, 0x62);
    g_assert_cmpuint(injected(r, 0, "nak"), ==, 1);
    ernic_rig_stop(r);
}

/*
 * Two QPs of one device in loopback: their frames never reach the wire,
 * and receive rules meet them all the same (found by the guest test: a
 * nak rule did nothing between QPs of one device).
 */
static void test_nak_loopback(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_setup_global(r, 0, 0);
    ernic_rig_setup_qp(r, 0, QPN_A, 0, QPN_B, PSN_A, PSN_B,
                       &ernic_rig_default_cfg, DEV_BASE(0));
    ernic_rig_setup_qp(r, 0, QPN_B, 0, QPN_A, PSN_B, PSN_A,
                       &ernic_rig_default_cfg, DEV_BASE(0) + 0x2000000);
    fault_ok(r, 0, "nak,qp=2,type=remote-op");
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 9, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 64, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERRFLAG |
                    CQE(ERNIC_OP_WRITE, 9));
    g_assert_cmphex(ernic_rig_nak_syndrome(r, 0, QPN_A), ==, 0x63);
    g_assert_cmpuint(injected(r, 0, "nak"), ==, 1);
    ernic_rig_stop(r);
}

/* RNR and PSN sequence NAKs are recovered from: the WRITE completes. */
static void test_nak_recovered(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t retries = ernic_rig_rd(r, 0, ERNIC_RETRYCNTSTS);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    fault_ok(r, 0, "nak,qp=2,type=rnr,count=2,rnr-timer=2");
    write_through(r, 1, 2048, 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 1));
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_INNCKPKTSTS) >> 16, ==, 2);
    fault_ok(r, 0, "nak,qp=2,type=psn-seq");
    write_through(r, 2, 2048, 2);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, CQE(ERNIC_OP_WRITE, 2));
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_RETRYCNTSTS), >, retries);
    g_assert_cmpuint(injected(r, 0, "nak"), ==, 3);
    ernic_rig_stop(r);
}

/* Each wire fault: the WRITE completes once, with its data whole. */
typedef struct WireCase {
    const char *name, *cmd, *counter;
    uint64_t hits;
} WireCase;

static const WireCase wire_cases[] = {
    { "drop", "drop,dir=rx,count=3", "drop", 3 },
    { "dup", "dup,count=5", "dup", 5 },
    { "reorder", "reorder,dir=rx,opcode=0x07,count=3", "reorder", 3 },
    { "delay", "delay,dir=rx,count=4,delay-us=300", "delay", 4 },
    { "corrupt-icrc", "corrupt,dir=rx,count=2", "corrupt", 2 },
    { "corrupt-psn", "corrupt,dir=rx,opcode=0x07,field=psn,xor=0x10",
      "corrupt", 1 },
    { "drop-acks", "drop,dir=tx,opcode=0x11,count=2", "drop", 2 },
};

static void test_wire(gconstpointer data)
{
    const WireCase *tc = data;
    ErnicRig *r = ernic_rig_start(NULL);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    fault_ok(r, 1, tc->cmd);
    write_through(r, 3, 16384, 3);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 3));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, 0);
    g_assert_cmpuint(injected(r, 1, tc->counter), ==, tc->hits);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/* A delayed frame arrives when it is due, on the virtual clock. */
static void test_delay_timing(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    fault_ok(r, 0, "delay,dir=tx,delay-us=2000");
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 64, 0, 0, 0, NULL);
    qtest_clock_step(r->qts, 1999000);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    {
        g_autofree char *a = armed(r, 0);

        g_assert_cmpstr(a, ==, "held frames: 1");
    }
    qtest_clock_step(r->qts, 2000);
    g_assert_true(ernic_rig_wire_read(r->d[0].fd, f, &len));
    g_assert_cmphex(f[F_BTH], ==, 0x04);
    ernic_rig_stop(r);
}

/*
 * A seed fixes which frames a rate hits: two runs, the same count. Each
 * WRITE is 16 packets, the least transmit window (docs/engine.md, choice
 * 12), so that every attempt goes whole in one turn whatever the window:
 * the frames sent do not depend on when the ACKs come, only on the drops.
 */
static uint64_t seeded_run(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint64_t n;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    fault_ok(r, 1, "drop,dir=rx,percent=20,seed=42");
    for (int k = 0; k < 4; k++) {
        write_through(r, k, 16384, 9 + k);
    }
    n = injected(r, 1, "drop");
    ernic_rig_stop(r);
    return n;
}

static void test_seed(void)
{
    uint64_t a = seeded_run();

    g_assert_cmpuint(a, >, 0);
    g_assert_cmpuint(seeded_run(), ==, a);
}

/*
 * set_link: the Ethernet path's STATUS and INTSTS[2]; nothing passes
 * while down, and the WRITE posted then completes once it is up.
 */
static void test_link(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    g_assert_cmphex(eth_rd(r, 0, ERNIC_ETH_STATUS), ==,
                    ERNIC_ETH_STATUS_VALID | ERNIC_ETH_STATUS_LINK_UP);
    qpci_io_writel(r->d[0].e.pdev, r->d[0].e.eth, ERNIC_ETH_INTEN,
                   ERNIC_ETH_INT_LINK);
    qtest_qmp_assert_success(r->qts, "{'execute': 'set_link', 'arguments':"
                             " {'name': 'ern0', 'up': false}}");
    g_assert_cmphex(eth_rd(r, 0, ERNIC_ETH_STATUS), ==,
                    ERNIC_ETH_STATUS_VALID);
    g_assert_cmphex(eth_rd(r, 0, ERNIC_ETH_INTSTS), ==, ERNIC_ETH_INT_LINK);
    qpci_io_writel(r->d[0].e.pdev, r->d[0].e.eth, ERNIC_ETH_INTSTS,
                   ERNIC_ETH_INT_LINK);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 5, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 64, MR_VA, RKEY, 0, NULL);
    qtest_clock_step(r->qts, 100000);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    qtest_qmp_assert_success(r->qts, "{'execute': 'set_link', 'arguments':"
                             " {'name': 'ern0', 'up': true}}");
    g_assert_cmphex(eth_rd(r, 0, ERNIC_ETH_STATUS), ==,
                    ERNIC_ETH_STATUS_VALID | ERNIC_ETH_STATUS_LINK_UP);
    g_assert_cmphex(eth_rd(r, 0, ERNIC_ETH_INTSTS), ==, ERNIC_ETH_INT_LINK);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 5));
    g_assert_cmpuint(injected(r, 0, "link-down"), ==, 1);
    g_assert_cmpuint(injected(r, 0, "link-up"), ==, 1);
    ernic_rig_stop(r);
}

/* The same commands from HMP: qom-set and qom-get. */
static void test_hmp(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree char *set = NULL, *get = NULL, *bad = NULL;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    set = qtest_hmp(r->qts, "qom-set /machine/peripheral/ern1 fault "
                    "drop,dir=rx,count=2");
    g_assert_cmpstr(set, ==, "");
    get = qtest_hmp(r->qts, "qom-get /machine/peripheral/ern1 fault");
    g_assert_nonnull(strstr(get, "drop,dir=rx,left=2"));
    bad = qtest_hmp(r->qts, "qom-set /machine/peripheral/ern1 fault nope");
    g_assert_nonnull(strstr(bad, "unknown command 'nope'"));
    write_through(r, 1, 4096, 7);
    g_assert_cmpuint(injected(r, 1, "drop"), ==, 2);
    ernic_rig_stop(r);
}

/* Nothing armed: nothing reported, every counter 0. */
static void test_off(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree char *a = NULL;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    write_through(r, 1, 8192, 1);
    a = armed(r, 0);
    g_assert_cmpstr(a, ==, "");
    g_assert_cmpuint(injected(r, 0, "drop") + injected(r, 0, "fatal") +
                     injected(r, 0, "cqe-error") + injected(r, 0, "nak"),
                     ==, 0);
    ernic_rig_stop(r);
}

/*
 * docs/debugging.md, "A pcap of the link": filter-dump on a netdev
 * records the RoCEv2 frames as sent, each with a valid ICRC.
 */
static void test_pcap(void)
{
    g_autofree char *path = g_strdup_printf("%s/ernic-pcap-%d.pcap",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *extra = g_strdup_printf(
        "-object filter-dump,id=dump0,netdev=n0,file=%s", path);
    g_autofree uint8_t *buf = NULL;
    ErnicRig *r = ernic_rig_start(extra);
    size_t size, off = 24;
    unsigned frames = 0, roce = 0;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    write_through(r, 1, 8192, 4);
    ernic_rig_stop(r);
    g_assert_true(g_file_get_contents(path, (char **)&buf, &size, NULL));
    unlink(path);
    g_assert_cmpuint(size, >, 24);
    g_assert_cmphex(ernic_rig_le32(buf), ==, 0xa1b2c3d4);         /* pcap, LE */
    g_assert_cmpuint(ernic_rig_le32(buf + 20), ==, 1);            /* Ethernet */
    while (off + 16 <= size) {
        uint32_t caplen = ernic_rig_le32(buf + off + 8);
        const uint8_t *f = buf + off + 16;

        g_assert_cmpuint(off + 16 + caplen, <=, size);
        frames++;
        if (caplen > F_BTH && lduw_be_p(f + 12) == 0x0800 &&
            lduw_be_p(f + 36) == 4791) {
            g_assert_cmphex(ernic_rig_le32(f + caplen - 4), ==,
                            qernic_icrc(f, caplen));
            roce++;
        }
        off += 16 + caplen;
    }
    /* 8 WRITE packets out, at least one ACK in. */
    g_assert_cmpuint(roce, >=, 9);
    g_assert_cmpuint(roce, ==, frames);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    for (size_t k = 0; k < ARRAY_SIZE(resp_codes); k++) {
        g_autofree char *path = g_strdup_printf("/ernic/fault/fatal/0x%02x",
                                                resp_codes[k].code);

        qtest_add_data_func(path, &resp_codes[k], test_fatal_resp);
    }
    for (size_t k = 0; k < ARRAY_SIZE(req_codes); k++) {
        g_autofree char *path = g_strdup_printf("/ernic/fault/fatal/0x%02x",
                                                req_codes[k].code);

        qtest_add_data_func(path, &req_codes[k], test_fatal_req);
    }
    qtest_add_func("/ernic/fault/fatal/direct", test_fatal_direct);
    qtest_add_func("/ernic/fault/fatal/atomic-qp", test_fatal_atomic_qp);
    qtest_add_func("/ernic/fault/refused", test_refused);
    qtest_add_func("/ernic/fault/cqe-error", test_cqe_error);
    qtest_add_func("/ernic/fault/nak/remote-access", test_nak_fatal);
    qtest_add_func("/ernic/fault/nak/recovered", test_nak_recovered);
    qtest_add_func("/ernic/fault/nak/loopback", test_nak_loopback);
    for (size_t k = 0; k < ARRAY_SIZE(wire_cases); k++) {
        g_autofree char *path = g_strdup_printf("/ernic/fault/wire/%s",
                                                wire_cases[k].name);

        qtest_add_data_func(path, &wire_cases[k], test_wire);
    }
    qtest_add_func("/ernic/fault/wire/delay-timing", test_delay_timing);
    qtest_add_func("/ernic/fault/wire/seed", test_seed);
    qtest_add_func("/ernic/fault/link", test_link);
    qtest_add_func("/ernic/fault/off", test_off);
    qtest_add_func("/ernic/fault/hmp", test_hmp);
    qtest_add_func("/ernic/debug/pcap", test_pcap);
    return g_test_run();
}
