/*
 * ernic benchmark (not a test): RDMA WRITE, SEND and READ throughput and
 * latency between two ernic devices with no guest OS, next to the raw
 * cost of moving the same frames over the same netdev through the
 * Ethernet path.
 *
 * The two devices sit in one QEMU (TCG off: -accel qtest), each on a
 * socket netdev whose other end this program holds and relays, so both
 * the RDMA numbers and the raw numbers include the same relay. The
 * driver side (WQE writes, doorbells, completion polls) goes through the
 * qtest protocol, which costs a round trip per register access; WQEs are
 * written and doorbells rung in batches to keep that small.
 *
 * Run: scripts/bench.sh (docs/engine.md, "Benchmark").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <zlib.h>
#include "ernic-rig.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "qemu/cutils.h"
#include "qemu/host-utils.h"
/* The device's own CRC-32, measured as the engine runs it. */
#include "../../hw/rdma/ernic_crc32.c"

#define BATCH       15          /* WQEs per doorbell (< ERNIC_OSQ_DEPTH) */

static double now(void)
{
    return g_get_monotonic_time() / 1e6;
}

/*
 * ERNIC_BENCH_TOPO=unix|hub runs only that topology, ERNIC_BENCH_MIN=BYTES
 * only messages of at least BYTES, ERNIC_BENCH_OP=WRITE|READ|SEND|SEND-X
 * only that operation (skip_point(); to profile one part).
 *
 * ERNIC_BENCH_SPREAD=BYTES: consecutive messages of the engine benchmark
 * start BYTES of their size apart in the 8 MiB regions (wrapping), so
 * that a small message's working set can be made as large as an 8 MiB
 * one's. 0 (default): every message at the start of the region.
 */
/*
 * Whether the point of operation @name and @len bytes is left out by
 * ERNIC_BENCH_OP or ERNIC_BENCH_MIN.
 */
static bool skip_point(const char *name, uint32_t len)
{
    const char *op = getenv("ERNIC_BENCH_OP");
    const char *env = getenv("ERNIC_BENCH_MIN");
    uint64_t min = 0;

    if (env && qemu_strtou64(env, NULL, 0, &min)) {
        min = 0;
    }
    return (op && strcmp(op, name)) || len < min;
}

/*
 * ERNIC_BENCH_PMTU (engine only): the QPs' path MTU in bytes, 256 to
 * 4096 (default 4096); a guest on a 1500-byte link runs at 1024.
 */
static uint32_t engine_pmtu = 4096;

static void engine_pmtu_init(void)
{
    const char *env = getenv("ERNIC_BENCH_PMTU");
    uint64_t v;

    if (!env) {
        return;
    }
    if (qemu_strtou64(env, NULL, 0, &v) || v < 256 || v > 4096 ||
        !is_power_of_2(v)) {
        g_error("ERNIC_BENCH_PMTU takes 256, 512, 1024, 2048 or 4096");
    }
    engine_pmtu = v;
}

/* The QPCONFi[10:8] code of engine_pmtu: 256 bytes << code. */
static uint32_t engine_pmtu_code(void)
{
    return ctz32(engine_pmtu >> 8);
}

/* QP @qpn of device @i, set up at PMTU 4096, at engine_pmtu instead. */
static void engine_set_pmtu(ErnicRig *r, int i, uint32_t qpn)
{
    uint32_t v = ernic_rig_qrd(r, i, qpn, ERNIC_QPCONF);

    ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF,
                  (v & ~ERNIC_QPCONF_PMTU_MASK) |
                  (engine_pmtu_code() << ERNIC_QPCONF_PMTU_SHIFT));
}

static uint32_t spread_len(uint32_t len, uint32_t limit)
{
    const char *env = getenv("ERNIC_BENCH_SPREAD");
    uint64_t spread = 0;

    if (!env || len > limit / 2 || qemu_strtou64(env, NULL, 0, &spread)) {
        return 0;
    }
    return MIN(spread, limit);
}

/*
 * Write @n WQEs (at most BATCH) on device 0's QP @qpn, whose SQ is at
 * @sq and whose producer index is *@sqpi, at once, and ring once: @op
 * of @len from @laddr to MR_VA through @rkey. Returns how many: a batch
 * ends at the end of the ring at the latest.
 */
