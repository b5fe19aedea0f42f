// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ernic-fault-verbs: each fault the host injects into ernic
 * (docs/debugging.md), seen through the Linux driver and libibverbs, as an
 * application sees it: the completion status of the WR it hits (the table
 * of docs/driver.md, "FATAL errors"), the async event, the IBTA state the
 * QP is left in, and its recovery through Reset to a working QP again.
 *
 * Two RC QPs of one device talk in loopback. For each case the program
 * makes the state the fault needs (a SEND that waits on RNR NAKs, since
 * its peer has no receive posted), then asks the host for the fault with
 * a console line "guest: fault: inject CMD" (or "fault: link off|on"),
 * which scripts/qmp-fault.py carries out through QMP and answers on
 * ttyS1, and checks the outcome. The same way the host migrates the
 * guest ("fault: migrate") and takes and loads a snapshot ("fault:
 * savevm", "fault: loadvm") while WRITEs and READs are in flight, each
 * checked byte for byte (docs/migration.md). Without a fault, it checks
 * two orders the driver keeps: a FATAL's error completion before the
 * flushes it causes, and completion interrupts only for an armed CQ.
 * Prints "guest: ok fault: ..." or "guest: FAIL fault: ..." per case;
 * exits 0 when all pass.
 *
 * usage: ernic-fault-verbs DEVICE GID_INDEX
 */
#include "ernic-fault.h"

/*
 * A FATAL code injected on QP A (the SEND's) or B; what A's SEND gets,
 * which QPs end in Error, and the async events each must raise
 * (docs/driver.md, "FATAL errors"): a responder's code is reported by
 * IBV_EVENT_QP_REQ_ERR or _QP_ACCESS_ERR, a requester's by the CQE alone.
 */
struct fatal_case {
	uint16_t code;
	char side;
	const char *extra;
	enum ibv_wc_status want;
	bool a_fatal, b_fatal;
	unsigned int a_ev, b_ev;
};

#define REQ	EV(IBV_EVENT_QP_REQ_ERR)
#define ACC	EV(IBV_EVENT_QP_ACCESS_ERR)

static const struct fatal_case fatal_cases[] = {
	/* Responder codes on B: it NAKs A's SEND (docs/debugging.md). */
	{ 0x01, 'b', "", IBV_WC_REM_INV_REQ_ERR, true, true, 0, REQ },
	{ 0x02, 'b', "", IBV_WC_REM_INV_REQ_ERR, true, true, 0, REQ },
	{ 0x03, 'b', "", IBV_WC_REM_INV_REQ_ERR, true, true, 0, REQ },
	{ 0x04, 'b', "", IBV_WC_REM_INV_REQ_ERR, true, true, 0, REQ },
	{ 0x11, 'b', "", IBV_WC_REM_INV_REQ_ERR, true, true, 0, REQ },
	{ 0x12, 'b', "", IBV_WC_REM_INV_REQ_ERR, true, true, 0, REQ },
	{ 0x13, 'b', "", IBV_WC_REM_INV_REQ_ERR, true, true, 0, REQ },
	{ 0x15, 'b', "", IBV_WC_REM_ACCESS_ERR, true, true, 0, ACC },
	{ 0x16, 'b', "", IBV_WC_REM_ACCESS_ERR, true, true, 0, ACC },
	{ 0x17, 'b', "", IBV_WC_REM_ACCESS_ERR, true, true, 0, ACC },
	/* The 17th READ's NAK names a PSN A never sent: A's retries run out. */
	{ 0x10, 'b', "", IBV_WC_RETRY_EXC_ERR, true, true, 0, REQ },
	/* Requester codes on A: the SEND completes with the code's status. */
	{ 0x0a, 'a', ",nak=0x61", IBV_WC_REM_INV_REQ_ERR, true, false, 0, 0 },
	{ 0x0a, 'a', ",nak=0x62", IBV_WC_REM_ACCESS_ERR, true, false, 0, 0 },
	{ 0x0a, 'a', ",nak=0x63", IBV_WC_REM_OP_ERR, true, false, 0, 0 },
	{ 0x05, 'a', "", IBV_WC_LOC_QP_OP_ERR, true, false, 0, 0 },
	{ 0x06, 'a', "", IBV_WC_RETRY_EXC_ERR, true, false, 0, 0 },
	{ 0x09, 'a', "", IBV_WC_RNR_RETRY_EXC_ERR, true, false, 0, 0 },
	{ 0x0d, 'a', "", IBV_WC_RNR_RETRY_EXC_ERR, true, false, 0, 0 },
	{ 0x0c, 'a', "", IBV_WC_BAD_RESP_ERR, true, false, 0, 0 },
	{ 0x19, 'a', "", IBV_WC_BAD_RESP_ERR, true, false, 0, 0 },
	{ 0x1a, 'a', "", IBV_WC_BAD_RESP_ERR, true, false, 0, 0 },
	{ 0x1b, 'a', "", IBV_WC_BAD_RESP_ERR, true, false, 0, 0 },
	{ 0x1c, 'a', "", IBV_WC_BAD_RESP_ERR, true, false, 0, 0 },
	{ 0x1e, 'a', "", IBV_WC_BAD_RESP_ERR, true, false, 0, 0 },
	{ 0x1f, 'a', "", IBV_WC_BAD_RESP_ERR, true, false, 0, 0 },
	/* A responder code on A itself: its own WRs are only flushed. */
	{ 0x01, 'a', "", IBV_WC_WR_FLUSH_ERR, true, false, REQ, 0 },
};

/* A SEND of 64 B from A to B arrives whole, both complete. */
static bool send_works(struct dev *d, struct pair *p, uint8_t pattern)
{
	memset(d->buf, pattern, 64);
	memset(d->buf + 2048, 0, 64);
	return !post_recv(p->b, d->buf + 2048, d->mr->lkey) &&
	       !post_send(p->a, IBV_WR_SEND, (uintptr_t)d->buf, d->mr->lkey,
			  0, 0, 0) &&
	       wait_wc(d, p->a) == IBV_WC_SUCCESS &&
	       wait_wc(d, p->b) == IBV_WC_SUCCESS &&
	       d->buf[2048] == pattern && d->buf[2048 + 63] == pattern;
}

/*
 * A's SEND waits: B has no receive, so B answers with RNR NAKs (its
 * timer 31: 491 ms) and A, with RNR retry 7, asks again for ever.
 */
static bool send_waiting(struct dev *d, struct pair *p)
{
	struct ibv_wc wc;

	if (post_send(p->a, IBV_WR_SEND, (uintptr_t)d->buf, d->mr->lkey,
		      0, 0, 0))
		return false;
	usleep(300 * 1000);
	return ibv_poll_cq(d->cq, 1, &wc) == 0;
}

/* What happened to the pair after the fault; NULL if all is as it must. */
static const char *fatal_outcome(struct dev *d, struct pair *p,
				 const struct fatal_case *c, int st)
{
	static char why[128];
	unsigned int ea, eb;

	if (st != (int)c->want)
		return "the SEND's status";
	pair_events(d, p->a, c->a_ev, p->b, c->b_ev, &ea, &eb);
	if (ea != c->a_ev || eb != c->b_ev) {
		snprintf(why, sizeof(why), "events: A %s", events_str(ea));
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 ", B %s", events_str(eb));
		return why;
	}
	if ((c->a_fatal && qp_state(p->a) != IBV_QPS_ERR) ||
	    (c->b_fatal && qp_state(p->b) != IBV_QPS_ERR))
		return "a FATAL QP is not in Error";
	qp_min_rnr_timer = 12;
	if (qp_recycle(d, p->a, p->b->qp_num) ||
	    qp_recycle(d, p->b, p->a->qp_num))
		return "Reset and reconnect failed";
	if (!send_works(d, p, c->code))
		return "no SEND after the reset";
	return NULL;
}

