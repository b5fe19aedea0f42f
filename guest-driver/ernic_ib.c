// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ERNIC ib_device: device and port queries, PDs, address handles, the
 * GID hooks that program the device's own IP address, and registration
 * with the RDMA core. MRs are in ernic_mr.c.
 *
 * The port is RoCEv2 only. Its GID table is the RDMA core's: the net_device
 * of the Ethernet path is the port's netdev, so the core adds a GID for
 * each of its IPv4 and IPv6 addresses (docs/driver.md).
 */

#include <linux/etherdevice.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "ernic.h"

static bool rw_mr = true;
module_param(rw_mr, bool, 0444);
MODULE_PARM_DESC(rw_mr,
		 "let rdma_rw read more than four pages through one MR, an MR per RDMA context of every QP (default on)");

static int ernic_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *a, struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	addrconf_addr_eui48((u8 *)&a->sys_image_guid, dev->netdev->dev_addr);
	a->fw_ver = ERNIC_PCI_REVISION;
	a->max_mr_size = ERNIC_DMA_MR_LEN;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = ERNIC_PCI_VENDOR_ID;
	a->vendor_part_id = ERNIC_PCI_DEVICE_ID;
	a->hw_ver = ERNIC_PCI_REVISION;
	a->max_qp = dev->num_qp - 1;		/* QP1 is the GSI QP */
	a->max_qp_wr = ERNIC_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN;
	a->kernel_cap_flags = IBK_LOCAL_DMA_LKEY;
	/* PG332 Table 2-1: one LADDR; ERNIC-X keyed SGEs: four. */
	a->max_send_sge = dev->ext & ERNIC_EXT_F_XWQE ? ERNIC_XWQE_SGES : 1;
	a->max_recv_sge = ERNIC_MAX_RECV_SGE;
	a->max_sge_rd = ERNIC_MAX_RW_SGE;	/* a WQE per SGE */
	a->max_cq = dev->num_qp * 2;
	a->max_cqe = ERNIC_MAX_CQE;
	a->max_mr = dev->mr_max;
	a->max_pd = ERNIC_PDT_ENTRIES;
	a->max_qp_rd_atom = ERNIC_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = ERNIC_MAX_RD_ATOM;
	a->max_res_rd_atom = ERNIC_MAX_RD_ATOM * dev->num_qp;
	/* ERNIC-X atomics are whole between the device's own accesses. */
	a->atomic_cap = dev->ext & ERNIC_EXT_F_ATOMIC ? IB_ATOMIC_HCA :
							IB_ATOMIC_NONE;
	if (dev->ext & ERNIC_EXT_F_FRWR) {
		a->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
		a->max_fast_reg_page_list_len = ERNIC_MAX_FR_PAGES;
		/*
		 * rdma_rw reads more than max_sge_rd pages through one MR:
		 * one READ instead of one per four pages. Its MR pools need
		 * a table larger than PG332's (docs/driver.md, "RDMA READ
		 * through an MR").
		 */
		if (rw_mr && dev->mr_max >= ERNIC_RW_MR_MIN)
			a->max_sgl_rd = ERNIC_MAX_RW_SGE;
	}
	if (dev->ext & ERNIC_EXT_F_MW) {
		/* Windows of type 1 and 2B, entries of the extended table. */
		a->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
				       IB_DEVICE_MEM_WINDOW_TYPE_2B;
		a->max_mw = dev->mr_max;
	}
	if (dev->ext & ERNIC_EXT_F_SRQ) {
		/* max_wr grows within the ring (ernic_modify_srq()) */
		a->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
		/* XRC domains, XRC SRQs, initiator and target QPs. */
		if (dev->ext & ERNIC_EXT_F_XRC)
			a->device_cap_flags |= IB_DEVICE_XRC;
		a->max_srq = ERNIC_SRQ_NUM;
		a->max_srq_wr = ERNIC_MAX_SRQ_WR;
		a->max_srq_sge = ERNIC_MAX_RECV_SGE;
	}
	if (dev->ext & ERNIC_EXT_F_MCAST) {
		a->max_mcast_grp = ERNIC_MCG_ENTRIES;
		a->max_mcast_qp_attach = dev->num_qp - 1;
		a->max_total_mcast_qp_attach = ERNIC_MCG_ENTRIES *
					       (dev->num_qp - 1);
	}
	a->max_ah = INT_MAX;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	return 0;
}

