/*
 * A user-space RDMA program with RecoNIC's access pattern (docs/boards.md):
 * no kernel RDMA driver is bound. ERNIC is driven through resource2 of a
 * layout=reconic ernic, mapped from sysfs; queues and host buffers live in
 * hugepages whose bus addresses come from /proc/self/pagemap; data buffers
 * live in card memory, reached through /dev/reconic-mm (guest-driver/
 * reconic_mm.c); the two peers exchange addresses over TCP on another NIC.
 * The order of register writes is that of RecoNIC's library (lib/
 * reconic.c, lib/rdma_api.c): bridge windows, global registers, PD 0, QP 2
 * enabled before its PSNs, doorbells counting up, completions by polling
 * CQHEADi, receives by polling STATRQPIDBi, and its QP teardown.
 *
 * usage: reconic-rdma -p RESOURCE2 -a ERNIC_IPV4 -i PEER_IPV4 (-s | -c)
 * Prints "guest: ..." lines and ends with "guest: reconic: PASS" or FAIL.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hw/rdma/ernic_regs.h"

#define QPN             2
#define DEPTH           64
#define RQE_UNITS       512             /* QPCONF[31:16], 256-byte units */
#define RQE_BYTES       (RQE_UNITS * 256)
#define RKEY            0x0008          /* MR entry 0, key 8 */
#define PSN             0xabc
#define HUGE            (2u << 20)
#define NHUGE           8
#define TCP_PORT        11111
#define MR_OFF          0x100000        /* the server's region, card memory */
#define MR_LEN          0x100000
#define LOCAL_OFF       0x200000        /* the client's card buffers */
#define CARD(off)       (ERNIC_RN_CARD_ADDR | (uint64_t)(off))

struct buf {
    void *va;
    uint64_t pa;
};

struct msg {                            /* the side channel's one message */
    uint32_t op;
    uint32_t len;
    uint32_t seed;
    uint32_t status;
    uint64_t addr;
    uint32_t mac_msb, mac_lsb, ip;
};

/* resource2, device registers: every access must reach the device. */
static volatile uint32_t *bar;
static int mm_fd = -1;
static int sock = -1;
static uint8_t *huge;
static size_t huge_used;
static int failures;

