/*
 * libqos driver for ernic (docs/qos.md): the device on the qos graph, and
 * what a register-level test needs in a few lines: BAR access, PG332's
 * global bring-up, memory regions, QPs connected to a peer or to each
 * other, posting, completions and receives, and RoCEv2 frames injected
 * into and captured from the device's netdev.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef QGRAPH_ERNIC_H
#define QGRAPH_ERNIC_H

#include "qgraph.h"
#include "pci.h"
#include "libqos-malloc.h"
#include "hw/rdma/ernic_regs.h"

/* QPs the driver keeps state for: QP1 (not set up here) and 2..7. */
#define QERNIC_QPS              8
#define QERNIC_SQ_DEPTH         16
#define QERNIC_RQ_DEPTH         8
#define QERNIC_RQ_BUF           4096    /* bytes per receive buffer */
#define QERNIC_FRAME_MAX        9216

typedef struct QErnicQp {
    uint64_t sq, cq, rq, db;    /* guest addresses; db: CQ and RQ words */
    uint32_t sqpi;              /* WQEs posted */
    uint32_t cq_seen;           /* completions taken by qernic_wait_cqe */
    uint32_t rq_seen;           /* receives taken by qernic_wait_recv */
} QErnicQp;

typedef struct QErnic {
    QTestState *qts;
    QPCIDevice *pdev;
    QPCIBar regs, eth;
    uint32_t reg;               /* ERNIC's offset in regs (layout=reconic) */
    QGuestAllocator *alloc;
    uint8_t mac[6];
    uint32_t ip;
    uint64_t errbuf, fatalq;
    QErnicQp qp[QERNIC_QPS];
} QErnic;

typedef struct QErnicPCI {
    QOSGraphObject obj;
    QPCIDevice pci_dev;
    QErnic ernic;
} QErnicPCI;

/* Where a QP sends: its peer QP, MAC and IPv4 address. */
typedef struct QErnicPeer {
    uint32_t qpn;
    uint8_t mac[6];
    uint32_t ip;
    uint32_t sq_psn;            /* first PSN this QP sends */
    uint32_t rq_psn;            /* first PSN it expects */
} QErnicPeer;

/* Global configuration with the caller's addresses (PG332 ch.6). */
typedef struct QErnicGlobalCfg {
    uint64_t errbuf;            /* error buffer: 16 entries of 256 bytes */
    uint64_t fatalq;            /* incoming packet error status queue */
    uint32_t ackgen;            /* XRNICCONF "ack generation" */
    uint16_t udp_sport;         /* XRNICCONF UDP source port */
} QErnicGlobalCfg;

/* A QP's queues and timers as the caller chose them (PG332 ch.6). */
typedef struct QErnicQpCfg {
    uint64_t sq, cq, rq;        /* guest addresses of the queues */
    uint64_t cqdb, rqdb;        /* of the CQ head and RQ write pointer */
    uint32_t sq_depth, rq_depth;
    uint32_t rqbuf;             /* bytes per receive buffer */
    uint32_t pmtu;              /* ERNIC_PMTU_* */
    uint32_t timeout, retry;    /* TIMEOUTCONFi fields */
    uint32_t rnr_retry, rnr_timer;
    uint32_t qpconf;            /* QPCONFi bits besides EN, PMTU, RQBUFSZ */
} QErnicQpCfg;

uint32_t qernic_rd(QErnic *e, uint32_t off);
void qernic_wr(QErnic *e, uint32_t off, uint32_t val);
uint32_t qernic_qp_rd(QErnic *e, uint32_t qpn, uint32_t off);
void qernic_qp_wr(QErnic *e, uint32_t qpn, uint32_t off, uint32_t val);
uint32_t qernic_eth_rd(QErnic *e, uint32_t off);
void qernic_eth_wr(QErnic *e, uint32_t off, uint32_t val);

/* PG332 ch.6 global configuration: addresses, error records, enable. */
void qernic_init(QErnic *e, const uint8_t *mac, uint32_t ip);
/* The same with the error records at @cfg's addresses. */
void qernic_setup(QErnic *e, const uint8_t *mac, uint32_t ip,
                  const QErnicGlobalCfg *cfg);
/* PD/MR table entry @idx (p.31); its R_Key is idx << 8 | key. */
uint32_t qernic_mr(QErnic *e, uint32_t idx, uint32_t pd, uint64_t va,
                   uint64_t pa, uint32_t len, uint8_t key);
/* QP @qpn (2..7) of PD @pd, connected to @peer: queues, PSNs, enable. */
void qernic_qp_connect(QErnic *e, uint32_t qpn, uint32_t pd,
                       const QErnicPeer *peer);
/* QP @qpn of PD @pd, connected to @peer, with @cfg's queues and timers. */
void qernic_qp_setup(QErnic *e, uint32_t qpn, uint32_t pd,
                     const QErnicPeer *peer, const QErnicQpCfg *cfg);
/* Peer description of this device's QP @qpn, for a loopback pair. */
QErnicPeer qernic_self(QErnic *e, uint32_t qpn, uint32_t sq_psn,
                       uint32_t rq_psn);
/* A WQE (PG332 Table 2-2) in @wqe, ERNIC_WQE_SIZE bytes. */
void qernic_wqe(uint8_t *wqe, uint8_t opcode, uint16_t wrid, uint64_t laddr,
                uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm);
/* Post a WQE (PG332 Table 2-2) and ring SQPIi. */
void qernic_post(QErnic *e, uint32_t qpn, uint8_t opcode, uint16_t wrid,
                 uint64_t laddr, uint32_t len, uint64_t raddr, uint32_t rkey);
/* The next completion's CQE, stepping the clock until it comes. */
uint32_t qernic_wait_cqe(QErnic *e, uint32_t qpn);
/* The next receive: its RQ buffer's guest address (RQCIi is advanced). */
uint64_t qernic_wait_recv(QErnic *e, uint32_t qpn);

/* The wire: frames on the device's -netdev socket (test's end @fd). */
void qernic_wire_send(int fd, const uint8_t *f, size_t len);
/* The next frame the device sends, stepping the clock; its length. */
size_t qernic_wire_recv(QErnic *e, int fd, uint8_t *f);
/* An IPv4 RoCEv2 frame with a valid ICRC; its length. */
size_t qernic_frame(uint8_t *f, const uint8_t *smac, uint32_t sip,
                    const uint8_t *dmac, uint32_t dip, uint8_t opcode,
                    uint32_t dqpn, uint32_t psn, bool ackreq,
                    const uint8_t *ext, size_t ext_len, const uint8_t *pay,
                    size_t paylen);
/* RoCEv2 ICRC of a whole frame (IBTA annex A17.3.3). */
uint32_t qernic_icrc(const uint8_t *f, size_t len);
/* The IPv4 header checksum of @n bytes. */
uint16_t qernic_ip_csum(const uint8_t *p, size_t n);

#endif
