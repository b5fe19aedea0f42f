/*
 * QTest for ernic against a hostile guest and a hostile wire: one test
 * for each defect found by the hardening review (docs/security.md), each
 * of which failed (crash, hang, wrong data, memory written or sent that
 * no WQE named) on the device before the fix.
 *
 * Every test runs under a watchdog: a qtest command that is not answered
 * within ERNIC_WATCHDOG_S seconds (the main loop hangs or spins) fails
 * the test instead of hanging it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"
#include "hw/rdma/ernic-config.h"

#define ERNIC_WATCHDOG_S    60

static void watchdog_fire(int sig)
{
    static const char msg[] = "Bail out! watchdog: QEMU did not answer\n";

    if (write(STDOUT_FILENO, msg, sizeof(msg) - 1)) {
        /* nothing more can be done */
    }
    _exit(1);
}

static void watchdog_arm(void)
{
    sigaction(SIGALRM, &(struct sigaction){ .sa_handler = watchdog_fire },
              NULL);
    alarm(ERNIC_WATCHDOG_S);
}

/* The QPCONFi value setup_qp() wrote, with another PMTU code. */
static uint32_t qpconf_pmtu(ErnicRig *r, int i, uint32_t qpn, uint32_t pmtu)
{
    return (ernic_rig_qrd(r, i, qpn, ERNIC_QPCONF) & ~ERNIC_QPCONF_PMTU_MASK) |
           (pmtu << ERNIC_QPCONF_PMTU_SHIFT);
}

static size_t udp_paylen(const uint8_t *f)
{
    /* UDP length less UDP, BTH, ICRC, pad; the test's frames have no ext. */
    return lduw_be_p(f + F_UDP + 4) - 8 - 12 - 4 - ((f[F_BTH + 1] >> 4) & 3);
}

/*
 * 1. A SEND_LAST with no SEND in progress, on a QP whose RQ depth is 0 and
 * whose LSTRQREQi opcode field has its reset value 0 (SEND_FIRST): once a
 * division by zero (SIGFPE). Now an opcode sequence error, FATAL 0x01.
 */
static void test_rq_depth_zero(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint8_t f[FRAME_MAX], a[FRAME_MAX];
    size_t len;

    watchdog_arm();
    cfg.rq_depth = 0;
    ernic_rig_connect_pair(r, &cfg);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_LSTRQREQ, (PSN_A - 1) & 0xffffff);
    len = ernic_rig_inject(r, f, 0x02, QPN_B, PSN_A, NULL, 0, 0);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x11);
    g_assert_cmphex(a[F_EXT], ==, 0x61);
    ernic_rig_poll_reg(r, 1, QOFF(QPN_B, ERNIC_STATQP), ERNIC_STATQP_FATAL,
                       ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_OPCODE_SEQ);
    ernic_rig_stop(r);
}

/*
 * 1b. The guest sets the RQ depth to 0 (and moves RQBAi) between the
 * FIRST and the LAST packet of a SEND: the message still lands in the
 * buffer its FIRST packet took, and STATRQPIDBi moves by one.
 */
static void test_rq_change_mid_message(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX], want[1100];
    uint64_t slot = DEV_BASE(1) + RQ_OFF;
    size_t len;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    len = ernic_rig_inject(r, f, 0x00, QPN_B, PSN_A, NULL, 0, 1024);
    memcpy(want, f + F_EXT, 1024);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_poll_reg(r, 1, QOFF(QPN_B, ERNIC_LSTRQREQ), 0xffffff, PSN_A);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_QDEPTH, SQ_DEPTH);
    ernic_rig_qwr64(r, 1, QPN_B, ERNIC_RQBA, ERNIC_RQBAMSB, DEV_BASE(1) +
                    SRC_OFF);
    len = ernic_rig_inject(r, f, 0x02, QPN_B, PSN_A + 1, NULL, 0, 76);
    memcpy(want + 1024, f + F_EXT, 76);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x11);
    g_assert_cmphex(a[F_EXT], ==, 0x1f);
    ernic_rig_assert_mem(r, slot, want, 1100);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * 2. The PMTU grows while a WRITE is half sent: the rest is still cut at
 * the PMTU the WQE was fetched with. Once the requester computed
 * MIN(pmtu, len - i * pmtu) with the new PMTU and sent guest memory past
 * the WQE's buffer.
 */
