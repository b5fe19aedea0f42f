/*
 * ERNIC migration: the device's whole state as VMStateDescriptions, and
 * the checks a loaded stream must pass before the engine runs on it.
 *
 * The stream is untrusted input (docs/migration.md, "A stream is checked
 * like a guest"): every index, count and size the engine uses to address
 * its own arrays or to bound its loops is checked here, and a stream that
 * fails is refused with an error naming the value. Register values need
 * no check: a guest can write each of them (most RO ones under the
 * XRNICADCONF[0] software override) and every use bounds them already.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "migration/vmstate.h"
#include "migration/qemu-file-types.h"
#include "net/net.h"
#include "ernic_core.h"
#include "trace.h"

static const VMStateDescription ernic_vmstate_mr_access = {
    .name = "ernic/mr-access",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(addr, ErnicMrAccess),
        VMSTATE_UINT64(pbl, ErnicMrAccess),
        VMSTATE_UINT32(npages, ErnicMrAccess),
        VMSTATE_UINT8(shift, ErnicMrAccess),
        VMSTATE_BOOL(paged, ErnicMrAccess),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription ernic_vmstate_sge = {
    .name = "ernic/sge",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(a, ErnicSge, 1, ernic_vmstate_mr_access,
                       ErnicMrAccess),
        VMSTATE_UINT32(len, ErnicSge),
        VMSTATE_END_OF_LIST()
    },
};

static bool ernic_vmstate_osq_xrc_needed(void *opaque)
{
    return ((ErnicOsq *)opaque)->xrc_srqn != 0;
}

/* Without the subsection a WQE names XRC SRQ 0 (or is no XRC WQE). */
static int ernic_vmstate_osq_pre_load(void *opaque)
{
    ((ErnicOsq *)opaque)->xrc_srqn = 0;
    return 0;
}

/* An XRC initiator's WQE: the remote XRC SRQ (ernic_xrc.c). */
static const VMStateDescription ernic_vmstate_osq_xrc = {
    .name = "ernic/osq/xrc",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_osq_xrc_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(xrc_srqn, ErnicOsq),
        VMSTATE_END_OF_LIST()
    },
};

/* A WQE fetched and not yet completed (ernic_req.c, ernic_comp.c). */
static const VMStateDescription ernic_vmstate_osq = {
    .name = "ernic/osq",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = ernic_vmstate_osq_pre_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(slot, ErnicOsq),
        VMSTATE_UINT16(wrid, ErnicOsq),
        VMSTATE_UINT8(opcode, ErnicOsq),
        VMSTATE_BOOL(error, ErnicOsq),
        VMSTATE_BOOL(done, ErnicOsq),
        VMSTATE_BOOL(local, ErnicOsq),
        VMSTATE_UINT32(psn, ErnicOsq),
        VMSTATE_UINT32(npkts, ErnicOsq),
        VMSTATE_UINT64(laddr, ErnicOsq),
        VMSTATE_UINT64(raddr, ErnicOsq),
        VMSTATE_UINT32(len, ErnicOsq),
        VMSTATE_UINT32(pmtu, ErnicOsq),
        VMSTATE_UINT32(rkey, ErnicOsq),
        VMSTATE_UINT32(imm, ErnicOsq),
        VMSTATE_UINT8_ARRAY(sdata, ErnicOsq, ERNIC_WQE_SDATA_MAX),
        VMSTATE_UINT8(nsge, ErnicOsq),
        VMSTATE_STRUCT_ARRAY(sge, ErnicOsq, ERNIC_XWQE_SGES, 1,
                             ernic_vmstate_sge, ErnicSge),
        VMSTATE_UINT32(read_pkts, ErnicOsq),
        VMSTATE_UINT32(read_base, ErnicOsq),
        VMSTATE_UINT32(read_reask, ErnicOsq),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &ernic_vmstate_osq_xrc,
        NULL
    },
};

static bool ernic_vmstate_replay_needed(void *opaque)
{
    return ((ErnicReadRes *)opaque)->replay;
}

/* Without the subsections a resource is a READ's first request. */
static int ernic_vmstate_read_res_pre_load(void *opaque)
{
    ErnicReadRes *r = opaque;

    r->replay = false;
    r->atomic = false;
    r->orig = 0;
    return 0;
}

