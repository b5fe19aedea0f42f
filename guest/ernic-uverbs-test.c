// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ernic-uverbs-test: can a user process make ernic touch memory that is
 * not its own? Run as root in a guest; it forks a victim and an attacker,
 * both as an unprivileged user (uid 65534), each with its own device
 * context and PD, on one RDMA device in loopback (docs/driver.md, "User
 * space", has the model this checks).
 *
 * The victim registers a buffer full of a secret pattern and tells the
 * attacker everything about it: address, L_Key, R_Key, and the handle of
 * one of its QPs. The attacker then tries, each on a fresh pair of its
 * own connected RC QPs:
 *   - a WQE naming bus memory (L_Key 0), on send and on receive;
 *   - inline data from a kernel address;
 *   - a SEND gathering the victim's buffer through the victim's L_Key;
 *   - an RDMA READ and an RDMA WRITE of the victim's buffer through the
 *     victim's R_Key;
 *   - a post to the victim's QP (a foreign doorbell);
 *   - with direct QPs (docs/driver.md, "Direct QPs"), WQEs written
 *     straight into its own mapped SQ, past the provider's checks, and
 *     rung through its own doorbell page: naming bus memory (L_Key 0) or
 *     the victim's buffer through the victim's L_Key;
 *   - ibv_rereg_mr of its own MR: onto other memory (the keys must then
 *     reach the new memory only), onto kernel memory (refused, the MR as
 *     it was), to local access only (remote writes refused);
 *   - with a shared receive queue (ERNIC-X SRQ, which is always direct):
 *     receive WQEs written straight into its mapped ring naming bus
 *     memory or the victim's buffer; a QP of another PD on it; a QP on
 *     the victim's SRQ handle;
 *   - with a UD QP (ERNIC-X UD): a WQE written straight into its mapped
 *     SQ naming the victim's AH by its entry of the device's table;
 *   - with XRC (ERNIC-X XRC): an XRC SEND from its own initiator, through
 *     its own target QP of its own domain, naming the victim's XRC SRQ
 *     (another domain) by its number;
 *   - a mapping of the device: mmap() of the uverbs file at an offset
 *     that is not one of its own QPs', a read-only ring made writable,
 *     the BAR's sysfs resource file.
 * Each must be refused at the post or end in an error completion, with no
 * secret byte reaching the attacker and no byte of the victim's changed. A
 * SEND of the attacker's own buffer must work (the control), or the
 * refusals prove nothing.
 *
 * Prints "ok - NAME" or "not ok - NAME" per check and exits 0 when all
 * pass; the direct-QP checks say "# SKIP" on the command path
 * (ERNIC_DIRECT=0, or a device without ERNIC-X user QPs).
 * usage: ernic-uverbs-test DEVICE GID_INDEX [PCI_BDF]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <hw/rdma/ernic_regs.h>
#include <hw/rdma/ernic_ext_regs.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "ernic-verbs.h"

#define SECRET		0xa5

/*
 * The ernic provider's AH (rdma-core/providers/ernic/ernic.h): the
 * victim reads its own AH's table entry from it, to tell the attacker,
 * as any process could learn an index by trying them all.
 */
struct ernic_ah_view {
	struct ibv_ah ah;
	int32_t idx;
};
#define NOBODY		65534

struct victim_info {
	uint64_t addr;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t qp_handle;
	uint32_t srq_handle;
	int32_t ah_idx;		/* its AH's entry of the device's table */
	uint32_t xrc_srqn;	/* its XRC SRQ's number, or UINT32_MAX */
};

static void drop_privileges(void)
{
	if (setgid(NOBODY) || setuid(NOBODY)) {
		perror("setuid");
		exit(2);
	}
}

static int holds_secret(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] == SECRET)
			return 1;
	return 0;
}

/* The control: a SEND of the attacker's own buffer arrives. */
static void check_control(struct dev *d)
{
	struct pair p = { 0 };
	int ok;

	memset(d->buf, 0x11, 64);
	memset(d->buf + 2048, 0, 64);
	ok = !pair_new(d, &p) &&
	     !post_recv(p.b, d->buf + 2048, d->mr->lkey) &&
	     !post_send(p.a, IBV_WR_SEND, (uintptr_t)d->buf, d->mr->lkey,
			0, 0, 0) &&
	     wait_wc(d, p.a) == IBV_WC_SUCCESS &&
	     wait_wc(d, p.b) == IBV_WC_SUCCESS && d->buf[2048 + 63] == 0x11;
	report(ok, "control: a SEND of the process's own MR arrives", NULL);
	pair_free(&p);
}