static void fatal_case(struct dev *d, const struct fatal_case *c)
{
	struct pair p = { 0 };
	char name[96], why[256];
	const char *bad;
	struct ibv_qp *target;
	int st;

	snprintf(name, sizeof(name), "FATAL 0x%02x on QP %c%s", c->code,
		 c->side == 'a' ? 'A' : 'B', c->extra);
	qp_min_rnr_timer = 31;
	if (pair_new(d, &p) || !send_waiting(d, &p)) {
		result(false, name, "no SEND waiting on RNR");
		goto out;
	}
	target = c->side == 'a' ? p.a : p.b;
	host_do("inject fatal,qp=%u,code=0x%02x%s", target->qp_num, c->code,
		c->extra);
	st = wait_wc(d, p.a);
	bad = fatal_outcome(d, &p, c, st);
	if (bad)
		snprintf(why, sizeof(why), "%s (SEND: %s, wanted %s)", bad,
			 st < 0 ? "no completion" : ibv_wc_status_str(st),
			 ibv_wc_status_str(c->want));
	else
		snprintf(why, sizeof(why), "%s, A %s, B %s, Error, reset and "
			 "reused", ibv_wc_status_str(c->want),
			 events_str(c->a_ev), events_str(c->b_ev));
	result(!bad, name, why);
out:
	pair_free(&p);
}