static void test_pmtu_change_write(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint32_t n = 128, len = n * 256;
    g_autofree uint8_t *src = NULL;
    uint8_t f[FRAME_MAX], ack[FRAME_MAX], ext[4];
    size_t flen;

    watchdog_arm();
    cfg.pmtu = ERNIC_PMTU_256;
    ernic_rig_connect_pair(r, &cfg);
    src = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, len, 7);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, len, MR_VA, RKEY, 0, NULL);
    for (uint32_t k = 0; k < n; k++) {
        flen = ernic_rig_wire_wait(r, 0, f);
        g_assert_cmphex(ernic_rig_be32(f + F_BTH + 8) & 0xffffff, ==,
                        (PSN_A + k) & 0xffffff);
        g_assert_cmpuint(udp_paylen(f) - (k ? 0 : 16), ==, 256);
        g_assert_cmpmem(f + F_EXT + (k ? 0 : 16), 256, src + k * 256, 256);
        if (k == 63) {
            /* The window (64 packets) is full: grow the PMTU. */
            ernic_rig_qwr(r, 0, QPN_A, ERNIC_QPCONF,
                          qpconf_pmtu(r, 0, QPN_A, ERNIC_PMTU_4096));
        }
        if (k >= 63) {
            /* From now on each packet is acknowledged as it comes. */
            stl_be_p(ext, 0x1f000001);
            flen = ernic_rig_respond(r, ack, 0x11, PSN_A + k, ext, 4, 0);
            ernic_rig_wire_write(r->d[0].fd, ack, flen);
        }
    }
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_CQHEAD), 0xffff, 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 1));
    ernic_rig_stop(r);
}

/*
 * 2b. The PMTU changes while READ responses arrive: they are checked and
 * placed with the PMTU the READ was sent with. Once the completer took
 * the new one (lengths wrapped below zero, data placed past the buffer).
 */
static void test_pmtu_change_read(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint8_t f[FRAME_MAX], ext[4], pay[1024];
    static const uint8_t op[4] = { 0x0d, 0x0e, 0x0e, 0x0f };
    uint64_t dst = DEV_BASE(0) + SRC_OFF;
    size_t len;

    watchdog_arm();
    cfg.pmtu = ERNIC_PMTU_256;
    ernic_rig_connect_pair(r, &cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_READ, dst,
                   1024, MR_VA, RKEY, 0, NULL);
    ernic_rig_wire_wait(r, 0, f);
    g_assert_cmphex(f[F_BTH], ==, 0x0c);
    for (int k = 0; k < 4; k++) {
        if (k == 1) {
            ernic_rig_qwr(r, 0, QPN_A, ERNIC_QPCONF,
                          qpconf_pmtu(r, 0, QPN_A, ERNIC_PMTU_512));
        }
        stl_be_p(ext, 0x1f000001);
        len = ernic_rig_respond(r, f, op[k], PSN_A + k, ext, k == 1 || k == 2 ?
                                0 : 4, 256);
        ernic_rig_wire_write(r->d[0].fd, f, len);
    }
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_CQHEAD), 0xffff, 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_READ, 2));
    for (int k = 0; k < 4; k++) {
        ernic_rig_fill(pay, 256, PSN_A + k);
        ernic_rig_assert_mem(r, dst + k * 256, pay, 256);
    }
    /* Nothing after the buffer. */
    g_assert_cmphex(qtest_readl(r->qts, dst + 1024), ==, 0);
    ernic_rig_stop(r);
}

/*
 * 3. Two devices on one QEMU hub, which delivers synchronously: the peer's
 * ACK arrives inside the sender's transmit call. Once ACKs were dropped
 * as ghosts, QPs hung, and packets went out that no WQE named.
 */
static void test_hub(void)
{
    ErnicRig *r = g_new0(ErnicRig, 1);
    QPCIBus *bus;
    static const uint32_t sizes[] = { 1, 100, 1024, 3000, 70000, 16 };
    uint64_t lbuf = DEV_BASE(0) + SRC_OFF, rbuf = DEV_BASE(1) + MR_OFF;
    uint32_t pi = 0, k;

    watchdog_arm();
    r->qts = qtest_init(RIG_MACHINE " "
                        "-netdev hubport,id=h0,hubid=0 "
                        "-netdev hubport,id=h1,hubid=0 "
                        "-device ernic,addr=04.0,netdev=h0,x-tx-map=on,"
                        "mac=52:54:00:e3:32:00 "
                        "-device ernic,addr=05.0,netdev=h1,x-tx-map=on,"
                        "mac=52:54:00:e3:32:01");
    bus = qpci_new_pc(r->qts, NULL);
    for (int i = 0; i < NDEV; i++) {
        ernic_rig_attach(r, i, r->qts, bus);
        r->d[i].fd = -1;
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (k = 0; k < 18; k++) {
        uint32_t n = sizes[k % ARRAY_SIZE(sizes)];
        static const uint8_t ops[] = {
            ERNIC_OP_WRITE, ERNIC_OP_READ, ERNIC_OP_SEND,
        };
        uint8_t op = ops[k % 3];
        g_autofree uint8_t *want = NULL;

        if (op == ERNIC_OP_READ) {
            want = ernic_rig_put_pattern(r, rbuf, n, k);
        } else {
            want = ernic_rig_put_pattern(r, lbuf, n, k);
        }
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, k, op, lbuf, n, MR_VA,
                       RKEY, 0, want);
        ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
        g_assert_cmphex(ernic_rig_cqe(r, 0, k), ==, CQE(op, k));
        if (op == ERNIC_OP_SEND) {
            ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF + (pi % RQ_DEPTH) *
                                 0x100000, want, n);
            ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, ++pi % RQ_DEPTH);
        } else {
            ernic_rig_assert_mem(r, op == ERNIC_OP_READ ? lbuf : rbuf, want, n);
        }
    }
    for (int i = 0; i < NDEV; i++) {
        g_assert_cmphex(ernic_rig_qrd(r, i, i ? QPN_B : QPN_A, ERNIC_STATQP) &
                        ERNIC_STATQP_FATAL, ==, 0);
    }
    ernic_rig_stop(r);
}

