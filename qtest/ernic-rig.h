/*
 * Test rig for the ernic packet engine, shared by the engine qtest
 * (qtest/ernic-rc-test.c) and the benchmark (bench/ernic-bench.c): two
 * ernic devices in one QEMU, each on a socket netdev whose other end the
 * program holds, so that the program is the wire between them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef ERNIC_RIG_H
#define ERNIC_RIG_H

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include <poll.h>
#include <sys/socket.h>
#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "libqos/pci.h"
#include "hw/pci/pci_regs.h"
#include "hw/rdma/ernic_regs.h"
#include "libqos/ernic.h"

/*
 * The machine of every rig. The i8254 PIT is off: its timer runs on the
 * virtual clock, which stands still between qtest steps, so when its next
 * tick falls a few hundred nanoseconds after the last step the main loop
 * polls with that timeout for ever and looks busy (fuzz seed 9103).
 * Nothing here runs guest code that would want a PIT.
 */
#define RIG_MACHINE "-M q35,pit=off -nodefaults -m 512"

#define NDEV            2
#define QPN_A           2       /* QP on device 0 */
#define QPN_B           3       /* its peer on device 1 */
#define UDP_SPORT       0x12b7
#define PKEY            0xffff
#define TTL             64
#define FRAME_MAX       9216
#define ETH_P_RARP      0x8035

/* Guest memory of device i starts at DEV_BASE(i). */
#define DEV_BASE(i)     (0x1000000ULL + (uint64_t)(i) * 0x4000000ULL)
#define SQ_OFF          0x000000
#define CQ_OFF          0x010000
#define CQDB_OFF        0x020000
#define RQDB_OFF        0x020010
#define ERRBUF_OFF      0x030000
#define FATALQ_OFF      0x040000
#define GSI_SQ_OFF      0x050000
#define GSI_CQ_OFF      0x060000
#define GSI_RQ_OFF      0x070000
#define ETH_TX_OFF      0x080000
#define ETH_RX_OFF      0x090000
#define ETH_BUF_OFF     0x0a0000
/* ImmDt DMA descriptors; their buffers from +0x1000 */
#define IMMDT_RING_OFF  0x0b0000
#define RQ_OFF          0x100000        /* 4 buffers of up to 1 MiB */
#define SRC_OFF         0x800000        /* local data, 2 MiB */
#define MR_OFF          0x1000000       /* registered region, 2 MiB */
#define MR_VA           0x7f0000000000ULL
#define MR_LEN          0x200000
#define MR_INDEX        5
#define MR_KEY          0x5a
#define RKEY            ((MR_INDEX << 8) | MR_KEY)
#define PD_NUM          0x42

#define SQ_DEPTH        64
#define RQ_DEPTH        4

typedef struct Dev {
    QTestState *qts;            /* the QEMU process the device is in */
    QPCIBus *bus;
    QPCIDevice *pci;
    QPCIBar bar;
    uint32_t reg;               /* ERNIC's offset in bar */
    QPCIBar eth;
    QPCIBar card;               /* layout=reconic: card memory */
    uint64_t card_size;
    int fd;                     /* the test's end of the netdev */
    uint8_t mac[6];
    uint32_t ip;
    uint32_t sqpi;              /* producer index of QP_A/QP_B, unwrapped */
} Dev;

typedef struct Rig {
    QTestState *qts;            /* device 0's process */
    bool two_procs;             /* one QEMU process per device */
    Dev d[NDEV];
} Rig;

/* The process that holds guest address @addr (DEV_BASE(i) is device i's). */
#define QTS(r, addr)    ((r)->d[(addr) >= DEV_BASE(1)].qts)

/*
 * A wire filter decides what to do with a frame from device @from:
 * forward, drop, duplicate, hold back (reorder it after the next one),
 * truncate it to Wire.cut bytes, or flip bit Wire.flip of it.
 */
typedef enum { FWD, DROP, DUP, HOLD, TRUNC, FLIP } Verdict;
typedef Verdict (*Filter)(void *opaque, int from, const uint8_t *f,
                          size_t len);

static inline uint32_t le32(const void *p)
{
    return (uint32_t)ldl_le_p(p);
}

static inline uint32_t be32(const void *p)
{
    return (uint32_t)ldl_be_p(p);
}

/*
 * Independent implementations of what the device computes.
 */

/* RoCEv2 ICRC (annex A17.3.3), computed from scratch (libqos). */
static inline uint32_t test_icrc(const uint8_t *f, size_t len)
{
    return qernic_icrc(f, len);
}

static inline uint16_t ip_csum(const uint8_t *p, size_t n)
{
    return qernic_ip_csum(p, n);
}

/* Offsets within a frame the test built or captured (IPv4). */
#define F_IP            14
#define F_UDP           34
#define F_BTH           42
#define F_EXT           54

/* Build an IPv4 RoCEv2 frame the way the spec says, with a valid ICRC. */
static inline size_t build_frame(uint8_t *f, const Dev *src, const Dev *dst,
                                 uint8_t opcode, uint32_t dqpn, uint32_t psn,
                                 bool ackreq, const uint8_t *ext,
                                 size_t ext_len, const uint8_t *pay,
                                 size_t paylen)
{
    return qernic_frame(f, src->mac, src->ip, dst->mac, dst->ip, opcode,
                        dqpn, psn, ackreq, ext, ext_len, pay, paylen);
}

/*
 * Rig: two devices in one QEMU, each on a socket netdev.
 */

