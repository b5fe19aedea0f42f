// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * User-space verbs on ernic: what a process may ask of the device, and
 * what of it may be mapped into the process.
 *
 * ERNIC's per-QP register blocks are 256 bytes, sixteen to a 4 KiB page,
 * and hold ring base addresses (PG332 Table 2-9), so no page of BAR0 is
 * ever mapped. A user QP is one of two kinds (docs/driver.md, "User
 * space"):
 *
 * - a direct QP, on a device with ERNIC-X user QPs (UDB): its SQ, RQ,
 *   CQ and receive metadata rings, a status page and its own doorbell
 *   page of BAR3 are mapped into the process, which writes WQEs and rings
 *   and polls with no system call. EXTQPCONFi[2] makes the device refuse
 *   any WQE of it that names memory other than through a key of its PD
 *   (docs/extension.md, "User QPs"): what the process writes is checked
 *   by the device, not by this driver;
 * - otherwise every verb, posting and polling included, goes through
 *   uverbs' commands into this driver, as rxe's doorbell does, and the
 *   driver writes every WQE itself.
 *
 * What keeps a process to its own memory, either way:
 *
 * - a user QP is an RC QP on a device with ERNIC-X MR, keyed SGEs,
 *   receive WQEs and receive metadata (docs/extension.md): the device
 *   then reaches a process's memory only through an MR, checking key,
 *   PD (the QP's), bounds and access on every local and remote access;
 * - every SGE of a user WR has a non-zero L_Key: L_Key 0 names a bus
 *   address (docs/extension.md, "Keyed SGEs");
 * - only the opcodes uverbs passes on, and no local (REG_MR, LOCAL_INV)
 *   ones;
 * - inline data is read with copy_from_user() into the driver's own
 *   buffer (ernic_wr.c); a direct QP's provider sends it from an MR;
 * - uverbs gives a process handles of its own objects only, and mmap
 *   keys of its own context only, so it cannot name another process's
 *   QP, CQ, PD or MR, nor map another QP's rings or doorbell page;
 * - a mapped ring is freed only when the last mapping of it goes
 *   (ernic_mmap_free()), so no page of it returns to the kernel while
 *   the process can still reach it.
 */

#include <rdma/uverbs_ioctl.h>

#include "ernic.h"

/* The ERNIC-X features without which a process could name bus memory. */
#define ERNIC_USER_FEATURES	(ERNIC_EXT_F_MR | ERNIC_EXT_F_XWQE | \
				 ERNIC_EXT_F_RXWQE | ERNIC_EXT_F_RXMETA)

static bool direct = true;
module_param(direct, bool, 0444);
MODULE_PARM_DESC(direct,
		 "let processes post and poll their QPs without system calls, where ERNIC-X has user QPs (default on)");

bool ernic_user_capable(struct ernic_dev *dev)
{
	return (dev->ext & ERNIC_USER_FEATURES) == ERNIC_USER_FEATURES;
}

/*
 * Any process may open the device (ibv_devinfo, queries); without
 * ERNIC-X, reg_user_mr and user QPs are refused with -EOPNOTSUPP. The
 * response says whether its QPs may be direct.
 */
int ernic_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	struct ernic_ucontext *uc = container_of(uctx, struct ernic_ucontext,
						 ibuc);
	struct ernic_dev *dev = to_edev(uctx->device);
	struct ernic_alloc_ucontext_resp resp = {};

	if (!ernic_user_capable(dev))
		ibdev_dbg(&dev->ibdev,
			  "user context without ERNIC-X: no user MRs or QPs\n");
	uc->direct = direct && ernic_user_capable(dev) &&
		     (dev->ext & ERNIC_EXT_F_UDB);
	resp.flags = uc->direct ? ERNIC_UCTX_DIRECT : 0;
	if (dev->ext & ERNIC_EXT_F_ATOMIC)
		resp.flags |= ERNIC_UCTX_ATOMIC;
	if (dev->ext & ERNIC_EXT_F_MW)
		resp.flags |= ERNIC_UCTX_MW;
	/* Only a direct QP's WQEs carry them: the kernel has no such WR. */
	if (uc->direct && (dev->ext & ERNIC_EXT_F_PLACE))
		resp.flags |= ERNIC_UCTX_PLACE;
	/* XRC initiators are direct QPs, XRC SRQs direct SRQs. */
	if (uc->direct && (dev->ext & ERNIC_EXT_F_XRC))
		resp.flags |= ERNIC_UCTX_XRC;
	if (uc->direct && (dev->ext & ERNIC_EXT_F_UPOLL))
		resp.flags |= ERNIC_UCTX_UPOLL;
	if (udata->outlen)
		return ib_copy_to_udata(udata, &resp,
					min(udata->outlen, sizeof(resp)));
	return 0;
}

