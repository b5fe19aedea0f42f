// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Direct QPs of the ernic provider: posting and polling with no system
 * call (docs/driver.md, "Direct QPs").
 *
 * On a device with ERNIC-X user QPs (UDB, docs/extension.md) the driver
 * maps a QP's rings into the process: the SQ of 128-byte WQEs with keyed
 * SGEs, the RQ of 64-byte receive WQEs, the CQ ring and the receive
 * metadata ring (read-only), a status page with the device's CQ and RQ
 * doorbell words and the driver's view of the QP state (read-only), and
 * the QP's own 4 KiB page of BAR3, which holds its SQPIi and RQCIi and
 * nothing else. Nothing written here is trusted: the device refuses any
 * WQE of the QP that names memory other than through a key of its PD
 * (EXTQPCONFi[2]); the checks below only turn what the device would end
 * in a FATAL into the error return of the post, as the kernel's post
 * path does for other QPs.
 */

#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <ccan/array_size.h>
#include <util/mmio.h>
#include <util/udma_barrier.h>

#include "ernic.h"

static inline void put_le16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t get_le16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

/* The QP state as the driver last published it (enum ibv_qp_state). */
static uint32_t ernic_dq_state(struct ernic_dq *q)
{
	uint32_t s = q->st->state;

	/* What the driver wrote before the state (err_status) reads after. */
	udma_from_device_barrier();
	return s;
}

/* ---- Mapping ------------------------------------------------------------ */

int ernic_dq_map(struct ernic_qp *qp, struct ibv_pd *pd,
		 const struct ernic_create_qp_resp *resp,
		 const struct ibv_qp_cap *cap)
{
	static const int prot[ERNIC_UQ_NR] = {
		[ERNIC_UQ_SQ] = PROT_READ | PROT_WRITE,
		[ERNIC_UQ_RQ] = PROT_READ | PROT_WRITE,
		[ERNIC_UQ_CQ] = PROT_READ,
		[ERNIC_UQ_META] = PROT_READ,
		[ERNIC_UQ_STATUS] = PROT_READ,
		[ERNIC_UQ_UDB] = PROT_READ | PROT_WRITE,
	};
	struct ernic_dq *q = &qp->dq;
	int fd = pd->context->cmd_fd;
	size_t sq_len, rec = 0;
	int r;

	q->sq_depth = resp->sq_depth;
	q->rq_depth = resp->rq_depth;
	q->ud = qp->vqp.qp.qp_type == IBV_QPT_UD;
	q->uc = qp->vqp.qp.qp_type == IBV_QPT_UC;
	q->ud_mtu = resp->ud_mtu;
	if (resp->flags & ERNIC_QP_DBREC)
		rec = resp->flags & ERNIC_QP_RQREC ? ERNIC_RQREC_SIZE :
						     ERNIC_DBREC_SIZE;
	sq_len = (size_t)q->sq_depth * ERNIC_XWQE_SIZE + rec;
	if (q->sq_depth < 2 || q->rq_depth < 2 ||
	    resp->len[ERNIC_UQ_SQ] < sq_len ||
	    resp->len[ERNIC_UQ_RQ] < (size_t)q->rq_depth * ERNIC_RWQE_SIZE ||
	    resp->len[ERNIC_UQ_CQ] < (size_t)q->sq_depth * ERNIC_CQE_SIZE ||
	    resp->len[ERNIC_UQ_META] <
	    (size_t)q->rq_depth * ERNIC_RXMETA_SIZE ||
	    resp->len[ERNIC_UQ_STATUS] < sizeof(struct ernic_uq_status) ||
	    resp->len[ERNIC_UQ_UDB] < ERNIC_UDB_RQCI + 4)
		return EINVAL;
	for (r = 0; r < ERNIC_UQ_NR; r++) {
		q->map[r] = mmap(NULL, resp->len[r], prot[r], MAP_SHARED, fd,
				 resp->key[r]);
		if (q->map[r] == MAP_FAILED) {
			q->map[r] = NULL;
			return errno;
		}
		q->len[r] = resp->len[r];
	}
	q->sq = q->map[ERNIC_UQ_SQ];
	q->rq = q->map[ERNIC_UQ_RQ];
	q->cqe = q->map[ERNIC_UQ_CQ];
	q->meta = q->map[ERNIC_UQ_META];
	q->st = q->map[ERNIC_UQ_STATUS];
	q->udb = q->map[ERNIC_UQ_UDB];
	/* The doorbell record: the SQ region's last 4 or 8 bytes. */
	if (rec)
		q->dbrec = (volatile __le32 *)(q->sq + q->len[ERNIC_UQ_SQ] -
					       rec);
	q->rqrec = rec == ERNIC_RQREC_SIZE;
	q->swqe = calloc(q->sq_depth, sizeof(*q->swqe));
	q->rwr_id = calloc(q->rq_depth, sizeof(*q->rwr_id));
	if (!q->swqe || !q->rwr_id)
		return ENOMEM;
	/* Inline data beyond SDATA goes from a buffer of the QP's own MR. */
	if (cap->max_inline_data > ERNIC_WQE_SDATA_MAX) {
		q->inl = calloc(q->sq_depth, cap->max_inline_data);
		if (!q->inl)
			return ENOMEM;
		q->inl_mr = ibv_reg_mr(pd, q->inl, (size_t)q->sq_depth *
				       cap->max_inline_data, 0);
		if (!q->inl_mr)
			return errno;
	}
	if (pthread_spin_init(&q->sq_lock, PTHREAD_PROCESS_PRIVATE) ||
	    pthread_spin_init(&q->rq_lock, PTHREAD_PROCESS_PRIVATE))
		return ENOMEM;
	/*
	 * The RQ starts one short of full (guest-driver/ernic_qp.c); with
	 * an SRQ the driver has granted all of it.
	 */
	q->rq_seen = q->rq_depth - 1;
	q->rq_ci = qp->srq ? q->rq_depth - 1 : 0;
	qp->max_inline = cap->max_inline_data;
	qp->direct = true;
	return 0;
}