static bool ernic_vmstate_res_atomic_needed(void *opaque)
{
    return ((ErnicReadRes *)opaque)->atomic;
}

/* An ERNIC-X atomic's answer (ernic_atomic.c): sent only for one. */
static const VMStateDescription ernic_vmstate_read_atomic = {
    .name = "ernic/read-res/atomic",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_res_atomic_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(atomic, ErnicReadRes),
        VMSTATE_UINT64(orig, ErnicReadRes),
        VMSTATE_END_OF_LIST()
    },
};

/* A READ resource queued again for a duplicate (ernic_resp.c). */
static const VMStateDescription ernic_vmstate_read_replay = {
    .name = "ernic/read-res/replay",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_replay_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(replay, ErnicReadRes),
        VMSTATE_END_OF_LIST()
    },
};

/* An incoming READ being answered (ernic_resp.c). */
static const VMStateDescription ernic_vmstate_read_res = {
    .name = "ernic/read-res",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = ernic_vmstate_read_res_pre_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(psn, ErnicReadRes),
        VMSTATE_UINT32(npkts, ErnicReadRes),
        VMSTATE_UINT32(sent, ErnicReadRes),
        VMSTATE_STRUCT(mr, ErnicReadRes, 1, ernic_vmstate_mr_access,
                       ErnicMrAccess),
        VMSTATE_UINT32(len, ErnicReadRes),
        VMSTATE_UINT32(pmtu, ErnicReadRes),
        VMSTATE_UINT32(msn, ErnicReadRes),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &ernic_vmstate_read_replay,
        &ernic_vmstate_read_atomic,
        NULL
    },
};

static bool ernic_vmstate_hist_atomic_needed(void *opaque)
{
    return ((ErnicReadHist *)opaque)->atomic;
}

static int ernic_vmstate_read_hist_pre_load(void *opaque)
{
    ErnicReadHist *h = opaque;

    h->atomic = false;
    h->orig = 0;
    return 0;
}

/* An atomic executed, and the value a duplicate is answered with. */
static const VMStateDescription ernic_vmstate_hist_atomic = {
    .name = "ernic/read-hist/atomic",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_hist_atomic_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(atomic, ErnicReadHist),
        VMSTATE_UINT64(orig, ErnicReadHist),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription ernic_vmstate_read_hist = {
    .name = "ernic/read-hist",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = ernic_vmstate_read_hist_pre_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(psn, ErnicReadHist),
        VMSTATE_UINT32(npkts, ErnicReadHist),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &ernic_vmstate_hist_atomic,
        NULL
    },
};

static bool ernic_vmstate_qp_ext_needed(void *opaque)
{
    ErnicQP *qp = opaque;

    return qp->core->mrt != NULL;
}

/* ERNIC-X per-QP registers (docs/extension.md). */
static const VMStateDescription ernic_vmstate_qp_ext = {
    .name = "ernic/qp/ext",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_qp_ext_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_ARRAY(ext_regs, ErnicQP, ERNIC_EXT_QP_WORDS),
        VMSTATE_END_OF_LIST()
    },
};

static bool ernic_vmstate_qp_srq_needed(void *opaque)
{
    ErnicQP *qp = opaque;

    return qp->rq_held && qp->rx_srq;
}