void ernic_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * A region of a direct QP: a coherent buffer of the driver's, or the
 * QP's page of the doorbell BAR (cpu NULL).
 */
struct ernic_umap {
	struct rdma_user_mmap_entry rdma;
	struct device *dma_dev;
	void *cpu;
	dma_addr_t dma;
	phys_addr_t io;			/* the doorbell page */
	size_t size;
	bool ro;			/* written by the device or driver only */
};

/*
 * Only a region of the caller's own context, whole: rings and the
 * status page as cached memory (coherent on x86), the doorbell page
 * uncached; read-only regions cannot be made writable.
 */
int ernic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e = rdma_user_mmap_entry_get(uctx, vma);
	struct ernic_umap *m;
	unsigned long pfn;
	pgprot_t prot;
	int ret;

	if (!e)
		return -EINVAL;
	m = container_of(e, struct ernic_umap, rdma);
	if (m->ro && (vma->vm_flags & VM_WRITE)) {
		ret = -EPERM;
		goto out;
	}
	if (m->ro)
		ernic_vm_flags_clear(vma, VM_MAYWRITE);
	pfn = m->cpu ? PHYS_PFN(virt_to_phys(m->cpu)) : PHYS_PFN(m->io);
	prot = m->cpu ? vma->vm_page_prot : pgprot_noncached(vma->vm_page_prot);
	ret = rdma_user_mmap_io(uctx, vma, pfn, m->size, prot, e);
out:
	rdma_user_mmap_entry_put(e);
	return ret;
}

/* The last reference to a region: its QP is gone and nothing maps it. */
void ernic_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct ernic_umap *m = container_of(e, struct ernic_umap, rdma);

	if (m->cpu)
		dma_free_coherent(m->dma_dev, m->size, m->cpu, m->dma);
	kfree(m);
}

/* Was QP @qp asked for as a direct QP, and can it be one? */
bool ernic_uq_wanted(struct ernic_qp *qp, struct ib_udata *udata)
{
	struct ernic_ucontext *uc;
	struct ernic_create_qp_cmd cmd = {};

	if (!udata || !udata->inlen)
		return false;
	uc = rdma_udata_to_drv_context(udata, struct ernic_ucontext, ibuc);
	if (ib_copy_from_udata(&cmd, udata, min(udata->inlen, sizeof(cmd))))
		return false;
	qp->dbrec_asked = (cmd.flags & ERNIC_QP_DBREC) &&
			  (qp->dev->ext & ERNIC_EXT_F_DBREC);
	/* An SRQ's QP grants no buffers: RQCIi is set once (ernic_qp.c). */
	qp->rqrec_asked = qp->dbrec_asked && (cmd.flags & ERNIC_QP_RQREC) &&
			  (qp->dev->ext & ERNIC_EXT_F_RQREC) && !qp->srq &&
			  !qp->xrc_tgt;
	/* A doorbell page for each QP up to the BAR's size. */
	return uc->direct && (cmd.flags & ERNIC_QP_DIRECT) &&
	       qp->qpn <= ERNIC_UDB_BAR_SIZE / ERNIC_UDB_PAGE;
}

/*
 * A region of @size bytes made visible to @udata's context: a coherent
 * buffer, or with @udb the page at that offset of the doorbell BAR.
 */
static struct ernic_umap *ernic_umap_new(struct ernic_dev *dev,
					 struct ib_udata *udata, size_t size,
					 bool ro, bool udb, u32 udb_off)
{
	struct ernic_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct ernic_ucontext, ibuc);
	struct ernic_umap *m;
	int ret;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->dma_dev = &dev->pdev->dev;
	m->size = PAGE_ALIGN(size);
	m->ro = ro;
	if (udb) {
		m->io = pci_resource_start(dev->pdev, ERNIC_BAR_UDB) + udb_off;
	} else {
		m->cpu = dma_alloc_coherent(m->dma_dev, m->size, &m->dma,
					    GFP_KERNEL);
		if (!m->cpu) {
			kfree(m);
			return ERR_PTR(-ENOMEM);
		}
		/*
		 * ernic_mmap() maps the pages behind the linear address: an
		 * IOMMU's remapped buffer has none, and is not mapped.
		 */
		if (!virt_addr_valid(m->cpu)) {
			ernic_mmap_free(&m->rdma);
			return ERR_PTR(-EOPNOTSUPP);
		}
	}
	ret = rdma_user_mmap_entry_insert(&uc->ibuc, &m->rdma, m->size);
	if (ret) {
		ernic_mmap_free(&m->rdma);
		return ERR_PTR(ret);
	}
	return m;
}

/* The page-aligned region @r of a direct QP. */
static int ernic_uq_region(struct ernic_qp *qp, struct ib_udata *udata,
			   enum ernic_uq_region r, size_t size, bool ro)
{
	struct ernic_umap *m = ernic_umap_new(qp->dev, udata, size, ro,
					      r == ERNIC_UQ_UDB,
					      ERNIC_UDB_OFFSET(qp->qpn));

