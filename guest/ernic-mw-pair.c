// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ernic-mw-pair: memory windows between two machines, each ernic or Linux
 * rxe (docs/driver.md, "Memory windows"). The server binds a type 2
 * window over the second half of its buffer and tells the client its
 * address and R_Key over TCP; the client READs through the window, then
 * WRITEs through it, and the server checks the bytes; the server
 * invalidates the window (LOCAL_INV) and the client's next READ through
 * it must end with a remote access error.
 *
 * usage: ernic-mw-pair DEVICE GID_INDEX PORT            (server)
 *        ernic-mw-pair DEVICE GID_INDEX PORT SERVER_IP  (client)
 * The client prints "mw-pair: ok" and exits 0 when every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "ernic-verbs.h"

#define WIN_OFF		2048		/* the window: the buffer's 2nd half */
#define WIN_LEN		2048
#define XFER		1024
#define PAT_SERVER	0x3d
#define PAT_CLIENT	0xc4

/* What each side tells the other, then the server's window. */
struct hello {
	uint32_t qpn;
	union ibv_gid gid;
	uint64_t addr;			/* the window's first byte */
	uint32_t rkey;			/* the window's R_Key */
};

static int fail(const char *what)
{
	printf("mw-pair: FAIL %s\n", what);
	return 1;
}

/* The TCP connection: the server's accepted one or the client's. */
static int side_open(const char *ip, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_STREAM, 0), c, one = 1, i;

	if (s < 0)
		return -1;
	if (ip) {
		inet_pton(AF_INET, ip, &a.sin_addr);
		for (i = 0; i < 100; i++, usleep(100000))
			if (!connect(s, (struct sockaddr *)&a, sizeof(a)))
				return s;
		return -1;
	}
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 1))
		return -1;
	c = accept(s, NULL, NULL);
	close(s);
	return c;
}

static int xfer(int s, void *p, size_t n, int out)
{
	ssize_t k = out ? write(s, p, n) : read(s, p, n);

	return k == (ssize_t)n ? 0 : -1;
}

/* A type 2 window over the buffer's second half, bound on @qp. */
static struct ibv_mw *window(struct dev *d, struct ibv_qp *qp,
			     uint32_t *rkey)
{
	struct ibv_mw *mw = ibv_alloc_mw(d->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (!mw)
		return NULL;
	*rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = *rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = d->mr, .addr = (uintptr_t)d->buf + WIN_OFF,
		.length = WIN_LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE,
	};
	if (ibv_post_send(qp, &wr, &bad) || wait_wc(d, qp) != IBV_WC_SUCCESS) {
		ibv_dealloc_mw(mw);
		return NULL;
	}
	return mw;
}

static int invalidate(struct dev *d, struct ibv_qp *qp, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 8, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	}, *bad;

	return ibv_post_send(qp, &wr, &bad) ? -1 : wait_wc(d, qp);
}

/* An RDMA READ or WRITE of XFER bytes at d->buf; its status. */
static int rdma(struct dev *d, struct ibv_qp *qp, enum ibv_wr_opcode op,
		uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)d->buf, XFER, d->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad) ? -1 : wait_wc(d, qp);
}

static int all(const uint8_t *p, size_t n, uint8_t v)
{
	while (n--)
		if (*p++ != v)
			return 0;
	return 1;
}

static int server(struct dev *d, struct ibv_qp *qp, int s)
{
	struct hello h = { 0 };
	struct ibv_mw *mw;
	char c;

	memset(d->buf, 0, BUF_SIZE);
	memset(d->buf + WIN_OFF, PAT_SERVER, XFER);
	mw = window(d, qp, &h.rkey);
	if (!mw)
		return fail("server: no window bound");
	h.addr = (uintptr_t)d->buf + WIN_OFF;
	if (xfer(s, &h, sizeof(h), 1) || xfer(s, &c, 1, 0))
		return fail("server: side channel");
	c = all(d->buf + WIN_OFF + XFER, XFER, PAT_CLIENT) &&
	    all(d->buf + WIN_OFF, XFER, PAT_SERVER) &&
	    all(d->buf, WIN_OFF, 0) &&
	    invalidate(d, qp, h.rkey) == IBV_WC_SUCCESS;
	if (xfer(s, &c, 1, 1) || xfer(s, &c, 1, 0))
		return fail("server: side channel");
	ibv_dealloc_mw(mw);
	return 0;
}

static int client(struct dev *d, struct ibv_qp *qp, int s,
		  const struct hello *h)
{
	char c = 1;

	memset(d->buf, 0, BUF_SIZE);
	if (rdma(d, qp, IBV_WR_RDMA_READ, h->addr, h->rkey) !=
	    IBV_WC_SUCCESS || !all(d->buf, XFER, PAT_SERVER))
		return fail("a READ through the window");
	memset(d->buf, PAT_CLIENT, XFER);
	if (rdma(d, qp, IBV_WR_RDMA_WRITE, h->addr + XFER, h->rkey) !=
	    IBV_WC_SUCCESS)
		return fail("a WRITE through the window");
	if (xfer(s, &c, 1, 1) || xfer(s, &c, 1, 0) || !c)
		return fail("the server's bytes, or its LOCAL_INV");
	if (rdma(d, qp, IBV_WR_RDMA_READ, h->addr, h->rkey) !=
	    IBV_WC_REM_ACCESS_ERR)
		return fail("a READ through the invalidated window");
	xfer(s, &c, 1, 1);
	printf("mw-pair: ok: READ and WRITE through a type 2 window, "
	       "then refused once invalidated\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct dev d = { 0 };
	struct hello mine = { 0 }, peer = { 0 };
	struct ibv_qp *qp;
	int s;

	if (argc < 4) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX PORT [SERVER_IP]\n",
			argv[0]);
		return 2;
	}
	if (dev_open(&d, argv[1], atoi(argv[2])) || !(qp = qp_new(&d)))
		return fail("device, PD, CQ, MR and QP");
	s = side_open(argc > 4 ? argv[4] : NULL, atoi(argv[3]));
	mine.qpn = qp->qp_num;
	mine.gid = d.gid;
	if (s < 0 || xfer(s, &mine, sizeof(mine), 1) ||
	    xfer(s, &peer, sizeof(peer), 0))
		return fail("side channel");
	d.dgid = peer.gid;
	if (qp_connect(&d, qp, peer.qpn))
		return fail("connect");
	if (argc < 5)
		return server(&d, qp, s);
	if (xfer(s, &peer, sizeof(peer), 0))
		return fail("side channel");
	return client(&d, qp, s, &peer);
}
