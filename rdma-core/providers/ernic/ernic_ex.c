// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The extended verbs of the ernic provider: ibv_create_cq_ex() with its
 * polling API (ibv_start_poll() and the ibv_wc_read_*() readers) and
 * ibv_create_qp_ex() with the ibv_wr_*() posting API.
 *
 * A poll is ernic_poll_cq()'s, and the WRs built between ibv_wr_start()
 * and ibv_wr_complete() are kept here and posted as one chain, whole or
 * not at all: by a direct QP itself (ernic_direct.c), or handed to the
 * kernel driver by a single POST_SEND, which checks them as it checks
 * every user WR (docs/driver.md, "User space").
 */

#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ernic.h"

/* ---- Extended CQ ------------------------------------------------------ */

/* What ibv_wc gives: the standard flags, no timestamps or tags. */
#define ERNIC_WC_EX_FLAGS	IBV_WC_STANDARD_FLAGS

static inline struct ernic_cq *to_ecq_ex(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct ernic_cq, vcq.cq_ex);
}

/* The next completion into cq->wc; ENOENT when there is none. */
static int ernic_cq_take(struct ernic_cq *cq)
{
	int n = ernic_poll_cq(&cq->vcq.cq, 1, &cq->wc);

	if (n < 0)
		return EINVAL;
	if (!n)
		return ENOENT;
	cq->vcq.cq_ex.status = cq->wc.status;
	cq->vcq.cq_ex.wr_id = cq->wc.wr_id;
	return 0;
}

/*
 * ibv_start_poll() to ibv_end_poll() is one thread's (cq->wc is the
 * completion being read); a start that finds nothing ends it at once,
 * as the caller then does not call ibv_end_poll().
 */
static int ernic_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct ernic_cq *cq = to_ecq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->poll_lock);
	ret = ernic_cq_take(cq);
	if (ret)
		pthread_spin_unlock(&cq->poll_lock);
	return ret;
}

static int ernic_next_poll(struct ibv_cq_ex *ibcq)
{
	return ernic_cq_take(to_ecq_ex(ibcq));
}

static void ernic_end_poll(struct ibv_cq_ex *ibcq)
{
	pthread_spin_unlock(&to_ecq_ex(ibcq)->poll_lock);
}

/* ibv_wc_read_*(): each a field of the completion taken. */
#define ERNIC_CQ_READER(name, type, field)				\
	static type ernic_read_##name(struct ibv_cq_ex *ibcq)		\
	{								\
		return to_ecq_ex(ibcq)->wc.field;			\
	}

ERNIC_CQ_READER(opcode, enum ibv_wc_opcode, opcode)
ERNIC_CQ_READER(vendor_err, uint32_t, vendor_err)
ERNIC_CQ_READER(wc_flags, unsigned int, wc_flags)
ERNIC_CQ_READER(byte_len, uint32_t, byte_len)
/* The ImmDt, or the invalidated R_Key: one field of ibv_wc for both. */
ERNIC_CQ_READER(imm_data, __be32, imm_data)
ERNIC_CQ_READER(qp_num, uint32_t, qp_num)
ERNIC_CQ_READER(src_qp, uint32_t, src_qp)
ERNIC_CQ_READER(slid, uint32_t, slid)
ERNIC_CQ_READER(sl, uint8_t, sl)
ERNIC_CQ_READER(dlid_path_bits, uint8_t, dlid_path_bits)

static void ernic_cq_ex_ops(struct ibv_cq_ex *cq)
{
	cq->start_poll = ernic_start_poll;
	cq->next_poll = ernic_next_poll;
	cq->end_poll = ernic_end_poll;
	cq->read_opcode = ernic_read_opcode;
	cq->read_vendor_err = ernic_read_vendor_err;
	cq->read_wc_flags = ernic_read_wc_flags;
	cq->read_byte_len = ernic_read_byte_len;
	cq->read_imm_data = ernic_read_imm_data;
	cq->read_qp_num = ernic_read_qp_num;
	cq->read_src_qp = ernic_read_src_qp;
	cq->read_slid = ernic_read_slid;
	cq->read_sl = ernic_read_sl;
	cq->read_dlid_path_bits = ernic_read_dlid_path_bits;
}