	if (IS_ERR(m))
		return PTR_ERR(m);
	qp->umap[r] = m;
	return 0;
}

/*
 * A direct QP's rings, status page and doorbell page. The doorbell BAR
 * must hold a page for the QP (a PG332 layout device with UDB).
 */
int ernic_uq_alloc(struct ernic_qp *qp, struct ib_udata *udata)
{
	static const bool ro[ERNIC_UQ_NR] = {
		[ERNIC_UQ_CQ] = true, [ERNIC_UQ_META] = true,
		[ERNIC_UQ_STATUS] = true,
	};
	size_t rec = qp->rqrec_asked ? ERNIC_RQREC_SIZE :
		     qp->dbrec_asked ? ERNIC_DBREC_SIZE : 0;
	size_t size[ERNIC_UQ_NR] = {
		[ERNIC_UQ_SQ] = (size_t)qp->sq_depth * ERNIC_XWQE_SIZE + rec,
		[ERNIC_UQ_RQ] = (size_t)qp->rq_depth * ERNIC_RWQE_SIZE,
		[ERNIC_UQ_CQ] = (size_t)qp->sq_depth * ERNIC_CQE_SIZE,
		[ERNIC_UQ_META] = (size_t)qp->rq_depth * ERNIC_RXMETA_SIZE,
		[ERNIC_UQ_STATUS] = sizeof(struct ernic_uq_status),
		[ERNIC_UQ_UDB] = ERNIC_UDB_PAGE,
	};
	struct ernic_umap *m;
	int r, ret;

	if (pci_resource_len(qp->dev->pdev, ERNIC_BAR_UDB) <
	    ERNIC_UDB_OFFSET(qp->qpn) + ERNIC_UDB_PAGE)
		return -EOPNOTSUPP;
	for (r = 0; r < ERNIC_UQ_NR; r++) {
		ret = ernic_uq_region(qp, udata, r, size[r], ro[r]);
		if (ret)
			return ret;
	}
	qp->sq = qp->umap[ERNIC_UQ_SQ]->cpu;
	qp->sq_dma = qp->umap[ERNIC_UQ_SQ]->dma;
	/* The process's doorbell record ends its SQ region, or it has none. */
	m = qp->umap[ERNIC_UQ_SQ];
	qp->db_sq = rec ? m->cpu + m->size - rec : NULL;
	qp->db_sq_dma = rec ? m->dma + m->size - rec : 0;
	qp->rqrec = qp->rqrec_asked;
	qp->rq = qp->umap[ERNIC_UQ_RQ]->cpu;
	qp->rq_dma = qp->umap[ERNIC_UQ_RQ]->dma;
	qp->cqe = qp->umap[ERNIC_UQ_CQ]->cpu;
	qp->cqe_dma = qp->umap[ERNIC_UQ_CQ]->dma;
	qp->meta = qp->umap[ERNIC_UQ_META]->cpu;
	qp->meta_dma = qp->umap[ERNIC_UQ_META]->dma;
	qp->ust = qp->umap[ERNIC_UQ_STATUS]->cpu;
	qp->db_cq = &qp->ust->cq_db;
	qp->db_rq = &qp->ust->rq_db;
	qp->db_cq_dma = qp->umap[ERNIC_UQ_STATUS]->dma +
			offsetof(struct ernic_uq_status, cq_db);
	qp->db_rq_dma = qp->umap[ERNIC_UQ_STATUS]->dma +
			offsetof(struct ernic_uq_status, rq_db);
	return 0;
}

/*
 * The QP lets go of its regions; each is freed when the process has
 * unmapped it too (ernic_mmap_free()). The QP is disabled by now: the
 * device no longer reaches them.
 */
void ernic_uq_free(struct ernic_qp *qp)
{
	int r;

	for (r = 0; r < ERNIC_UQ_NR; r++) {
		if (qp->umap[r])
			rdma_user_mmap_entry_remove(&qp->umap[r]->rdma);
		qp->umap[r] = NULL;
	}
	qp->sq = NULL;
	qp->rq = NULL;
	qp->cqe = NULL;
	qp->meta = NULL;
	qp->ust = NULL;
	if (qp->direct) {
		qp->db_sq = NULL;	/* it was in the SQ region */
		qp->rqrec = false;
	}
}

