// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ERNIC-X shared receive queues (docs/extension.md, "Shared receive
 * queues"): a ring of receive WQEs per SRQ that the device takes from in
 * ring order for whichever attached QP receives. Each QP's receive
 * metadata names the slot its message took (ernic_wr.c), and the driver
 * keeps each slot's WR ID until then. A user SRQ is direct: its ring and
 * doorbell page are its process's (ernic_uverbs.c), whose provider posts
 * to it and keeps the WR IDs.
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include "ernic.h"

static u32 ernic_srq_reg(struct ernic_srq *srq, u32 reg)
{
	return ERNIC_EXT_SRQ_OFFSET(srq->n) + reg;
}

/* A free SRQ number, or ERNIC_SRQ_NUM; entered in dev->srqs[]. */
static u32 ernic_srq_get(struct ernic_dev *dev, struct ernic_srq *srq)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&dev->lock, flags);
	for (n = 0; n < ERNIC_SRQ_NUM && dev->srqs[n]; n++)
		;
	if (n < ERNIC_SRQ_NUM)
		dev->srqs[n] = srq;
	spin_unlock_irqrestore(&dev->lock, flags);
	return n;
}

static void ernic_srq_put(struct ernic_dev *dev, u32 n)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->lock, flags);
	dev->srqs[n] = NULL;
	spin_unlock_irqrestore(&dev->lock, flags);
}

static int ernic_srq_check(struct ernic_dev *dev,
			   const struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	const u32 need = ERNIC_EXT_F_SRQ | ERNIC_EXT_F_RXWQE |
			 ERNIC_EXT_F_RXMETA;
	bool xrc = init->srq_type == IB_SRQT_XRC;

	if ((dev->ext & need) != need ||
	    (init->srq_type != IB_SRQT_BASIC && !xrc)) {
		ibdev_dbg(&dev->ibdev, "SRQs are basic SRQs with ERNIC-X\n");
		return -EOPNOTSUPP;
	}
	/*
	 * An XRC SRQ's completions are its WQEs written back, which only a
	 * process's provider polls (docs/driver.md, "XRC").
	 */
	if (xrc && (!(dev->ext & ERNIC_EXT_F_XRC) || !udata)) {
		ibdev_dbg(&dev->ibdev, "XRC SRQs are user SRQs with ERNIC-X XRC\n");
		return -EOPNOTSUPP;
	}
	if (!init->attr.max_wr || init->attr.max_wr > ERNIC_MAX_SRQ_WR ||
	    init->attr.max_sge > ERNIC_MAX_RECV_SGE)
		return -EINVAL;
	return 0;
}

/* A kernel SRQ's ring and what the driver keeps of its WRs. */
static int ernic_srq_alloc(struct ernic_srq *srq)
{
	srq->ring = dma_alloc_coherent(&srq->dev->pdev->dev,
				       (size_t)srq->depth * ERNIC_RWQE_SIZE,
				       &srq->ring_dma, GFP_KERNEL);
	srq->wr_id = kcalloc(srq->depth, sizeof(*srq->wr_id), GFP_KERNEL);
	srq->busy = bitmap_zalloc(srq->depth, GFP_KERNEL);
	return srq->ring && srq->wr_id && srq->busy ? 0 : -ENOMEM;
}

static void ernic_srq_free(struct ernic_srq *srq)
{
	if (srq->user)
		ernic_usrq_free(srq);
	else if (srq->ring)
		dma_free_coherent(&srq->dev->pdev->dev,
				  (size_t)srq->depth * ERNIC_RWQE_SIZE,
				  srq->ring, srq->ring_dma);
	kfree(srq->wr_id);
	bitmap_free(srq->busy);
	ernic_srq_put(srq->dev, srq->n);
}

/* The SRQ's register block (docs/extension.md), enabled last. */
static void ernic_srq_program(struct ernic_srq *srq, u32 pdn)
{
	struct ernic_dev *dev = srq->dev;

	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQCONF), 0);
	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQBA),
		 lower_32_bits(srq->ring_dma));
	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQBAMSB),
		 upper_32_bits(srq->ring_dma));
	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQDEPTH), srq->depth);
	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQPD), pdn);
	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQPI), 0);
	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQLIMIT), 0);
	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQCONF), ERNIC_SRQCONF_EN |
		 (srq->user ? ERNIC_SRQCONF_USER : 0) |
		 (srq->xrc ? ERNIC_SRQCONF_XRC |
		  FIELD_PREP(ERNIC_SRQCONF_XRCD_MASK, srq->xrcdn) : 0));
}