/* An RDMA WRITE of d->buf's first 64 bytes to @raddr, @rkey; its status. */
static int write_through(struct dev *d, uint64_t raddr, uint32_t rkey)
{
	struct pair p = { 0 };
	int st = -2;

	if (!pair_new(d, &p) &&
	    !post_send(p.a, IBV_WR_RDMA_WRITE, (uintptr_t)d->buf, d->mr->lkey,
		       raddr, rkey, 0))
		st = wait_wc(d, p.a);
	pair_free(&p);
	return st;
}

/*
 * ibv_rereg_mr (docs/driver.md, "MR re-registration"): the keys stay and
 * reach what the MR covers now, with the access it has now; a rereg the
 * kernel refuses leaves the MR as it was.
 */
static void check_rereg(struct dev *d)
{
	uint8_t *a = aligned_alloc(BUF_SIZE, 2 * BUF_SIZE), *b;
	struct ibv_mr *mr = NULL;
	uint32_t lkey, rkey;
	int r, old, now;

	if (a)
		mr = ibv_reg_mr(d->pd, a, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		report(0, "ibv_rereg_mr", "no MR");
		free(a);
		return;
	}
	b = a + BUF_SIZE;
	memset(a, 0, 2 * BUF_SIZE);
	memset(d->buf, 0x3c, 64);
	lkey = mr->lkey;
	rkey = mr->rkey;
	r = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b,
			 BUF_SIZE, 0);
	old = write_through(d, (uintptr_t)a, rkey);
	now = write_through(d, (uintptr_t)b, rkey);
	report(!r && mr->lkey == lkey && mr->rkey == rkey &&
	       old == IBV_WC_REM_ACCESS_ERR && now == IBV_WC_SUCCESS &&
	       !a[0] && !a[63] && b[0] == 0x3c && b[63] == 0x3c,
	       "ibv_rereg_mr onto other memory: the keys stay and reach the new memory only",
	       NULL);
	memset(b, 0, 64);
	r = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			 (void *)0xffff888000000000ull, BUF_SIZE, 0);
	now = write_through(d, (uintptr_t)b, rkey);
	report(r && now == IBV_WC_SUCCESS && b[63] == 0x3c,
	       "ibv_rereg_mr onto kernel memory is refused, the MR left as it was",
	       NULL);
	memset(b, 0, 64);
	r = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			 IBV_ACCESS_LOCAL_WRITE);
	now = write_through(d, (uintptr_t)b, rkey);
	report(!r && now == IBV_WC_REM_ACCESS_ERR && !b[0] && !b[63],
	       "ibv_rereg_mr to local access: a remote write is refused",
	       NULL);
	ibv_dereg_mr(mr);
	free(a);
}

static void check_lkey0(struct dev *d)
{
	struct pair p = { 0 };
	int rs, rr;

	if (pair_new(d, &p)) {
		report(0, "L_Key 0", "no QP pair");
		return;
	}
	rs = post_send(p.a, IBV_WR_SEND, 0x100000, 0, 0, 0, 0);
	rr = post_recv(p.b, (void *)0x100000, 0);
	report(rs == EINVAL && rr == EINVAL,
	       "a WQE naming bus memory (L_Key 0) is refused at the post, send and receive",
	       NULL);
	pair_free(&p);
}

/*
 * Inline data is read with the process's own rights: by the kernel
 * (EFAULT), or on a direct QP by the provider itself, which faults
 * (SIGSEGV). Run in a child, which a fault ends.
 */
static void check_inline_kernel(struct dev *d)
{
	struct pair p = { 0 };
	int r, st;
	pid_t pid;

	if (pair_new(d, &p)) {
		report(0, "inline", "no QP pair");
		return;
	}
	pid = fork();
	if (pid == 0) {
		r = post_send(p.a, IBV_WR_SEND, 0xffffffff81000000ull, 0, 0,
			      0, IBV_SEND_INLINE);
		_exit(r == EFAULT ? 0 : 1);
	}
	st = -1;
	if (pid > 0)
		waitpid(pid, &st, 0);
	report((WIFEXITED(st) && WEXITSTATUS(st) == 0) ||
	       (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV),
	       "inline data from a kernel address is refused (EFAULT, or SIGSEGV in the provider)",
	       NULL);
	pair_free(&p);
}

/* The process's mappings of the uverbs file, by offset. */
struct umap {
	uint8_t *start;
	size_t len;
	unsigned long off;
	char perm[5];
};

static int umap_cmp(const void *a, const void *b)
{
	const struct umap *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int umaps(struct umap *m, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], path[256];
	unsigned long s, e, o;
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %4s %lx %*s %*s %255s", &s, &e,
			   m[n].perm, &o, path) < 4 ||
		    !strstr(path, "/dev/infiniband/uverbs"))
			continue;
		m[n].start = (uint8_t *)s;
		m[n].len = e - s;
		m[n].off = o;
		n++;
	}
	fclose(f);
	qsort(m, n, sizeof(*m), umap_cmp);
	return n;
}

