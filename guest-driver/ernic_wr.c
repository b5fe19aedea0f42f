// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ERNIC work requests: SQ WQEs (PG332 Table 2-1), QP1 frames, receive
 * WRs, and the harvesting of CQHEADi and the RQ producer index into work
 * completions.
 *
 * Receive WRs are a driver-side FIFO. ERNIC writes SEND payloads into its
 * own RQ ring (PG332 p.18); each RQ buffer is granted to the device only
 * when a receive WR is posted (RQCIi), so a SEND that finds no receive WR
 * gets an RNR NAK, as IBTA requires. When the device fills a buffer the
 * driver copies it into the oldest receive WR's SGEs. docs/driver.md has
 * the details and the limits (the receive length is the buffer's).
 */

#include <linux/dma-direct.h>
#include <linux/etherdevice.h>
#include <linux/iommu.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <rdma/ib_mad.h>

#include "ernic.h"

#define ERNIC_BTH_LEN		12
#define ERNIC_DETH_LEN		8
#define ERNIC_ROCE_PORT		4791
#define IB_OPC_UD_SEND_ONLY	0x64

/*
 * The physical address of a bus address, as the device's DMA reaches it:
 * through the IOMMU's domain when there is one (an identity domain gives
 * the address back), else directly. 0 when nothing is mapped there.
 */
static phys_addr_t ernic_bus_to_phys(struct ernic_dev *dev, u64 addr)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(&dev->pdev->dev);

	if (dom)
		return iommu_iova_to_phys(dom, addr);
	return dma_to_phys(&dev->pdev->dev, addr);
}

/*
 * The CPU address of @addr, and in *@n how much of *@n bytes from there
 * stays in its page: behind an IOMMU a range contiguous on the bus need
 * not be contiguous in memory.
 */
static void *ernic_bus_page(struct ernic_dev *dev, u64 addr, u32 *n)
{
	phys_addr_t pa = ernic_bus_to_phys(dev, addr);

	*n = min_t(u32, *n, PAGE_SIZE - offset_in_page(addr));
	if (!pa || !pfn_valid(PHYS_PFN(pa)))
		return NULL;
	return phys_to_virt(pa);
}

/*
 * The CPU does what the device would do with DMA (docs/driver.md,
 * "Receive WRs"). Behind swiotlb the copy lands in the bounce buffer,
 * where the device would have written.
 */
static int ernic_dma_read(struct ernic_dev *dev, u64 addr, void *dst, u32 len)
{
	while (len) {
		u32 n = len;
		void *va = ernic_bus_page(dev, addr, &n);

		if (!va)
			return -EFAULT;
		memcpy(dst, va, n);
		addr += n;
		dst += n;
		len -= n;
	}
	return 0;
}

static int ernic_dma_write(struct ernic_dev *dev, u64 addr, const void *src,
			   u32 len)
{
	while (len) {
		u32 n = len;
		void *va = ernic_bus_page(dev, addr, &n);

		if (!va)
			return -EFAULT;
		memcpy(va, src, n);
		addr += n;
		src += n;
		len -= n;
	}
	return 0;
}

/* The SGEs' bytes, from bus addresses as the device reads them. */
static int ernic_copy_from_sges(struct ernic_dev *dev, void *dst,
				const struct ib_sge *sg, int n, u32 max)
{
	u32 off = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (sg[i].length > max - off)
			return -EINVAL;
		if (ernic_dma_read(dev, sg[i].addr, dst + off, sg[i].length))
			return -EINVAL;
		off += sg[i].length;
	}
	return off;
}

/* In 64 bits: four SGEs of up to 4 GiB each cannot wrap the sum. */
static u64 ernic_sge_total(const struct ib_sge *sg, int n)
{
	u64 t = 0;
	int i;

	for (i = 0; i < n; i++)
		t += sg[i].length;
	return t;
}

/* Ring SQPIi unless the QP is in SQD (IBTA: no new WRs are started). */
void ernic_ring_sq(struct ernic_qp *qp)
{
	/* A direct QP's process rings its own SQPIi. */
	if (qp->direct || qp->sq_held || qp->state == IB_QPS_RESET ||
	    qp->state == IB_QPS_INIT || qp->state == IB_QPS_RTR)
		return;
	/*
	 * The WQEs are visible before the doorbell record, which the device
	 * may read without a doorbell (after a migration; docs/extension.md,
	 * "Doorbell records").
	 */
	if (qp->db_sq) {
		dma_wmb();
		WRITE_ONCE(*qp->db_sq, cpu_to_le32(qp->sq_pi));
	}
	/* WQEs and record are visible before the doorbell (PG332 p.60). */
	wmb();
	ernic_qwr(qp->dev, qp->qpn, ERNIC_SQPI, qp->sq_pi);
}

/* The ERNIC opcode of a send WR, and what its completion reports. */
static int ernic_rc_opcode(const struct ib_send_wr *wr, struct ernic_swqe *s,
			   u8 *op)
{
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
		*op = ERNIC_OP_WRITE;
		s->opcode = IB_WC_RDMA_WRITE;
		return 0;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		*op = ERNIC_OP_WRITE_IMM;
		s->opcode = IB_WC_RDMA_WRITE;
		return 0;
	case IB_WR_SEND:
		*op = ERNIC_OP_SEND;
		break;
	case IB_WR_SEND_WITH_IMM:
		*op = ERNIC_OP_SEND_IMM;
		break;
	case IB_WR_SEND_WITH_INV:
		*op = ERNIC_OP_SEND_INV;
		break;
	case IB_WR_RDMA_READ:
		*op = ERNIC_OP_READ;
		s->opcode = IB_WC_RDMA_READ;
		return 0;
	case IB_WR_REG_MR:
		*op = ERNIC_OP_REG_MR;
		s->opcode = IB_WC_REG_MR;
		return 0;
	case IB_WR_LOCAL_INV:
		*op = ERNIC_OP_LOCAL_INV;
		s->opcode = IB_WC_LOCAL_INV;
		return 0;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		*op = ERNIC_OP_ATOMIC_CMP_SWP;
		s->opcode = IB_WC_COMP_SWAP;
		return 0;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		*op = ERNIC_OP_ATOMIC_FETCH_ADD;
		s->opcode = IB_WC_FETCH_ADD;
		return 0;
	default:
		return -EINVAL;
	}
	s->opcode = IB_WC_SEND;
	return 0;
}

/* ERNIC-X fast registration: executed by the device, nothing sent. */
static bool ernic_op_is_local(u8 op)
{
	return op == ERNIC_OP_REG_MR || op == ERNIC_OP_LOCAL_INV;
}

