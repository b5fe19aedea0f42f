/*
 * ERNIC fault injection: FATAL codes (PG332 Table 2-4) on demand
 * (docs/debugging.md, "fatal").
 *
 * Each code is made to happen by its cause: the frame a peer would have
 * sent to cause it is built from the QP's own path (from the peer to this
 * device) and goes through the receive path, which reacts as PG332 says:
 * a NAK to the peer for the responder's codes, the status queue entry,
 * STATQPi, the error buffer entry, the interrupt and the flush. Codes
 * whose cause is inside the device (0x05, 0x06, 0x09, 0x0D), and codes
 * whose cause needs state the QP does not have at that moment (a
 * response code with nothing outstanding, a READ response code without
 * a READ at the head), are raised directly by ernic_qp_fatal(): all of
 * the above but the error buffer entry and the NAK.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qobject/qdict.h"
#include "ernic_core.h"
#include "trace.h"

/* The frame that causes a code (ernic_fault_*_cause()). */
typedef struct ErnicCause {
    uint8_t opcode;
    uint32_t psn;
    uint32_t paylen;
    uint64_t va;                /* RETH */
    uint32_t rkey;
    uint32_t dmalen;
    uint8_t syndrome;           /* AETH */
    uint32_t repeat;            /* frames, PSN after PSN (0x10) */
} ErnicCause;

static void ernic_fault_fatal_deliver(ErnicCore *c, uint32_t qpn,
                                      const ErnicCause *k)
{
    uint8_t f[ERNIC_MAX_FRAME];
    uint32_t flags = ernic_wire_opcode_flags(k->opcode), n;
    size_t end, ext = ernic_wire_ext_len(flags);
    ErnicPath p;

    ernic_qp_peer_path(c, qpn, &p);
    for (n = 0; n < MAX(k->repeat, 1); n++) {
        end = ernic_wire_build(f, &p, k->opcode, k->psn + n, true, ext,
                               k->paylen);
        memset(f + end, 0, ext + k->paylen);
        /* No opcode here has both: each starts the extension headers. */
        if (flags & ERNIC_OPF_RETH) {
            ernic_wire_put_reth(f + end, k->va, k->rkey, k->dmalen);
        } else if (flags & ERNIC_OPF_AETH) {
            ernic_wire_put_aeth(f + end, k->syndrome, 0);
        }
        end = ernic_wire_finish(f, end + ext + k->paylen, k->paylen, p.ipv6);
        ernic_link_take(c, f, end);
    }
}

/* A region of the QP's PD it may WRITE through: its key and range. */
typedef struct ErnicFaultMr {
    uint32_t rkey;
    uint64_t base;
    uint64_t len;
} ErnicFaultMr;

/*
 * The first region of PG332's PD/MR table, or of ERNIC-X's table when a
 * driver turned it on (ernic_mr_check_rkey() looks in that one only),
 * that QP @qpn may WRITE through. With @any, any entry in use, of any PD.
 */
static bool ernic_fault_fatal_find_mr(ErnicCore *c, uint32_t qpn, bool any,
                                      ErnicFaultMr *m)
{
    uint32_t pd = ernic_qp_reg(c, qpn, ERNIC_PD) & 0xffffff;
    uint32_t i;

    if (ernic_ext_on(c, ERNIC_EXT_F_MR)) {
        for (i = 0; i < c->mr_entries; i++) {
            const ErnicExtMr *e = ernic_ext_mr(c, i);

            if (e && (any || (e->state == ERNIC_MR_VALID && e->pd == pd &&
                              (e->acc & ERNIC_MRACC_REMOTE_WRITE)))) {
                *m = (ErnicFaultMr){ i << 8 | e->key, e->iova, e->len };
                return true;
            }
        }
        return false;
    }
    for (i = 0; i < ERNIC_PDT_ENTRIES; i++) {
        const uint32_t *mr = c->pdt[i];

        if (any || ((mr[ERNIC_W(ERNIC_PDPDNUM)] & 0xffffff) == pd &&
                    ernic_pdt_allows(mr, true))) {
            *m = (ErnicFaultMr){ i << 8 | (mr[ERNIC_W(ERNIC_BUFRKEY)] & 0xff),
                                 ernic_pdt_va(mr), ernic_pdt_len(mr) };
            return true;
        }
    }
    return false;
}

/*
 * An opcode QP @qpn does not take: COMPARE_SWAP, or on a QP that
 * executes ERNIC-X atomics a reserved RC opcode.
 */
static void ernic_fault_fatal_unsupported(ErnicCore *c, uint32_t qpn,
                                          ErnicCause *k)
{
    if (ernic_atomic_responder(c, qpn)) {
        k->opcode = IB_OPC_RC_RESERVED;
        k->paylen = 8;
        return;
    }
    k->opcode = IB_OPC_READ_RESP_ONLY + 3;      /* 0x13, COMPARE_SWAP */
    k->paylen = 28;                             /* its AtomicETH */
}

