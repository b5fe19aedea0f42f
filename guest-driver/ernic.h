/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Linux driver for the Xilinx/AMD ERNIC RoCEv2 RNIC (PG332 v3.1), as
 * emulated by QEMU's -device ernic: shared definitions.
 */
#ifndef ERNIC_H
#define ERNIC_H

#include <linux/bitfield.h>
#include <linux/pci.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/ernic-abi.h>
#include "ernic_compat.h"

#include "hw/rdma/ernic_regs.h"
#include "hw/rdma/ernic_ext_regs.h"

#define ERNIC_DRV_NAME		"ernic"

/* Error buffer and incoming packet error status queue (PG332 ch.6). */
#define ERNIC_ERRBUF_ENTRIES	64
#define ERNIC_ERRBUF_ENTRY_SIZE	256
#define ERNIC_FATALQ_ENTRIES	64

/*
 * Ethernet path rings. A buffer holds a frame of an MTU of up to 4334
 * bytes: with RoCEv2's headers, enough for IB MTU 4096 (iboe_get_mtu()).
 */
#define ERNIC_ETH_RING_SIZE	256
#define ERNIC_ETH_BUF_SIZE	4352

struct ernic_eth_ring {
	void *desc;			/* ERNIC_ETH_DESC_SIZE each */
	dma_addr_t desc_dma;
	void *buf;			/* ERNIC_ETH_BUF_SIZE each */
	dma_addr_t buf_dma;
	u32 head;			/* next slot software posts */
	u32 tail;			/* next slot software reaps */
};

/*
 * Limits the driver advertises. PG332: 8 MiB per WQE (p.10,
 * ERNIC_MAX_MSG_SIZE of the register header), one local
 * buffer per WQE (Table 2-1), 16 outstanding incoming READs (p.22), a
 * PD/MR table of 256 entries (Table 2-7), 16-bit queue indices.
 */
#define ERNIC_MAX_RD_ATOM	16
#define ERNIC_MAX_QP_WR		16384
/*
 * A CQ is a list of QPs and holds no entries ("ernic_cq.c"): any size
 * fits. The limit is mlx5's, which consumers size for (libfabric's RxM
 * asks for (TX + RX size) x 256 peers, 196608 with its defaults).
 */
#define ERNIC_MAX_CQE		((1 << 22) - 1)
#define ERNIC_MAX_DEPTH		0x8000	/* QDEPTHi: 16 bits, a power of two */
#define ERNIC_MAX_RECV_SGE	4
/* ERNIC-X SRQs: a ring of four times the WRs, at most 32768 slots. */
#define ERNIC_MAX_SRQ_WR	16383
/* An SRQ ring's most slots: a power of two in SRQDEPTHn's 16 bits. */
#define ERNIC_SRQ_MAX_DEPTH	32768
/* XRC domains: 24 bits in SRQCONFn[31:8] and XRCDi; 0 is none. */
#define ERNIC_XRCD_MAX		((1u << 24) - 1)
/* SGEs of an RDMA READ or WRITE WR: one WQE each (docs/driver.md). */
#define ERNIC_MAX_RW_SGE	4
#define ERNIC_GSI_SEND_SGE	2	/* ib_mad: header + payload */
#define ERNIC_GSI_FRAME_SIZE	512	/* one QP1 send frame */
#define ERNIC_GSI_RQ_ELEM	512	/* IP area + UDP/BTH/DETH + MAD */
#define ERNIC_GSI_HDRS		(8 + 12 + 8)	/* UDP, BTH, DETH */
#define ERNIC_ICRC_LEN		4
#define ERNIC_UDP_SPORT		0xc001	/* XRNICCONF[31:16] */
#define ERNIC_GID_TBL_LEN	16
/*
 * A UD receive's wc.sl: RoCEv2 has no SL, so it carries the packet type
 * as mlx5 reports it (bit 3: UDP, i.e. RoCEv2; bits 2:0: 1 IPv6, 2
 * IPv4). UCX's ud_verbs takes from it which end of the GRH area holds
 * the destination GID, and drops every packet if it is 0.
 */
