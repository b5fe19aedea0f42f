// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ERNIC memory regions: the PG332 PD/MR table (Fig. 2-9) and, when the
 * device has the ERNIC-X extension, its extended MR table and fast
 * registration (docs/extension.md).
 *
 * Without ERNIC-X a region is one PD/MR table entry of contiguous bus
 * memory: the DMA MR is the only kind there is. With ERNIC-X "MR" on,
 * the device looks every R_Key up in the extended table instead, whose
 * entries are page lists; with "FRWR" on, ib_alloc_mr() regions are
 * registered by REG_MR WQEs in send-queue order.
 */

#include <linux/module.h>
#include <linux/random.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>

#include "ernic.h"

static bool ext = true;
module_param(ext, bool, 0444);
MODULE_PARM_DESC(ext,
		 "use the ERNIC-X extension (MR table, fast registration) when the device has it (default on)");

static bool dbrec = true;
module_param(dbrec, bool, 0444);
MODULE_PARM_DESC(dbrec,
		 "give SQs ERNIC-X doorbell records when the device has them (default on)");

static bool rqrec = true;
module_param(rqrec, bool, 0444);
MODULE_PARM_DESC(rqrec,
		 "give RQs doorbell records too: receive WRs without a register write (default on; needs dbrec)");

static bool upoll = true;
module_param(upoll, bool, 0444);
MODULE_PARM_DESC(upoll,
		 "let processes that poll in vain read their doorbell pages, which yields to the device (default on)");

/*
 * The capability (docs/extension.md, "Discovery"): a vendor-specific
 * capability of version 1 that places the extension at 0x38000 of BAR0,
 * where EXTID must read "ERX1".
 */
static u32 ernic_ext_features(struct ernic_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	u32 loc, feat;
	u8 len, ver;
	int pos;

	pos = pci_find_capability(pdev, PCI_CAP_ID_VNDR);
	for (; pos; pos = pci_find_next_capability(pdev, pos,
						    PCI_CAP_ID_VNDR)) {
		pci_read_config_byte(pdev, pos + 2, &len);
		pci_read_config_byte(pdev, pos + ERNIC_EXT_CAP_VERSION, &ver);
		if (len >= ERNIC_EXT_CAP_LEN && ver == ERNIC_EXT_VERSION)
			break;
	}
	if (!pos)
		return 0;
	pci_read_config_dword(pdev, pos + ERNIC_EXT_CAP_LOC, &loc);
	pci_read_config_dword(pdev, pos + ERNIC_EXT_CAP_FEAT, &feat);
	if (loc != (ERNIC_EXT_BASE | ERNIC_BAR_REGS) ||
	    ernic_rd(dev, ERNIC_EXTID) != ERNIC_EXT_ID_VALUE) {
		dev_warn(&pdev->dev, "ERNIC-X capability at an unknown place (0x%x): not used\n",
			 loc);
		return 0;
	}
	return feat & ERNIC_EXT_F_ALL;
}

/*
 * Turn on the ERNIC-X features the driver uses, while ERNIC is still
 * disabled (EXTCTRL is writable only then). What EXTCTRL reads back is
 * what the device does; the rest of the driver goes by that.
 */
void ernic_ext_init(struct ernic_dev *dev)
{
	u32 feat = ernic_ext_features(dev);

	dev->mr_max = ERNIC_PDT_ENTRIES;
	if (!feat)
		return;
	/* An RQ's record is the second word of its QP's SQ record. */
	if (!dbrec || !rqrec)
		feat &= ~ERNIC_EXT_F_RQREC;
	if (!dbrec)
		feat &= ~ERNIC_EXT_F_DBREC;
	if (!upoll)
		feat &= ~ERNIC_EXT_F_UPOLL;
	/* Written even when unused: a previous driver may have left it on. */
	ernic_wr(dev, ERNIC_EXTCTRL, ext && (feat & ERNIC_EXT_F_MR) ? feat : 0);
	dev->ext = ernic_rd(dev, ERNIC_EXTCTRL);
	if (!dev->ext)
		return;
	if (dev->ext & ERNIC_EXT_F_MR)
		dev->mr_max = min_t(u32, ernic_rd(dev, ERNIC_EXTMRMAX),
				    ERNIC_EXT_MR_MAX);
	dev_info(&dev->pdev->dev, "ERNIC-X: features 0x%x, %u MR entries\n",
		 dev->ext, dev->mr_max);
}