static int ernic_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *a)
{
	struct ernic_dev *dev = to_edev(ibdev);
	struct net_device *nd = dev->netdev;
	bool up = netif_running(nd) && netif_carrier_ok(nd);

	/* ib_query_port() has zeroed *a. */
	a->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	a->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
			     IB_PORT_PHYS_STATE_DISABLED;
	a->max_mtu = IB_MTU_4096;
	/* iboe_get_mtu() gives the enum: the largest IB MTU that fits. */
	a->active_mtu = iboe_get_mtu(nd->mtu);
	a->gid_tbl_len = ERNIC_GID_TBL_LEN;
	a->port_cap_flags = IB_PORT_CM_SUP;
	a->max_msg_sz = ERNIC_MAX_MSG_SIZE;
	a->pkey_tbl_len = 1;
	a->bad_pkey_cntr = 0;
	a->qkey_viol_cntr = 0;
	return ib_get_eth_speed(ibdev, port, &a->active_speed,
				&a->active_width);
}

static int ernic_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *im)
{
	struct ib_port_attr a = {};
	int ret;

	ret = ib_query_port(ibdev, port, &a);
	if (ret)
		return ret;
	im->pkey_tbl_len = a.pkey_tbl_len;
	im->gid_tbl_len = a.gid_tbl_len;
	im->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer ernic_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int ernic_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/*
 * ERNIC has one IPv4 address (IPv4XADD) and one IPv6 address
 * (IPv6XADD1-4), PG332 p.33, and drops RoCE frames sent to any other
 * (Table 2-3 bit 8). The GID hooks keep them equal to the port's
 * RoCEv2 GIDs: the latest IPv4 GID, and the latest IPv6 GID, a link-local
 * one only while there is no other.
 */
int ernic_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct ernic_dev *dev = to_edev(attr->device);
	const u8 *g = attr->gid.raw;
	int i;

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return 0;
	if (ipv6_addr_v4mapped((const struct in6_addr *)g)) {
		ernic_wr(dev, ERNIC_IPv4XADD, get_unaligned_be32(g + 12));
		return 0;
	}
	if (ipv6_addr_type((const struct in6_addr *)g) &
	    IPV6_ADDR_LINKLOCAL && ernic_rd(dev, ERNIC_IPv6XADD4))
		return 0;
	/* IPv6XADD4 holds address bits [127:96] (PG332 p.33). */
	for (i = 0; i < 4; i++)
		ernic_wr(dev, ERNIC_IPv6XADD4 - 4 * i,
			 get_unaligned_be32(g + 4 * i));
	return 0;
}

int ernic_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return 0;
}

/* The address vector of an AH or a connected QP's path. */
int ernic_av_from_attr(struct ernic_dev *dev, const struct rdma_ah_attr *ah,
		       struct ernic_av *av)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid;

	if (!(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
	    ah->type != RDMA_AH_ATTR_TYPE_ROCE) {
		ibdev_dbg(&dev->ibdev, "AV without a RoCE GRH\n");
		return -EINVAL;
	}
	grh = rdma_ah_read_grh(ah);
	sgid = grh->sgid_attr;
	if (!sgid || sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		ibdev_dbg(&dev->ibdev, "AV source GID is not RoCEv2\n");
		return -EINVAL;
	}
	memset(av, 0, sizeof(*av));
	av->ipv6 = !ipv6_addr_v4mapped((const struct in6_addr *)sgid->gid.raw);
	if (av->ipv6 == ipv6_addr_v4mapped((const struct in6_addr *)
					   grh->dgid.raw)) {
		ibdev_dbg(&dev->ibdev, "AV mixes IPv4 and IPv6\n");
		return -EINVAL;
	}
	memcpy(av->sip, sgid->gid.raw, 16);
	memcpy(av->dip, grh->dgid.raw, 16);
	memcpy(av->dmac, ah->roce.dmac, ETH_ALEN);
	av->hop_limit = grh->hop_limit;
	av->tclass = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->sgid_index = sgid->index;
	return 0;
}

/*
 * The attributes that gave @av, whole: what query_qp and query_ah return
 * must be taken back by modify_qp and create_ah (port and source GID
 * included), as ibv_query_qp(3) users do when they restate a QP.
 */
void ernic_av_to_attr(const struct ernic_av *av, struct rdma_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, (union ib_gid *)av->dip, av->flow_label,
			av->sgid_index, av->hop_limit, av->tclass);
	memcpy(ah->roce.dmac, av->dmac, ETH_ALEN);
}

static int ernic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibpd->device);
	struct ernic_pd *pd = to_epd(ibpd);
	u32 n;

	spin_lock(&dev->lock);
	n = find_first_zero_bit(dev->pd_map, ERNIC_PDT_ENTRIES);
	if (n < ERNIC_PDT_ENTRIES)
		__set_bit(n, dev->pd_map);
	spin_unlock(&dev->lock);
	if (n >= ERNIC_PDT_ENTRIES)
		return -ENOMEM;
	pd->pdn = n;
	return 0;
}

