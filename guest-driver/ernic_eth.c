// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ERNIC Ethernet path: the net_device for the non-RoCE traffic (ARP, IP)
 * that ERNIC hands to its separate AXI-Stream ports (PG332 p.8). The
 * emulated board puts them behind two descriptor rings in BAR4 with MSI-X
 * vector 1 (docs/engine.md, "Ethernet path").
 *
 * Frames are copied through per-slot DMA buffers: the path carries ARP,
 * rdma_cm's IP-level address resolution and management traffic, not the
 * RDMA data, which goes through the RoCE engine.
 */

#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/dma-mapping.h>
#include <linux/if_vlan.h>

#include "ernic.h"

/* INTSTS causes the driver takes; a device without STATUS ignores [2]. */
#define ERNIC_ETH_INTS	(ERNIC_ETH_INT_TX | ERNIC_ETH_INT_RX | \
			 ERNIC_ETH_INT_LINK)

struct ernic_netdev_priv {
	struct ernic_dev *dev;
};

static struct ernic_dev *ernic_from_netdev(struct net_device *nd)
{
	return ((struct ernic_netdev_priv *)netdev_priv(nd))->dev;
}

static void *ernic_desc(struct ernic_eth_ring *r, u32 i)
{
	return r->desc + i * ERNIC_ETH_DESC_SIZE;
}

static int ernic_ring_alloc(struct ernic_dev *dev, struct ernic_eth_ring *r)
{
	struct device *d = &dev->pdev->dev;
	u32 i;

	r->desc = dma_alloc_coherent(d, ERNIC_ETH_RING_SIZE *
				     ERNIC_ETH_DESC_SIZE, &r->desc_dma,
				     GFP_KERNEL);
	r->buf = dma_alloc_coherent(d, ERNIC_ETH_RING_SIZE *
				    ERNIC_ETH_BUF_SIZE, &r->buf_dma, GFP_KERNEL);
	if (!r->desc || !r->buf)
		return -ENOMEM;
	for (i = 0; i < ERNIC_ETH_RING_SIZE; i++) {
		u8 *p = ernic_desc(r, i);

		memset(p, 0, ERNIC_ETH_DESC_SIZE);
		put_unaligned_le64(r->buf_dma + (u64)i * ERNIC_ETH_BUF_SIZE,
				   p + ERNIC_ETH_DESC_ADDR);
	}
	r->head = 0;
	r->tail = 0;
	return 0;
}

static void ernic_ring_free(struct ernic_dev *dev, struct ernic_eth_ring *r)
{
	struct device *d = &dev->pdev->dev;

	if (r->desc)
		dma_free_coherent(d, ERNIC_ETH_RING_SIZE * ERNIC_ETH_DESC_SIZE,
				  r->desc, r->desc_dma);
	if (r->buf)
		dma_free_coherent(d, ERNIC_ETH_RING_SIZE * ERNIC_ETH_BUF_SIZE,
				  r->buf, r->buf_dma);
	r->desc = NULL;
	r->buf = NULL;
}

/* Post one receive buffer: its capacity in the length field. */
static void ernic_rx_post(struct ernic_dev *dev, u32 i)
{
	u8 *p = ernic_desc(&dev->rx, i);

	put_unaligned_le16(ERNIC_ETH_BUF_SIZE, p + ERNIC_ETH_DESC_LEN);
	put_unaligned_le16(0, p + ERNIC_ETH_DESC_FLAGS);
}

static void ernic_tx_reap(struct ernic_dev *dev)
{
	struct net_device *nd = dev->netdev;
	struct ernic_eth_ring *r = &dev->tx;
	u32 ci = ernic_eth_rd(dev, ERNIC_ETH_TXCI) % ERNIC_ETH_RING_SIZE;

	spin_lock(&dev->tx_lock);
	while (r->tail != ci) {
		u8 *p = ernic_desc(r, r->tail);
		u16 flags = get_unaligned_le16(p + ERNIC_ETH_DESC_FLAGS);

		if (flags & ERNIC_ETH_DESC_ERR) {
			nd->stats.tx_errors++;
		} else {
			nd->stats.tx_packets++;
			nd->stats.tx_bytes +=
				get_unaligned_le16(p + ERNIC_ETH_DESC_LEN);
		}
		r->tail = (r->tail + 1) % ERNIC_ETH_RING_SIZE;
	}
	if (netif_queue_stopped(nd))
		netif_wake_queue(nd);
	spin_unlock(&dev->tx_lock);
}

