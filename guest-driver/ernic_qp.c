// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ERNIC queue pairs: creation, the IBTA state machine (IBTA vol.1 10.3,
 * ib_modify_qp_is_ok() plus the device's limits) mapped onto the QP
 * context of PG332 (docs/qp-states.md, docs/driver.md), FATAL handling,
 * and PG332 ch.6's "QP Fatal Recovery" run for every return to Reset.
 */

#include <linux/iopoll.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "ernic.h"

#define ERNIC_POLL_US		10
#define ERNIC_POLL_TIMEOUT_US	1000000

/* QPCONFi of a QP: what create and modify_qp chose, without [0] and [6]. */
static u32 ernic_qpconf_base(struct ernic_qp *qp, enum ib_mtu mtu)
{
	return ERNIC_QPCONF_RQ_INT_EN | ERNIC_QPCONF_CQ_INT_EN |
	       ERNIC_QPCONF_HW_HS_DIS | ERNIC_QPCONF_CQE_WR_EN |
	       (qp->av.ipv6 ? ERNIC_QPCONF_IPV6 : 0) |
	       FIELD_PREP(ERNIC_QPCONF_PMTU_MASK, mtu - IB_MTU_256) |
	       FIELD_PREP(ERNIC_QPCONF_RQBUFSZ_MASK, qp->rq_elem / 256);
}

/*
 * Every write of QPCONFi: the value modify_qp or recovery chose, less
 * the interrupt enables masked while their CQ is not armed (ernic_cq.c).
 * The device never changes QPCONFi itself, so qpconf_hw is its value.
 */
void ernic_qpconf_wr(struct ernic_qp *qp, u32 val)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->conf_lock, flags);
	qp->qpconf_hw = val;
	ernic_qwr(qp->dev, qp->qpn, ERNIC_QPCONF, val & ~qp->irq_off);
	spin_unlock_irqrestore(&qp->conf_lock, flags);
}

/*
 * Mask (@off) or unmask QPCONFi's CQ [3] or RQ [2] interrupt enable
 * @bit: PG332 p.48, "These interrupts can be enabled or disabled on a
 * per QP basis".
 */
void ernic_qp_irq_mask(struct ernic_qp *qp, u32 bit, bool off)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->conf_lock, flags);
	if (!(qp->irq_off & bit) != !off) {
		qp->irq_off ^= bit;
		if (qp->qpconf_hw & bit)
			ernic_qwr(qp->dev, qp->qpn, ERNIC_QPCONF,
				  qp->qpconf_hw & ~qp->irq_off);
	}
	spin_unlock_irqrestore(&qp->conf_lock, flags);
}

static int ernic_wait(struct ernic_qp *qp, u32 off, u32 mask, u32 want,
		      const char *what)
{
	u32 v;
	int ret = readl_poll_timeout(qp->dev->regs + off, v,
				     (v & mask) == want, ERNIC_POLL_US,
				     ERNIC_POLL_TIMEOUT_US);

	if (ret)
		ibdev_warn(&qp->dev->ibdev, "QP%u: timeout waiting for %s\n",
			   qp->qpn, what);
	return ret;
}

static int ernic_wait_cq_sq(struct ernic_qp *qp)
{
	u32 v;
	int ret = read_poll_timeout(ernic_qrd, v,
				    v == ernic_qrd(qp->dev, qp->qpn,
						   ERNIC_SQPI),
				    ERNIC_POLL_US, ERNIC_POLL_TIMEOUT_US,
				    false, qp->dev, qp->qpn, ERNIC_CQHEAD);

	if (ret)
		ibdev_warn(&qp->dev->ibdev, "QP%u: CQHEAD %#x never reached SQPI %#x\n",
			   qp->qpn, v, ernic_qrd(qp->dev, qp->qpn, ERNIC_SQPI));
	return ret;
}

/*
 * PG332 ch.6 "QP Fatal Recovery", steps to clear traffic (2-7): stop
 * ringing SQPIi, set "QP under recovery", wait for the SQ and the
 * outstanding queue to empty, for CQHEADi to reach SQPIi and for the
 * transmit engine to be idle, then disable the QP. Used for every QP that
 * has been enabled: for a healthy QP this is the deletion procedure's
 * draining, with the outstanding WQEs completing with ERRFLAG.
 */
static void ernic_qp_clear_traffic(struct ernic_qp *qp)
{
	u32 qpconf = qp->qpconf_hw;

	qp->sq_held = true;
	ernic_qpconf_wr(qp, qpconf | ERNIC_QPCONF_UNDER_RECOVERY);
	ernic_wait(qp, ERNIC_QP_OFFSET(qp->qpn) + ERNIC_STATQP,
		   ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY,
		   ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY,
		   "SQ and outstanding queue empty");
	ernic_wait_cq_sq(qp);
	ernic_wait(qp, ERNIC_RESPHNDSTS, ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN,
		   ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN, "RESPHNDSTS[16]");
	ernic_qpconf_wr(qp, (qpconf & ~ERNIC_QPCONF_QP_EN) |
			ERNIC_QPCONF_UNDER_RECOVERY);
}

/*
 * PG332 ch.6 re-initialisation steps 8-11 (and the deletion procedure's
 * zeroing): under the software override, every queue pointer and PSN of
 * the QP goes back to 0. Then one more write under the override: the RQ
 * producer index is put one short of a full ring, so that the device owns
 * no RQ buffer until a receive WR grants one through RQCIi (docs/driver.md,
 * "Receive WRs"). The rest of re-initialisation is modify_qp's
 * INIT/RTR/RTS programming.
 */