static u32 ernic_mracc(int access)
{
	u32 acc = 0;

	if (access & IB_ACCESS_LOCAL_WRITE)
		acc |= ERNIC_MRACC_LOCAL_WRITE;
	if (access & IB_ACCESS_REMOTE_READ)
		acc |= ERNIC_MRACC_REMOTE_READ;
	if (access & IB_ACCESS_REMOTE_WRITE)
		acc |= ERNIC_MRACC_REMOTE_WRITE;
	/* Without ERNIC-X ATOMIC no atomic request reaches a region. */
	if (access & IB_ACCESS_REMOTE_ATOMIC)
		acc |= ERNIC_MRACC_REMOTE_ATOMIC;
	/* Windows may be bound to it (ERNIC-X MW; refused without). */
	if (access & IB_ACCESS_MW_BIND)
		acc |= ERNIC_MRACC_MW_BIND;
	/* FLUSH reaches it (ERNIC-X PLACE; refused without). */
	if (access & ERNIC_ACCESS_FLUSH_GLOBAL)
		acc |= ERNIC_MRACC_FLUSH;
	return acc;
}

/* An entry of the extended table through the MR window (MRCMD 1). */
struct ernic_ext_mr {
	u32 state;
	u8 key;
	u32 pdn;
	u32 acc;
	u64 iova;
	u64 len;
	u64 pbl;
	u32 npages;
};

static int ernic_ext_mr_write(struct ernic_dev *dev, u32 idx,
			      const struct ernic_ext_mr *m)
{
	u32 sts;

	mutex_lock(&dev->mr_mutex);
	ernic_wr(dev, ERNIC_MRIDX, idx);
	ernic_wr(dev, ERNIC_MRKEY, m->key |
		 FIELD_PREP(ERNIC_MRKEY_STATE_MASK, m->state));
	ernic_wr(dev, ERNIC_MRPD, m->pdn);
	ernic_wr(dev, ERNIC_MRACC, m->acc);
	ernic_wr(dev, ERNIC_MRIOVALO, lower_32_bits(m->iova));
	ernic_wr(dev, ERNIC_MRIOVAHI, upper_32_bits(m->iova));
	ernic_wr(dev, ERNIC_MRLENLO, lower_32_bits(m->len));
	ernic_wr(dev, ERNIC_MRLENHI, upper_32_bits(m->len));
	ernic_wr(dev, ERNIC_MRPBLLO, lower_32_bits(m->pbl));
	ernic_wr(dev, ERNIC_MRPBLHI, upper_32_bits(m->pbl));
	ernic_wr(dev, ERNIC_MRNPAGES, m->npages);
	ernic_wr(dev, ERNIC_MRCMD, ERNIC_MRCMD_WRITE);
	sts = ernic_rd(dev, ERNIC_MRSTS);
	mutex_unlock(&dev->mr_mutex);
	if (sts) {
		ibdev_err(&dev->ibdev, "MR entry %u: MRSTS %u\n", idx, sts);
		return -EIO;
	}
	return 0;
}

/*
 * PD/MR table entry (PG332 Fig. 2-9): an incoming READ or WRITE is allowed
 * when R_Key[31:8] names the entry, R_Key[7:0] equals BUFRKEY, PDPDNUM is
 * the QP's PD and [VA, VA + len) lies inside [VIRTADDR, VIRTADDR + length).
 * Data goes to BUFBASEADDR + (VA - VIRTADDR).
 */
static void ernic_pdt_write(struct ernic_dev *dev, u32 idx, u32 pdn, u64 va,
			    u64 base, u64 len, u8 key, u32 access)
{
	u32 e = ERNIC_PDT_OFFSET(idx);

	ernic_wr(dev, e + ERNIC_PDPDNUM, pdn);
	ernic_wr(dev, e + ERNIC_VIRTADDRLSB, lower_32_bits(va));
	ernic_wr(dev, e + ERNIC_VIRTADDRMSB, upper_32_bits(va));
	ernic_wr(dev, e + ERNIC_BUFBASEADDRLSB, lower_32_bits(base));
	ernic_wr(dev, e + ERNIC_BUFBASEADDRMSB, upper_32_bits(base));
	ernic_wr(dev, e + ERNIC_BUFRKEY, key);
	ernic_wr(dev, e + ERNIC_WRRDBUFLEN, lower_32_bits(len));
	ernic_wr(dev, e + ERNIC_ACCESSDESC, access |
		 FIELD_PREP(ERNIC_ACCESSDESC_LENMSB_MASK, upper_32_bits(len)));
}