static inline void rig_attach(Rig *r, int i, QTestState *qts, QPCIBus *bus)
{
    Dev *d = &r->d[i];
    uint64_t size;

    d->qts = qts;
    d->bus = bus;
    d->pci = qpci_device_find(bus, QPCI_DEVFN(4 + i, 0));
    g_assert(d->pci);
    qpci_device_enable(d->pci);
    if (qpci_config_readw(d->pci, PCI_DEVICE_ID) == ERNIC_RN_PCI_DEVICE_ID) {
        /* layout=reconic (docs/boards.md) */
        d->bar = qpci_iomap(d->pci, ERNIC_RN_BAR_SHELL, &size);
        g_assert_cmphex(size, ==, ERNIC_RN_SHELL_SIZE);
        d->reg = ERNIC_RN_ERNIC_BASE;
        d->eth = qpci_iomap(d->pci, ERNIC_RN_BAR_ETH, &size);
        d->card = qpci_iomap(d->pci, ERNIC_RN_BAR_CARD, &d->card_size);
    } else {
        d->bar = qpci_iomap(d->pci, ERNIC_BAR_REGS, &size);
        d->eth = qpci_iomap(d->pci, ERNIC_BAR_ETH, &size);
    }
    g_assert_cmphex(size, ==, ERNIC_ETH_BAR_SIZE);
    memcpy(d->mac, (uint8_t[]){ 0x52, 0x54, 0x00, 0xe3, 0x32, i }, 6);
    d->ip = 0x0a000001 + i;     /* 10.0.0.1, 10.0.0.2 */
}

/* layout=reconic: QDMA bridge window @w of device @i (docs/boards.md). */
static inline void rig_rn_window(Rig *r, int i, uint32_t w, uint64_t xlate,
                                 uint32_t mapctl)
{
    Dev *d = &r->d[i];
    uint32_t b = ERNIC_RN_AXIB_BASE + w * ERNIC_RN_AXIB_STRIDE;

    qpci_io_writel(d->pci, d->bar, b + ERNIC_RN_AXIB_XLATE_LSB, xlate);
    qpci_io_writel(d->pci, d->bar, b + ERNIC_RN_AXIB_XLATE_MSB, xlate >> 32);
    qpci_io_writel(d->pci, d->bar, b + ERNIC_RN_AXIB_PASID, 0);
    qpci_io_writel(d->pci, d->bar, b + ERNIC_RN_AXIB_FUNC, 0);
    qpci_io_writel(d->pci, d->bar, b + ERNIC_RN_AXIB_MAPCTL, mapctl);
    qpci_io_writel(d->pci, d->bar, b + ERNIC_RN_AXIB_RSVD, 0);
}

/*
 * The windows as RecoNIC's create_rn_dev() programs them, eight of
 * 128 GiB, identity. Until then every engine access to host memory is
 * refused, as on the card.
 */
static inline void rig_rn_bridge(Rig *r, int i)
{
    for (uint32_t w = 0; w < ERNIC_RN_AXIB_WINDOWS; w++) {
        rig_rn_window(r, i, w, (uint64_t)w << ERNIC_RN_AXIB_WIN_SHIFT,
                      ERNIC_RN_AXIB_READ | ERNIC_RN_AXIB_WRITE | 0x2000000);
    }
}

/*
 * Start the rig's QEMU with @extra options; the devices are attached by
 * rig_attach_all() (after an incoming migration, once it has loaded).
 */
static inline void rig_launch_dev(Rig *r, const char *devopts,
                                  const char *extra)
{
    int sv[NDEV][2];
    g_autoptr(GString) cmd = g_string_new(RIG_MACHINE);

    for (int i = 0; i < NDEV; i++) {
        g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, sv[i]), ==, 0);
        g_string_append_printf(cmd, " -netdev socket,fd=%d,id=n%d"
                               " -device ernic,id=ern%d,addr=0%d.0,netdev=n%d,"
                               "mac=52:54:00:e3:32:0%d%s%s",
                               sv[i][1], i, i, 4 + i, i, i,
                               devopts ? "," : "", devopts ? devopts : "");
    }
    g_string_append_printf(cmd, " %s", extra ? extra : "");
    r->qts = qtest_init(cmd->str);
    for (int i = 0; i < NDEV; i++) {
        close(sv[i][1]);
        r->d[i].fd = sv[i][0];
    }
}

static inline void rig_launch(Rig *r, const char *extra)
{
    rig_launch_dev(r, NULL, extra);
}

static inline void rig_attach_all(Rig *r)
{
    QPCIBus *bus = qpci_new_pc(r->qts, NULL);   /* one BAR allocator */

    for (int i = 0; i < NDEV; i++) {
        rig_attach(r, i, r->qts, bus);
    }
}

static inline Rig *rig_start(const char *extra)
{
    Rig *r = g_new0(Rig, 1);

    rig_launch(r, extra);
    rig_attach_all(r);
    return r;
}

/*
 * Two QEMU processes, one device each, joined by a QEMU netdev: @nd0 and
 * @nd1 are the -netdev options of each ("stream,..." or "dgram,...").
 */
static inline Rig *rig_start_procs(const char *nd0, const char *nd1)
{
    Rig *r = g_new0(Rig, 1);
    const char *nd[NDEV] = { nd0, nd1 };

    r->two_procs = true;
    for (int i = 0; i < NDEV; i++) {
        QTestState *qts = qtest_initf(RIG_MACHINE " -netdev %s,"
                                      "id=n%d -device ernic,addr=0%d.0,"
                                      "netdev=n%d,mac=52:54:00:e3:32:0%d",
                                      nd[i], i, 4 + i, i, i);

        rig_attach(r, i, qts, qpci_new_pc(qts, NULL));
        r->d[i].fd = -1;        /* no wire in the test's hands */
    }
    r->qts = r->d[0].qts;
    return r;
}