/*
 * The ring has twice the slots of the WRs that may be outstanding, so
 * that a slot whose completion another QP has not yet reported is
 * rarely the next one to post (ernic_post_srq_recv()), and twice that
 * again, up to the device's 32768, so that max_wr may grow to twice its
 * first value without moving the ring (ernic_modify_srq()).
 */
int ernic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibsrq->device);
	struct ernic_srq *srq = to_esrq(ibsrq);
	int ret = ernic_srq_check(dev, init, udata);

	if (ret)
		return ret;
	srq->dev = dev;
	spin_lock_init(&srq->lock);
	srq->max_wr = init->attr.max_wr;
	srq->depth = min_t(u32, roundup_pow_of_two(4 * srq->max_wr + 1),
			   ERNIC_SRQ_MAX_DEPTH);
	srq->user = !!udata;
	srq->xrc = init->srq_type == IB_SRQT_XRC;
	if (srq->xrc)
		srq->xrcdn = to_exrcd(init->ext.xrc.xrcd)->n;
	srq->n = ernic_srq_get(dev, srq);
	if (srq->n == ERNIC_SRQ_NUM)
		return -ENOMEM;
	/* What XRC initiators name (uverbs returns it as the srqn). */
	ibsrq->ext.xrc.srq_num = srq->n;
	ret = udata ? ernic_usrq_alloc(srq, udata) : ernic_srq_alloc(srq);
	if (ret) {
		ernic_srq_free(srq);
		return ret;
	}
	ernic_srq_program(srq, to_epd(ibsrq->pd)->pdn);
	init->attr.max_sge = ERNIC_MAX_RECV_SGE;
	ibdev_dbg(&dev->ibdev, "SRQ%u: %u WRs, ring of %u\n", srq->n,
		  srq->max_wr, srq->depth);
	return 0;
}

/*
 * The core destroys an SRQ only once no QP uses it (ib_destroy_srq_user()
 * checks usecnt), so the device takes no more WQEs from it.
 */
int ernic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct ernic_srq *srq = to_esrq(ibsrq);
	struct ernic_dev *dev = srq->dev;

	ernic_wr(dev, ernic_srq_reg(srq, ERNIC_SRQCONF), 0);
	ernic_srq_free(srq);
	flush_work(&dev->srq_work);
	return 0;
}

/*
 * The limit, and max_wr (IB_DEVICE_SRQ_RESIZE) within the ring: up to
 * half its slots, twice the first max_wr unless the ring was capped,
 * and not below the WRs outstanding. The ring stays where it is, so no
 * WQE moves under the device or a process. More is refused (EINVAL).
 */
int ernic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct ernic_srq *srq = to_esrq(ibsrq);
	unsigned long flags;
	u32 max_wr;
	int ret = 0;

	spin_lock_irqsave(&srq->lock, flags);
	max_wr = mask & IB_SRQ_MAX_WR ? attr->max_wr : srq->max_wr;
	if (!max_wr || max_wr > (srq->depth - 1) / 2 ||
	    max_wr < srq->outstanding ||
	    (mask & IB_SRQ_LIMIT && attr->srq_limit > max_wr)) {
		ret = -EINVAL;
		goto out;
	}
	srq->max_wr = max_wr;
	if (mask & IB_SRQ_LIMIT) {
		srq->armed = attr->srq_limit != 0;
		ernic_wr(srq->dev, ernic_srq_reg(srq, ERNIC_SRQLIMIT),
			 attr->srq_limit);
	}
out:
	spin_unlock_irqrestore(&srq->lock, flags);
	if (ret)
		ibdev_dbg(ibsrq->device, "SRQ%u: max_wr %u refused (ring of %u)\n",
			  srq->n, max_wr, srq->depth);
	return ret;
}

int ernic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct ernic_srq *srq = to_esrq(ibsrq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = ERNIC_MAX_RECV_SGE;
	attr->srq_limit = ernic_rd(srq->dev, ernic_srq_reg(srq,
							   ERNIC_SRQLIMIT));
	return 0;
}

/* One WR into the slot at pi; false when none may take it now. */
static int ernic_srq_put_wr(struct ernic_srq *srq, const struct ib_recv_wr *wr)
{
	u32 slot = srq->pi;
	u8 *w = srq->ring + (size_t)slot * ERNIC_RWQE_SIZE;

	if (wr->num_sge > ERNIC_MAX_RECV_SGE)
		return -EINVAL;
	if (srq->outstanding >= srq->max_wr || test_bit(slot, srq->busy))
		return -ENOMEM;
	memset(w, 0, ERNIC_RWQE_SIZE);
	ernic_put_sge_list(w, wr->sg_list, wr->num_sge);
	srq->wr_id[slot] = wr->wr_id;
	__set_bit(slot, srq->busy);
	srq->outstanding++;
	srq->pi = (slot + 1) % srq->depth;
	return 0;
}

