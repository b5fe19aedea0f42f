/*
 * ERNIC wire format: building and parsing RoCEv2 frames, and the ICRC.
 *
 * Frames are built as Linux rxe builds them (the interoperability
 * reference): UDP checksum 0, IPv4 with DF set, BTH TVer 0 and MigReq 0.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "net/checksum.h"
#include "net/eth.h"
#include "hw/rdma/ernic_regs.h"
#include "ernic_wire.h"

#define OPF(x)  (ERNIC_OPF_VALID | (x))
#define SEND_F  (ERNIC_OPF_REQ | ERNIC_OPF_SEND | ERNIC_OPF_PAYLOAD)
#define WRITE_F (ERNIC_OPF_REQ | ERNIC_OPF_WRITE | ERNIC_OPF_PAYLOAD)
#define RRESP_F (ERNIC_OPF_RESP | ERNIC_OPF_READ | ERNIC_OPF_PAYLOAD)
#define FL(x)   (ERNIC_OPF_FIRST | ERNIC_OPF_LAST | (x))

/* IBTA vol. 1 Table 36, the opcodes ERNIC knows (PG332 p.4). */
static const uint32_t ernic_opcode_table[256] = {
    [IB_OPC_SEND_FIRST]       = OPF(SEND_F | ERNIC_OPF_FIRST),
    [IB_OPC_SEND_MIDDLE]      = OPF(SEND_F | ERNIC_OPF_MIDDLE),
    [IB_OPC_SEND_LAST]        = OPF(SEND_F | ERNIC_OPF_LAST),
    [IB_OPC_SEND_LAST_IMM]    = OPF(SEND_F | ERNIC_OPF_LAST | ERNIC_OPF_IMM),
    [IB_OPC_SEND_ONLY]        = OPF(SEND_F | FL(0)),
    [IB_OPC_SEND_ONLY_IMM]    = OPF(SEND_F | FL(ERNIC_OPF_IMM)),
    [IB_OPC_SEND_LAST_INV]    = OPF(SEND_F | ERNIC_OPF_LAST | ERNIC_OPF_IETH),
    [IB_OPC_SEND_ONLY_INV]    = OPF(SEND_F | FL(ERNIC_OPF_IETH)),
    [IB_OPC_WRITE_FIRST]      = OPF(WRITE_F | ERNIC_OPF_FIRST |
                                    ERNIC_OPF_RETH),
    [IB_OPC_WRITE_MIDDLE]     = OPF(WRITE_F | ERNIC_OPF_MIDDLE),
    [IB_OPC_WRITE_LAST]       = OPF(WRITE_F | ERNIC_OPF_LAST),
    [IB_OPC_WRITE_LAST_IMM]   = OPF(WRITE_F | ERNIC_OPF_LAST | ERNIC_OPF_IMM),
    [IB_OPC_WRITE_ONLY]       = OPF(WRITE_F | FL(ERNIC_OPF_RETH)),
    [IB_OPC_WRITE_ONLY_IMM]   = OPF(WRITE_F | FL(ERNIC_OPF_RETH |
                                                 ERNIC_OPF_IMM)),
    [IB_OPC_READ_REQUEST]     = OPF(ERNIC_OPF_REQ | ERNIC_OPF_READ |
                                    FL(ERNIC_OPF_RETH)),
    [IB_OPC_READ_RESP_FIRST]  = OPF(RRESP_F | ERNIC_OPF_FIRST |
                                    ERNIC_OPF_AETH),
    [IB_OPC_READ_RESP_MIDDLE] = OPF(RRESP_F | ERNIC_OPF_MIDDLE),
    [IB_OPC_READ_RESP_LAST]   = OPF(RRESP_F | ERNIC_OPF_LAST |
                                    ERNIC_OPF_AETH),
    [IB_OPC_READ_RESP_ONLY]   = OPF(RRESP_F | FL(ERNIC_OPF_AETH)),
    [IB_OPC_ACK]              = OPF(ERNIC_OPF_RESP | FL(ERNIC_OPF_AETH)),
    /*
     * Parsed so that it can be refused as a response (Table 2-4, 0x0C),
     * or taken with ERNIC-X ATOMIC (ernic_comp.c).
     */
    [IB_OPC_ATOMIC_ACK]       = OPF(ERNIC_OPF_RESP | FL(ERNIC_OPF_AETH |
                                                    ERNIC_OPF_ATOMICACKETH)),
    [IB_OPC_UD_SEND_ONLY]     = OPF(SEND_F | FL(ERNIC_OPF_DETH)),
    [IB_OPC_UD_SEND_ONLY_IMM] = OPF(SEND_F | FL(ERNIC_OPF_DETH |
                                                ERNIC_OPF_IMM)),
};