static int post_wqes(ErnicRig *r, uint32_t qpn, uint64_t sq, uint32_t *sqpi,
                     uint8_t op, uint32_t len, uint64_t laddr, uint32_t rkey,
                     int n, uint32_t spread)
{
    uint8_t wqes[BATCH * ERNIC_WQE_SIZE] = { 0 };
    uint32_t first = *sqpi % SQ_DEPTH;

    n = MIN(MIN(n, BATCH), SQ_DEPTH - first);
    for (int k = 0; k < n; k++) {
        uint8_t *w = wqes + k * ERNIC_WQE_SIZE;
        uint64_t off = spread ? (uint64_t)(*sqpi + k) * len % spread : 0;

        off = off + len > spread ? 0 : off;
        stw_le_p(w + ERNIC_WQE_WRID, *sqpi + k);
        stq_le_p(w + ERNIC_WQE_LADDR, laddr + off);
        stl_le_p(w + ERNIC_WQE_LENGTH, len);
        w[ERNIC_WQE_OPCODE] = op;
        stq_le_p(w + ERNIC_WQE_ROFFSET, MR_VA + off);
        stl_le_p(w + ERNIC_WQE_RTAG, rkey);
    }
    qtest_memwrite(r->qts, sq + first * ERNIC_WQE_SIZE, wqes,
                   n * ERNIC_WQE_SIZE);
    *sqpi += n;
    ernic_rig_qwr(r, 0, qpn, ERNIC_SQPI, *sqpi % SQ_DEPTH);
    return n;
}

static int post_batch(ErnicRig *r, uint8_t op, uint32_t len, int n)
{
    return post_wqes(r, QPN_A, DEV_BASE(0) + SQ_OFF, &r->d[0].sqpi, op, len,
                     DEV_BASE(0) + SRC_OFF, RKEY, n, 0);
}

/* Relay frames until the posted WQEs have completed. */
static void drain(ErnicRig *r, uint8_t op)
{
    while (!ernic_rig_all_done(r, 0, QPN_A)) {
        ernic_rig_pump_once(r, NULL);
    }
    if (op == ERNIC_OP_SEND) {
        /* Software hands the RQ buffers back. */
        ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI,
                      ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB));
    }
}

static void run_op(ErnicRig *r, const char *name, uint8_t op, uint32_t len,
                   uint64_t bytes)
{
    uint64_t msgs = MAX(bytes / len, 2 * BATCH);
    double t0, t, lat;
    uint64_t done;
    int k, pings = 20;

    t0 = now();
    for (done = 0; done < msgs;) {
        done += post_batch(r, op, len, MIN(BATCH, msgs - done));
        drain(r, op);
    }
    t = now() - t0;

    t0 = now();
    for (k = 0; k < pings; k++) {
        post_batch(r, op, len, 1);
        drain(r, op);
    }
    lat = (now() - t0) / pings;

    printf("%-6s %8u %9.3f %10.0f %10.1f\n", name, len,
           msgs * (double)len * 8 / t / 1e9, msgs / t, lat * 1e6);
    fflush(stdout);
}

/*
 * Raw: @nframes frames of @flen bytes from device 0's Ethernet TX ring to
 * device 1's RX ring, through the same socket netdevs and relay.
 */
static void run_raw(ErnicRig *r, uint32_t len, uint32_t pmtu)
{
    uint32_t npkt = DIV_ROUND_UP(len, pmtu);
    uint32_t flen = MIN(len, pmtu) + 58 + 4;   /* headers + ICRC of RC */
    uint64_t want = MAX((64ULL << 20) / len, 2 * BATCH) * npkt;
    uint8_t desc[ERNIC_ETH_DESC_SIZE] = { 0 };
    uint32_t ring = 256, sent = 0, txci;
    double t0, t;

    want = MIN(want, 20000);
    for (uint32_t k = 0; k < ring; k++) {
        stq_le_p(desc, DEV_BASE(0) + ETH_BUF_OFF);
        stw_le_p(desc + 8, flen);
        qtest_memwrite(r->qts, DEV_BASE(0) + ETH_TX_OFF + k * 16, desc, 16);
        stq_le_p(desc, DEV_BASE(1) + ETH_BUF_OFF);
        stw_le_p(desc + 8, 9216);
        qtest_memwrite(r->qts, DEV_BASE(1) + ETH_RX_OFF + k * 16, desc, 16);
    }
    txci = qpci_io_readl(r->d[0].e.pdev, r->d[0].e.eth, ERNIC_ETH_TXCI);
    t0 = now();
    while (sent < want) {
        uint32_t n = MIN(want - sent, ring / 2);
        uint32_t base = qpci_io_readl(r->d[1].e.pdev, r->d[1].e.eth,
                                      ERNIC_ETH_RXPKTCNT);

        qpci_io_writel(r->d[1].e.pdev, r->d[1].e.eth, ERNIC_ETH_RXPI,
                       (qpci_io_readl(r->d[1].e.pdev, r->d[1].e.eth,
                                      ERNIC_ETH_RXCI) + n) % ring);
        qpci_io_writel(r->d[0].e.pdev, r->d[0].e.eth, ERNIC_ETH_TXPI,
                       (txci + sent + n) % ring);
        while (qpci_io_readl(r->d[1].e.pdev, r->d[1].e.eth,
                             ERNIC_ETH_RXPKTCNT) - base < n) {
            ernic_rig_pump_once(r, NULL);
        }
        sent += n;
    }
    t = now() - t0;
    printf("%-6s %8u %9.3f %10.0f %10s   (%u frames of %u B)\n", "raw",
           len, (double)sent / npkt * len * 8 / t / 1e9,
           sent / npkt / t, "-", sent, flen);
    fflush(stdout);
}

