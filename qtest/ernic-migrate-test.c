/*
 * QTest: migration of the ernic device (docs/migration.md).
 *
 * The rig's QEMU (two devices, the program as the wire between them) is
 * saved with QMP "migrate" to a file in the middle of a message and
 * loaded by a new QEMU with "-incoming defer"; the transport carries on
 * there, covering frames lost on the way by retransmission. Every test
 * ends in verified data, exactly one completion per WQE, or a refused
 * stream.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"
#include "hw/rdma/ernic_ext_regs.h"

#define NSEC_PER_SEC    1000000000LL
#include "qobject/qdict.h"
#include "qobject/qlist.h"

static char *tmpdir;
/* -device options of the rig a migration loads into (NULL: default). */
static const char *mig_devopts;
static const char *mig_extra;          /* both sides' objects */
/* What the tests leave in tmpdir. */
static const char *const tmp_files[] = { "state", "bad", "snap.qcow2" };

/*
 * Migration helpers
 */

/* The virtual clock, moved by 1 ns: qtest has no command that reads it. */
static int64_t clock_now(QTestState *qts)
{
    return qtest_clock_step(qts, 1);
}

/* Poll query-migrate on @qts until it ends; true if it completed. */
static bool mig_finish(QTestState *qts)
{
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

    for (;;) {
        QDict *rsp = qtest_qmp(qts, "{'execute': 'query-migrate'}");
        QDict *ret = qdict_get_qdict(rsp, "return");
        const char *st = qdict_haskey(ret, "status") ?
                         qdict_get_str(ret, "status") : "none";
        int done = !strcmp(st, "completed") ? 1 :
                   !strcmp(st, "failed") ? 0 : -1;

        if (done == 0 && qdict_haskey(ret, "error-desc")) {
            g_test_message("migration failed: %s",
                           qdict_get_str(ret, "error-desc"));
        }
        qobject_unref(rsp);
        if (done >= 0) {
            return done;
        }
        g_assert(g_get_monotonic_time() < deadline);
        g_usleep(2000);
    }
}

static char *mig_uri(const char *name)
{
    return g_strdup_printf("file:%s/%s", tmpdir, name);
}

static void mig_save(ErnicRig *r, const char *name)
{
    g_autofree char *uri = mig_uri(name);

    qtest_qmp_assert_success(r->qts, "{'execute': 'migrate',"
                             " 'arguments': {'uri': %s}}", uri);
    g_assert_true(mig_finish(r->qts));
}

/* The rig's process and its ends of the wire go; frames on it are lost. */
static void rig_release(ErnicRig *r)
{
    for (int i = 0; i < NDEV; i++) {
        close(r->d[i].fd);
        g_free(r->d[i].e.pdev);
    }
    qpci_free_pc(r->d[0].bus);
    qtest_quit(r->qts);
}

/* A process that failed to load goes, with its ends of the wire. */
static void rig_abandon(ErnicRig *r)
{
    qtest_quit(r->qts);
    for (int i = 0; i < NDEV; i++) {
        close(r->d[i].fd);
    }
}

/* A new process loads @name; true (and the rig attached) if it did. */
static bool mig_load(ErnicRig *r, const char *name, const char *extra)
{
    g_autofree char *uri = mig_uri(name);
    g_autofree char *args = g_strdup_printf("%s %s -incoming defer",
                                            mig_extra ? mig_extra : "",
                                            extra ? extra : "");

    ernic_rig_launch_dev(r, mig_devopts, args);
    qtest_qmp_assert_success(r->qts, "{'execute': 'migrate-incoming',"
                             " 'arguments': {'uri': %s,"
                             " 'exit-on-error': false}}", uri);
    if (!mig_finish(r->qts)) {
        return false;
    }
    ernic_rig_attach_all(r);
    return true;
}

/* Save the rig's QEMU and go on in a new one. */
static void rig_migrate(ErnicRig *r)
{
    int64_t now = clock_now(r->qts);

    mig_save(r, "state");
    rig_release(r);
    g_assert_true(mig_load(r, "state", NULL));
    /*
     * A machine's virtual clock moves with it (the "timer" section), but
     * the qtest accelerator's counter is not machine state: the new
     * process starts at 0 and is set to the saved time before anything
     * else, so that the loaded timers are due when they were.
     */
    g_assert_cmpint(qtest_clock_set(r->qts, now), ==, now);
}

/* Forward the first @keep frames of device @from, then drop its frames. */
typedef struct Cut {
    int from;
    unsigned keep;
    unsigned seen;
} Cut;

static ErnicRigVerdict cut_filter(void *opaque, int from, const uint8_t *f,
                                  size_t len)
{
    Cut *c = opaque;

    if (from != c->from) {
        return ERNIC_RIG_FWD;
    }
    return ++c->seen > c->keep ? ERNIC_RIG_DROP : ERNIC_RIG_FWD;
}

/* Move frames through @w for a while more: what is in flight is cut. */
static void drain(ErnicRig *r, ErnicRigWire *w)
{
    for (int k = 0; k < 50; k++) {
        ernic_rig_pump_once(r, w);
    }
}

/* Let 40 frames of device @from through, then none: a message is cut. */
static void cut_after_40(ErnicRig *r, int from)
{
    Cut cut = { .from = from, .keep = 40 };
    ErnicRigWire w = { .filter = cut_filter, .opaque = &cut };

    ERNIC_RIG_PUMP(r, &w, cut.seen > cut.keep);
    drain(r, &w);
}

/*
 * The register file
 */

#define XMR_INDEX       77