/* One WR completes with an error; the QP goes on. */
static void cqe_error_case(struct dev *d)
{
	struct pair p = { 0 };
	bool ok;
	int st;

	qp_min_rnr_timer = 12;
	ok = !pair_new(d, &p);
	ok = ok && !strcmp(host_do("inject cqe-error,qp=%u", p.a->qp_num),
			   "ok");
	ok = ok && !post_send(p.a, IBV_WR_RDMA_WRITE, (uintptr_t)d->buf,
			      d->mr->lkey, (uintptr_t)d->buf + 1024,
			      d->mr->rkey, 0);
	st = ok ? wait_wc(d, p.a) : -1;
	ok = st == IBV_WC_WR_FLUSH_ERR && qp_state(p.a) == IBV_QPS_RTS &&
	     send_works(d, &p, 0x5a);
	result(ok, "cqe-error: WRITE flushed, QP still RTS, next SEND works",
	       ok ? NULL : st < 0 ? "no completion" : ibv_wc_status_str(st));
	pair_free(&p);
}

/* A NAK from the peer: Remote Access makes A FATAL; RNR is retried. */
static void nak_case(struct dev *d, const char *type, int want)
{
	struct pair p = { 0 };
	char name[64];
	bool ok;
	int st;

	snprintf(name, sizeof(name), "nak type=%s", type);
	qp_min_rnr_timer = 12;
	ok = !pair_new(d, &p);
	ok = ok && !strcmp(host_do("inject nak,qp=%u,type=%s", p.a->qp_num,
				   type), "ok");
	memset(d->buf + 2048, 0, 64);
	ok = ok && !post_recv(p.b, d->buf + 2048, d->mr->lkey) &&
	     !post_send(p.a, IBV_WR_SEND, (uintptr_t)d->buf, d->mr->lkey, 0,
			0, 0);
	st = ok ? wait_wc(d, p.a) : -1;
	/* A requester's error is the CQE's to report: no async event. */
	ok = st == want && qp_events(d, p.a, 0) == 0 &&
	     qp_state(p.a) == (want == IBV_WC_SUCCESS ? IBV_QPS_RTS :
						       IBV_QPS_ERR);
	result(ok, name, st < 0 ? "no completion" : ibv_wc_status_str(st));
	pair_free(&p);
}

/* A wire fault on A's frames: the SEND still arrives, whole. */
static void wire_case(struct dev *d, const char *what)
{
	struct pair p = { 0 };
	char cmd[96];
	bool ok;

	qp_min_rnr_timer = 12;
	ok = !pair_new(d, &p);
	snprintf(cmd, sizeof(cmd), "%s,dir=tx,qp=%u", what,
		 ok ? p.a->qp_num : 0);
	ok = ok && !strcmp(host_do("inject %s", cmd), "ok");
	ok = ok && send_works(d, &p, 0x33);
	/* What the rule did not hit must not meet the next QPs. */
	ok = !strcmp(host_do("inject clear"), "ok") && ok;
	result(ok, cmd, NULL);
	pair_free(&p);
}

/* set_link: the port goes down and up, with its events. */
static void link_case(struct dev *d)
{
	bool down, up;

	host_do("link off");
	down = wait_events(d, IBV_EVENT_PORT_ERR, NULL) &&
	       port_state(d) == IBV_PORT_DOWN;
	host_do("link on");
	up = wait_events(d, IBV_EVENT_PORT_ACTIVE, NULL) &&
	     port_state(d) == IBV_PORT_ACTIVE;
	result(down && up, "set_link off/on: IBV_EVENT_PORT_ERR, port DOWN, "
	       "IBV_EVENT_PORT_ACTIVE, port ACTIVE",
	       !down ? "no PORT_ERR or not DOWN" : !up ?
	       "no PORT_ACTIVE or not ACTIVE" : NULL);
}

/*
 * Traffic in flight for migrations and snapshots: on QP A, slot after
 * slot, a WRITE of 256 KiB (src to dst, through the region's R_Key) and
 * a READ of it back (dst to back); a slot is checked byte for byte once
 * both have completed, and used again with the next pattern.
 */
#define SLOT		(256 * 1024)
#define NSLOT		4

struct traffic {
	struct dev *d;
	struct ibv_qp *qp;
	uint8_t *big;
	struct ibv_mr *mr;
	uint8_t pattern[NSLOT];
	int pending[NSLOT];
	unsigned int iter, checked, bad;
};

static uint8_t *slot(struct traffic *t, int area, int k)
{
	return t->big + (size_t)(area * NSLOT + k) * SLOT;
}

static int post_rdma(struct traffic *t, enum ibv_wr_opcode op, int k,
		     uint8_t *local, uint8_t *remote)
{
	struct ibv_sge sge = { (uintptr_t)local, SLOT, t->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = k * 2 + (op == IBV_WR_RDMA_READ), .sg_list = &sge,
		.num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)remote,
			     .rkey = t->mr->rkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(t->qp, &wr, &bad);
}

