// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ernic_test: a kernel RDMA test client for the ernic driver, run by the
 * two-guest tests (scripts/guest-rdma-test.sh, docs/driver.md).
 *
 * It uses only the kernel's RDMA API, so it runs over any RDMA device:
 *   role=server  listens with rdma_cm and serves one connection after
 *                another until unloaded; served= counts them.
 *   role=client  connects to server=IP (CM MADs over QP1), then:
 *                WRITE, READ and SEND of 1 B to max_size both ways with
 *                the data checked, the IBTA QP state walk on a second QP,
 *                a remote access error (IB_WC_REM_ACCESS_ERR and no event
 *                on the client, IB_EVENT_QP_ACCESS_ERR on the server),
 *                recovery to Reset and reuse of the
 *                QP. Each check prints "ernic_test: ok/FAIL ..." and the
 *                run ends with "ernic_test: RESULT PASS" (or FAIL).
 */

#include <linux/module.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/inet.h>
#include <linux/random.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *role = "client";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "server or client");
static char *server = "10.1.0.1";
module_param(server, charp, 0444);
MODULE_PARM_DESC(server, "the server's IPv4 address (client)");
static int port = 7471;
module_param(port, int, 0444);
MODULE_PARM_DESC(port, "TCP-space port of the rdma_cm service");
static unsigned int max_size = 1 << 20;
module_param(max_size, uint, 0444);
MODULE_PARM_DESC(max_size, "largest transfer (bytes); the RQ buffers must hold it");
static int served;
module_param(served, int, 0444);
MODULE_PARM_DESC(served, "server: connections served to the end");
static int failures = -1;
module_param(failures, int, 0444);
MODULE_PARM_DESC(failures, "client: failed checks (-1 while running)");

#define ET_MAGIC	0x45524e43	/* "ERNC" */
#define ET_RECVS	3	/* an RQ of 4 buffers of max_size */
#define ET_TIMEOUT_MS	20000

enum et_cmd {
	ET_HELLO = 1,	/* private data: the sender's buffer */
	ET_CHECK,	/* server: is your buffer pattern(seed, len)? */
	ET_FILL,	/* server: fill your buffer with pattern(seed, len) */
	ET_EXPECT,	/* server: the next SEND is pattern(seed, len) */
	ET_SENDME,	/* server: SEND me pattern(seed, len) */
	ET_PING,
	ET_REPLY,	/* status: 0 good, else the first bad offset + 1 */
	ET_PUT,		/* server: WRITE pattern(seed, len) to addr/rkey */
	ET_GET,		/* server: READ addr/rkey, is it pattern(seed, len)? */
	ET_CHECK_IMM,	/* server: ET_CHECK, after one WRITE_IMM of len */
	ET_REGKEY,	/* server: map a key for SEND_INV, reply with it */
};

/* ET_EXPECT: what the SEND carries besides data (in et_msg.status). */
enum et_kind {
	ET_PLAIN,
	ET_IMM,		/* SEND with Immediate ET_IMM_DATA */
	ET_INV,		/* SEND with Invalidate of the ET_REGKEY key */
};

struct et_msg {
	__be32 magic;
	__be32 cmd;
	__be32 len;
	__be32 seed;
	__be64 addr;
	__be32 rkey;
	__be32 status;
};

struct et_conn {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_qp *qp;
	/* buf: the RDMA target/source; rx: one max_size area per receive */
	void *buf, *rx, *tx;
	u64 buf_dma, rx_dma, tx_dma;
	u64 peer_addr;
	u32 peer_rkey;
	wait_queue_head_t wq;
	atomic_t cq_events;
	struct completion cm_done;
	int cm_event;
	bool disconnected;
	atomic_t err_events;		/* QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR */
	int last_event;
	u32 next_recv;
	/*
	 * Receive completions beyond data: whether the device gives their
	 * exact length (fast registration there, so ERNIC-X or an IBTA
	 * device; ImmDt and invalidated keys every ernic reports, without
	 * ERNIC-X through the board's ImmDt DMA), the last one, the
	 * WRITE_IMMs seen, and the server's key for SEND_INV.
	 */
	bool full_rx;
	struct ib_wc wc;
	u32 write_imms;
	struct ib_wc write_imm_wc;
	struct ib_mr *inv_mr;
	u32 inv_key;
};

#define ET_IMM_DATA	0x1234abcd

static int et_failures;

#define et_check(cond, fmt, ...) ({					\
	bool __ok = (cond);						\
	if (__ok)							\
		pr_info("ernic_test: ok " fmt "\n", ##__VA_ARGS__);	\
	else {								\
		pr_info("ernic_test: FAIL " fmt "\n", ##__VA_ARGS__);	\
		et_failures++;						\
	}								\
	__ok;								\
})

static u8 et_pattern(u32 seed, u32 i)
{
	u32 x = (i + 1) * 2654435761u ^ seed;

	return x >> 13 ^ x;
}

static void et_fill(u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = et_pattern(seed, i);
}

/* 0 if p[0..len) is the pattern, else the first bad offset + 1. */
static u32 et_verify(const u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (p[i] != et_pattern(seed, i))
			return i + 1;
	return 0;
}

/* The client runs in insmod's context, the server in its kthread. */
static bool et_stopping(void)
{
	return (current->flags & PF_KTHREAD) && kthread_should_stop();
}

static void et_comp(struct ib_cq *cq, void *ctx)
{
	struct et_conn *c = ctx;

	atomic_inc(&c->cq_events);
	wake_up(&c->wq);
}

static void et_qp_event(struct ib_event *ev, void *ctx)
{
	struct et_conn *c = ctx;

	pr_info("ernic_test: QP%u event %s\n", ev->element.qp->qp_num,
		ib_event_msg(ev->event));
	if (ev->event == IB_EVENT_QP_FATAL || ev->event == IB_EVENT_QP_REQ_ERR ||
	    ev->event == IB_EVENT_QP_ACCESS_ERR) {
		c->last_event = ev->event;
		atomic_inc(&c->err_events);
	}
	wake_up(&c->wq);
}

/* One work completion from @cq, sleeping on the CQ's interrupt. */
static int et_wait_wc(struct et_conn *c, struct ib_cq *cq, struct ib_wc *wc,
		      unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		int n = ib_poll_cq(cq, 1, wc);

		if (n)
			return n < 0 ? n : 0;
		if (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				     IB_CQ_REPORT_MISSED_EVENTS) > 0)
			continue;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		wait_event_timeout(c->wq, atomic_xchg(&c->cq_events, 0) ||
				   c->disconnected || et_stopping(),
				   msecs_to_jiffies(100));
		if (c->disconnected)
			return -ENOTCONN;
	}
}