static void snapshot(ErnicRig *r, uint32_t *v)
{
    size_t n = 0;

    for (int i = 0; i < NDEV; i++) {
        for (uint32_t off = ERNIC_GCSR_BASE; off < ERNIC_QP_BASE; off += 4) {
            v[n++] = ernic_rig_rd(r, i, off);
        }
        for (uint32_t qpn = 1; qpn <= 32; qpn++) {
            for (uint32_t off = 0; off < ERNIC_QP_STRIDE; off += 4) {
                v[n++] = ernic_rig_qrd(r, i, qpn, off);
            }
        }
        for (uint32_t off = 0; off < ERNIC_PDT_STRIDE; off += 4) {
            v[n++] = ernic_rig_rd(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + off);
        }
        for (uint32_t off = ERNIC_EXT_BASE; off < ERNIC_EXT_BASE + 0x80;
             off += 4) {
            v[n++] = off == ERNIC_MRCMD ? 0 : ernic_rig_rd(r, i, off);
        }
        for (uint32_t off = 0; off < 0x40; off += 4) {
            v[n++] = qpci_io_readl(r->d[i].e.pdev, r->d[i].e.eth, off);
        }
    }
}

#define SNAP_WORDS  (NDEV * (0x80 + 32 * 64 + 64 + 32 + 16))

/*
 * Every register of both devices reads the same after migration: global,
 * per QP, a PD table entry, ERNIC-X (with an MR table entry read back
 * through its window) and the Ethernet path.
 */
static void test_registers(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree uint32_t *before = g_new0(uint32_t, SNAP_WORDS);
    g_autofree uint32_t *after = g_new0(uint32_t, SNAP_WORDS);

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_wr(r, 1, ERNIC_EXTCTRL, ERNIC_EXT_F_MR);
    ernic_rig_wr(r, 1, ERNIC_MRKEY, 0x33 | ERNIC_MR_VALID <<
                 ERNIC_MRKEY_STATE_SHIFT);
    ernic_rig_wr(r, 1, ERNIC_MRPD, PD_NUM);
    ernic_rig_wr(r, 1, ERNIC_MRACC, ERNIC_MRACC_PHYS | ERNIC_MRACC_LOCAL_WRITE);
    ernic_rig_wr(r, 1, ERNIC_MRIOVALO, 0x1000);
    ernic_rig_wr(r, 1, ERNIC_MRLENLO, 0x2000);
    ernic_rig_wr(r, 1, ERNIC_MRPBLLO, DEV_BASE(1) + MR_OFF);
    ernic_rig_wr(r, 1, ERNIC_MRIDX, XMR_INDEX);
    ernic_rig_wr(r, 1, ERNIC_MRCMD, ERNIC_MRCMD_WRITE);
    g_assert_cmpuint(ernic_rig_rd(r, 1, ERNIC_MRSTS), ==, ERNIC_MRSTS_OK);
    /* The window is cleared: the entry must come back from the table. */
    ernic_rig_wr(r, 1, ERNIC_MRKEY, 0);
    ernic_rig_wr(r, 1, ERNIC_MRPBLLO, 0);
    qpci_io_writel(r->d[0].e.pdev, r->d[0].e.eth, ERNIC_ETH_TXSZ, 16);
    ernic_rig_qwr(r, 0, 7, ERNIC_QPADVCONF, 0x12345678);
    snapshot(r, before);

    rig_migrate(r);
    snapshot(r, after);
    for (size_t k = 0; k < SNAP_WORDS; k++) {
        if (before[k] != after[k]) {
            g_error("register word %zu: 0x%08x before, 0x%08x after", k,
                    before[k], after[k]);
        }
    }
    ernic_rig_wr(r, 1, ERNIC_MRCMD, ERNIC_MRCMD_READ);
    g_assert_cmpuint(ernic_rig_rd(r, 1, ERNIC_MRSTS), ==, ERNIC_MRSTS_OK);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRKEY), ==,
                    0x33 | ERNIC_MR_VALID << ERNIC_MRKEY_STATE_SHIFT);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_MRPBLLO), ==, DEV_BASE(1) +
                    MR_OFF);
    ernic_rig_stop(r);
}

/*
 * Messages cut by a migration
 */

#define MSG_LEN     200000      /* 196 packets of 1 KiB */

/*
 * The one WQE posted (@op, @wrid) completes after the cut, its @p bytes
 * land at @dst, nothing else completes; then the rig stops.
 */
static void finish_one(ErnicRig *r, uint64_t dst, const uint8_t *p,
                       uint8_t op, uint16_t wrid)
{
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, dst, p, MSG_LEN);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(op, wrid));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 1);
    ernic_rig_stop(r);
}

/*
 * A WRITE whose frames stop after 40; two seconds of virtual time later
 * the machine migrates. The retry timer set before (4.3 s, TIMEOUTCONF
 * 20) fires in the new process when it would have in the old one; the
 * message completes once, every byte in place.
 */
static void test_write_timer(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    Cut cut = { .from = 0, .keep = 40 };
    ErnicRigWire w = { .filter = cut_filter, .opaque = &cut };
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    uint8_t f[FRAME_MAX];
    g_autofree uint8_t *p = NULL;
    int64_t t_cut, t_retry;
    size_t len;

    cfg.timeout = 20;
    ernic_rig_connect_pair(r, &cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MSG_LEN, 11);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 7, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, MSG_LEN, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, cut.seen > cut.keep);
    drain(r, &w);
    t_cut = clock_now(r->qts);
    qtest_clock_step(r->qts, 2 * NSEC_PER_SEC);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    g_assert_false(ernic_rig_all_done(r, 0, QPN_A));

    rig_migrate(r);
    /* QEMU announces the moved NICs (RARP, not RoCE): those are skipped. */
    while (!ernic_rig_wire_read(r->d[0].fd, f, &len) || lduw_be_p(f + 12) !=
           0x0800) {
        g_assert_cmpint(clock_now(r->qts) - t_cut, <,
                        5 * NSEC_PER_SEC);
        qtest_clock_step(r->qts, 1000000);
    }
    t_retry = clock_now(r->qts);
    g_test_message("first frame after load: opcode 0x%02x PSN 0x%06x at +%"
                   PRId64 " ns", f[F_BTH],
                   ernic_rig_be32(f + F_BTH + 8) & 0xffffff, t_retry - t_cut);
    /* 4.096 us << 20 = 4.295 s after it was set, a little before t_cut. */
    g_assert_cmpint(t_retry - t_cut, >, 4200000000LL);
    g_assert_cmpint(t_retry - t_cut, <=, 4300000000LL);
    ernic_rig_wire_write(r->d[1].fd, f, len);

    finish_one(r, DEV_BASE(1) + MR_OFF, p, ERNIC_OP_WRITE, 7);
}

