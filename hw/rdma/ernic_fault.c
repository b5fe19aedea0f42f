/*
 * ERNIC fault injection (docs/debugging.md, "Fault injection").
 *
 * For driver developers: the rare paths of a driver (FATAL codes, error
 * completions, NAKs, lost, duplicated, late or corrupted frames) on
 * demand. Commands come from the host only, as the QOM property "fault"
 * (QMP/HMP qom-set), and what was injected is read back from
 * "fault-stats" (qom-get); the guest has no way to reach either. With
 * nothing armed the device pays one test of c->fault.armed on receive,
 * transmit and completion.
 *
 * A FATAL code is injected by making its cause happen: the frame that a
 * peer would have sent to cause it goes through the receive path, which
 * then reacts exactly as PG332 says (NAK, status queue entry, STATQPi,
 * error buffer, interrupt, flush). Only codes whose cause is local, or
 * whose cause needs state the QP does not have, are raised directly.
 *
 * Injection state is host configuration, not machine state: it is not
 * migrated and a device reset leaves it armed.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/keyval.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "qobject/qdict.h"
#include "qapi/visitor.h"
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

static const char *const ernic_fault_count_names[ERNIC_FAULT_NCOUNT] = {
    [ERNIC_FC_FATAL] = "fatal",
    [ERNIC_FC_FATAL_DIRECT] = "fatal-direct",
    [ERNIC_FC_CQE_ERROR] = "cqe-error",
    [ERNIC_FC_NAK] = "nak",
    [ERNIC_FC_DROP] = "drop",
    [ERNIC_FC_DUP] = "dup",
    [ERNIC_FC_REORDER] = "reorder",
    [ERNIC_FC_DELAY] = "delay",
    [ERNIC_FC_CORRUPT] = "corrupt",
    [ERNIC_FC_LINK_DOWN] = "link-down",
    [ERNIC_FC_LINK_UP] = "link-up",
};

static const char *const ernic_fault_act_names[ERNIC_FA_N] = {
    [ERNIC_FA_DROP] = "drop",
    [ERNIC_FA_DUP] = "dup",
    [ERNIC_FA_REORDER] = "reorder",
    [ERNIC_FA_DELAY] = "delay",
    [ERNIC_FA_CORRUPT] = "corrupt",
    [ERNIC_FA_NAK] = "nak",
};

static const char *const ernic_fault_field_names[ERNIC_FF_N] = {
    [ERNIC_FF_ICRC] = "icrc",
    [ERNIC_FF_PSN] = "psn",
    [ERNIC_FF_OPCODE] = "opcode",
    [ERNIC_FF_DQPN] = "dqpn",
    [ERNIC_FF_BYTE] = "byte",
};

static void ernic_fault_rearm(ErnicCore *c)
{
    bool armed = c->fault.nrules || !g_queue_is_empty(&c->fault.held);
    uint32_t q;

    for (q = 1; q <= c->num_qp && !armed; q++) {
        armed = c->qp[q].fault_cqe_left;
    }
    c->fault.armed = armed;
}

/* Where a frame goes when the fault lets it through. */
static void ernic_fault_out(ErnicCore *c, uint8_t dir, uint32_t qpn,
                            const uint8_t *buf, size_t len)
{
    if (dir == ERNIC_FAULT_RX && c->fault.rx_defer) {
        ernic_net_defer(c, buf, len);   /* looped back: never nested */
    } else if (dir == ERNIC_FAULT_RX) {
        ernic_net_take(c, buf, len);
    } else {
        ernic_net_put(c, buf, len);
    }
}

static gint ernic_fault_by_due(gconstpointer a, gconstpointer b,
                               gpointer unused)
{
    const ErnicFaultFrame *x = a, *y = b;

    return x->due < y->due ? -1 : x->due > y->due;
}

