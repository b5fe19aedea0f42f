/*
 * ERNIC (Xilinx/AMD PG332 v3.1) device core: register file, interrupts and
 * queue state. No PCI or QOM knowledge lives here; hw/rdma/ernic.c is the
 * PCI glue.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_ERNIC_CORE_H
#define HW_RDMA_ERNIC_CORE_H

#include "exec/hwaddr.h"
#include "qemu/log.h"
#include "ernic_qemu.h"
#include "hw/rdma/ernic_regs.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "qemu/timer.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "qemu/event_notifier.h"
#include "ernic_wire.h"

#define ERNIC_PDT_WORDS     (ERNIC_PDT_STRIDE / 4)
#define ERNIC_GCSR_WORDS    (ERNIC_GCSR_SIZE / 4)
#define ERNIC_QP_WORDS      (ERNIC_QP_STRIDE / 4)

/* ERNIC-X global registers: 0x38000..0x3807F. */
#define ERNIC_EXT_WORDS     (0x80 / 4)
#define ERNIC_EXT_W(off)    (((off) - ERNIC_EXT_BASE) / 4)
#define ERNIC_EXT_QP_WORDS  (ERNIC_EXT_QP_STRIDE / 4)
#define ERNIC_EXT_SRQ_WORDS (ERNIC_EXT_SRQ_STRIDE / 4)
#define ERNIC_EXT_AH_WORDS  (ERNIC_EXT_AH_SIZE / 4)
#define ERNIC_EXT_AH_W(off) (((off) - ERNIC_EXT_AH_BASE) / 4)
#define ERNIC_EXT_MC_WORDS  (ERNIC_EXT_MC_SIZE / 4)
#define ERNIC_EXT_MC_W(off) (((off) - ERNIC_EXT_MC_BASE) / 4)

/* Register word index within its block. */
#define ERNIC_W(off)        ((off) / 4)
#define ERNIC_GW(off)       (((off) - ERNIC_GCSR_BASE) / 4)

/*
 * A field of a register value, by its mask in ernic_regs.h, as the Linux
 * driver's FIELD_GET()/FIELD_PREP() take the same masks: the masks are
 * stated once, for the device, the qtests and the driver.
 */
#define ERNIC_FIELD_EX32(v, mask) \
    extract32((v), ctz32(mask), ctpop32(mask))
#define ERNIC_FIELD_DP32(v, mask, f) \
    deposit32((v), ctz32(mask), ctpop32(mask), (f))

/* Fields of a PG332 PD/MR table entry @mr (c->pdt[i], p.31). */
static inline uint64_t ernic_pdt_va(const uint32_t *mr)
{
    return ((uint64_t)mr[ERNIC_W(ERNIC_VIRTADDRMSB)] << 32) |
           mr[ERNIC_W(ERNIC_VIRTADDRLSB)];
}

static inline uint64_t ernic_pdt_len(const uint32_t *mr)
{
    return ((uint64_t)ERNIC_FIELD_EX32(mr[ERNIC_W(ERNIC_ACCESSDESC)],
                                       ERNIC_ACCESSDESC_LENMSB_MASK) << 32) |
           mr[ERNIC_W(ERNIC_WRRDBUFLEN)];
}

/* Its access type allows a remote WRITE (@write) or READ. */
static inline bool ernic_pdt_allows(const uint32_t *mr, bool write)
{
    uint32_t acc = mr[ERNIC_W(ERNIC_ACCESSDESC)] & ERNIC_ACCESSDESC_TYPE_MASK;

    return acc == ERNIC_ACCESS_READ_WRITE ||
           acc == (write ? ERNIC_ACCESS_WRITE_ONLY : ERNIC_ACCESS_READ_ONLY);
}

/* Outstanding WQEs per QP (PG332 Table 3-2: 16 write-retry buffers/QP). */
#define ERNIC_OSQ_DEPTH     16
/* Incoming READ requests held per QP (PG332 p.22; XIB max_qp_rd_atom). */
#define ERNIC_READ_RES      16
/*
 * Transmit window, in request packets beyond the oldest unacknowledged
 * PSN: it starts at ERNIC_TXW_START, grows on ACKs up to one
 * write-retry buffer per packet (PG332 Table 2-6,
 * C_MAX_WR_RETRY_DATA_BUF_DEPTH: 512 buffers of 4 KiB) and halves on
 * every retry, down to ERNIC_TXW_FLOOR (docs/engine.md, choice 12).
 */
#define ERNIC_TXW_FLOOR     16
#define ERNIC_TXW_START     64
#define ERNIC_TXW_MAX       512
/*
 * Packets (or WQEs completed) one QP may handle per turn of the transmit
 * bottom half, and all QPs together per turn: a turn is bounded whatever
 * the guest programmed (docs/security.md).
 */
#define ERNIC_TX_BUDGET     64
/* Entries the ImmDt stream FIFO holds while the DMA cannot take them. */
#define ERNIC_IMMDT_FIFO    64
#define ERNIC_TURN_BUDGET   1024
/* Frames held for internal loopback before further ones are dropped. */
#define ERNIC_LOOPBACK_MAX  4096

/*
 * An access through a memory region, checked once (ernic_mr.c): for a
 * contiguous region @addr is the bus address of its first byte; for a
 * paged one (@pbl set) it is the offset of that byte from the start of
 * the first page, translated through the page list at each DMA.
 */
typedef struct ErnicMrAccess {
    uint64_t addr;
    uint64_t pbl;
    uint32_t npages;
    uint8_t shift;
    bool paged;                 /* pbl is a page list (it may be at 0) */
} ErnicMrAccess;

/* An SGE of an ERNIC-X WQE, its L_Key checked when sampled. */
typedef struct ErnicSge {
    ErnicMrAccess a;
    uint32_t len;
} ErnicSge;

/* A WQE taken from the SQ and not yet completed (requester state). */
typedef struct ErnicOsq {
    uint16_t slot;
    uint16_t wrid;
    uint8_t opcode;             /* ERNIC_OP_* or a reserved value */
    bool error;                 /* complete with ERRFLAG, never sent */
    bool done;                  /* may complete once older ones have */
    bool local;                 /* REG_MR/LOCAL_INV: done at fetch */
    uint32_t psn;               /* first PSN */
    uint32_t npkts;             /* PSNs it consumes */
    uint64_t laddr;
    uint64_t raddr;             /* UD: [23:0] dest. QPN, [63:32] Q_Key */
    uint32_t len;
    uint32_t pmtu;              /* QPCONFi PMTU when fetched: fixes npkts */
    uint32_t rkey;              /* UD: the AH index */
    uint32_t imm;
    uint8_t sdata[ERNIC_WQE_SDATA_MAX];
    uint8_t nsge;               /* ERNIC-X keyed SGEs, 0: LADDR */
    ErnicSge sge[ERNIC_XWQE_SGES];
    uint32_t read_pkts;         /* READ: response packets received */
    uint32_t read_base;         /* READ: first packet last asked for */
    uint32_t read_reask;        /* READ: read_pkts + 1 when re-asked */
    uint32_t xrc_srqn;          /* XRC initiator: the remote XRC SRQ */
} ErnicOsq;