/* create_qp's answer: a direct QP's depths and where to map its regions. */
int ernic_uq_reply(struct ernic_qp *qp, struct ib_udata *udata)
{
	struct ernic_create_qp_resp resp = {};
	int r;

	if (!udata || !udata->outlen)
		return 0;
	if (qp->direct) {
		resp.flags = ERNIC_QP_DIRECT |
			     (qp->db_sq ? ERNIC_QP_DBREC : 0) |
			     (qp->rqrec ? ERNIC_QP_RQREC : 0);
		resp.sq_depth = qp->sq_depth;
		resp.rq_depth = qp->rq_depth;
		resp.ud_mtu = qp->ud ? ib_mtu_enum_to_int(qp->attr.path_mtu) : 0;
		for (r = 0; r < ERNIC_UQ_NR; r++) {
			resp.key[r] = rdma_user_mmap_get_offset(&qp->umap[r]->rdma);
			resp.len[r] = qp->umap[r]->size;
		}
	}
	return ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
}

/*
 * Tell a direct QP's process its state, and the status its first ERRFLAG
 * completion reports: the provider flushes its receive WRs in Error and
 * names errors by these (docs/driver.md, "Direct QPs"). Under qp->lock.
 */
void ernic_uq_publish(struct ernic_qp *qp)
{
	if (!qp->ust)
		return;
	WRITE_ONCE(qp->ust->err_status, qp->err_status < 0 ?
		   ERNIC_UQ_NO_STATUS : qp->err_status);
	/* The status before the state that makes the provider read it. */
	smp_wmb();
	WRITE_ONCE(qp->ust->state, qp->state);
}

/* No SGE may name bus memory: L_Key 0 is the reserved L_Key. */
static bool ernic_sges_keyed(const struct ib_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!sg[i].lkey)
			return false;
	return true;
}

int ernic_user_check_send(struct ernic_qp *qp, const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:		/* ERNIC-X atomics: checked */
	case IB_WR_ATOMIC_FETCH_AND_ADD:	/* on, ernic_check_rc_wr() */
		break;
	default:
		return -EINVAL;
	}
	if (wr->num_sge < 0 || wr->num_sge > ERNIC_MAX_RW_SGE)
		return -EINVAL;
	if (wr->send_flags & IB_SEND_INLINE)
		return 0;	/* copied from user space, no key */
	return ernic_sges_keyed(wr->sg_list, wr->num_sge) ? 0 : -EINVAL;
}

int ernic_user_check_recv(const struct ib_recv_wr *wr)
{
	return ernic_sges_keyed(wr->sg_list, wr->num_sge) ? 0 : -EINVAL;
}

/* Was SRQ @srq asked for as a direct SRQ, and can it be one? */
static bool ernic_usrq_wanted(struct ernic_srq *srq, struct ib_udata *udata)
{
	struct ernic_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct ernic_ucontext, ibuc);
	struct ernic_create_srq_cmd cmd = {};

	if (!udata->inlen ||
	    ib_copy_from_udata(&cmd, udata, min(udata->inlen, sizeof(cmd))))
		return false;
	return uc->direct && (cmd.flags & ERNIC_SRQ_DIRECT) &&
	       pci_resource_len(srq->dev->pdev, ERNIC_BAR_UDB) >=
	       ERNIC_UDB_SRQ_OFFSET(srq->n) + ERNIC_UDB_PAGE;
}

/*
 * A user SRQ: its ring and doorbell page mapped into the process, which
 * posts to it (the device refuses its WQEs' L_Key 0, SRQCONFn[1]). The
 * answer says where. Not direct: refused, there is no command path.
 */
int ernic_usrq_alloc(struct ernic_srq *srq, struct ib_udata *udata)
{
	struct ernic_create_srq_resp resp = {};
	struct ernic_umap *m;
	int r;

	if (!ernic_usrq_wanted(srq, udata))
		return -EOPNOTSUPP;
	for (r = 0; r < ERNIC_USRQ_NR; r++) {
		m = ernic_umap_new(srq->dev, udata, r == ERNIC_USRQ_RING ?
				   (size_t)srq->depth * ERNIC_RWQE_SIZE :
				   ERNIC_UDB_PAGE, false, r == ERNIC_USRQ_UDB,
				   ERNIC_UDB_SRQ_OFFSET(srq->n));
		if (IS_ERR(m))
			return PTR_ERR(m);
		srq->umap[r] = m;
		resp.key[r] = rdma_user_mmap_get_offset(&m->rdma);
		resp.len[r] = m->size;
	}
	srq->ring = srq->umap[ERNIC_USRQ_RING]->cpu;
	srq->ring_dma = srq->umap[ERNIC_USRQ_RING]->dma;
	resp.flags = ERNIC_SRQ_DIRECT;
	resp.depth = srq->depth;
	return ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
}

/* The SRQ lets go of its regions, freed once unmapped too. */
void ernic_usrq_free(struct ernic_srq *srq)
{
	int r;

	for (r = 0; r < ERNIC_USRQ_NR; r++) {
		if (srq->umap[r])
			rdma_user_mmap_entry_remove(&srq->umap[r]->rdma);
		srq->umap[r] = NULL;
	}
	srq->ring = NULL;
}
