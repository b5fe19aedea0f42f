/*
 * Structure-aware fuzzer for ernic (docs/fuzzing.md). It drives both sides
 * of two devices in one QEMU (normally the sanitizer build):
 *
 *  - the guest: register writes with hostile values, rings and doorbell
 *    addresses in RAM, above it, at 0 and inside the devices' own BARs,
 *    hostile queue depths, WQEs with any opcode, length and address,
 *    doorbells, QP enable/disable/recovery, PMTU changes mid-traffic, PD
 *    table entries, the Ethernet path, bus mastering and system reset;
 *  - the wire (socketpair topology): frames between the devices dropped,
 *    duplicated, reordered, corrupted (with or without a fixed ICRC),
 *    truncated or extended, and frames of its own: RoCEv2 requests and
 *    responses for any QP with mutated fields, QP1 MADs, non-RoCE frames;
 *  - or, in the hub topology, devices joined by a QEMU hub, which delivers
 *    synchronously.
 *
 * Action i is drawn from a generator seeded with (seed, i) alone, so any
 * subset of actions can be replayed (--keep) and a failure minimised
 * (scripts/fuzz-minimize.py). A failure is: QEMU dying (a sanitizer report,
 * an abort, a signal), a qtest command not answered within --hang seconds,
 * or the main loop busy with nothing to do (a spin).
 *
 * usage: ernic-fuzz --seed N [--actions N | --seconds N] [--num-qp N]
 *                   [--hub] [--reconic] [--keep LIST] [--print]
 *                   [--hang S]
 * --reconic: both devices with layout=reconic and 1 MiB of card memory;
 * DMA addresses then include card memory, around both of its ends.
 * Exit: 0 no finding; 1 QEMU died (libqtest aborts); 2 hang; 3 spin.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"
#include "hw/rdma/ernic_ext_regs.h"

/* A page list the ERNIC-X action points regions at (16 entries). */
#define PBL_OFF         0x0f8000

typedef struct Fuzz {
    ErnicRig *r;
    uint64_t seed;
    uint64_t st;                /* generator of the current action */
    uint32_t num_qp;
    bool hub;
    bool reconic;               /* layout=reconic: card memory DMA too */
    bool print;
    uint32_t sqpi[NDEV][ERNIC_NUM_QP_MAX + 1];
    uint32_t bar_cfg[NDEV][6];  /* BAR registers, restored after reset */
    QPCIBar udb[NDEV];          /* ERNIC-X doorbell pages (not reconic) */
    uint64_t frames;
    uint8_t held[FRAME_MAX];
    size_t held_len;
    int held_from;
} Fuzz;

static uint64_t cur_action;
static unsigned hang_s = 20;

static void on_alarm(int sig)
{
    char msg[128];
    int n = snprintf(msg, sizeof(msg), "FUZZ-HANG action %" PRIu64
                     ": QEMU did not answer within %u s\n", cur_action,
                     hang_s);

    if (write(STDOUT_FILENO, msg, n)) {
        /* nothing more to do */
    }
    _exit(2);
}

/* splitmix64 */
static uint64_t rnd(Fuzz *z)
{
    uint64_t x = (z->st += 0x9e3779b97f4a7c15ULL);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint32_t below(Fuzz *z, uint32_t n)
{
    return n ? rnd(z) % n : 0;
}

static bool chance(Fuzz *z, unsigned pct)
{
    return below(z, 100) < pct;
}

/* card-mem of the --reconic configuration */
#define FUZZ_CARD           (1ull << 20)

/* Actions between two checks that the main loop goes idle. */
#define SPIN_CHECK_EVERY    4000

/* The Q_Key of the fuzzer's UD QPs (docs/extension.md, "UD QPs"). */
#define FUZZ_QKEY       0x22222222u
#define FUZZ_XRCD       0x2a            /* XRC domain of targets, SRQs */
#define FUZZ_XRC_SRQ    1               /* device 1's XRC SRQ (seeds 3 mod 4) */
/* The multicast group the fuzzer attaches QPs to, and its MAC. */
#define FUZZ_MC_IP      0xe0000105u         /* 224.0.1.5 */
static const uint8_t fuzz_mc_mac[6] = { 0x01, 0x00, 0x5e, 0x00, 0x01, 0x05 };

#define PICK(z, ...) ({                                                  \
    const uint64_t v_[] = { __VA_ARGS__ };                               \
    v_[below(z, ARRAY_SIZE(v_))];                                        \
})

/*
 * Addresses only layout=reconic gives a meaning: card memory around both
 * of its ends, and AXI addresses at the QDMA bridge's window boundaries
 * and beyond its 1 TiB.
 */
static uint64_t any_card_addr(Fuzz *z)
{
    uint64_t win = 1ULL << ERNIC_RN_AXIB_WIN_SHIFT;

    if (chance(z, 30)) {
        return PICK(z, win - 64, win, 7 * win + DEV_BASE(0),
                    ERNIC_RN_AXI_BAR_SIZE - 8, ERNIC_RN_AXI_BAR_SIZE,
                    ERNIC_RN_AXI_BAR_SIZE + DEV_BASE(0));
    }
    return ERNIC_RN_CARD_ADDR +
           PICK(z, 0, 0x1000, FUZZ_CARD - 0x1000, FUZZ_CARD - 64,
                FUZZ_CARD - 1, FUZZ_CARD, FUZZ_CARD + 0x1000,
                ~ERNIC_RN_CARD_MASK - 0xfff, below(z, FUZZ_CARD));
}

/* An address for the device to DMA to or from. */
static uint64_t any_addr(Fuzz *z, int dev)
{
    ErnicRigDev *d = &z->r->d[dev];
    uint64_t regs = d->e.regs.addr + d->e.reg;

    if (z->reconic && chance(z, 25)) {
        return any_card_addr(z);
    }
    switch (below(z, 12)) {
    case 0:
        return regs + below(z, ERNIC_REG_WINDOW_SIZE / 4) * 4;
    case 1:
        return regs + ERNIC_QP_OFFSET(1 + below(z, z->num_qp)) +
               PICK(z, ERNIC_QPCONF, ERNIC_SQPI, ERNIC_CQHEAD, ERNIC_RQCI,
                    ERNIC_STATQP, ERNIC_QDEPTH);
    case 2:
        return z->r->d[1 - dev].e.regs.addr + z->r->d[1 - dev].e.reg +
               below(z, 0x40000);
    case 3:
        return d->e.eth.addr + below(z, ERNIC_ETH_BAR_SIZE);
    case 4:
        return PICK(z, 0, 0x40000000ULL, 0xfff0000000000ULL,
                    0xfffffffffffff000ULL, 0x1fffffffULL, 0xfee00000ULL);
    case 5:
        return rnd(z);
    default:
        return DEV_BASE(dev) + (below(z, 0x2000000) & ~(uint64_t)
                                PICK(z, 0, 3, 0xfff));
    }
}

static uint32_t any_len(Fuzz *z, uint32_t pmtu)
{
    return PICK(z, 0, 1, 15, 16, 17, 255, 256, 1023, 1024, 1025, 4096,
                65536, 8 << 20, (8 << 20) + 1, 0xffffffffu, pmtu - 1, pmtu,
                pmtu + 1, 3 * pmtu, 100, 3000, 70000);
}

static uint32_t any_qpn(Fuzz *z)
{
    if (chance(z, 70)) {
        return PICK(z, QPN_A, QPN_B, 4, 1);
    }
    return 1 + below(z, z->num_qp);
}

static uint32_t any_val(Fuzz *z)
{
    switch (below(z, 6)) {
    case 0:
        return PICK(z, 0, 1, 2, 0xffffffffu, 0xffff, 0x10000, 0x80000000u);
    case 1:
        return below(z, 16);
    case 2:
        return 1u << below(z, 32);
    default:
        return rnd(z);
    }
}

