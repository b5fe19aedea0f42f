/*
 * Test rig for the ernic packet engine (qtest/ernic-rig.c), shared by the
 * engine qtests, the fuzzer, the soak and the benchmark: two ernic
 * devices in one QEMU, each on a socket netdev whose other end the
 * program holds, so that the program is the wire between them. Register
 * access and bring-up are the libqos driver's (qtest/libqos/ernic.c).
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
#define RIG_RAM_END     0x20000000ULL   /* -m 512: RAM is below it */

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

/*
 * One device: the libqos driver's view of it (its QEMU process, BARs,
 * MAC and IPv4 address), and what the rig adds.
 */
typedef struct ErnicRigDev {
    QErnic e;
    QPCIBus *bus;
    QPCIBar card;               /* layout=reconic: card memory */
    uint64_t card_size;
    int fd;                     /* the test's end of the netdev */
    uint32_t sqpi;              /* producer index of QP_A/QP_B, unwrapped */
    uint32_t xrc_srqn;          /* ERNIC-X XRC: the SRQ WQEs name */
} ErnicRigDev;

typedef struct ErnicRig {
    QTestState *qts;            /* device 0's process */
    bool two_procs;             /* one QEMU process per device */
    ErnicRigDev d[NDEV];
} ErnicRig;

/*
 * A wire filter decides what to do with a frame from device @from:
 * forward, drop, duplicate, hold back (reorder it after the next one),
 * truncate it to Wire.cut bytes, or flip bit Wire.flip of it.
 */
typedef enum ErnicRigVerdict {
    ERNIC_RIG_FWD,
    ERNIC_RIG_DROP,
    ERNIC_RIG_DUP,
    ERNIC_RIG_HOLD,
    ERNIC_RIG_TRUNC,
    ERNIC_RIG_FLIP,
} ErnicRigVerdict;
typedef ErnicRigVerdict (*ErnicRigFilter)(void *opaque, int from,
                                          const uint8_t *f, size_t len);

/*
 * A wire that drops or duplicates about one frame in @permille, from a
 * seeded xorshift (filter opaque: an ErnicRigLossy).
 */
typedef struct ErnicRigLossy {
    uint64_t rng;
    unsigned permille;
    unsigned dropped, duplicated;
} ErnicRigLossy;
ErnicRigVerdict ernic_rig_lossy_filter(void *opaque, int from,
                                       const uint8_t *f, size_t len);

static inline uint32_t ernic_rig_le32(const void *p)
{
    return (uint32_t)ldl_le_p(p);
}

static inline uint32_t ernic_rig_be32(const void *p)
{
    return (uint32_t)ldl_be_p(p);
}

/* Offsets within a frame the test built or captured (IPv4). */
#define F_IP            14
#define F_UDP           34
#define F_BTH           42
#define F_EXT           54

/* Build an IPv4 RoCEv2 frame the way the spec says, with a valid ICRC. */
size_t ernic_rig_frame(uint8_t *f, const ErnicRigDev *src,
                       const ErnicRigDev *dst, uint8_t opcode, uint32_t dqpn,
                       uint32_t psn, bool ackreq, const uint8_t *ext,
                       size_t ext_len, const uint8_t *pay, size_t paylen);

/*
 * Rig: two devices in one QEMU, each on a socket netdev.
 */

void ernic_rig_attach(ErnicRig *r, int i, QTestState *qts, QPCIBus *bus);

/* layout=reconic: QDMA bridge window @w of device @i (docs/boards.md). */
void ernic_rig_rn_window(ErnicRig *r, int i, uint32_t w, uint64_t xlate,
                         uint32_t mapctl);

/*
 * The windows as RecoNIC's create_rn_dev() programs them, eight of
 * 128 GiB, identity. Until then every engine access to host memory is
 * refused, as on the card.
 */
void ernic_rig_rn_bridge(ErnicRig *r, int i);

/*
 * Start the rig's QEMU with @devopts added to each -device (an '@' in it
 * stands for the device's number, 0 or 1) and @extra options; the devices
 * are attached by ernic_rig_attach_all() (after an incoming migration,
 * once it has loaded).
 */
void ernic_rig_launch_dev(ErnicRig *r, const char *devopts, const char *extra);
void ernic_rig_attach_all(ErnicRig *r);
/* Both at once, with @extra options. */
ErnicRig *ernic_rig_start(const char *extra);

/*
 * Two QEMU processes, one device each, joined by a QEMU netdev: @nd0 and
 * @nd1 are the -netdev options of each ("stream,..." or "dgram,...").
 */