static bool ernic_op_is_atomic(u8 op)
{
	return op == ERNIC_OP_ATOMIC_CMP_SWP || op == ERNIC_OP_ATOMIC_FETCH_ADD;
}

static bool ernic_op_is_rw(u8 op)
{
	return op == ERNIC_OP_WRITE || op == ERNIC_OP_WRITE_IMM ||
	       op == ERNIC_OP_READ;
}

/*
 * SQ slots a WR takes. PG332 Table 2-1 gives a WQE one local buffer, so
 * an RDMA READ or WRITE of n SGEs is posted as n WQEs at consecutive
 * remote offsets (docs/driver.md, "Scatter/gather"); a SEND is one WQE
 * and one local buffer, or up to 16 bytes gathered into SDATA.
 */
static u32 ernic_rc_slots(struct ernic_qp *qp, const struct ib_send_wr *wr,
			  u8 op)
{
	u32 n = 0;
	int i;

	if (!ernic_op_is_rw(op) || qp->xwqe)
		return 1;	/* a SEND, atomic, REG_MR, LOCAL_INV or keyed SGEs */
	for (i = 0; i < wr->num_sge; i++)
		n += wr->sg_list[i].length != 0;
	return max(n, 1u);
}

/*
 * Inline data: a SEND of up to 16 bytes travels in SDATA (PG332 Table
 * 2-1). With ERNIC-X keyed SGEs and an inline buffer, a SEND or WRITE of
 * up to max_inline bytes is copied into the slot's part of that buffer,
 * which the WQE names with L_Key 0 (a bus address of the driver's own).
 */
static bool ernic_inline_ok(struct ernic_qp *qp, u8 op, u64 len)
{
	if (op == ERNIC_OP_READ || len > qp->max_inline)
		return false;
	if (op == ERNIC_OP_WRITE || op == ERNIC_OP_WRITE_IMM ||
	    len > ERNIC_WQE_SDATA_MAX)
		return qp->inl;
	return true;
}

/*
 * An atomic (ERNIC-X ATOMIC, RC only) has one SGE of exactly 8 bytes for
 * the value it returns (IBTA 10.7.2.3), and no inline data.
 */
static int ernic_check_atomic_wr(struct ernic_qp *qp,
				 const struct ib_send_wr *wr)
{
	if (!(qp->dev->ext & ERNIC_EXT_F_ATOMIC) || qp->uc ||
	    wr->num_sge != 1 || wr->sg_list[0].length != ERNIC_ATOMIC_LEN ||
	    (wr->send_flags & IB_SEND_INLINE))
		return -EINVAL;
	return 0;
}

static int ernic_check_rc_wr(struct ernic_qp *qp, const struct ib_send_wr *wr,
			     u8 op)
{
	bool send = !ernic_op_is_rw(op);
	u64 len;

	if (ernic_op_is_local(op))
		return qp->dev->ext & ERNIC_EXT_F_FRWR ? 0 : -EINVAL;
	if (ernic_op_is_atomic(op))
		return ernic_check_atomic_wr(qp, wr);
	/* UC has SENDs and WRITEs only (IBTA 9.7); the device refuses more. */
	if (qp->uc && (op == ERNIC_OP_READ || op == ERNIC_OP_SEND_INV))
		return -EINVAL;

	if (wr->num_sge < 0 || wr->num_sge > ERNIC_MAX_RW_SGE)
		return -EINVAL;
	len = ernic_sge_total(wr->sg_list, wr->num_sge);
	if (len > ERNIC_MAX_MSG_SIZE)
		return -EINVAL;
	/*
	 * PG332 v3.1 p.10 lists zero-length SENDs as unsupported; a keyed
	 * WQE of no SGE is one (ERNIC-X, docs/extension.md "Keyed SGEs").
	 */
	if (send && !len && !qp->xwqe)
		return -EINVAL;
	/* A SEND has one local buffer, or up to 16 bytes of SDATA. */
	if (send && wr->num_sge > 1 && len > ERNIC_WQE_SDATA_MAX &&
	    !qp->xwqe)
		return -EINVAL;
	if (wr->send_flags & IB_SEND_INLINE)
		return ernic_inline_ok(qp, op, len) ? 0 : -EINVAL;
	return 0;
}

static void ernic_fill_wqe(u8 *w, u32 size, u32 slot, u8 op, u64 laddr,
			   u32 len, u64 raddr, u32 rtag)
{
	memset(w, 0, size);
	put_unaligned_le16(slot, w + ERNIC_WQE_WRID);
	put_unaligned_le64(len ? laddr : 0, w + ERNIC_WQE_LADDR);
	put_unaligned_le32(len, w + ERNIC_WQE_LENGTH);
	w[ERNIC_WQE_OPCODE] = op;
	put_unaligned_le64(raddr, w + ERNIC_WQE_ROFFSET);
	put_unaligned_le32(rtag, w + ERNIC_WQE_RTAG);
}

/* ERNIC-X SGEs {address, length, L_Key} at @g (docs/extension.md). */
void ernic_put_sge_list(u8 *g, const struct ib_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++, g += ERNIC_SGE_SIZE) {
		put_unaligned_le64(sg[i].addr, g + ERNIC_SGE_ADDR);
		put_unaligned_le32(sg[i].length, g + ERNIC_SGE_LEN);
		put_unaligned_le32(sg[i].lkey, g + ERNIC_SGE_LKEY);
	}
}

/* ERNIC-X keyed SGEs: the WR's SGEs, L_Keys included, in the WQE. */
static void ernic_put_sges(u8 *w, const struct ib_send_wr *wr)
{
	w[ERNIC_XWQE_NSGE] = wr->num_sge;
	ernic_put_sge_list(w + ERNIC_XWQE_SGE, wr->sg_list, wr->num_sge);
}

/*
 * An inline WR's data, gathered before the WQE is written, goes to the
 * slot's inline buffer; the WQE's one SGE names it (ernic_inline_ok()).
 */
static void ernic_put_inline(struct ernic_qp *qp, u8 *w, u32 slot,
			     const u8 *inl, u32 len)
{
	struct ib_sge sge = {
		.addr = qp->inl_dma + (u64)slot * ERNIC_MAX_INLINE,
		.length = len,
	};

	memcpy(qp->inl + (size_t)slot * ERNIC_MAX_INLINE, inl, len);
	w[ERNIC_XWQE_NSGE] = 1;
	ernic_put_sge_list(w + ERNIC_XWQE_SGE, &sge, 1);
}

