// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rdma-core provider for ernic, QEMU's model of the Xilinx/AMD ERNIC
 * RoCEv2 RNIC (PG332 v3.1).
 *
 * Every verb is a uverbs command, posting and polling included (the
 * extended CQ and QP verbs too, ernic_ex.c): nothing
 * of the device is mapped into the process. ERNIC's per-QP register
 * blocks are 256 bytes, sixteen to a 4 KiB page, and hold ring base
 * addresses, so no page of them may belong to one process; the kernel
 * driver writes each WQE itself, from the work requests uverbs hands it,
 * and the device reaches the process's memory only through the MRs the
 * process registered (keyed SGEs of the ERNIC-X extension). The kernel
 * side, and why it is safe, is in guest-driver/ernic_uverbs.c and
 * docs/driver.md ("User space").
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A page-list MR of the ERNIC-X table, at the process's own addresses. */
static struct ibv_mr *ernic_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	if (ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			   sizeof(cmd), &resp, sizeof(resp))) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
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
	if (ibv_cmd_create_cq(context, cqe, channel, comp_vector, &cq->vcq.cq,
			      &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(cq);
		return NULL;
	}
	return &cq->vcq.cq;
}

static int ernic_destroy_cq(struct ibv_cq *ibcq)
{
	struct ernic_cq *cq = container_of(ibcq, struct ernic_cq, vcq.cq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (!ret)
		ernic_cq_ex_free(cq);
	return ret;
}

static struct ibv_qp *ernic_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_create_qp cmd;
	struct ernic_qp *qp;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	if (ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd), &resp,
			      sizeof(resp))) {
		free(qp);
		return NULL;
	}
	return &qp->vqp.qp;
}

static int ernic_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int ernic_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			   int attr_mask)
{
	struct ibv_modify_qp cmd;

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

static int ernic_destroy_qp(struct ibv_qp *ibqp)
{
	struct ernic_qp *qp = container_of(ibqp, struct ernic_qp, vqp.qp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (!ret) {
		ernic_qp_ex_free(qp);
		free(qp);
	}
	return ret;
}

static struct ibv_ah *ernic_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp;
	struct ibv_ah *ah;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	if (ibv_cmd_create_ah(pd, ah, attr, &resp, sizeof(resp))) {
		free(ah);
		return NULL;
	}
	return ah;
}

static int ernic_destroy_ah(struct ibv_ah *ah)
{
	int ret = ibv_cmd_destroy_ah(ah);

	if (!ret)
		free(ah);
	return ret;
}

static const struct verbs_context_ops ernic_ctx_ops = {
	.alloc_pd = ernic_alloc_pd,
	.create_ah = ernic_create_ah,
	.create_cq = ernic_create_cq,
	.create_cq_ex = ernic_create_cq_ex,
	.create_qp = ernic_create_qp,
	.create_qp_ex = ernic_create_qp_ex,
	.dealloc_pd = ernic_dealloc_pd,
	.dereg_mr = ernic_dereg_mr,
	.destroy_ah = ernic_destroy_ah,
	.destroy_cq = ernic_destroy_cq,
	.destroy_qp = ernic_destroy_qp,
	.free_context = ernic_free_context,
	.modify_qp = ernic_modify_qp,
	/* The doorbells: the kernel driver writes the WQEs and rings. */
	.poll_cq = ibv_cmd_poll_cq,
	.post_recv = ibv_cmd_post_recv,
	.post_send = ibv_cmd_post_send,
	.query_device_ex = ernic_query_device,
	.query_port = ernic_query_port,
	.query_qp = ernic_query_qp,
	.reg_mr = ernic_reg_mr,
	.req_notify_cq = ibv_cmd_req_notify_cq,
};

static struct verbs_context *ernic_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct ib_uverbs_get_context_resp resp;
	struct ibv_get_context cmd;
	struct ernic_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd), &resp,
				sizeof(resp))) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		return NULL;
	}
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
	.match_min_abi_version = ERNIC_UVERBS_ABI,
	.match_max_abi_version = ERNIC_UVERBS_ABI,
	.match_table = ernic_match_table,
	.alloc_device = ernic_device_alloc,
	.uninit_device = ernic_uninit_device,
	.alloc_context = ernic_alloc_context,
};
PROVIDER_DRIVER(ernic, ernic_dev_ops);