/*
 * The first QP of a fresh pair (the lowest mmap offsets: each region of
 * rdma/ernic-abi.h in turn, SQ first, doorbell page last), when the
 * provider made it a direct QP.
 */
static int direct_regions(struct umap *r)
{
	struct umap m[32];
	int n = umaps(m, 32);

	if (n < 6)
		return -1;
	memcpy(r, m, 6 * sizeof(*r));
	return strcmp(r[0].perm, "rw-s") || strcmp(r[2].perm, "r--s") ||
	       r[5].len != 4096 ? -1 : 0;
}

/*
 * Ring slot 0 of the SQ of direct_regions() @r through its doorbell
 * page, and its ERNIC-X doorbell record, which the device reads instead
 * of the value written when the QP has one (rdma/ernic-abi.h,
 * ERNIC_QP_DBREC): the SQ region's last 4 bytes, or with an RQ word
 * (ERNIC_QP_RQREC) the 4 before them. Both get index 1: past the WQEs
 * either is the record or padding, and the RQ's grants this QP's own
 * receive slots only.
 */
static void forge_ring(struct umap *r)
{
	__sync_synchronize();
	*(volatile uint32_t *)(r[0].start + r[0].len - 8) = 1;
	*(volatile uint32_t *)(r[0].start + r[0].len - 4) = 1;
	__sync_synchronize();
	*(volatile uint32_t *)(r[5].start + ERNIC_UDB_SQPI) = 1;
}

/*
 * A SEND WQE written straight into the attacker's own SQ, slot 0, naming
 * @addr through @lkey, rung through its own doorbell page: the provider's
 * checks never see it, the device's must end it.
 */
static void check_forged(struct dev *d, uint64_t addr, uint32_t lkey,
			 const char *name)
{
	struct pair p = { 0 };
	struct umap r[6];
	uint8_t *w;
	int st;

	memset(d->buf + 2048, 0, 64);
	if (pair_new(d, &p) || post_recv(p.b, d->buf + 2048, d->mr->lkey)) {
		report(0, name, "no QP pair");
		pair_free(&p);
		return;
	}
	if (direct_regions(r)) {
		printf("ok - %s # SKIP no direct QP\n", name);
		pair_free(&p);
		return;
	}
	w = r[0].start;
	memset(w, 0, ERNIC_XWQE_SIZE);
	w[ERNIC_WQE_OPCODE] = ERNIC_OP_SEND;
	w[ERNIC_XWQE_NSGE] = 1;
	memcpy(w + ERNIC_WQE_LENGTH, &(uint32_t){ 64 }, 4);
	memcpy(w + ERNIC_XWQE_SGE + ERNIC_SGE_ADDR, &addr, 8);
	memcpy(w + ERNIC_XWQE_SGE + ERNIC_SGE_LEN, &(uint32_t){ 64 }, 4);
	memcpy(w + ERNIC_XWQE_SGE + ERNIC_SGE_LKEY, &lkey, 4);
	forge_ring(r);
	st = wait_wc(d, p.a);
	report(st != IBV_WC_SUCCESS && st != -1 &&
	       !holds_secret(d->buf + 2048, 64), name, NULL);
	pair_free(&p);
}

/*
 * Of a direct QP's regions: a read-only one (the CQ ring) cannot be
 * mapped writable or made so, and an offset past the process's own
 * maps nothing.
 */
static void check_direct_mmap(struct dev *d)
{
	const char *name = "a direct QP's read-only ring stays read-only; no offset but its own maps";
	struct pair p = { 0 };
	struct umap r[6];
	void *m, *x;
	int ok;

	if (pair_new(d, &p) || direct_regions(r)) {
		printf("ok - %s # SKIP no direct QP\n", name);
		pair_free(&p);
		return;
	}
	m = mmap(NULL, r[2].len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 d->ctx->cmd_fd, r[2].off);
	x = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		 d->ctx->cmd_fd, r[5].off + (1ul << 30));
	ok = m == MAP_FAILED && x == MAP_FAILED &&
	     mprotect(r[2].start, r[2].len, PROT_READ | PROT_WRITE) != 0;
	report(ok, name, NULL);
	if (m != MAP_FAILED)
		munmap(m, r[2].len);
	if (x != MAP_FAILED)
		munmap(x, 4096);
	pair_free(&p);
}

/* An RC QP of ibv_create_qp_ex() with ibv_wr_send(), in RTS (loopback). */
static struct ibv_qp *qp_new_ex(struct dev *d, struct ibv_qp_init_attr_ex *ia)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
	};
	struct ibv_qp *qp;

	*ia = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_RC,
		.send_cq = d->cq,
		.recv_cq = d->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = d->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE,
	};
	qp = ibv_create_qp_ex(d->ctx, ia);
	if (qp && (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ||
		   qp_connect(d, qp, qp->qp_num))) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/*
 * The ibv_wr_*() API (the provider's ernic_ex.c) meets the same checks,
 * and a refused chain posts nothing (ibv_wr_complete(3)): two good
 * WRITEs followed by a SEND with L_Key 0 are refused whole (EINVAL: the
 * WRITEs, which need no receive on this loopback QP, never complete),
 * and a chain longer than the SQ fails (ENOMEM).
 */
