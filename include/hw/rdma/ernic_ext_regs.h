/*
 * ERNIC-X, the verbs extension of the emulated ERNIC (docs/extension.md):
 * its discovery capability and registers. Not part of PG332: with the
 * extension off (-device ernic,ext=off, or EXTCTRL = 0) the device is the
 * PG332 device of ernic_regs.h.
 *
 * Shared like ernic_regs.h by the device (hw/rdma/), the qtests, the
 * register documentation generator and the guest driver: no QEMU or
 * kernel types. The X() lists have the format of ernic_regs.h; their last
 * column is 0 (no PG332 page).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_ERNIC_EXT_REGS_H
#define HW_RDMA_ERNIC_EXT_REGS_H

/*
 * Discovery: a PCI vendor-specific capability (ID 0x09) of 16 bytes.
 * Byte 3 is the ERNIC-X version; then three 32-bit fields.
 */
#define ERNIC_EXT_CAP_ID                0x09
#define ERNIC_EXT_CAP_LEN               16
#define ERNIC_EXT_CAP_VERSION           3       /* byte */
#define ERNIC_EXT_CAP_LOC               4       /* [2:0] BAR, [31:12] offset */
#define ERNIC_EXT_CAP_FEAT              8       /* EXTFEAT */
#define ERNIC_EXT_CAP_SIZE              12      /* bytes of the range */
#define ERNIC_EXT_VERSION               1

/* The extension's registers: BAR0, where PG332 has none. */
#define ERNIC_EXT_BASE                  0x38000
#define ERNIC_EXT_SIZE                  0x8000

/* Features (EXTFEAT, EXTCTRL and the capability). */
#define ERNIC_EXT_F_MR                  (1u << 0)   /* extended MR table */
#define ERNIC_EXT_F_FRWR                (1u << 1)   /* REG_MR, LOCAL_INV */
#define ERNIC_EXT_F_RXMETA              (1u << 2)   /* receive metadata */
#define ERNIC_EXT_F_RINV                (1u << 3)   /* remote invalidation */
#define ERNIC_EXT_F_XWQE                (1u << 4)   /* keyed SGEs */
#define ERNIC_EXT_F_RXWQE               (1u << 5)   /* receive WQEs */
#define ERNIC_EXT_F_QP1                 (1u << 6)   /* QP1 takes XWQE, RXWQE */
#define ERNIC_EXT_F_UDB                 (1u << 7)   /* user QPs */
#define ERNIC_EXT_F_SRQ                 (1u << 8)   /* shared receive queues */
#define ERNIC_EXT_F_UD                  (1u << 9)   /* UD QPs, address handles */
#define ERNIC_EXT_F_UC                  (1u << 10)  /* UC QPs */
#define ERNIC_EXT_F_MCAST               (1u << 11)  /* UD multicast groups */
#define ERNIC_EXT_F_ATOMIC              (1u << 12)  /* CMP_SWP, FETCH_ADD */
#define ERNIC_EXT_F_MW                  (1u << 13)  /* memory windows */
#define ERNIC_EXT_F_PLACE               (1u << 14)  /* FLUSH, ATOMIC WRITE */
#define ERNIC_EXT_F_XRC                 (1u << 15)  /* XRC QPs and SRQs */
#define ERNIC_EXT_F_DBREC               (1u << 16)  /* SQ doorbell records */
#define ERNIC_EXT_F_RQREC               (1u << 17)  /* RQ doorbell records */
#define ERNIC_EXT_F_UPOLL               (1u << 18)  /* CQHEAD, RQPI in pages */
#define ERNIC_EXT_F_ALL                 (ERNIC_EXT_F_MR | ERNIC_EXT_F_FRWR | \
                                         ERNIC_EXT_F_RXMETA | \
                                         ERNIC_EXT_F_RINV | \
                                         ERNIC_EXT_F_XWQE | \
                                         ERNIC_EXT_F_RXWQE | \
                                         ERNIC_EXT_F_QP1 | \
                                         ERNIC_EXT_F_UDB | \
                                         ERNIC_EXT_F_SRQ | \
                                         ERNIC_EXT_F_UD | \
                                         ERNIC_EXT_F_UC | \
                                         ERNIC_EXT_F_MCAST | \
                                         ERNIC_EXT_F_ATOMIC | \
                                         ERNIC_EXT_F_MW | \
                                         ERNIC_EXT_F_PLACE | \
                                         ERNIC_EXT_F_XRC | \
                                         ERNIC_EXT_F_DBREC | \
                                         ERNIC_EXT_F_RQREC | \
                                         ERNIC_EXT_F_UPOLL)