static void post_slot(struct traffic *t, int k)
{
	t->pattern[k] = (++t->iter & 0xff) | 1;
	memset(slot(t, 0, k), t->pattern[k], SLOT);
	memset(slot(t, 1, k), 0, SLOT);
	memset(slot(t, 2, k), 0, SLOT);
	if (post_rdma(t, IBV_WR_RDMA_WRITE, k, slot(t, 0, k), slot(t, 1, k)) ||
	    post_rdma(t, IBV_WR_RDMA_READ, k, slot(t, 2, k), slot(t, 1, k)))
		t->bad++;
	else
		t->pending[k] = 2;
}

static bool all_bytes(const uint8_t *p, uint8_t v)
{
	size_t i;

	for (i = 0; i < SLOT; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* Poll once; post into free slots while @more. */
static void traffic_step(struct traffic *t, bool more)
{
	struct ibv_wc wc[8];
	int n, i, k;

	n = ibv_poll_cq(t->d->cq, 8, wc);
	for (i = 0; i < n; i++) {
		if (wc[i].qp_num != t->qp->qp_num)
			continue;
		k = wc[i].wr_id / 2;
		if (wc[i].status != IBV_WC_SUCCESS || k >= NSLOT ||
		    !t->pending[k]) {
			t->bad++;
			continue;
		}
		if (--t->pending[k])
			continue;
		if (all_bytes(slot(t, 1, k), t->pattern[k]) &&
		    all_bytes(slot(t, 2, k), t->pattern[k]))
			t->checked++;
		else
			t->bad++;
	}
	for (k = 0; more && k < NSLOT; k++)
		if (!t->pending[k])
			post_slot(t, k);
	if (n <= 0)
		usleep(1000);
}

/* Run until the host has answered, then @after slots more, then drain. */
static const char *traffic_until_answer(struct traffic *t,
					unsigned int after)
{
	static char answer[64];
	struct timespec t0, now;
	unsigned int stop = 0;
	int k, idle;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(answer, sizeof(answer), "no answer");
	while (!host_answered()) {
		traffic_step(t, true);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 180)
			return answer;
	}
	snprintf(answer, sizeof(answer), "%s", ack_line);
	stop = t->checked + after;
	while (t->checked < stop && !t->bad)
		traffic_step(t, true);
	for (idle = 0; idle < 20000; idle++) {
		for (k = 0; k < NSLOT && !t->pending[k]; k++)
			;
		if (k == NSLOT)
			break;
		traffic_step(t, false);
	}
	return answer;
}

static bool traffic_start(struct dev *d, struct pair *p, struct traffic *t)
{
	static uint8_t *big;
	static struct ibv_mr *mr;

	if (!big) {
		big = aligned_alloc(4096, (size_t)3 * NSLOT * SLOT);
		mr = big ? ibv_reg_mr(d->pd, big, (size_t)3 * NSLOT * SLOT,
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_WRITE) : NULL;
	}
	memset(t, 0, sizeof(*t));
	*t = (struct traffic){ .d = d, .qp = p->a, .big = big, .mr = mr };
	qp_min_rnr_timer = 12;
	return mr && !pair_new(d, p);
}

/* A migration with WRITEs and READs in flight: all complete, all whole. */
static void migrate_traffic_case(struct dev *d)
{
	struct pair p = { 0 };
	struct traffic t;
	char why[128];
	const char *ans;
	bool ok = traffic_start(d, &p, &t);

	if (ok) {
		t.qp = p.a;
		say("fault: migrate");
		ans = traffic_until_answer(&t, 8);
		ok = !strcmp(ans, "ok") && !t.bad && t.checked > 8;
	}
	snprintf(why, sizeof(why), "%u slots of 256 KiB written and read "
		 "back, byte for byte, %u bad", t.checked, t.bad);
	result(ok, "migrate with WRITEs and READs in flight", why);
	pair_free(&p);
}

/*
 * savevm with traffic in flight, then, after more traffic, loadvm: the
 * guest is back where the snapshot was taken, with the same WRs in
 * flight, and they complete again, whole. The answer tells the two
 * timelines apart: "saved" in the first, "loaded" in the one restored.
 */
static void snapshot_case(struct dev *d)
{
	struct pair p = { 0 };
	struct traffic t;
	char why[128];
	const char *ans = "no pair";
	bool ok = traffic_start(d, &p, &t);

	if (ok) {
		t.qp = p.a;
		say("fault: savevm");
		ans = traffic_until_answer(&t, 8);
	}
	if (ok && !strcmp(ans, "saved") && !t.bad) {
		say("fault: loadvm");
		/* Answered in the timeline the snapshot restores. */
		ans = traffic_until_answer(&t, 8);
		ok = false;
	} else {
		ok = ok && !strcmp(ans, "loaded") && !t.bad;
	}
	snprintf(why, sizeof(why), "answer %s, %u slots of 256 KiB checked, "
		 "%u bad", ans, t.checked, t.bad);
	result(ok, "savevm and loadvm with WRITEs and READs in flight", why);
	pair_free(&p);
}

/*
 * FATAL with work on both queues (IBTA 10.7.3: entering Error flushes
 * every WR): A has three SENDs outstanding (its frames dropped), B two
 * receives. A FATAL on A: its first SEND gets the code's status, the
 * others and a SEND posted afterwards are flushed. A FATAL on B: its
 * receives are flushed, in order.
 */
static void flush_case(struct dev *d)
{
	struct pair p = { 0 };
	char why[160] = "";
	int st[4], r[2], i;
	bool ok;

	qp_min_rnr_timer = 12;
	ok = !pair_new(d, &p) &&
	     !post_recv(p.b, d->buf + 2048, d->mr->lkey) &&
	     !post_recv(p.b, d->buf + 3072, d->mr->lkey) &&
	     !strcmp(host_do("inject drop,dir=tx,qp=%u,count=1000",
			     p.a->qp_num), "ok");
	for (i = 0; ok && i < 3; i++)
		ok = !post_send(p.a, IBV_WR_SEND, (uintptr_t)d->buf,
				d->mr->lkey, 0, 0, 0);
	ok = ok && !strcmp(host_do("inject fatal,qp=%u,code=0x0a,nak=0x63",
				   p.a->qp_num), "ok");
	for (i = 0; i < 3; i++)
		st[i] = ok ? wait_wc(d, p.a) : -1;
	ok = ok && !post_send(p.a, IBV_WR_SEND, (uintptr_t)d->buf,
			      d->mr->lkey, 0, 0, 0);
	st[3] = ok ? wait_wc(d, p.a) : -1;
	ok = ok && !strcmp(host_do("inject clear"), "ok") &&
	     !strcmp(host_do("inject fatal,qp=%u,code=0x01", p.b->qp_num),
		     "ok");
	for (i = 0; i < 2; i++)
		r[i] = ok ? wait_wc(d, p.b) : -1;
	snprintf(why, sizeof(why), "A: %d %d %d, posted after: %d; B's "
		 "receives: %d %d", st[0], st[1], st[2], st[3], r[0], r[1]);
	ok = ok && st[0] == IBV_WC_REM_OP_ERR &&
	     st[1] == IBV_WC_WR_FLUSH_ERR && st[2] == IBV_WC_WR_FLUSH_ERR &&
	     st[3] == IBV_WC_WR_FLUSH_ERR && r[0] == IBV_WC_WR_FLUSH_ERR &&
	     r[1] == IBV_WC_WR_FLUSH_ERR;
	result(ok, "FATAL flushes every WR of both queues, in order", why);
	pair_free(&p);
}

/* wait_wc() without its pause between empty polls. */
static int busy_wc(struct dev *d, struct ibv_qp *qp)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	unsigned int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1;; i++) {
		if (ibv_poll_cq(d->cq, 1, &wc) > 0) {
			if (wc.qp_num == qp->qp_num)
				return wc.status;
			if (d->nstash < STASH_MAX)
				d->stash[d->nstash++] = wc;
		}
		if (i % 1024)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= wc_timeout_s)
			return -1;
	}
}

