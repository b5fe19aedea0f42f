/*
 * ERNIC link: what happens to a frame between the engine and the QEMU
 * netdev. Transmit to the backend or, for frames to the device's own MAC
 * address, internal loopback (and a copy of ERNIC-X multicast packets
 * for its own attached QPs); receive, never nested in transmit; and the
 * wire faults injected on the link (docs/debugging.md): frames dropped,
 * duplicated, reordered, delayed, corrupted or answered with a NAK.
 *
 * Received frames go up to the receive path (ernic_net.c) through
 * ernic_up_rx(), the one call this layer makes upwards.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "ernic_core.h"
#include "trace.h"

/* Frames held for delay or reorder, each allocated to its size. */
typedef struct ErnicFaultFrame {
    int64_t due;
    uint8_t dir;
    bool reorder;               /* released by the next frame, or at due */
    uint32_t qpn;
    size_t len;
    uint8_t data[];
} ErnicFaultFrame;

/* A reordered frame waits at most this long for one to overtake it. */
#define ERNIC_FAULT_REORDER_NS  (1 * SCALE_MS)

/* The names of ErnicFaultAct, in its order: commands and traces. */
const char *const ernic_link_fault_acts[ERNIC_FA_N] = {
    "drop", "dup", "reorder", "delay", "corrupt", "nak",
};

static bool ernic_link_fault_rx(ErnicCore *c, const uint8_t *buf, size_t len);
static bool ernic_link_fault_tx(ErnicCore *c, uint32_t qpn, const uint8_t *buf,
                                size_t len);
static bool ernic_link_fault_loop(ErnicCore *c, const uint8_t *buf,
                                  size_t len);

void ernic_link_defer(ErnicCore *c, const uint8_t *buf, size_t len)
{
    ErnicHeldFrame *h;

    if (g_queue_get_length(&c->lo_queue) >= ERNIC_LOOPBACK_MAX) {
        trace_ernic_lo_drop(len);
        return;
    }
    h = g_malloc(sizeof(*h) + len);
    h->len = len;
    memcpy(h->data, buf, len);
    g_queue_push_tail(&c->lo_queue, h);
    qemu_bh_schedule(c->lo_bh);
}

void ernic_link_xmit(ErnicCore *c, uint32_t qpn, const uint8_t *buf,
                     size_t len)
{
    if (unlikely(c->fault.armed) && ernic_link_fault_tx(c, qpn, buf, len)) {
        return;                 /* an injected fault took it */
    }
    if ((buf[0] & 1) && qpn != ERNIC_QP_GSI &&
        ernic_ext_on(c, ERNIC_EXT_F_MCAST)) {
        /*
         * ERNIC-X multicast: this device's QPs attached to the group get
         * the packet too, as rxe's and mlx5's do (docs/extension.md).
         */
        ernic_link_defer(c, buf, len);
    }
    ernic_link_put(c, buf, len);
}

/* Hand @iov to the backend, never to receive in the meantime. */
void ernic_link_xmitv(ErnicCore *c, const struct iovec *iov, unsigned n)
{
    bool sent;

    c->in_tx = true;
    sent = c->tx(c->tx_opaque, iov, n);
    c->in_tx = false;
    if (!sent) {
        /* The backend queued the frame; hold further ones until resumed. */
        c->tx_blocked = true;
    }
}

bool ernic_link_direct(ErnicCore *c, const uint8_t *dst)
{
    uint8_t mac[6];

    ernic_gcsr_mac(c, mac);
    return !c->fault.armed && !(dst[0] & 1) && memcmp(dst, mac, 6);
}

void ernic_link_put(ErnicCore *c, const uint8_t *buf, size_t len)
{
    struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
    uint8_t mac[6];

    ernic_gcsr_mac(c, mac);
    if (!memcmp(buf, mac, 6)) {
        /*
         * A frame to ourselves never reaches the wire (as rxe's loopback):
         * two QPs of one device can talk. Delivered from a bottom half so
         * that receive processing never nests in transmit.
         */
        if (unlikely(c->fault.armed) && ernic_link_fault_loop(c, buf, len)) {
            return;             /* an injected fault took it */
        }
        ernic_link_defer(c, buf, len);
        return;
    }
    ernic_link_xmitv(c, &iov, 1);
}

void ernic_link_resume(ErnicCore *c)
{
    c->tx_blocked = false;
    qemu_bh_schedule(c->sq_bh);
    qemu_bh_schedule(c->eth_bh);
}

