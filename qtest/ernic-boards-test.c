/*
 * QTest: software written for ERNIC boards, replayed register by register
 * (docs/boards.md). Three public code bases drive the PG332 v3.1 map:
 * AMD RecoNIC's user-space library (layout=reconic), Xilinx's ERNIC Linux
 * driver (XIB) and AMD's mlir-air runtime. Each test follows the order in
 * which one of them programs the device for bring-up, QP setup, posting,
 * completion polling and (where it has one) fatal recovery, written from
 * their documented sequences, and ends in verified data or a verified
 * recovery. The "point N" comments refer to the ten differences between
 * them that docs/boards.md lists with the device's decision on each.
 *
 * Two devices on socketpair netdevs (qtest/ernic-rig.h); the test is the
 * wire between them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"
#include "hw/rdma/ernic_ext_regs.h"

#define RN_DEV          "layout=reconic,card-mem=16M"
#define RN_QPN          2               /* RecoNIC's data QP */
#define RN_DEPTH        64
#define RN_RQE_SIZE     512             /* QPCONF[31:16] as RecoNIC writes it */
#define RN_RKEY         0x0008          /* PD/MR entry 0, key 8 */
#define RN_PKEY         0x1234
#define RN_PSN          0xabc           /* LSTRQREQ; SQPSN is one more */
#define RN_SEED_OPCODE  0x0a
#define CARD(off)       (ERNIC_RN_CARD_ADDR | (off))

static void card_write(ErnicRig *r, int i, uint64_t off, const void *buf,
                       size_t len)
{
    qpci_memwrite(r->d[i].e.pdev, r->d[i].card, off, buf, len);
}

static void card_read(ErnicRig *r, int i, uint64_t off, void *buf, size_t len)
{
    qpci_memread(r->d[i].e.pdev, r->d[i].card, off, buf, len);
}

static void shell_wr(ErnicRig *r, int i, uint32_t off, uint32_t val)
{
    qpci_io_writel(r->d[i].e.pdev, r->d[i].e.regs, off, val);
}

static uint32_t shell_rd(ErnicRig *r, int i, uint32_t off)
{
    return qpci_io_readl(r->d[i].e.pdev, r->d[i].e.regs, off);
}

static uint32_t rn_mapctl(ErnicRig *r, int i, uint32_t w)
{
    return shell_rd(r, i, ERNIC_RN_AXIB_BASE + w * ERNIC_RN_AXIB_STRIDE +
                    ERNIC_RN_AXIB_MAPCTL);
}

/*
 * RecoNIC's library (lib/reconic.c, lib/rdma_api.c)
 */

/* open_rdma_dev() and config_rdma_global_csr(), in their order. */
static void rn_open(ErnicRig *r, int i)
{
    ErnicRigDev *d = &r->d[i];
    uint64_t b = DEV_BASE(i);

    ernic_rig_rn_bridge(r, i);        /* create_rn_dev() */
    ernic_rig_wr(r, i, ERNIC_DATBUFBA, b + 0xc0000);
    ernic_rig_wr(r, i, ERNIC_DATBUFBAMSB, 0);
    ernic_rig_wr(r, i, ERNIC_DATBUFSZ, (4096u << 16) | 4096);
    ernic_rig_wr(r, i, ERNIC_IPKTERRQBA, b + FATALQ_OFF);
    ernic_rig_wr(r, i, ERNIC_IPKTERRQBAMSB, 0);
    ernic_rig_wr(r, i, ERNIC_IPKTERRQSZ, 8192);
    ernic_rig_wr(r, i, ERNIC_ERRBUFBA, b + ERRBUF_OFF);
    ernic_rig_wr(r, i, ERNIC_ERRBUFBAMSB, 0);
    ernic_rig_wr(r, i, ERNIC_ERRBUFSZ, (256u << 16) | 16);
    ernic_rig_wr(r, i, ERNIC_RESPERRPKTBA, b + 0xd0000);
    ernic_rig_wr(r, i, ERNIC_RESPERRPKTBAMSB, 0);
    ernic_rig_wr(r, i, ERNIC_RESPERRSZ, 65536);
    ernic_rig_wr(r, i, ERNIC_RESPERRSZMSB, 0);
    ernic_rig_wr(r, i, ERNIC_INTEN, 0xff);
    ernic_rig_wr(r, i, ERNIC_MACXADDLSB, ernic_rig_be32(d->e.mac + 2));
    ernic_rig_wr(r, i, ERNIC_MACXADDMSB, lduw_be_p(d->e.mac));
    ernic_rig_wr(r, i, ERNIC_IPv4XADD, d->e.ip);
    ernic_rig_wr(r, i, ERNIC_XRNICCONF, (UDP_SPORT << 16) | (8 << 8) |
                 ERNIC_XRNICCONF_ERRBUF_EN | ERNIC_XRNICCONF_EN);
    ernic_rig_wr(r, i, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_RETRY_FATAL_DIS |
                 (10 << ERNIC_XRNICADCONF_BASECNT_SHIFT));
}

/* allocate_rdma_pd(0) and rdma_register_memory_region(): VA == PA. */
static void rn_mr(ErnicRig *r, int i, uint64_t addr, uint32_t len)
{
    uint32_t e = ERNIC_PDT_OFFSET(0);

    ernic_rig_wr(r, i, e + ERNIC_PDPDNUM, 0);
    ernic_rig_wr(r, i, e + ERNIC_VIRTADDRLSB, addr);
    ernic_rig_wr(r, i, e + ERNIC_VIRTADDRMSB, addr >> 32);
    ernic_rig_wr(r, i, e + ERNIC_BUFBASEADDRLSB, addr);
    ernic_rig_wr(r, i, e + ERNIC_BUFBASEADDRMSB, addr >> 32);
    ernic_rig_wr(r, i, e + ERNIC_BUFRKEY, RN_RKEY);
    ernic_rig_wr(r, i, e + ERNIC_WRRDBUFLEN, len);
    ernic_rig_wr(r, i, e + ERNIC_ACCESSDESC, ERNIC_ACCESS_READ_WRITE);
}

/*
 * allocate_rdma_qp(), then config_last_rq_psn() and config_sq_psn(): the
 * QP is enabled before its PSNs are written (point 6), QPCONF[31:16] is
 * 512 (point 1) and the last request's opcode is seeded 0x0A (point 2).
 * @q is where SQ, CQ and RQ live: host memory or the card's.
 */
