// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Shared receive queues of the ernic provider (docs/extension.md,
 * "Shared receive queues"; docs/driver.md, "Shared receive queues").
 *
 * A user SRQ is direct: the driver maps its ring of 64-byte receive WQEs
 * and its page of BAR3, which holds SRQPIn and nothing else the process
 * may write. The device takes WQEs in ring order for whichever direct QP
 * receives, and that QP's metadata names the WQE's slot, by which its
 * completion finds the WR ID kept here. Nothing written here is trusted:
 * the device refuses a WQE of a user SRQ whose SGE has L_Key 0, and
 * checks every other key against the QP's PD.
 */

#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "ernic.h"

static int ernic_srq_map(struct ernic_srq *srq, int fd,
			 const struct ernic_create_srq_resp *resp)
{
	int r;

	srq->depth = resp->depth;
	if (!(resp->flags & ERNIC_SRQ_DIRECT) || srq->depth < 2 ||
	    srq->depth <= srq->max_wr ||
	    resp->len[ERNIC_USRQ_RING] <
	    (size_t)srq->depth * ERNIC_RWQE_SIZE ||
	    resp->len[ERNIC_USRQ_UDB] < ERNIC_UDB_SRQCI + 4)
		return EINVAL;
	for (r = 0; r < ERNIC_USRQ_NR; r++) {
		srq->map[r] = mmap(NULL, resp->len[r], PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, resp->key[r]);
		if (srq->map[r] == MAP_FAILED) {
			srq->map[r] = NULL;
			return errno;
		}
		srq->len[r] = resp->len[r];
	}
	srq->ring = srq->map[ERNIC_USRQ_RING];
	srq->udb = srq->map[ERNIC_USRQ_UDB];
	srq->wr_id = calloc(srq->depth, sizeof(*srq->wr_id));
	srq->busy = calloc(srq->depth, sizeof(*srq->busy));
	return srq->wr_id && srq->busy ? 0 : ENOMEM;
}

static void ernic_srq_unmap(struct ernic_srq *srq)
{
	int r;

	for (r = 0; r < ERNIC_USRQ_NR; r++)
		if (srq->map[r])
			munmap(srq->map[r], srq->len[r]);
	free(srq->wr_id);
	free(srq->busy);
	pthread_spin_destroy(&srq->lock);
	free(srq);
}

/* A new SRQ before the kernel has it; NULL with errno set. */
static struct ernic_srq *ernic_srq_new(void)
{
	struct ernic_srq *srq = calloc(1, sizeof(*srq));

	if (!srq || pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE)) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	return srq;
}

/*
 * @srq once the kernel answered the create command with @ret and @resp:
 * its ring and doorbell page mapped; NULL with errno set, the SRQ gone.
 */
static struct ibv_srq *ernic_srq_made(struct ernic_srq *srq, int ret,
				      int fd, uint32_t max_wr,
				      const struct ernic_create_srq_resp *resp)
{
	if (ret) {
		pthread_spin_destroy(&srq->lock);
		free(srq);
		errno = ret;
		return NULL;
	}
	srq->max_wr = max_wr;
	ret = ernic_srq_map(srq, fd, resp);
	if (ret) {
		ibv_cmd_destroy_srq(&srq->ibsrq);
		ernic_srq_unmap(srq);
		errno = ret;
		return NULL;
	}
	return &srq->ibsrq;
}

struct ibv_srq *ernic_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct ernic_cmd_create_srq cmd = { .flags = ERNIC_SRQ_DIRECT };
	struct ernic_cmd_create_srq_resp resp = {};
	struct ernic_srq *srq;
	int ret;

	if (!to_ectx(pd->context)->direct) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	srq = ernic_srq_new();
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq(pd, &srq->ibsrq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	return ernic_srq_made(srq, ret, pd->context->cmd_fd, attr->attr.max_wr,
			      &resp.drv_payload);
}

/*
 * An XRC SRQ (ERNIC-X XRC): a direct SRQ of an XRC domain, whose WQEs
 * the device writes back for its CQ to poll (ernic_srq_poll_xrc()).
 */
static struct ibv_srq *ernic_create_xsrq(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr)
{
	struct ernic_cmd_create_xsrq cmd = { .flags = ERNIC_SRQ_DIRECT };
	struct ernic_cmd_create_xsrq_resp resp = {};
	struct ibv_srq *ibsrq;
	struct ernic_srq *srq;
	int ret;

	if (!to_ectx(context)->xrc || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	srq = ernic_srq_new();
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq_ex(context, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	ibsrq = ernic_srq_made(srq, ret, context->cmd_fd, attr->attr.max_wr,
			       &resp.drv_payload);
	if (!ibsrq)
		return NULL;
	srq->xrc_cq = to_ecq(attr->cq);
	pthread_spin_lock(&srq->xrc_cq->lock);
	list_add_tail(&srq->xrc_cq->xrc_srqs, &srq->xrc_node);
	pthread_spin_unlock(&srq->xrc_cq->lock);
	return ibsrq;
}

struct ibv_srq *ernic_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr init = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
	};
	struct ibv_srq *srq;

	if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE &&
	    attr->srq_type == IBV_SRQT_XRC)
		return ernic_create_xsrq(context, attr);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE &&
	     attr->srq_type != IBV_SRQT_BASIC) ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	srq = ernic_create_srq(attr->pd, &init);
	if (srq)
		attr->attr = init.attr;
	return srq;
}

/* What an XRC initiator names: the SRQ's number on the device. */
int ernic_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct ernic_srq *srq = to_esrq(ibsrq);

	if (!srq->xrc_cq)
		return EOPNOTSUPP;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

