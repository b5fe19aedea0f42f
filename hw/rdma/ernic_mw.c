/*
 * ERNIC-X memory windows (docs/extension.md, "Memory windows"): IBTA
 * 10.6.7's type 1 and type 2 windows, entries of the extended MR table
 * that a BIND WQE narrows to part of a region with MW bind access. A
 * bound window is an entry like any other for the R_Keys that name it
 * (ernic_mr.c); it is never an L_Key. When its region changes or goes,
 * every window bound to it becomes invalid at once, so that no window
 * outlives the translation it copied.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

/* Entry @idx of the extended table, or NULL past its end. */
static ErnicExtMr *ernic_mw_entry(ErnicCore *c, uint32_t idx)
{
    return c->mrt && idx < c->mr_entries ? &c->mrt[idx] : NULL;
}

static uint32_t ernic_mw_pd(ErnicCore *c, uint32_t qpn)
{
    return ernic_qp_reg(c, qpn, ERNIC_PD) & 0xffffff;
}

/*
 * Entry @idx is about to change or go: the windows bound to it are
 * unbound. Only a region with MW bind access has any (ernic_mw_region()),
 * so the others, every FRWR region of a storage ULP among them, skip the
 * scan of the whole table: 2.6 us at 8192 entries, 22 us at 65536.
 */
void ernic_mw_region_changes(ErnicCore *c, uint32_t idx)
{
    if (!c->mrt || idx >= c->mr_entries ||
        !(c->mrt[idx].acc & ERNIC_MRACC_MW_BIND)) {
        return;
    }
    for (uint32_t i = 0; i < c->mr_entries; i++) {
        ErnicExtMr *w = &c->mrt[i];

        if (w->parent == idx + 1) {
            trace_ernic_mw_unbound(i, idx);
            w->state = ERNIC_MR_INVALID;
            w->parent = 0;
        }
    }
}

/*
 * The region a bind names: valid, a region (not a window) of the QP's
 * PD with MW bind access and the key's byte, holding [va, va + len), and
 * with local write if the window gives remote write or atomics (IBTA
 * C10-72). NULL if not.
 */
static const ErnicExtMr *ernic_mw_region(ErnicCore *c, uint32_t qpn,
                                         uint32_t lkey, uint64_t va,
                                         uint64_t len, uint32_t acc)
{
    const ErnicExtMr *p = ernic_mw_entry(c, lkey >> 8);

    if (!p || p->state != ERNIC_MR_VALID || (p->acc & ERNIC_MRACC_MW) ||
        !(p->acc & ERNIC_MRACC_MW_BIND) || p->key != (lkey & 0xff) ||
        p->pd != ernic_mw_pd(c, qpn) || va < p->iova ||
        va - p->iova > p->len || len > p->len - (va - p->iova)) {
        return NULL;
    }
    if ((acc & (ERNIC_MRACC_REMOTE_WRITE | ERNIC_MRACC_REMOTE_ATOMIC)) &&
        !(p->acc & ERNIC_MRACC_LOCAL_WRITE)) {
        return NULL;
    }
    return p;
}

/*
 * Window @w takes the part [va, va + len) of region @p: the same pages,
 * narrowed, so that ernic_mr.c translates it as any entry. A physical
 * region's base moves by the offset; a page list's start moves to the
 * page that holds va.
 */
static void ernic_mw_narrow(ErnicExtMr *w, const ErnicExtMr *p, uint64_t va,
                            uint64_t len)
{
    uint64_t mask = (1ull << p->shift) - 1, first;

    w->iova = va;
    w->len = len;
    w->shift = p->shift;
    if (p->acc & ERNIC_MRACC_PHYS) {
        w->pbl = p->pbl + (va - p->iova);
        w->npages = p->npages;
        return;
    }
    first = ((va - p->iova) + (p->iova & mask)) >> p->shift;
    w->pbl = p->pbl + first * 8;
    w->npages = p->npages - first;
}

/*
 * A BIND WQE (docs/extension.md): window @e->rkey of the QP's PD, of
 * type 2 only while invalid, takes its part of a region. A type 1 bind
 * of length 0 unbinds. False, the window unchanged, when a check fails.
 */
bool ernic_mw_bind(ErnicCore *c, uint32_t qpn, const ErnicOsq *e)
{
    ErnicExtMr *w = ernic_mw_entry(c, e->rkey >> 8);
    uint64_t len = ldq_le_p(&e->sdata[ERNIC_WQE_BIND_LEN - ERNIC_WQE_SDATA]);
    uint32_t lkey = ldl_le_p(&e->sdata[ERNIC_WQE_BIND_LKEY - ERNIC_WQE_SDATA]);
    uint32_t acc = ldl_le_p(&e->sdata[ERNIC_WQE_BIND_ACC - ERNIC_WQE_SDATA]) &
                   (ERNIC_MRACC_REMOTE_READ | ERNIC_MRACC_REMOTE_WRITE |
                    ERNIC_MRACC_REMOTE_ATOMIC);
    bool type2;
    const ErnicExtMr *p;

    if (!w || !(w->acc & ERNIC_MRACC_MW) || w->pd != ernic_mw_pd(c, qpn) ||
        w->state == ERNIC_MR_FREE) {
        return false;
    }
    type2 = w->acc & ERNIC_MRACC_MW_TYPE2;
    if (type2 && w->state != ERNIC_MR_INVALID) {
        return false;                   /* IBTA C10-75: bound once */
    }
    trace_ernic_mw_bind(qpn, e->rkey, e->raddr, len, lkey, acc);
    if (!len && !type2) {
        w->state = ERNIC_MR_INVALID;
        w->key = e->rkey & 0xff;
        w->parent = 0;
        return true;
    }
    p = ernic_mw_region(c, qpn, lkey, e->raddr, len, acc);
    if (!p) {
        return false;
    }
    ernic_mw_narrow(w, p, e->raddr, len);
    w->acc = (w->acc & (ERNIC_MRACC_MW | ERNIC_MRACC_MW_TYPE2)) | acc |
             (p->acc & (ERNIC_MRACC_PHYS | ERNIC_MRACC_SHIFT_MASK));
    w->key = e->rkey & 0xff;
    w->parent = (p - c->mrt) + 1;
    w->state = ERNIC_MR_VALID;
    return true;
}

/*
 * LOCAL_INV or SEND with Invalidate naming a window: only a bound type 2
 * window of the QP's PD with the key's byte (IBTA 10.6.7.2.4: a type 1
 * window is unbound by a bind of length 0, not invalidated). True if it
 * was invalidated.
 */
bool ernic_mw_invalidate(ErnicCore *c, uint32_t qpn, uint32_t rkey)
{
    ErnicExtMr *w = ernic_mw_entry(c, rkey >> 8);

    if (!w || !(w->acc & ERNIC_MRACC_MW) ||
        !(w->acc & ERNIC_MRACC_MW_TYPE2) || w->state != ERNIC_MR_VALID ||
        w->key != (rkey & 0xff) || w->pd != ernic_mw_pd(c, qpn)) {
        return false;
    }
    trace_ernic_mw_invalidate(qpn, rkey);
    w->state = ERNIC_MR_INVALID;
    w->parent = 0;
    return true;
}