static void bench(void)
{
    static const uint32_t lens[] = {
        64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
    };
    const char *env = getenv("ERNIC_BENCH_MB");
    uint64_t bytes = (env ? atoi(env) : 64) << 20;
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;
    ErnicRig *r = ernic_rig_start(NULL);

    cfg.pmtu = ERNIC_PMTU_4096;
    cfg.rqbuf = 1024 * 1024;
    cfg.rq_depth = 32;
    ernic_rig_connect_pair(r, &cfg);
    for (int i = 0; i < NDEV; i++) {
        qpci_io_writel(r->d[i].e.pdev, r->d[i].e.eth, ERNIC_ETH_TXBA,
                       DEV_BASE(i) + ETH_TX_OFF);
        qpci_io_writel(r->d[i].e.pdev, r->d[i].e.eth, ERNIC_ETH_TXSZ, 256);
        qpci_io_writel(r->d[i].e.pdev, r->d[i].e.eth, ERNIC_ETH_RXBA,
                       DEV_BASE(i) + ETH_RX_OFF);
        qpci_io_writel(r->d[i].e.pdev, r->d[i].e.eth, ERNIC_ETH_RXSZ, 256);
        qpci_io_writel(r->d[i].e.pdev, r->d[i].e.eth, ERNIC_ETH_CTRL,
                       ERNIC_ETH_CTRL_TX_EN | ERNIC_ETH_CTRL_RX_EN);
    }
    ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF, 1024 * 1024, 1);
    ernic_rig_put_pattern(r, DEV_BASE(1) + MR_OFF, 1024 * 1024, 2);
    /* The raw frames: a non-RoCE frame to device 1's MAC. */
    {
        uint8_t f[9216] = { 0 };

        memcpy(f, r->d[1].e.mac, 6);
        memcpy(f + 6, r->d[0].e.mac, 6);
        stw_be_p(f + 12, 0x88b5);       /* local experimental EtherType */
        qtest_memwrite(r->qts, DEV_BASE(0) + ETH_BUF_OFF, f, sizeof(f));
    }

    printf("# ernic-bench: two devices, socket netdevs relayed by the "
           "bench, PMTU 4096, %" PRIu64 " MiB per point\n", bytes >> 20);
    printf("%-6s %8s %9s %10s %10s\n", "op", "bytes", "Gb/s", "msg/s",
           "lat_us");
    for (size_t s = 0; s < ARRAY_SIZE(lens); s++) {
        run_op(r, "WRITE", ERNIC_OP_WRITE, lens[s], bytes);
        run_op(r, "SEND", ERNIC_OP_SEND, lens[s], bytes);
        run_op(r, "READ", ERNIC_OP_READ, lens[s], bytes);
        run_raw(r, lens[s], 4096);
    }
    /* The data is not checked here; the qtests do that. */
    ernic_rig_stop(r);
}

/* ---- The engine alone: no relay (issue 34, docs/engine.md) ---------- */

#define BIG(i)          (0x10000000ULL + (uint64_t)(i) * 0x1000000ULL)
#define BIG_LEN         (8u << 20)
#define BIG_INDEX       6
#define BIG_KEY         0x66
#define BIG_RKEY        ((BIG_INDEX << 8) | BIG_KEY)
#define FRAME_HDRS      (14 + 20 + 8 + 12 + 16 + 4)  /* IPv4 RC WRITE */

/*
 * CPU time of every thread of process @pid, in seconds: the scheduler's
 * own nanoseconds (/proc/PID/task/TID/schedstat), not /proc/PID/stat's
 * clock ticks, whose 10 ms made a point's CPU per frame too coarse.
 */
static double cpu_s(pid_t pid)
{
    g_autofree char *dir = g_strdup_printf("/proc/%d/task", (int)pid);
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *tid;
    double t = 0;

    while (d && (tid = g_dir_read_name(d))) {
        g_autofree char *path = g_strdup_printf("%s/%s/schedstat", dir, tid);
        g_autofree char *txt = NULL;
        const char *end;
        uint64_t ns;

        /* "run_ns wait_ns slices": the first field. */
        if (g_file_get_contents(path, &txt, NULL, NULL) &&
            !qemu_strtou64(txt, &end, 10, &ns)) {
            t += ns / 1e9;
        }
    }
    if (d) {
        g_dir_close(d);
    }
    return t;
}

