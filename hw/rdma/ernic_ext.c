/*
 * ERNIC-X, the verbs extension (docs/extension.md): its global registers
 * and the extended MR table behind the MR command window. None of it is
 * PG332; without the ext property it does not decode at all.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

bool ernic_ext_on(ErnicCore *c, uint32_t feature)
{
    return c->mrt && (c->ext_regs[ERNIC_EXT_W(ERNIC_EXTCTRL)] & feature);
}

/* Entry @idx of the extended MR table, or NULL past its end. */
static ErnicExtMr *ernic_ext_entry(ErnicCore *c, uint32_t idx)
{
    return idx < c->mr_entries ? &c->mrt[idx] : NULL;
}

const ErnicExtMr *ernic_ext_mr(ErnicCore *c, uint32_t idx)
{
    return ernic_ext_entry(c, idx);
}

/*
 * The entry @key names, if QP @qpn may invalidate it (LOCAL_INV and
 * remote invalidation alike): a mapped fast-registration entry of the
 * QP's PD with @key's key byte. NULL otherwise.
 */
static ErnicExtMr *ernic_ext_fr_mapped(ErnicCore *c, uint32_t qpn,
                                       uint32_t key)
{
    ErnicExtMr *m = ernic_ext_entry(c, key >> 8);

    if (!m || m->state != ERNIC_MR_VALID || !(m->acc & ERNIC_MRACC_FRWR) ||
        m->key != (key & 0xff) ||
        m->pd != ernic_qp_pd(c, qpn)) {
        return NULL;
    }
    return m;
}

static uint32_t ernic_ext_reg(ErnicCore *c, hwaddr off)
{
    return c->ext_regs[ERNIC_EXT_W(off)];
}

static uint64_t ernic_ext_reg64(ErnicCore *c, hwaddr lo, hwaddr hi)
{
    return ((uint64_t)ernic_ext_reg(c, hi) << 32) | ernic_ext_reg(c, lo);
}

static void ernic_ext_set(ErnicCore *c, hwaddr off, uint32_t val)
{
    c->ext_regs[ERNIC_EXT_W(off)] = val;
}

/*
 * Whether entry @m may be stored: no state 3, no region that wraps; a
 * valid page-list region needs a page shift of 12..30, an 8-byte aligned
 * page list and pages for its whole length (docs/extension.md, MRSTS 2).
 */
bool ernic_ext_mr_valid(const ErnicExtMr *m)
{
    uint64_t first, pages;

    if (m->state > ERNIC_MR_VALID ||
        (m->len && m->iova + m->len - 1 < m->iova)) {
        return false;
    }
    if (m->state != ERNIC_MR_VALID || (m->acc & ERNIC_MRACC_PHYS)) {
        return true;
    }
    if (m->shift < ERNIC_MR_PAGE_SHIFT_MIN ||
        m->shift > ERNIC_MR_PAGE_SHIFT_MAX || (m->pbl & 7)) {
        return false;
    }
    /* The first byte's offset in its page, then the length: no overflow. */
    first = m->iova & ((1ull << m->shift) - 1);
    pages = (uint64_t)m->npages << m->shift;
    return first <= pages && m->len <= pages - first;
}

/* MRACC's defined bits, from the window or a REG_MR WQE alike. */
static void ernic_ext_mr_set_acc(ErnicExtMr *m, uint32_t acc)
{
    m->acc = acc & ERNIC_MRACC_MASK;
    m->shift = ERNIC_FIELD_EX32(acc, ERNIC_MRACC_SHIFT_MASK);
}

