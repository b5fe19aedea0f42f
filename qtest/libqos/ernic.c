/*
 * libqos driver for ernic (docs/qos.md).
 *
 * The register sequences follow PG332 v3.1 ch.6 ("Global configuration",
 * "QP configuration", "Posting work requests"), as ernic's own qtests do;
 * RoCEv2 frames are built and checked from the specifications, not from
 * the device's code.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <poll.h>
#include <sys/socket.h>
#include "../libqtest.h"
#include "qemu/bswap.h"
#include "qemu/module.h"
#include "ernic.h"

#define QERNIC_POLL_MAX         200000  /* clock steps of 1 us */
#define QERNIC_PKEY             0xffff
#define QERNIC_TTL              64
#define QERNIC_UDP_SPORT        0xc000

uint32_t qernic_rd(QErnic *e, uint32_t off)
{
    return qpci_io_readl(e->pdev, e->regs, e->reg + off);
}

void qernic_wr(QErnic *e, uint32_t off, uint32_t val)
{
    qpci_io_writel(e->pdev, e->regs, e->reg + off, val);
}

uint32_t qernic_qp_rd(QErnic *e, uint32_t qpn, uint32_t off)
{
    return qernic_rd(e, ERNIC_QP_OFFSET(qpn) + off);
}

void qernic_qp_wr(QErnic *e, uint32_t qpn, uint32_t off, uint32_t val)
{
    qernic_wr(e, ERNIC_QP_OFFSET(qpn) + off, val);
}

uint32_t qernic_eth_rd(QErnic *e, uint32_t off)
{
    return qpci_io_readl(e->pdev, e->eth, off);
}

void qernic_eth_wr(QErnic *e, uint32_t off, uint32_t val)
{
    qpci_io_writel(e->pdev, e->eth, off, val);
}

static void qernic_qp_wr64(QErnic *e, uint32_t qpn, uint32_t lo, uint32_t hi,
                           uint64_t val)
{
    qernic_qp_wr(e, qpn, lo, val);
    qernic_qp_wr(e, qpn, hi, val >> 32);
}

static uint64_t qernic_zalloc(QErnic *e, size_t size)
{
    uint64_t a = guest_alloc(e->alloc, size);

    g_assert(a);
    qtest_memset(e->qts, a, 0, size);
    return a;
}

void qernic_init(QErnic *e, const uint8_t *mac, uint32_t ip)
{
    QErnicGlobalCfg cfg = {
        .errbuf = qernic_zalloc(e, 16 * 256),
        .fatalq = qernic_zalloc(e, 64 * ERNIC_IPKTERRQ_ENTRY_SIZE),
        .udp_sport = QERNIC_UDP_SPORT,
    };

    qernic_setup(e, mac, ip, &cfg);
}

void qernic_setup(QErnic *e, const uint8_t *mac, uint32_t ip,
                  const QErnicGlobalCfg *cfg)
{
    memmove(e->mac, mac, 6);    /* @mac may be e->mac */
    e->ip = ip;
    e->errbuf = cfg->errbuf;
    e->fatalq = cfg->fatalq;
    qernic_wr(e, ERNIC_MACXADDLSB, ldl_be_p(mac + 2));
    qernic_wr(e, ERNIC_MACXADDMSB, lduw_be_p(mac));
    qernic_wr(e, ERNIC_IPv4XADD, ip);
    qernic_wr(e, ERNIC_ERRBUFBA, e->errbuf);
    qernic_wr(e, ERNIC_ERRBUFBAMSB, e->errbuf >> 32);
    qernic_wr(e, ERNIC_ERRBUFSZ, (256 << 16) | 16);
    qernic_wr(e, ERNIC_IPKTERRQBA, e->fatalq);
    qernic_wr(e, ERNIC_IPKTERRQBAMSB, e->fatalq >> 32);
    qernic_wr(e, ERNIC_IPKTERRQSZ, 64);
    qernic_wr(e, ERNIC_INTEN, 0x1ff);
    qernic_wr(e, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN |
              ERNIC_XRNICCONF_ERRBUF_EN |
              (cfg->ackgen << ERNIC_XRNICCONF_ACKGEN_SHIFT) | (31 << 8) |
              (cfg->udp_sport << ERNIC_XRNICCONF_UDPSRC_SHIFT));
}