static void log_action(Fuzz *z, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void log_action(Fuzz *z, const char *fmt, ...)
{
    va_list ap;

    if (!z->print) {
        return;
    }
    printf("A%" PRIu64 " ", cur_action);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/*
 * Guest actions
 */

static const uint32_t qp_regs[] = {
    ERNIC_QPCONF, ERNIC_QPADVCONF, ERNIC_RQBA, ERNIC_RQBAMSB, ERNIC_SQBA,
    ERNIC_SQBAMSB, ERNIC_CQBA, ERNIC_CQBAMSB, ERNIC_RQWPTRDBADD,
    ERNIC_RQWPTRDBADDMSB, ERNIC_CQDBADD, ERNIC_CQDBADDMSB, ERNIC_CQHEAD,
    ERNIC_RQCI, ERNIC_SQPI, ERNIC_QDEPTH, ERNIC_SQPSN, ERNIC_LSTRQREQ,
    ERNIC_DESTQPCONF, ERNIC_MACDESADDMSB, ERNIC_MACDESADDLSB,
    ERNIC_IPDESADDR1, ERNIC_TIMEOUTCONF, ERNIC_STATSSN, ERNIC_STATMSN,
    ERNIC_STATQP, ERNIC_STATCURSQPTR, ERNIC_STATRESPSN, ERNIC_STATRQBUFCA,
    ERNIC_STATWQE, ERNIC_STATRQPIDB, ERNIC_PD,
};

static const uint32_t g_regs[] = {
    ERNIC_XRNICCONF, ERNIC_XRNICADCONF, ERNIC_INTEN, ERNIC_INTSTS,
    ERNIC_ERRBUFBA, ERNIC_ERRBUFBAMSB, ERNIC_ERRBUFSZ, ERNIC_IPKTERRQBA,
    ERNIC_IPKTERRQBAMSB, ERNIC_IPKTERRQSZ, ERNIC_IPv4XADD, ERNIC_MACXADDLSB,
    ERNIC_MACXADDMSB,
};

static void act_reg(Fuzz *z)
{
    int dev = below(z, NDEV);
    uint32_t off, val = any_val(z);

    if (chance(z, 70)) {
        uint32_t qpn = any_qpn(z);

        off = ERNIC_QP_OFFSET(qpn) + qp_regs[below(z, ARRAY_SIZE(qp_regs))];
    } else if (chance(z, 50)) {
        off = g_regs[below(z, ARRAY_SIZE(g_regs))];
    } else {
        off = below(z, ERNIC_REG_WINDOW_SIZE);
    }
    log_action(z, "reg dev%d 0x%x <- 0x%x", dev, off, val);
    if (off & 3 || chance(z, 3)) {
        qpci_io_writeb(z->r->d[dev].e.pdev, z->r->d[dev].e.regs,
                       z->r->d[dev].e.reg + off, val);
    } else {
        ernic_rig_wr(z->r, dev, off, val);
    }
}

static void act_ring(Fuzz *z)
{
    int dev = below(z, NDEV);
    uint32_t qpn = any_qpn(z);
    uint64_t a = any_addr(z, dev);
    static const uint32_t lo[] = {
        ERNIC_SQBA, ERNIC_CQBA, ERNIC_RQBA, ERNIC_CQDBADD, ERNIC_RQWPTRDBADD,
    };
    int k = below(z, ARRAY_SIZE(lo));

    log_action(z, "ring dev%d QP%u reg 0x%x = 0x%" PRIx64, dev, qpn, lo[k],
               a);
    ernic_rig_qwr64(z->r, dev, qpn, lo[k], lo[k] + 4, a);
}

static void act_qpconf(Fuzz *z)
{
    int dev = below(z, NDEV);
    uint32_t qpn = any_qpn(z);
    uint32_t v = ernic_rig_qrd(z->r, dev, qpn, ERNIC_QPCONF);

    switch (below(z, 6)) {
    case 0:
        v = (v & ~ERNIC_QPCONF_PMTU_MASK) |
            (below(z, 8) << ERNIC_QPCONF_PMTU_SHIFT);
        break;
    case 1:
        v ^= ERNIC_QPCONF_QP_EN;
        break;
    case 2:
        v ^= ERNIC_QPCONF_UNDER_RECOVERY;
        break;
    case 3:
        v = (v & 0xffff) | (any_val(z) << ERNIC_QPCONF_RQBUFSZ_SHIFT);
        break;
    case 4:
        ernic_rig_qwr(z->r, dev, qpn, ERNIC_QDEPTH,
                      PICK(z, 0, 1, 2, 0xffff, 0x10001, 0xffffffffu, 0x40040,
                           0x20010, rnd(z)));
        log_action(z, "qdepth dev%d QP%u", dev, qpn);
        return;
    default:
        v = any_val(z);
        break;
    }
    log_action(z, "qpconf dev%d QP%u = 0x%x", dev, qpn, v);
    ernic_rig_qwr(z->r, dev, qpn, ERNIC_QPCONF, v);
}

/*
 * The features an odd seed starts with and mostly keeps: atomics and
 * FLUSH/ATOMIC WRITE, and for seeds 3 mod 4 XRC with what it needs.
 */
static uint32_t fuzz_seed_feat(Fuzz *z)
{
    return ERNIC_EXT_F_ATOMIC | ERNIC_EXT_F_PLACE |
           (z->seed & 2 ? ERNIC_EXT_F_XRC | ERNIC_EXT_F_SRQ |
            ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE : 0) |
           (z->seed & 4 ? ERNIC_EXT_F_DBREC | ERNIC_EXT_F_RQREC : 0);
}

/* Device 1's FUZZ_XRC_SRQ: of FUZZ_XRCD, 15 WQEs in the region. */
static void fuzz_xrc_srq(Fuzz *z)
{
    uint64_t ring = DEV_BASE(1) + MR_OFF + 0x180000;
    uint32_t x = ERNIC_EXT_SRQ_OFFSET(FUZZ_XRC_SRQ);
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

    for (int k = 0; k < 16; k++) {
        stq_le_p(&w[ERNIC_SGE_ADDR], DEV_BASE(1) + MR_OFF + k * 0x2000);
        stl_le_p(&w[ERNIC_SGE_LEN], 0x2000);
        qtest_memwrite(z->r->qts, ring + k * ERNIC_RWQE_SIZE, w, sizeof(w));
    }
    ernic_rig_wr(z->r, 1, x + ERNIC_SRQBA, ring);
    ernic_rig_wr(z->r, 1, x + ERNIC_SRQBAMSB, ring >> 32);
    ernic_rig_wr(z->r, 1, x + ERNIC_SRQDEPTH, 16);
    ernic_rig_wr(z->r, 1, x + ERNIC_SRQPD, PD_NUM);
    ernic_rig_wr(z->r, 1, x + ERNIC_SRQPI, 15);
    ernic_rig_wr(z->r, 1, x + ERNIC_SRQCONF, ERNIC_SRQCONF_EN |
                 ERNIC_SRQCONF_XRC | FUZZ_XRCD << 8);
}

/*
 * Odd seeds start with those features on, QPs A, B and 4 taking atomics
 * and FLUSH; seeds 3 mod 4 also make QP A an XRC initiator and QP B a
 * target of FUZZ_XRCD, with device 1's FUZZ_XRC_SRQ an XRC SRQ holding
 * 15 WQEs: otherwise each needs a run of lucky actions (EXTCTRL, then
 * EXTQPCONFi, XRCDi, an SRQ, then a post). Seeds 5 and 7 mod 8 give QPs
 * A and B SQ and RQ doorbell records in the region (ERNIC-X DBREC,
 * RQREC), which posts and receives keep up to date (fuzz_post_record())
 * and the wire may overwrite.
 */
static void fuzz_seed_verbs(Fuzz *z)
{
    uint32_t take = ERNIC_EXTQPCONF_ATOMIC | ERNIC_EXTQPCONF_FLUSH;
    uint32_t dbrec = z->seed & 4 ? ERNIC_EXTQPCONF_DBREC |
                                   ERNIC_EXTQPCONF_RQREC : 0;
    bool xrc = z->seed & 2;

    for (int i = 0; i < NDEV; i++) {
        uint32_t x = ERNIC_EXT_QP_OFFSET(i ? QPN_B : QPN_A);

        ernic_rig_wr(z->r, i, ERNIC_EXTCTRL, fuzz_seed_feat(z));
        ernic_rig_wr(z->r, i, x + ERNIC_DBRECA,
                     DEV_BASE(i) + MR_OFF + 0xffc);
        ernic_rig_wr(z->r, i, x + ERNIC_EXTQPCONF, dbrec | take |
                     (!xrc ? 0 : i ? ERNIC_EXTQPCONF_XRC_TGT |
                      ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE :
                      ERNIC_EXTQPCONF_XRC_INI));
        ernic_rig_wr(z->r, i, ERNIC_EXT_QP_OFFSET(4) + ERNIC_EXTQPCONF,
                     take);
    }
    if (!xrc) {
        return;
    }
    ernic_rig_wr(z->r, 1, ERNIC_EXT_QP_OFFSET(QPN_B) + ERNIC_XRCD,
                 FUZZ_XRCD);
    fuzz_xrc_srq(z);
}

/*
 * A BIND WQE (ERNIC-X MW) on a window among the first entries of the
 * table, to the region at MR_INDEX most of the time.
 */
static void fuzz_bind_wqe(Fuzz *z, uint8_t *wqe)
{
    stl_le_p(&wqe[ERNIC_WQE_RTAG], (below(z, 16) << 8) | below(z, 256));
    stq_le_p(&wqe[ERNIC_WQE_BIND_LEN], chance(z, 70) ? below(z, 0x10000) :
             rnd(z));
    stl_le_p(&wqe[ERNIC_WQE_BIND_LKEY], chance(z, 70) ?
             (MR_INDEX << 8) | MR_KEY : any_val(z));
    stl_le_p(&wqe[ERNIC_WQE_BIND_ACC], below(z, 64));
}

/*
 * ERNIC-X DBREC, RQREC: the index @val written to SQPIi (@off 0) or RQCIi
 * (@off ERNIC_RQREC_OFFSET) goes into QP @qpn's doorbell record too,
 * mostly, when the record is in the region (act_ext_qp()); one elsewhere
 * only the wire and chance write.
 */
static void fuzz_post_record(Fuzz *z, int dev, uint32_t qpn, uint32_t off,
                             uint32_t val)
{
    uint32_t x = ERNIC_EXT_QP_OFFSET(qpn);
    uint64_t rec, mr = DEV_BASE(dev) + MR_OFF;

    if (qpn > z->num_qp || chance(z, 10)) {
        return;
    }
    rec = (uint64_t)ernic_rig_rd(z->r, dev, x + ERNIC_DBRECAMSB) << 32 |
          ernic_rig_rd(z->r, dev, x + ERNIC_DBRECA);
    if (rec >= mr && rec < mr + 0x1000) {
        qtest_writel(z->r->qts, rec + off, chance(z, 90) ? val :
                     any_val(z));
    }
}

/*
 * A FLUSH or ATOMIC WRITE WQE (ERNIC-X PLACE): no local data, an aligned
 * word of the region, a FLUSH of a range or the region, mostly global.
 */
static void fuzz_place_wqe(Fuzz *z, uint8_t *wqe)
{
    stl_le_p(&wqe[ERNIC_WQE_LENGTH], chance(z, 90) ? 0 : 8);
    stq_le_p(&wqe[ERNIC_WQE_ROFFSET], MR_VA + below(z, 64) * 8);
    if (wqe[ERNIC_WQE_OPCODE] == ERNIC_OP_FLUSH) {
        stl_le_p(&wqe[ERNIC_WQE_FLUSH_LEN], below(z, 0x3000));
        stl_le_p(&wqe[ERNIC_WQE_FLUSH_FETH],
                 chance(z, 90) ? PICK(z, 0x01, 0x11, 0x02) : below(z, 64));
    }
}

static void act_post(Fuzz *z)
{
    int dev = below(z, NDEV);
    uint32_t qpn = chance(z, 80) ? (dev ? QPN_B : QPN_A) : any_qpn(z);
    uint8_t wqe[ERNIC_WQE_SIZE];
    uint32_t depth = SQ_DEPTH, n = 1 + (chance(z, 20) ? below(z, 20) : 0);
    uint64_t sq = DEV_BASE(dev) + SQ_OFF +
                  (qpn == 4 ? 0x200000 : qpn == QPN_A || qpn == QPN_B ? 0 :
                   0x400000);

    for (uint32_t k = 0; k < n; k++) {
        uint8_t op = chance(z, 90) ?
                     PICK(z, ERNIC_OP_WRITE, ERNIC_OP_WRITE_IMM, ERNIC_OP_SEND,
                          ERNIC_OP_SEND_IMM, ERNIC_OP_READ,
                          ERNIC_OP_SEND_INV, ERNIC_OP_REG_MR,
                          ERNIC_OP_LOCAL_INV, ERNIC_OP_ATOMIC_CMP_SWP,
                          ERNIC_OP_ATOMIC_FETCH_ADD, ERNIC_OP_BIND_MW,
                          ERNIC_OP_ATOMIC_WRITE, ERNIC_OP_FLUSH) :
                     below(z, 256);
        bool atomic = op == ERNIC_OP_ATOMIC_CMP_SWP ||
                      op == ERNIC_OP_ATOMIC_FETCH_ADD;
        bool place = op == ERNIC_OP_ATOMIC_WRITE || op == ERNIC_OP_FLUSH;

        for (int b = 0; b < ERNIC_WQE_SIZE; b += 8) {
            stq_le_p(wqe + b, rnd(z));
        }
        wqe[ERNIC_WQE_OPCODE] = op;
        stq_le_p(&wqe[ERNIC_WQE_LADDR], chance(z, 75) ?
                 DEV_BASE(dev) + SRC_OFF + below(z, 0x100000) :
                 any_addr(z, dev));
        stl_le_p(&wqe[ERNIC_WQE_LENGTH], chance(z, 60) ? below(z, 5000) :
                 any_len(z, 1024));
        stq_le_p(&wqe[ERNIC_WQE_ROFFSET], chance(z, 75) ?
                 MR_VA + below(z, MR_LEN) : rnd(z));
        /* An XRC initiator's remote SRQ, mostly a low one (ERNIC-X). */
        stl_le_p(&wqe[ERNIC_WQE_XRC_SRQN], chance(z, 60) ? FUZZ_XRC_SRQ :
                 chance(z, 70) ? below(z, 4) : rnd(z));
        if (atomic && chance(z, 80)) {
            /* Mostly the 8 aligned bytes an atomic names (ERNIC-X). */
            stl_le_p(&wqe[ERNIC_WQE_LENGTH], 8);
            stq_le_p(&wqe[ERNIC_WQE_ROFFSET], MR_VA + below(z, 64) * 8);
        }
        if (op == ERNIC_OP_BIND_MW && chance(z, 80)) {
            fuzz_bind_wqe(z, wqe);
        }
        if (place && chance(z, 80)) {
            fuzz_place_wqe(z, wqe);
        }
        stl_le_p(&wqe[ERNIC_WQE_RTAG], chance(z, 80) ? RKEY : any_val(z));
        qtest_memwrite(z->r->qts, sq + (z->sqpi[dev][qpn] % depth) *
                       ERNIC_WQE_SIZE, wqe, sizeof(wqe));
        z->sqpi[dev][qpn]++;
    }
    log_action(z, "post dev%d QP%u x%u sqpi %u", dev, qpn, n,
               z->sqpi[dev][qpn]);
    fuzz_post_record(z, dev, qpn, 0, z->sqpi[dev][qpn] % depth);
    if (!z->reconic && qpn <= ERNIC_NUM_QP_MAX && chance(z, 10)) {
        /* A process polling its page (UPOLL): a read, nothing rung. */
        qpci_io_readl(z->r->d[dev].e.pdev, z->udb[dev],
                      ERNIC_UDB_OFFSET(qpn) + PICK(z, ERNIC_UDB_CQHEAD,
                                                   ERNIC_UDB_RQPI));
    }
    if (!z->reconic && qpn <= ERNIC_NUM_QP_MAX && chance(z, 30)) {
        /* Through the QP's doorbell page: rings only a user QP. */
        qpci_io_writel(z->r->d[dev].e.pdev, z->udb[dev],
                       ERNIC_UDB_OFFSET(qpn) + PICK(z, ERNIC_UDB_SQPI,
                                                    ERNIC_UDB_RQCI,
                                                    below(z, 4096) & ~3),
                       chance(z, 90) ? z->sqpi[dev][qpn] % depth :
                       any_val(z));
        return;
    }
    ernic_rig_qwr(z->r, dev, qpn, ERNIC_SQPI, chance(z, 90) ?
                  z->sqpi[dev][qpn] % depth : any_val(z));
}

static void act_recv(Fuzz *z)
{
    int dev = below(z, NDEV);
    uint32_t qpn = chance(z, 80) ? (dev ? QPN_B : QPN_A) : any_qpn(z);
    uint32_t ci = ernic_rig_qrd(z->r, dev, qpn, ERNIC_STATRQPIDB);

    /*
     * Give back what was received, as a driver does (or garbage). With
     * the seeds' RQ records, often through the record alone, RQCIi
     * granting nothing: the next message must read the record.
     */
    fuzz_post_record(z, dev, qpn, ERNIC_RQREC_OFFSET, ci);
    if (z->seed & 4 && chance(z, 80)) {
        ci++;
    }
    ernic_rig_qwr(z->r, dev, qpn, ERNIC_RQCI, chance(z, 90) ? ci :
                  any_val(z));
    log_action(z, "rqci dev%d QP%u", dev, qpn);
}

static void act_pdt(Fuzz *z)
{
    int dev = below(z, NDEV);
    uint32_t idx = chance(z, 50) ? MR_INDEX : below(z, ERNIC_PDT_ENTRIES);
    static const uint32_t regs[] = {
        ERNIC_PDPDNUM, ERNIC_VIRTADDRLSB, ERNIC_VIRTADDRMSB,
        ERNIC_BUFBASEADDRLSB, ERNIC_BUFBASEADDRMSB, ERNIC_BUFRKEY,
        ERNIC_WRRDBUFLEN, ERNIC_ACCESSDESC,
    };
    uint32_t reg = regs[below(z, ARRAY_SIZE(regs))];
    uint32_t val = reg == ERNIC_BUFBASEADDRLSB ? (uint32_t)any_addr(z, dev) :
                   any_val(z);

    log_action(z, "pdt dev%d [%u] 0x%x = 0x%x", dev, idx, reg, val);
    ernic_rig_wr(z->r, dev, ERNIC_PDT_OFFSET(idx) + reg, val);
}

/*
 * ERNIC-X (docs/extension.md): EXTCTRL, written with ERNIC disabled or
 * not, and entries of the extended MR table whose page lists point
 * anywhere (RAM, the device's own BARs, the peer's, nowhere). The entry
 * the wire's R_Key names is the most likely one.
 */
/*
 * A per-QP extension block (receive metadata, the doorbell record):
 * written with its QP disabled for a moment, or while enabled
 * (ignored), for any QP number up to one past the last. The record is
 * mostly in the region, where the wire's WRITEs change it too.
 */
static void act_ext_qp(Fuzz *z, int dev)
{
    uint32_t qpn = chance(z, 50) ? (dev ? QPN_B : QPN_A) :
                   chance(z, 40) ? ERNIC_QP_GSI : 1 + below(z, z->num_qp + 1);
    uint32_t x = ERNIC_EXT_QP_OFFSET(qpn);
    uint32_t conf = ernic_rig_qrd(z->r, dev, qpn, ERNIC_QPCONF);
    uint64_t ba = chance(z, 70) ? DEV_BASE(dev) + MR_OFF + below(z, 0x100000)
                                : any_addr(z, dev);
    uint64_t rec = chance(z, 70) ? DEV_BASE(dev) + MR_OFF + below(z, 0x1000)
                                 : any_addr(z, dev);
    uint32_t dbrec = (chance(z, 40) ? ERNIC_EXTQPCONF_DBREC : 0) |
                     (chance(z, 30) ? ERNIC_EXTQPCONF_RQREC : 0);

    log_action(z, "ext qp%u dev%d meta 0x%" PRIx64 " record 0x%" PRIx64
               "%s", qpn, dev, ba, rec, dbrec ? " on" : "");
    if (chance(z, 70)) {
        ernic_rig_qwr(z->r, dev, qpn, ERNIC_QPCONF, conf & ~ERNIC_QPCONF_QP_EN);
    }
    ernic_rig_wr(z->r, dev, x + ERNIC_RXMETABA, ba);
    ernic_rig_wr(z->r, dev, x + ERNIC_RXMETABAMSB, ba >> 32);
    ernic_rig_wr(z->r, dev, x + ERNIC_DBRECA, rec);
    ernic_rig_wr(z->r, dev, x + ERNIC_DBRECAMSB, rec >> 32);
    ernic_rig_wr(z->r, dev, x + ERNIC_EXTQPCONF, dbrec | (chance(z, 80) ?
                 PICK(z, ERNIC_EXTQPCONF_RXMETA, ERNIC_EXTQPCONF_XWQE,
                      ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE |
                      ERNIC_EXTQPCONF_XWQE, ERNIC_EXTQPCONF_XWQE |
                      ERNIC_EXTQPCONF_USER, ERNIC_EXTQPCONF_RXMETA |
                      ERNIC_EXTQPCONF_RXWQE | ERNIC_EXTQPCONF_XWQE |
                      ERNIC_EXTQPCONF_USER, ERNIC_EXTQPCONF_RXMETA |
                      ERNIC_EXTQPCONF_RXWQE | ERNIC_EXTQPCONF_SRQ |
                      below(z, 4) << 16, ERNIC_EXTQPCONF_RXMETA |
                      ERNIC_EXTQPCONF_RXWQE | ERNIC_EXTQPCONF_XWQE |
                      ERNIC_EXTQPCONF_UD, ERNIC_EXTQPCONF_UC,
                      ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE |
                      ERNIC_EXTQPCONF_XWQE | ERNIC_EXTQPCONF_UC,
                      ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE |
                      ERNIC_EXTQPCONF_SRQ | ERNIC_EXTQPCONF_UC |
                      below(z, 4) << 16, ERNIC_EXTQPCONF_RXMETA |
                      ERNIC_EXTQPCONF_RXWQE | ERNIC_EXTQPCONF_XRC_TGT,
                      ERNIC_EXTQPCONF_XRC_INI) : any_val(z)));
    ernic_rig_wr(z->r, dev, x + ERNIC_QKEY, chance(z, 80) ? FUZZ_QKEY :
                 any_val(z));
    /* An XRC target's domain: mostly the one the SRQs get (ERNIC-X). */
    ernic_rig_wr(z->r, dev, x + ERNIC_XRCD, chance(z, 80) ? FUZZ_XRCD :
                 any_val(z));
    ernic_rig_qwr(z->r, dev, qpn, ERNIC_QPCONF, conf);
    if (chance(z, 50)) {
        /* Remote atomic or FLUSH access: they change on an enabled QP. */
        ernic_rig_wr(z->r, dev, x + ERNIC_EXTQPCONF,
                     ernic_rig_rd(z->r, dev, x + ERNIC_EXTQPCONF) ^
                     PICK(z, ERNIC_EXTQPCONF_ATOMIC, ERNIC_EXTQPCONF_FLUSH));
    }
}

/*
 * An AH over IPv6 (docs/extension.md, "UD QPs": the packet's IP version
 * is its AH's, whatever the QP's): device @dev's AH @idx to its peer's
 * IPv6 address, fe80::e3:<peer>, which the peer then has as IPv6XADD.
 */
static void ext_ah_ipv6(Fuzz *z, int dev, uint32_t idx)
{
    uint8_t ip[16] = { 0xfe, 0x80, [14] = 0xe3, 1 - dev };

    log_action(z, "ah dev%d [%u] ipv6", dev, idx);
    for (int k = 0; k < 4; k++) {
        ernic_rig_wr(z->r, 1 - dev, ERNIC_IPv6XADD4 - 4 * k,
                     ldl_be_p(ip + 4 * k));
        ernic_rig_wr(z->r, dev, ERNIC_AHIP4 - 4 * k, ldl_be_p(ip + 4 * k));
    }
    ernic_rig_wr(z->r, dev, ERNIC_AHCONF,
                 ERNIC_AHCONF_VALID | ERNIC_AHCONF_IPV6 | TTL);
    ernic_rig_wr(z->r, dev, ERNIC_AHCMD, ERNIC_AHCMD_WRITE);
}

/*
 * An ERNIC-X address handle (docs/extension.md, "UD QPs"): the entry
 * the WQEs' RTAG names mostly, to the peer or anywhere, of any PD.
 */
static void act_ext_ah(Fuzz *z, int dev)
{
    QErnic *p = &z->r->d[1 - dev].e, mc;
    uint32_t idx = chance(z, 60) ? RKEY & 0xfff : below(z, 4096);

    if (chance(z, 20)) {
        /* To the fuzzer's multicast group. */
        mc.ip = FUZZ_MC_IP;
        memcpy(mc.mac, fuzz_mc_mac, 6);
        p = &mc;
    }

    log_action(z, "ah dev%d [%u]", dev, idx);
    ernic_rig_wr(z->r, dev, ERNIC_AHIDX, idx);
    ernic_rig_wr(z->r, dev, ERNIC_AHPD, chance(z, 80) ? PD_NUM : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_AHMACMSB, chance(z, 80) ?
                 lduw_be_p(p->mac) : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_AHMACLSB, chance(z, 80) ?
                 ldl_be_p(p->mac + 2) : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_AHIP1, chance(z, 80) ? p->ip : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_AHCONF, chance(z, 80) ?
                 ERNIC_AHCONF_VALID | TTL : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_AHCMD, chance(z, 90) ? ERNIC_AHCMD_WRITE :
                 below(z, 4));
    if (chance(z, 20)) {
        ext_ah_ipv6(z, dev, idx);
    }
}

/*
 * An ERNIC-X multicast group (docs/extension.md, "Multicast"): mostly
 * the fuzzer's group with the rig's QPs attached, or anything.
 */
static void act_ext_mcg(Fuzz *z, int dev)
{
    uint32_t idx = chance(z, 70) ? 1 : below(z, 128), k;

    log_action(z, "mcg dev%d [%u]", dev, idx);
    ernic_rig_wr(z->r, dev, ERNIC_MCIDX, idx);
    ernic_rig_wr(z->r, dev, ERNIC_MCIP1, chance(z, 80) ? FUZZ_MC_IP :
                 any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_MCCONF, chance(z, 80) ?
                 ERNIC_MCCONF_VALID : any_val(z));
    for (k = 0; k < ERNIC_MCG_QP_WORDS; k++) {
        ernic_rig_wr(z->r, dev, ERNIC_MCQP0 + 4 * k,
                     k == 0 && chance(z, 80) ?
                     PICK(z, 1u << (QPN_A - 1), 1u << (QPN_B - 1),
                          (1u << (QPN_A - 1)) | (1u << (QPN_B - 1)) |
                          (1u << 3), 0) :
                     chance(z, 80) ? 0 : any_val(z));
    }
    ernic_rig_wr(z->r, dev, ERNIC_MCCMD, chance(z, 90) ? ERNIC_MCCMD_WRITE :
                 below(z, 4));
}

/*
 * An ERNIC-X shared receive queue (docs/extension.md): a block of SRQ
 * 0..3 (or any, past the last too) with its ring anywhere, its WQEs
 * naming anything, its producer index rung by register or through its
 * doorbell page; or the extension's event registers.
 */
/* Mostly a low SRQ, mostly not the XRC SRQ of fuzz_seed_verbs(). */
static uint32_t fuzz_srq_n(Fuzz *z)
{
    uint32_t n = chance(z, 80) ? below(z, 4) : below(z, ERNIC_SRQ_NUM + 2);

    return (z->seed & 3) == 3 && n == FUZZ_XRC_SRQ && chance(z, 90) ? 0 : n;
}

static void act_ext_srq(Fuzz *z, int dev)
{
    uint32_t n = fuzz_srq_n(z);
    uint32_t x = ERNIC_EXT_SRQ_OFFSET(n);
    uint64_t ring = chance(z, 70) ? DEV_BASE(dev) + MR_OFF + 0x100000 +
                                    n * 0x10000 : any_addr(z, dev);
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

    log_action(z, "srq dev%d [%u] ring 0x%" PRIx64, dev, n, ring);
    if (chance(z, 20)) {
        ernic_rig_wr(z->r, dev, PICK(z, ERNIC_EXTEVT, ERNIC_EXTEVTEN),
                     any_val(z));
        return;
    }
    stq_le_p(&w[ERNIC_SGE_ADDR], chance(z, 70) ? DEV_BASE(dev) + MR_OFF +
             below(z, 0x100000) : any_addr(z, dev));
    stl_le_p(&w[ERNIC_SGE_LEN], chance(z, 80) ? below(z, 0x3000) :
             any_val(z));
    stl_le_p(&w[ERNIC_SGE_LKEY], chance(z, 50) ? 0 : any_val(z));
    qtest_memwrite(z->r->qts, ring + below(z, 16) * ERNIC_RWQE_SIZE, w,
                   sizeof(w));
    if (chance(z, 40)) {
        ernic_rig_wr(z->r, dev, x + ERNIC_SRQCONF, 0);
        ernic_rig_wr(z->r, dev, x + ERNIC_SRQBA, ring);
        ernic_rig_wr(z->r, dev, x + ERNIC_SRQBAMSB, ring >> 32);
        ernic_rig_wr(z->r, dev, x + ERNIC_SRQDEPTH,
                     chance(z, 80) ? PICK(z, 2, 16) : any_val(z));
        ernic_rig_wr(z->r, dev, x + ERNIC_SRQPD,
                     chance(z, 80) ? PD_NUM : any_val(z));
        ernic_rig_wr(z->r, dev, x + ERNIC_SRQCONF,
                     chance(z, 80) ? PICK(z, 1, 3, 5 | FUZZ_XRCD << 8,
                                      5 | (FUZZ_XRCD + 1) << 8) :
                     any_val(z));
    }
    if (chance(z, 30)) {
        ernic_rig_wr(z->r, dev, x + ERNIC_SRQLIMIT, any_val(z));
    }
    if (!z->reconic && chance(z, 30)) {
        qpci_io_writel(z->r->d[dev].e.pdev, z->udb[dev],
                       ERNIC_UDB_SRQ_OFFSET(n) + PICK(z, ERNIC_UDB_SRQPI,
                                                      ERNIC_UDB_SRQCI),
                       any_val(z));
        return;
    }
    ernic_rig_wr(z->r, dev, x + PICK(z, ERNIC_SRQPI, ERNIC_SRQCI),
                 chance(z, 80) ? below(z, 16) : any_val(z));
}

static void act_ext(Fuzz *z)
{
    int dev = below(z, NDEV);
    /* Mostly the region, or one of the windows BINDs name (ERNIC-X MW). */
    uint32_t idx = chance(z, 60) ? MR_INDEX : chance(z, 40) ? below(z, 16) :
                   below(z, ERNIC_EXT_MR_DEFAULT + 4);
    uint64_t pbl = DEV_BASE(dev) + PBL_OFF;
    uint32_t val;

    if (chance(z, 20)) {
        act_ext_qp(z, dev);
        return;
    }
    if (chance(z, 25)) {
        act_ext_srq(z, dev);
        return;
    }
    if (chance(z, 20)) {
        act_ext_ah(z, dev);
        return;
    }
    if (chance(z, 10)) {
        act_ext_mcg(z, dev);
        return;
    }
    if (chance(z, 20)) {
        uint32_t conf = ernic_rig_rd(z->r, dev, ERNIC_XRNICCONF);

        val = chance(z, 60) ? PICK(z, ERNIC_EXT_F_MR, ERNIC_EXT_F_ALL,
                                   ERNIC_EXT_F_FRWR, ERNIC_EXT_F_RXMETA,
                                   ERNIC_EXT_F_MR | ERNIC_EXT_F_RINV,
                                   ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE,
                                   ERNIC_EXT_F_MR | ERNIC_EXT_F_XWQE,
                                   ERNIC_EXT_F_MR | ERNIC_EXT_F_XWQE |
                                   ERNIC_EXT_F_UDB, ERNIC_EXT_F_RXMETA |
                                   ERNIC_EXT_F_RXWQE | ERNIC_EXT_F_SRQ,
                                   ERNIC_EXT_F_MR | ERNIC_EXT_F_XWQE |
                                   ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE |
                                   ERNIC_EXT_F_UD, ERNIC_EXT_F_UC,
                                   ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE |
                                   ERNIC_EXT_F_SRQ | ERNIC_EXT_F_UC,
                                   ERNIC_EXT_F_MR | ERNIC_EXT_F_XWQE |
                                   ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE |
                                   ERNIC_EXT_F_UD | ERNIC_EXT_F_MCAST,
                                   ERNIC_EXT_F_ATOMIC, ERNIC_EXT_F_MR |
                                   ERNIC_EXT_F_ATOMIC, ERNIC_EXT_F_MR |
                                   ERNIC_EXT_F_MW | ERNIC_EXT_F_RINV |
                                   ERNIC_EXT_F_FRWR, ERNIC_EXT_F_PLACE |
                                   ERNIC_EXT_F_ATOMIC, ERNIC_EXT_F_MR |
                                   ERNIC_EXT_F_PLACE, ERNIC_EXT_F_RXMETA |
                                   ERNIC_EXT_F_RXWQE | ERNIC_EXT_F_SRQ |
                                   ERNIC_EXT_F_XRC | ERNIC_EXT_F_ATOMIC,
                                   ERNIC_EXT_F_MR | ERNIC_EXT_F_DBREC |
                                   ERNIC_EXT_F_XWQE | ERNIC_EXT_F_UDB |
                                   ERNIC_EXT_F_UPOLL) :
                              any_val(z);
        if ((z->seed & 1) && chance(z, 70)) {
            /* Odd seeds keep their start's verbs on (fuzz_seed_verbs()). */
            val |= fuzz_seed_feat(z);
        }
        log_action(z, "extctrl dev%d <- 0x%x", dev, val);
        if (chance(z, 70)) {
            ernic_rig_wr(z->r, dev, ERNIC_XRNICCONF,
                         conf & ~ERNIC_XRNICCONF_EN);
        }
        ernic_rig_wr(z->r, dev, ERNIC_EXTCTRL, val);
        ernic_rig_wr(z->r, dev, ERNIC_XRNICCONF, conf);
        return;
    }
    for (int k = 0; k < 16; k++) {
        qtest_writeq(z->r->qts, pbl + k * 8, chance(z, 70) ?
                     DEV_BASE(dev) + MR_OFF + below(z, 512) * 0x1000 :
                     any_addr(z, dev));
    }
    val = chance(z, 80) ? ERNIC_MR_VALID : below(z, 4);
    ernic_rig_wr(z->r, dev, ERNIC_MRKEY,
                 (chance(z, 80) ? MR_KEY : below(z, 256)) | val <<
                 ERNIC_MRKEY_STATE_SHIFT);
    ernic_rig_wr(z->r, dev, ERNIC_MRPD, chance(z, 80) ? PD_NUM : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_MRACC, chance(z, 70) ?
                 (below(z, 256) | (chance(z, 20) ? ERNIC_MRACC_MW_TYPE2 : 0) |
                  PICK(z, 12, 13, 21, 30) <<
                  ERNIC_MRACC_SHIFT_SHIFT) : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_MRIOVALO, chance(z, 70) ? (uint32_t)MR_VA +
                 below(z, 0x1000) : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_MRIOVAHI, chance(z, 70) ? MR_VA >> 32 :
                 any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_MRLENLO, chance(z, 70) ? below(z, MR_LEN) :
                 any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_MRLENHI, chance(z, 90) ? 0 : any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_MRPBLLO, chance(z, 70) ? (uint32_t)pbl :
                 (uint32_t)any_addr(z, dev));
    ernic_rig_wr(z->r, dev, ERNIC_MRPBLHI, 0);
    ernic_rig_wr(z->r, dev, ERNIC_MRNPAGES, chance(z, 70) ? 1 + below(z, 16) :
                 any_val(z));
    ernic_rig_wr(z->r, dev, ERNIC_MRIDX, idx);
    val = chance(z, 80) ? ERNIC_MRCMD_WRITE : below(z, 5);
    log_action(z, "mrcmd dev%d [%u] %u", dev, idx, val);
    ernic_rig_wr(z->r, dev, ERNIC_MRCMD, val);
}

static void act_eth(Fuzz *z)
{
    int dev = below(z, NDEV);
    ErnicRigDev *d = &z->r->d[dev];
    static const uint32_t regs[] = {
        ERNIC_ETH_CTRL, ERNIC_ETH_TXBA, ERNIC_ETH_TXBAMSB, ERNIC_ETH_TXSZ,
        ERNIC_ETH_TXPI, ERNIC_ETH_RXBA, ERNIC_ETH_RXBAMSB, ERNIC_ETH_RXSZ,
        ERNIC_ETH_RXPI, ERNIC_ETH_INTEN, ERNIC_ETH_INTSTS,
    };
    uint32_t reg = regs[below(z, ARRAY_SIZE(regs))];
    uint32_t val = reg == ERNIC_ETH_TXBA || reg == ERNIC_ETH_RXBA ?
                   (uint32_t)any_addr(z, dev) : any_val(z);

    if (chance(z, 30)) {
        /* A descriptor with a hostile address and length. */
        uint8_t desc[16];

        stq_le_p(desc, any_addr(z, dev));
        stq_le_p(desc + 8, rnd(z));
        qtest_memwrite(z->r->qts, DEV_BASE(dev) + ETH_TX_OFF +
                       below(z, 64) * 16, desc, 16);
    }
    log_action(z, "eth dev%d 0x%x = 0x%x", dev, reg, val);
    qpci_io_writel(d->e.pdev, d->e.eth, reg, val);
}

/* The ImmDt DMA (docs/immdt.md): its registers and hostile descriptors. */
static void act_immdt(Fuzz *z)
{
    int dev = below(z, NDEV);
    ErnicRigDev *d = &z->r->d[dev];
    uint64_t ring = DEV_BASE(dev) + IMMDT_RING_OFF;
    uint32_t reg = PICK(z, ERNIC_IMMDT_S2MM_DMACR, ERNIC_IMMDT_S2MM_DMASR,
                        ERNIC_IMMDT_S2MM_CURDESC, ERNIC_IMMDT_S2MM_CURDESC_MSB,
                        ERNIC_IMMDT_S2MM_TAILDESC,
                        ERNIC_IMMDT_S2MM_TAILDESC_MSB, ERNIC_IMMDT_DROPCNT,
                        below(z, ERNIC_IMMDT_SIZE / 4) * 4);
    uint32_t val = any_val(z);

    if (reg == ERNIC_IMMDT_S2MM_CURDESC || reg == ERNIC_IMMDT_S2MM_TAILDESC) {
        val = chance(z, 70) ? (uint32_t)ring + below(z, 16) * ERNIC_SGD_SIZE :
                              (uint32_t)any_addr(z, dev);
    } else if (reg == ERNIC_IMMDT_S2MM_DMACR && chance(z, 60)) {
        val = PICK(z, ERNIC_DMACR_RS, ERNIC_DMACR_RESET, 0,
                   ERNIC_DMACR_RS | 0x7000 | below(z, 4) << 16 |
                   below(z, 3) << 24);
    }
    if (chance(z, 40)) {
        uint8_t desc[ERNIC_SGD_STATUS + 4];

        stq_le_p(desc + ERNIC_SGD_NXTDESC, chance(z, 80) ?
                 ring + below(z, 16) * ERNIC_SGD_SIZE : any_addr(z, dev));
        stq_le_p(desc + 0x10, rnd(z));
        stq_le_p(desc + ERNIC_SGD_BUFFER, chance(z, 70) ?
                 ring + 0x1000 + below(z, 256) * 8 : any_addr(z, dev));
        stl_le_p(desc + ERNIC_SGD_CONTROL, PICK(z, 8, 3, 1, 0, rnd(z)));
        stl_le_p(desc + ERNIC_SGD_STATUS, chance(z, 80) ? 0 : rnd(z));
        qtest_memwrite(z->r->qts, ring + below(z, 16) * ERNIC_SGD_SIZE, desc,
                       sizeof(desc));
    }
    log_action(z, "immdt dev%d 0x%x = 0x%x", dev, reg, val);
    qpci_io_writel(d->e.pdev, d->e.eth, ERNIC_IMMDT_BASE + reg, val);
}

/* Bus mastering off and on, or a system reset (BARs restored after). */
static void act_reset(Fuzz *z)
{
    int dev = below(z, NDEV);

    if (chance(z, 70)) {
        log_action(z, "bus-master dev%d off/on", dev);
        qpci_config_writew(z->r->d[dev].e.pdev, PCI_COMMAND,
                           PCI_COMMAND_MEMORY);
        /* At least 1 ns: a step of 0 is refused by qtest ("FAIL"). */
        qtest_clock_step(z->r->qts, 1 + below(z, 100000));
        qpci_config_writew(z->r->d[dev].e.pdev, PCI_COMMAND,
                           PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
        return;
    }
    log_action(z, "system_reset");
    qtest_qmp_assert_success(z->r->qts, "{'execute': 'system_reset'}");
    for (int i = 0; i < NDEV; i++) {
        for (int b = 0; b < 6; b++) {
            qpci_config_writel(z->r->d[i].e.pdev, PCI_BASE_ADDRESS_0 + 4 * b,
                               z->bar_cfg[i][b]);
        }
        qpci_config_writew(z->r->d[i].e.pdev, PCI_COMMAND,
                           PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
        memset(z->sqpi[i], 0, sizeof(z->sqpi[i]));
    }
}

/*
 * A QP pair starts again as a driver recovers it (PG332 ch.6, in short):
 * disabled, its pointers zeroed under the software override, its
 * configuration written afresh and enabled, so that traffic flows again
 * after the hostile actions stopped it.
 */
static void act_revive(Fuzz *z)
{
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    bool four = chance(z, 30);
    uint32_t q[NDEV] = { four ? 4 : QPN_A, four ? 4 : QPN_B };
    uint32_t psn = rnd(z) & 0xffffff, rpsn = rnd(z) & 0xffffff;
    static const uint32_t zeroed[] = {
        ERNIC_SQPI, ERNIC_CQHEAD, ERNIC_STATCURSQPTR, ERNIC_RQCI,
        ERNIC_STATRQPIDB,
    };

    cfg.rqbuf = 4096;
    cfg.rq_depth = 8;
    cfg.pmtu = four ? ERNIC_PMTU_4096 : below(z, 5);
    log_action(z, "revive QP%u/QP%u PMTU code %u", q[0], q[1], cfg.pmtu);
    for (int i = 0; i < NDEV; i++) {
        ernic_rig_qwr(z->r, i, q[i], ERNIC_QPCONF, 0);
        ernic_rig_wr(z->r, i, ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_SWO);
        for (size_t k = 0; k < ARRAY_SIZE(zeroed); k++) {
            ernic_rig_qwr(z->r, i, q[i], zeroed[k], 0);
        }
        ernic_rig_wr(z->r, i, ERNIC_XRNICADCONF, 0);
        z->sqpi[i][q[i]] = 0;
        ernic_rig_setup_qp(z->r, i, q[i], 1 - i, q[1 - i], i ? rpsn : psn,
                           i ? psn : rpsn, &cfg, DEV_BASE(i) +
                           (four ? 0x200000 : 0));
    }
    for (int i = 0; i < NDEV; i++) {
        ernic_rig_setup_global(z->r, i, below(z, 4));
    }
}

/*
 * Wire actions
 */

static void fix_checksums(uint8_t *f, size_t len)
{
    if (len >= F_EXT + 4 && lduw_be_p(f + 12) == 0x0800 && f[F_IP] == 0x45) {
        stw_be_p(f + F_IP + 10, 0);
        stw_be_p(f + F_IP + 10, qernic_ip_csum(f + F_IP, 20));
        if (lduw_be_p(f + F_IP + 2) + 14 == len) {
            stl_le_p(f + len - 4, qernic_icrc(f, len));
        }
    }
}

/* Mutate a frame in place; returns its new length. */
static size_t mutate(Fuzz *z, uint8_t *f, size_t len)
{
    switch (below(z, 5)) {
    case 0:
        return below(z, len + 1);                   /* truncated */
    case 1:
        if (len + 64 <= FRAME_MAX) {
            for (int k = 0; k < 64; k++) {
                f[len + k] = rnd(z);
            }
            len += below(z, 65);                    /* extended */
        }
        return len;
    default:
        for (int n = 1 + below(z, 4); n > 0 && len; n--) {
            size_t at = chance(z, 70) ? below(z, MIN(len, F_EXT + 20)) :
                        below(z, len);

            f[at] ^= 1u << below(z, 8);
            if (chance(z, 30)) {
                f[at] = rnd(z);
            }
        }
        if (chance(z, 70)) {
            fix_checksums(f, len);
        }
        return len;
    }
}

/*
 * Move the frames both devices sent, each dropped, duplicated, held back
 * (reordered), mutated or forwarded.
 */
static void act_wire(Fuzz *z)
{
    uint8_t f[FRAME_MAX + 64];
    size_t len;
    unsigned moved = 0;

    for (int i = 0; i < NDEV; i++) {
        int to = z->r->d[1 - i].fd;

        while (moved < 256 && ernic_rig_wire_read(z->r->d[i].fd, f, &len)) {
            unsigned v = below(z, 100);

            moved++;
            z->frames++;
            if (v < 8) {
                continue;                           /* dropped */
            }
            if (v < 14 && !z->held_len) {
                memcpy(z->held, f, len);
                z->held_len = len;
                z->held_from = i;
                continue;
            }
            if (v < 30) {
                len = mutate(z, f, len);
            }
            if (len) {
                ernic_rig_wire_write(to, f, len);
            }
            if (v >= 30 && v < 36 && len) {
                ernic_rig_wire_write(to, f, len);             /* duplicated */
            }
        }
    }
    if (z->held_len && chance(z, 50)) {
        ernic_rig_wire_write(z->r->d[1 - z->held_from].fd, z->held,
                             z->held_len);
        z->held_len = 0;
    }
    log_action(z, "wire %u frames", moved);
}

/*
 * A FLUSH (FETH, RETH) or ATOMIC WRITE (RETH, 8 bytes) request in @ext
 * (ERNIC-X PLACE), mostly well formed; returns its length.
 */
static size_t fuzz_place_ext(Fuzz *z, uint8_t op, uint8_t *ext)
{
    size_t n = 0;

    if (op == 0x1c) {
        stl_be_p(ext, chance(z, 80) ? PICK(z, 0x01, 0x11, 0x02, 0x03) :
                 rnd(z));
        n = 4;
    }
    ernic_rig_reth(ext + n, MR_VA + below(z, 64) * 8 +
                   (chance(z, 90) ? 0 : below(z, 8)),
                   chance(z, 80) ? RKEY : rnd(z),
                   op == 0x1d && chance(z, 90) ? 8 : below(z, 0x3000));
    n += 16;
    if (op == 0x1d) {
        stq_be_p(ext + n, rnd(z));
        n += 8;
    }
    return n;
}

/* A frame of the fuzzer's own making, as a peer (or a stranger) would. */
static void act_inject(Fuzz *z)
{
    int to = below(z, NDEV);
    ErnicRigDev *dst = &z->r->d[to], *src = &z->r->d[1 - to], mdst;
    uint8_t f[FRAME_MAX + 64], ext[32], pay[4200];
    uint8_t op = chance(z, 85) ? PICK(z, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
                                      0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,
                                      0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,
                                      0x12, 0x13, 0x14, 0x16, 0x17, 0x64,
                                      0x65, 0x20, 0x21, 0x22, 0x23, 0x24,
                                      0x25, 0x26, 0x27, 0x28, 0x29, 0x2a,
                                      0x2b, 0x1c, 0x1d, 0xa0, 0xa4, 0xa5,
                                      0xaa, 0xac, 0xb1, 0xb4) :
                 below(z, 256);
    uint32_t dqpn = chance(z, 70) ? (to ? QPN_B : QPN_A) : any_qpn(z);
    uint32_t psn = (PICK(z, PSN_A, PSN_B, 0, 0xffffff, rnd(z)) +
                    (chance(z, 70) ? below(z, 8) : below(z, 4096))) &
                   0xffffff;
    size_t ext_len = PICK(z, 0, 4, 8, 16, 20, 28), paylen, len;

    for (size_t k = 0; k < sizeof(ext); k += 8) {
        stq_be_p(ext + k, rnd(z));
    }
    if (ext_len >= 16 && chance(z, 70)) {
        ernic_rig_reth(ext, MR_VA + below(z, MR_LEN), chance(z, 80) ? RKEY :
                       rnd(z), chance(z, 60) ? below(z, 8192) :
                       any_len(z, 1024));
    }
    if ((op == 0x64 || op == 0x65) && ext_len >= 8 && chance(z, 60)) {
        /* A DETH with the Q_Key the fuzzer's UD QPs take. */
        stl_be_p(ext, FUZZ_QKEY);
    }
    if (ext_len == 4 && chance(z, 60)) {
        stl_be_p(ext, (uint32_t)PICK(z, 0x1f, 0x00, 0x21, 0x3f, 0x60, 0x61,
                                     0x62, 0x63, 0x65, 0x40) << 24 | 1);
    }
    paylen = chance(z, 50) ? PICK(z, 0, 1, 4, 256, 512, 1024, 2048, 4096) :
             below(z, 4200);
    for (size_t k = 0; k < paylen; k++) {
        pay[k] = rnd(z);
    }
    if ((op == 0x13 || op == 0x14) && chance(z, 70)) {
        /* An AtomicETH on the region, mostly aligned (ERNIC-X ATOMIC). */
        ext_len = 28;
        stq_be_p(ext, MR_VA + below(z, 64) * 8 + (chance(z, 90) ? 0 :
                                                  below(z, 8)));
        stl_be_p(ext + 8, chance(z, 80) ? RKEY : rnd(z));
        paylen = chance(z, 80) ? 0 : below(z, 64);
        if (dqpn == (to ? QPN_B : QPN_A) && chance(z, 50)) {
            /* The PSN the QP expects: the atomic is executed. */
            psn = (ernic_rig_qrd(z->r, to, dqpn, ERNIC_LSTRQREQ) + 1) &
                  0xffffff;
        }
    }
    if ((op & 0xe0) == 0xa0 && chance(z, 70)) {
        /* An XRC request: its XRCETH names a low SRQ (ERNIC-X XRC). */
        memmove(ext + 4, ext, sizeof(ext) - 4);
        stl_be_p(ext, chance(z, 60) ? FUZZ_XRC_SRQ :
                 chance(z, 70) ? below(z, 4) : rnd(z));
        ext_len = MIN(ext_len + 4, sizeof(ext));
    }
    if ((op == 0x1c || op == 0x1d) && chance(z, 70)) {
        /* FLUSH or ATOMIC WRITE on the region (ERNIC-X PLACE). */
        ext_len = fuzz_place_ext(z, op, ext);
        paylen = chance(z, 90) ? 0 : below(z, 16);
        if (dqpn == (to ? QPN_B : QPN_A) && chance(z, 50)) {
            psn = (ernic_rig_qrd(z->r, to, dqpn, ERNIC_LSTRQREQ) + 1) &
                  0xffffff;
        }
    }
    if (chance(z, 10)) {
        /* To the fuzzer's multicast group, or near it. */
        mdst = *dst;
        mdst.e.ip = FUZZ_MC_IP + (chance(z, 80) ? 0 : 1);
        memcpy(mdst.e.mac, fuzz_mc_mac, 6);
        dqpn = chance(z, 90) ? 0xffffff : dqpn;
        dst = &mdst;
    }
    len = ernic_rig_frame(f, src, dst, op, dqpn, psn, chance(z, 50), ext,
                          ext_len, pay, paylen);
    if (chance(z, 20)) {
        len = mutate(z, f, len);
    }
    log_action(z, "inject to dev%d op 0x%x QP%u PSN 0x%x len %zu", to, op,
               dqpn, psn, len);
    if (len) {
        ernic_rig_wire_write(z->r->d[to].fd, f, len);
    }
}

static void act_clock(Fuzz *z)
{
    int64_t ns = PICK(z, 1000, 10000, 100000, 1000000, 10000000, 100000000);

    log_action(z, "clock +%" PRId64 " ns", ns);
    qtest_clock_step(z->r->qts, ns);
}

static void act_read(Fuzz *z)
{
    int dev = below(z, NDEV);

    ernic_rig_rd(z->r, dev, ERNIC_QP_OFFSET(any_qpn(z)) +
                 qp_regs[below(z, ARRAY_SIZE(qp_regs))]);
    ernic_rig_rd(z->r, dev, g_regs[below(z, ARRAY_SIZE(g_regs))]);
}

typedef struct Action {
    void (*fn)(Fuzz *z);
    unsigned weight;
    bool wire;                  /* needs the socketpair topology */
} Action;

static const Action actions[] = {
    { act_post, 22, false }, { act_wire, 22, true },
    { act_inject, 14, true }, { act_clock, 10, false },
    { act_reg, 8, false }, { act_recv, 6, false }, { act_qpconf, 5, false },
    { act_ring, 4, false }, { act_pdt, 3, false }, { act_eth, 3, false },
    { act_read, 2, false }, { act_reset, 1, false },
    { act_revive, 4, false }, { act_ext, 3, false },
    { act_immdt, 3, false },
};

static void run_action(Fuzz *z, uint64_t i)
{
    unsigned total = 0, w;

    z->st = z->seed * 0x9e3779b97f4a7c15ULL ^ (i + 1) * 0xd1b54a32d192ed03ULL;
    for (size_t k = 0; k < ARRAY_SIZE(actions); k++) {
        total += actions[k].weight;
    }
    w = below(z, total);
    for (size_t k = 0; k < ARRAY_SIZE(actions); k++) {
        if (w < actions[k].weight) {
            if (actions[k].wire && z->hub) {
                act_clock(z);
            } else {
                actions[k].fn(z);
            }
            return;
        }
        w -= actions[k].weight;
    }
}

/*
 * The main loop has nothing to do once the wire is quiet: it must go
 * idle within @settle_s seconds (a bounded backlog may take that long).
 *
 * Virtual time is moved on by 10 s first: with the qtest accelerator it
 * stands still, and the main loop polls with the timeout of the nearest
 * virtual timer, so a pending 8 us timer would look like a spin. After
 * that, only timers that no count limits are left, and they wait at
 * least 1 ms (ernic_comp.c). A bottom half that reschedules itself keeps
 * the main loop busy through all of this.
 */
static bool settles(Fuzz *z, unsigned settle_s)
{
    long hz = sysconf(_SC_CLK_TCK);

    alarm(hang_s);
    for (int k = 0; k < 100; k++) {
        qtest_clock_step(z->r->qts, 100 * 1000 * 1000);
    }
    /*
     * Work the steps left behind (a backlog spread over turns) may arm a
     * timer of a few microseconds after the last step; with the clock
     * standing still the main loop would poll for it without end, which
     * is no spin of the device. Let such work run, then step past it.
     */
    for (int k = 0; k < 20; k++) {
        g_usleep(50000);
        qtest_clock_step(z->r->qts, 100 * 1000 * 1000);
    }
    alarm(0);

    /*
     * A timer due a few hundred nanoseconds after the clock stopped keeps
     * the main loop polling with that timeout (the device's retry timer
     * does, re-armed every millisecond when retries are unlimited). Each
     * busy sample therefore moves the clock a little: such a timer then
     * fires or falls further away, while a real spin stays busy.
     */
    for (unsigned k = 0; k < settle_s * 4; k++) {
        uint64_t t0 = ernic_rig_cpu_ticks(z->r->qts);

        g_usleep(250000);
        if ((ernic_rig_cpu_ticks(z->r->qts) - t0) * 1000 / hz < 100) {
            return true;
        }
        qtest_clock_step(z->r->qts, 1037 * 1000);
    }
    return false;
}

static void setup(Fuzz *z)
{
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    /* Seeds with bit 2 make doorbells with records ioeventfds (DBREC). */
    const char *dbe = z->seed & 4 ? ",db-eventfd=on" : "";
    g_autofree char *layout = g_strdup_printf(
        "%s%s", z->reconic ? ",layout=reconic,card-mem=1M" : "", dbe);
    g_autofree char *extra = g_strdup_printf(
        "-global ernic.num-qp=%u%s%s", z->num_qp, z->reconic ?
        " -global ernic.layout=reconic -global ernic.card-mem=1M" : "",
        z->seed & 4 ? " -global ernic.db-eventfd=on" : "");

    if (z->hub) {
        ErnicRig *r = g_new0(ErnicRig, 1);
        QPCIBus *bus;

        r->qts = qtest_initf(RIG_MACHINE " "
                             "-netdev hubport,id=h0,hubid=0 "
                             "-netdev hubport,id=h1,hubid=0 "
                             "-device ernic,addr=04.0,netdev=h0,num-qp=%u,"
                             "x-tx-map=on,mac=52:54:00:e3:32:00%s "
                             "-device ernic,addr=05.0,netdev=h1,num-qp=%u,"
                             "x-tx-map=on,mac=52:54:00:e3:32:01%s",
                             z->num_qp, layout,
                             z->num_qp, layout);
        bus = qpci_new_pc(r->qts, NULL);
        for (int i = 0; i < NDEV; i++) {
            ernic_rig_attach(r, i, r->qts, bus);
            r->d[i].fd = -1;
        }
        z->r = r;
    } else {
        z->r = ernic_rig_start(extra);
    }
    cfg.rqbuf = 4096;
    cfg.rq_depth = 8;
    for (int i = 0; z->reconic && i < NDEV; i++) {
        ernic_rig_rn_bridge(z->r, i);
    }
    if (z->seed & 1) {
        /*
         * Odd seeds start with ERNIC-X atomics, FLUSH and ATOMIC
         * WRITE on, QPs A, B and 4 taking them: otherwise one needs a
         * run of lucky actions (EXTCTRL, then EXTQPCONFi, then a post).
         */
        fuzz_seed_verbs(z);
    }
    ernic_rig_connect_pair(z->r, &cfg);
    cfg.pmtu = ERNIC_PMTU_4096;
    ernic_rig_setup_qp(z->r, 0, 4, 1, 4, 100, 200, &cfg, DEV_BASE(0) +
                       0x200000);
    ernic_rig_setup_qp(z->r, 1, 4, 0, 4, 200, 100, &cfg, DEV_BASE(1) +
                       0x200000);
    for (int i = 0; i < NDEV; i++) {
        uint64_t size;

        if (!z->reconic) {
            z->udb[i] = qpci_iomap(z->r->d[i].e.pdev, ERNIC_BAR_UDB, &size);
        }
        for (int b = 0; b < 6; b++) {
            z->bar_cfg[i][b] = qpci_config_readl(z->r->d[i].e.pdev,
                                                 PCI_BASE_ADDRESS_0 + 4 * b);
        }
        ernic_rig_put_pattern(z->r, DEV_BASE(i) + SRC_OFF, 0x100000, i);
    }
}

static bool keep_action(const char *keep, uint64_t i)
{
    g_auto(GStrv) parts = NULL;

    if (!keep) {
        return true;
    }
    parts = g_strsplit(keep, ",", -1);
    for (int k = 0; parts[k]; k++) {
        uint64_t lo, hi;

        if (sscanf(parts[k], "%" SCNu64 "-%" SCNu64, &lo, &hi) == 2) {
            if (i >= lo && i <= hi) {
                return true;
            }
        } else if (sscanf(parts[k], "%" SCNu64, &lo) == 1 && i == lo) {
            return true;
        }
    }
    return false;
}

int main(int argc, char **argv)
{
    Fuzz z = { .num_qp = 32 };
    uint64_t n_actions = 0, i;
    double seconds = 0;
    const char *keep = NULL;
    gint64 t0, last;
    int k;

    for (k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--seed") && k + 1 < argc) {
            z.seed = g_ascii_strtoull(argv[++k], NULL, 0);
        } else if (!strcmp(argv[k], "--actions") && k + 1 < argc) {
            n_actions = g_ascii_strtoull(argv[++k], NULL, 0);
        } else if (!strcmp(argv[k], "--seconds") && k + 1 < argc) {
            seconds = g_ascii_strtod(argv[++k], NULL);
        } else if (!strcmp(argv[k], "--num-qp") && k + 1 < argc) {
            z.num_qp = g_ascii_strtoull(argv[++k], NULL, 0);
        } else if (!strcmp(argv[k], "--keep") && k + 1 < argc) {
            keep = argv[++k];
        } else if (!strcmp(argv[k], "--hang") && k + 1 < argc) {
            hang_s = g_ascii_strtoull(argv[++k], NULL, 0);
        } else if (!strcmp(argv[k], "--hub")) {
            z.hub = true;
        } else if (!strcmp(argv[k], "--reconic")) {
            z.reconic = true;
        } else if (!strcmp(argv[k], "--print")) {
            z.print = true;
        } else {
            fprintf(stderr, "ernic-fuzz: unknown argument '%s'\n", argv[k]);
            return 64;
        }
    }
    if (!n_actions && !seconds) {
        n_actions = 10000;
    }
    if (z.num_qp < 8 || z.num_qp > ERNIC_NUM_QP_MAX) {
        fprintf(stderr, "ernic-fuzz: --num-qp must be 8..%d\n",
                ERNIC_NUM_QP_MAX);
        return 64;
    }
    sigaction(SIGALRM, &(struct sigaction){ .sa_handler = on_alarm }, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("FUZZ-START seed %" PRIu64 " num-qp %u topology %s%s\n", z.seed,
           z.num_qp, z.hub ? "hub" : "wire",
           z.reconic ? " layout=reconic" : "");
    alarm(hang_s * 3);
    setup(&z);
    t0 = last = g_get_monotonic_time();
    for (i = 0; n_actions ? i < n_actions :
         g_get_monotonic_time() - t0 < seconds * G_USEC_PER_SEC; i++) {
        cur_action = i;
        alarm(hang_s);
        if (keep_action(keep, i)) {
            run_action(&z, i);
        }
        if (i % SPIN_CHECK_EVERY == SPIN_CHECK_EVERY - 1) {
            alarm(0);
            if (!settles(&z, 30)) {
                printf("FUZZ-SPIN after action %" PRIu64 ": the main loop "
                       "stays busy with nothing to do\n", i);
                return 3;
            }
        }
        if (g_get_monotonic_time() - last > 10 * G_USEC_PER_SEC) {
            last = g_get_monotonic_time();
            printf("FUZZ-PROGRESS seed %" PRIu64 " actions %" PRIu64
                   " frames %" PRIu64 "\n", z.seed, i + 1, z.frames);
        }
    }
    cur_action = i;
    alarm(0);
    if (!settles(&z, 30)) {
        printf("FUZZ-SPIN after action %" PRIu64 ": the main loop stays "
               "busy with nothing to do\n", i);
        return 3;
    }
    alarm(hang_s);
    ernic_rig_rd(z.r, 0, ERNIC_XRNICCONF);
    ernic_rig_stop(z.r);
    printf("FUZZ-DONE seed %" PRIu64 " actions %" PRIu64 " frames %" PRIu64
           " seconds %.1f\n", z.seed, i, z.frames,
           (g_get_monotonic_time() - t0) / (double)G_USEC_PER_SEC);
    return 0;
}