void ernic_dq_unmap(struct ernic_qp *qp)
{
	struct ernic_dq *q = &qp->dq;
	int r;

	if (q->inl_mr)
		ibv_dereg_mr(q->inl_mr);
	free(q->inl);
	free(q->swqe);
	free(q->rwr_id);
	for (r = 0; r < ERNIC_UQ_NR; r++)
		if (q->map[r])
			munmap(q->map[r], q->len[r]);
	if (qp->direct) {
		pthread_spin_destroy(&q->sq_lock);
		pthread_spin_destroy(&q->rq_lock);
	}
	memset(q, 0, sizeof(*q));
	qp->direct = false;
}

/* ---- Posting -------------------------------------------------------------- */

static uint64_t ernic_sge_total(const struct ibv_sge *sg, int n)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < n; i++)
		t += sg[i].length;
	return t;
}

/* The ERNIC opcode of @wr and what its completion reports, as the driver. */
static int ernic_dq_opcode(const struct ibv_send_wr *wr, uint8_t *op,
			   uint8_t *wc_op)
{
	static const struct {
		uint8_t op, wc;
	} map[] = {
		[IBV_WR_RDMA_WRITE] = { ERNIC_OP_WRITE, IBV_WC_RDMA_WRITE },
		[IBV_WR_RDMA_WRITE_WITH_IMM] = { ERNIC_OP_WRITE_IMM,
						 IBV_WC_RDMA_WRITE },
		[IBV_WR_SEND] = { ERNIC_OP_SEND, IBV_WC_SEND },
		[IBV_WR_SEND_WITH_IMM] = { ERNIC_OP_SEND_IMM, IBV_WC_SEND },
		[IBV_WR_RDMA_READ] = { ERNIC_OP_READ, IBV_WC_RDMA_READ },
		[IBV_WR_SEND_WITH_INV] = { ERNIC_OP_SEND_INV, IBV_WC_SEND },
		[IBV_WR_ATOMIC_CMP_AND_SWP] = { ERNIC_OP_ATOMIC_CMP_SWP,
						IBV_WC_COMP_SWAP },
		[IBV_WR_ATOMIC_FETCH_AND_ADD] = { ERNIC_OP_ATOMIC_FETCH_ADD,
						  IBV_WC_FETCH_ADD },
		[IBV_WR_LOCAL_INV] = { ERNIC_OP_LOCAL_INV, IBV_WC_LOCAL_INV },
		[IBV_WR_BIND_MW] = { ERNIC_OP_BIND_MW, IBV_WC_BIND_MW },
		[IBV_WR_FLUSH] = { ERNIC_OP_FLUSH, IBV_WC_FLUSH },
		[IBV_WR_ATOMIC_WRITE] = { ERNIC_OP_ATOMIC_WRITE,
					  IBV_WC_ATOMIC_WRITE },
	};

	if ((unsigned int)wr->opcode >= ARRAY_SIZE(map) ||
	    (!map[wr->opcode].op && wr->opcode != IBV_WR_RDMA_WRITE))
		return EINVAL;
	*op = map[wr->opcode].op;
	*wc_op = map[wr->opcode].wc;
	return 0;
}

static bool ernic_op_rw(uint8_t op)
{
	return op == ERNIC_OP_WRITE || op == ERNIC_OP_WRITE_IMM ||
	       op == ERNIC_OP_READ;
}