static void rn_qp(ErnicRig *r, int i, uint64_t q)
{
    ErnicRigDev *p = &r->d[1 - i];
    uint64_t b = DEV_BASE(i);

    ernic_rig_qwr(r, i, RN_QPN, ERNIC_IPDESADDR1, p->e.ip);
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_MACDESADDLSB,
                  ernic_rig_be32(p->e.mac + 2));
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_MACDESADDMSB, lduw_be_p(p->e.mac));
    ernic_rig_qwr64(r, i, RN_QPN, ERNIC_SQBA, ERNIC_SQBAMSB, q + SQ_OFF);
    ernic_rig_qwr64(r, i, RN_QPN, ERNIC_CQBA, ERNIC_CQBAMSB, q + CQ_OFF);
    ernic_rig_qwr64(r, i, RN_QPN, ERNIC_RQBA, ERNIC_RQBAMSB, q + RQ_OFF);
    ernic_rig_qwr64(r, i, RN_QPN, ERNIC_CQDBADD, ERNIC_CQDBADDMSB,
                    b + CQDB_OFF);
    ernic_rig_qwr64(r, i, RN_QPN, ERNIC_RQWPTRDBADD, ERNIC_RQWPTRDBADDMSB,
                    b + RQDB_OFF);
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_DESTQPCONF, RN_QPN);
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_QDEPTH, RN_DEPTH | (RN_DEPTH << 16));
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_QPCONF, ERNIC_QPCONF_QP_EN | 0xc | 0x30 |
                  (ERNIC_PMTU_4096 << ERNIC_QPCONF_PMTU_SHIFT) |
                  (RN_RQE_SIZE << ERNIC_QPCONF_RQBUFSZ_SHIFT));
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_QPADVCONF, (RN_PKEY << 16) | (64 << 8));
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_PD, 0);
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_LSTRQREQ, (RN_SEED_OPCODE << 24) |
                  RN_PSN);
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_SQPSN, RN_PSN + 1);
}

typedef struct RnQp {
    uint64_t q;                 /* SQ, CQ and RQ base */
    bool card;                  /* ... in card memory */
    uint32_t sq_pidb;           /* the library's free-running counts */
    uint32_t sq_cidb;
} RnQp;

/* Two RecoNIC cards, each with QP 2 connected to the other's. */
static ErnicRig *rn_start_dev(RnQp *qp, bool card_queues, const char *devopts,
                              const char *extra)
{
    ErnicRig *r = g_new0(ErnicRig, 1);

    ernic_rig_launch_dev(r, devopts, extra);
    ernic_rig_attach_all(r);
    for (int i = 0; i < NDEV; i++) {
        qp[i].card = card_queues;
        qp[i].q = card_queues ? CARD(0x400000) : DEV_BASE(i);
        rn_open(r, i);
        rn_qp(r, i, qp[i].q);
    }
    return r;
}

static ErnicRig *rn_start(RnQp *qp, bool card_queues)
{
    return rn_start_dev(qp, card_queues, RN_DEV, NULL);
}

/* create_a_wqe(): a WQE at wqe_idx, in host or card memory. */
static void rn_wqe(ErnicRig *r, int i, RnQp *qp, uint32_t idx, uint8_t opcode,
                   uint64_t laddr, uint32_t len, uint64_t roff)
{
    uint8_t wqe[ERNIC_WQE_SIZE];
    uint64_t at = qp->q + SQ_OFF + (idx % RN_DEPTH) * ERNIC_WQE_SIZE;

    qernic_wqe(wqe, opcode, idx, laddr, len, roff, RN_RKEY, 0);
    if (qp->card) {
        card_write(r, i, at - ERNIC_RN_CARD_ADDR, wqe, sizeof(wqe));
    } else {
        qtest_memwrite(r->qts, at, wqe, sizeof(wqe));
    }
}

/*
 * rdma_post_batch_send(): SQPIi += n, counting up for ever (point 3), then
 * wait until CQHEADi has caught up with it.
 */
static void rn_post(ErnicRig *r, int i, RnQp *qp, uint32_t n)
{
    qp->sq_pidb += n;
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_SQPI, qp->sq_pidb);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, i, RN_QPN, ERNIC_CQHEAD) ==
                   qp->sq_pidb);
    qp->sq_cidb = qp->sq_pidb;
}

static uint8_t *rn_card_pattern(ErnicRig *r, int i, uint64_t off, size_t n,
                                uint32_t seed)
{
    uint8_t *p = g_malloc(n);

    ernic_rig_fill(p, n, seed);
    card_write(r, i, off, p, n);
    return p;
}

static void rn_card_check(ErnicRig *r, int i, uint64_t off, const uint8_t *want,
                          size_t n)
{
    g_autofree uint8_t *got = g_malloc(n);

    card_read(r, i, off, got, n);
    g_assert_cmpint(memcmp(got, want, n), ==, 0);
}

