/*
 * Test rig for the ernic packet engine (qtest/ernic-rig.h), compiled once
 * and linked into each program that uses it. Register access and the
 * PG332 ch.6 bring-up are the libqos driver's (qtest/libqos/ernic.c); the
 * rig adds two devices whose wire the test holds, fixed guest addresses
 * its checks can name, and the checks shared by several tests.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ernic-rig.h"
#include "qobject/qdict.h"
#include "hw/rdma/ernic_ext_regs.h"

/* The process that holds guest address @addr (DEV_BASE(i) is device i's). */
#define QTS(r, addr)    ((r)->d[(addr) >= DEV_BASE(1)].e.qts)

const ErnicRigQpCfg ernic_rig_default_cfg = {
    .pmtu = ERNIC_PMTU_1024, .rqbuf = 0x100000, .rq_depth = RQ_DEPTH,
    .timeout = 14, .retry = 7, .rnr_retry = 7, .rnr_timer = 1,
};

size_t ernic_rig_frame(uint8_t *f, const ErnicRigDev *src,
                       const ErnicRigDev *dst, uint8_t opcode, uint32_t dqpn,
                       uint32_t psn, bool ackreq, const uint8_t *ext,
                       size_t ext_len, const uint8_t *pay, size_t paylen)
{
    return qernic_frame(f, src->e.mac, src->e.ip, dst->e.mac, dst->e.ip,
                        opcode, dqpn, psn, ackreq, ext, ext_len, pay, paylen);
}

/*
 * Rig: two devices in one QEMU, each on a socket netdev.
 */

void ernic_rig_assert_refused(const char *devopts, const char *msg)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *dev = g_strdup_printf("ernic,%s", devopts);
    g_autofree char *out = NULL, *err = NULL;
    const char *argv[] = {
        qemu, "-M", "q35", "-nodefaults", "-display", "none", "-S",
        "-device", dev, NULL,
    };
    int status;

    g_assert(qemu);
    g_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL,
                          NULL, &out, &err, &status, NULL));
    g_assert_cmpint(status, !=, 0);
    g_assert(strstr(err, msg));
}

/* The BARs of either layout (docs/boards.md); returns the ETH BAR's size. */
static uint64_t ernic_rig_map(ErnicRigDev *d)
{
    QErnic *e = &d->e;
    uint64_t size;

    if (qpci_config_readw(e->pdev, PCI_DEVICE_ID) == ERNIC_RN_PCI_DEVICE_ID) {
        e->regs = qpci_iomap(e->pdev, ERNIC_RN_BAR_SHELL, &size);
        g_assert_cmphex(size, ==, ERNIC_RN_SHELL_SIZE);
        e->reg = ERNIC_RN_ERNIC_BASE;
        e->eth = qpci_iomap(e->pdev, ERNIC_RN_BAR_ETH, &size);
        d->card = qpci_iomap(e->pdev, ERNIC_RN_BAR_CARD, &d->card_size);
    } else {
        e->regs = qpci_iomap(e->pdev, ERNIC_BAR_REGS, &size);
        e->eth = qpci_iomap(e->pdev, ERNIC_BAR_ETH, &size);
    }
    return size;
}

void ernic_rig_attach(ErnicRig *r, int i, QTestState *qts, QPCIBus *bus)
{
    ErnicRigDev *d = &r->d[i];

    d->e.qts = qts;
    d->bus = bus;
    d->e.pdev = qpci_device_find(bus, QPCI_DEVFN(4 + i, 0));
    g_assert(d->e.pdev);
    qpci_device_enable(d->e.pdev);
    g_assert_cmphex(ernic_rig_map(d), ==, ERNIC_ETH_BAR_SIZE);
    memcpy(d->e.mac, (uint8_t[]){ 0x52, 0x54, 0x00, 0xe3, 0x32, i }, 6);
    d->e.ip = 0x0a000001 + i;   /* 10.0.0.1, 10.0.0.2 */
}

void ernic_rig_rn_window(ErnicRig *r, int i, uint32_t w, uint64_t xlate,
                         uint32_t mapctl)
{
    QErnic *e = &r->d[i].e;
    uint32_t b = ERNIC_RN_AXIB_BASE + w * ERNIC_RN_AXIB_STRIDE;

    qpci_io_writel(e->pdev, e->regs, b + ERNIC_RN_AXIB_XLATE_LSB, xlate);
    qpci_io_writel(e->pdev, e->regs, b + ERNIC_RN_AXIB_XLATE_MSB, xlate >> 32);
    qpci_io_writel(e->pdev, e->regs, b + ERNIC_RN_AXIB_PASID, 0);
    qpci_io_writel(e->pdev, e->regs, b + ERNIC_RN_AXIB_FUNC, 0);
    qpci_io_writel(e->pdev, e->regs, b + ERNIC_RN_AXIB_MAPCTL, mapctl);
    qpci_io_writel(e->pdev, e->regs, b + ERNIC_RN_AXIB_RSVD, 0);
}

void ernic_rig_rn_bridge(ErnicRig *r, int i)
{
    for (uint32_t w = 0; w < ERNIC_RN_AXIB_WINDOWS; w++) {
        ernic_rig_rn_window(r, i, w, (uint64_t)w << ERNIC_RN_AXIB_WIN_SHIFT,
                            ERNIC_RN_AXIB_READ | ERNIC_RN_AXIB_WRITE |
                            0x2000000);
    }
}