static bool ernic_op_atomic(uint8_t op)
{
	return op == ERNIC_OP_ATOMIC_CMP_SWP || op == ERNIC_OP_ATOMIC_FETCH_ADD;
}

/*
 * An atomic: on an RC QP of a device with atomics, one keyed SGE of
 * exactly 8 bytes for the result (IBTA 10.7.2.3), never inline.
 */
static bool ernic_dq_atomic_ok(struct ernic_qp *qp,
			       const struct ibv_send_wr *wr)
{
	return to_ectx(qp->vqp.qp.context)->atomic && !qp->dq.ud &&
	       !qp->dq.uc && wr->num_sge == 1 &&
	       wr->sg_list[0].length == ERNIC_ATOMIC_LEN &&
	       wr->sg_list[0].lkey && !(wr->send_flags & IBV_SEND_INLINE);
}

static bool ernic_op_place(uint8_t op)
{
	return op == ERNIC_OP_FLUSH || op == ERNIC_OP_ATOMIC_WRITE;
}

/*
 * FLUSH or ATOMIC WRITE (ERNIC-X PLACE): on an RC QP of a device with
 * them; a FLUSH asks for a placement type IBTA defines, of a range or a
 * region, in a length the RETH holds (ernic_wr_flush() kept it).
 */
static bool ernic_dq_place_ok(struct ernic_qp *qp,
			      const struct ibv_send_wr *wr, uint8_t op)
{
	uint64_t feth = wr->wr.atomic.swap;

	if (!to_ectx(qp->vqp.qp.context)->place ||
	    qp->vqp.qp.qp_type != IBV_QPT_RC)
		return false;
	if (op == ERNIC_OP_ATOMIC_WRITE)
		return true;
	return (feth & ERNIC_FETH_PLT_MASK) &&
	       !(feth & ~(uint64_t)(ERNIC_FETH_PLT_GLOBAL |
				    ERNIC_FETH_PLT_PERSISTENT |
				    ERNIC_FETH_SEL_MASK)) &&
	       (feth & ERNIC_FETH_SEL_MASK) >> ERNIC_FETH_SEL_SHIFT <=
	       ERNIC_FETH_SEL_MR;
}

/*
 * A window's bind or a LOCAL_INV (ERNIC-X MW): on an RC or UC QP of a
 * device with windows; a bind names its region through an L_Key, unless
 * it unbinds (length 0).
 */
static bool ernic_dq_mw_ok(struct ernic_qp *qp, const struct ibv_send_wr *wr,
			   uint8_t op)
{
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

	if (!to_ectx(qp->vqp.qp.context)->mw || qp->dq.ud)
		return false;
	if (op == ERNIC_OP_LOCAL_INV)
		return true;
	return wr->bind_mw.mw && (b->mr || !b->length) &&
	       (wr->bind_mw.rkey >> 8) == (wr->bind_mw.mw->rkey >> 8);
}

/*
 * What the device would refuse (FATAL) or the driver refuses on its own
 * post path: the same rules, so a direct QP fails a post where another
 * user QP does.
 */
static int ernic_dq_check(struct ernic_qp *qp, const struct ibv_send_wr *wr)
{
	uint8_t op, wc_op;
	uint64_t len;
	int i;

	if (ernic_dq_opcode(wr, &op, &wc_op) || wr->num_sge < 0 ||
	    wr->num_sge > ERNIC_XWQE_SGES)
		return EINVAL;
	if (ernic_op_atomic(op))
		return ernic_dq_atomic_ok(qp, wr) ? 0 : EINVAL;
	if (op == ERNIC_OP_BIND_MW || op == ERNIC_OP_LOCAL_INV)
		return ernic_dq_mw_ok(qp, wr, op) ? 0 : EINVAL;
	if (ernic_op_place(op))
		return ernic_dq_place_ok(qp, wr, op) ? 0 : EINVAL;
	len = ernic_sge_total(wr->sg_list, wr->num_sge);
	/* A UD SEND: one packet to an AH with a table entry. */
	if (qp->dq.ud && (ernic_op_rw(op) || op == ERNIC_OP_SEND_INV ||
			  len > qp->dq.ud_mtu || !wr->wr.ud.ah ||
			  to_eah(wr->wr.ud.ah)->idx < 0))
		return EINVAL;
	/* UC has SENDs and WRITEs only (IBTA 9.7); the device refuses more. */
	if (qp->dq.uc && (op == ERNIC_OP_READ || op == ERNIC_OP_SEND_INV))
		return EINVAL;
	/*
	 * PG332 v3.1 p.10 lists zero-length SENDs as unsupported; a direct
	 * QP's keyed WQE of no SGE is one (docs/extension.md, "Keyed SGEs").
	 */
	if (len > ERNIC_MAX_MSG_SIZE)
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (op == ERNIC_OP_READ || len > qp->max_inline)
			return EINVAL;
		/* Beyond a SEND's SDATA: the slot's buffer in the QP's MR. */
		if ((ernic_op_rw(op) || len > ERNIC_WQE_SDATA_MAX) &&
		    !qp->dq.inl_mr)
			return EINVAL;
		return 0;
	}
	/* L_Key 0 names bus memory: the device would refuse it. */
	for (i = 0; i < wr->num_sge; i++)
		if (!wr->sg_list[i].lkey)
			return EINVAL;
	return 0;
}