static void ernic_fault_hold(ErnicCore *c, uint8_t dir, uint32_t qpn,
                             const uint8_t *buf, size_t len, int64_t delay,
                             bool reorder)
{
    ErnicFaultFrame *h;

    if (g_queue_get_length(&c->fault.held) >= ERNIC_FAULT_HELD_MAX ||
        c->fault.held_bytes + len > ERNIC_FAULT_HELD_BYTES) {
        /* Bounded: past it, frames pass undelayed. */
        ernic_fault_out(c, dir, qpn, buf, len);
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
    g_queue_insert_sorted(&c->fault.held, h, ernic_fault_by_due, NULL);
    timer_mod(c->fault.timer,
              ((ErnicFaultFrame *)g_queue_peek_head(&c->fault.held))->due);
    c->fault.armed = true;
}

/*
 * Release held frames: those due by @now, or reordered ones of @dir. They
 * are taken off the queue before any is passed on, as passing one on may
 * hold or release others (a received frame answered at once).
 */
static void ernic_fault_release(ErnicCore *c, int64_t now, uint8_t dir)
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
        ernic_fault_out(c, h->dir, h->qpn, h->data, h->len);
        g_free(h);
    }
    h = g_queue_peek_head(&c->fault.held);
    if (h) {
        timer_mod(c->fault.timer, h->due);
    } else {
        timer_del(c->fault.timer);
    }
    ernic_fault_rearm(c);
}

static void ernic_fault_timer(void *opaque)
{
    ErnicCore *c = opaque;
    bool entered = ernic_timer_enter(c);

    ernic_fault_release(c, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), 0);
    ernic_timer_exit(c, entered);
}

static bool ernic_fault_has_reorder(ErnicCore *c, uint8_t dir)
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
static uint32_t ernic_fault_rand(ErnicFaultRule *r)
{
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return (r->rng * 0x2545f4914f6cdd1dULL) >> 32;
}

static bool ernic_fault_hits(ErnicFaultRule *r, uint8_t dir, uint32_t qpn,
                             const ErnicPkt *pkt)
{
    if (!(r->dirs & dir) || !r->left ||
        (r->qpn >= 0 && (uint32_t)r->qpn != qpn) ||
        (r->opcode >= 0 && r->opcode != pkt->opcode) ||
        (r->act == ERNIC_FA_NAK && !(pkt->flags & ERNIC_OPF_RESP))) {
        return false;
    }
    if (r->percent < 100 && ernic_fault_rand(r) % 100 >= r->percent) {
        return false;
    }
    if (r->left != UINT32_MAX) {
        r->left--;
    }
    return true;
}

/* Damage one field; the ICRC is made valid again unless it is the field. */
static void ernic_fault_corrupt(const ErnicFaultRule *r, uint8_t *f,
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
             ernic_icrc(f, pkt->l3, pkt->len, pkt->ipv6));
}

void ernic_fault_peer_path(ErnicCore *c, uint32_t qpn, ErnicPath *p)
{
    uint8_t mac[6], ip[16];

    ernic_qp_path(c, qpn, p);
    memcpy(mac, p->src_mac, 6);
    memcpy(p->src_mac, p->dst_mac, 6);
    memcpy(p->dst_mac, mac, 6);
    memcpy(ip, p->src_ip, 16);
    memcpy(p->src_ip, p->dst_ip, 16);
    memcpy(p->dst_ip, ip, 16);
    p->dqpn = qpn;
}

/*
 * The response @pkt to QP @qpn, replaced by a NAK of the rule's syndrome
 * for the same PSN and MSN, as the peer would have sent it.
 */
static size_t ernic_fault_nak_frame(ErnicCore *c, uint32_t qpn,
                                    const ErnicPkt *pkt, uint8_t syndrome,
                                    uint8_t *f)
{
    ErnicPath p;
    size_t end;

    ernic_fault_peer_path(c, qpn, &p);
    end = ernic_wire_build(f, &p, IB_OPC_ACK, pkt->psn, false,
                           ERNIC_AETH_LEN, 0);
    ernic_wire_put_aeth(f + end, syndrome, pkt->msn);
    trace_ernic_fault_nak(qpn, syndrome, pkt->psn);
    return ernic_wire_finish(f, end + ERNIC_AETH_LEN, 0, p.ipv6);
}

