// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ERNIC-X multicast groups (docs/extension.md, "Multicast"): the verbs
 * attach_mcast and detach_mcast keep the device's group table, in which
 * each group is an IP multicast address (the RoCEv2 form of its GID)
 * and the UD QPs attached to it. The table is written through its
 * window, under dev->mc_mutex.
 */

#include <linux/bitmap.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include "ernic.h"

/* Write group @i of dev->mcg into the device. */
static void ernic_mcg_program(struct ernic_dev *dev, int i)
{
	struct ernic_mcg *g = &dev->mcg[i];
	const u8 *raw = g->gid.raw;
	bool v4 = ipv6_addr_v4mapped((struct in6_addr *)raw);
	u32 words[ERNIC_MCG_QP_WORDS];
	int k;

	bitmap_to_arr32(words, g->qps, ERNIC_MCG_QP_WORDS * 32);
	ernic_wr(dev, ERNIC_MCIDX, i);
	if (v4) {
		ernic_wr(dev, ERNIC_MCIP1, get_unaligned_be32(raw + 12));
	} else {
		for (k = 0; k < 4; k++)
			ernic_wr(dev, ERNIC_MCIP4 - 4 * k,
				 get_unaligned_be32(raw + 4 * k));
	}
	ernic_wr(dev, ERNIC_MCCONF, (g->used ? ERNIC_MCCONF_VALID : 0) |
		 (v4 ? 0 : ERNIC_MCCONF_IPV6));
	for (k = 0; k < ERNIC_MCG_QP_WORDS; k++)
		ernic_wr(dev, ERNIC_MCQP0 + 4 * k, words[k]);
	ernic_wr(dev, ERNIC_MCCMD, ERNIC_MCCMD_WRITE);
}

/* The group of @gid, or with @alloc a free one; -1 if none. */
static int ernic_mcg_find(struct ernic_dev *dev, const union ib_gid *gid,
			  bool alloc)
{
	int i, free = -1;

	for (i = 0; i < ERNIC_MCG_ENTRIES; i++) {
		if (!dev->mcg[i].used) {
			if (free < 0)
				free = i;
			continue;
		}
		if (!memcmp(&dev->mcg[i].gid, gid, sizeof(*gid)))
			return i;
	}
	return alloc ? free : -1;
}

int ernic_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct ernic_dev *dev = to_edev(ibqp->device);
	struct ernic_qp *qp = to_eqp(ibqp);
	int i, ret = 0;

	if (!(dev->ext & ERNIC_EXT_F_MCAST))
		return -EOPNOTSUPP;
	/* IBTA 10.5: only UD QPs join; the device delivers to them only. */
	if (!qp->ud || !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	mutex_lock(&dev->mc_mutex);
	i = ernic_mcg_find(dev, gid, true);
	if (i < 0) {
		ibdev_dbg(&dev->ibdev, "multicast table full (%u groups)\n",
			  ERNIC_MCG_ENTRIES);
		ret = -ENOMEM;
		goto out;
	}
	if (!dev->mcg[i].used) {
		dev->mcg[i].used = true;
		dev->mcg[i].gid = *gid;
		bitmap_zero(dev->mcg[i].qps, ERNIC_MCG_QP_WORDS * 32);
	}
	__set_bit(qp->qpn - 1, dev->mcg[i].qps);
	ernic_mcg_program(dev, i);
out:
	mutex_unlock(&dev->mc_mutex);
	return ret;
}

/* Detach QP @qpn from group @i; a group with no QP left is freed. */
static void ernic_mcg_detach(struct ernic_dev *dev, int i, u32 qpn)
{
	__clear_bit(qpn - 1, dev->mcg[i].qps);
	if (bitmap_empty(dev->mcg[i].qps, ERNIC_MCG_QP_WORDS * 32))
		dev->mcg[i].used = false;
	ernic_mcg_program(dev, i);
}

int ernic_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct ernic_dev *dev = to_edev(ibqp->device);
	struct ernic_qp *qp = to_eqp(ibqp);
	int i, ret = 0;

	if (!(dev->ext & ERNIC_EXT_F_MCAST))
		return -EOPNOTSUPP;
	mutex_lock(&dev->mc_mutex);
	i = ernic_mcg_find(dev, gid, false);
	if (i < 0 || !test_bit(qp->qpn - 1, dev->mcg[i].qps))
		ret = -EINVAL;
	else
		ernic_mcg_detach(dev, i, qp->qpn);
	mutex_unlock(&dev->mc_mutex);
	return ret;
}

/*
 * A QP being destroyed leaves every group it is still in, so that the
 * next QP of its number does not receive for it.
 */
void ernic_mcast_qp_gone(struct ernic_dev *dev, u32 qpn)
{
	int i;

	if (!(dev->ext & ERNIC_EXT_F_MCAST))
		return;
	mutex_lock(&dev->mc_mutex);
	for (i = 0; i < ERNIC_MCG_ENTRIES; i++)
		if (dev->mcg[i].used && test_bit(qpn - 1, dev->mcg[i].qps))
			ernic_mcg_detach(dev, i, qpn);
	mutex_unlock(&dev->mc_mutex);
}
