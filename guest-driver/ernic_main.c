// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Linux driver for the Xilinx/AMD ERNIC RoCEv2 RNIC (PG332 v3.1), as
 * emulated by QEMU's -device ernic: PCI probe and the global
 * configuration of PG332 ch.6 ("ERNIC Software Flow").
 *
 * Only registers PG332 defines are used, plus the Ethernet path of BAR4
 * (docs/engine.md), which plays the role of the DMA engine that carries
 * ERNIC's non-RoCE traffic on a board.
 */

#include <linux/module.h>
#include <linux/interrupt.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/dma-map-ops.h>

#include "ernic.h"

static unsigned int rq_buf_size = 4096;
module_param(rq_buf_size, uint, 0444);
MODULE_PARM_DESC(rq_buf_size,
		 "RQ buffer size of RC QPs in bytes, a multiple of 256 (default 4096): the largest SEND they receive");

/* Per-QP CQ/RQ interrupt banks (PG332 CQINTSTSn/RQINTSTSn, p.38). */
static void ernic_irq_banks(struct ernic_dev *dev, u32 first, bool send)
{
	u32 n, bit;

	for (n = 0; n < ERNIC_INTSTS_BANKS && n * 32 <= dev->num_qp; n++) {
		u32 v = ernic_rd(dev, first + 4 * n);

		if (!v)
			continue;
		ernic_wr(dev, first + 4 * n, v);
		for_each_set_bit(bit, (unsigned long *)&v, 32) {
			u32 qpn = n * 32 + bit;
			struct ernic_qp *qp = NULL;

			/*
			 * destroy_qp takes the QP out of qps[], then waits
			 * for this handler: the QP lives until it returns.
			 */
			spin_lock(&dev->fatal_lock);
			if (qpn <= dev->num_qp)
				qp = dev->qps[qpn];
			spin_unlock(&dev->fatal_lock);
			if (!qp)
				continue;
			if (!send && qp->xrc_tgt)
				ernic_srq_xrc_notify(dev, qp->xrcdn);
			else
				ernic_cq_qp_event(qp, send);
		}
	}
}

/* The ERNIC interrupt (MSI-X vector 0): INTSTS, PG332 p.38. */
static irqreturn_t ernic_irq(int irq, void *data)
{
	struct ernic_dev *dev = data;
	u32 sts = ernic_rd(dev, ERNIC_INTSTS);

	/* ERNIC-X events share the interrupt (docs/extension.md). */
	ernic_srq_irq(dev);
	if (!sts)
		return IRQ_HANDLED;
	ernic_wr(dev, ERNIC_INTSTS, sts);
	if (sts & ERNIC_INT_FATAL)
		ernic_fatalq_process(dev);
	if (sts & ERNIC_INT_WQE_COMPLETION)
		ernic_irq_banks(dev, ERNIC_CQINTSTS1, true);
	if (sts & (ERNIC_INT_RQ_PKT_RECEIVED | ERNIC_INT_MAD_RECEIVED))
		ernic_irq_banks(dev, ERNIC_RQINTSTS1, false);
	return IRQ_HANDLED;
}

/*
 * C_NUM_QP is a synthesis parameter (PG332 Table 2-6, 8 to 256) that no
 * register reports; the QP blocks beyond it do not exist. The highest QP
 * whose QDEPTHi keeps a value is the last one.
 */
static bool ernic_qp_exists(struct ernic_dev *dev, u32 qpn)
{
	u32 old = ernic_qrd(dev, qpn, ERNIC_QDEPTH);
	bool ok;

	ernic_qwr(dev, qpn, ERNIC_QDEPTH, 0x00040004);
	ok = ernic_qrd(dev, qpn, ERNIC_QDEPTH) == 0x00040004;
	ernic_qwr(dev, qpn, ERNIC_QDEPTH, old);
	return ok;
}