void ernic_rig_launch_dev(ErnicRig *r, const char *devopts, const char *extra)
{
    int sv[NDEV][2];
    g_autoptr(GString) cmd = g_string_new(RIG_MACHINE);

    for (int i = 0; i < NDEV; i++) {
        g_auto(GStrv) parts = g_strsplit(devopts ? devopts : "", "@", -1);
        g_autofree char *num = g_strdup_printf("%d", i);
        g_autofree char *opts = g_strjoinv(num, parts);

        g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, sv[i]), ==, 0);
        /*
         * Payload in place even though -netdev socket takes no iovecs
         * (docs/engine.md): the engine tests run the mapped path.
         */
        g_string_append_printf(cmd, " -netdev socket,fd=%d,id=n%d"
                               " -device ernic,id=ern%d,addr=0%d.0,netdev=n%d,"
                               "mac=52:54:00:e3:32:0%d%s%s%s",
                               sv[i][1], i, i, 4 + i, i, i,
                               strstr(opts, "x-tx-map") ? "" : ",x-tx-map=on",
                               *opts ? "," : "", opts);
    }
    g_string_append_printf(cmd, " %s", extra ? extra : "");
    r->qts = qtest_init(cmd->str);
    for (int i = 0; i < NDEV; i++) {
        close(sv[i][1]);
        r->d[i].fd = sv[i][0];
    }
}

void ernic_rig_attach_all(ErnicRig *r)
{
    QPCIBus *bus = qpci_new_pc(r->qts, NULL);   /* one BAR allocator */

    for (int i = 0; i < NDEV; i++) {
        ernic_rig_attach(r, i, r->qts, bus);
    }
}

ErnicRig *ernic_rig_start(const char *extra)
{
    ErnicRig *r = g_new0(ErnicRig, 1);

    ernic_rig_launch_dev(r, NULL, extra);
    ernic_rig_attach_all(r);
    return r;
}

ErnicRig *ernic_rig_start_procs(const char *nd0, const char *nd1)
{
    return ernic_rig_start_procs_extra(nd0, nd1, "");
}

ErnicRig *ernic_rig_start_procs_extra(const char *nd0, const char *nd1,
                                      const char *extra)
{
    ErnicRig *r = g_new0(ErnicRig, 1);
    const char *nd[NDEV] = { nd0, nd1 };

    r->two_procs = true;
    for (int i = 0; i < NDEV; i++) {
        QTestState *qts = qtest_initf(RIG_MACHINE " -netdev %s,"
                                      "id=n%d -device ernic,addr=0%d.0,"
                                      "netdev=n%d,mac=52:54:00:e3:32:0%d %s",
                                      nd[i], i, 4 + i, i, i, extra);

        ernic_rig_attach(r, i, qts, qpci_new_pc(qts, NULL));
        r->d[i].fd = -1;        /* no wire in the test's hands */
    }
    r->qts = r->d[0].e.qts;
    return r;
}

/*
 * Device 0 on the end of the AF_UNIX stream that accepts the connection
 * (@dev0_accepts), or on the end that connects.
 */
ErnicRig *ernic_rig_start_unix_as(const char *path, const char *extra,
                                  bool dev0_accepts)
{
    g_autofree char *srv = g_strdup_printf(
        "stream,server=on,addr.type=unix,addr.path=%s", path);
    g_autofree char *cli = g_strdup_printf(
        "stream,server=off,reconnect-ms=20,addr.type=unix,addr.path=%s",
        path);
    ErnicRig *r;

    unlink(path);
    r = dev0_accepts ? ernic_rig_start_procs_extra(srv, cli, extra) :
                       ernic_rig_start_procs_extra(cli, srv, extra);
    g_usleep(200000);           /* the client's connection */
    return r;
}

ErnicRig *ernic_rig_start_unix(const char *path, const char *extra)
{
    return ernic_rig_start_unix_as(path, extra, true);
}

void ernic_rig_stop(ErnicRig *r)
{
    for (int i = 0; i < NDEV; i++) {
        if (r->d[i].fd >= 0) {
            close(r->d[i].fd);
        }
        g_free(r->d[i].e.pdev);
        if (i == 0 || r->two_procs) {
            qpci_free_pc(r->d[i].bus);
            qtest_quit(r->d[i].e.qts);
        }
    }
    g_free(r);
}

uint64_t ernic_rig_fault_stat(ErnicRig *r, int i, const char *name)
{
    g_autoptr(QDict) rsp = qtest_qmp(r->qts,
        "{'execute': 'qom-get', 'arguments': {'path': %s, "
        "'property': 'fault-stats'}}",
        i ? "/machine/peripheral/ern1" : "/machine/peripheral/ern0");

    return qdict_get_int(qdict_get_qdict(rsp, "return"), name);
}

uint32_t ernic_rig_rd(ErnicRig *r, int i, uint32_t off)
{
    return qernic_rd(&r->d[i].e, off);
}

void ernic_rig_wr(ErnicRig *r, int i, uint32_t off, uint32_t val)
{
    qernic_wr(&r->d[i].e, off, val);
}