static void ernic_qp_zero(struct ernic_qp *qp)
{
	struct ernic_dev *dev = qp->dev;
	u32 q = qp->qpn;
	u32 adconf;

	mutex_lock(&dev->swo_mutex);
	adconf = ernic_rd(dev, ERNIC_XRNICADCONF);
	ernic_wr(dev, ERNIC_XRNICADCONF, adconf | ERNIC_XRNICADCONF_SWO);
	ernic_qwr(dev, q, ERNIC_STATRQPIDB, 0);
	ernic_qwr(dev, q, ERNIC_STATRQBUFCA, 0);
	ernic_qwr(dev, q, ERNIC_STATRQBUFCAMSB, 0);
	/* With doorbell records, SQPIi and RQCIi take the records' indices. */
	if (qp->rqrec)
		WRITE_ONCE(qp->db_sq[1], 0);
	ernic_qwr(dev, q, ERNIC_RQCI, 0);
	ernic_qwr(dev, q, ERNIC_STATCURSQPTR, 0);
	if (qp->db_sq)
		WRITE_ONCE(*qp->db_sq, 0);
	ernic_qwr(dev, q, ERNIC_SQPI, 0);
	if (q != ERNIC_QP_GSI) {
		ernic_qwr(dev, q, ERNIC_SQPSN, 0);
		ernic_qwr(dev, q, ERNIC_LSTRQREQ, 0);
		ernic_qwr(dev, q, ERNIC_STATMSN, 0);
	}
	ernic_qwr(dev, q, ERNIC_CQHEAD, 0);
	ernic_wait(qp, ERNIC_QP_OFFSET(q) + ERNIC_CQHEAD, 0xffff, 0,
		   "CQHEAD == 0");
	ernic_qwr(dev, q, ERNIC_STATRQPIDB, qp->rq_depth - 1);
	ernic_wr(dev, ERNIC_XRNICADCONF, adconf & ~ERNIC_XRNICADCONF_SWO);
	mutex_unlock(&dev->swo_mutex);

	WRITE_ONCE(*qp->db_cq, 0);
	WRITE_ONCE(*qp->db_rq, cpu_to_le32(qp->rq_depth - 1));
	qp->sq_pi = 0;
	qp->sq_ci = 0;
	qp->rq_seen = qp->rq_depth - 1;
	qp->rq_ci = 0;
	qp->rwqe_pi = 0;
	qp->rwqe_ci = 0;
	/* An SRQ's QP reports into every slot of its RQ: all granted. */
	if (qp->srq) {
		qp->rq_ci = qp->rq_depth - 1;
		ernic_qwr(dev, q, ERNIC_RQCI, qp->rq_ci);
	}
	spin_lock_irq(&qp->lock);
	qp->imm_head = 0;
	qp->imm_count = 0;
	qp->imm_kick = false;
	qp->rq_spare = 0;
	spin_unlock_irq(&qp->lock);
	qp->gsi_psn = 0;
	qp->sq_held = false;
	qp->fatal_code = 0;
	qp->nak_synd = 0;
	qp->err_status = -1;
	spin_lock_irq(&qp->lock);
	ernic_uq_publish(qp);
	spin_unlock_irq(&qp->lock);
}