/* A SEND, SEND with Immediate or with Invalidate: one WQE. */
static int ernic_post_rc_send(struct ernic_qp *qp, const struct ib_send_wr *wr,
			      u8 op, u32 slot, const u8 *inl)
{
	u8 *w = qp->sq + slot * qp->wqe_size;
	u32 len = ernic_sge_total(wr->sg_list, wr->num_sge);
	u32 rtag = wr->opcode == IB_WR_SEND_WITH_INV ?
		   wr->ex.invalidate_rkey : 0;

	ernic_fill_wqe(w, qp->wqe_size, slot, op,
		       wr->num_sge ? wr->sg_list[0].addr : 0, len, 0, rtag);
	if (inl && len <= ERNIC_WQE_SDATA_MAX) {
		/* SEND data of up to 16 bytes travels in the WQE (SDATA). */
		memcpy(w + ERNIC_WQE_SDATA, inl, len);
	} else if (inl) {
		ernic_put_inline(qp, w, slot, inl, len);
	} else if (qp->xwqe) {
		/* The device gathers the SGEs: no CPU copy. */
		ernic_put_sges(w, wr);
	} else if (len <= ERNIC_WQE_SDATA_MAX &&
		   ernic_copy_from_sges(qp->dev, w + ERNIC_WQE_SDATA,
					wr->sg_list, wr->num_sge,
					ERNIC_WQE_SDATA_MAX) < 0) {
		return -EINVAL;
	}
	if (wr->opcode == IB_WR_SEND_WITH_IMM)
		put_unaligned_le32(be32_to_cpu(wr->ex.imm_data),
				   w + ERNIC_WQE_IMMDT);
	return 0;
}

/*
 * An atomic: the result's buffer, the remote address and R_Key, and the
 * operands in SDATA (docs/extension.md, "Atomics").
 */
static void ernic_post_rc_atomic(struct ernic_qp *qp,
				 const struct ib_send_wr *wr, u8 op, u32 slot)
{
	const struct ib_atomic_wr *aw = atomic_wr(wr);
	u8 *w = qp->sq + slot * qp->wqe_size;

	ernic_fill_wqe(w, qp->wqe_size, slot, op, wr->sg_list[0].addr,
		       ERNIC_ATOMIC_LEN, aw->remote_addr, aw->rkey);
	if (qp->xwqe)
		ernic_put_sges(w, wr);
	if (op == ERNIC_OP_ATOMIC_CMP_SWP) {
		put_unaligned_le64(aw->swap, w + ERNIC_WQE_ATOMIC_SWAP);
		put_unaligned_le64(aw->compare_add,
				   w + ERNIC_WQE_ATOMIC_COMPARE);
	} else {
		put_unaligned_le64(aw->compare_add, w + ERNIC_WQE_ATOMIC_SWAP);
	}
}

/*
 * An RDMA READ or WRITE: one WQE per non-empty SGE, the remote offset
 * advancing by each SGE's length. Only the last WQE stands for the WR
 * (its completion, and a WRITE's immediate data).
 */
static void ernic_post_rc_rw(struct ernic_qp *qp, const struct ib_send_wr *wr,
			     u8 op, u32 slot, u32 nslots, const u8 *inl)
{
	const struct ib_rdma_wr *rw = rdma_wr(wr);
	u64 raddr = rw->remote_addr;
	u32 k = 0;
	int i;

	if (qp->xwqe) {
		/* ERNIC-X keyed SGEs: the whole WR in one WQE. */
		u8 *w = qp->sq + slot * qp->wqe_size;

		ernic_fill_wqe(w, qp->wqe_size, slot, op, 0, 0, raddr,
			       rw->rkey);
		if (inl)
			ernic_put_inline(qp, w, slot, inl,
					 ernic_sge_total(wr->sg_list,
							 wr->num_sge));
		else
			ernic_put_sges(w, wr);
		if (op == ERNIC_OP_WRITE_IMM)
			put_unaligned_le32(be32_to_cpu(wr->ex.imm_data),
					   w + ERNIC_WQE_IMMDT);
		qp->swqe[slot].last = true;
		return;
	}

	for (i = 0; k < nslots; i++) {
		const struct ib_sge *sg = i < wr->num_sge ? &wr->sg_list[i] :
							     NULL;
		u32 len = sg ? sg->length : 0;
		bool last = k + 1 == nslots;
		u8 *w = qp->sq + slot * qp->wqe_size;

		if (!len && !last)
			continue;
		ernic_fill_wqe(w, qp->wqe_size, slot,
			       op == ERNIC_OP_WRITE_IMM && !last ?
			       ERNIC_OP_WRITE : op, sg ? sg->addr : 0, len,
			       raddr, rw->rkey);
		if (last && op == ERNIC_OP_WRITE_IMM)
			put_unaligned_le32(be32_to_cpu(wr->ex.imm_data),
					   w + ERNIC_WQE_IMMDT);
		qp->swqe[slot].last = last;
		raddr += len;
		slot = (slot + 1) % qp->sq_depth;
		k++;
	}
}

/*
 * Post an RC WR at SQPI; -ENOMEM when the SQ has no room for it. @inl is
 * its inline data, already gathered, or NULL.
 */
static int ernic_post_rc_wr(struct ernic_qp *qp, const struct ib_send_wr *wr,
			    const u8 *inl)
{
	u32 slot = qp->sq_pi, nslots, last;
	struct ernic_swqe *s;
	u8 op;
	int ret;

	ret = ernic_rc_opcode(wr, &qp->swqe[slot], &op);
	if (!ret)
		ret = ernic_check_rc_wr(qp, wr, op);
	if (ret)
		return ret;
	nslots = ernic_rc_slots(qp, wr, op);
	if (nslots > (qp->sq_ci + qp->sq_depth - slot - 1) % qp->sq_depth)
		return -ENOMEM;
	last = (slot + nslots - 1) % qp->sq_depth;
	s = &qp->swqe[last];
	s->opcode = qp->swqe[slot].opcode;
	if (ernic_op_is_rw(op)) {
		ernic_post_rc_rw(qp, wr, op, slot, nslots, inl);
	} else if (ernic_op_is_local(op)) {
		ret = ernic_fill_local_wqe(wr, qp->sq + slot * qp->wqe_size,
					   slot);
		if (ret)
			return ret;
		s->last = true;
	} else if (ernic_op_is_atomic(op)) {
		ernic_post_rc_atomic(qp, wr, op, slot);
		s->last = true;
	} else {
		ret = ernic_post_rc_send(qp, wr, op, slot, inl);
		if (ret)
			return ret;
		s->last = true;
	}
	s->byte_len = ernic_op_is_local(op) ? 0 :
		      ernic_sge_total(wr->sg_list, wr->num_sge);
	s->wr_id = wr->wr_id;
	s->signaled = (wr->send_flags & IB_SEND_SIGNALED) || qp->sq_sig_all;
	qp->sq_pi = (last + 1) % qp->sq_depth;
	return 0;
}