/*
 * 3b. Two QEMUs on -netdev stream over AF_UNIX, the receiving VM stopped:
 * its netdev stops reading and the socket fills. The sending QEMU stays
 * responsive (the netdev's writes wait in its buffer, the device holds
 * its frames) and delivers all once the peer runs again: with the
 * sender on the connecting end on any QEMU, and on the accepting end
 * only where QEMU makes that end non-blocking too (patches/qemu/0004-*,
 * found by hw/rdma/meson.build). Without it that end's write sleeps
 * until the peer reads, holding the main loop and the BQL, and the
 * clock steps below never come back: a QEMU bug, not the device's.
 *
 * The socket holds up to 4 MiB (patches/qemu/0005-*: 2 MiB asked, which
 * the kernel doubles) and the netdev's write buffer 544 KiB (0002-*), so
 * one QP's first window of 64 packets of 4 KiB no longer fills them:
 * STOP_QPS QPs each send theirs, 7 MiB in all.
 */
#define STOP_QPS        28
#define STOP_QPN(k)     (2 + (k))
#define STOP_BASE(i, k) (DEV_BASE(i) + 0x2000000 + (k) * ERNIC_RIG_PACKED_QP)

static bool stop_all_done(ErnicRig *r)
{
    for (int k = 0; k < STOP_QPS; k++) {
        if (ernic_rig_qrd(r, 0, STOP_QPN(k), ERNIC_CQHEAD) != 1) {
            return false;
        }
    }
    return true;
}

static void test_stream_peer_stopped(const void *data)
{
    bool sender_accepts = *(const bool *)data;
    g_autofree char *path = g_strdup_printf("%s/ernic-stop-%d.sock",
                                            g_get_tmp_dir(), (int)getpid());
    ErnicRigWire w = { .step_ns = 100000 };
    const uint32_t len = 0x100000;
    uint8_t wqe[ERNIC_WQE_SIZE];
    g_autofree uint8_t *want = NULL;
    ErnicRig *r;

    QEMU_BUILD_BUG_ON(STOP_QPN(STOP_QPS) > ERNIC_NUM_QP_DEFAULT);
    watchdog_arm();
    r = ernic_rig_start_unix_as(path, "", sender_accepts);
    for (int i = 0; i < NDEV; i++) {
        ernic_rig_setup_global(r, i, 0);
        for (int k = 0; k < STOP_QPS; k++) {
            ernic_rig_setup_packed_qp(r, i, STOP_QPN(k), STOP_BASE(i, k));
        }
    }
    want = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, len, 5);
    qtest_qmp_assert_success(r->d[1].e.qts, "{'execute': 'stop'}");
    qernic_wqe(wqe, ERNIC_OP_WRITE, 1, DEV_BASE(0) + SRC_OFF, len, MR_VA,
               RKEY, 0);
    for (int k = 0; k < STOP_QPS; k++) {
        qtest_memwrite(r->qts, STOP_BASE(0, k), wqe, sizeof(wqe));
        ernic_rig_qwr(r, 0, STOP_QPN(k), ERNIC_SQPI, 1);
    }
    for (int k = 0; k < 50; k++) {
        qtest_clock_step(r->d[0].e.qts, 10000);
    }
    for (int k = 0; k < STOP_QPS; k++) {
        g_assert_cmphex(ernic_rig_qrd(r, 0, STOP_QPN(k), ERNIC_CQHEAD), ==, 0);
    }
    qtest_qmp_assert_success(r->d[1].e.qts, "{'execute': 'cont'}");
    ERNIC_RIG_PUMP(r, &w, stop_all_done(r));
    for (int k = 0; k < STOP_QPS; k++) {
        g_assert_cmphex(qtest_readl(r->qts, STOP_BASE(0, k) +
                                    ERNIC_RIG_PACKED_CQ), ==,
                        CQE(ERNIC_OP_WRITE, 1));
        g_assert_false(ernic_rig_qrd(r, 0, STOP_QPN(k), ERNIC_STATQP) &
                       ERNIC_STATQP_FATAL);
    }
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, want, len);
    ernic_rig_stop(r);
    unlink(path);
}

/*
 * 4. The completion doorbell address points at the QP's own QPCONFi, and
 * the completion comes from the retransmit timer (retries spent). Once
 * the DMA re-entered the device, reset the engine mid-completion and the
 * main loop spun for ever. Now the DMA is refused: FATAL 0x06, QPCONFi
 * untouched.
 */
