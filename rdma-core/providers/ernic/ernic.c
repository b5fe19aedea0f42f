// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rdma-core provider for ernic, QEMU's model of the Xilinx/AMD ERNIC
 * RoCEv2 RNIC (PG332 v3.1).
 *
 * ERNIC's per-QP register blocks are 256 bytes, sixteen to a 4 KiB page,
 * and hold ring base addresses, so no page of them may belong to one
 * process. Where the device has ERNIC-X user QPs (UDB) the driver gives
 * each QP of this process its own doorbell page and maps its rings:
 * such a direct QP posts and polls here, with no system call
 * (ernic_direct.c). Otherwise every verb is a uverbs command, posting
 * and polling included, and the kernel driver writes each WQE itself.
 * Either way the device reaches the process's memory only through the
 * MRs the process registered (keyed SGEs of the ERNIC-X extension). The
 * kernel side, and why it is safe, is in guest-driver/ernic_uverbs.c
 * and docs/driver.md ("User space", "Direct QPs"). ERNIC_DIRECT=0 in
 * the environment keeps every QP on the command path.
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <util/util.h>

#include "ernic.h"

static void ernic_free_context(struct ibv_context *ibctx);

static const struct verbs_match_ent ernic_match_table[] = {
	VERBS_PCI_MATCH(ERNIC_PCI_VENDOR_ID, ERNIC_PCI_DEVICE_ID, NULL),
	{}
};

static int ernic_query_device(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr,
			      size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;
	/*
	 * The kernel's capability bits for FLUSH and ATOMIC WRITE (Linux
	 * 6.2) are not in 6.1's; the context tells whether its direct QPs
	 * have them.
	 */
	if (to_ectx(context)->place &&
	    attr_size >= offsetofend(struct ibv_device_attr_ex,
				     device_cap_flags_ex))
		attr->device_cap_flags_ex |= IB_UVERBS_DEVICE_FLUSH_GLOBAL |
					     IB_UVERBS_DEVICE_ATOMIC_WRITE;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int ernic_query_port(struct ibv_context *context, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *ernic_alloc_pd(struct ibv_context *context)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp,
			     sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int ernic_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

/*
 * A page-list MR of the ERNIC-X table, at the process's own addresses.
 * FLUSH access goes in the command's driver data, as the kernel's own
 * reg_mr refuses it on Linux 6.1; no memory behind ernic is persistent
 * (docs/driver.md, "FLUSH").
 */
static struct ibv_mr *ernic_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ernic_cmd_reg_mr cmd = {};
	struct ib_uverbs_reg_mr_resp resp;
	struct verbs_mr *vmr;

	if ((access & IBV_ACCESS_FLUSH_PERSISTENT) ||
	    ((access & IBV_ACCESS_FLUSH_GLOBAL) &&
	     !to_ectx(pd->context)->place)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (access & IBV_ACCESS_FLUSH_GLOBAL)
		cmd.access = ERNIC_MR_FLUSH_GLOBAL;
	access &= ~IBV_ACCESS_FLUSH_GLOBAL;
	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	if (ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd.ibv_cmd,
			   sizeof(cmd), &resp, sizeof(resp))) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * The kernel writes the MR's entry again in place, keys kept, and leaves
 * the MR as it was when it refuses (docs/driver.md, "MR re-registration").
 */
static int ernic_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

static int ernic_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

static struct ibv_cq *ernic_create_cq(struct ibv_context *context, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct ib_uverbs_create_cq_resp resp;
	struct ibv_create_cq cmd;
	struct ernic_cq *cq;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	if (ernic_cq_init(cq)) {
		free(cq);
		return NULL;
	}
	if (ibv_cmd_create_cq(context, cqe, channel, comp_vector, &cq->vcq.cq,
			      &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		ernic_cq_ex_free(cq);
		return NULL;
	}
	return &cq->vcq.cq;
}

/* A memory window: the kernel gives it an entry of the device's table. */
static struct ibv_mw *ernic_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw = calloc(1, sizeof(*mw));

	if (!mw)
		return NULL;
	if (ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			     sizeof(resp))) {
		free(mw);
		return NULL;
	}
	return mw;
}

static int ernic_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (!ret)
		free(mw);
	return ret;
}