/*
 * The MAD's length. Without ERNIC-X for QP1 its bytes are copied after
 * the headers at @dst (at most @max); with it the device gathers them.
 */
static int ernic_gsi_payload(struct ernic_qp *qp, const struct ib_send_wr *wr,
			     u8 *dst, u32 max)
{
	u64 n;

	if (!qp->xwqe)
		return ernic_copy_from_sges(qp->dev, dst, wr->sg_list,
					    wr->num_sge, max);
	n = ernic_sge_total(wr->sg_list, wr->num_sge);
	return n > max ? -EINVAL : n;
}

/*
 * QP1's WQE: the frame from LADDR, or with ERNIC-X keyed SGEs the @hlen
 * bytes of headers at LADDR's place followed by the WR's own SGEs
 * (docs/extension.md, "QP1").
 */
static void ernic_gsi_wqe(struct ernic_qp *qp, const struct ib_send_wr *wr,
			  u8 *w, u32 slot, u32 hlen, u32 flen)
{
	struct ib_sge hdr = {
		.addr = qp->frames_dma + slot * ERNIC_GSI_FRAME_SIZE,
		.length = hlen,
	};

	memset(w, 0, qp->wqe_size);
	if (qp->xwqe) {
		w[ERNIC_XWQE_NSGE] = 1 + wr->num_sge;
		ernic_put_sge_list(w + ERNIC_XWQE_SGE, &hdr, 1);
		ernic_put_sge_list(w + ERNIC_XWQE_SGE + ERNIC_SGE_SIZE,
				   wr->sg_list, wr->num_sge);
	} else {
		put_unaligned_le64(hdr.addr, w + ERNIC_WQE_LADDR);
		put_unaligned_le32(flen, w + ERNIC_WQE_LENGTH);
	}
	w[ERNIC_WQE_OPCODE] = ERNIC_OP_SEND;
	put_unaligned_le16(slot, w + ERNIC_WQE_WRID);
}

/*
 * QP1: software builds the whole frame, Ethernet to the end of the MAD,
 * and posts it as a SEND; ERNIC appends the ICRC (PG332 ch.6, "QP1").
 */
static int ernic_build_gsi_frame(struct ernic_qp *qp,
				 const struct ib_send_wr *wr, u8 *w,
				 struct ernic_swqe *s, u32 slot)
{
	const struct ib_ud_wr *ud = ud_wr(wr);
	struct ernic_dev *dev = qp->dev;
	struct ernic_av *av;
	u8 *f = qp->frames + slot * ERNIC_GSI_FRAME_SIZE;
	u32 iphl, l4, hlen, pay, flen, qkey;
	u8 *p;
	int n;

	if (wr->opcode != IB_WR_SEND || !ud->ah ||
	    wr->num_sge > ERNIC_GSI_SEND_SGE)
		return -EINVAL;
	av = &container_of(ud->ah, struct ernic_ah, ibah)->av;
	iphl = av->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	l4 = ETH_HLEN + iphl;
	hlen = l4 + 8 + ERNIC_BTH_LEN + ERNIC_DETH_LEN;
	n = ernic_gsi_payload(qp, wr, f + hlen, ERNIC_GSI_FRAME_SIZE - hlen);
	if (n < 0 || n % 4)
		return -EINVAL;
	pay = 8 + ERNIC_BTH_LEN + ERNIC_DETH_LEN + n + ERNIC_ICRC_LEN;
	flen = l4 + pay - ERNIC_ICRC_LEN;

	ether_addr_copy(f, av->dmac);
	ether_addr_copy(f + ETH_ALEN, dev->netdev->dev_addr);
	if (av->ipv6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(f + ETH_HLEN);

		put_unaligned_be16(ETH_P_IPV6, f + 12);
		put_unaligned_be32(6u << 28 | (u32)av->tclass << 20 |
				   (av->flow_label & 0xfffff), ip6);
		ip6->payload_len = htons(pay);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = av->hop_limit;
		memcpy(&ip6->saddr, av->sip, 16);
		memcpy(&ip6->daddr, av->dip, 16);
	} else {
		struct iphdr *ip = (struct iphdr *)(f + ETH_HLEN);

		put_unaligned_be16(ETH_P_IP, f + 12);
		memset(ip, 0, sizeof(*ip));
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = av->tclass;
		ip->tot_len = htons(iphl + pay);
		/* ERNIC drops IPv4 without DF (PG332 Table 2-3 bit 5). */
		ip->frag_off = htons(IP_DF);
		ip->ttl = av->hop_limit;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, av->sip + 12, 4);
		memcpy(&ip->daddr, av->dip + 12, 4);
		ip->check = ip_fast_csum(ip, ip->ihl);
	}
	p = f + l4;
	put_unaligned_be16(rdma_get_udp_sport(av->flow_label, qp->qpn,
					      ud->remote_qpn), p);
	put_unaligned_be16(ERNIC_ROCE_PORT, p + 2);
	put_unaligned_be16(pay, p + 4);
	put_unaligned_be16(0, p + 6);
	p += 8;
	/* BTH: UD SEND ONLY, P_Key, destination QP, PSN. */
	memset(p, 0, ERNIC_BTH_LEN + ERNIC_DETH_LEN);
	p[0] = IB_OPC_UD_SEND_ONLY;
	put_unaligned_be16(IB_DEFAULT_PKEY_FULL, p + 2);
	put_unaligned_be32(ud->remote_qpn & 0xffffff, p + 4);
	put_unaligned_be32(qp->gsi_psn++ & 0xffffff, p + 8);
	p += ERNIC_BTH_LEN;
	/* DETH: a Q_Key with the high bit set means the QP's own (IBTA). */
	qkey = ud->remote_qkey & 0x80000000 ? qp->attr.qkey : ud->remote_qkey;
	put_unaligned_be32(qkey, p);
	put_unaligned_be32(qp->qpn, p + 4);

	ernic_gsi_wqe(qp, wr, w, slot, hlen, flen);
	s->opcode = IB_WC_SEND;
	s->byte_len = n;
	s->last = true;
	return 0;
}

/* Post a QP1 WR at SQPI. */
static int ernic_post_gsi_wr(struct ernic_qp *qp, const struct ib_send_wr *wr)
{
	u32 slot = qp->sq_pi;
	struct ernic_swqe *s = &qp->swqe[slot];
	int ret;

	if ((slot + 1) % qp->sq_depth == qp->sq_ci)
		return -ENOMEM;
	ret = ernic_build_gsi_frame(qp, wr, qp->sq + slot * qp->wqe_size, s,
				    slot);
	if (ret)
		return ret;
	s->wr_id = wr->wr_id;
	s->signaled = (wr->send_flags & IB_SEND_SIGNALED) || qp->sq_sig_all;
	qp->sq_pi = (slot + 1) % qp->sq_depth;
	return 0;
}