uint32_t ernic_wire_opcode_flags(uint8_t opcode)
{
    return ernic_opcode_table[opcode];
}

size_t ernic_wire_ext_len(uint32_t flags)
{
    return ((flags & ERNIC_OPF_RETH) ? ERNIC_RETH_LEN : 0) +
           ((flags & ERNIC_OPF_AETH) ? ERNIC_AETH_LEN : 0) +
           ((flags & ERNIC_OPF_DETH) ? ERNIC_DETH_LEN : 0) +
           ((flags & ERNIC_OPF_ATOMICACKETH) ? ERNIC_ATOMICACKETH_LEN : 0) +
           ((flags & ERNIC_OPF_ATOMICETH) ? ERNIC_ATOMICETH_LEN : 0) +
           ((flags & (ERNIC_OPF_IMM | ERNIC_OPF_IETH)) ? ERNIC_IMMDT_LEN : 0);
}

size_t ernic_wire_build(uint8_t *f, const ErnicPath *p, uint8_t opcode,
                        uint32_t psn, bool ackreq, size_t ext_len,
                        uint32_t paylen)
{
    uint32_t pad = -paylen & 3;
    size_t l4_len = ERNIC_UDP_HLEN + ERNIC_BTH_LEN + ext_len + paylen + pad +
                    ERNIC_ICRC_LEN;
    uint8_t *ip = f + ERNIC_ETH_HLEN;
    uint8_t *udp, *bth;

    memcpy(f, p->dst_mac, 6);
    memcpy(f + 6, p->src_mac, 6);
    if (p->ipv6) {
        stw_be_p(f + 12, ETH_P_IPV6);
        stl_be_p(ip, 0x60000000u | ((uint32_t)p->tclass << 20));
        stw_be_p(ip + 4, l4_len);
        ip[6] = IP_PROTO_UDP;
        ip[7] = p->ttl;
        memcpy(ip + 8, p->src_ip, 16);
        memcpy(ip + 24, p->dst_ip, 16);
        udp = ip + ERNIC_IPV6_HLEN;
    } else {
        stw_be_p(f + 12, ETH_P_IP);
        ip[0] = 0x45;
        ip[1] = p->tclass;
        stw_be_p(ip + 2, ERNIC_IPV4_HLEN + l4_len);
        stw_be_p(ip + 4, 0);            /* identification: DF is set */
        stw_be_p(ip + 6, 0x4000);       /* flags 010, fragment offset 0 */
        ip[8] = p->ttl;
        ip[9] = IP_PROTO_UDP;
        stw_be_p(ip + 10, 0);
        memcpy(ip + 12, p->src_ip, 4);
        memcpy(ip + 16, p->dst_ip, 4);
        stw_be_p(ip + 10, net_raw_checksum(ip, ERNIC_IPV4_HLEN));
        udp = ip + ERNIC_IPV4_HLEN;
    }
    stw_be_p(udp, p->sport);
    stw_be_p(udp + 2, ERNIC_ROCE_UDP_PORT);
    stw_be_p(udp + 4, l4_len);
    stw_be_p(udp + 6, 0);               /* no UDP checksum, as rxe */

    bth = udp + ERNIC_UDP_HLEN;
    /* An XRC QP's RC opcodes go with transport bits 101 (IBTA 9.1). */
    bth[0] = opcode < IB_OPC_UC ? opcode | p->opclass : opcode;
    bth[1] = pad << IB_BTH_PAD_SHIFT;   /* SE 0, MigReq 0, TVer 0 */
    stw_be_p(bth + 2, p->pkey);
    stl_be_p(bth + 4, p->dqpn & ERNIC_QPN_MASK);
    stl_be_p(bth + 8, (psn & ERNIC_PSN_MASK) | (ackreq ? IB_BTH_ACKREQ : 0));
    return bth + ERNIC_BTH_LEN - f;
}