static inline void rig_stop(Rig *r)
{
    for (int i = 0; i < NDEV; i++) {
        if (r->d[i].fd >= 0) {
            close(r->d[i].fd);
        }
        g_free(r->d[i].pci);
        if (i == 0 || r->two_procs) {
            qpci_free_pc(r->d[i].bus);
            qtest_quit(r->d[i].qts);
        }
    }
    g_free(r);
}

static inline uint32_t rd(Rig *r, int i, uint32_t off)
{
    return qpci_io_readl(r->d[i].pci, r->d[i].bar, r->d[i].reg + off);
}

static inline void wr(Rig *r, int i, uint32_t off, uint32_t val)
{
    qpci_io_writel(r->d[i].pci, r->d[i].bar, r->d[i].reg + off, val);
}

static inline uint32_t qrd(Rig *r, int i, uint32_t qpn, uint32_t off)
{
    return rd(r, i, ERNIC_QP_OFFSET(qpn) + off);
}

static inline void qwr(Rig *r, int i, uint32_t qpn, uint32_t off, uint32_t val)
{
    wr(r, i, ERNIC_QP_OFFSET(qpn) + off, val);
}

static void wr64(Rig *r, int i, uint32_t qpn, uint32_t lo, uint32_t hi,
                 uint64_t val)
{
    qwr(r, i, qpn, lo, val);
    qwr(r, i, qpn, hi, val >> 32);
}

/* Global configuration, PG332 ch.6 "Global configuration". */
static inline void setup_global(Rig *r, int i, uint32_t ackgen)
{
    Dev *d = &r->d[i];

    wr(r, i, ERNIC_MACXADDLSB, be32(d->mac + 2));
    wr(r, i, ERNIC_MACXADDMSB, lduw_be_p(d->mac));
    wr(r, i, ERNIC_IPv4XADD, d->ip);
    wr(r, i, ERNIC_ERRBUFBA, DEV_BASE(i) + ERRBUF_OFF);
    wr(r, i, ERNIC_ERRBUFSZ, (256 << 16) | 16);
    wr(r, i, ERNIC_IPKTERRQBA, DEV_BASE(i) + FATALQ_OFF);
    wr(r, i, ERNIC_IPKTERRQSZ, 64);
    wr(r, i, ERNIC_INTEN, 0x1ff);
    wr(r, i, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN | ERNIC_XRNICCONF_ERRBUF_EN |
       (ackgen << ERNIC_XRNICCONF_ACKGEN_SHIFT) | (31 << 8) |
       (UDP_SPORT << ERNIC_XRNICCONF_UDPSRC_SHIFT));
    /* The MR both peers target: PD/MR table entry MR_INDEX (p.31). */
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_PDPDNUM, PD_NUM);
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_VIRTADDRLSB, (uint32_t)MR_VA);
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_VIRTADDRMSB, MR_VA >> 32);
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_BUFBASEADDRLSB,
       DEV_BASE(i) + MR_OFF);
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_BUFBASEADDRMSB, 0);
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_BUFRKEY, MR_KEY);
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_WRRDBUFLEN, MR_LEN);
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_ACCESSDESC,
       ERNIC_ACCESS_READ_WRITE);
}

typedef struct QpCfg {
    uint32_t pmtu;              /* ERNIC_PMTU_* */
    uint32_t rqbuf;             /* bytes */
    uint32_t rq_depth;
    uint32_t timeout;           /* TIMEOUTCONF[5:0] */
    uint32_t retry;
    uint32_t rnr_retry;
    uint32_t rnr_timer;
    bool loopback;              /* peer is on the same device */
} QpCfg;

static const QpCfg default_cfg = {
    .pmtu = ERNIC_PMTU_1024, .rqbuf = 0x100000, .rq_depth = RQ_DEPTH,
    .timeout = 14, .retry = 7, .rnr_retry = 7, .rnr_timer = 1,
};

/* Connect QP @qpn of device @i to QP @dqpn of device @peer. */
static inline void setup_qp(Rig *r, int i, uint32_t qpn, int peer,
                            uint32_t dqpn,
                            uint32_t sqpsn, uint32_t rqpsn, const QpCfg *cfg,
                            uint64_t qbase)
{
    Dev *p = &r->d[peer];

    wr64(r, i, qpn, ERNIC_SQBA, ERNIC_SQBAMSB, qbase + SQ_OFF);
    wr64(r, i, qpn, ERNIC_CQBA, ERNIC_CQBAMSB, qbase + CQ_OFF);
    wr64(r, i, qpn, ERNIC_RQBA, ERNIC_RQBAMSB, qbase + RQ_OFF);
    wr64(r, i, qpn, ERNIC_CQDBADD, ERNIC_CQDBADDMSB, qbase + CQDB_OFF);
    wr64(r, i, qpn, ERNIC_RQWPTRDBADD, ERNIC_RQWPTRDBADDMSB,
         qbase + RQDB_OFF);
    qwr(r, i, qpn, ERNIC_QDEPTH, (cfg->rq_depth << 16) | SQ_DEPTH);
    qwr(r, i, qpn, ERNIC_QPADVCONF, (PKEY << 16) | (TTL << 8));
    qwr(r, i, qpn, ERNIC_DESTQPCONF, dqpn);
    qwr(r, i, qpn, ERNIC_MACDESADDLSB, be32(p->mac + 2));
    qwr(r, i, qpn, ERNIC_MACDESADDMSB, lduw_be_p(p->mac));
    qwr(r, i, qpn, ERNIC_IPDESADDR1, p->ip);
    qwr(r, i, qpn, ERNIC_SQPSN, sqpsn);
    qwr(r, i, qpn, ERNIC_LSTRQREQ, ((rqpsn - 1) & 0xffffff) |
        (0x04u << 24));
    qwr(r, i, qpn, ERNIC_TIMEOUTCONF, cfg->timeout | (cfg->retry << 8) |
        (cfg->rnr_retry << 11) | (cfg->rnr_timer << 16));
    qwr(r, i, qpn, ERNIC_PD, PD_NUM);
    qwr(r, i, qpn, ERNIC_QPCONF, ERNIC_QPCONF_QP_EN | ERNIC_QPCONF_HW_HS_DIS |
        ERNIC_QPCONF_CQE_WR_EN | ERNIC_QPCONF_CQ_INT_EN |
        ERNIC_QPCONF_RQ_INT_EN | (cfg->pmtu << ERNIC_QPCONF_PMTU_SHIFT) |
        ((cfg->rqbuf / 256) << ERNIC_QPCONF_RQBUFSZ_SHIFT));
}

