/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ernic-fault.h: what the fault programs share (ernic-fault-verbs.c, one
 * guest; ernic-fault-pair.c, two): the transcript lines, the requests to
 * the host (a console line "guest: fault: ...", carried out by
 * scripts/qmp-fault.py and answered on ttyS1), and the waits on async
 * events and QP and port states. Not a library.
 */
#ifndef ERNIC_FAULT_H
#define ERNIC_FAULT_H

#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <termios.h>

#include "ernic-verbs.h"

static void say(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("guest: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

/* ttyS1: the host's answers, one line each ("ok", "saved", "loaded"). */
static int ack_fd = -1;
static char ack_line[64];
static size_t ack_len;

/* A whole answer line has arrived (non-blocking); it is in ack_line. */
static bool host_answered(void)
{
	char c;

	while (read(ack_fd, &c, 1) == 1) {
		if (c == '\n') {
			ack_line[ack_len] = 0;
			ack_len = 0;
			return true;
		}
		if (c != '\r' && ack_len < sizeof(ack_line) - 1)
			ack_line[ack_len++] = c;
	}
	return false;
}

/* Ask the host (a console line) and wait for its answer, up to 120 s. */
static const char *host_do(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static const char *host_do(const char *fmt, ...)
{
	struct pollfd p = { .fd = ack_fd, .events = POLLIN };
	char req[160];
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(req, sizeof(req), fmt, ap);
	va_end(ap);
	say("fault: %s", req);
	for (i = 0; i < 1200; i++) {
		if (host_answered())
			return ack_line;
		poll(&p, 1, 100);
	}
	return "no answer";
}

static int open_ack(void)
{
	struct termios t;

	ack_fd = open("/dev/ttyS1", O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (ack_fd < 0 || tcgetattr(ack_fd, &t))
		return -1;
	cfmakeraw(&t);
	return tcsetattr(ack_fd, TCSANOW, &t);
}

static void result(bool ok, const char *name, const char *why)
{
	say("%s fault: %s%s%s", ok ? "ok" : "FAIL", name, why ? ": " : "",
	    why ? why : "");
	if (!ok)
		failures++;
}

/*
 * Async events of @type, within 10 s: for each QP of @qps (NULL ends it,
 * at most 2), or for the port when @qps is NULL. Others are taken and
 * dropped (events of earlier cases).
 */
static bool wait_events(struct dev *d, enum ibv_event_type type,
			struct ibv_qp **qps)
{
	struct pollfd p = { .fd = d->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool seen[2] = { !qps || !qps[0], !qps || !qps[0] || !qps[1] };
	bool port = false;
	int i, k;

	for (i = 0; i < 20 && !(qps ? seen[0] && seen[1] : port); i++) {
		if (poll(&p, 1, 500) <= 0)
			continue;
		if (ibv_get_async_event(d->ctx, &ev))
			return false;
		for (k = 0; qps && k < 2 && qps[k]; k++)
			seen[k] |= ev.event_type == type &&
				   ev.element.qp == qps[k];
		port |= !qps && ev.event_type == type;
		ibv_ack_async_event(&ev);
	}
	return qps ? seen[0] && seen[1] : port;
}

#define EV(t)		(1u << (t))
#define EV_NONE		0u

static bool qp_event_type(enum ibv_event_type t)
{
	return t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR ||
	       t == IBV_EVENT_QP_ACCESS_ERR || t == IBV_EVENT_COMM_EST ||
	       t == IBV_EVENT_SQ_DRAINED || t == IBV_EVENT_QP_LAST_WQE_REACHED;
}

/*
 * The QP-affiliated async events of QPs @a and @b (NULL: none) into
 * @sa, @sb (a bit EV(type) each): taken until those of @wa and @wb have
 * come (3 s at most), then 300 ms more, so that an event beyond them is
 * seen too. Other events are dropped.
 */
static void pair_events(struct dev *d, struct ibv_qp *a, unsigned int wa,
			struct ibv_qp *b, unsigned int wb, unsigned int *sa,
			unsigned int *sb)
{
	struct pollfd p = { .fd = d->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct timespec t0, t;
	long ms, end = 3000;

	*sa = *sb = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 +
		     (t.tv_nsec - t0.tv_nsec) / 1000000;
		if ((*sa & wa) == wa && (*sb & wb) == wb && end == 3000)
			end = ms + 300;
		if (ms >= end)
			return;
		if (poll(&p, 1, end - ms) <= 0 ||
		    ibv_get_async_event(d->ctx, &ev))
			continue;
		if (qp_event_type(ev.event_type) && a && ev.element.qp == a)
			*sa |= EV(ev.event_type);
		if (qp_event_type(ev.event_type) && b && ev.element.qp == b)
			*sb |= EV(ev.event_type);
		ibv_ack_async_event(&ev);
	}
}

/* The events of one QP, as pair_events(). */
static unsigned int qp_events(struct dev *d, struct ibv_qp *qp,
			      unsigned int want)
{
	unsigned int seen, none;

	pair_events(d, qp, want, NULL, 0, &seen, &none);
	return seen;
}

/* "IBV_EVENT_QP_REQ_ERR" or "none": the events of a mask, for a message. */
static const char *events_str(unsigned int m)
{
	static char buf[128];
	int t;

	buf[0] = 0;
	for (t = 0; t < 32; t++)
		if (m & EV(t))
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
				 "%s%s", buf[0] ? "+" : "",
				 ibv_event_type_str(t));
	return buf[0] ? buf : "no event";
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return (int)a.qp_state;
}

/* Reset, INIT, RTR, RTS: the QP is reused (IBTA 10.3.1, docs/driver.md). */
static int qp_recycle(struct dev *d, struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE) ||
	    ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	return qp_connect(d, qp, dqpn);
}

static int port_state(struct dev *d)
{
	struct ibv_port_attr a;

	return ibv_query_port(d->ctx, 1, &a) ? -1 : (int)a.state;
}

#endif /* ERNIC_FAULT_H */