/*
 * layout=reconic (docs/boards.md): a WRITE from device 0's card memory into
 * device 1's, cut after 40 packets, and the machine moved. The card
 * memory is a RAM block (a marker written before the move is still there
 * after it), the QDMA bridge windows come along in their subsection, and
 * the retransmission after the load reads and writes card memory again.
 */
static void reconic_run(const char *devopts, const char *extra)
{
    ErnicRig *r = g_new0(ErnicRig, 1);
    Cut cut = { .from = 0, .keep = 40 };
    ErnicRigWire w = { .filter = cut_filter, .opaque = &cut };
    uint32_t axib = ERNIC_RN_AXIB_BASE + 3 * ERNIC_RN_AXIB_STRIDE +
                    ERNIC_RN_AXIB_XLATE_MSB;
    g_autofree uint8_t *p = g_malloc(MSG_LEN);
    g_autofree uint8_t *got = g_malloc(MSG_LEN);
    uint8_t mark[8];

    mig_devopts = devopts;
    mig_extra = extra;
    ernic_rig_launch_dev(r, mig_devopts, mig_extra);
    ernic_rig_attach_all(r);
    ernic_rig_rn_bridge(r, 0);
    ernic_rig_rn_bridge(r, 1);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_wr(r, 1, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_BUFBASEADDRLSB,
                 0x100000);
    ernic_rig_wr(r, 1, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_BUFBASEADDRMSB,
                 ERNIC_RN_CARD_ADDR >> 32);
    qpci_io_writel(r->d[1].e.pdev, r->d[1].e.regs, axib, 0x60);
    qpci_memwrite(r->d[1].e.pdev, r->d[1].card, 0xf00000, "moved ok", 8);
    ernic_rig_fill(p, MSG_LEN, 21);
    qpci_memwrite(r->d[0].e.pdev, r->d[0].card, 0x200000, p, MSG_LEN);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 9, ERNIC_OP_WRITE,
                   ERNIC_RN_CARD_ADDR | 0x200000, MSG_LEN, MR_VA, RKEY, 0,
                   NULL);
    ERNIC_RIG_PUMP(r, &w, cut.seen > cut.keep);
    drain(r, &w);

    rig_migrate(r);
    g_assert_cmphex(qpci_io_readl(r->d[1].e.pdev, r->d[1].e.regs, axib), ==,
                    0x60);
    qpci_memread(r->d[1].e.pdev, r->d[1].card, 0xf00000, mark, sizeof(mark));
    g_assert_cmpmem(mark, sizeof(mark), "moved ok", 8);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 9));
    qpci_memread(r->d[1].e.pdev, r->d[1].card, 0x100000, got, MSG_LEN);
    g_assert_cmpmem(got, MSG_LEN, p, MSG_LEN);
    mig_devopts = mig_extra = NULL;
    ernic_rig_stop(r);
}

static void test_reconic(void)
{
    reconic_run("layout=reconic,card-mem=16M", NULL);
}

/* The same with card memory from memory backends (card-memdev). */
static void test_reconic_memdev(void)
{
    reconic_run("layout=reconic,card-memdev=card@",
                "-object memory-backend-ram,id=card0,size=16M,prealloc=on"
                " -object memory-backend-ram,id=card1,size=16M");
}

/*
 * A READ whose responses stop after 40 packets: the responder is in the
 * middle of answering (a READ resource), the requester has placed part
 * of the data.
 */
static void test_read(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree uint8_t *p = NULL;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF, MSG_LEN, 12);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 8, ERNIC_OP_READ,
                   DEV_BASE(0) + SRC_OFF, MSG_LEN, MR_VA, RKEY, 0, NULL);
    cut_after_40(r, 1);
    g_assert_false(ernic_rig_all_done(r, 0, QPN_A));

    rig_migrate(r);
    finish_one(r, DEV_BASE(0) + SRC_OFF, p, ERNIC_OP_READ, 8);
}

/*
 * A SEND cut after 40 packets: the responder holds the RQ buffer of a
 * message in progress. Exactly one receive and one completion follow.
 */
static void test_send(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree uint8_t *p = NULL;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MSG_LEN, 13);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 9, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, MSG_LEN, 0, 0, 0, NULL);
    cut_after_40(r, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);

    rig_migrate(r);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, p, MSG_LEN);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    g_assert_cmphex(qtest_readl(r->qts, DEV_BASE(1) + RQDB_OFF), ==, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATMSN), ==, 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 9));
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 1);
    ernic_rig_stop(r);
}

/*
 * A SEND cut in the middle, whose first packet took WQE 0 of an ERNIC-X
 * SRQ of device 1 (docs/extension.md): after the move its remaining
 * packets land in that WQE's buffer, and the metadata names it (the
 * "ernic/qp/srq" subsection); the SRQ's registers moved with it.
 */
#define SRQ_N       3
#define SRQ_RING    (DEV_BASE(1) + MR_OFF + 0x100000)
#define SRQ_BUF     (DEV_BASE(1) + MR_OFF + 0x140000)
#define SRQ_META    (DEV_BASE(1) + MR_OFF + 0x80000)