static void test_dma_to_own_bar(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint64_t bar = r->d[0].e.regs.addr;
    uint32_t qpconf;

    watchdog_arm();
    cfg.retry = 0;
    cfg.timeout = 8;
    ernic_rig_connect_pair(r, &cfg);
    g_assert_cmphex(bar, !=, 0);
    ernic_rig_qwr64(r, 0, QPN_A, ERNIC_CQDBADD, ERNIC_CQDBADDMSB,
                    bar + ERNIC_QP_OFFSET(QPN_A) + ERNIC_QPCONF);
    qpconf = ernic_rig_qrd(r, 0, QPN_A, ERNIC_QPCONF);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0x44, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 100, 0, 0, 0, NULL);
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_STATQP), ERNIC_STATQP_FATAL,
                       ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_QPCONF), ==, qpconf);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_RESPONSE_HANDLER);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERRFLAG |
                    CQE(ERNIC_OP_SEND, 0x44));
    ernic_rig_stop(r);
}

static void ewr(ErnicRig *r, uint32_t off, uint32_t val)
{
    qpci_io_writel(r->d[0].e.pdev, r->d[0].e.eth, off, val);
}

static uint32_t erd(ErnicRig *r, uint32_t off)
{
    return qpci_io_readl(r->d[0].e.pdev, r->d[0].e.eth, off);
}

/*
 * 5. Ethernet TX ring above RAM: a descriptor read fails. Once the bottom
 * half retried it for ever (the main loop spun); now the ring halts
 * (CTRL.TX_EN clears) and QEMU is idle.
 */
static void test_eth_tx_bad_ring(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    int k;

    watchdog_arm();
    ewr(r, ERNIC_ETH_TXBA, 0xfffff000);
    ewr(r, ERNIC_ETH_TXBAMSB, 0xff);
    ewr(r, ERNIC_ETH_TXSZ, 8);
    ewr(r, ERNIC_ETH_CTRL, ERNIC_ETH_CTRL_TX_EN);
    ewr(r, ERNIC_ETH_TXPI, 1);
    for (k = 0; k < 1000 && (erd(r, ERNIC_ETH_CTRL) & ERNIC_ETH_CTRL_TX_EN);
         k++) {
        qtest_clock_step(r->qts, 1000);
    }
    g_assert_cmphex(erd(r, ERNIC_ETH_CTRL) & ERNIC_ETH_CTRL_TX_EN, ==, 0);
    g_assert_cmphex(erd(r, ERNIC_ETH_TXCI), ==, 0);
    ernic_rig_assert_idle(r->qts, 500);
    ernic_rig_stop(r);
}

/*
 * 5b. The TX ring shrinks below TXCI. Once the bottom half compared the
 * raw TXCI with TXPI modulo the new size and rescheduled itself for ever.
 */
static void test_eth_tx_shrink(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint64_t b = DEV_BASE(0);
    uint8_t desc[16] = { 0 }, frame[60] = { 0 }, f[FRAME_MAX];
    size_t len;

    watchdog_arm();
    memset(frame, 0xff, 6);
    stw_be_p(frame + 12, 0x88b5);
    qtest_memwrite(r->qts, b + ETH_BUF_OFF, frame, sizeof(frame));
    stq_le_p(desc, b + ETH_BUF_OFF);
    stw_le_p(desc + 8, sizeof(frame));
    for (int k = 0; k < 8; k++) {
        qtest_memwrite(r->qts, b + ETH_TX_OFF + k * 16, desc, 16);
    }
    ewr(r, ERNIC_ETH_TXBA, b + ETH_TX_OFF);
    ewr(r, ERNIC_ETH_TXSZ, 8);
    ewr(r, ERNIC_ETH_CTRL, ERNIC_ETH_CTRL_TX_EN);
    ewr(r, ERNIC_ETH_TXPI, 6);
    for (int k = 0; k < 6; k++) {
        ernic_rig_wire_wait(r, 0, f);
    }
    g_assert_cmphex(erd(r, ERNIC_ETH_TXCI), ==, 6);
    ewr(r, ERNIC_ETH_TXSZ, 4);
    ewr(r, ERNIC_ETH_TXPI, 6);
    /* The bottom half does not spin, and nothing more was sent. */
    qtest_clock_step(r->qts, 1000000);
    ernic_rig_assert_idle(r->qts, 500);
    g_assert_cmphex(erd(r, ERNIC_ETH_TXCI), ==, 6);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    ernic_rig_stop(r);
}

/*
 * 6. Eight SQs of 65534 WQEs with a reserved opcode, all started at once
 * by enabling ERNIC. Once a single bottom-half run completed all 524272
 * (0.5 s of main loop); now a turn completes at most ERNIC_TURN_BUDGET,
 * so the guest sees CQHEADi move in steps.
 */