struct ibv_cq_ex *ernic_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct ib_uverbs_ex_create_cq_resp resp;
	struct ernic_cq *cq;

	if (attr->wc_flags & ~ERNIC_WC_EX_FLAGS ||
	    attr->comp_mask & ~IBV_CQ_INIT_ATTR_MASK_FLAGS ||
	    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS &&
	     attr->flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	if (ernic_cq_init(cq)) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	if (pthread_spin_init(&cq->poll_lock, PTHREAD_PROCESS_PRIVATE)) {
		pthread_spin_destroy(&cq->lock);
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->poll_api = true;
	if (ernic_cmd_create_cq_ex(context, attr, &cq->vcq, &resp,
				   sizeof(resp))) {
		ernic_cq_ex_free(cq);
		return NULL;
	}
	ernic_cq_ex_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;
}

void ernic_cq_ex_free(struct ernic_cq *cq)
{
	pthread_spin_destroy(&cq->lock);
	if (cq->poll_api)
		pthread_spin_destroy(&cq->poll_lock);
	free(cq);
}

/* ---- Extended QP: the ibv_wr_*() API ---------------------------------- */

/* The opcodes the kernel driver takes from user space. */
#define ERNIC_QP_EX_OPS	(IBV_QP_EX_WITH_RDMA_WRITE |			\
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |		\
			 IBV_QP_EX_WITH_SEND |				\
			 IBV_QP_EX_WITH_SEND_WITH_IMM |			\
			 IBV_QP_EX_WITH_RDMA_READ |			\
			 IBV_QP_EX_WITH_SEND_WITH_INV)
/* ... and with ERNIC-X ATOMIC on an RC QP, */
#define ERNIC_QP_EX_ATOMIC_OPS	(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
				 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
/* ... and with ERNIC-X MW on an RC or UC QP, */
#define ERNIC_QP_EX_MW_OPS	(IBV_QP_EX_WITH_BIND_MW |		\
				 IBV_QP_EX_WITH_LOCAL_INV)
/* ... and with ERNIC-X PLACE on a direct RC QP. */
#define ERNIC_QP_EX_PLACE_OPS	(IBV_QP_EX_WITH_FLUSH |			\
				 IBV_QP_EX_WITH_ATOMIC_WRITE)

static inline struct ernic_qp *to_eqp_ex(struct ibv_qp_ex *qp)
{
	return container_of(qp, struct ernic_qp, vqp.qp_ex);
}

/* A new WR of @opcode with the QP's wr_id and wr_flags; NULL when full. */
static struct ibv_send_wr *ernic_wr_new(struct ibv_qp_ex *ibqp,
					enum ibv_wr_opcode opcode)
{
	struct ernic_qp *qp = to_eqp_ex(ibqp);
	struct ibv_send_wr *wr;

	if (qp->err)
		return NULL;
	if (qp->nwr == qp->max_wr) {
		qp->err = ENOMEM;
		return NULL;
	}
	wr = &qp->wr[qp->nwr];
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = ibqp->wr_id;
	wr->send_flags = ibqp->wr_flags;
	wr->opcode = opcode;
	wr->sg_list = &qp->sge[qp->nwr * qp->max_sge];
	if (qp->nwr)
		qp->wr[qp->nwr - 1].next = wr;
	qp->nwr++;
	return wr;
}

/* The WR the setters act on: the last one started. */
static struct ibv_send_wr *ernic_wr_cur(struct ernic_qp *qp)
{
	if (qp->err || !qp->nwr) {
		qp->err = qp->err ?: EINVAL;
		return NULL;
	}
	return &qp->wr[qp->nwr - 1];
}

static void ernic_wr_rdma(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
			  uint32_t rkey, uint64_t raddr, __be32 imm)
{
	struct ibv_send_wr *wr = ernic_wr_new(ibqp, op);

	if (!wr)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = raddr;
	wr->imm_data = imm;
}

static void ernic_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t raddr)
{
	ernic_wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, raddr, 0);
}

static void ernic_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t raddr)
{
	ernic_wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void ernic_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t raddr, __be32 imm)
{
	ernic_wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm);
}