/*
 * ibv_bind_mw(): a type 1 window is bound by a BIND WQE with the next
 * key byte, which only a direct QP's process writes (the kernel's post
 * path has no bind); the window's key changes once it is posted.
 */
static int ernic_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
			 struct ibv_mw_bind *mw_bind)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 || !qp->direct)
		return EINVAL;
	ret = ernic_dq_post_send(qp, &wr, &bad, false);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

/* The kernel's CQ holds no entries: a new size takes at once. */
static int ernic_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct ib_uverbs_resize_cq_resp resp;
	struct ibv_resize_cq cmd;

	return ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp,
				 sizeof(resp));
}

/*
 * Initialised before the CQ exists in the kernel: a QP may be attached
 * to it from then on.
 */
int ernic_cq_init(struct ernic_cq *cq)
{
	list_head_init(&cq->sq_qps);
	list_head_init(&cq->rq_qps);
	list_head_init(&cq->xrc_srqs);
	return pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
}

/*
 * @qp joins (@join) or leaves @cq, on its list @l through @n when it is
 * direct (polled here), else in the count of QPs the kernel polls.
 */
static void ernic_cq_track(struct ernic_qp *qp, struct ernic_cq *cq,
			   struct list_head *l, struct list_node *n, bool join)
{
	if (!cq)
		return;		/* an XRC QP's missing CQ */
	pthread_spin_lock(&cq->lock);
	if (qp->direct && join)
		list_add_tail(l, n);
	else if (qp->direct)
		list_del(n);
	else if (join)
		cq->kernel_qps++;
	else
		cq->kernel_qps--;
	pthread_spin_unlock(&cq->lock);
}

void ernic_cq_attach(struct ernic_qp *qp)
{
	if (qp->scq)
		ernic_cq_track(qp, qp->scq, &qp->scq->sq_qps,
			       &qp->dq.scq_node, true);
	if (qp->rcq)
		ernic_cq_track(qp, qp->rcq, &qp->rcq->rq_qps,
			       &qp->dq.rcq_node, true);
}

void ernic_cq_detach(struct ernic_qp *qp)
{
	if (qp->scq)
		ernic_cq_track(qp, qp->scq, &qp->scq->sq_qps,
			       &qp->dq.scq_node, false);
	if (qp->rcq)
		ernic_cq_track(qp, qp->rcq, &qp->rcq->rq_qps,
			       &qp->dq.rcq_node, false);
}

/*
 * A poll found nothing, the context's spin_polls-th in a row: read CQHEAD
 * of one of the CQ's QPs in its doorbell page (RQPI if it has no SQ
 * here). The device gives the vCPU's host CPU away when the value has
 * not moved since that QP's last read (ERNIC-X UPOLL, docs/driver.md
 * "Polling"), so that its main loop, which takes the frames that end
 * this wait, is not kept waiting behind us on a host with fewer CPUs
 * than busy threads.
 */
static void ernic_cq_spun(struct ernic_cq *cq)
{
	unsigned int every = to_ectx(cq->vcq.cq.context)->spin_polls;
	struct ernic_qp *qp;

	if (!every || ++cq->empty_polls < every)
		return;
	cq->empty_polls = 0;
	list_for_each(&cq->sq_qps, qp, dq.scq_node) {
		(void)qp->dq.udb[ERNIC_UDB_CQHEAD / 4];
		return;
	}
	list_for_each(&cq->rq_qps, qp, dq.rcq_node) {
		(void)qp->dq.udb[ERNIC_UDB_RQPI / 4];
		return;
	}
}

/*
 * The direct QPs' completions, read here, then the others' through the
 * kernel (only when the CQ has any: a QP the driver could not make
 * direct).
 */
int ernic_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct ernic_cq *cq = to_ecq(ibcq);
	struct ernic_srq *srq;
	struct ernic_qp *qp;
	int got = 0, k;

	pthread_spin_lock(&cq->lock);
	list_for_each(&cq->rq_qps, qp, dq.rcq_node)
		ernic_dq_poll_begin(qp);
	list_for_each(&cq->sq_qps, qp, dq.scq_node) {
		if (got == n)
			break;
		got += ernic_dq_poll_sq(qp, n - got, wc + got);
	}
	list_for_each(&cq->rq_qps, qp, dq.rcq_node) {
		if (got == n)
			break;
		got += ernic_dq_poll_rq(qp, n - got, wc + got);
	}
	list_for_each(&cq->xrc_srqs, srq, xrc_node) {
		if (got == n)
			break;
		got += ernic_srq_poll_xrc(srq, n - got, wc + got);
	}
	k = cq->kernel_qps;
	if (got)
		cq->empty_polls = 0;
	else if (!k)
		ernic_cq_spun(cq);
	pthread_spin_unlock(&cq->lock);
	if (k && got < n) {
		k = ibv_cmd_poll_cq(ibcq, n - got, wc + got);
		if (k < 0)
			return got ? got : k;
		got += k;
	}
	return got;
}