static void srq_attach(ErnicRig *r)
{
    uint32_t x = ERNIC_EXT_QP_OFFSET(QPN_B), s = ERNIC_EXT_SRQ_OFFSET(SRQ_N);
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

    ernic_rig_wr(r, 1, ERNIC_EXTCTRL, ERNIC_EXT_F_MR | ERNIC_EXT_F_RXMETA |
                 ERNIC_EXT_F_RXWQE | ERNIC_EXT_F_SRQ);
    ernic_rig_wr(r, 1, x + ERNIC_RXMETABA, SRQ_META);
    ernic_rig_wr(r, 1, x + ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_RXMETA |
                 ERNIC_EXTQPCONF_RXWQE | ERNIC_EXTQPCONF_SRQ |
                 SRQ_N << 16);
    stq_le_p(&w[ERNIC_SGE_ADDR], SRQ_BUF);
    stl_le_p(&w[ERNIC_SGE_LEN], MSG_LEN);
    qtest_memwrite(r->qts, SRQ_RING + ERNIC_RWQE_SIZE, w, sizeof(w));
    ernic_rig_wr(r, 1, s + ERNIC_SRQBA, (uint32_t)SRQ_RING);
    ernic_rig_wr(r, 1, s + ERNIC_SRQBAMSB, SRQ_RING >> 32);
    ernic_rig_wr(r, 1, s + ERNIC_SRQDEPTH, 4);
    ernic_rig_wr(r, 1, s + ERNIC_SRQPD, PD_NUM);
    /* WQE 0 is taken by a first, empty SEND: the cut one takes WQE 1. */
    ernic_rig_wr(r, 1, s + ERNIC_SRQPI, 2);
    ernic_rig_wr(r, 1, s + ERNIC_SRQCONF, ERNIC_SRQCONF_EN);
}

static void test_srq_send(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t s = ERNIC_EXT_SRQ_OFFSET(SRQ_N);
    g_autofree uint8_t *p = NULL;
    uint8_t m[ERNIC_RXMETA_SIZE];

    srq_attach(r);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MSG_LEN, 17);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 0, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 2, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, MSG_LEN, 0, 0, 0, NULL);
    cut_after_40(r, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, s + ERNIC_SRQCI), ==, 2);

    rig_migrate(r);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, SRQ_BUF, p, MSG_LEN);
    qtest_memread(r->qts, SRQ_META + ERNIC_RXMETA_SIZE, m, sizeof(m));
    g_assert_cmpuint(ldl_le_p(&m[ERNIC_RXMETA_LEN]), ==, MSG_LEN);
    g_assert_cmphex(m[ERNIC_RXMETA_FLAGS], ==, ERNIC_RXMETA_F_SRQ);
    g_assert_cmpuint(lduw_le_p(&m[ERNIC_RXMETA_SRQ_WQE]), ==, 1);
    g_assert_cmphex(ernic_rig_rd(r, 1, s + ERNIC_SRQCI), ==, 2);
    g_assert_cmphex(ernic_rig_rd(r, 1, s + ERNIC_SRQDEPTH), ==, 4);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 2);
    ernic_rig_stop(r);
}

/*
 * A SEND between ERNIC-X UC QPs cut after 40 of its packets, the rest
 * held on the wire: the requester has completed it (UC completes once
 * sent), the responder is in the middle of the message, which exists
 * only in its state (its RQ buffer, offset, expected PSN). After the
 * move the held packets complete it; had that state been lost, UC would
 * drop them all.
 */
typedef struct Hold {
    int keep;
    GPtrArray *held;
} Hold;

static ErnicRigVerdict hold_filter(void *opaque, int from, const uint8_t *f,
                                   size_t len)
{
    Hold *h = opaque;
    GByteArray *b;

    if (from != 0 || h->keep-- > 0) {
        return ERNIC_RIG_FWD;
    }
    b = g_byte_array_sized_new(len);
    g_byte_array_append(b, f, len);
    g_ptr_array_add(h->held, b);
    return ERNIC_RIG_DROP;
}

static void test_uc_send(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    Hold h = { .keep = 40, .held = g_ptr_array_new() };
    ErnicRigWire w = { .filter = hold_filter, .opaque = &h };
    g_autofree uint8_t *p = NULL;

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, ERNIC_EXT_F_UC);
        ernic_rig_wr(r, i, ERNIC_EXT_QP_OFFSET(i ? QPN_B : QPN_A) +
                     ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_UC);
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MSG_LEN, 19);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 3, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, MSG_LEN, 0, 0, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A) &&
                   h.held->len == DIV_ROUND_UP(MSG_LEN, 1024) - 40);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);

    rig_migrate(r);
    for (guint k = 0; k < h.held->len; k++) {
        GByteArray *b = g_ptr_array_index(h.held, k);

        ernic_rig_wire_write(r->d[1].fd, b->data, b->len);
        g_byte_array_free(b, true);
    }
    g_ptr_array_free(h.held, true);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB) == 1);
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, p, MSG_LEN);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATMSN), ==, 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 3));
    ernic_rig_stop(r);
}

/* Drop every ATOMIC ACKNOWLEDGE device 1 sends; count them. */
static ErnicRigVerdict drop_atomic_acks(void *opaque, int from,
                                        const uint8_t *f, size_t len)
{
    unsigned *n = opaque;

    if (from == 1 && f[F_BTH] == 0x12) {
        (*n)++;
        return ERNIC_RIG_DROP;
    }
    return ERNIC_RIG_FWD;
}

/*
 * Eight FETCH_ADDs executed by device 1, whose answers were all lost,
 * when the machine moves: the requester sends them again after the move,
 * and each is answered with the value saved when it was executed (the
 * "ernic/read-hist/atomic" subsection), not executed twice. Without the
 * saved values the duplicates would be dropped and the QP would end in
 * its retry count.
 */