static u32 ernic_access_type(int flags)
{
	bool rd = flags & IB_ACCESS_REMOTE_READ;
	bool wr = flags & IB_ACCESS_REMOTE_WRITE;

	if (rd && wr)
		return ERNIC_ACCESS_READ_WRITE;
	if (wr)
		return ERNIC_ACCESS_WRITE_ONLY;
	if (rd)
		return ERNIC_ACCESS_READ_ONLY;
	/* Local only: a reserved access type, which no request matches. */
	return ERNIC_ACCESSDESC_TYPE_MASK;
}

/* A new MR with a table entry of its own and a random key byte. */
static struct ernic_mr *ernic_mr_new(struct ernic_dev *dev)
{
	struct ernic_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	int idx;

	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* Entry 0 of the extended table stays free: L_Key 0 is reserved. */
	idx = ida_alloc_range(&dev->mr_ida, dev->ext ? 1 : 0, dev->mr_max - 1,
			      GFP_KERNEL);
	if (idx < 0) {
		kfree(mr);
		return ERR_PTR(idx);
	}
	mr->idx = idx;
	mr->ibmr.lkey = (u32)idx << 8 | (get_random_u32() & 0xff);
	mr->ibmr.rkey = mr->ibmr.lkey;
	return mr;
}

/* Only once no entry points at them: the device no longer reaches them. */
static void ernic_mr_unpin(struct ernic_dev *dev, struct ernic_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	if (mr->pages)
		dma_free_coherent(&dev->pdev->dev, mr->max_pages * sizeof(u64),
				  mr->pages, mr->pages_dma);
	mr->umem = NULL;
	mr->pages = NULL;
}

static void ernic_mr_free(struct ernic_dev *dev, struct ernic_mr *mr)
{
	ernic_mr_unpin(dev, mr);
	ida_free(&dev->mr_ida, mr->idx);
	kfree(mr);
}

/*
 * The DMA MR: local access needs no key on ERNIC (WQE addresses are bus
 * addresses), and remote access to all memory is one entry whose virtual
 * addresses are bus addresses: VIRTADDR = BUFBASEADDR = 0 in the PG332
 * table, a physical region at IOVA 0 in the extended one.
 */
