/*
 * ERNIC-X UD QPs (docs/extension.md, "UD QPs"): the address handle table
 * behind its window, a UD QP's send WQE made into one UD SEND packet to
 * the AH it names, and a UD receive placed with its 40-byte GRH area as
 * IBTA 11.4.1.2 wants. Not PG332: with EXTCTRL.UD off no QP is a UD QP.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "ernic_core.h"
#include "trace.h"

static uint32_t ernic_ud_reg(ErnicCore *c, hwaddr off)
{
    return c->ah_regs[ERNIC_EXT_AH_W(off)];
}

static void ernic_ud_set(ErnicCore *c, hwaddr off, uint32_t val)
{
    c->ah_regs[ERNIC_EXT_AH_W(off)] = val;
}

/* The window as an entry. */
static void ernic_ud_ah_from_window(ErnicCore *c, ErnicAh *ah)
{
    uint32_t conf = ernic_ud_reg(c, ERNIC_AHCONF);

    ah->valid = conf & ERNIC_AHCONF_VALID;
    ah->ipv6 = conf & ERNIC_AHCONF_IPV6;
    ah->ttl = ERNIC_FIELD_EX32(conf, ERNIC_AHCONF_TTL_MASK);
    ah->tclass = ERNIC_FIELD_EX32(conf, ERNIC_AHCONF_TCLASS_MASK);
    ah->pd = ernic_ud_reg(c, ERNIC_AHPD);
    stw_be_p(ah->mac, ernic_ud_reg(c, ERNIC_AHMACMSB));
    stl_be_p(ah->mac + 2, ernic_ud_reg(c, ERNIC_AHMACLSB));
    /* As IPDESADDRi: AHIP4 holds bits [127:96], AHIP1 an IPv4 address. */
    ernic_wire_ip_from_regs(ah->ip, &c->ah_regs[ERNIC_EXT_AH_W(ERNIC_AHIP1)],
                            ah->ipv6);
}

static void ernic_ud_ah_to_window(ErnicCore *c, const ErnicAh *ah)
{
    ernic_ud_set(c, ERNIC_AHCONF,
                 (ah->valid ? ERNIC_AHCONF_VALID : 0) |
                 (ah->ipv6 ? ERNIC_AHCONF_IPV6 : 0) |
                 ERNIC_FIELD_DP32(ah->ttl, ERNIC_AHCONF_TCLASS_MASK,
                                  ah->tclass));
    ernic_ud_set(c, ERNIC_AHPD, ah->pd);
    ernic_ud_set(c, ERNIC_AHMACMSB, lduw_be_p(ah->mac));
    ernic_ud_set(c, ERNIC_AHMACLSB, ldl_be_p(ah->mac + 2));
    ernic_wire_ip_to_regs(&c->ah_regs[ERNIC_EXT_AH_W(ERNIC_AHIP1)], ah->ip,
                          ah->ipv6);
}

/* AHCMD: one command on entry AHIDX; its result goes to AHSTS. */
static uint32_t ernic_ud_ah_command(ErnicCore *c, uint32_t cmd)
{
    uint32_t idx = ernic_ud_reg(c, ERNIC_AHIDX);

    if (idx >= ERNIC_AH_ENTRIES) {
        return ERNIC_AHSTS_BAD_INDEX;
    }
    switch (cmd) {
    case ERNIC_AHCMD_WRITE:
        ernic_ud_ah_from_window(c, &c->aht[idx]);
        return ERNIC_AHSTS_OK;
    case ERNIC_AHCMD_READ:
        ernic_ud_ah_to_window(c, &c->aht[idx]);
        return ERNIC_AHSTS_OK;
    default:
        return ERNIC_AHSTS_BAD_COMMAND;
    }
}