#define PSN_A   0x123456
#define PSN_B   0xfffff0        /* wraps through 0 */

static inline void connect_pair(Rig *r, const QpCfg *cfg)
{
    setup_global(r, 0, 0);
    setup_global(r, 1, 0);
    setup_qp(r, 0, QPN_A, 1, QPN_B, PSN_A, PSN_B, cfg, DEV_BASE(0));
    setup_qp(r, 1, QPN_B, 0, QPN_A, PSN_B, PSN_A, cfg, DEV_BASE(1));
}

/*
 * The wire
 */

static inline bool wire_read(int fd, uint8_t *f, size_t *len)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    uint32_t be;

    if (poll(&p, 1, 0) != 1) {
        return false;
    }
    g_assert_cmpint(recv(fd, &be, 4, MSG_WAITALL), ==, 4);
    *len = be32_to_cpu(be);
    g_assert_cmpuint(*len, <=, FRAME_MAX);
    g_assert_cmpint(recv(fd, f, *len, MSG_WAITALL), ==, *len);
    return true;
}

static inline void wire_write(int fd, const uint8_t *f, size_t len)
{
    uint32_t be = cpu_to_be32(len);

    g_assert_cmpint(send(fd, &be, 4, 0), ==, 4);
    g_assert_cmpint(send(fd, f, len, 0), ==, len);
}

/* The next frame device @i sends, stepping the clock until it comes. */
static inline size_t wire_wait(Rig *r, int i, uint8_t *f)
{
    size_t len = 0;
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    while (!wire_read(r->d[i].fd, f, &len)) {
        g_assert(g_get_monotonic_time() < deadline);
        qtest_clock_step(r->d[i].qts, 100);
    }
    return len;
}

/* Read device 1's frames until the READ response of @psn; none a NAK. */
static inline void read_until_response(Rig *r, uint32_t psn)
{
    uint8_t f[FRAME_MAX];
    size_t len;

    for (int k = 0; k < 2000000; k++) {
        if (!wire_read(r->d[1].fd, f, &len)) {
            qtest_clock_step(r->qts, 1000);
            continue;
        }
        g_assert_cmphex(f[F_BTH], !=, 0x11);        /* no ACK or NAK */
        if ((be32(f + F_BTH + 8) & 0xffffff) == psn) {
            return;
        }
    }
    g_assert_not_reached();
}

/* Add frame @f to @burst, as the socket netdev frames it. */
static inline void burst_add(GByteArray *burst, const uint8_t *f, size_t len)
{
    uint32_t be = cpu_to_be32(len);

    g_byte_array_append(burst, (uint8_t *)&be, 4);
    g_byte_array_append(burst, f, len);
}

/* Send @f to device 1 and return the next frame it answers with. */
static inline size_t exchange(Rig *r, const uint8_t *f, size_t len,
                              uint8_t *ans)
{
    wire_write(r->d[1].fd, f, len);
    return wire_wait(r, 1, ans);
}

/* Entry @n of device @i's incoming packet error status queue (p.17). */
static inline uint32_t fatal_entry(Rig *r, int i, int n)
{
    return qtest_readl(r->d[i].qts, DEV_BASE(i) + FATALQ_OFF + n * 8);
}


typedef struct Wire {
    Filter filter;
    void *opaque;
    uint8_t held[FRAME_MAX];    /* one frame held back for reordering */
    size_t held_len;
    int held_from;
    unsigned frames[NDEV];      /* frames seen from each device */
    int64_t step_ns;            /* virtual time per idle turn */
    size_t cut;                 /* TRUNC: the length it is cut to */
    size_t flip;                /* FLIP: the bit it flips */
} Wire;

/* Move frames between the devices until @cond holds (20 s at most). */
#define PUMP(r, w, cond)                                                    \
    do {                                                                    \
        gint64 deadline_ = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;   \
        while (!(cond)) {                                                   \
            g_assert(g_get_monotonic_time() < deadline_);                   \
            pump_once(r, w);                                                \
        }                                                                   \
    } while (0)