struct ib_mr *ernic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct ernic_dev *dev = to_edev(ibpd->device);
	u32 pdn = to_epd(ibpd)->pdn;
	struct ernic_mr *mr;
	int ret = 0;

	mr = ernic_mr_new(dev);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	if (dev->ext & ERNIC_EXT_F_MR) {
		struct ernic_ext_mr m = {
			.state = ERNIC_MR_VALID,
			.key = mr->ibmr.lkey & 0xff,
			.pdn = pdn,
			.acc = ernic_mracc(access) | ERNIC_MRACC_PHYS,
			.len = ERNIC_DMA_MR_LEN,
		};

		ret = ernic_ext_mr_write(dev, mr->idx, &m);
	} else {
		ernic_pdt_write(dev, mr->idx, pdn, 0, 0, ERNIC_DMA_MR_LEN,
				mr->ibmr.lkey & 0xff,
				ernic_access_type(access));
	}
	if (ret) {
		ernic_mr_free(dev, mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

/*
 * Access a user MR may ask for; the optional bits may be ignored. Remote
 * atomic access is MRACC's bit with ERNIC-X ATOMIC; without it the
 * device has no atomics (atomic_cap is IB_ATOMIC_NONE) and refuses an
 * atomic request by opcode (docs/driver.md, "Memory regions"). UCX,
 * libfabric and qperf ask for it on every registration.
 */
#define ERNIC_USER_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_OPTIONAL)

/*
 * What a user MR may ask for on @dev: MW bind access with ERNIC-X MW,
 * FLUSH access with ERNIC-X PLACE.
 */
static bool ernic_user_access_ok(struct ernic_dev *dev, int access)
{
	if ((access & IB_ACCESS_MW_BIND) && (dev->ext & ERNIC_EXT_F_MW))
		access &= ~IB_ACCESS_MW_BIND;
	if (dev->ext & ERNIC_EXT_F_PLACE)
		access &= ~ERNIC_ACCESS_FLUSH_GLOBAL;
	return !(access & ~ERNIC_USER_ACCESS);
}

/*
 * reg_mr's driver data (<rdma/ernic-abi.h>): FLUSH access, which the
 * kernel's reg_mr of Linux 6.1 refuses, into @access. A provider that
 * sends none asks for nothing more.
 */
static int ernic_umr_drv_access(struct ib_udata *udata, int *access)
{
	struct ernic_reg_mr_cmd cmd = {};

	if (!udata || !udata->inlen)
		return 0;
	if (ib_copy_from_udata(&cmd, udata, min(udata->inlen, sizeof(cmd))))
		return -EFAULT;
	if ((cmd.access & ~ERNIC_MR_FLUSH_GLOBAL) || cmd.reserved)
		return -EOPNOTSUPP;
	if (cmd.access & ERNIC_MR_FLUSH_GLOBAL)
		*access |= ERNIC_ACCESS_FLUSH_GLOBAL;
	return 0;
}
/* Page sizes of a page list: shifts 12 to 30 (docs/extension.md). */
#define ERNIC_USER_PGSZ		GENMASK_ULL(ERNIC_MR_PAGE_SHIFT_MAX, \
					    ERNIC_MR_PAGE_SHIFT_MIN)

/* The page list of @mr's pinned memory, in pages of @pgsz. */
static int ernic_umem_pages(struct ernic_dev *dev, struct ernic_mr *mr,
			    unsigned long pgsz)
{
	struct ib_block_iter biter;
	size_t n = ib_umem_num_dma_blocks(mr->umem, pgsz);

	if (!n || n > ERNIC_MAX_USER_PAGES)
		return -EINVAL;
	mr->max_pages = n;
	mr->pages = dma_alloc_coherent(&dev->pdev->dev, n * sizeof(u64),
				       &mr->pages_dma, GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	rdma_umem_for_each_dma_block(mr->umem, &biter, pgsz)
		mr->pages[mr->npages++] =
			cpu_to_le64(rdma_block_iter_dma_address(&biter));
	return 0;
}

/*
 * Pins [start, start + len) into @mr, which holds no pages, as a page
 * list for @iova in the largest pages the memory allows.
 */
static int ernic_umr_pin(struct ernic_dev *dev, struct ernic_mr *mr,
			 u64 start, u64 len, u64 iova, int access)
{
	struct ib_umem *umem = ernic_umem_get(&dev->ibdev, start, len, access);
	unsigned long pgsz;

	if (IS_ERR(umem))
		return PTR_ERR(umem);
	mr->umem = umem;
	pgsz = ib_umem_find_best_pgsz(umem, ERNIC_USER_PGSZ, iova);
	if (!pgsz)
		return -EINVAL;
	mr->ibmr.page_size = pgsz;
	return ernic_umem_pages(dev, mr, pgsz);
}

/* Points @mr's entry at @mr's pages, for @pdn with @access. */
static int ernic_umr_write(struct ernic_dev *dev, struct ernic_mr *mr,
			   u32 pdn, u64 iova, u64 len, int access)
{
	struct ernic_ext_mr m = {
		.state = ERNIC_MR_VALID,
		.key = mr->ibmr.lkey & 0xff,
		.pdn = pdn,
		.acc = ernic_mracc(access) |
		       FIELD_PREP(ERNIC_MRACC_SHIFT_MASK,
				  ilog2(mr->ibmr.page_size)),
		.iova = iova,
		.len = len,
		.pbl = mr->pages_dma,
		.npages = mr->npages,
	};

	return ernic_ext_mr_write(dev, mr->idx, &m);
}

/*
 * A user MR (uverbs): the pinned pages of [start, start + len) as a page
 * list of the extended table, at the process's IOVA, in the largest
 * pages the memory allows. Its keys are the device's to check on every
 * access (ernic_uverbs.c).
 */
struct ib_mr *ernic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				u64 iova, int access, ERNIC_MR_DMAH
				struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibpd->device);
	struct ernic_mr *mr;
	int ret;

	ret = ernic_umr_drv_access(udata, &access);
	if (ret)
		return ERR_PTR(ret);
	if (!(dev->ext & ERNIC_EXT_F_MR) || !ernic_user_access_ok(dev, access))
		return ERR_PTR(-EOPNOTSUPP);
	mr = ernic_mr_new(dev);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	ret = ernic_umr_pin(dev, mr, start, len, iova, access);
	if (!ret)
		ret = ernic_umr_write(dev, mr, to_epd(ibpd)->pdn, iova, len,
				      access);
	if (ret) {
		ernic_mr_free(dev, mr);
		return ERR_PTR(ret);
	}
	mr->access = access;
	mr->ibmr.iova = iova;
	mr->ibmr.length = len;
	return &mr->ibmr;
}

