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
    [ERNIC_FC_MAP_REFUSE] = "map-refuse",
};

static const char *const ernic_fault_field_names[ERNIC_FF_N] = {
    [ERNIC_FF_ICRC] = "icrc",
    [ERNIC_FF_PSN] = "psn",
    [ERNIC_FF_OPCODE] = "opcode",
    [ERNIC_FF_DQPN] = "dqpn",
    [ERNIC_FF_BYTE] = "byte",
};

/*
 * Commands (keyval syntax, as -device: "drop,dir=rx,count=3")
 */

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
    if (!ernic_fault_args_u64(d, "rnr-timer", 1, 31, &timer, errp)) {
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
    if (!ernic_fault_args_u64(d, "offset", 0, ERNIC_MAX_FRAME - 1, &v, errp)) {
        return false;
    }
    r->offset = v;
    if (!ernic_fault_args_u64(d, "xor", f == ERNIC_FF_ICRC ? 0xffffffff :
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
/* Which frames a rule hits: direction and QP (a NAK: responses to one). */
static bool ernic_fault_rule_target(ErnicCore *c, ErnicFaultRule *r,
                                    QDict *d, Error **errp)
{
    const char *dir = qdict_get_try_str(d, "dir");
    uint32_t qpn;
    uint64_t v;

    if (r->act == ERNIC_FA_NAK) {
        if (!ernic_fault_args_qp(c, d, false, &qpn, errp) ||
            !ernic_fault_nak_type(r, d, errp)) {
            return false;
        }
        r->qpn = qpn;
        r->dirs = ERNIC_FAULT_RX;
        return true;
    }
    r->dirs = !dir || !strcmp(dir, "both") ?
              ERNIC_FAULT_RX | ERNIC_FAULT_TX :
              !strcmp(dir, "rx") ? ERNIC_FAULT_RX :
              !strcmp(dir, "tx") ? ERNIC_FAULT_TX : 0;
    if (!r->dirs) {
        error_setg(errp, "ernic fault: dir=%s: expected rx, tx or both",
                   dir);
        return false;
    }
    qdict_del(d, "dir");
    if (qdict_haskey(d, "qp")) {
        if (!ernic_fault_args_u64(d, "qp", 0, c->num_qp, &v, errp)) {
            return false;
        }
        r->qpn = v;
    }
    return true;
}

/* How often a rule hits: opcode, percent, count, seed, and its delay. */
static bool ernic_fault_rule_rate(ErnicFaultRule *r, QDict *d, Error **errp)
{
    uint64_t v, count, pct;

    if (qdict_haskey(d, "opcode")) {
        if (!ernic_fault_args_u64(d, "opcode", 0, 0xff, &v, errp)) {
            return false;
        }
        r->opcode = v;
    }
    if (!ernic_fault_args_u64(d, "percent", 100, 100, &pct, errp) ||
        !ernic_fault_args_u64(d, "count", pct < 100 ? 0 : 1, UINT32_MAX - 1,
                              &count, errp) ||
        !ernic_fault_args_u64(d, "seed", 1, UINT64_MAX, &v, errp)) {
        return false;
    }
    r->percent = pct;
    r->left = count ? count : UINT32_MAX;
    r->rng = v ? v : 1;
    if (r->act == ERNIC_FA_DELAY) {
        if (!ernic_fault_args_u64(d, "delay-us", 1000, 10 * 1000 * 1000, &v,
                                  errp)) {
            return false;
        }
        r->delay_ns = v * SCALE_US;
    }
    return true;
}

static bool ernic_fault_add_rule(ErnicCore *c, ErnicFaultAct act, QDict *d,
                                 Error **errp)
{
    ErnicFaultRule r = { .act = act, .qpn = -1, .opcode = -1 };

    if (c->fault.nrules == ERNIC_FAULT_RULES) {
        error_setg(errp, "ernic fault: %d rules armed already ('clear' "
                   "removes them)", ERNIC_FAULT_RULES);
        return false;
    }
    if (!ernic_fault_rule_target(c, &r, d, errp) ||
        !ernic_fault_rule_rate(&r, d, errp) ||
        (act == ERNIC_FA_CORRUPT && !ernic_fault_corrupt_field(&r, d, errp)) ||
        !ernic_fault_args_end(d, errp)) {
        return false;
    }
    c->fault.rule[c->fault.nrules++] = r;
    c->fault.armed = true;
    trace_ernic_fault_rule(ernic_link_fault_acts[act], r.dirs, r.qpn,
                           r.opcode, r.left, r.percent);
    return true;
}

static bool ernic_fault_cqe_cmd(ErnicCore *c, QDict *d, Error **errp)
{
    uint32_t qpn;
    uint64_t count;

    if (!ernic_fault_args_qp(c, d, false, &qpn, errp) ||
        !ernic_fault_args_u64(d, "count", 1, 65536, &count, errp) ||
        !ernic_fault_args_end(d, errp)) {
        return false;
    }
    c->qp[qpn].fault_cqe_left = count;
    ernic_link_fault_rearm(c);
    return true;
}

/*
 * Payload mappings refused (docs/engine.md, "Payload in place"): after
 * @skip more succeed, the next @count runs are copied instead.
 */
static bool ernic_fault_map_cmd(ErnicCore *c, QDict *d, Error **errp)
{
    uint64_t count, skip;

    if (!ernic_fault_args_u64(d, "count", 1, 65536, &count, errp) ||
        !ernic_fault_args_u64(d, "skip", 0, 65536, &skip, errp) ||
        !ernic_fault_args_end(d, errp)) {
        return false;
    }
    c->fault.map_skip = skip;
    c->fault.map_refuse = count;
    return true;
}

static void ernic_fault_clear(ErnicCore *c)
{
    uint32_t q;

    c->fault.nrules = 0;
    c->fault.map_skip = c->fault.map_refuse = 0;
    for (q = 0; q <= c->num_qp; q++) {
        c->qp[q].fault_cqe_left = 0;
    }
    /* What was held goes on now, as if the wire had been mended. */
    ernic_link_fault_flush(c);
}

void ernic_fault_command(ErnicCore *c, const char *cmd, Error **errp)
{
    g_autoptr(QDict) d = NULL;
    const char *what;
    int act;

    if (!ernic_may_run()) {
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
                   "drop, dup, reorder, delay, corrupt, map-refuse, "
                   "clear)");
        return;
    }
    what = g_strdup(what);
    qdict_del(d, "cmd");
    act = ernic_fault_name(ernic_link_fault_acts, ERNIC_FA_N, what);
    if (!strcmp(what, "fatal")) {
        ernic_fault_fatal_cmd(c, d, errp);
    } else if (!strcmp(what, "cqe-error")) {
        ernic_fault_cqe_cmd(c, d, errp);
    } else if (!strcmp(what, "map-refuse")) {
        ernic_fault_map_cmd(c, d, errp);
    } else if (!strcmp(what, "clear")) {
        if (ernic_fault_args_end(d, errp)) {
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
                               ernic_link_fault_acts[r->act],
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
    if (c->fault.map_refuse) {
        g_string_append_printf(s, "%smap-refuse,skip=%u,left=%u",
                               s->len ? "; " : "", c->fault.map_skip,
                               c->fault.map_refuse);
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