/* Features that name keys of the extended MR table, and so need MR. */
#define ERNIC_EXT_F_NEEDS_MR            (ERNIC_EXT_F_FRWR | ERNIC_EXT_F_RINV | \
                                         ERNIC_EXT_F_UDB | ERNIC_EXT_F_MW)

#define ERNIC_EXT_ID_VALUE              0x31585245  /* "ERX1" */

/* X(name, offset, access, reset, mask, wmask, flags, page) */
#define ERNIC_EXT_REGS(X) \
    X(EXTID,            0x38000, RO,  0x31585245, 0xffffffff, 0,          NONE, 0) \
    X(EXTFEAT,          0x38004, RO,  0,          0xffffffff, 0,          NONE, 0) \
    X(EXTCTRL,          0x38008, RW,  0,          0x0007ffff, 0x0007ffff, NONE, 0) \
    X(EXTMRMAX,         0x3800c, RO,  0,          0xffffffff, 0,          NONE, 0) \
    X(EXTEVT,           0x38010, W1C, 0,          0x00000001, 0x00000001, NONE, 0) \
    X(EXTEVTEN,         0x38014, RW,  0,          0x00000001, 0x00000001, NONE, 0) \
    X(MRIDX,            0x38040, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MRKEY,            0x38044, RW,  0,          0x000003ff, 0x000003ff, NONE, 0) \
    X(MRPD,             0x38048, RW,  0,          0x00ffffff, 0x00ffffff, NONE, 0) \
    X(MRACC,            0x3804c, RW,  0,          0x0000ffff, 0x0000ffff, NONE, 0) \
    X(MRIOVALO,         0x38050, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MRIOVAHI,         0x38054, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MRLENLO,          0x38058, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MRLENHI,          0x3805c, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MRPBLLO,          0x38060, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MRPBLHI,          0x38064, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MRNPAGES,         0x38068, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MRCMD,            0x3806c, RW,  0,          0x00000000, 0xffffffff, NONE, 0) \
    X(MRSTS,            0x38070, RO,  0,          0x000000ff, 0,          NONE, 0)

#define ERNIC_EXT_REG(name, off, ...)   ERNIC_##name = (off),
enum {
    ERNIC_EXT_REGS(ERNIC_EXT_REG)
};
#undef ERNIC_EXT_REG

/*
 * Per-QP extension blocks: QP i (1..C_NUM_QP) at ERNIC_EXT_QP_OFFSET(i).
 * Writable only while QPCONFi[0] (QP enable) is 0.
 */
#define ERNIC_EXT_QP_BASE               0x3a000
#define ERNIC_EXT_QP_STRIDE             0x20
#define ERNIC_EXT_QP_OFFSET(qpn)        (ERNIC_EXT_QP_BASE + \
                                         ((qpn) - 1) * ERNIC_EXT_QP_STRIDE)