/* The ICRC's CRC over the headers it masks; they end at f + l3 + *hl. */
static uint32_t ernic_wire_icrc_masked(const uint8_t *f, size_t l3, bool ipv6,
                                       size_t *phl)
{
    size_t iphl = ipv6 ? ERNIC_IPV6_HLEN : ERNIC_IPV4_HLEN;
    size_t hl = iphl + ERNIC_UDP_HLEN + ERNIC_BTH_LEN;
    uint8_t lrh_m[8 + ERNIC_IPV6_HLEN + ERNIC_UDP_HLEN + ERNIC_BTH_LEN];
    uint8_t *m = lrh_m + 8;
    uint32_t crc;

    /*
     * The invariant CRC covers the IP, UDP and BTH headers with their
     * variant fields replaced by ones (RoCEv2 annex A17.3.3), preceded by
     * 8 bytes of ones standing for the LRH: one run of bytes, so that
     * ernic_crc32() folds most of it 16 bytes at a time.
     */
    memset(lrh_m, 0xff, 8);
    memcpy(m, f + l3, hl);
    if (ipv6) {
        m[0] |= 0x0f;                   /* traffic class, flow label */
        m[1] = m[2] = m[3] = 0xff;
        m[7] = 0xff;                    /* hop limit */
    } else {
        m[1] = 0xff;                    /* TOS */
        m[8] = 0xff;                    /* TTL */
        m[10] = m[11] = 0xff;           /* header checksum */
    }
    m[iphl + 6] = m[iphl + 7] = 0xff;   /* UDP checksum */
    m[iphl + ERNIC_UDP_HLEN + 4] = 0xff; /* BTH FECN, BECN, resv6 */

    crc = ernic_crc32(0, lrh_m, 8 + hl);
    *phl = hl;
    return crc;
}

uint32_t ernic_wire_icrc(const uint8_t *f, size_t l3, size_t len, bool ipv6)
{
    size_t hl;
    uint32_t crc = ernic_wire_icrc_masked(f, l3, ipv6, &hl);

    return ernic_crc32(crc, f + l3 + hl, len - ERNIC_ICRC_LEN - l3 - hl);
}

size_t ernic_wire_finish(uint8_t *f, size_t end, uint32_t paylen, bool ipv6)
{
    uint32_t pad = -paylen & 3;

    memset(f + end, 0, pad);
    end += pad;
    stl_le_p(f + end, ernic_wire_icrc(f, ERNIC_ETH_HLEN, end + ERNIC_ICRC_LEN,
                                      ipv6));
    return end + ERNIC_ICRC_LEN;
}

size_t ernic_wire_finish_iov(const uint8_t *f, size_t hdr_end,
                             const struct iovec *pay, unsigned n,
                             uint32_t paylen, bool ipv6, uint8_t *tail)
{
    uint32_t pad = -paylen & 3;
    size_t hl;
    uint32_t crc = ernic_wire_icrc_masked(f, ERNIC_ETH_HLEN, ipv6, &hl);

    crc = ernic_crc32(crc, f + ERNIC_ETH_HLEN + hl,
                      hdr_end - ERNIC_ETH_HLEN - hl);
    for (unsigned i = 0; i < n; i++) {
        crc = ernic_crc32(crc, pay[i].iov_base, pay[i].iov_len);
    }
    memset(tail, 0, pad);
    crc = ernic_crc32(crc, tail, pad);
    stl_le_p(tail + pad, crc);
    return pad + ERNIC_ICRC_LEN;
}

void ernic_wire_put_reth(uint8_t *p, uint64_t va, uint32_t rkey, uint32_t len)
{
    stq_be_p(p, va);
    stl_be_p(p + 8, rkey);
    stl_be_p(p + 12, len);
}