/* An entry of ERNIC-X's extended MR table (docs/extension.md). */
typedef struct ErnicExtMr {
    uint8_t state;              /* ERNIC_MR_FREE, _INVALID, _VALID */
    uint8_t key;
    uint8_t shift;              /* page shift */
    uint32_t pd;
    uint32_t acc;               /* MRACC */
    uint32_t npages;
    uint64_t iova;
    uint64_t len;
    uint64_t pbl;               /* page list, or base of a physical MR */
    uint32_t parent;            /* a bound window: its region's index + 1 */
} ErnicExtMr;

/* An entry of ERNIC-X's address handle table (feature UD). */
typedef struct ErnicAh {
    bool valid;
    bool ipv6;
    uint8_t ttl;
    uint8_t tclass;
    uint32_t pd;
    uint8_t mac[6];
    uint8_t ip[16];             /* IPv4 in the first 4 bytes */
} ErnicAh;

/* A group of ERNIC-X's multicast table (feature MCAST). */
typedef struct ErnicMcg {
    bool valid;
    bool ipv6;
    uint8_t ip[16];             /* IPv4 in the first 4 bytes */
    uint32_t qps[ERNIC_MCG_QP_WORDS];   /* bit b: QP b + 1 */
} ErnicMcg;

/* An incoming READ request being answered (responder state). */
typedef struct ErnicReadRes {
    uint32_t psn;
    uint32_t npkts;
    uint32_t sent;              /* response packets sent */
    ErnicMrAccess mr;           /* the source, checked when accepted */
    uint32_t len;
    uint32_t pmtu;              /* QPCONFi PMTU when accepted */
    uint32_t msn;
    bool replay;                /* queued again for a duplicate */
    bool atomic;                /* an atomic: one ATOMIC ACKNOWLEDGE ... */
    uint64_t orig;              /* ... with the value it found */
} ErnicReadRes;

/*
 * A READ request accepted earlier: a duplicate is answered again only
 * within the PSN range of one of these (IBTA 9.7.5.1.1, C9-86).
 */
typedef struct ErnicReadHist {
    uint32_t psn;
    uint32_t npkts;             /* 0: unused */
    bool atomic;                /* an atomic executed (IBTA 9.4.5) ... */
    uint64_t orig;              /* ... and the value it found */
} ErnicReadHist;

/* The message the responder is in the middle of (PG332 "opcode seq"). */
typedef enum ErnicRxMsg {
    ERNIC_RX_IDLE,              /* next request must be a FIRST or ONLY */
    ERNIC_RX_SEND,
    ERNIC_RX_WRITE,
} ErnicRxMsg;

/* QP context state, derived from QPCONFi and STATQPi (ernic_qp.c). */
typedef enum ErnicQpState {
    ERNIC_QPS_DISABLED,         /* QPCONFi[0] = 0: packets dropped */
    ERNIC_QPS_ENABLED,          /* QPCONFi[0] = 1: in service */
    ERNIC_QPS_FATAL,            /* STATQPi[0] = 1: stopped, flushing */
    ERNIC_QPS_RECOVERY,         /* QPCONFi[6] = 1: being cleared */
} ErnicQpState;

typedef struct ErnicQP {
    uint32_t regs[ERNIC_QP_WORDS];
    uint32_t ext_regs[ERNIC_EXT_QP_WORDS];  /* ERNIC-X per-QP block */
    struct ErnicCore *core;
    uint32_t qpn;
    ErnicQpState state;         /* as last traced */
    bool db_warned;             /* ernic_req_can_run() has logged */
    /* CQHEADi and STATRQPIDBi as last read: a vCPU spinning on them */
    uint32_t polled[2];
    /*
     * Send queue position of the next WQE to fetch, as a slot index
     * (0 .. SQ depth - 1). Not a register: STATCURSQPTRi reports it.
     */
    uint16_t sq_next;
    /* Completed WQEs, as a slot index (0 .. SQ depth - 1). */
    uint16_t cq_next;

    /* Requester: outstanding queue, oldest first (ring). */
    ErnicOsq osq[ERNIC_OSQ_DEPTH];
    uint32_t osq_head;
    uint32_t osq_count;
    uint32_t tx_idx;            /* osq entry being sent (relative) */
    uint32_t tx_pkt;            /* its next packet */
    uint32_t sent_psn;          /* PSN after the newest one ever sent */
    uint32_t tx_window;         /* packets, ERNIC_TXW_FLOOR .. _MAX */
    uint32_t tx_ssthresh;       /* above it the window grows by one */
    /*
     * While a retry sends again packets the peer has (tx_resend), the
     * window counts from tx_base, the oldest of them not yet answered,
     * instead of STATRESPSNi (ernic_req.c).
     */
    uint32_t tx_base;
    bool tx_resend;
    uint32_t retries_left;
    uint32_t rnr_left;
    bool rnr_wait;              /* RNR NAK timer running */
    QEMUTimer *retry_timer;
    QEMUTimer *rnr_timer;

    /* Responder. */
    uint8_t rx_msg;             /* ErnicRxMsg */
    /*
     * The RQ buffer of the current SEND, sampled from the registers when
     * its FIRST packet arrived, so that a guest rewriting RQBAi, QDEPTHi
     * or QPCONFi mid-message cannot move or resize it.
     */
    uint64_t rq_addr;
    uint32_t rq_size;
    uint32_t rq_depth;
    uint32_t rq_off;            /* bytes of the current SEND in its buffer */
    uint32_t rq_slot;           /* its RQ slot (STATRQPIDBi at FIRST) */
    bool rq_held;               /* the current message has taken the slot */
    bool rx_inv;                /* ... and invalidated its IETH's key */
    bool rx_wqe;                /* the slot is an ERNIC-X receive WQE */
    uint8_t rx_status;          /* its metadata status */
    bool rx_srq;                /* its WQE came from an SRQ ... */
    uint32_t rx_srq_n;          /* ... this one */
    uint32_t rx_srq_wqe;        /* ... at this index */
    uint32_t xrc_srq;           /* XRC target: the request's SRQ ... */
    uint32_t xrc_pd;            /* ... and its PD (ernic_xrc.c) */
    ErnicSge rx_sge[ERNIC_RWQE_SGES];
    ErnicMrAccess wr_mr;        /* the current WRITE's target */
    uint64_t wr_off;            /* offset of its next byte in wr_mr */
    uint32_t wr_left;           /* bytes the current WRITE may still carry */
    bool nak_sent;              /* PSN sequence NAK sent, not yet recovered */
    bool ack_pending;           /* coalesced ACK owed (XRNICCONF[4:3]) */
    bool ack_held;              /* an ACK/NAK waits for READ responses */
    uint8_t held_synd;          /* ... its AETH syndrome, PSN and MSN */
    uint32_t held_psn;
    uint32_t held_msn;
    ErnicReadRes rd[ERNIC_READ_RES];
    uint32_t rd_head;
    uint32_t rd_count;          /* resources still being answered */
    ErnicReadHist rd_hist[ERNIC_READ_RES];
    uint32_t rd_hist_next;
    uint32_t fault_cqe_left;    /* injected error CQEs (ernic_fault.c) */
    QEMUTimer *ack_timer;
    /* ERNIC-X DBREC through an ioeventfd (ernic_dbrec.c) */
    EventNotifier db_notifier;
    bool db_armed;              /* db_notifier is on SQPIi's address */
    bool db_armed_udb;          /* ... and on the doorbell page's */
} ErnicQP;