ErnicRig *ernic_rig_start_procs(const char *nd0, const char *nd1);
/* The same with @extra on each QEMU's command line. */
ErnicRig *ernic_rig_start_procs_extra(const char *nd0, const char *nd1,
                                      const char *extra);
/*
 * The two joined by -netdev stream over the AF_UNIX socket @path, device
 * 0's QEMU listening, with @extra; returns 200 ms after starting the
 * other, which connects (retrying every 20 ms) in that time.
 */
ErnicRig *ernic_rig_start_unix(const char *path, const char *extra);
/* The same with device 0's QEMU listening (@dev0_accepts) or connecting. */
ErnicRig *ernic_rig_start_unix_as(const char *path, const char *extra,
                                  bool dev0_accepts);

void ernic_rig_stop(ErnicRig *r);

/* Counter @name of "fault-stats" of device ern@i (docs/debugging.md). */
uint64_t ernic_rig_fault_stat(ErnicRig *r, int i, const char *name);
/* ERNIC registers of device @i: global, and of QP @qpn. */
uint32_t ernic_rig_rd(ErnicRig *r, int i, uint32_t off);
void ernic_rig_wr(ErnicRig *r, int i, uint32_t off, uint32_t val);
uint32_t ernic_rig_qrd(ErnicRig *r, int i, uint32_t qpn, uint32_t off);
void ernic_rig_qwr(ErnicRig *r, int i, uint32_t qpn, uint32_t off,
                   uint32_t val);
/* A 64-bit address into a QP's register pair @lo, @hi. */
void ernic_rig_qwr64(ErnicRig *r, int i, uint32_t qpn, uint32_t lo,
                     uint32_t hi, uint64_t val);

/*
 * Global configuration, PG332 ch.6 "Global configuration", with the error
 * records at ERRBUF_OFF and FATALQ_OFF, and the MR both peers target.
 */
void ernic_rig_setup_global(ErnicRig *r, int i, uint32_t ackgen);

typedef struct ErnicRigQpCfg {
    uint32_t pmtu;              /* ERNIC_PMTU_* */
    uint32_t rqbuf;             /* bytes */
    uint32_t rq_depth;
    uint32_t timeout;           /* TIMEOUTCONF[5:0] */
    uint32_t retry;
    uint32_t rnr_retry;
    uint32_t rnr_timer;
    bool loopback;              /* peer is on the same device */
} ErnicRigQpCfg;

/* PMTU 1024, RQ_DEPTH buffers of 1 MiB, retries 7, timeout 14. */
extern const ErnicRigQpCfg ernic_rig_default_cfg;

/* Connect QP @qpn of device @i to QP @dqpn of device @peer. */
void ernic_rig_setup_qp(ErnicRig *r, int i, uint32_t qpn, int peer,
                        uint32_t dqpn, uint32_t sqpsn, uint32_t rqpsn,
                        const ErnicRigQpCfg *cfg, uint64_t qbase);

#define PSN_A   0x123456
#define PSN_B   0xfffff0        /* wraps through 0 */
/* QP_A of device 0 and QP_B of device 1, connected, from PSN_A/PSN_B. */
void ernic_rig_connect_pair(ErnicRig *r, const ErnicRigQpCfg *cfg);

/*
 * For many QPs at once: QP @qpn of device @i to the same QP of the other,
 * from PSN_A both ways, PMTU 4096, its queues packed in
 * ERNIC_RIG_PACKED_QP bytes at @base (SQ of SQ_DEPTH WQEs, CQ, doorbells,
 * two RQ buffers of 4 KiB); its CQ at @base + ERNIC_RIG_PACKED_CQ.
 */
#define ERNIC_RIG_PACKED_QP     0x4000
#define ERNIC_RIG_PACKED_CQ     0x1000
void ernic_rig_setup_packed_qp(ErnicRig *r, int i, uint32_t qpn,
                               uint64_t base);

/*
 * The wire
 */

/* A frame from the test's end @fd of a netdev, if one is there. */
bool ernic_rig_wire_read(int fd, uint8_t *f, size_t *len);
void ernic_rig_wire_write(int fd, const uint8_t *f, size_t len);

/* The next frame device @i sends, stepping the clock until it comes. */
size_t ernic_rig_wire_wait(ErnicRig *r, int i, uint8_t *f);

/* Read device 1's frames until the READ response of @psn; none a NAK. */
void ernic_rig_read_until_response(ErnicRig *r, uint32_t psn);

/* Add frame @f to @burst, as the socket netdev frames it. */
void ernic_rig_burst_add(GByteArray *burst, const uint8_t *f, size_t len);