void ernic_wire_put_aeth(uint8_t *p, uint8_t syndrome, uint32_t msn)
{
    stl_be_p(p, ((uint32_t)syndrome << 24) | (msn & ERNIC_PSN_MASK));
}

/* IBTA 9.3.3.3.3: VA, R_Key, Swap (or Add) Data, Compare Data. */
void ernic_wire_put_atomiceth(uint8_t *p, uint64_t va, uint32_t rkey,
                              uint64_t swap_add, uint64_t compare)
{
    stq_be_p(p, va);
    stl_be_p(p + 8, rkey);
    stq_be_p(p + 12, swap_add);
    stq_be_p(p + 20, compare);
}

static uint32_t ernic_wire_parse_ip(const uint8_t *f, size_t len, ErnicPkt *pkt,
                                    size_t *l4)
{
    const uint8_t *ip = f + pkt->l3;
    uint32_t synd = 0;

    if (pkt->ipv6) {
        if (len < pkt->l3 + ERNIC_IPV6_HLEN) {
            return ERNIC_SYND_IP_LEN;
        }
        if ((ip[0] >> 4) != 6) {
            synd |= ERNIC_SYND_IP_VERSION;
        }
        if (pkt->l3 + ERNIC_IPV6_HLEN + lduw_be_p(ip + 4) != len) {
            synd |= ERNIC_SYND_IP_LEN;
        }
        *l4 = pkt->l3 + ERNIC_IPV6_HLEN;
        return synd | (ip[6] != IP_PROTO_UDP ? ERNIC_SYND_IP_LEN : 0);
    }
    if (len < pkt->l3 + ERNIC_IPV4_HLEN) {
        return ERNIC_SYND_IP_LEN;
    }
    if ((ip[0] >> 4) != 4) {
        synd |= ERNIC_SYND_IP_VERSION;
    }
    if ((ip[0] & 0xf) != 5) {
        /* Options are not parsed: nothing after the IP header is either. */
        return synd | ERNIC_SYND_IPV4_IHL;
    }
    if ((ip[6] >> 5) != 2) {
        synd |= ERNIC_SYND_IPV4_FLAGS;
    }
    if (lduw_be_p(ip + 6) & 0x1fff) {
        synd |= ERNIC_SYND_IPV4_FRAG;
    }
    if (net_raw_checksum((uint8_t *)ip, ERNIC_IPV4_HLEN) != 0) {
        synd |= ERNIC_SYND_IPV4_CSUM;
    }
    /* Ethernet may pad short frames: the IP length may be shorter. */
    if (pkt->l3 + lduw_be_p(ip + 2) > len ||
        lduw_be_p(ip + 2) < ERNIC_IPV4_HLEN) {
        synd |= ERNIC_SYND_IP_LEN;
    }
    *l4 = pkt->l3 + ERNIC_IPV4_HLEN;
    return synd;
}

/*
 * Whether @f is RoCEv2: IPv4 or IPv6, UDP to port 4791; anything else
 * goes to the Ethernet path. Sets pkt->ipv6 and pkt->l3.
 */
static bool ernic_wire_is_roce(const uint8_t *f, size_t len, ErnicPkt *pkt)
{
    size_t ihl;

    if (len < ERNIC_ETH_HLEN) {
        return false;
    }
    switch (lduw_be_p(f + 12)) {
    case ETH_P_IP:
        break;
    case ETH_P_IPV6:
        pkt->ipv6 = true;
        break;
    default:
        return false;
    }
    pkt->l3 = ERNIC_ETH_HLEN;
    if (pkt->ipv6) {
        return len >= pkt->l3 + ERNIC_IPV6_HLEN + ERNIC_UDP_HLEN &&
               f[pkt->l3 + 6] == IP_PROTO_UDP &&
               lduw_be_p(f + pkt->l3 + ERNIC_IPV6_HLEN + 2) ==
               ERNIC_ROCE_UDP_PORT;
    }
    /* The IHL byte is read only once the frame is known to hold it. */
    if (len < pkt->l3 + ERNIC_IPV4_HLEN) {
        return false;
    }
    ihl = (f[pkt->l3] & 0xf) * 4;
    return len >= pkt->l3 + ihl + ERNIC_UDP_HLEN && ihl >= ERNIC_IPV4_HLEN &&
           f[pkt->l3 + 9] == IP_PROTO_UDP &&
           lduw_be_p(f + pkt->l3 + ihl + 2) == ERNIC_ROCE_UDP_PORT;
}