static int ernic_rx_poll(struct napi_struct *napi, int budget)
{
	struct ernic_dev *dev = container_of(napi, struct ernic_dev, napi);
	struct net_device *nd = dev->netdev;
	struct ernic_eth_ring *r = &dev->rx;
	int done = 0;

	ernic_tx_reap(dev);
	while (done < budget) {
		u8 *p = ernic_desc(r, r->tail);
		u16 flags = get_unaligned_le16(p + ERNIC_ETH_DESC_FLAGS);
		u16 len = get_unaligned_le16(p + ERNIC_ETH_DESC_LEN);
		struct sk_buff *skb;

		if (!(flags & ERNIC_ETH_DESC_DONE))
			break;
		dma_rmb();
		if ((flags & ERNIC_ETH_DESC_ERR) || len < ETH_HLEN ||
		    len > ERNIC_ETH_BUF_SIZE) {
			nd->stats.rx_errors++;
		} else {
			skb = napi_alloc_skb(napi, len);
			if (skb) {
				skb_put_data(skb, r->buf + (size_t)r->tail *
					     ERNIC_ETH_BUF_SIZE, len);
				skb->protocol = eth_type_trans(skb, nd);
				nd->stats.rx_packets++;
				nd->stats.rx_bytes += len;
				napi_gro_receive(napi, skb);
			} else {
				nd->stats.rx_dropped++;
			}
		}
		/* The slot goes back to the device behind the others. */
		ernic_rx_post(dev, r->tail);
		r->tail = (r->tail + 1) % ERNIC_ETH_RING_SIZE;
		r->head = (r->head + 1) % ERNIC_ETH_RING_SIZE;
		dma_wmb();
		ernic_eth_wr(dev, ERNIC_ETH_RXPI, r->head);
		done++;
	}
	if (done < budget && napi_complete_done(napi, done))
		ernic_eth_wr(dev, ERNIC_ETH_INTEN, ERNIC_ETH_INTS);
	return done;
}

/*
 * The board MAC's link, BAR4 STATUS (set_link on the host); a device
 * without the register reads 0 there, and its link is always up.
 */
static bool ernic_link_up(struct ernic_dev *dev)
{
	u32 st = ernic_eth_rd(dev, ERNIC_ETH_STATUS);

	return !(st & ERNIC_ETH_STATUS_VALID) ||
	       (st & ERNIC_ETH_STATUS_LINK_UP);
}

/*
 * The carrier, and with it the RoCE port's state (ernic_query_port),
 * follows the link; RDMA consumers hear of it as IB_EVENT_PORT_ERR and
 * IB_EVENT_PORT_ACTIVE, as rxe's do when its netdev goes down or up.
 */
static void ernic_link_work(struct work_struct *w)
{
	struct ernic_dev *dev = container_of(w, struct ernic_dev, link_work);
	bool up = ernic_link_up(dev);
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = 1,
		.event = up ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	if (up == netif_carrier_ok(dev->netdev))
		return;
	if (up)
		netif_carrier_on(dev->netdev);
	else
		netif_carrier_off(dev->netdev);
	netdev_info(dev->netdev, "link %s\n", up ? "up" : "down");
	if (dev->ib_registered)
		ib_dispatch_event(&ev);
}