static void ernic_wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
			    uint32_t rkey, uint64_t raddr, uint64_t compare_add,
			    uint64_t swap)
{
	struct ibv_send_wr *wr = ernic_wr_new(ibqp, op);

	if (!wr)
		return;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = raddr;
	wr->wr.atomic.compare_add = compare_add;
	wr->wr.atomic.swap = swap;
}

static void ernic_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t raddr, uint64_t compare,
				    uint64_t swap)
{
	ernic_wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, raddr, compare,
			swap);
}

static void ernic_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				      uint64_t raddr, uint64_t add)
{
	ernic_wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr, add, 0);
}

/*
 * ATOMIC WRITE (ERNIC-X PLACE): the 8 bytes as they are in memory, kept
 * in compare_add until the WQE is written.
 */
static void ernic_wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				  uint64_t raddr, const void *atomic_wire_buf)
{
	struct ibv_send_wr *wr = ernic_wr_new(ibqp, IBV_WR_ATOMIC_WRITE);

	if (!wr)
		return;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = raddr;
	memcpy(&wr->wr.atomic.compare_add, atomic_wire_buf,
	       sizeof(wr->wr.atomic.compare_add));
}

/* FLUSH (ERNIC-X PLACE): the range's length and its FETH in the WR. */
static void ernic_wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
			   uint64_t raddr, size_t len, uint8_t type,
			   uint8_t level)
{
	struct ibv_send_wr *wr = ernic_wr_new(ibqp, IBV_WR_FLUSH);

	if (!wr)
		return;
	if (len > UINT32_MAX)
		to_eqp_ex(ibqp)->err = EINVAL;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = raddr;
	wr->wr.atomic.compare_add = len;
	wr->wr.atomic.swap = type | (uint64_t)level << ERNIC_FETH_SEL_SHIFT;
}

/* A type 2 window's bind, with the key @rkey (ERNIC-X MW). */
static void ernic_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct ibv_send_wr *wr = ernic_wr_new(ibqp, IBV_WR_BIND_MW);

	if (!wr)
		return;
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *bind_info;
}

static void ernic_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct ibv_send_wr *wr = ernic_wr_new(ibqp, IBV_WR_LOCAL_INV);

	if (wr)
		wr->invalidate_rkey = invalidate_rkey;
}

/* The remote XRC SRQ of the last WR started (ERNIC-X XRC). */
static void ernic_wr_set_xrc_srqn(struct ibv_qp_ex *ibqp,
				  uint32_t remote_srqn)
{
	struct ibv_send_wr *wr = ernic_wr_cur(to_eqp_ex(ibqp));

	if (wr)
		wr->qp_type.xrc.remote_srqn = remote_srqn;
}

static void ernic_wr_send(struct ibv_qp_ex *ibqp)
{
	ernic_wr_new(ibqp, IBV_WR_SEND);
}

static void ernic_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm)
{
	struct ibv_send_wr *wr = ernic_wr_new(ibqp, IBV_WR_SEND_WITH_IMM);

	if (wr)
		wr->imm_data = imm;
}

static void ernic_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct ibv_send_wr *wr = ernic_wr_new(ibqp, IBV_WR_SEND_WITH_INV);

	if (wr)
		wr->invalidate_rkey = rkey;
}

/* A UD WR's destination (ERNIC-X UD): the AH, the QP and the Q_Key. */
static void ernic_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ibv_send_wr *wr = ernic_wr_cur(to_eqp_ex(ibqp));

	if (!wr)
		return;
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = remote_qpn;
	wr->wr.ud.remote_qkey = remote_qkey;
}

static void ernic_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct ernic_qp *qp = to_eqp_ex(ibqp);
	struct ibv_send_wr *wr = ernic_wr_cur(qp);

	if (!wr)
		return;
	if (num_sge > qp->max_sge) {
		qp->err = EINVAL;
		return;
	}
	memcpy(wr->sg_list, sg_list, num_sge * sizeof(*sg_list));
	wr->num_sge = num_sge;
}

static void ernic_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	ernic_wr_set_sge_list(ibqp, 1, &sge);
}

/*
 * Inline data is copied here at once (the caller may reuse its buffers
 * when the setter returns), into the WR's own max_inline bytes, and
 * posted as one SGE with IBV_SEND_INLINE: the kernel copies it in.
 */