int ernic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct ernic_srq *srq = to_esrq(ibsrq);
	unsigned long flags;
	int ret = 0;

	/* A user SRQ's process posts to it itself (no command path). */
	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		ret = ernic_srq_put_wr(srq, wr);
		if (ret)
			break;
	}
	/* The WQEs are visible before SRQPIn grants them. */
	wmb();
	ernic_wr(srq->dev, ernic_srq_reg(srq, ERNIC_SRQPI), srq->pi);
	spin_unlock_irqrestore(&srq->lock, flags);
	if (ret) {
		*bad_wr = wr;
		ibdev_dbg(ibsrq->device, "SRQ%u: receive WR refused (%d)\n",
			  srq->n, ret);
	}
	return ret;
}

/*
 * Slot @slot's message was reported by a QP's metadata: its WR ID, and
 * the slot may be posted again. A slot not posted (a device or a stale
 * entry gone wrong) gives WR ID 0 rather than another WR's.
 */
u64 ernic_srq_complete(struct ernic_srq *srq, u32 slot)
{
	unsigned long flags;
	u64 id = 0;

	slot %= srq->depth;
	spin_lock_irqsave(&srq->lock, flags);
	if (__test_and_clear_bit(slot, srq->busy)) {
		id = srq->wr_id[slot];
		srq->outstanding--;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return id;
}

/* An XRC domain (ERNIC-X XRC): the number SRQCONFn and XRCDi name. */
int ernic_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibxrcd->device);
	int n;

	if (!(dev->ext & ERNIC_EXT_F_XRC))
		return -EOPNOTSUPP;
	n = ida_alloc_range(&dev->xrcd_ida, 1, ERNIC_XRCD_MAX, GFP_KERNEL);
	if (n < 0)
		return n;
	to_exrcd(ibxrcd)->n = n;
	return 0;
}

int ernic_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	ida_free(&to_edev(ibxrcd->device)->xrcd_ida, to_exrcd(ibxrcd)->n);
	return 0;
}

/*
 * An XRC target of domain @xrcdn took or gave back a WQE: the CQs of the
 * domain's XRC SRQs may have a completion (their WQEs written back).
 * Under dev->lock, so that no SRQ goes while its CQ is told.
 */
void ernic_srq_xrc_notify(struct ernic_dev *dev, u32 xrcdn)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&dev->lock, flags);
	for (n = 0; n < ERNIC_SRQ_NUM; n++) {
		struct ernic_srq *srq = dev->srqs[n];

		if (srq && srq->xrc && srq->xrcdn == xrcdn &&
		    srq->ibsrq.ext.cq)
			ernic_cq_notify(to_ecq(srq->ibsrq.ext.cq));
	}
	spin_unlock_irqrestore(&dev->lock, flags);
}

/* An armed SRQ whose SRQLIMITn the device cleared: IBTA's limit event. */
static void ernic_srq_work(struct work_struct *work)
{
	struct ernic_dev *dev = container_of(work, struct ernic_dev, srq_work);
	u32 n;

	for (n = 0; n < ERNIC_SRQ_NUM; n++) {
		struct ernic_srq *srq = READ_ONCE(dev->srqs[n]);
		struct ib_event ev = { .event = IB_EVENT_SRQ_LIMIT_REACHED };
		bool fired;

		if (!srq || !READ_ONCE(srq->armed))
			continue;
		spin_lock_irq(&srq->lock);
		fired = srq->armed &&
			!ernic_rd(dev, ernic_srq_reg(srq, ERNIC_SRQLIMIT));
		if (fired)
			srq->armed = false;
		spin_unlock_irq(&srq->lock);
		if (fired && srq->ibsrq.event_handler) {
			ev.device = &dev->ibdev;
			ev.element.srq = &srq->ibsrq;
			srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
		}
	}
}

/* EXTEVT, from the ERNIC interrupt. */
void ernic_srq_irq(struct ernic_dev *dev)
{
	u32 evt;

	if (!(dev->ext & ERNIC_EXT_F_SRQ))
		return;
	evt = ernic_rd(dev, ERNIC_EXTEVT);
	if (!evt)
		return;
	ernic_wr(dev, ERNIC_EXTEVT, evt);
	if (evt & ERNIC_EXTEVT_SRQ_LIMIT)
		queue_work(system_wq, &dev->srq_work);
}

void ernic_srq_init(struct ernic_dev *dev)
{
	INIT_WORK(&dev->srq_work, ernic_srq_work);
	if (dev->ext & ERNIC_EXT_F_SRQ)
		ernic_wr(dev, ERNIC_EXTEVTEN, ERNIC_EXTEVT_SRQ_LIMIT);
}