uint32_t ernic_rig_qrd(ErnicRig *r, int i, uint32_t qpn, uint32_t off)
{
    return qernic_qp_rd(&r->d[i].e, qpn, off);
}

void ernic_rig_qwr(ErnicRig *r, int i, uint32_t qpn, uint32_t off,
                   uint32_t val)
{
    qernic_qp_wr(&r->d[i].e, qpn, off, val);
}

void ernic_rig_qwr64(ErnicRig *r, int i, uint32_t qpn, uint32_t lo,
                     uint32_t hi, uint64_t val)
{
    ernic_rig_qwr(r, i, qpn, lo, val);
    ernic_rig_qwr(r, i, qpn, hi, val >> 32);
}

void ernic_rig_setup_global(ErnicRig *r, int i, uint32_t ackgen)
{
    QErnic *e = &r->d[i].e;
    QErnicGlobalCfg cfg = {
        .errbuf = DEV_BASE(i) + ERRBUF_OFF,
        .fatalq = DEV_BASE(i) + FATALQ_OFF,
        .ackgen = ackgen,
        .udp_sport = UDP_SPORT,
    };

    qernic_setup(e, e->mac, e->ip, &cfg);
    /* The MR both peers target: PD/MR table entry MR_INDEX (p.31). */
    qernic_mr(e, MR_INDEX, PD_NUM, MR_VA, DEV_BASE(i) + MR_OFF, MR_LEN,
              MR_KEY);
}

void ernic_rig_setup_qp(ErnicRig *r, int i, uint32_t qpn, int peer,
                        uint32_t dqpn, uint32_t sqpsn, uint32_t rqpsn,
                        const ErnicRigQpCfg *cfg, uint64_t qbase)
{
    QErnic *p = &r->d[peer].e;
    QErnicPeer to = { .qpn = dqpn, .ip = p->ip, .sq_psn = sqpsn,
                      .rq_psn = rqpsn };
    QErnicQpCfg qc = {
        .sq = qbase + SQ_OFF, .cq = qbase + CQ_OFF, .rq = qbase + RQ_OFF,
        .cqdb = qbase + CQDB_OFF, .rqdb = qbase + RQDB_OFF,
        .sq_depth = SQ_DEPTH, .rq_depth = cfg->rq_depth,
        .rqbuf = cfg->rqbuf, .pmtu = cfg->pmtu,
        .timeout = cfg->timeout, .retry = cfg->retry,
        .rnr_retry = cfg->rnr_retry, .rnr_timer = cfg->rnr_timer,
        .qpconf = ERNIC_QPCONF_HW_HS_DIS | ERNIC_QPCONF_CQE_WR_EN |
                  ERNIC_QPCONF_CQ_INT_EN | ERNIC_QPCONF_RQ_INT_EN,
    };

    memcpy(to.mac, p->mac, 6);
    qernic_qp_setup(&r->d[i].e, qpn, PD_NUM, &to, &qc);
}

void ernic_rig_setup_packed_qp(ErnicRig *r, int i, uint32_t qpn,
                               uint64_t base)
{
    QErnicPeer to = { .qpn = qpn, .ip = r->d[1 - i].e.ip,
                      .sq_psn = PSN_A, .rq_psn = PSN_A };
    QErnicQpCfg qc = {
        .sq = base, .cq = base + ERNIC_RIG_PACKED_CQ, .cqdb = base + 0x1800,
        .rqdb = base + 0x1810, .rq = base + 0x2000,
        .sq_depth = SQ_DEPTH, .rq_depth = 2, .rqbuf = 4096,
        .pmtu = ERNIC_PMTU_4096, .timeout = 16, .retry = 7,
        .rnr_retry = 7, .rnr_timer = 1,
        .qpconf = ERNIC_QPCONF_HW_HS_DIS | ERNIC_QPCONF_CQE_WR_EN,
    };

    QEMU_BUILD_BUG_ON(SQ_DEPTH * ERNIC_WQE_SIZE > ERNIC_RIG_PACKED_CQ);
    memcpy(to.mac, r->d[1 - i].e.mac, 6);
    qernic_qp_setup(&r->d[i].e, qpn, PD_NUM, &to, &qc);
}

void ernic_rig_connect_pair(ErnicRig *r, const ErnicRigQpCfg *cfg)
{
    ernic_rig_setup_global(r, 0, 0);
    ernic_rig_setup_global(r, 1, 0);
    ernic_rig_setup_qp(r, 0, QPN_A, 1, QPN_B, PSN_A, PSN_B, cfg, DEV_BASE(0));
    ernic_rig_setup_qp(r, 1, QPN_B, 0, QPN_A, PSN_B, PSN_A, cfg, DEV_BASE(1));
}

bool ernic_rig_wire_read(int fd, uint8_t *f, size_t *len)
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

void ernic_rig_wire_write(int fd, const uint8_t *f, size_t len)
{
    uint32_t be = cpu_to_be32(len);

    g_assert_cmpint(send(fd, &be, 4, 0), ==, 4);
    g_assert_cmpint(send(fd, f, len, 0), ==, len);
}

size_t ernic_rig_wire_wait(ErnicRig *r, int i, uint8_t *f)
{
    size_t len = 0;
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    while (!ernic_rig_wire_read(r->d[i].fd, f, &len)) {
        g_assert(g_get_monotonic_time() < deadline);
        qtest_clock_step(r->d[i].e.qts, 100);
    }
    return len;
}