/* Moves @from's pinned pages into @to and @to's into @from. */
static void ernic_mr_swap_pages(struct ernic_mr *to, struct ernic_mr *from)
{
	swap(to->umem, from->umem);
	swap(to->pages, from->pages);
	swap(to->pages_dma, from->pages_dma);
	swap(to->max_pages, from->max_pages);
	swap(to->npages, from->npages);
	swap(to->ibmr.page_size, from->ibmr.page_size);
}

/*
 * ibv_rereg_mr (docs/driver.md, "MR re-registration"): the entry is
 * written again in place, so the keys stay. MRCMD replaces the entry at
 * once: a request sees the old entry or the new one, never a mix. New
 * pages are pinned before the entry moves to them, the old ones
 * released after; on an error the MR is left as it was. Memory pinned
 * read-only is pinned again when the new access lets the device write.
 */
struct ib_mr *ernic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 len, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibmr->device);
	struct ernic_mr *mr = to_emr(ibmr);
	struct ernic_mr new = { .idx = mr->idx, .ibmr.lkey = mr->ibmr.lkey };
	bool pin = flags & IB_MR_REREG_TRANS;
	int ret;

	if (!mr->umem)
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	else if (!ernic_user_access_ok(dev, access))
		return ERR_PTR(-EOPNOTSUPP);
	if (!pin) {
		start = mr->umem->address;
		len = mr->ibmr.length;
		iova = mr->ibmr.iova;
		pin = ib_access_writable(access) && !mr->umem->writable;
	}
	if (!pin) {
		ret = ernic_umr_write(dev, mr, to_epd(ibpd)->pdn, iova, len,
				      access);
		if (ret)
			return ERR_PTR(ret);
	} else {
		ret = ernic_umr_pin(dev, &new, start, len, iova, access);
		if (!ret)
			ret = ernic_umr_write(dev, &new, to_epd(ibpd)->pdn,
					      iova, len, access);
		if (!ret)
			ernic_mr_swap_pages(mr, &new);
		ernic_mr_unpin(dev, &new);
		if (ret)
			return ERR_PTR(ret);
	}
	mr->access = access;
	mr->ibmr.iova = iova;
	mr->ibmr.length = len;
	return NULL;
}

/*
 * A fast-registration MR (docs/extension.md, "Fast registration"): an
 * invalid entry of the PD with the FRWR bit, and a page list in coherent
 * memory that REG_MR WQEs point the entry at.
 */