/* A request at the expected PSN; false if the code has no such cause. */
static bool ernic_fault_fatal_request_cause(ErnicCore *c, uint32_t qpn,
                                            uint16_t code, ErnicCause *k)
{
    const ErnicQP *qp = &c->qp[qpn];
    uint32_t pmtu = ernic_qp_pmtu(c, qpn);
    ErnicFaultMr m;

    k->psn = (ernic_qp_reg(c, qpn, ERNIC_LSTRQREQ) + 1) & ERNIC_PSN_MASK;
    if (qp->rx_msg != ERNIC_RX_IDLE && code != ERNIC_FATAL_UNSUPPORTED_OPCODE) {
        return false;           /* the sequence checks need no message */
    }
    switch (code) {
    case ERNIC_FATAL_OPCODE_SEQ:        /* a MIDDLE with no FIRST */
    case ERNIC_FATAL_OPCODE_SEQ_AND_LENGTH:
        k->opcode = IB_OPC_SEND_MIDDLE;
        k->paylen = code == ERNIC_FATAL_OPCODE_SEQ ? pmtu : 8;
        return true;
    case ERNIC_FATAL_LENGTH:            /* a FIRST shorter than the PMTU */
        k->opcode = IB_OPC_SEND_FIRST;
        k->paylen = 8;
        return true;
    case ERNIC_FATAL_UNSUPPORTED_OPCODE:
        ernic_fault_fatal_unsupported(c, qpn, k);
        return true;
    case ERNIC_FATAL_WRITE_OPCODE_SEQ:
    case ERNIC_FATAL_WRITE_SEQ_AND_LENGTH:
        k->opcode = IB_OPC_WRITE_MIDDLE;
        k->paylen = code == ERNIC_FATAL_WRITE_OPCODE_SEQ ? pmtu : 8;
        return true;
    case ERNIC_FATAL_WRITE_LENGTH:
        k->opcode = IB_OPC_WRITE_FIRST;
        k->paylen = 8;
        k->dmalen = 2 * pmtu;
        return true;
    case ERNIC_FATAL_READ_RESOURCES:    /* 17 READs, none answered yet */
        k->opcode = IB_OPC_READ_REQUEST;
        k->repeat = ERNIC_READ_RES + 1 - qp->rd_count;
        return true;
    case ERNIC_FATAL_RKEY:              /* an index past the table */
        k->opcode = IB_OPC_WRITE_ONLY;
        k->paylen = k->dmalen = 8;
        k->rkey = 0xffffffff;
        return true;
    case ERNIC_FATAL_RETH_LENGTH:       /* a good key, past its region */
    case ERNIC_FATAL_RKEY_AND_LENGTH:   /* a wrong key byte, no range */
        if (!ernic_fault_fatal_find_mr(c, qpn, code != ERNIC_FATAL_RETH_LENGTH,
                                       &m)) {
            return false;
        }
        k->opcode = IB_OPC_WRITE_ONLY;
        k->paylen = k->dmalen = 8;
        k->rkey = code == ERNIC_FATAL_RETH_LENGTH ? m.rkey : m.rkey ^ 1;
        k->va = code == ERNIC_FATAL_RETH_LENGTH ? m.base + m.len :
                UINT64_MAX - 64;
        return true;
    default:
        return false;
    }
}

/* The oldest outstanding request. */
static const ErnicOsq *ernic_fault_fatal_oldest(const ErnicQP *qp)
{
    return &qp->osq[qp->osq_head % ERNIC_OSQ_DEPTH];
}