/* The BTH at @bth (IBTA 9.2). */
static void ernic_wire_parse_bth(const uint8_t *f, ErnicPkt *pkt)
{
    const uint8_t *bth = f + pkt->bth;

    pkt->opcode = bth[0];
    pkt->padcnt = (bth[1] & IB_BTH_PAD_MASK) >> IB_BTH_PAD_SHIFT;
    pkt->tver = bth[1] & IB_BTH_TVER_MASK;
    pkt->pkey = lduw_be_p(bth + 2);
    pkt->dqpn = ldl_be_p(bth + 4) & ERNIC_QPN_MASK;
    pkt->psn = ldl_be_p(bth + 8) & ERNIC_PSN_MASK;
    pkt->ackreq = ldl_be_p(bth + 8) & IB_BTH_ACKREQ;
    pkt->flags = ernic_wire_opcode_flags(pkt->opcode);
}

/*
 * The extension headers the opcode's flags name, from @ext on (the
 * caller checked they fit); returns where the payload starts.
 */
static const uint8_t *ernic_wire_parse_ext(const uint8_t *ext, ErnicPkt *pkt)
{
    if (pkt->flags & ERNIC_OPF_DETH) {
        pkt->deth_qkey = ldl_be_p(ext);
        pkt->deth_sqpn = ldl_be_p(ext + 4) & ERNIC_QPN_MASK;
        ext += ERNIC_DETH_LEN;
    }
    if (pkt->flags & ERNIC_OPF_RETH) {
        pkt->va = ldq_be_p(ext);
        pkt->rkey = ldl_be_p(ext + 8);
        pkt->dmalen = ldl_be_p(ext + 12);
        ext += ERNIC_RETH_LEN;
    }
    if (pkt->flags & ERNIC_OPF_AETH) {
        pkt->syndrome = ext[0];
        pkt->msn = ldl_be_p(ext) & ERNIC_PSN_MASK;
        ext += ERNIC_AETH_LEN;
    }
    if (pkt->flags & (ERNIC_OPF_IMM | ERNIC_OPF_IETH)) {
        pkt->imm = ldl_be_p(ext);
        ext += ERNIC_IMMDT_LEN;
    }
    if (pkt->flags & ERNIC_OPF_ATOMICETH) {
        pkt->va = ldq_be_p(ext);
        pkt->rkey = ldl_be_p(ext + 8);
        pkt->swap_add = ldq_be_p(ext + 12);
        pkt->compare = ldq_be_p(ext + 20);
        ext += ERNIC_ATOMICETH_LEN;
    }
    if (pkt->flags & ERNIC_OPF_ATOMICACKETH) {
        pkt->orig = ldq_be_p(ext);
        ext += ERNIC_ATOMICACKETH_LEN;
    }
    return ext;
}