/* The BAR map RecoNIC's library expects, and the bridge's windows. */
static void test_rn_layout(void)
{
    ErnicRig *r = g_new0(ErnicRig, 1);

    ernic_rig_launch_dev(r, RN_DEV, NULL);
    ernic_rig_attach_all(r);
    g_assert_cmphex(qpci_config_readw(r->d[0].e.pdev, PCI_DEVICE_ID), ==,
                    ERNIC_RN_PCI_DEVICE_ID);
    g_assert_cmphex(r->d[0].card_size, ==, 16 << 20);
    /* ERNIC at 0x40000 of BAR2, with its reset values. */
    g_assert_cmphex(shell_rd(r, 0, ERNIC_RN_ERNIC_BASE + ERNIC_RESPHNDSTS),
                    ==, 0x10000);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MACXADDLSB), ==, 0x00e33200);
    g_assert_cmphex(ernic_rig_qrd(r, 0, RN_QPN, ERNIC_STATQP), ==, 0x600);
    /* ERNIC-X without user QPs: RecoNIC has no BAR3 for their pages. */
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTFEAT), ==,
                    ERNIC_EXT_F_ALL & ~(ERNIC_EXT_F_UDB | ERNIC_EXT_F_UPOLL));
    g_assert_cmphex(qpci_config_readl(r->d[0].e.pdev, PCI_BASE_ADDRESS_3), ==,
                    0);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, ERNIC_EXT_F_MR | ERNIC_EXT_F_UDB);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_EXTCTRL), ==, ERNIC_EXT_F_MR);
    ernic_rig_wr(r, 0, ERNIC_EXTCTRL, 0);
    /* The bridge's windows come out of reset invalid. */
    g_assert_cmphex(rn_mapctl(r, 0, 0), ==, 0);
    ernic_rig_rn_bridge(r, 0);
    for (uint32_t w = 0; w < ERNIC_RN_AXIB_WINDOWS; w++) {
        uint32_t b = ERNIC_RN_AXIB_BASE + w * ERNIC_RN_AXIB_STRIDE;

        g_assert_cmphex(shell_rd(r, 0, b + ERNIC_RN_AXIB_XLATE_MSB), ==,
                        w * 0x20);
        g_assert_cmphex(shell_rd(r, 0, b + ERNIC_RN_AXIB_MAPCTL), ==,
                        0xc2000000);
    }
    /* The rest of the shell (packet classification registers) reads 0. */
    shell_wr(r, 0, 0x102000, 0x1234);
    g_assert_cmphex(shell_rd(r, 0, 0x102000), ==, 0);
    /* Card memory through BAR4 keeps what is written to it. */
    card_write(r, 0, 0xfff000, "reconic", 8);
    g_assert_cmphex(qpci_io_readl(r->d[0].e.pdev, r->d[0].card, 0xfff000), ==,
                    ldl_le_p("reco"));
    ernic_rig_stop(r);
}

/*
 * examples/rdma_test/write.c: the client WRITEs 64 KiB from its card
 * memory at @src to the server's at @dst, whose region is registered with
 * VA == its card address.
 */
static void rn_card_to_card(ErnicRig *r, RnQp *qp, uint64_t src,
                            uint64_t dst, uint32_t seed)
{
    g_autofree uint8_t *p = NULL;

    rn_mr(r, 1, CARD(dst), 0x10000);
    p = rn_card_pattern(r, 0, src, 0x10000, seed);
    rn_wqe(r, 0, &qp[0], 0, ERNIC_OP_WRITE, CARD(src), 0x10000, CARD(dst));
    rn_post(r, 0, &qp[0], 1);
    g_assert_cmphex(ernic_rig_qrd(r, 0, RN_QPN, ERNIC_CQHEAD), ==, 1);
    rn_card_check(r, 1, dst, p, 0x10000);
}

static void test_rn_write(void)
{
    RnQp qp[NDEV] = { 0 };
    ErnicRig *r;

    r = rn_start(qp, false);
    rn_card_to_card(r, qp, 0x200000, 0x100000, 1);
    /* Not one byte went to host memory at the same offsets. */
    g_assert_cmphex(qtest_readl(r->qts, 0x100000), ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_IPKTERRQWPTR), ==, 0);
    ernic_rig_stop(r);
}

/*
 * Card memory from memory backends (card-memdev): BAR4 is the backend's
 * size, and a WRITE from one card to the other lands there.
 */
static void test_rn_card_memdev(void)
{
    RnQp qp[NDEV] = { 0 };
    ErnicRig *r;

    r = rn_start_dev(qp, false, "layout=reconic,card-memdev=card@",
                     "-object memory-backend-ram,id=card0,size=8M,prealloc=on"
                     " -object memory-backend-ram,id=card1,size=8M");
    g_assert_cmphex(r->d[0].card_size, ==, 8 << 20);
    g_assert_cmphex(r->d[1].card_size, ==, 8 << 20);
    rn_card_to_card(r, qp, 0x7f0000, 0x700000, 7);
    ernic_rig_stop(r);
}

/* KiB resident in the mappings of @pid that are @kib long. */
static unsigned long rss_of_size(pid_t pid, unsigned long kib)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/smaps", (int)pid);
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    unsigned long size = 0, rss = 0, v;

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        if (sscanf(*l, "Size: %lu kB", &v) == 1) {
            size = v;
        } else if (sscanf(*l, "Rss: %lu kB", &v) == 1 && size == kib) {
            rss += v;
        }
    }
    return rss;
}

/*
 * Card memory of the device's own is preallocated: all of it is resident
 * before the guest or the engine touches it, so that the engine's first
 * write there costs no page faults (docs/boards.md, "Card memory").
 */
static void test_rn_card_prealloc(void)
{
    ErnicRig *r = g_new0(ErnicRig, 1);

    ernic_rig_launch_dev(r, "layout=reconic,card-mem=32M", NULL);
    g_assert_cmpuint(rss_of_size(qtest_pid(r->qts), 32 << 10), >=,
                     2 * (32 << 10));
    ernic_rig_attach_all(r);
    ernic_rig_stop(r);
}

/* QEMU with @args must refuse to start, saying @msg. */
static void rn_refused(const char *args, const char *msg)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *cmd = g_strdup_printf("%s -M q35 -nodefaults -display "
                                           "none -S %s", qemu, args);
    g_autofree char *out = NULL, *err = NULL;
    int status;

    g_assert(qemu);
    g_assert(g_spawn_command_line_sync(cmd, &out, &err, &status, NULL));
    g_test_message("%s: %s", args, err);
    g_assert_cmpint(status, !=, 0);
    g_assert(strstr(err, msg));
}

/* The card memory properties that cannot work are refused with a reason. */
static void test_rn_card_props(void)
{
    rn_refused("-object memory-backend-ram,id=c,size=4M "
               "-device ernic,card-memdev=c",
               "ernic: card-memdev needs layout=reconic");
    rn_refused("-object memory-backend-ram,id=c,size=4M "
               "-device ernic,layout=reconic,card-memdev=c,card-mem=8M",
               "ernic: card-mem (8388608) differs from the size of "
               "card-memdev (4194304)");
    rn_refused("-object memory-backend-ram,id=c,size=3M "
               "-device ernic,layout=reconic,card-memdev=c",
               "ernic: card-mem must be a power of two from 1M to 4G, "
               "not 3145728");
    rn_refused("-object memory-backend-ram,id=c,size=4M "
               "-device ernic,layout=reconic,card-memdev=c "
               "-device ernic,layout=reconic,card-memdev=c",
               "ernic: card-memdev 'c' is already in use");
    rn_refused("-device ernic,layout=reconic,card-memdev=nothing",
               "nothing");
}

/*
 * read.c with -l dev_mem: queues in card memory too, so the engine fetches
 * its WQEs from the card and writes its CQEs there.
 */