static void test_atomic(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    unsigned dropped = 0;
    ErnicRigWire w = { .filter = drop_atomic_acks, .opaque = &dropped };
    uint64_t want = 1000;
    uint8_t sdata[16] = { 0 };

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, ERNIC_EXT_F_ATOMIC);
        ernic_rig_wr(r, i, ERNIC_EXT_QP_OFFSET(i ? QPN_B : QPN_A) +
                     ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_ATOMIC);
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    qtest_writeq(r->d[1].e.qts, DEV_BASE(1) + MR_OFF, want);
    for (int k = 0; k < 8; k++) {
        stq_le_p(sdata, k + 1);
        ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, k,
                       ERNIC_OP_ATOMIC_FETCH_ADD, DEV_BASE(0) + SRC_OFF + k * 8,
                       8, MR_VA, RKEY, 0, sdata);
    }
    ERNIC_RIG_PUMP(r, &w, dropped == 8);
    g_assert_cmphex(qtest_readq(r->qts, DEV_BASE(1) + MR_OFF), ==, 1036);

    rig_migrate(r);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(qtest_readq(r->qts, DEV_BASE(1) + MR_OFF), ==, 1036);
    for (int k = 0; k < 8; k++) {
        g_assert_cmphex(qtest_readq(r->qts, DEV_BASE(0) + SRC_OFF + k * 8),
                        ==, want);
        g_assert_cmphex(ernic_rig_cqe(r, 0, k), ==,
                        CQE(ERNIC_OP_ATOMIC_FETCH_ADD, k));
        want += k + 1;
    }
    ernic_rig_stop(r);
}

static ErnicRigVerdict drop_requests(void *opaque, int from,
                                     const uint8_t *f, size_t len)
{
    unsigned *n = opaque;

    if (from == 0) {
        (*n)++;
        return ERNIC_RIG_DROP;
    }
    return ERNIC_RIG_FWD;
}

#define XRC_SRQ         5
#define XRC_RING        (DEV_BASE(1) + MR_OFF + 0x100000)
#define XRC_BUF         (DEV_BASE(1) + MR_OFF + 0x110000)

/*
 * An XRC initiator's SEND, naming XRC SRQ 5 of device 1, lost on the
 * wire when the machine moves: after the move it is sent again with the
 * same XRCETH and lands in the SRQ's WQE, written back (the
 * "ernic/osq/xrc" subsection keeps the SRQ; without it the request
 * named SRQ 0, no XRC SRQ, and the target QP went FATAL).
 */
static void test_xrc(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    unsigned dropped = 0;
    ErnicRigWire w = { .filter = drop_requests, .opaque = &dropped };
    uint8_t wqe[ERNIC_RWQE_SIZE] = { 0 };
    g_autofree uint8_t *p = NULL;
    uint32_t srq = ERNIC_EXT_SRQ_OFFSET(XRC_SRQ);

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, ERNIC_EXT_F_RXMETA |
                     ERNIC_EXT_F_RXWQE | ERNIC_EXT_F_SRQ | ERNIC_EXT_F_XRC);
    }
    ernic_rig_wr(r, 0, ERNIC_EXT_QP_OFFSET(QPN_A) + ERNIC_EXTQPCONF,
                 ERNIC_EXTQPCONF_XRC_INI);
    ernic_rig_wr(r, 1, ERNIC_EXT_QP_OFFSET(QPN_B) + ERNIC_EXTQPCONF,
                 ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE |
                 ERNIC_EXTQPCONF_XRC_TGT);
    ernic_rig_wr(r, 1, ERNIC_EXT_QP_OFFSET(QPN_B) + ERNIC_XRCD, 9);
    stq_le_p(&wqe[ERNIC_SGE_ADDR], XRC_BUF);
    stl_le_p(&wqe[ERNIC_SGE_LEN], 0x1000);
    qtest_memwrite(r->qts, XRC_RING, wqe, sizeof(wqe));
    ernic_rig_wr(r, 1, srq + ERNIC_SRQBA, (uint32_t)XRC_RING);
    ernic_rig_wr(r, 1, srq + ERNIC_SRQBAMSB, XRC_RING >> 32);
    ernic_rig_wr(r, 1, srq + ERNIC_SRQDEPTH, 4);
    ernic_rig_wr(r, 1, srq + ERNIC_SRQPD, PD_NUM);
    ernic_rig_wr(r, 1, srq + ERNIC_SRQPI, 1);
    ernic_rig_wr(r, 1, srq + ERNIC_SRQCONF, ERNIC_SRQCONF_EN |
                 ERNIC_SRQCONF_XRC | 9 << 8);
    r->d[0].xrc_srqn = XRC_SRQ;
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 200, 6);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, 200, 0, 0, 0, NULL);
    r->d[0].xrc_srqn = 0;
    ERNIC_RIG_PUMP(r, &w, dropped > 0);

    rig_migrate(r);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 1));
    ernic_rig_assert_mem(r, XRC_BUF, p, 200);
    g_assert_cmphex(qtest_readl(r->qts, XRC_RING + ERNIC_XRC_WB_QPN), ==,
                    QPN_B | ERNIC_XRC_WB_DONE);
    ernic_rig_stop(r);
}

/*
 * A type 2 window of device 1 bound when the machine moves: after the
 * move a WRITE through it lands, and when its region is freed the window
 * goes with it (the "ernic/ext-mr/window" subsection keeps which region
 * it is bound to; without it the window would outlive its region and
 * the last WRITE would land in freed memory).
 */
