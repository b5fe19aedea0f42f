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

#include "ernic.h"

/* The ERNIC interrupt (MSI-X vector 0): INTSTS, PG332 p.38. */
static irqreturn_t ernic_irq(int irq, void *data)
{
	struct ernic_dev *dev = data;
	u32 sts = ernic_rd(dev, ERNIC_INTSTS);

	if (!sts)
		return IRQ_NONE;
	if (sts & ERNIC_INT_FATAL) {
		u32 wptr = ernic_rd(dev, ERNIC_IPKTERRQWPTR);

		/* Incoming packet error status queue, PG332 p.17. */
		while (dev->fatalq_ci != wptr) {
			u32 e = le32_to_cpu(((__le32 *)dev->fatalq)
					    [dev->fatalq_ci * 2]);

			dev_err(&dev->pdev->dev, "QP%u FATAL, code 0x%02x\n",
				e >> 16, e & 0xffff);
			dev->fatalq_ci = (dev->fatalq_ci + 1) %
					 ERNIC_FATALQ_ENTRIES;
		}
	}
	ernic_wr(dev, ERNIC_INTSTS, sts);
	return IRQ_HANDLED;
}

/*
 * PG332 ch.6 "Global configuration": error buffer, status queue,
 * interrupts, local MAC, then XRNICCONF. The MAC is the one in
 * MACXADDMSB/LSB at reset (the board's; docs/registers.md); IP addresses
 * follow the net_device (later, with the GID table).
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
	if (!dev->errbuf || !dev->fatalq)
		return -ENOMEM;

	ernic_wr(dev, ERNIC_ERRBUFBA, lower_32_bits(dev->errbuf_dma));
	ernic_wr(dev, ERNIC_ERRBUFBAMSB, upper_32_bits(dev->errbuf_dma));
	ernic_wr(dev, ERNIC_ERRBUFSZ, ERNIC_ERRBUF_ENTRY_SIZE << 16 |
		 ERNIC_ERRBUF_ENTRIES);
	ernic_wr(dev, ERNIC_IPKTERRQBA, lower_32_bits(dev->fatalq_dma));
	ernic_wr(dev, ERNIC_IPKTERRQBAMSB, upper_32_bits(dev->fatalq_dma));
	ernic_wr(dev, ERNIC_IPKTERRQSZ, ERNIC_FATALQ_ENTRIES);
	dev->fatalq_ci = ernic_rd(dev, ERNIC_IPKTERRQWPTR);
	ernic_wr(dev, ERNIC_INTEN, ERNIC_INT_FATAL);
	return 0;
}

static void ernic_global_fini(struct ernic_dev *dev)
{
	struct device *d = &dev->pdev->dev;

	ernic_wr(dev, ERNIC_INTEN, 0);
	ernic_wr(dev, ERNIC_XRNICCONF, 0);
	if (dev->errbuf)
		dma_free_coherent(d, ERNIC_ERRBUF_ENTRIES *
				  ERNIC_ERRBUF_ENTRY_SIZE, dev->errbuf,
				  dev->errbuf_dma);
	if (dev->fatalq)
		dma_free_coherent(d, ERNIC_FATALQ_ENTRIES *
				  ERNIC_IPKTERRQ_ENTRY_SIZE, dev->fatalq,
				  dev->fatalq_dma);
}

static int ernic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct ernic_dev *dev;
	int ret;

	dev = devm_kzalloc(&pdev->dev, sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	dev->pdev = pdev;
	pci_set_drvdata(pdev, dev);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(ERNIC_BAR_REGS) | BIT(ERNIC_BAR_ETH),
				 ERNIC_DRV_NAME);
	if (ret) {
		dev_err(&pdev->dev, "cannot map BARs: %d\n", ret);
		return ret;
	}
	dev->regs = pcim_iomap_table(pdev)[ERNIC_BAR_REGS];
	dev->eth = pcim_iomap_table(pdev)[ERNIC_BAR_ETH];
	if (pci_resource_len(pdev, ERNIC_BAR_REGS) < ERNIC_REG_WINDOW_SIZE ||
	    ernic_eth_rd(dev, ERNIC_ETH_ID) != ERNIC_ETH_ID_VALUE) {
		dev_err(&pdev->dev, "not an ERNIC register window\n");
		return -ENODEV;
	}
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	ret = pci_alloc_irq_vectors(pdev, ERNIC_MSIX_VECTORS,
				    ERNIC_MSIX_VECTORS, PCI_IRQ_MSIX);
	if (ret < 0) {
		dev_err(&pdev->dev, "MSI-X: %d\n", ret);
		return ret;
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
	dev_info(&pdev->dev, "ERNIC (PG332 v3.1), Ethernet path %s\n",
		 netdev_name(dev->netdev));
	return 0;

err_eth:
	free_irq(pci_irq_vector(pdev, ERNIC_MSIX_VEC_ERNIC), dev);
err_global:
	ernic_global_fini(dev);
	pci_free_irq_vectors(pdev);
	return ret;
}

static void ernic_remove(struct pci_dev *pdev)
{
	struct ernic_dev *dev = pci_get_drvdata(pdev);

	ernic_eth_unregister(dev);
	free_irq(pci_irq_vector(pdev, ERNIC_MSIX_VEC_ERNIC), dev);
	ernic_global_fini(dev);
	pci_free_irq_vectors(pdev);
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