void ernic_rig_read_until_response(ErnicRig *r, uint32_t psn)
{
    uint8_t f[FRAME_MAX];
    size_t len;

    for (int k = 0; k < 2000000; k++) {
        if (!ernic_rig_wire_read(r->d[1].fd, f, &len)) {
            qtest_clock_step(r->qts, 1000);
            continue;
        }
        g_assert_cmphex(f[F_BTH], !=, 0x11);        /* no ACK or NAK */
        if ((ernic_rig_be32(f + F_BTH + 8) & 0xffffff) == psn) {
            return;
        }
    }
    g_assert_not_reached();
}

void ernic_rig_burst_add(GByteArray *burst, const uint8_t *f, size_t len)
{
    uint32_t be = cpu_to_be32(len);

    g_byte_array_append(burst, (uint8_t *)&be, 4);
    g_byte_array_append(burst, f, len);
}

size_t ernic_rig_exchange(ErnicRig *r, const uint8_t *f, size_t len,
                          uint8_t *ans)
{
    ernic_rig_wire_write(r->d[1].fd, f, len);
    return ernic_rig_wire_wait(r, 1, ans);
}

uint8_t ernic_rig_request(ErnicRig *r, uint32_t qpn, uint8_t opcode,
                          uint32_t psn, const uint8_t *ext, size_t ext_len,
                          size_t paylen)
{
    uint8_t f[FRAME_MAX], a[FRAME_MAX];
    size_t len = ernic_rig_inject(r, f, opcode, qpn, psn, ext, ext_len,
                                  paylen);

    ernic_rig_exchange(r, f, len, a);
    g_assert_cmphex(a[F_BTH], ==, 0x11 /* ACKNOWLEDGE */);
    return a[F_EXT];
}

uint32_t ernic_rig_fatal_entry(ErnicRig *r, int i, int n)
{
    return qtest_readl(r->d[i].e.qts, DEV_BASE(i) + FATALQ_OFF + n * 8);
}

void ernic_rig_pump_once(ErnicRig *r, ErnicRigWire *w)
{
    static uint8_t f[FRAME_MAX];
    size_t len;
    bool moved = false;

    for (int i = 0; i < NDEV; i++) {
        while (ernic_rig_wire_read(r->d[i].fd, f, &len)) {
            ErnicRigVerdict v;
            int to = r->d[1 - i].fd;

            if (len >= 14 && lduw_be_p(f + 12) == ETH_P_RARP) {
                /* QEMU announcing a migrated NIC; no test sends one. */
                continue;
            }
            v = w && w->filter ? w->filter(w->opaque, i, f, len) :
                ERNIC_RIG_FWD;
            moved = true;
            if (w) {
                w->frames[i]++;
            }
            if (v == ERNIC_RIG_TRUNC) {
                len = MIN(len, w->cut);
                v = ERNIC_RIG_FWD;
            } else if (v == ERNIC_RIG_FLIP) {
                f[(w->flip / 8) % len] ^= 1u << (w->flip % 8);
                v = ERNIC_RIG_FWD;
            }
            if (v == ERNIC_RIG_HOLD && w && !w->held_len) {
                memcpy(w->held, f, len);
                w->held_len = len;
                w->held_from = i;
                continue;
            }
            if (v != ERNIC_RIG_DROP) {
                ernic_rig_wire_write(to, f, len);
            }
            if (v == ERNIC_RIG_DUP) {
                ernic_rig_wire_write(to, f, len);
            }
            if (w && w->held_len && w->held_from == i) {
                /* The held frame goes after the one behind it. */
                ernic_rig_wire_write(to, w->held, w->held_len);
                w->held_len = 0;
            }
        }
    }
    if (!moved) {
        if (w && w->held_len) {
            ernic_rig_wire_write(r->d[1 - w->held_from].fd, w->held,
                                 w->held_len);
            w->held_len = 0;
        }
        for (int i = 0; i < (r->two_procs ? NDEV : 1); i++) {
            qtest_clock_step(r->d[i].e.qts,
                             w && w->step_ns ? w->step_ns : 10000);
        }
    }
}

void ernic_rig_post(ErnicRig *r, int i, uint32_t qpn, uint64_t sq,
                    uint16_t wrid, uint8_t opcode, uint64_t laddr, uint32_t len,
                    uint64_t raddr, uint32_t rkey, uint32_t imm,
                    const uint8_t *sdata)
{
    uint8_t wqe[ERNIC_WQE_SIZE];
    ErnicRigDev *d = &r->d[i];

    qernic_wqe(wqe, opcode, wrid, laddr, len, raddr, rkey, imm);
    if (sdata) {
        /*
         * SEND data, or an ERNIC-X atomic's operands, bind's fields,
         * ATOMIC WRITE's data or FLUSH's range and FETH.
         */
        bool whole = opcode == ERNIC_OP_ATOMIC_CMP_SWP ||
                     opcode == ERNIC_OP_ATOMIC_FETCH_ADD ||
                     opcode == ERNIC_OP_BIND_MW ||
                     opcode == ERNIC_OP_ATOMIC_WRITE ||
                     opcode == ERNIC_OP_FLUSH;

        memcpy(&wqe[ERNIC_WQE_SDATA], sdata, whole ? 16 : MIN(len, 16));
    }
    /* An XRC initiator's WQE names the remote XRC SRQ (bytes 52-55). */
    stl_le_p(&wqe[ERNIC_WQE_XRC_SRQN], d->xrc_srqn);
    qtest_memwrite(QTS(r, sq), sq + (d->sqpi % SQ_DEPTH) * ERNIC_WQE_SIZE, wqe,
                   sizeof(wqe));
    d->sqpi++;
    ernic_rig_qwr(r, i, qpn, ERNIC_SQPI, d->sqpi % SQ_DEPTH);
}