typedef struct ErnicCore ErnicCore;

/*
 * Fault injection (ernic_fault.c, docs/debugging.md): host configuration,
 * never machine state.
 */
#define ERNIC_FAULT_RULES       8
/* Frames delay/reorder may hold, and their bytes (frames a peer sends). */
#define ERNIC_FAULT_HELD_MAX    4096
#define ERNIC_FAULT_HELD_BYTES  (16u << 20)
#define ERNIC_FAULT_RX          1
#define ERNIC_FAULT_TX          2

typedef enum ErnicFaultAct {
    ERNIC_FA_DROP,
    ERNIC_FA_DUP,
    ERNIC_FA_REORDER,
    ERNIC_FA_DELAY,
    ERNIC_FA_CORRUPT,
    ERNIC_FA_NAK,
    ERNIC_FA_N,
} ErnicFaultAct;

typedef enum ErnicFaultField {
    ERNIC_FF_ICRC,
    ERNIC_FF_PSN,
    ERNIC_FF_OPCODE,
    ERNIC_FF_DQPN,
    ERNIC_FF_BYTE,
    ERNIC_FF_N,
} ErnicFaultField;

typedef enum ErnicFaultCount {
    ERNIC_FC_FATAL,
    ERNIC_FC_FATAL_DIRECT,
    ERNIC_FC_CQE_ERROR,
    ERNIC_FC_NAK,
    ERNIC_FC_DROP,
    ERNIC_FC_DUP,
    ERNIC_FC_REORDER,
    ERNIC_FC_DELAY,
    ERNIC_FC_CORRUPT,
    ERNIC_FC_LINK_DOWN,
    ERNIC_FC_LINK_UP,
    ERNIC_FC_MAP_REFUSE,
    ERNIC_FAULT_NCOUNT,
} ErnicFaultCount;

/* A wire fault: the frames it matches, what is done to them. */
typedef struct ErnicFaultRule {
    ErnicFaultAct act;
    uint8_t dirs;               /* ERNIC_FAULT_RX | ERNIC_FAULT_TX */
    int32_t qpn;                /* local QP; -1: any */
    int16_t opcode;             /* BTH opcode; -1: any */
    uint32_t left;              /* frames it may still hit; MAX: no end */
    uint32_t percent;           /* share of matching frames hit */
    uint64_t rng;               /* xorshift64* state, from the seed */
    int64_t delay_ns;
    uint8_t field;              /* ErnicFaultField (corrupt) */
    uint32_t offset;            /* ... its byte offset (field=byte) */
    uint32_t xor;
    uint8_t syndrome;           /* AETH syndrome (nak) */
} ErnicFaultRule;

typedef struct ErnicFault {
    bool armed;                 /* anything to do: the fast paths test it */
    ErnicFaultRule rule[ERNIC_FAULT_RULES];
    uint32_t nrules;
    GQueue held;                /* delayed or reordered frames, by due */
    size_t held_bytes;
    QEMUTimer *timer;
    uint16_t last_code;         /* FATAL code the engine last raised */
    bool rx_defer;              /* passing a looped-back frame */
    /* map-refuse: mappings that may still succeed, then those refused */
    uint32_t map_skip;
    uint32_t map_refuse;
    uint64_t count[ERNIC_FAULT_NCOUNT];
} ErnicFault;

/*
 * A frame held in lo_queue for ernic_link_loopback_bh(), allocated to its
 * exact size so that a sanitizer build sees any read past its end.
 */
typedef struct ErnicHeldFrame {
    size_t len;
    uint8_t data[];
} ErnicHeldFrame;

/*
 * Put a frame of @n pieces on the wire; false when the backend queued
 * it (a copy) and will call ernic_link_resume() once it can take more.
 */
typedef bool (*ErnicTxFn)(void *opaque, const struct iovec *iov,
                          unsigned n);

struct ErnicCore {
    PCIDevice *owner;           /* DMA master and interrupt source */
    /*
     * Timers and ioeventfds at work, which QEMU's re-entrancy guard does
     * not cover: their DMA is checked against the device's own BARs
     * (ernic_dma_timer_enter()).
     */
    unsigned dma_unguarded;
    uint32_t num_qp;            /* C_NUM_QP */
    uint8_t mac[6];             /* board MAC: reset value of MACXADD* */
    ErnicTxFn tx;
    void *tx_opaque;
    /* The two callbacks up the layers (ernic_up.h), set at realize. */
    void (*up_rx)(struct ErnicCore *c, const uint8_t *buf, size_t len);
    void (*up_qp_stop)(struct ErnicCore *c, uint32_t qpn);

    uint32_t pdt[ERNIC_PDT_ENTRIES][ERNIC_PDT_WORDS];
    uint32_t gcsr[ERNIC_GCSR_WORDS];
    ErnicQP qp[ERNIC_NUM_QP_MAX + 1];   /* indexed by QPN; [0] unused */

    /*
     * Doorbell and transmit work is done in a bottom half, never in MMIO,
     * and only while the VM runs (ernic_core_vm_state()).
     */
    VMChangeStateEntry *vmse;
    QEMUBH *sq_bh;
    unsigned long sq_pending[BITS_TO_LONGS(ERNIC_NUM_QP_MAX + 1)];
    uint32_t sq_rr;             /* QP the next turn starts with */
    bool tx_blocked;            /* backend queue full */
    /*
     * Inside the backend's transmit call: a frame delivered now (a hub
     * delivers synchronously) waits in lo_queue, so that receive never
     * runs in the middle of transmit (docs/security.md).
     */
    bool in_tx;
    /* Payload mapped in place when it can be (ernic_xmit.c; x-tx-map). */
    bool tx_map;
    /*
     * The frame being built (RoCE or Ethernet path); per instance, as a
     * peer on the same hub has its own.
     */
    uint8_t frame[ERNIC_ETH_FRAME_MAX];

    /* Frames to our own MAC, and frames that came in during transmit. */
    QEMUBH *lo_bh;
    GQueue lo_queue;