static inline void pump_once(Rig *r, Wire *w)
{
    static uint8_t f[FRAME_MAX];
    size_t len;
    bool moved = false;

    for (int i = 0; i < NDEV; i++) {
        while (wire_read(r->d[i].fd, f, &len)) {
            Verdict v;
            int to = r->d[1 - i].fd;

            if (len >= 14 && lduw_be_p(f + 12) == ETH_P_RARP) {
                /* QEMU announcing a migrated NIC; no test sends one. */
                continue;
            }
            v = w && w->filter ? w->filter(w->opaque, i, f, len) : FWD;
            moved = true;
            if (w) {
                w->frames[i]++;
            }
            if (v == TRUNC) {
                len = MIN(len, w->cut);
                v = FWD;
            } else if (v == FLIP) {
                f[(w->flip / 8) % len] ^= 1u << (w->flip % 8);
                v = FWD;
            }
            if (v == HOLD && w && !w->held_len) {
                memcpy(w->held, f, len);
                w->held_len = len;
                w->held_from = i;
                continue;
            }
            if (v != DROP) {
                wire_write(to, f, len);
            }
            if (v == DUP) {
                wire_write(to, f, len);
            }
            if (w && w->held_len && w->held_from == i) {
                /* The held frame goes after the one behind it. */
                wire_write(to, w->held, w->held_len);
                w->held_len = 0;
            }
        }
    }
    if (!moved) {
        if (w && w->held_len) {
            wire_write(r->d[1 - w->held_from].fd, w->held, w->held_len);
            w->held_len = 0;
        }
        for (int i = 0; i < (r->two_procs ? NDEV : 1); i++) {
            qtest_clock_step(r->d[i].qts,
                             w && w->step_ns ? w->step_ns : 10000);
        }
    }
}

/*
 * Work requests
 */

static inline void post(Rig *r, int i, uint32_t qpn, uint64_t sq, uint16_t wrid,
                        uint8_t opcode, uint64_t laddr, uint32_t len,
                        uint64_t raddr, uint32_t rkey, uint32_t imm,
                        const uint8_t *sdata)
{
    uint8_t wqe[ERNIC_WQE_SIZE];
    Dev *d = &r->d[i];

    qernic_wqe(wqe, opcode, wrid, laddr, len, raddr, rkey, imm);
    if (sdata) {
        memcpy(&wqe[ERNIC_WQE_SDATA], sdata, MIN(len, 16));
    }
    qtest_memwrite(QTS(r, sq), sq + (d->sqpi % SQ_DEPTH) * ERNIC_WQE_SIZE, wqe,
                   sizeof(wqe));
    d->sqpi++;
    qwr(r, i, qpn, ERNIC_SQPI, d->sqpi % SQ_DEPTH);
}

/* Completion of everything posted: CQHEAD == SQPI (see ernic_comp.c). */
static inline bool all_done(Rig *r, int i, uint32_t qpn)
{
    return qrd(r, i, qpn, ERNIC_CQHEAD) == r->d[i].sqpi % SQ_DEPTH;
}

static inline uint32_t cqe(Rig *r, int i, uint32_t n)
{
    return qtest_readl(r->d[i].qts, DEV_BASE(i) + CQ_OFF +
                       (n % SQ_DEPTH) * 4);
}

static inline void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t k = 0; k < n; k++) {
        p[k] = (seed * 2654435761u + k * 7 + (k >> 8)) & 0xff;
    }
}

/* Write @n pattern bytes to guest memory; returns them. */
static inline uint8_t *put_pattern(Rig *r, uint64_t addr, size_t n,
                                   uint32_t seed)
{
    uint8_t *p = g_malloc(n + 1);

    fill(p, n, seed);
    qtest_memwrite(QTS(r, addr), addr, p, n);
    return p;
}

static inline void assert_mem(Rig *r, uint64_t addr, const uint8_t *want,
                              size_t n)
{
    uint8_t *got = g_malloc(n + 1);

    qtest_memread(QTS(r, addr), addr, got, n);
    for (size_t k = 0; k < n; k++) {
        if (got[k] != want[k]) {
            g_error("byte %zu of %zu at 0x%" PRIx64 ": 0x%02x, want 0x%02x",
                    k, n, addr, got[k], want[k]);
        }
    }
    g_free(got);
}

/* CPU time (user + system) the QEMU process has used, in clock ticks. */
static inline uint64_t qemu_cpu_ticks(QTestState *qts)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/stat", qtest_pid(qts));
    g_autofree char *stat = NULL;
    unsigned long utime = 0, stime = 0;
    const char *p;

    g_assert_true(g_file_get_contents(path, &stat, NULL, NULL));
    /* Fields 14 and 15, counted after the ")" that ends field 2. */
    p = strrchr(stat, ')');
    g_assert_nonnull(p);
    g_assert_cmpint(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
                           "%*u %lu %lu", &utime, &stime), ==, 2);
    return utime + stime;
}

/*
 * The main loop is idle: over one of three windows of @ms of wall time
 * with nothing to do, QEMU used less than a fifth of a CPU. A bottom half
 * that reschedules itself for ever (a spin) uses all of one in every
 * window; work left over from before (page faults, the RCU thread) or a
 * host so loaded that one window's accounting is off does not last three.
 */
static inline void assert_idle(QTestState *qts, unsigned ms)
{
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t used = UINT64_MAX;

    for (int w = 0; w < 3 && used >= ms / 5; w++) {
        uint64_t t0 = qemu_cpu_ticks(qts);

        g_usleep(ms * 1000);
        used = (qemu_cpu_ticks(qts) - t0) * 1000 / hz;
    }
    g_assert_cmpuint(used, <, ms / 5);
}

/*
 * Helpers of the tests that play a peer (ernic-fatal-test.c,
 * ernic-hardening-test.c)
 */

#define ERRFLAG         (1u << ERNIC_CQE_ERRFLAG_SHIFT)
#define CQE(op, wrid)   (((uint32_t)(op) << ERNIC_CQE_OPCODE_SHIFT) | (wrid))
#define POLL_MAX        100000

/* Poll a register as a driver does, stepping virtual time meanwhile. */
static inline void poll_reg(Rig *r, int i, uint32_t off, uint32_t mask,
                            uint32_t want)
{
    for (int k = 0; k < POLL_MAX; k++) {
        if ((rd(r, i, off) & mask) == want) {
            return;
        }
        qtest_clock_step(r->d[i].qts, 1000);
    }
    g_error("register 0x%x & 0x%x stayed 0x%x, want 0x%x", off, mask,
            rd(r, i, off) & mask, want);
}