static double qemu_cpu_s(ErnicRig *r)
{
    double t = cpu_s(qtest_pid(r->d[0].e.qts));

    return r->two_procs ? t + cpu_s(qtest_pid(r->d[1].e.qts)) : t;
}

/*
 * SENDs above 1 MiB: the PG332 pair's 16 RQ buffers are of 1 MiB (16 of
 * 8 MiB, which PG332 allows, do not fit the rig's 64 MiB per device), so
 * 8 MiB SENDs (and 1 MiB ones, to compare) go over a second QP pair,
 * XQ_QPN to XQ_QPN, whose receiver takes them with ERNIC-X receive WQEs
 * (docs/extension.md, "Receive WQEs"), each naming all of BIG(1).
 * Device 1 has EXTCTRL RXMETA and RXWQE from the start; QPN_B does not
 * use them.
 */
#define XQ_QPN          4
#define XQ_BASE(i)      (0x14000000ULL + (uint64_t)(i) * 0x100000)
#define XQ_RQ_DEPTH     16

static uint32_t xq_sqpi;

/* @n WQEs of QP A (or @xq: XQ_QPN) at once, ring once; through BIG. */
static int post_big(ErnicRig *r, uint8_t op, uint32_t len, int n, bool xq)
{
    return post_wqes(r, xq ? XQ_QPN : QPN_A,
                     xq ? XQ_BASE(0) : DEV_BASE(0) + SQ_OFF,
                     xq ? &xq_sqpi : &r->d[0].sqpi, op, len, BIG(0),
                     BIG_RKEY, n, spread_len(len, BIG_LEN));
}

/*
 * A poll found work outstanding: step virtual time, and after 8 such
 * polls in a row wait 1, 2, 4 ... 64 us before the next. Each poll is a
 * qtest round trip that the measured QEMU's main loop answers between
 * frames; polling flat out took a quarter of its CPU time (perf,
 * docs/engine.md). The wait is at most the time already waited.
 */
static void poll_idle(ErnicRig *r, ErnicRigWire *w, unsigned *idle)
{
    if (++*idle > 8) {
        g_usleep(1u << MIN(*idle - 9, 6u));
    }
    ernic_rig_pump_once(r, w);
}

/* Wait for the posted WQEs, stepping virtual time when nothing moves. */
static void wait_done(ErnicRig *r, uint8_t op, bool xq)
{
    ErnicRigWire w = { .step_ns = 20000 };
    uint32_t qpn = xq ? XQ_QPN : QPN_A, rx = xq ? XQ_QPN : QPN_B;
    uint32_t sqpi = xq ? xq_sqpi : r->d[0].sqpi;
    unsigned idle = 0;

    while (ernic_rig_qrd(r, 0, qpn, ERNIC_CQHEAD) != sqpi % SQ_DEPTH) {
        poll_idle(r, &w, &idle);
    }
    if (op == ERNIC_OP_SEND) {
        ernic_rig_qwr(r, 1, rx, ERNIC_RQCI,
                      ernic_rig_qrd(r, 1, rx, ERNIC_STATRQPIDB));
    }
}

/* Device 1's receive WQEs and metadata ring for XQ_QPN (disabled yet). */
static void xq_rx_wqes(ErnicRig *r, uint64_t base)
{
    uint32_t x = ERNIC_EXT_QP_OFFSET(XQ_QPN);

    ernic_rig_wr(r, 1, x + ERNIC_RXMETABA, base + 0x30000);
    ernic_rig_wr(r, 1, x + ERNIC_RXMETABAMSB, 0);
    ernic_rig_wr(r, 1, x + ERNIC_EXTQPCONF,
                 ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_RXWQE);
    for (uint32_t p = 0; p < XQ_RQ_DEPTH; p++) {
        uint8_t wqe[ERNIC_RWQE_SIZE] = { 0 };

        /* L_Key 0: a bus address (the reserved L_Key). */
        stq_le_p(&wqe[ERNIC_SGE_ADDR], BIG(1));
        stl_le_p(&wqe[ERNIC_SGE_LEN], BIG_LEN);
        qtest_memwrite(r->d[1].e.qts, base + 0x20000 + p * ERNIC_RWQE_SIZE,
                       wqe, sizeof(wqe));
    }
}