#define ERNIC_UD_SL_ROCEV2_IPV6	0x9
#define ERNIC_UD_SL_ROCEV2_IPV4	0xa
/* The DMA MR's length, as WRRDBUFLEN + ACCESSDESC[31:16] can hold it. */
#define ERNIC_DMA_MR_LEN	((1ull << 48) - 1)
/* Pages of a fast-registration MR: a 4 KiB page list (ERNIC-X). */
#define ERNIC_MAX_FR_PAGES	512
/*
 * MR entries below which rdma_rw keeps a READ per max_sge_rd pages: its
 * pools take an MR per RDMA context of every QP (nvmet-rdma: 128 a queue).
 */
#define ERNIC_RW_MR_MIN		1024
/*
 * Pages of a user MR: its page list is one coherent allocation of 8 B a
 * page (2 MiB at most). Pages are as large as the memory allows (4 KiB to
 * 1 GiB, the page shifts ERNIC-X takes), so this bounds the list, not
 * the region.
 */
#define ERNIC_MAX_USER_PAGES	(1u << 18)

/*
 * FLUSH access with global placement: the value of Linux 6.2's
 * IB_ACCESS_FLUSH_GLOBAL (IB_UVERBS_ACCESS_FLUSH_GLOBAL), which 6.1
 * lacks; a user MR gets it through reg_mr's driver data, a QP through
 * its access flags, which the core passes as they are.
 */
#define ERNIC_ACCESS_FLUSH_GLOBAL	(1 << 8)
/*
 * Inline data beyond SDATA's 16 bytes (ERNIC-X QPs): copied into a
 * per-slot buffer of the driver's, which the WQE names by an SGE.
 */
#define ERNIC_MAX_INLINE	256
/* ERNIC_SEND_WHOLE_CHAIN (ernic-abi.h) is the first driver bit. */
static_assert(ERNIC_SEND_WHOLE_CHAIN == IB_SEND_RESERVED_START);

struct ernic_umap;

struct ernic_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/* An XRC domain (ERNIC-X XRC): the number SRQCONFn and XRCDi name. */
struct ernic_xrcd {
	struct ib_xrcd ibxrcd;
	u32 n;
};

struct ernic_mr {
	struct ib_mr ibmr;
	u32 idx;			/* PD/MR or extended table entry */
	struct ib_umem *umem;		/* a user MR's pinned pages */
	int access;			/* a user MR's IB_ACCESS_* */
	/* A fast-registration MR's page list (ERNIC-X) */
	__le64 *pages;
	dma_addr_t pages_dma;
	u32 max_pages;
	u32 npages;
};

/* An ERNIC-X memory window: an entry of the extended MR table. */
struct ernic_mw {
	struct ib_mw ibmw;
	u32 idx;
};

/* An address vector, as the QP registers and the QP1 frames need it. */
struct ernic_av {
	u8 dmac[ETH_ALEN];
	bool ipv6;
	u8 sip[16];
	u8 dip[16];
	u8 hop_limit;
	u8 tclass;
	u32 flow_label;
	u32 sgid_index;		/* the source GID's, for query_qp/query_ah */
};

struct ernic_ah {
	struct ib_ah ibah;
	struct ernic_av av;
	int idx;		/* ERNIC-X AH table entry (UD), or -1 */
};

static inline struct ernic_ah *to_eah(struct ib_ah *ibah)
{
	return container_of(ibah, struct ernic_ah, ibah);
}

struct ernic_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* the QP lists and the arm flag */
	struct list_head sq_qps;	/* QPs whose send CQ this is */
	struct list_head rq_qps;	/* QPs whose receive CQ this is */
	bool armed;
};

/* What the driver remembers of a WQE: the CQE only has 16 bits of WRID. */
struct ernic_swqe {
	u64 wr_id;
	u32 byte_len;
	u8 opcode;			/* enum ib_wc_opcode */
	bool signaled;
	bool last;			/* the WR's last WQE: it completes it */
};

struct ernic_rwqe {
	u64 wr_id;
	int num_sge;
	struct ib_sge sge[ERNIC_MAX_RECV_SGE];
};

/* An ImmDt DMA entry of a QP not yet completed (docs/immdt.md). */
#define ERNIC_IMM_QLEN		64
struct ernic_imm {
	u32 data;			/* ImmDt or R_Key */
	u8 type;			/* ERNIC_IMMDT_TYPE_* */
	u8 pos;				/* RQ PI */
};

