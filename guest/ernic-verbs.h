/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ernic-verbs.h: what the project's guest verbs programs share (one
 * device, its PD, CQ and a registered buffer; RC QP pairs connected in
 * loopback on the device's own GID, or to a peer's; posting and polling).
 * Included by ernic-uverbs-test.c and, through ernic-fault.h, the fault
 * programs; not a library.
 */
#ifndef ERNIC_VERBS_H
#define ERNIC_VERBS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

/* Attributes of the QPs qp_connect() makes; a program may change them. */
static uint8_t qp_timeout = 14;		/* 4.096 us * 2^14: 67 ms */
static uint8_t qp_min_rnr_timer = 12;	/* 0.64 ms */
static uint8_t qp_retry_cnt = 7;
static int wc_timeout_s = 5;

#define BUF_SIZE	4096
#define STASH_MAX	16

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
	union ibv_gid dgid;	/* the peer's: gid (loopback) unless set */
	int gid_index;
	uint8_t *buf;
	struct ibv_mr *mr;
	/* Completions polled while waiting for another QP's (wait_wc()). */
	struct ibv_wc stash[STASH_MAX];
	int nstash;
};

struct pair {
	struct ibv_qp *a;	/* the requester */
	struct ibv_qp *b;	/* its responder */
};

static int failures;

static inline void report(int ok, const char *name, const char *why)
{
	printf("%s - %s%s%s\n", ok ? "ok" : "not ok", name, why ? ": " : "",
	       why ? why : "");
	fflush(stdout);
	if (!ok)
		failures++;
}

static inline int dev_open(struct dev *d, const char *name, int gid_index)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			d->ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!d->ctx)
		return -1;
	d->gid_index = gid_index;
	d->pd = ibv_alloc_pd(d->ctx);
	d->cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	d->buf = aligned_alloc(BUF_SIZE, BUF_SIZE);
	if (!d->pd || !d->cq || !d->buf ||
	    ibv_query_gid(d->ctx, 1, gid_index, &d->gid))
		return -1;
	d->dgid = d->gid;
	d->mr = ibv_reg_mr(d->pd, d->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	return d->mr ? 0 : -1;
}

/* A QP of @type in INIT, receiving through @srq if not NULL. */
static inline struct ibv_qp *qp_new_type(struct dev *d, struct ibv_srq *srq,
					 enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = d->cq,
		.recv_cq = d->cq,
		.srq = srq,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 8,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.qp_type = type,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC,
		.qkey = 0x11111111,
	};
	struct ibv_qp *qp = ibv_create_qp(d->pd, &ia);

	if (qp && ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | (type == IBV_QPT_UD ?
					       IBV_QP_QKEY :
					       IBV_QP_ACCESS_FLAGS))) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* An RC QP in INIT, receiving through @srq if not NULL. */
static inline struct ibv_qp *qp_new_srq(struct dev *d, struct ibv_srq *srq)
{
	return qp_new_type(d, srq, IBV_QPT_RC);
}

static inline struct ibv_qp *qp_new(struct dev *d)
{
	return qp_new_srq(d, NULL);
}

/*
 * INIT -> RTR -> RTS towards @dqpn at d->dgid (loopback unless set),
 * with the attributes the QP's type takes (an XRC initiator no
 * responder's, an XRC target no requester's retries: IBTA 11.2.5).
 */
static inline int qp_connect(struct dev *d, struct ibv_qp *qp,
			     uint32_t dqpn)
{
	int ini = qp->qp_type == IBV_QPT_XRC_SEND;
	int tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = qp_min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = d->dgid, .sgid_index = d->gid_index,
				 .hop_limit = 64 },
			.port_num = 1,
		},
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  (ini ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC |
			   IBV_QP_MIN_RNR_TIMER)))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = qp_timeout;
	a.retry_cnt = qp_retry_cnt;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_SQ_PSN |
			     (tgt ? 0 : IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			      IBV_QP_MAX_QP_RD_ATOMIC));
}

/* A completion of @qp polled earlier, taken from the stash; or -1. */
static inline int stashed_wc(struct dev *d, struct ibv_qp *qp)
{
	int i, st;

	for (i = 0; i < d->nstash; i++) {
		if (d->stash[i].qp_num != qp->qp_num)
			continue;
		st = d->stash[i].status;
		memmove(&d->stash[i], &d->stash[i + 1],
			(d->nstash - i - 1) * sizeof(d->stash[0]));
		d->nstash--;
		return st;
	}
	return -1;
}

/* Two connected RC QPs; the responder receives through @srq if any. */
static inline int pair_new_srq(struct dev *d, struct pair *p,
			       struct ibv_srq *srq)
{
	p->a = qp_new(d);
	p->b = qp_new_srq(d, srq);
	if (!p->a || !p->b)
		return -1;
	/* Completions of QPs destroyed before, with these numbers, go. */
	while (stashed_wc(d, p->a) >= 0 || stashed_wc(d, p->b) >= 0)
		;
	if (qp_connect(d, p->a, p->b->qp_num) ||
	    qp_connect(d, p->b, p->a->qp_num))
		return -1;
	return 0;
}

static inline int pair_new(struct dev *d, struct pair *p)
{
	return pair_new_srq(d, p, NULL);
}

static inline void pair_free(struct pair *p)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
}

/*
 * The next completion of @qp, within wc_timeout_s; its status, or -1.
 * The CQ is shared: another QP's completion polled meanwhile is kept for
 * its own wait (a receive may complete before the SEND that brought it).
 */
static inline int wait_wc(struct dev *d, struct ibv_qp *qp)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	int st = stashed_wc(d, qp);

	if (st >= 0)
		return st;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(d->cq, 1, &wc);

		if (n > 0 && wc.qp_num == qp->qp_num)
			return wc.status;
		if (n > 0 && d->nstash < STASH_MAX)
			d->stash[d->nstash++] = wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= wc_timeout_s)
			return -1;
		if (n <= 0)
			usleep(1000);
	}
}

static inline int post_recv(struct ibv_qp *qp, void *addr, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, 64, lkey };
	struct ibv_recv_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static inline int post_send(struct ibv_qp *qp, enum ibv_wr_opcode op,
			    uint64_t addr, uint32_t lkey, uint64_t raddr,
			    uint32_t rkey, int flags)
{
	struct ibv_sge sge = { addr, 64, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED | flags,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &wr, &bad);
}

#endif /* ERNIC_VERBS_H */