static int ernic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibpd->device);

	spin_lock(&dev->lock);
	__clear_bit(to_epd(ibpd)->pdn, dev->pd_map);
	spin_unlock(&dev->lock);
	return 0;
}

/*
 * Entry @idx of the ERNIC-X AH table (docs/extension.md, "UD QPs") from
 * @av, of PD @pdn; valid or not. The window is one for the device.
 */
static void ernic_ah_program(struct ernic_dev *dev, u32 idx,
			     const struct ernic_av *av, u32 pdn, bool valid)
{
	unsigned long flags;
	int i;

	spin_lock_irqsave(&dev->ah_lock, flags);
	ernic_wr(dev, ERNIC_AHIDX, idx);
	ernic_wr(dev, ERNIC_AHPD, pdn);
	ernic_wr(dev, ERNIC_AHMACMSB, get_unaligned_be16(av->dmac));
	ernic_wr(dev, ERNIC_AHMACLSB, get_unaligned_be32(av->dmac + 2));
	if (av->ipv6) {
		for (i = 0; i < 4; i++)
			ernic_wr(dev, ERNIC_AHIP4 - 4 * i,
				 get_unaligned_be32(av->dip + 4 * i));
	} else {
		ernic_wr(dev, ERNIC_AHIP1, get_unaligned_be32(av->dip + 12));
	}
	ernic_wr(dev, ERNIC_AHCONF,
		 FIELD_PREP(ERNIC_AHCONF_TTL_MASK,
			    av->hop_limit ? av->hop_limit : 64) |
		 FIELD_PREP(ERNIC_AHCONF_TCLASS_MASK, av->tclass) |
		 (av->ipv6 ? ERNIC_AHCONF_IPV6 : 0) |
		 (valid ? ERNIC_AHCONF_VALID : 0));
	ernic_wr(dev, ERNIC_AHCMD, ERNIC_AHCMD_WRITE);
	spin_unlock_irqrestore(&dev->ah_lock, flags);
}

/*
 * An AH: its address vector (QP1 builds its frames from it), and with
 * ERNIC-X UD an entry of the device's table, which UD WQEs name by index
 * and the device checks against the QP's PD. A process learns the index
 * from the answer (struct ernic_create_ah_resp).
 */
static int ernic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			   struct ib_udata *udata)
{
	struct ernic_dev *dev = to_edev(ibah->device);
	struct ernic_ah *ah = to_eah(ibah);
	struct ernic_create_ah_resp resp = {};
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							    GFP_ATOMIC;
	int ret = ernic_av_from_attr(dev, init->ah_attr, &ah->av);

	ah->idx = -1;
	if (ret || !(dev->ext & ERNIC_EXT_F_UD))
		return ret;
	ah->idx = ida_alloc_max(&dev->ah_ida, ERNIC_AH_ENTRIES - 1, gfp);
	if (ah->idx < 0)
		return ah->idx;
	ernic_ah_program(dev, ah->idx, &ah->av, to_epd(ibah->pd)->pdn, true);
	if (udata && udata->outlen) {
		resp.idx = ah->idx;
		return ib_copy_to_udata(udata, &resp,
					min(udata->outlen, sizeof(resp)));
	}
	return 0;
}

static int ernic_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct ernic_ah *ah = container_of(ibah, struct ernic_ah, ibah);

	ernic_av_to_attr(&ah->av, attr);
	return 0;
}

/*
 * A UD WQE names its AH by table index and the device reads the entry
 * as it sends (docs/extension.md, "UD QPs"). Hardware that copies the
 * address into the WQE lets an AH go as soon as the sends naming it are
 * posted, and mckey, for one, destroys its AH right after posting: its
 * WQEs then failed (FATAL 0x05) in one burst of three. So, when it may
 * sleep, the destroy first gives the UD QPs of the AH's PD up to 100 ms
 * to send what they were given (CQHEADi = SQPIi), as a UD QP's destroy
 * does (ernic_qp_drain_unreliable()). QPs are named by number: a QP
 * destroyed meanwhile only makes its registers read equal.
 */
static void ernic_ah_drain(struct ernic_dev *dev, struct ib_pd *pd)
{
	unsigned long end = jiffies + msecs_to_jiffies(100), flags;
	DECLARE_BITMAP(busy, ERNIC_NUM_QP_MAX + 1);
	struct ernic_qp *qp;
	u32 q;

	bitmap_zero(busy, ERNIC_NUM_QP_MAX + 1);
	spin_lock_irqsave(&dev->fatal_lock, flags);
	for (q = 2; q <= dev->num_qp; q++) {
		qp = dev->qps[q];
		if (qp && qp->ud && qp->ibqp.pd == pd)
			__set_bit(q, busy);
	}
	spin_unlock_irqrestore(&dev->fatal_lock, flags);
	for_each_set_bit(q, busy, ERNIC_NUM_QP_MAX + 1)
		ernic_qp_wait_sent(dev, q, end);
}