/* The SRQ WQE the message in progress took (docs/extension.md). */
static const VMStateDescription ernic_vmstate_qp_srq = {
    .name = "ernic/qp/srq",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_qp_srq_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(rx_srq, ErnicQP),
        VMSTATE_UINT32(rx_srq_n, ErnicQP),
        VMSTATE_UINT32(rx_srq_wqe, ErnicQP),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * One QP: its PG332 register block, the requester's outstanding queue and
 * timers, the responder's message in progress, READ resources and ACK
 * timer. Not sent: core, qpn (fixed at realize), state (derived from the
 * registers), db_warned (a log limiter).
 */
static const VMStateDescription ernic_vmstate_qp = {
    .name = "ernic/qp",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_ARRAY(regs, ErnicQP, ERNIC_QP_WORDS),
        VMSTATE_UINT16(sq_next, ErnicQP),
        VMSTATE_UINT16(cq_next, ErnicQP),
        VMSTATE_STRUCT_ARRAY(osq, ErnicQP, ERNIC_OSQ_DEPTH, 1,
                             ernic_vmstate_osq, ErnicOsq),
        VMSTATE_UINT32(osq_head, ErnicQP),
        VMSTATE_UINT32(osq_count, ErnicQP),
        VMSTATE_UINT32(tx_idx, ErnicQP),
        VMSTATE_UINT32(tx_pkt, ErnicQP),
        VMSTATE_UINT32(sent_psn, ErnicQP),
        VMSTATE_UINT32(retries_left, ErnicQP),
        VMSTATE_UINT32(rnr_left, ErnicQP),
        VMSTATE_BOOL(rnr_wait, ErnicQP),
        VMSTATE_TIMER_PTR(retry_timer, ErnicQP),
        VMSTATE_TIMER_PTR(rnr_timer, ErnicQP),
        VMSTATE_UINT8(rx_msg, ErnicQP),
        VMSTATE_UINT64(rq_addr, ErnicQP),
        VMSTATE_UINT32(rq_size, ErnicQP),
        VMSTATE_UINT32(rq_depth, ErnicQP),
        VMSTATE_UINT32(rq_off, ErnicQP),
        VMSTATE_UINT32(rq_slot, ErnicQP),
        VMSTATE_BOOL(rq_held, ErnicQP),
        VMSTATE_BOOL(rx_inv, ErnicQP),
        VMSTATE_BOOL(rx_wqe, ErnicQP),
        VMSTATE_UINT8(rx_status, ErnicQP),
        VMSTATE_STRUCT_ARRAY(rx_sge, ErnicQP, ERNIC_RWQE_SGES, 1,
                             ernic_vmstate_sge, ErnicSge),
        VMSTATE_STRUCT(wr_mr, ErnicQP, 1, ernic_vmstate_mr_access,
                       ErnicMrAccess),
        VMSTATE_UINT64(wr_off, ErnicQP),
        VMSTATE_UINT32(wr_left, ErnicQP),
        VMSTATE_BOOL(nak_sent, ErnicQP),
        VMSTATE_BOOL(ack_pending, ErnicQP),
        VMSTATE_BOOL(ack_held, ErnicQP),
        VMSTATE_UINT8(held_synd, ErnicQP),
        VMSTATE_UINT32(held_psn, ErnicQP),
        VMSTATE_UINT32(held_msn, ErnicQP),
        VMSTATE_STRUCT_ARRAY(rd, ErnicQP, ERNIC_READ_RES, 1,
                             ernic_vmstate_read_res, ErnicReadRes),
        VMSTATE_UINT32(rd_head, ErnicQP),
        VMSTATE_UINT32(rd_count, ErnicQP),
        VMSTATE_STRUCT_ARRAY(rd_hist, ErnicQP, ERNIC_READ_RES, 1,
                             ernic_vmstate_read_hist, ErnicReadHist),
        VMSTATE_UINT32(rd_hist_next, ErnicQP),
        VMSTATE_TIMER_PTR(ack_timer, ErnicQP),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &ernic_vmstate_qp_ext,
        &ernic_vmstate_qp_srq,
        NULL
    },
};

static bool ernic_vmstate_window_needed(void *opaque)
{
    return ((ErnicExtMr *)opaque)->parent != 0;
}

static int ernic_vmstate_ext_mr_pre_load(void *opaque)
{
    ((ErnicExtMr *)opaque)->parent = 0;
    return 0;
}

/* A bound memory window's region (ernic_mw.c): sent only for one. */
static const VMStateDescription ernic_vmstate_window = {
    .name = "ernic/ext-mr/window",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_window_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(parent, ErnicExtMr),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription ernic_vmstate_ext_mr = {
    .name = "ernic/ext-mr",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = ernic_vmstate_ext_mr_pre_load,
    .subsections = (const VMStateDescription * const []) {
        &ernic_vmstate_window,
        NULL
    },
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(state, ErnicExtMr),
        VMSTATE_UINT8(key, ErnicExtMr),
        VMSTATE_UINT8(shift, ErnicExtMr),
        VMSTATE_UINT32(pd, ErnicExtMr),
        VMSTATE_UINT32(acc, ErnicExtMr),
        VMSTATE_UINT32(npages, ErnicExtMr),
        VMSTATE_UINT64(iova, ErnicExtMr),
        VMSTATE_UINT64(len, ErnicExtMr),
        VMSTATE_UINT64(pbl, ErnicExtMr),
        VMSTATE_END_OF_LIST()
    },
};

