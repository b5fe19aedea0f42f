/*
 * QTest for ERNIC-X SQ doorbell records (docs/extension.md, "Doorbell
 * records"): the producer index comes from the record whatever SQPIi is
 * written with; the feature off leaves SQPIi PG332's; a record that
 * cannot be read; and the ioeventfd (db-eventfd=on, served in software
 * under qtest as under TCG), armed only while the QP is enabled.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"
#include "hw/rdma/ernic_ext_regs.h"

#define DBREC_FEAT      (ERNIC_EXT_F_MR | ERNIC_EXT_F_DBREC)
/* QP A's record, in device 0's memory */
#define REC             (DEV_BASE(0) + 0x0f0000)
/* An address where no memory is: the record cannot be read there. */
#define REC_NOWHERE     (RIG_RAM_END + 0x10000000ULL)
#define MSG             3000

static void rec_set(ErnicRig *r, uint32_t val)
{
    qtest_writel(r->qts, REC, val);
}

/*
 * The rig with @devopts on each device (NULL: none) and @extra; device 0
 * with ERNIC-X features @feat, QP A with a record at @rec, set to 0,
 * then both QPs connected.
 */
static ErnicRig *dbrec_pair_conf(const char *devopts, const char *extra,
                                 uint32_t feat, uint64_t rec, uint32_t conf)
{
    ErnicRig *r = g_new0(ErnicRig, 1);
    uint32_t x = ERNIC_EXT_QP_OFFSET(QPN_A);

    ernic_rig_launch_dev(r, devopts, extra);
    ernic_rig_attach_all(r);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, feat);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, feat);
    ernic_rig_wr(r, 0, x + ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_DBREC | conf);
    ernic_rig_wr(r, 0, x + ERNIC_DBRECA, rec);
    ernic_rig_wr(r, 0, x + ERNIC_DBRECAMSB, rec >> 32);
    rec_set(r, 0);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    return r;
}

static ErnicRig *dbrec_pair(const char *devopts, const char *extra,
                            uint32_t feat, uint64_t rec)
{
    return dbrec_pair_conf(devopts, extra, feat, rec, 0);
}

/* A WRITE of MSG pattern bytes from device 0, WQE @wrid; its bytes. */
static uint8_t *post_write(ErnicRig *r, uint16_t wrid)
{
    uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MSG, wrid);

    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, MSG, MR_VA, RKEY, 0, NULL);
    return p;
}

/* Everything QP A was given is done: its data at device 1, its CQEs. */
static void finish(ErnicRig *r, const uint8_t *p, uint32_t n)
{
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, n);
    for (uint32_t k = 0; k < n; k++) {
        g_assert_cmphex(ernic_rig_cqe(r, 0, k), ==, CQE(ERNIC_OP_WRITE, k));
    }
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, MSG);
}

/* The feature is discoverable, and its registers hold what they define. */
static void test_registers(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t x = ERNIC_EXT_QP_OFFSET(QPN_A);

    g_assert_true(ernic_rig_rd(r, 0, ERNIC_EXTFEAT) & ERNIC_EXT_F_DBREC);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, 0xffffffff);
    g_assert_true(ernic_rig_rd(r, 0, ERNIC_EXTCTRL) & ERNIC_EXT_F_DBREC);
    ernic_rig_wr(r, 0, x + ERNIC_EXTQPCONF, 0xffffffff);
    g_assert_cmphex(ernic_rig_rd(r, 0, x + ERNIC_EXTQPCONF) &
                    ERNIC_EXTQPCONF_DBREC, ==, ERNIC_EXTQPCONF_DBREC);
    ernic_rig_wr(r, 0, x + ERNIC_DBRECA, 0xffffffff);
    g_assert_cmphex(ernic_rig_rd(r, 0, x + ERNIC_DBRECA), ==, 0xfffffffc);
    ernic_rig_wr(r, 0, x + ERNIC_DBRECAMSB, 0x12345678);
    g_assert_cmphex(ernic_rig_rd(r, 0, x + ERNIC_DBRECAMSB), ==, 0x12345678);
    ernic_rig_stop(r);
}

/*
 * SQPIi written 1 while the record says 0 sends nothing; written 0x7777
 * while it says 1, WQE 0 goes. The record's bits [31:16] are reserved.
 */
static void test_record(void)
{
    ErnicRig *r = dbrec_pair(NULL, NULL, DBREC_FEAT, REC);
    g_autofree uint8_t *p = post_write(r, 0);
    g_autofree uint8_t *q = NULL;

    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 0);
    for (int k = 0; k < 20; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATCURSQPTR), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 0);

    rec_set(r, 1);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, 0x7777);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 1);
    finish(r, p, 1);

    q = post_write(r, 1);
    rec_set(r, 0xabcd0002);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 2);
    finish(r, q, 2);
    ernic_rig_stop(r);
}