static void check_wr_api(struct dev *d)
{
	struct ibv_qp_init_attr_ex ia;
	struct ibv_qp *qp = qp_new_ex(d, &ia);
	struct ibv_qp_ex *qx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	struct ibv_wc wc;
	int r0, r1, n;
	unsigned int i;

	if (!qx) {
		report(0, "ibv_wr_*", "no extended QP");
		return;
	}
	while (ibv_poll_cq(d->cq, 1, &wc) > 0)
		;
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < 2; i++) {
		qx->wr_id = 1 + i;
		ibv_wr_rdma_write(qx, d->mr->rkey, (uintptr_t)d->buf + 4096);
		ibv_wr_set_sge(qx, d->mr->lkey, (uintptr_t)d->buf, 64);
	}
	qx->wr_id = 3;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, 0, 0x100000, 64);
	r0 = ibv_wr_complete(qx);
	ibv_wr_start(qx);
	for (i = 0; i <= ia.cap.max_send_wr; i++) {
		ibv_wr_send(qx);
		ibv_wr_set_sge(qx, d->mr->lkey, (uintptr_t)d->buf, 64);
	}
	r1 = ibv_wr_complete(qx);
	usleep(300 * 1000);
	n = ibv_poll_cq(d->cq, 1, &wc);
	report(r0 == EINVAL && r1 == ENOMEM && n == 0,
	       "ibv_wr_*: a chain with L_Key 0 in its third WR refused whole "
	       "(EINVAL, its two WRITEs not posted), a chain beyond the SQ "
	       "refused whole (ENOMEM)", NULL);
	ibv_destroy_qp(qp);
}

static void check_foreign_lkey(struct dev *d, const struct victim_info *v)
{
	struct pair p = { 0 };
	int r, st = -2;

	memset(d->buf + 2048, 0, 64);
	if (pair_new(d, &p) ||
	    post_recv(p.b, d->buf + 2048, d->mr->lkey)) {
		report(0, "foreign L_Key", "no QP pair");
		return;
	}
	r = post_send(p.a, IBV_WR_SEND, v->addr, v->lkey, 0, 0, 0);
	if (!r)
		st = wait_wc(d, p.a);
	report((r || (st != IBV_WC_SUCCESS && st != -1)) &&
	       !holds_secret(d->buf + 2048, 64),
	       "a SEND through another process's L_Key ends in an error, nothing of it sent",
	       NULL);
	pair_free(&p);
}

static void check_foreign_rkey(struct dev *d, const struct victim_info *v,
			       enum ibv_wr_opcode op, const char *name)
{
	struct pair p = { 0 };
	int r, st = -2;

	memset(d->buf, op == IBV_WR_RDMA_READ ? 0 : 0x5a, 64);
	if (pair_new(d, &p)) {
		report(0, name, "no QP pair");
		return;
	}
	r = post_send(p.a, op, (uintptr_t)d->buf, d->mr->lkey, v->addr,
		      v->rkey, 0);
	if (!r)
		st = wait_wc(d, p.a);
	report((r || (st != IBV_WC_SUCCESS && st != -1)) &&
	       !holds_secret(d->buf, 64), name, NULL);
	pair_free(&p);
}

/*
 * An atomic through the victim's R_Key, to a QP of the attacker's that
 * takes atomics: the victim's MR allows them too, but not from another
 * PD. The victim checks its buffer is untouched; nothing of it may come
 * back as the original value.
 */
static void check_foreign_atomic(struct dev *d, const struct victim_info *v)
{
	const char *name = "an atomic FETCH_AND_ADD through another process's R_Key ends in an error, its word neither changed nor returned";
	struct ibv_sge sge = { (uintptr_t)d->buf, 8, d->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = v->addr, .rkey = v->rkey,
			       .compare_add = 1 },
	};
	struct ibv_send_wr *bad;
	struct pair p = { 0 };
	int r, st = -2;

	memset(d->buf, 0, 8);
	if (pair_new(d, &p)) {
		report(0, name, "no QP pair");
		return;
	}
	r = ibv_post_send(p.a, &wr, &bad);
	if (!r)
		st = wait_wc(d, p.a);
	report((r || (st != IBV_WC_SUCCESS && st != -1)) &&
	       !holds_secret(d->buf, 8), name, NULL);
	pair_free(&p);
}