static bool ernic_vmstate_ext_needed(void *opaque)
{
    ErnicCore *c = opaque;

    return c->mrt != NULL;
}

/* ERNIC-X global registers and the extended MR table. */
static const VMStateDescription ernic_vmstate_ext = {
    .name = "ernic/core/ext",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_ext_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_ARRAY(ext_regs, ErnicCore, ERNIC_EXT_WORDS),
        VMSTATE_STRUCT_VARRAY_POINTER_UINT32(mrt, ErnicCore, mr_entries,
                                             ernic_vmstate_ext_mr,
                                             ErnicExtMr),
        VMSTATE_END_OF_LIST()
    },
};

static bool ernic_vmstate_srq_needed(void *opaque)
{
    ErnicCore *c = opaque;

    return c->mrt && !buffer_is_zero(c->srq_regs, sizeof(c->srq_regs));
}

/* ERNIC-X shared receive queues: their register blocks. */
static const VMStateDescription ernic_vmstate_srq = {
    .name = "ernic/core/srq",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_srq_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_2DARRAY(srq_regs, ErnicCore, ERNIC_SRQ_NUM,
                               ERNIC_EXT_SRQ_WORDS),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription ernic_vmstate_ah = {
    .name = "ernic/ah",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, ErnicAh),
        VMSTATE_BOOL(ipv6, ErnicAh),
        VMSTATE_UINT8(ttl, ErnicAh),
        VMSTATE_UINT8(tclass, ErnicAh),
        VMSTATE_UINT32(pd, ErnicAh),
        VMSTATE_UINT8_ARRAY(mac, ErnicAh, 6),
        VMSTATE_UINT8_ARRAY(ip, ErnicAh, 16),
        VMSTATE_END_OF_LIST()
    },
};

static bool ernic_vmstate_ud_needed(void *opaque)
{
    ErnicCore *c = opaque;

    return c->aht &&
           (!buffer_is_zero(c->ah_regs, sizeof(c->ah_regs)) ||
            !buffer_is_zero(c->aht, sizeof(*c->aht) * c->ah_entries));
}

/* ERNIC-X UD QPs: the AH window and table (docs/extension.md). */
static const VMStateDescription ernic_vmstate_ud = {
    .name = "ernic/core/ud",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_ud_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_ARRAY(ah_regs, ErnicCore, ERNIC_EXT_AH_WORDS),
        VMSTATE_STRUCT_VARRAY_POINTER_UINT32(aht, ErnicCore, ah_entries,
                                             ernic_vmstate_ah, ErnicAh),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription ernic_vmstate_mcg = {
    .name = "ernic/mcg",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, ErnicMcg),
        VMSTATE_BOOL(ipv6, ErnicMcg),
        VMSTATE_UINT8_ARRAY(ip, ErnicMcg, 16),
        VMSTATE_UINT32_ARRAY(qps, ErnicMcg, ERNIC_MCG_QP_WORDS),
        VMSTATE_END_OF_LIST()
    },
};

static bool ernic_vmstate_mcast_needed(void *opaque)
{
    ErnicCore *c = opaque;

    return !buffer_is_zero(c->mc_regs, sizeof(c->mc_regs)) ||
           !buffer_is_zero(c->mcg, sizeof(c->mcg));
}

