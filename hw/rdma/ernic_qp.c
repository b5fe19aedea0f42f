/*
 * ERNIC QP context state: which state a QP is in (QPCONFi[0] "QP enable",
 * QPCONFi[6] "QP under recovery", STATQPi[0] "QP in fatal status"; PG332
 * v3.1 pp.41-45), entering FATAL (Table 2-4 and the incoming packet error
 * status queue, p.17, Fig. 2-3), and what the QPCONFi and STATQPi writes
 * of the QP deletion and QP fatal recovery procedures (ch.6 pp.61-63) do
 * to the transport engine.
 *
 * The states, their transitions and their IBTA counterparts are drawn in
 * docs/qp-states.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "ernic_core.h"
#include "trace.h"

static const char *const ernic_qp_state_names[] = {
    [ERNIC_QPS_DISABLED] = "disabled",
    [ERNIC_QPS_ENABLED] = "enabled",
    [ERNIC_QPS_FATAL] = "fatal",
    [ERNIC_QPS_RECOVERY] = "recovery",
};

ErnicQpState ernic_qp_state(ErnicCore *c, uint32_t qpn)
{
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);

    if (qpconf & ERNIC_QPCONF_UNDER_RECOVERY) {
        return ERNIC_QPS_RECOVERY;
    }
    if (ernic_qp_reg(c, qpn, ERNIC_STATQP) & ERNIC_STATQP_FATAL) {
        return ERNIC_QPS_FATAL;
    }
    return (qpconf & ERNIC_QPCONF_QP_EN) ? ERNIC_QPS_ENABLED
                                         : ERNIC_QPS_DISABLED;
}

/* Trace a state change; the state itself is always derived afresh. */
void ernic_qp_note_state(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    ErnicQpState s = ernic_qp_state(c, qpn);

    if (s != qp->state) {
        trace_ernic_qp_state(qpn, ernic_qp_state_names[qp->state],
                             ernic_qp_state_names[s]);
        qp->state = s;
    }
}

/*
 * QP @qpn enters FATAL with Table 2-4 code @code (PG332 p.17): one entry
 * in the status queue, then its engines stop (through the upcall, as the
 * engines sit above this layer) and INTSTS[2] rises.
 */
void ernic_qp_fatal(ErnicCore *c, uint32_t qpn, uint16_t code)
{
    uint32_t statqp = ernic_qp_reg(c, qpn, ERNIC_STATQP);

    /* One entry per QP: FATAL is left only by re-enabling the QP. */
    if (statqp & ERNIC_STATQP_FATAL) {
        return;
    }
    trace_ernic_qp_fatal(qpn, code);
    c->fault.last_code = code;
    ernic_qp_set_reg(c, qpn, ERNIC_STATQP, statqp | ERNIC_STATQP_FATAL);
    ernic_err_status(c, qpn, code);
    ernic_up_qp_stop(c, qpn);
    ernic_qp_note_state(c, qpn);
    ernic_irq_raise(c, ERNIC_INT_FATAL);
}

/*
 * STATQPi[26:24] and [30:28] are read/write (PG332 p.45): software
 * re-initialises the retry and RNR counts there (fatal recovery, re-init
 * step 9), and the engine counts down from what it wrote.
 */
void ernic_qp_statqp_written(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint32_t statqp = ernic_qp_reg(c, qpn, ERNIC_STATQP);

    qp->retries_left = ERNIC_FIELD_EX32(statqp, ERNIC_STATQP_RETRY_CNT_MASK);
    qp->rnr_left = ERNIC_FIELD_EX32(statqp, ERNIC_STATQP_RNR_CNT_MASK);
}

uint32_t ernic_qp_pmtu(ErnicCore *c, uint32_t qpn)
{
    uint32_t code = ERNIC_FIELD_EX32(ernic_qp_reg(c, qpn, ERNIC_QPCONF),
                                     ERNIC_QPCONF_PMTU_MASK);

    /* Codes 5..7 are reserved (PG332 p.41); they act as 4096. */
    return 256u << MIN(code, ERNIC_PMTU_4096);
}

/* This device's IPv4 or IPv6 address (IPv4XADD, IPv6XADD1..4). */
void ernic_qp_src_ip(ErnicCore *c, uint8_t *ip, bool ipv6)
{
    if (ipv6) {
        ernic_wire_ip_from_regs(ip, &c->gcsr[ERNIC_GW(ERNIC_IPv6XADD1)],
                                true);
    } else {
        ernic_wire_ip_from_regs(ip, &c->gcsr[ERNIC_GW(ERNIC_IPv4XADD)],
                                false);
    }
}