static void test_rn_read(void)
{
    RnQp qp[NDEV] = { 0 };
    g_autofree uint8_t *p = NULL;
    uint32_t c;
    ErnicRig *r;

    r = rn_start(qp, true);
    rn_mr(r, 1, CARD(0x100000), 0x20000);
    p = rn_card_pattern(r, 1, 0x100000, 0x20000, 2);
    rn_wqe(r, 0, &qp[0], 0, ERNIC_OP_READ, CARD(0x300000), 0x20000,
           CARD(0x100000));
    rn_post(r, 0, &qp[0], 1);
    rn_card_check(r, 0, 0x300000, p, 0x20000);
    card_read(r, 0, 0x400000 + CQ_OFF, &c, 4);
    g_assert_cmphex(le32_to_cpu(c), ==, CQE(ERNIC_OP_READ, 0));
    ernic_rig_stop(r);
}

/*
 * send_recv.c: QPCONF[31:16] = 512 is taken in PG332's 256-byte units
 * (point 1), so a SEND of 64 KiB lands whole in RQ buffer 0, where
 * RecoNIC reads it; the next SEND goes to buffer 1, 128 KiB further.
 */
static void test_rn_send_recv(void)
{
    RnQp qp[NDEV] = { 0 };
    g_autofree uint8_t *p1 = NULL;
    g_autofree uint8_t *p2 = NULL;
    uint32_t rq_pidb;
    ErnicRig *r;

    r = rn_start(qp, false);
    p1 = ernic_rig_put_pattern(r, DEV_BASE(1) + SRC_OFF, 0x10000, 3);
    p2 = ernic_rig_put_pattern(r, DEV_BASE(1) + SRC_OFF + 0x10000, 3000, 4);
    rn_wqe(r, 1, &qp[1], 0, ERNIC_OP_SEND, DEV_BASE(1) + SRC_OFF, 0x10000, 0);
    rn_post(r, 1, &qp[1], 1);
    /* poll_rq_pidb(), then the RQE at (rq_pidb - 1). */
    rq_pidb = ernic_rig_qrd(r, 0, RN_QPN, ERNIC_STATRQPIDB);
    g_assert_cmpuint(rq_pidb, ==, 1);
    g_assert_cmpuint(qtest_readl(r->qts, DEV_BASE(0) + RQDB_OFF), ==, 1);
    ernic_rig_assert_mem(r, DEV_BASE(0) + RQ_OFF, p1, 0x10000);
    /* rdma_release_rq_consumed(): RQCIi = rq_pidb. */
    ernic_rig_qwr(r, 0, RN_QPN, ERNIC_RQCI, rq_pidb);
    rn_wqe(r, 1, &qp[1], 1, ERNIC_OP_SEND, DEV_BASE(1) + SRC_OFF + 0x10000,
           3000, 0);
    rn_post(r, 1, &qp[1], 1);
    g_assert_cmpuint(ernic_rig_qrd(r, 0, RN_QPN, ERNIC_STATRQPIDB), ==, 2);
    ernic_rig_assert_mem(r, DEV_BASE(0) + RQ_OFF + RN_RQE_SIZE * 256, p2, 3000);
    ernic_rig_stop(r);
}

/*
 * write_batch.c: batches of WQEs behind one doorbell each, SQPIi counting
 * up past the depth (40, 80, 120 with a depth of 64); CQHEADi reaches the
 * same free-running count (point 3).
 */
static void test_rn_batch(void)
{
    RnQp qp[NDEV] = { 0 };
    g_autofree uint8_t *p = NULL;
    uint32_t idx = 0;
    ErnicRig *r;

    r = rn_start(qp, false);
    rn_mr(r, 1, CARD(0), 0x100000);
    p = rn_card_pattern(r, 0, 0x200000, 120 * 4096, 5);
    for (int b = 0; b < 3; b++) {
        for (int k = 0; k < 40; k++, idx++) {
            rn_wqe(r, 0, &qp[0], idx, ERNIC_OP_WRITE,
                   CARD(0x200000 + idx * 4096), 4096, CARD(idx * 4096));
        }
        rn_post(r, 0, &qp[0], 40);
        g_assert_cmpuint(ernic_rig_qrd(r, 0, RN_QPN, ERNIC_CQHEAD), ==,
                         40 * (b + 1));
    }
    rn_card_check(r, 1, 0, p, 120 * 4096);
    ernic_rig_stop(r);
}

/*
 * destroy_rdma_qp(): RecoNIC's QP teardown, then the QP enabled again
 * without reprogramming its RQ doorbell address, which the teardown
 * zeroed (point 9): the SEND still arrives, STATRQPIDBi advances, and
 * nothing is written to address 0.
 */
static void rn_destroy(ErnicRig *r, int i)
{
    uint32_t v = ernic_rig_qrd(r, i, RN_QPN, ERNIC_STATQP);
    static const uint32_t zeroed[] = {
        ERNIC_RQWPTRDBADD, ERNIC_SQPI, ERNIC_CQHEAD, ERNIC_RQCI,
        ERNIC_STATRQPIDB, ERNIC_STATCURSQPTR, ERNIC_SQPSN, ERNIC_LSTRQREQ,
        ERNIC_STATMSN,
    };

    /* STATQPi[7:0] == 0 and [10:9] == 2'b11: no fatal recovery needed. */
    g_assert_cmphex(v & 0x6ff, ==, 0x600);
    g_assert_cmphex(ernic_rig_qrd(r, i, RN_QPN, ERNIC_CQHEAD), ==,
                    ernic_rig_qrd(r, i, RN_QPN, ERNIC_SQPI));
    ernic_rig_wr(r, i, ERNIC_XRNICADCONF,
                 ernic_rig_rd(r, i, ERNIC_XRNICADCONF) | 1);
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_QPCONF,
                  ernic_rig_qrd(r, i, RN_QPN, ERNIC_QPCONF) & ~1u);
    for (size_t k = 0; k < ARRAY_SIZE(zeroed); k++) {
        ernic_rig_qwr(r, i, RN_QPN, zeroed[k], 0);
    }
    ernic_rig_qwr(r, i, RN_QPN, ERNIC_QPCONF,
                  ernic_rig_qrd(r, i, RN_QPN, ERNIC_QPCONF) | 0x40);
    ernic_rig_wr(r, i, ERNIC_XRNICADCONF,
                 ernic_rig_rd(r, i, ERNIC_XRNICADCONF) & ~1u);
}