/* DBREC off in EXTCTRL: EXTQPCONFi[11] means nothing, SQPIi is PG332's. */
static void test_off(void)
{
    ErnicRig *r = dbrec_pair(NULL, NULL, ERNIC_EXT_F_MR, REC);
    g_autofree uint8_t *p = post_write(r, 0);

    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 1);
    finish(r, p, 1);
    ernic_rig_stop(r);
}

/*
 * A record that cannot be read: SQPIi keeps its value, and the enabled
 * QP goes FATAL 0x05 as for a WQE that cannot be fetched; nothing is
 * sent. Disabled, the QP only logs it.
 */
static void test_unreadable(void)
{
    ErnicRig *r = dbrec_pair(NULL, NULL, DBREC_FEAT, REC_NOWHERE);
    uint32_t conf = ernic_rig_qrd(r, 0, QPN_A, ERNIC_QPCONF);
    uint8_t f[FRAME_MAX];
    size_t len;

    ernic_rig_qwr(r, 0, QPN_A, ERNIC_QPCONF, conf & ~ERNIC_QPCONF_QP_EN);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 0);
    g_assert_false(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);

    ernic_rig_qwr(r, 0, QPN_A, ERNIC_QPCONF, conf);
    g_free(post_write(r, 0));
    g_free(post_write(r, 1));
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 0);
    g_assert_true(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                  ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    qtest_clock_step(r->qts, 1000000);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    ernic_rig_stop(r);
}

/* Does the trace log at @path hold @what? */
static bool log_has(const char *path, const char *what)
{
    g_autofree char *text = NULL;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return strstr(text, what) != NULL;
}

/*
 * db-eventfd=on: the doorbells of the enabled QP go through its eventfd
 * (the trace says so) and are served from the main loop, or by a read of
 * SQPIi, which returns their index; once the QP is
 * disabled, the eventfd is gone and an SQPIi write takes the record at
 * once, as the pointer resets of PG332 ch.6 need.
 */
static void test_eventfd(void)
{
    g_autofree char *dir = g_dir_make_tmp("ernic-dbrec-XXXXXX", NULL);
    g_autofree char *log = g_build_filename(dir, "trace.log", NULL);
    g_autofree char *extra = g_strdup_printf("-trace ernic_dbrec_* -D %s",
                                             log);
    ErnicRig *r = dbrec_pair("db-eventfd=on", extra, DBREC_FEAT, REC);
    uint32_t conf = ernic_rig_qrd(r, 0, QPN_A, ERNIC_QPCONF);
    g_autofree uint8_t *p = NULL;
    g_autofree uint8_t *q = NULL;

    g_assert_true(log_has(log, "QP2 doorbell ioeventfd 1"));
    rec_set(r, 1);
    p = post_write(r, 0);
    /* A read of SQPIi takes a doorbell still pending first. */
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 1);
    finish(r, p, 1);
    g_assert_true(log_has(log, "QP2 doorbell ioeventfd\n"));

    rec_set(r, 2);
    q = post_write(r, 1);
    finish(r, q, 2);

    ernic_rig_qwr(r, 0, QPN_A, ERNIC_QPCONF, conf & ~ERNIC_QPCONF_QP_EN);
    g_assert_true(log_has(log, "QP2 doorbell ioeventfd 0"));
    rec_set(r, 5);
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPI), ==, 5);
    ernic_rig_stop(r);
    unlink(log);
    rmdir(dir);
}

/*
 * A user QP (ERNIC-X UDB) rung through its doorbell page: the page's
 * SQPI has the QP's eventfd too. A SEND of 8 bytes from SDATA, which a
 * user QP may send without keys.
 */
static void test_eventfd_udb(void)
{
    g_autofree char *dir = g_dir_make_tmp("ernic-dbrec-XXXXXX", NULL);
    g_autofree char *log = g_build_filename(dir, "trace.log", NULL);
    g_autofree char *extra = g_strdup_printf("-trace ernic_dbrec_* -D %s",
                                             log);
    ErnicRig *r = dbrec_pair_conf("db-eventfd=on", extra,
                                  DBREC_FEAT | ERNIC_EXT_F_UDB, REC,
                                  ERNIC_EXTQPCONF_USER);
    QPCIDevice *pdev = r->d[0].e.pdev;
    const uint8_t sdata[8] = "by-page";
    uint8_t wqe[ERNIC_WQE_SIZE];
    uint64_t size;
    QPCIBar bar = qpci_iomap(pdev, ERNIC_BAR_UDB, &size);

    g_assert_true(log_has(log, "QP2 doorbell ioeventfd 1 (doorbell page 1)"));
    qernic_wqe(wqe, ERNIC_OP_SEND, 0, 0, sizeof(sdata), 0, 0, 0);
    memcpy(&wqe[ERNIC_WQE_SDATA], sdata, sizeof(sdata));
    qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF, wqe, sizeof(wqe));
    rec_set(r, 1);
    qpci_io_writel(pdev, bar, ERNIC_UDB_OFFSET(QPN_A) + ERNIC_UDB_SQPI, 0);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD) == 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 0));
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, sdata, sizeof(sdata));
    g_assert_true(log_has(log, "QP2 doorbell ioeventfd\n"));
    ernic_rig_stop(r);
    unlink(log);
    rmdir(dir);
}

