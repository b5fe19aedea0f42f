/*
 * Xilinx/AMD ERNIC (PG332 v3.1) register interface.
 *
 * This header is the single definition of the ERNIC register file. It is
 * shared by the QEMU device model (hw/rdma/), the qtests (qtest/), the
 * register documentation generator (scripts/gen-regdoc.py) and the Linux
 * guest driver (guest-driver/). It therefore depends on nothing but the C
 * preprocessor: no QEMU or kernel types.
 *
 * Section and page references are to PG332 v3.1 (30 June 2021):
 *   Table 2-7 "ERNIC Registers Details" (pp. 31-46), Table 2-1 (WQE),
 *   Table 2-2 (CQE), Table 2-3 (validation syndromes), Table 2-4 (fatal
 *   codes), Chapter 6 (software flow).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_ERNIC_REGS_H
#define HW_RDMA_ERNIC_REGS_H

/*
 * PCI identity of the emulated device (docs/user-guide.md "PCI identity").
 * Xilinx vendor ID, as an ERNIC behind a Xilinx PCIe bridge enumerates;
 * device ID 0xe332 is bound by no in-tree Linux driver.
 */
#define ERNIC_PCI_VENDOR_ID             0x10ee
#define ERNIC_PCI_DEVICE_ID             0xe332
#define ERNIC_PCI_REVISION              0x31    /* ERNIC v3.1 */

#define ERNIC_BAR_REGS                  0       /* PG332 register window */
#define ERNIC_BAR_MSIX                  2       /* MSI-X table and PBA */
#define ERNIC_BAR_ETH                   4       /* Ethernet path (not PG332) */
#define ERNIC_MSIX_VECTORS              2
#define ERNIC_MSIX_VEC_ERNIC            0       /* the one ERNIC interrupt */
#define ERNIC_MSIX_VEC_ETH              1       /* Ethernet path interrupt */

/*
 * layout=reconic (docs/boards.md): the BAR map of a RecoNIC card (AMD
 * RecoNIC, Alveo U250), where ERNIC sits behind a QDMA PCIe bridge. Its
 * user-space library maps resource2 (4 MiB), finds ERNIC at 0x40000 of
 * it, programs the bridge's AXI-to-PCIe windows at 0x16420, and gives the
 * engine card memory (DDR) at AXI address 0xa350000000000000.
 */
#define ERNIC_RN_PCI_DEVICE_ID          0x903f  /* RecoNIC's QDMA PF0 */
#define ERNIC_RN_BAR_MSIX               0       /* MSI-X table and PBA */
#define ERNIC_RN_BAR_ETH                1       /* Ethernet path, as BAR4 */
#define ERNIC_RN_BAR_SHELL              2       /* the library's resource2 */
#define ERNIC_RN_BAR_CARD               4       /* card memory */
#define ERNIC_RN_SHELL_SIZE             0x400000
#define ERNIC_RN_ERNIC_BASE             0x40000 /* ERNIC in BAR2 */
/* QDMA AXI bridge address translation windows ("BDF table") */
#define ERNIC_RN_AXIB_BASE              0x16420
#define ERNIC_RN_AXIB_STRIDE            0x20
#define ERNIC_RN_AXIB_WINDOWS           8
#define ERNIC_RN_AXIB_XLATE_LSB         0x00
#define ERNIC_RN_AXIB_XLATE_MSB         0x04
#define ERNIC_RN_AXIB_PASID             0x08
#define ERNIC_RN_AXIB_FUNC              0x0c
#define ERNIC_RN_AXIB_MAPCTL            0x10
#define ERNIC_RN_AXIB_RSVD              0x14
/* MAPCTL: access permission, the sticky access error, size in 4 KiB */
#define ERNIC_RN_AXIB_READ              (1u << 31)
#define ERNIC_RN_AXIB_WRITE             (1u << 30)
#define ERNIC_RN_AXIB_ERROR             (1u << 29)      /* read-only */
#define ERNIC_RN_AXIB_SIZE_MASK         0x03ffffffu
/*
 * The bridge's AXI BAR as RecoNIC's shell builds it: 1 TiB at AXI address
 * 0, cut into the eight windows of 128 GiB; a window's translation
 * replaces the address bits above 128 GiB.
 */
#define ERNIC_RN_AXI_BAR_SIZE           (1ULL << 40)
#define ERNIC_RN_AXIB_WIN_SHIFT         37
/* Card memory as the engine addresses it (RecoNIC's DEVICE_MEM_OFFSET) */
#define ERNIC_RN_CARD_ADDR              0xa350000000000000ULL
#define ERNIC_RN_CARD_MASK              0xfff0000000000000ULL
#define ERNIC_RN_CARD_DEFAULT           (64ULL << 20)
#define ERNIC_RN_CARD_MIN               (1ULL << 20)
#define ERNIC_RN_CARD_MAX               (4ULL << 30)

/*
 * Address map (PG332 "Register Space", Table 2-7; 256 KiB window).
 */
#define ERNIC_REG_WINDOW_SIZE           0x40000

#define ERNIC_PDT_BASE                  0x00000
#define ERNIC_PDT_STRIDE                0x100
#define ERNIC_PDT_ENTRIES               256
#define ERNIC_PDT_OFFSET(i)             (ERNIC_PDT_BASE + (i) * ERNIC_PDT_STRIDE)

#define ERNIC_GCSR_BASE                 0x20000
#define ERNIC_GCSR_SIZE                 0x200   /* 0x20000..0x201FF */