uint32_t ernic_wire_parse(const uint8_t *f, size_t len, ErnicPkt *pkt,
                          bool *is_roce)
{
    const uint8_t *udp, *ext;
    uint32_t synd;
    size_t l4, udp_len, end;

    memset(pkt, 0, sizeof(*pkt));
    pkt->frame = f;
    *is_roce = ernic_wire_is_roce(f, len, pkt);
    if (!*is_roce) {
        return 0;
    }
    synd = ernic_wire_parse_ip(f, len, pkt, &l4);
    if (synd & (ERNIC_SYND_IPV4_IHL | ERNIC_SYND_IP_LEN)) {
        return synd;
    }
    /* Trailing Ethernet padding after the IP datagram is not ours. */
    end = pkt->ipv6 ? len : pkt->l3 + lduw_be_p(f + pkt->l3 + 2);
    udp = f + l4;
    udp_len = lduw_be_p(udp + 4);
    if (l4 + udp_len != end ||
        udp_len < ERNIC_UDP_HLEN + ERNIC_BTH_LEN + ERNIC_ICRC_LEN) {
        return synd | ERNIC_SYND_UDP_LEN;
    }
    pkt->len = end;
    pkt->bth = l4 + ERNIC_UDP_HLEN;
    ernic_wire_parse_bth(f, pkt);
    if (pkt->tver != 0) {
        synd |= ERNIC_SYND_BTH_TVER;
    }
    /* Extension headers; an unknown opcode has none we can parse. */
    if (pkt->bth + ERNIC_BTH_LEN + ernic_wire_ext_len(pkt->flags) +
        pkt->padcnt + ERNIC_ICRC_LEN > end) {
        return synd | ERNIC_SYND_PMTU;
    }
    pkt->ext = pkt->bth + ERNIC_BTH_LEN;
    ext = ernic_wire_parse_ext(f + pkt->ext, pkt);
    pkt->payload = ext;
    pkt->paylen = f + end - ERNIC_ICRC_LEN - pkt->padcnt - ext;
    /* Unknown opcodes go on to the transport checks, which NAK them. */
    if (ernic_wire_stray_payload(pkt)) {
        synd |= ERNIC_SYND_PMTU;
    }
    return synd;
}

/*
 * Bytes after the headers of a known opcode that carries no payload: a
 * length error (PG332 Table 2-3, syndrome bit 19).
 */
bool ernic_wire_stray_payload(const ErnicPkt *pkt)
{
    return pkt->paylen && (pkt->flags & ERNIC_OPF_VALID) &&
           !(pkt->flags & ERNIC_OPF_PAYLOAD);
}

/*
 * IBTA Table 36's UC opcodes (0x20-0x2b) are the RC SEND and WRITE ones
 * with transport bits 001, and carry the same headers. They are parsed
 * only for a UC QP (ERNIC-X, ernic_uc.c): for any other QP they stay the
 * unknown opcodes the PG332 device refuses, exactly as before.
 */
bool ernic_wire_parse_uc(ErnicPkt *pkt)
{
    const uint8_t *end = pkt->frame + pkt->len - ERNIC_ICRC_LEN -
                         pkt->padcnt;
    const uint8_t *ext = pkt->frame + pkt->ext;

    if (pkt->opcode < IB_OPC_UC ||
        pkt->opcode > (IB_OPC_UC | IB_OPC_WRITE_ONLY_IMM)) {
        return false;
    }
    pkt->flags = ernic_opcode_table[pkt->opcode & ~IB_OPC_UC] | ERNIC_OPF_UC;
    if (end - ext < (ptrdiff_t)ernic_wire_ext_len(pkt->flags)) {
        return false;
    }
    pkt->payload = ernic_wire_parse_ext(ext, pkt);
    pkt->paylen = end - pkt->payload;
    return true;
}

/*
 * Atomic requests are parsed only for a QP with ERNIC-X ATOMIC
 * (ernic_atomic.c): for any other they stay the unknown opcodes the
 * PG332 device refuses, parsed as before.
 */
bool ernic_wire_parse_atomic(ErnicPkt *pkt)
{
    const uint8_t *end = pkt->frame + pkt->len - ERNIC_ICRC_LEN -
                         pkt->padcnt;
    const uint8_t *ext = pkt->frame + pkt->ext;

    if (pkt->opcode != IB_OPC_CMP_SWAP && pkt->opcode != IB_OPC_FETCH_ADD) {
        return false;
    }
    pkt->flags = ERNIC_OPF_VALID | ERNIC_OPF_REQ | ERNIC_OPF_FIRST |
                 ERNIC_OPF_LAST | ERNIC_OPF_ATOMICETH;
    if (end - ext != ERNIC_ATOMICETH_LEN) {
        return false;
    }
    pkt->payload = ernic_wire_parse_ext(ext, pkt);
    pkt->paylen = 0;
    return true;
}