static u32 ernic_find_num_qp(struct ernic_dev *dev)
{
	u32 lo = 8, hi = ERNIC_NUM_QP_MAX;

	if (!ernic_qp_exists(dev, lo))
		return 0;
	while (lo < hi) {
		u32 mid = (lo + hi + 1) / 2;

		if (ernic_qp_exists(dev, mid))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * PG332 ch.6 "Global configuration": error buffer, status queue,
 * interrupts, the doorbell words, then XRNICCONF (number of QPs, UDP
 * source port, error buffer enable, ERNIC enable). The MAC is the one in
 * MACXADDMSB/LSB at reset (the board's; docs/registers.md); the IP
 * addresses follow the port's GIDs (ernic_add_gid()).
 */
static int ernic_global_init(struct ernic_dev *dev)
{
	struct device *d = &dev->pdev->dev;

	dev->errbuf = dma_alloc_coherent(d, ERNIC_ERRBUF_ENTRIES *
					 ERNIC_ERRBUF_ENTRY_SIZE,
					 &dev->errbuf_dma, GFP_KERNEL);
	dev->fatalq = dma_alloc_coherent(d, ERNIC_FATALQ_ENTRIES *
					 ERNIC_IPKTERRQ_ENTRY_SIZE,
					 &dev->fatalq_dma, GFP_KERNEL);
	dev->db = dma_alloc_coherent(d, ERNIC_DB_SIZE, &dev->db_dma,
				     GFP_KERNEL);
	if (!dev->errbuf || !dev->fatalq || !dev->db)
		return -ENOMEM;

	ernic_wr(dev, ERNIC_ERRBUFBA, lower_32_bits(dev->errbuf_dma));
	ernic_wr(dev, ERNIC_ERRBUFBAMSB, upper_32_bits(dev->errbuf_dma));
	ernic_wr(dev, ERNIC_ERRBUFSZ, ERNIC_ERRBUF_ENTRY_SIZE << 16 |
		 ERNIC_ERRBUF_ENTRIES);
	ernic_wr(dev, ERNIC_IPKTERRQBA, lower_32_bits(dev->fatalq_dma));
	ernic_wr(dev, ERNIC_IPKTERRQBAMSB, upper_32_bits(dev->fatalq_dma));
	ernic_wr(dev, ERNIC_IPKTERRQSZ, ERNIC_FATALQ_ENTRIES);
	dev->fatalq_ci = ernic_rd(dev, ERNIC_IPKTERRQWPTR) %
			 ERNIC_FATALQ_ENTRIES;
	ernic_ext_init(dev);
	ernic_srq_init(dev);
	if (ernic_immdt_init(dev))
		return -ENOMEM;
	ernic_wr(dev, ERNIC_INTSTS, ERNIC_INT_ALL);
	ernic_wr(dev, ERNIC_INTEN, ERNIC_INT_FATAL | ERNIC_INT_WQE_COMPLETION |
		 ERNIC_INT_RQ_PKT_RECEIVED | ERNIC_INT_MAD_RECEIVED);
	ernic_wr(dev, ERNIC_XRNICCONF, ERNIC_XRNICCONF_EN |
		 ERNIC_XRNICCONF_ERRBUF_EN |
		 FIELD_PREP(ERNIC_XRNICCONF_NUMQP_MASK, dev->num_qp - 1) |
		 FIELD_PREP(ERNIC_XRNICCONF_UDPSRC_MASK, ERNIC_UDP_SPORT));
	return 0;
}

static void ernic_global_fini(struct ernic_dev *dev)
{
	struct device *d = &dev->pdev->dev;

	ernic_wr(dev, ERNIC_INTEN, 0);
	ernic_wr(dev, ERNIC_XRNICCONF, 0);
	ernic_immdt_fini(dev);
	if (dev->errbuf)
		dma_free_coherent(d, ERNIC_ERRBUF_ENTRIES *
				  ERNIC_ERRBUF_ENTRY_SIZE, dev->errbuf,
				  dev->errbuf_dma);
	if (dev->fatalq)
		dma_free_coherent(d, ERNIC_FATALQ_ENTRIES *
				  ERNIC_IPKTERRQ_ENTRY_SIZE, dev->fatalq,
				  dev->fatalq_dma);
	if (dev->db)
		dma_free_coherent(d, ERNIC_DB_SIZE, dev->db, dev->db_dma);
}

static int ernic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct ernic_dev *dev;
	int ret;

	if (rq_buf_size < 256 || rq_buf_size % 256 ||
	    rq_buf_size / 256 > 0xffff) {
		dev_err(&pdev->dev, "rq_buf_size=%u: must be a multiple of 256 up to 16 MiB\n",
			rq_buf_size);
		return -EINVAL;
	}
	dev = ib_alloc_device(ernic_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	dev->pdev = pdev;
	dev->rq_buf_size = rq_buf_size;
	spin_lock_init(&dev->lock);
	spin_lock_init(&dev->fatal_lock);
	mutex_init(&dev->swo_mutex);
	mutex_init(&dev->mr_mutex);
	mutex_init(&dev->mc_mutex);
	ida_init(&dev->mr_ida);
	ida_init(&dev->ah_ida);
	ida_init(&dev->xrcd_ida);
	spin_lock_init(&dev->ah_lock);
	pci_set_drvdata(pdev, dev);

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_free;
	ret = pcim_iomap_regions(pdev, BIT(ERNIC_BAR_REGS) | BIT(ERNIC_BAR_ETH),
				 ERNIC_DRV_NAME);
	if (ret) {
		dev_err(&pdev->dev, "cannot map BARs: %d\n", ret);
		goto err_free;
	}
	dev->regs = pcim_iomap_table(pdev)[ERNIC_BAR_REGS];
	dev->eth = pcim_iomap_table(pdev)[ERNIC_BAR_ETH];
	if (pci_resource_len(pdev, ERNIC_BAR_REGS) < ERNIC_REG_WINDOW_SIZE ||
	    ernic_eth_rd(dev, ERNIC_ETH_ID) != ERNIC_ETH_ID_VALUE) {
		dev_err(&pdev->dev, "not an ERNIC register window\n");
		ret = -ENODEV;
		goto err_free;
	}
	dev->num_qp = ernic_find_num_qp(dev);
	if (!dev->num_qp) {
		dev_err(&pdev->dev, "no QP blocks found\n");
		ret = -ENODEV;
		goto err_free;
	}
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_free;
	ret = pci_alloc_irq_vectors(pdev, ERNIC_MSIX_VECTORS,
				    ERNIC_MSIX_VECTORS, PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_err(&pdev->dev, "MSI-X: %d\n", ret);
		goto err_free;
	}
	ret = ernic_global_init(dev);
	if (ret)
		goto err_global;
	ret = request_irq(pci_irq_vector(pdev, ERNIC_MSIX_VEC_ERNIC), ernic_irq,
			  0, "ernic", dev);
	if (ret)
		goto err_global;
	ret = ernic_eth_register(dev);
	if (ret)
		goto err_eth;
	ret = ernic_ib_register(dev);
	if (ret)
		goto err_ib;
	dev_info(&pdev->dev, "ERNIC (PG332 v3.1), %u QPs, %s on %s\n",
		 dev->num_qp, dev_name(&dev->ibdev.dev),
		 netdev_name(dev->netdev));
	return 0;

err_ib:
	ernic_eth_unregister(dev);
err_eth:
	free_irq(pci_irq_vector(pdev, ERNIC_MSIX_VEC_ERNIC), dev);
err_global:
	ernic_global_fini(dev);
	pci_free_irq_vectors(pdev);
err_free:
	ib_dealloc_device(&dev->ibdev);
	return ret;
}

static void ernic_remove(struct pci_dev *pdev)
{
	struct ernic_dev *dev = pci_get_drvdata(pdev);

	ernic_ib_unregister(dev);
	ernic_eth_unregister(dev);
	free_irq(pci_irq_vector(pdev, ERNIC_MSIX_VEC_ERNIC), dev);
	cancel_work_sync(&dev->srq_work);
	ernic_global_fini(dev);
	pci_free_irq_vectors(pdev);
	ida_destroy(&dev->mr_ida);
	ida_destroy(&dev->ah_ida);
	ida_destroy(&dev->xrcd_ida);
	ib_dealloc_device(&dev->ibdev);
}

static const struct pci_device_id ernic_pci_ids[] = {
	{ PCI_DEVICE(ERNIC_PCI_VENDOR_ID, ERNIC_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, ernic_pci_ids);

static struct pci_driver ernic_pci_driver = {
	.name = ERNIC_DRV_NAME,
	.id_table = ernic_pci_ids,
	.probe = ernic_probe,
	.remove = ernic_remove,
};
module_pci_driver(ernic_pci_driver);

MODULE_DESCRIPTION("Xilinx/AMD ERNIC (PG332 v3.1) RoCEv2 RNIC");
MODULE_LICENSE("GPL");