uint32_t ernic_rig_xmr(ErnicRig *r, int i, uint32_t idx, uint32_t key,
                       uint32_t pd, uint32_t acc, uint64_t iova, uint64_t len,
                       uint64_t pbl, uint32_t npages)
{
    static const uint32_t regs[] = {
        ERNIC_MRKEY, ERNIC_MRPD, ERNIC_MRACC, ERNIC_MRIOVALO, ERNIC_MRIOVAHI,
        ERNIC_MRLENLO, ERNIC_MRLENHI, ERNIC_MRPBLLO, ERNIC_MRPBLHI,
        ERNIC_MRNPAGES, ERNIC_MRIDX,
    };
    const uint32_t val[] = {
        key, pd, acc, iova, iova >> 32, len, len >> 32, pbl, pbl >> 32,
        npages, idx,
    };

    for (size_t k = 0; k < ARRAY_SIZE(regs); k++) {
        ernic_rig_wr(r, i, regs[k], val[k]);
    }
    ernic_rig_wr(r, i, ERNIC_MRCMD, ERNIC_MRCMD_WRITE);
    return ernic_rig_rd(r, i, ERNIC_MRSTS);
}

bool ernic_rig_all_done(ErnicRig *r, int i, uint32_t qpn)
{
    return ernic_rig_qrd(r, i, qpn, ERNIC_CQHEAD) == r->d[i].sqpi % SQ_DEPTH;
}

uint32_t ernic_rig_cqe(ErnicRig *r, int i, uint32_t n)
{
    return qtest_readl(r->d[i].e.qts, DEV_BASE(i) + CQ_OFF +
                       (n % SQ_DEPTH) * 4);
}

void ernic_rig_fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t k = 0; k < n; k++) {
        p[k] = (seed * 2654435761u + k * 7 + (k >> 8)) & 0xff;
    }
}

uint8_t *ernic_rig_put_pattern(ErnicRig *r, uint64_t addr, size_t n,
                               uint32_t seed)
{
    uint8_t *p = g_malloc(n + 1);

    ernic_rig_fill(p, n, seed);
    qtest_memwrite(QTS(r, addr), addr, p, n);
    return p;
}

void ernic_rig_assert_mem(ErnicRig *r, uint64_t addr, const uint8_t *want,
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

uint64_t ernic_rig_cpu_ticks(QTestState *qts)
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

void ernic_rig_assert_idle(QTestState *qts, unsigned ms)
{
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t used = UINT64_MAX;

    for (int w = 0; w < 3 && used >= ms / 5; w++) {
        uint64_t t0 = ernic_rig_cpu_ticks(qts);

        g_usleep(ms * 1000);
        used = (ernic_rig_cpu_ticks(qts) - t0) * 1000 / hz;
    }
    g_assert_cmpuint(used, <, ms / 5);
}

void ernic_rig_poll_reg(ErnicRig *r, int i, uint32_t off, uint32_t mask,
                        uint32_t want)
{
    for (int k = 0; k < POLL_MAX; k++) {
        if ((ernic_rig_rd(r, i, off) & mask) == want) {
            return;
        }
        qtest_clock_step(r->d[i].e.qts, 1000);
    }
    g_error("register 0x%x & 0x%x stayed 0x%x, want 0x%x", off, mask,
            ernic_rig_rd(r, i, off) & mask, want);
}

uint32_t ernic_rig_nak_syndrome(ErnicRig *r, int i, uint32_t qpn)
{
    return (ernic_rig_qrd(r, i, qpn, ERNIC_STATQP) &
            ERNIC_STATQP_NAK_SYND_MASK) >>
           ERNIC_STATQP_NAK_SYND_SHIFT;
}

void ernic_rig_poll_cqhead(ErnicRig *r, int i, uint32_t qpn)
{
    ernic_rig_poll_reg(r, i, QOFF(qpn, ERNIC_CQHEAD), 0xffff,
                       ernic_rig_qrd(r, i, qpn, ERNIC_SQPI));
}

uint32_t ernic_rig_errbuf_word(ErnicRig *r, int i, uint32_t n, uint32_t off)
{
    return qtest_readl(r->d[i].e.qts, DEV_BASE(i) + ERRBUF_OFF +
                       (n % 16) * 256 + off);
}

void ernic_rig_check_fatal(ErnicRig *r, int i, uint32_t qpn, uint16_t code,
                           uint32_t first_cqe)
{
    uint8_t f[FRAME_MAX];
    size_t len;
    uint32_t n = r->d[i].sqpi;

    g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_IPKTERRQBA), ==, DEV_BASE(i) +
                    FATALQ_OFF);
    g_assert_cmphex(ernic_rig_fatal_entry(r, i, 0), ==, (qpn << 16) | code);
    g_assert_cmphex(ernic_rig_fatal_entry(r, i, 1), ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_IPKTERRQWPTR), ==, 1);
    g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_INTSTS) & ERNIC_INT_FATAL, ==,
                    ERNIC_INT_FATAL);
    g_assert_cmphex(ernic_rig_qrd(r, i, qpn, ERNIC_STATQP) & ERNIC_STATQP_FATAL,
                    ==, ERNIC_STATQP_FATAL);
    ernic_rig_poll_cqhead(r, i, qpn);
    g_assert_cmphex(ernic_rig_cqe(r, i, 0), ==, first_cqe);

    ernic_rig_post(r, i, qpn, DEV_BASE(i) + SQ_OFF, 0x77, ERNIC_OP_WRITE,
                   DEV_BASE(i) + SRC_OFF, 64, MR_VA, RKEY, 0, NULL);
    ernic_rig_poll_cqhead(r, i, qpn);
    g_assert_cmphex(ernic_rig_cqe(r, i, n), ==, ERRFLAG | CQE(ERNIC_OP_WRITE,
                                                              0x77));
    qtest_clock_step(r->d[i].e.qts, 1000000);
    g_assert_false(ernic_rig_wire_read(r->d[i].fd, f, &len));
    g_assert_cmphex(ernic_rig_qrd(r, i, qpn, ERNIC_STATQP) &
                    (ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY), ==,
                    ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY);
    /* Only one entry per FATAL. */
    g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_IPKTERRQWPTR), ==, 1);
}