    /* Ethernet path (ernic_eth.c) */
    uint32_t eth[ERNIC_ETH_BAR_SIZE / 4];
    QEMUBH *eth_bh;

    /* ImmDt DMA (ernic_immdt.c): registers, stream FIFO, IOC count */
    uint32_t immdt[ERNIC_IMMDT_SIZE / 4];
    uint64_t immdt_fifo[ERNIC_IMMDT_FIFO];
    uint32_t immdt_head;
    uint32_t immdt_count;
    uint32_t immdt_off;         /* bytes of the oldest entry written */
    uint32_t immdt_left;        /* packets before the next IOC_Irq */
    QEMUTimer *immdt_timer;     /* PG021 interrupt delay timer */

    /* ERNIC-X (ernic_ext.c); without the ext property mrt is NULL. */
    uint32_t ext_regs[ERNIC_EXT_WORDS];
    ErnicExtMr *mrt;
    uint32_t mr_entries;
    uint32_t srq_regs[ERNIC_SRQ_NUM][ERNIC_EXT_SRQ_WORDS];  /* ernic_srq.c */
    uint32_t ah_regs[ERNIC_EXT_AH_WORDS];                   /* ernic_ud.c */
    ErnicAh *aht;               /* with the MR table: ah_entries */
    uint32_t ah_entries;        /* ERNIC_AH_ENTRIES, or 0 without ext */
    uint32_t mc_regs[ERNIC_EXT_MC_WORDS];                   /* ernic_mcast.c */
    ErnicMcg mcg[ERNIC_MCG_ENTRIES];

    /*
     * ERNIC-X DBREC (ernic_dbrec.c): SQPIi writes of QPs with doorbell
     * records become ioeventfds of these regions (db-eventfd property).
     */
    bool db_eventfd;
    MemoryRegion *db_regs;      /* BAR0's registers */
    MemoryRegion *db_udb;       /* BAR3, the doorbell pages, or NULL */

    ErnicFault fault;
    bool link_down;             /* the netdev's link (set_link) */

    /*
     * layout=reconic (ernic_reconic.c): the shell whose bridge windows
     * every host access goes through, and the card memory the engine
     * reaches at ERNIC_RN_CARD_ADDR. NULL on the default layout.
     */
    struct ErnicReconic *rn;
    MemoryRegion *card;
    uint8_t *card_ptr;
    uint64_t card_size;
};

/* RecoNIC's shell: the BARs of a RecoNIC card (docs/boards.md). */
typedef struct ErnicReconic {
    MemoryRegion bar;           /* BAR2: the library's resource2 */
    MemoryRegion shell;         /* the rest of it: reads 0 */
    MemoryRegion axib;          /* QDMA AXI bridge windows */
    MemoryRegion own_card;      /* card memory without card-memdev */
    MemoryRegion *card;         /* BAR4: card memory, own or a backend's */
    uint32_t axib_regs[ERNIC_RN_AXIB_WINDOWS * ERNIC_RN_AXIB_STRIDE / 4];
} ErnicReconic;

/* Register accessors, for every layer. */
static inline uint32_t ernic_qp_reg(ErnicCore *c, uint32_t qpn, hwaddr off)
{
    return c->qp[qpn].regs[ERNIC_W(off)];
}

/*
 * The PD that QP @qpn's keys are checked against: PDi, or for an ERNIC-X
 * XRC target QP the PD of the XRC SRQ its request names (IBTA 9.3.2: a
 * target has none of its own), set for each request by ernic_xrc.c.
 */
static inline uint32_t ernic_qp_pd(ErnicCore *c, uint32_t qpn)
{
    const ErnicQP *qp = &c->qp[qpn];
    uint32_t conf = qp->ext_regs[ERNIC_W(ERNIC_EXTQPCONF)];

    if (c->mrt &&
        (c->ext_regs[ERNIC_EXT_W(ERNIC_EXTCTRL)] & ERNIC_EXT_F_XRC) &&
        (conf & (ERNIC_EXTQPCONF_XRC_TGT | ERNIC_EXTQPCONF_UD |
                 ERNIC_EXTQPCONF_UC)) == ERNIC_EXTQPCONF_XRC_TGT) {
        return qp->xrc_pd;
    }
    return ernic_qp_reg(c, qpn, ERNIC_PD) & 0xffffff;
}

static inline void ernic_qp_set_reg(ErnicCore *c, uint32_t qpn, hwaddr off,
                                    uint32_t val)
{
    c->qp[qpn].regs[ERNIC_W(off)] = val;
}

static inline uint32_t ernic_gcsr(ErnicCore *c, hwaddr off)
{
    return c->gcsr[ERNIC_GW(off)];
}

static inline void ernic_gcsr_set(ErnicCore *c, hwaddr off, uint32_t val)
{
    c->gcsr[ERNIC_GW(off)] = val;
}

static inline uint64_t ernic_qp_addr(ErnicCore *c, uint32_t qpn, hwaddr lo,
                                     hwaddr hi)
{
    return ((uint64_t)ernic_qp_reg(c, qpn, hi) << 32) |
           ernic_qp_reg(c, qpn, lo);
}

/* The board's MAC address (MACXADDMSB, MACXADDLSB). */
static inline void ernic_gcsr_mac(ErnicCore *c, uint8_t *mac)
{
    stw_be_p(mac, ernic_gcsr(c, ERNIC_MACXADDMSB));
    stl_be_p(mac + 2, ernic_gcsr(c, ERNIC_MACXADDLSB));
}

/* Statistics: add 1 to the 16-bit half of a global counter register. */
static inline void ernic_gcsr_count16(ErnicCore *c, hwaddr reg, bool high)
{
    uint32_t v = ernic_gcsr(c, reg);

    if (high) {
        v = (v & 0xffff) | ((v + 0x10000) & 0xffff0000);
    } else {
        v = (v & 0xffff0000) | ((v + 1) & 0xffff);
    }
    ernic_gcsr_set(c, reg, v);
}

static inline void ernic_gcsr_count32(ErnicCore *c, hwaddr reg)
{
    ernic_gcsr_set(c, reg, ernic_gcsr(c, reg) + 1);
}

/* The SEND opcodes of Table 2-1 (WQE opcodes). */
static inline bool ernic_op_is_send(uint8_t opcode)
{
    return opcode == ERNIC_OP_SEND || opcode == ERNIC_OP_SEND_IMM ||
           opcode == ERNIC_OP_SEND_INV;
}

/* The atomic WQE opcodes of ERNIC-X (docs/extension.md, "Atomics"). */
static inline bool ernic_op_is_atomic(uint8_t opcode)
{
    return opcode == ERNIC_OP_ATOMIC_CMP_SWP ||
           opcode == ERNIC_OP_ATOMIC_FETCH_ADD;
}

/* ERNIC-X's FLUSH and ATOMIC WRITE (docs/extension.md, "Placement"). */
static inline bool ernic_op_is_place(uint8_t opcode)
{
    return opcode == ERNIC_OP_ATOMIC_WRITE || opcode == ERNIC_OP_FLUSH;
}

