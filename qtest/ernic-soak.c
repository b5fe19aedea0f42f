/*
 * Wire-fault soak for ernic (docs/fuzzing.md, "Soak"): two devices joined
 * by a seeded fault-injecting relay that drops, duplicates, reorders,
 * corrupts and truncates frames, each at --rate percent, while both
 * devices run mixed SEND, WRITE and READ of 1 B to 64 KiB at each other.
 * Every byte is checked, every completion is checked for order, opcode,
 * work request ID and error flag (so none is lost or duplicated), and at
 * the end both QPs must be idle and not FATAL.
 *
 * With --check-dma, guest RAM around both devices is filled with a pattern
 * first, and afterwards every byte outside the rings, buffers and regions
 * the test configured must still hold it: the device wrote nowhere else.
 *
 * With --ext-mr, each side's region is an ERNIC-X page-list region of 4 KiB
 * pages (docs/extension.md) instead of a PG332 PD/MR table entry, so
 * every READ and WRITE goes through the page-list translation.
 *
 * With --ext-rx, each side's RQ slots are ERNIC-X receive WQEs with
 * receive metadata: SENDs land in buffers the WQEs name, and each slot's
 * metadata entry must give the SEND's length and opcode.
 *
 * usage: ernic-soak [--messages N] [--rate PCT] [--seed N] [--check-dma]
 *                   [--ext-mr] [--ext-rx]
 * Prints "soak: ..." and ends with "N passed, N failed" (one check each).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "ernic-rig.h"
#include "hw/rdma/ernic_ext_regs.h"

#define SLOTS           8               /* messages in flight per direction */
#define SLOT_SIZE       0x20000         /* 128 KiB of SRC and MR per slot */
#define MSG_MAX         65536
#define SOAK_RQ_DEPTH   16
#define SOAK_RQ_BUF     MSG_MAX
#define DMA_LO          DEV_BASE(0)
#define DMA_HI          (DEV_BASE(1) + 0x4000000)
#define FILL            0xa5
#define PBL_OFF         0x0f0000        /* --ext-mr: the page list */
#define PBL_PAGES       (MR_LEN / 4096)
#define RXBUF_OFF       0x200000        /* --ext-rx: the receive buffers */
#define META_OFF        0x0f8000        /* --ext-rx: the metadata ring */

typedef struct Msg {
    uint8_t op;
    uint32_t len;
    uint32_t seed;
    int slot;
} Msg;

typedef struct Side {
    Msg q[SQ_DEPTH];            /* posted, oldest first, by SQ position */
    uint32_t posted, done;
    uint32_t sends_posted;      /* SENDs posted: their RQ positions */
    uint32_t sends_seen;        /* SENDs checked in the peer's RQ */
    bool slot_busy[SLOTS];
} Side;

typedef struct Soak {
    ErnicRig *r;
    ErnicRigWire w;
    uint64_t st;
    unsigned rate;
    Side s[NDEV];
    uint64_t bytes, msgs[3];
    uint64_t faults[5];
    unsigned checks, failed;
    bool ext_mr;
    bool ext_rx;
} Soak;

static const char *const fault_names[] = {
    "dropped", "duplicated", "reordered", "corrupted", "truncated",
};

