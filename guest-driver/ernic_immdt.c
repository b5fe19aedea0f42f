// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ImmDt and invalidated R_Keys without ERNIC-X: ERNIC hands them off on
 * its ieth_immdt stream (PG332 Table 1-1), and the board's AXI DMA S2MM
 * channel in BAR4 writes them to a descriptor ring (docs/immdt.md), as
 * Xilinx's ERNIC driver reads them on the reference design.
 *
 * Entries are sorted out per QP in arrival order. A SEND entry names the
 * RQ slot of its SEND, whose receive completion then carries the ImmDt
 * or the R_Key. A WRITE with Immediate uses no RQ slot on a PG332 ERNIC;
 * its entry names the slot the next SEND will take, and the driver
 * completes the oldest receive WR for it there, so that receive WRs are
 * consumed in arrival order as IBTA 9.4.4 wants. QPs with ERNIC-X
 * receive metadata get all of this from their metadata instead.
 */

#include <linux/dma-mapping.h>

#include "ernic.h"

#define ERNIC_IMMDT_DESCS	128
#define ERNIC_IMMDT_RING_SIZE	(ERNIC_IMMDT_DESCS * \
				 (ERNIC_SGD_SIZE + ERNIC_IMMDT_ENTRY_LEN))
#define ERNIC_SGD_DONE_8	(ERNIC_SGD_ST_CMPLT | ERNIC_SGD_ST_RXSOF | \
				 ERNIC_SGD_ST_RXEOF | ERNIC_IMMDT_ENTRY_LEN)

static void ernic_immdt_wr(struct ernic_dev *dev, u32 reg, u32 val)
{
	ernic_eth_wr(dev, ERNIC_IMMDT_BASE + reg, val);
}

static u8 *ernic_immdt_desc(struct ernic_dev *dev, u32 k)
{
	return dev->immdt + k * ERNIC_SGD_SIZE;
}

static dma_addr_t ernic_immdt_desc_dma(struct ernic_dev *dev, u32 k)
{
	return dev->immdt_dma + k * ERNIC_SGD_SIZE;
}

/* A ring of 8-byte buffers, one per descriptor, after the descriptors. */
static u32 ernic_immdt_buf(u32 k)
{
	return ERNIC_IMMDT_DESCS * ERNIC_SGD_SIZE + k * ERNIC_IMMDT_ENTRY_LEN;
}

/*
 * The ring: every descriptor takes one entry; the channel runs to the
 * last one and waits there until descriptors are handed back. A board
 * without the DMA (DMASR not Halted with SGIncld after a reset) leaves
 * the ImmDt unreported, as before.
 */
int ernic_immdt_init(struct ernic_dev *dev)
{
	u32 want = ERNIC_DMASR_HALTED | ERNIC_DMASR_SGINCLD, k;
	dma_addr_t tail;

	ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_DMACR, ERNIC_DMACR_RESET);
	if ((ernic_eth_rd(dev, ERNIC_IMMDT_BASE + ERNIC_IMMDT_S2MM_DMASR) &
	     want) != want) {
		dev_info(&dev->pdev->dev, "no ImmDt DMA: receive completions carry no ImmDt\n");
		return 0;
	}
	dev->immdt = dma_alloc_coherent(&dev->pdev->dev, ERNIC_IMMDT_RING_SIZE,
					&dev->immdt_dma, GFP_KERNEL);
	if (!dev->immdt)
		return -ENOMEM;
	spin_lock_init(&dev->immdt_lock);
	for (k = 0; k < ERNIC_IMMDT_DESCS; k++) {
		u8 *d = ernic_immdt_desc(dev, k);

		put_unaligned_le64(ernic_immdt_desc_dma(dev, (k + 1) %
							ERNIC_IMMDT_DESCS),
				   d + ERNIC_SGD_NXTDESC);
		put_unaligned_le64(dev->immdt_dma + ernic_immdt_buf(k),
				   d + ERNIC_SGD_BUFFER);
		put_unaligned_le32(ERNIC_IMMDT_ENTRY_LEN, d + ERNIC_SGD_CONTROL);
	}
	dev->immdt_ci = 0;
	tail = ernic_immdt_desc_dma(dev, ERNIC_IMMDT_DESCS - 1);
	ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_CURDESC,
		       lower_32_bits(dev->immdt_dma));
	ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_CURDESC_MSB,
		       upper_32_bits(dev->immdt_dma));
	ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_DMACR, ERNIC_DMACR_RS |
		       ERNIC_DMACR_IOC_IRQEN | ERNIC_DMACR_ERR_IRQEN |
		       FIELD_PREP(ERNIC_DMACR_THRESH_MASK, 1));
	ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_TAILDESC_MSB, upper_32_bits(tail));
	ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_TAILDESC, lower_32_bits(tail));
	return 0;
}