int ernic_destroy_srq(struct ibv_srq *ibsrq)
{
	struct ernic_srq *srq = to_esrq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	if (srq->xrc_cq) {
		pthread_spin_lock(&srq->xrc_cq->lock);
		list_del(&srq->xrc_node);
		pthread_spin_unlock(&srq->xrc_cq->lock);
	}
	ernic_srq_unmap(srq);
	return 0;
}

/*
 * The kernel grows max_wr within the ring (IBV_DEVICE_SRQ_RESIZE), but
 * the WRs outstanding are counted here: fewer than them is refused.
 */
int ernic_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int mask)
{
	struct ernic_srq *srq = to_esrq(ibsrq);
	struct ibv_modify_srq cmd;
	int ret;

	pthread_spin_lock(&srq->lock);
	if ((mask & IBV_SRQ_MAX_WR) && attr->max_wr < srq->outstanding) {
		pthread_spin_unlock(&srq->lock);
		return EINVAL;
	}
	ret = ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
	if (!ret && (mask & IBV_SRQ_MAX_WR))
		srq->max_wr = attr->max_wr;
	pthread_spin_unlock(&srq->lock);
	return ret;
}

int ernic_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

/* One WR into the slot at pi: keys only, the slot's last WR reported. */
static int ernic_srq_put(struct ernic_srq *srq, const struct ibv_recv_wr *wr)
{
	uint8_t *w = srq->ring + (size_t)srq->pi * ERNIC_RWQE_SIZE;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > ERNIC_RWQE_SGES)
		return EINVAL;
	/*
	 * An XRC SRQ's WQE is written back over its first L_Key, bit 31
	 * marking it done (docs/extension.md, "XRC"): no real key has it.
	 */
	for (i = 0; i < wr->num_sge; i++)
		if (!wr->sg_list[i].lkey ||
		    (srq->xrc_cq && wr->sg_list[i].lkey & ERNIC_XRC_WB_DONE))
			return EINVAL;
	if (srq->outstanding >= srq->max_wr || srq->busy[srq->pi])
		return ENOMEM;
	memset(w, 0, ERNIC_RWQE_SIZE);
	ernic_put_sges(w, wr->sg_list, wr->num_sge);
	srq->wr_id[srq->pi] = wr->wr_id;
	srq->busy[srq->pi] = 1;
	srq->outstanding++;
	srq->pi = (srq->pi + 1) % srq->depth;
	return 0;
}

int ernic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad)
{
	struct ernic_srq *srq = to_esrq(ibsrq);
	int ret = 0;

	pthread_spin_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		ret = ernic_srq_put(srq, wr);
		if (ret) {
			*bad = wr;
			break;
		}
	}
	/* The WQEs are visible before SRQPIn grants them. */
	udma_to_device_barrier();
	mmio_write32((void *)(srq->udb + ERNIC_UDB_SRQPI / 4), srq->pi);
	pthread_spin_unlock(&srq->lock);
	return ret;
}

/*
 * The WR ID of the WQE in @slot, which a QP's metadata named; the slot
 * may be posted again. A slot not posted gives WR ID 0.
 */
uint64_t ernic_srq_complete(struct ernic_srq *srq, uint32_t slot)
{
	uint64_t id = 0;

	slot %= srq->depth;
	pthread_spin_lock(&srq->lock);
	if (srq->busy[slot]) {
		srq->busy[slot] = 0;
		srq->outstanding--;
		id = srq->wr_id[slot];
	}
	pthread_spin_unlock(&srq->lock);
	return id;
}

/*
 * Slot @slot of XRC SRQ @srq was written back: its completion into @wc
 * and the slot free to post again. Called with the SRQ's lock held.
 */
static void ernic_srq_xrc_wc(struct ernic_srq *srq, uint32_t slot,
			     uint32_t mark, struct ibv_wc *wc)
{
	uint8_t *w = srq->ring + (size_t)slot * ERNIC_RWQE_SIZE;

	memset(wc, 0, sizeof(*wc));
	wc->opcode = IBV_WC_RECV;
	ernic_meta_wc(w, false, wc);
	wc->wr_id = srq->wr_id[slot];
	wc->qp_num = mark & 0xffffff;
	memset(w + ERNIC_XRC_WB_QPN, 0, 4);
	srq->busy[slot] = 0;
	srq->outstanding--;
}

/*
 * An XRC SRQ's completions (docs/extension.md, "XRC"): the posted WQEs
 * that the device has written back, marked done in bytes 12-15 with the
 * target QP. They are reported as they are found, so a long message
 * still arriving on one target QP holds up none of the others'. Only
 * memory is read: a poll of an idle CQ costs no MMIO read, which would
 * be an exit to the hypervisor.
 */
int ernic_srq_poll_xrc(struct ernic_srq *srq, int n, struct ibv_wc *wc)
{
	uint32_t posted, slot, k, mark;
	int got = 0;

	pthread_spin_lock(&srq->lock);
	posted = (srq->pi - srq->xrc_ci + srq->depth) % srq->depth;
	for (k = 0; k < posted && got < n && srq->outstanding; k++) {
		slot = (srq->xrc_ci + k) % srq->depth;
		if (!srq->busy[slot])
			continue;
		mark = le32toh(*(volatile uint32_t *)(srq->ring +
			(size_t)slot * ERNIC_RWQE_SIZE + ERNIC_XRC_WB_QPN));
		if (!(mark & ERNIC_XRC_WB_DONE))
			continue;
		/* The entry is read after the mark, which came last. */
		udma_from_device_barrier();
		ernic_srq_xrc_wc(srq, slot, mark, &wc[got++]);
	}
	while (srq->xrc_ci != srq->pi && !srq->busy[srq->xrc_ci])
		srq->xrc_ci = (srq->xrc_ci + 1) % srq->depth;
	pthread_spin_unlock(&srq->lock);
	return got;
}