/*
 * An ERNIC-X shared receive queue (docs/extension.md): the device takes
 * its WQEs in ring order; each QP's receive metadata names the WQE a
 * message took, and the driver keeps the WR ID of each slot until then.
 */
/* An ERNIC-X multicast group: its GID and the QPs attached (bit QPN - 1). */
struct ernic_mcg {
	bool used;
	union ib_gid gid;
	DECLARE_BITMAP(qps, ERNIC_MCG_QP_WORDS * 32);
};

struct ernic_srq {
	struct ib_srq ibsrq;
	struct ernic_dev *dev;
	u32 n;				/* SRQ number, its register block */
	u32 depth;			/* ring slots, a power of two */
	u32 max_wr;
	u8 *ring;			/* 64-byte receive WQEs */
	dma_addr_t ring_dma;
	u64 *wr_id;			/* per slot */
	unsigned long *busy;		/* slot posted, not yet completed */
	u32 pi;				/* next slot to post (SRQPIn) */
	u32 outstanding;		/* posted, not yet completed */
	bool armed;			/* SRQLIMITn written, not yet fired */
	spinlock_t lock;		/* pi, busy, outstanding, armed */
	/* ERNIC-X XRC: an XRC SRQ of domain xrcdn */
	bool xrc;
	u32 xrcdn;
	/* A user SRQ: its ring and doorbell page are its process's. */
	bool user;
	struct ernic_umap *umap[ERNIC_USRQ_NR];
};

struct ernic_qp {
	struct ib_qp ibqp;
	struct ernic_dev *dev;
	u32 qpn;
	struct mutex mutex;		/* modify_qp and destroy */
	spinlock_t lock;		/* state, SQ and RQ software indices */
	enum ib_qp_state state;
	bool sq_held;			/* SQD: SQPIi not rung */
	bool user;			/* created through uverbs */
	/*
	 * A direct QP (ernic_uverbs.c): its rings, status page and doorbell
	 * page are the process's, which posts and polls; the driver only
	 * runs its states.
	 */
	bool direct;
	struct ernic_umap *umap[ERNIC_UQ_NR];
	struct ernic_uq_status *ust;	/* the status page, direct QPs */
	/* The CQ and RQ doorbell words (CQDBADDi, RQWPTRDBADDi). */
	__le32 *db_cq;
	__le32 *db_rq;
	dma_addr_t db_cq_dma;
	dma_addr_t db_rq_dma;
	/*
	 * ERNIC-X DBREC: the SQ doorbell record, or NULL (DBRECAi); with
	 * RQREC, db_sq[1] is the RQ's (the RQ consumer index, no RQCIi).
	 */
	__le32 *db_sq;
	dma_addr_t db_sq_dma;
	bool rqrec;
	bool dbrec_asked;		/* a direct QP's provider writes one */
	bool rqrec_asked;		/* ... with an RQ word */
	bool sq_sig_all;

	/* SQ (64-byte WQEs) and its CQ (4-byte CQEs), same depth. */
	void *sq;
	dma_addr_t sq_dma;
	__le32 *cqe;
	dma_addr_t cqe_dma;
	u32 sq_depth;
	u32 sq_wqes_per_wr;		/* SQ slots kept for each send WR */
	bool xwqe;			/* ERNIC-X: 128-byte WQEs, keyed SGEs */
	u32 wqe_size;			/* SQ entry: 64, or 128 with xwqe */
	u32 max_inline;			/* inline data a WR may carry */
	u8 *inl;			/* ERNIC_MAX_INLINE per SQ slot, or NULL */
	dma_addr_t inl_dma;
	u32 sq_pi;			/* next slot to post */
	u32 sq_ci;			/* next slot to complete */
	struct ernic_swqe *swqe;
	void *frames;			/* QP1: one frame per SQ slot */
	dma_addr_t frames_dma;
	u32 gsi_psn;