/* XQ_QPN of each device, to the other's, as ernic_rig_setup_packed_qp(). */
static void xq_setup(ErnicRig *r)
{
    for (int i = 0; i < NDEV; i++) {
        uint64_t base = XQ_BASE(i);
        QErnicPeer to = { .qpn = XQ_QPN, .ip = r->d[1 - i].e.ip,
                          .sq_psn = PSN_A, .rq_psn = PSN_A };
        QErnicQpCfg qc = {
            .sq = base, .cq = base + 0x10000, .cqdb = base + 0x18000,
            .rqdb = base + 0x18010, .rq = base + 0x20000,
            .sq_depth = SQ_DEPTH, .rq_depth = XQ_RQ_DEPTH, .rqbuf = 4096,
            .pmtu = engine_pmtu_code(), .timeout = 16, .retry = 7,
            .rnr_retry = 7, .rnr_timer = 1,
            .qpconf = ERNIC_QPCONF_HW_HS_DIS | ERNIC_QPCONF_CQE_WR_EN,
        };

        memcpy(to.mac, r->d[1 - i].e.mac, 6);
        if (i == 1) {
            xq_rx_wqes(r, base);
        }
        qernic_qp_setup(&r->d[i].e, XQ_QPN, PD_NUM, &to, &qc);
    }
    xq_sqpi = 0;
}