/* A write to the AH window at @addr. */
void ernic_ud_written(ErnicCore *c, hwaddr addr)
{
    uint32_t cmd, sts;

    if (addr != ERNIC_AHCMD) {
        return;
    }
    cmd = ernic_ud_reg(c, ERNIC_AHCMD);
    sts = ernic_ud_ah_command(c, cmd);
    trace_ernic_ud_ah_command(cmd, ernic_ud_reg(c, ERNIC_AHIDX), sts);
    ernic_ud_set(c, ERNIC_AHSTS, sts);
    ernic_ud_set(c, ERNIC_AHCMD, 0);
}

/*
 * Is QP @qpn a UD QP (EXTQPCONFi[5] with the feature)? It also needs
 * keyed SGEs and receive WQEs, which name every byte it moves.
 */
bool ernic_ud_qp(ErnicCore *c, uint32_t qpn)
{
    return qpn != ERNIC_QP_GSI && ernic_ext_on(c, ERNIC_EXT_F_UD) &&
           (c->qp[qpn].ext_regs[ERNIC_W(ERNIC_EXTQPCONF)] &
            ERNIC_EXTQPCONF_UD) &&
           ernic_ext_xwqe_on(c, qpn) && ernic_ext_rx_wqe_on(c, qpn);
}

/*
 * May UD QP @qpn send WQE @e? A SEND (with Immediate) of at most the
 * path MTU sampled at fetch, to the AH its RTAG names: valid and of the
 * QP's PD. The entry is copied into @ah, once, for the packet: the
 * driver may rewrite the table meanwhile, and @e may come from a
 * migration stream, so nothing of it is trusted from the fetch.
 */
static bool ernic_ud_check(ErnicCore *c, uint32_t qpn, const ErnicOsq *e,
                           ErnicAh *ah)
{
    if (e->rkey >= c->ah_entries ||
        (e->opcode != ERNIC_OP_SEND && e->opcode != ERNIC_OP_SEND_IMM) ||
        e->pmtu > (256u << ERNIC_PMTU_4096) || e->len > e->pmtu) {
        return false;
    }
    *ah = c->aht[e->rkey];
    return ah->valid &&
           ah->pd == (ernic_qp_reg(c, qpn, ERNIC_PD) & 0xffffff);
}

/*
 * The path of a UD packet: the QP's P_Key and this device, the AH's
 * rest. Its IP version is the AH's, whatever QPCONFi[7] says: a UD QP
 * talks to IPv4 and IPv6 peers alike, as a RoCEv2 UD QP does on rxe and
 * mlx5 (docs/extension.md, "UD QPs").
 */
static void ernic_ud_path(ErnicCore *c, uint32_t qpn, const ErnicOsq *e,
                          const ErnicAh *ah, ErnicPath *p)
{
    ernic_qp_path(c, qpn, p);
    p->ipv6 = ah->ipv6;
    ernic_qp_src_ip(c, p->src_ip, p->ipv6);
    memcpy(p->dst_mac, ah->mac, 6);
    memcpy(p->dst_ip, ah->ip, 16);
    p->ttl = ah->ttl;
    p->tclass = ah->tclass;
    p->dqpn = e->raddr & ERNIC_QPN_MASK;
}

/*
 * Send WQE @e of UD QP @qpn as one UD SEND ONLY packet (with Immediate):
 * BTH with the QP's next PSN and no AckReq, DETH with the WQE's Q_Key and
 * this QP's number (IBTA 9.8.3). Its data is the SGEs', LADDR's, or
 * with no SGE up to 16 bytes of SDATA, as an RC SEND's. The WQE
 * completes once sent, or with ERRFLAG and FATAL 0x05 when it is refused
 * (ernic_ud_check()) or its data cannot be read.
 */