#define ORDER_QPS	16
#define ORDER_TRIALS	8

/*
 * A's WRITE with a bad R_Key, delayed on the wire so that its NAK comes
 * while A's CQ is polled without a pause, and a receive posted on A: its
 * first completion is the WRITE's Remote Access Error, then the flush.
 */
static bool order_trial(struct dev *d, struct pair *p, char *why, size_t n)
{
	int st[2] = { -1, -1 };

	if (qp_recycle(d, p->a, p->b->qp_num) ||
	    qp_recycle(d, p->b, p->a->qp_num) ||
	    post_recv(p->a, d->buf + 2048, d->mr->lkey) ||
	    post_send(p->a, IBV_WR_RDMA_WRITE, (uintptr_t)d->buf,
		      d->mr->lkey, (uintptr_t)d->buf + 1024,
		      d->mr->rkey + 0x100, 0)) {
		snprintf(why, n, "no WRITE posted");
		return false;
	}
	st[0] = busy_wc(d, p->a);
	st[1] = wait_wc(d, p->a);
	snprintf(why, n, "%s, then %s",
		 st[0] < 0 ? "none" : ibv_wc_status_str(st[0]),
		 st[1] < 0 ? "none" : ibv_wc_status_str(st[1]));
	return st[0] == IBV_WC_REM_ACCESS_ERR && st[1] == IBV_WC_WR_FLUSH_ERR;
}