static void say(const char *fmt, ...)
{
    va_list ap;

    printf("guest: reconic: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

static void die(const char *what)
{
    say("FAIL %s: %s", what, strerror(errno));
    exit(1);
}

static uint32_t rd(uint32_t off)
{
    return bar[(ERNIC_RN_ERNIC_BASE + off) / 4];
}

static void wr(uint32_t off, uint32_t val)
{
    bar[(ERNIC_RN_ERNIC_BASE + off) / 4] = val;
}

static uint32_t qrd(uint32_t off)
{
    return rd(ERNIC_QP_OFFSET(QPN) + off);
}

static void qwr(uint32_t off, uint32_t val)
{
    wr(ERNIC_QP_OFFSET(QPN) + off, val);
}

static void qwr64(uint32_t lo, uint32_t hi, uint64_t val)
{
    qwr(lo, val);
    qwr(hi, val >> 32);
}

/* get_buffer_paddr(): the page frame from /proc/self/pagemap. */
static uint64_t paddr(void *va)
{
    uint64_t ent;
    long ps = sysconf(_SC_PAGESIZE);
    int fd = open("/proc/self/pagemap", O_RDONLY);

    if (fd < 0 || pread(fd, &ent, 8, (uint64_t)va / ps * 8) != 8) {
        die("pagemap");
    }
    close(fd);
    if (!(ent & (1ull << 63)) || !(ent & ((1ull << 55) - 1))) {
        errno = EPERM;
        die("pagemap: no page frame (not root, or page not present)");
    }
    return (ent & ((1ull << 55) - 1)) * ps + (uint64_t)va % ps;
}

/* A host buffer within one hugepage (hugepages are not contiguous). */
static struct buf host_buf(size_t len)
{
    struct buf b;

    if (huge_used % HUGE + len > HUGE) {
        huge_used = (huge_used + HUGE - 1) / HUGE * HUGE;
    }
    if (huge_used + len > (size_t)NHUGE * HUGE) {
        errno = ENOMEM;
        die("hugepages used up");
    }
    b.va = huge + huge_used;
    b.pa = paddr(b.va);
    huge_used += (len + 255) / 256 * 256;
    return b;
}

/* write_from_buffer() and read_to_buffer() of RecoNIC's memory API. */
static void card_write(uint64_t off, const void *p, size_t len)
{
    if (pwrite(mm_fd, p, len, off) != (ssize_t)len) {
        die("write /dev/reconic-mm");
    }
}

static void card_read(uint64_t off, void *p, size_t len)
{
    if (pread(mm_fd, p, len, off) != (ssize_t)len) {
        die("read /dev/reconic-mm");
    }
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t k = 0; k < n; k++) {
        p[k] = (uint8_t)(seed * 131 + k * 7 + (k >> 9));
    }
}

static bool check(const char *what, const uint8_t *got, size_t n,
                  uint32_t seed)
{
    for (size_t k = 0; k < n; k++) {
        uint8_t want = (uint8_t)(seed * 131 + k * 7 + (k >> 9));

        if (got[k] != want) {
            say("FAIL %s: byte %zu of %zu is 0x%02x, want 0x%02x", what, k,
                n, got[k], want);
            failures++;
            return false;
        }
    }
    return true;
}

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Poll a register until (value & mask) == want; 20 s at most. */
static bool poll_reg(uint32_t off, uint32_t mask, uint32_t want)
{
    double end = now() + 20;

    while ((rd(off) & mask) != want) {
        if (now() > end) {
            say("FAIL timeout: register 0x%x is 0x%x, want 0x%x", off,
                rd(off), want);
            failures++;
            return false;
        }
    }
    return true;
}

/*
 * create_rn_dev() / config_rn_dev_axib_bdf(): eight windows of 128 GiB,
 * each translating to the same bus address (identity).
 */
static void bridge(void)
{
    for (uint32_t w = 0; w < ERNIC_RN_AXIB_WINDOWS; w++) {
        volatile uint32_t *b = bar + (ERNIC_RN_AXIB_BASE +  /* device */
                                      w * ERNIC_RN_AXIB_STRIDE) / 4;

        b[ERNIC_RN_AXIB_XLATE_LSB / 4] = 0;
        b[ERNIC_RN_AXIB_XLATE_MSB / 4] = w * 0x20;
        b[ERNIC_RN_AXIB_PASID / 4] = 0;
        b[ERNIC_RN_AXIB_FUNC / 4] = 0;
        b[ERNIC_RN_AXIB_MAPCTL / 4] = 0xc0000000 | 0x2000000;
        b[ERNIC_RN_AXIB_RSVD / 4] = 0;
    }
}

/* open_rdma_dev(): the global registers, XRNICCONF and XRNICADCONF last. */
static void open_ernic(uint32_t ip)
{
    struct buf err = host_buf(256 * 16), ipk = host_buf(8192);
    struct buf resp = host_buf(65536);
    uint32_t lsb = rd(ERNIC_MACXADDLSB), msb = rd(ERNIC_MACXADDMSB);

    wr(ERNIC_IPKTERRQBA, ipk.pa);
    wr(ERNIC_IPKTERRQBAMSB, ipk.pa >> 32);
    wr(ERNIC_IPKTERRQSZ, 1024);
    wr(ERNIC_ERRBUFBA, err.pa);
    wr(ERNIC_ERRBUFBAMSB, err.pa >> 32);
    wr(ERNIC_ERRBUFSZ, (256u << 16) | 16);
    wr(ERNIC_RESPERRPKTBA, resp.pa);
    wr(ERNIC_RESPERRPKTBAMSB, resp.pa >> 32);
    wr(ERNIC_RESPERRSZ, 65536);
    wr(ERNIC_RESPERRSZMSB, 0);
    wr(ERNIC_INTEN, 0xff);
    wr(ERNIC_MACXADDLSB, lsb);
    wr(ERNIC_MACXADDMSB, msb);
    wr(ERNIC_IPv4XADD, ip);
    wr(ERNIC_XRNICCONF, (0x12b7u << 16) | (8 << 8) |
       ERNIC_XRNICCONF_ERRBUF_EN | ERNIC_XRNICCONF_EN);
    wr(ERNIC_XRNICADCONF, ERNIC_XRNICADCONF_RETRY_FATAL_DIS | (10 << 16));
}

/* allocate_rdma_pd(0), rdma_register_memory_region(): VA == bus address. */
static void register_mr(uint64_t addr, uint32_t len)
{
    uint32_t e = ERNIC_PDT_OFFSET(0);

    wr(e + ERNIC_PDPDNUM, 0);
    wr(e + ERNIC_VIRTADDRLSB, addr);
    wr(e + ERNIC_VIRTADDRMSB, addr >> 32);
    wr(e + ERNIC_BUFBASEADDRLSB, addr);
    wr(e + ERNIC_BUFBASEADDRMSB, addr >> 32);
    wr(e + ERNIC_BUFRKEY, RKEY);
    wr(e + ERNIC_WRRDBUFLEN, len);
    wr(e + ERNIC_ACCESSDESC, ERNIC_ACCESS_READ_WRITE);
}

struct qp {
    struct buf sq, cq, rq, db;
    uint32_t sq_pidb, rq_pidb;
};

/*
 * allocate_rdma_qp(), then config_last_rq_psn() and config_sq_psn(): the
 * QP is enabled before its PSNs are written.
 */
static void create_qp(struct qp *qp, const struct msg *peer)
{
    qp->sq = host_buf(DEPTH * ERNIC_WQE_SIZE);
    qp->cq = host_buf(DEPTH * 4);
    qp->db = host_buf(256);
    qp->rq = host_buf(HUGE);            /* slots 0..15 of 128 KiB */
    qwr(ERNIC_IPDESADDR1, peer->ip);
    qwr(ERNIC_MACDESADDLSB, peer->mac_lsb);
    qwr(ERNIC_MACDESADDMSB, peer->mac_msb);
    qwr64(ERNIC_SQBA, ERNIC_SQBAMSB, qp->sq.pa);
    qwr64(ERNIC_CQBA, ERNIC_CQBAMSB, qp->cq.pa);
    qwr64(ERNIC_RQBA, ERNIC_RQBAMSB, qp->rq.pa);
    qwr64(ERNIC_CQDBADD, ERNIC_CQDBADDMSB, qp->db.pa);
    qwr64(ERNIC_RQWPTRDBADD, ERNIC_RQWPTRDBADDMSB, qp->db.pa + 32);
    qwr(ERNIC_DESTQPCONF, QPN);
    qwr(ERNIC_QDEPTH, DEPTH | (DEPTH << 16));
    qwr(ERNIC_QPCONF, ERNIC_QPCONF_QP_EN | 0xc | 0x30 |
        (ERNIC_PMTU_4096 << ERNIC_QPCONF_PMTU_SHIFT) |
        (RQE_UNITS << ERNIC_QPCONF_RQBUFSZ_SHIFT));
    qwr(ERNIC_QPADVCONF, (0x1234u << 16) | (64 << 8));
    qwr(ERNIC_PD, 0);
    qwr(ERNIC_LSTRQREQ, (0x0au << 24) | PSN);
    qwr(ERNIC_SQPSN, PSN + 1);
}

/* create_a_wqe() at the next slot. */
static void wqe(struct qp *qp, uint32_t idx, uint8_t op, uint64_t laddr,
                uint32_t len, uint64_t raddr)
{
    uint8_t *w = (uint8_t *)qp->sq.va + (idx % DEPTH) * ERNIC_WQE_SIZE;

    memset(w, 0, ERNIC_WQE_SIZE);
    memcpy(w + ERNIC_WQE_WRID, &idx, 2);
    memcpy(w + ERNIC_WQE_LADDR, &laddr, 8);
    memcpy(w + ERNIC_WQE_LENGTH, &len, 4);
    w[ERNIC_WQE_OPCODE] = op;
    memcpy(w + ERNIC_WQE_ROFFSET, &raddr, 8);
    *(uint32_t *)(w + ERNIC_WQE_RTAG) = RKEY;
    __sync_synchronize();
}

/* rdma_post_batch_send(): SQPIi += n, then CQHEADi catching up with it. */
static bool post(struct qp *qp, uint32_t n, const char *what)
{
    uint32_t first = qp->sq_pidb;

    qp->sq_pidb += n;
    qwr(ERNIC_SQPI, qp->sq_pidb);
    if (!poll_reg(ERNIC_QP_OFFSET(QPN) + ERNIC_CQHEAD, 0xffff,
                  qp->sq_pidb & 0xffff)) {
        return false;
    }
    for (uint32_t k = first; k != qp->sq_pidb; k++) {
        /* The device writes the CQ behind the compiler's back. */
        uint32_t c = ((volatile uint32_t *)qp->cq.va)[k % DEPTH];

        if (c & ERNIC_CQE_ERRFLAG_MASK) {
            say("FAIL %s: CQE 0x%08x", what, c);
            failures++;
            return false;
        }
    }
    return true;
}

static void send_msg(struct msg *m)
{
    if (write(sock, m, sizeof(*m)) != sizeof(*m)) {
        die("side channel write");
    }
}

static void recv_msg(struct msg *m)
{
    size_t got = 0;

    while (got < sizeof(*m)) {
        ssize_t n = read(sock, (char *)m + got, sizeof(*m) - got);

        if (n <= 0) {
            errno = n ? errno : ECONNRESET;
            die("side channel read");
        }
        got += n;
    }
}

static void connect_side(const char *peer, bool server)
{
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons(TCP_PORT) };
    int one = 1;
    int s = socket(AF_INET, SOCK_STREAM, 0);

    if (server) {
        a.sin_addr.s_addr = INADDR_ANY;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(s, (void *)&a, sizeof(a)) || listen(s, 1)) {
            die("listen");
        }
        sock = accept(s, NULL, NULL);
        close(s);
    } else {
        inet_pton(AF_INET, peer, &a.sin_addr);
        for (int k = 0; connect(s, (void *)&a, sizeof(a)); k++) {
            if (k == 300) {
                die("connect");
            }
            usleep(100000);
        }
        sock = s;
    }
    if (sock < 0) {
        die("accept");
    }
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