void ernic_put_sges(uint8_t *g, const struct ibv_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++, g += ERNIC_SGE_SIZE) {
		put_le64(g + ERNIC_SGE_ADDR, sg[i].addr);
		put_le32(g + ERNIC_SGE_LEN, sg[i].length);
		put_le32(g + ERNIC_SGE_LKEY, sg[i].lkey);
	}
}

/* Inline data: a SEND of up to 16 bytes in SDATA, else the slot's MR. */
static void ernic_dq_put_inline(struct ernic_qp *qp, uint8_t *w, uint32_t slot,
				const struct ibv_send_wr *wr, uint32_t len,
				uint8_t op)
{
	struct ernic_dq *q = &qp->dq;
	uint8_t *dst = w + ERNIC_WQE_SDATA;
	struct ibv_sge sge;
	int i;

	if (ernic_op_rw(op) || len > ERNIC_WQE_SDATA_MAX) {
		dst = q->inl + (size_t)slot * qp->max_inline;
		sge = (struct ibv_sge){ .addr = (uintptr_t)dst, .length = len,
					.lkey = q->inl_mr->lkey };
		w[ERNIC_XWQE_NSGE] = 1;
		ernic_put_sges(w + ERNIC_XWQE_SGE, &sge, 1);
	}
	for (i = 0; i < wr->num_sge; i++) {
		memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		dst += wr->sg_list[i].length;
	}
}

/* An atomic's remote word and operands (docs/extension.md, "Atomics"). */
static void ernic_dq_put_atomic(uint8_t *w, const struct ibv_send_wr *wr,
				uint8_t op)
{
	bool cas = op == ERNIC_OP_ATOMIC_CMP_SWP;

	put_le32(w + ERNIC_WQE_LENGTH, ERNIC_ATOMIC_LEN);
	put_le64(w + ERNIC_WQE_ROFFSET, wr->wr.atomic.remote_addr);
	put_le32(w + ERNIC_WQE_RTAG, wr->wr.atomic.rkey);
	put_le64(w + ERNIC_WQE_ATOMIC_SWAP,
		 cas ? wr->wr.atomic.swap : wr->wr.atomic.compare_add);
	if (cas)
		put_le64(w + ERNIC_WQE_ATOMIC_COMPARE,
			 wr->wr.atomic.compare_add);
}

/*
 * FLUSH's range and FETH, ATOMIC WRITE's 8 bytes (docs/extension.md,
 * "Placement"); neither has local data.
 */
static void ernic_dq_put_place(uint8_t *w, const struct ibv_send_wr *wr,
			       uint8_t op)
{
	put_le64(w + ERNIC_WQE_ROFFSET, wr->wr.atomic.remote_addr);
	put_le32(w + ERNIC_WQE_RTAG, wr->wr.atomic.rkey);
	if (op == ERNIC_OP_ATOMIC_WRITE) {
		memcpy(w + ERNIC_WQE_AWRITE_DATA, &wr->wr.atomic.compare_add,
		       8);
		return;
	}
	put_le32(w + ERNIC_WQE_FLUSH_LEN, wr->wr.atomic.compare_add);
	put_le32(w + ERNIC_WQE_FLUSH_FETH, wr->wr.atomic.swap);
}

/* MRACC's remote bits of a window's IBV_ACCESS_* (docs/extension.md). */
static uint32_t ernic_dq_mw_acc(unsigned int access)
{
	return (access & IBV_ACCESS_REMOTE_READ ? ERNIC_MRACC_REMOTE_READ : 0) |
	       (access & IBV_ACCESS_REMOTE_WRITE ? ERNIC_MRACC_REMOTE_WRITE : 0) |
	       (access & IBV_ACCESS_REMOTE_ATOMIC ? ERNIC_MRACC_REMOTE_ATOMIC : 0);
}