static void test_turn_bound(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint64_t sq = DEV_BASE(0) + SRC_OFF;
    uint32_t depth = 65535, head = 0;
    int k, reads = 0;

    watchdog_arm();
    qtest_memset(r->qts, sq, 0xff, (uint64_t)depth * ERNIC_WQE_SIZE);
    for (uint32_t q = 2; q < 10; q++) {
        ernic_rig_qwr64(r, 0, q, ERNIC_SQBA, ERNIC_SQBAMSB, sq);
        ernic_rig_qwr64(r, 0, q, ERNIC_CQBA, ERNIC_CQBAMSB, DEV_BASE(0) +
                        MR_OFF);
        ernic_rig_qwr(r, 0, q, ERNIC_QDEPTH, depth);
        ernic_rig_qwr(r, 0, q, ERNIC_QPCONF, ERNIC_QPCONF_QP_EN |
                      ERNIC_QPCONF_HW_HS_DIS);
        ernic_rig_qwr(r, 0, q, ERNIC_SQPI, depth - 1);
    }
    ernic_rig_wr(r, 0, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN);
    for (k = 0; k < 1000000 && head != depth - 1; k++) {
        head = ernic_rig_qrd(r, 0, 2, ERNIC_CQHEAD);
        if (head && head != depth - 1) {
            reads++;
        }
    }
    /* Seen part-way at least once: the work was split into turns. */
    g_assert_cmpint(reads, >, 0);
    ernic_rig_stop(r);
}

/*
 * 8. CQHEADi is set under the software override beyond the CQ: the next
 * CQE goes to CQHEADi modulo the depth, never past the CQ.
 */
static void test_cq_index_bound(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], ext[4];
    uint64_t cq = DEV_BASE(0) + CQ_OFF;
    size_t len;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    qtest_memset(r->qts, cq, 0, 0x2000);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 9, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 8, 0, 0, 0, NULL);
    ernic_rig_wire_wait(r, 0, f);
    ernic_rig_wr(r, 0, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_SWO);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_CQHEAD, 1000);
    stl_be_p(ext, 0x1f000001);
    len = ernic_rig_respond(r, f, 0x11, PSN_A, ext, 4, 0);
    ernic_rig_wire_write(r->d[0].fd, f, len);
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_STATQP), ERNIC_STATQP_OSQ_EMPTY,
                       ERNIC_STATQP_OSQ_EMPTY);
    g_assert_cmphex(qtest_readl(r->qts, cq + 1000 * 4), ==, 0);
    g_assert_cmphex(qtest_readl(r->qts, cq + (1000 % SQ_DEPTH) * 4), ==,
                    CQE(ERNIC_OP_SEND, 9));
    ernic_rig_stop(r);
}

/*
 * 8b. A "duplicate" READ whose PSN no READ ever had, asking for more than
 * any READ did: dropped. A true duplicate is answered again.
 */
static void test_dup_read_window(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX], ext[16];
    size_t len, alen;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF, 4096, 3);
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A,
                           ernic_rig_reth(ext, MR_VA, RKEY, 1024), 16, 0);
    alen = ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x10);
    g_assert_cmpuint(alen, >, 1024);
    /* The same READ again: answered again. */
    alen = ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x10);
    g_assert_cmphex(ernic_rig_be32(a + F_BTH + 8) & 0xffffff, ==, PSN_A);
    /* Older than anything seen, 2 MiB long: dropped. */
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A - 100,
                           ernic_rig_reth(ext, MR_VA, RKEY, MR_LEN), 16, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    /* Starts inside the READ but runs past it: dropped. */
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A,
                           ernic_rig_reth(ext, MR_VA, RKEY, 4096), 16, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    for (int k = 0; k < 100; k++) {
        qtest_clock_step(r->qts, 10000);
        g_assert_false(ernic_rig_wire_read(r->d[1].fd, a, &alen));
    }
    ernic_rig_stop(r);
}

/*
 * 8c. Retries no count limits (retry-fatal disabled, count spent) wait at
 * least 1 ms each: with a 8 us timeout, 10 ms bring about 10, not 1250.
 */
static void test_unlimited_retry_rate(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint8_t f[FRAME_MAX];
    size_t len;
    int sends = 0;

    watchdog_arm();
    cfg.timeout = 1;
    cfg.retry = 0;
    ernic_rig_connect_pair(r, &cfg);
    ernic_rig_wr(r, 0, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_RETRY_FATAL_DIS);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 8, 0, 0, 0, NULL);
    for (int k = 0; k < 1000; k++) {
        while (ernic_rig_wire_read(r->d[0].fd, f, &len)) {
            sends++;
        }
        qtest_clock_step(r->qts, 10000);
    }
    while (ernic_rig_wire_read(r->d[0].fd, f, &len)) {
        sends++;
    }
    g_assert_cmpint(sends, >=, 5);
    g_assert_cmpint(sends, <=, 12);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * 9. The device's own DMA fails (an address outside guest RAM): the WQE
 * completes in error with FATAL 0x05 and nothing is sent; an incoming
 * WRITE to a region whose memory is not there is refused with Remote
 * Operational Error and FATAL 0x06. Once both were silent: zeros were
 * sent, and the WRITE was acknowledged and lost. dma_fail_write(): a
 * WRITE of @len bytes of data at @laddr that cannot be read.
 */