static void test_window(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t region = XMR_INDEX << 8 | 0x33, key = 9 << 8 | 0x21;
    uint8_t sd[16] = { 0 };
    g_autofree uint8_t *p = NULL;

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_EXTCTRL, ERNIC_EXT_F_MR | ERNIC_EXT_F_MW);
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    g_assert_cmpuint(ernic_rig_xmr(r, 1, XMR_INDEX, 0x33 | ERNIC_MR_VALID << 8,
                                   PD_NUM, ERNIC_MRACC_PHYS |
                                   ERNIC_MRACC_MW_BIND |
                                   ERNIC_MRACC_LOCAL_WRITE, MR_VA, 0x10000,
                                   DEV_BASE(1) + MR_OFF, 0), ==, 0);
    g_assert_cmpuint(ernic_rig_xmr(r, 1, 9, ERNIC_MR_INVALID << 8, PD_NUM,
                                   ERNIC_MRACC_MW | ERNIC_MRACC_MW_TYPE2, 0, 0,
                                   0, 0), ==, 0);
    stq_le_p(sd, 0x1000);
    stl_le_p(sd + 8, region);
    stl_le_p(sd + 12, ERNIC_MRACC_REMOTE_WRITE);
    ernic_rig_post(r, 1, QPN_B, DEV_BASE(1) + SQ_OFF, 0, ERNIC_OP_BIND_MW, 0,
                   0, MR_VA + 0x100, key, 0, sd);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 1, QPN_B));
    g_assert_cmphex(ernic_rig_cqe(r, 1, 0), ==, CQE(ERNIC_OP_BIND_MW, 0));

    rig_migrate(r);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 64, 5);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 64, MR_VA + 0x100, key, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 0));
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + 0x100, p, 64);
    g_assert_cmpuint(ernic_rig_xmr(r, 1, XMR_INDEX, ERNIC_MR_FREE << 8, 0, 0,
                                   0, 0, 0, 0), ==, 0);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 64, MR_VA + 0x100, key, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0), ==,
                    (QPN_B << 16) | ERNIC_FATAL_RKEY);
    ernic_rig_stop(r);
}

/*
 * The responder's 16 READ resources are duplicates queued again (the
 * "ernic/read-res/replay" subsection) when the machine moves; a new READ
 * after it takes the place of the oldest and is answered. Had the mark
 * been lost, the QP would be FATAL (0x10) with a NAK-Invalid.
 */
static void test_read_replay(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint8_t f[FRAME_MAX], ext[16];
    size_t len;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_reth(ext, MR_VA, RKEY, 0x100000);
    for (int k = 0; k < 16; k++) {
        len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A + k * 1024, ext, 16, 0);
        ernic_rig_wire_write(r->d[1].fd, f, len);
    }
    ernic_rig_read_until_response(r, PSN_A + 16 * 1024 - 1);
    /* All 16 again, unread: the device stops on a full socket. */
    for (int k = 0; k < 16; k++) {
        len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A + k * 1024, ext, 16, 0);
        ernic_rig_wire_write(r->d[1].fd, f, len);
    }
    qtest_clock_step(r->qts, 1000000);

    rig_migrate(r);
    len = ernic_rig_inject(r, f, 0x0c, QPN_B, PSN_A + 16 * 1024, ext, 16, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_read_until_response(r, PSN_A + 17 * 1024 - 1);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, 0);
    ernic_rig_stop(r);
}

/*
 * Both QPs FATAL (a remote access error); clearing traffic is done, the
 * QPs are disabled and under recovery; the machine migrates; the new
 * process re-initialises them (PG332 pp.62-63) and traffic flows again.
 */
static void test_fatal_recovery(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    ErnicRigFirst first = { 0 };
    static const ErnicRigReinit ri[NDEV] = {
        { .sqpsn = 0x000321, .rqpsn = 0x00a000, .ttl = 40 },
        { .sqpsn = 0x00a000, .rqpsn = 0x000321, .ttl = 50 },
    };

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_cause_remote_access(r, 0x90);
    ernic_rig_fatal_clear(r, 0, QPN_A, 0, ERNIC_FATAL_NAK_RECEIVED);
    ernic_rig_fatal_clear(r, 1, QPN_B, 0, ERNIC_FATAL_RKEY);

    rig_migrate(r);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL, ==, ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_QPCONF) &
                    (ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_UNDER_RECOVERY), ==,
                    ERNIC_QPCONF_UNDER_RECOVERY);
    ernic_rig_fatal_reinit(r, 0, QPN_A, 1, &ri[0]);
    ernic_rig_fatal_reinit(r, 1, QPN_B, 0, &ri[1]);
    ernic_rig_traffic(r, &first, 5);
    g_assert_cmphex(ernic_rig_be32(first.f[0] + F_BTH + 8) & 0xffffff, ==,
                    ri[0].sqpsn);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_IPKTERRQWPTR), ==, 1);
    ernic_rig_stop(r);
}

/*
 * Snapshots: savevm and loadvm in one process
 */

/* Wait for QMP job @id to end; it must have succeeded. */
static void job_wait(QTestState *qts, const char *id)
{
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

    for (;;) {
        QDict *rsp = qtest_qmp(qts, "{'execute': 'query-jobs'}");
        QList *jobs = qdict_get_qlist(rsp, "return");
        QListEntry *e;
        bool done = false;

        QLIST_FOREACH_ENTRY(jobs, e) {
            QDict *j = qobject_to(QDict, qlist_entry_obj(e));

            if (!strcmp(qdict_get_str(j, "id"), id) &&
                !strcmp(qdict_get_str(j, "status"), "concluded")) {
                if (qdict_haskey(j, "error")) {
                    g_error("job %s: %s", id, qdict_get_str(j, "error"));
                }
                done = true;
            }
        }
        qobject_unref(rsp);
        if (done) {
            break;
        }
        g_assert(g_get_monotonic_time() < deadline);
        g_usleep(2000);
    }
    qtest_qmp_assert_success(qts, "{'execute': 'job-dismiss',"
                             " 'arguments': {'id': %s}}", id);
}

/* A qcow2 image in tmpdir, node "snap", to hold the snapshots. */
static void snap_disk(QTestState *qts)
{
    g_autofree char *path = g_strdup_printf("%s/snap.qcow2", tmpdir);

    qtest_qmp_assert_success(qts, "{'execute': 'blockdev-create',"
                             " 'arguments': {'job-id': 'c1', 'options':"
                             " {'driver': 'file', 'filename': %s,"
                             " 'size': 0}}}", path);
    job_wait(qts, "c1");
    qtest_qmp_assert_success(qts, "{'execute': 'blockdev-add', 'arguments':"
                             " {'driver': 'file', 'filename': %s,"
                             " 'node-name': 'f'}}", path);
    qtest_qmp_assert_success(qts, "{'execute': 'blockdev-create',"
                             " 'arguments': {'job-id': 'c2', 'options':"
                             " {'driver': 'qcow2', 'file': 'f',"
                             " 'size': 16777216}}}");
    job_wait(qts, "c2");
    qtest_qmp_assert_success(qts, "{'execute': 'blockdev-add', 'arguments':"
                             " {'driver': 'qcow2', 'node-name': 'snap',"
                             " 'file': 'f'}}");
}