static void engine_op(ErnicRig *r, const char *topo, const char *name,
                      uint8_t op, uint32_t len, uint64_t bytes, bool xq)
{
    uint64_t msgs = MAX(bytes / len, 2 * BATCH), frames, done;
    double t0, t, c0, c;

    if (skip_point(name, len)) {
        return;
    }
    frames = msgs * MAX(DIV_ROUND_UP(len, engine_pmtu), 1u);
    c0 = qemu_cpu_s(r);
    t0 = now();
    for (done = 0; done < msgs;) {
        done += post_big(r, op, len, MIN(BATCH, msgs - done), xq);
        wait_done(r, op, xq);
    }
    t = now() - t0;
    c = qemu_cpu_s(r) - c0;
    /* A refused message completes too, and its QP goes FATAL. */
    g_assert_false(ernic_rig_qrd(r, 0, xq ? XQ_QPN : QPN_A, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    g_assert_false(ernic_rig_qrd(r, 1, xq ? XQ_QPN : QPN_B, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    printf("%-5s %-6s %8u %9.3f %10.0f %9.2f\n", topo, name, len,
           msgs * (double)len * 8 / t / 1e9, msgs / t, c / frames * 1e6);
    fflush(stdout);
}

/* The engine's bounds on this host: memcpy, CRC-32 and a frame pump. */
static double gbps(uint64_t bytes, double t)
{
    return bytes * 8.0 / t / 1e9;
}

/* memcpy of 8 MiB messages through buffers larger than the caches. */
static void bound_memcpy(void)
{
    size_t n = 16 * (size_t)BIG_LEN;
    g_autofree uint8_t *a = g_malloc(n), *b = g_malloc(n);
    double t0;

    memset(a, 1, n);
    memset(b, 2, n);
    t0 = now();
    for (int k = 0; k < 8; k++) {
        for (size_t o = 0; o < n; o += BIG_LEN) {
            memcpy(k & 1 ? a + o : b + o, k & 1 ? b + o : a + o, BIG_LEN);
        }
    }
    printf("bound memcpy of 8 MiB messages (128 MiB buffers): %.1f Gb/s\n",
           gbps(8ULL * n, now() - t0));
}

/*
 * CRC-32 of 4 KiB frames: the device's (ICRC) by each path this host has
 * (ernic_crc32.c: 1 PCLMULQDQ, 2 VPCLMULQDQ), then zlib's.
 */
static void bound_crc(void)
{
    g_autofree uint8_t *a = g_malloc(BIG_LEN);
    int top = ernic_crc32_path();
    uint32_t crc;
    double t0;

    memset(a, 3, BIG_LEN);
    for (int z = top; z >= 0; z--) {
        crc = 0;
        t0 = now();
        ernic_crc_max = z ? z : ERNIC_CRC_VPCLMUL;
        for (int k = 0; k < 16; k++) {
            for (uint32_t o = 0; o < BIG_LEN; o += 4096) {
                crc = z ? ernic_crc32(crc, a + o, 4096) :
                      crc32(crc, a + o, 4096);
            }
        }
        printf("bound %s of 4 KiB frames: %.1f Gb/s (crc %x)\n",
               z == 2 ? "ernic_crc32 (VPCLMULQDQ)" :
               z == 1 ? "ernic_crc32 (PCLMULQDQ)" : "zlib crc32",
               gbps(16ULL * BIG_LEN, now() - t0), crc);
    }
}

typedef struct Pump {
    int fd;
    uint32_t flen, batches;
} Pump;

/* The writer: batches of 32 frames, each with its 4-byte length. */
static gpointer pump_writer(gpointer opaque)
{
    Pump *p = opaque;
    size_t one = 4 + p->flen;
    g_autofree uint8_t *buf = g_malloc0(32 * one);

    for (uint32_t k = 0; k < 32; k++) {
        stl_be_p(buf + k * one, p->flen);
    }
    for (uint32_t b = 0; b < p->batches; b++) {
        size_t off = 0;

        while (off < 32 * one) {
            ssize_t n = write(p->fd, buf + off, 32 * one - off);

            g_assert_cmpint(n, >, 0);
            off += n;
        }
    }
    return NULL;
}

/*
 * A raw frame pump over an AF_UNIX stream, the framing of -netdev stream
 * and the send buffer it asks for (patches/qemu/0005-*: 2 MiB, which the
 * kernel doubles, up to twice net.core.wmem_max).
 */
static void bound_pump(void)
{
    int sv[2], sndbuf = 2 * 1024 * 1024;
    socklen_t sl = sizeof(sndbuf);
    Pump p = { .flen = 4096 + FRAME_HDRS, .batches = 8192 };
    size_t total = (size_t)p.batches * 32 * (4 + p.flen), got = 0;
    g_autofree uint8_t *buf = g_malloc(1 << 20);
    GThread *th;
    double t0;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    g_assert_cmpint(getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl),
                    ==, 0);
    p.fd = sv[0];
    t0 = now();
    th = g_thread_new("pump", pump_writer, &p);
    while (got < total) {
        ssize_t n = read(sv[1], buf, MIN(total - got, 1 << 20));

        g_assert_cmpint(n, >, 0);
        got += n;
    }
    g_thread_join(th);
    printf("bound AF_UNIX stream pump of %u-byte frames, 32 per write, "
           "%d KiB send buffer: %.1f Gb/s of 4 KiB payload\n", p.flen,
           sndbuf >> 10, gbps((uint64_t)p.batches * 32 * 4096, now() - t0));
    close(sv[0]);
    close(sv[1]);
}

/*
 * Every region the bench uses (DEV_BASE's, BIG, MQ_BASE, XQ_BASE), written
 * once before anything is measured. QEMU backs guest RAM lazily, so the
 * first touch of each page (the host zeroing it) was counted in the
 * first point that used it: SEND 1 MiB's 16 RQ buffers spent 18 % of
 * that point's samples in clear_page_erms. A guest has touched its
 * buffers before it sends from them or lends them to a peer.
 */
#define TOUCH_START     DEV_BASE(0)
#define TOUCH_END       XQ_BASE(NDEV)           /* the highest, 322 MiB */
#define TOUCH_CHUNK     (16ULL << 20)
QEMU_BUILD_BUG_ON(DEV_BASE(NDEV) > TOUCH_END ||
                  BIG(NDEV - 1) + BIG_LEN > TOUCH_END);

static void touch_ram(ErnicRig *r)
{
    for (int i = 0; i < (r->two_procs ? NDEV : 1); i++) {
        for (uint64_t a = TOUCH_START; a < TOUCH_END; a += TOUCH_CHUNK) {
            qtest_memset(r->d[i].e.qts, a, 0,
                         MIN(TOUCH_CHUNK, TOUCH_END - a));
        }
    }
}

/* QP A and QP B at engine_pmtu, 1 MiB RQ buffers, BIG's regions. */
static void engine_setup(ErnicRig *r)
{
    ErnicRigQpCfg cfg = ernic_rig_default_cfg;

    cfg.pmtu = engine_pmtu_code();
    cfg.rqbuf = 1024 * 1024;
    cfg.rq_depth = 16;
    cfg.timeout = 16;
    /* EXTCTRL changes only while ERNIC is disabled: before the pair. */
    ernic_rig_wr(r, 1, ERNIC_EXTCTRL,
                 ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE);
    ernic_rig_connect_pair(r, &cfg);
    xq_setup(r);
    for (int i = 0; i < NDEV; i++) {
        qernic_mr(&r->d[i].e, BIG_INDEX, PD_NUM, MR_VA, BIG(i), BIG_LEN,
                  BIG_KEY);
    }
}

static void engine_topology(ErnicRig *r, const char *topo, uint64_t bytes)
{
    static const uint32_t lens[] = {
        64, 4096, 65536, 1048576, 8388608,
    };

    touch_ram(r);
    engine_setup(r);
    for (size_t s = 0; s < ARRAY_SIZE(lens); s++) {
        uint64_t b = MAX(bytes, 4ULL * lens[s]);

        engine_op(r, topo, "WRITE", ERNIC_OP_WRITE, lens[s], b, false);
        engine_op(r, topo, "READ", ERNIC_OP_READ, lens[s], b, false);
        if (lens[s] <= 1048576) {
            engine_op(r, topo, "SEND", ERNIC_OP_SEND, lens[s], b, false);
        }
        if (lens[s] >= 1048576) {
            engine_op(r, topo, "SEND-X", ERNIC_OP_SEND, lens[s], b, true);
        }
    }
    ernic_rig_stop(r);
}

/* ---- Many QPs at once --------------------------------------------- */

#define MQ_MAX          255             /* QPs 2..256: all of num-qp=256 */
#define MQ_QPN(k)       (2 + (k))
#define MQ_BASE(k)      (0x12000000ULL + (uint64_t)(k) * ERNIC_RIG_PACKED_QP)
#define MQ_BATCH        4
#define MQ_OPTS         "-m 1024 -global ernic.num-qp=256"

/* @n @op (WRITE or READ) of @len on QP MQ_QPN(@k) of device 0, one ring. */
static void mq_post(ErnicRig *r, uint32_t k, uint32_t *sqpi, uint8_t op,
                    uint32_t len, int n)
{
    post_wqes(r, MQ_QPN(k), MQ_BASE(k), sqpi, op, len, BIG(0), BIG_RKEY, n,
              0);
}

/*
 * Whether every QP has completed its WQEs, from QP *@k on: the QPs
 * before it were found done by an earlier call of this round, and stay
 * so (a read per QP per poll was 255 round trips per poll).
 */
static bool mq_done(ErnicRig *r, uint32_t nqp, const uint32_t *sqpi,
                    uint32_t *k)
{
    for (; *k < nqp; (*k)++) {
        if (ernic_rig_qrd(r, 0, MQ_QPN(*k), ERNIC_CQHEAD) !=
            sqpi[*k] % SQ_DEPTH) {
            return false;
        }
    }
    return true;
}

/*
 * WRITEs or READs of @len spread over @nqp QPs, MQ_BATCH each per round.
 * No SENDs: each QP's RQ holds two 4 KiB buffers, so that 255 QPs fit.
 */
static void mq_run(ErnicRig *r, const char *topo, uint32_t nqp, uint8_t op,
                   uint32_t len, uint64_t bytes)
{
    uint32_t sqpi[MQ_MAX] = { 0 };
    uint64_t msgs = MAX(bytes / len, (uint64_t)nqp * MQ_BATCH), done = 0;
    ErnicRigWire w = { .step_ns = 20000 };
    const char *name = op == ERNIC_OP_READ ? "READ" : "WRITE";
    double t0, t, c0, c;

    if (skip_point(name, len)) {
        return;
    }
    for (uint32_t k = 0; k < nqp; k++) {
        sqpi[k] = ernic_rig_qrd(r, 0, MQ_QPN(k), ERNIC_SQPI);
    }
    c0 = qemu_cpu_s(r);
    t0 = now();
    while (done < msgs) {
        uint32_t first = 0;
        unsigned idle = 0;

        for (uint32_t k = 0; k < nqp && done < msgs; k++) {
            mq_post(r, k, &sqpi[k], op, len, MQ_BATCH);
            done += MQ_BATCH;
        }
        while (!mq_done(r, nqp, sqpi, &first)) {
            poll_idle(r, &w, &idle);
        }
    }
    t = now() - t0;
    c = qemu_cpu_s(r) - c0;
    printf("%-5s %4u QPs %-5s %8u %9.3f %10.0f %9.2f\n", topo, nqp, name,
           len,
           done * (double)len * 8 / t / 1e9, done / t,
           c / (done * DIV_ROUND_UP(len, engine_pmtu)) * 1e6);
    fflush(stdout);
}

static void mq_topology(ErnicRig *r, const char *topo, uint64_t bytes)
{
    static const uint32_t nqps[] = { 1, 8, 64, MQ_MAX };

    QEMU_BUILD_BUG_ON(MQ_BASE(MQ_MAX) > TOUCH_END);
    touch_ram(r);
    ernic_rig_setup_global(r, 0, 0);
    ernic_rig_setup_global(r, 1, 0);
    for (uint32_t k = 0; k < MQ_MAX; k++) {
        for (int i = 0; i < NDEV; i++) {
            ernic_rig_setup_packed_qp(r, i, MQ_QPN(k), MQ_BASE(k));
            engine_set_pmtu(r, i, MQ_QPN(k));
        }
    }
    for (int i = 0; i < NDEV; i++) {
        qernic_mr(&r->d[i].e, BIG_INDEX, PD_NUM, MR_VA, BIG(i), BIG_LEN,
                  BIG_KEY);
    }
    for (size_t n = 0; n < ARRAY_SIZE(nqps); n++) {
        mq_run(r, topo, nqps[n], ERNIC_OP_WRITE, 65536, bytes);
        mq_run(r, topo, nqps[n], ERNIC_OP_WRITE, 1048576, bytes);
        mq_run(r, topo, nqps[n], ERNIC_OP_READ, 1048576, bytes);
    }
    ernic_rig_stop(r);
}

/*
 * QEMU options of a topology: @base, then ERNIC_BENCH_EXTRA (such as
 * "-global ernic.x-tx-map=off", to measure a change before and after
 * with one binary).
 */
static char *bench_extra(const char *base)
{
    const char *env = getenv("ERNIC_BENCH_EXTRA");

    return g_strdup_printf("%s %s", base, env ? env : "");
}

/* Two devices on one hub in one QEMU with @extra. */
static ErnicRig *start_hub(const char *extra)
{
    ErnicRig *r = g_new0(ErnicRig, 1);
    QPCIBus *bus;

    r->qts = qtest_initf(RIG_MACHINE " "
                         "-netdev hubport,id=h0,hubid=0 "
                         "-netdev hubport,id=h1,hubid=0 "
                         "-device ernic,addr=04.0,netdev=h0,"
                         "mac=52:54:00:e3:32:00 "
                         "-device ernic,addr=05.0,netdev=h1,"
                         "mac=52:54:00:e3:32:01 %s", extra);
    bus = qpci_new_pc(r->qts, NULL);
    for (int i = 0; i < NDEV; i++) {
        ernic_rig_attach(r, i, r->qts, bus);
        r->d[i].fd = -1;
    }
    return r;
}

/*
 * Two QEMU processes on tap devices @taps ("tap0,tap1") that the caller
 * put on one bridge (scripts/bench.sh --engine --tap).
 */
static ErnicRig *start_tap(const char *taps, const char *extra)
{
    g_auto(GStrv) t = g_strsplit(taps, ",", 2);
    g_autofree char *nd0 = NULL, *nd1 = NULL;

    g_assert(t[0] && t[1]);
    nd0 = g_strdup_printf("tap,ifname=%s,script=no,downscript=no", t[0]);
    nd1 = g_strdup_printf("tap,ifname=%s,script=no,downscript=no", t[1]);
    return ernic_rig_start_procs_extra(nd0, nd1, extra);
}

/*
 * Two devices with nothing of the bench's between them: two QEMU
 * processes on -netdev stream over AF_UNIX, then one QEMU with both on a
 * hub, then, given ERNIC_BENCH_TAP, two QEMUs on taps of one Linux
 * bridge. The bench only posts WQEs and reads CQHEAD through qtest.
 */
static void engine(void)
{
    const char *env = getenv("ERNIC_BENCH_MB");
    uint64_t bytes = (uint64_t)(env ? atoi(env) : 64) << 20;
    g_autofree char *path = g_strdup_printf("%s/ernic-bench-%d.sock",
                                            g_get_tmp_dir(), (int)getpid());
    const char *only = getenv("ERNIC_BENCH_TOPO");
    bool unix_on = !only || !strcmp(only, "unix");
    bool hub_on = !only || !strcmp(only, "hub");
    const char *taps = getenv("ERNIC_BENCH_TAP");
    bool tap_on = taps && (!only || !strcmp(only, "tap"));
    g_autofree char *one = bench_extra("");
    g_autofree char *mq = bench_extra(MQ_OPTS);
    ErnicRig *r;

    engine_pmtu_init();
    printf("# ernic-bench engine: no relay, PMTU %u, 1 QP, %" PRIu64
           " MiB per point; cpu_us: QEMU CPU per data frame (PMTU bytes)\n",
           engine_pmtu, bytes >> 20);
    bound_memcpy();
    bound_crc();
    bound_pump();
    printf("%-5s %-6s %8s %9s %10s %9s\n", "topo", "op", "bytes", "Gb/s",
           "msg/s", "cpu_us");
    if (unix_on) {
        r = ernic_rig_start_unix(path, one);
        engine_topology(r, "unix", bytes);
        unlink(path);
    }
    if (hub_on) {
        engine_topology(start_hub(one), "hub", bytes);
    }
    if (tap_on) {
        engine_topology(start_tap(taps, one), "tap", bytes);
    }

    printf("# many QPs at once: WRITEs or READs round-robin, %d per QP "
           "per round\n",
           MQ_BATCH);
    if (unix_on) {
        r = ernic_rig_start_unix(path, mq);
        mq_topology(r, "unix", bytes);
        unlink(path);
    }
    if (hub_on) {
        mq_topology(start_hub(mq), "hub", bytes);
    }
    if (tap_on) {
        mq_topology(start_tap(taps, mq), "tap", bytes);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (getenv("ERNIC_BENCH_ENGINE")) {
        qtest_add_func("/ernic/bench/engine", engine);
    } else {
        qtest_add_func("/ernic/bench", bench);
    }
    return g_test_run();
}