/* A bind's window, key, range, region and access; a LOCAL_INV's key. */
static void ernic_dq_put_mw(uint8_t *w, const struct ibv_send_wr *wr,
			    uint8_t op)
{
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

	if (op == ERNIC_OP_LOCAL_INV) {
		put_le32(w + ERNIC_WQE_RTAG, wr->invalidate_rkey);
		return;
	}
	put_le32(w + ERNIC_WQE_RTAG, wr->bind_mw.rkey);
	put_le64(w + ERNIC_WQE_ROFFSET, b->addr);
	put_le64(w + ERNIC_WQE_BIND_LEN, b->length);
	put_le32(w + ERNIC_WQE_BIND_LKEY, b->mr ? b->mr->lkey : 0);
	put_le32(w + ERNIC_WQE_BIND_ACC, ernic_dq_mw_acc(b->mw_access_flags));
}

/* The checked WR @wr into SQ slot sq_pi (PG332 Table 2-1, ERNIC-X). */
static void ernic_dq_write(struct ernic_qp *qp, const struct ibv_send_wr *wr)
{
	struct ernic_dq *q = &qp->dq;
	uint32_t slot = q->sq_pi;
	uint8_t *w = q->sq + (size_t)slot * ERNIC_XWQE_SIZE;
	struct ernic_dswqe *s = &q->swqe[slot];
	uint32_t len = ernic_sge_total(wr->sg_list, wr->num_sge);
	uint8_t op = 0, wc_op = 0;

	/* ernic_dq_check() accepted @wr, so its opcode maps. */
	ernic_dq_opcode(wr, &op, &wc_op);
	memset(w, 0, ERNIC_XWQE_SIZE);
	put_le16(w + ERNIC_WQE_WRID, slot);
	w[ERNIC_WQE_OPCODE] = op;
	if (q->ud) {
		/* The AH's entry, the destination QP and the Q_Key. */
		uint32_t qkey = wr->wr.ud.remote_qkey;

		put_le32(w + ERNIC_WQE_LENGTH, len);
		put_le32(w + ERNIC_WQE_UD_DQPN, wr->wr.ud.remote_qpn & 0xffffff);
		put_le32(w + ERNIC_WQE_UD_QKEY,
			 qkey & 0x80000000 ? q->qkey : qkey);
		put_le32(w + ERNIC_WQE_UD_AH, to_eah(wr->wr.ud.ah)->idx);
	} else if (ernic_op_rw(op)) {
		put_le64(w + ERNIC_WQE_ROFFSET, wr->wr.rdma.remote_addr);
		put_le32(w + ERNIC_WQE_RTAG, wr->wr.rdma.rkey);
	} else if (ernic_op_atomic(op)) {
		ernic_dq_put_atomic(w, wr, op);
	} else if (op == ERNIC_OP_BIND_MW || op == ERNIC_OP_LOCAL_INV) {
		ernic_dq_put_mw(w, wr, op);
	} else if (ernic_op_place(op)) {
		ernic_dq_put_place(w, wr, op);
	} else {
		put_le32(w + ERNIC_WQE_LENGTH, len);
		if (wr->opcode == IBV_WR_SEND_WITH_INV)
			put_le32(w + ERNIC_WQE_RTAG, wr->invalidate_rkey);
	}
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		put_le32(w + ERNIC_WQE_IMMDT, be32toh(wr->imm_data));
	/* An XRC initiator names the remote XRC SRQ (ERNIC-X XRC). */
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		put_le32(w + ERNIC_WQE_XRC_SRQN,
			 wr->qp_type.xrc.remote_srqn & 0xffffff);
	if (op == ERNIC_OP_BIND_MW || op == ERNIC_OP_LOCAL_INV ||
	    ernic_op_place(op)) {
		len = 0;		/* no data, whatever the SGEs say */
	} else if (wr->send_flags & IBV_SEND_INLINE) {
		ernic_dq_put_inline(qp, w, slot, wr, len, op);
	} else {
		w[ERNIC_XWQE_NSGE] = wr->num_sge;
		ernic_put_sges(w + ERNIC_XWQE_SGE, wr->sg_list, wr->num_sge);
	}
	s->wr_id = wr->wr_id;
	s->byte_len = len;
	s->opcode = wc_op;
	s->signaled = (wr->send_flags & IBV_SEND_SIGNALED) || q->sig_all;
	q->sq_pi = (slot + 1) % q->sq_depth;
}

/* SQPIi through the QP's doorbell page, unless SQD holds new WQEs. */
static void ernic_dq_ring_sq(struct ernic_dq *q, uint32_t state)
{
	if (state == IBV_QPS_SQD) {
		q->sq_unrung = true;
		return;
	}
	q->sq_unrung = false;
	/*
	 * The WQEs are visible before the doorbell (PG332 p.60), and before
	 * the doorbell record, which the device reads at the doorbell (and
	 * after a migration without one).
	 */
	udma_to_device_barrier();
	if (q->dbrec) {
		*q->dbrec = htole32(q->sq_pi);
		udma_to_device_barrier();
	}
	mmio_write32((void *)(q->udb + ERNIC_UDB_SQPI / 4), q->sq_pi);
}