void ernic_link_loopback_bh(void *opaque)
{
    ErnicCore *c = opaque;
    unsigned n = g_queue_get_length(&c->lo_queue);
    ErnicHeldFrame *h;

    if (!ernic_may_run()) {
        return;
    }
    /* Frames queued while delivering wait for the next turn. */
    while (n-- && (h = g_queue_pop_head(&c->lo_queue))) {
        ernic_up_rx(c, h->data, h->len);
        g_free(h);
    }
    if (!g_queue_is_empty(&c->lo_queue)) {
        qemu_bh_schedule(c->lo_bh);
    }
}

void ernic_link_reset(ErnicCore *c)
{
    qemu_bh_cancel(c->lo_bh);
    g_queue_clear_full(&c->lo_queue, g_free);
    c->tx_blocked = false;
}

void ernic_link_receive(ErnicCore *c, const uint8_t *buf, size_t len)
{
    if (unlikely(c->fault.armed) && ernic_link_fault_rx(c, buf, len)) {
        return;                 /* an injected fault took it */
    }
    ernic_link_take(c, buf, len);
}

void ernic_link_take(ErnicCore *c, const uint8_t *buf, size_t len)
{
    if (c->in_tx) {
        /*
         * A backend that delivers synchronously (a hub) called us from
         * inside our own transmit, before the engine has recorded what it
         * sent: take the frame after this turn (docs/security.md).
         */
        trace_ernic_rx_nested(len);
        ernic_link_defer(c, buf, len);
        return;
    }
    ernic_up_rx(c, buf, len);
}

/*
 * Wire faults (docs/debugging.md): the rules of ernic_fault.c applied to
 * each RoCEv2 frame that passes, and the frames they hold.
 */

/* Whether anything is armed: the fast paths test c->fault.armed only. */
void ernic_link_fault_rearm(ErnicCore *c)
{
    bool armed = c->fault.nrules || !g_queue_is_empty(&c->fault.held);
    uint32_t q;

    for (q = 1; q <= c->num_qp && !armed; q++) {
        armed = c->qp[q].fault_cqe_left;
    }
    c->fault.armed = armed;
}

/* Where a frame goes when the fault lets it through. */
static void ernic_link_fault_out(ErnicCore *c, uint8_t dir, uint32_t qpn,
                                 const uint8_t *buf, size_t len)
{
    if (dir == ERNIC_FAULT_RX && c->fault.rx_defer) {
        ernic_link_defer(c, buf, len);   /* looped back: never nested */
    } else if (dir == ERNIC_FAULT_RX) {
        ernic_link_take(c, buf, len);
    } else {
        ernic_link_put(c, buf, len);
    }
}

static gint ernic_link_fault_by_due(gconstpointer a, gconstpointer b,
                                    gpointer unused)
{
    const ErnicFaultFrame *x = a, *y = b;

    return x->due < y->due ? -1 : x->due > y->due;
}

static void ernic_link_fault_hold(ErnicCore *c, uint8_t dir, uint32_t qpn,
                                  const uint8_t *buf, size_t len, int64_t delay,
                             bool reorder)
{
    ErnicFaultFrame *h;

    if (g_queue_get_length(&c->fault.held) >= ERNIC_FAULT_HELD_MAX ||
        c->fault.held_bytes + len > ERNIC_FAULT_HELD_BYTES) {
        /* Bounded: past it, frames pass undelayed. */
        ernic_link_fault_out(c, dir, qpn, buf, len);
        return;
    }
    h = g_malloc(sizeof(*h) + len);
    h->due = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + delay;
    h->dir = dir;
    h->reorder = reorder;
    h->qpn = qpn;
    h->len = len;
    memcpy(h->data, buf, len);
    c->fault.held_bytes += len;
    g_queue_insert_sorted(&c->fault.held, h, ernic_link_fault_by_due, NULL);
    timer_mod(c->fault.timer,
              ((ErnicFaultFrame *)g_queue_peek_head(&c->fault.held))->due);
    c->fault.armed = true;
}

/*
 * Release held frames: those due by @now, or reordered ones of @dir. They
 * are taken off the queue before any is passed on, as passing one on may
 * hold or release others (a received frame answered at once).
 */
static void ernic_link_fault_release(ErnicCore *c, int64_t now, uint8_t dir)
{
    GQueue out = G_QUEUE_INIT;
    GList *l = c->fault.held.head;
    ErnicFaultFrame *h;

    while (l) {
        GList *next = l->next;

        h = l->data;
        if (h->due <= now || (h->reorder && h->dir == dir)) {
            g_queue_unlink(&c->fault.held, l);
            g_queue_push_tail_link(&out, l);
            c->fault.held_bytes -= h->len;
        }
        l = next;
    }
    while ((h = g_queue_pop_head(&out))) {
        ernic_link_fault_out(c, h->dir, h->qpn, h->data, h->len);
        g_free(h);
    }
    h = g_queue_peek_head(&c->fault.held);
    if (h) {
        timer_mod(c->fault.timer, h->due);
    } else {
        timer_del(c->fault.timer);
    }
    ernic_link_fault_rearm(c);
}