/*
 * A WQE whose result comes back in responses (READ, and ERNIC-X's
 * atomics, FLUSH and ATOMIC WRITE): one request packet, done only once
 * its responses arrived.
 */
static inline bool ernic_op_reads(uint8_t opcode)
{
    return opcode == ERNIC_OP_READ || ernic_op_is_atomic(opcode) ||
           ernic_op_is_place(opcode);
}

/* PSN arithmetic modulo 2^24: negative when a is before b. */
static inline int32_t ernic_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

/*
 * Whether the engine may work: not while the VM is stopped, so that a
 * migration or snapshot saves all it did and nothing it does after.
 */
static inline bool ernic_may_run(void)
{
    return runstate_is_running();
}

/* The ImmDt DMA's interrupt: DMACR[14:12] enable DMASR[14:12] bit for bit. */
static inline bool ernic_immdt_irq_pending(ErnicCore *c)
{
    return c->immdt[ERNIC_IMMDT_S2MM_DMASR / 4] &
           c->immdt[ERNIC_IMMDT_S2MM_DMACR / 4] & ERNIC_DMASR_IRQS;
}

/*
 * The functions of each device file, by layer from the bottom up
 * (docs/engine.md, "Layers"): a file calls only the files above it in
 * this list, and goes up only through ernic_up.h. The wire format
 * (ernic_wire.c, ernic_crc32.c) is declared in ernic_wire.h.
 */

/* ernic_reconic.c: RecoNIC's shell, its bridge windows and card memory */
bool ernic_reconic_init(ErnicReconic *rn, ErnicCore *c, Object *owner,
                        MemoryRegion *regs, MemoryRegion *card,
                        uint64_t card_size, Error **errp);
void ernic_reconic_exit(ErnicReconic *rn, DeviceState *owner);
void ernic_reconic_reset(ErnicReconic *rn);
/* A DMA that falls in the card: true (and *@ok) if it was taken. */
bool ernic_reconic_dma(ErnicCore *c, uint64_t addr, void *rbuf,
                       const void *wbuf, uint64_t len, bool *ok);
extern const VMStateDescription ernic_vmstate_reconic;

/*
 * ernic_dma.c: every DMA goes through these. They trace a failure and
 * return false, and the caller applies the hardware reaction of
 * docs/errors.md ("DMA errors"). DMA that would reach the device's own
 * BARs is refused: by QEMU's re-entrancy guard, which QEMU engages
 * around MMIO handlers and guarded bottom halves and the net layer
 * around receive, and in timers and ioeventfd handlers, which run
 * outside it, by the device itself (ernic_dma_timer_enter()).
 */
bool ernic_dma_read(ErnicCore *c, uint64_t addr, void *buf, uint64_t len);
bool ernic_dma_write(ErnicCore *c, uint64_t addr, const void *buf,
                     uint64_t len);
/*
 * Guest RAM to read in place, or NULL (then read it with
 * ernic_dma_read()); unmapped before the main loop turns, so that no
 * mapping outlives the guest's memory map or migration.
 */
const void *ernic_dma_map(ErnicCore *c, uint64_t addr, uint32_t len);
void ernic_dma_unmap(ErnicCore *c, const void *p, uint32_t len);
/*
 * Around a timer's or an ioeventfd's work: its DMA may not reach the
 * device's own BARs, and it counts as ernic code on the stack
 * (ernic_dma_enter()).
 */
void ernic_dma_timer_enter(ErnicCore *c);
void ernic_dma_timer_exit(ErnicCore *c);
/*
 * ernic code on the stack, of every ernic in the process: MMIO handlers,
 * bottom halves, receive and timers enter and leave. A doorbell is served
 * within its MMIO write only when that write is all there is
 * (ernic_dma_alone(); docs/security.md, rule 4).
 */
void ernic_dma_enter(void);
void ernic_dma_leave(void);
bool ernic_dma_alone(void);
/*
 * No ernic code on the stack: an access from a vCPU itself, not from an
 * ernic's DMA. Only then may the BQL go (a spinning vCPU's yield).
 */
bool ernic_dma_idle(void);

/* ernic_irq.c: the ERNIC interrupt (vector 0) and the board's (1) */
void ernic_irq_update(ErnicCore *c, bool notify);
void ernic_irq_raise(ErnicCore *c, uint32_t causes);
/* A cause with a per-QP bank: WQE completion, RQ packet received. */
void ernic_irq_raise_qp(ErnicCore *c, uint32_t cause, uint32_t qpn);
void ernic_irq_eth(ErnicCore *c, bool notify);

/* ernic_immdt.c: the ImmDt DMA, in BAR4 next to the Ethernet path */
void ernic_immdt_push(ErnicCore *c, uint32_t qpn, uint8_t type,
                      uint32_t data, uint32_t rq_pi);
uint64_t ernic_immdt_read(ErnicCore *c, hwaddr addr);
void ernic_immdt_write(ErnicCore *c, hwaddr addr, uint32_t val);
void ernic_immdt_reset(ErnicCore *c);
void ernic_immdt_realize(ErnicCore *c);
void ernic_immdt_unrealize(ErnicCore *c);

/* ernic_ext.c: ERNIC-X, its registers, MR table and user QP rules */
void ernic_ext_realize(ErnicCore *c, uint32_t mr_entries);
void ernic_ext_unrealize(ErnicCore *c);
void ernic_ext_reset(ErnicCore *c);
void ernic_ext_written(ErnicCore *c, hwaddr addr, uint32_t old);
/* The features this device has (EXTFEAT, the discovery capability). */
uint32_t ernic_ext_features(bool reconic);
/* Whether the driver has turned @feature (ERNIC_EXT_F_*) on. */
bool ernic_ext_on(ErnicCore *c, uint32_t feature);
bool ernic_ext_rx_meta_on(ErnicCore *c, uint32_t qpn);
bool ernic_ext_rx_wqe_on(ErnicCore *c, uint32_t qpn);
bool ernic_ext_xwqe_on(ErnicCore *c, uint32_t qpn);
/* Entry @idx of the extended MR table, or NULL past its end. */
const ErnicExtMr *ernic_ext_mr(ErnicCore *c, uint32_t idx);
/* Whether an entry satisfies the table's invariants (MRSTS 2 if not). */
bool ernic_ext_mr_valid(const ErnicExtMr *m);
/* Fast registration WQEs (docs/extension.md, "Fast registration"). */
bool ernic_ext_local_op(ErnicCore *c, uint8_t op);
bool ernic_ext_exec_local(ErnicCore *c, uint32_t qpn, const ErnicOsq *e);
uint16_t ernic_ext_remote_inv(ErnicCore *c, uint32_t qpn, uint32_t rkey);
bool ernic_ext_user_qp(ErnicCore *c, uint32_t qpn);
bool ernic_ext_user_wqe_ok(ErnicCore *c, uint32_t qpn, const ErnicOsq *e,
                           uint8_t nsge);