#define QOFF(qpn, reg)  (ERNIC_QP_OFFSET(qpn) + (reg))

/* STATQPi[22:16]: the syndrome of the last NAK the QP received (p.40). */
static inline uint32_t nak_syndrome(Rig *r, int i, uint32_t qpn)
{
    return (qrd(r, i, qpn, ERNIC_STATQP) & ERNIC_STATQP_NAK_SYND_MASK) >>
           ERNIC_STATQP_NAK_SYND_SHIFT;
}

static inline void poll_cqhead_eq_sqpi(Rig *r, int i, uint32_t qpn)
{
    poll_reg(r, i, QOFF(qpn, ERNIC_CQHEAD), 0xffff,
             qrd(r, i, qpn, ERNIC_SQPI));
}

static inline uint32_t errbuf_word(Rig *r, int i, uint32_t n, uint32_t off)
{
    return qtest_readl(r->d[i].qts, DEV_BASE(i) + ERRBUF_OFF +
                       (n % 16) * 256 + off);
}

/*
 * What every FATAL must leave behind (PG332 p.17, Table 2-4, pp.14, 45):
 * one status queue entry {QP, code}, INTSTS[7], STATQPi[0], and each
 * outstanding WQE completed with ERRFLAG; a WQE posted afterwards
 * completes with ERRFLAG too, and nothing more leaves the QP.
 */
static inline void check_fatal(Rig *r, int i, uint32_t qpn, uint16_t code,
                        uint32_t first_cqe)
{
    uint8_t f[FRAME_MAX];
    size_t len;
    uint32_t n = r->d[i].sqpi;

    g_assert_cmphex(rd(r, i, ERNIC_IPKTERRQBA), ==, DEV_BASE(i) + FATALQ_OFF);
    g_assert_cmphex(fatal_entry(r, i, 0), ==, (qpn << 16) | code);
    g_assert_cmphex(fatal_entry(r, i, 1), ==, 0);
    g_assert_cmphex(rd(r, i, ERNIC_IPKTERRQWPTR), ==, 1);
    g_assert_cmphex(rd(r, i, ERNIC_INTSTS) & ERNIC_INT_FATAL, ==,
                    ERNIC_INT_FATAL);
    g_assert_cmphex(qrd(r, i, qpn, ERNIC_STATQP) & ERNIC_STATQP_FATAL, ==,
                    ERNIC_STATQP_FATAL);
    poll_cqhead_eq_sqpi(r, i, qpn);
    g_assert_cmphex(cqe(r, i, 0), ==, first_cqe);

    post(r, i, qpn, DEV_BASE(i) + SQ_OFF, 0x77, ERNIC_OP_WRITE,
         DEV_BASE(i) + SRC_OFF, 64, MR_VA, RKEY, 0, NULL);
    poll_cqhead_eq_sqpi(r, i, qpn);
    g_assert_cmphex(cqe(r, i, n), ==, ERRFLAG | CQE(ERNIC_OP_WRITE, 0x77));
    qtest_clock_step(r->d[i].qts, 1000000);
    g_assert_false(wire_read(r->d[i].fd, f, &len));
    g_assert_cmphex(qrd(r, i, qpn, ERNIC_STATQP) &
                    (ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY), ==,
                    ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
    /* Only one entry per FATAL. */
    g_assert_cmphex(rd(r, i, ERNIC_IPKTERRQWPTR), ==, 1);
}

/*
 * The error buffer holds exactly @n entries, the last with @synd (0 for a
 * FATAL whose cause is not a Table 2-3 check) and @frame.
 */
static inline void check_errbuf(Rig *r, int i, uint32_t n, uint32_t synd,
                         const uint8_t *frame)
{
    g_assert_cmphex(rd(r, i, ERNIC_ERRBUFWPTR), ==, n);
    if (n) {
        g_assert_cmphex(errbuf_word(r, i, n - 1, 0), ==, synd);
        g_assert_cmphex(errbuf_word(r, i, n - 1, 4), ==, le32(frame));
        g_assert_cmphex(errbuf_word(r, i, n - 1, 4 + F_BTH), ==,
                        le32(frame + F_BTH));
    }
    if (n && synd) {
        g_assert_cmphex(rd(r, i, ERNIC_INTSTS) &
                        ERNIC_INT_PKT_VALIDATION_ERR, ==,
                        ERNIC_INT_PKT_VALIDATION_ERR);
    }
}

/* A request from "device 0" to QP @dqpn of device 1, built by the test. */
static inline size_t inject(Rig *r, uint8_t *f, uint8_t opcode,
                            uint32_t dqpn, uint32_t psn, const uint8_t *ext,
                            size_t ext_len, size_t paylen)
{
    uint8_t pay[4096];

    fill(pay, paylen, psn);
    return build_frame(f, &r->d[0], &r->d[1], opcode, dqpn, psn, true, ext,
                       ext_len, pay, paylen);
}

/* A response from "device 1" to QP A of device 0, built by the test. */
static inline size_t respond(Rig *r, uint8_t *f, uint8_t opcode,
                             uint32_t psn, const uint8_t *ext,
                             size_t ext_len, size_t paylen)
{
    uint8_t pay[4096];

    fill(pay, paylen, psn);
    return build_frame(f, &r->d[1], &r->d[0], opcode, QPN_A, psn, false, ext,
                       ext_len, pay, paylen);
}

static inline uint8_t *reth(uint8_t *p, uint64_t va, uint32_t rkey,
                            uint32_t len)
{
    stq_be_p(p, va);
    stl_be_p(p + 8, rkey);
    stl_be_p(p + 12, len);
    return p;
}

/*
 * FATAL and its recovery, shared by the FATAL and migration tests
 */

/*
 * A remote access error between two real devices: device 0 WRITEs with a
 * key device 1 does not know. Device 1 NAKs (0x62) and goes FATAL with
 * 0x15; device 0 receives the NAK and goes FATAL with 0x0A.
 */
static inline void cause_remote_access(Rig *r, uint16_t wrid)
{
    post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid, ERNIC_OP_WRITE,
         DEV_BASE(0) + SRC_OFF, 3000, MR_VA, RKEY ^ 0x80, 0, NULL);
    PUMP(r, NULL, (qrd(r, 0, QPN_A, ERNIC_STATQP) & ERNIC_STATQP_FATAL) &&
         (qrd(r, 1, QPN_B, ERNIC_STATQP) & ERNIC_STATQP_FATAL));
}