static void test_rn_destroy(void)
{
    RnQp qp[NDEV] = { 0 };
    g_autofree uint8_t *p = NULL;
    static const uint8_t sentinel[8] = "ADDRZERO";
    uint8_t low[8];
    ErnicRig *r;

    r = rn_start(qp, false);
    qtest_memwrite(r->qts, 0, sentinel, sizeof(sentinel));
    p = ernic_rig_put_pattern(r, DEV_BASE(1) + SRC_OFF, 1000, 6);
    rn_wqe(r, 1, &qp[1], 0, ERNIC_OP_SEND, DEV_BASE(1) + SRC_OFF, 1000, 0);
    rn_post(r, 1, &qp[1], 1);
    ernic_rig_assert_mem(r, DEV_BASE(0) + RQ_OFF, p, 1000);
    for (int i = 0; i < NDEV; i++) {
        rn_destroy(r, i);
        g_assert_cmphex(ernic_rig_qrd(r, i, RN_QPN, ERNIC_RQWPTRDBADD), ==, 0);
        g_assert_cmphex(ernic_rig_qrd(r, i, RN_QPN, ERNIC_QPCONF) &
                        (ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_UNDER_RECOVERY),
                        ==, ERNIC_QPCONF_UNDER_RECOVERY);
        /* The next run: enabled again, PSNs anew, doorbell address 0. */
        ernic_rig_qwr(r, i, RN_QPN, ERNIC_QPCONF,
                      (ernic_rig_qrd(r, i, RN_QPN, ERNIC_QPCONF) & ~0x40u) |
                      ERNIC_QPCONF_QP_EN);
        ernic_rig_qwr(r, i, RN_QPN, ERNIC_LSTRQREQ, (RN_SEED_OPCODE << 24) |
                      RN_PSN);
        ernic_rig_qwr(r, i, RN_QPN, ERNIC_SQPSN, RN_PSN + 1);
        qp[i].sq_pidb = qp[i].sq_cidb = 0;
    }
    rn_wqe(r, 1, &qp[1], 0, ERNIC_OP_SEND, DEV_BASE(1) + SRC_OFF + 100, 500,
           0);
    rn_post(r, 1, &qp[1], 1);
    g_assert_cmpuint(ernic_rig_qrd(r, 0, RN_QPN, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_assert_mem(r, DEV_BASE(0) + RQ_OFF, p + 100, 500);
    qtest_memread(r->qts, 0, low, sizeof(low));
    g_assert_cmpmem(low, sizeof(low), sentinel, sizeof(sentinel));
    ernic_rig_stop(r);
}

/* An engine access past the end of card memory fails; nothing wraps. */
static void test_rn_card_bounds(void)
{
    RnQp qp[NDEV] = { 0 };
    uint8_t got[8], zero[8] = { 0 };
    ErnicRig *r;

    r = rn_start(qp, false);
    rn_mr(r, 1, CARD(0), 0x2000000);
    card_write(r, 0, 0, "wrapped?", 8);
    /* The local buffer runs 4 KiB past the card's 16 MiB. */
    rn_wqe(r, 0, &qp[0], 0, ERNIC_OP_WRITE, CARD(0xfff000), 0x2000, CARD(0));
    qp[0].sq_pidb = 1;
    ernic_rig_qwr(r, 0, RN_QPN, ERNIC_SQPI, 1);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 0, RN_QPN, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    /* The failed read of WQE data: "WQE processor" (Table 2-4). */
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (RN_QPN << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    /* The second packet, which would have read offset 0, never left. */
    card_read(r, 1, 0x1000, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), zero, sizeof(zero));
    ernic_rig_stop(r);
}

#define RN_WIN(w)       ((uint64_t)(w) << ERNIC_RN_AXIB_WIN_SHIFT)
#define RN_RW           (ERNIC_RN_AXIB_READ | ERNIC_RN_AXIB_WRITE)

/*
 * A bridge window that does not translate to identity: window 1 (AXI
 * 128 to 256 GiB) translated to PCIe 0, so AXI 128 GiB + x is host x.
 * A WRITE reads its data through it, and a READ writes its data through
 * it; both arrive whole, and nothing lands at the untranslated offsets.
 */
static void test_rn_bridge_xlate(void)
{
    RnQp qp[NDEV] = { 0 };
    g_autofree uint8_t *p = NULL;
    g_autofree uint8_t *q = NULL;
    uint64_t src = DEV_BASE(0) + SRC_OFF, dst = DEV_BASE(0) + MR_OFF;
    ErnicRig *r;

    r = rn_start(qp, false);
    ernic_rig_rn_window(r, 0, 1, 0, RN_RW | 0x2000000);
    rn_mr(r, 1, CARD(0x100000), 0x20000);
    p = ernic_rig_put_pattern(r, src, 0x10000, 7);
    rn_wqe(r, 0, &qp[0], 0, ERNIC_OP_WRITE, RN_WIN(1) | src, 0x10000,
           CARD(0x100000));
    rn_post(r, 0, &qp[0], 1);
    rn_card_check(r, 1, 0x100000, p, 0x10000);
    q = rn_card_pattern(r, 1, 0x110000, 0x10000, 8);
    rn_wqe(r, 0, &qp[0], 1, ERNIC_OP_READ, RN_WIN(1) | dst, 0x10000,
           CARD(0x110000));
    rn_post(r, 0, &qp[0], 1);
    ernic_rig_assert_mem(r, dst, q, 0x10000);
    g_assert_cmphex(rn_mapctl(r, 0, 1), ==, RN_RW | 0x2000000);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_IPKTERRQWPTR), ==, 0);
    ernic_rig_stop(r);
}

/*
 * What a window refuses: a read through a write-only window, and a write
 * past a one-page window's end. Each is an error answer to the engine (a
 * failed DMA: the QP goes FATAL) and sets the window's error bit [29],
 * which programming the entry anew clears.
 */
