/*
 * ERNIC transmit of a packet that carries payload (docs/engine.md,
 * "Payload in place"). The engine builds the headers in its frame
 * buffer; the payload comes through the one payload path (ernic_mr.c).
 * Where the frame goes straight to the backend, each run of guest RAM is
 * mapped and handed over in place as a piece of an iovec: the payload is
 * then read once, by the ICRC, instead of copied and read. A run that
 * cannot be mapped whole is copied into the frame buffer as before. The
 * bytes on the wire are the same either way, and every mapping is
 * released before ernic_xmit_send() returns: none outlives the main-loop
 * turn, in which the guest could unmap or migrate its memory.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ernic_core.h"
#include "trace.h"

void ernic_xmit_init(ErnicCore *c, ErnicXmit *x, uint8_t *f, size_t end,
                     uint32_t paylen, bool ipv6)
{
    x->f = f;
    x->end = end;
    x->paylen = paylen;
    x->done = 0;
    x->ipv6 = ipv6;
    x->n = 0;
    x->mapped = 0;
    x->map = c->tx_map && paylen > ERNIC_XMIT_COPY_MAX &&
             ernic_link_direct(c, f);
}

/* Copy a run into the frame buffer, after the last copied piece if any. */
static bool ernic_xmit_copy_run(ErnicCore *c, ErnicXmit *x, uint64_t bus,
                                uint32_t len)
{
    uint8_t *p = x->f + x->end + x->done;
    struct iovec *v = &x->iov[1 + x->n];

    if (!ernic_dma_read(c, bus, p, len)) {
        return false;
    }
    if (x->n && !(x->mapped & BIT(x->n - 1))) {
        v[-1].iov_len += len;       /* contiguous with it in the buffer */
    } else {
        v->iov_base = p;
        v->iov_len = len;
        x->n++;
    }
    return true;
}

/*
 * One run of the payload: mapped while there are pieces to spare (one is
 * kept for copies after the last mapping), else copied.
 */
static bool ernic_xmit_run(ErnicCore *c, uint64_t bus, uint32_t len,
                           void *opaque)
{
    ErnicXmit *x = opaque;
    const void *p = NULL;
    bool ok = true;

    if (x->map && x->n < ERNIC_XMIT_RUNS - 1) {
        p = ernic_dma_map(c, bus, len);
    }
    if (p) {
        x->iov[1 + x->n].iov_base = (void *)p;
        x->iov[1 + x->n].iov_len = len;
        x->mapped |= BIT(x->n);
        x->n++;
    } else {
        ok = ernic_xmit_copy_run(c, x, bus, len);
    }
    x->done += len;
    return ok;
}

static void ernic_xmit_release(ErnicCore *c, ErnicXmit *x)
{
    for (unsigned i = 0; i < x->n; i++) {
        if (x->mapped & BIT(i)) {
            ernic_dma_unmap(c, x->iov[1 + i].iov_base,
                            x->iov[1 + i].iov_len);
        }
    }
    x->mapped = 0;
}

bool ernic_xmit_gather(ErnicCore *c, ErnicXmit *x, const ErnicSge *sge,
                       unsigned n, uint64_t laddr, uint32_t total,
                       uint64_t off)
{
    if (!x->map) {
        return ernic_mr_msg_dma(c, sge, n, laddr, total, off,
                                x->f + x->end, NULL, x->paylen);
    }
    if (!ernic_mr_msg_walk(c, sge, n, laddr, total, off, x->paylen,
                           ernic_xmit_run, x)) {
        ernic_xmit_release(c, x);
        return false;
    }
    return true;
}

void ernic_xmit_send(ErnicCore *c, ErnicXmit *x, uint32_t qpn)
{
    uint8_t *tail = x->f + x->end + x->paylen;
    struct iovec *v = x->iov;

    if (!x->mapped) {
        ernic_link_xmit(c, qpn, x->f,
                        ernic_wire_finish(x->f, x->end + x->paylen,
                                          x->paylen, x->ipv6));
        return;
    }
    v[0].iov_base = x->f;
    v[0].iov_len = x->end;
    v[x->n + 1].iov_base = tail;
    v[x->n + 1].iov_len = ernic_wire_finish_iov(x->f, x->end, &v[1], x->n,
                                                x->paylen, x->ipv6, tail);
    trace_ernic_tx_mapped(qpn, x->n, ctpop32(x->mapped));
    ernic_link_xmitv(c, v, x->n + 2);
    ernic_xmit_release(c, x);
}