uint32_t qernic_mr(QErnic *e, uint32_t idx, uint32_t pd, uint64_t va,
                   uint64_t pa, uint32_t len, uint8_t key)
{
    uint32_t base = ERNIC_PDT_OFFSET(idx);

    qernic_wr(e, base + ERNIC_PDPDNUM, pd);
    qernic_wr(e, base + ERNIC_VIRTADDRLSB, va);
    qernic_wr(e, base + ERNIC_VIRTADDRMSB, va >> 32);
    qernic_wr(e, base + ERNIC_BUFBASEADDRLSB, pa);
    qernic_wr(e, base + ERNIC_BUFBASEADDRMSB, pa >> 32);
    qernic_wr(e, base + ERNIC_BUFRKEY, key);
    qernic_wr(e, base + ERNIC_WRRDBUFLEN, len);
    qernic_wr(e, base + ERNIC_ACCESSDESC, ERNIC_ACCESS_READ_WRITE);
    return idx << 8 | key;
}

QErnicPeer qernic_self(QErnic *e, uint32_t qpn, uint32_t sq_psn,
                       uint32_t rq_psn)
{
    QErnicPeer p = { .qpn = qpn, .ip = e->ip, .sq_psn = sq_psn,
                     .rq_psn = rq_psn };

    memcpy(p.mac, e->mac, 6);
    return p;
}

void qernic_qp_connect(QErnic *e, uint32_t qpn, uint32_t pd,
                       const QErnicPeer *peer)
{
    QErnicQp *q = &e->qp[qpn];
    QErnicQpCfg cfg = {
        .sq_depth = QERNIC_SQ_DEPTH, .rq_depth = QERNIC_RQ_DEPTH,
        .rqbuf = QERNIC_RQ_BUF, .pmtu = ERNIC_PMTU_1024,
        .timeout = 14, .retry = 7, .rnr_retry = 7, .rnr_timer = 1,
        .qpconf = ERNIC_QPCONF_HW_HS_DIS | ERNIC_QPCONF_CQE_WR_EN,
    };

    g_assert(qpn >= 2 && qpn < QERNIC_QPS);
    memset(q, 0, sizeof(*q));
    q->sq = qernic_zalloc(e, QERNIC_SQ_DEPTH * ERNIC_WQE_SIZE);
    q->cq = qernic_zalloc(e, QERNIC_SQ_DEPTH * ERNIC_CQE_SIZE);
    q->rq = qernic_zalloc(e, QERNIC_RQ_DEPTH * QERNIC_RQ_BUF);
    q->db = qernic_zalloc(e, 64);
    cfg.sq = q->sq;
    cfg.cq = q->cq;
    cfg.rq = q->rq;
    cfg.cqdb = q->db;
    cfg.rqdb = q->db + 16;
    qernic_qp_setup(e, qpn, pd, peer, &cfg);
}