/* Its table entry invalid: a UD WQE still naming it is refused. */
static int ernic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct ernic_dev *dev = to_edev(ibah->device);
	struct ernic_ah *ah = to_eah(ibah);

	if (ah->idx >= 0) {
		if (flags & RDMA_DESTROY_AH_SLEEPABLE)
			ernic_ah_drain(dev, ibah->pd);
		ernic_ah_program(dev, ah->idx, &ah->av, 0, false);
		ida_free(&dev->ah_ida, ah->idx);
	}
	return 0;
}

static const struct ib_device_ops ernic_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = ERNIC_UVERBS_ABI_VERSION,

	.add_gid = ernic_add_gid,
	.alloc_mr = ernic_alloc_mr,
	.alloc_mw = ernic_alloc_mw,
	.alloc_pd = ernic_alloc_pd,
	.alloc_xrcd = ernic_alloc_xrcd,
	.alloc_ucontext = ernic_alloc_ucontext,
	.attach_mcast = ernic_attach_mcast,
	.create_ah = ernic_create_ah,
	.create_user_ah = ernic_create_ah,
	.create_cq = ernic_create_cq,
	.create_qp = ernic_create_qp,
	.create_srq = ernic_create_srq,
	.dealloc_mw = ernic_dealloc_mw,
	.dealloc_pd = ernic_dealloc_pd,
	.dealloc_xrcd = ernic_dealloc_xrcd,
	.dealloc_ucontext = ernic_dealloc_ucontext,
	.del_gid = ernic_del_gid,
	.dereg_mr = ernic_dereg_mr,
	.destroy_ah = ernic_destroy_ah,
	.destroy_cq = ernic_destroy_cq,
	.destroy_qp = ernic_destroy_qp,
	.destroy_srq = ernic_destroy_srq,
	.detach_mcast = ernic_detach_mcast,
	.get_dma_mr = ernic_get_dma_mr,
	.get_link_layer = ernic_get_link_layer,
	.get_port_immutable = ernic_get_port_immutable,
	.map_mr_sg = ernic_map_mr_sg,
	.mmap = ernic_mmap,
	.mmap_free = ernic_mmap_free,
	.modify_qp = ernic_modify_qp,
	.modify_srq = ernic_modify_srq,
	.poll_cq = ernic_poll_cq,
	.post_recv = ernic_post_recv,
	.post_send = ernic_post_send,
	.post_srq_recv = ernic_post_srq_recv,
	.query_ah = ernic_query_ah,
	.query_device = ernic_query_device,
	.query_pkey = ernic_query_pkey,
	.query_port = ernic_query_port,
	.query_qp = ernic_query_qp,
	.query_srq = ernic_query_srq,
	.reg_user_mr = ernic_reg_user_mr,
	.req_notify_cq = ernic_req_notify_cq,
	.ERNIC_RESIZE_CQ_OP = ernic_resize_cq,
	.rereg_user_mr = ernic_rereg_user_mr,

	INIT_RDMA_OBJ_SIZE(ib_ah, ernic_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, ernic_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, ernic_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, ernic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, ernic_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, ernic_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, ernic_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, ernic_xrcd, ibxrcd),
};

int ernic_ib_register(struct ernic_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int ret;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->local_dma_lkey = 0;
	ibdev->dev.parent = &dev->pdev->dev;
	strscpy(ibdev->node_desc, "ERNIC (PG332 v3.1)",
		sizeof(ibdev->node_desc));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, dev->netdev->dev_addr);
	ib_set_device_ops(ibdev, &ernic_dev_ops);
	/*
	 * The provider posts and polls through these uverbs commands, as
	 * rxe rings its doorbell (ernic_uverbs.c); ib_core enables them only
	 * for drivers that ask.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);

	ret = ib_device_set_netdev(ibdev, dev->netdev, 1);
	if (ret)
		return ret;
	ret = ib_register_device(ibdev, "ernic%d", &dev->pdev->dev);
	if (ret) {
		dev_err(&dev->pdev->dev, "ib_register_device: %d\n", ret);
		return ret;
	}
	dev->ib_registered = true;
	return 0;
}

void ernic_ib_unregister(struct ernic_dev *dev)
{
	if (dev->ib_registered)
		ib_unregister_device(&dev->ibdev);
	dev->ib_registered = false;
}