	/* RQ buffers; received SENDs are copied into posted receive WRs. */
	void *rq;
	dma_addr_t rq_dma;
	u32 rq_depth;
	u32 rq_elem;
	u32 rq_seen;			/* next RQ slot the device will fill */
	u32 rq_ci;			/* RQCIi as last written */
	bool rx_wqe;			/* ERNIC-X: RQ slots are receive WQEs */
	u8 *meta;			/* ERNIC-X receive metadata, per slot */
	dma_addr_t meta_dma;
	struct ernic_rwqe *rwqe;	/* posted receive WRs, FIFO */
	u32 rwqe_pi;
	u32 rwqe_ci;
	/* Without receive metadata: ImmDt DMA entries, oldest first */
	struct ernic_imm imm[ERNIC_IMM_QLEN];
	u32 imm_head;
	u32 imm_count;
	bool imm_kick;			/* a WRITE_IMM: tell the receive CQ */
	u32 rq_spare;			/* RQ buffers granted with no WR */
	/* ERNIC-X: receive WQEs come from this SRQ; the RQ only reports. */
	struct ernic_srq *srq;
	/* ERNIC-X XRC: an initiator, or a target of domain xrcdn */
	bool xrc_ini;
	bool xrc_tgt;
	u32 xrcdn;
	bool ud;			/* ERNIC-X UD QP: sends name an AH */
	bool uc;			/* ERNIC-X UC QP: nothing answers */

	struct ernic_cq *scq;
	struct ernic_cq *rcq;
	struct list_head scq_node;
	struct list_head rcq_node;

	/* Attributes kept for query_qp and for re-programming. */
	struct ib_qp_attr attr;
	struct ernic_av av;
	u32 qpconf;			/* QPCONFi without enable/recovery */
	/*
	 * QPCONFi as last written (ernic_qpconf_wr()), and its CQ [3] and
	 * RQ [2] interrupt enables masked while their CQ is not armed
	 * (ernic_cq.c): conf_lock.
	 */
	spinlock_t conf_lock;
	u32 qpconf_hw;
	u32 irq_off;

	/* FATAL (PG332 Table 2-4) and its completion status. */
	u8 fatal_code;
	u8 nak_synd;
	int err_status;			/* for the first ERRFLAG CQE, or -1 */
	int poll_state;			/* read before a CQ poll's SQ pass */
	int fatal_event;		/* enum ib_event_type, or -1: none */
	struct work_struct fatal_work;	/* raises fatal_event */
	struct work_struct flush_work;	/* Error: let the CQs' users poll */
};

struct ernic_dev {
	struct ib_device ibdev;		/* first: ib_alloc_device() */
	struct pci_dev *pdev;
	void __iomem *regs;		/* BAR0: PG332 register window */
	void __iomem *eth;		/* BAR4: Ethernet path */
	u32 num_qp;

	/* PG332 ch.6 global configuration */
	void *errbuf;
	dma_addr_t errbuf_dma;
	void *fatalq;
	dma_addr_t fatalq_dma;
	u32 fatalq_ci;
	/*
	 * fatalq_ci, and qp_map, qpn_hint and qps[]: the interrupt handler
	 * looks QPs up by number under it, so a QP leaves qps[] under it
	 * before it is freed.
	 */
	spinlock_t fatal_lock;
	struct mutex swo_mutex;		/* XRNICADCONF[0] windows */

	/* ImmDt DMA descriptor ring and its buffers (docs/immdt.md) */
	u8 *immdt;
	dma_addr_t immdt_dma;
	u32 immdt_ci;			/* next descriptor to look at */
	spinlock_t immdt_lock;		/* immdt_ci, TAILDESC */

	/* Per-QP CQ and RQ doorbell words (PG332 CQDBADDi, RQWPTRDBADDi) */
	__le32 *db;
	dma_addr_t db_dma;

	DECLARE_BITMAP(qp_map, ERNIC_NUM_QP_MAX + 1);	/* fatal_lock */
	u32 qpn_hint;			/* where the next QPN search starts */
	spinlock_t lock;		/* pd_map */
	DECLARE_BITMAP(pd_map, ERNIC_PDT_ENTRIES);
	struct ida mr_ida;		/* MR table entries */
	struct ida ah_ida;		/* ERNIC-X AH table entries */
	struct ida xrcd_ida;		/* ERNIC-X XRC domains */
	spinlock_t ah_lock;		/* the ERNIC-X AH window */
	u32 mr_max;			/* entries of the table in use */
	u32 ext;			/* ERNIC-X features on (EXTCTRL) */
	struct mutex mr_mutex;		/* the ERNIC-X MR window */
	struct ernic_qp *qps[ERNIC_NUM_QP_MAX + 1];	/* fatal_lock */
	/* ERNIC-X SRQs by number (lock), and the limit events' work. */
	struct ernic_srq *srqs[ERNIC_SRQ_NUM];
	struct work_struct srq_work;
	/* ERNIC-X multicast groups, as the device's table has them */
	struct mutex mc_mutex;
	struct ernic_mcg mcg[ERNIC_MCG_ENTRIES];
	u32 rq_buf_size;
	bool ib_registered;