/* Back to Reset from any state: a disabled QP with zeroed pointers. */
static void ernic_qp_to_reset(struct ernic_qp *qp)
{
	struct ernic_dev *dev = qp->dev;
	unsigned long flags;

	if (ernic_qrd(dev, qp->qpn, ERNIC_QPCONF) & ERNIC_QPCONF_QP_EN ||
	    ernic_qrd(dev, qp->qpn, ERNIC_STATQP) & ERNIC_STATQP_FATAL)
		ernic_qp_clear_traffic(qp);
	/* Re-init steps 8: the engine is idle and every WQE completed. */
	ernic_wait_cq_sq(qp);
	ernic_wait(qp, ERNIC_RESPHNDSTS, ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN,
		   ERNIC_RESPHNDSTS_SQ_PICI_DB_CHECK_EN, "RESPHNDSTS[16]");
	spin_lock_irqsave(&qp->lock, flags);
	qp->state = IB_QPS_RESET;
	ernic_uq_publish(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	ernic_qp_zero(qp);
	ernic_qpconf_wr(qp, 0);
}

static void ernic_qp_flush_work(struct work_struct *w)
{
	struct ernic_qp *qp = container_of(w, struct ernic_qp, flush_work);

	ernic_cq_notify(qp->scq);
	ernic_cq_notify(qp->rcq);
}

/*
 * A QP of an SRQ in Error takes no more of its WQEs: IBTA's Last WQE
 * Reached event (11.5.2.1), which its consumer waits for before it
 * destroys the QP (ib_drain_qp() users, nvmet_rdma).
 */
static void ernic_qp_last_wqe(struct ernic_qp *qp)
{
	struct ib_event ev = {
		.device = &qp->dev->ibdev,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (qp->srq && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

static void ernic_qp_fatal_work(struct work_struct *w)
{
	struct ernic_qp *qp = container_of(w, struct ernic_qp, fatal_work);
	struct ib_event ev = {
		.device = &qp->dev->ibdev,
		.element.qp = &qp->ibqp,
		.event = qp->fatal_event,
	};

	ibdev_warn(&qp->dev->ibdev, "QP%u FATAL, code 0x%02x, NAK syndrome 0x%02x\n",
		   qp->qpn, qp->fatal_code, qp->nak_synd);
	if (qp->fatal_event >= 0 && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	ernic_qp_last_wqe(qp);
	ernic_cq_notify(qp->scq);
	ernic_cq_notify(qp->rcq);
}

/*
 * The completion status of the WQE that a FATAL code names (PG332 Table
 * 2-4). Codes raised by the requester side end the oldest WQE with an
 * IBTA status; responder-side codes (a bad incoming request) flush.
 */
static int ernic_fatal_wc_status(u8 code, u8 nak)
{
	switch (code) {
	case ERNIC_FATAL_RESPONSE_HANDLER:	/* retry count spent */
		return IB_WC_RETRY_EXC_ERR;
	case ERNIC_FATAL_RNR_COUNTER:
	case ERNIC_FATAL_RNR_DOWN_COUNTER:
		return IB_WC_RNR_RETRY_EXC_ERR;
	case ERNIC_FATAL_NAK_RECEIVED:
		/* STATQPi[22:16]: the AETH syndrome of the NAK (IBTA 9.7.5). */
		if (nak == ERNIC_NAK_INVALID_REQ)
			return IB_WC_REM_INV_REQ_ERR;
		if (nak == ERNIC_NAK_REMOTE_ACCESS)
			return IB_WC_REM_ACCESS_ERR;
		return IB_WC_REM_OP_ERR;
	case ERNIC_FATAL_WQE_PROCESSOR:
		return IB_WC_LOC_QP_OP_ERR;
	case ERNIC_FATAL_ACK_OPCODE:
	case ERNIC_FATAL_AETH:
	case ERNIC_FATAL_READ_RESP_ONLY_LEN:
	case ERNIC_FATAL_BAD_RESPONSE:
	case ERNIC_FATAL_READ_RESP_LAST_ONLY:
	case ERNIC_FATAL_READ_RESP_MID_LEN:
	case ERNIC_FATAL_READ_RESP_LAST:
		return IB_WC_BAD_RESP_ERR;
	default:
		return -1;
	}
}

/*
 * The affiliated asynchronous event a FATAL code raises, or -1 for none
 * (IBTA ch. 11, affiliated asynchronous errors; mlx4 and mlx5 report
 * theirs the same way). A bad incoming request is the responder's to
 * report, and nothing else tells its consumer (a WRITE or READ takes no
 * receive WR): Invalid Request (0x01-0x04, 0x10-0x13) or Local Access
 * Violation (0x15-0x17). A requester's code always ends a WQE (PG332
 * drops a response to nothing, p.18), whose status reports it
 * (ernic_fatal_wc_status()): no event. A code of neither kind is the
 * QP's catastrophic error.
 */
static int ernic_fatal_event(u8 code)
{
	switch (code) {
	case ERNIC_FATAL_OPCODE_SEQ:
	case ERNIC_FATAL_LENGTH:
	case ERNIC_FATAL_OPCODE_SEQ_AND_LENGTH:
	case ERNIC_FATAL_UNSUPPORTED_OPCODE:
	case ERNIC_FATAL_READ_RESOURCES:
	case ERNIC_FATAL_WRITE_OPCODE_SEQ:
	case ERNIC_FATAL_WRITE_LENGTH:
	case ERNIC_FATAL_WRITE_SEQ_AND_LENGTH:
		return IB_EVENT_QP_REQ_ERR;
	case ERNIC_FATAL_RKEY:
	case ERNIC_FATAL_RETH_LENGTH:
	case ERNIC_FATAL_RKEY_AND_LENGTH:
		return IB_EVENT_QP_ACCESS_ERR;
	}
	return ernic_fatal_wc_status(code, 0) >= 0 ? -1 : IB_EVENT_QP_FATAL;
}

static void ernic_qp_fatal(struct ernic_qp *qp, u8 code)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_INIT ||
	    qp->fatal_code) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return;
	}
	qp->fatal_code = code;
	qp->nak_synd = FIELD_GET(ERNIC_STATQP_NAK_SYND_MASK,
				 ernic_qrd(qp->dev, qp->qpn, ERNIC_STATQP));
	qp->err_status = ernic_fatal_wc_status(code, qp->nak_synd);
	qp->fatal_event = ernic_fatal_event(code);
	qp->state = IB_QPS_ERR;
	ernic_uq_publish(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	queue_work(system_wq, &qp->fatal_work);
}

/*
 * New entries of the incoming packet error status queue (PG332 p.17,
 * Fig. 2-3): [15:0] FATAL code, [31:16] QP. Called from the interrupt
 * handler and from poll_cq when it meets an ERRFLAG CQE first.
 */
void ernic_fatalq_process(struct ernic_dev *dev)
{
	unsigned long flags;
	u32 wptr, n;

	spin_lock_irqsave(&dev->fatal_lock, flags);
	wptr = ernic_rd(dev, ERNIC_IPKTERRQWPTR) % ERNIC_FATALQ_ENTRIES;
	for (n = 0; dev->fatalq_ci != wptr && n < ERNIC_FATALQ_ENTRIES; n++) {
		u32 e = le32_to_cpu(((__le32 *)dev->fatalq)[dev->fatalq_ci * 2]);
		u32 qpn = e >> ERNIC_IPKTERRQ_QPID_SHIFT;

		dev->fatalq_ci = (dev->fatalq_ci + 1) % ERNIC_FATALQ_ENTRIES;
		if (qpn && qpn <= dev->num_qp && dev->qps[qpn])
			ernic_qp_fatal(dev->qps[qpn],
				       e & ERNIC_IPKTERRQ_CODE_MASK);
		else
			dev_warn(&dev->pdev->dev, "FATAL 0x%02x for unknown QP%u\n",
				 e & ERNIC_IPKTERRQ_CODE_MASK, qpn);
	}
	spin_unlock_irqrestore(&dev->fatal_lock, flags);
}

/*
 * Does the QP use the ERNIC-X @feature? QP1 only with the QP1 feature
 * too (docs/extension.md, "QP1").
 */
static bool ernic_qp_ext_on(struct ernic_qp *qp, u32 feature)
{
	u32 ext = qp->dev->ext;

	return (ext & feature) &&
	       (qp->qpn != ERNIC_QP_GSI || (ext & ERNIC_EXT_F_QP1));
}

/*
 * The rings of a QP the driver posts to and polls, and what it keeps of
 * its WRs (a direct QP's rings are mapped, and its process keeps those).
 */
static int ernic_qp_alloc_rings(struct ernic_qp *qp)
{
	struct device *d = &qp->dev->pdev->dev;

	qp->sq = dma_alloc_coherent(d, qp->sq_depth * qp->wqe_size,
				    &qp->sq_dma, GFP_KERNEL);
	qp->cqe = dma_alloc_coherent(d, qp->sq_depth * ERNIC_CQE_SIZE,
				     &qp->cqe_dma, GFP_KERNEL);
	/* One contiguous ring: RQBAi + slot x buffer size (PG332 p.60). */
	qp->rq = dma_alloc_coherent(d, (size_t)qp->rq_depth * qp->rq_elem,
				    &qp->rq_dma, GFP_KERNEL | __GFP_NOWARN);
	if (!qp->rq)
		ibdev_err(&qp->dev->ibdev, "QP%u: no contiguous RQ of %u x %u bytes\n",
			  qp->qpn, qp->rq_depth, qp->rq_elem);
	qp->swqe = kcalloc(qp->sq_depth, sizeof(*qp->swqe), GFP_KERNEL);
	qp->rwqe = kcalloc(qp->rq_depth, sizeof(*qp->rwqe), GFP_KERNEL);
	if (ernic_qp_ext_on(qp, ERNIC_EXT_F_RXMETA))
		qp->meta = dma_alloc_coherent(d, qp->rq_depth *
					      ERNIC_RXMETA_SIZE,
					      &qp->meta_dma, GFP_KERNEL);
	if (qp->max_inline > ERNIC_WQE_SDATA_MAX)
		qp->inl = dma_alloc_coherent(d, (size_t)qp->sq_depth *
					     ERNIC_MAX_INLINE, &qp->inl_dma,
					     GFP_KERNEL);
	if (!qp->sq || !qp->cqe || !qp->rq || !qp->swqe || !qp->rwqe ||
	    (ernic_qp_ext_on(qp, ERNIC_EXT_F_RXMETA) && !qp->meta) ||
	    (qp->max_inline > ERNIC_WQE_SDATA_MAX && !qp->inl))
		return -ENOMEM;
	return 0;
}

static int ernic_qp_alloc_queues(struct ernic_qp *qp)
{
	struct device *d = &qp->dev->pdev->dev;
	int ret = qp->direct ? 0 : ernic_qp_alloc_rings(qp);

	if (!ret && qp->qpn == ERNIC_QP_GSI) {
		qp->frames = dma_alloc_coherent(d, qp->sq_depth *
						ERNIC_GSI_FRAME_SIZE,
						&qp->frames_dma, GFP_KERNEL);
		if (!qp->frames)
			ret = -ENOMEM;
	}
	return ret;
}

static void ernic_qp_free_queues(struct ernic_qp *qp)
{
	struct device *d = &qp->dev->pdev->dev;

	ernic_uq_free(qp);	/* a direct QP's rings: NULL from here */
	if (qp->sq)
		dma_free_coherent(d, qp->sq_depth * qp->wqe_size, qp->sq,
				  qp->sq_dma);
	if (qp->cqe)
		dma_free_coherent(d, qp->sq_depth * ERNIC_CQE_SIZE, qp->cqe,
				  qp->cqe_dma);
	if (qp->rq)
		dma_free_coherent(d, (size_t)qp->rq_depth * qp->rq_elem,
				  qp->rq, qp->rq_dma);
	if (qp->frames)
		dma_free_coherent(d, qp->sq_depth * ERNIC_GSI_FRAME_SIZE,
				  qp->frames, qp->frames_dma);
	if (qp->meta)
		dma_free_coherent(d, qp->rq_depth * ERNIC_RXMETA_SIZE,
				  qp->meta, qp->meta_dma);
	if (qp->inl)
		dma_free_coherent(d, (size_t)qp->sq_depth * ERNIC_MAX_INLINE,
				  qp->inl, qp->inl_dma);
	kfree(qp->swqe);
	kfree(qp->rwqe);
}

/*
 * EXTQPCONFi: what the QP uses of ERNIC-X, and whether it executes
 * atomics and FLUSH (its remote atomic and FLUSH access, which the
 * device lets change while the QP is enabled, docs/extension.md
 * "Atomics" and "Placement").
 */
static void ernic_qp_ext_conf(struct ernic_qp *qp)
{
	bool atomic = (qp->dev->ext & ERNIC_EXT_F_ATOMIC) &&
		      (qp->attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC);
	bool flush = (qp->dev->ext & ERNIC_EXT_F_PLACE) &&
		     (qp->attr.qp_access_flags & ERNIC_ACCESS_FLUSH_GLOBAL);

	ernic_wr(qp->dev, ERNIC_EXT_QP_OFFSET(qp->qpn) + ERNIC_EXTQPCONF,
		 (qp->meta ? ERNIC_EXTQPCONF_RXMETA : 0) |
		 (qp->xwqe ? ERNIC_EXTQPCONF_XWQE : 0) |
		 (qp->rx_wqe ? ERNIC_EXTQPCONF_RXWQE : 0) |
		 (qp->direct ? ERNIC_EXTQPCONF_USER : 0) |
		 (qp->srq ? ERNIC_EXTQPCONF_SRQ |
		  FIELD_PREP(ERNIC_EXTQPCONF_SRQN_MASK, qp->srq->n) : 0) |
		 (qp->ud ? ERNIC_EXTQPCONF_UD : 0) |
		 (qp->uc ? ERNIC_EXTQPCONF_UC : 0) |
		 (atomic ? ERNIC_EXTQPCONF_ATOMIC : 0) |
		 (flush ? ERNIC_EXTQPCONF_FLUSH : 0) |
		 (qp->xrc_tgt ? ERNIC_EXTQPCONF_XRC_TGT : 0) |
		 (qp->xrc_ini ? ERNIC_EXTQPCONF_XRC_INI : 0) |
		 (qp->db_sq ? ERNIC_EXTQPCONF_DBREC : 0) |
		 (qp->rqrec ? ERNIC_EXTQPCONF_RQREC : 0));
	if (qp->db_sq) {
		ernic_wr(qp->dev, ERNIC_EXT_QP_OFFSET(qp->qpn) + ERNIC_DBRECA,
			 lower_32_bits(qp->db_sq_dma));
		ernic_wr(qp->dev, ERNIC_EXT_QP_OFFSET(qp->qpn) +
			 ERNIC_DBRECAMSB, upper_32_bits(qp->db_sq_dma));
	}
	if (qp->xrc_tgt)
		ernic_wr(qp->dev, ERNIC_EXT_QP_OFFSET(qp->qpn) + ERNIC_XRCD,
			 qp->xrcdn);
}

/* PG332 ch.6 "QP configuration": queue addresses, depths, doorbells, PD. */
static void ernic_qp_program_queues(struct ernic_qp *qp, u32 pdn)
{
	struct ernic_dev *dev = qp->dev;
	u32 q = qp->qpn;

	ernic_qpconf_wr(qp, 0);
	ernic_qwr64(dev, q, ERNIC_SQBA, ERNIC_SQBAMSB, qp->sq_dma);
	ernic_qwr64(dev, q, ERNIC_CQBA, ERNIC_CQBAMSB, qp->cqe_dma);
	ernic_qwr64(dev, q, ERNIC_RQBA, ERNIC_RQBAMSB, qp->rq_dma);
	ernic_qwr64(dev, q, ERNIC_CQDBADD, ERNIC_CQDBADDMSB, qp->db_cq_dma);
	ernic_qwr64(dev, q, ERNIC_RQWPTRDBADD, ERNIC_RQWPTRDBADDMSB,
		    qp->db_rq_dma);
	ernic_qwr(dev, q, ERNIC_QDEPTH,
		  FIELD_PREP(ERNIC_QDEPTH_RQ_MASK, qp->rq_depth) |
		  FIELD_PREP(ERNIC_QDEPTH_SQ_MASK, qp->sq_depth));
	if (q != ERNIC_QP_GSI)
		ernic_qwr(dev, q, ERNIC_PD, pdn);
	/* ERNIC-X: where the device says what each RQ slot received. */
	if (!dev->ext)
		return;
	ernic_wr(dev, ERNIC_EXT_QP_OFFSET(q) + ERNIC_RXMETABA,
		 lower_32_bits(qp->meta_dma));
	ernic_wr(dev, ERNIC_EXT_QP_OFFSET(q) + ERNIC_RXMETABAMSB,
		 upper_32_bits(qp->meta_dma));
	ernic_qp_ext_conf(qp);
}

/*
 * The doorbell words of a QP the driver polls: its words of dev->db,
 * and its doorbell records there when the device has them: the SQ's,
 * and the RQ's for a QP that grants its own RQ buffers (not one of an
 * SRQ, whose RQCIi grants every slot once, nor an XRC target).
 */
static void ernic_qp_kernel_db(struct ernic_qp *qp)
{
	struct ernic_dev *dev = qp->dev;
	bool dbrec = dev->ext & ERNIC_EXT_F_DBREC;

	qp->db_cq = &dev->db[ERNIC_DB_CQ(qp->qpn)];
	qp->db_rq = &dev->db[ERNIC_DB_RQ(qp->qpn)];
	qp->db_cq_dma = dev->db_dma + 4 * ERNIC_DB_CQ(qp->qpn);
	qp->db_rq_dma = dev->db_dma + 4 * ERNIC_DB_RQ(qp->qpn);
	qp->db_sq = dbrec ? &dev->db[ERNIC_DB_SQ(qp->qpn)] : NULL;
	qp->db_sq_dma = dbrec ? dev->db_dma + 4 * ERNIC_DB_SQ(qp->qpn) : 0;
	qp->rqrec = dbrec && (dev->ext & ERNIC_EXT_F_RQREC) && !qp->srq &&
		    !qp->xrc_tgt;
}

/*
 * A user QP is direct when its provider asks and the device can
 * (ernic_uverbs.c); when its regions cannot be had it is an ordinary
 * user QP, which posts through the driver.
 */
static void ernic_qp_try_direct(struct ernic_qp *qp, struct ib_udata *udata)
{
	int ret;

	ernic_qp_kernel_db(qp);
	if (!qp->xwqe || !qp->rx_wqe || !ernic_uq_wanted(qp, udata))
		return;
	qp->direct = true;
	ret = ernic_uq_alloc(qp, udata);
	if (!ret)
		return;
	ibdev_dbg(&qp->dev->ibdev, "QP%u: not direct (%d)\n", qp->qpn, ret);
	ernic_uq_free(qp);
	ernic_qp_kernel_db(qp);
	qp->direct = false;
}

/*
 * Inline data a QP can carry: none on QP1, and none for a consumer that
 * asks for none; up to 16 bytes of SEND data in SDATA (PG332 Table 2-1);
 * with ERNIC-X keyed SGEs, a consumer that asks for inline data gets
 * ERNIC_MAX_INLINE bytes of SEND or WRITE data through a per-slot buffer
 * (ernic_wr.c). Not the 16 bytes of SDATA when none was asked for: a
 * consumer may read max_inline_data back (qperf does) and post an inline
 * WRITE, which SDATA cannot carry.
 */
static u32 ernic_qp_inline(struct ernic_dev *dev,
			   const struct ib_qp_init_attr *init)
{
	if (init->qp_type == IB_QPT_GSI || !init->cap.max_inline_data)
		return 0;
	if (dev->ext & ERNIC_EXT_F_XWQE)
		return ERNIC_MAX_INLINE;
	return ERNIC_WQE_SDATA_MAX;
}

/*
 * What the device can make of @init. A user QP (uverbs) is an RC QP on a
 * device whose ERNIC-X lets it touch only registered memory
 * (ernic_uverbs.c).
 */
static int ernic_qp_check_init(struct ernic_dev *dev, struct ib_pd *pd,
			       const struct ib_qp_init_attr *init,
			       struct ib_udata *udata)
{
	const struct ib_qp_cap *cap = &init->cap;
	bool gsi = init->qp_type == IB_QPT_GSI;

	bool ud = init->qp_type == IB_QPT_UD;
	bool uc = init->qp_type == IB_QPT_UC;
	bool ini = init->qp_type == IB_QPT_XRC_INI;
	bool tgt = init->qp_type == IB_QPT_XRC_TGT;

	if (udata && (!ernic_user_capable(dev) ||
		      (init->qp_type != IB_QPT_RC && !ud && !uc && !ini))) {
		ibdev_dbg(&dev->ibdev, "user QPs are RC, UC, UD or XRC initiator QPs with ERNIC-X\n");
		return -EOPNOTSUPP;
	}
	/*
	 * XRC (ERNIC-X XRC): an initiator is a process's direct QP; a target
	 * is the kernel's, made by uverbs for an XRC domain (docs/driver.md).
	 */
	if ((ini || tgt) && (!(dev->ext & ERNIC_EXT_F_XRC) ||
			     (ini && !udata) || (tgt && (udata || !init->xrcd))))
		return -EOPNOTSUPP;
	/* UD QPs: ERNIC-X UD, with the keyed SGEs and receive WQEs it needs. */
	if (ud && (!(dev->ext & ERNIC_EXT_F_UD) || !ernic_user_capable(dev)))
		return -EOPNOTSUPP;
	if (uc && !(dev->ext & ERNIC_EXT_F_UC))
		return -EOPNOTSUPP;
	if ((init->qp_type != IB_QPT_RC && !gsi && !ud && !uc && !ini &&
	     !tgt) ||
	    (init->srq && gsi) || init->create_flags)
		return -EOPNOTSUPP;
	/*
	 * A kernel QP takes from a kernel SRQ, a process's from its own
	 * (direct) one, and only from an SRQ of its PD (the device compares
	 * SRQPDn with PDi).
	 */
	if (init->srq && (to_esrq(init->srq)->user != !!udata ||
			  init->srq->pd != pd)) {
		ibdev_dbg(&dev->ibdev, "SRQ of another PD or kind\n");
		return -EINVAL;
	}
	/*
	 * A send-only or receive-only QP asks for no WRs on the other
	 * queue, as qperf's do; it gets the smallest ring (depth 4), as on
	 * rxe and mlx5.
	 */
	if (cap->max_send_wr > ERNIC_MAX_QP_WR ||
	    cap->max_recv_wr > ERNIC_MAX_QP_WR ||
	    cap->max_send_sge >
	    (gsi ? ERNIC_GSI_SEND_SGE : ERNIC_MAX_RW_SGE) ||
	    cap->max_recv_sge > ERNIC_MAX_RECV_SGE ||
	    cap->max_inline_data > max_t(u32, ernic_qp_inline(dev, init),
					 ERNIC_WQE_SDATA_MAX)) {
		ibdev_dbg(&dev->ibdev, "QP capabilities beyond the device's\n");
		return -EINVAL;
	}
	return 0;
}

/*
 * A free RC QP number, searched from the one after the last given out: a
 * number just freed is not reused at once, so a peer's CM that still
 * holds the old connection in timewait does not take the new one's REQ
 * for a stale connection (IBTA 12.9.8.3.1), as rxe's and hardware's QP
 * numbers move on too. Called with fatal_lock held; num_qp + 1 if none.
 */
static u32 ernic_qpn_next(struct ernic_dev *dev)
{
	u32 qpn = find_next_zero_bit(dev->qp_map, dev->num_qp + 1,
				     max(dev->qpn_hint, 2u));

	if (qpn > dev->num_qp)
		qpn = find_next_zero_bit(dev->qp_map, dev->num_qp + 1, 2);
	if (qpn <= dev->num_qp)
		dev->qpn_hint = qpn + 1;
	return qpn;
}

/*
 * The CQs that report @qp's completions. An XRC target has none (its
 * SRQs' CQs report), an initiator no receive CQ.
 */
static void ernic_qp_attach_cqs(struct ernic_qp *qp,
				const struct ib_qp_init_attr *init)
{
	unsigned long flags;

	qp->scq = init->send_cq ? to_ecq(init->send_cq) : NULL;
	qp->rcq = init->recv_cq ? to_ecq(init->recv_cq) : NULL;
	if (qp->scq) {
		spin_lock_irqsave(&qp->scq->lock, flags);
		list_add_tail(&qp->scq_node, &qp->scq->sq_qps);
		spin_unlock_irqrestore(&qp->scq->lock, flags);
	}
	if (qp->rcq) {
		spin_lock_irqsave(&qp->rcq->lock, flags);
		list_add_tail(&qp->rcq_node, &qp->rcq->rq_qps);
		spin_unlock_irqrestore(&qp->rcq->lock, flags);
	}
}

static void ernic_qp_detach_cqs(struct ernic_qp *qp)
{
	unsigned long flags;

	if (qp->scq) {
		spin_lock_irqsave(&qp->scq->lock, flags);
		list_del(&qp->scq_node);
		spin_unlock_irqrestore(&qp->scq->lock, flags);
	}
	if (qp->rcq) {
		spin_lock_irqsave(&qp->rcq->lock, flags);
		list_del(&qp->rcq_node);
		spin_unlock_irqrestore(&qp->rcq->lock, flags);
	}
}

int ernic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibqp->device);
	struct ernic_qp *qp = to_eqp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	bool gsi = init->qp_type == IB_QPT_GSI;
	unsigned long flags;
	u32 qpn;
	int ret;

	ret = ernic_qp_check_init(dev, ibqp->pd, init, udata);
	if (ret)
		return ret;

	spin_lock_irqsave(&dev->fatal_lock, flags);
	qpn = gsi ? (test_bit(ERNIC_QP_GSI, dev->qp_map) ? dev->num_qp + 1 :
						       ERNIC_QP_GSI) :
		    ernic_qpn_next(dev);
	if (qpn <= dev->num_qp)
		__set_bit(qpn, dev->qp_map);
	spin_unlock_irqrestore(&dev->fatal_lock, flags);
	if (qpn > dev->num_qp)
		return -ENOMEM;

	qp->dev = dev;
	qp->qpn = qpn;
	ibqp->qp_num = qpn;
	mutex_init(&qp->mutex);
	spin_lock_init(&qp->lock);
	spin_lock_init(&qp->conf_lock);
	INIT_WORK(&qp->fatal_work, ernic_qp_fatal_work);
	INIT_WORK(&qp->flush_work, ernic_qp_flush_work);
	qp->state = IB_QPS_RESET;
	qp->user = !!udata;
	qp->max_inline = ernic_qp_inline(dev, init);
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	/*
	 * Queue depths are powers of two; a ring holds depth - 1 entries.
	 * A READ or WRITE takes a WQE per SGE, so the SQ keeps that many
	 * for each WR the consumer asked for.
	 */
	qp->xwqe = ernic_qp_ext_on(qp, ERNIC_EXT_F_XWQE);
	qp->wqe_size = qp->xwqe ? ERNIC_XWQE_SIZE : ERNIC_WQE_SIZE;
	qp->sq_wqes_per_wr = gsi || qp->xwqe ? 1 : max(cap->max_send_sge, 1u);
	qp->sq_depth = roundup_pow_of_two(max(cap->max_send_wr *
					      qp->sq_wqes_per_wr + 1, 4u));
	/*
	 * With an SRQ the QP's RQ only reports what it received, as many
	 * messages as the SRQ can hold WRs for (docs/extension.md).
	 */
	qp->srq = init->srq ? to_esrq(init->srq) : NULL;
	qp->rq_depth = roundup_pow_of_two(max(qp->srq ?
					      min(qp->srq->max_wr,
						  (u32)ERNIC_MAX_QP_WR) :
					      cap->max_recv_wr, 3u) + 1);
	/*
	 * With ERNIC-X receive WQEs the device places SENDs into the WRs'
	 * own buffers: an RQ slot is a 64-byte WQE (docs/extension.md).
	 */
	qp->rx_wqe = ernic_qp_ext_on(qp, ERNIC_EXT_F_RXWQE) &&
		     ernic_qp_ext_on(qp, ERNIC_EXT_F_RXMETA);
	qp->rq_elem = qp->rx_wqe ? ERNIC_RWQE_SIZE :
		      gsi ? ERNIC_GSI_RQ_ELEM : dev->rq_buf_size;
	qp->err_status = -1;
	/*
	 * A UD message is one packet of at most the port's MTU, which the
	 * QP's PMTU is (IBTA: UD has no path MTU of its own).
	 */
	qp->ud = init->qp_type == IB_QPT_UD;
	qp->uc = init->qp_type == IB_QPT_UC;
	qp->xrc_ini = init->qp_type == IB_QPT_XRC_INI;
	qp->xrc_tgt = init->qp_type == IB_QPT_XRC_TGT;
	qp->xrcdn = qp->xrc_tgt ? to_exrcd(init->xrcd)->n : 0;
	if (qp->ud)
		qp->attr.path_mtu = iboe_get_mtu(dev->netdev->mtu);
	/* QDEPTHi's fields are 16 bits (PG332 p.42). */
	if (qp->sq_depth > ERNIC_MAX_DEPTH || qp->rq_depth > ERNIC_MAX_DEPTH) {
		ret = -EINVAL;
		goto err;
	}
	ernic_qp_try_direct(qp, udata);
	/* A user SRQ's WR IDs are its process's: only a direct QP can say. */
	/* Nor can the command path name an XRC SRQ: initiators are direct. */
	ret = ((qp->srq && qp->srq->user) || qp->xrc_ini) && !qp->direct ?
	      -EOPNOTSUPP : ernic_qp_alloc_queues(qp);
	if (!ret)
		ret = ernic_uq_reply(qp, udata);
	if (ret)
		goto err;

	/* A target has no PD: its requests' keys go by their SRQ's. */
	ernic_qp_program_queues(qp, ibqp->pd ? to_epd(ibqp->pd)->pdn : 0);
	ernic_qp_zero(qp);
	if (!qp->ud)
		qp->attr.path_mtu = IB_MTU_1024;
	qp->qpconf = ernic_qpconf_base(qp, gsi ? IB_MTU_4096 : IB_MTU_1024);

	ernic_qp_attach_cqs(qp, init);

	spin_lock_irqsave(&dev->fatal_lock, flags);
	dev->qps[qpn] = qp;
	spin_unlock_irqrestore(&dev->fatal_lock, flags);

	cap->max_send_wr = (qp->sq_depth - 1) / qp->sq_wqes_per_wr;
	cap->max_recv_wr = qp->srq ? 0 : qp->rq_depth - 1;
	cap->max_inline_data = qp->max_inline;
	return 0;

err:
	ernic_qp_free_queues(qp);
	spin_lock_irqsave(&dev->fatal_lock, flags);
	__clear_bit(qpn, dev->qp_map);
	spin_unlock_irqrestore(&dev->fatal_lock, flags);
	return ret;
}

void ernic_qp_wait_sent(struct ernic_dev *dev, u32 qpn, unsigned long end)
{
	while (ernic_qrd(dev, qpn, ERNIC_CQHEAD) !=
	       ernic_qrd(dev, qpn, ERNIC_SQPI) && time_before(jiffies, end))
		usleep_range(50, 100);
}

/*
 * A UD or UC QP's WQEs complete once they are sent, which hardware does
 * as soon as the doorbell rings; under emulation the destroy may come
 * first, and mckey, for one, posts its multicast sends and destroys the
 * QP at once. What was posted gets up to 100 ms to leave: the device has
 * completed everything when CQHEADi equals SQPIi (docs/registers.md).
 */
static void ernic_qp_drain_unreliable(struct ernic_qp *qp)
{
	if ((!qp->ud && !qp->uc) || qp->state != IB_QPS_RTS)
		return;
	ernic_qp_wait_sent(qp->dev, qp->qpn,
			   jiffies + msecs_to_jiffies(100));
}

int ernic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	struct ernic_dev *dev = qp->dev;
	unsigned long flags;

	mutex_lock(&qp->mutex);
	ernic_qp_drain_unreliable(qp);
	ernic_qp_to_reset(qp);
	mutex_unlock(&qp->mutex);

	spin_lock_irqsave(&dev->fatal_lock, flags);
	dev->qps[qp->qpn] = NULL;
	spin_unlock_irqrestore(&dev->fatal_lock, flags);
	synchronize_irq(pci_irq_vector(dev->pdev, ERNIC_MSIX_VEC_ERNIC));
	cancel_work_sync(&qp->fatal_work);
	cancel_work_sync(&qp->flush_work);

	ernic_qp_detach_cqs(qp);

	ernic_qp_free_queues(qp);
	if (qp->ud)
		ernic_mcast_qp_gone(dev, qp->qpn);
	spin_lock_irqsave(&dev->fatal_lock, flags);
	__clear_bit(qp->qpn, dev->qp_map);
	spin_unlock_irqrestore(&dev->fatal_lock, flags);
	return 0;
}