/* ernic_mw.c: ERNIC-X memory windows */
/* Before entry @idx changes: unbind the windows bound to it. */
void ernic_mw_region_changes(ErnicCore *c, uint32_t idx);
bool ernic_mw_bind(ErnicCore *c, uint32_t qpn, const ErnicOsq *e);
bool ernic_mw_invalidate(ErnicCore *c, uint32_t qpn, uint32_t rkey);

/* ernic_mcast.c: ERNIC-X multicast groups */
void ernic_mcast_written(ErnicCore *c, hwaddr addr);
uint32_t ernic_mcast_receive(ErnicCore *c, const ErnicPkt *pkt);

/* ernic_atomic.c: ERNIC-X atomics, requester and responder */
bool ernic_atomic_qp(ErnicCore *c, uint32_t qpn);
bool ernic_atomic_responder(ErnicCore *c, uint32_t qpn);
bool ernic_atomic_accept(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                         ErnicPkt *at);
bool ernic_atomic_wqe_ok(ErnicCore *c, uint32_t qpn, const ErnicOsq *e);
uint8_t ernic_atomic_bth_opcode(const ErnicOsq *e);
uint8_t *ernic_atomic_put_eth(uint8_t *p, const ErnicOsq *e);
bool ernic_atomic_take_ack(ErnicCore *c, const ErnicOsq *e,
                           const ErnicPkt *pkt);
/* Execute @pkt: 0 and *@orig, or the FATAL code and its NAK in *@nak. */
uint16_t ernic_atomic_execute(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                              uint64_t *orig, uint8_t *nak);
void ernic_atomic_send_ack(ErnicCore *c, uint32_t qpn, const ErnicReadRes *r);

/* ernic_place.c: ERNIC-X FLUSH and ATOMIC WRITE, requester and responder */
bool ernic_place_qp(ErnicCore *c, uint32_t qpn);
bool ernic_place_accept(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                        ErnicPkt *pl);
bool ernic_place_wqe_ok(ErnicCore *c, uint32_t qpn, const ErnicOsq *e);
uint8_t ernic_place_bth_opcode(const ErnicOsq *e);
size_t ernic_place_ext_len(const ErnicOsq *e);
uint8_t *ernic_place_put_ext(uint8_t *p, const ErnicOsq *e);
uint16_t ernic_place_execute(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                             uint8_t *nak);

/* ernic_uc.c: ERNIC-X UC QPs */
bool ernic_uc_qp(ErnicCore *c, uint32_t qpn);
bool ernic_uc_opcode_ok(uint8_t opcode);
bool ernic_uc_accept(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                     ErnicPkt *uc);
void ernic_uc_drop(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                   const char *why);
bool ernic_uc_check_psn(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt);

/* ernic_ud.c: ERNIC-X UD QPs and their address handles */
void ernic_ud_written(ErnicCore *c, hwaddr addr);
bool ernic_ud_qp(ErnicCore *c, uint32_t qpn);
void ernic_ud_send(ErnicCore *c, uint32_t qpn, ErnicOsq *e, uint8_t *f);
void ernic_ud_receive(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt);

/* ernic_xrc.c: ERNIC-X XRC initiator and target QPs, XRC SRQs */
bool ernic_xrc_tgt(ErnicCore *c, uint32_t qpn);
bool ernic_xrc_ini(ErnicCore *c, uint32_t qpn);
bool ernic_xrc_accept(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                      ErnicPkt *x);
bool ernic_xrc_bind(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt);
bool ernic_xrc_take(ErnicCore *c, uint32_t qpn);
bool ernic_xrc_write_back(ErnicCore *c, uint32_t qpn, const uint8_t *m);
void ernic_xrc_stop(ErnicCore *c, uint32_t qpn);
uint32_t ernic_xrc_wqe_srqn(ErnicCore *c, uint32_t qpn, const uint8_t *wqe);
uint8_t *ernic_xrc_put_eth(uint8_t *p, const ErnicOsq *e);

/* ernic_srq.c: ERNIC-X shared receive queues and their doorbell pages */
void ernic_srq_written(ErnicCore *c, uint32_t n, hwaddr off, uint32_t old);
bool ernic_srq_attached(ErnicCore *c, uint32_t qpn);
uint32_t ernic_srq_of(ErnicCore *c, uint32_t qpn);
bool ernic_srq_xrc_of(ErnicCore *c, uint32_t n, uint32_t xrcd, uint32_t *pd);
bool ernic_srq_take(ErnicCore *c, uint32_t qpn, uint32_t n, uint64_t *addr);
bool ernic_srq_wqe_ok(ErnicCore *c, uint32_t qpn, const uint8_t *w);

/*
 * ernic_mr.c: every byte the engine moves through a key. Checks return
 * 0 and fill @a, or the PG332 FATAL code (0x15, 0x16, 0x17).
 */
uint16_t ernic_mr_check_rkey(ErnicCore *c, uint32_t qpn, uint32_t rkey,
                             uint64_t va, uint64_t len, bool write,
                             ErnicMrAccess *a);
uint16_t ernic_mr_check_flush(ErnicCore *c, uint32_t qpn, uint32_t rkey,
                              uint64_t va, uint64_t len, bool whole);
uint16_t ernic_mr_check_atomic(ErnicCore *c, uint32_t qpn, uint32_t rkey,
                               uint64_t va, ErnicMrAccess *a);
uint16_t ernic_mr_check_lkey(ErnicCore *c, uint32_t qpn, uint32_t lkey,
                             uint64_t va, uint64_t len, uint32_t need,
                             ErnicMrAccess *a);
/* DMA at offset @off of a checked access; false on a DMA error. */
bool ernic_mr_read(ErnicCore *c, const ErnicMrAccess *a, uint64_t off,
                   void *buf, uint32_t len);
bool ernic_mr_write(ErnicCore *c, const ErnicMrAccess *a, uint64_t off,
                    const void *buf, uint32_t len);
/* ERNIC-X SGEs: sampled and checked once, then DMA through them. */
uint64_t ernic_mr_sge_take(ErnicCore *c, uint32_t qpn, const uint8_t *w,
                           unsigned n, uint32_t need, ErnicSge *sge,
                           bool *key_bad);
bool ernic_mr_sge_dma(ErnicCore *c, const ErnicSge *sge, unsigned n,
                      uint64_t off, uint8_t *rbuf, const uint8_t *wbuf,
                      uint32_t len);
/*
 * The one payload path: a message of @n keyed SGEs, or with none the
 * @total bytes at bus address @laddr (PG332's LADDR, an RQ buffer) as a
 * one-entry physical SGE. ernic_mr_msg_walk() gives @fn the bus address
 * of each run of @len bytes at @off that is contiguous on the bus, in
 * order, and stops at the first false (a failed page-list read is one).
 */