enum { OP_WRITE = 1, OP_READ, OP_SEND, OP_BATCH, OP_DONE };

/* The client's side of each step; the server answers in serve(). */
static void client(struct qp *qp)
{
    static uint8_t tmp[MR_LEN];
    struct msg m;
    struct buf src;
    uint32_t idx = 0;

    /* write.c: card memory to the server's card memory. */
    m = (struct msg){ .op = OP_WRITE, .len = 65536, .seed = 11 };
    send_msg(&m);
    recv_msg(&m);
    fill(tmp, m.len, m.seed);
    card_write(LOCAL_OFF, tmp, m.len);
    wqe(qp, idx++, ERNIC_OP_WRITE, CARD(LOCAL_OFF), m.len, m.addr);
    post(qp, 1, "write");
    send_msg(&m);
    recv_msg(&m);
    say("%s write %u bytes card to card", m.status ? "FAIL" : "ok", m.len);
    failures += !!m.status;

    /* read.c: the server's card memory into ours. */
    m = (struct msg){ .op = OP_READ, .len = 131072, .seed = 12 };
    send_msg(&m);
    recv_msg(&m);
    wqe(qp, idx++, ERNIC_OP_READ, CARD(LOCAL_OFF + MR_LEN), m.len, m.addr);
    if (post(qp, 1, "read")) {
        card_read(LOCAL_OFF + MR_LEN, tmp, m.len);
        if (check("read", tmp, m.len, m.seed)) {
            say("ok read %u bytes card to card", m.len);
        }
    }

    /* send_recv.c: two SENDs into RQ buffers 0 and 1 (256-byte units). */
    m = (struct msg){ .op = OP_SEND, .len = 4096, .seed = 13 };
    send_msg(&m);
    for (uint32_t k = 0; k < 2; k++) {
        recv_msg(&m);
        poll_reg(ERNIC_QP_OFFSET(QPN) + ERNIC_STATRQPIDB, 0xffff, k + 1);
        qp->rq_pidb = qrd(ERNIC_STATRQPIDB);
        if (check("send", (uint8_t *)qp->rq.va + (qp->rq_pidb - 1) *
                  RQE_BYTES, m.len, m.seed + k)) {
            say("ok send/recv %u bytes into RQ buffer %u", m.len,
                qp->rq_pidb - 1);
        }
        qwr(ERNIC_RQCI, qp->rq_pidb);
        send_msg(&m);
    }

    /* write_batch.c: 32 WRITEs from hugepage memory behind one doorbell. */
    m = (struct msg){ .op = OP_BATCH, .len = 32 * 4096, .seed = 14 };
    send_msg(&m);
    recv_msg(&m);
    src = host_buf(HUGE);
    fill(src.va, m.len, m.seed);
    for (uint32_t k = 0; k < 32; k++) {
        wqe(qp, idx++, ERNIC_OP_WRITE, src.pa + k * 4096, 4096,
            m.addr + k * 4096);
    }
    post(qp, 32, "batch");
    send_msg(&m);
    recv_msg(&m);
    say("%s write batch of 32 x 4096 bytes, one doorbell (SQPI %u)",
        m.status ? "FAIL" : "ok", qp->sq_pidb);
    failures += !!m.status;

    m = (struct msg){ .op = OP_DONE };
    send_msg(&m);
}