static void ernic_link_fault_timer(void *opaque)
{
    ErnicCore *c = opaque;
    ernic_dma_timer_enter(c);

    ernic_link_fault_release(c, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), 0);
    ernic_dma_timer_exit(c);
}

static bool ernic_link_fault_has_reorder(ErnicCore *c, uint8_t dir)
{
    GList *l;

    for (l = c->fault.held.head; l; l = l->next) {
        const ErnicFaultFrame *h = l->data;

        if (h->reorder && h->dir == dir) {
            return true;
        }
    }
    return false;
}

/* xorshift64*: the same seed gives the same frames hit. */
static uint32_t ernic_link_fault_rand(ErnicFaultRule *r)
{
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return (r->rng * 0x2545f4914f6cdd1dULL) >> 32;
}

static bool ernic_link_fault_hits(ErnicFaultRule *r, uint8_t dir, uint32_t qpn,
                                  const ErnicPkt *pkt)
{
    if (!(r->dirs & dir) || !r->left ||
        (r->qpn >= 0 && (uint32_t)r->qpn != qpn) ||
        (r->opcode >= 0 && r->opcode != pkt->opcode) ||
        (r->act == ERNIC_FA_NAK && !(pkt->flags & ERNIC_OPF_RESP))) {
        return false;
    }
    if (r->percent < 100 && ernic_link_fault_rand(r) % 100 >= r->percent) {
        return false;
    }
    if (r->left != UINT32_MAX) {
        r->left--;
    }
    return true;
}

/* Damage one field; the ICRC is made valid again unless it is the field. */
static void ernic_link_fault_corrupt(const ErnicFaultRule *r, uint8_t *f,
                                     const ErnicPkt *pkt)
{
    uint8_t *bth = f + pkt->bth;

    switch (r->field) {
    case ERNIC_FF_ICRC:
        stl_le_p(f + pkt->len - ERNIC_ICRC_LEN,
                 ldl_le_p(f + pkt->len - ERNIC_ICRC_LEN) ^ r->xor);
        return;
    case ERNIC_FF_BYTE:
        if (r->offset < pkt->len) {
            f[r->offset] ^= r->xor;
        }
        return;
    case ERNIC_FF_PSN:
        stl_be_p(bth + 8, ldl_be_p(bth + 8) ^ (r->xor & ERNIC_PSN_MASK));
        break;
    case ERNIC_FF_OPCODE:
        bth[0] ^= r->xor;
        break;
    case ERNIC_FF_DQPN:
        stl_be_p(bth + 4, ldl_be_p(bth + 4) ^ (r->xor & ERNIC_QPN_MASK));
        break;
    }
    stl_le_p(f + pkt->len - ERNIC_ICRC_LEN,
             ernic_wire_icrc(f, pkt->l3, pkt->len, pkt->ipv6));
}

/*
 * The response @pkt to QP @qpn, replaced by a NAK of the rule's syndrome
 * for the same PSN and MSN, as the peer would have sent it.
 */
static size_t ernic_link_fault_nak_frame(ErnicCore *c, uint32_t qpn,
                                         const ErnicPkt *pkt, uint8_t syndrome,
                                    uint8_t *f)
{
    ErnicPath p;
    size_t end;

    ernic_qp_peer_path(c, qpn, &p);
    end = ernic_wire_build(f, &p, IB_OPC_ACK, pkt->psn, false,
                           ERNIC_AETH_LEN, 0);
    ernic_wire_put_aeth(f + end, syndrome, pkt->msn);
    trace_ernic_fault_nak(qpn, syndrome, pkt->psn);
    return ernic_wire_finish(f, end + ERNIC_AETH_LEN, 0, p.ipv6);
}