/* Apply rule @r to a frame it hit. */
static void ernic_fault_apply(ErnicCore *c, ErnicFaultRule *r, uint8_t dir,
                              uint32_t qpn, const ErnicPkt *pkt)
{
    /*
     * A copy of its own: passing a frame on may run the engine, which
     * may send, and a rule may hit that frame too.
     */
    g_autofree uint8_t *f = g_malloc(MAX(pkt->len, ERNIC_MAX_HDR_LEN +
                                         ERNIC_AETH_LEN + ERNIC_ICRC_LEN));
    size_t len;

    trace_ernic_fault_wire(ernic_fault_act_names[r->act],
                           dir == ERNIC_FAULT_RX ? "rx" : "tx", qpn,
                           pkt->opcode, pkt->psn);
    switch (r->act) {
    case ERNIC_FA_DROP:
        c->fault.count[ERNIC_FC_DROP]++;
        return;
    case ERNIC_FA_DUP:
        c->fault.count[ERNIC_FC_DUP]++;
        memcpy(f, pkt->frame, pkt->len);
        ernic_fault_out(c, dir, qpn, f, pkt->len);
        ernic_fault_out(c, dir, qpn, f, pkt->len);
        return;
    case ERNIC_FA_DELAY:
        c->fault.count[ERNIC_FC_DELAY]++;
        ernic_fault_hold(c, dir, qpn, pkt->frame, pkt->len, r->delay_ns,
                         false);
        return;
    case ERNIC_FA_REORDER:
        c->fault.count[ERNIC_FC_REORDER]++;
        ernic_fault_hold(c, dir, qpn, pkt->frame, pkt->len,
                         ERNIC_FAULT_REORDER_NS, true);
        return;
    case ERNIC_FA_CORRUPT:
        c->fault.count[ERNIC_FC_CORRUPT]++;
        memcpy(f, pkt->frame, pkt->len);
        ernic_fault_corrupt(r, f, pkt);
        ernic_fault_out(c, dir, qpn, f, pkt->len);
        return;
    case ERNIC_FA_NAK:
        c->fault.count[ERNIC_FC_NAK]++;
        len = ernic_fault_nak_frame(c, qpn, pkt, r->syndrome, f);
        ernic_fault_out(c, dir, qpn, f, len);
        return;
    default:
        g_assert_not_reached();
    }
}

/*
 * A frame in direction @dir (for TX, of local QP @qpn); true when a rule
 * took it (it is then dropped, held or passed on by this function).
 */
static bool ernic_fault_frame(ErnicCore *c, uint8_t dir, uint32_t qpn,
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

        if (ernic_fault_hits(r, dir, qpn, &pkt)) {
            ErnicFaultRule hit = *r;

            if (!r->left) {
                /* Spent: its place is free before the frame moves on. */
                memmove(r, r + 1, (--c->fault.nrules - i) * sizeof(*r));
                ernic_fault_rearm(c);
            }
            ernic_fault_apply(c, &hit, dir, qpn, &pkt);
            return true;
        }
    }
    if (ernic_fault_has_reorder(c, dir)) {
        /* This frame overtakes the held one. */
        ernic_fault_out(c, dir, qpn, buf, len);
        ernic_fault_release(c, INT64_MIN, dir);
        return true;
    }
    return false;
}

bool ernic_fault_rx(ErnicCore *c, const uint8_t *buf, size_t len)
{
    return ernic_fault_frame(c, ERNIC_FAULT_RX, 0, buf, len);
}

bool ernic_fault_tx(ErnicCore *c, uint32_t qpn, const uint8_t *buf,
                    size_t len)
{
    return ernic_fault_frame(c, ERNIC_FAULT_TX, qpn, buf, len);
}

/*
 * A frame to the device's own MAC arrives without the wire: it meets the
 * receive rules here, and what passes is delivered from the loopback
 * bottom half, as every looped-back frame is.
 */
bool ernic_fault_loop(ErnicCore *c, const uint8_t *buf, size_t len)
{
    bool taken;

    c->fault.rx_defer = true;
    taken = ernic_fault_frame(c, ERNIC_FAULT_RX, 0, buf, len);
    c->fault.rx_defer = false;
    return taken;
}

bool ernic_fault_cqe_error(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];

    if (!qp->fault_cqe_left) {
        return false;
    }
    qp->fault_cqe_left--;
    c->fault.count[ERNIC_FC_CQE_ERROR]++;
    trace_ernic_fault_cqe(qpn, qp->fault_cqe_left);
    ernic_fault_rearm(c);
    return true;
}

void ernic_fault_link(ErnicCore *c, bool up)
{
    c->fault.count[up ? ERNIC_FC_LINK_UP : ERNIC_FC_LINK_DOWN]++;
}