/* The server: registers its region in card memory and checks results. */
static void serve(struct qp *qp)
{
    static uint8_t tmp[MR_LEN];
    struct msg m;
    struct buf src = host_buf(8192);
    uint32_t idx = 0;

    register_mr(CARD(MR_OFF), MR_LEN);
    for (;;) {
        recv_msg(&m);
        m.addr = CARD(MR_OFF);
        switch (m.op) {
        case OP_WRITE:
        case OP_BATCH:
            memset(tmp, 0, m.len);
            card_write(MR_OFF, tmp, m.len);
            send_msg(&m);
            recv_msg(&m);
            card_read(MR_OFF, tmp, m.len);
            m.status = !check(m.op == OP_WRITE ? "write" : "batch", tmp,
                              m.len, m.seed);
            send_msg(&m);
            break;
        case OP_READ:
            fill(tmp, m.len, m.seed);
            card_write(MR_OFF, tmp, m.len);
            send_msg(&m);
            break;
        case OP_SEND:
            for (uint32_t k = 0; k < 2; k++) {
                fill(src.va, m.len, m.seed + k);
                wqe(qp, idx++, ERNIC_OP_SEND, src.pa, m.len, 0);
                post(qp, 1, "send");
                send_msg(&m);
                recv_msg(&m);
            }
            break;
        case OP_DONE:
            return;
        default:
            say("FAIL unknown request %u", m.op);
            failures++;
            return;
        }
    }
}