static uint32_t ernic_dq_room(struct ernic_dq *q)
{
	return (q->sq_ci + q->sq_depth - q->sq_pi - 1) % q->sq_depth;
}

/*
 * Post @wr's chain: WR by WR (ibv_post_send(), *@bad the first refused,
 * those before it posted), or with @whole all or nothing (ibv_wr_*()).
 * IBTA 10.8.2: before RTS a post is an immediate error.
 */
int ernic_dq_post_send(struct ernic_qp *qp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad, bool whole)
{
	struct ernic_dq *q = &qp->dq;
	uint32_t state = ernic_dq_state(q), n = 0;
	struct ibv_send_wr *w;
	int ret = 0;

	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
	    state == IBV_QPS_RTR) {
		*bad = wr;
		return EINVAL;
	}
	pthread_spin_lock(&q->sq_lock);
	for (w = wr; whole && w; w = w->next, n++) {
		ret = ernic_dq_check(qp, w);
		if (!ret && n >= ernic_dq_room(q))
			ret = ENOMEM;
		if (ret) {
			*bad = w;
			goto out;
		}
	}
	for (w = wr; w; w = w->next) {
		ret = whole ? 0 : ernic_dq_check(qp, w);
		if (!ret && !ernic_dq_room(q))
			ret = ENOMEM;
		if (ret) {
			*bad = w;
			break;
		}
		ernic_dq_write(qp, w);
	}
	if (w != wr)
		ernic_dq_ring_sq(q, state);
out:
	pthread_spin_unlock(&q->sq_lock);
	return ret;
}

/*
 * Receive WRs: each WQE goes to the slot the device fills next after
 * those granted, and RQCIi grants it (guest-driver/ernic_wr.c). In Error
 * nothing is granted; polling flushes them.
 */
int ernic_dq_post_recv(struct ernic_qp *qp, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad)
{
	struct ernic_dq *q = &qp->dq;
	uint32_t state = ernic_dq_state(q);
	bool granted = false;
	int ret = 0, i;

	if (state == IBV_QPS_RESET) {
		*bad = wr;
		return EINVAL;
	}
	pthread_spin_lock(&q->rq_lock);
	for (; wr; wr = wr->next) {
		uint32_t slot = (q->rq_ci + q->rq_depth - 1) % q->rq_depth;
		uint8_t *w = q->rq + (size_t)slot * ERNIC_RWQE_SIZE;

		ret = wr->num_sge < 0 || wr->num_sge > ERNIC_RWQE_SGES ?
		      EINVAL : 0;
		for (i = 0; !ret && i < wr->num_sge; i++)
			ret = wr->sg_list[i].lkey ? 0 : EINVAL;
		if (!ret && q->rwqe_pi - q->rwqe_ci >= q->rq_depth - 1)
			ret = ENOMEM;
		if (ret) {
			*bad = wr;
			break;
		}
		q->rwr_id[q->rwqe_pi % q->rq_depth] = wr->wr_id;
		q->rwqe_pi++;
		if (state == IBV_QPS_ERR)
			continue;
		memset(w, 0, ERNIC_RWQE_SIZE);
		ernic_put_sges(w, wr->sg_list, wr->num_sge);
		q->rq_ci = (q->rq_ci + 1) % q->rq_depth;
		granted = true;
	}
	if (granted) {
		/* The WQEs are visible before RQCIi or the record grants them. */
		udma_to_device_barrier();
		/* With an RQ record the device reads it when it needs to. */
		if (q->rqrec)
			q->dbrec[1] = htole32(q->rq_ci);
		else
			mmio_write32((void *)(q->udb + ERNIC_UDB_RQCI / 4),
				     q->rq_ci);
	}
	pthread_spin_unlock(&q->rq_lock);
	return ret;
}

/* ---- Polling -------------------------------------------------------------- */

/*
 * An ERRFLAG CQE's status is the driver's to name (from the FATAL code,
 * guest-driver/ernic_qp.c), published with the Error state. The device
 * writes the CQE before the driver hears of the FATAL, so while the
 * published state is not Error a query (which makes the driver read the
 * status queue, as its own poll does) settles it. An ERRFLAG with no
 * FATAL behind it is a flush, and the QP stays as it is.
 */
static void ernic_dq_err_sync(struct ernic_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	uint32_t s = ernic_dq_state(&qp->dq);

	if (s != IBV_QPS_ERR && s != IBV_QPS_RESET)
		ibv_query_qp(&qp->vqp.qp, &attr, IBV_QP_STATE, &init);
}

static enum ibv_wc_status ernic_dq_err_status(struct ernic_dq *q)
{
	uint32_t st = q->st->err_status;