static void test_rn_bridge_refuse(void)
{
    RnQp qp[NDEV] = { 0 };
    g_autofree uint8_t *q = NULL;
    uint8_t got[8], zero[8] = { 0 };
    ErnicRig *r;

    r = rn_start(qp, false);
    rn_mr(r, 0, CARD(0), 0x100000);
    rn_mr(r, 1, CARD(0), 0x100000);
    /*
     * Device 1 READs 8 KiB into a window of one 4 KiB page, translated to
     * host 0: the first page lands there, the second is refused. Device
     * 0, still healthy, answers.
     */
    ernic_rig_rn_window(r, 1, 2, 0, RN_RW | 1);
    q = rn_card_pattern(r, 0, 0x10000, 0x2000, 9);
    rn_wqe(r, 1, &qp[1], 0, ERNIC_OP_READ, RN_WIN(2), 0x2000,
           CARD(0x10000));
    ernic_rig_qwr(r, 1, RN_QPN, ERNIC_SQPI, 1);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 1, RN_QPN, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(rn_mapctl(r, 1, 2) & ERNIC_RN_AXIB_ERROR, ==,
                    ERNIC_RN_AXIB_ERROR);
    g_assert_cmphex(rn_mapctl(r, 1, 1) & ERNIC_RN_AXIB_ERROR, ==, 0);
    /* The READ completes in error (PG332 p.14). */
    g_assert_cmphex(ernic_rig_qrd(r, 1, RN_QPN, ERNIC_CQHEAD), ==, 1);
    g_assert_cmphex(ernic_rig_cqe(r, 1, 0) & ERNIC_CQE_ERRFLAG_MASK, !=, 0);
    ernic_rig_assert_mem(r, 0, q, 0x1000);
    /*
     * Device 0 WRITEs from a write-only window: the read of its data fails
     * before a packet leaves, so device 1, FATAL now, is not needed.
     */
    ernic_rig_rn_window(r, 0, 1, 0, ERNIC_RN_AXIB_WRITE | 0x2000000);
    rn_wqe(r, 0, &qp[0], 0, ERNIC_OP_WRITE,
           RN_WIN(1) | (DEV_BASE(0) + SRC_OFF), 0x1000, CARD(0));
    ernic_rig_qwr(r, 0, RN_QPN, ERNIC_SQPI, 1);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 0, RN_QPN, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (RN_QPN << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    g_assert_cmphex(rn_mapctl(r, 0, 1), ==, ERNIC_RN_AXIB_WRITE |
                    ERNIC_RN_AXIB_ERROR | 0x2000000);
    card_read(r, 1, 0, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), zero, sizeof(zero));
    ernic_rig_rn_window(r, 0, 1, 0, RN_RW | 0x2000000);
    g_assert_cmphex(rn_mapctl(r, 0, 1), ==, RN_RW | 0x2000000);
    ernic_rig_stop(r);
}

/*
 * An AXI address beyond the bridge's 1 TiB BAR that is not card memory
 * decodes nowhere: the access fails, and no window records an error.
 */
static void test_rn_bridge_outside(void)
{
    RnQp qp[NDEV] = { 0 };
    ErnicRig *r;

    r = rn_start(qp, false);
    rn_mr(r, 1, CARD(0), 0x100000);
    rn_wqe(r, 0, &qp[0], 0, ERNIC_OP_WRITE,
           ERNIC_RN_AXI_BAR_SIZE | (DEV_BASE(0) + SRC_OFF), 0x1000, CARD(0));
    ernic_rig_qwr(r, 0, RN_QPN, ERNIC_SQPI, 1);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 0, RN_QPN, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (RN_QPN << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    for (uint32_t w = 0; w < ERNIC_RN_AXIB_WINDOWS; w++) {
        g_assert_cmphex(rn_mapctl(r, 0, w), ==, RN_RW | 0x2000000);
    }
    ernic_rig_stop(r);
}

/*
 * Xilinx's ERNIC Linux driver (XIB)
 */

/* SEND, WRITE and READ both ways, verified (ernic-rig.h). */
static void both_ways(ErnicRig *r, uint32_t seed)
{
    ErnicRigFirst first = { 0 };

    ernic_rig_traffic(r, &first, seed);
}

/* XIB's QP bring-up: the connection's values, QPCONF last, seed 0x02. */
static void xib_qp(ErnicRig *r, int i, uint32_t qpn, uint32_t dqpn,
                   uint32_t psn, uint32_t rpsn)
{
    ernic_rig_setup_qp(r, i, qpn, 1 - i, dqpn, psn, rpsn,
                       &ernic_rig_default_cfg, DEV_BASE(i));
    ernic_rig_qwr(r, i, qpn, ERNIC_LSTRQREQ, (0x02u << 24) |
                  ((rpsn - 1) & 0xffffff));
}

static void xib_start(ErnicRig *r)
{
    for (int i = 0; i < NDEV; i++) {
        ernic_rig_setup_global(r, i, 0);
        /* Point 4: XRNICADCONF as a whole word, 1 then 0. */
        ernic_rig_wr(r, i, ERNIC_XRNICADCONF, 1);
        g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_XRNICADCONF), ==, 1);
        ernic_rig_wr(r, i, ERNIC_XRNICADCONF, 0);
        g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_XRNICADCONF), ==, 0);
    }
    xib_qp(r, 0, QPN_A, QPN_B, PSN_A, PSN_B);
    xib_qp(r, 1, QPN_B, QPN_A, PSN_B, PSN_A);
}

/* Drop the first data packet: a timeout must bring it again. */
static ErnicRigVerdict drop_first(void *opaque, int from, const uint8_t *f,
                                  size_t len)
{
    bool *dropped = opaque;

    if (from == 0 && !*dropped) {
        *dropped = true;
        return ERNIC_RIG_DROP;
    }
    return ERNIC_RIG_FWD;
}

/*
 * XIB numbers doorbells 1..depth, never 0 (point 3), and expects CQHEADi
 * to equal the last SQPIi once drained. With XRNICADCONF zeroed by the
 * whole-word writes (point 4), the retransmission timer still works.
 */