static int ernic_destroy_cq(struct ibv_cq *ibcq)
{
	struct ernic_cq *cq = to_ecq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (!ret)
		ernic_cq_ex_free(cq);
	return ret;
}

/* ibv_create_qp() is ibv_create_qp_ex() with a PD (ernic_ex.c). */
static struct ibv_qp *ernic_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = ernic_create_qp_ex(pd->context, &ex);

	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/*
 * The driver's create_qp with a request for a direct QP, when the
 * context may have them; with the driver's answer in @resp.
 */
int ernic_create_qp_cmd(struct ibv_context *context, struct ernic_qp *qp,
			struct ibv_qp_init_attr_ex *attr,
			struct ernic_create_qp_resp *resp)
{
	struct ernic_cmd_create_qp cmd = {};
	struct ernic_cmd_create_qp_resp rsp = {};
	int ret;

	/* Doorbell records too, if the device has them (DBREC, RQREC). */
	cmd.flags = to_ectx(context)->direct ?
		    ERNIC_QP_DIRECT | ERNIC_QP_DBREC | ERNIC_QP_RQREC : 0;
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, attr, &cmd.ibv_cmd,
				   sizeof(cmd), &rsp.ibv_resp, sizeof(rsp));
	*resp = rsp.drv_payload;
	return ret;
}

static int ernic_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int ernic_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			   int attr_mask)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	struct ibv_modify_qp cmd;
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (!ret && qp->direct)
		ernic_dq_modified(qp, attr, attr_mask);
	return ret;
}

static int ernic_destroy_qp(struct ibv_qp *ibqp)
{
	struct ernic_qp *qp = to_eqp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (!ret) {
		ernic_cq_detach(qp);
		ernic_dq_unmap(qp);
		ernic_qp_ex_free(qp);
		free(qp);
	}
	return ret;
}

static int ernic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad)
{
	struct ernic_qp *qp = to_eqp(ibqp);

	if (qp->direct)
		return ernic_dq_post_send(qp, wr, bad, false);
	return ibv_cmd_post_send(ibqp, wr, bad);
}

static int ernic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad)
{
	struct ernic_qp *qp = to_eqp(ibqp);

	/* IBTA: a QP of an SRQ takes no receive WR of its own. */
	if (qp->srq) {
		*bad = wr;
		return EINVAL;
	}
	if (qp->direct)
		return ernic_dq_post_recv(qp, wr, bad);
	return ibv_cmd_post_recv(ibqp, wr, bad);
}

/* The driver answers with the AH's entry of the device's table. */
static struct ibv_ah *ernic_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct ernic_cmd_create_ah_resp resp = {};
	struct ernic_ah *ah;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	resp.drv_payload.idx = -1;
	if (ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.ibv_resp,
			      sizeof(resp))) {
		free(ah);
		return NULL;
	}
	ah->idx = resp.drv_payload.idx;
	return &ah->ibah;
}

static int ernic_destroy_ah(struct ibv_ah *ah)
{
	int ret = ibv_cmd_destroy_ah(ah);

	if (!ret)
		free(to_eah(ah));
	return ret;
}