/* ERNIC-X multicast: the group window and table (docs/extension.md). */
static const VMStateDescription ernic_vmstate_mcast = {
    .name = "ernic/core/mcast",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_mcast_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_ARRAY(mc_regs, ErnicCore, ERNIC_EXT_MC_WORDS),
        VMSTATE_STRUCT_ARRAY(mcg, ErnicCore, ERNIC_MCG_ENTRIES, 1,
                             ernic_vmstate_mcg, ErnicMcg),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * lo_queue: a count, then each frame as a length and its bytes. Loaded
 * frames are bounded like the net layer bounds a received one.
 */
static int ernic_vmstate_lo_put(QEMUFile *f, void *pv, size_t size,
                                const VMStateField *field, JSONWriter *vmdesc)
{
    GQueue *q = pv;

    qemu_put_be32(f, g_queue_get_length(q));
    for (GList *l = q->head; l; l = l->next) {
        ErnicHeldFrame *h = l->data;

        qemu_put_be32(f, h->len);
        qemu_put_buffer(f, h->data, h->len);
    }
    return 0;
}

static int ernic_vmstate_lo_get(QEMUFile *f, void *pv, size_t size,
                                const VMStateField *field)
{
    ErnicCore *c = container_of(pv, ErnicCore, lo_queue);
    uint32_t n = qemu_get_be32(f), len;
    g_autofree uint8_t *buf = NULL;

    if (n > ERNIC_LOOPBACK_MAX) {
        error_report("ernic: migration stream refused: %" PRIu32 " held "
                     "frames (at most %d)", n, ERNIC_LOOPBACK_MAX);
        return -EINVAL;
    }
    buf = g_malloc(NET_BUFSIZE);
    while (n--) {
        len = qemu_get_be32(f);
        if (len > NET_BUFSIZE) {
            error_report("ernic: migration stream refused: held frame of "
                         "%" PRIu32 " bytes (at most %d)", len, NET_BUFSIZE);
            return -EINVAL;
        }
        qemu_get_buffer(f, buf, len);
        ernic_link_defer(c, buf, len);
    }
    return qemu_file_get_error(f);
}

static const VMStateInfo ernic_vm_lo_info = {
    .name = "ernic-lo-queue",
    .get = ernic_vmstate_lo_get,
    .put = ernic_vmstate_lo_put,
};

static bool ernic_vmstate_lo_needed(void *opaque)
{
    ErnicCore *c = opaque;

    return !g_queue_is_empty(&c->lo_queue);
}

/* Frames to our own MAC, and frames that came in during transmit. */
static const VMStateDescription ernic_vmstate_lo = {
    .name = "ernic/core/loopback",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ernic_vmstate_lo_needed,
    .fields = (const VMStateField[]) {
        {
            .name = "lo_queue",
            .version_id = 0,
            .size = sizeof(GQueue),
            .info = &ernic_vm_lo_info,
            .flags = VMS_SINGLE,
            .offset = offsetof(ErnicCore, lo_queue),
        },
        VMSTATE_END_OF_LIST()
    },
};

/*
 * Checks of loaded state. Each returns NULL, or what is out of range.
 */
static bool ernic_vmstate_pmtu_ok(uint32_t pmtu)
{
    return pmtu >= 256 && pmtu <= 4096 && is_power_of_2(pmtu);
}

/* A paged access is shifted by its page size: only 12..30 exist. */
static bool ernic_vmstate_access_ok(const ErnicMrAccess *a)
{
    return !a->paged || (a->shift >= ERNIC_MR_PAGE_SHIFT_MIN &&
                         a->shift <= ERNIC_MR_PAGE_SHIFT_MAX);
}

static bool ernic_vmstate_sges_ok(const ErnicSge *sge, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (!ernic_vmstate_access_ok(&sge[i].a)) {
            return false;
        }
    }
    return true;
}

/* Packets of a message, as segmentation fixed them (ernic_req.c). */
static bool ernic_vmstate_npkts_ok(uint32_t len, uint32_t pmtu, uint32_t npkts)
{
    if (!pmtu) {
        /* QP1, fast registration and reserved-opcode WQEs. */
        return npkts <= 1;
    }
    return ernic_vmstate_pmtu_ok(pmtu) &&
           npkts == (len ? DIV_ROUND_UP(len, pmtu) : 1);
}

static const char *ernic_vmstate_osq_bad(const ErnicOsq *e)
{
    if (e->len > ERNIC_MAX_MSG_SIZE ||
        !ernic_vmstate_npkts_ok(e->len, e->pmtu, e->npkts)) {
        return "outstanding WQE length or packet count";
    }
    if (e->nsge > ERNIC_XWQE_SGES || !ernic_vmstate_sges_ok(e->sge, e->nsge)) {
        return "outstanding WQE SGE";
    }
    if (e->read_pkts > e->npkts || e->read_base > e->npkts ||
        e->read_reask > e->npkts + 1) {
        return "outstanding READ progress";
    }
    return NULL;
}