void qernic_qp_setup(QErnic *e, uint32_t qpn, uint32_t pd,
                     const QErnicPeer *peer, const QErnicQpCfg *cfg)
{
    qernic_qp_wr64(e, qpn, ERNIC_SQBA, ERNIC_SQBAMSB, cfg->sq);
    qernic_qp_wr64(e, qpn, ERNIC_CQBA, ERNIC_CQBAMSB, cfg->cq);
    qernic_qp_wr64(e, qpn, ERNIC_RQBA, ERNIC_RQBAMSB, cfg->rq);
    qernic_qp_wr64(e, qpn, ERNIC_CQDBADD, ERNIC_CQDBADDMSB, cfg->cqdb);
    qernic_qp_wr64(e, qpn, ERNIC_RQWPTRDBADD, ERNIC_RQWPTRDBADDMSB,
                   cfg->rqdb);
    qernic_qp_wr(e, qpn, ERNIC_QDEPTH, cfg->rq_depth << 16 | cfg->sq_depth);
    qernic_qp_wr(e, qpn, ERNIC_QPADVCONF, QERNIC_PKEY << 16 |
                 QERNIC_TTL << 8);
    qernic_qp_wr(e, qpn, ERNIC_DESTQPCONF, peer->qpn);
    qernic_qp_wr(e, qpn, ERNIC_MACDESADDLSB, ldl_be_p(peer->mac + 2));
    qernic_qp_wr(e, qpn, ERNIC_MACDESADDMSB, lduw_be_p(peer->mac));
    qernic_qp_wr(e, qpn, ERNIC_IPDESADDR1, peer->ip);
    qernic_qp_wr(e, qpn, ERNIC_SQPSN, peer->sq_psn);
    /* The last request "received": the one before the first expected. */
    qernic_qp_wr(e, qpn, ERNIC_LSTRQREQ, ((peer->rq_psn - 1) & 0xffffff) |
                 0x04u << 24);
    qernic_qp_wr(e, qpn, ERNIC_TIMEOUTCONF, cfg->timeout | cfg->retry << 8 |
                 cfg->rnr_retry << 11 | cfg->rnr_timer << 16);
    qernic_qp_wr(e, qpn, ERNIC_PD, pd);
    qernic_qp_wr(e, qpn, ERNIC_QPCONF, ERNIC_QPCONF_QP_EN | cfg->qpconf |
                 cfg->pmtu << ERNIC_QPCONF_PMTU_SHIFT |
                 (cfg->rqbuf / 256) << ERNIC_QPCONF_RQBUFSZ_SHIFT);
}

void qernic_wqe(uint8_t *wqe, uint8_t opcode, uint16_t wrid, uint64_t laddr,
                uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm)
{
    memset(wqe, 0, ERNIC_WQE_SIZE);
    stw_le_p(&wqe[ERNIC_WQE_WRID], wrid);
    stq_le_p(&wqe[ERNIC_WQE_LADDR], laddr);
    stl_le_p(&wqe[ERNIC_WQE_LENGTH], len);
    wqe[ERNIC_WQE_OPCODE] = opcode;
    stq_le_p(&wqe[ERNIC_WQE_ROFFSET], raddr);
    stl_le_p(&wqe[ERNIC_WQE_RTAG], rkey);
    stl_le_p(&wqe[ERNIC_WQE_IMMDT], imm);
}

void qernic_post(QErnic *e, uint32_t qpn, uint8_t opcode, uint16_t wrid,
                 uint64_t laddr, uint32_t len, uint64_t raddr, uint32_t rkey)
{
    QErnicQp *q = &e->qp[qpn];
    uint8_t wqe[ERNIC_WQE_SIZE];

    qernic_wqe(wqe, opcode, wrid, laddr, len, raddr, rkey, 0);
    qtest_memwrite(e->qts, q->sq + (q->sqpi % QERNIC_SQ_DEPTH) *
                   ERNIC_WQE_SIZE, wqe, sizeof(wqe));
    q->sqpi++;
    qernic_qp_wr(e, qpn, ERNIC_SQPI, q->sqpi % QERNIC_SQ_DEPTH);
}

uint32_t qernic_wait_cqe(QErnic *e, uint32_t qpn)
{
    QErnicQp *q = &e->qp[qpn];
    uint32_t slot = q->cq_seen % QERNIC_SQ_DEPTH;
    int k;

    /* CQHEADi has moved past the slot (p.23). */
    for (k = 0; qernic_qp_rd(e, qpn, ERNIC_CQHEAD) % QERNIC_SQ_DEPTH == slot;
         k++) {
        g_assert(k < QERNIC_POLL_MAX);
        qtest_clock_step(e->qts, 1000);
    }
    q->cq_seen++;
    return qtest_readl(e->qts, q->cq + slot * ERNIC_CQE_SIZE);
}