static int et_post_recv(struct et_conn *c)
{
	u32 i = c->next_recv++ % ET_RECVS;
	struct ib_sge sge = {
		.addr = c->rx_dma + (u64)i * max_size,
		.length = max_size,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(c->qp, &wr, NULL);
}

/* A fresh QP's receive WRs: one per receive buffer. */
static int et_post_recvs(struct et_conn *c)
{
	int i, ret = 0;

	c->next_recv = 0;
	for (i = 0; i < ET_RECVS && !ret; i++)
		ret = et_post_recv(c);
	return ret;
}

static int et_post(struct et_conn *c, enum ib_wr_opcode op, u64 laddr,
		   u32 len, u64 raddr, u32 rkey, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = laddr, .length = len, .lkey = c->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};

	if (op == IB_WR_SEND_WITH_IMM || op == IB_WR_RDMA_WRITE_WITH_IMM)
		wr.wr.ex.imm_data = cpu_to_be32(ET_IMM_DATA);
	/* A key the server mapped for it (ET_REGKEY): IBTA wants a real one. */
	if (op == IB_WR_SEND_WITH_INV)
		wr.wr.ex.invalidate_rkey = rkey;
	return ib_post_send(c->qp, &wr.wr, NULL);
}

/*
 * Scatter/gather: an RDMA WRITE or READ of four SGEs (one of them empty)
 * whose pieces lie in reverse order in buf, at ET_SG_STRIDE apart; the
 * remote side is one contiguous range of ET_SG_LEN bytes.
 */
#define ET_SG_STRIDE	16384
static const u32 et_sg_len[] = { 4097, 0, 1, 3000 };
#define ET_SG_LEN	(4097 + 1 + 3000)

static u32 et_sg_off(int i)
{
	return (ARRAY_SIZE(et_sg_len) - 1 - i) * ET_SG_STRIDE + 7;
}

static int et_do_sg(struct et_conn *c, enum ib_wr_opcode op)
{
	struct ib_sge sge[ARRAY_SIZE(et_sg_len)];
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = op, .opcode = op, .sg_list = sge,
			.num_sge = ARRAY_SIZE(sge),
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = c->peer_addr,
		.rkey = c->peer_rkey,
	};
	struct ib_wc wc;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(sge); i++) {
		sge[i].addr = c->buf_dma + et_sg_off(i);
		sge[i].length = et_sg_len[i];
		sge[i].lkey = c->pd->local_dma_lkey;
	}
	ret = ib_post_send(c->qp, &wr.wr, NULL) ?:
	      et_wait_wc(c, c->scq, &wc, ET_TIMEOUT_MS);
	if (ret)
		return ret;
	if (wc.byte_len != ET_SG_LEN && op == IB_WR_RDMA_READ)
		return -EMSGSIZE;
	return wc.status;
}

/* Move the pieces between their scattered places and one run at @flat. */
static void et_sg_copy(struct et_conn *c, u8 *flat, bool gather)
{
	u32 off = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(et_sg_len); i++) {
		u8 *piece = c->buf + et_sg_off(i);

		if (gather)
			memcpy(flat + off, piece, et_sg_len[i]);
		else
			memcpy(piece, flat + off, et_sg_len[i]);
		off += et_sg_len[i];
	}
}

/* Post and wait for the send completion; returns its status or -errno. */
static int et_do(struct et_conn *c, enum ib_wr_opcode op, u64 laddr, u32 len,
		 u64 raddr, u32 rkey)
{
	struct ib_wc wc;
	int ret = et_post(c, op, laddr, len, raddr, rkey, op);

	if (ret)
		return ret;
	ret = et_wait_wc(c, c->scq, &wc, ET_TIMEOUT_MS);
	if (ret)
		return ret;
	return wc.status;
}

/* A message naming the sender's memory at @addr with @rkey. */
static int et_send_msg_at(struct et_conn *c, u32 cmd, u32 len, u32 seed,
			  u32 status, u64 addr, u32 rkey)
{
	struct et_msg *m = c->tx;

	memset(m, 0, sizeof(*m));
	m->magic = cpu_to_be32(ET_MAGIC);
	m->cmd = cpu_to_be32(cmd);
	m->len = cpu_to_be32(len);
	m->seed = cpu_to_be32(seed);
	m->addr = cpu_to_be64(addr);
	m->rkey = cpu_to_be32(rkey);
	m->status = cpu_to_be32(status);
	return et_do(c, IB_WR_SEND, c->tx_dma, sizeof(*m), 0, 0);
}

static int et_send_msg(struct et_conn *c, u32 cmd, u32 len, u32 seed,
		       u32 status)
{
	return et_send_msg_at(c, cmd, len, seed, status, 0, 0);
}

/*
 * The next received message; @data: where its payload was put. A WRITE
 * with Immediate that consumed a receive WR (IBTA 9.4.4) is counted, not
 * taken for a message: its buffer holds nothing new.
 */
static int et_recv(struct et_conn *c, struct et_msg *m, u8 **data)
{
	struct ib_wc *wc = &c->wc;
	int ret;

	for (;;) {
		ret = et_wait_wc(c, c->rcq, wc, ET_TIMEOUT_MS);
		if (ret)
			return ret;
		if (wc->status != IB_WC_SUCCESS)
			return -EIO;
		if (wc->opcode != IB_WC_RECV_RDMA_WITH_IMM)
			break;
		c->write_imms++;
		c->write_imm_wc = *wc;
		ret = et_post_recv(c);
		if (ret)
			return ret;
	}
	if (data)
		*data = c->rx + wc->wr_id * max_size;
	memcpy(m, c->rx + wc->wr_id * max_size, sizeof(*m));
	return et_post_recv(c);
}

/* Client: a command and its reply status (0: the server saw it right). */
static int et_command_at(struct et_conn *c, u32 cmd, u32 len, u32 seed,
			 u64 addr, u32 rkey)
{
	struct et_msg m;
	int ret = et_send_msg_at(c, cmd, len, seed, 0, addr, rkey);

	if (ret)
		return ret;
	ret = et_recv(c, &m, NULL);
	if (ret)
		return ret;
	if (be32_to_cpu(m.magic) != ET_MAGIC ||
	    be32_to_cpu(m.cmd) != ET_REPLY)
		return -EPROTO;
	return be32_to_cpu(m.status);
}

static int et_command(struct et_conn *c, u32 cmd, u32 len, u32 seed)
{
	return et_command_at(c, cmd, len, seed, 0, 0);
}

static void et_free(struct et_conn *c)
{
	struct ib_device *d = c->id ? c->id->device : NULL;

	if (c->inv_mr)
		ib_dereg_mr(c->inv_mr);
	c->inv_mr = NULL;
	if (c->qp)
		rdma_destroy_qp(c->id);
	c->qp = NULL;
	if (c->scq)
		ib_destroy_cq(c->scq);
	if (c->rcq)
		ib_destroy_cq(c->rcq);
	c->scq = c->rcq = NULL;
	if (d && c->buf_dma)
		ib_dma_unmap_single(d, c->buf_dma, max_size,
				    DMA_BIDIRECTIONAL);
	if (d && c->rx_dma)
		ib_dma_unmap_single(d, c->rx_dma, (size_t)max_size * ET_RECVS,
				    DMA_FROM_DEVICE);
	if (d && c->tx_dma)
		ib_dma_unmap_single(d, c->tx_dma, PAGE_SIZE, DMA_TO_DEVICE);
	c->buf_dma = c->rx_dma = c->tx_dma = 0;
	if (c->pd)
		ib_dealloc_pd(c->pd);
	c->pd = NULL;
	kvfree(c->buf);
	kvfree(c->rx);
	kfree(c->tx);
	c->buf = c->rx = c->tx = NULL;
}