static const char *ernic_vmstate_requester_bad(const ErnicQP *qp)
{
    const ErnicOsq *e;

    if (qp->osq_head >= ERNIC_OSQ_DEPTH || qp->osq_count > ERNIC_OSQ_DEPTH ||
        qp->tx_idx > qp->osq_count) {
        return "outstanding queue index or count";
    }
    for (uint32_t i = 0; i < qp->osq_count; i++) {
        const ErnicOsq *o = &qp->osq[(qp->osq_head + i) % ERNIC_OSQ_DEPTH];
        const char *bad = ernic_vmstate_osq_bad(o);

        if (bad) {
            return bad;
        }
    }
    e = &qp->osq[(qp->osq_head + qp->tx_idx) % ERNIC_OSQ_DEPTH];
    if (qp->tx_idx < qp->osq_count && qp->tx_pkt > e->npkts) {
        return "transmit position";
    }
    /* TIMEOUTCONFi's 3-bit counts (7: RNR retry without limit). */
    if (qp->retries_left > 7 || qp->rnr_left > 7) {
        return "retry count";
    }
    return NULL;
}

static const char *ernic_vmstate_responder_bad(const ErnicQP *qp)
{
    if (qp->rx_msg > ERNIC_RX_WRITE) {
        return "responder message state";
    }
    if (qp->rq_off > qp->rq_size) {
        return "RQ buffer offset";
    }
    if (qp->rx_srq && (qp->rx_srq_n >= ERNIC_SRQ_NUM ||
                       qp->rx_srq_wqe > 0xffff)) {
        return "SRQ of the message in progress";
    }
    if (!ernic_vmstate_sges_ok(qp->rx_sge, ERNIC_RWQE_SGES) ||
        !ernic_vmstate_access_ok(&qp->wr_mr)) {
        return "receive or WRITE target page size";
    }
    if (qp->rd_head >= ERNIC_READ_RES || qp->rd_count > ERNIC_READ_RES) {
        return "READ resource index or count";
    }
    for (uint32_t i = 0; i < qp->rd_count; i++) {
        const ErnicReadRes *r = &qp->rd[(qp->rd_head + i) % ERNIC_READ_RES];

        if (!ernic_vmstate_pmtu_ok(r->pmtu) ||
            !ernic_vmstate_npkts_ok(r->len, r->pmtu, r->npkts) ||
            r->sent > r->npkts || !ernic_vmstate_access_ok(&r->mr)) {
            return "READ resource";
        }
    }
    return NULL;
}

/*
 * A window's region: an entry with MW bind access, as ernic_mw_bind()
 * leaves it, so that ernic_mw_region_changes() finds the window.
 */
static bool ernic_vmstate_parent_ok(const ErnicCore *c, uint32_t parent)
{
    return !parent || (parent <= c->mr_entries &&
                       (c->mrt[parent - 1].acc & ERNIC_MRACC_MW_BIND));
}

static const char *ernic_vmstate_core_bad(const ErnicCore *c)
{
    if (c->immdt_head >= ERNIC_IMMDT_FIFO ||
        c->immdt_count > ERNIC_IMMDT_FIFO ||
        c->immdt_off >= ERNIC_IMMDT_ENTRY_LEN) {
        return "ImmDt FIFO index, count or offset";
    }
    if (c->sq_rr > c->num_qp) {
        return "transmit round-robin position";
    }
    for (uint32_t i = 0; i < c->mr_entries; i++) {
        if (!ernic_ext_mr_valid(&c->mrt[i]) ||
            !ernic_vmstate_parent_ok(c, c->mrt[i].parent)) {
            return "ERNIC-X MR table entry";
        }
    }
    return NULL;
}

/* A load starts from an empty loopback queue (loadvm without a reset). */
static int ernic_vmstate_pre_load(void *opaque)
{
    ErnicCore *c = opaque;
    uint32_t qpn;

    ernic_link_reset(c);
    /* What the ERNIC-X SRQ, UD and multicast subsections leave out is 0. */
    memset(c->srq_regs, 0, sizeof(c->srq_regs));
    memset(c->ah_regs, 0, sizeof(c->ah_regs));
    memset(c->mc_regs, 0, sizeof(c->mc_regs));
    memset(c->mcg, 0, sizeof(c->mcg));
    if (c->aht) {
        memset(c->aht, 0, sizeof(*c->aht) * c->ah_entries);
    }
    for (qpn = 1; qpn <= ERNIC_NUM_QP_MAX; qpn++) {
        c->qp[qpn].rx_srq = false;
    }
    return 0;
}