typedef struct Reinit {
    uint32_t sqpsn;             /* the QP's new first PSN */
    uint32_t rqpsn;             /* the peer's new first PSN */
    uint8_t ttl;                /* QPADVCONFi, re-programmed (step 12) */
} Reinit;

/*
 * "QP Fatal Recovery" (PG332 pp.62-63), every step in order, with its
 * polls, for QP @qpn of device @i whose FATAL entry is @entry of the
 * status queue. @peer is the device of the QP it is connected to.
 * Clearing traffic first: the QP ends disabled and under recovery.
 */
static inline void fatal_clear(Rig *r, int i, uint32_t qpn, uint32_t entry,
                               uint16_t code)
{
    uint32_t qpconf = qrd(r, i, qpn, ERNIC_QPCONF);
    uint32_t base, e;

    /* Clearing traffic. 1: the status queue's base address. */
    base = rd(r, i, ERNIC_IPKTERRQBA);
    g_assert_cmphex(base, ==, DEV_BASE(i) + FATALQ_OFF);
    /* 2: which QP, which code. */
    e = qtest_readl(r->d[i].qts, base + 8 * entry);
    g_assert_cmphex(e >> 16, ==, qpn);
    g_assert_cmphex(e & 0xffff, ==, code);
    /* 3: no further SQPI doorbells (the test posts none). */
    /* 4: "QP under recovery". */
    qwr(r, i, qpn, ERNIC_QPCONF, qpconf | ERNIC_QPCONF_UNDER_RECOVERY);
    /* 5: SQ and outstanding queue empty. */
    poll_reg(r, i, QOFF(qpn, ERNIC_STATQP),
             ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY,
             ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
    /* 6: CQHEADi == SQPIi. */
    poll_cqhead_eq_sqpi(r, i, qpn);
    /* 7: RESPHNDSTS "sq pici db check en". */
    poll_reg(r, i, ERNIC_RESPHNDSTS, ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN,
             ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);
    /* 8: disabled, under recovery. */
    qpconf = (qpconf & ~ERNIC_QPCONF_QP_EN) | ERNIC_QPCONF_UNDER_RECOVERY;
    qwr(r, i, qpn, ERNIC_QPCONF, qpconf);
}

/* Then re-initialisation: the QP ends enabled with @ri's PSNs and TTL. */
static inline void fatal_reinit(Rig *r, int i, uint32_t qpn, int peer,
                                const Reinit *ri)
{
    Dev *p = &r->d[peer];
    uint32_t qpconf = qrd(r, i, qpn, ERNIC_QPCONF);

    /* Re-initialisation. 1, 2: the same polls again. */
    poll_cqhead_eq_sqpi(r, i, qpn);
    poll_reg(r, i, ERNIC_RESPHNDSTS, ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN,
             ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);
    /* 3: software override. */
    wr(r, i, ERNIC_XRNICADCONF, rd(r, i, ERNIC_XRNICADCONF) |
       ERNIC_XRNICADCONF_SWO);
    /* 4: zero the QP's pointers and sequence numbers. */
    static const uint32_t zeroed[] = {
        ERNIC_STATRQPIDB, ERNIC_STATRQBUFCA, ERNIC_STATRQBUFCAMSB, ERNIC_RQCI,
        ERNIC_STATCURSQPTR, ERNIC_SQPI, ERNIC_SQPSN, ERNIC_LSTRQREQ,
        ERNIC_STATMSN, ERNIC_CQHEAD,
    };
    for (size_t k = 0; k < ARRAY_SIZE(zeroed); k++) {
        qwr(r, i, qpn, zeroed[k], 0);
        g_assert_cmphex(qrd(r, i, qpn, zeroed[k]), ==, 0);
    }
    r->d[i].sqpi = 0;
    /* 5: CQHEADi reads 0. */
    poll_reg(r, i, QOFF(qpn, ERNIC_CQHEAD), 0xffff, 0);
    /* 6: the new PSNs. */
    qwr(r, i, qpn, ERNIC_SQPSN, ri->sqpsn);
    qwr(r, i, qpn, ERNIC_LSTRQREQ, ((ri->rqpsn - 1) & 0xffffff) |
        (0x04u << 24));
    /* 7: the remote's Ethernet and IP addresses. */
    qwr(r, i, qpn, ERNIC_MACDESADDMSB, lduw_be_p(p->mac));
    qwr(r, i, qpn, ERNIC_MACDESADDLSB, be32(p->mac + 2));
    qwr(r, i, qpn, ERNIC_IPDESADDR1, p->ip);
    qwr(r, i, qpn, ERNIC_IPDESADDR2, 0);
    qwr(r, i, qpn, ERNIC_IPDESADDR3, 0);
    qwr(r, i, qpn, ERNIC_IPDESADDR4, 0);
    /* 8: IP version (IPv4). */
    qpconf &= ~ERNIC_QPCONF_IPV6;
    qwr(r, i, qpn, ERNIC_QPCONF, qpconf);
    /* 9: RNR NAK count and retry count in STATQPi. */
    qwr(r, i, qpn, ERNIC_STATQP, (7u << 24) | (7u << 28));
    g_assert_cmphex(qrd(r, i, qpn, ERNIC_STATQP) &
                    (ERNIC_STATQP_RETRY_CNT_MASK | ERNIC_STATQP_RNR_CNT_MASK),
                    ==, (7u << 24) | (7u << 28));
    /* 10: the QP's region is read/write ('b10). */
    wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_ACCESSDESC,
       ERNIC_ACCESS_READ_WRITE);
    /* 11: interrupt enables, PMTU, HW handshake disable, CQE writes. */
    qpconf = ERNIC_QPCONF_UNDER_RECOVERY | ERNIC_QPCONF_HW_HS_DIS |
             ERNIC_QPCONF_CQE_WR_EN | ERNIC_QPCONF_CQ_INT_EN |
             ERNIC_QPCONF_RQ_INT_EN |
             (ERNIC_PMTU_1024 << ERNIC_QPCONF_PMTU_SHIFT) |
             ((default_cfg.rqbuf / 256) << ERNIC_QPCONF_RQBUFSZ_SHIFT);
    qwr(r, i, qpn, ERNIC_QPCONF, qpconf);
    /* 12: traffic class, TTL, P_Key. */
    qwr(r, i, qpn, ERNIC_QPADVCONF, (PKEY << 16) | (ri->ttl << 8));
    /* 13: enabled, recovery over. */
    qwr(r, i, qpn, ERNIC_QPCONF, (qpconf & ~ERNIC_QPCONF_UNDER_RECOVERY) |
        ERNIC_QPCONF_QP_EN);
    /* 14: software override off. */
    wr(r, i, ERNIC_XRNICADCONF, rd(r, i, ERNIC_XRNICADCONF) &
       ~ERNIC_XRNICADCONF_SWO);

    g_assert_cmphex(qrd(r, i, qpn, ERNIC_STATQP) &
                    (ERNIC_STATQP_FATAL | ERNIC_STATQP_NAK_SYND_MASK), ==, 0);
}