/* A BIND of @mw to @lkey's 64 bytes at @addr on @qp; its status. */
static int bind_window(struct dev *d, struct ibv_qp *qp, struct ibv_mw *mw,
		       uint32_t rkey, uint64_t addr, uint32_t lkey)
{
	struct ibv_mr mr = { .lkey = lkey, .addr = (void *)(uintptr_t)addr,
			     .length = 64 };
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = rkey,
			     .bind_info = { .mr = &mr, .addr = addr,
					    .length = 64,
					    .mw_access_flags =
						IBV_ACCESS_REMOTE_WRITE } },
	};
	struct ibv_send_wr *bad;

	if (ibv_post_send(qp, &wr, &bad))
		return -2;
	return wait_wc(d, qp);
}

/*
 * A window of the attacker's bound to the victim's MR (its L_Key; the
 * MR allows windows, but another PD's): the bind fails, and a WRITE
 * through the window's key then reaches nothing (the victim checks its
 * buffer).
 */
static void check_foreign_bind(struct dev *d, const struct victim_info *v)
{
	const char *name = "binding a window of its own to another process's MR ends in an error, and the window reaches nothing";
	struct ibv_mw *mw = ibv_alloc_mw(d->pd, IBV_MW_TYPE_2);
	struct pair p = { 0 };
	uint32_t rkey;
	int bind, st = -2;

	if (!mw || pair_new(d, &p)) {
		report(0, name, "no window or QP pair");
		goto out;
	}
	rkey = ibv_inc_rkey(mw->rkey);
	bind = bind_window(d, p.b, mw, rkey, v->addr, v->lkey);
	pair_free(&p);
	p = (struct pair){ 0 };
	memset(d->buf, 0x5a, 64);
	if (!pair_new(d, &p) &&
	    !post_send(p.a, IBV_WR_RDMA_WRITE, (uintptr_t)d->buf, d->mr->lkey,
		       v->addr, rkey, 0))
		st = wait_wc(d, p.a);
	report(bind != IBV_WC_SUCCESS && bind != -1 && st != IBV_WC_SUCCESS &&
	       st != -1, name, NULL);
out:
	pair_free(&p);
	if (mw)
		ibv_dealloc_mw(mw);
}

/* A post naming the victim's QP handle, through the attacker's context. */
static void check_foreign_qp(struct dev *d, const struct victim_info *v)
{
	struct ibv_qp *own = qp_new(d);
	struct ibv_qp fake;
	int r;

	if (!own) {
		report(0, "foreign doorbell", "no QP");
		return;
	}
	fake = *own;
	fake.handle = v->qp_handle;
	if (fake.handle == own->handle) {
		report(0, "foreign doorbell", "the victim's handle is the attacker's too");
		ibv_destroy_qp(own);
		return;
	}
	r = post_send(&fake, IBV_WR_SEND, (uintptr_t)d->buf, d->mr->lkey,
		      0, 0, 0);
	report(r != 0, "a post to another process's QP handle is refused", NULL);
	ibv_destroy_qp(own);
}

/* An SRQ of the attacker's on @pd: four WRs of one SGE. */
static struct ibv_srq *srq_new(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = 4, .max_sge = 1 },
	};

	return ibv_create_srq(pd, &a);
}

/*
 * The control of the SRQ checks: a SEND of the attacker's own buffer
 * lands in the buffer of the SRQ WR it posted.
 */