/* Send @f to device 1 and return the next frame it answers with. */
size_t ernic_rig_exchange(ErnicRig *r, const uint8_t *f, size_t len,
                          uint8_t *ans);
/*
 * Send one single-packet request from device 0 to QP @qpn of device 1;
 * asserts that the answer is an ACK or NAK and returns its AETH syndrome.
 */
uint8_t ernic_rig_request(ErnicRig *r, uint32_t qpn, uint8_t opcode,
                          uint32_t psn, const uint8_t *ext, size_t ext_len,
                          size_t paylen);

/* Entry @n of device @i's incoming packet error status queue (p.17). */
uint32_t ernic_rig_fatal_entry(ErnicRig *r, int i, int n);

typedef struct ErnicRigWire {
    ErnicRigFilter filter;
    void *opaque;
    uint8_t held[FRAME_MAX];    /* one frame held back for reordering */
    size_t held_len;
    int held_from;
    unsigned frames[NDEV];      /* frames seen from each device */
    int64_t step_ns;            /* virtual time per idle turn */
    size_t cut;                 /* TRUNC: the length it is cut to */
    size_t flip;                /* FLIP: the bit it flips */
} ErnicRigWire;

/* Move frames between the devices until @cond holds (20 s at most). */
#define ERNIC_RIG_PUMP(r, w, cond)                                          \
    do {                                                                    \
        gint64 deadline_ = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;   \
        while (!(cond)) {                                                   \
            g_assert(g_get_monotonic_time() < deadline_);                   \
            ernic_rig_pump_once(r, w);                                      \
        }                                                                   \
    } while (0)

/* One turn: every frame waiting through @w's filter, else a clock step. */
void ernic_rig_pump_once(ErnicRig *r, ErnicRigWire *w);

/*
 * Work requests
 */

/* A WQE on the SQ at @sq of QP @qpn, and its SQPIi doorbell. */
void ernic_rig_post(ErnicRig *r, int i, uint32_t qpn, uint64_t sq,
                    uint16_t wrid, uint8_t opcode, uint64_t laddr, uint32_t len,
                    uint64_t raddr, uint32_t rkey, uint32_t imm,
                    const uint8_t *sdata);

/*
 * ERNIC-X: entry @idx of device @i's extended MR table written through
 * the MR window (docs/extension.md, "Registers"); returns MRSTS. @key
 * is MRKEY: the key byte and the state.
 */
uint32_t ernic_rig_xmr(ErnicRig *r, int i, uint32_t idx, uint32_t key,
                       uint32_t pd, uint32_t acc, uint64_t iova, uint64_t len,
                       uint64_t pbl, uint32_t npages);

/* Completion of everything posted: CQHEAD == SQPI (see ernic_comp.c). */
bool ernic_rig_all_done(ErnicRig *r, int i, uint32_t qpn);
/* CQE @n of device @i's QP at DEV_BASE(i). */
uint32_t ernic_rig_cqe(ErnicRig *r, int i, uint32_t n);
/* @n pattern bytes of @seed. */
void ernic_rig_fill(uint8_t *p, size_t n, uint32_t seed);

/* Write @n pattern bytes to guest memory; returns them. */
uint8_t *ernic_rig_put_pattern(ErnicRig *r, uint64_t addr, size_t n,
                               uint32_t seed);

/* Guest memory at @addr holds @want. */
void ernic_rig_assert_mem(ErnicRig *r, uint64_t addr, const uint8_t *want,
                          size_t n);

/*
 * QEMU refuses "-device ernic,@devopts": it exits with an error whose
 * message holds @msg.
 */
void ernic_rig_assert_refused(const char *devopts, const char *msg);

/* CPU time (user + system) the QEMU process has used, in clock ticks. */
uint64_t ernic_rig_cpu_ticks(QTestState *qts);

/*
 * The main loop is idle: over one of three windows of @ms of wall time
 * with nothing to do, QEMU used less than a fifth of a CPU. A bottom half
 * that reschedules itself for ever (a spin) uses all of one in every
 * window; work left over from before (page faults, the RCU thread) or a
 * host so loaded that one window's accounting is off does not last three.
 */
void ernic_rig_assert_idle(QTestState *qts, unsigned ms);

/*
 * Helpers of the tests that play a peer (ernic-fatal-test.c,
 * ernic-hardening-test.c)
 */

#define ERRFLAG         (1u << ERNIC_CQE_ERRFLAG_SHIFT)
#define CQE(op, wrid)   (((uint32_t)(op) << ERNIC_CQE_OPCODE_SHIFT) | (wrid))
#define POLL_MAX        100000