static struct ib_cq *et_cq(struct et_conn *c, struct ib_device *d)
{
	struct ib_cq_init_attr a = { .cqe = 64 };

	return ib_create_cq(d, et_comp, NULL, c, &a);
}

/*
 * PD (with the DMA MR's global rkey for the peer's READ/WRITE), CQs, the
 * QP through rdma_cm, and the buffers. Buffers are physically contiguous
 * (kmalloc): a WQE has one local address (PG332 Table 2-1).
 */
static int et_alloc(struct et_conn *c)
{
	struct ib_device *d = c->id->device;
	struct ib_qp_init_attr qa = {};
	int ret;

	c->full_rx = d->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS;
	c->buf = kmalloc(max_size, GFP_KERNEL);
	c->rx = kmalloc_array(ET_RECVS, max_size, GFP_KERNEL);
	c->tx = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!c->buf || !c->rx || !c->tx)
		return -ENOMEM;
	c->pd = ib_alloc_pd(d, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		return ret;
	}
	c->buf_dma = ib_dma_map_single(d, c->buf, max_size, DMA_BIDIRECTIONAL);
	c->rx_dma = ib_dma_map_single(d, c->rx, (size_t)max_size * ET_RECVS,
				      DMA_FROM_DEVICE);
	c->tx_dma = ib_dma_map_single(d, c->tx, PAGE_SIZE, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(d, c->buf_dma) ||
	    ib_dma_mapping_error(d, c->rx_dma) ||
	    ib_dma_mapping_error(d, c->tx_dma))
		return -ENOMEM;
	c->scq = et_cq(c, d);
	c->rcq = et_cq(c, d);
	if (IS_ERR(c->scq) || IS_ERR(c->rcq)) {
		ret = IS_ERR(c->scq) ? PTR_ERR(c->scq) : PTR_ERR(c->rcq);
		if (!IS_ERR(c->scq))
			ib_destroy_cq(c->scq);
		if (!IS_ERR(c->rcq))
			ib_destroy_cq(c->rcq);
		c->scq = c->rcq = NULL;
		return ret;
	}
	qa.event_handler = et_qp_event;
	qa.qp_context = c;
	qa.send_cq = c->scq;
	qa.recv_cq = c->rcq;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = ET_RECVS;
	qa.cap.max_send_sge = ARRAY_SIZE(et_sg_len);
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(c->id, c->pd, &qa);
	if (ret) {
		pr_info("ernic_test: rdma_create_qp: %d\n", ret);
		return ret;
	}
	c->qp = c->id->qp;
	return et_post_recvs(c);
}

static void et_hello(struct et_conn *c, struct et_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->magic = cpu_to_be32(ET_MAGIC);
	m->cmd = cpu_to_be32(ET_HELLO);
	m->addr = cpu_to_be64(c->buf_dma);
	m->rkey = cpu_to_be32(c->pd->unsafe_global_rkey);
	m->len = cpu_to_be32(max_size);
}

/*
 * The connection parameters both sides offer: our buffer in the private
 * data, 16 READs each way (ERNIC's, PG332 p.22), and the most retries.
 */
static void et_conn_param(struct et_conn *c, struct et_msg *hello,
			  struct rdma_conn_param *p)
{
	et_hello(c, hello);
	p->private_data = hello;
	p->private_data_len = sizeof(*hello);
	p->responder_resources = 16;
	p->initiator_depth = 16;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static bool et_take_hello(struct et_conn *c, const void *pd, u8 len)
{
	const struct et_msg *m = pd;

	if (!pd || len < sizeof(*m) || be32_to_cpu(m->magic) != ET_MAGIC ||
	    be32_to_cpu(m->cmd) != ET_HELLO)
		return false;
	c->peer_addr = be64_to_cpu(m->addr);
	c->peer_rkey = be32_to_cpu(m->rkey);
	return true;
}

/* One transition with rdma_cm's attributes, and our own PSN. */
static int et_modify_cm(struct et_conn *c, enum ib_qp_state to, u32 psn)
{
	struct ib_qp_attr a = { .qp_state = to };
	int mask, ret;

	ret = rdma_init_qp_attr(c->id, &a, &mask);
	if (ret)
		return ret;
	a.rq_psn = psn;
	a.sq_psn = psn;
	return ib_modify_qp(c->qp, &a, mask);
}

/*
 * Back to Reset and up again (IBTA: a QP in Error is reused through
 * Reset), with the PSNs both sides agreed on: the driver runs PG332's
 * fatal recovery on the way to Reset.
 */
static int et_qp_reinit(struct et_conn *c, u32 sq_psn, u32 rq_psn)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	struct ib_wc wc;
	int ret;

	/* What the Error state flushed: the receive WRs. */
	while (ib_poll_cq(c->rcq, 1, &wc) > 0 || ib_poll_cq(c->scq, 1, &wc) > 0)
		;
	ret = ib_modify_qp(c->qp, &a, IB_QP_STATE);
	if (ret)
		return ret;
	return et_modify_cm(c, IB_QPS_INIT, 0) ?: et_post_recvs(c) ?:
	       et_modify_cm(c, IB_QPS_RTR, rq_psn) ?:
	       et_modify_cm(c, IB_QPS_RTS, sq_psn);
}

#define ET_PSN_CLIENT	0x000100	/* client's requests after recovery */
#define ET_PSN_SERVER	0xfffff0	/* server's, wrapping through 0 */

/* ---------------------------------------------------------------- server */

static struct rdma_cm_id *et_listen_id;
static struct task_struct *et_thread;
static struct et_conn *et_pending;
static DECLARE_WAIT_QUEUE_HEAD(et_server_wq);
static DEFINE_SPINLOCK(et_server_lock);

static int et_server_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct et_conn *c = id->context;
	struct rdma_conn_param p = {};
	struct et_msg hello;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (READ_ONCE(et_pending)) {
			pr_info("ernic_test: server busy, connection refused\n");
			return -EBUSY;	/* the CM rejects and destroys id */
		}
		c = kzalloc(sizeof(*c), GFP_KERNEL);
		if (!c)
			return -ENOMEM;
		init_waitqueue_head(&c->wq);
		init_completion(&c->cm_done);
		c->id = id;
		id->context = c;
		ret = et_take_hello(c, ev->param.conn.private_data,
				    ev->param.conn.private_data_len) ?
		      et_alloc(c) : -EPROTO;
		if (!ret) {
			et_conn_param(c, &hello, &p);
			ret = rdma_accept(id, &p);
		}
		if (ret) {
			pr_info("ernic_test: server cannot take the connection: %d\n",
				ret);
			et_free(c);
			kfree(c);
			return -EINVAL;	/* the CM rejects and destroys id */
		}
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		spin_lock(&et_server_lock);
		WRITE_ONCE(et_pending, c);
		spin_unlock(&et_server_lock);
		wake_up(&et_server_wq);
		return 0;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (c) {
			c->disconnected = true;
			wake_up(&c->wq);
		}
		return 0;
	default:
		pr_info("ernic_test: server CM event %s (%d)\n",
			rdma_event_msg(ev->event), ev->status);
		return 0;
	}
}