/* A response to the oldest request; false if the code has no cause now. */
static bool ernic_fault_fatal_response_cause(ErnicCore *c, uint32_t qpn,
                                             uint16_t code, uint8_t nak,
                                       ErnicCause *k)
{
    const ErnicQP *qp = &c->qp[qpn];
    const ErnicOsq *e;
    bool read;
    uint32_t idx, want;

    if (!qp->osq_count) {
        return false;           /* a response to nothing is dropped */
    }
    e = ernic_fault_fatal_oldest(qp);
    read = e->opcode == ERNIC_OP_READ;
    idx = read ? e->read_pkts : 0;
    k->psn = (e->psn + idx) & ERNIC_PSN_MASK;
    want = read ? MIN(e->pmtu, e->len - idx * e->pmtu) : 0;
    switch (code) {
    case ERNIC_FATAL_NAK_RECEIVED:
    case ERNIC_FATAL_AETH:              /* a reserved NAK code */
        k->opcode = IB_OPC_ACK;
        k->syndrome = code == ERNIC_FATAL_AETH ? IB_AETH_NAK | 0x04 : nak;
        return true;
    case ERNIC_FATAL_ACK_OPCODE:        /* ERNIC sends no atomics */
        /*
         * With ERNIC-X atomics an ATOMIC ACKNOWLEDGE answers them, and
         * for another request it is 0x1B: no cause, raised directly.
         */
        k->opcode = IB_OPC_ATOMIC_ACK;
        return !ernic_atomic_qp(c, qpn);
    case ERNIC_FATAL_BAD_RESPONSE:      /* a READ response out of place */
        k->opcode = !read || idx ? IB_OPC_READ_RESP_ONLY :
                    IB_OPC_READ_RESP_MIDDLE;
        k->paylen = 8;
        return true;
    case ERNIC_FATAL_READ_RESP_LAST_ONLY:
    case ERNIC_FATAL_READ_RESP_ONLY_LEN:
        if (!read || e->npkts != 1) {
            return false;
        }
        k->opcode = code == ERNIC_FATAL_READ_RESP_LAST_ONLY ?
                    IB_OPC_READ_RESP_LAST : IB_OPC_READ_RESP_ONLY;
        k->paylen = code == ERNIC_FATAL_READ_RESP_LAST_ONLY ? want :
                    want ? want - 1 : 1;
        return true;
    case ERNIC_FATAL_READ_RESP_MID_LEN:
    case ERNIC_FATAL_READ_RESP_LAST:
        if (!read || e->npkts < 2 ||
            (idx + 1 == e->npkts) != (code == ERNIC_FATAL_READ_RESP_LAST)) {
            return false;
        }
        k->opcode = code == ERNIC_FATAL_READ_RESP_LAST ?
                    IB_OPC_READ_RESP_LAST :
                    idx ? IB_OPC_READ_RESP_MIDDLE : IB_OPC_READ_RESP_FIRST;
        k->paylen = code == ERNIC_FATAL_READ_RESP_LAST ? want - 1 : 8;
        return true;
    default:
        return false;
    }
}

static bool ernic_fault_fatal_code_known(uint16_t code)
{
    switch (code) {
    case 0x01 ... 0x06:
    case 0x09 ... 0x0a:
    case 0x0c ... 0x0d:
    case 0x10 ... 0x13:
    case 0x15 ... 0x17:
    case 0x19 ... 0x1c:
    case 0x1e ... 0x1f:
        return true;
    default:
        return false;
    }
}

/* "fatal,qp=N,code=C[,nak=S]" */
bool ernic_fault_fatal_cmd(ErnicCore *c, QDict *d, Error **errp)
{
    ErnicCause k = { 0 };
    uint64_t code, nak;
    uint32_t qpn, statqp;
    bool cause;

    if (!ernic_fault_args_qp(c, d, true, &qpn, errp) ||
        !ernic_fault_args_u64(d, "code", 0, 0x1f, &code, errp) ||
        !ernic_fault_args_u64(d, "nak", IB_NAK_INVALID_REQ, IB_NAK_REMOTE_OP,
                              &nak, errp) ||
        !ernic_fault_args_end(d, errp)) {
        return false;
    }
    if (!ernic_fault_fatal_code_known(code)) {
        error_setg(errp, "ernic fault: code=0x%02" PRIx64 " is not a FATAL "
                   "code of PG332 Table 2-4", code);
        return false;
    }
    if (nak < IB_NAK_INVALID_REQ) {
        error_setg(errp, "ernic fault: nak=0x%02" PRIx64 ": 0x61 (invalid "
                   "request), 0x62 (remote access) or 0x63 (remote "
                   "operational)", nak);
        return false;
    }
    cause = ernic_fault_fatal_request_cause(c, qpn, code, &k) ||
            ernic_fault_fatal_response_cause(c, qpn, code, nak, &k);
    c->fault.last_code = 0;
    if (cause) {
        ernic_fault_fatal_deliver(c, qpn, &k);
    }
    statqp = ernic_qp_reg(c, qpn, ERNIC_STATQP);
    if ((statqp & ERNIC_STATQP_FATAL) && c->fault.last_code != code) {
        error_setg(errp, "ernic fault: QP%u: the cause of 0x%02" PRIx64
                   " gave FATAL 0x%02x", qpn, code, c->fault.last_code);
        c->fault.count[ERNIC_FC_FATAL]++;
        return false;
    }
    if (!(statqp & ERNIC_STATQP_FATAL)) {
        /* Raised directly; a NAK received names its syndrome (p.40). */
        if (code == ERNIC_FATAL_NAK_RECEIVED) {
            ernic_qp_set_reg(c, qpn, ERNIC_STATQP,
                             ERNIC_FIELD_DP32(statqp,
                                              ERNIC_STATQP_NAK_SYND_MASK,
                                              nak));
        }
        ernic_qp_fatal(c, qpn, code);
        c->fault.count[ERNIC_FC_FATAL_DIRECT]++;
    }
    c->fault.count[ERNIC_FC_FATAL]++;
    trace_ernic_fault_fatal(qpn, code, cause && c->fault.last_code == code);
    return true;
}