static void check_srq_control(struct dev *d)
{
	const char *name = "control: a SEND lands through an SRQ";
	struct ibv_srq *srq = srq_new(d->pd);
	struct ibv_sge sge = {
		.addr = (uintptr_t)d->buf + 2048, .length = 64,
		.lkey = d->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	struct pair p = { 0 };

	if (!srq) {
		printf("ok - %s # SKIP no SRQ (%s)\n", name, strerror(errno));
		return;
	}
	memset(d->buf, 0x5a, 64);
	memset(d->buf + 2048, 0, 64);
	if (pair_new_srq(d, &p, srq) || ibv_post_srq_recv(srq, &wr, &bad) ||
	    post_send(p.a, IBV_WR_SEND, (uintptr_t)d->buf, d->mr->lkey, 0, 0,
		      0)) {
		report(0, name, "no QP pair or post");
	} else {
		report(wait_wc(d, p.a) == IBV_WC_SUCCESS &&
		       wait_wc(d, p.b) == IBV_WC_SUCCESS &&
		       !memcmp(d->buf, d->buf + 2048, 64), name, NULL);
	}
	pair_free(&p);
	ibv_destroy_srq(srq);
}

/*
 * A receive WQE written straight into the mapped ring of the attacker's
 * SRQ (its lowest mmap offsets: the SRQ comes before its QPs; ring,
 * then doorbell page), naming @addr through @lkey, and rung through its
 * doorbell page: the SEND that takes it must end in an error.
 */
static void check_srq_forged(struct dev *d, uint64_t addr, uint32_t lkey,
			     const char *name)
{
	struct ibv_srq *srq = srq_new(d->pd);
	struct pair p = { 0 };
	struct umap m[32];
	uint8_t *w;

	if (!srq) {
		printf("ok - %s # SKIP no SRQ (%s)\n", name, strerror(errno));
		return;
	}
	if (umaps(m, 32) < 2 || pair_new_srq(d, &p, srq)) {
		report(0, name, "no SRQ mapping or QP pair");
		goto out;
	}
	w = m[0].start;
	memset(w, 0, ERNIC_RWQE_SIZE);
	memcpy(w + ERNIC_SGE_ADDR, &addr, 8);
	memcpy(w + ERNIC_SGE_LEN, &(uint32_t){ 64 }, 4);
	memcpy(w + ERNIC_SGE_LKEY, &lkey, 4);
	__sync_synchronize();
	*(volatile uint32_t *)(m[1].start + ERNIC_UDB_SRQPI) = 1;
	memset(d->buf, 0x5a, 64);
	if (post_send(p.a, IBV_WR_SEND, (uintptr_t)d->buf, d->mr->lkey, 0, 0,
		      0)) {
		report(0, name, "no post");
		goto out;
	}
	report(wait_wc(d, p.a) != IBV_WC_SUCCESS, name, NULL);
out:
	pair_free(&p);
	ibv_destroy_srq(srq);
}

/*
 * An SRQ of another PD, and the victim's SRQ by its handle: no QP of
 * the attacker's receives through either.
 */
static void check_srq_foreign(struct dev *d, const struct victim_info *v)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(d->ctx);
	struct ibv_srq *srq = pd2 ? srq_new(pd2) : NULL;
	struct ibv_srq fake;
	struct ibv_qp *qp;

	if (!srq) {
		printf("ok - SRQ of another PD # SKIP no SRQ\n");
		printf("ok - SRQ handle of another process # SKIP no SRQ\n");
		goto out;
	}
	qp = qp_new_srq(d, srq);
	report(!qp, "a QP on an SRQ of another PD is refused", NULL);
	if (qp)
		ibv_destroy_qp(qp);
	fake = *srq;
	fake.handle = v->srq_handle;
	fake.pd = d->pd;
	qp = fake.handle == srq->handle ? NULL : qp_new_srq(d, &fake);
	report(!qp && fake.handle != srq->handle,
	       "a QP on another process's SRQ handle is refused", NULL);
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
out:
	if (pd2)
		ibv_dealloc_pd(pd2);
}

/* An XRC domain of the process's own, tied to no file (ERNIC-X XRC). */
static struct ibv_xrcd *xrcd_new(struct dev *d)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};

	return ibv_open_xrcd(d->ctx, &a);
}

/* An XRC SRQ of @xrcd completing into d->cq, one WR posted at @buf. */
static struct ibv_srq *xsrq_new(struct dev *d, struct ibv_xrcd *xrcd,
				uint8_t *buf)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.xrcd = xrcd,
		.cq = d->cq,
		.pd = d->pd,
	};
	struct ibv_sge sge = { (uintptr_t)buf, 64, d->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	struct ibv_srq *srq = ibv_create_srq_ex(d->ctx, &a);

	if (srq && ibv_post_srq_recv(srq, &wr, &bad)) {
		ibv_destroy_srq(srq);
		return NULL;
	}
	return srq;
}

