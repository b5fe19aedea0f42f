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
 *                     [-r REPS] [-b BUDGET]
 *   -r: after the fixed steps, the matrix of client_matrix(), REPS times
 *   -b: every completion within BUDGET reads of CQHEADi, as RecoNIC's
 *       poll_cq_cidb() (1000), else the operation fails
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
#define RQ_DEPTH        16              /* 16 buffers of 128 KiB: 2 MiB */
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
    uint32_t loc;                       /* matrix: MLOC_* */
    uint64_t addr2;                     /* matrix: the server's host region */
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

/*
 * allocate_rdma_pd(0), rdma_register_memory_region(): VA == bus address,
 * in MR entry @entry, whose R_Key is MR_KEY(@entry).
 */
#define MR_KEY(entry)   (((entry) << 8) | (RKEY & 0xff))
static void register_mr_at(uint32_t entry, uint64_t addr, uint32_t len)
{
    uint32_t e = ERNIC_PDT_OFFSET(entry);

    wr(e + ERNIC_PDPDNUM, 0);
    wr(e + ERNIC_VIRTADDRLSB, addr);
    wr(e + ERNIC_VIRTADDRMSB, addr >> 32);
    wr(e + ERNIC_BUFBASEADDRLSB, addr);
    wr(e + ERNIC_BUFBASEADDRMSB, addr >> 32);
    wr(e + ERNIC_BUFRKEY, MR_KEY(entry));
    wr(e + ERNIC_WRRDBUFLEN, len);
    wr(e + ERNIC_ACCESSDESC, ERNIC_ACCESS_READ_WRITE);
}

static void register_mr(uint64_t addr, uint32_t len)
{
    register_mr_at(0, addr, len);
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
    qp->rq = host_buf(HUGE);            /* RQ_DEPTH slots of 128 KiB */
    qwr(ERNIC_IPDESADDR1, peer->ip);
    qwr(ERNIC_MACDESADDLSB, peer->mac_lsb);
    qwr(ERNIC_MACDESADDMSB, peer->mac_msb);
    qwr64(ERNIC_SQBA, ERNIC_SQBAMSB, qp->sq.pa);
    qwr64(ERNIC_CQBA, ERNIC_CQBAMSB, qp->cq.pa);
    qwr64(ERNIC_RQBA, ERNIC_RQBAMSB, qp->rq.pa);
    qwr64(ERNIC_CQDBADD, ERNIC_CQDBADDMSB, qp->db.pa);
    qwr64(ERNIC_RQWPTRDBADD, ERNIC_RQWPTRDBADDMSB, qp->db.pa + 32);
    qwr(ERNIC_DESTQPCONF, QPN);
    qwr(ERNIC_QDEPTH, DEPTH | (RQ_DEPTH << 16));
    qwr(ERNIC_QPCONF, ERNIC_QPCONF_QP_EN | 0xc | 0x30 |
        (ERNIC_PMTU_4096 << ERNIC_QPCONF_PMTU_SHIFT) |
        (RQE_UNITS << ERNIC_QPCONF_RQBUFSZ_SHIFT));
    qwr(ERNIC_QPADVCONF, (0x1234u << 16) | (64 << 8));
    qwr(ERNIC_PD, 0);
    qwr(ERNIC_LSTRQREQ, (0x0au << 24) | PSN);
    qwr(ERNIC_SQPSN, PSN + 1);
}

/* create_a_wqe() at the next slot. */
static void wqe_key(struct qp *qp, uint32_t idx, uint8_t op, uint64_t laddr,
                    uint32_t len, uint64_t raddr, uint32_t rkey)
{
    uint8_t *w = (uint8_t *)qp->sq.va + (idx % DEPTH) * ERNIC_WQE_SIZE;

    memset(w, 0, ERNIC_WQE_SIZE);
    memcpy(w + ERNIC_WQE_WRID, &idx, 2);
    memcpy(w + ERNIC_WQE_LADDR, &laddr, 8);
    memcpy(w + ERNIC_WQE_LENGTH, &len, 4);
    w[ERNIC_WQE_OPCODE] = op;
    memcpy(w + ERNIC_WQE_ROFFSET, &raddr, 8);
    *(uint32_t *)(w + ERNIC_WQE_RTAG) = rkey;
    __sync_synchronize();
}