static void dma_fail_write(uint64_t laddr, uint32_t len, uint16_t wrid)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX];
    size_t flen;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid, ERNIC_OP_WRITE,
                   laddr, len, MR_VA, RKEY, 0, NULL);
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_STATQP), ERNIC_STATQP_FATAL,
                       ERNIC_STATQP_FATAL);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &flen));
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, ERRFLAG |
                    CQE(ERNIC_OP_WRITE, wrid));
    ernic_rig_stop(r);
}

static void test_dma_fail_requester(void)
{
    dma_fail_write(0xfff0000000000ULL, 100, 5);
}

/*
 * The same for data that starts in guest RAM and runs past its end: the
 * device maps payload in place only where all of it is RAM, and reads
 * anything else as before (docs/engine.md, "Payload in place"). Had it
 * sent what it could map, or what a bounce buffer held, a frame of
 * partly garbage would have left.
 */
static void test_dma_fail_ram_end(void)
{
    dma_fail_write(RIG_RAM_END - 0x100, 4096, 6);
}

static void test_dma_fail_responder(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], a[FRAME_MAX], ext[16];
    size_t len;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_wr(r, 1, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_BUFBASEADDRMSB,
                 0xfff00);
    len = ernic_rig_inject(r, f, 0x0a, QPN_B, PSN_A,
                           ernic_rig_reth(ext, MR_VA, RKEY, 64), 16, 64);
    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x11);
    g_assert_cmphex(a[F_EXT], ==, 0x63);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_RESPONSE_HANDLER);
    ernic_rig_stop(r);
}

/*
 * 7. Truncated frames: 14 bytes of EtherType IPv4 or IPv6 and every length
 * up to a whole frame. Once the IPv4 IHL byte was read before the length
 * check (one byte past a 14-byte frame). The short ones are dropped as
 * non-RoCE or malformed; the whole one is received.
 */
static void test_truncated_frames(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], full[FRAME_MAX];
    size_t len, flen;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    flen = ernic_rig_inject(r, full, 0x04, QPN_B, PSN_A, NULL, 0, 8);
    for (len = 14; len <= flen; len++) {
        memcpy(f, full, len);
        ernic_rig_wire_write(r->d[1].fd, f, len);
        stw_be_p(f + 12, 0x86dd);
        ernic_rig_wire_write(r->d[1].fd, f, len);
    }
    /* The one whole frame was a SEND: its ACK comes back. */
    len = ernic_rig_wire_wait(r, 1, f);
    g_assert_cmphex(f[F_BTH], ==, 0x11);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_stop(r);
}

/*
 * Found by the wire-fault soak: duplicates of READs still being answered
 * took resources of their own, until a new READ found none: FATAL 0x10.
 * Ten READs of 1 MiB, eight duplicates of the first, then an eleventh
 * READ, all in one burst: the eleventh is answered, nothing is FATAL.
 */
static void test_dup_read_resources(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autoptr(GByteArray) burst = g_byte_array_new();
    uint8_t f[FRAME_MAX], ext[16];
    uint32_t last = (PSN_A + 10 * 1024) & 0xffffff;
    size_t len;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_reth(ext, MR_VA, RKEY, 0x100000);
    for (int k = 0; k < 19; k++) {
        uint32_t psn = PSN_A + (k < 10 ? k : k < 18 ? 0 : 10) * 1024;

        len = ernic_rig_inject(r, f, 0x0c, QPN_B, psn, ext, 16, 0);
        ernic_rig_burst_add(burst, f, len);
    }
    g_assert_cmpint(send(r->d[1].fd, burst->data, burst->len, 0), ==,
                    burst->len);
    ernic_rig_read_until_response(r, last);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * Found by a guest migrated mid ib_read_bw: READ A (1 packet) answered,
 * READ B (2 MiB) being answered, then a duplicate of A (the requester
 * went back to A). A's response must come before more of B's: the
 * requester takes a response of B while it waits for A as an implied NAK
 * of A, asks again, and never progresses (before: all of B's 2048
 * responses first, then A's; seven rounds of it spent the retry count).
 * After A's response nothing more comes until B is asked again; then B
 * is answered from its first packet.
 */
static void test_dup_read_order(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], ext[16];
    uint32_t psn_b = PSN_A + 1;
    size_t len;
    unsigned b_pkts = 0;
    bool a_seen = false;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A,
                           ernic_rig_reth(ext, MR_VA, RKEY, 64), 16, 0);
    len = ernic_rig_exchange(r, f, len, f);
    g_assert_cmphex(f[F_BTH], ==, 0x10);
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, psn_b,
                           ernic_rig_reth(ext, MR_VA, RKEY, MR_LEN), 16, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    /* Unread, B's responses stop on a full socket. */
    qtest_clock_step(r->qts, 1000000);
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A,
                           ernic_rig_reth(ext, MR_VA, RKEY, 64), 16, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    qtest_clock_step(r->qts, 1000);
    while (!a_seen) {
        len = ernic_rig_wire_wait(r, 1, f);
        if (ernic_rig_be32(f + F_BTH + 8) == PSN_A) {
            g_assert_cmphex(f[F_BTH], ==, 0x10);
            a_seen = true;
        } else {
            b_pkts++;
        }
    }
    g_assert_cmpuint(b_pkts, <, MR_LEN / 1024);
    for (int k = 0; k < 100; k++) {
        qtest_clock_step(r->qts, 100000);
        g_assert_false(ernic_rig_wire_read(r->d[1].fd, f, &len));
    }
    /* B asked again: answered from its first packet. */
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, psn_b,
                           ernic_rig_reth(ext, MR_VA, RKEY, MR_LEN), 16, 0);
    len = ernic_rig_exchange(r, f, len, f);
    g_assert_cmphex(f[F_BTH], ==, 0x0d);
    g_assert_cmphex(ernic_rig_be32(f + F_BTH + 8), ==, psn_b);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * Found by a guest migrated mid ib_read_bw: a requester that timed out
 * twice re-asks READs it then completes from the first answers, and asks
 * for new ones. 16 READs answered, the 16 again (each queued again), then
 * a 17th new READ, in one burst: it takes the place of the oldest
 * duplicate and is answered; before, FATAL 0x10 and a NAK-Invalid.
 */