/* The window as an entry; false if a field is out of range. */
static bool ernic_ext_mr_from_window(ErnicCore *c, ErnicExtMr *m)
{
    uint32_t key = ernic_ext_reg(c, ERNIC_MRKEY);

    m->state = ERNIC_FIELD_EX32(key, ERNIC_MRKEY_STATE_MASK);
    m->key = key & ERNIC_MRKEY_KEY_MASK;
    m->pd = ernic_ext_reg(c, ERNIC_MRPD);
    ernic_ext_mr_set_acc(m, ernic_ext_reg(c, ERNIC_MRACC));
    m->iova = ernic_ext_reg64(c, ERNIC_MRIOVALO, ERNIC_MRIOVAHI);
    m->len = ernic_ext_reg64(c, ERNIC_MRLENLO, ERNIC_MRLENHI);
    m->pbl = ernic_ext_reg64(c, ERNIC_MRPBLLO, ERNIC_MRPBLHI);
    m->npages = ernic_ext_reg(c, ERNIC_MRNPAGES);
    return ernic_ext_mr_valid(m);
}

static void ernic_ext_mr_to_window(ErnicCore *c, const ErnicExtMr *m)
{
    ernic_ext_set(c, ERNIC_MRKEY,
                  ERNIC_FIELD_DP32(m->key, ERNIC_MRKEY_STATE_MASK, m->state));
    ernic_ext_set(c, ERNIC_MRPD, m->pd);
    ernic_ext_set(c, ERNIC_MRACC, m->acc);
    ernic_ext_set(c, ERNIC_MRIOVALO, m->iova);
    ernic_ext_set(c, ERNIC_MRIOVAHI, m->iova >> 32);
    ernic_ext_set(c, ERNIC_MRLENLO, m->len);
    ernic_ext_set(c, ERNIC_MRLENHI, m->len >> 32);
    ernic_ext_set(c, ERNIC_MRPBLLO, m->pbl);
    ernic_ext_set(c, ERNIC_MRPBLHI, m->pbl >> 32);
    ernic_ext_set(c, ERNIC_MRNPAGES, m->npages);
}

/* MRCMD: one command on entry MRIDX; its result goes to MRSTS. */
static uint32_t ernic_ext_mr_command(ErnicCore *c, uint32_t cmd)
{
    uint32_t idx = ernic_ext_reg(c, ERNIC_MRIDX);
    ErnicExtMr m;

    if (idx >= c->mr_entries) {
        return ERNIC_MRSTS_BAD_INDEX;
    }
    switch (cmd) {
    case ERNIC_MRCMD_WRITE:
        if (!ernic_ext_mr_from_window(c, &m)) {
            return ERNIC_MRSTS_BAD_FIELD;
        }
        m.parent = 0;
        ernic_mw_region_changes(c, idx);
        c->mrt[idx] = m;
        return ERNIC_MRSTS_OK;
    case ERNIC_MRCMD_READ:
        ernic_ext_mr_to_window(c, &c->mrt[idx]);
        return ERNIC_MRSTS_OK;
    case ERNIC_MRCMD_INVALIDATE:
        if (c->mrt[idx].state == ERNIC_MR_VALID) {
            ernic_mw_region_changes(c, idx);
            c->mrt[idx].state = ERNIC_MR_INVALID;
            c->mrt[idx].parent = 0;
        }
        return ERNIC_MRSTS_OK;
    default:
        return ERNIC_MRSTS_BAD_COMMAND;
    }
}

/*
 * A per-QP block is written only while its QP is disabled, so that no
 * message is received half under one setting (docs/extension.md); but
 * QKEYi, checked packet by packet, as IBTA lets modify_qp change it in
 * any state.
 */
