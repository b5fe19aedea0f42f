/*
 * ERNIC-X multicast (docs/extension.md, "Multicast"): the group table
 * behind its window, and a UD packet sent to a group (BTH DestQP
 * 0xFFFFFF, IBTA 10.5) handed to every UD QP attached to it. RoCEv2
 * maps a group's GID to an IP multicast address, and that to an
 * Ethernet one (RFC 1112, RFC 2464), which the device accepts for the
 * groups in its table only. Not PG332: with EXTCTRL.MCAST off a packet
 * to QP 0xFFFFFF is one for a QP the device does not have.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ernic_core.h"
#include "trace.h"

static uint32_t ernic_mcast_reg(ErnicCore *c, hwaddr off)
{
    return c->mc_regs[ERNIC_EXT_MC_W(off)];
}

static void ernic_mcast_set(ErnicCore *c, hwaddr off, uint32_t val)
{
    c->mc_regs[ERNIC_EXT_MC_W(off)] = val;
}

/* The window as a group; its IP as IPDESADDRi holds one (MCIP1: IPv4). */
static void ernic_mcast_from_window(ErnicCore *c, ErnicMcg *g)
{
    uint32_t conf = ernic_mcast_reg(c, ERNIC_MCCONF);

    g->valid = conf & ERNIC_MCCONF_VALID;
    g->ipv6 = conf & ERNIC_MCCONF_IPV6;
    ernic_wire_ip_from_regs(g->ip, &c->mc_regs[ERNIC_EXT_MC_W(ERNIC_MCIP1)],
                            g->ipv6);
    memcpy(g->qps, &c->mc_regs[ERNIC_EXT_MC_W(ERNIC_MCQP0)], sizeof(g->qps));
}

static void ernic_mcast_to_window(ErnicCore *c, const ErnicMcg *g)
{
    ernic_mcast_set(c, ERNIC_MCCONF, (g->valid ? ERNIC_MCCONF_VALID : 0) |
                    (g->ipv6 ? ERNIC_MCCONF_IPV6 : 0));
    ernic_wire_ip_to_regs(&c->mc_regs[ERNIC_EXT_MC_W(ERNIC_MCIP1)], g->ip,
                          g->ipv6);
    memcpy(&c->mc_regs[ERNIC_EXT_MC_W(ERNIC_MCQP0)], g->qps, sizeof(g->qps));
}

/* A write to the group window at @addr: MCCMD acts on entry MCIDX. */
void ernic_mcast_written(ErnicCore *c, hwaddr addr)
{
    uint32_t cmd, idx, sts = ERNIC_MCSTS_OK;

    if (addr != ERNIC_MCCMD) {
        return;
    }
    cmd = ernic_mcast_reg(c, ERNIC_MCCMD);
    idx = ernic_mcast_reg(c, ERNIC_MCIDX) % ERNIC_MCG_ENTRIES;
    if (cmd == ERNIC_MCCMD_WRITE) {
        ernic_mcast_from_window(c, &c->mcg[idx]);
    } else if (cmd == ERNIC_MCCMD_READ) {
        ernic_mcast_to_window(c, &c->mcg[idx]);
    } else {
        sts = ERNIC_MCSTS_BAD_COMMAND;
    }
    trace_ernic_mcast_command(cmd, idx, sts);
    ernic_mcast_set(c, ERNIC_MCSTS, sts);
    ernic_mcast_set(c, ERNIC_MCCMD, 0);
}

/* The Ethernet address of IP multicast group @g (RFC 1112, RFC 2464). */
static void ernic_mcast_mac(const ErnicMcg *g, uint8_t *mac)
{
    if (g->ipv6) {
        mac[0] = mac[1] = 0x33;
        memcpy(mac + 2, g->ip + 12, 4);
    } else {
        mac[0] = 0x01;
        mac[1] = 0x00;
        mac[2] = 0x5e;
        mac[3] = g->ip[1] & 0x7f;
        mac[4] = g->ip[2];
        mac[5] = g->ip[3];
    }
}

/* The valid group @pkt is addressed to, by IP and MAC; NULL if none. */
static const ErnicMcg *ernic_mcast_group(ErnicCore *c, const ErnicPkt *pkt)
{
    const uint8_t *dip = pkt->frame + pkt->l3 + (pkt->ipv6 ? 24 : 16);
    uint8_t mac[6];
    int i;

    for (i = 0; i < ERNIC_MCG_ENTRIES; i++) {
        const ErnicMcg *g = &c->mcg[i];

        if (!g->valid || g->ipv6 != pkt->ipv6 ||
            memcmp(g->ip, dip, pkt->ipv6 ? 16 : 4)) {
            continue;
        }
        ernic_mcast_mac(g, mac);
        return memcmp(pkt->frame, mac, 6) ? NULL : g;
    }
    return NULL;
}

/*
 * A packet to DestQP 0xFFFFFF, with EXTCTRL.MCAST on: each enabled UD
 * QP of its group takes a copy as a UD receive of its own (Q_Key,
 * opcode, a receive WQE each; ernic_ud_receive()), of either IP version
 * as any UD receive. At most C_NUM_QP copies: the work per packet is
 * bounded. Returns the Table 2-3 syndrome when no group of this device
 * has the packet's address.
 */
uint32_t ernic_mcast_receive(ErnicCore *c, const ErnicPkt *pkt)
{
    const ErnicMcg *g = ernic_mcast_group(c, pkt);
    uint32_t qpn, n = 0;

    if (!g) {
        return ERNIC_SYND_DST_MAC | ERNIC_SYND_DST_IP;
    }
    for (qpn = 2; qpn <= c->num_qp; qpn++) {
        uint32_t bit = qpn - 1;

        if (!(g->qps[bit / 32] & (1u << (bit % 32))) ||
            ernic_qp_state(c, qpn) != ERNIC_QPS_ENABLED ||
            !ernic_ud_qp(c, qpn)) {
            continue;
        }
        ernic_ud_receive(c, qpn, pkt);
        n++;
    }
    trace_ernic_mcast_rx(g - c->mcg, pkt->opcode, n);
    return 0;
}