static void test_dup_read_replay_evict(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autoptr(GByteArray) burst = g_byte_array_new();
    uint8_t f[FRAME_MAX], ext[16];
    uint32_t last = (PSN_A + 16) & 0xffffff;
    size_t len;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_reth(ext, MR_VA, RKEY, 64);
    for (int k = 0; k < 16; k++) {
        len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A + k, ext, 16, 0);
        len = ernic_rig_exchange(r, f, len, f);
        g_assert_cmphex(f[F_BTH], ==, 0x10);
    }
    for (int k = 0; k < 17; k++) {
        len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A + k, ext, 16, 0);
        ernic_rig_burst_add(burst, f, len);
    }
    g_assert_cmpint(send(r->d[1].fd, burst->data, burst->len, 0), ==,
                    burst->len);
    ernic_rig_read_until_response(r, last);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * Found by the wire-fault soak: a READ response that acknowledges older
 * WRITEs (implied ACK) while an older READ still waits for its response.
 * The index of that READ was taken before the WRITEs left the queue, so
 * it named the newer READ: the implied NAK was lost and the response was
 * taken out of order. A duplicate of it, after the older READ's response,
 * then found its READ completed: FATAL 0x1b. Here: WRITE, WRITE, READ,
 * WRITE, READ; responses for the last READ, the first READ, and the last
 * READ again. All five complete without error, the first READ is asked
 * again at once, and the last READ's data is in place.
 */
static void test_implied_nak_index(void)
{
    static const uint8_t ops[5] = {
        ERNIC_OP_WRITE, ERNIC_OP_WRITE, ERNIC_OP_READ, ERNIC_OP_WRITE,
        ERNIC_OP_READ,
    };
    ErnicRig *r = ernic_rig_start(NULL);
    uint64_t dst = DEV_BASE(0) + SRC_OFF;
    uint8_t f[FRAME_MAX], ext[4], pay[64];
    size_t len;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (int k = 0; k < 5; k++) {
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, k, ops[k], dst + k *
                       0x1000, 64, MR_VA, RKEY, 0, NULL);
    }
    for (int k = 0; k < 5; k++) {
        ernic_rig_wire_wait(r, 0, f);
        g_assert_cmphex(ernic_rig_be32(f + F_BTH + 8) & 0xffffff, ==,
                        PSN_A + k);
    }
    stl_be_p(ext, 0x1f000003);
    len = ernic_rig_respond(r, f, 0x10, PSN_A + 4, ext, 4, 64);
    ernic_rig_wire_write(r->d[0].fd, f, len);
    /* Implied NAK of the first READ: it is asked for again. */
    ernic_rig_wire_wait(r, 0, f);
    g_assert_cmphex(f[F_BTH], ==, 0x0c);          /* READ request */
    g_assert_cmphex(ernic_rig_be32(f + F_BTH + 8) & 0xffffff, ==, PSN_A + 2);

    stl_be_p(ext, 0x1f000003);
    len = ernic_rig_respond(r, f, 0x10, PSN_A + 2, ext, 4, 64);
    ernic_rig_wire_write(r->d[0].fd, f, len);
    stl_be_p(ext, 0x1f000005);
    len = ernic_rig_respond(r, f, 0x10, PSN_A + 4, ext, 4, 64);
    ernic_rig_wire_write(r->d[0].fd, f, len);
    ernic_rig_wire_write(r->d[0].fd, f, len);
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_CQHEAD), 0xffff, 5);
    for (int k = 0; k < 5; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 0, k), ==, CQE(ops[k], k));
    }
    ernic_rig_fill(pay, 64, PSN_A + 4);
    ernic_rig_assert_mem(r, dst + 4 * 0x1000, pay, 64);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * Found by a guest migrated mid ib_read_bw: READ 1's response is lost and
 * eight stale copies of READ 2's response arrive (a link that came back
 * delivered what it held). They imply one loss: READ 1 is asked again
 * once, not once per copy (before: seven retries at once, the eighth
 * copy made the QP FATAL 0x06). Both READs then complete.
 */