typedef bool (*ErnicMrSegFn)(ErnicCore *c, uint64_t bus, uint32_t len,
                             void *opaque);
bool ernic_mr_msg_walk(ErnicCore *c, const ErnicSge *sge, unsigned n,
                       uint64_t laddr, uint32_t total, uint64_t off,
                       uint32_t len, ErnicMrSegFn fn, void *opaque);
bool ernic_mr_msg_dma(ErnicCore *c, const ErnicSge *sge, unsigned n,
                      uint64_t laddr, uint32_t total, uint64_t off,
                      uint8_t *rbuf, const uint8_t *wbuf, uint32_t len);

/* ernic_err.c: the error buffer and the status queue */
void ernic_err_log(ErnicCore *c, const uint8_t *buf, size_t len,
                   uint32_t synd);
void ernic_err_count_invalid(ErnicCore *c, uint32_t synd, uint32_t qpn);
/*
 * A received packet failed a PG332 Table 2-3 check: count it, log it in
 * the error buffer with syndrome @synd, raise INTSTS[0].
 */
void ernic_err_rx(ErnicCore *c, const uint8_t *buf, size_t len,
                  uint32_t synd, uint32_t qpn);
void ernic_err_status(ErnicCore *c, uint32_t qpn, uint16_t code);

/* ernic_qp.c: QP context, its state and FATAL */
ErnicQpState ernic_qp_state(ErnicCore *c, uint32_t qpn);
void ernic_qp_note_state(ErnicCore *c, uint32_t qpn);
/* Path MTU of a QP in bytes (QPCONFi[10:8]; reserved codes mean 4096). */
uint32_t ernic_qp_pmtu(ErnicCore *c, uint32_t qpn);
void ernic_qp_path(ErnicCore *c, uint32_t qpn, ErnicPath *p);
bool ernic_qp_xrc(ErnicCore *c, uint32_t qpn);
bool ernic_qp_dbrec_read(ErnicCore *c, uint32_t qpn, uint32_t off,
                         uint64_t *addr, uint32_t *idx);
void ernic_qp_src_ip(ErnicCore *c, uint8_t *ip, bool ipv6);
/* QP @qpn's path turned round: from its peer to this device. */
void ernic_qp_peer_path(ErnicCore *c, uint32_t qpn, ErnicPath *p);
/* STATQPi's queue bits and counts, STATCURSQPTRi, from the engine. */
void ernic_qp_update_status(ErnicCore *c, uint32_t qpn);
/* Retry and RNR counts from TIMEOUTCONFi. */
void ernic_qp_reload_counts(ErnicCore *c, uint32_t qpn);
void ernic_qp_statqp_written(ErnicCore *c, uint32_t qpn);
/* QP entered the FATAL state (PG332 Table 2-4, p.17). */
void ernic_qp_fatal(ErnicCore *c, uint32_t qpn, uint16_t code);
/*
 * A guest error that makes QP @qpn FATAL with @code: logged as
 * LOG_GUEST_ERROR with the QP's number first, then ernic_qp_fatal(),
 * which traces it (as hw/nvme's NVME_GUEST_ERR logs and traces at once).
 */