/*
 * Server: the receive completion of a data SEND of @len bytes of @kind:
 * its ImmDt or invalidated key, and with full_rx its exact length (a
 * PG332 ERNIC gives the buffer's, docs/driver.md). 0 if right, else a
 * code for the client.
 */
static u32 et_check_send(struct et_conn *c, u32 len, u32 kind)
{
	const struct ib_wc *wc = &c->wc;

	if (wc->opcode != IB_WC_RECV || (c->full_rx && wc->byte_len != len))
		return 0xfffffff9;
	if (kind == ET_IMM && (!(wc->wc_flags & IB_WC_WITH_IMM) ||
			       be32_to_cpu(wc->ex.imm_data) != ET_IMM_DATA))
		return 0xfffffff8;
	if (kind == ET_INV && (!(wc->wc_flags & IB_WC_WITH_INVALIDATE) ||
			       wc->ex.invalidate_rkey != c->inv_key))
		return 0xfffffff7;
	if (kind == ET_PLAIN && (wc->wc_flags & (IB_WC_WITH_IMM |
						 IB_WC_WITH_INVALIDATE)))
		return 0xfffffff6;
	return 0;
}

/* Server: exactly one WRITE_IMM of @len with the ImmDt since the last. */
static u32 et_check_write_imm(struct et_conn *c, u32 len)
{
	const struct ib_wc *wc = &c->write_imm_wc;
	u32 n = c->write_imms;

	c->write_imms = 0;
	if (n != 1 || (c->full_rx && wc->byte_len != len) ||
	    !(wc->wc_flags & IB_WC_WITH_IMM) ||
	    be32_to_cpu(wc->ex.imm_data) != ET_IMM_DATA)
		return 0xfffffff5;
	return 0;
}

/*
 * Server: map a fast-registration MR over the first page of buf with a
 * new key, for the client's SEND with Invalidate. Without fast
 * registration the key is 0: a PG332 ERNIC does not look at it.
 */
static u32 et_regkey(struct et_conn *c)
{
	struct ib_reg_wr rw = {
		.wr = { .opcode = IB_WR_REG_MR, .send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	struct scatterlist sg;
	struct ib_wc wc;

	c->inv_key = 0;
	if (!c->full_rx)
		return 0;
	if (!c->inv_mr) {
		c->inv_mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 1);
		if (IS_ERR(c->inv_mr)) {
			c->inv_mr = NULL;
			return 0xfffffff4;
		}
	}
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = c->buf_dma;
	sg_dma_len(&sg) = PAGE_SIZE;
	if (ib_map_mr_sg(c->inv_mr, &sg, 1, NULL, PAGE_SIZE) != 1)
		return 0xfffffff3;
	ib_update_fast_reg_key(c->inv_mr, ib_inc_rkey(c->inv_mr->rkey));
	rw.mr = c->inv_mr;
	rw.key = c->inv_mr->rkey;
	if (ib_post_send(c->qp, &rw.wr, NULL) ||
	    et_wait_wc(c, c->scq, &wc, ET_TIMEOUT_MS) || wc.status)
		return 0xfffffff2;
	c->inv_key = rw.key;
	return 0;
}

static void et_serve_msg(struct et_conn *c, struct et_msg *m, u8 *data)
{
	u32 len = be32_to_cpu(m->len), seed = be32_to_cpu(m->seed);
	u32 st = 0;
	int ret;

	if (len > max_size) {
		st = 0xffffffff;
		goto reply;
	}
	switch (be32_to_cpu(m->cmd)) {
	case ET_CHECK:
		st = et_verify(c->buf, len, seed);
		break;
	case ET_FILL:
		et_fill(c->buf, len, seed);
		break;
	case ET_CHECK_IMM:
		st = et_verify(c->buf, len, seed) ?:
		     et_check_write_imm(c, len);
		break;
	case ET_EXPECT: {
		struct et_msg d;
		u8 *p;

		/* The data SEND itself: its length is the one announced. */
		ret = et_recv(c, &d, &p);
		st = ret ? 0xfffffffe : et_verify(p, len, seed) ?:
		     et_check_send(c, len, be32_to_cpu(m->status));
		break;
	}
	case ET_REGKEY:
		st = et_regkey(c);
		et_send_msg_at(c, ET_REPLY, 0, 0, st, 0, c->inv_key);
		return;
	case ET_SENDME:
		et_fill(c->buf, len, seed);
		ret = et_do(c, IB_WR_SEND, c->buf_dma, len, 0, 0);
		st = ret ? 0xfffffffd : 0;
		break;
	case ET_PUT:
		et_fill(c->buf, len, seed);
		ret = et_do(c, IB_WR_RDMA_WRITE, c->buf_dma, len,
			    be64_to_cpu(m->addr), be32_to_cpu(m->rkey));
		st = ret ? 0xfffffffb : 0;
		break;
	case ET_GET:
		memset(c->buf, 0, len);
		ret = et_do(c, IB_WR_RDMA_READ, c->buf_dma, len,
			    be64_to_cpu(m->addr), be32_to_cpu(m->rkey));
		st = ret ? 0xfffffffa : et_verify(c->buf, len, seed);
		break;
	case ET_PING:
		break;
	default:
		st = 0xfffffffc;
	}
reply:
	et_send_msg(c, ET_REPLY, len, seed, st);
}

static void et_serve(struct et_conn *c)
{
	struct et_msg m;
	u8 *data;

	pr_info("ernic_test: server: connection from QP%u\n",
		c->qp->qp_num);
	while (!c->disconnected && !kthread_should_stop()) {
		int ret = et_recv(c, &m, &data);

		if (ret == -ETIMEDOUT)
			continue;
		if (ret == -EIO)
			wait_event_timeout(c->wq, atomic_read(&c->err_events),
					   2 * HZ);
		if (ret == -EIO && atomic_read(&c->err_events)) {
			/*
			 * The client's bad WRITE put our QP in FATAL too;
			 * only the event says so (it took no receive WR).
			 */
			et_check(c->last_event == IB_EVENT_QP_ACCESS_ERR,
				 "the bad R_Key raised %s on the responder",
				 ib_event_msg(c->last_event));
			atomic_set(&c->err_events, 0);
			ret = et_qp_reinit(c, ET_PSN_SERVER, ET_PSN_CLIENT);
			pr_info("ernic_test: server: QP recovered and re-armed: %d\n",
				ret);
			continue;
		}
		if (ret)
			break;
		if (be32_to_cpu(m.magic) == ET_MAGIC)
			et_serve_msg(c, &m, data);
	}
	while (!c->disconnected && !kthread_should_stop())
		wait_event_timeout(c->wq, c->disconnected,
				   msecs_to_jiffies(100));
}

static int et_server_thread(void *arg)
{
	while (!kthread_should_stop()) {
		struct et_conn *c;

		wait_event_interruptible_timeout(et_server_wq,
						 READ_ONCE(et_pending) ||
						 kthread_should_stop(), HZ);
		c = READ_ONCE(et_pending);
		if (!c)
			continue;
		et_serve(c);
		et_free(c);
		rdma_destroy_id(c->id);
		spin_lock(&et_server_lock);
		WRITE_ONCE(et_pending, NULL);
		spin_unlock(&et_server_lock);
		kfree(c);
		served++;
		pr_info("ernic_test: server: connection %d done\n", served);
	}
	return 0;
}

static int et_server_start(void)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int ret;

	et_listen_id = rdma_create_id(&init_net, et_server_cm, NULL,
				      RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(et_listen_id))
		return PTR_ERR(et_listen_id);
	ret = rdma_bind_addr(et_listen_id, (struct sockaddr *)&a) ?:
	      rdma_listen(et_listen_id, 4);
	if (ret) {
		rdma_destroy_id(et_listen_id);
		return ret;
	}
	et_thread = kthread_run(et_server_thread, NULL, "ernic_test");
	if (IS_ERR(et_thread)) {
		rdma_destroy_id(et_listen_id);
		return PTR_ERR(et_thread);
	}
	pr_info("ernic_test: server listening on port %d\n", port);
	return 0;
}