/*
 * FLUSH and ATOMIC WRITE (IBTA 1.5 annex A19) are parsed only for a QP
 * with ERNIC-X PLACE (ernic_place.c); for any other they stay the
 * reserved opcodes the PG332 device refuses. A FLUSH's FETH comes
 * before its RETH, as rxe and mlx5 send it.
 */
bool ernic_wire_parse_place(ErnicPkt *pkt)
{
    const uint8_t *end = pkt->frame + pkt->len - ERNIC_ICRC_LEN -
                         pkt->padcnt;
    const uint8_t *ext = pkt->frame + pkt->ext;
    bool flush = pkt->opcode == IB_OPC_FLUSH;
    size_t need = ERNIC_RETH_LEN +
                  (flush ? ERNIC_FETH_LEN : ERNIC_AWRITE_LEN);

    if ((!flush && pkt->opcode != IB_OPC_ATOMIC_WRITE) || end - ext != need) {
        return false;
    }
    pkt->flags = ERNIC_OPF_VALID | ERNIC_OPF_REQ | ERNIC_OPF_FIRST |
                 ERNIC_OPF_LAST | ERNIC_OPF_RETH | ERNIC_OPF_PLACE |
                 (flush ? 0 : ERNIC_OPF_PAYLOAD);
    if (flush) {
        pkt->feth = ldl_be_p(ext);
        ext += ERNIC_FETH_LEN;
    }
    pkt->payload = ernic_wire_parse_ext(ext, pkt);
    pkt->paylen = end - pkt->payload;
    return true;
}

/*
 * XRC opcodes (IBTA 9.1, transport bits 101) are parsed only for an XRC
 * QP (ernic_xrc.c); for any other they stay the unknown opcodes the
 * PG332 device refuses. Requests carry an XRCETH (9.3.2) after the BTH;
 * responses (READ responses, ACKs) none. An atomic request keeps flags 0
 * here: ERNIC-X ATOMIC parses it again (ernic_wire_parse_atomic()).
 */
bool ernic_wire_parse_xrc(ErnicPkt *pkt)
{
    const uint8_t *end = pkt->frame + pkt->len - ERNIC_ICRC_LEN -
                         pkt->padcnt;
    const uint8_t *ext = pkt->frame + pkt->ext;
    uint8_t rc = pkt->opcode & ~IB_OPC_XRC;
    bool req = rc < IB_OPC_READ_RESP_FIRST || rc > IB_OPC_ATOMIC_ACK;

    if ((pkt->opcode & 0xe0) != IB_OPC_XRC || rc > IB_OPC_SEND_ONLY_INV) {
        return false;
    }
    if (req) {
        if (end - ext < ERNIC_XRCETH_LEN) {
            return false;
        }
        pkt->xrc_srqn = ldl_be_p(ext) & ERNIC_QPN_MASK;
        ext += ERNIC_XRCETH_LEN;
        pkt->ext += ERNIC_XRCETH_LEN;
    }
    pkt->opcode = rc;
    pkt->flags = ernic_opcode_table[rc];
    if (end - ext < (ptrdiff_t)ernic_wire_ext_len(pkt->flags)) {
        return false;
    }
    pkt->payload = ernic_wire_parse_ext(ext, pkt);
    pkt->paylen = end - pkt->payload;
    return true;
}

void ernic_wire_ip_from_regs(uint8_t *ip, const uint32_t *regs, bool ipv6)
{
    int i;

    memset(ip, 0, 16);
    if (!ipv6) {
        stl_be_p(ip, regs[0]);
        return;
    }
    for (i = 0; i < 4; i++) {
        stl_be_p(ip + 4 * i, regs[3 - i]);
    }
}

void ernic_wire_ip_to_regs(uint32_t *regs, const uint8_t *ip, bool ipv6)
{
    int i;

    for (i = 0; i < 4; i++) {
        regs[3 - i] = ipv6 ? ldl_be_p(ip + 4 * i) : 0;
    }
    if (!ipv6) {
        regs[0] = ldl_be_p(ip);
    }
}