/*
 * Commands (keyval syntax, as -device: "drop,dir=rx,count=3")
 */

bool ernic_fault_u64(QDict *d, const char *key, uint64_t def, uint64_t max,
                     uint64_t *v, Error **errp)
{
    const char *s = qdict_get_try_str(d, key);

    *v = def;
    if (!s) {
        return true;
    }
    if (qemu_strtou64(s, NULL, 0, v) || *v > max) {
        error_setg(errp, "ernic fault: %s=%s: expected a number up to "
                   "%" PRIu64, key, s, max);
        return false;
    }
    qdict_del(d, key);
    return true;
}

static int ernic_fault_name(const char *const *names, int n, const char *s)
{
    int i;

    for (i = 0; i < n; i++) {
        if (names[i] && !strcmp(names[i], s)) {
            return i;
        }
    }
    return -1;
}

/* The QP a command names: an RC QP (2..num-qp) that is enabled. */
bool ernic_fault_qp(ErnicCore *c, QDict *d, bool need_enabled,
                    uint32_t *qpn, Error **errp)
{
    uint64_t v;

    if (!qdict_haskey(d, "qp")) {
        error_setg(errp, "ernic fault: qp= is required");
        return false;
    }
    if (!ernic_fault_u64(d, "qp", 0, c->num_qp, &v, errp)) {
        return false;
    }
    if (v < 2) {
        error_setg(errp, "ernic fault: qp=%" PRIu64 ": an RC QP is 2..%u",
                   v, c->num_qp);
        return false;
    }
    if (need_enabled && ernic_qp_state(c, v) != ERNIC_QPS_ENABLED) {
        error_setg(errp, "ernic fault: QP%" PRIu64 " is not in service: "
                   "disabled, FATAL or under recovery (QPCONFi, STATQPi)",
                   v);
        return false;
    }
    *qpn = v;
    return true;
}

bool ernic_fault_no_more(QDict *d, Error **errp)
{
    const QDictEntry *e = qdict_first(d);

    if (e) {
        error_setg(errp, "ernic fault: unknown parameter '%s'",
                   qdict_entry_key(e));
        return false;
    }
    return true;
}

static const struct {
    const char *name;
    uint8_t syndrome;
} ernic_fault_naks[] = {
    { "rnr", IB_AETH_RNR_NAK },
    { "psn-seq", IB_NAK_PSN_SEQ },
    { "invalid", IB_NAK_INVALID_REQ },
    { "remote-access", IB_NAK_REMOTE_ACCESS },
    { "remote-op", IB_NAK_REMOTE_OP },
};

static bool ernic_fault_nak_type(ErnicFaultRule *r, QDict *d, Error **errp)
{
    const char *t = qdict_get_try_str(d, "type");
    uint64_t timer;
    size_t i;

    for (i = 0; t && i < ARRAY_SIZE(ernic_fault_naks); i++) {
        if (!strcmp(t, ernic_fault_naks[i].name)) {
            break;
        }
    }
    if (!t || i == ARRAY_SIZE(ernic_fault_naks)) {
        error_setg(errp, "ernic fault: nak needs type=rnr, psn-seq, "
                   "invalid, remote-access or remote-op");
        return false;
    }
    qdict_del(d, "type");
    /* RNR: the timer field of the AETH (IBTA Table 45), 1 = 0.01 ms. */
    if (!ernic_fault_u64(d, "rnr-timer", 1, 31, &timer, errp)) {
        return false;
    }
    r->syndrome = ernic_fault_naks[i].syndrome |
                  (ernic_fault_naks[i].syndrome == IB_AETH_RNR_NAK ? timer :
                   0);
    return true;
}

