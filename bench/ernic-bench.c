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

#include "ernic-rig.h"

#define BATCH       15          /* WQEs per doorbell (< ERNIC_OSQ_DEPTH) */

static double now(void)
{
    return g_get_monotonic_time() / 1e6;
}

/* Write @n WQEs at once and ring the doorbell once. */
static int post_batch(ErnicRig *r, uint8_t op, uint32_t len, int n)
{
    uint8_t wqes[BATCH * ERNIC_WQE_SIZE] = { 0 };
    ErnicRigDev *d = &r->d[0];
    uint32_t first = d->sqpi % SQ_DEPTH;

    /* A batch ends at the end of the ring at the latest. */
    n = MIN(n, SQ_DEPTH - first);
    for (int k = 0; k < n; k++) {
        uint8_t *w = wqes + k * ERNIC_WQE_SIZE;

        stw_le_p(w + ERNIC_WQE_WRID, d->sqpi + k);
        stq_le_p(w + ERNIC_WQE_LADDR, DEV_BASE(0) + SRC_OFF);
        stl_le_p(w + ERNIC_WQE_LENGTH, len);
        w[ERNIC_WQE_OPCODE] = op;
        stq_le_p(w + ERNIC_WQE_ROFFSET, MR_VA);
        stl_le_p(w + ERNIC_WQE_RTAG, RKEY);
    }
    qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF + first * ERNIC_WQE_SIZE,
                   wqes, n * ERNIC_WQE_SIZE);
    d->sqpi += n;
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, d->sqpi % SQ_DEPTH);
    return n;
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/bench", bench);
    return g_test_run();
}