/*
 * destroy_rdma_qp(): STATQPi clean, CQHEADi == SQPIi, then the QP's
 * pointers zeroed under the software override, disabled and under
 * recovery.
 */
static void destroy_qp(void)
{
    static const uint32_t zeroed[] = {
        ERNIC_RQWPTRDBADD, ERNIC_SQPI, ERNIC_CQHEAD, ERNIC_RQCI,
        ERNIC_STATRQPIDB, ERNIC_STATCURSQPTR, ERNIC_SQPSN, ERNIC_LSTRQREQ,
        ERNIC_STATMSN,
    };
    uint32_t st = qrd(ERNIC_STATQP);

    if ((st & 0xff) || ((st >> 9) & 3) != 3 ||
        qrd(ERNIC_CQHEAD) != qrd(ERNIC_SQPI)) {
        say("FAIL QP not idle at teardown: STATQP 0x%x CQHEAD %u SQPI %u",
            st, qrd(ERNIC_CQHEAD), qrd(ERNIC_SQPI));
        failures++;
    }
    wr(ERNIC_XRNICADCONF, rd(ERNIC_XRNICADCONF) | ERNIC_XRNICADCONF_SWO);
    qwr(ERNIC_QPCONF, qrd(ERNIC_QPCONF) & ~ERNIC_QPCONF_QP_EN);
    for (size_t k = 0; k < sizeof(zeroed) / sizeof(zeroed[0]); k++) {
        qwr(zeroed[k], 0);
    }
    qwr(ERNIC_QPCONF, qrd(ERNIC_QPCONF) | ERNIC_QPCONF_UNDER_RECOVERY);
    wr(ERNIC_XRNICADCONF, rd(ERNIC_XRNICADCONF) & ~ERNIC_XRNICADCONF_SWO);
    if (qrd(ERNIC_CQHEAD) || qrd(ERNIC_SQPI)) {
        say("FAIL teardown left CQHEAD %u SQPI %u", qrd(ERNIC_CQHEAD),
            qrd(ERNIC_SQPI));
        failures++;
    }
}

