/*
 * ERNIC receive path: the packet validation checks of PG332 v3.1 Table
 * 2-3 that come before the transport layer, then each valid packet to
 * the completer (responses), the responder (requests), QP1 (MADs) or the
 * Ethernet path (frames that are not RoCEv2). Frames come up from the
 * link (ernic_link.c) through ernic_up_rx().
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

static bool ernic_net_ip_matches(const ErnicPkt *pkt, size_t off,
                                 const uint8_t *ip)
{
    return !memcmp(pkt->frame + pkt->l3 + off, ip, pkt->ipv6 ? 16 : 4);
}

/* The destination IP is this device's (IPv4XADD, IPv6XADD1..4). */
static uint32_t ernic_net_check_dst_ip(ErnicCore *c, const ErnicPkt *pkt)
{
    uint8_t ip[16];

    ernic_qp_src_ip(c, ip, pkt->ipv6);
    return ernic_net_ip_matches(pkt, pkt->ipv6 ? 24 : 16, ip) ? 0 :
           ERNIC_SYND_DST_IP;
}

/*
 * The destination QP exists, is enabled and has the packet's IP version,
 * and a connected QP takes packets from its peer only (Table 2-3).
 */
static uint32_t ernic_net_check_qp(ErnicCore *c, const ErnicPkt *pkt)
{
    uint32_t qpn = pkt->dqpn, qpconf, synd = 0;
    ErnicPath path;

    if (qpn == 0 || qpn > c->num_qp) {
        return ERNIC_SYND_QP_UNSUPPORTED;
    }
    qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
    if (!(qpconf & ERNIC_QPCONF_QP_EN)) {
        synd |= ERNIC_SYND_QP_NOT_ENABLED;
    }
    /* A UD QP takes datagrams of either IP version (ernic_ud_path()). */
    if (!(qpconf & ERNIC_QPCONF_IPV6) != !pkt->ipv6 && !ernic_ud_qp(c, qpn)) {
        synd |= ERNIC_SYND_IP_VERSION;
    }
    /* QP1 and UD QPs take datagrams from anyone (docs/extension.md). */
    if (qpn != ERNIC_QP_GSI && !ernic_ud_qp(c, qpn)) {
        ernic_qp_path(c, qpn, &path);
        if (memcmp(pkt->frame + 6, path.dst_mac, 6)) {
            synd |= ERNIC_SYND_SRC_MAC;
        }
        if (!ernic_net_ip_matches(pkt, pkt->ipv6 ? 8 : 12, path.dst_ip)) {
            synd |= ERNIC_SYND_SRC_IP;
        }
    }
    return synd;
}

/*
 * A packet that passed every check, to the engine that takes it: @wire as
 * it came, @pkt as the engines take it (an XRC QP's parsed as RC's).
 */
static void ernic_net_dispatch(ErnicCore *c, const ErnicPkt *wire,
                               const ErnicPkt *pkt)
{
    uint32_t qpn = wire->dqpn;

    ernic_gcsr_set(c, ERNIC_LSTINPKT, wire->opcode | (qpn & 0xff) << 8 |
                   (wire->psn & 0xffff) << 16);
    trace_ernic_rx(qpn, wire->opcode, wire->psn, wire->paylen);
    if (qpn == ERNIC_QP_GSI) {
        ernic_resp_gsi_receive(c, wire);
        return;
    }
    if (ernic_qp_state(c, qpn) != ERNIC_QPS_ENABLED) {
        /*
         * A FATAL QP is disconnected, one under recovery is being cleared:
         * nothing more is processed (PG332 p.14), and nothing is answered.
         */
        ernic_gcsr_count16(c, ERNIC_INALLDRPPKTCNT, true);
        return;
    }
    if (ernic_ud_qp(c, qpn)) {
        ernic_ud_receive(c, qpn, pkt);
    } else if (ernic_uc_qp(c, qpn)) {
        ErnicPkt uc;

        if (ernic_uc_accept(c, qpn, pkt, &uc)) {
            ernic_resp_receive(c, qpn, &uc);
        }
    } else if (pkt->flags & ERNIC_OPF_RESP) {
        ernic_comp_receive(c, qpn, pkt);
    } else {
        ernic_resp_receive(c, qpn, pkt);
    }
}

/*
 * ERNIC-X multicast: a packet to DestQP 0xFFFFFF is checked against the
 * group table (its IP and MAC) instead of this device's address and one
 * QP, and goes to each QP of its group (docs/extension.md).
 */
static void ernic_net_rx_mcast(ErnicCore *c, const ErnicPkt *pkt,
                               uint32_t synd)
{
    if (!synd) {
        ernic_gcsr_set(c, ERNIC_LSTINPKT, pkt->opcode | 0xff00 |
                       (pkt->psn & 0xffff) << 16);
        trace_ernic_rx(pkt->dqpn, pkt->opcode, pkt->psn, pkt->paylen);
        synd = ernic_mcast_receive(c, pkt);
    }
    if (synd) {
        ernic_err_rx(c, pkt->frame, pkt->len, synd, 0);
    }
}

/*
 * A unicast packet (its frame @len bytes) with syndromes @synd so far:
 * dropped and logged if it has any, else dispatched. An XRC QP's packet
 * is parsed as the RC packet it carries (ernic_xrc.c) and gets the
 * length check ernic_wire_parse() makes of RC's first.
 */
static void ernic_net_take(ErnicCore *c, const ErnicPkt *pkt, size_t len,
                           uint32_t synd)
{
    const ErnicPkt *rc = pkt;
    ErnicPkt x;

    if (!synd && ernic_xrc_accept(c, pkt->dqpn, pkt, &x)) {
        rc = &x;
        synd = ernic_wire_stray_payload(&x) ? ERNIC_SYND_PMTU : 0;
    }
    if (synd) {
        ernic_err_rx(c, pkt->frame, len, synd, pkt->dqpn);
        return;
    }
    ernic_net_dispatch(c, pkt, rc);
}

void ernic_net_rx(ErnicCore *c, const uint8_t *buf, size_t len)
{
    uint8_t mac[6];
    uint32_t synd;
    ErnicPkt pkt;
    bool roce;

    synd = ernic_wire_parse(buf, len, &pkt, &roce);
    if (!roce) {
        ernic_eth_receive(c, buf, len);
        return;
    }
    if (pkt.bth && (uint32_t)ldl_le_p(buf + pkt.len - ERNIC_ICRC_LEN) !=
        ernic_wire_icrc(buf, pkt.l3, pkt.len, pkt.ipv6)) {
        synd |= ERNIC_SYND_ICRC;
    }
    if (!(ernic_gcsr(c, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN)) {
        trace_ernic_rx_disabled(len);
        return;
    }
    ernic_gcsr_count16(c, ERNIC_INALLDRPPKTCNT, false);
    ernic_gcsr_mac(c, mac);
    if (memcmp(buf, mac, 6)) {
        synd |= ERNIC_SYND_DST_MAC;
    }
    if (!pkt.bth) {
        /* Malformed below the BTH: nothing more can be checked. */
        ernic_err_rx(c, buf, len, synd, 0);
        return;
    }
    if (pkt.dqpn == ERNIC_MC_QPN && ernic_ext_on(c, ERNIC_EXT_F_MCAST)) {
        ernic_net_rx_mcast(c, &pkt, synd & ~ERNIC_SYND_DST_MAC);
        return;
    }
    synd |= ernic_net_check_dst_ip(c, &pkt) | ernic_net_check_qp(c, &pkt);
    ernic_net_take(c, &pkt, len, synd);
}