static void wqe(struct qp *qp, uint32_t idx, uint8_t op, uint64_t laddr,
                uint32_t len, uint64_t raddr)
{
    wqe_key(qp, idx, op, laddr, len, raddr, RKEY);
}

/*
 * -b: RecoNIC's patience. poll_cq_cidb() reads CQHEADi at most
 * TIMEOUT_THRESHOLD (1000) times before it reports a timeout, and a
 * single-operation call then fails. 0: 20 s, as the rest of this program.
 */
static unsigned budget;
static unsigned last_reads;             /* CQHEADi reads of the last post */
static unsigned over_budget;

/*
 * CQHEADi until it reaches @want. Past the budget the operation counts
 * as failed, as in RecoNIC; the wait goes on, unbudgeted, so that the
 * next operation starts from an idle QP.
 */
static bool poll_cq(uint32_t want, const char *what)
{
    uint32_t off = ERNIC_QP_OFFSET(QPN) + ERNIC_CQHEAD;

    for (last_reads = 1; (rd(off) & 0xffff) != want; last_reads++) {
        if (budget && last_reads == budget) {
            say("FAIL %s: poll_cq_cidb timeout, %u reads of CQHEADi", what,
                budget);
            failures++;
            over_budget++;
            poll_reg(off, 0xffff, want);
            return false;
        }
    }
    return true;
}