static void ernic_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					  size_t num_buf,
					  const struct ibv_data_buf *buf)
{
	struct ernic_qp *qp = to_eqp_ex(ibqp);
	struct ibv_send_wr *wr = ernic_wr_cur(qp);
	uint8_t *dst;
	size_t i, len = 0;

	if (!wr)
		return;
	dst = &qp->inl[(size_t)(wr - qp->wr) * qp->max_inline];
	for (i = 0; i < num_buf; i++) {
		if (buf[i].length > qp->max_inline - len) {
			qp->err = ENOMEM;
			return;
		}
		memcpy(dst + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	wr->sg_list[0] = (struct ibv_sge){ .addr = (uintptr_t)dst,
					   .length = len };
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void ernic_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	ernic_wr_set_inline_data_list(ibqp, 1, &buf);
}

/* The man page's critical section: wr_start() to wr_complete()/abort(). */
static void ernic_wr_start(struct ibv_qp_ex *ibqp)
{
	struct ernic_qp *qp = to_eqp_ex(ibqp);

	pthread_spin_lock(&qp->wr_lock);
	qp->nwr = 0;
	qp->err = 0;
}

/*
 * One POST_SEND of the chain; the first error of building, or of it.
 * What the provider can check (WR count, SGEs, inline size) refuses the
 * chain here; the driver checks the rest for the whole chain before it
 * writes a WQE (ERNIC_SEND_WHOLE_CHAIN), so a refused chain posts
 * nothing, as ibv_wr_complete(3) asks (docs/driver.md).
 */
static int ernic_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct ernic_qp *qp = to_eqp_ex(ibqp);
	struct ibv_send_wr *bad;
	int ret = qp->err;

	if (!ret && qp->nwr && qp->direct) {
		ret = ernic_dq_post_send(qp, qp->wr, &bad, true);
	} else if (!ret && qp->nwr) {
		qp->wr[0].send_flags |= ERNIC_SEND_WHOLE_CHAIN;
		ret = ibv_cmd_post_send(&ibqp->qp_base, qp->wr, &bad);
	}
	qp->nwr = 0;
	qp->err = 0;
	pthread_spin_unlock(&qp->wr_lock);
	return ret;
}

static void ernic_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct ernic_qp *qp = to_eqp_ex(ibqp);

	qp->nwr = 0;
	qp->err = 0;
	pthread_spin_unlock(&qp->wr_lock);
}

static void ernic_qp_ex_ops(struct ibv_qp_ex *qp)
{
	qp->wr_rdma_read = ernic_wr_rdma_read;
	qp->wr_rdma_write = ernic_wr_rdma_write;
	qp->wr_rdma_write_imm = ernic_wr_rdma_write_imm;
	qp->wr_send = ernic_wr_send;
	qp->wr_send_imm = ernic_wr_send_imm;
	qp->wr_send_inv = ernic_wr_send_inv;
	qp->wr_atomic_cmp_swp = ernic_wr_atomic_cmp_swp;
	qp->wr_atomic_fetch_add = ernic_wr_atomic_fetch_add;
	qp->wr_atomic_write = ernic_wr_atomic_write;
	qp->wr_flush = ernic_wr_flush;
	qp->wr_bind_mw = ernic_wr_bind_mw;
	qp->wr_local_inv = ernic_wr_local_inv;
	qp->wr_set_inline_data = ernic_wr_set_inline_data;
	qp->wr_set_inline_data_list = ernic_wr_set_inline_data_list;
	qp->wr_set_sge = ernic_wr_set_sge;
	qp->wr_set_sge_list = ernic_wr_set_sge_list;
	qp->wr_set_ud_addr = ernic_wr_set_ud_addr;
	qp->wr_set_xrc_srqn = ernic_wr_set_xrc_srqn;
	qp->wr_start = ernic_wr_start;
	qp->wr_complete = ernic_wr_complete;
	qp->wr_abort = ernic_wr_abort;
}