void ernic_ud_send(ErnicCore *c, uint32_t qpn, ErnicOsq *e, uint8_t *f)
{
    uint8_t opcode = e->opcode == ERNIC_OP_SEND_IMM ?
                     IB_OPC_UD_SEND_ONLY_IMM : IB_OPC_UD_SEND_ONLY;
    size_t ext = ERNIC_DETH_LEN + (e->opcode == ERNIC_OP_SEND_IMM ?
                                   ERNIC_IMMDT_LEN : 0);
    uint32_t psn = ernic_qp_reg(c, qpn, ERNIC_SQPSN) & ERNIC_PSN_MASK;
    ErnicPath path;
    ErnicXmit x;
    ErnicAh ah;
    size_t end;
    uint8_t *p;

    if (!ernic_ud_check(c, qpn, e, &ah)) {
        e->error = true;
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "UD WQE %u: opcode 0x%x, %u bytes, AH %u refused: "
                          "FATAL", e->slot, e->opcode, e->len, e->rkey);
        return;
    }
    ernic_ud_path(c, qpn, e, &ah, &path);
    end = ernic_wire_build(f, &path, opcode, psn, false, ext, e->len);
    p = f + end;
    stl_be_p(p, e->raddr >> 32);
    stl_be_p(p + 4, qpn);
    if (e->opcode == ERNIC_OP_SEND_IMM) {
        stl_be_p(p + ERNIC_DETH_LEN, e->imm);
    }
    p += ext;
    ernic_xmit_init(c, &x, f, p - f, e->len, path.ipv6);
    if (!e->nsge && e->len <= ERNIC_WQE_SDATA_MAX) {
        /* Up to 16 bytes of SEND data in the WQE (PG332 Table 2-1). */
        memcpy(p, e->sdata, e->len);
    } else if (!ernic_xmit_gather(c, &x, e->sge, e->nsge, e->laddr, e->len,
                                  0)) {
        e->error = true;
        ERNIC_GUEST_FATAL(c, qpn, ERNIC_FATAL_WQE_PROCESSOR,
                          "read of UD WQE %u data failed: FATAL", e->slot);
        return;
    }
    ernic_qp_set_reg(c, qpn, ERNIC_SQPSN, (psn + 1) & ERNIC_PSN_MASK);
    trace_ernic_tx_req(qpn, opcode, psn, e->len);
    ernic_gcsr_count16(c, ERNIC_OUTIOPKTCNT, false);
    ernic_xmit_send(c, &x, qpn);
}

/*
 * A packet for UD QP @qpn: a UD SEND with the QP's Q_Key (IBTA 10.2.4,
 * C10-15) takes the next receive WQE, of the QP or its SRQ. Anything
 * else, a wrong Q_Key, no free WQE or a failed DMA drops it: UD has no
 * ACK, NAK or RNR (IBTA 9.7.5), and the QP stays as it is.
 */
void ernic_ud_receive(ErnicCore *c, uint32_t qpn, const ErnicPkt *pkt)
{
    uint32_t qkey = c->qp[qpn].ext_regs[ERNIC_W(ERNIC_QKEY)];
    uint8_t area[ERNIC_UD_GRH_AREA];

    if ((pkt->opcode != IB_OPC_UD_SEND_ONLY &&
         pkt->opcode != IB_OPC_UD_SEND_ONLY_IMM) || pkt->deth_qkey != qkey ||
        !ernic_rq_take(c, qpn)) {
        trace_ernic_ud_drop(qpn, pkt->opcode, pkt->deth_qkey, qkey);
        ernic_gcsr_count16(c, ERNIC_INALLDRPPKTCNT, true);
        return;
    }
    ernic_rq_dgram_area(pkt, area);
    if (!ernic_rq_place_dgram(c, qpn, pkt, area)) {
        c->qp[qpn].rq_held = false;
        trace_ernic_qp_dma_fault(qpn, "a UD receive");
        return;
    }
    ernic_gcsr_count16(c, ERNIC_INSRRPKTCNT, false);
    if (!ernic_rq_produce(c, qpn)) {
        trace_ernic_qp_dma_fault(qpn, "the RQ doorbell");
    }
}