static bool ernic_fault_corrupt_field(ErnicFaultRule *r, QDict *d,
                                      Error **errp)
{
    const char *s = qdict_get_try_str(d, "field");
    uint64_t v;
    int f = s ? ernic_fault_name(ernic_fault_field_names, ERNIC_FF_N, s)
              : ERNIC_FF_ICRC;

    if (f < 0) {
        error_setg(errp, "ernic fault: field=%s: expected icrc, psn, "
                   "opcode, dqpn or byte", s);
        return false;
    }
    qdict_del(d, "field");
    r->field = f;
    if (!ernic_fault_u64(d, "offset", 0, ERNIC_MAX_FRAME - 1, &v, errp)) {
        return false;
    }
    r->offset = v;
    if (!ernic_fault_u64(d, "xor", f == ERNIC_FF_ICRC ? 0xffffffff :
                         f == ERNIC_FF_BYTE ? 0xff : 1, UINT32_MAX, &v,
                         errp)) {
        return false;
    }
    if (!v) {
        error_setg(errp, "ernic fault: xor=0 changes nothing");
        return false;
    }
    r->xor = v;
    return true;
}

/* drop|dup|reorder|delay|corrupt|nak: a rule on the frames that match. */
static bool ernic_fault_add_rule(ErnicCore *c, ErnicFaultAct act, QDict *d,
                                 Error **errp)
{
    ErnicFaultRule r = { .act = act, .qpn = -1, .opcode = -1 };
    const char *dir = qdict_get_try_str(d, "dir");
    uint64_t v, count, pct;

    if (c->fault.nrules == ERNIC_FAULT_RULES) {
        error_setg(errp, "ernic fault: %d rules armed already ('clear' "
                   "removes them)", ERNIC_FAULT_RULES);
        return false;
    }
    if (act == ERNIC_FA_NAK) {
        uint32_t qpn;

        if (!ernic_fault_qp(c, d, false, &qpn, errp) ||
            !ernic_fault_nak_type(&r, d, errp)) {
            return false;
        }
        r.qpn = qpn;
        r.dirs = ERNIC_FAULT_RX;
    } else {
        r.dirs = !dir || !strcmp(dir, "both") ?
                 ERNIC_FAULT_RX | ERNIC_FAULT_TX :
                 !strcmp(dir, "rx") ? ERNIC_FAULT_RX :
                 !strcmp(dir, "tx") ? ERNIC_FAULT_TX : 0;
        if (!r.dirs) {
            error_setg(errp, "ernic fault: dir=%s: expected rx, tx or both",
                       dir);
            return false;
        }
        qdict_del(d, "dir");
        if (qdict_haskey(d, "qp")) {
            if (!ernic_fault_u64(d, "qp", 0, c->num_qp, &v, errp)) {
                return false;
            }
            r.qpn = v;
        }
    }
    if (qdict_haskey(d, "opcode")) {
        if (!ernic_fault_u64(d, "opcode", 0, 0xff, &v, errp)) {
            return false;
        }
        r.opcode = v;
    }
    if (!ernic_fault_u64(d, "percent", 100, 100, &pct, errp) ||
        !ernic_fault_u64(d, "count", pct < 100 ? 0 : 1, UINT32_MAX - 1,
                         &count, errp) ||
        !ernic_fault_u64(d, "seed", 1, UINT64_MAX, &v, errp)) {
        return false;
    }
    r.percent = pct;
    r.left = count ? count : UINT32_MAX;
    r.rng = v ? v : 1;
    if (act == ERNIC_FA_DELAY) {
        if (!ernic_fault_u64(d, "delay-us", 1000, 10 * 1000 * 1000, &v,
                             errp)) {
            return false;
        }
        r.delay_ns = v * SCALE_US;
    }
    if (act == ERNIC_FA_CORRUPT && !ernic_fault_corrupt_field(&r, d, errp)) {
        return false;
    }
    if (!ernic_fault_no_more(d, errp)) {
        return false;
    }
    c->fault.rule[c->fault.nrules++] = r;
    c->fault.armed = true;
    trace_ernic_fault_rule(ernic_fault_act_names[act], r.dirs, r.qpn,
                           r.opcode, r.left, r.percent);
    return true;
}

static bool ernic_fault_cqe_cmd(ErnicCore *c, QDict *d, Error **errp)
{
    uint32_t qpn;
    uint64_t count;

    if (!ernic_fault_qp(c, d, false, &qpn, errp) ||
        !ernic_fault_u64(d, "count", 1, 65536, &count, errp) ||
        !ernic_fault_no_more(d, errp)) {
        return false;
    }
    c->qp[qpn].fault_cqe_left = count;
    ernic_fault_rearm(c);
    return true;
}