static inline void fatal_recovery(Rig *r, int i, uint32_t qpn, int peer,
                                  uint32_t entry, uint16_t code,
                                  const Reinit *ri)
{
    fatal_clear(r, i, qpn, entry, code);
    fatal_reinit(r, i, qpn, peer, ri);
}

/* Capture the first frame each device sends. */
typedef struct First {
    uint8_t f[NDEV][FRAME_MAX];
    bool seen[NDEV];
} First;

static inline Verdict first_filter(void *opaque, int from, const uint8_t *f,
                            size_t len)
{
    First *c = opaque;

    if (!c->seen[from]) {
        memcpy(c->f[from], f, len);
        c->seen[from] = true;
    }
    return FWD;
}

/*
 * Traffic on a connected pair, verified byte for byte: from each side a
 * SEND, a WRITE and a READ of several packets.
 */
static inline void traffic(Rig *r, First *first, uint32_t seed)
{
    Wire w = { .filter = first_filter, .opaque = first };
    uint32_t qpn[NDEV] = { QPN_A, QPN_B };
    uint8_t *p[NDEV][3];

    for (int i = 0; i < NDEV; i++) {
        uint64_t b = DEV_BASE(i);
        uint64_t rva = MR_VA + 0x10000 * (i + 1);

        p[i][0] = put_pattern(r, b + SRC_OFF, 2500, seed + i);
        p[i][1] = put_pattern(r, b + SRC_OFF + 0x4000, 5000, seed + i + 2);
        p[i][2] = put_pattern(r, DEV_BASE(1 - i) + MR_OFF + 0x80000 +
                              0x10000 * i, 3000, seed + i + 4);
        post(r, i, qpn[i], b + SQ_OFF, 1, ERNIC_OP_SEND, b + SRC_OFF, 2500,
             0, 0, 0, NULL);
        post(r, i, qpn[i], b + SQ_OFF, 2, ERNIC_OP_WRITE, b + SRC_OFF + 0x4000,
             5000, rva, RKEY, 0, NULL);
        post(r, i, qpn[i], b + SQ_OFF, 3, ERNIC_OP_READ, b + SRC_OFF + 0x10000,
             3000, MR_VA + 0x80000 + 0x10000 * i, RKEY, 0, NULL);
    }
    PUMP(r, &w, all_done(r, 0, QPN_A) && all_done(r, 1, QPN_B));
    for (int i = 0; i < NDEV; i++) {
        uint32_t n = r->d[i].sqpi;

        for (int k = 0; k < 3; k++) {
            g_assert_cmphex(cqe(r, i, n - 3 + k), ==,
                            CQE(k == 0 ? ERNIC_OP_SEND : k == 1 ?
                                ERNIC_OP_WRITE : ERNIC_OP_READ, k + 1));
        }
        assert_mem(r, DEV_BASE(1 - i) + RQ_OFF +
                   (qrd(r, 1 - i, qpn[1 - i], ERNIC_STATRQPIDB) + RQ_DEPTH - 1)
                   % RQ_DEPTH * default_cfg.rqbuf, p[i][0], 2500);
        assert_mem(r, DEV_BASE(1 - i) + MR_OFF + 0x10000 * (i + 1), p[i][1],
                   5000);
        assert_mem(r, DEV_BASE(i) + SRC_OFF + 0x10000, p[i][2], 3000);
        for (int k = 0; k < 3; k++) {
            g_free(p[i][k]);
        }
    }
}

#endif /* ERNIC_RIG_H */