irqreturn_t ernic_eth_irq(int irq, void *data)
{
	struct ernic_dev *dev = data;
	/* The board interrupt: the ImmDt DMA shares it (docs/immdt.md). */
	bool imm = ernic_immdt_irq(dev);
	u32 sts = ernic_eth_rd(dev, ERNIC_ETH_INTSTS);

	if (!sts)
		return imm ? IRQ_HANDLED : IRQ_NONE;
	ernic_eth_wr(dev, ERNIC_ETH_INTSTS, sts);
	ernic_eth_wr(dev, ERNIC_ETH_INTEN, 0);
	if (sts & ERNIC_ETH_INT_LINK)
		schedule_work(&dev->link_work);
	napi_schedule(&dev->napi);
	return IRQ_HANDLED;
}

static netdev_tx_t ernic_start_xmit(struct sk_buff *skb,
				    struct net_device *nd)
{
	struct ernic_dev *dev = ernic_from_netdev(nd);
	struct ernic_eth_ring *r = &dev->tx;
	unsigned int len = skb->len;
	u32 next;
	u8 *p;

	if (len > ERNIC_ETH_BUF_SIZE) {
		nd->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	spin_lock_bh(&dev->tx_lock);
	next = (r->head + 1) % ERNIC_ETH_RING_SIZE;
	if (next == r->tail) {
		netif_stop_queue(nd);
		spin_unlock_bh(&dev->tx_lock);
		return NETDEV_TX_BUSY;
	}
	skb_copy_bits(skb, 0, r->buf + (size_t)r->head * ERNIC_ETH_BUF_SIZE,
		      len);
	p = ernic_desc(r, r->head);
	put_unaligned_le16(len, p + ERNIC_ETH_DESC_LEN);
	put_unaligned_le16(0, p + ERNIC_ETH_DESC_FLAGS);
	r->head = next;
	dma_wmb();
	ernic_eth_wr(dev, ERNIC_ETH_TXPI, r->head);
	if ((r->head + 1) % ERNIC_ETH_RING_SIZE == r->tail)
		netif_stop_queue(nd);
	spin_unlock_bh(&dev->tx_lock);
	dev_consume_skb_any(skb);
	return NETDEV_TX_OK;
}

static int ernic_open(struct net_device *nd)
{
	struct ernic_dev *dev = ernic_from_netdev(nd);
	int ret;
	u32 i;

	ret = ernic_ring_alloc(dev, &dev->tx);
	if (!ret)
		ret = ernic_ring_alloc(dev, &dev->rx);
	if (ret)
		goto err;
	for (i = 0; i < ERNIC_ETH_RING_SIZE; i++)
		ernic_rx_post(dev, i);

	ernic_eth_wr(dev, ERNIC_ETH_CTRL, 0);
	ernic_eth_wr(dev, ERNIC_ETH_TXBA, lower_32_bits(dev->tx.desc_dma));
	ernic_eth_wr(dev, ERNIC_ETH_TXBAMSB, upper_32_bits(dev->tx.desc_dma));
	ernic_eth_wr(dev, ERNIC_ETH_TXSZ, ERNIC_ETH_RING_SIZE);
	ernic_eth_wr(dev, ERNIC_ETH_RXBA, lower_32_bits(dev->rx.desc_dma));
	ernic_eth_wr(dev, ERNIC_ETH_RXBAMSB, upper_32_bits(dev->rx.desc_dma));
	ernic_eth_wr(dev, ERNIC_ETH_RXSZ, ERNIC_ETH_RING_SIZE);
	ernic_eth_wr(dev, ERNIC_ETH_TXPI, ernic_eth_rd(dev, ERNIC_ETH_TXCI));
	dev->tx.head = ernic_eth_rd(dev, ERNIC_ETH_TXCI);
	dev->tx.tail = dev->tx.head;
	/* One slot stays empty: RXPI == RXCI means no buffer posted. */
	dev->rx.tail = ernic_eth_rd(dev, ERNIC_ETH_RXCI) % ERNIC_ETH_RING_SIZE;
	dev->rx.head = (dev->rx.tail + ERNIC_ETH_RING_SIZE - 1) %
		       ERNIC_ETH_RING_SIZE;
	ernic_eth_wr(dev, ERNIC_ETH_RXPI, dev->rx.head);

	ret = request_irq(pci_irq_vector(dev->pdev, ERNIC_MSIX_VEC_ETH),
			  ernic_eth_irq, 0, "ernic-eth", dev);
	if (ret)
		goto err;
	napi_enable(&dev->napi);
	ernic_eth_wr(dev, ERNIC_ETH_INTEN, ERNIC_ETH_INTS);
	/* The link may have changed while the interface was down. */
	schedule_work(&dev->link_work);
	ernic_eth_wr(dev, ERNIC_ETH_CTRL, ERNIC_ETH_CTRL_TX_EN |
		     ERNIC_ETH_CTRL_RX_EN);
	netif_start_queue(nd);
	return 0;

err:
	ernic_ring_free(dev, &dev->tx);
	ernic_ring_free(dev, &dev->rx);
	return ret;
}

static int ernic_stop(struct net_device *nd)
{
	struct ernic_dev *dev = ernic_from_netdev(nd);

	netif_stop_queue(nd);
	ernic_eth_wr(dev, ERNIC_ETH_CTRL, 0);
	ernic_eth_wr(dev, ERNIC_ETH_INTEN, 0);
	napi_disable(&dev->napi);
	free_irq(pci_irq_vector(dev->pdev, ERNIC_MSIX_VEC_ETH), dev);
	ernic_ring_free(dev, &dev->tx);
	ernic_ring_free(dev, &dev->rx);
	return 0;
}

static const struct net_device_ops ernic_netdev_ops = {
	.ndo_open = ernic_open,
	.ndo_stop = ernic_stop,
	.ndo_start_xmit = ernic_start_xmit,
	.ndo_validate_addr = eth_validate_addr,
};

int ernic_eth_register(struct ernic_dev *dev)
{
	struct net_device *nd;
	struct ernic_netdev_priv *priv;
	u8 mac[ETH_ALEN];
	u32 msb, lsb;
	int ret;

	nd = alloc_etherdev(sizeof(*priv));
	if (!nd)
		return -ENOMEM;
	priv = netdev_priv(nd);
	priv->dev = dev;
	dev->netdev = nd;
	spin_lock_init(&dev->tx_lock);
	SET_NETDEV_DEV(nd, &dev->pdev->dev);
	nd->netdev_ops = &ernic_netdev_ops;
	nd->min_mtu = ETH_MIN_MTU;
	nd->max_mtu = ERNIC_ETH_BUF_SIZE - ETH_HLEN - VLAN_HLEN;
	nd->mtu = ETH_DATA_LEN;

	/* The board MAC, strapped into MACXADDMSB/LSB (docs/registers.md). */
	msb = ernic_rd(dev, ERNIC_MACXADDMSB);
	lsb = ernic_rd(dev, ERNIC_MACXADDLSB);
	mac[0] = msb >> 8;
	mac[1] = msb;
	mac[2] = lsb >> 24;
	mac[3] = lsb >> 16;
	mac[4] = lsb >> 8;
	mac[5] = lsb;
	if (!is_valid_ether_addr(mac)) {
		eth_random_addr(mac);
		ernic_wr(dev, ERNIC_MACXADDMSB, mac[0] << 8 | mac[1]);
		ernic_wr(dev, ERNIC_MACXADDLSB, mac[2] << 24 | mac[3] << 16 |
			 mac[4] << 8 | mac[5]);
	}
	eth_hw_addr_set(nd, mac);

	netif_napi_add(nd, &dev->napi, ernic_rx_poll);
	INIT_WORK(&dev->link_work, ernic_link_work);
	ret = register_netdev(nd);
	if (ret) {
		netif_napi_del(&dev->napi);
		free_netdev(nd);
		dev->netdev = NULL;
	}
	return ret;
}

void ernic_eth_unregister(struct ernic_dev *dev)
{
	if (!dev->netdev)
		return;
	unregister_netdev(dev->netdev);
	cancel_work_sync(&dev->link_work);
	netif_napi_del(&dev->napi);
	free_netdev(dev->netdev);
	dev->netdev = NULL;
}