static void ernic_fault_clear(ErnicCore *c)
{
    uint32_t q;

    c->fault.nrules = 0;
    for (q = 0; q <= c->num_qp; q++) {
        c->qp[q].fault_cqe_left = 0;
    }
    /* What was held goes on now, as if the wire had been mended. */
    ernic_fault_release(c, INT64_MAX, 0);
}

void ernic_fault_command(ErnicCore *c, const char *cmd, Error **errp)
{
    g_autoptr(QDict) d = NULL;
    const char *what;
    int act;

    if (!ernic_core_may_run()) {
        error_setg(errp, "ernic fault: the VM is not running");
        return;
    }
    d = keyval_parse(cmd, "cmd", NULL, errp);
    if (!d) {
        return;
    }
    what = qdict_get_try_str(d, "cmd");
    if (!what) {
        error_setg(errp, "ernic fault: no command (fatal, cqe-error, nak, "
                   "drop, dup, reorder, delay, corrupt, clear)");
        return;
    }
    what = g_strdup(what);
    qdict_del(d, "cmd");
    act = ernic_fault_name(ernic_fault_act_names, ERNIC_FA_N, what);
    if (!strcmp(what, "fatal")) {
        ernic_fault_fatal_cmd(c, d, errp);
    } else if (!strcmp(what, "cqe-error")) {
        ernic_fault_cqe_cmd(c, d, errp);
    } else if (!strcmp(what, "clear")) {
        if (ernic_fault_no_more(d, errp)) {
            ernic_fault_clear(c);
        }
    } else if (act >= 0) {
        ernic_fault_add_rule(c, act, d, errp);
    } else {
        error_setg(errp, "ernic fault: unknown command '%s'", what);
    }
    g_free((char *)what);
}

/* What is armed, for qom-get of "fault". */
char *ernic_fault_describe(ErnicCore *c)
{
    GString *s = g_string_new("");
    uint32_t i, q;

    for (i = 0; i < c->fault.nrules; i++) {
        const ErnicFaultRule *r = &c->fault.rule[i];

        g_string_append_printf(s, "%s%s,dir=%s", s->len ? "; " : "",
                               ernic_fault_act_names[r->act],
                               r->dirs == ERNIC_FAULT_RX ? "rx" :
                               r->dirs == ERNIC_FAULT_TX ? "tx" : "both");
        if (r->qpn >= 0) {
            g_string_append_printf(s, ",qp=%d", r->qpn);
        }
        if (r->opcode >= 0) {
            g_string_append_printf(s, ",opcode=0x%02x", r->opcode);
        }
        if (r->left != UINT32_MAX) {
            g_string_append_printf(s, ",left=%u", r->left);
        }
        if (r->percent < 100) {
            g_string_append_printf(s, ",percent=%u", r->percent);
        }
    }
    for (q = 2; q <= c->num_qp; q++) {
        if (c->qp[q].fault_cqe_left) {
            g_string_append_printf(s, "%scqe-error,qp=%u,left=%u",
                                   s->len ? "; " : "", q,
                                   c->qp[q].fault_cqe_left);
        }
    }
    if (!g_queue_is_empty(&c->fault.held)) {
        g_string_append_printf(s, "%sheld frames: %u", s->len ? "; " : "",
                               g_queue_get_length(&c->fault.held));
    }
    return g_string_free(s, false);
}

/* The counters, for qom-get of "fault-stats": an object of integers. */
void ernic_fault_visit_stats(ErnicCore *c, Visitor *v, const char *name,
                             Error **errp)
{
    int i;

    if (!visit_start_struct(v, name, NULL, 0, errp)) {
        return;
    }
    for (i = 0; i < ERNIC_FAULT_NCOUNT; i++) {
        if (!visit_type_uint64(v, ernic_fault_count_names[i],
                               &c->fault.count[i], errp)) {
            break;
        }
    }
    if (i == ERNIC_FAULT_NCOUNT) {
        visit_check_struct(v, errp);
    }
    visit_end_struct(v, NULL);
}

void ernic_fault_realize(ErnicCore *c)
{
    g_queue_init(&c->fault.held);
    c->fault.timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, ernic_fault_timer, c);
}

void ernic_fault_unrealize(ErnicCore *c)
{
    timer_free(c->fault.timer);
    g_queue_clear_full(&c->fault.held, g_free);
}