	if (q->err_taken || st == ERNIC_UQ_NO_STATUS ||
	    st > IBV_WC_TM_RNDV_INCOMPLETE)
		return IBV_WC_WR_FLUSH_ERR;
	q->err_taken = true;
	return st;
}

/* Send completions: CQHEADi's doorbell word, then the CQEs (PG332 p.60). */
int ernic_dq_poll_sq(struct ernic_qp *qp, int n, struct ibv_wc *wc)
{
	struct ernic_dq *q = &qp->dq;
	uint32_t head;
	int got = 0;

	pthread_spin_lock(&q->sq_lock);
	head = (le32toh(q->st->cq_db) & 0xffff) % q->sq_depth;
	/* The CQEs are read after CQHEAD, which the device writes last. */
	udma_from_device_barrier();
	while (q->sq_ci != head && got < n) {
		uint32_t cqe = le32toh(q->cqe[q->sq_ci]);
		struct ernic_dswqe *s = &q->swqe[q->sq_ci];
		bool err = cqe & ERNIC_CQE_ERRFLAG_MASK;

		if (err)
			ernic_dq_err_sync(qp);
		q->sq_ci = (q->sq_ci + 1) % q->sq_depth;
		if (!err && !s->signaled)
			continue;
		memset(&wc[got], 0, sizeof(wc[got]));
		wc[got].wr_id = s->wr_id;
		wc[got].status = err ? ernic_dq_err_status(q) : IBV_WC_SUCCESS;
		wc[got].opcode = s->opcode;
		wc[got].byte_len = s->byte_len;
		wc[got].qp_num = qp->vqp.qp.qp_num;
		got++;
	}
	pthread_spin_unlock(&q->sq_lock);
	return got;
}

/* RC opcodes RDMA WRITE FIRST (0x06) .. WRITE ONLY with Immediate (0x0b). */
#define ERNIC_OPC_WRITE_FIRST		0x06
#define ERNIC_OPC_WRITE_ONLY_IMM	0x0b

/*
 * A receive the device placed, from its metadata entry @m (a QP's ring,
 * or an XRC SRQ's WQE written back; docs/extension.md).
 */
void ernic_meta_wc(const uint8_t *m, bool ud, struct ibv_wc *wc)
{
	uint8_t flags = m[ERNIC_RXMETA_FLAGS];
	uint8_t opc = m[ERNIC_RXMETA_OPCODE];
	uint32_t data = get_le32(m + ERNIC_RXMETA_DATA);

	wc->byte_len = get_le32(m + ERNIC_RXMETA_LEN);
	if (ud) {
		/* The 40-byte GRH area, then the payload. */
		wc->src_qp = get_le32(m + ERNIC_RXMETA_SQPN) & 0xffffff;
		wc->wc_flags |= IBV_WC_GRH;
		wc->sl = flags & ERNIC_RXMETA_F_IPV6 ? ERNIC_UD_SL_ROCEV2_IPV6 :
						       ERNIC_UD_SL_ROCEV2_IPV4;
	}
	if (flags & ERNIC_RXMETA_F_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = htobe32(data);
	} else if (flags & ERNIC_RXMETA_F_INV) {
		wc->wc_flags |= IBV_WC_WITH_INV;
		wc->invalidated_rkey = data;
	}
	if (opc >= ERNIC_OPC_WRITE_FIRST && opc <= ERNIC_OPC_WRITE_ONLY_IMM) {
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		return;
	}
	switch (flags >> ERNIC_RXMETA_STATUS_SHIFT) {
	case ERNIC_RXMETA_ST_OK:
		break;
	case ERNIC_RXMETA_ST_LEN:
		wc->status = IBV_WC_LOC_LEN_ERR;
		break;
	case ERNIC_RXMETA_ST_FLUSH:
		wc->status = IBV_WC_WR_FLUSH_ERR;
		break;
	default:
		wc->status = IBV_WC_LOC_PROT_ERR;
	}
}

static void ernic_dq_recv(struct ernic_dq *q, struct ibv_wc *wc)
{
	ernic_meta_wc(q->meta + (size_t)q->rq_seen * ERNIC_RXMETA_SIZE, q->ud,
		      wc);
}

/*
 * Receive completions of a QP of an SRQ: each RQ slot the device filled
 * names the SRQ slot its message took, whose WR ID it reports; the QP's
 * slot is then granted again. The SRQ's WRs are not flushed in Error:
 * they stay for its other QPs (IBTA 10.2.9.5).
 */