static void et_server_stop(void)
{
	rdma_destroy_id(et_listen_id);
	kthread_stop(et_thread);
}

/* ---------------------------------------------------------------- client */

static int et_client_cm(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct et_conn *c = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
		c->disconnected = true;
		wake_up(&c->wq);
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		et_take_hello(c, ev->param.conn.private_data,
			      ev->param.conn.private_data_len);
		break;
	default:
		break;
	}
	c->cm_event = ev->event;
	if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED &&
	    ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED &&
	    ev->event != RDMA_CM_EVENT_ESTABLISHED)
		pr_info("ernic_test: client CM event %s (%d)\n",
			rdma_event_msg(ev->event), ev->status);
	complete(&c->cm_done);
	return 0;
}

static int et_cm_wait(struct et_conn *c, int want)
{
	if (!wait_for_completion_timeout(&c->cm_done,
					 msecs_to_jiffies(ET_TIMEOUT_MS)))
		return -ETIMEDOUT;
	reinit_completion(&c->cm_done);
	return c->cm_event == want ? 0 : -ECONNREFUSED;
}

static int et_connect(struct et_conn *c)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct rdma_conn_param p = {};
	struct et_msg hello;
	int ret;

	if (!in4_pton(server, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	c->id = rdma_create_id(&init_net, et_client_cm, c, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(c->id)) {
		ret = PTR_ERR(c->id);
		c->id = NULL;
		return ret;
	}
	ret = rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&dst, 5000) ?:
	      et_cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED) ?:
	      rdma_resolve_route(c->id, 5000) ?:
	      et_cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED) ?:
	      et_alloc(c);
	if (ret)
		return ret;
	et_conn_param(c, &hello, &p);
	return rdma_connect(c->id, &p) ?:
	       et_cm_wait(c, RDMA_CM_EVENT_ESTABLISHED);
}

/*
 * The server's guest may answer pings before its module listens: a
 * connect it rejects that early (no listener: REJECTED, -ECONNREFUSED)
 * is tried again, once a second for up to ET_CONNECT_TRIES seconds.
 */
#define ET_CONNECT_TRIES	30

static int et_connect_retry(struct et_conn *c)
{
	int ret, i;

	for (i = 1;; i++) {
		ret = et_connect(c);
		if (ret != -ECONNREFUSED || i == ET_CONNECT_TRIES)
			return ret;
		pr_info("ernic_test: connect %d refused, trying again\n", i);
		et_free(c);
		if (c->id)
			rdma_destroy_id(c->id);
		c->id = NULL;
		reinit_completion(&c->cm_done);
		msleep(1000);
	}
}

static const u32 et_sizes[] = {
	1, 2, 15, 16, 17, 64, 255, 256, 1000, 1024, 4095, 4096, 4097,
	65536, 262144, 1 << 20,
};

/* WRITE gathering four SGEs, READ scattering into four. */
static void et_client_sg(struct et_conn *c)
{
	u8 *flat = c->buf + ET_SG_STRIDE * ARRAY_SIZE(et_sg_len);
	u32 seed = get_random_u32(), bad;
	int st;

	et_fill(flat, ET_SG_LEN, seed);
	et_sg_copy(c, flat, false);
	st = et_do_sg(c, IB_WR_RDMA_WRITE);
	et_check(!st && !et_command(c, ET_CHECK, ET_SG_LEN, seed),
		 "WRITE of 4 SGEs, %u B, checked by the server (wc %d)",
		 ET_SG_LEN, st);

	seed = get_random_u32();
	st = et_command(c, ET_FILL, ET_SG_LEN, seed);
	memset(c->buf, 0, ET_SG_STRIDE * ARRAY_SIZE(et_sg_len) + ET_SG_LEN);
	st = st ?: et_do_sg(c, IB_WR_RDMA_READ);
	et_sg_copy(c, flat, true);
	bad = et_verify(flat, ET_SG_LEN, seed);
	et_check(!st && !bad, "READ into 4 SGEs, %u B (wc %d, first bad byte %d)",
		 ET_SG_LEN, st, (int)bad - 1);

	if (c->id->device->attrs.max_send_sge < ARRAY_SIZE(et_sg_len)) {
		pr_info("ernic_test: SEND of 4 SGEs: the device gathers 1, skipped\n");
		return;
	}
	seed = get_random_u32();
	et_fill(flat, ET_SG_LEN, seed);
	et_sg_copy(c, flat, false);
	st = et_send_msg(c, ET_EXPECT, ET_SG_LEN, seed, ET_PLAIN) ?:
	     et_do_sg(c, IB_WR_SEND);
	if (!st) {
		struct et_msg m;

		st = et_recv(c, &m, NULL) ?: be32_to_cpu(m.status);
	}
	et_check(!st, "SEND gathering 4 SGEs, %u B, checked by the server (status %d)",
		 ET_SG_LEN, st);
}