static void test_xib_doorbells(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    bool dropped = false;
    ErnicRigWire w = { .filter = drop_first, .opaque = &dropped };
    g_autofree uint8_t *p = NULL;
    uint32_t db = 0;

    xib_start(r);
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 2 * SQ_DEPTH * 256, 7);
    for (int n = 0; n < 2 * SQ_DEPTH + 5; n++) {
        uint8_t wqe[ERNIC_WQE_SIZE];
        uint32_t slot = db % SQ_DEPTH;

        qernic_wqe(wqe, ERNIC_OP_WRITE, n, DEV_BASE(0) + SRC_OFF +
                   (n % (2 * SQ_DEPTH)) * 256, 256, MR_VA +
                   (n % (2 * SQ_DEPTH)) * 256, RKEY, 0);
        qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF +
                       slot * ERNIC_WQE_SIZE, wqe, sizeof(wqe));
        db = db % SQ_DEPTH + 1;               /* 1..depth */
        ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, db);
        ERNIC_RIG_PUMP(r, &w, ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD) == db);
        g_assert_cmphex(ernic_rig_cqe(r, 0, slot), ==, CQE(ERNIC_OP_WRITE, n));
    }
    g_assert_true(dropped);
    ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF, p, 2 * SQ_DEPTH * 256);
    ernic_rig_stop(r);
}

/*
 * Writes to read-only registers are accepted and ignored (point 5): the
 * QP's status and pointers, without the software override.
 */
static void test_ro_writes(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    static const uint32_t ro[] = {
        ERNIC_STATQP, ERNIC_STATMSN, ERNIC_CQHEAD, ERNIC_STATCURSQPTR,
        ERNIC_STATRQPIDB, ERNIC_STATSSN, ERNIC_STATRESPSN, ERNIC_STATWQE,
    };
    uint32_t before[ARRAY_SIZE(ro)];

    xib_start(r);
    both_ways(r, 1);
    for (size_t k = 0; k < ARRAY_SIZE(ro); k++) {
        before[k] = ernic_rig_qrd(r, 0, QPN_A, ro[k]);
        ernic_rig_qwr(r, 0, QPN_A, ro[k], 0x00ff00ff);
    }
    for (size_t k = 0; k < ARRAY_SIZE(ro); k++) {
        uint32_t mask = ro[k] == ERNIC_STATQP ?
            ~(ERNIC_STATQP_RETRY_CNT_MASK | ERNIC_STATQP_RNR_CNT_MASK) : ~0u;

        g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ro[k]) & mask, ==,
                        before[k] & mask);
    }
    both_ways(r, 2);
    ernic_rig_stop(r);
}

/*
 * Waiting for an empty QP (point 7): with a request unacknowledged the SQ
 * is empty (bit 9) but the outstanding queue is not (bit 10); both once
 * the ACK is in.
 */
static ErnicRigVerdict hold_acks(void *opaque, int from, const uint8_t *f,
                                 size_t len)
{
    return from == 1 && *(bool *)opaque ? ERNIC_RIG_DROP : ERNIC_RIG_FWD;
}

static void test_statqp_empty(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    bool hold = true;
    ErnicRigWire w = { .filter = hold_acks, .opaque = &hold };

    xib_start(r);
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, 1, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 100, MR_VA, RKEY, 0, NULL);
    ERNIC_RIG_PUMP(r, &w, w.frames[0] >= 1);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) & 0x600, ==,
                    ERNIC_STATQP_SQ_EMPTY);
    hold = false;
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A));
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) & 0x600, ==,
                    0x600);
    ernic_rig_stop(r);
}

/*
 * XIB's fatal path (point 10): INTSTS[7]; walk the incoming packet error
 * status queue from the last index read to IPKTERRQWPTR, QP number in
 * [31:16]; for each, clear the QP's enable and set "under recovery" at
 * once; the QP's task then waits for STATQPi[10:9], SQPIi == CQHEADi and
 * RESPHNDSTS[16], writes disable + recovery again, and XIB's reset path
 * brings the QP back. Traffic after it is verified.
 */
static void xib_fatal_event(ErnicRig *r, int i, uint32_t *seen)
{
    uint32_t base = ernic_rig_rd(r, i, ERNIC_IPKTERRQBA);
    uint32_t wptr = ernic_rig_rd(r, i, ERNIC_IPKTERRQWPTR);

    g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_INTSTS) & ERNIC_INT_FATAL, ==,
                    ERNIC_INT_FATAL);
    g_assert_cmpuint(wptr, !=, *seen);
    for (; *seen != wptr; *seen = (*seen + 1) % 64) {
        uint32_t e = qtest_readl(r->qts, base + 8 * *seen);
        uint32_t qpn = e >> ERNIC_IPKTERRQ_QPID_SHIFT;

        g_assert_cmpuint(qpn, ==, i ? QPN_B : QPN_A);
        ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF,
                      (ernic_rig_qrd(r, i, qpn, ERNIC_QPCONF) &
                       ~ERNIC_QPCONF_QP_EN) | ERNIC_QPCONF_UNDER_RECOVERY);
        ernic_rig_poll_reg(r, i, QOFF(qpn, ERNIC_STATQP), 0x600, 0x600);
        ernic_rig_poll_cqhead(r, i, qpn);
        ernic_rig_poll_reg(r, i, ERNIC_RESPHNDSTS,
                           ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN,
                           ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);
    }
    ernic_rig_wr(r, i, ERNIC_INTSTS, ERNIC_INT_FATAL);
}

static void test_xib_fatal(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    uint32_t seen[NDEV] = { 0 };
    static const ErnicRigReinit ri[NDEV] = {
        { .sqpsn = 0x000100, .rqpsn = 0x000200, .ttl = 64 },
        { .sqpsn = 0x000200, .rqpsn = 0x000100, .ttl = 64 },
    };

    xib_start(r);
    both_ways(r, 3);
    ernic_rig_cause_remote_access(r, 0x55);
    for (int i = 0; i < NDEV; i++) {
        xib_fatal_event(r, i, &seen[i]);
        g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_INTSTS) & ERNIC_INT_FATAL, ==,
                        0);
        ernic_rig_fatal_reinit(r, i, i ? QPN_B : QPN_A, 1 - i, &ri[i]);
        ernic_rig_qwr(r, i, i ? QPN_B : QPN_A, ERNIC_LSTRQREQ, (0x02u << 24) |
                      ((ri[i].rqpsn - 1) & 0xffffff));
    }
    both_ways(r, 4);
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_IPKTERRQWPTR), ==, seen[0]);
    ernic_rig_stop(r);
}

/*
 * The seed opcode of LSTRQREQi[31:24] (point 2): whatever software seeds
 * (XIB 0x02, RecoNIC 0x0A, mlir-air 0x04, or the reset value 0x00), a
 * SEND_ONLY is accepted and a SEND_MIDDLE is an opcode sequence error.
 */