void ernic_qp_path(ErnicCore *c, uint32_t qpn, ErnicPath *p)
{
    uint32_t qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
    uint32_t adv = ernic_qp_reg(c, qpn, ERNIC_QPADVCONF);

    ernic_gcsr_mac(c, p->src_mac);
    stw_be_p(p->dst_mac, ernic_qp_reg(c, qpn, ERNIC_MACDESADDMSB));
    stl_be_p(p->dst_mac + 2, ernic_qp_reg(c, qpn, ERNIC_MACDESADDLSB));
    p->ipv6 = qpconf & ERNIC_QPCONF_IPV6;
    ernic_qp_src_ip(c, p->src_ip, p->ipv6);
    ernic_wire_ip_from_regs(p->dst_ip,
                            &c->qp[qpn].regs[ERNIC_W(ERNIC_IPDESADDR1)],
                            p->ipv6);
    p->tclass = adv & ERNIC_QPADVCONF_TC_MASK;
    p->ttl = ERNIC_FIELD_EX32(adv, ERNIC_QPADVCONF_TTL_MASK);
    p->pkey = ERNIC_FIELD_EX32(adv, ERNIC_QPADVCONF_PKEY_MASK);
    p->sport = ERNIC_FIELD_EX32(ernic_gcsr(c, ERNIC_XRNICCONF),
                                ERNIC_XRNICCONF_UDPSRC_MASK);
    p->dqpn = ernic_qp_reg(c, qpn, ERNIC_DESTQPCONF) & ERNIC_QPN_MASK;
    p->opclass = ernic_qp_xrc(c, qpn) ? IB_OPC_XRC : 0;
}

/*
 * An ERNIC-X XRC QP, initiator or target (docs/extension.md, "XRC")? A
 * UD or UC QP never is, whatever else EXTQPCONFi says.
 */
bool ernic_qp_xrc(ErnicCore *c, uint32_t qpn)
{
    uint32_t conf = c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)];

    return qpn != ERNIC_QP_GSI && ernic_ext_on(c, ERNIC_EXT_F_XRC) &&
           (conf & (ERNIC_EXTQPCONF_XRC_TGT | ERNIC_EXTQPCONF_XRC_INI)) &&
           !(conf & (ERNIC_EXTQPCONF_UD | ERNIC_EXTQPCONF_UC));
}


/*
 * Word @off of QP @qpn's ERNIC-X doorbell record (DBRECAMSBi:DBRECAi:
 * the SQ's at 0, the RQ's at ERNIC_RQREC_OFFSET; docs/extension.md,
 * "Doorbell records"), read once; its [15:0] into @idx. False when it
 * cannot be read. @addr says where, for the caller's log and trace.
 */
bool ernic_qp_dbrec_read(ErnicCore *c, uint32_t qpn, uint32_t off,
                         uint64_t *addr, uint32_t *idx)
{
    const uint32_t *x = c->qp[qpn].ext_regs;
    uint8_t w[4];

    *addr = deposit64(x[ERNIC_W(ERNIC_DBRECA)], 32, 32,
                      x[ERNIC_W(ERNIC_DBRECAMSB)]) + off;
    if (!ernic_dma_read(c, *addr, w, sizeof(w))) {
        return false;
    }
    *idx = ldl_le_p(w) & ERNIC_DBREC_PI_MASK;
    return true;
}

void ernic_qp_update_status(ErnicCore *c, uint32_t qpn)
{
    ErnicQP *qp = &c->qp[qpn];
    uint16_t depth = ernic_qp_reg(c, qpn, ERNIC_QDEPTH) & ERNIC_QDEPTH_SQ_MASK;
    uint32_t statqp = ernic_qp_reg(c, qpn, ERNIC_STATQP);
    uint16_t pi = depth ? ernic_qp_reg(c, qpn, ERNIC_SQPI) % depth : 0;

    statqp &= ~(ERNIC_STATQP_SQ_EMPTY | ERNIC_STATQP_OSQ_EMPTY |
                ERNIC_STATQP_OSQ_FULL);
    if (qp->sq_next == pi && qp->tx_idx == qp->osq_count) {
        statqp |= ERNIC_STATQP_SQ_EMPTY;
    }
    if (qp->osq_count == 0) {
        statqp |= ERNIC_STATQP_OSQ_EMPTY;
    } else if (qp->osq_count == ERNIC_OSQ_DEPTH) {
        statqp |= ERNIC_STATQP_OSQ_FULL;
    }
    statqp = ERNIC_FIELD_DP32(statqp, ERNIC_STATQP_RETRY_CNT_MASK,
                              qp->retries_left);
    statqp = ERNIC_FIELD_DP32(statqp, ERNIC_STATQP_RNR_CNT_MASK,
                              qp->rnr_left);
    ernic_qp_set_reg(c, qpn, ERNIC_STATQP, statqp);
    ernic_qp_set_reg(c, qpn, ERNIC_STATCURSQPTR, qp->sq_next);
}

void ernic_qp_reload_counts(ErnicCore *c, uint32_t qpn)
{
    uint32_t tc = ernic_qp_reg(c, qpn, ERNIC_TIMEOUTCONF);

    c->qp[qpn].retries_left = ERNIC_FIELD_EX32(tc,
                                               ERNIC_TIMEOUTCONF_RETRY_MASK);
    c->qp[qpn].rnr_left = ERNIC_FIELD_EX32(tc,
                                           ERNIC_TIMEOUTCONF_RNRRETRY_MASK);
}

void ernic_qp_peer_path(ErnicCore *c, uint32_t qpn, ErnicPath *p)
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

void ernic_qp_rx_fatal(ErnicCore *c, const ErnicPkt *pkt, uint32_t synd,
                       uint32_t qpn, uint16_t code)
{
    if (synd) {
        ernic_err_count_invalid(c, synd, qpn);
    }
    ernic_err_log(c, pkt->frame, pkt->len, synd);
    if (synd) {
        ernic_irq_raise(c, ERNIC_INT_PKT_VALIDATION_ERR);
    }
    ernic_qp_fatal(c, qpn, code);
}