/*
 * A snapshot taken in the middle of a WRITE (QMP snapshot-save, as
 * savevm): the WRITE completes; the snapshot is loaded (snapshot-load, as
 * loadvm), which takes memory and both devices back to the middle of the
 * WRITE, with its completion unwritten; the WRITE completes once more,
 * every byte in place, one completion.
 */
static void test_snapshot(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree uint8_t *p = NULL;

    snap_disk(r->qts);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MSG_LEN, 14);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 10, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, MSG_LEN, MR_VA, RKEY, 0, NULL);
    cut_after_40(r, 0);
    qtest_qmp_assert_success(r->qts, "{'execute': 'snapshot-save',"
                             " 'arguments': {'job-id': 's1', 'tag': 'mid',"
                             " 'vmstate': 'snap', 'devices': ['snap']}}");
    job_wait(r->qts, "s1");

    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, MSG_LEN);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 10));
    drain(r, NULL);

    qtest_qmp_assert_success(r->qts, "{'execute': 'snapshot-load',"
                             " 'arguments': {'job-id': 'l1', 'tag': 'mid',"
                             " 'vmstate': 'snap', 'devices': ['snap']}}");
    job_wait(r->qts, "l1");
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 0);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, 0);
    g_assert_cmphex(qtest_readl(r->qts, DEV_BASE(1) + MR_OFF + MSG_LEN - 4),
                    ==, 0);
    finish_one(r, DEV_BASE(1) + MR_OFF, p, ERNIC_OP_WRITE, 10);
}

/*
 * Streams that must be refused
 */

/*
 * Find a QP's state in a saved stream: its register block is written as
 * 64 big-endian words, and the test gives the QP's RQWPTRDBADDi and
 * RQWPTRDBADDMSBi values nothing else has.
 */
#define MARK_LO         0x5eed0001
#define MARK_HI         0x00c0ffee
#define MARK_QPN        9

static size_t find_qp(const uint8_t *s, size_t n)
{
    static const uint8_t mark[] = {
        0x5e, 0xed, 0x00, 0x01, 0x00, 0xc0, 0xff, 0xee,
    };
    size_t at = 0;

    for (size_t k = 0; k + 16 <= n; k++) {
        if (!memcmp(s + k, mark, sizeof(mark))) {
            g_assert_cmpuint(at, ==, 0);
            at = k;
        }
    }
    g_assert_cmpuint(at, !=, 0);
    return at - ERNIC_RQWPTRDBADD;
}

/* Stream offsets in "ernic/qp" after its 256-byte register block. */
#define VM_OSQ_SIZE     181     /* ernic/osq as sent */
#define VM_OSQ_DEPTH    16
#define VM_OSQ_HEAD     (256 + 4 + VM_OSQ_DEPTH * VM_OSQ_SIZE)
#define VM_OSQ_COUNT    (VM_OSQ_HEAD + 4)
/* ... tx_idx, tx_pkt, sent_psn, then retries_left, rnr_left */
#define VM_RETRIES      (VM_OSQ_COUNT + 16)
/* ... rnr_wait, two timers (8 bytes each), rx_msg, rq_addr */
#define VM_RX_MSG       (VM_RETRIES + 8 + 1 + 16)
#define VM_RQ_SIZE      (VM_RX_MSG + 1 + 8)
#define VM_RQ_OFF       (VM_RQ_SIZE + 8)
/*
 * ... rq_off, rq_slot, 4 flags, 4 SGEs (26 bytes each), wr_mr (22),
 * wr_off, wr_left, 4 bytes, held_psn, held_msn, 16 READ resources (46)
 */
#define VM_RD_HEAD      (VM_RQ_OFF + 8 + 4 + 104 + 22 + 12 + 4 + 8 + 736)
#define VM_RD_COUNT     (VM_RD_HEAD + 4)

typedef struct BadStream {
    const char *name;
    size_t off;                 /* from the QP's register block */
    uint32_t val;
} BadStream;

static const BadStream bad_streams[] = {
    { "osq-head", VM_OSQ_HEAD, 16 },
    { "osq-count", VM_OSQ_COUNT, 17 },
    { "osq-count-huge", VM_OSQ_COUNT, 0xffffffff },
    { "retry-count", VM_RETRIES, 8 },
    { "rx-msg", VM_RX_MSG, 0x03000000 },
    { "rq-off", VM_RQ_OFF, 1 },
    { "rd-head", VM_RD_HEAD, 16 },
    { "rd-count", VM_RD_COUNT, 17 },
};

/*
 * A stream whose QP state has an index or count out of range is refused
 * (query-migrate "failed" on the destination); the same stream as saved
 * loads. Without the checks, osq_count 17 would walk past the queue.
 */
