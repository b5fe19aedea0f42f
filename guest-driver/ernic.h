/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Linux driver for the Xilinx/AMD ERNIC RoCEv2 RNIC (PG332 v3.1), as
 * emulated by QEMU's -device ernic: shared definitions.
 */
#ifndef ERNIC_H
#define ERNIC_H

#include <linux/pci.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>

#include "hw/rdma/ernic_regs.h"

#define ERNIC_DRV_NAME		"ernic"

/* Error buffer and incoming packet error status queue (PG332 ch.6). */
#define ERNIC_ERRBUF_ENTRIES	64
#define ERNIC_ERRBUF_ENTRY_SIZE	256
#define ERNIC_FATALQ_ENTRIES	64

/* Ethernet path rings. */
#define ERNIC_ETH_RING_SIZE	256
#define ERNIC_ETH_BUF_SIZE	2048

struct ernic_eth_ring {
	void *desc;			/* ERNIC_ETH_DESC_SIZE each */
	dma_addr_t desc_dma;
	void *buf;			/* ERNIC_ETH_BUF_SIZE each */
	dma_addr_t buf_dma;
	u32 head;			/* next slot software posts */
	u32 tail;			/* next slot software reaps */
};

struct ernic_dev {
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

	/* Ethernet path: the net_device */
	struct net_device *netdev;
	struct napi_struct napi;
	struct ernic_eth_ring tx;
	struct ernic_eth_ring rx;
	spinlock_t tx_lock;		/* tx.head */
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

int ernic_eth_register(struct ernic_dev *dev);
void ernic_eth_unregister(struct ernic_dev *dev);
irqreturn_t ernic_eth_irq(int irq, void *data);

#endif /* ERNIC_H */