/* Room for max_send_wr WRs of max_send_sge SGEs and max_inline bytes. */
static int ernic_qp_ex_alloc(struct ernic_qp *qp,
			     const struct ibv_qp_cap *cap)
{
	if (pthread_spin_init(&qp->wr_lock, PTHREAD_PROCESS_PRIVATE))
		return ENOMEM;
	qp->wr_api = true;
	qp->max_wr = cap->max_send_wr;
	qp->max_sge = cap->max_send_sge ?: 1;
	qp->max_inline = cap->max_inline_data;
	qp->wr = calloc(qp->max_wr ?: 1, sizeof(*qp->wr));
	qp->sge = calloc((size_t)(qp->max_wr ?: 1) * qp->max_sge,
			 sizeof(*qp->sge));
	qp->inl = calloc((size_t)(qp->max_wr ?: 1), qp->max_inline ?: 1);
	return qp->wr && qp->sge && qp->inl ? 0 : ENOMEM;
}

void ernic_qp_ex_free(struct ernic_qp *qp)
{
	if (qp->wr_api)
		pthread_spin_destroy(&qp->wr_lock);
	free(qp->wr);
	free(qp->sge);
	free(qp->inl);
}

/* A direct QP's regions mapped, and its CQs told of it. */
static int ernic_qp_setup(struct ernic_qp *qp, struct ibv_qp_init_attr_ex *attr,
			  const struct ernic_create_qp_resp *resp)
{
	int ret = 0;

	/* An XRC target has no CQ, an XRC initiator no receive CQ. */
	qp->scq = attr->send_cq ? to_ecq(attr->send_cq) : NULL;
	qp->rcq = attr->recv_cq ? to_ecq(attr->recv_cq) : NULL;
	qp->srq = attr->srq ? to_esrq(attr->srq) : NULL;
	if (resp->flags & ERNIC_QP_DIRECT) {
		ret = ernic_dq_map(qp, attr->pd, resp, &attr->cap);
		qp->dq.sig_all = attr->sq_sig_all;
	}
	if (ret)
		ernic_dq_unmap(qp);
	else
		ernic_cq_attach(qp);
	return ret;
}

/* The ibv_wr_*() a new QP may ask for. */
static uint64_t ernic_qp_ex_ops_of(struct ibv_context *context,
				   const struct ibv_qp_init_attr_ex *attr)
{
	struct ernic_context *ctx = to_ectx(context);

	bool rc = attr->qp_type == IBV_QPT_RC ||
		  attr->qp_type == IBV_QPT_XRC_SEND;

	return ERNIC_QP_EX_OPS |
	       (ctx->atomic && rc ? ERNIC_QP_EX_ATOMIC_OPS : 0) |
	       (ctx->mw && attr->qp_type != IBV_QPT_UD ? ERNIC_QP_EX_MW_OPS : 0) |
	       (ctx->place && attr->qp_type == IBV_QPT_RC ?
		ERNIC_QP_EX_PLACE_OPS : 0);
}

struct ibv_qp *ernic_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct ernic_create_qp_resp resp;
	bool ex = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint32_t mask = attr->comp_mask;
	struct ernic_qp *qp;
	int ret;

	/*
	 * No creation flags, TSO or RSS; XRC with ERNIC-X XRC; the
	 * ibv_wr_*() it can do.
	 */
	if ((ex && attr->send_ops_flags & ~ernic_qp_ex_ops_of(context, attr)) ||
	    attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD |
				IBV_QP_INIT_ATTR_XRCD |
				IBV_QP_INIT_ATTR_CREATE_FLAGS |
				IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
	    ((attr->qp_type == IBV_QPT_XRC_SEND ||
	      attr->qp_type == IBV_QPT_XRC_RECV) &&
	     !to_ectx(context)->xrc) ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	/* No creation flags (checked above): not the kernel's business. */
	attr->comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ernic_create_qp_cmd(context, qp, attr, &resp);
	attr->comp_mask = mask;
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	ret = ernic_qp_setup(qp, attr, &resp);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		free(qp);
		errno = ret;
		return NULL;
	}
	if (ex) {
		/* The caps granted: the driver may round them up. */
		ret = ernic_qp_ex_alloc(qp, &attr->cap);
		if (ret) {
			ernic_qp_ex_free(qp);
			ibv_cmd_destroy_qp(&qp->vqp.qp);
			ernic_cq_detach(qp);
			ernic_dq_unmap(qp);
			free(qp);
			errno = ret;
			return NULL;
		}
		ernic_qp_ex_ops(&qp->vqp.qp_ex);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return &qp->vqp.qp;
}