static int ernic_dq_poll_srq(struct ernic_qp *qp, int n, struct ibv_wc *wc)
{
	struct ernic_dq *q = &qp->dq;
	uint32_t pi;
	int got = 0;

	pthread_spin_lock(&q->rq_lock);
	pi = (le32toh(q->st->rq_db) & 0xffff) % q->rq_depth;
	/* The metadata is read after the doorbell word that covers it. */
	udma_from_device_barrier();
	while (got < n && q->rq_seen != pi) {
		const uint8_t *m = q->meta +
				   (size_t)q->rq_seen * ERNIC_RXMETA_SIZE;
		struct ibv_wc *c = &wc[got++];

		memset(c, 0, sizeof(*c));
		c->wr_id = ernic_srq_complete(qp->srq,
					      get_le16(m + ERNIC_RXMETA_SRQ_WQE));
		c->qp_num = qp->vqp.qp.qp_num;
		c->src_qp = q->dest_qpn;
		c->opcode = IBV_WC_RECV;
		ernic_dq_recv(q, c);
		q->rq_seen = (q->rq_seen + 1) % q->rq_depth;
		q->rq_ci = (q->rq_ci + 1) % q->rq_depth;
	}
	if (got)
		mmio_write32((void *)(q->udb + ERNIC_UDB_RQCI / 4), q->rq_ci);
	pthread_spin_unlock(&q->rq_lock);
	return got;
}

/*
 * A poll of a CQ takes the state of each of its RQs before it reads any
 * SQ's completions (ernic_poll_cq()). The driver publishes Error only
 * after the device has written the CQE that names the FATAL (PG332
 * p.17), so receive WRs flushed in that state come after that CQE, as
 * on one ordered CQ, even if Error is published during the poll.
 */
void ernic_dq_poll_begin(struct ernic_qp *qp)
{
	qp->dq.poll_state = ernic_dq_state(&qp->dq);
}

/* Receive completions: the RQ producer index's doorbell word. */
int ernic_dq_poll_rq(struct ernic_qp *qp, int n, struct ibv_wc *wc)
{
	struct ernic_dq *q = &qp->dq;
	uint32_t state = q->poll_state;
	uint32_t pi;
	int got = 0;

	if (qp->srq)
		return ernic_dq_poll_srq(qp, n, wc);
	pthread_spin_lock(&q->rq_lock);
	pi = (le32toh(q->st->rq_db) & 0xffff) % q->rq_depth;
	/* The metadata is read after the doorbell word that covers it. */
	udma_from_device_barrier();
	while (got < n && q->rwqe_ci != q->rwqe_pi) {
		struct ibv_wc *c = &wc[got];

		memset(c, 0, sizeof(*c));
		c->wr_id = q->rwr_id[q->rwqe_ci % q->rq_depth];
		c->qp_num = qp->vqp.qp.qp_num;
		c->src_qp = q->dest_qpn;
		c->opcode = IBV_WC_RECV;
		if (q->rq_seen != pi) {
			ernic_dq_recv(q, c);
			q->rq_seen = (q->rq_seen + 1) % q->rq_depth;
		} else if (state == IBV_QPS_ERR) {
			/* IBTA 10.3.1: Error flushes receive WRs. */
			c->status = IBV_WC_WR_FLUSH_ERR;
		} else {
			break;
		}
		q->rwqe_ci++;
		got++;
	}
	pthread_spin_unlock(&q->rq_lock);
	return got;
}

/*
 * After a modify_qp the driver accepted: Reset empties the rings (the
 * driver zeroed the device's indices, IBTA drops the WRs), RTS and Error
 * ring what SQD held back, the remote QPN is what receives report.
 */
void ernic_dq_modified(struct ernic_qp *qp, const struct ibv_qp_attr *attr,
		       int mask)
{
	struct ernic_dq *q = &qp->dq;

	if (mask & IBV_QP_DEST_QPN)
		q->dest_qpn = attr->dest_qp_num;
	if (mask & IBV_QP_QKEY)
		q->qkey = attr->qkey;
	if (!(mask & IBV_QP_STATE))
		return;
	pthread_spin_lock(&q->sq_lock);
	if (attr->qp_state == IBV_QPS_RESET) {
		q->sq_pi = 0;
		q->sq_ci = 0;
		q->sq_unrung = false;
		q->err_taken = false;
	} else if (q->sq_unrung && (attr->qp_state == IBV_QPS_RTS ||
				    attr->qp_state == IBV_QPS_ERR)) {
		ernic_dq_ring_sq(q, attr->qp_state);
	}
	pthread_spin_unlock(&q->sq_lock);
	if (attr->qp_state != IBV_QPS_RESET)
		return;
	pthread_spin_lock(&q->rq_lock);
	q->rq_ci = qp->srq ? q->rq_depth - 1 : 0;
	q->rq_seen = q->rq_depth - 1;
	q->rwqe_pi = 0;
	q->rwqe_ci = 0;
	pthread_spin_unlock(&q->rq_lock);
}