static void ernic_ext_qp_written(ErnicCore *c, hwaddr addr, uint32_t old)
{
    uint32_t qpn = (addr - ERNIC_EXT_QP_BASE) / ERNIC_EXT_QP_STRIDE + 1;
    uint32_t w = ERNIC_W((addr - ERNIC_EXT_QP_BASE) % ERNIC_EXT_QP_STRIDE);
    uint32_t *reg = &c->qp[qpn].ext_regs[w];
    uint32_t live = 0;

    if (w == ERNIC_W(ERNIC_QKEY) ||
        !(ernic_qp_reg(c, qpn, ERNIC_QPCONF) & ERNIC_QPCONF_QP_EN)) {
        return;
    }
    if (w == ERNIC_W(ERNIC_EXTQPCONF)) {
        /*
         * Remote atomic and FLUSH access: IBTA lets modify_qp change a
         * QP's access in RTS.
         */
        live = ERNIC_EXTQPCONF_ATOMIC | ERNIC_EXTQPCONF_FLUSH;
    }
    if ((*reg ^ old) & ~live) {
        qemu_log_mask(LOG_GUEST_ERROR, "ernic: QP%u extension register "
                      "write ignored: the QP is enabled\n", qpn);
    }
    *reg = (old & ~live) | (*reg & live);
}

/*
 * Side effects of a write to an extension register. EXTCTRL changes only
 * while ERNIC is disabled, and a feature that names MR keys needs the MR
 * feature (docs/extension.md, "Registers"); the features the device lacks
 * are reserved bits, dropped by the register file.
 */