void ernic_rig_check_errbuf(ErnicRig *r, int i, uint32_t n, uint32_t synd,
                            const uint8_t *frame)
{
    g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_ERRBUFWPTR), ==, n);
    if (n) {
        g_assert_cmphex(ernic_rig_errbuf_word(r, i, n - 1, 0), ==, synd);
        g_assert_cmphex(ernic_rig_errbuf_word(r, i, n - 1, 4), ==,
                        ernic_rig_le32(frame));
        g_assert_cmphex(ernic_rig_errbuf_word(r, i, n - 1, 4 + F_BTH), ==,
                        ernic_rig_le32(frame + F_BTH));
    }
    if (n && synd) {
        g_assert_cmphex(ernic_rig_rd(r, i, ERNIC_INTSTS) &
                        ERNIC_INT_PKT_VALIDATION_ERR, ==,
                        ERNIC_INT_PKT_VALIDATION_ERR);
    }
}

size_t ernic_rig_inject(ErnicRig *r, uint8_t *f, uint8_t opcode, uint32_t dqpn,
                        uint32_t psn, const uint8_t *ext, size_t ext_len,
                        size_t paylen)
{
    uint8_t pay[4096];

    ernic_rig_fill(pay, paylen, psn);
    return ernic_rig_frame(f, &r->d[0], &r->d[1], opcode, dqpn, psn, true, ext,
                           ext_len, pay, paylen);
}

size_t ernic_rig_respond(ErnicRig *r, uint8_t *f, uint8_t opcode, uint32_t psn,
                         const uint8_t *ext, size_t ext_len, size_t paylen)
{
    uint8_t pay[4096];

    ernic_rig_fill(pay, paylen, psn);
    return ernic_rig_frame(f, &r->d[1], &r->d[0], opcode, QPN_A, psn, false,
                           ext, ext_len, pay, paylen);
}

uint8_t *ernic_rig_reth(uint8_t *p, uint64_t va, uint32_t rkey, uint32_t len)
{
    stq_be_p(p, va);
    stl_be_p(p + 8, rkey);
    stl_be_p(p + 12, len);
    return p;
}

void ernic_rig_cause_remote_access(ErnicRig *r, uint16_t wrid)
{
    ernic_rig_post(r, 0, QPN_A, DEV_BASE(0) + SQ_OFF, wrid, ERNIC_OP_WRITE,
                   DEV_BASE(0) + SRC_OFF, 3000, MR_VA, RKEY ^ 0x80, 0, NULL);
    ERNIC_RIG_PUMP(r, NULL, (ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                             ERNIC_STATQP_FATAL) &&
                   (ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                    ERNIC_STATQP_FATAL));
}

void ernic_rig_fatal_clear(ErnicRig *r, int i, uint32_t qpn, uint32_t entry,
                           uint16_t code)
{
    uint32_t qpconf = ernic_rig_qrd(r, i, qpn, ERNIC_QPCONF);
    uint32_t base, e;

    /* Clearing traffic. 1: the status queue's base address. */
    base = ernic_rig_rd(r, i, ERNIC_IPKTERRQBA);
    g_assert_cmphex(base, ==, DEV_BASE(i) + FATALQ_OFF);
    /* 2: which QP, which code. */
    e = qtest_readl(r->d[i].e.qts, base + 8 * entry);
    g_assert_cmphex(e >> 16, ==, qpn);
    g_assert_cmphex(e & 0xffff, ==, code);
    /* 3: no further SQPI doorbells (the test posts none). */
    /* 4: "QP under recovery". */
    ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF,
                  qpconf | ERNIC_QPCONF_UNDER_RECOVERY);
    /* 5: SQ and outstanding queue empty. */
    ernic_rig_poll_reg(r, i, QOFF(qpn, ERNIC_STATQP), ERNIC_STATQP_SQ_EMPTY |
                       ERNIC_STATQP_OSQ_EMPTY, ERNIC_STATQP_SQ_EMPTY |
                       ERNIC_STATQP_OSQ_EMPTY);
    /* 6: CQHEADi == SQPIi. */
    ernic_rig_poll_cqhead(r, i, qpn);
    /* 7: RESPHNDSTS "sq pici db check en". */
    ernic_rig_poll_reg(r, i, ERNIC_RESPHNDSTS,
                       ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN,
                       ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);
    /* 8: disabled, under recovery. */
    qpconf = (qpconf & ~ERNIC_QPCONF_QP_EN) | ERNIC_QPCONF_UNDER_RECOVERY;
    ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF, qpconf);
}

