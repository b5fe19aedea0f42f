/*
 * ERNIC network side: transmit to the QEMU netdev or, for frames to the
 * device's own MAC address, internal loopback; and the receive path with
 * the packet validation checks of PG332 v3.1 Table 2-3 that come before
 * the transport layer, the error buffer (ERRBUFBA, p.33) and the
 * incoming packet error status queue (IPKTERRQBA, p.17, Fig. 2-3).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci_device.h"
#include "system/dma.h"
#include "ernic_core.h"
#include "trace.h"

static void ernic_net_rx(ErnicCore *c, const uint8_t *buf, size_t len);

static void ernic_local_mac(ErnicCore *c, uint8_t *mac)
{
    stw_be_p(mac, ernic_gcsr(c, ERNIC_MACXADDMSB));
    stl_be_p(mac + 2, ernic_gcsr(c, ERNIC_MACXADDLSB));
}

void ernic_net_defer(ErnicCore *c, const uint8_t *buf, size_t len)
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

void ernic_net_xmit(ErnicCore *c, uint32_t qpn, const uint8_t *buf,
                    size_t len)
{
    if (unlikely(c->fault.armed) && ernic_fault_tx(c, qpn, buf, len)) {
        return;                 /* an injected fault took it */
    }
    ernic_net_put(c, buf, len);
}

void ernic_net_put(ErnicCore *c, const uint8_t *buf, size_t len)
{
    uint8_t mac[6];
    bool sent;

    ernic_local_mac(c, mac);
    if (!memcmp(buf, mac, 6)) {
        /*
         * A frame to ourselves never reaches the wire (as rxe's loopback):
         * two QPs of one device can talk. Delivered from a bottom half so
         * that receive processing never nests in transmit.
         */
        if (unlikely(c->fault.armed) && ernic_fault_loop(c, buf, len)) {
            return;             /* an injected fault took it */
        }
        ernic_net_defer(c, buf, len);
        return;
    }
    c->in_tx = true;
    sent = c->tx(c->tx_opaque, buf, len);
    c->in_tx = false;
    if (!sent) {
        /* The backend queued the frame; hold further ones until resumed. */
        c->tx_blocked = true;
    }
}

void ernic_core_tx_resume(ErnicCore *c)
{
    c->tx_blocked = false;
    qemu_bh_schedule(c->sq_bh);
    qemu_bh_schedule(c->eth_bh);
}

void ernic_net_loopback_bh(void *opaque)
{
    ErnicCore *c = opaque;
    unsigned n = g_queue_get_length(&c->lo_queue);
    ErnicHeldFrame *h;

    if (!ernic_core_may_run()) {
        return;
    }
    /* Frames queued while delivering wait for the next turn. */
    while (n-- && (h = g_queue_pop_head(&c->lo_queue))) {
        ernic_net_rx(c, h->data, h->len);
        g_free(h);
    }
    if (!g_queue_is_empty(&c->lo_queue)) {
        qemu_bh_schedule(c->lo_bh);
    }
}

void ernic_net_reset(ErnicCore *c)
{
    qemu_bh_cancel(c->lo_bh);
    g_queue_clear_full(&c->lo_queue, g_free);
    c->tx_blocked = false;
}

/*
 * Log a failing packet in the error buffer: a 4-byte syndrome, then as
 * much of the frame as fits, headers first (PG332 p.16; Table 3-2 sizes
 * the entries at 256 bytes). A peer can make this happen for every frame,
 * so a failed write is traced, not logged.
 */
static void ernic_errbuf_log(ErnicCore *c, const uint8_t *buf, size_t len,
                             uint32_t synd)
{
    uint64_t base = ((uint64_t)ernic_gcsr(c, ERNIC_ERRBUFBAMSB) << 32) |
                    ernic_gcsr(c, ERNIC_ERRBUFBA);
    uint32_t sz = ernic_gcsr(c, ERNIC_ERRBUFSZ);
    uint32_t num = sz & 0xffff, size = sz >> 16;
    uint32_t wptr = ernic_gcsr(c, ERNIC_ERRBUFWPTR);
    uint64_t addr;
    uint8_t s[ERNIC_ERRBUF_SYND_SIZE];

    if (!num || size <= ERNIC_ERRBUF_SYND_SIZE) {
        return;
    }
    addr = base + (uint64_t)(wptr % num) * size;
    stl_le_p(s, synd);
    if (ernic_dma_write(c, addr, s, sizeof(s))) {
        ernic_dma_write(c, addr + sizeof(s), buf, MIN(len, size - sizeof(s)));
    }
    ernic_gcsr_set(c, ERNIC_ERRBUFWPTR, (wptr + 1) & 0xffff);
}

/*
 * A packet that failed validation (Table 2-3): it is not executed, whether
 * the reaction is a drop, a NAK or FATAL, so it counts as invalid and
 * dropped.
 */
static void ernic_net_count_invalid(ErnicCore *c, uint32_t synd,
                                    uint32_t qpn)
{
    trace_ernic_rx_invalid(qpn, synd);
    ernic_count16(c, ERNIC_INALLDRPPKTCNT, true);
    ernic_count16(c, ERNIC_ININVDUPCNT, false);
}

