// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ERNIC completion queues.
 *
 * ERNIC has no completion queue of its own for receives and no CQ
 * object that several QPs share: each QP has a send CQ ring (one 4-byte
 * CQE per WQE, PG332 Table 2-2, counted by CQHEADi) and reports received
 * SENDs only by its RQ producer index (RQWPTRDBADDi). An ib_cq is
 * therefore a list of QPs; polling it harvests their CQ rings and RQs
 * directly, so it cannot overflow and needs no memory of its own.
 * Notification uses the per-QP CQ and RQ interrupts (QPCONFi[3], [2]).
 */

#include "ernic.h"

static bool armed_irq = true;
module_param(armed_irq, bool, 0444);
MODULE_PARM_DESC(armed_irq,
		 "mask a QP's completion interrupts while its CQ is not armed (default on)");

int ernic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    ERNIC_CQ_ATTRS *attrs)
{
	struct ernic_cq *cq = to_ecq(ibcq);

	/* A user CQ is the same list: uverbs polls it through poll_cq. */
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > ERNIC_MAX_CQE) {
		ibdev_dbg(ibcq->device, "CQ of %d entries refused\n",
			  attr->cqe);
		return -EINVAL;
	}
	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->sq_qps);
	INIT_LIST_HEAD(&cq->rq_qps);
	ibcq->cqe = attr->cqe;
	return 0;
}

/*
 * The CQ holds no entries (above), so any size within the device's
 * limit takes at once, even below the completions not yet polled: they
 * wait in the QPs' own rings, which cannot overflow the CQ.
 */
int ernic_resize_cq(struct ib_cq *ibcq, ERNIC_CQE_T cqe,
		    struct ib_udata *udata)
{
	if (cqe < 1 || cqe > ERNIC_MAX_CQE) {
		ibdev_dbg(ibcq->device, "CQ resize to %d entries refused\n",
			  cqe);
		return -EINVAL;
	}
	ibcq->cqe = cqe;
	return 0;
}

int ernic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	/* The core refuses while QPs use it (usecnt). */
	return 0;
}

int ernic_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct ernic_cq *cq = to_ecq(ibcq);
	struct ernic_qp *qp;
	unsigned long flags;
	int got = 0;

	spin_lock_irqsave(&cq->lock, flags);
	/*
	 * Each RQ's state before any SQ's completions: Error is entered only
	 * after the device wrote the CQE that names the FATAL (PG332 p.17),
	 * so the receive flushes of that state come after that CQE even if
	 * another CPU's interrupt enters Error during this poll.
	 */
	list_for_each_entry(qp, &cq->rq_qps, rcq_node)
		qp->poll_state = READ_ONCE(qp->state);
	smp_rmb(); /* the states before the CQ heads */
	list_for_each_entry(qp, &cq->sq_qps, scq_node) {
		if (got == n)
			break;
		got += ernic_poll_sq(qp, n - got, wc + got);
	}
	list_for_each_entry(qp, &cq->rq_qps, rcq_node) {
		if (got == n)
			break;
		got += ernic_poll_rq(qp, n - got, wc + got);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return got;
}

static bool ernic_cq_has_work(struct ernic_cq *cq)
{
	struct ernic_qp *qp;

	list_for_each_entry(qp, &cq->sq_qps, scq_node)
		if (ernic_qp_has_work(qp, true))
			return true;
	list_for_each_entry(qp, &cq->rq_qps, rcq_node)
		if (ernic_qp_has_work(qp, false))
			return true;
	return false;
}

/*
 * Completion interrupts nobody waits for (docs/driver.md, "Completion
 * interrupts"). A consumer that polls and never arms its CQ (perftest,
 * UCX, MPI) has no use for its QPs' WQE completion and RQ packet
 * interrupts, yet each costs it an interrupt and a handler of several
 * register accesses (exits under KVM). So the first such interrupt that
 * finds the CQ not armed masks that interrupt of the QP (QPCONFi[3] or
 * [2]), and arming the CQ unmasks its QPs again. Both happen under the
 * CQ's lock, so a CQ is never armed with a QP masked: a completion after
 * the arm interrupts. One before it may not, which the verbs allow: the
 * consumer polls after arming (or asks IB_CQ_REPORT_MISSED_EVENTS).
 */
static void ernic_cq_unmask(struct ernic_cq *cq)
{
	struct ernic_qp *qp;

	list_for_each_entry(qp, &cq->sq_qps, scq_node)
		if (READ_ONCE(qp->irq_off) & ERNIC_QPCONF_CQ_INT_EN)
			ernic_qp_irq_mask(qp, ERNIC_QPCONF_CQ_INT_EN, false);
	list_for_each_entry(qp, &cq->rq_qps, rcq_node)
		if (READ_ONCE(qp->irq_off) & ERNIC_QPCONF_RQ_INT_EN)
			ernic_qp_irq_mask(qp, ERNIC_QPCONF_RQ_INT_EN, false);
}

int ernic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct ernic_cq *cq = to_ecq(ibcq);
	unsigned long irqf;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqf);
	cq->armed = true;
	ernic_cq_unmask(cq);
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && ernic_cq_has_work(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqf);
	return ret;
}

/*
 * From the interrupt handler: @qp completed a send WQE (@send) or
 * received. Its CQ's consumer is told if it armed the CQ; if not, nobody
 * waits, and that interrupt of the QP stays masked until the CQ is armed.
 */
void ernic_cq_qp_event(struct ernic_qp *qp, bool send)
{
	struct ernic_cq *cq = send ? qp->scq : qp->rcq;
	unsigned long flags;
	bool armed;

	if (!cq)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	armed = cq->armed;
	cq->armed = false;
	if (!armed && armed_irq)
		ernic_qp_irq_mask(qp, send ? ERNIC_QPCONF_CQ_INT_EN :
				  ERNIC_QPCONF_RQ_INT_EN, true);
	spin_unlock_irqrestore(&cq->lock, flags);
	if (armed && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/* A QP of this CQ has completed something, or its state changed. */
void ernic_cq_notify(struct ernic_cq *cq)
{
	unsigned long flags;
	bool armed;

	if (!cq)
		return;		/* an XRC target QP has no CQ */
	spin_lock_irqsave(&cq->lock, flags);
	armed = cq->armed;
	cq->armed = false;
	spin_unlock_irqrestore(&cq->lock, flags);
	if (armed && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}