void ernic_rig_fatal_reinit(ErnicRig *r, int i, uint32_t qpn, int peer,
                            const ErnicRigReinit *ri)
{
    ErnicRigDev *p = &r->d[peer];
    uint32_t qpconf = ernic_rig_qrd(r, i, qpn, ERNIC_QPCONF);

    /* Re-initialisation. 1, 2: the same polls again. */
    ernic_rig_poll_cqhead(r, i, qpn);
    ernic_rig_poll_reg(r, i, ERNIC_RESPHNDSTS,
                       ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN,
                       ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN);
    /* 3: software override. */
    ernic_rig_wr(r, i, ERNIC_XRNICADCONF,
                 ernic_rig_rd(r, i, ERNIC_XRNICADCONF) | ERNIC_XRNICADCONF_SWO);
    /* 4: zero the QP's pointers and sequence numbers. */
    static const uint32_t zeroed[] = {
        ERNIC_STATRQPIDB, ERNIC_STATRQBUFCA, ERNIC_STATRQBUFCAMSB, ERNIC_RQCI,
        ERNIC_STATCURSQPTR, ERNIC_SQPI, ERNIC_SQPSN, ERNIC_LSTRQREQ,
        ERNIC_STATMSN, ERNIC_CQHEAD,
    };
    for (size_t k = 0; k < ARRAY_SIZE(zeroed); k++) {
        ernic_rig_qwr(r, i, qpn, zeroed[k], 0);
        g_assert_cmphex(ernic_rig_qrd(r, i, qpn, zeroed[k]), ==, 0);
    }
    r->d[i].sqpi = 0;
    /* 5: CQHEADi reads 0. */
    ernic_rig_poll_reg(r, i, QOFF(qpn, ERNIC_CQHEAD), 0xffff, 0);
    /* 6: the new PSNs. */
    ernic_rig_qwr(r, i, qpn, ERNIC_SQPSN, ri->sqpsn);
    ernic_rig_qwr(r, i, qpn, ERNIC_LSTRQREQ, ((ri->rqpsn - 1) & 0xffffff) |
                  (0x04u << 24));
    /* 7: the remote's Ethernet and IP addresses. */
    ernic_rig_qwr(r, i, qpn, ERNIC_MACDESADDMSB, lduw_be_p(p->e.mac));
    ernic_rig_qwr(r, i, qpn, ERNIC_MACDESADDLSB, ernic_rig_be32(p->e.mac + 2));
    ernic_rig_qwr(r, i, qpn, ERNIC_IPDESADDR1, p->e.ip);
    ernic_rig_qwr(r, i, qpn, ERNIC_IPDESADDR2, 0);
    ernic_rig_qwr(r, i, qpn, ERNIC_IPDESADDR3, 0);
    ernic_rig_qwr(r, i, qpn, ERNIC_IPDESADDR4, 0);
    /* 8: IP version (IPv4). */
    qpconf &= ~ERNIC_QPCONF_IPV6;
    ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF, qpconf);
    /* 9: RNR NAK count and retry count in STATQPi. */
    ernic_rig_qwr(r, i, qpn, ERNIC_STATQP, (7u << 24) | (7u << 28));
    g_assert_cmphex(ernic_rig_qrd(r, i, qpn, ERNIC_STATQP) &
                    (ERNIC_STATQP_RETRY_CNT_MASK | ERNIC_STATQP_RNR_CNT_MASK),
                    ==, (7u << 24) | (7u << 28));
    /* 10: the QP's region is read/write ('b10). */
    ernic_rig_wr(r, i, ERNIC_PDT_OFFSET(MR_INDEX) + ERNIC_ACCESSDESC,
                 ERNIC_ACCESS_READ_WRITE);
    /* 11: interrupt enables, PMTU, HW handshake disable, CQE writes. */
    qpconf = ERNIC_QPCONF_UNDER_RECOVERY | ERNIC_QPCONF_HW_HS_DIS |
             ERNIC_QPCONF_CQE_WR_EN | ERNIC_QPCONF_CQ_INT_EN |
             ERNIC_QPCONF_RQ_INT_EN |
             (ERNIC_PMTU_1024 << ERNIC_QPCONF_PMTU_SHIFT) |
             ((ernic_rig_default_cfg.rqbuf / 256) <<
              ERNIC_QPCONF_RQBUFSZ_SHIFT);
    ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF, qpconf);
    /* 12: traffic class, TTL, P_Key. */
    ernic_rig_qwr(r, i, qpn, ERNIC_QPADVCONF, (PKEY << 16) | (ri->ttl << 8));
    /* 13: enabled, recovery over. */
    ernic_rig_qwr(r, i, qpn, ERNIC_QPCONF,
                  (qpconf & ~ERNIC_QPCONF_UNDER_RECOVERY) | ERNIC_QPCONF_QP_EN);
    /* 14: software override off. */
    ernic_rig_wr(r, i, ERNIC_XRNICADCONF,
                 ernic_rig_rd(r, i, ERNIC_XRNICADCONF) &
                 ~ERNIC_XRNICADCONF_SWO);

    g_assert_cmphex(ernic_rig_qrd(r, i, qpn, ERNIC_STATQP) &
                    (ERNIC_STATQP_FATAL | ERNIC_STATQP_NAK_SYND_MASK), ==, 0);
}