/* Per-QP blocks: QP1 at 0x20200, stride 0x100. There is no QP0. */
#define ERNIC_QP_BASE                   0x20200
#define ERNIC_QP_STRIDE                 0x100
#define ERNIC_QP_OFFSET(qpn)            (ERNIC_QP_BASE + ((qpn) - 1) * ERNIC_QP_STRIDE)
#define ERNIC_QP_GSI                    1       /* QP1: MAD/CM QP */

/* C_NUM_QP (PG332 Table 2-6): 8..256 in hardware. */
#define ERNIC_NUM_QP_DEFAULT            32
#define ERNIC_NUM_QP_MAX                256
#define ERNIC_NUM_QP_MIN                8

/* Interrupt status banks: bit j of bank n (1-based) is QP 32*(n-1)+j. */
#define ERNIC_INTSTS_BANKS              8
#define ERNIC_QP_BANK(qpn)              ((qpn) / 32)            /* 0-based */
#define ERNIC_QP_BANK_BIT(qpn)          (1u << ((qpn) % 32))

/*
 * Register description lists.
 *
 * X(name, offset, access, reset, mask, wmask, flags, page)
 *   offset  byte offset: within a PD table entry, absolute for global
 *           registers, within a QP block for per-QP registers
 *   access  RW, RO or W1C (ERNIC_ACC_<access>)
 *   reset   value after reset (PG332: 0 unless stated); for status
 *           registers, the value an idle device reports
 *   mask    bits that exist; all others are reserved and read 0
 *   wmask   bits a normal write changes (for W1C: bits a 1 clears)
 *   flags   (ERNIC_F_<flags>) NONE; SWO: RO bits become writable under
 *           XRNICADCONF[0]; NOQP1: the register does not exist in QP1's
 *           block; NOQP1_SWO: both
 *   page    PG332 v3.1 page of its Table 2-7 row
 */
#define ERNIC_ACC_RW                    0
#define ERNIC_ACC_RO                    1
#define ERNIC_ACC_W1C                   2

#define ERNIC_F_NONE                    0
#define ERNIC_F_SWO                     0x1
#define ERNIC_F_NOQP1                   0x2
#define ERNIC_F_NOQP1_SWO               (ERNIC_F_NOQP1 | ERNIC_F_SWO)

/* Protection domain / memory region table entry (PG332 p.31, Fig. 2-9) */
#define ERNIC_PDT_REGS(X) \
    X(PDPDNUM,          0x00, RW,  0, 0x00ffffff, 0x00ffffff, NONE, 31) \
    X(VIRTADDRLSB,      0x04, RW,  0, 0xffffffff, 0xffffffff, NONE, 31) \
    X(VIRTADDRMSB,      0x08, RW,  0, 0xffffffff, 0xffffffff, NONE, 31) \
    X(BUFBASEADDRLSB,   0x0c, RW,  0, 0xffffffff, 0xffffffff, NONE, 31) \
    X(BUFBASEADDRMSB,   0x10, RW,  0, 0xffffffff, 0xffffffff, NONE, 31) \
    X(BUFRKEY,          0x14, RW,  0, 0x000000ff, 0x000000ff, NONE, 31) \
    X(WRRDBUFLEN,       0x18, RW,  0, 0xffffffff, 0xffffffff, NONE, 31) \
    X(ACCESSDESC,       0x1c, RW,  0, 0xffff000f, 0xffff000f, NONE, 31)