uint64_t qernic_wait_recv(QErnic *e, uint32_t qpn)
{
    QErnicQp *q = &e->qp[qpn];
    uint32_t slot = q->rq_seen % QERNIC_RQ_DEPTH;
    int k;

    /* STATRQPIDBi has moved past the slot (p.60). */
    for (k = 0; qernic_qp_rd(e, qpn, ERNIC_STATRQPIDB) % QERNIC_RQ_DEPTH ==
                slot; k++) {
        g_assert(k < QERNIC_POLL_MAX);
        qtest_clock_step(e->qts, 1000);
    }
    q->rq_seen++;
    qernic_qp_wr(e, qpn, ERNIC_RQCI, q->rq_seen % QERNIC_RQ_DEPTH);
    return q->rq + (uint64_t)slot * QERNIC_RQ_BUF;
}

void qernic_wire_send(int fd, const uint8_t *f, size_t len)
{
    uint32_t be = cpu_to_be32(len);

    g_assert_cmpint(send(fd, &be, 4, 0), ==, 4);
    g_assert_cmpint(send(fd, f, len, 0), ==, len);
}

size_t qernic_wire_recv(QErnic *e, int fd, uint8_t *f)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    uint32_t be;
    size_t len;
    int k;

    for (k = 0; poll(&p, 1, 0) != 1; k++) {
        g_assert(k < QERNIC_POLL_MAX);
        qtest_clock_step(e->qts, 1000);
    }
    g_assert_cmpint(recv(fd, &be, 4, MSG_WAITALL), ==, 4);
    len = be32_to_cpu(be);
    g_assert_cmpuint(len, <=, QERNIC_FRAME_MAX);
    g_assert_cmpint(recv(fd, f, len, MSG_WAITALL), ==, len);
    return len;
}

static uint32_t qernic_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
        }
    }
    return ~crc;
}

uint32_t qernic_icrc(const uint8_t *f, size_t len)
{
    bool v6 = lduw_be_p(f + 12) == 0x86dd;
    size_t iphl = v6 ? 40 : 20, hl = iphl + 8 + 12;
    uint8_t m[60 + 8];
    uint32_t crc;

    /* The LRH stand-in, then the headers with variant fields as ones. */
    memset(m, 0xff, 8);
    memcpy(m + 8, f + 14, hl);
    if (v6) {
        m[8] |= 0x0f;
        m[9] = m[10] = m[11] = 0xff;
        m[8 + 7] = 0xff;
    } else {
        m[8 + 1] = 0xff;
        m[8 + 8] = 0xff;
        m[8 + 10] = m[8 + 11] = 0xff;
    }
    m[8 + iphl + 6] = m[8 + iphl + 7] = 0xff;
    m[8 + iphl + 8 + 4] = 0xff;
    crc = qernic_crc32(0, m, 8 + hl);
    return qernic_crc32(crc, f + 14 + hl, len - 14 - hl - 4);
}

uint16_t qernic_ip_csum(const uint8_t *p, size_t n)
{
    uint32_t s = 0;

    for (size_t i = 0; i < n; i += 2) {
        s += lduw_be_p(p + i);
    }
    while (s >> 16) {
        s = (s & 0xffff) + (s >> 16);
    }
    return ~s;
}