/*
 * A FATAL's error completion comes before the flushes it causes on the
 * same CQ (docs/driver.md, "FATAL errors"). The provider polls the SQs
 * of a CQ, then its RQs, and the driver may publish Error in between
 * (its interrupt handler runs while a poll does): a receive must not
 * flush before the SQ's error CQE is taken. ORDER_QPS idle QPs after A
 * on the CQ make that window most of each poll.
 */
static void flush_order_case(struct dev *d)
{
	struct ibv_qp *idle[ORDER_QPS] = { 0 };
	struct pair p = { 0 };
	char why[128] = "";
	bool ok;
	int i;

	qp_min_rnr_timer = 12;
	ok = !pair_new(d, &p);
	for (i = 0; ok && i < ORDER_QPS; i++)
		ok = (idle[i] = qp_new(d)) != NULL;
	if (!ok)
		snprintf(why, sizeof(why), "no QPs");
	ok = ok && !strcmp(host_do("inject delay,dir=tx,qp=%u,count=%d,"
				   "delay-us=2000", p.a->qp_num,
				   ORDER_TRIALS), "ok");
	for (i = 0; ok && i < ORDER_TRIALS; i++)
		ok = order_trial(d, &p, why, sizeof(why));
	ok = !strcmp(host_do("inject clear"), "ok") && ok;
	if (!ok && i)
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 " (trial %d of %d)", i, ORDER_TRIALS);
	result(ok, "a FATAL's error completion before its receive flush",
	       why);
	for (i = 0; i < ORDER_QPS; i++)
		if (idle[i])
			ibv_destroy_qp(idle[i]);
	pair_free(&p);
}

/* A migration between FATAL and the recovery through Reset. */
/* MSI-X messages of the ERNIC interrupt so far, or -1 (/proc/interrupts). */
static long ernic_irqs(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[512], *p, *end;
	long sum = -1, v;
	size_t n;

	while (f && fgets(line, sizeof(line), f)) {
		n = strlen(line);
		p = strchr(line, ':');
		if (!p || n < 7 || strcmp(line + n - 7, " ernic\n"))
			continue;
		for (sum = 0, p++;; p = end) {
			v = strtol(p, &end, 10);
			if (end == p)
				break;
			sum += v;
		}
	}
	if (f)
		fclose(f);
	return sum;
}

/* A SEND from A to B with d->cq armed: its event comes within 5 s. */
static bool event_send_works(struct dev *d, struct pair *p,
			     struct ibv_comp_channel *ch, uint8_t pattern)
{
	struct pollfd pf = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	memset(d->buf, pattern, 64);
	memset(d->buf + 2048, 0, 64);
	if (ibv_req_notify_cq(d->cq, 0) ||
	    post_recv(p->b, d->buf + 2048, d->mr->lkey) ||
	    post_send(p->a, IBV_WR_SEND, (uintptr_t)d->buf, d->mr->lkey,
		      0, 0, 0) ||
	    poll(&pf, 1, 5000) != 1 || ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
		return false;
	ibv_ack_cq_events(ev_cq, 1);
	return wait_wc(d, p->a) == IBV_WC_SUCCESS &&
	       wait_wc(d, p->b) == IBV_WC_SUCCESS &&
	       d->buf[2048] == pattern && d->buf[2048 + 63] == pattern;
}

#define IRQ_SENDS	100
#define IRQ_ROUNDS	3

/*
 * Completion interrupts only while a CQ is armed (docs/driver.md,
 * "Completion interrupts"): SENDs polled from a CQ nobody armed take at
 * most the few interrupts that mask their QPs', not one or two each; and
 * when the CQ is armed after them, the next SEND brings its event. Three
 * rounds: masked, unmasked by the arm, masked again.
 */
static bool armed_irq_round(struct dev *d, struct pair *p,
			    struct ibv_comp_channel *ch, int round,
			    char *why, size_t n)
{
	long before = ernic_irqs(), irqs;
	int i;

	for (i = 0; i < IRQ_SENDS; i++) {
		if (!send_works(d, p, i)) {
			snprintf(why, n, "round %d: polled SEND %d failed",
				 round, i);
			return false;
		}
	}
	irqs = ernic_irqs() - before;
	snprintf(why, n, "round %d: %ld interrupts for %d polled SENDs",
		 round, before < 0 ? -1 : irqs, IRQ_SENDS);
	if (before < 0 || irqs > 4)
		return false;
	if (!event_send_works(d, p, ch, 0xa0 + round)) {
		snprintf(why, n, "round %d: no event for a SEND once armed",
			 round);
		return false;
	}
	return true;
}

static void armed_irq_case(struct dev *d)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(d->ctx);
	struct ibv_cq *polled = d->cq, *cq = NULL;
	struct pair p = { 0 };
	char why[96] = "no channel, CQ or QPs";
	bool ok;
	int r;