void ernic_immdt_fini(struct ernic_dev *dev)
{
	if (!dev->immdt)
		return;
	ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_DMACR, ERNIC_DMACR_RESET);
	dma_free_coherent(&dev->pdev->dev, ERNIC_IMMDT_RING_SIZE, dev->immdt,
			  dev->immdt_dma);
	dev->immdt = NULL;
}

/*
 * One entry to its QP. A WRITE with Immediate rang no RQ doorbell: its
 * QP is marked for the interrupt handler to tell the receive CQ.
 */
static void ernic_immdt_dispatch(struct ernic_dev *dev, u64 e)
{
	u32 qpn = (e >> 40) & 0xff;
	struct ernic_qp *qp;

	spin_lock(&dev->fatal_lock);
	qp = qpn && qpn <= dev->num_qp ? dev->qps[qpn] : NULL;
	if (qp && !qp->meta) {
		struct ernic_imm *m;

		spin_lock(&qp->lock);
		if (qp->imm_count < ERNIC_IMM_QLEN) {
			m = &qp->imm[(qp->imm_head + qp->imm_count++) %
				     ERNIC_IMM_QLEN];
			m->data = lower_32_bits(e);
			m->type = (e >> 32) & 0xff;
			m->pos = (e >> 48) & 0xff;
			if (m->type == ERNIC_IMMDT_TYPE_WRITE_IMM)
				qp->imm_kick = true;
		} else {
			dev_warn_ratelimited(&dev->pdev->dev,
					     "QP%u: ImmDt entry lost\n", qpn);
		}
		spin_unlock(&qp->lock);
	}
	spin_unlock(&dev->fatal_lock);
}

/*
 * Take the completed descriptors' entries and hand the descriptors back
 * by moving the tail pointer. Called before the receive CQs are polled,
 * and from the interrupt.
 */
void ernic_immdt_collect(struct ernic_dev *dev)
{
	unsigned long flags;
	u32 n, last = 0;

	if (!dev->immdt)
		return;
	spin_lock_irqsave(&dev->immdt_lock, flags);
	for (n = 0; n < ERNIC_IMMDT_DESCS; n++) {
		u8 *d = ernic_immdt_desc(dev, dev->immdt_ci);
		u32 st = get_unaligned_le32(d + ERNIC_SGD_STATUS);

		if (!(st & ERNIC_SGD_ST_CMPLT))
			break;
		dma_rmb();
		if (st == ERNIC_SGD_DONE_8)
			ernic_immdt_dispatch(dev, get_unaligned_le64(dev->immdt +
					     ernic_immdt_buf(dev->immdt_ci)));
		put_unaligned_le32(0, d + ERNIC_SGD_STATUS);
		last = dev->immdt_ci;
		dev->immdt_ci = (dev->immdt_ci + 1) % ERNIC_IMMDT_DESCS;
	}
	if (n) {
		dma_addr_t tail = ernic_immdt_desc_dma(dev, last);

		dma_wmb();
		ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_TAILDESC_MSB,
			       upper_32_bits(tail));
		ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_TAILDESC,
			       lower_32_bits(tail));
	}
	spin_unlock_irqrestore(&dev->immdt_lock, flags);
}