/* Poll a register as a driver does, stepping virtual time meanwhile. */
void ernic_rig_poll_reg(ErnicRig *r, int i, uint32_t off, uint32_t mask,
                        uint32_t want);

#define QOFF(qpn, reg)  (ERNIC_QP_OFFSET(qpn) + (reg))

/* STATQPi[22:16]: the syndrome of the last NAK the QP received (p.40). */
uint32_t ernic_rig_nak_syndrome(ErnicRig *r, int i, uint32_t qpn);

/* Poll until CQHEADi == SQPIi (all posted WQEs completed). */
void ernic_rig_poll_cqhead(ErnicRig *r, int i, uint32_t qpn);
/* Word @off of error buffer entry @n of device @i. */
uint32_t ernic_rig_errbuf_word(ErnicRig *r, int i, uint32_t n, uint32_t off);

/*
 * What every FATAL must leave behind (PG332 p.17, Table 2-4, pp.14, 45):
 * one status queue entry {QP, code}, INTSTS[7], STATQPi[0], and each
 * outstanding WQE completed with ERRFLAG; a WQE posted afterwards
 * completes with ERRFLAG too, and nothing more leaves the QP.
 */
void ernic_rig_check_fatal(ErnicRig *r, int i, uint32_t qpn, uint16_t code,
                           uint32_t first_cqe);

/*
 * The error buffer holds exactly @n entries, the last with @synd (0 for a
 * FATAL whose cause is not a Table 2-3 check) and @frame.
 */
void ernic_rig_check_errbuf(ErnicRig *r, int i, uint32_t n, uint32_t synd,
                            const uint8_t *frame);

/* A request from "device 0" to QP @dqpn of device 1, built by the test. */
size_t ernic_rig_inject(ErnicRig *r, uint8_t *f, uint8_t opcode, uint32_t dqpn,
                        uint32_t psn, const uint8_t *ext, size_t ext_len,
                        size_t paylen);

/* A response from "device 1" to QP A of device 0, built by the test. */
size_t ernic_rig_respond(ErnicRig *r, uint8_t *f, uint8_t opcode, uint32_t psn,
                         const uint8_t *ext, size_t ext_len, size_t paylen);

/* A RETH (IBTA 9.3.3.1) at @p; returns @p. */
uint8_t *ernic_rig_reth(uint8_t *p, uint64_t va, uint32_t rkey, uint32_t len);

/*
 * FATAL and its recovery, shared by the FATAL and migration tests
 */

/*
 * A remote access error between two real devices: device 0 WRITEs with a
 * key device 1 does not know. Device 1 NAKs (0x62) and goes FATAL with
 * 0x15; device 0 receives the NAK and goes FATAL with 0x0A.
 */
void ernic_rig_cause_remote_access(ErnicRig *r, uint16_t wrid);

typedef struct ErnicRigReinit {
    uint32_t sqpsn;             /* the QP's new first PSN */
    uint32_t rqpsn;             /* the peer's new first PSN */
    uint8_t ttl;                /* QPADVCONFi, re-programmed (step 12) */
} ErnicRigReinit;

/*
 * "QP Fatal Recovery" (PG332 pp.62-63), every step in order, with its
 * polls, for QP @qpn of device @i whose FATAL entry is @entry of the
 * status queue. @peer is the device of the QP it is connected to.
 * Clearing traffic first: the QP ends disabled and under recovery.
 */
void ernic_rig_fatal_clear(ErnicRig *r, int i, uint32_t qpn, uint32_t entry,
                           uint16_t code);

/* Then re-initialisation: the QP ends enabled with @ri's PSNs and TTL. */
void ernic_rig_fatal_reinit(ErnicRig *r, int i, uint32_t qpn, int peer,
                            const ErnicRigReinit *ri);

/* Both, one after the other. */
void ernic_rig_fatal_recovery(ErnicRig *r, int i, uint32_t qpn, int peer,
                              uint32_t entry, uint16_t code,
                              const ErnicRigReinit *ri);

/* Capture the first frame each device sends. */
typedef struct ErnicRigFirst {
    uint8_t f[NDEV][FRAME_MAX];
    bool seen[NDEV];
} ErnicRigFirst;

/*
 * Traffic on a connected pair, verified byte for byte: from each side a
 * SEND, a WRITE and a READ of several packets.
 */
void ernic_rig_traffic(ErnicRig *r, ErnicRigFirst *first, uint32_t seed);

#endif /* ERNIC_RIG_H */