int main(int argc, char **argv)
{
    const char *res = NULL, *peer = NULL;
    uint32_t ip = 0;
    bool server = false;
    struct msg me = { 0 }, them;
    struct qp qp = { 0 };
    int opt, fd;

    while ((opt = getopt(argc, argv, "p:a:i:sc")) != -1) {
        switch (opt) {
        case 'p':
            res = optarg;
            break;
        case 'a':
            inet_pton(AF_INET, optarg, &ip);
            ip = ntohl(ip);
            break;
        case 'i':
            peer = optarg;
            break;
        case 's':
            server = true;
            break;
        case 'c':
            server = false;
            break;
        default:
            return 2;
        }
    }
    if (!res || !peer || !ip) {
        fprintf(stderr, "usage: %s -p RESOURCE2 -a ERNIC_IPV4 -i PEER_IPV4 "
                "(-s | -c)\n", argv[0]);
        return 2;
    }
    fd = open(res, O_RDWR | O_SYNC);
    if (fd < 0) {
        die(res);
    }
    bar = mmap(NULL, ERNIC_RN_SHELL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
               fd, 0);
    if (bar == MAP_FAILED) {
        die("mmap resource2");
    }
    mm_fd = open("/dev/reconic-mm", O_RDWR);
    if (mm_fd < 0) {
        die("/dev/reconic-mm");
    }
    huge = mmap(NULL, (size_t)NHUGE * HUGE, PROT_READ | PROT_WRITE,
                MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (huge == MAP_FAILED || mlock(huge, (size_t)NHUGE * HUGE)) {
        die("hugepages");
    }
    memset(huge, 0, (size_t)NHUGE * HUGE);
    bridge();
    open_ernic(ip);
    say("ERNIC at 0x%x of resource2, RESPHNDSTS 0x%x, hugepages at bus "
        "0x%llx", ERNIC_RN_ERNIC_BASE, rd(ERNIC_RESPHNDSTS),
        (unsigned long long)paddr(huge));

    connect_side(peer, server);
    me.mac_msb = rd(ERNIC_MACXADDMSB);
    me.mac_lsb = rd(ERNIC_MACXADDLSB);
    me.ip = ip;
    send_msg(&me);
    recv_msg(&them);
    create_qp(&qp, &them);
    /* Both QPs exist before the first request. */
    send_msg(&me);
    recv_msg(&them);
    if (server) {
        serve(&qp);
    } else {
        client(&qp);
    }
    destroy_qp();
    say("%s (%d failed)", failures ? "FAIL" : "PASS", failures);
    return !!failures;
}