/* QP B's RQ record, in device 1's memory */
#define RQREC           (DEV_BASE(1) + 0x0f0000)
#define RQREC_FEAT      (ERNIC_EXT_F_MR | ERNIC_EXT_F_RQREC)

/*
 * The pair with QP B (device 1) taking RQCIi from a record at @rec, and
 * device 1's ERNIC-X features @feat. No buffer is granted: RQCIi is one
 * past STATRQPIDBi (0), and so is the record where it can be written.
 * Then QP A sends MSG bytes, which find no buffer (RNR NAKs, retried for
 * ever); their pattern is returned.
 */
static uint8_t *rqrec_send(ErnicRig *r, uint32_t feat, uint64_t rec)
{
    uint32_t x = ERNIC_EXT_QP_OFFSET(QPN_B);
    uint8_t *p;

    ernic_rig_wr(r, 1, ERNIC_EXTCTRL, feat);
    ernic_rig_wr(r, 1, x + ERNIC_EXTQPCONF, ERNIC_EXTQPCONF_RQREC);
    ernic_rig_wr(r, 1, x + ERNIC_DBRECA, rec);
    ernic_rig_wr(r, 1, x + ERNIC_DBRECAMSB, rec >> 32);
    if (rec == RQREC) {
        qtest_writel(r->qts, RQREC + ERNIC_RQREC_OFFSET, 1);
    }
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, 1);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, MSG, 7);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 0, ERNIC_OP_SEND,
                   DEV_BASE(0) + SRC_OFF, MSG, 0, 0, 0, NULL);
    for (int k = 0; k < 50; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD), ==, 0);
    return p;
}

/* QP A's SEND is done, and its bytes are in QP B's first RQ buffer. */
static void rqrec_landed(ErnicRig *r, const uint8_t *p)
{
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A) &&
                   ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB) == 1);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 0));
    ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, p, MSG);
}

/*
 * A buffer granted by the record alone, no RQCIi write: the SEND that
 * was getting RNR NAKs lands in it, and RQCIi reads what the record
 * says. The record's bits [31:16] are reserved.
 */
static void test_rq_record(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree uint8_t *p = rqrec_send(r, RQREC_FEAT, RQREC);

    g_assert_true(ernic_rig_rd(r, 1, ERNIC_EXTFEAT) & ERNIC_EXT_F_RQREC);
    qtest_writel(r->qts, RQREC + ERNIC_RQREC_OFFSET, 0xabcd0002);
    rqrec_landed(r, p);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_RQCI), ==, 2);
    ernic_rig_stop(r);
}

/*
 * RQREC off in EXTCTRL: EXTQPCONFi[12] means nothing and the record is
 * not read, RQCIi is PG332's: the SEND waits for an RQCIi write.
 */
static void test_rq_record_off(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree uint8_t *p = rqrec_send(r, ERNIC_EXT_F_MR, RQREC);

    qtest_writel(r->qts, RQREC + ERNIC_RQREC_OFFSET, 2);
    for (int k = 0; k < 50; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_RQCI), ==, 1);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, 2);
    rqrec_landed(r, p);
    ernic_rig_stop(r);
}

/*
 * An RQ record that cannot be read: RQCIi keeps its value, the SEND
 * finds no buffer (RNR NAKs), no QP goes FATAL; an RQCIi write still
 * grants the buffer.
 */
static void test_rq_record_unreadable(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree uint8_t *p = rqrec_send(r, RQREC_FEAT, REC_NOWHERE);

    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_RQCI), ==, 1);
    g_assert_false(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_false(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, 2);
    rqrec_landed(r, p);
    ernic_rig_stop(r);
}

/* db-eventfd=on without the extension: realize fails with a message. */
static void test_property(void)
{
    ernic_rig_assert_refused("ext=off,db-eventfd=on",
                             "db-eventfd=on needs ext=on");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/dbrec/registers", test_registers);
    qtest_add_func("/ernic/dbrec/record", test_record);
    qtest_add_func("/ernic/dbrec/off", test_off);
    qtest_add_func("/ernic/dbrec/unreadable", test_unreadable);
    qtest_add_func("/ernic/dbrec/eventfd", test_eventfd);
    qtest_add_func("/ernic/dbrec/eventfd-udb", test_eventfd_udb);
    qtest_add_func("/ernic/dbrec/rq-record", test_rq_record);
    qtest_add_func("/ernic/dbrec/rq-record-off", test_rq_record_off);
    qtest_add_func("/ernic/dbrec/rq-record-unreadable",
                   test_rq_record_unreadable);
    qtest_add_func("/ernic/dbrec/property", test_property);
    return g_test_run();
}