/* An XRC initiator (@xrcd NULL) or a target QP of @xrcd, in INIT. */
static struct ibv_qp *xrc_qp(struct dev *d, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = xrcd ? IBV_QPT_XRC_RECV : IBV_QPT_XRC_SEND,
		.comp_mask = xrcd ? IBV_QP_INIT_ATTR_XRCD : IBV_QP_INIT_ATTR_PD,
		.xrcd = xrcd,
		.pd = d->pd,
		.send_cq = xrcd ? NULL : d->cq,
		.cap = { .max_send_wr = xrcd ? 0 : 8, .max_send_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(d->ctx, &ia);

	if (qp && ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* A SEND of d->buf's first 64 bytes to XRC SRQ @srqn; its status. */
static int xrc_send(struct dev *d, struct ibv_qp *ini, uint32_t srqn)
{
	struct ibv_sge sge = { (uintptr_t)d->buf, 64, d->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.qp_type.xrc.remote_srqn = srqn,
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(ini, &wr, &bad) ? -1 : wait_wc(d, ini);
}

/*
 * XRC: the attacker's initiator sends through its own target QP of its
 * own domain, naming its own XRC SRQ (the control: its WR filled), then
 * the victim's XRC SRQ, of another domain, by its number: that SEND ends
 * in an error, and none of the victim's bytes (its SRQ's WR is in its
 * secret buffer) changes.
 */
static void check_xrc_foreign(struct dev *d, const struct victim_info *v)
{
	const char *ctl = "control: an XRC SEND lands in the process's own XRC SRQ";
	const char *name = "an XRC SEND naming another process's XRC SRQ, of another domain, ends in an error";
	struct ibv_xrcd *xrcd = xrcd_new(d);
	struct ibv_srq *srq = xrcd ? xsrq_new(d, xrcd, d->buf + 2048) : NULL;
	struct ibv_qp *ini = NULL, *tgt = NULL;
	uint32_t srqn = 0;
	int st;

	if (!srq || v->xrc_srqn == UINT32_MAX) {
		printf("ok - %s # SKIP no XRC (%s)\n", ctl, strerror(errno));
		printf("ok - %s # SKIP no XRC\n", name);
		goto out;
	}
	memset(d->buf, 0x6b, 64);
	memset(d->buf + 2048, 0, 64);
	tgt = xrc_qp(d, xrcd);
	ini = xrc_qp(d, NULL);
	if (!tgt || !ini || ibv_get_srq_num(srq, &srqn) ||
	    qp_connect(d, ini, tgt->qp_num) ||
	    qp_connect(d, tgt, ini->qp_num)) {
		report(0, ctl, "no XRC QPs");
		goto out;
	}
	st = xrc_send(d, ini, srqn);
	report(st == IBV_WC_SUCCESS && wait_wc(d, tgt) == IBV_WC_SUCCESS &&
	       !memcmp(d->buf, d->buf + 2048, 64), ctl, NULL);
	st = xrc_send(d, ini, v->xrc_srqn);
	report(st != IBV_WC_SUCCESS && st != -1, name, NULL);
out:
	if (ini)
		ibv_destroy_qp(ini);
	if (tgt)
		ibv_destroy_qp(tgt);
	if (srq)
		ibv_destroy_srq(srq);
	if (xrcd)
		ibv_close_xrcd(xrcd);
}

/* An AH of @pd to the device itself (loopback), or NULL. */
static struct ibv_ah *ah_self(struct dev *d, struct ibv_pd *pd)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.grh = { .dgid = d->gid, .sgid_index = d->gid_index,
			 .hop_limit = 64 },
		.port_num = 1,
	};

	return ibv_create_ah(pd, &a);
}

/*
 * A UD SEND written straight into the attacker's own UD QP's mapped SQ
 * (its lowest mmap offsets, SQ first, doorbell page last) naming AH
 * entry @idx, rung through its doorbell page: with an entry of another
 * process's PD the device must refuse it, and nothing is sent.
 */
static void check_ud_forged(struct dev *d, int32_t idx)
{
	const char *name = "a UD WQE written into the mapped SQ naming another process's AH ends in an error";
	struct ibv_qp *qp = qp_new_type(d, NULL, IBV_QPT_UD);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	struct umap r[6];
	uint8_t *w;
	int st;

	if (!qp || idx < 0) {
		printf("ok - %s # SKIP no UD QP or AH entry\n", name);
		goto out;
	}
	if (direct_regions(r)) {
		printf("ok - %s # SKIP no direct QP\n", name);
		goto out;
	}
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE) ||
	    (a.qp_state = IBV_QPS_RTS, a.sq_psn = 0,
	     ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))) {
		report(0, name, "no RTS");
		goto out;
	}
	w = r[0].start;
	memset(w, 0, ERNIC_XWQE_SIZE);
	memset(d->buf, 0x5a, 64);
	w[ERNIC_WQE_OPCODE] = ERNIC_OP_SEND;
	w[ERNIC_XWQE_NSGE] = 1;
	memcpy(w + ERNIC_WQE_LENGTH, &(uint32_t){ 64 }, 4);
	memcpy(w + ERNIC_WQE_UD_DQPN, &(uint32_t){ qp->qp_num }, 4);
	memcpy(w + ERNIC_WQE_UD_AH, &idx, 4);
	memcpy(w + ERNIC_XWQE_SGE + ERNIC_SGE_ADDR, &(uint64_t){
	       (uintptr_t)d->buf }, 8);
	memcpy(w + ERNIC_XWQE_SGE + ERNIC_SGE_LEN, &(uint32_t){ 64 }, 4);
	memcpy(w + ERNIC_XWQE_SGE + ERNIC_SGE_LKEY, &d->mr->lkey, 4);
	forge_ring(r);
	st = wait_wc(d, qp);
	report(st != IBV_WC_SUCCESS && st != -1, name, NULL);
out:
	if (qp)
		ibv_destroy_qp(qp);
}

static void check_mmap(struct dev *d, const char *bdf)
{
	char path[128];
	void *m;
	int fd;

	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		 d->ctx->cmd_fd, 0);
	report(m == MAP_FAILED,
	       "with no QP of its own, nothing maps through the uverbs file",
	       NULL);
	if (m != MAP_FAILED)
		munmap(m, 4096);
	if (!bdf)
		return;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", bdf);
	fd = open(path, O_RDWR);
	report(fd < 0 && errno == EACCES,
	       "the BAR's sysfs resource file is closed to the process", NULL);
	if (fd >= 0)
		close(fd);
}