#define ERNIC_EXT_QP_REGS(X) \
    X(EXTQPCONF,        0x00,    RW,  0,          0x00ff1fff, 0x00ff1fff, NONE, 0) \
    X(RXMETABA,         0x04,    RW,  0,          0xfffffff0, 0xfffffff0, NONE, 0) \
    X(RXMETABAMSB,      0x08,    RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(QKEY,             0x0c,    RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(XRCD,             0x10,    RW,  0,          0x00ffffff, 0x00ffffff, NONE, 0) \
    X(DBRECA,           0x14,    RW,  0,          0xfffffffc, 0xfffffffc, NONE, 0) \
    X(DBRECAMSB,        0x18,    RW,  0,          0xffffffff, 0xffffffff, NONE, 0)

#define ERNIC_EXT_QP_REG(name, off, ...)    ERNIC_##name = (off),
enum {
    ERNIC_EXT_QP_REGS(ERNIC_EXT_QP_REG)
};
#undef ERNIC_EXT_QP_REG

/* EXTQPCONFi */
#define ERNIC_EXTQPCONF_RXMETA          (1u << 0)
#define ERNIC_EXTQPCONF_XWQE            (1u << 1)   /* 128-byte SQ WQEs */
#define ERNIC_EXTQPCONF_USER            (1u << 2)   /* user QP: keys only */
#define ERNIC_EXTQPCONF_RXWQE           (1u << 3)   /* with RXMETA */
#define ERNIC_EXTQPCONF_SRQ             (1u << 4)   /* with RXWQE */
#define ERNIC_EXTQPCONF_SRQN_MASK       0x00ff0000u /* ... the SRQ */
#define ERNIC_EXTQPCONF_UD              (1u << 5)   /* a UD QP (feature UD) */
#define ERNIC_EXTQPCONF_UC              (1u << 6)   /* a UC QP (feature UC) */
#define ERNIC_EXTQPCONF_ATOMIC          (1u << 7)   /* takes atomics (ATOMIC) */
#define ERNIC_EXTQPCONF_FLUSH           (1u << 8)   /* takes FLUSH (PLACE) */
#define ERNIC_EXTQPCONF_XRC_TGT         (1u << 9)   /* XRC target QP (XRC) */
#define ERNIC_EXTQPCONF_XRC_INI         (1u << 10)  /* XRC initiator QP (XRC) */
#define ERNIC_EXTQPCONF_DBREC           (1u << 11)  /* SQPIi from DBRECAi */
#define ERNIC_EXTQPCONF_RQREC           (1u << 12)  /* RQCIi from DBRECAi + 4 */

/*
 * SQ doorbell records (feature DBREC): with EXTQPCONFi[11], a write to
 * SQPIi (or to the QP's doorbell page) only says "look": the producer
 * index is the record's bits [15:0], 4 bytes little-endian at
 * DBRECAMSBi:DBRECAi, read when the write arrives. So the write's value
 * may be lost on the way, as KVM's ioeventfd loses it.
 */
#define ERNIC_DBREC_SIZE                4
#define ERNIC_DBREC_PI_MASK             0x0000ffffu

/*
 * RQ doorbell records (feature RQREC): with EXTQPCONFi[12], the RQ
 * consumer index is bits [15:0] of the record's second word, 4 bytes
 * little-endian at DBRECAMSBi:DBRECAi + 4. The device reads it when the
 * RQ looks empty by RQCIi (a message needs a buffer), and RQCIi becomes
 * it: software grants buffers by a store, with no register write.
 */
#define ERNIC_RQREC_OFFSET              4
#define ERNIC_RQREC_SIZE                8   /* both words */

/*
 * UD QPs (feature UD): the address handle table, written through its
 * window at ERNIC_EXT_AH_BASE as the MR table is through MRIDX..MRSTS.
 * A UD send WQE (128 bytes, keyed SGEs) names its destination: RTAG the
 * AH index, ROFFSET[23:0] the destination QPN, ROFFSET[63:32] the Q_Key.
 */
#define ERNIC_EXT_AH_BASE               0x38100
#define ERNIC_EXT_AH_SIZE               0x40
#define ERNIC_AH_ENTRIES                4096

#define ERNIC_EXT_AH_REGS(X) \
    X(AHIDX,            0x38100, RW,  0,          0x00000fff, 0x00000fff, NONE, 0) \
    X(AHPD,             0x38104, RW,  0,          0x00ffffff, 0x00ffffff, NONE, 0) \
    X(AHMACLSB,         0x38108, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(AHMACMSB,         0x3810c, RW,  0,          0x0000ffff, 0x0000ffff, NONE, 0) \
    X(AHIP1,            0x38110, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(AHIP2,            0x38114, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(AHIP3,            0x38118, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(AHIP4,            0x3811c, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(AHCONF,           0x38120, RW,  0,          0x0003ffff, 0x0003ffff, NONE, 0) \
    X(AHCMD,            0x38124, RW,  0,          0x00000000, 0xffffffff, NONE, 0) \
    X(AHSTS,            0x38128, RO,  0,          0x000000ff, 0,          NONE, 0)

#define ERNIC_EXT_AH_REG(name, off, ...)    ERNIC_##name = (off),
enum {
    ERNIC_EXT_AH_REGS(ERNIC_EXT_AH_REG)
};
#undef ERNIC_EXT_AH_REG

/* AHCONF */
#define ERNIC_AHCONF_TTL_MASK           0x000000ffu /* hop limit */
#define ERNIC_AHCONF_TCLASS_MASK        0x0000ff00u
#define ERNIC_AHCONF_IPV6               (1u << 16)
#define ERNIC_AHCONF_VALID              (1u << 17)

/* AHCMD commands and AHSTS results (as MRCMD's and MRSTS's) */
#define ERNIC_AHCMD_WRITE               1
#define ERNIC_AHCMD_READ                2
#define ERNIC_AHSTS_OK                  0
#define ERNIC_AHSTS_BAD_INDEX           1
#define ERNIC_AHSTS_BAD_COMMAND         3

/* The UD send WQE's destination (feature UD), in the PG332 WQE. */
#define ERNIC_WQE_UD_AH                 28      /* RTAG: the AH index */
#define ERNIC_WQE_UD_DQPN               20      /* ROFFSET[23:0] */
#define ERNIC_WQE_UD_QKEY               24      /* ROFFSET[63:32] */

/* The 40-byte GRH area before a UD receive's payload (IBTA 11.4.1.2). */
#define ERNIC_UD_GRH_AREA               40

/*
 * Multicast (feature MCAST): a table of ERNIC_MCG_ENTRIES groups, each
 * an IP multicast address and the UD QPs attached to it, written
 * through its window at ERNIC_EXT_MC_BASE as the AH table is. Bit b of
 * MCQPk stands for QP 32k + b + 1. A RoCEv2 packet with BTH DestQP
 * 0xFFFFFF to a valid group's address (and its MAC) goes to each of
 * the group's enabled UD QPs of the packet's IP version.
 */
#define ERNIC_EXT_MC_BASE               0x38140
#define ERNIC_EXT_MC_SIZE               0x40
#define ERNIC_MCG_ENTRIES               64
#define ERNIC_MCG_QP_WORDS              8
#define ERNIC_MC_QPN                    0xffffff    /* IBTA: multicast */

#define ERNIC_EXT_MC_REGS(X) \
    X(MCIDX,            0x38140, RW,  0,          0x0000003f, 0x0000003f, NONE, 0) \
    X(MCIP1,            0x38144, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCIP2,            0x38148, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCIP3,            0x3814c, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCIP4,            0x38150, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCCONF,           0x38154, RW,  0,          0x00000003, 0x00000003, NONE, 0) \
    X(MCQP0,            0x38158, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCQP1,            0x3815c, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCQP2,            0x38160, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCQP3,            0x38164, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCQP4,            0x38168, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCQP5,            0x3816c, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCQP6,            0x38170, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCQP7,            0x38174, RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(MCCMD,            0x38178, RW,  0,          0x00000000, 0xffffffff, NONE, 0) \
    X(MCSTS,            0x3817c, RO,  0,          0x000000ff, 0,          NONE, 0)

#define ERNIC_EXT_MC_REG(name, off, ...)    ERNIC_##name = (off),
enum {
    ERNIC_EXT_MC_REGS(ERNIC_EXT_MC_REG)
};
#undef ERNIC_EXT_MC_REG

/* MCCONF */
#define ERNIC_MCCONF_VALID              (1u << 0)
#define ERNIC_MCCONF_IPV6               (1u << 1)

/* MCCMD commands and MCSTS results (as AHCMD's and AHSTS's) */
#define ERNIC_MCCMD_WRITE               1
#define ERNIC_MCCMD_READ                2
#define ERNIC_MCSTS_OK                  0
#define ERNIC_MCSTS_BAD_COMMAND         3

/* EXTEVT, EXTEVTEN: events of the extension, on the ERNIC interrupt */
#define ERNIC_EXTEVT_SRQ_LIMIT          (1u << 0)   /* an SRQLIMITn fired */

/*
 * Shared receive queues (feature SRQ): SRQ n (0..ERNIC_SRQ_NUM - 1) has
 * a block at ERNIC_EXT_SRQ_OFFSET(n). Its ring holds 64-byte receive
 * WQEs at SRQBAn + index x 64; SRQPIn is the driver's producer index,
 * SRQCIn the device's consumer index, both modulo SRQDEPTHn. SRQCONFn,
 * SRQBAn, SRQBAMSBn, SRQDEPTHn and SRQPDn are written only while the SRQ
 * is disabled.
 */
#define ERNIC_EXT_SRQ_BASE              0x3c000
#define ERNIC_EXT_SRQ_STRIDE            0x20
#define ERNIC_SRQ_NUM                   256
#define ERNIC_EXT_SRQ_OFFSET(n)         (ERNIC_EXT_SRQ_BASE + \
                                         (n) * ERNIC_EXT_SRQ_STRIDE)

#define ERNIC_EXT_SRQ_REGS(X) \
    X(SRQCONF,          0x00,    RW,  0,          0xffffff07, 0xffffff07, NONE, 0) \
    X(SRQBA,            0x04,    RW,  0,          0xffffffc0, 0xffffffc0, NONE, 0) \
    X(SRQBAMSB,         0x08,    RW,  0,          0xffffffff, 0xffffffff, NONE, 0) \
    X(SRQDEPTH,         0x0c,    RW,  0,          0x0000ffff, 0x0000ffff, NONE, 0) \
    X(SRQPD,            0x10,    RW,  0,          0x00ffffff, 0x00ffffff, NONE, 0) \
    X(SRQPI,            0x14,    RW,  0,          0x0000ffff, 0x0000ffff, NONE, 0) \
    X(SRQCI,            0x18,    RO,  0,          0x0000ffff, 0,          NONE, 0) \
    X(SRQLIMIT,         0x1c,    RW,  0,          0x0000ffff, 0x0000ffff, NONE, 0)

#define ERNIC_EXT_SRQ_REG(name, off, ...)   ERNIC_##name = (off),
enum {
    ERNIC_EXT_SRQ_REGS(ERNIC_EXT_SRQ_REG)
};
#undef ERNIC_EXT_SRQ_REG

/* SRQCONFn */
#define ERNIC_SRQCONF_EN                (1u << 0)
#define ERNIC_SRQCONF_USER              (1u << 1)   /* page in BAR3; keys only */
#define ERNIC_SRQCONF_XRC               (1u << 2)   /* an XRC SRQ (XRC) */
#define ERNIC_SRQCONF_XRCD_MASK         0xffffff00u /* ... of this domain */

/*
 * User QPs (feature UDB): QP i's doorbell page, 4 KiB at (i - 1) x 4 KiB
 * of BAR3 (layout=ernic only), holds its SQPIi and RQCIi, so that a
 * driver can map it into the process that owns the QP; with feature
 * UPOLL also its CQHEADi and STATRQPIDBi to read, which a process polls
 * now and then while it finds nothing (docs/extension.md, "Polling").
 */
#define ERNIC_BAR_UDB                   3
#define ERNIC_UDB_PAGE                  0x1000
#define ERNIC_UDB_BAR_SIZE              0x200000    /* 256 QPs, 256 SRQs */
#define ERNIC_UDB_OFFSET(qpn)           (((qpn) - 1) * ERNIC_UDB_PAGE)
#define ERNIC_UDB_SQPI                  0x0
#define ERNIC_UDB_RQCI                  0x4
#define ERNIC_UDB_CQHEAD                0x8         /* UPOLL: CQHEADi */
#define ERNIC_UDB_RQPI                  0xc         /* UPOLL: STATRQPIDBi */
/* A user SRQ's page (feature SRQ): its SRQPIn, and SRQCIn to read. */
#define ERNIC_UDB_SRQ_BASE              0x100000
#define ERNIC_UDB_SRQ_OFFSET(n)         (ERNIC_UDB_SRQ_BASE + \
                                         (n) * ERNIC_UDB_PAGE)
#define ERNIC_UDB_SRQPI                 0x0
#define ERNIC_UDB_SRQCI                 0x4

/*
 * Keyed SGEs (feature XWQE): a 128-byte SQ entry, the PG332 WQE in bytes
 * 0-63 with the SGE count in byte 2, and four SGEs in bytes 64-127 (the
 * layout of a receive WQE's). A count of 0 uses LADDR and LENGTH.
 */
#define ERNIC_XWQE_SIZE                 128
#define ERNIC_XWQE_NSGE                 2
#define ERNIC_XWQE_SGE                  64
#define ERNIC_XWQE_SGES                 4

/*
 * Receive WQEs (feature RXWQE): each RQ slot is 64 bytes, four SGEs of
 * {64-bit bus address or IOVA, 32-bit length, 32-bit L_Key}; length 0 is
 * an unused SGE, L_Key 0 names bus addresses (the reserved L_Key).
 */
#define ERNIC_RWQE_SIZE                 64
#define ERNIC_RWQE_SGES                 4
#define ERNIC_SGE_SIZE                  16
#define ERNIC_SGE_ADDR                  0
#define ERNIC_SGE_LEN                   8
#define ERNIC_SGE_LKEY                  12

/*
 * Receive metadata (feature RXMETA): 16 bytes per RQ slot at RXMETABAi +
 * slot x 16, written before STATRQPIDBi moves past the slot.
 */
#define ERNIC_RXMETA_SIZE               16
#define ERNIC_RXMETA_LEN                0       /* 4 bytes, little-endian */
#define ERNIC_RXMETA_OPCODE             4       /* BTH opcode, last packet */
#define ERNIC_RXMETA_FLAGS              5
#define ERNIC_RXMETA_DATA               8       /* ImmDt, key; QP1: source QP */
#define ERNIC_RXMETA_F_IMM              (1u << 0)   /* DATA is ImmDt */
#define ERNIC_RXMETA_F_INV              (1u << 1)   /* DATA is the key */
#define ERNIC_RXMETA_F_IPV6             (1u << 2)   /* QP1: an IPv6 header */
#define ERNIC_RXMETA_F_SRQ              (1u << 3)   /* SRQ_WQE is valid */
#define ERNIC_RXMETA_SRQ_WQE            6       /* 2 bytes: SRQ ring index */
#define ERNIC_RXMETA_SQPN               12      /* UD: 4 bytes, source QPN */
#define ERNIC_RXMETA_STATUS_SHIFT       4           /* receive WQEs only */
#define ERNIC_RXMETA_STATUS_MASK        (0xfu << 4)
#define ERNIC_RXMETA_ST_OK              0
#define ERNIC_RXMETA_ST_LEN             1   /* longer than the SGEs */
#define ERNIC_RXMETA_ST_PROT            2   /* an SGE's L_Key failed */
#define ERNIC_RXMETA_ST_FLUSH           3   /* XRC: its QP failed first */

/*
 * XRC SRQs (feature XRC): a receive WQE taken by an XRC target QP is
 * written back when its message ends: its first 16 bytes become the
 * message's receive metadata entry, whose bytes 12-15 hold the target
 * QP's number with bit 31 set, written last.
 */
#define ERNIC_XRC_WB_QPN                12
#define ERNIC_XRC_WB_DONE               (1u << 31)

/* MRKEY */
#define ERNIC_MRKEY_KEY_MASK            0xffu
#define ERNIC_MRKEY_STATE_SHIFT         8
#define ERNIC_MRKEY_STATE_MASK          (3u << 8)
#define ERNIC_MR_FREE                   0
#define ERNIC_MR_INVALID                1       /* allocated, not mapped */
#define ERNIC_MR_VALID                  2

/* MRACC */
#define ERNIC_MRACC_LOCAL_WRITE         (1u << 0)
#define ERNIC_MRACC_REMOTE_READ         (1u << 1)
#define ERNIC_MRACC_REMOTE_WRITE        (1u << 2)
#define ERNIC_MRACC_FRWR                (1u << 3)   /* fast-registration MR */
#define ERNIC_MRACC_PHYS                (1u << 4)   /* bus address = IOVA + PBL */
#define ERNIC_MRACC_REMOTE_ATOMIC       (1u << 5)   /* feature ATOMIC */
#define ERNIC_MRACC_MW_BIND             (1u << 6)   /* windows may bind (MW) */
#define ERNIC_MRACC_MW                  (1u << 7)   /* a memory window (MW) */
#define ERNIC_MRACC_MW_TYPE2            (1u << 14)  /* ... of type 2 */
#define ERNIC_MRACC_FLUSH               (1u << 15)  /* FLUSH, global (PLACE) */
#define ERNIC_MRACC_SHIFT_SHIFT         8
#define ERNIC_MRACC_SHIFT_MASK          (0x3fu << 8)
#define ERNIC_MRACC_MASK                0x0000ffffu /* defined bits */
#define ERNIC_MR_PAGE_SHIFT_MIN         12
#define ERNIC_MR_PAGE_SHIFT_MAX         30

/* MRCMD commands and MRSTS results */
#define ERNIC_MRCMD_WRITE               1
#define ERNIC_MRCMD_READ                2
#define ERNIC_MRCMD_INVALIDATE          3
#define ERNIC_MRSTS_OK                  0
#define ERNIC_MRSTS_BAD_INDEX           1
#define ERNIC_MRSTS_BAD_FIELD           2
#define ERNIC_MRSTS_BAD_COMMAND         3

/*
 * Fast registration WQEs (feature FRWR), in the PG332 64-byte WQE:
 * REG_MR: RTAG new key, ROFFSET IOVA, LENGTH length, LADDR page list,
 * SDATA[0..3] pages, SDATA[4..7] MRACC. LOCAL_INV: RTAG the key.
 */
#define ERNIC_OP_REG_MR                 0x20
#define ERNIC_OP_LOCAL_INV              0x21
#define ERNIC_WQE_REG_NPAGES            32      /* SDATA[0..3] */
#define ERNIC_WQE_REG_ACC               36      /* SDATA[4..7] */

/*
 * Atomic WQEs (feature ATOMIC), in the PG332 WQE or a keyed one: LADDR
 * or the SGEs the 8-byte result, LENGTH 8, ROFFSET the remote address,
 * RTAG its R_Key, SDATA[0..7] the swap or add operand and SDATA[8..15]
 * the compare operand, both little-endian 64-bit words.
 */
#define ERNIC_OP_ATOMIC_CMP_SWP         0x22
#define ERNIC_OP_ATOMIC_FETCH_ADD       0x23
#define ERNIC_WQE_ATOMIC_SWAP           32      /* SDATA[0..7] */
#define ERNIC_WQE_ATOMIC_COMPARE        40      /* SDATA[8..15] */
#define ERNIC_ATOMIC_LEN                8

/*
 * Memory window binds (feature MW), in the PG332 64-byte WQE: RTAG the
 * window's new key, ROFFSET its first byte's address, SDATA[0..7] its
 * length, SDATA[8..11] the L_Key of the region it binds to,
 * SDATA[12..15] its remote access (MRACC bits 1, 2 and 5).
 */
#define ERNIC_OP_BIND_MW                0x24
#define ERNIC_WQE_BIND_LEN              32      /* SDATA[0..7] */
#define ERNIC_WQE_BIND_LKEY             40      /* SDATA[8..11] */
#define ERNIC_WQE_BIND_ACC              44      /* SDATA[12..15] */

/*
 * Memory placement (feature PLACE, IBTA 1.5 annex A19), in the PG332
 * WQE: ROFFSET the remote address, RTAG its R_Key, LENGTH 0 and no SGE
 * (neither moves local data). ATOMIC WRITE: SDATA[0..7] the 8 bytes to
 * write, in memory order. FLUSH: SDATA[0..3] the range's length,
 * SDATA[4..7] its FETH: placement type in [3:0], selectivity in [5:4].
 */
#define ERNIC_OP_ATOMIC_WRITE           0x25
#define ERNIC_OP_FLUSH                  0x26
#define ERNIC_WQE_AWRITE_DATA           32      /* SDATA[0..7] */
#define ERNIC_WQE_FLUSH_LEN             32      /* SDATA[0..3] */
#define ERNIC_WQE_FLUSH_FETH            36      /* SDATA[4..7] */
#define ERNIC_FETH_PLT_GLOBAL           (1u << 0)   /* global visibility */
#define ERNIC_FETH_PLT_PERSISTENT       (1u << 1)   /* persistence */
#define ERNIC_FETH_PLT_MASK             0x0000000fu
#define ERNIC_FETH_SEL_SHIFT            4
#define ERNIC_FETH_SEL_MASK             0x00000030u
#define ERNIC_FETH_SEL_RANGE            0           /* the RETH's range */
#define ERNIC_FETH_SEL_MR               1           /* the whole region */

/*
 * XRC (feature XRC): an XRC initiator QP's WQE names the remote XRC SRQ
 * its message goes to, bytes 52-55 (reserved in PG332's WQE): [23:0].
 */
#define ERNIC_WQE_XRC_SRQN              52

/* The extended MR table: entries (property mr-entries). */
#define ERNIC_EXT_MR_MIN                256
#define ERNIC_EXT_MR_MAX                65536
#define ERNIC_EXT_MR_DEFAULT            8192

#endif /* HW_RDMA_ERNIC_EXT_REGS_H */