/* rdma_post_batch_send(): SQPIi += n, then CQHEADi catching up with it. */
static bool post(struct qp *qp, uint32_t n, const char *what)
{
    uint32_t first = qp->sq_pidb;
    bool ok;

    qp->sq_pidb += n;
    qwr(ERNIC_SQPI, qp->sq_pidb);
    if (budget) {
        ok = poll_cq(qp->sq_pidb & 0xffff, what);
    } else {
        ok = poll_reg(ERNIC_QP_OFFSET(QPN) + ERNIC_CQHEAD, 0xffff,
                      qp->sq_pidb & 0xffff);
    }
    if (!ok) {
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

enum {
    OP_WRITE = 1, OP_READ, OP_SEND, OP_BATCH, OP_DONE,
    OP_MATRIX, OP_MCHECK, OP_MFILL, OP_MRECV,   /* -r: the matrix */
};

/*
 * -r REPS: the matrix. READ, WRITE and SEND of 128 B, 4 KiB and 64 KiB,
 * from and to card memory and host memory, REPS times, each a single
 * operation behind its own doorbell (RecoNIC's read, write and
 * send_recv examples), each checked byte for byte over the side channel.
 * The regions are untouched before the first operation that writes them,
 * so the first WRITE into the server's card memory and the first READ
 * into ours show what first touch costs (issue 35).
 */
#define MLOC_LHOST      1               /* local buffer in host memory */
#define MLOC_RHOST      2               /* remote buffer in host memory */
#define M_LEN           0x10000
#define M_CARD_SRC      0x0800000       /* ours: WRITE and SEND sources */
#define M_CARD_DST      0x3000000       /* ours: READ targets */
#define M_SRV_CARD      0x2000000       /* the server's: MR entry 1 */
#define M_KEY_CARD      MR_KEY(1)
#define M_KEY_HOST      MR_KEY(2)
#define M_SIZES         3
#define M_CELLS         (3 * 4 * M_SIZES)
#define M_REPS_MAX      100

static const uint32_t m_size[M_SIZES] = { 128, 4096, 65536 };
static const char *const m_opname[] = { "write", "read", "send" };
/* "from->to": our buffer and the server's, in the direction data goes. */
static const char *m_where(unsigned op, unsigned loc)
{
    static char name[16];
    const char *me = loc & MLOC_LHOST ? "host" : "card";
    const char *peer = loc & MLOC_RHOST ? "host" : "card";

    if (op == 2) {
        return me;                      /* SENDs land in the server's RQ */
    }
    snprintf(name, sizeof(name), "%s->%s", op == 1 ? peer : me,
             op == 1 ? me : peer);
    return name;
}
static unsigned reps;
static double m_us[M_CELLS][M_REPS_MAX];
static unsigned m_reads[M_CELLS][M_REPS_MAX];

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double pct(double *v, unsigned n, unsigned p)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return v[(n - 1) * p / 100];
}

/* One operation of the matrix, timed from its doorbell to CQHEADi. */
static void m_one(struct qp *qp, struct buf *lhost, struct msg *srv,
                  unsigned op, unsigned loc, unsigned sz, unsigned rep)
{
    static uint8_t tmp[M_LEN];
    unsigned cell = (op * 4 + loc) * M_SIZES + sz;
    uint32_t len = m_size[sz], seed = cell * M_REPS_MAX + rep;
    uint64_t src = loc & MLOC_LHOST ? lhost->pa : CARD(M_CARD_SRC);
    uint64_t dst = loc & MLOC_LHOST ? lhost->pa : CARD(M_CARD_DST);
    uint64_t raddr = loc & MLOC_RHOST ? srv->addr2 : srv->addr;
    uint32_t rkey = loc & MLOC_RHOST ? M_KEY_HOST : M_KEY_CARD;
    static const uint8_t opcode[] = {
        ERNIC_OP_WRITE, ERNIC_OP_READ, ERNIC_OP_SEND,
    };
    struct msg m = { .len = len, .seed = seed, .loc = loc };
    double t0;

    if (op == 1) {
        m.op = OP_MFILL;                /* the server fills its region */
        send_msg(&m);
        recv_msg(&m);
    } else if (loc & MLOC_LHOST) {
        fill(lhost->va, len, seed);
    } else {
        fill(tmp, len, seed);
        card_write(M_CARD_SRC, tmp, len);
    }
    wqe_key(qp, qp->sq_pidb, opcode[op], op == 1 ? dst : src, len,
            op == 2 ? 0 : raddr, rkey);
    t0 = now();
    post(qp, 1, m_opname[op]);
    m_us[cell][rep] = (now() - t0) * 1e6;
    m_reads[cell][rep] = last_reads;
    if (op == 1) {
        if (loc & MLOC_LHOST) {
            memcpy(tmp, lhost->va, len);
        } else {
            card_read(M_CARD_DST, tmp, len);
        }
        check("matrix read", tmp, len, seed);
        return;
    }
    m.op = op == 0 ? OP_MCHECK : OP_MRECV;
    send_msg(&m);
    recv_msg(&m);
    if (m.status) {
        say("FAIL matrix %s %s %u: the server's check", m_opname[op],
            m_where(op, loc), len);
        failures++;
    }
}

/* Per cell: the first operation against the median of the others. */
static void m_report_cells(void)
{
    for (unsigned cell = 0; cell < M_CELLS; cell++) {
        unsigned op = cell / (4 * M_SIZES), loc = cell / M_SIZES % 4;
        double v[M_REPS_MAX];
        unsigned rmax = 0;

        if (op == 2 && (loc & MLOC_RHOST)) {
            continue;
        }
        for (unsigned r = 0; r < reps; r++) {
            v[r] = m_us[cell][r];
            rmax = rmax > m_reads[cell][r] ? rmax : m_reads[cell][r];
        }
        say("matrix %s %s %u: first %.0f us, later median %.0f us, max "
            "%.0f us, CQHEADi reads max %u", m_opname[op], m_where(op, loc),
            m_size[cell % M_SIZES], v[0],
            reps > 1 ? pct(v + 1, reps - 1, 50) : v[0],
            pct(v, reps, 100), rmax);
    }
}

static void m_report(unsigned nops)
{
    static double us[M_CELLS * M_REPS_MAX], rd[M_CELLS * M_REPS_MAX];
    unsigned n = 0;

    m_report_cells();
    for (unsigned cell = 0; cell < M_CELLS; cell++) {
        if (cell / (4 * M_SIZES) == 2 && (cell / M_SIZES % 4) & MLOC_RHOST) {
            continue;
        }
        for (unsigned r = 0; r < reps; r++, n++) {
            us[n] = m_us[cell][r];
            rd[n] = m_reads[cell][r];
        }
    }
    say("matrix: %u operations, %u over a budget of %u CQHEADi reads; "
        "doorbell to CQHEADi p50 %.0f us p99 %.0f us max %.0f us; CQHEADi "
        "reads p50 %.0f p99 %.0f max %.0f", nops, over_budget, budget,
        pct(us, n, 50), pct(us, n, 99), pct(us, n, 100), pct(rd, n, 50),
        pct(rd, n, 99), pct(rd, n, 100));
}

static void client_matrix(struct qp *qp)
{
    struct buf lhost = host_buf(M_LEN);
    struct msg srv = { .op = OP_MATRIX };
    unsigned nops = 0;
    int fail0 = failures;

    send_msg(&srv);
    recv_msg(&srv);
    for (unsigned rep = 0; rep < reps; rep++) {
        for (unsigned op = 0; op < 3; op++) {
            for (unsigned loc = 0; loc < 4; loc++) {
                if (op == 2 && (loc & MLOC_RHOST)) {
                    continue;           /* SENDs land in the server's RQ */
                }
                for (unsigned sz = 0; sz < M_SIZES; sz++, nops++) {
                    m_one(qp, &lhost, &srv, op, loc, sz, rep);
                }
            }
        }
    }
    m_report(nops);
    say("%s matrix of %u operations (%u failed)",
        failures == fail0 ? "ok" : "FAIL", nops, failures - fail0);
}

/* The server's side of the matrix: MR entries 1 and 2, fills, checks. */
static void serve_matrix_msg(struct qp *qp, struct msg *m, struct buf *host,
                             uint32_t *rx)
{
    static uint8_t tmp[M_LEN];
    uint32_t off = ERNIC_QP_OFFSET(QPN) + ERNIC_STATRQPIDB;
    const uint8_t *got = tmp;

    switch (m->op) {
    case OP_MATRIX:
        register_mr_at(1, CARD(M_SRV_CARD), M_LEN);
        register_mr_at(2, host->pa, M_LEN);
        m->addr = CARD(M_SRV_CARD);
        m->addr2 = host->pa;
        break;
    case OP_MFILL:
        fill(m->loc & MLOC_RHOST ? host->va : tmp, m->len, m->seed);
        if (!(m->loc & MLOC_RHOST)) {
            card_write(M_SRV_CARD, tmp, m->len);
        }
        break;
    case OP_MCHECK:
        if (m->loc & MLOC_RHOST) {
            got = host->va;
        } else {
            card_read(M_SRV_CARD, tmp, m->len);
        }
        m->status = !check("matrix write", got, m->len, m->seed);
        memset(tmp, 0, m->len);
        memset(host->va, 0, M_LEN);
        if (!(m->loc & MLOC_RHOST)) {
            card_write(M_SRV_CARD, tmp, m->len);
        }
        break;
    case OP_MRECV:
        *rx = (*rx + 1) % RQ_DEPTH;
        m->status = !poll_reg(off, 0xffff, *rx) ||
                    !check("matrix send", (uint8_t *)qp->rq.va +
                           (*rx + RQ_DEPTH - 1) % RQ_DEPTH * RQE_BYTES,
                           m->len, m->seed);
        qwr(ERNIC_RQCI, *rx);
        break;
    }
    send_msg(m);
}

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

    if (reps) {
        client_matrix(qp);
    }
    m = (struct msg){ .op = OP_DONE };
    send_msg(&m);
}

/* The server: registers its region in card memory and checks results. */
static void serve(struct qp *qp)
{
    static uint8_t tmp[MR_LEN];
    struct msg m;
    struct buf src = host_buf(8192), mhost = host_buf(M_LEN);
    uint32_t idx = 0, rx = 0;

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
        case OP_MATRIX:
        case OP_MFILL:
        case OP_MCHECK:
        case OP_MRECV:
            serve_matrix_msg(qp, &m, &mhost, &rx);
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

    while ((opt = getopt(argc, argv, "p:a:i:scr:b:")) != -1) {
        switch (opt) {
        case 'r':
            reps = strtoul(optarg, NULL, 0);
            reps = reps > M_REPS_MAX ? M_REPS_MAX : reps;
            break;
        case 'b':
            budget = strtoul(optarg, NULL, 0);
            break;
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
                "(-s | -c) [-r REPS] [-b BUDGET]\n", argv[0]);
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