/*
 * A UD SEND (with Immediate): one WQE naming the AH's entry of the
 * device's table, the destination QP and the Q_Key, of at most the path
 * MTU (docs/extension.md, "UD QPs"). A Q_Key with its high bit set
 * means the QP's own (IBTA 10.2.5).
 */
static int ernic_post_ud_wr(struct ernic_qp *qp, const struct ib_send_wr *wr,
			    const u8 *inl)
{
	const struct ib_ud_wr *ud = ud_wr(wr);
	struct ernic_ah *ah = ud->ah ? to_eah(ud->ah) : NULL;
	u64 len = ernic_sge_total(wr->sg_list, wr->num_sge);
	u32 slot = qp->sq_pi, qkey = ud->remote_qkey;
	struct ernic_swqe *s = &qp->swqe[slot];
	u8 *w = qp->sq + slot * qp->wqe_size;
	u8 op = wr->opcode == IB_WR_SEND_WITH_IMM ? ERNIC_OP_SEND_IMM :
						    ERNIC_OP_SEND;

	if ((wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM) ||
	    wr->num_sge < 0 || wr->num_sge > ERNIC_XWQE_SGES || !ah ||
	    ah->idx < 0 || len > ib_mtu_enum_to_int(qp->attr.path_mtu))
		return -EINVAL;
	if (!((qp->sq_ci + qp->sq_depth - slot - 1) % qp->sq_depth))
		return -ENOMEM;
	if (qkey & 0x80000000)
		qkey = qp->attr.qkey;
	ernic_fill_wqe(w, qp->wqe_size, slot, op, 0, len,
		       (u64)qkey << 32 | (ud->remote_qpn & 0xffffff), ah->idx);
	if (inl && len)
		ernic_put_inline(qp, w, slot, inl, len);
	else
		ernic_put_sges(w, wr);
	if (wr->opcode == IB_WR_SEND_WITH_IMM)
		put_unaligned_le32(be32_to_cpu(wr->ex.imm_data),
				   w + ERNIC_WQE_IMMDT);
	s->opcode = IB_WC_SEND;
	s->last = true;
	s->byte_len = len;
	s->wr_id = wr->wr_id;
	s->signaled = (wr->send_flags & IB_SEND_SIGNALED) || qp->sq_sig_all;
	qp->sq_pi = (slot + 1) % qp->sq_depth;
	return 0;
}

/* IBTA 10.8.2: posting to the SQ before RTS is an immediate error. */
static bool ernic_sq_open(struct ernic_qp *qp)
{
	return qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD ||
	       qp->state == IB_QPS_SQE || qp->state == IB_QPS_ERR;
}

/*
 * An inline WR's data into @inl. A user QP's WR names user memory, read
 * with copy_from_user() in the caller's context (uverbs' post_send), so
 * this runs before qp->lock is taken.
 */
static int ernic_gather_inline(struct ernic_qp *qp,
			       const struct ib_send_wr *wr, u8 *inl)
{
	u64 len = ernic_sge_total(wr->sg_list, wr->num_sge);
	u32 off = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > ERNIC_MAX_RW_SGE ||
	    len > qp->max_inline)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sg = &wr->sg_list[i];

		if (!qp->user)
			memcpy(inl + off, (void *)(uintptr_t)sg->addr,
			       sg->length);
		else if (copy_from_user(inl + off,
					u64_to_user_ptr(sg->addr),
					sg->length))
			return -EFAULT;
		off += sg->length;
	}
	return 0;
}

/* One WR at SQPI, with qp->lock held; @inl as ernic_post_rc_wr(). */
static int ernic_post_one_send(struct ernic_qp *qp,
			       const struct ib_send_wr *wr, const u8 *inl)
{
	if (!ernic_sq_open(qp))
		return -EINVAL;
	if (qp->qpn == ERNIC_QP_GSI)
		return ernic_post_gsi_wr(qp, wr);
	if (qp->ud)
		return ernic_post_ud_wr(qp, wr, inl);
	return ernic_post_rc_wr(qp, wr, inl);
}

/*
 * Every check of a user chain that posting could fail on, before any WQE
 * is written: *@nslots the SQ slots it needs, *@ninl its inline WRs, and
 * *@bad the WR refused.
 */
static int ernic_check_user_chain(struct ernic_qp *qp,
				  const struct ib_send_wr *wr, u32 *nslots,
				  u32 *ninl, const struct ib_send_wr **bad)
{
	struct ernic_swqe s;
	int ret;
	u8 op;

	*nslots = 0;
	*ninl = 0;
	for (*bad = wr; *bad; *bad = (*bad)->next) {
		ret = ernic_user_check_send(qp, *bad);
		if (!ret)
			ret = ernic_rc_opcode(*bad, &s, &op);
		if (!ret)
			ret = ernic_check_rc_wr(qp, *bad, op);
		if (ret)
			return ret;
		*nslots += ernic_rc_slots(qp, *bad, op);
		if (*nslots >= qp->sq_depth)
			return -ENOMEM;
		*ninl += !!((*bad)->send_flags & IB_SEND_INLINE);
	}
	return 0;
}

/* The inline data of a checked user chain, @ninl buffers, or an ERR_PTR. */
static u8 *ernic_gather_user_chain(struct ernic_qp *qp,
				   const struct ib_send_wr *wr, u32 ninl,
				   const struct ib_send_wr **bad)
{
	u8 *inl, *p;
	int ret;

	if (!ninl)
		return NULL;
	inl = kmalloc_array(ninl, ERNIC_MAX_INLINE, GFP_KERNEL);
	if (!inl)
		return ERR_PTR(-ENOMEM);
	for (p = inl, *bad = wr; *bad; *bad = (*bad)->next) {
		if (!((*bad)->send_flags & IB_SEND_INLINE))
			continue;
		ret = ernic_gather_inline(qp, *bad, p);
		if (ret) {
			kfree(inl);
			return ERR_PTR(ret);
		}
		p += ERNIC_MAX_INLINE;
	}
	return inl;
}

/*
 * A user chain marked ERNIC_SEND_WHOLE_CHAIN: all of it or none. Each WR
 * is checked and its inline data copied first; then, under qp->lock, the
 * SQ's state and room are checked for the whole chain, and the WQEs
 * written and rung at once. A refused chain leaves the SQ as it was, and
 * @bad_wr names the WR that was refused (the first for state and room).
 */