static void test_bad_stream(gconstpointer data)
{
    const BadStream *b = data;
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree char *path = g_strdup_printf("%s/state", tmpdir);
    g_autofree char *bad = g_strdup_printf("%s/bad", tmpdir);
    g_autofree uint8_t *s = NULL;
    size_t n, at;

    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_qwr(r, 1, MARK_QPN, ERNIC_RQWPTRDBADD, MARK_LO);
    ernic_rig_qwr(r, 1, MARK_QPN, ERNIC_RQWPTRDBADDMSB, MARK_HI);
    mig_save(r, "state");
    rig_release(r);

    g_assert_true(g_file_get_contents(path, (char **)&s, &n, NULL));
    at = find_qp(s, n);
    /* The values there are those a reset QP has. */
    g_assert_cmphex(ldl_be_p(s + at + VM_OSQ_HEAD), ==, 0);
    g_assert_cmphex(ldl_be_p(s + at + VM_OSQ_COUNT), ==, 0);
    g_assert_cmphex(ldl_be_p(s + at + VM_RETRIES), ==, 0);
    g_assert_cmphex(s[at + VM_RX_MSG], ==, 0);
    g_assert_cmphex(ldl_be_p(s + at + VM_RQ_SIZE), ==, 0);
    g_assert_cmphex(ldl_be_p(s + at + VM_RQ_OFF), ==, 0);
    g_assert_cmphex(ldl_be_p(s + at + VM_RD_HEAD), ==, 0);
    g_assert_cmphex(ldl_be_p(s + at + VM_RD_COUNT), ==, 0);
    stl_be_p(s + at + b->off, b->val);
    g_assert_true(g_file_set_contents(bad, (char *)s, n, NULL));
    g_assert_false(mig_load(r, "bad", NULL));
    rig_abandon(r);

    /* The unmodified stream loads, so the refusal was the change's. */
    g_assert_true(mig_load(r, "state", NULL));
    g_assert_cmphex(ernic_rig_qrd(r, 1, MARK_QPN, ERNIC_RQWPTRDBADD), ==,
                    MARK_LO);
    ernic_rig_stop(r);
}

/* A different num-qp on the destination is refused. */
static void test_num_qp_mismatch(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    mig_save(r, "state");
    rig_release(r);
    g_assert_false(mig_load(r, "state", "-global ernic.num-qp=64"));
    rig_abandon(r);
    g_free(r);
}

/*
 * ERNIC-X doorbell records, with ioeventfds on both sides: the new
 * process arms QP A's eventfd from the loaded registers and takes its
 * record once, so a doorbell the old one never served is not lost. Here
 * WQE 1 is posted and the record moved to 2 with no SQPIi write at all;
 * without that first look it would never go.
 */
#define DBREC_REC   (DEV_BASE(0) + 0x0f0000)
#define DBREC_OFF2  0x100000            /* WQE 1's source and target */

static void test_dbrec(void)
{
    ErnicRig *r = g_new0(ErnicRig, 1);
    uint32_t x = ERNIC_EXT_QP_OFFSET(QPN_A);
    g_autofree uint8_t *p = NULL;
    g_autofree uint8_t *q = NULL;
    uint8_t wqe[ERNIC_WQE_SIZE];

    mig_devopts = "db-eventfd=on";
    ernic_rig_launch_dev(r, mig_devopts, NULL);
    ernic_rig_attach_all(r);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, ERNIC_EXT_F_MR | ERNIC_EXT_F_DBREC);
    ernic_rig_wr(r, 0, x + ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_DBREC);
    ernic_rig_wr(r, 0, x + ERNIC_DBRECA, DBREC_REC);
    qtest_writel(r->qts, DBREC_REC, 1);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MSG_LEN, 15);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, MSG_LEN, MR_VA, RKEY, 0, NULL);
    cut_after_40(r, 0);

    q = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF + DBREC_OFF2, MSG_LEN,
                              16);
    qernic_wqe(wqe, ERNIC_OP_WRITE, 1, DEV_BASE(0) + SRC_OFF + DBREC_OFF2,
               MSG_LEN, MR_VA + DBREC_OFF2, RKEY, 0);
    qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF + ERNIC_WQE_SIZE, wqe,
                   sizeof(wqe));
    qtest_writel(r->qts, DBREC_REC, 2);
    rig_migrate(r);
    mig_devopts = NULL;

    ERNIC_RIG_PUMP(r, NULL,
                   ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD) == 2);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 2);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, MSG_LEN);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + DBREC_OFF2, q, MSG_LEN);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_WRITE, 0));
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, CQE(ERNIC_OP_WRITE, 1));
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("ernic-migrate-XXXXXX", NULL);
    g_assert_nonnull(tmpdir);
    qtest_add_func("/ernic/migrate/registers", test_registers);
    qtest_add_func("/ernic/migrate/write-timer", test_write_timer);
    qtest_add_func("/ernic/migrate/read", test_read);
    qtest_add_func("/ernic/migrate/send", test_send);
    qtest_add_func("/ernic/migrate/srq-send", test_srq_send);
    qtest_add_func("/ernic/migrate/uc-send", test_uc_send);
    qtest_add_func("/ernic/migrate/read-replay", test_read_replay);
    qtest_add_func("/ernic/migrate/atomic", test_atomic);
    qtest_add_func("/ernic/migrate/window", test_window);
    qtest_add_func("/ernic/migrate/xrc", test_xrc);
    qtest_add_func("/ernic/migrate/fatal-recovery", test_fatal_recovery);
    qtest_add_func("/ernic/migrate/snapshot", test_snapshot);
    qtest_add_func("/ernic/migrate/dbrec", test_dbrec);
    qtest_add_func("/ernic/migrate/layout-reconic", test_reconic);
    qtest_add_func("/ernic/migrate/layout-reconic-memdev",
                   test_reconic_memdev);
    for (size_t k = 0; k < ARRAY_SIZE(bad_streams); k++) {
        g_autofree char *name = g_strdup_printf("/ernic/migrate/refused/%s",
                                                bad_streams[k].name);

        qtest_add_data_func(name, &bad_streams[k], test_bad_stream);
    }
    qtest_add_func("/ernic/migrate/refused/num-qp", test_num_qp_mismatch);
    ret = g_test_run();
    for (size_t k = 0; k < ARRAY_SIZE(tmp_files); k++) {
        g_autofree char *path = g_strdup_printf("%s/%s", tmpdir,
                                                tmp_files[k]);

        unlink(path);
    }
    rmdir(tmpdir);
    g_free(tmpdir);
    return ret;
}