	qp_min_rnr_timer = 12;
	if (ch)
		cq = ibv_create_cq(d->ctx, 64, NULL, ch, 0);
	d->cq = cq;
	ok = cq && !pair_new(d, &p);
	for (r = 0; ok && r < IRQ_ROUNDS; r++)
		ok = armed_irq_round(d, &p, ch, r, why, sizeof(why));
	result(ok, "completion interrupts only while the CQ is armed", why);
	pair_free(&p);
	d->cq = polled;
	if (cq)
		ibv_destroy_cq(cq);
	if (ch)
		ibv_destroy_comp_channel(ch);
}

static void fatal_migrate_case(struct dev *d)
{
	struct pair p = { 0 };
	const char *ans = "";
	int st = -1;
	bool ok;

	qp_min_rnr_timer = 31;
	ok = !pair_new(d, &p) && send_waiting(d, &p) &&
	     !strcmp(host_do("inject fatal,qp=%u,code=0x0a,nak=0x63",
			     p.a->qp_num), "ok");
	st = ok ? wait_wc(d, p.a) : -1;
	ok = st == IBV_WC_REM_OP_ERR && qp_state(p.a) == IBV_QPS_ERR;
	if (ok)
		ans = host_do("migrate");
	qp_min_rnr_timer = 12;
	ok = ok && !strcmp(ans, "ok") && qp_state(p.a) == IBV_QPS_ERR &&
	     !qp_recycle(d, p.a, p.b->qp_num) &&
	     !qp_recycle(d, p.b, p.a->qp_num) && send_works(d, &p, 0x77);
	result(ok, "migrate between FATAL (REM_OP_ERR) and recovery: "
	       "still Error after the move, reset and reused",
	       ok ? NULL : st < 0 ? "no completion" : ibv_wc_status_str(st));
	pair_free(&p);
}

/*
 * Atomics under a lossy wire (ERNIC-X ATOMIC, docs/extension.md): the
 * eight QPs of four loopback pairs, both ends of each, one WR in flight
 * each on the shared CQ, add 1 to one 8-byte counter HAMMER_N times each
 * with FETCH_AND_ADD, then HAMMER_N times each with CMP_AND_SWP (compare
 * the value last seen, swap in one more, again until it takes), while
 * the host drops 5 % of the device's received frames and duplicates 5 %
 * of those it sends. Every
 * FETCH_AND_ADD must see a value no other saw, and the counter must end
 * at exactly the number of increments: a duplicate executed twice, or a
 * lost answer never asked for again, would show.
 */
#define HAMMER_QPS	8
#define HAMMER_N	48
#define HAMMER_RESULTS	2048		/* the counter at 0, then results */

static int atomic_post(struct ibv_qp *qp, struct dev *d, int slot,
		       enum ibv_wr_opcode op, uint64_t compare, uint64_t swap)
{
	struct ibv_sge sge = { (uintptr_t)d->buf + HAMMER_RESULTS + slot * 8,
			       8, d->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = slot, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)d->buf,
			       .rkey = d->mr->rkey, .compare_add = compare,
			       .swap = swap },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static uint64_t result_of(struct dev *d, int slot)
{
	uint64_t v;

	memcpy(&v, d->buf + HAMMER_RESULTS + slot * 8, 8);
	return v;
}

static char hammer_why[96];

/* The first error of a hammer phase, in hammer_why; false. */
static bool hammer_error(const char *what, int q, int st)
{
	snprintf(hammer_why, sizeof(hammer_why), "%s on QP %d: %s", what, q,
		 st < -1 ? strerror(-st) : st < 0 ? "no completion" :
		 ibv_wc_status_str(st));
	return false;
}

/* Round after round, one FETCH_AND_ADD of 1 per QP; false on an error. */
static bool hammer_fetch_add(struct dev *d, struct ibv_qp **qp)
{
	static uint8_t seen[HAMMER_QPS * HAMMER_N];

	for (int k = 0; k < HAMMER_N; k++) {
		for (int q = 0; q < HAMMER_QPS; q++) {
			int r = atomic_post(qp[q], d, q,
					    IBV_WR_ATOMIC_FETCH_AND_ADD, 1, 0);

			if (r)
				return hammer_error("FETCH_AND_ADD post", q,
						    -r);
		}
		for (int q = 0; q < HAMMER_QPS; q++) {
			int st = wait_wc(d, qp[q]);
			uint64_t v = result_of(d, q);

			if (st != IBV_WC_SUCCESS)
				return hammer_error("FETCH_AND_ADD", q, st);
			if (v >= sizeof(seen) || seen[v]++)
				return hammer_error("a value seen twice", q, 0);
		}
	}
	return true;
}