static int ernic_post_user_chain(struct ernic_qp *qp,
				 const struct ib_send_wr *wr,
				 const struct ib_send_wr **bad_wr)
{
	const struct ib_send_wr *w;
	u32 nslots, ninl, pi;
	unsigned long flags;
	u8 *inl, *p;
	int ret;

	ret = ernic_check_user_chain(qp, wr, &nslots, &ninl, bad_wr);
	if (ret)
		return ret;
	inl = ernic_gather_user_chain(qp, wr, ninl, bad_wr);
	if (IS_ERR(inl))
		return PTR_ERR(inl);
	*bad_wr = wr;
	spin_lock_irqsave(&qp->lock, flags);
	if (!ernic_sq_open(qp))
		ret = -EINVAL;
	else if (nslots > (qp->sq_ci + qp->sq_depth - qp->sq_pi - 1) %
			  qp->sq_depth)
		ret = -ENOMEM;
	pi = qp->sq_pi;
	for (w = wr, p = inl; !ret && w; w = w->next) {
		bool has_inl = w->send_flags & IB_SEND_INLINE;

		/* Checked above: nothing in here refuses a WR any more. */
		ret = ernic_post_rc_wr(qp, w, has_inl ? p : NULL);
		WARN_ON_ONCE(ret);
		p += has_inl ? ERNIC_MAX_INLINE : 0;
	}
	/* Unrung WQEs are not the device's yet: taking SQPI back drops them. */
	if (ret)
		qp->sq_pi = pi;
	else
		ernic_ring_sq(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	kfree(inl);
	return ret;
}

int ernic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	u8 inl[ERNIC_MAX_INLINE];
	unsigned long flags;
	bool posted = false;
	int ret = 0;

	/* A direct QP's process writes its own WQEs. */
	if (qp->direct) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->user && wr && (wr->send_flags & ERNIC_SEND_WHOLE_CHAIN)) {
		ret = ernic_post_user_chain(qp, wr, bad_wr);
		if (ret)
			ibdev_dbg(ibqp->device,
				  "QP%u: send chain refused whole (%d)\n",
				  qp->qpn, ret);
		return ret;
	}
	for (; wr; wr = wr->next) {
		bool has_inl = wr->send_flags & IB_SEND_INLINE;

		if (qp->user)
			ret = ernic_user_check_send(qp, wr);
		if (!ret && has_inl)
			ret = ernic_gather_inline(qp, wr, inl);
		if (ret)
			break;
		spin_lock_irqsave(&qp->lock, flags);
		ret = ernic_post_one_send(qp, wr, has_inl ? inl : NULL);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (ret)
			break;
		posted = true;
	}
	if (posted) {
		spin_lock_irqsave(&qp->lock, flags);
		ernic_ring_sq(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
	}
	if (ret) {
		*bad_wr = wr;
		ibdev_dbg(ibqp->device, "QP%u: send WR refused (%d)\n",
			  qp->qpn, ret);
	}
	return ret;
}

/*
 * ERNIC-X receive WQE of @wr in the slot the device fills next after the
 * ones granted so far: RQCIi grants slot RQCIi - 1 (the RQ starts full,
 * STATRQPIDBi = depth - 1, "Receive WRs" in docs/driver.md).
 */
static void ernic_put_rwqe(struct ernic_qp *qp, const struct ib_recv_wr *wr)
{
	u32 slot = (qp->rq_ci + qp->rq_depth - 1) % qp->rq_depth;
	u8 *w = qp->rq + slot * ERNIC_RWQE_SIZE;

	memset(w, 0, ERNIC_RWQE_SIZE);
	ernic_put_sge_list(w, wr->sg_list, wr->num_sge);
	/* The WQE is visible before RQCIi grants it. */
	wmb();
}

/*
 * Grant the device one more RQ buffer (RQCIi, PG332 p.43). With an RQ
 * doorbell record (ERNIC-X RQREC) a store does it: the device reads the
 * record when a message finds the RQ empty, so no register write (and,
 * under KVM, no exit) is needed.
 */
static void ernic_rq_grant(struct ernic_qp *qp)
{
	qp->rq_ci = (qp->rq_ci + 1) % qp->rq_depth;
	if (qp->rqrec) {
		dma_wmb(); /* the buffer's WQE before the record */
		WRITE_ONCE(qp->db_sq[1], cpu_to_le32(qp->rq_ci));
		return;
	}
	ernic_qwr(qp->dev, qp->qpn, ERNIC_RQCI, qp->rq_ci);
}

int ernic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RESET || qp->direct || qp->srq) {
		ret = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		struct ernic_rwqe *r;

		if (wr->num_sge > ERNIC_MAX_RECV_SGE ||
		    (qp->user && ernic_user_check_recv(wr))) {
			ret = -EINVAL;
			break;
		}
		if (qp->rwqe_pi - qp->rwqe_ci >= qp->rq_depth - 1) {
			ret = -ENOMEM;
			break;
		}
		r = &qp->rwqe[qp->rwqe_pi % qp->rq_depth];
		r->wr_id = wr->wr_id;
		r->num_sge = wr->num_sge;
		memcpy(r->sge, wr->sg_list, wr->num_sge * sizeof(*r->sge));
		qp->rwqe_pi++;
		if (qp->state == IB_QPS_ERR)
			continue;
		if (qp->rx_wqe)
			ernic_put_rwqe(qp, wr);
		if (qp->rq_spare)
			qp->rq_spare--;	/* ernic_imm_write() */
		else
			ernic_rq_grant(qp);
	}
	/* In Error the WR is flushed at once: nothing else would say so. */
	if (qp->state == IB_QPS_ERR)
		queue_work(system_wq, &qp->flush_work);
out:
	if (ret) {
		*bad_wr = wr;
		ibdev_dbg(ibqp->device, "QP%u: receive WR refused (%d)\n",
			  qp->qpn, ret);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return ret;
}

/* The ib_wc_status of an ERRFLAG CQE (PG332 Table 2-2). */
static enum ib_wc_status ernic_errflag_status(struct ernic_qp *qp)
{
	int st = qp->err_status;

	qp->err_status = -1;
	return st < 0 ? IB_WC_WR_FLUSH_ERR : st;
}

static bool ernic_sq_errflag_pending(struct ernic_qp *qp, u32 head)
{
	u32 i;

	for (i = qp->sq_ci; i != head; i = (i + 1) % qp->sq_depth)
		if (le32_to_cpu(READ_ONCE(qp->cqe[i])) &
		    ERNIC_CQE_ERRFLAG_MASK)
			return true;
	return false;
}

/*
 * CQHEADi as the device last wrote it to the QP's CQ doorbell word
 * (CQDBADDi), after the CQEs it covers (PG332 pp.21-23): a memory read
 * instead of a register read on every poll.
 */