/* An XRC domain (ERNIC-X XRC): the kernel's object, shared by fd. */
static struct ibv_xrcd *ernic_open_xrcd(struct ibv_context *context,
					struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *xrcd;
	int ret;

	if (!to_ectx(context)->xrc) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_open_xrcd(context, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int ernic_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret = ibv_cmd_close_xrcd(xrcd);

	if (!ret)
		free(xrcd);
	return ret;
}

/* Another process's XRC target QP of a shared domain: the kernel's. */
static struct ibv_qp *ernic_open_qp(struct ibv_context *context,
				    struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct ernic_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_open_qp(context, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

static const struct verbs_context_ops ernic_ctx_ops = {
	.alloc_mw = ernic_alloc_mw,
	.alloc_pd = ernic_alloc_pd,
	.bind_mw = ernic_bind_mw,
	/* ERNIC-X multicast: the kernel keeps the device's group table. */
	.attach_mcast = ibv_cmd_attach_mcast,
	.create_ah = ernic_create_ah,
	.create_cq = ernic_create_cq,
	.create_cq_ex = ernic_create_cq_ex,
	.create_qp = ernic_create_qp,
	.create_qp_ex = ernic_create_qp_ex,
	.create_srq = ernic_create_srq,
	.create_srq_ex = ernic_create_srq_ex,
	.close_xrcd = ernic_close_xrcd,
	.get_srq_num = ernic_get_srq_num,
	.open_qp = ernic_open_qp,
	.open_xrcd = ernic_open_xrcd,
	.dealloc_mw = ernic_dealloc_mw,
	.dealloc_pd = ernic_dealloc_pd,
	.dereg_mr = ernic_dereg_mr,
	.destroy_ah = ernic_destroy_ah,
	.destroy_cq = ernic_destroy_cq,
	.destroy_qp = ernic_destroy_qp,
	.destroy_srq = ernic_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = ernic_free_context,
	.modify_qp = ernic_modify_qp,
	.modify_srq = ernic_modify_srq,
	/* Direct QPs here, others through the kernel driver. */
	.poll_cq = ernic_poll_cq,
	.post_recv = ernic_post_recv,
	.post_send = ernic_post_send,
	.post_srq_recv = ernic_post_srq_recv,
	.query_device_ex = ernic_query_device,
	.query_port = ernic_query_port,
	.query_qp = ernic_query_qp,
	.query_srq = ernic_query_srq,
	.reg_mr = ernic_reg_mr,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.rereg_mr = ernic_rereg_mr,
	.resize_cq = ernic_resize_cq,
};

/*
 * How many empty polls of a CQ before a read of a doorbell page, where
 * the device has them (ERNIC-X UPOLL): ERNIC_SPIN_POLLS, or 64, or 0 for
 * never. 64 empty polls take tens of microseconds under TCG, a few under
 * KVM, where the read is an exit of about as much.
 */
static unsigned int ernic_spin_polls(bool upoll)
{
	const char *env = getenv("ERNIC_SPIN_POLLS");

	if (!upoll)
		return 0;
	return env ? strtoul(env, NULL, 0) : 64;
}

static struct verbs_context *ernic_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct ernic_cmd_alloc_context_resp resp = {};
	struct ibv_get_context cmd;
	struct ernic_context *ctx;
	const char *env = getenv("ERNIC_DIRECT");

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	if (ernic_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp))) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		return NULL;
	}
	ctx->direct = (resp.flags & ERNIC_UCTX_DIRECT) &&
		      !(env && !strcmp(env, "0"));
	ctx->atomic = resp.flags & ERNIC_UCTX_ATOMIC;
	ctx->mw = resp.flags & ERNIC_UCTX_MW;
	ctx->place = ctx->direct && (resp.flags & ERNIC_UCTX_PLACE);
	ctx->xrc = ctx->direct && (resp.flags & ERNIC_UCTX_XRC);
	ctx->spin_polls = ernic_spin_polls(ctx->direct &&
					   (resp.flags & ERNIC_UCTX_UPOLL));
	verbs_set_ops(&ctx->ibv_ctx, &ernic_ctx_ops);
	return &ctx->ibv_ctx;
}

static void ernic_free_context(struct ibv_context *ibctx)
{
	struct ernic_context *ctx =
		container_of(ibctx, struct ernic_context, ibv_ctx.context);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *ernic_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct ernic_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->ibv_dev : NULL;
}

static void ernic_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct ernic_device, ibv_dev));
}

static const struct verbs_device_ops ernic_dev_ops = {
	.name = "ernic",
	.match_min_abi_version = ERNIC_UVERBS_ABI_VERSION,
	.match_max_abi_version = ERNIC_UVERBS_ABI_VERSION,
	.match_table = ernic_match_table,
	.alloc_device = ernic_device_alloc,
	.uninit_device = ernic_uninit_device,
	.alloc_context = ernic_alloc_context,
};
PROVIDER_DRIVER(ernic, ernic_dev_ops);