static void test_stale_implied_nak(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint64_t dst = DEV_BASE(0) + SRC_OFF;
    uint8_t f[FRAME_MAX], resp2[FRAME_MAX], ext[4], pay[64];
    size_t len, len2;
    unsigned reasks = 0;

    watchdog_arm();
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    for (int k = 0; k < 2; k++) {
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, k, ERNIC_OP_READ,
                       dst + k * 0x1000, 64, MR_VA, RKEY, 0, NULL);
        ernic_rig_wire_wait(r, 0, f);
    }
    stl_be_p(ext, 0x1f000002);
    len2 = ernic_rig_respond(r, resp2, 0x10, PSN_A + 1, ext, 4, 64);
    for (int k = 0; k < 8; k++) {
        ernic_rig_wire_write(r->d[0].fd, resp2, len2);
    }
    for (int k = 0; k < 200; k++) {
        qtest_clock_step(r->qts, 1000);
        while (ernic_rig_wire_read(r->d[0].fd, f, &len)) {
            g_assert_cmphex(f[F_BTH], ==, 0x0c);
            reasks += (ernic_rig_be32(f + F_BTH + 8) & 0xffffff) == PSN_A;
        }
    }
    g_assert_cmpuint(reasks, ==, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    stl_be_p(ext, 0x1f000001);
    len = ernic_rig_respond(r, f, 0x10, PSN_A, ext, 4, 64);
    ernic_rig_wire_write(r->d[0].fd, f, len);
    ernic_rig_wire_write(r->d[0].fd, resp2, len2);
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_CQHEAD), 0xffff, 2);
    for (int k = 0; k < 2; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 0, k), ==, CQE(ERNIC_OP_READ, k));
        ernic_rig_fill(pay, 64, PSN_A + k);
        ernic_rig_assert_mem(r, dst + k * 0x1000, pay, 64);
    }
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    static const bool sender_connects;
#ifdef CONFIG_ERNIC_STREAM_ACCEPT_NONBLOCK
    static const bool sender_accepts = true;
#endif

    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/ernic/hardening/rq-depth-zero", test_rq_depth_zero);
    qtest_add_func("/ernic/hardening/rq-change-mid-message",
                   test_rq_change_mid_message);
    qtest_add_func("/ernic/hardening/pmtu-change-write",
                   test_pmtu_change_write);
    qtest_add_func("/ernic/hardening/pmtu-change-read",
                   test_pmtu_change_read);
    qtest_add_func("/ernic/hardening/hub", test_hub);
    qtest_add_data_func("/ernic/hardening/stream-peer-stopped",
                        &sender_connects, test_stream_peer_stopped);
#ifdef CONFIG_ERNIC_STREAM_ACCEPT_NONBLOCK
    qtest_add_data_func("/ernic/hardening/stream-peer-stopped-accepting",
                        &sender_accepts, test_stream_peer_stopped);
#endif
    qtest_add_func("/ernic/hardening/dma-to-own-bar", test_dma_to_own_bar);
    qtest_add_func("/ernic/hardening/eth-tx-bad-ring", test_eth_tx_bad_ring);
    qtest_add_func("/ernic/hardening/eth-tx-shrink", test_eth_tx_shrink);
    qtest_add_func("/ernic/hardening/turn-bound", test_turn_bound);
    qtest_add_func("/ernic/hardening/cq-index-bound", test_cq_index_bound);
    qtest_add_func("/ernic/hardening/dup-read-window", test_dup_read_window);
    qtest_add_func("/ernic/hardening/unlimited-retry-rate",
                   test_unlimited_retry_rate);
    qtest_add_func("/ernic/hardening/dma-fail/requester",
                   test_dma_fail_requester);
    qtest_add_func("/ernic/hardening/dma-fail/responder",
                   test_dma_fail_responder);
    qtest_add_func("/ernic/hardening/dma-fail/ram-end",
                   test_dma_fail_ram_end);
    qtest_add_func("/ernic/hardening/truncated-frames",
                   test_truncated_frames);
    qtest_add_func("/ernic/hardening/soak/implied-nak-index",
                   test_implied_nak_index);
    qtest_add_func("/ernic/hardening/soak/dup-read-resources",
                   test_dup_read_resources);
    qtest_add_func("/ernic/hardening/dup-read-replay-evict",
                   test_dup_read_replay_evict);
    qtest_add_func("/ernic/hardening/dup-read-order", test_dup_read_order);
    qtest_add_func("/ernic/hardening/stale-implied-nak",
                   test_stale_implied_nak);

    return g_test_run();
}