/* The device's limits on modify_qp attributes, beyond IBTA's tables. */
static int ernic_check_attr(struct ernic_qp *qp, struct ib_qp_attr *a,
			    int mask, struct ernic_av *av)
{
	struct ernic_dev *dev = qp->dev;

	if ((mask & IB_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && a->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (a->path_mtu < IB_MTU_256 || a->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > ERNIC_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > ERNIC_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	/* No alternate path: ERNIC has one path per QP. */
	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE))
		return -EINVAL;
	if ((mask & IB_QP_AV) && ernic_av_from_attr(dev, &a->ah_attr, av))
		return -EINVAL;
	return 0;
}

static void ernic_save_attr(struct ernic_qp *qp, struct ib_qp_attr *a,
			    int mask)
{
	struct ib_qp_attr *s = &qp->attr;

	if (mask & IB_QP_PKEY_INDEX)
		s->pkey_index = a->pkey_index;
	if (mask & IB_QP_PORT)
		s->port_num = a->port_num;
	if (mask & IB_QP_QKEY)
		s->qkey = a->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		s->qp_access_flags = a->qp_access_flags;
	if (mask & IB_QP_PATH_MTU)
		s->path_mtu = a->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		s->dest_qp_num = a->dest_qp_num;
	if (mask & IB_QP_RQ_PSN)
		s->rq_psn = a->rq_psn & 0xffffff;
	if (mask & IB_QP_SQ_PSN)
		s->sq_psn = a->sq_psn & 0xffffff;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = a->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		s->min_rnr_timer = a->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		s->timeout = a->timeout;
	if (mask & IB_QP_RETRY_CNT)
		s->retry_cnt = a->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		s->rnr_retry = a->rnr_retry;
}

/* TIMEOUTCONFi (PG332 p.45) from the IBTA timeout, retry and RNR values. */
static void ernic_program_timeouts(struct ernic_qp *qp)
{
	struct ib_qp_attr *s = &qp->attr;

	ernic_qwr(qp->dev, qp->qpn, ERNIC_TIMEOUTCONF,
		  FIELD_PREP(ERNIC_TIMEOUTCONF_TIMEOUT_MASK, s->timeout) |
		  FIELD_PREP(ERNIC_TIMEOUTCONF_RETRY_MASK, s->retry_cnt) |
		  FIELD_PREP(ERNIC_TIMEOUTCONF_RNRRETRY_MASK, s->rnr_retry) |
		  FIELD_PREP(ERNIC_TIMEOUTCONF_RNRTIMER_MASK,
			     s->min_rnr_timer));
}

/*
 * INIT -> RTR: the path and the receive side (PG332 ch.6 "QP
 * configuration", and the re-init steps 7-12 of fatal recovery), then the
 * QP is enabled: it receives and acknowledges from here on.
 */
static void ernic_qp_to_rtr(struct ernic_qp *qp)
{
	struct ernic_dev *dev = qp->dev;
	struct ernic_av *av = &qp->av;
	u32 q = qp->qpn;
	int i;

	qp->qpconf = ernic_qpconf_base(qp, q == ERNIC_QP_GSI ? IB_MTU_4096 :
				       qp->attr.path_mtu);
	if (qp->ud) {
		/* No peer: the AH of each WQE (docs/extension.md). */
		ernic_qwr(dev, q, ERNIC_QPADVCONF,
			  FIELD_PREP(ERNIC_QPADVCONF_PKEY_MASK,
				     IB_DEFAULT_PKEY_FULL) |
			  FIELD_PREP(ERNIC_QPADVCONF_TTL_MASK, 64));
	} else if (q != ERNIC_QP_GSI) {
		ernic_qwr(dev, q, ERNIC_MACDESADDLSB,
			  get_unaligned_be32(av->dmac + 2));
		ernic_qwr(dev, q, ERNIC_MACDESADDMSB,
			  get_unaligned_be16(av->dmac));
		if (av->ipv6) {
			for (i = 0; i < 4; i++)
				ernic_qwr(dev, q, ERNIC_IPDESADDR4 - 4 * i,
					  get_unaligned_be32(av->dip + 4 * i));
		} else {
			ernic_qwr(dev, q, ERNIC_IPDESADDR1,
				  get_unaligned_be32(av->dip + 12));
		}
		ernic_qwr(dev, q, ERNIC_DESTQPCONF, qp->attr.dest_qp_num);
		/* The last request "received" is the one before rq_psn. */
		ernic_qwr(dev, q, ERNIC_LSTRQREQ,
			  ((qp->attr.rq_psn - 1) & ERNIC_LSTRQREQ_PSN_MASK) |
			  FIELD_PREP(ERNIC_LSTRQREQ_OPCODE_MASK, 0x04));
		ernic_qwr(dev, q, ERNIC_QPADVCONF,
			  FIELD_PREP(ERNIC_QPADVCONF_PKEY_MASK,
				     IB_DEFAULT_PKEY_FULL) |
			  FIELD_PREP(ERNIC_QPADVCONF_TTL_MASK,
				     av->hop_limit ? av->hop_limit : 64) |
			  FIELD_PREP(ERNIC_QPADVCONF_TC_MASK, av->tclass >> 2));
		ernic_program_timeouts(qp);
	}
	ernic_qpconf_wr(qp, qp->qpconf | ERNIC_QPCONF_QP_EN);
}

/* RTR -> RTS: the send side: SQPSNi, the retry and RNR counts. */
static void ernic_qp_to_rts(struct ernic_qp *qp)
{
	struct ernic_dev *dev = qp->dev;
	struct ib_qp_attr *s = &qp->attr;

	if (qp->qpn == ERNIC_QP_GSI)
		return;
	ernic_qwr(dev, qp->qpn, ERNIC_SQPSN, s->sq_psn);
	ernic_program_timeouts(qp);
	/* Re-init step 9: the counts the engine counts down from. */
	ernic_qwr(dev, qp->qpn, ERNIC_STATQP,
		  FIELD_PREP(ERNIC_STATQP_RETRY_CNT_MASK, s->retry_cnt) |
		  FIELD_PREP(ERNIC_STATQP_RNR_CNT_MASK, s->rnr_retry));
}

/*
 * To Error by software: "QP under recovery" with the QP enabled makes the
 * device complete every WQE with ERRFLAG, now and for any posted later,
 * and drop what it receives (docs/qp-states.md). Receive WRs are flushed
 * by poll_cq.
 */
static void ernic_qp_to_err(struct ernic_qp *qp)
{
	ernic_qpconf_wr(qp, qp->qpconf | ERNIC_QPCONF_QP_EN |
			ERNIC_QPCONF_UNDER_RECOVERY);
	queue_work(system_wq, &qp->flush_work);
}

int ernic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	enum ib_qp_state cur, new;
	struct ernic_av av;
	unsigned long flags;
	int ret = 0;

	if (udata && (udata->inlen || udata->outlen))
		return -EOPNOTSUPP;
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	mutex_lock(&qp->mutex);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/* IBTA 11.2.1.2: the current state given must be the real one. */
	if (cur != qp->state ||
	    !ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		ibdev_dbg(ibqp->device, "QP%u: %d -> %d with mask %#x refused\n",
			  qp->qpn, cur, new, mask);
		ret = -EINVAL;
		goto out;
	}
	ret = ernic_check_attr(qp, attr, mask, &av);
	if (ret) {
		ibdev_dbg(ibqp->device, "QP%u: attributes beyond the device refused (mask %#x)\n",
			  qp->qpn, mask);
		goto out;
	}
	ernic_save_attr(qp, attr, mask);
	if (mask & IB_QP_AV)
		qp->av = av;
	/* A UD QP's Q_Key, which the device takes in any state. */
	if (qp->ud && (mask & IB_QP_QKEY))
		ernic_wr(qp->dev, ERNIC_EXT_QP_OFFSET(qp->qpn) + ERNIC_QKEY,
			 attr->qkey);
	/* Remote atomic and FLUSH access, likewise (EXTQPCONFi[7], [8]). */
	if (qp->dev->ext && (mask & IB_QP_ACCESS_FLAGS))
		ernic_qp_ext_conf(qp);

	switch (new) {
	case IB_QPS_RESET:
		if (cur != IB_QPS_RESET)
			ernic_qp_to_reset(qp);
		break;
	case IB_QPS_INIT:
		qp->qpconf = ernic_qpconf_base(qp, qp->attr.path_mtu);
		ernic_qpconf_wr(qp, qp->qpconf);
		break;
	case IB_QPS_RTR:
		if (cur == IB_QPS_INIT)
			ernic_qp_to_rtr(qp);
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR)
			ernic_qp_to_rts(qp);
		else if (mask & (IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				 IB_QP_RNR_RETRY | IB_QP_MIN_RNR_TIMER) &&
			 qp->qpn != ERNIC_QP_GSI)
			ernic_program_timeouts(qp);
		break;
	case IB_QPS_ERR:
		if (cur != IB_QPS_ERR) {
			ernic_qp_to_err(qp);
			ernic_qp_last_wqe(qp);
		}
		break;
	default:
		break;
	}

	spin_lock_irqsave(&qp->lock, flags);
	/* A FATAL during the modify leaves the QP in Error. */
	if (new == IB_QPS_RESET || !qp->fatal_code)
		qp->state = new;
	ernic_uq_publish(qp);
	/* SQD holds new WQEs in the SQ; back in RTS they are rung. */
	if (new == IB_QPS_SQD)
		qp->sq_held = true;
	/* Error flushes what SQD held back (IBTA 10.3.1). */
	if ((new == IB_QPS_RTS || new == IB_QPS_ERR) && qp->sq_held) {
		qp->sq_held = false;
		ernic_ring_sq(qp);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
out:
	mutex_unlock(&qp->mutex);
	return ret;
}

int ernic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct ernic_qp *qp = to_eqp(ibqp);

	/* A FATAL not yet seen by the interrupt is the state too. */
	ernic_fatalq_process(qp->dev);
	mutex_lock(&qp->mutex);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = 0;
	attr->cap.max_send_wr = (qp->sq_depth - 1) / qp->sq_wqes_per_wr;
	attr->cap.max_recv_wr = qp->rq_depth - 1;
	attr->cap.max_send_sge = qp->qpn == ERNIC_QP_GSI ? ERNIC_GSI_SEND_SGE :
				 qp->xwqe ? ERNIC_XWQE_SGES :
				 qp->sq_wqes_per_wr;
	attr->cap.max_recv_sge = ERNIC_MAX_RECV_SGE;
	attr->cap.max_inline_data = qp->max_inline;
	memset(&attr->ah_attr, 0, sizeof(attr->ah_attr));
	if (qp->qpn != ERNIC_QP_GSI && qp->state != IB_QPS_RESET &&
	    qp->state != IB_QPS_INIT)
		ernic_av_to_attr(&qp->av, &attr->ah_attr);
	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	mutex_unlock(&qp->mutex);
	return 0;
}