struct ib_mr *ernic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct ernic_dev *dev = to_edev(ibpd->device);
	struct ernic_ext_mr m = {
		.state = ERNIC_MR_INVALID,
		.pdn = to_epd(ibpd)->pdn,
		.acc = ERNIC_MRACC_FRWR,
	};
	struct ernic_mr *mr;
	int ret;

	if (!(dev->ext & ERNIC_EXT_F_FRWR) || type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > ERNIC_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = ernic_mr_new(dev);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->max_pages = max_num_sg;
	mr->pages = dma_alloc_coherent(&dev->pdev->dev,
				       max_num_sg * sizeof(u64),
				       &mr->pages_dma, GFP_KERNEL);
	m.key = mr->ibmr.lkey & 0xff;
	ret = mr->pages ? ernic_ext_mr_write(dev, mr->idx, &m) : -ENOMEM;
	if (ret) {
		ernic_mr_free(dev, mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

static int ernic_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct ernic_mr *mr = to_emr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

int ernic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct ernic_mr *mr = to_emr(ibmr);

	if (!mr->pages)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, ernic_set_page);
}

/*
 * The WQE of an IB_WR_REG_MR or IB_WR_LOCAL_INV (docs/extension.md,
 * "Fast registration"). The key must name the MR's own entry: only its
 * key byte is the consumer's (ib_update_fast_reg_key()).
 */
int ernic_fill_local_wqe(const struct ib_send_wr *wr, u8 *w, u32 slot)
{
	const struct ib_reg_wr *reg = reg_wr(wr);
	struct ernic_mr *mr;
	u32 shift;

	memset(w, 0, ERNIC_WQE_SIZE);
	put_unaligned_le16(slot, w + ERNIC_WQE_WRID);
	if (wr->opcode == IB_WR_LOCAL_INV) {
		w[ERNIC_WQE_OPCODE] = ERNIC_OP_LOCAL_INV;
		put_unaligned_le32(wr->ex.invalidate_rkey, w + ERNIC_WQE_RTAG);
		return 0;
	}
	mr = to_emr(reg->mr);
	shift = ilog2(mr->ibmr.page_size);
	if (!mr->pages || reg->key >> 8 != mr->idx ||
	    mr->ibmr.length > U32_MAX || shift < ERNIC_MR_PAGE_SHIFT_MIN ||
	    shift > ERNIC_MR_PAGE_SHIFT_MAX)
		return -EINVAL;
	w[ERNIC_WQE_OPCODE] = ERNIC_OP_REG_MR;
	put_unaligned_le32(reg->key, w + ERNIC_WQE_RTAG);
	put_unaligned_le64(mr->ibmr.iova, w + ERNIC_WQE_ROFFSET);
	put_unaligned_le32(mr->ibmr.length, w + ERNIC_WQE_LENGTH);
	put_unaligned_le64(mr->pages_dma, w + ERNIC_WQE_LADDR);
	put_unaligned_le32(mr->npages, w + ERNIC_WQE_REG_NPAGES);
	put_unaligned_le32(ernic_mracc(reg->access) | ERNIC_MRACC_FRWR |
			   FIELD_PREP(ERNIC_MRACC_SHIFT_MASK, shift),
			   w + ERNIC_WQE_REG_ACC);
	return 0;
}

int ernic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibmr->device);
	struct ernic_mr *mr = to_emr(ibmr);
	struct ernic_ext_mr free = { .state = ERNIC_MR_FREE };

	/* PG332 table: as the Xilinx drivers do, key 0 and a reserved type. */
	if (dev->ext & ERNIC_EXT_F_MR)
		ernic_ext_mr_write(dev, mr->idx, &free);
	else
		ernic_pdt_write(dev, mr->idx, 0, 0, 0, 0, 0,
				ERNIC_ACCESSDESC_TYPE_MASK);
	ernic_mr_free(dev, mr);
	return 0;
}

/*
 * A memory window (ERNIC-X MW, docs/extension.md "Memory windows"): an
 * entry of the extended table, allocated unbound; a BIND WQE of a QP of
 * its PD binds it, and a region's entry written again unbinds its
 * windows in the device.
 */
int ernic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibmw->device);
	struct ernic_mw *mw = container_of(ibmw, struct ernic_mw, ibmw);
	struct ernic_ext_mr m = {
		.state = ERNIC_MR_INVALID,
		.pdn = to_epd(ibmw->pd)->pdn,
		.acc = ERNIC_MRACC_MW,
	};
	int idx, ret;

	if (!(dev->ext & ERNIC_EXT_F_MW))
		return -EOPNOTSUPP;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (ibmw->type == IB_MW_TYPE_2)
		m.acc |= ERNIC_MRACC_MW_TYPE2;
	idx = ida_alloc_range(&dev->mr_ida, 1, dev->mr_max - 1, GFP_KERNEL);
	if (idx < 0)
		return idx;
	m.key = get_random_u32() & 0xff;
	ret = ernic_ext_mr_write(dev, idx, &m);
	if (ret) {
		ida_free(&dev->mr_ida, idx);
		return ret;
	}
	mw->idx = idx;
	ibmw->rkey = (u32)idx << 8 | m.key;
	return 0;
}

/* Freed in the device first: no request reaches it from then on. */
int ernic_dealloc_mw(struct ib_mw *ibmw)
{
	struct ernic_dev *dev = to_edev(ibmw->device);
	struct ernic_mw *mw = container_of(ibmw, struct ernic_mw, ibmw);
	struct ernic_ext_mr free = { .state = ERNIC_MR_FREE };

	ernic_ext_mr_write(dev, mw->idx, &free);
	ida_free(&dev->mr_ida, mw->idx);
	return 0;
}