#define ERNIC_GUEST_FATAL(c, qpn, code, fmt, ...)                      \
    do {                                                               \
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u " fmt "\n",        \
                      (uint32_t)(qpn), ## __VA_ARGS__);                \
        ernic_qp_fatal((c), (qpn), (code));                            \
    } while (0)
/*
 * A received packet moves QP @qpn to FATAL @code: it is logged in the
 * error buffer whatever XRNICCONF[5] says (PG332 p.33, ERRBUFBA), with the
 * Table 2-3 syndrome @synd (0 when the cause is not a Table 2-3 check).
 */
void ernic_qp_rx_fatal(ErnicCore *c, const ErnicPkt *pkt, uint32_t synd,
                       uint32_t qpn, uint16_t code);

/* ernic_link.c: frames to and from the netdev, loopback, wire faults */
void ernic_link_realize(ErnicCore *c);
void ernic_link_unrealize(ErnicCore *c);
void ernic_link_reset(ErnicCore *c);
/* Send a frame of QP @qpn (0: the Ethernet path). */
void ernic_link_xmit(ErnicCore *c, uint32_t qpn, const uint8_t *buf,
                     size_t len);
/*
 * Whether a frame to @dst goes straight to the backend: no wire fault
 * armed, not to ourselves, not multicast. Only such a frame may be sent
 * as iovecs, with ernic_link_xmitv(): nothing of it is kept.
 */
bool ernic_link_direct(ErnicCore *c, const uint8_t *dst);
void ernic_link_xmitv(ErnicCore *c, const struct iovec *iov, unsigned n);
/* A frame from the netdev. */
void ernic_link_receive(ErnicCore *c, const uint8_t *buf, size_t len);
/* Past fault injection: to the wire (or loopback), and from it. */
void ernic_link_put(ErnicCore *c, const uint8_t *buf, size_t len);
void ernic_link_take(ErnicCore *c, const uint8_t *buf, size_t len);
/* Queue a frame for ernic_link_loopback_bh(); dropped when it is full. */
void ernic_link_defer(ErnicCore *c, const uint8_t *buf, size_t len);
void ernic_link_loopback_bh(void *opaque);
/* The backend can take frames again. */
void ernic_link_resume(ErnicCore *c);
extern const char *const ernic_link_fault_acts[ERNIC_FA_N];
void ernic_link_fault_rearm(ErnicCore *c);
void ernic_link_fault_flush(ErnicCore *c);

/*
 * ernic_xmit.c: a packet with payload, its payload mapped in place or
 * copied. ernic_xmit_init() takes the headers the caller built at @f up
 * to @end; ernic_xmit_gather() reads or maps the payload (false when a
 * DMA failed: nothing is held, nothing sent), or the caller copies it to
 * @f + @end itself; ernic_xmit_send() sends the frame and releases it.
 */
/* Runs of payload one frame holds: a PMTU spans 2 pages of each SGE. */
#define ERNIC_XMIT_RUNS     (2 * ERNIC_XWQE_SGES + 1)
/*
 * Payloads of up to 1 KiB (every frame at a PMTU of 1024, a 1500-byte
 * link's) are copied: a mapping and its release cost more than the copy
 * (docs/engine.md, "Payload in place").
 */
#define ERNIC_XMIT_COPY_MAX 1024

typedef struct ErnicXmit {
    uint8_t *f;                 /* headers, copied runs, pad and ICRC */
    size_t end;                 /* the headers' end */
    uint32_t paylen;
    uint32_t done;              /* payload bytes gathered */
    bool ipv6;
    bool map;                   /* runs may be mapped */
    unsigned n;                 /* pieces of payload: iov[1..n] */
    uint32_t mapped;            /* bit i: iov[1 + i] is a mapping */
    /* the frame: headers, the pieces of payload, pad and ICRC */
    struct iovec iov[1 + ERNIC_XMIT_RUNS + 1];
} ErnicXmit;

void ernic_xmit_init(ErnicCore *c, ErnicXmit *x, uint8_t *f, size_t end,
                     uint32_t paylen, bool ipv6);
bool ernic_xmit_gather(ErnicCore *c, ErnicXmit *x, const ErnicSge *sge,
                       unsigned n, uint64_t laddr, uint32_t total,
                       uint64_t off);
void ernic_xmit_send(ErnicCore *c, ErnicXmit *x, uint32_t qpn);

/* ernic_rq.c: the receive queue, receive WQEs and receive metadata */
bool ernic_rq_take(ErnicCore *c, uint32_t qpn);
bool ernic_rq_produce(ErnicCore *c, uint32_t qpn);
bool ernic_rq_wqe_take(ErnicCore *c, uint32_t qpn, uint64_t addr);
bool ernic_rq_write(ErnicCore *c, uint32_t qpn, uint64_t off,
                    const uint8_t *buf, uint32_t len);
bool ernic_rq_meta(ErnicCore *c, uint32_t qpn, uint32_t slot,
                   const ErnicPkt *pkt, uint32_t len);
void ernic_rq_dgram_area(const ErnicPkt *pkt, uint8_t *area);
bool ernic_rq_place_dgram(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt,
                          const uint8_t *area);

/* ernic_txw.c: the transmit window */
void ernic_txw_reset(ErnicQP *qp);
uint32_t ernic_txw_size(ErnicCore *c, uint32_t qpn);
uint32_t ernic_txw_base(ErnicCore *c, uint32_t qpn);
void ernic_txw_rewound(ErnicQP *qp);
bool ernic_txw_answered(ErnicQP *qp, bool dup);
void ernic_txw_grow(ErnicQP *qp, uint32_t acked);
void ernic_txw_shrink(ErnicQP *qp);
bool ernic_txw_stalled(ErnicQP *qp);

/* ernic_comp.c: the completer */
void ernic_comp_receive(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt);
void ernic_comp_complete_ready(ErnicCore *c, uint32_t qpn);
void ernic_comp_arm_retry(ErnicCore *c, uint32_t qpn);
void ernic_comp_flush(ErnicCore *c, uint32_t qpn);
void ernic_comp_retry_timer(void *opaque);
void ernic_comp_rnr_timer(void *opaque);

/* ernic_req.c: the requester */
bool ernic_req_run(ErnicCore *c, uint32_t qpn, unsigned *budget);
void ernic_req_flush_sq(ErnicCore *c, uint32_t qpn);

/* ernic_resp.c: the responder */
void ernic_resp_receive(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt);
void ernic_resp_gsi_receive(ErnicCore *c, const ErnicPkt *pkt);
bool ernic_resp_run(ErnicCore *c, uint32_t qpn, unsigned *budget);
void ernic_resp_ack_timer(void *opaque);

/* ernic_engine.c: the transmit bottom half, QPs stopped and reset */
void ernic_engine_tx_bh(void *opaque);
void ernic_engine_doorbell(ErnicCore *c, uint32_t qpn);
void ernic_engine_stop_qp(ErnicCore *c, uint32_t qpn);
void ernic_engine_reset_qp(ErnicCore *c, uint32_t qpn);
void ernic_engine_qpconf_written(ErnicCore *c, uint32_t qpn, uint32_t old);

/* ernic_eth.c: the Ethernet path */
uint64_t ernic_eth_read(ErnicCore *c, hwaddr addr, unsigned size);
void ernic_eth_write(ErnicCore *c, hwaddr addr, uint64_t val, unsigned size);
void ernic_eth_receive(ErnicCore *c, const uint8_t *buf, size_t len);
void ernic_eth_bh(void *opaque);
void ernic_eth_reset(ErnicCore *c);
void ernic_eth_link(ErnicCore *c, bool up);

/* ernic_net.c: the receive path, behind ernic_up_rx() */
void ernic_net_rx(ErnicCore *c, const uint8_t *buf, size_t len);

/* ernic_fault_args.c, ernic_fault_fatal.c, ernic_fault.c: fault commands */
bool ernic_fault_args_u64(QDict *d, const char *key, uint64_t def,
                          uint64_t max, uint64_t *v, Error **errp);
bool ernic_fault_args_qp(ErnicCore *c, QDict *d, bool need_enabled,
                         uint32_t *qpn, Error **errp);
bool ernic_fault_args_end(QDict *d, Error **errp);
bool ernic_fault_fatal_cmd(ErnicCore *c, QDict *d, Error **errp);
/* A command of docs/debugging.md ("fault" property). */
void ernic_fault_command(ErnicCore *c, const char *cmd, Error **errp);
char *ernic_fault_describe(ErnicCore *c);
void ernic_fault_visit_stats(ErnicCore *c, Visitor *v, const char *name,
                             Error **errp);

/* ernic_core.c: the register file, its side effects, the lifecycle */
void ernic_core_realize(ErnicCore *c, PCIDevice *owner, uint32_t num_qp,
                        const uint8_t *mac, ErnicTxFn tx, void *tx_opaque);
void ernic_core_unrealize(ErnicCore *c);
void ernic_core_reset(ErnicCore *c);
uint64_t ernic_core_read(ErnicCore *c, hwaddr addr, unsigned size);
bool ernic_core_spinning(ErnicCore *c, hwaddr addr, uint32_t val);
bool ernic_core_polled_again(ErnicCore *c, uint32_t qpn, bool cq,
                             uint32_t val);
void ernic_core_write(ErnicCore *c, hwaddr addr, uint64_t val, unsigned size);

/*
 * ernic_dbrec.c: ERNIC-X SQ doorbell records (docs/extension.md,
 * "Doorbell records").
 */
void ernic_dbrec_sqpi_written(ErnicCore *c, uint32_t qpn, uint32_t old);
void ernic_dbrec_sqpi_read(ErnicCore *c, uint32_t qpn);
void ernic_dbrec_sync(ErnicCore *c, uint32_t qpn);
void ernic_dbrec_sync_all(ErnicCore *c);
void ernic_dbrec_loaded(ErnicCore *c);
void ernic_dbrec_reset(ErnicCore *c);

/* ernic_udb.c: BAR3's MemoryRegionOps; @opaque is the ErnicCore. */
uint64_t ernic_udb_read(void *opaque, hwaddr addr, unsigned size);
bool ernic_udb_spinning(ErnicCore *c, hwaddr addr, uint32_t val);
void ernic_udb_write(void *opaque, hwaddr addr, uint64_t val, unsigned size);

/* ernic_vmstate.c: migration of the whole core, checked when loaded */
extern const VMStateDescription ernic_vmstate_core;

#include "ernic_up.h"

#endif /* HW_RDMA_ERNIC_CORE_H */