static void et_client_data(struct et_conn *c)
{
	u32 i, seed, len, bad;
	int st;

	for (i = 0; i < ARRAY_SIZE(et_sizes) && et_sizes[i] <= max_size; i++) {
		len = et_sizes[i];
		seed = get_random_u32();
		et_fill(c->buf, len, seed);
		st = et_do(c, IB_WR_RDMA_WRITE, c->buf_dma, len, c->peer_addr,
			   c->peer_rkey);
		et_check(!st && !et_command(c, ET_CHECK, len, seed),
			 "WRITE %u B, checked by the server (wc %d)", len, st);

		seed = get_random_u32();
		st = et_command(c, ET_FILL, len, seed);
		memset(c->buf, 0, len);
		st = st ?: et_do(c, IB_WR_RDMA_READ, c->buf_dma, len,
				 c->peer_addr, c->peer_rkey);
		bad = et_verify(c->buf, len, seed);
		et_check(!st && !bad, "READ %u B (wc %d, first bad byte %d)",
			 len, st, (int)bad - 1);

		seed = get_random_u32();
		st = et_send_msg(c, ET_EXPECT, len, seed, 0);
		et_fill(c->buf, len, seed);
		st = st ?: et_do(c, IB_WR_SEND, c->buf_dma, len, 0, 0);
		if (!st) {
			struct et_msg m;

			st = et_recv(c, &m, NULL) ?: be32_to_cpu(m.status);
		}
		et_check(!st, "SEND %u B client to server (status %d)", len,
			 st);

		seed = get_random_u32();
		st = et_send_msg(c, ET_SENDME, len, seed, 0);
		if (!st) {
			struct et_msg m;
			u8 *p;

			/* The data SEND comes before the server's reply. */
			st = et_recv(c, &m, &p);
			bad = st ? 0 : et_verify(p, len, seed);
			st = st ?: et_recv(c, &m, NULL) ?: be32_to_cpu(m.status);
		}
		et_check(!st && !bad, "SEND %u B server to client (status %d, first bad byte %d)",
			 len, st, (int)bad - 1);
	}

	if (max_size >= ET_SG_STRIDE * ARRAY_SIZE(et_sg_len) + ET_SG_LEN)
		et_client_sg(c);

	/* The *_IMM and SEND_INV forms (the sender's side: PG332 Table 2-1). */
	len = 3000;
	seed = get_random_u32();
	et_fill(c->buf, len, seed);
	st = et_do(c, IB_WR_RDMA_WRITE_WITH_IMM, c->buf_dma, len, c->peer_addr,
		   c->peer_rkey);
	st = st ?: et_command(c, ET_CHECK_IMM, len, seed);
	et_check(!st, "WRITE_IMM %u B, checked by the server, with its receive completion (status %d)",
		 len, st);
	for (i = 0; i < 2; i++) {
		u32 key = 0;

		if (i) {
			struct et_msg m;

			st = et_send_msg(c, ET_REGKEY, 0, 0, 0) ?:
			     et_recv(c, &m, NULL) ?: be32_to_cpu(m.status);
			key = be32_to_cpu(m.rkey);
			et_check(!st, "server mapped key %#x for SEND_INV (status %d)",
				 key, st);
		}
		seed = get_random_u32();
		st = et_send_msg(c, ET_EXPECT, len, seed, i ? ET_INV : ET_IMM);
		et_fill(c->buf, len, seed);
		st = st ?: et_do(c, i ? IB_WR_SEND_WITH_INV :
				 IB_WR_SEND_WITH_IMM, c->buf_dma, len, 0, key);
		if (!st) {
			struct et_msg m;

			st = et_recv(c, &m, NULL) ?: be32_to_cpu(m.status);
		}
		et_check(!st, "%s %u B client to server, with its receive completion (status %d)",
			 i ? "SEND_INV" : "SEND_IMM", len, st);
	}
}

/*
 * Fast registration (ERNIC-X, docs/extension.md): a region of four pages
 * of buf in scrambled order, starting ET_FR_OFF bytes into the first,
 * which the server WRITEs and READs through its R_Key.
 */
#define ET_FR_PAGES	4
#define ET_FR_OFF	100
static const u8 et_fr_page[ET_FR_PAGES] = { 5, 2, 7, 0 };

/* The region's bytes, in IOVA order, to (gather) or from run @flat. */
static void et_fr_copy(u8 *pages, u8 *flat, u32 len, bool gather)
{
	u32 j;

	for (j = 0; j < len; j++) {
		u32 o = ET_FR_OFF + j;
		u8 *b = pages + et_fr_page[o / PAGE_SIZE] * PAGE_SIZE +
			o % PAGE_SIZE;

		if (gather)
			flat[j] = *b;
		else
			*b = flat[j];
	}
}