	/* Ethernet path: the net_device */
	struct net_device *netdev;
	struct napi_struct napi;
	struct ernic_eth_ring tx;
	struct ernic_eth_ring rx;
	spinlock_t tx_lock;		/* tx.head */
	struct work_struct link_work;	/* BAR4 STATUS changed */
};

/* A user-space context (uverbs). */
struct ernic_ucontext {
	struct ib_ucontext ibuc;
	bool direct;			/* its QPs may be direct QPs */
};

static inline u32 ernic_rd(struct ernic_dev *dev, u32 off)
{
	return readl(dev->regs + off);
}

static inline void ernic_wr(struct ernic_dev *dev, u32 off, u32 val)
{
	writel(val, dev->regs + off);
}

static inline u32 ernic_eth_rd(struct ernic_dev *dev, u32 off)
{
	return readl(dev->eth + off);
}

static inline void ernic_eth_wr(struct ernic_dev *dev, u32 off, u32 val)
{
	writel(val, dev->eth + off);
}

static inline u32 ernic_qrd(struct ernic_dev *dev, u32 qpn, u32 off)
{
	return readl(dev->regs + ERNIC_QP_OFFSET(qpn) + off);
}

static inline void ernic_qwr(struct ernic_dev *dev, u32 qpn, u32 off, u32 val)
{
	writel(val, dev->regs + ERNIC_QP_OFFSET(qpn) + off);
}

static inline void ernic_qwr64(struct ernic_dev *dev, u32 qpn, u32 lo,
			       u32 hi, u64 val)
{
	ernic_qwr(dev, qpn, lo, lower_32_bits(val));
	ernic_qwr(dev, qpn, hi, upper_32_bits(val));
}

static inline struct ernic_dev *to_edev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct ernic_dev, ibdev);
}

static inline struct ernic_srq *to_esrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct ernic_srq, ibsrq);
}

static inline struct ernic_qp *to_eqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct ernic_qp, ibqp);
}

static inline struct ernic_cq *to_ecq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct ernic_cq, ibcq);
}

static inline struct ernic_mr *to_emr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct ernic_mr, ibmr);
}

static inline struct ernic_pd *to_epd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct ernic_pd, ibpd);
}

static inline struct ernic_xrcd *to_exrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct ernic_xrcd, ibxrcd);
}

/*
 * The kernel QPs' doorbell words: QP n has word n of the CQ and of the
 * RQ doorbell arrays, and words 2n, 2n + 1 of the doorbell records (SQ,
 * then RQ: ERNIC-X DBREC, RQREC).
 */
#define ERNIC_DB_CQ(qpn)	(qpn)
#define ERNIC_DB_RQ(qpn)	(ERNIC_NUM_QP_MAX + 1 + (qpn))
#define ERNIC_DB_SQ(qpn)	(2 * (ERNIC_NUM_QP_MAX + 1) + 2 * (qpn))
#define ERNIC_DB_SIZE		(4 * (ERNIC_NUM_QP_MAX + 1) * sizeof(__le32))

int ernic_eth_register(struct ernic_dev *dev);
void ernic_eth_unregister(struct ernic_dev *dev);
irqreturn_t ernic_eth_irq(int irq, void *data);

/* ernic_immdt.c: ImmDt and invalidated R_Keys without ERNIC-X */
int ernic_immdt_init(struct ernic_dev *dev);
void ernic_immdt_fini(struct ernic_dev *dev);
void ernic_immdt_collect(struct ernic_dev *dev);
bool ernic_immdt_irq(struct ernic_dev *dev);
bool ernic_imm_write(struct ernic_qp *qp, struct ib_wc *wc);
void ernic_imm_send(struct ernic_qp *qp, u32 slot, struct ib_wc *wc);
bool ernic_imm_ready(struct ernic_qp *qp);