static void test_lstrqreq_seeds(void)
{
    static const uint8_t seeds[] = { 0x00, 0x02, 0x04, 0x0a };

    for (size_t k = 0; k < ARRAY_SIZE(seeds); k++) {
        ErnicRig *r = ernic_rig_start(NULL);
        uint8_t f[FRAME_MAX], ans[FRAME_MAX], pay[1024] = { 1, 2, 3 };
        size_t len;

        ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
        ernic_rig_qwr(r, 1, QPN_B, ERNIC_LSTRQREQ, ((uint32_t)seeds[k] << 24) |
                      ((PSN_A - 1) & 0xffffff));
        len = ernic_rig_frame(f, &r->d[0], &r->d[1], 0x04, QPN_B, PSN_A, true,
                              NULL, 0, pay, 64);
        len = ernic_rig_exchange(r, f, len, ans);
        g_assert_cmphex(ans[F_BTH], ==, 0x11);          /* ACKNOWLEDGE */
        g_assert_cmphex(ans[F_BTH + 12] >> 5, ==, 0);   /* ACK, not NAK */
        ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF, pay, 64);
        /* A whole PMTU, so that only the sequence is wrong. */
        len = ernic_rig_frame(f, &r->d[0], &r->d[1], 0x01, QPN_B, PSN_A + 1,
                              true, NULL, 0, pay, sizeof(pay));
        ernic_rig_wire_write(r->d[1].fd, f, len);
        ernic_rig_poll_reg(r, 1, QOFF(QPN_B, ERNIC_STATQP), ERNIC_STATQP_FATAL,
                           ERNIC_STATQP_FATAL);
        g_assert_cmphex(ernic_rig_fatal_entry(r, 1, 0) & 0xffff, ==,
                        ERNIC_FATAL_OPCODE_SEQ);
        ernic_rig_stop(r);
    }
}

/*
 * AMD mlir-air's pcie-ernic runtime
 */

/*
 * mlir-air enables ERNIC before it programs its buffers and QPs (point 6),
 * seeds LSTRQREQi with 0x04 (point 2), and counts doorbells up without
 * wrapping them at the depth (point 3). SENDs and WRITEs both ways.
 */
static void test_air_enable_first(void)
{
    ErnicRig *r = ernic_rig_start(NULL);
    g_autofree uint8_t *p = NULL;
    g_autofree uint8_t *s = NULL;
    uint32_t sqpi = 0, rqci = 0;

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(r, i, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN | (16 << 8) |
                     ERNIC_XRNICCONF_ERRBUF_EN | (UDP_SPORT << 16));
        ernic_rig_setup_global(r, i, 0);
    }
    ernic_rig_setup_qp(r, 0, QPN_A, 1, QPN_B, PSN_A, PSN_B,
                       &ernic_rig_default_cfg, DEV_BASE(0));
    ernic_rig_setup_qp(r, 1, QPN_B, 0, QPN_A, PSN_B, PSN_A,
                       &ernic_rig_default_cfg, DEV_BASE(1));
    p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 0x40000, 8);
    s = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF + 0x40000, 2000, 9);
    for (int n = 0; n < 3 * SQ_DEPTH; n++) {
        uint8_t wqe[ERNIC_WQE_SIZE];
        bool send = n % 8 == 7;

        qernic_wqe(wqe, send ? ERNIC_OP_SEND : ERNIC_OP_WRITE, n,
                   DEV_BASE(0) + SRC_OFF + (send ? 0x40000 : (n % 64) * 4096),
                   send ? 2000 : 4096, MR_VA + (n % 64) * 4096, RKEY, 0);
        qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF +
                       (sqpi % SQ_DEPTH) * ERNIC_WQE_SIZE, wqe, sizeof(wqe));
        ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, ++sqpi);
        ERNIC_RIG_PUMP(r, NULL, ernic_rig_qrd(r, 0, QPN_A, ERNIC_CQHEAD) ==
                       sqpi);
        if (send) {
            /* The receiver frees the buffer, RQCIi counting up too. */
            ernic_rig_assert_mem(r, DEV_BASE(1) + RQ_OFF + (rqci % RQ_DEPTH) *
                                 ernic_rig_default_cfg.rqbuf, s, 2000);
            ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, ++rqci);
        }
    }
    g_assert_cmpuint(sqpi, >, 0x80);
    for (int k = 0; k < 64; k++) {
        if (k % 8 != 7) {       /* the SENDs' turns wrote nothing there */
            ernic_rig_assert_mem(r, DEV_BASE(1) + MR_OFF + k * 4096,
                                 p + k * 4096, 4096);
        }
    }
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_IPKTERRQWPTR), ==, 0);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/ernic/boards/reconic/layout", test_rn_layout);
    qtest_add_func("/ernic/boards/reconic/write", test_rn_write);
    qtest_add_func("/ernic/boards/reconic/card-memdev", test_rn_card_memdev);
    qtest_add_func("/ernic/boards/reconic/card-props", test_rn_card_props);
    qtest_add_func("/ernic/boards/reconic/card-prealloc",
                   test_rn_card_prealloc);
    qtest_add_func("/ernic/boards/reconic/read-card-queues", test_rn_read);
    qtest_add_func("/ernic/boards/reconic/send-recv", test_rn_send_recv);
    qtest_add_func("/ernic/boards/reconic/batch", test_rn_batch);
    qtest_add_func("/ernic/boards/reconic/destroy", test_rn_destroy);
    qtest_add_func("/ernic/boards/reconic/card-bounds", test_rn_card_bounds);
    qtest_add_func("/ernic/boards/reconic/bridge-xlate",
                   test_rn_bridge_xlate);
    qtest_add_func("/ernic/boards/reconic/bridge-refuse",
                   test_rn_bridge_refuse);
    qtest_add_func("/ernic/boards/reconic/bridge-outside",
                   test_rn_bridge_outside);
    qtest_add_func("/ernic/boards/xib/doorbells", test_xib_doorbells);
    qtest_add_func("/ernic/boards/xib/ro-writes", test_ro_writes);
    qtest_add_func("/ernic/boards/xib/statqp-empty", test_statqp_empty);
    qtest_add_func("/ernic/boards/xib/fatal", test_xib_fatal);
    qtest_add_func("/ernic/boards/lstrqreq-seeds", test_lstrqreq_seeds);
    qtest_add_func("/ernic/boards/mlir-air/enable-first",
                   test_air_enable_first);
    return g_test_run();
}