/* From the board interrupt (vector 1): true if the ImmDt DMA raised it. */
bool ernic_immdt_irq(struct ernic_dev *dev)
{
	u32 sr, qpn;

	if (!dev->immdt)
		return false;
	sr = ernic_eth_rd(dev, ERNIC_IMMDT_BASE + ERNIC_IMMDT_S2MM_DMASR);
	if (!(sr & ERNIC_DMASR_IRQS))
		return false;
	ernic_immdt_wr(dev, ERNIC_IMMDT_S2MM_DMASR, sr & ERNIC_DMASR_IRQS);
	if (sr & ERNIC_DMASR_ERR_IRQ)
		dev_err_ratelimited(&dev->pdev->dev,
				    "ImmDt DMA halted: DMASR %#x\n", sr);
	ernic_immdt_collect(dev);
	for (qpn = 1; qpn <= dev->num_qp; qpn++) {
		struct ernic_cq *cq = NULL;
		struct ernic_qp *qp;

		spin_lock(&dev->fatal_lock);
		qp = dev->qps[qpn];
		if (qp && qp->imm_kick) {
			qp->imm_kick = false;
			cq = qp->rcq;
		}
		spin_unlock(&dev->fatal_lock);
		if (cq)
			ernic_cq_notify(cq);
	}
	return true;
}

/* Under qp->lock: the oldest entry, if it is for RQ position @pos. */
static struct ernic_imm *ernic_imm_at(struct ernic_qp *qp, u32 pos)
{
	struct ernic_imm *m = &qp->imm[qp->imm_head];

	if (qp->meta || !qp->imm_count || m->pos != (pos & 0xff))
		return NULL;
	return m;
}

static void ernic_imm_pop(struct ernic_qp *qp)
{
	qp->imm_head = (qp->imm_head + 1) % ERNIC_IMM_QLEN;
	qp->imm_count--;
}

/*
 * Under qp->lock: a WRITE with Immediate that came before the SEND of the
 * next RQ slot takes the oldest receive WR: IB_WC_RECV_RDMA_WITH_IMM,
 * with the ImmDt. Its length is not known here (PG332 hands off no
 * length): byte_len 0. The RQ buffer granted for that WR is still free
 * on the device: the next receive WR posted takes it (rq_spare) instead
 * of a new grant, or RQCIi would run a whole ring ahead.
 */
bool ernic_imm_write(struct ernic_qp *qp, struct ib_wc *wc)
{
	struct ernic_imm *m = ernic_imm_at(qp, qp->rq_seen);

	if (!m || m->type != ERNIC_IMMDT_TYPE_WRITE_IMM)
		return false;
	wc->opcode = IB_WC_RECV_RDMA_WITH_IMM;
	wc->status = IB_WC_SUCCESS;
	wc->wc_flags |= IB_WC_WITH_IMM;
	wc->ex.imm_data = cpu_to_be32(m->data);
	wc->byte_len = 0;
	wc->src_qp = qp->attr.dest_qp_num;
	qp->rq_spare++;
	ernic_imm_pop(qp);
	return true;
}

/* Under qp->lock: the ImmDt or invalidated R_Key of the SEND in @slot. */
void ernic_imm_send(struct ernic_qp *qp, u32 slot, struct ib_wc *wc)
{
	struct ernic_imm *m = ernic_imm_at(qp, slot);

	if (!m || m->type == ERNIC_IMMDT_TYPE_WRITE_IMM)
		return;
	if (m->type == ERNIC_IMMDT_TYPE_SEND_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = cpu_to_be32(m->data);
	} else {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = m->data;
	}
	ernic_imm_pop(qp);
}

/* Whether a WRITE with Immediate waits for a receive WR. */
bool ernic_imm_ready(struct ernic_qp *qp)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&qp->lock, flags);
	ready = ernic_imm_at(qp, qp->rq_seen) &&
		qp->imm[qp->imm_head].type == ERNIC_IMMDT_TYPE_WRITE_IMM;
	spin_unlock_irqrestore(&qp->lock, flags);
	return ready;
}