/* Each QP adds 1 HAMMER_N times by CMP_AND_SWP; false on an error. */
static bool hammer_cmp_swp(struct dev *d, struct ibv_qp **qp)
{
	uint64_t last[HAMMER_QPS] = { 0 };
	int done[HAMMER_QPS] = { 0 }, left = HAMMER_QPS * HAMMER_N;

	while (left) {
		for (int q = 0; q < HAMMER_QPS; q++) {
			int r = done[q] < HAMMER_N ?
				atomic_post(qp[q], d, q,
					    IBV_WR_ATOMIC_CMP_AND_SWP, last[q],
					    last[q] + 1) : 0;

			if (r)
				return hammer_error("CMP_AND_SWP post", q, -r);
		}
		for (int q = 0; q < HAMMER_QPS; q++) {
			int st;
			uint64_t v;

			if (done[q] == HAMMER_N)
				continue;
			st = wait_wc(d, qp[q]);
			if (st != IBV_WC_SUCCESS)
				return hammer_error("CMP_AND_SWP", q, st);
			v = result_of(d, q);
			if (v == last[q]) {
				done[q]++;
				left--;
			}
			last[q] = v == last[q] ? v + 1 : v;
		}
	}
	return true;
}

static void atomic_hammer_case(struct dev *d)
{
	const char *name = "atomics from 8 QPs, both ends of 4 pairs, to one counter, 5 % of frames dropped and 5 % duplicated: every FETCH_AND_ADD saw its own value, the counter exact";
	struct pair p[HAMMER_QPS / 2] = { 0 };
	struct ibv_qp *qp[HAMMER_QPS];
	uint64_t end = 0, want = 2 * HAMMER_QPS * HAMMER_N;
	bool ok = true;
	int i;

	memset(d->buf, 0, HAMMER_RESULTS + HAMMER_QPS * 8);
	for (i = 0; ok && i < HAMMER_QPS / 2; i++) {
		ok = !pair_new(d, &p[i]);
		qp[2 * i] = p[i].a;
		qp[2 * i + 1] = p[i].b;
	}
	ok = ok && !strcmp(host_do("inject drop,dir=rx,percent=5,seed=7"),
			   "ok") &&
	     !strcmp(host_do("inject dup,dir=tx,percent=5,seed=11"), "ok");
	ok = ok && hammer_fetch_add(d, qp) && hammer_cmp_swp(d, qp);
	ok = !strcmp(host_do("inject clear"), "ok") && ok;
	memcpy(&end, d->buf, 8);
	if (ok && end != want)
		snprintf(hammer_why, sizeof(hammer_why),
			 "the counter is %llu, not %llu",
			 (unsigned long long)end, (unsigned long long)want);
	result(ok && end == want, name, hammer_why[0] ? hammer_why : NULL);
	for (i = 0; i < HAMMER_QPS / 2; i++)
		pair_free(&p[i]);
}

int main(int argc, char **argv)
{
	struct dev d = { 0 };
	size_t i;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX\n", argv[0]);
		return 2;
	}
	if (dev_open(&d, argv[1], atoi(argv[2]))) {
		perror("ernic-fault-verbs: device");
		return 2;
	}
	if (open_ack()) {
		perror("ernic-fault-verbs: /dev/ttyS1, the host's answers");
		return 2;
	}
	wc_timeout_s = 20;
	for (i = 0; i < sizeof(fatal_cases) / sizeof(fatal_cases[0]); i++)
		fatal_case(&d, &fatal_cases[i]);
	cqe_error_case(&d);
	nak_case(&d, "remote-access", IBV_WC_REM_ACCESS_ERR);
	nak_case(&d, "remote-op", IBV_WC_REM_OP_ERR);
	nak_case(&d, "rnr", IBV_WC_SUCCESS);
	nak_case(&d, "psn-seq", IBV_WC_SUCCESS);
	wire_case(&d, "drop,count=3");
	wire_case(&d, "dup,count=3");
	wire_case(&d, "corrupt,count=2");
	wire_case(&d, "delay,count=2,delay-us=20000");
	atomic_hammer_case(&d);
	link_case(&d);
	flush_case(&d);
	flush_order_case(&d);
	armed_irq_case(&d);
	migrate_traffic_case(&d);
	fatal_migrate_case(&d);
	snapshot_case(&d);
	say("fault: %d failed", failures);
	return failures ? 1 : 0;
}