static u32 ernic_cq_head(struct ernic_qp *qp)
{
	return (le32_to_cpu(READ_ONCE(*qp->db_cq)) & 0xffff) % qp->sq_depth;
}

/* Send completions: CQHEADi and the CQEs (PG332 p.60, Table 2-2). */
int ernic_poll_sq(struct ernic_qp *qp, int n, struct ib_wc *wc)
{
	unsigned long flags;
	int got = 0;
	u32 head;

	/* A direct QP's completions are its process's (ernic_uverbs.c). */
	if (qp->state == IB_QPS_RESET || qp->direct)
		return 0;
	head = ernic_cq_head(qp);
	if (head == qp->sq_ci)
		return 0;
	/*
	 * The status queue entry is written before the ERRFLAG CQEs, so
	 * the FATAL code that names the error is known by now (PG332 p.17).
	 */
	if (!READ_ONCE(qp->fatal_code) && ernic_sq_errflag_pending(qp, head))
		ernic_fatalq_process(qp->dev);
	rmb(); /* CQEs are read after CQHEAD, which the device writes last */

	spin_lock_irqsave(&qp->lock, flags);
	while (qp->sq_ci != head && got < n) {
		u32 slot = qp->sq_ci;
		u32 cqe = le32_to_cpu(qp->cqe[slot]);
		struct ernic_swqe *s = &qp->swqe[slot];
		bool err = cqe & ERNIC_CQE_ERRFLAG_MASK;

		qp->sq_ci = (slot + 1) % qp->sq_depth;
		/*
		 * A WQE that is not the last of its WR reports nothing: an
		 * error in it leaves the QP FATAL, and the last one reports
		 * that error (its own CQE is then ERRFLAG too).
		 */
		if (!s->last || (!err && !s->signaled))
			continue;
		memset(&wc[got], 0, sizeof(wc[got]));
		wc[got].wr_id = s->wr_id;
		wc[got].opcode = s->opcode;
		wc[got].qp = &qp->ibqp;
		wc[got].byte_len = s->byte_len;
		wc[got].port_num = 1;
		wc[got].status = err ? ernic_errflag_status(qp) : IB_WC_SUCCESS;
		got++;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return got;
}

static u32 ernic_rq_pi(struct ernic_qp *qp)
{
	/* PG332 p.60: software reads the RQ write pointer doorbell word. */
	return (le32_to_cpu(READ_ONCE(*qp->db_rq)) & 0xffff) % qp->rq_depth;
}

static void ernic_copy_to_sges(struct ernic_dev *dev, struct ernic_rwqe *r,
			       const void *src, u32 len, struct ib_wc *wc)
{
	u32 off = 0;
	int i;

	for (i = 0; i < r->num_sge && off < len; i++) {
		u32 n = min(len - off, r->sge[i].length);

		if (ernic_dma_write(dev, r->sge[i].addr, src + off, n)) {
			wc->status = IB_WC_LOC_PROT_ERR;
			return;
		}
		off += n;
	}
	if (off < len)
		wc->status = IB_WC_LOC_LEN_ERR;
	wc->byte_len = off;
}

/* The status of a receive WQE's metadata entry @m. */
static enum ib_wc_status ernic_rx_status(const u8 *m)
{
	switch (FIELD_GET(ERNIC_RXMETA_STATUS_MASK, m[ERNIC_RXMETA_FLAGS])) {
	case ERNIC_RXMETA_ST_OK:
		return IB_WC_SUCCESS;
	case ERNIC_RXMETA_ST_LEN:
		return IB_WC_LOC_LEN_ERR;
	default:
		return IB_WC_LOC_PROT_ERR;
	}
}

/*
 * A MAD the device placed into the WR's SGEs itself (ERNIC-X for QP1,
 * docs/extension.md): the IP area as the "GRH", then the MAD; the
 * metadata entry gives the length, the source QP and the IP version.
 */
static void ernic_gsi_recv_placed(struct ernic_qp *qp, struct ib_wc *wc)
{
	const u8 *m = qp->meta + qp->rq_seen * ERNIC_RXMETA_SIZE;

	wc->status = ernic_rx_status(m);
	wc->byte_len = get_unaligned_le32(m + ERNIC_RXMETA_LEN);
	wc->src_qp = get_unaligned_le32(m + ERNIC_RXMETA_DATA) & 0xffffff;
	wc->wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	wc->network_hdr_type = m[ERNIC_RXMETA_FLAGS] & ERNIC_RXMETA_F_IPV6 ?
			       RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
}

/*
 * A QP1 buffer: the 40-byte IP area (an IPv6 header, or 20 zero bytes and
 * the IPv4 header), UDP, BTH, DETH, the MAD. ib_mad wants the IP area
 * (as its "GRH") followed by the MAD.
 */
static void ernic_gsi_recv(struct ernic_qp *qp, struct ernic_rwqe *r,
			   const u8 *b, struct ib_wc *wc)
{
	u8 buf[ERNIC_GSI_RQ_ELEM];

	if (qp->rx_wqe) {
		ernic_gsi_recv_placed(qp, wc);
		return;
	}
	const u8 *udp = b + ERNIC_GSI_IP_AREA;
	u32 ulen = get_unaligned_be16(udp + 4);
	u32 mlen;

	if (ulen < ERNIC_GSI_HDRS + ERNIC_ICRC_LEN ||
	    ERNIC_GSI_IP_AREA + ulen - ERNIC_ICRC_LEN > qp->rq_elem) {
		wc->status = IB_WC_LOC_LEN_ERR;
		return;
	}
	mlen = ulen - ERNIC_GSI_HDRS - ERNIC_ICRC_LEN;
	memcpy(buf, b, ERNIC_GSI_IP_AREA);
	memcpy(buf + ERNIC_GSI_IP_AREA, udp + ERNIC_GSI_HDRS, mlen);
	ernic_copy_to_sges(qp->dev, r, buf, ERNIC_GSI_IP_AREA + mlen, wc);
	wc->src_qp = get_unaligned_be32(udp + 8 + ERNIC_BTH_LEN + 4) & 0xffffff;
	wc->wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	wc->network_hdr_type = (b[0] >> 4) == 6 ? RDMA_NETWORK_IPV6 :
						    RDMA_NETWORK_IPV4;
}

/* RC opcodes RDMA WRITE FIRST (0x06) .. WRITE ONLY with Immediate (0x0b). */
#define ERNIC_OPC_WRITE_FIRST		0x06
#define ERNIC_OPC_WRITE_ONLY_IMM	0x0b

/*
 * An RC receive. With ERNIC-X receive metadata the slot's entry gives the
 * message's length, its kind, and its ImmDt or invalidated R_Key
 * (docs/extension.md); a WRITE with Immediate placed no data in the slot.
 * Without it the length is the buffer's (docs/driver.md), and the ImmDt
 * or invalidated R_Key comes from the ImmDt DMA (ernic_immdt.c).
 */
static void ernic_rc_recv(struct ernic_qp *qp, struct ernic_rwqe *r,
			  const u8 *b, struct ib_wc *wc)
{
	const u8 *m;
	u64 len;
	u32 data;
	u8 opc;

	wc->src_qp = qp->attr.dest_qp_num;
	if (qp->ud) {
		/* A UD receive: the 40-byte GRH area, then the payload. */
		m = qp->meta + qp->rq_seen * ERNIC_RXMETA_SIZE;
		wc->src_qp = get_unaligned_le32(m + ERNIC_RXMETA_SQPN) &
			     0xffffff;
		wc->wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		if (m[ERNIC_RXMETA_FLAGS] & ERNIC_RXMETA_F_IPV6) {
			wc->network_hdr_type = RDMA_NETWORK_IPV6;
			wc->sl = ERNIC_UD_SL_ROCEV2_IPV6;
		} else {
			wc->network_hdr_type = RDMA_NETWORK_IPV4;
			wc->sl = ERNIC_UD_SL_ROCEV2_IPV4;
		}
	}
	if (!qp->meta) {
		len = min_t(u64, qp->rq_elem,
			    ernic_sge_total(r->sge, r->num_sge));
		ernic_copy_to_sges(qp->dev, r, b, len, wc);
		ernic_imm_send(qp, qp->rq_seen, wc);
		return;
	}
	m = qp->meta + qp->rq_seen * ERNIC_RXMETA_SIZE;
	len = get_unaligned_le32(m + ERNIC_RXMETA_LEN);
	opc = m[ERNIC_RXMETA_OPCODE];
	data = get_unaligned_le32(m + ERNIC_RXMETA_DATA);
	if (m[ERNIC_RXMETA_FLAGS] & ERNIC_RXMETA_F_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = cpu_to_be32(data);
	} else if (m[ERNIC_RXMETA_FLAGS] & ERNIC_RXMETA_F_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = data;
	}
	if (opc >= ERNIC_OPC_WRITE_FIRST && opc <= ERNIC_OPC_WRITE_ONLY_IMM) {
		wc->opcode = IB_WC_RECV_RDMA_WITH_IMM;
		wc->byte_len = len;
		return;
	}
	if (!qp->rx_wqe) {
		ernic_copy_to_sges(qp->dev, r, b, min_t(u64, len, qp->rq_elem),
				   wc);
		return;
	}
	/* The device has placed the data into the WR's SGEs itself. */
	wc->byte_len = len;
	wc->status = ernic_rx_status(m);
}

/*
 * Receive completions of a QP of an SRQ: each RQ slot the device filled
 * names, in its metadata, the SRQ WQE the message took; the slot is then
 * granted again. WRs still in the SRQ are not flushed when the QP fails
 * (IBTA 10.2.9.5): they stay for the other QPs.
 */
static int ernic_poll_srq_qp(struct ernic_qp *qp, int n, struct ib_wc *wc)
{
	unsigned long flags;
	int got = 0;
	u32 pi = ernic_rq_pi(qp);

	rmb(); /* the metadata is read after the doorbell that covers it */
	spin_lock_irqsave(&qp->lock, flags);
	while (got < n && qp->rq_seen != pi) {
		const u8 *m = qp->meta + qp->rq_seen * ERNIC_RXMETA_SIZE;
		struct ib_wc *c = &wc[got++];

		memset(c, 0, sizeof(*c));
		c->wr_id = ernic_srq_complete(qp->srq,
			get_unaligned_le16(m + ERNIC_RXMETA_SRQ_WQE));
		c->qp = &qp->ibqp;
		c->port_num = 1;
		c->opcode = IB_WC_RECV;
		ernic_rc_recv(qp, NULL, NULL, c);
		qp->rq_seen = (qp->rq_seen + 1) % qp->rq_depth;
		ernic_rq_grant(qp);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return got;
}

/* Receive completions: the RQ producer index, copied receive buffers. */
int ernic_poll_rq(struct ernic_qp *qp, int n, struct ib_wc *wc)
{
	unsigned long flags;
	int got = 0;
	u32 pi;

	if (qp->state == IB_QPS_RESET || qp->direct)
		return 0;
	if (qp->srq)
		return ernic_poll_srq_qp(qp, n, wc);
	pi = ernic_rq_pi(qp);
	rmb(); /* the RQ buffers are read after the doorbell that covers them */
	/* After the doorbell: the ImmDt entries of SENDs up to pi are in. */
	if (qp->qpn != ERNIC_QP_GSI)
		ernic_immdt_collect(qp->dev);
	spin_lock_irqsave(&qp->lock, flags);
	while (got < n && qp->rwqe_ci != qp->rwqe_pi) {
		struct ernic_rwqe *r = &qp->rwqe[qp->rwqe_ci % qp->rq_depth];
		struct ib_wc *c = &wc[got];

		memset(c, 0, sizeof(*c));
		c->wr_id = r->wr_id;
		c->qp = &qp->ibqp;
		c->port_num = 1;
		c->opcode = IB_WC_RECV;
		if (ernic_imm_write(qp, c)) {
			/* A WRITE with Immediate, before the SEND of rq_seen. */
		} else if (qp->rq_seen != pi) {
			const u8 *b = qp->rq + qp->rq_seen * qp->rq_elem;

			c->status = IB_WC_SUCCESS;
			if (qp->qpn == ERNIC_QP_GSI)
				ernic_gsi_recv(qp, r, b, c);
			else
				ernic_rc_recv(qp, r, b, c);
			qp->rq_seen = (qp->rq_seen + 1) % qp->rq_depth;
		} else if (qp->poll_state == IB_QPS_ERR) {
			/* IBTA 10.3.1: Error flushes receive WRs. */
			c->status = IB_WC_WR_FLUSH_ERR;
		} else {
			break;
		}
		qp->rwqe_ci++;
		got++;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return got;
}

bool ernic_qp_has_work(struct ernic_qp *qp, bool send)
{
	if (qp->state == IB_QPS_RESET || qp->direct)
		return false;
	if (send)
		return ernic_cq_head(qp) != qp->sq_ci;
	if (qp->srq)
		return ernic_rq_pi(qp) != qp->rq_seen;
	if (qp->rwqe_ci == qp->rwqe_pi)
		return false;
	return qp->state == IB_QPS_ERR || ernic_rq_pi(qp) != qp->rq_seen ||
	       ernic_imm_ready(qp);
}