static uint64_t rnd(Soak *k)
{
    uint64_t x = (k->st += 0x9e3779b97f4a7c15ULL);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/*
 * The relay: each fault at k->rate percent of the frames (one fault per
 * frame at most). A flipped bit lies after the Ethernet header, so the
 * ICRC, the IP checksum or a length no longer matches; a truncated frame
 * loses 1 byte up to all but its Ethernet header.
 */
static ErnicRigVerdict relay(void *opaque, int from, const uint8_t *f,
                             size_t len)
{
    Soak *k = opaque;
    unsigned r = rnd(k) % 10000, p = k->rate * 100;
    static const ErnicRigVerdict order[5] = { ERNIC_RIG_DROP, ERNIC_RIG_DUP,
                                            ERNIC_RIG_HOLD, ERNIC_RIG_FLIP,
                                            ERNIC_RIG_TRUNC };

    if (r >= 5 * p || len <= 15) {
        return ERNIC_RIG_FWD;
    }
    k->faults[r / p]++;
    k->w.flip = (14 + rnd(k) % (len - 14)) * 8 + rnd(k) % 8;
    k->w.cut = len - 1 - rnd(k) % (len - 15);
    return order[r / p];
}

static void check(Soak *k, bool ok, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void check(Soak *k, bool ok, const char *fmt, ...)
{
    va_list ap;

    k->checks++;
    if (ok) {
        return;
    }
    k->failed++;
    printf("FAIL: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static const uint8_t soak_ops[] = {
    ERNIC_OP_SEND, ERNIC_OP_WRITE, ERNIC_OP_READ,
};

static uint64_t src_addr(int i, int slot)
{
    return DEV_BASE(i) + SRC_OFF + (uint64_t)slot * SLOT_SIZE;
}

static uint64_t mr_addr(int i, int slot)
{
    return DEV_BASE(i) + MR_OFF + (uint64_t)slot * SLOT_SIZE;
}

static uint32_t qpn_of(int i)
{
    return i ? QPN_B : QPN_A;
}

static void post_one(Soak *k, int i)
{
    Side *s = &k->s[i];
    Msg *m = &s->q[s->posted % SQ_DEPTH];
    g_autofree uint8_t *data = NULL;
    uint32_t r = rnd(k);
    int slot;

    for (slot = 0; s->slot_busy[slot]; slot++) {
        /* find a free slot */
    }
    s->slot_busy[slot] = true;
    m->op = soak_ops[r % 3];
    if (m->op == ERNIC_OP_SEND &&
        s->sends_posted - s->sends_seen >= SOAK_RQ_DEPTH - 1) {
        m->op = ERNIC_OP_WRITE;         /* the peer's RQ is full of ours */
    }
    m->len = (r >> 8) % 4 ? 1 + (rnd(k) % 4096) : 1 + (rnd(k) % MSG_MAX);
    m->seed = rnd(k);
    m->slot = slot;
    if (m->op == ERNIC_OP_READ) {
        data = ernic_rig_put_pattern(k->r, mr_addr(1 - i, slot), m->len,
                                     m->seed);
    } else {
        data = ernic_rig_put_pattern(k->r, src_addr(i, slot), m->len, m->seed);
    }
    if (m->op == ERNIC_OP_SEND) {
        s->sends_posted++;
    }
    ernic_rig_post(k->r, i, qpn_of(i), DEV_BASE(i) + SQ_OFF, s->posted & 0xffff,
                   m->op, src_addr(i, slot), m->len, MR_VA + (uint64_t)slot *
                   SLOT_SIZE, RKEY, 0, data);
    s->posted++;
}

/* --ext-rx: the metadata entry of RQ slot @pos of device @i. */
static void check_meta(Soak *k, int i, uint32_t pos, uint32_t len)
{
    uint8_t e[ERNIC_RXMETA_SIZE];
    uint8_t op;

    qtest_memread(k->r->qts, DEV_BASE(i) + META_OFF +
                  pos * ERNIC_RXMETA_SIZE, e, sizeof(e));
    op = e[ERNIC_RXMETA_OPCODE];
    check(k, ldl_le_p(&e[ERNIC_RXMETA_LEN]) == len &&
          (op == 0x02 || op == 0x04) && e[ERNIC_RXMETA_FLAGS] == 0,
          "dev%d: RQ slot %u metadata: %u bytes, opcode 0x%x, flags 0x%x; "
          "want %u bytes of a SEND", i, pos, ldl_le_p(&e[ERNIC_RXMETA_LEN]),
          op, e[ERNIC_RXMETA_FLAGS], len);
}

/* The data of a completed message is where it should be. */
static void verify(Soak *k, int i, Msg *m)
{
    g_autofree uint8_t *want = g_malloc(m->len);
    g_autofree uint8_t *got = g_malloc(m->len);
    Side *s = &k->s[i];
    uint64_t at;

    ernic_rig_fill(want, m->len, m->seed);
    if (m->op == ERNIC_OP_WRITE) {
        at = mr_addr(1 - i, m->slot);
    } else if (m->op == ERNIC_OP_READ) {
        at = src_addr(i, m->slot);
    } else {
        /* SENDs land in the peer's RQ in order, one buffer each. */
        uint32_t pos = s->sends_seen++ % SOAK_RQ_DEPTH;

        at = DEV_BASE(1 - i) + (k->ext_rx ? RXBUF_OFF : RQ_OFF) +
             (uint64_t)pos * SOAK_RQ_BUF;
        if (k->ext_rx) {
            check_meta(k, 1 - i, pos, m->len);
        }
        check(k, ernic_rig_qrd(k->r, 1 - i, qpn_of(1 - i), ERNIC_STATRQPIDB) !=
              ernic_rig_qrd(k->r, 1 - i, qpn_of(1 - i), ERNIC_RQCI),
              "dev%d: SEND completed but dev%d's RQ is empty", i, 1 - i);
    }
    qtest_memread(k->r->qts, at, got, m->len);
    check(k, !memcmp(got, want, m->len), "dev%d: %s of %u bytes corrupted",
          i, m->op == ERNIC_OP_SEND ? "SEND" : m->op == ERNIC_OP_WRITE ?
          "WRITE" : "READ", m->len);
    if (m->op == ERNIC_OP_SEND) {
        /* Give the buffer back, as a driver does after copying it out. */
        ernic_rig_qwr(k->r, 1 - i, qpn_of(1 - i), ERNIC_RQCI,
                      s->sends_seen % SOAK_RQ_DEPTH);
    }
    k->msgs[m->op == ERNIC_OP_SEND ? 0 : m->op == ERNIC_OP_WRITE ? 1 : 2]++;
    k->bytes += m->len;
}

/* Check the completions CQHEADi has moved over. */
static void reap(Soak *k, int i)
{
    Side *s = &k->s[i];
    uint32_t head = ernic_rig_qrd(k->r, i, qpn_of(i), ERNIC_CQHEAD);
    /* At most SLOTS (< SQ_DEPTH) outstanding: the distance is the count. */
    uint32_t n = (head - s->done) % SQ_DEPTH;

    check(k, n <= s->posted - s->done, "dev%d: %u completions for %u "
          "outstanding WQEs", i, n, s->posted - s->done);
    for (; n && s->done < s->posted; n--) {
        Msg *m = &s->q[s->done % SQ_DEPTH];
        uint32_t c = ernic_rig_cqe(k->r, i, s->done);

        check(k, c == (((uint32_t)m->op << ERNIC_CQE_OPCODE_SHIFT) |
                       (s->done & 0xffff)),
              "dev%d: CQE %u is 0x%08x, want opcode 0x%x wrid 0x%x", i,
              s->done, c, m->op, s->done & 0xffff);
        verify(k, i, m);
        s->slot_busy[m->slot] = false;
        s->done++;
    }
}

/*
 * The region RKEY names, as an ERNIC-X page-list region: its pages in
 * order over MR_OFF, so the checks read the bytes where they always do.
 */
static void setup_ext_mr(Soak *k, int i)
{
    uint64_t pbl = DEV_BASE(i) + PBL_OFF;

    for (uint32_t p = 0; p < PBL_PAGES; p++) {
        qtest_writeq(k->r->qts, pbl + p * 8, DEV_BASE(i) + MR_OFF + p * 4096);
    }
    ernic_rig_wr(k->r, i, ERNIC_MRIDX, MR_INDEX);
    ernic_rig_wr(k->r, i, ERNIC_MRKEY,
                 MR_KEY | ERNIC_MR_VALID << ERNIC_MRKEY_STATE_SHIFT);
    ernic_rig_wr(k->r, i, ERNIC_MRPD, PD_NUM);
    ernic_rig_wr(k->r, i, ERNIC_MRACC, ERNIC_MRACC_REMOTE_READ |
                 ERNIC_MRACC_REMOTE_WRITE | 12 << ERNIC_MRACC_SHIFT_SHIFT);
    ernic_rig_wr(k->r, i, ERNIC_MRIOVALO, (uint32_t)MR_VA);
    ernic_rig_wr(k->r, i, ERNIC_MRIOVAHI, MR_VA >> 32);
    ernic_rig_wr(k->r, i, ERNIC_MRLENLO, MR_LEN);
    ernic_rig_wr(k->r, i, ERNIC_MRLENHI, 0);
    ernic_rig_wr(k->r, i, ERNIC_MRPBLLO, (uint32_t)pbl);
    ernic_rig_wr(k->r, i, ERNIC_MRPBLHI, pbl >> 32);
    ernic_rig_wr(k->r, i, ERNIC_MRNPAGES, PBL_PAGES);
    ernic_rig_wr(k->r, i, ERNIC_MRCMD, ERNIC_MRCMD_WRITE);
    g_assert_cmpuint(ernic_rig_rd(k->r, i, ERNIC_MRSTS), ==, ERNIC_MRSTS_OK);
}

/*
 * --ext-rx: receive metadata and a receive WQE per RQ slot, each naming
 * its own buffer by bus address (L_Key 0); the WQEs stay for good.
 */
static void setup_ext_rx(Soak *k, int i)
{
    uint32_t x = ERNIC_EXT_QP_OFFSET(qpn_of(i));

    ernic_rig_wr(k->r, i, x + ERNIC_RXMETABA, DEV_BASE(i) + META_OFF);
    ernic_rig_wr(k->r, i, x + ERNIC_RXMETABAMSB, 0);
    ernic_rig_wr(k->r, i, x + ERNIC_EXTQPCONF,
                 ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE);
    for (uint32_t p = 0; p < SOAK_RQ_DEPTH; p++) {
        uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

        stq_le_p(&w[ERNIC_SGE_ADDR], DEV_BASE(i) + RXBUF_OFF +
                 (uint64_t)p * SOAK_RQ_BUF);
        stl_le_p(&w[ERNIC_SGE_LEN], SOAK_RQ_BUF);
        qtest_memwrite(k->r->qts, DEV_BASE(i) + RQ_OFF + p * ERNIC_RWQE_SIZE,
                       w, sizeof(w));
    }
}

static void setup(Soak *k)
{
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_wr(k->r, i, ERNIC_EXTCTRL,
                     (k->ext_mr ? ERNIC_EXT_F_MR : 0) |
                     (k->ext_rx ? ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE : 0));
        if (k->ext_mr) {
            setup_ext_mr(k, i);
        }
        if (k->ext_rx) {
            setup_ext_rx(k, i);
        }
    }

    cfg.rqbuf = SOAK_RQ_BUF;
    cfg.rq_depth = SOAK_RQ_DEPTH;
    cfg.timeout = 10;                   /* 4.2 ms */
    ernic_rig_connect_pair(k->r, &cfg);
    for (int i = 0; i < NDEV; i++) {
        /*
         * Retries never end the QP here: the soak measures whether the
         * transport recovers, however long the faults keep it waiting.
         */
        ernic_rig_wr(k->r, i, ERNIC_XRNICADCONF,
                     ERNIC_XRNICADCONF_RETRY_FATAL_DIS);
    }
}

/* Is [a, a + n) inside a region the test configured for a device? */
static bool configured(uint64_t a)
{
    static const struct {
        uint64_t off, len;
    } regions[] = {
        { SQ_OFF, SQ_DEPTH * ERNIC_WQE_SIZE },
        { CQ_OFF, SQ_DEPTH * ERNIC_CQE_SIZE },
        { CQDB_OFF, 4 }, { RQDB_OFF, 4 },
        { ERRBUF_OFF, 16 * 256 }, { FATALQ_OFF, 64 * 8 },
        { RQ_OFF, SOAK_RQ_DEPTH * SOAK_RQ_BUF },
        { SRC_OFF, SLOTS * SLOT_SIZE }, { MR_OFF, MR_LEN },
        { PBL_OFF, PBL_PAGES * 8 },
        { RXBUF_OFF, SOAK_RQ_DEPTH * SOAK_RQ_BUF },
        { META_OFF, SOAK_RQ_DEPTH * ERNIC_RXMETA_SIZE },
    };

    for (int i = 0; i < NDEV; i++) {
        for (size_t r = 0; r < ARRAY_SIZE(regions); r++) {
            uint64_t lo = DEV_BASE(i) + regions[r].off;

            if (a >= lo && a < lo + regions[r].len) {
                return true;
            }
        }
    }
    return false;
}

static void check_dma(Soak *k)
{
    size_t chunk = 8 << 20, bad = 0;
    g_autofree uint8_t *buf = g_malloc(chunk);
    uint64_t first = 0;

    for (uint64_t a = DMA_LO; a < DMA_HI; a += chunk) {
        qtest_bufread(k->r->qts, a, buf, chunk);
        for (size_t b = 0; b < chunk; b++) {
            if (buf[b] != FILL && !configured(a + b)) {
                if (!bad++) {
                    first = a + b;
                }
            }
        }
    }
    check(k, bad == 0, "DMA: %zu bytes outside the configured regions "
          "changed, the first at 0x%" PRIx64, bad, first);
    printf("dma: %" PRIu64 " MiB of guest RAM checked, %zu bytes written "
           "outside the configured rings, buffers and regions\n",
           (uint64_t)(DMA_HI - DMA_LO) >> 20, bad);
}

int main(int argc, char **argv)
{
    Soak k = { .rate = 5 };
    uint64_t messages = 2000, seed = 1;
    bool dma = false;
    gint64 t0, last;
    uint32_t retries;

    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--messages") && a + 1 < argc) {
            messages = g_ascii_strtoull(argv[++a], NULL, 0);
        } else if (!strcmp(argv[a], "--rate") && a + 1 < argc) {
            k.rate = g_ascii_strtoull(argv[++a], NULL, 0);
        } else if (!strcmp(argv[a], "--seed") && a + 1 < argc) {
            seed = g_ascii_strtoull(argv[++a], NULL, 0);
        } else if (!strcmp(argv[a], "--check-dma")) {
            dma = true;
        } else if (!strcmp(argv[a], "--ext-mr")) {
            k.ext_mr = true;
        } else if (!strcmp(argv[a], "--ext-rx")) {
            k.ext_rx = true;
        } else {
            fprintf(stderr, "ernic-soak: unknown argument '%s'\n", argv[a]);
            return 64;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    k.st = seed;
    k.r = ernic_rig_start(NULL);
    k.w.filter = relay;
    k.w.opaque = &k;
    k.w.step_ns = 100000;
    if (dma) {
        qtest_memset(k.r->qts, DMA_LO, FILL, DMA_HI - DMA_LO);
    }
    setup(&k);
    t0 = last = g_get_monotonic_time();
    while (k.s[0].done + k.s[1].done < messages) {
        for (int i = 0; i < NDEV; i++) {
            Side *s = &k.s[i];

            while (s->posted - s->done < SLOTS &&
                   k.s[0].posted + k.s[1].posted < messages) {
                post_one(&k, i);
            }
        }
        for (int n = 0; n < 8; n++) {
            ernic_rig_pump_once(k.r, &k.w);
        }
        reap(&k, 0);
        reap(&k, 1);
        if (k.failed || g_get_monotonic_time() - t0 > 3600LL * G_USEC_PER_SEC) {
            break;
        }
        if (g_get_monotonic_time() - last > 10 * G_USEC_PER_SEC) {
            last = g_get_monotonic_time();
            printf("soak: %u of %" PRIu64 " messages\n",
                   k.s[0].done + k.s[1].done, messages);
        }
    }
    check(&k, k.s[0].done + k.s[1].done == messages, "%u of %" PRIu64
          " messages completed", k.s[0].done + k.s[1].done, messages);
    for (int i = 0; i < NDEV && k.failed; i++) {
        /* What stopped the QPs: their status queue entries. */
        printf("dev%d: IPKTERRQWPTR %u, entry 0 0x%08x, STATQP 0x%08x\n", i,
               ernic_rig_rd(k.r, i, ERNIC_IPKTERRQWPTR),
               ernic_rig_fatal_entry(k.r, i, 0),
               ernic_rig_qrd(k.r, i, qpn_of(i), ERNIC_STATQP));
    }
    /* Every QP idle, none FATAL. */
    ERNIC_RIG_PUMP(k.r, &k.w, (ernic_rig_qrd(k.r, 0, QPN_A, ERNIC_STATQP) &
                               ERNIC_STATQP_OSQ_EMPTY) &&
                   (ernic_rig_qrd(k.r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_OSQ_EMPTY));
    for (int i = 0; i < NDEV; i++) {
        uint32_t st = ernic_rig_qrd(k.r, i, qpn_of(i), ERNIC_STATQP);

        check(&k, (st & (ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY |
                         ERNIC_STATQP_FATAL)) ==
              (ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY),
              "dev%d: STATQP 0x%08x at the end (want idle, not FATAL)", i,
              st);
        check(&k, ernic_rig_qrd(k.r, i, qpn_of(i), ERNIC_CQHEAD) ==
              k.s[i].posted % SQ_DEPTH, "dev%d: CQHEAD after the end", i);
    }
    retries = ernic_rig_rd(k.r, 0, ERNIC_RETRYCNTSTS) +
              ernic_rig_rd(k.r, 1, ERNIC_RETRYCNTSTS);
    printf("soak: seed %" PRIu64 " rate %u%%: %" PRIu64 " messages (%" PRIu64
           " SEND, %" PRIu64 " WRITE, %" PRIu64 " READ), %" PRIu64
           " bytes checked, %u frames, retransmissions %u, %.1f s\n", seed,
           k.rate, k.msgs[0] + k.msgs[1] + k.msgs[2], k.msgs[0], k.msgs[1],
           k.msgs[2], k.bytes, k.w.frames[0] + k.w.frames[1], retries,
           (g_get_monotonic_time() - t0) / (double)G_USEC_PER_SEC);
    printf("soak: faults");
    for (int f = 0; f < 5; f++) {
        printf(" %s %" PRIu64, fault_names[f], k.faults[f]);
    }
    printf("\n");
    if (dma) {
        check_dma(&k);
    }
    printf("soak: %u lost, %u failed checks\n",
           (unsigned)(messages - k.s[0].done - k.s[1].done), k.failed);
    ernic_rig_stop(k.r);
    printf("%u passed, %u failed\n", k.checks - k.failed, k.failed);
    return k.failed ? 1 : 0;
}