static int victim(const char *name, int gid_index, int to_attacker,
		  int from_attacker)
{
	struct victim_info v;
	struct dev d = { 0 };
	struct ibv_qp *qp = NULL;
	struct ibv_srq *srq = NULL, *xsrq = NULL;
	struct ibv_xrcd *xrcd;
	struct ibv_ah *ah;
	char c;
	int i;

	drop_privileges();
	if (dev_open(&d, name, gid_index))
		return 2;
	/*
	 * Handles count per file: the QP named is one whose number no live
	 * object of the attacker's has (it holds four at the most).
	 */
	for (i = 0; i < 4; i++)
		if (!(qp = qp_new(&d)))
			return 2;
	/* Likewise an SRQ (where there are SRQs), the fourth. */
	for (i = 0; i < 4; i++) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = 4, .max_sge = 1 },
		};

		srq = ibv_create_srq(d.pd, &sa);
	}
	v.srq_handle = srq ? srq->handle : 0;
	/* An AH, whose entry (ERNIC-X UD) the attacker names in a WQE. */
	ah = ah_self(&d, d.pd);
	v.ah_idx = ah ? ((struct ernic_ah_view *)ah)->idx : -1;
	memset(d.buf, SECRET, BUF_SIZE);
	/* An XRC SRQ of its own domain, its WR in the secret (ERNIC-X XRC). */
	xrcd = xrcd_new(&d);
	if (xrcd)
		xsrq = xsrq_new(&d, xrcd, d.buf);
	if (!xsrq || ibv_get_srq_num(xsrq, &v.xrc_srqn))
		v.xrc_srqn = UINT32_MAX;
	v.addr = (uintptr_t)d.buf;
	v.lkey = d.mr->lkey;
	v.rkey = d.mr->rkey;
	v.qp_handle = qp->handle;
	if (write(to_attacker, &v, sizeof(v)) != sizeof(v) ||
	    read(from_attacker, &c, 1) != 1)
		return 2;
	for (i = 0; i < BUF_SIZE; i++)
		if (d.buf[i] != SECRET)
			return 1;
	return 0;
}

static void attacker(const char *name, int gid_index, const char *bdf,
		     int from_victim)
{
	struct victim_info v;
	struct dev d = { 0 };

	drop_privileges();
	if (read(from_victim, &v, sizeof(v)) != sizeof(v) ||
	    dev_open(&d, name, gid_index)) {
		report(0, "attacker: device, PD, CQ and MR of its own", NULL);
		return;
	}
	check_control(&d);
	check_rereg(&d);
	check_lkey0(&d);
	check_inline_kernel(&d);
	check_wr_api(&d);
	check_foreign_lkey(&d, &v);
	check_foreign_rkey(&d, &v, IBV_WR_RDMA_READ,
			   "an RDMA READ through another process's R_Key ends in an error, nothing read");
	check_foreign_rkey(&d, &v, IBV_WR_RDMA_WRITE,
			   "an RDMA WRITE through another process's R_Key ends in an error");
	check_foreign_atomic(&d, &v);
	check_foreign_bind(&d, &v);
	check_foreign_qp(&d, &v);
	check_forged(&d, 0x100000, 0,
		     "a WQE written into the mapped SQ naming bus memory (L_Key 0) ends in an error");
	check_forged(&d, v.addr, v.lkey,
		     "a WQE written into the mapped SQ with another process's L_Key ends in an error, nothing sent");
	check_direct_mmap(&d);
	check_srq_control(&d);
	check_srq_forged(&d, 0x100000, 0,
			 "an SRQ WQE written into the mapped ring naming bus memory (L_Key 0) ends in an error");
	check_srq_forged(&d, v.addr, v.lkey,
			 "an SRQ WQE written into the mapped ring with another process's L_Key ends in an error");
	check_srq_foreign(&d, &v);
	check_ud_forged(&d, v.ah_idx);
	check_xrc_foreign(&d, &v);
	check_mmap(&d, bdf);
}

int main(int argc, char **argv)
{
	int v2a[2], a2v[2], st;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX [PCI_BDF]\n", argv[0]);
		return 2;
	}
	if (pipe(v2a) || pipe(a2v))
		return 2;
	pid = fork();
	if (pid == 0)
		_exit(victim(argv[1], atoi(argv[2]), v2a[1], a2v[0]));
	attacker(argv[1], atoi(argv[2]), argc > 3 ? argv[3] : NULL, v2a[0]);
	if (write(a2v[1], "x", 1) != 1 || waitpid(pid, &st, 0) != pid)
		st = -1;
	report(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "the victim's buffer is unchanged", NULL);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