/* Post REG_MR (@reg) or LOCAL_INV of @mr's key; its completion status. */
static int et_fr_post(struct et_conn *c, struct ib_mr *mr, bool reg)
{
	struct ib_reg_wr rw = {
		.wr = {
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = mr,
		.key = mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_send_wr inv = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = mr->rkey,
	};
	struct ib_wc wc;
	int ret;

	ret = ib_post_send(c->qp, reg ? &rw.wr : &inv, NULL) ?:
	      et_wait_wc(c, c->scq, &wc, ET_TIMEOUT_MS);
	if (ret)
		return ret;
	if (wc.opcode != (reg ? IB_WC_REG_MR : IB_WC_LOCAL_INV))
		return -EPROTO;
	return wc.status;
}

/* One registration of @mr over @sg, used by the server, invalidated. */
static void et_fr_round(struct et_conn *c, struct ib_mr *mr,
			struct scatterlist *sg, u8 *pages, u8 *flat)
{
	u32 len = ET_FR_PAGES * PAGE_SIZE - ET_FR_OFF, seed, bad;
	unsigned int off = ET_FR_OFF;
	int n, st;

	n = ib_map_mr_sg(mr, sg, ET_FR_PAGES, &off, PAGE_SIZE);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	st = n == ET_FR_PAGES ? et_fr_post(c, mr, true) : -EINVAL;
	et_check(!st && mr->length == len,
		 "REG_MR of %d scattered pages, key %#x, %llu B (mapped %d, wc %d)",
		 ET_FR_PAGES, mr->rkey, mr->length, n, st);

	seed = get_random_u32();
	st = et_command_at(c, ET_PUT, len, seed, mr->iova, mr->rkey);
	et_fr_copy(pages, flat, len, true);
	bad = et_verify(flat, len, seed);
	et_check(!st && !bad,
		 "server WRITE of %u B through the key lands in the region's pages (status %d, first bad byte %d)",
		 len, st, (int)bad - 1);

	seed = get_random_u32();
	et_fill(flat, len, seed);
	et_fr_copy(pages, flat, len, false);
	st = et_command_at(c, ET_GET, len, seed, mr->iova, mr->rkey);
	et_check(!st, "server READ of %u B through the key (status %d)", len,
		 st);

	st = et_fr_post(c, mr, false);
	et_check(!st, "LOCAL_INV of key %#x (wc %d)", mr->rkey, st);
}

static void et_client_frwr(struct et_conn *c)
{
	struct ib_device *d = c->id->device;
	u64 base = PAGE_ALIGN(c->buf_dma);
	u8 *pages = c->buf + (base - c->buf_dma);
	struct scatterlist sg[ET_FR_PAGES];
	struct ib_mr *mr;
	int i;

	if (!(d->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    max_size < 16 * PAGE_SIZE) {
		pr_info("ernic_test: no fast registration on %s: skipped\n",
			dev_name(&d->dev));
		return;
	}
	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, ET_FR_PAGES);
	if (!et_check(!IS_ERR(mr), "ib_alloc_mr of %d pages (%d)",
		      ET_FR_PAGES, PTR_ERR_OR_ZERO(mr)))
		return;
	sg_init_table(sg, ET_FR_PAGES);
	for (i = 0; i < ET_FR_PAGES; i++) {
		sg_dma_address(&sg[i]) = base + et_fr_page[i] * PAGE_SIZE;
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	/* Twice: a key goes through REG_MR, use, LOCAL_INV and again. */
	for (i = 0; i < 2; i++)
		et_fr_round(c, mr, sg, pages, pages + 8 * PAGE_SIZE);
	et_check(!ib_dereg_mr(mr), "ib_dereg_mr of the FRWR region");
}

/* IBTA 10.3.1 / ib_modify_qp_is_ok(): one transition, expected or not. */
static int et_modify(struct ib_qp *qp, struct ib_qp_attr *a, int mask,
		     enum ib_qp_state to)
{
	a->qp_state = to;
	return ib_modify_qp(qp, a, mask | IB_QP_STATE);
}

static enum ib_qp_state et_state(struct ib_qp *qp)
{
	struct ib_qp_attr a;
	struct ib_qp_init_attr ia;

	if (ib_query_qp(qp, &a, IB_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

static const char *et_sn(int s)
{
	static const char *const n[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};

	return s >= 0 && s < ARRAY_SIZE(n) ? n[s] : "?";
}

/*
 * The IBTA state walk on a second QP: every legal transition of an RC
 * QP with its required attributes, the illegal ones refused, posting
 * where it is not allowed refused, and Error flushing work.
 */
static void et_client_states(struct et_conn *c)
{
	struct ib_qp_init_attr qa = {
		.send_cq = c->scq, .recv_cq = c->rcq, .qp_type = IB_QPT_RC,
		.cap = { .max_send_wr = 3, .max_recv_wr = 3,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
	};
	struct ib_qp_attr init, rtr, rts, a;
	int init_mask, rtr_mask, rts_mask;
	struct ib_recv_wr rwr = {};
	struct ib_rdma_wr swr = { .wr.opcode = IB_WR_RDMA_WRITE };
	struct ib_wc wc = {};
	struct ib_qp *qp;
	bool posted = false;
	int i, ret;
	struct {
		enum ib_qp_state to;
		int mask;		/* extra attributes */
		bool ok;
	} walk[] = {
		{ IB_QPS_RTR, 0, false },	/* RESET -> RTR */
		{ IB_QPS_RTS, 0, false },	/* RESET -> RTS */
		{ IB_QPS_SQD, 0, false },
		{ IB_QPS_INIT, 0, true },	/* RESET -> INIT */
		{ IB_QPS_INIT, 0, true },	/* INIT -> INIT */
		{ IB_QPS_RTS, 0, false },	/* INIT -> RTS */
		{ IB_QPS_SQD, 0, false },
		{ IB_QPS_RTR, 0, true },	/* INIT -> RTR */
		{ IB_QPS_INIT, 0, false },	/* RTR -> INIT */
		{ IB_QPS_SQD, 0, false },	/* RTR -> SQD */
		{ IB_QPS_RTS, 0, true },	/* RTR -> RTS */
		{ IB_QPS_RTS, IB_QP_MIN_RNR_TIMER, true },	/* RTS -> RTS */
		{ IB_QPS_RTR, 0, false },	/* RTS -> RTR */
		{ IB_QPS_SQE, 0, false },	/* RTS -> SQE (not for RC) */
		{ IB_QPS_SQD, 0, true },	/* RTS -> SQD */
		{ IB_QPS_SQD, 0, true },	/* SQD -> SQD */
		{ IB_QPS_RTS, 0, true },	/* SQD -> RTS */
		{ IB_QPS_SQD, 0, true },
		{ IB_QPS_ERR, 0, true },	/* SQD -> ERR */
		{ IB_QPS_RTS, 0, false },	/* ERR -> RTS */
		{ IB_QPS_RESET, 0, true },	/* ERR -> RESET */
		{ IB_QPS_ERR, 0, false },	/* RESET -> ERR (IBTA: not) */
		{ IB_QPS_RESET, 0, true },	/* RESET -> RESET */
		{ IB_QPS_INIT, 0, true },
		{ IB_QPS_ERR, 0, true },	/* INIT -> ERR */
		{ IB_QPS_RESET, 0, true },
		{ IB_QPS_INIT, 0, true },
		{ IB_QPS_RTR, 0, true },
		{ IB_QPS_ERR, 0, true },	/* RTR -> ERR */
		{ IB_QPS_RESET, 0, true },
		{ IB_QPS_INIT, 0, true },
		{ IB_QPS_RTR, 0, true },
		{ IB_QPS_RTS, 0, true },
		{ IB_QPS_RESET, 0, true },	/* RTS -> RESET */
	};

	qa.qp_context = c;
	qa.event_handler = et_qp_event;
	qp = ib_create_qp(c->pd, &qa);
	if (!et_check(!IS_ERR(qp), "state walk: QP created"))
		return;
	init.qp_state = IB_QPS_INIT;
	rtr.qp_state = IB_QPS_RTR;
	rts.qp_state = IB_QPS_RTS;
	if (!et_check(!rdma_init_qp_attr(c->id, &init, &init_mask) &&
		      !rdma_init_qp_attr(c->id, &rtr, &rtr_mask) &&
		      !rdma_init_qp_attr(c->id, &rts, &rts_mask),
		      "state walk: attributes from rdma_cm"))
		goto out;
	/* A peer QP number nobody uses: this QP never sends. */
	rtr.dest_qp_num = 0xfffff0;

	et_check(et_state(qp) == IB_QPS_RESET, "created in RESET");
	et_check(ib_post_send(qp, &swr.wr, NULL) == -EINVAL,
		 "post_send in RESET refused");
	et_check(ib_post_recv(qp, &rwr, NULL) == -EINVAL,
		 "post_recv in RESET refused");
	/* Required attributes missing: refused. */
	a = init;
	et_check(ib_modify_qp(qp, &a, IB_QP_STATE) == -EINVAL,
		 "RESET -> INIT without its required attributes refused");
	a = init;
	et_check(ib_modify_qp(qp, &a, init_mask | IB_QP_QKEY) == -EINVAL,
		 "RESET -> INIT with an attribute RC does not have refused");

	for (i = 0; i < ARRAY_SIZE(walk); i++) {
		enum ib_qp_state from = et_state(qp), to = walk[i].to;
		int mask;

		switch (to) {
		case IB_QPS_INIT:
			a = init;
			mask = from == IB_QPS_RESET ? init_mask : IB_QP_STATE;
			break;
		case IB_QPS_RTR:
			a = rtr;
			mask = rtr_mask;
			break;
		case IB_QPS_RTS:
			a = rts;
			mask = from == IB_QPS_RTR ? rts_mask : IB_QP_STATE;
			break;
		default:
			memset(&a, 0, sizeof(a));
			mask = IB_QP_STATE;
		}
		mask |= walk[i].mask;
		a.min_rnr_timer = rtr.min_rnr_timer;
		if (to == IB_QPS_RTR && from == IB_QPS_INIT && i == 7) {
			/* First: INIT -> RTR without the AV is refused. */
			struct ib_qp_attr b = a;

			et_check(et_modify(qp, &b, mask & ~IB_QP_AV, to) ==
				 -EINVAL, "INIT -> RTR without an AV refused");
			b = a;
			b.max_dest_rd_atomic = 17;
			et_check(et_modify(qp, &b, mask, to) == -EINVAL,
				 "INIT -> RTR with max_dest_rd_atomic 17 (device has 16) refused");
			et_check(ib_post_send(qp, &swr.wr, NULL) == -EINVAL,
				 "post_send in INIT refused");
		}
		if (to == IB_QPS_RTS && from == IB_QPS_RTR && i == 10) {
			struct ib_qp_attr b = a;

			et_check(et_modify(qp, &b, mask & ~IB_QP_SQ_PSN, to) ==
				 -EINVAL, "RTR -> RTS without sq_psn refused");
			et_check(ib_post_send(qp, &swr.wr, NULL) == -EINVAL,
				 "post_send in RTR refused");
		}
		ret = et_modify(qp, &a, mask, to);
		if (walk[i].ok)
			et_check(!ret && et_state(qp) == to,
				 "%s -> %s (ret %d)", et_sn(from), et_sn(to),
				 ret);
		else
			et_check(ret == -EINVAL && et_state(qp) == from,
				 "%s -> %s refused (ret %d)", et_sn(from),
				 et_sn(to), ret);

		if (from == IB_QPS_RTS && to == IB_QPS_SQD && !posted) {
			posted = true;
			/* Receive WRs posted now are flushed by ERR below. */
			for (rwr.wr_id = 101; rwr.wr_id <= 103; rwr.wr_id++)
				ib_post_recv(qp, &rwr, NULL);
		}
		if (to == IB_QPS_ERR && from == IB_QPS_SQD && !ret) {
			int n = 0;

			while (!et_wait_wc(c, c->rcq, &wc, 2000) &&
			       wc.status == IB_WC_WR_FLUSH_ERR &&
			       wc.wr_id == 101 + n && wc.qp == qp)
				n++;
			et_check(n == 3, "ERR flushed 3 receive WRs in order (%d)",
				 n);
			swr.wr.wr_id = 77;
			swr.wr.send_flags = IB_SEND_SIGNALED;
			ret = ib_post_send(qp, &swr.wr, NULL);
			ret = ret ?: et_wait_wc(c, c->scq, &wc, 2000);
			et_check(!ret && wc.wr_id == 77 &&
				 wc.status == IB_WC_WR_FLUSH_ERR,
				 "post_send in ERR completes with IB_WC_WR_FLUSH_ERR (%d, %s)",
				 ret, ib_wc_status_msg(wc.status));
		}
	}
out:
	ib_destroy_qp(qp);
}

/*
 * A WRITE with a wrong R_Key: the server's ERNIC NAKs it (Remote Access
 * Error) and goes FATAL (0x15), the client's goes FATAL on the NAK
 * (0x0A). The client's CQE reports its error, with no async event; the
 * server's IB_EVENT_QP_ACCESS_ERR (et_serve()). Both go through Reset
 * (PG332's fatal recovery) and are used again.
 */
static void et_client_fatal(struct et_conn *c)
{
	struct ib_wc wc;
	int ret, st, seed;

	ret = et_post(c, IB_WR_RDMA_WRITE, c->buf_dma, 4096, c->peer_addr,
		      c->peer_rkey ^ 0x5a, 1);
	ret = ret ?: et_wait_wc(c, c->scq, &wc, ET_TIMEOUT_MS);
	et_check(!ret && wc.status == IB_WC_REM_ACCESS_ERR,
		 "WRITE with a bad R_Key completes with IB_WC_REM_ACCESS_ERR (%s)",
		 ret ? "none" : ib_wc_status_msg(wc.status));
	/* The requester's CQE is its report: no event (docs/driver.md). */
	wait_event_timeout(c->wq, atomic_read(&c->err_events),
			   msecs_to_jiffies(500));
	et_check(!atomic_read(&c->err_events),
		 "no async event on the requester (%s)",
		 atomic_read(&c->err_events) ? ib_event_msg(c->last_event) :
		 "the CQE reports it");
	et_check(et_state(c->qp) == IB_QPS_ERR, "QP in ERR after FATAL");
	ret = et_post(c, IB_WR_SEND, c->tx_dma, 16, 0, 0, 9);
	ret = ret ?: et_wait_wc(c, c->scq, &wc, ET_TIMEOUT_MS);
	et_check(!ret && wc.status == IB_WC_WR_FLUSH_ERR,
		 "SEND posted after FATAL is flushed (%s)",
		 ret ? "none" : ib_wc_status_msg(wc.status));

	ret = et_qp_reinit(c, ET_PSN_CLIENT, ET_PSN_SERVER);
	et_check(!ret && et_state(c->qp) == IB_QPS_RTS,
		 "QP recovered: ERR -> RESET -> INIT -> RTR -> RTS (%d)", ret);
	/* The server recovers on its own; retransmission covers the gap. */
	st = et_command(c, ET_PING, 0, 0);
	et_check(!st, "QP reused: ping answered by the recovered server (%d)",
		 st);
	seed = get_random_u32();
	et_fill(c->buf, 65536, seed);
	st = et_do(c, IB_WR_RDMA_WRITE, c->buf_dma, 65536, c->peer_addr,
		   c->peer_rkey) ?: et_command(c, ET_CHECK, 65536, seed);
	et_check(!st, "QP reused: WRITE 65536 B checked (%d)", st);
	seed = get_random_u32();
	st = et_command(c, ET_FILL, 65536, seed);
	memset(c->buf, 0, 65536);
	st = st ?: et_do(c, IB_WR_RDMA_READ, c->buf_dma, 65536, c->peer_addr,
			 c->peer_rkey);
	et_check(!st && !et_verify(c->buf, 65536, seed),
		 "QP reused: READ 65536 B checked (%d)", st);
}

static int et_client_run(void)
{
	struct et_conn *c = kzalloc(sizeof(*c), GFP_KERNEL);
	int ret;

	if (!c)
		return -ENOMEM;
	init_waitqueue_head(&c->wq);
	init_completion(&c->cm_done);
	et_failures = 0;
	ret = et_connect_retry(c);
	if (et_check(!ret, "rdma_cm connected to %s:%d (%d)", server, port,
		     ret)) {
		pr_info("ernic_test: local QP%u, remote buffer %#llx rkey %#x\n",
			c->qp->qp_num, c->peer_addr, c->peer_rkey);
		et_client_data(c);
		et_client_frwr(c);
		et_client_states(c);
		et_client_fatal(c);
		rdma_disconnect(c->id);
	}
	et_free(c);
	if (c->id)
		rdma_destroy_id(c->id);
	kfree(c);
	failures = et_failures;
	pr_info("ernic_test: RESULT %s (%d failed)\n",
		et_failures ? "FAIL" : "PASS", et_failures);
	return 0;
}

static int __init et_init(void)
{
	if (!strcmp(role, "server"))
		return et_server_start();
	if (!strcmp(role, "client"))
		return et_client_run();
	pr_err("ernic_test: role must be server or client\n");
	return -EINVAL;
}

static void __exit et_exit(void)
{
	if (!strcmp(role, "server"))
		et_server_stop();
}

module_init(et_init);
module_exit(et_exit);
MODULE_DESCRIPTION("Kernel RDMA test client for the ernic driver");
MODULE_LICENSE("GPL");