/* Apply rule @r to a frame it hit. */
static void ernic_link_fault_apply(ErnicCore *c, ErnicFaultRule *r, uint8_t dir,
                                   uint32_t qpn, const ErnicPkt *pkt)
{
    /*
     * A copy of its own: passing a frame on may run the engine, which
     * may send, and a rule may hit that frame too.
     */
    g_autofree uint8_t *f = g_malloc(MAX(pkt->len, ERNIC_MAX_HDR_LEN +
                                         ERNIC_AETH_LEN + ERNIC_ICRC_LEN));
    size_t len;

    trace_ernic_fault_wire(ernic_link_fault_acts[r->act],
                           dir == ERNIC_FAULT_RX ? "rx" : "tx", qpn,
                           pkt->opcode, pkt->psn);
    switch (r->act) {
    case ERNIC_FA_DROP:
        c->fault.count[ERNIC_FC_DROP]++;
        return;
    case ERNIC_FA_DUP:
        c->fault.count[ERNIC_FC_DUP]++;
        memcpy(f, pkt->frame, pkt->len);
        ernic_link_fault_out(c, dir, qpn, f, pkt->len);
        ernic_link_fault_out(c, dir, qpn, f, pkt->len);
        return;
    case ERNIC_FA_DELAY:
        c->fault.count[ERNIC_FC_DELAY]++;
        ernic_link_fault_hold(c, dir, qpn, pkt->frame, pkt->len, r->delay_ns,
                              false);
        return;
    case ERNIC_FA_REORDER:
        c->fault.count[ERNIC_FC_REORDER]++;
        ernic_link_fault_hold(c, dir, qpn, pkt->frame, pkt->len,
                              ERNIC_FAULT_REORDER_NS, true);
        return;
    case ERNIC_FA_CORRUPT:
        c->fault.count[ERNIC_FC_CORRUPT]++;
        memcpy(f, pkt->frame, pkt->len);
        ernic_link_fault_corrupt(r, f, pkt);
        ernic_link_fault_out(c, dir, qpn, f, pkt->len);
        return;
    case ERNIC_FA_NAK:
        c->fault.count[ERNIC_FC_NAK]++;
        len = ernic_link_fault_nak_frame(c, qpn, pkt, r->syndrome, f);
        ernic_link_fault_out(c, dir, qpn, f, len);
        return;
    default:
        g_assert_not_reached();
    }
}

/*
 * A frame in direction @dir (for TX, of local QP @qpn); true when a rule
 * took it (it is then dropped, held or passed on by this function).
 */
static bool ernic_link_fault_frame(ErnicCore *c, uint8_t dir, uint32_t qpn,
                                   const uint8_t *buf, size_t len)
{
    ErnicPkt pkt;
    bool roce;
    uint32_t i;

    ernic_wire_parse(buf, len, &pkt, &roce);
    if (!roce || !pkt.bth) {
        return false;           /* only RoCEv2 frames are touched */
    }
    if (dir == ERNIC_FAULT_RX) {
        qpn = pkt.dqpn;
    }
    for (i = 0; i < c->fault.nrules; i++) {
        ErnicFaultRule *r = &c->fault.rule[i];

        if (ernic_link_fault_hits(r, dir, qpn, &pkt)) {
            ErnicFaultRule hit = *r;

            if (!r->left) {
                /* Spent: its place is free before the frame moves on. */
                memmove(r, r + 1, (--c->fault.nrules - i) * sizeof(*r));
                ernic_link_fault_rearm(c);
            }
            ernic_link_fault_apply(c, &hit, dir, qpn, &pkt);
            return true;
        }
    }
    if (ernic_link_fault_has_reorder(c, dir)) {
        /* This frame overtakes the held one. */
        ernic_link_fault_out(c, dir, qpn, buf, len);
        ernic_link_fault_release(c, INT64_MIN, dir);
        return true;
    }
    return false;
}

static bool ernic_link_fault_rx(ErnicCore *c, const uint8_t *buf, size_t len)
{
    return ernic_link_fault_frame(c, ERNIC_FAULT_RX, 0, buf, len);
}

static bool ernic_link_fault_tx(ErnicCore *c, uint32_t qpn, const uint8_t *buf,
                                size_t len)
{
    return ernic_link_fault_frame(c, ERNIC_FAULT_TX, qpn, buf, len);
}

/*
 * A frame to the device's own MAC arrives without the wire: it meets the
 * receive rules here, and what passes is delivered from the loopback
 * bottom half, as every looped-back frame is.
 */
static bool ernic_link_fault_loop(ErnicCore *c, const uint8_t *buf, size_t len)
{
    bool taken;

    c->fault.rx_defer = true;
    taken = ernic_link_fault_frame(c, ERNIC_FAULT_RX, 0, buf, len);
    c->fault.rx_defer = false;
    return taken;
}

void ernic_link_realize(ErnicCore *c)
{
    g_queue_init(&c->fault.held);
    c->fault.timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ernic_link_fault_timer,
                                  c);
}

void ernic_link_unrealize(ErnicCore *c)
{
    timer_free(c->fault.timer);
    g_queue_clear_full(&c->fault.held, g_free);
}

/* Clearing the rules: what was held goes on now, as if mended. */
void ernic_link_fault_flush(ErnicCore *c)
{
    ernic_link_fault_release(c, INT64_MAX, 0);
}