/* Global configuration and status registers (PG332 pp.32-40) */
#define ERNIC_GCSR_REGS(X) \
    X(XRNICCONF,        0x20000, RW,   0,      0xffffff39, 0xffffff39, NONE, 32) \
    X(XRNICADCONF,      0x20004, RW,   0,      0xff0f0005, 0xff0f0005, NONE, 32) \
    X(XRNIC_BUF_THRESHOLD_ROCE, \
                        0x20008, RW,   0x965a, 0xffffffff, 0xffffffff, NONE, 32) \
    X(XRNIC_PAUSE_CONF, 0x2000c, RW,   0x800,  0x00001ff3, 0x00001ff3, NONE, 32) \
    X(MACXADDLSB,       0x20010, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(MACXADDMSB,       0x20014, RW,   0,      0x0000ffff, 0x0000ffff, NONE, 33) \
    X(XRNIC_BUF_THRESHOLD_NON_ROCE, \
                        0x20018, RW,   0x965a, 0xffffffff, 0xffffffff, NONE, 33) \
    X(IPv6XADD1,        0x20020, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(IPv6XADD2,        0x20024, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(IPv6XADD3,        0x20028, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(IPv6XADD4,        0x2002c, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(ERRBUFBA,         0x20060, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(ERRBUFBAMSB,      0x20064, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(ERRBUFSZ,         0x20068, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(ERRBUFWPTR,       0x2006c, RO,   0,      0x0000ffff, 0,          NONE, 33) \
    X(IPv4XADD,         0x20070, RW,   0,      0xffffffff, 0xffffffff, NONE, 33) \
    X(OPKTERRQBA,       0x20078, RW,   0,      0xffffffff, 0xffffffff, NONE, 34) \
    X(OPKTERRQBAMSB,    0x2007c, RW,   0,      0xffffffff, 0xffffffff, NONE, 34) \
    X(OUTERRSTSQSZ,     0x20080, RW,   0,      0x0000ffff, 0x0000ffff, NONE, 34) \
    X(OPTERRSTSQQPTRDB, 0x20084, RW,   0,      0x0000ffff, 0x0000ffff, NONE, 34) \
    X(IPKTERRQBA,       0x20088, RW,   0,      0xffffffff, 0xffffffff, NONE, 34) \
    X(IPKTERRQBAMSB,    0x2008c, RW,   0,      0xffffffff, 0xffffffff, NONE, 34) \
    X(IPKTERRQSZ,       0x20090, RW,   0,      0x0000ffff, 0x0000ffff, NONE, 34) \
    X(IPKTERRQWPTR,     0x20094, RO,   0,      0x0000ffff, 0,          NONE, 34) \
    X(DATBUFBA,         0x200a0, RW,   0,      0xffffffff, 0xffffffff, NONE, 34) \
    X(DATBUFBAMSB,      0x200a4, RW,   0,      0xffffffff, 0xffffffff, NONE, 34) \
    X(DATBUFSZ,         0x200a8, RW,   0,      0xffffffff, 0xffffffff, NONE, 34) \
    X(CON_IO_CONF,      0x200ac, RW,   0x80000000, 0x80ff0000, 0x00ff0000, NONE, 35) \
    X(RESPERRPKTBA,     0x200b0, RW,   0,      0xffffffff, 0xffffffff, NONE, 35) \
    X(RESPERRPKTBAMSB,  0x200b4, RW,   0,      0xffffffff, 0xffffffff, NONE, 35) \
    X(RESPERRSZ,        0x200b8, RW,   0,      0xffffffff, 0xffffffff, NONE, 35) \
    X(RESPERRSZMSB,     0x200bc, RW,   0,      0xffffffff, 0xffffffff, NONE, 35) \
    X(INSRRPKTCNT,      0x20100, RO,   0,      0xffffffff, 0,          NONE, 35) \
    X(INAMPKTCNT,       0x20104, RO,   0,      0xffffffff, 0,          NONE, 35) \
    X(OUTIOPKTCNT,      0x20108, RO,   0,      0xffffffff, 0,          NONE, 35) \
    X(OUTAMPKTCNT,      0x2010c, RO,   0,      0xffffffff, 0,          NONE, 35) \
    X(LSTINPKT,         0x20110, RO,   0,      0xffffffff, 0,          NONE, 36) \
    X(LSTOUTPKT,        0x20114, RO,   0,      0xffffffff, 0,          NONE, 36) \
    X(ININVDUPCNT,      0x20118, RO,   0,      0xffffffff, 0,          NONE, 36) \
    X(INNCKPKTSTS,      0x2011c, RO,   0,      0xffff00ff, 0,          NONE, 36) \
    X(OUTRNRPKTSTS,     0x20120, RO,   0,      0xffff00ff, 0,          NONE, 36) \
    X(WQEPROCSTS,       0x20124, RO,   0x20,   0xfffff077, 0,          NONE, 36) \
    X(QPMSTS,           0x2012c, RO,   0x2,    0xffff0003, 0,          NONE, 36) \
    X(INALLDRPPKTCNT,   0x20130, RO,   0,      0xffffffff, 0,          NONE, 37) \
    X(INNAKPKTCNT,      0x20134, RO,   0,      0x0000ffff, 0,          NONE, 37) \
    X(OUTNAKPKTCNT,     0x20138, RO,   0,      0x0000ffff, 0,          NONE, 37) \
    X(RESPHNDSTS,       0x2013c, RO,   0x10000, 0x00033fff, 0,         NONE, 37) \
    X(RETRYCNTSTS,      0x20140, RO,   0,      0xffffffff, 0,          NONE, 37) \
    X(INCNPPKTCNT,      0x20174, RO,   0,      0xffffffff, 0,          NONE, 37) \
    X(OUTCNPPKTCNT,     0x20178, RO,   0,      0xffffffff, 0,          NONE, 37) \
    X(OUTRDRSPPKTCNT,   0x2017c, RO,   0,      0xffffffff, 0,          NONE, 37) \
    X(INTEN,            0x20180, RW,   0,      0x000001fb, 0x000001fb, NONE, 37) \
    X(INTSTS,           0x20184, W1C, 0,      0x000001fb, 0x000001fb, NONE, 38) \
    X(RQINTSTS1,        0x20190, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(RQINTSTS2,        0x20194, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(RQINTSTS3,        0x20198, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(RQINTSTS4,        0x2019c, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(RQINTSTS5,        0x201a0, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(RQINTSTS6,        0x201a4, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(RQINTSTS7,        0x201a8, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(RQINTSTS8,        0x201ac, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(CQINTSTS1,        0x201b0, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(CQINTSTS2,        0x201b4, W1C, 0,      0xffffffff, 0xffffffff, NONE, 38) \
    X(CQINTSTS3,        0x201b8, W1C, 0,      0xffffffff, 0xffffffff, NONE, 39) \
    X(CQINTSTS4,        0x201bc, W1C, 0,      0xffffffff, 0xffffffff, NONE, 39) \
    X(CQINTSTS5,        0x201c0, W1C, 0,      0xffffffff, 0xffffffff, NONE, 39) \
    X(CQINTSTS6,        0x201c4, W1C, 0,      0xffffffff, 0xffffffff, NONE, 39) \
    X(CQINTSTS7,        0x201c8, W1C, 0,      0xffffffff, 0xffffffff, NONE, 39) \
    X(CQINTSTS8,        0x201cc, W1C, 0,      0xffffffff, 0xffffffff, NONE, 39) \
    X(CNPSCHDSTS1REG,   0x201d0, RO,   0,      0xffffffff, 0,          NONE, 39) \
    X(CNPSCHDSTS2REG,   0x201d4, RO,   0,      0xffffffff, 0,          NONE, 39) \
    X(CNPSCHDSTS3REG,   0x201d8, RO,   0,      0xffffffff, 0,          NONE, 39) \
    X(CNPSCHDSTS4REG,   0x201dc, RO,   0,      0xffffffff, 0,          NONE, 39) \
    X(CNPSCHDSTS5REG,   0x201e0, RO,   0,      0xffffffff, 0,          NONE, 39) \
    X(CNPSCHDSTS6REG,   0x201e4, RO,   0,      0xffffffff, 0,          NONE, 40) \
    X(CNPSCHDSTS7REG,   0x201e8, RO,   0,      0xffffffff, 0,          NONE, 40) \
    X(CNPSCHDSTS8REG,   0x201ec, RO,   0,      0xffffffff, 0,          NONE, 40)

/*
 * Per-QP registers (PG332 pp.41-46), offsets within the QP block.
 * STATQPi: status bits are RO, the retry and RNR counters [26:24] and
 * [30:28] are RW. Its reset value reports an idle QP: SQ empty (bit 9)
 * and outstanding queue empty (bit 10).
 * SWO follows PG332 XRNICADCONF[0] (CQHEADi, STATCURSQPTRi,
 * STATRQPIDBi) plus the RO registers that the fatal recovery procedure
 * (PG332 ch.6 "QP Fatal Recovery", step 4) tells software to zero:
 * STATRQBUFCAi, STATRQBUFCAMSBi and STATMSN.
 */
#define ERNIC_QP_REGS(X) \
    X(QPCONF,           0x00, RW,  0,     0xffff07fd, 0xffff07fd, NONE, 41) \
    X(QPADVCONF,        0x04, RW,  0,     0xffffff3f, 0xffffff3f, NOQP1, 41) \
    X(RQBA,             0x08, RW,  0,     0xffffff00, 0xffffff00, NONE, 41) \
    X(SQBA,             0x10, RW,  0,     0xffffffe0, 0xffffffe0, NONE, 42) \
    X(CQBA,             0x18, RW,  0,     0xffffffe0, 0xffffffe0, NONE, 42) \
    X(RQWPTRDBADD,      0x20, RW,  0,     0xffffffff, 0xffffffff, NONE, 42) \
    X(RQWPTRDBADDMSB,   0x24, RW,  0,     0xffffffff, 0xffffffff, NONE, 42) \
    X(CQDBADD,          0x28, RW,  0,     0xffffffff, 0xffffffff, NONE, 42) \
    X(CQDBADDMSB,       0x2c, RW,  0,     0xffffffff, 0xffffffff, NONE, 42) \
    X(CQHEAD,           0x30, RO,  0,     0x0000ffff, 0,          SWO, 43) \
    X(RQCI,             0x34, RW,  0,     0x0000ffff, 0x0000ffff, NONE, 43) \
    X(SQPI,             0x38, RW,  0,     0x0000ffff, 0x0000ffff, NONE, 43) \
    X(QDEPTH,           0x3c, RW,  0,     0xffffffff, 0xffffffff, NONE, 43) \
    X(SQPSN,            0x40, RW,  0,     0x00ffffff, 0x00ffffff, NOQP1, 43) \
    X(LSTRQREQ,         0x44, RW,  0,     0xffffffff, 0xffffffff, NOQP1, 43) \
    X(DESTQPCONF,       0x48, RW,  0,     0x00ffffff, 0x00ffffff, NONE, 43) \
    X(TIMEOUTCONF,      0x4c, RW,  0,     0x001f3f3f, 0x001f3f3f, NOQP1, 45) \
    X(MACDESADDLSB,     0x50, RW,  0,     0xffffffff, 0xffffffff, NONE, 44) \
    X(MACDESADDMSB,     0x54, RW,  0,     0x0000ffff, 0x0000ffff, NONE, 44) \
    X(IPDESADDR1,       0x60, RW,  0,     0xffffffff, 0xffffffff, NONE, 44) \
    X(IPDESADDR2,       0x64, RW,  0,     0xffffffff, 0xffffffff, NONE, 44) \
    X(IPDESADDR3,       0x68, RW,  0,     0xffffffff, 0xffffffff, NONE, 44) \
    X(IPDESADDR4,       0x6c, RW,  0,     0xffffffff, 0xffffffff, NONE, 44) \
    X(STATSSN,          0x80, RO,  0,     0x00ffffff, 0,          NOQP1, 45) \
    X(STATMSN,          0x84, RO,  0,     0x00ffffff, 0,          NOQP1_SWO, 45) \
    X(STATQP,           0x88, RO,  0x600, 0x777f0e1f, 0x77000000, NONE, 45) \
    X(STATCURSQPTR,     0x8c, RO,  0,     0x0000ffff, 0,          SWO, 45) \
    X(STATRESPSN,       0x90, RO,  0,     0x00ffffff, 0,          NOQP1, 46) \
    X(STATRQBUFCA,      0x94, RO,  0,     0xffffff00, 0,          SWO, 46) \
    X(STATWQE,          0x98, RO,  0,     0x0000ffff, 0,          NONE, 46) \
    X(STATRQPIDB,       0x9c, RO,  0,     0x0000ffff, 0,          SWO, 46) \
    X(PD,               0xb0, RW,  0,     0x00ffffff, 0x00ffffff, NOQP1, 46) \
    X(RQBAMSB,          0xc0, RW,  0,     0xffffffff, 0xffffffff, NONE, 42) \
    X(SQBAMSB,          0xc8, RW,  0,     0xffffffff, 0xffffffff, NONE, 42) \
    X(CQBAMSB,          0xd0, RW,  0,     0xffffffff, 0xffffffff, NONE, 42) \
    X(STATRQBUFCAMSB,   0xd8, RO,  0,     0xffffffff, 0,          SWO, 46)

/*
 * Offsets as ERNIC_<NAME> constants. (An X-macro expanding to enumerators:
 * checkpatch's "complex values" warning does not apply.)
 */
#define ERNIC_REG_OFFSET_ENUM(name, off, acc, rst, mask, wmask, flags, page) \
    ERNIC_##name = (off),
enum {
    ERNIC_PDT_REGS(ERNIC_REG_OFFSET_ENUM)
    ERNIC_GCSR_REGS(ERNIC_REG_OFFSET_ENUM)
    ERNIC_QP_REGS(ERNIC_REG_OFFSET_ENUM)
};
#undef ERNIC_REG_OFFSET_ENUM

#define ERNIC_RQINTSTS(n)               (ERNIC_RQINTSTS1 + 4 * ((n) - 1))
#define ERNIC_CQINTSTS(n)               (ERNIC_CQINTSTS1 + 4 * ((n) - 1))
#define ERNIC_CNPSCHDSTSREG(n)          (ERNIC_CNPSCHDSTS1REG + 4 * ((n) - 1))

/*
 * Register fields.
 */

/* XRNICCONF (p.32) */
#define ERNIC_XRNICCONF_EN              (1u << 0)
#define ERNIC_XRNICCONF_ACKGEN_SHIFT    3
#define ERNIC_XRNICCONF_ACKGEN_MASK     (3u << 3)
#define ERNIC_XRNICCONF_ERRBUF_EN       (1u << 5)
#define ERNIC_XRNICCONF_NUMQP_SHIFT     8
#define ERNIC_XRNICCONF_NUMQP_MASK      (0xffu << 8)
#define ERNIC_XRNICCONF_UDPSRC_SHIFT    16
#define ERNIC_XRNICCONF_UDPSRC_MASK     (0xffffu << 16)
#define ERNIC_XRNICCONF_UDPSRC_MASK     (0xffffu << 16)

/* XRNICADCONF (p.32) */
#define ERNIC_XRNICADCONF_SWO           (1u << 0)
#define ERNIC_XRNICADCONF_RETRY_FATAL_DIS (1u << 2)
#define ERNIC_XRNICADCONF_BASECNT_SHIFT 16
#define ERNIC_XRNICADCONF_BASECNT_MASK  (0xfu << 16)
#define ERNIC_XRNICADCONF_SWOQP_SHIFT   24
#define ERNIC_XRNICADCONF_SWOQP_MASK    (0xffu << 24)

/* CON_IO_CONF (p.35) */
#define ERNIC_CON_IO_CONF_QPID_SHIFT    16
#define ERNIC_CON_IO_CONF_QPID_MASK     (0xffu << 16)
#define ERNIC_CON_IO_CONF_READY         (1u << 31)

/*
 * RESPHNDSTS (p.37). Bit 16 is "Reserved" in Table 2-7 but is polled as
 * "sq pici db check en" by the fatal recovery procedure (p.62); see
 * docs/registers.md, "Contradictions".
 */
#define ERNIC_RESPHNDSTS_QPIDX_MASK     0xffu
#define ERNIC_RESPHNDSTS_FSM_SHIFT      8
#define ERNIC_RESPHNDSTS_FSM_MASK       (0x3fu << 8)
#define ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN (1u << 16)
#define ERNIC_RESPHNDSTS_ACKS_TO_PROCESS (1u << 17)

/* INTEN / INTSTS (pp.37-38) */
#define ERNIC_INT_PKT_VALIDATION_ERR    (1u << 0)
#define ERNIC_INT_MAD_RECEIVED          (1u << 1)
#define ERNIC_INT_RNR_NAK_GENERATED     (1u << 3)
#define ERNIC_INT_WQE_COMPLETION        (1u << 4)
#define ERNIC_INT_ILLEGAL_OPCODE        (1u << 5)
#define ERNIC_INT_RQ_PKT_RECEIVED       (1u << 6)
#define ERNIC_INT_FATAL                 (1u << 7)
#define ERNIC_INT_CNP_SCHEDULED         (1u << 8)
#define ERNIC_INT_ALL                   0x1fbu

/* QPCONFi (p.41) */
#define ERNIC_QPCONF_QP_EN              (1u << 0)
#define ERNIC_QPCONF_RQ_INT_EN          (1u << 2)
#define ERNIC_QPCONF_CQ_INT_EN          (1u << 3)
#define ERNIC_QPCONF_HW_HS_DIS          (1u << 4)
#define ERNIC_QPCONF_CQE_WR_EN          (1u << 5)
#define ERNIC_QPCONF_UNDER_RECOVERY     (1u << 6)
#define ERNIC_QPCONF_IPV6               (1u << 7)
#define ERNIC_QPCONF_PMTU_SHIFT         8
#define ERNIC_QPCONF_PMTU_MASK          (7u << 8)
#define ERNIC_QPCONF_RQBUFSZ_SHIFT      16      /* units of 256 bytes */
#define ERNIC_QPCONF_RQBUFSZ_MASK       (0xffffu << 16)
#define ERNIC_QPCONF_RQBUFSZ_MASK       (0xffffu << 16)

#define ERNIC_PMTU_256                  0
#define ERNIC_PMTU_512                  1
#define ERNIC_PMTU_1024                 2
#define ERNIC_PMTU_2048                 3
#define ERNIC_PMTU_4096                 4

/* QPADVCONFi (p.41) */
#define ERNIC_QPADVCONF_TC_MASK         0x3fu
#define ERNIC_QPADVCONF_TTL_SHIFT       8
#define ERNIC_QPADVCONF_TTL_MASK        (0xffu << 8)
#define ERNIC_QPADVCONF_PKEY_SHIFT      16
#define ERNIC_QPADVCONF_PKEY_MASK       (0xffffu << 16)
#define ERNIC_QPADVCONF_PKEY_MASK       (0xffffu << 16)

/* QDEPTHi (p.43) */
#define ERNIC_QDEPTH_SQ_MASK            0xffffu
#define ERNIC_QDEPTH_RQ_SHIFT           16
#define ERNIC_QDEPTH_RQ_MASK            (0xffffu << 16)

/* LSTRQREQi (p.43) */
#define ERNIC_LSTRQREQ_PSN_MASK         0x00ffffffu
#define ERNIC_LSTRQREQ_OPCODE_SHIFT     24
#define ERNIC_LSTRQREQ_OPCODE_MASK      (0xffu << 24)

/* TIMEOUTCONFi (p.45) */
#define ERNIC_TIMEOUTCONF_TIMEOUT_MASK  0x3fu
#define ERNIC_TIMEOUTCONF_RETRY_SHIFT   8
#define ERNIC_TIMEOUTCONF_RETRY_MASK    (7u << 8)
#define ERNIC_TIMEOUTCONF_RNRRETRY_SHIFT 11
#define ERNIC_TIMEOUTCONF_RNRRETRY_MASK (7u << 11)
#define ERNIC_TIMEOUTCONF_RNRTIMER_SHIFT 16
#define ERNIC_TIMEOUTCONF_RNRTIMER_MASK (0x1fu << 16)

/* STATQPi (p.45) */
#define ERNIC_STATQP_FATAL              (1u << 0)
#define ERNIC_STATQP_RQ_OVFL            (1u << 1)
#define ERNIC_STATQP_SQ_FULL            (1u << 2)
#define ERNIC_STATQP_OSQ_FULL           (1u << 3)
#define ERNIC_STATQP_CQ_FIFO_FULL       (1u << 4)
#define ERNIC_STATQP_SQ_EMPTY           (1u << 9)
#define ERNIC_STATQP_OSQ_EMPTY          (1u << 10)
#define ERNIC_STATQP_RETRIED            (1u << 11)
#define ERNIC_STATQP_NAK_SYND_SHIFT     16
#define ERNIC_STATQP_NAK_SYND_MASK      (0x7fu << 16)
#define ERNIC_STATQP_RETRY_CNT_SHIFT    24
#define ERNIC_STATQP_RETRY_CNT_MASK     (7u << 24)
#define ERNIC_STATQP_RNR_CNT_SHIFT      28
#define ERNIC_STATQP_RNR_CNT_MASK       (7u << 28)
/*
 * The AETH syndromes of the NAKs STATQPi[22:16] reports (IBTA 9.7.5.2:
 * code 0..3 in bits [4:0] of a NAK, 011 in [7:5]).
 */
#define ERNIC_NAK_PSN_SEQ               0x60
#define ERNIC_NAK_INVALID_REQ           0x61
#define ERNIC_NAK_REMOTE_ACCESS         0x62
#define ERNIC_NAK_REMOTE_OP             0x63

/* ACCESSDESC (p.31) */
#define ERNIC_ACCESSDESC_TYPE_MASK      0xfu
#define ERNIC_ACCESS_READ_ONLY          0x0
#define ERNIC_ACCESS_WRITE_ONLY         0x1
#define ERNIC_ACCESS_READ_WRITE         0x2
#define ERNIC_ACCESSDESC_LENMSB_SHIFT   16
#define ERNIC_ACCESSDESC_LENMSB_MASK    (0xffffu << 16)

/*
 * Memory structures.
 */

/* SQ work queue entry, 64 bytes, little endian (PG332 Table 2-1) */
#define ERNIC_WQE_SIZE                  64
#define ERNIC_WQE_WRID                  0       /* 16 bits */
#define ERNIC_WQE_LADDR                 4       /* 64 bits */
#define ERNIC_WQE_LENGTH                12      /* 32 bits */
#define ERNIC_WQE_OPCODE                16      /* 8 bits */
#define ERNIC_WQE_ROFFSET               20      /* 64 bits */
#define ERNIC_WQE_RTAG                  28      /* 32 bits */
#define ERNIC_WQE_SDATA                 32      /* 16 bytes */
#define ERNIC_WQE_IMMDT                 48      /* 32 bits */
#define ERNIC_WQE_SDATA_MAX             16
/* PG332 p.10: "DMA length > 8 MB per WQE" is not supported. */
#define ERNIC_MAX_MSG_SIZE              (8u << 20)
/*
 * A QP1 RQ buffer starts with a 40-byte IP area: an IPv6 header, or 20
 * zero bytes and an IPv4 header; then UDP, BTH, DETH and the MAD
 * (docs/engine.md, the layout the Xilinx drivers parse).
 */
#define ERNIC_GSI_IP_AREA               40

#define ERNIC_OP_WRITE                  0x00
#define ERNIC_OP_WRITE_IMM              0x01
#define ERNIC_OP_SEND                   0x02
#define ERNIC_OP_SEND_IMM               0x03
#define ERNIC_OP_READ                   0x04
#define ERNIC_OP_SEND_INV               0x0c

/* Completion queue entry, 4 bytes (PG332 Table 2-2) */
#define ERNIC_CQE_SIZE                  4
#define ERNIC_CQE_WRID_MASK             0xffffu
#define ERNIC_CQE_OPCODE_SHIFT          16
#define ERNIC_CQE_OPCODE_MASK           (0xffu << 16)
#define ERNIC_CQE_ERRFLAG_SHIFT         24
#define ERNIC_CQE_ERRFLAG_MASK          (0xffu << 24)

/* Incoming packet error status (fatal) queue entry (PG332 Fig. 2-3) */
#define ERNIC_IPKTERRQ_ENTRY_SIZE       8
#define ERNIC_IPKTERRQ_CODE_MASK        0xffffu
#define ERNIC_IPKTERRQ_QPID_SHIFT       16

/*
 * Packet validation error syndrome bits (PG332 Table 2-3), the 4-byte
 * prefix of every error buffer entry.
 */
#define ERNIC_SYND_DST_MAC              (1u << 0)
#define ERNIC_SYND_IP_VERSION           (1u << 2)
#define ERNIC_SYND_IPV4_IHL             (1u << 3)
#define ERNIC_SYND_IPV4_FLAGS           (1u << 5)
#define ERNIC_SYND_IPV4_FRAG            (1u << 6)
#define ERNIC_SYND_DST_IP               (1u << 8)
#define ERNIC_SYND_IPV4_CSUM            (1u << 9)
#define ERNIC_SYND_IP_LEN               (1u << 10)
#define ERNIC_SYND_UDP_LEN              (1u << 12)
#define ERNIC_SYND_BTH_TVER             (1u << 13)
#define ERNIC_SYND_QP_UNSUPPORTED       (1u << 14)
#define ERNIC_SYND_QP_NOT_ENABLED       (1u << 15)
#define ERNIC_SYND_OPCODE_SEQ           (1u << 16)
#define ERNIC_SYND_OPCODE_UNSUPPORTED   (1u << 17)
#define ERNIC_SYND_PAD                  (1u << 18)
#define ERNIC_SYND_PMTU                 (1u << 19)
#define ERNIC_SYND_RQ_FULL              (1u << 20)
#define ERNIC_SYND_PSN_SEQ              (1u << 21)
#define ERNIC_SYND_AETH                 (1u << 22)
#define ERNIC_SYND_BAD_RESPONSE         (1u << 23)
#define ERNIC_SYND_SRC_IP               (1u << 27)
#define ERNIC_SYND_SRC_MAC              (1u << 28)
#define ERNIC_SYND_ICRC                 (1u << 30)
#define ERNIC_SYND_FCS                  (1u << 31)

/* Bytes of a failing packet kept after the syndrome in an error buffer. */
#define ERNIC_ERRBUF_SYND_SIZE          4

/* FATAL codes of the incoming packet error status queue (PG332 Table 2-4) */
#define ERNIC_FATAL_OPCODE_SEQ          0x01
#define ERNIC_FATAL_LENGTH              0x02
#define ERNIC_FATAL_OPCODE_SEQ_AND_LENGTH 0x03
#define ERNIC_FATAL_UNSUPPORTED_OPCODE  0x04
#define ERNIC_FATAL_WQE_PROCESSOR       0x05
#define ERNIC_FATAL_RESPONSE_HANDLER    0x06
#define ERNIC_FATAL_RNR_COUNTER         0x09
#define ERNIC_FATAL_NAK_RECEIVED        0x0a
#define ERNIC_FATAL_ACK_OPCODE          0x0c
#define ERNIC_FATAL_RNR_DOWN_COUNTER    0x0d
#define ERNIC_FATAL_READ_RESOURCES      0x10
#define ERNIC_FATAL_WRITE_OPCODE_SEQ    0x11
#define ERNIC_FATAL_WRITE_LENGTH        0x12
#define ERNIC_FATAL_WRITE_SEQ_AND_LENGTH 0x13
#define ERNIC_FATAL_RKEY                0x15
#define ERNIC_FATAL_RETH_LENGTH         0x16
#define ERNIC_FATAL_RKEY_AND_LENGTH     0x17
#define ERNIC_FATAL_AETH                0x19
#define ERNIC_FATAL_READ_RESP_ONLY_LEN  0x1a
#define ERNIC_FATAL_BAD_RESPONSE        0x1b
#define ERNIC_FATAL_READ_RESP_LAST_ONLY 0x1c
#define ERNIC_FATAL_READ_RESP_MID_LEN   0x1e
#define ERNIC_FATAL_READ_RESP_LAST      0x1f

/*
 * Ethernet path, BAR4 (not part of PG332).
 *
 * ERNIC passes non-RoCE traffic through separate AXI-Stream ports (PG332
 * p.8, Table 2-5) to logic outside the IP. On a board that logic is a
 * DMA engine; this device models it as two descriptor rings so that a
 * guest can run an ordinary net_device next to the RDMA engine
 * (docs/engine.md, "Ethernet path").
 */
#define ERNIC_ETH_BAR_SIZE              0x1000
#define ERNIC_ETH_ID                    0x000   /* RO "ETH1" */
#define ERNIC_ETH_CTRL                  0x004   /* RW */
#define ERNIC_ETH_INTSTS                0x008   /* W1C */
#define ERNIC_ETH_INTEN                 0x00c   /* RW */
#define ERNIC_ETH_TXBA                  0x010   /* RW, 16-byte aligned */
#define ERNIC_ETH_TXBAMSB               0x014
#define ERNIC_ETH_TXSZ                  0x018   /* entries, power of 2 */
#define ERNIC_ETH_TXPI                  0x01c   /* SW: next slot to post */
#define ERNIC_ETH_TXCI                  0x020   /* RO: next slot to send */
#define ERNIC_ETH_RXBA                  0x030
#define ERNIC_ETH_RXBAMSB               0x034
#define ERNIC_ETH_RXSZ                  0x038
#define ERNIC_ETH_RXPI                  0x03c   /* SW: buffers posted */
#define ERNIC_ETH_RXCI                  0x040   /* RO: next slot to fill */
#define ERNIC_ETH_TXPKTCNT              0x050   /* RO */
#define ERNIC_ETH_RXPKTCNT              0x054   /* RO */
#define ERNIC_ETH_RXDROPCNT             0x058   /* RO: no buffer posted */
#define ERNIC_ETH_STATUS                0x05c   /* RO: link */

#define ERNIC_ETH_ID_VALUE              0x31485445u     /* "ETH1" */
#define ERNIC_ETH_CTRL_TX_EN            (1u << 0)
#define ERNIC_ETH_CTRL_RX_EN            (1u << 1)
#define ERNIC_ETH_INT_TX                (1u << 0)
#define ERNIC_ETH_INT_RX                (1u << 1)
#define ERNIC_ETH_INT_LINK              (1u << 2)   /* link went up/down */
#define ERNIC_ETH_STATUS_LINK_UP        (1u << 0)
/* Set on every device with the register: older ones read 0 there. */
#define ERNIC_ETH_STATUS_VALID          (1u << 31)
#define ERNIC_ETH_RING_MAX              4096

/* Ethernet path descriptor, 16 bytes, little endian */
#define ERNIC_ETH_DESC_SIZE             16
#define ERNIC_ETH_DESC_ADDR             0       /* 64 bits: buffer */
#define ERNIC_ETH_DESC_LEN              8       /* 16 bits: bytes */
#define ERNIC_ETH_DESC_FLAGS            10      /* 16 bits */
#define ERNIC_ETH_DESC_DONE             (1u << 0)
#define ERNIC_ETH_DESC_ERR              (1u << 1)
#define ERNIC_ETH_FRAME_MAX             9216

/*
 * ImmDt DMA, BAR4 + ERNIC_IMMDT_BASE (not part of PG332): the board logic
 * behind ERNIC's ieth_immdt_m_axis stream (PG332 Table 1-1), an AXI DMA
 * (PG021) with only its S2MM channel, in scatter-gather mode, as in the
 * ERNIC reference design. Register offsets are PG021's, from the block's
 * base (docs/immdt.md).
 */
#define ERNIC_IMMDT_BASE                0x800
#define ERNIC_IMMDT_SIZE                0x200
#define ERNIC_IMMDT_S2MM_DMACR          0x30
#define ERNIC_IMMDT_S2MM_DMASR          0x34
#define ERNIC_IMMDT_S2MM_CURDESC        0x38    /* 64-byte aligned */
#define ERNIC_IMMDT_S2MM_CURDESC_MSB    0x3c
#define ERNIC_IMMDT_S2MM_TAILDESC       0x40    /* writing it starts */
#define ERNIC_IMMDT_S2MM_TAILDESC_MSB   0x44
#define ERNIC_IMMDT_DROPCNT             0x100   /* RO: entries lost */

#define ERNIC_DMACR_RS                  (1u << 0)
#define ERNIC_DMACR_RESET               (1u << 2)
#define ERNIC_DMACR_IOC_IRQEN           (1u << 12)
#define ERNIC_DMACR_DLY_IRQEN           (1u << 13)
#define ERNIC_DMACR_ERR_IRQEN           (1u << 14)
#define ERNIC_DMACR_THRESH_SHIFT        16
#define ERNIC_DMACR_THRESH_MASK         (0xffu << 16)
#define ERNIC_DMACR_DELAY_SHIFT         24
#define ERNIC_DMACR_DELAY_MASK          (0xffu << 24)
#define ERNIC_DMASR_HALTED              (1u << 0)
#define ERNIC_DMASR_IDLE                (1u << 1)
#define ERNIC_DMASR_SGINCLD             (1u << 3)
#define ERNIC_DMASR_DMAINTERR           (1u << 4)
#define ERNIC_DMASR_DMASLVERR           (1u << 5)
#define ERNIC_DMASR_SGINTERR            (1u << 8)
#define ERNIC_DMASR_SGSLVERR            (1u << 9)
#define ERNIC_DMASR_IOC_IRQ             (1u << 12)
#define ERNIC_DMASR_DLY_IRQ             (1u << 13)
#define ERNIC_DMASR_ERR_IRQ             (1u << 14)
#define ERNIC_DMASR_IRQS                (7u << 12)
#define ERNIC_DMASR_ERRS                0x770u  /* [6:4], [10:8] */

/* AXI DMA S2MM scatter-gather descriptor (PG021), 64-byte aligned, LE */
#define ERNIC_SGD_SIZE                  0x40
#define ERNIC_SGD_NXTDESC               0x00    /* 64 bits */
#define ERNIC_SGD_BUFFER                0x08    /* 64 bits */
#define ERNIC_SGD_CONTROL               0x18    /* [25:0] buffer length */
#define ERNIC_SGD_STATUS                0x1c
#define ERNIC_SGD_LEN_MASK              0x03ffffffu
#define ERNIC_SGD_ST_RXEOF              (1u << 26)
#define ERNIC_SGD_ST_RXSOF              (1u << 27)
#define ERNIC_SGD_ST_CMPLT              (1u << 31)

/* One ieth_immdt entry (PG332 Table 1-1), 64 bits, LE in memory */
#define ERNIC_IMMDT_ENTRY_LEN           8
#define ERNIC_IMMDT_TYPE_SEND_INV       0x01
#define ERNIC_IMMDT_TYPE_SEND_IMM       0x02
#define ERNIC_IMMDT_TYPE_WRITE_IMM      0x03

#endif /* HW_RDMA_ERNIC_REGS_H */