static int ernic_vmstate_post_load(void *opaque, int version_id)
{
    ErnicCore *c = opaque;
    const char *bad = ernic_vmstate_core_bad(c);
    uint32_t qpn;

    if (bad) {
        error_report("ernic: migration stream refused: %s out of range", bad);
        return -EINVAL;
    }
    for (qpn = 1; qpn <= c->num_qp; qpn++) {
        bad = ernic_vmstate_requester_bad(&c->qp[qpn]);
        bad = bad ? bad : ernic_vmstate_responder_bad(&c->qp[qpn]);
        if (bad) {
            error_report("ernic: migration stream refused: QP%" PRIu32
                         " %s out of range", qpn, bad);
            return -EINVAL;
        }
    }
    /*
     * The backend is a new one: nothing is held up by it. Every QP looks
     * for work once, as when ERNIC is enabled (XRNICCONF[0]), so which
     * doorbells were pending need not be sent. The work starts when the
     * VM runs (ernic_core_vm_state()), after every device has loaded.
     */
    c->tx_blocked = false;
    for (qpn = 1; qpn <= c->num_qp; qpn++) {
        c->qp[qpn].state = ernic_qp_state(c, qpn);
        c->qp[qpn].db_warned = false;
        /* Not migrated: the link is a new one too. */
        ernic_txw_reset(&c->qp[qpn]);
        ernic_txw_rewound(&c->qp[qpn]);
        set_bit(qpn, c->sq_pending);
    }
    ernic_dbrec_loaded(c);
    trace_ernic_vm_loaded(c->num_qp, g_queue_get_length(&c->lo_queue));
    return 0;
}

/*
 * The whole core. num-qp and mr-entries (0 without ERNIC-X) are
 * properties: both ends must have the same, which the stream checks
 * before it sizes anything by them.
 */
const VMStateDescription ernic_vmstate_core = {
    .name = "ernic/core",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = ernic_vmstate_pre_load,
    .post_load = ernic_vmstate_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_EQUAL(num_qp, ErnicCore,
                             " (num-qp must be the same on both sides)"),
        VMSTATE_UINT32_EQUAL(mr_entries, ErnicCore,
                             " (ext and mr-entries must be the same on both "
                             "sides)"),
        VMSTATE_UINT32_2DARRAY(pdt, ErnicCore, ERNIC_PDT_ENTRIES,
                               ERNIC_PDT_WORDS),
        VMSTATE_UINT32_ARRAY(gcsr, ErnicCore, ERNIC_GCSR_WORDS),
        /* QP1..C_NUM_QP; qp[0] is no QP. */
        {
            .name = "qp",
            .version_id = 0,
            .num_offset = offsetof(ErnicCore, num_qp),
            .size = sizeof(ErnicQP),
            .vmsd = &ernic_vmstate_qp,
            .flags = VMS_VARRAY_UINT32 | VMS_STRUCT,
            .offset = offsetof(ErnicCore, qp[1]),
        },
        VMSTATE_UINT32(sq_rr, ErnicCore),
        VMSTATE_UINT32_ARRAY(eth, ErnicCore, ERNIC_ETH_BAR_SIZE / 4),
        VMSTATE_UINT32_ARRAY(immdt, ErnicCore, ERNIC_IMMDT_SIZE / 4),
        VMSTATE_UINT64_ARRAY(immdt_fifo, ErnicCore, ERNIC_IMMDT_FIFO),
        VMSTATE_UINT32(immdt_head, ErnicCore),
        VMSTATE_UINT32(immdt_count, ErnicCore),
        VMSTATE_UINT32(immdt_off, ErnicCore),
        VMSTATE_UINT32(immdt_left, ErnicCore),
        VMSTATE_TIMER_PTR(immdt_timer, ErnicCore),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &ernic_vmstate_ext,
        &ernic_vmstate_srq,
        &ernic_vmstate_ud,
        &ernic_vmstate_mcast,
        &ernic_vmstate_lo,
        NULL
    },
};