size_t qernic_frame(uint8_t *f, const uint8_t *smac, uint32_t sip,
                    const uint8_t *dmac, uint32_t dip, uint8_t opcode,
                    uint32_t dqpn, uint32_t psn, bool ackreq,
                    const uint8_t *ext, size_t ext_len, const uint8_t *pay,
                    size_t paylen)
{
    size_t pad = -paylen & 3;
    size_t l4 = 8 + 12 + ext_len + paylen + pad + 4;
    size_t len = 34 + l4;
    uint8_t *ip = f + 14, *udp = f + 34, *bth = f + 42;

    memset(f, 0, len);
    memcpy(f, dmac, 6);
    memcpy(f + 6, smac, 6);
    stw_be_p(f + 12, 0x0800);
    ip[0] = 0x45;
    stw_be_p(ip + 2, 20 + l4);
    stw_be_p(ip + 6, 0x4000);
    ip[8] = QERNIC_TTL;
    ip[9] = 17;
    stl_be_p(ip + 12, sip);
    stl_be_p(ip + 16, dip);
    stw_be_p(ip + 10, qernic_ip_csum(ip, 20));
    stw_be_p(udp, QERNIC_UDP_SPORT);
    stw_be_p(udp + 2, 4791);
    stw_be_p(udp + 4, l4);
    bth[0] = opcode;
    bth[1] = pad << 4;
    stw_be_p(bth + 2, QERNIC_PKEY);
    stl_be_p(bth + 4, dqpn);
    stl_be_p(bth + 8, psn | (ackreq ? 0x80000000u : 0));
    if (ext_len) {
        memcpy(bth + 12, ext, ext_len);
    }
    if (paylen) {
        memcpy(bth + 12 + ext_len, pay, paylen);
    }
    stl_le_p(f + len - 4, qernic_icrc(f, len));
    return len;
}

/*
 * The qos graph node
 */

static void *qernic_get_driver(void *obj, const char *interface)
{
    QErnicPCI *d = obj;

    if (!g_strcmp0(interface, "ernic-if")) {
        return &d->ernic;
    }
    if (!g_strcmp0(interface, "pci-device")) {
        return &d->pci_dev;
    }
    fprintf(stderr, "%s not present in ernic\n", interface);
    g_assert_not_reached();
}

static void qernic_destructor(QOSGraphObject *obj)
{
    QErnicPCI *d = (QErnicPCI *)obj;

    qpci_iounmap(&d->pci_dev, d->ernic.regs);
    qpci_iounmap(&d->pci_dev, d->ernic.eth);
}

static void qernic_start_hw(QOSGraphObject *obj)
{
    QErnicPCI *d = (QErnicPCI *)obj;

    qpci_device_enable(&d->pci_dev);
}

static void *qernic_create(void *pci_bus, QGuestAllocator *alloc, void *addr)
{
    QErnicPCI *d = g_new0(QErnicPCI, 1);
    QPCIBus *bus = pci_bus;

    qpci_device_init(&d->pci_dev, bus, addr);
    d->ernic.pdev = &d->pci_dev;
    d->ernic.qts = bus->qts;
    d->ernic.alloc = alloc;
    d->ernic.regs = qpci_iomap(&d->pci_dev, ERNIC_BAR_REGS, NULL);
    d->ernic.eth = qpci_iomap(&d->pci_dev, ERNIC_BAR_ETH, NULL);
    d->obj.get_driver = qernic_get_driver;
    d->obj.start_hw = qernic_start_hw;
    d->obj.destructor = qernic_destructor;
    return &d->obj;
}

static void qernic_register_nodes(void)
{
    QPCIAddress addr = {
        .devfn = QPCI_DEVFN(4, 0),
        .vendor_id = ERNIC_PCI_VENDOR_ID,
        .device_id = ERNIC_PCI_DEVICE_ID,
    };
    /* A test's "before" hook gives the netdev (docs/qos.md). */
    QOSGraphEdgeOptions opts = {
        .extra_device_opts = "addr=04.0,netdev=hs0",
    };

    add_qpci_address(&opts, &addr);
    qos_node_create_driver("ernic", qernic_create);
    qos_node_consumes("ernic", "pci-bus", &opts);
}

libqos_init(qernic_register_nodes);