/* ernic_ib.c: the ib_device */
int ernic_ib_register(struct ernic_dev *dev);
void ernic_ib_unregister(struct ernic_dev *dev);
int ernic_add_gid(const struct ib_gid_attr *attr, void **context);
int ernic_del_gid(const struct ib_gid_attr *attr, void **context);
int ernic_av_from_attr(struct ernic_dev *dev, const struct rdma_ah_attr *ah,
		       struct ernic_av *av);
void ernic_av_to_attr(const struct ernic_av *av, struct rdma_ah_attr *ah);

/* ernic_mr.c: MRs in the PG332 table or the ERNIC-X one */
void ernic_ext_init(struct ernic_dev *dev);
struct ib_mr *ernic_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *ernic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				u64 iova, int access, ERNIC_MR_DMAH
				struct ib_udata *udata);
struct ib_mr *ernic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 len, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *ernic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int ernic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int ernic_fill_local_wqe(const struct ib_send_wr *wr, u8 *w, u32 slot);
int ernic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int ernic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int ernic_dealloc_mw(struct ib_mw *ibmw);

/* ernic_uverbs.c: what user space may ask of the device */
bool ernic_user_capable(struct ernic_dev *dev);
int ernic_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata);
void ernic_dealloc_ucontext(struct ib_ucontext *uctx);
int ernic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void ernic_mmap_free(struct rdma_user_mmap_entry *entry);
bool ernic_uq_wanted(struct ernic_qp *qp, struct ib_udata *udata);
int ernic_uq_alloc(struct ernic_qp *qp, struct ib_udata *udata);
void ernic_uq_free(struct ernic_qp *qp);
int ernic_uq_reply(struct ernic_qp *qp, struct ib_udata *udata);
void ernic_uq_publish(struct ernic_qp *qp);
int ernic_usrq_alloc(struct ernic_srq *srq, struct ib_udata *udata);
void ernic_usrq_free(struct ernic_srq *srq);
int ernic_user_check_send(struct ernic_qp *qp, const struct ib_send_wr *wr);
int ernic_user_check_recv(const struct ib_recv_wr *wr);

/* ernic_cq.c */
int ernic_resize_cq(struct ib_cq *ibcq, ERNIC_CQE_T cqe,
		    struct ib_udata *udata);
int ernic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    ERNIC_CQ_ATTRS *attrs);
int ernic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int ernic_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc);
int ernic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void ernic_cq_notify(struct ernic_cq *cq);
void ernic_cq_qp_event(struct ernic_qp *qp, bool send);

/* ernic_qp.c: QP lifecycle, the IBTA state machine, FATAL */
int ernic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int ernic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int ernic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int ernic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
/* Until QP @qpn's device has sent what it was given (CQHEADi = SQPIi). */
void ernic_qp_wait_sent(struct ernic_dev *dev, u32 qpn, unsigned long end);
void ernic_fatalq_process(struct ernic_dev *dev);
void ernic_qpconf_wr(struct ernic_qp *qp, u32 val);
void ernic_qp_irq_mask(struct ernic_qp *qp, u32 bit, bool off);

/* ernic_wr.c: posting, and the copies of a software receive path */
/* ernic_srq.c: ERNIC-X shared receive queues */
int ernic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int ernic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int ernic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int ernic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int ernic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
u64 ernic_srq_complete(struct ernic_srq *srq, u32 slot);
void ernic_srq_init(struct ernic_dev *dev);
void ernic_srq_irq(struct ernic_dev *dev);
int ernic_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int ernic_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
void ernic_srq_xrc_notify(struct ernic_dev *dev, u32 xrcdn);

/* ernic_mcast.c: ERNIC-X multicast groups */
int ernic_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int ernic_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void ernic_mcast_qp_gone(struct ernic_dev *dev, u32 qpn);

void ernic_put_sge_list(u8 *g, const struct ib_sge *sg, int n);
int ernic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int ernic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
void ernic_ring_sq(struct ernic_qp *qp);
int ernic_poll_sq(struct ernic_qp *qp, int n, struct ib_wc *wc);
int ernic_poll_rq(struct ernic_qp *qp, int n, struct ib_wc *wc);
bool ernic_qp_has_work(struct ernic_qp *qp, bool send);

#endif /* ERNIC_H */
