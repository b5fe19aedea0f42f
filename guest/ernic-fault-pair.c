// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ernic-fault-pair: faults injected into ernic while its RC QP talks to a
 * QP of a second guest (ernic, or Linux rxe), checked on both machines
 * through the Linux drivers and libibverbs (docs/debugging.md, "Faults
 * between two guests"). The single-guest program (ernic-fault-verbs.c)
 * has both QPs on one device; here the peer is another machine, so what
 * a fault does to the other end is seen as an application there sees it.
 *
 * The peer (B) runs "ernic-fault-pair DEV GID": it serves one TCP
 * connection on port 18515, a command per line, each answered with one
 * line (make a QP, post a receive or a SEND, wait for a completion or an
 * async event, report the QP's or port's state); each wait has a
 * deadline, and B gives up after 10 minutes without a word, so a fault
 * can never leave it hanging. The driver (A) runs "ernic-fault-pair DEV
 * GID PEER_IP": it sets up each case on both sides, asks its host for
 * the fault ("guest: fault: inject CMD", "link off|on"; "peer inject
 * CMD", "peer link off|on" for B's device, scripts/qmp-fault.py), and
 * checks the outcome on both: completion status, async event, QP state,
 * then recovery of both QPs through Reset and a SEND each way.
 *
 * Prints "guest: ok fault: ..." or "guest: FAIL fault: ..." per case;
 * exits 0 when all pass.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "ernic-fault.h"

#define PORT		18515
#define SIDE_TIMEOUT_S	600
#define LINE_MAX	160
#define RDMA_LEN	2048

/* ---- The side channel: one line each way -------------------------- */

static int side_fd = -1;

static bool line_send(const char *s)
{
	size_t n = strlen(s), off = 0;
	ssize_t k;

	while (off < n) {
		k = write(side_fd, s + off, n - off);
		if (k <= 0)
			return false;
		off += k;
	}
	return write(side_fd, "\n", 1) == 1;
}

/* A line from the other side into @buf; false on EOF or timeout. */
static bool line_recv(char *buf, size_t size)
{
	size_t n = 0;
	char c;

	while (read(side_fd, &c, 1) == 1) {
		if (c == '\n') {
			buf[n] = 0;
			return true;
		}
		if (n < size - 1)
			buf[n++] = c;
	}
	return false;
}

static void side_timeouts(void)
{
	struct timeval tv = { .tv_sec = SIDE_TIMEOUT_S };
	int one = 1;

	setsockopt(side_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(side_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void gid_hex(const union ibv_gid *g, char *out)
{
	int i;

	for (i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", g->raw[i]);
}

static bool gid_parse(const char *s, union ibv_gid *g)
{
	unsigned int v;
	int i;

	for (i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return false;
		g->raw[i] = v;
	}
	return true;
}

/* ---- The peer, B: serves A's commands ----------------------------- */

struct peer {
	struct dev d;
	struct ibv_qp *qp;
};

/* Async events of QPs destroyed before: not for the next case. */
static void events_drain(struct dev *d)
{
	struct pollfd p = { .fd = d->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (poll(&p, 1, 0) > 0 && !ibv_get_async_event(d->ctx, &ev))
		ibv_ack_async_event(&ev);
}

static void qp_drop(struct peer *b)
{
	if (b->qp)
		ibv_destroy_qp(b->qp);
	b->qp = NULL;
}

/* "qp AQPN RNR": a new QP connected to A's, B's RNR NAK timer RNR. */
static long cmd_qp(struct peer *b, unsigned int aqpn, unsigned int rnr)
{
	qp_drop(b);
	events_drain(&b->d);
	b->qp = qp_new(&b->d);
	if (!b->qp)
		return -1;
	while (stashed_wc(&b->d, b->qp) >= 0)
		;
	qp_min_rnr_timer = rnr;
	return qp_connect(&b->d, b->qp, aqpn) ? -1 : (long)b->qp->qp_num;
}

static long cmd_event(struct peer *b, const char *what, int secs)
{
	int i;

	/* wait_events() waits 10 s; a longer wait is several of them. */
	for (i = 0; i < (secs + 9) / 10; i++) {
		if (!strcmp(what, "port_err") &&
		    wait_events(&b->d, IBV_EVENT_PORT_ERR, NULL))
			return 1;
		if (!strcmp(what, "port_active") &&
		    wait_events(&b->d, IBV_EVENT_PORT_ACTIVE, NULL))
			return 1;
	}
	return 0;
}

static bool bytes_are(const uint8_t *p, size_t n, uint8_t v)
{
	while (n--)
		if (*p++ != v)
			return false;
	return true;
}

/* One command of A's; the answer into @out. False ends the service. */
static bool serve_one(struct peer *b, const char *cmd, char *out)
{
	struct dev *d = &b->d;
	unsigned int x = 0, y = 0;
	char word[16] = "";
	long r = -1;

	if (!strcmp(cmd, "bye"))
		return false;
	sscanf(cmd, "%*s %15s %u", word, &y);
	x = strtoul(word, NULL, 0);
	if (!strncmp(cmd, "qp ", 3))
		r = cmd_qp(b, x, y);
	else if (!strncmp(cmd, "recycle ", 8) && b->qp)
		r = (qp_min_rnr_timer = y, qp_recycle(d, b->qp, x));
	else if (!strcmp(cmd, "recv") && b->qp)
		r = (memset(d->buf + 2048, 0, 64),
		     post_recv(b->qp, d->buf + 2048, d->mr->lkey));
	else if (!strncmp(cmd, "send ", 5) && b->qp)
		r = (memset(d->buf, x, 64),
		     post_send(b->qp, IBV_WR_SEND, (uintptr_t)d->buf,
			       d->mr->lkey, 0, 0, 0));
	else if (!strncmp(cmd, "wc ", 3) && b->qp)
		r = (wc_timeout_s = x, wait_wc(d, b->qp));
	else if (!strncmp(cmd, "data ", 5))
		r = bytes_are(d->buf + 2048, 64, x);
	else if (!strncmp(cmd, "check ", 6))
		r = bytes_are(d->buf + 2048, RDMA_LEN, x);
	else if (!strncmp(cmd, "event ", 6))
		r = cmd_event(b, word, y);
	else if (!strncmp(cmd, "events ", 7) && b->qp)
		r = qp_events(d, b->qp, x);
	else if (!strcmp(cmd, "state") && b->qp)
		r = qp_state(b->qp);
	else if (!strcmp(cmd, "port"))
		r = port_state(d);
	else if (!strcmp(cmd, "destroy"))
		r = (qp_drop(b), 0);
	if (!strncmp(cmd, "fill ", 5)) {
		memset(d->buf, x, RDMA_LEN);
		memset(d->buf + RDMA_LEN, 0, RDMA_LEN);
		snprintf(out, LINE_MAX, "%llu %u",
			 (unsigned long long)(uintptr_t)d->buf, d->mr->rkey);
	} else {
		snprintf(out, LINE_MAX, "%ld", r);
	}
	return true;
}

static int serve(struct peer *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	char cmd[LINE_MAX], out[LINE_MAX], hex[33];
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct pollfd p = { .fd = ls, .events = POLLIN };

	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(ls, 1) || poll(&p, 1, SIDE_TIMEOUT_S * 1000) != 1)
		return 1;
	side_fd = accept(ls, NULL, NULL);
	close(ls);
	if (side_fd < 0)
		return 1;
	side_timeouts();
	/* "gid HEX": A's GID; B answers with its own and its device. */
	if (!line_recv(cmd, sizeof(cmd)) || strncmp(cmd, "gid ", 4) ||
	    !gid_parse(cmd + 4, &b->d.dgid))
		return 1;
	gid_hex(&b->d.gid, hex);
	snprintf(out, sizeof(out), "%s %s", hex,
		 ibv_get_device_name(b->d.ctx->device));
	line_send(out);
	while (line_recv(cmd, sizeof(cmd))) {
		if (!serve_one(b, cmd, out)) {
			qp_drop(b);
			say("peer: served until A said bye");
			return 0;
		}
		if (!line_send(out))
			break;
	}
	say("FAIL peer: the side channel broke (timeout or EOF)");
	qp_drop(b);
	return 1;
}

/* ---- The driver, A ------------------------------------------------- */

struct link {
	struct dev *d;
	struct ibv_qp *qp;	/* A's */
	uint32_t bqpn;		/* B's */
	bool peer_ernic;	/* B is ernic: its device takes injections */
};

/* Ask B; its answer as a number (-2: no answer). */
static long peer_do(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static long peer_do(const char *fmt, ...)
{
	char buf[LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!line_send(buf) || !line_recv(buf, sizeof(buf)))
		return -2;
	return strtol(buf, NULL, 0);
}

static bool side_connect(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	int i;

	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		return false;
	for (i = 0; i < 600; i++) {
		side_fd = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(side_fd, (struct sockaddr *)&sa, sizeof(sa)))
			break;
		close(side_fd);
		side_fd = -1;
		usleep(200 * 1000);
	}
	if (side_fd < 0)
		return false;
	side_timeouts();
	return true;
}

/* GIDs both ways; whether B's device is an ernic. */
static bool hello(struct link *l)
{
	char buf[LINE_MAX], hex[33], name[64] = "";

	gid_hex(&l->d->gid, hex);
	snprintf(buf, sizeof(buf), "gid %s", hex);
	if (!line_send(buf) || !line_recv(buf, sizeof(buf)) ||
	    sscanf(buf, "%32s %63s", hex, name) != 2 ||
	    !gid_parse(hex, &l->d->dgid))
		return false;
	l->peer_ernic = !!strstr(name, "ernic");
	say("pair: peer device %s", name);
	return true;
}

/* A new QP on each side, connected; A's and B's RNR NAK timers. */
static bool link_new(struct link *l, uint8_t a_rnr, uint8_t b_rnr)
{
	long bqpn;

	if (l->qp)
		ibv_destroy_qp(l->qp);
	l->qp = qp_new(l->d);
	if (!l->qp)
		return false;
	while (stashed_wc(l->d, l->qp) >= 0)
		;
	bqpn = peer_do("qp %u %u", l->qp->qp_num, b_rnr);
	if (bqpn < 0)
		return false;
	l->bqpn = bqpn;
	qp_min_rnr_timer = a_rnr;
	return !qp_connect(l->d, l->qp, l->bqpn);
}

/* A SEND of A's posted, and B's side of it: B got it, whole. */
static int send_to_b(struct link *l, uint8_t pat, const char **bad)
{
	int st;

	memset(l->d->buf, pat, 64);
	if (peer_do("recv") != 0 ||
	    post_send(l->qp, IBV_WR_SEND, (uintptr_t)l->d->buf,
		      l->d->mr->lkey, 0, 0, 0)) {
		*bad = "no SEND posted";
		return -1;
	}
	st = wait_wc(l->d, l->qp);
	if (peer_do("wc 10") != IBV_WC_SUCCESS || peer_do("data %u", pat) != 1)
		*bad = "B did not get the SEND whole";
	return st;
}

/* A SEND of 64 B from A to B: both complete, the bytes arrive. */
static bool send_a_to_b(struct link *l, uint8_t pat)
{
	const char *bad = NULL;

	return send_to_b(l, pat, &bad) == IBV_WC_SUCCESS && !bad;
}

static bool send_b_to_a(struct link *l, uint8_t pat)
{
	struct dev *d = l->d;

	memset(d->buf + 2048, 0, 64);
	return !post_recv(l->qp, d->buf + 2048, d->mr->lkey) &&
	       peer_do("send %u", pat) == 0 &&
	       peer_do("wc 10") == IBV_WC_SUCCESS &&
	       wait_wc(d, l->qp) == IBV_WC_SUCCESS &&
	       bytes_are(d->buf + 2048, 64, pat);
}

/* Both QPs through Reset to RTS again; a SEND each way. */
static const char *recover(struct link *l, uint8_t pat)
{
	qp_min_rnr_timer = 12;
	if (qp_recycle(l->d, l->qp, l->bqpn) ||
	    peer_do("recycle %u 12", l->qp->qp_num) != 0)
		return "Reset and reconnect failed";
	if (!send_a_to_b(l, pat) || !send_b_to_a(l, pat ^ 0xff))
		return "no SEND each way after the reset";
	return NULL;
}

/*
 * A's QP raised the async events of @want and no other (docs/driver.md,
 * "FATAL errors": a requester's error is reported by its CQE alone).
 */
static const char *a_events(struct link *l, unsigned int want)
{
	static char why[96];
	unsigned int got = qp_events(l->d, l->qp, want);

	if (got == want)
		return NULL;
	snprintf(why, sizeof(why), "A's events: %s", events_str(got));
	return why;
}

/* B's likewise, as its driver reports them (ernic or rxe). */
static const char *b_events(unsigned int want)
{
	static char why[96];
	long got = peer_do("events %u", want);

	if (got == (long)want)
		return NULL;
	snprintf(why, sizeof(why), "B's events: %s",
		 got < 0 ? "no answer" : events_str(got));
	return why;
}

/* The event a responder's FATAL code raises: invalid request or access. */
static unsigned int resp_event(uint16_t code)
{
	return code >= 0x15 && code <= 0x17 ? EV(IBV_EVENT_QP_ACCESS_ERR) :
					       EV(IBV_EVENT_QP_REQ_ERR);
}

/* A FATAL code, its fault parameters, and the status it gives a SEND. */
struct code_case {
	uint16_t code;
	const char *extra;
	enum ibv_wc_status want;
};

/*
 * A new link with A's SEND waiting on B's RNR NAKs (B has no receive;
 * its timer 31 is 491 ms), then FATAL @c injected by the host on A's QP
 * or, with @on_b, on B's; the SEND's status, or -1 with *bad set.
 */
static int send_waiting_then(struct link *l, bool on_b,
			     const struct code_case *c, const char **bad)
{
	struct ibv_wc wc;

	if (!link_new(l, 12, 31) ||
	    post_send(l->qp, IBV_WR_SEND, (uintptr_t)l->d->buf,
		      l->d->mr->lkey, 0, 0, 0)) {
		*bad = "no link";
		return -1;
	}
	usleep(300 * 1000);
	if (ibv_poll_cq(l->d->cq, 1, &wc) != 0) {
		*bad = "the SEND completed before the fault";
		return -1;
	}
	if (strcmp(host_do("%sinject fatal,qp=%u,code=0x%02x%s",
			   on_b ? "peer " : "", on_b ? l->bqpn : l->qp->qp_num,
			   c->code, c->extra), "ok")) {
		*bad = "the host did not inject";
		return -1;
	}
	return wait_wc(l->d, l->qp);
}

/* A FATAL case's line: what went wrong (or @good), and the SEND's status. */
static void code_verdict(const char *name, const char *bad,
			 const char *good, const char *who, long st, int want)
{
	char why[256];

	snprintf(why, sizeof(why), "%s; %s SEND: %s, wanted %s",
		 bad ? bad : good, who,
		 st < 0 ? "no completion" : ibv_wc_status_str(st),
		 ibv_wc_status_str(want));
	result(!bad, name, why);
}

/* ---- Faults on A as the requester: B is left as it was ------------- */


/* Requester codes on A (the table of ernic-fault-verbs.c, side A). */
static const struct code_case req_cases[] = {
	{ 0x0a, ",nak=0x61", IBV_WC_REM_INV_REQ_ERR },
	{ 0x0a, ",nak=0x62", IBV_WC_REM_ACCESS_ERR },
	{ 0x0a, ",nak=0x63", IBV_WC_REM_OP_ERR },
	{ 0x05, "", IBV_WC_LOC_QP_OP_ERR },
	{ 0x06, "", IBV_WC_RETRY_EXC_ERR },
	{ 0x09, "", IBV_WC_RNR_RETRY_EXC_ERR },
	{ 0x0d, "", IBV_WC_RNR_RETRY_EXC_ERR },
	{ 0x0c, "", IBV_WC_BAD_RESP_ERR },
	{ 0x19, "", IBV_WC_BAD_RESP_ERR },
	{ 0x1b, "", IBV_WC_BAD_RESP_ERR },
	{ 0x01, "", IBV_WC_WR_FLUSH_ERR },
};

/*
 * A's SEND waits on B's RNR NAKs (B has no receive; its timer 31 is
 * 491 ms); the code is injected on A. A: the status, Error, and the
 * async event only of 0x01, a responder's code (docs/driver.md).
 * B never hears of it (IBTA: nothing goes on the wire): still RTS.
 */
static void req_case(struct link *l, const struct code_case *c)
{
	char name[96];
	const char *bad = NULL;
	int st;

	snprintf(name, sizeof(name), "pair: FATAL 0x%02x%s on A, B waiting",
		 c->code, c->extra);
	st = send_waiting_then(l, false, c, &bad);
	if (!bad && st != (int)c->want)
		bad = "A's SEND status";
	if (!bad)
		bad = a_events(l, c->code == 0x01 ? resp_event(c->code) : 0);
	if (!bad && qp_state(l->qp) != IBV_QPS_ERR)
		bad = "A is not in Error";
	if (!bad && peer_do("state") != IBV_QPS_RTS)
		bad = "B is not RTS";
	if (!bad)
		bad = recover(l, c->code);
	code_verdict(name, bad, "A: its events, Error; B RTS; both reset, "
		     "a SEND each way", "A's", st, c->want);
}

/* ---- Faults on A as the responder: B's SEND gets A's NAK ----------- */

/* Responder codes on A; what B's SEND gets from A's NAK. */
static const struct code_case resp_cases[] = {
	{ 0x01, "", IBV_WC_REM_INV_REQ_ERR },
	{ 0x02, "", IBV_WC_REM_INV_REQ_ERR },
	{ 0x03, "", IBV_WC_REM_INV_REQ_ERR },
	{ 0x04, "", IBV_WC_REM_INV_REQ_ERR },
	{ 0x11, "", IBV_WC_REM_INV_REQ_ERR },
	{ 0x12, "", IBV_WC_REM_INV_REQ_ERR },
	{ 0x13, "", IBV_WC_REM_INV_REQ_ERR },
	{ 0x15, "", IBV_WC_REM_ACCESS_ERR },
	{ 0x16, "", IBV_WC_REM_ACCESS_ERR },
	{ 0x17, "", IBV_WC_REM_ACCESS_ERR },
};

/* What B shows after the NAK it got: the status, its state (event). */
static const char *peer_after_nak(int want, long *st)
{
	*st = peer_do("wc 20");
	if (*st != want)
		return "B's SEND status";
	if (peer_do("state") != IBV_QPS_ERR)
		return "B is not in Error";
	/* B is the requester: its CQE is the report (ernic and rxe). */
	return b_events(0);
}

/*
 * B's SEND waits on A's RNR NAKs (A's timer 31); the code is injected
 * on A, whose NAK reaches B over the wire. A: Error, and the responder's
 * IBV_EVENT_QP_REQ_ERR or _QP_ACCESS_ERR. B: the
 * status the NAK's syndrome means, Error.
 */
static void resp_case(struct link *l, const struct code_case *c)
{
	char name[96];
	const char *bad = NULL;
	long st = -1;

	snprintf(name, sizeof(name), "pair: FATAL 0x%02x on A, B's SEND "
		 "waiting", c->code);
	if (!link_new(l, 31, 12) || peer_do("send %u", c->code) != 0)
		bad = "no link";
	usleep(300 * 1000);
	if (!bad && strcmp(host_do("inject fatal,qp=%u,code=0x%02x",
				   l->qp->qp_num, c->code), "ok"))
		bad = "the host did not inject";
	if (!bad)
		bad = peer_after_nak(c->want, &st);
	if (!bad)
		bad = a_events(l, resp_event(c->code));
	if (!bad && qp_state(l->qp) != IBV_QPS_ERR)
		bad = "A is not in Error";
	if (!bad)
		bad = recover(l, c->code);
	code_verdict(name, bad, "A: its event, Error; B: no event, Error; "
		     "both reset", "B's", st, c->want);
}

/* ---- Error CQEs and NAKs on A's responses -------------------------- */


/*
 * An error CQE on A (not a PG332 reaction: docs/debugging.md): the SEND
 * was carried out, B has it; A's completion says WR_FLUSH_ERR; A stays
 * RTS and SENDs go on both ways.
 */
static void cqe_error_case(struct link *l)
{
	const char *bad = NULL;
	int st = -1;

	if (!link_new(l, 12, 12) ||
	    strcmp(host_do("inject cqe-error,qp=%u", l->qp->qp_num), "ok"))
		bad = "no link or no injection";
	if (!bad)
		st = send_to_b(l, 0x21, &bad);
	if (!bad && st != IBV_WC_WR_FLUSH_ERR)
		bad = "A's completion is not WR_FLUSH_ERR";
	if (!bad && qp_state(l->qp) != IBV_QPS_RTS)
		bad = "A left RTS";
	if (!bad && (!send_a_to_b(l, 0x22) || !send_b_to_a(l, 0x23)))
		bad = "no SEND each way after it";
	result(!bad, "pair: cqe-error on A", bad ? bad :
	       "B got the SEND whole, A's CQE says WR_FLUSH_ERR, A stays RTS, "
	       "a SEND each way");
}

/*
 * The ACK of A's SEND replaced by a NAK (as if B had sent it): B got
 * the SEND whole and stays RTS. Remote access and operational errors:
 * A's status and Error, no event. RNR and PSN sequence: A sends again, the
 * SEND completes, and B (which answers a duplicate with an ACK, IBTA
 * 9.9.2) has it once: its second receive stays posted.
 */
static void nak_case(struct link *l, const char *type, int want)
{
	char name[64];
	const char *bad = NULL;
	int st = -1;

	snprintf(name, sizeof(name), "pair: nak type=%s on A's ACK", type);
	if (!link_new(l, 12, 12) ||
	    strcmp(host_do("inject nak,qp=%u,type=%s", l->qp->qp_num, type),
		   "ok"))
		bad = "no link or no injection";
	if (!bad)
		st = send_to_b(l, 0x31, &bad);
	if (!bad && st != want)
		bad = "A's SEND status";
	if (!bad && want == IBV_WC_SUCCESS &&
	    (peer_do("recv") != 0 || peer_do("wc 2") != -1))
		bad = "B got the SEND twice";
	if (!bad)
		bad = a_events(l, 0);
	if (!bad && peer_do("state") != IBV_QPS_RTS)
		bad = "B is not RTS";
	if (!bad)
		bad = recover(l, 0x32);
	result(!bad, name, bad ? bad : st < 0 ? "no completion" :
	       ibv_wc_status_str(st));
}

/* ---- Wire faults on A's frames ------------------------------------ */

static int rdma_post(struct link *l, enum ibv_wr_opcode op, uint8_t *local,
		     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)local, RDMA_LEN, l->d->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(l->qp, &wr, &bad);
}

/* A READ or WRITE of RDMA_LEN bytes; its completion status. */
static int rdma(struct link *l, enum ibv_wr_opcode op, uint8_t *local,
		uint64_t raddr, uint32_t rkey)
{
	return rdma_post(l, op, local, raddr, rkey) ? -1 :
	       wait_wc(l->d, l->qp);
}

/* B's buffer: RDMA_LEN bytes of @pat, then RDMA_LEN of 0 (its address). */
static bool peer_fill(uint8_t pat, uint64_t *raddr, uint32_t *rkey)
{
	char buf[LINE_MAX];
	unsigned long long a;

	snprintf(buf, sizeof(buf), "fill %u", pat);
	if (!line_send(buf) || !line_recv(buf, sizeof(buf)) ||
	    sscanf(buf, "%llu %u", &a, rkey) != 2)
		return false;
	*raddr = a;
	return true;
}

/*
 * A rule on A's frames (both directions unless it says), then a READ of
 * 2 KiB from B (two responses at MTU 1024) and a WRITE of them back to
 * B's second half: both complete, B's bytes are A's and A's are B's.
 */
static void wire_case(struct link *l, const char *rule)
{
	char name[128];
	const char *bad = NULL;
	uint64_t raddr = 0;
	uint32_t rkey = 0;
	uint8_t *mine = l->d->buf;

	snprintf(name, sizeof(name), "pair: %s,qp=A: a READ and a WRITE of "
		 "2 KiB, bytes checked on both", rule);
	if (!link_new(l, 12, 12) || !peer_fill(0x5c, &raddr, &rkey))
		bad = "no link";
	memset(mine, 0, RDMA_LEN);
	if (!bad && strcmp(host_do("inject %s,qp=%u", rule, l->qp->qp_num),
			   "ok"))
		bad = "the host did not inject";
	if (!bad && rdma(l, IBV_WR_RDMA_READ, mine, raddr, rkey) != 0)
		bad = "the READ did not complete";
	if (!bad && !bytes_are(mine, RDMA_LEN, 0x5c))
		bad = "the READ's bytes";
	if (!bad && rdma(l, IBV_WR_RDMA_WRITE, mine, raddr + RDMA_LEN,
			 rkey) != 0)
		bad = "the WRITE did not complete";
	if (!bad && peer_do("check %u", 0x5c) != 1)
		bad = "the WRITE's bytes on B";
	/* What the rule did not hit must not meet the next case. */
	if (strcmp(host_do("inject clear"), "ok"))
		bad = bad ? bad : "clear";
	result(!bad, name, bad);
}

/* ---- The link goes, the peer goes --------------------------------- */

static bool port_events(struct dev *d, enum ibv_event_type type, int state)
{
	return wait_events(d, type, NULL) && port_state(d) == state;
}

/*
 * A's link off while B's SEND waits on A's RNR NAKs (A's timer 31): A's
 * port goes DOWN; B's retries (6, at 67 ms) are spent on a dead wire:
 * RETRY_EXC_ERR, B in Error. A's QP, which had nothing to send, is RTS.
 * Link on: A's port ACTIVE again; both reset; a SEND each way.
 */
static void link_a_case(struct link *l)
{
	const char *bad = NULL;
	char why[192];
	long st = -1;

	if (!link_new(l, 31, 12) || peer_do("send %u", 0x41) != 0)
		bad = "no link";
	if (!bad && strcmp(host_do("link off"), "ok"))
		bad = "the host did not take the link down";
	if (!bad && !port_events(l->d, IBV_EVENT_PORT_ERR, IBV_PORT_DOWN))
		bad = "A: no PORT_ERR or not DOWN";
	sleep(3);
	if (strcmp(host_do("link on"), "ok") && !bad)
		bad = "the host did not bring the link up";
	if (!bad && !port_events(l->d, IBV_EVENT_PORT_ACTIVE, IBV_PORT_ACTIVE))
		bad = "A: no PORT_ACTIVE or not ACTIVE";
	st = bad ? -1 : peer_do("wc 20");
	if (!bad && st != IBV_WC_RETRY_EXC_ERR)
		bad = "B's SEND status";
	if (!bad && peer_do("state") != IBV_QPS_ERR)
		bad = "B is not in Error";
	if (!bad && qp_state(l->qp) != IBV_QPS_RTS)
		bad = "A is not RTS";
	if (!bad)
		bad = recover(l, 0x42);
	snprintf(why, sizeof(why), "%s%sB's SEND: %s", bad ? bad : "A: "
		 "PORT_ERR, DOWN, PORT_ACTIVE, ACTIVE; B: Error; both reset, a "
		 "SEND each way", "; ", st < 0 ? "no completion" :
		 ibv_wc_status_str(st));
	result(!bad, "pair: A's link off and on while B sends", why);
}

/*
 * B's link off (set_link on B's NIC, ernic or virtio-net) while A's SEND
 * waits on B's RNR NAKs: A's retries are spent, RETRY_EXC_ERR, no event,
 * Error. B saw its port go down and up, its QP untouched (RTS).
 */
static void link_b_case(struct link *l)
{
	const char *bad = NULL;
	int st = -1;

	if (!link_new(l, 12, 31) ||
	    post_send(l->qp, IBV_WR_SEND, (uintptr_t)l->d->buf,
		      l->d->mr->lkey, 0, 0, 0))
		bad = "no link";
	usleep(300 * 1000);
	if (!bad && strcmp(host_do("peer link off"), "ok"))
		bad = "the host did not take B's link down";
	st = bad ? -1 : wait_wc(l->d, l->qp);
	if (strcmp(host_do("peer link on"), "ok") && !bad)
		bad = "the host did not bring B's link up";
	if (!bad && st != IBV_WC_RETRY_EXC_ERR)
		bad = "A's SEND status";
	if (!bad)
		bad = a_events(l, 0);
	if (!bad && (peer_do("event port_err 10") != 1 ||
		     peer_do("event port_active 10") != 1 ||
		     peer_do("port") != IBV_PORT_ACTIVE))
		bad = "B: no PORT_ERR, PORT_ACTIVE, or not ACTIVE";
	if (!bad && peer_do("state") != IBV_QPS_RTS)
		bad = "B is not RTS";
	if (!bad)
		bad = recover(l, 0x43);
	result(!bad, "pair: B's link off and on while A sends",
	       bad ? bad : "A: RETRY_EXC_ERR, no event, Error; B: PORT_ERR, "
	       "PORT_ACTIVE, RTS; both reset, a SEND each way");
}

/*
 * A link that blinks (a cable pulled and put back) on A's side (@peer
 * false) or B's, while A's READ of 2 KiB from B and its WRITE back are
 * on their way: A's QP times out (its timer 18: 1.07 s) with the link
 * back up, sends again, and both complete whole; nothing goes FATAL.
 */
static void blink_case(struct link *l, bool peer)
{
	const char *who = peer ? "peer " : "", *bad = NULL;
	uint64_t raddr = 0;
	uint32_t rkey = 0;
	char name[96];

	snprintf(name, sizeof(name), "pair: %s's link blinks (500 ms) under "
		 "a READ and a WRITE", peer ? "B" : "A");
	qp_timeout = 18;
	if (!link_new(l, 12, 12) || !peer_fill(0x6d, &raddr, &rkey))
		bad = "no link";
	qp_timeout = 14;
	memset(l->d->buf, 0, RDMA_LEN);
	memset(l->d->buf + RDMA_LEN, 0x6e, RDMA_LEN);
	if (!bad && strcmp(host_do("%slink off", who), "ok"))
		bad = "the host did not take the link down";
	if (!bad && (rdma_post(l, IBV_WR_RDMA_READ, l->d->buf, raddr, rkey) ||
		     rdma_post(l, IBV_WR_RDMA_WRITE, l->d->buf + RDMA_LEN,
			       raddr + RDMA_LEN, rkey)))
		bad = "not posted";
	usleep(500 * 1000);
	if (strcmp(host_do("%slink on", who), "ok") && !bad)
		bad = "the host did not bring the link up";
	if (!bad && (wait_wc(l->d, l->qp) != 0 || wait_wc(l->d, l->qp) != 0))
		bad = "the READ or the WRITE did not complete";
	if (!bad && !bytes_are(l->d->buf, RDMA_LEN, 0x6d))
		bad = "the READ's bytes";
	if (!bad && peer_do("check %u", 0x6e) != 1)
		bad = "the WRITE's bytes on B";
	if (!bad && qp_state(l->qp) != IBV_QPS_RTS)
		bad = "A left RTS";
	if (!bad && (!send_a_to_b(l, 0x6e) || !send_b_to_a(l, 0x6f)))
		bad = "no SEND each way after it";
	result(!bad, name, bad ? bad : "both complete, whole on both, A "
	       "RTS, a SEND each way");
}

/* B's QP destroyed (its process gone): A's SEND finds no one. */
static void peer_gone_case(struct link *l)
{
	const char *bad = NULL;
	int st = -1;

	if (!link_new(l, 12, 12) || peer_do("destroy") != 0)
		bad = "no link";
	if (!bad && post_send(l->qp, IBV_WR_SEND, (uintptr_t)l->d->buf,
			      l->d->mr->lkey, 0, 0, 0))
		bad = "no SEND posted";
	st = bad ? -1 : wait_wc(l->d, l->qp);
	if (!bad && st != IBV_WC_RETRY_EXC_ERR)
		bad = "A's SEND status";
	if (!bad)
		bad = a_events(l, 0);
	if (!bad && qp_state(l->qp) != IBV_QPS_ERR)
		bad = "A is not in Error";
	result(!bad, "pair: B's QP destroyed, A's SEND finds no one",
	       bad ? bad : "RETRY_EXC_ERR, no event, Error");
}

/* ---- Faults on B's ernic (the host's other QMP socket) ------------- */

/*
 * A's SEND waits on B's RNR NAKs; the code is injected on B (the
 * responder): B NAKs, A gets the status, both go FATAL; both recover.
 */
static void peer_fatal_case(struct link *l, const struct code_case *c)
{
	char name[96];
	const char *bad = NULL;
	int st;

	snprintf(name, sizeof(name), "pair: FATAL 0x%02x on B, A's SEND "
		 "waiting", c->code);
	st = send_waiting_then(l, true, c, &bad);
	if (!bad && st != (int)c->want)
		bad = "A's SEND status";
	if (!bad)
		bad = a_events(l, 0);
	if (!bad)
		bad = b_events(resp_event(c->code));
	if (!bad && peer_do("state") != IBV_QPS_ERR)
		bad = "B is not in Error";
	if (!bad)
		bad = recover(l, c->code);
	code_verdict(name, bad, "A: no event, Error; B: its event, Error; "
		     "both reset", "A's", st, c->want);
}

static const struct code_case peer_cases[] = {
	{ 0x01, "", IBV_WC_REM_INV_REQ_ERR },
	{ 0x15, "", IBV_WC_REM_ACCESS_ERR },
	{ 0x10, "", IBV_WC_RETRY_EXC_ERR },
};

static const char *const wire_rules[] = {
	"drop,dir=rx,count=1",
	"drop,dir=tx,count=2",
	"dup,count=3",
	"reorder,dir=rx,count=1",
	"corrupt,count=2",
	"corrupt,dir=tx,field=psn,count=1",
	"delay,count=2,delay-us=20000",
};

#define N(a)	(sizeof(a) / sizeof((a)[0]))

static int drive(struct dev *d, const char *ip)
{
	struct link l = { .d = d };
	size_t i;

	if (open_ack() || !side_connect(ip) || !hello(&l)) {
		say("FAIL fault: pair: no host channel or no peer at %s", ip);
		return 1;
	}
	wc_timeout_s = 20;
	for (i = 0; i < N(req_cases); i++)
		req_case(&l, &req_cases[i]);
	for (i = 0; i < N(resp_cases); i++)
		resp_case(&l, &resp_cases[i]);
	cqe_error_case(&l);
	nak_case(&l, "remote-access", IBV_WC_REM_ACCESS_ERR);
	nak_case(&l, "remote-op", IBV_WC_REM_OP_ERR);
	nak_case(&l, "rnr", IBV_WC_SUCCESS);
	nak_case(&l, "psn-seq", IBV_WC_SUCCESS);
	for (i = 0; i < N(wire_rules); i++)
		wire_case(&l, wire_rules[i]);
	link_a_case(&l);
	link_b_case(&l);
	blink_case(&l, false);
	blink_case(&l, true);
	peer_gone_case(&l);
	for (i = 0; l.peer_ernic && i < N(peer_cases); i++)
		peer_fatal_case(&l, &peer_cases[i]);
	if (l.qp)
		ibv_destroy_qp(l.qp);
	peer_do("bye");
	say("fault: %d failed", failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct peer b = { 0 };

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX [PEER_IP]\n",
			argv[0]);
		return 2;
	}
	if (dev_open(&b.d, argv[1], atoi(argv[2]))) {
		perror("ernic-fault-pair: device");
		return 2;
	}
	/*
	 * Linux rxe takes a transport retry count of 7 as "for ever"
	 * (rxe_comp.c counts down only below 7), where IBTA gives that
	 * meaning to an RNR retry count of 7 only and ernic retries 7
	 * times: 6 means the same on both.
	 */
	qp_retry_cnt = 6;
	/* B's waits are its own: every one has a deadline. */
	alarm(1800);
	return argc == 4 ? drive(&b.d, argv[3]) : serve(&b);
}
