/*
 * ERNIC fault injection: the arguments of a command (keyval syntax, as
 * -device: "drop,dir=rx,count=3"), shared by the wire fault commands
 * (ernic_fault.c) and the FATAL ones (ernic_fault_fatal.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qapi/error.h"
#include "qobject/qdict.h"
#include "ernic_core.h"

/* @key as a number up to @max (@def when absent), taken off @d. */
bool ernic_fault_args_u64(QDict *d, const char *key, uint64_t def, uint64_t max,
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

/* The QP a command names: an RC QP (2..num-qp) that is enabled. */
bool ernic_fault_args_qp(ErnicCore *c, QDict *d, bool need_enabled,
                         uint32_t *qpn, Error **errp)
{
    uint64_t v;

    if (!qdict_haskey(d, "qp")) {
        error_setg(errp, "ernic fault: qp= is required");
        return false;
    }
    if (!ernic_fault_args_u64(d, "qp", 0, c->num_qp, &v, errp)) {
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

/* Every argument of @d was taken: none is unknown. */
bool ernic_fault_args_end(QDict *d, Error **errp)
{
    const QDictEntry *e = qdict_first(d);

    if (e) {
        error_setg(errp, "ernic fault: unknown parameter '%s'",
                   qdict_entry_key(e));
        return false;
    }
    return true;
}