void ernic_rig_fatal_recovery(ErnicRig *r, int i, uint32_t qpn, int peer,
                              uint32_t entry, uint16_t code,
                              const ErnicRigReinit *ri)
{
    ernic_rig_fatal_clear(r, i, qpn, entry, code);
    ernic_rig_fatal_reinit(r, i, qpn, peer, ri);
}

/* Capture the first frame each device sends. */
static ErnicRigVerdict ernic_rig_first_filter(void *opaque, int from,
                                              const uint8_t *f, size_t len)
{
    ErnicRigFirst *c = opaque;

    if (!c->seen[from]) {
        memcpy(c->f[from], f, len);
        c->seen[from] = true;
    }
    return ERNIC_RIG_FWD;
}

void ernic_rig_traffic(ErnicRig *r, ErnicRigFirst *first, uint32_t seed)
{
    ErnicRigWire w = { .filter = ernic_rig_first_filter, .opaque = first };
    uint32_t qpn[NDEV] = { QPN_A, QPN_B };
    uint8_t *p[NDEV][3];

    for (int i = 0; i < NDEV; i++) {
        uint64_t b = DEV_BASE(i);
        uint64_t rva = MR_VA + 0x10000 * (i + 1);

        p[i][0] = ernic_rig_put_pattern(r, b + SRC_OFF, 2500, seed + i);
        p[i][1] = ernic_rig_put_pattern(r, b + SRC_OFF + 0x4000, 5000,
                                        seed + i + 2);
        p[i][2] = ernic_rig_put_pattern(r, DEV_BASE(1 - i) + MR_OFF + 0x80000 +
                                        0x10000 * i, 3000, seed + i + 4);
        ernic_rig_post(r, i, qpn[i], b + SQ_OFF, 1, ERNIC_OP_SEND, b + SRC_OFF,
                       2500, 0, 0, 0, NULL);
        ernic_rig_post(r, i, qpn[i], b + SQ_OFF, 2, ERNIC_OP_WRITE,
                       b + SRC_OFF + 0x4000, 5000, rva, RKEY, 0, NULL);
        ernic_rig_post(r, i, qpn[i], b + SQ_OFF, 3, ERNIC_OP_READ, b + SRC_OFF +
                       0x10000, 3000, MR_VA + 0x80000 + 0x10000 * i, RKEY, 0,
                       NULL);
    }
    ERNIC_RIG_PUMP(r, &w, ernic_rig_all_done(r, 0, QPN_A) &&
                   ernic_rig_all_done(r, 1, QPN_B));
    for (int i = 0; i < NDEV; i++) {
        uint32_t n = r->d[i].sqpi;

        for (int k = 0; k < 3; k++) {
            g_assert_cmphex(ernic_rig_cqe(r, i, n - 3 + k), ==,
                            CQE(k == 0 ? ERNIC_OP_SEND : k == 1 ?
                                ERNIC_OP_WRITE : ERNIC_OP_READ, k + 1));
        }
        ernic_rig_assert_mem(r, DEV_BASE(1 - i) + RQ_OFF +
                             (ernic_rig_qrd(r, 1 - i, qpn[1 - i],
                                            ERNIC_STATRQPIDB) + RQ_DEPTH -
                              1) % RQ_DEPTH * ernic_rig_default_cfg.rqbuf,
                             p[i][0], 2500);
        ernic_rig_assert_mem(r, DEV_BASE(1 - i) + MR_OFF + 0x10000 * (i + 1),
                             p[i][1], 5000);
        ernic_rig_assert_mem(r, DEV_BASE(i) + SRC_OFF + 0x10000, p[i][2], 3000);
        for (int k = 0; k < 3; k++) {
            g_free(p[i][k]);
        }
    }
}

ErnicRigVerdict ernic_rig_lossy_filter(void *opaque, int from,
                                       const uint8_t *f, size_t len)
{
    ErnicRigLossy *l = opaque;
    unsigned x;

    l->rng ^= l->rng << 13;
    l->rng ^= l->rng >> 7;
    l->rng ^= l->rng << 17;
    x = l->rng % 1000;
    if (x < l->permille / 2) {
        l->dropped++;
        return ERNIC_RIG_DROP;
    }
    if (x < l->permille) {
        l->duplicated++;
        return ERNIC_RIG_DUP;
    }
    return ERNIC_RIG_FWD;
}