void ernic_ext_written(ErnicCore *c, hwaddr addr, uint32_t old)
{
    uint32_t val, sts;

    if (addr >= ERNIC_EXT_QP_BASE) {
        ernic_ext_qp_written(c, addr, old);
        return;
    }
    val = ernic_ext_reg(c, addr);
    switch (addr) {
    case ERNIC_EXTCTRL:
        val &= ernic_ext_reg(c, ERNIC_EXTFEAT);
        ernic_ext_set(c, ERNIC_EXTCTRL, val);
        if ((ernic_gcsr(c, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN) ||
            ((val & ERNIC_EXT_F_NEEDS_MR) && !(val & ERNIC_EXT_F_MR))) {
            qemu_log_mask(LOG_GUEST_ERROR, "ernic: EXTCTRL write 0x%" PRIx32
                          " ignored (ERNIC enabled, or a feature that needs "
                          "MR without it)\n", val);
            ernic_ext_set(c, ERNIC_EXTCTRL, old);
            return;
        }
        trace_ernic_ext_ctrl(val);
        break;
    case ERNIC_EXTEVTEN:
        /* As INTEN: enabling an event already pending interrupts. */
        ernic_irq_update(c, val & ~old & ernic_ext_reg(c, ERNIC_EXTEVT));
        break;
    case ERNIC_EXTEVT:
        /* As INTSTS: what is still pending after a clear interrupts again. */
        ernic_irq_update(c, val != old);
        break;
    case ERNIC_MRCMD:
        sts = ernic_ext_mr_command(c, val);
        trace_ernic_ext_mr_command(val, ernic_ext_reg(c, ERNIC_MRIDX), sts);
        ernic_ext_set(c, ERNIC_MRSTS, sts);
        ernic_ext_set(c, ERNIC_MRCMD, 0);
        break;
    default:
        break;
    }
}

/* @mr_entries 0: no extension (the ext property is off). */
void ernic_ext_realize(ErnicCore *c, uint32_t mr_entries)
{
    c->mr_entries = mr_entries;
    c->mrt = mr_entries ? g_new0(ErnicExtMr, mr_entries) : NULL;
    c->ah_entries = mr_entries ? ERNIC_AH_ENTRIES : 0;
    c->aht = mr_entries ? g_new0(ErnicAh, ERNIC_AH_ENTRIES) : NULL;
}

void ernic_ext_unrealize(ErnicCore *c)
{
    g_free(c->mrt);
    g_free(c->aht);
    c->mrt = NULL;
    c->aht = NULL;
}

/*
 * Is @op a WQE executed at fetch that the driver has turned on: fast
 * registration (FRWR) or a window's bind or invalidation (MW)?
 */
bool ernic_ext_local_op(ErnicCore *c, uint8_t op)
{
    switch (op) {
    case ERNIC_OP_REG_MR:
        return ernic_ext_on(c, ERNIC_EXT_F_FRWR);
    case ERNIC_OP_LOCAL_INV:
        return ernic_ext_on(c, ERNIC_EXT_F_FRWR | ERNIC_EXT_F_MW);
    case ERNIC_OP_BIND_MW:
        return ernic_ext_on(c, ERNIC_EXT_F_MW);
    default:
        return false;
    }
}

/*
 * LOCAL_INV: a fast-registration region (whose windows go with it) or,
 * with MW, a type 2 window.
 */
static bool ernic_ext_local_inv(ErnicCore *c, uint32_t qpn, uint32_t key)
{
    ErnicExtMr *m = ernic_ext_on(c, ERNIC_EXT_F_FRWR) ?
                    ernic_ext_fr_mapped(c, qpn, key) : NULL;

    if (m) {
        ernic_mw_region_changes(c, m - c->mrt);
        m->state = ERNIC_MR_INVALID;
        return true;
    }
    return ernic_ext_on(c, ERNIC_EXT_F_MW) && ernic_mw_invalidate(c, qpn, key);
}

/*
 * Execute REG_MR or LOCAL_INV WQE @e of QP @qpn, as the requester fetched
 * it (docs/extension.md, "Fast registration"); false when a check fails
 * and the entry is unchanged.
 */
bool ernic_ext_exec_local(ErnicCore *c, uint32_t qpn, const ErnicOsq *e)
{
    uint32_t pd = ernic_qp_reg(c, qpn, ERNIC_PD) & 0xffffff;
    ErnicExtMr *m, n;

    if (e->opcode == ERNIC_OP_LOCAL_INV) {
        return ernic_ext_local_inv(c, qpn, e->rkey);
    }
    if (e->opcode == ERNIC_OP_BIND_MW) {
        return ernic_mw_bind(c, qpn, e);
    }
    m = ernic_ext_entry(c, e->rkey >> 8);
    if (!m || m->pd != pd || !(m->acc & ERNIC_MRACC_FRWR) ||
        m->state != ERNIC_MR_INVALID) {
        return false;
    }
    n = *m;
    n.state = ERNIC_MR_VALID;
    n.key = e->rkey & 0xff;
    ernic_ext_mr_set_acc(&n, ldl_le_p(&e->sdata[ERNIC_WQE_REG_ACC -
                                                ERNIC_WQE_SDATA]));
    n.iova = e->raddr;
    n.len = e->len;
    n.pbl = e->laddr;
    n.npages = ldl_le_p(&e->sdata[ERNIC_WQE_REG_NPAGES - ERNIC_WQE_SDATA]);
    if (!(n.acc & ERNIC_MRACC_FRWR) || (n.acc & ERNIC_MRACC_MW) ||
        !ernic_ext_mr_valid(&n)) {
        return false;
    }
    ernic_mw_region_changes(c, m - c->mrt);
    *m = n;
    return true;
}

/* Does QP @qpn report receives in its metadata ring? */
bool ernic_ext_rx_meta_on(ErnicCore *c, uint32_t qpn)
{
    /* QP1 only with the QP1 feature (docs/extension.md, "QP1"). */
    return (qpn != ERNIC_QP_GSI || ernic_ext_on(c, ERNIC_EXT_F_QP1)) &&
           ernic_ext_on(c, ERNIC_EXT_F_RXMETA) &&
           (c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
            ERNIC_EXTQPCONF_RXMETA);
}

/*
 * Remote invalidation of the IETH's R_Key @rkey by a SEND with Invalidate
 * on QP @qpn: it must name a valid fast-registration entry of the QP's PD
 * with its key byte. Returns 0, or the FATAL code of a refusal (0x15, as
 * for an R_Key). Without RINV the key is left alone (PG332: it leaves on
 * the ieth_immdt stream).
 */
uint16_t ernic_ext_remote_inv(ErnicCore *c, uint32_t qpn, uint32_t rkey)
{
    ErnicExtMr *m;

    c->qp[qpn].rx_inv = false;
    if (!ernic_ext_on(c, ERNIC_EXT_F_RINV)) {
        return 0;
    }
    m = ernic_ext_fr_mapped(c, qpn, rkey);
    if (m) {
        ernic_mw_region_changes(c, m - c->mrt);
        m->state = ERNIC_MR_INVALID;
    } else if (!ernic_ext_on(c, ERNIC_EXT_F_MW) ||
               !ernic_mw_invalidate(c, qpn, rkey)) {
        return ERNIC_FATAL_RKEY;
    }
    c->qp[qpn].rx_inv = true;
    return 0;
}

/* Are QP @qpn's RQ slots receive WQEs (with receive metadata)? */
bool ernic_ext_rx_wqe_on(ErnicCore *c, uint32_t qpn)
{
    return ernic_ext_rx_meta_on(c, qpn) &&
           ernic_ext_on(c, ERNIC_EXT_F_RXWQE) &&
           (c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
            ERNIC_EXTQPCONF_RXWQE);
}

/* Are QP @qpn's SQ entries 128-byte WQEs with keyed SGEs? */
bool ernic_ext_xwqe_on(ErnicCore *c, uint32_t qpn)
{
    return (qpn != ERNIC_QP_GSI || ernic_ext_on(c, ERNIC_EXT_F_QP1)) &&
           ernic_ext_on(c, ERNIC_EXT_F_XWQE) &&
           (c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
            ERNIC_EXTQPCONF_XWQE);
}

void ernic_ext_reset(ErnicCore *c)
{
    if (!c->mrt) {
        return;
    }
    ernic_ext_set(c, ERNIC_EXTFEAT, ernic_ext_features(c->rn != NULL));
    ernic_ext_set(c, ERNIC_EXTMRMAX, c->mr_entries);
    memset(c->mrt, 0, sizeof(*c->mrt) * c->mr_entries);
    memset(c->aht, 0, sizeof(*c->aht) * ERNIC_AH_ENTRIES);
    memset(c->mcg, 0, sizeof(c->mcg));
}

/*
 * The features this device has: the doorbell BAR, and so its pages'
 * polling words, exist only with the PG332 layout (RecoNIC's BARs are its
 * shell's, docs/boards.md).
 */
uint32_t ernic_ext_features(bool reconic)
{
    return reconic ? ERNIC_EXT_F_ALL & ~(ERNIC_EXT_F_UDB | ERNIC_EXT_F_UPOLL) :
           ERNIC_EXT_F_ALL;
}

/* Is QP @qpn a user QP, whose WQEs may come from an untrusted process? */
bool ernic_ext_user_qp(ErnicCore *c, uint32_t qpn)
{
    return qpn != ERNIC_QP_GSI && ernic_ext_on(c, ERNIC_EXT_F_UDB) &&
           (c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
            ERNIC_EXTQPCONF_USER);
}

/*
 * May user QP @qpn execute WQE @e, whose SGE count is @nsge? Only what
 * names memory through keys (checked when the SGEs are taken), or needs
 * no local memory: a zero-length message, or a SEND from SDATA. Never a
 * fast registration, which names a page list by bus address.
 */
bool ernic_ext_user_wqe_ok(ErnicCore *c, uint32_t qpn, const ErnicOsq *e,
                           uint8_t nsge)
{
    if (!ernic_ext_user_qp(c, qpn)) {
        return true;
    }
    /*
     * REG_MR names a page list by bus address; LOCAL_INV and BIND_MW name
     * keys only, checked against the QP's PD.
     */
    if (e->opcode == ERNIC_OP_REG_MR) {
        return false;
    }
    if (e->opcode == ERNIC_OP_LOCAL_INV || e->opcode == ERNIC_OP_BIND_MW) {
        return true;
    }
    return nsge || !e->len ||
           (ernic_op_is_send(e->opcode) && e->len <= ERNIC_WQE_SDATA_MAX);
}