void ernic_net_rx_error(ErnicCore *c, const uint8_t *buf, size_t len,
                        uint32_t synd, uint32_t qpn)
{
    ernic_net_count_invalid(c, synd, qpn);
    if (ernic_gcsr(c, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_ERRBUF_EN) {
        ernic_errbuf_log(c, buf, len, synd);
    }
    ernic_core_raise(c, ERNIC_INT_PKT_VALIDATION_ERR);
}

void ernic_net_rx_fatal(ErnicCore *c, const ErnicPkt *pkt, uint32_t synd,
                        uint32_t qpn, uint16_t code)
{
    if (synd) {
        ernic_net_count_invalid(c, synd, qpn);
    }
    ernic_errbuf_log(c, pkt->frame, pkt->len, synd);
    if (synd) {
        ernic_core_raise(c, ERNIC_INT_PKT_VALIDATION_ERR);
    }
    ernic_qp_fatal(c, qpn, code);
}

static bool ernic_ip_matches(const ErnicPkt *pkt, size_t off,
                             const uint8_t *ip)
{
    return !memcmp(pkt->frame + pkt->l3 + off, ip, pkt->ipv6 ? 16 : 4);
}

void ernic_net_receive(ErnicCore *c, const uint8_t *buf, size_t len)
{
    if (unlikely(c->fault.armed) && ernic_fault_rx(c, buf, len)) {
        return;                 /* an injected fault took it */
    }
    ernic_net_take(c, buf, len);
}

void ernic_net_take(ErnicCore *c, const uint8_t *buf, size_t len)
{
    if (c->in_tx) {
        /*
         * A backend that delivers synchronously (a hub) called us from
         * inside our own transmit, before the engine has recorded what it
         * sent: take the frame after this turn (docs/security.md).
         */
        trace_ernic_rx_nested(len);
        ernic_net_defer(c, buf, len);
        return;
    }
    ernic_net_rx(c, buf, len);
}

static void ernic_net_rx(ErnicCore *c, const uint8_t *buf, size_t len)
{
    size_t src_off, dst_off;
    uint8_t mac[6], ip[16];
    uint32_t synd, qpn = 0, qpconf;
    ErnicPkt pkt;
    ErnicPath path;
    bool roce;
    int i;

    synd = ernic_wire_parse(buf, len, &pkt, &roce);
    if (!roce) {
        ernic_eth_receive(c, buf, len);
        return;
    }
    if (pkt.bth && (uint32_t)ldl_le_p(buf + pkt.len - ERNIC_ICRC_LEN) !=
        ernic_icrc(buf, pkt.l3, pkt.len, pkt.ipv6)) {
        synd |= ERNIC_SYND_ICRC;
    }
    if (!(ernic_gcsr(c, ERNIC_XRNICCONF) & ERNIC_XRNICCONF_EN)) {
        trace_ernic_rx_disabled(len);
        return;
    }
    ernic_count16(c, ERNIC_INALLDRPPKTCNT, false);

    ernic_local_mac(c, mac);
    if (memcmp(buf, mac, 6)) {
        synd |= ERNIC_SYND_DST_MAC;
    }
    if (!pkt.bth) {
        /* Malformed below the BTH: nothing more can be checked. */
        ernic_net_rx_error(c, buf, len, synd, 0);
        return;
    }
    src_off = pkt.ipv6 ? 8 : 12;
    dst_off = pkt.ipv6 ? 24 : 16;
    if (pkt.ipv6) {
        for (i = 0; i < 4; i++) {
            stl_be_p(ip + 4 * i, ernic_gcsr(c, ERNIC_IPv6XADD4 - 4 * i));
        }
    } else {
        stl_be_p(ip, ernic_gcsr(c, ERNIC_IPv4XADD));
    }
    if (!ernic_ip_matches(&pkt, dst_off, ip)) {
        synd |= ERNIC_SYND_DST_IP;
    }

    qpn = pkt.dqpn;
    if (qpn == 0 || qpn > c->num_qp) {
        synd |= ERNIC_SYND_QP_UNSUPPORTED;
    } else {
        qpconf = ernic_qp_reg(c, qpn, ERNIC_QPCONF);
        if (!(qpconf & ERNIC_QPCONF_QP_EN)) {
            synd |= ERNIC_SYND_QP_NOT_ENABLED;
        }
        if (!(qpconf & ERNIC_QPCONF_IPV6) != !pkt.ipv6) {
            synd |= ERNIC_SYND_IP_VERSION;
        }
        /* A connected QP takes packets from its peer only. */
        if (qpn != ERNIC_QP_GSI) {
            ernic_qp_path(c, qpn, &path);
            if (memcmp(buf + 6, path.dst_mac, 6)) {
                synd |= ERNIC_SYND_SRC_MAC;
            }
            if (!ernic_ip_matches(&pkt, src_off, path.dst_ip)) {
                synd |= ERNIC_SYND_SRC_IP;
            }
        }
    }
    if (synd) {
        ernic_net_rx_error(c, buf, len, synd, qpn);
        return;
    }

    ernic_gcsr_set(c, ERNIC_LSTINPKT, pkt.opcode | (qpn & 0xff) << 8 |
                   (pkt.psn & 0xffff) << 16);
    trace_ernic_rx(qpn, pkt.opcode, pkt.psn, pkt.paylen);
    if (qpn == ERNIC_QP_GSI) {
        ernic_resp_gsi_receive(c, &pkt);
        return;
    }
    if (ernic_qp_state(c, qpn) != ERNIC_QPS_ENABLED) {
        /*
         * A FATAL QP is disconnected, one under recovery is being cleared:
         * nothing more is processed (PG332 p.14), and nothing is answered.
         */
        ernic_count16(c, ERNIC_INALLDRPPKTCNT, true);
        return;
    }
    if (pkt.flags & ERNIC_OPF_RESP) {
        ernic_comp_receive(c, qpn, &pkt);
    } else {
        ernic_resp_receive(c, qpn, &pkt);
    }
}
