/*
 * ERNIC wire format: Ethernet, IPv4/IPv6, UDP and the InfiniBand transport
 * headers of RoCEv2 (IBTA vol. 1 ch. 9, RoCEv2 annex A17), and the ICRC.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_ERNIC_WIRE_H
#define HW_RDMA_ERNIC_WIRE_H

#define ERNIC_ROCE_UDP_PORT     4791
#define ERNIC_ETH_HLEN          14
#define ERNIC_IPV4_HLEN         20
#define ERNIC_IPV6_HLEN         40
#define ERNIC_UDP_HLEN          8
#define ERNIC_BTH_LEN           12
#define ERNIC_RETH_LEN          16
#define ERNIC_AETH_LEN          4
#define ERNIC_IMMDT_LEN         4
#define ERNIC_IETH_LEN          4
#define ERNIC_DETH_LEN          8
#define ERNIC_ATOMICACKETH_LEN  8
#define ERNIC_ATOMICETH_LEN     28
#define ERNIC_FETH_LEN          4
#define ERNIC_XRCETH_LEN        4
#define ERNIC_AWRITE_LEN        8       /* an ATOMIC WRITE's payload */
#define ERNIC_ICRC_LEN          4

/* Headroom for Ethernet + IPv6 + UDP + BTH + RETH + ImmDt (+ ICRC). */
#define ERNIC_MAX_HDR_LEN       (ERNIC_ETH_HLEN + ERNIC_IPV6_HLEN + \
                                 ERNIC_UDP_HLEN + ERNIC_BTH_LEN + \
                                 ERNIC_RETH_LEN + ERNIC_IMMDT_LEN)
#define ERNIC_MAX_PMTU          4096
#define ERNIC_MAX_FRAME         (ERNIC_MAX_HDR_LEN + ERNIC_MAX_PMTU + \
                                 ERNIC_ICRC_LEN)

#define ERNIC_PSN_MASK          0x00ffffffu
#define ERNIC_QPN_MASK          0x00ffffffu

/* BTH opcodes: RC (transport 000) and UD (transport 011) */
enum {
    IB_OPC_SEND_FIRST           = 0x00,
    IB_OPC_SEND_MIDDLE          = 0x01,
    IB_OPC_SEND_LAST            = 0x02,
    IB_OPC_SEND_LAST_IMM        = 0x03,
    IB_OPC_SEND_ONLY            = 0x04,
    IB_OPC_SEND_ONLY_IMM        = 0x05,
    IB_OPC_WRITE_FIRST          = 0x06,
    IB_OPC_WRITE_MIDDLE         = 0x07,
    IB_OPC_WRITE_LAST           = 0x08,
    IB_OPC_WRITE_LAST_IMM       = 0x09,
    IB_OPC_WRITE_ONLY           = 0x0a,
    IB_OPC_WRITE_ONLY_IMM       = 0x0b,
    IB_OPC_READ_REQUEST         = 0x0c,
    IB_OPC_READ_RESP_FIRST      = 0x0d,
    IB_OPC_READ_RESP_MIDDLE     = 0x0e,
    IB_OPC_READ_RESP_LAST       = 0x0f,
    IB_OPC_READ_RESP_ONLY       = 0x10,
    IB_OPC_ACK                  = 0x11,
    IB_OPC_ATOMIC_ACK           = 0x12,
    IB_OPC_CMP_SWAP             = 0x13,
    IB_OPC_FETCH_ADD            = 0x14,
    IB_OPC_RC_RESERVED          = 0x18, /* 0x18-0x1b, 0x1e, 0x1f: none */
    IB_OPC_FLUSH                = 0x1c, /* IBTA 1.5 annex A19 */
    IB_OPC_ATOMIC_WRITE         = 0x1d, /* IBTA 1.5 annex A19 */
    IB_OPC_SEND_LAST_INV        = 0x16,
    IB_OPC_SEND_ONLY_INV        = 0x17,
    IB_OPC_UC                   = 0x20, /* | a SEND or WRITE opcode */
    IB_OPC_XRC                  = 0xa0, /* | an RC opcode (IBTA 9.1) */
    IB_OPC_UD_SEND_ONLY         = 0x64,
    IB_OPC_UD_SEND_ONLY_IMM     = 0x65,
    IB_OPC_CNP                  = 0x81,
};

/* BTH flags byte and AckReq bit */
#define IB_BTH_SE               0x80
#define IB_BTH_MIGREQ           0x40
#define IB_BTH_PAD_SHIFT        4
#define IB_BTH_PAD_MASK         0x30
#define IB_BTH_TVER_MASK        0x0f
#define IB_BTH_ACKREQ           0x80000000u

/* AETH syndromes (IBTA Table 43) */
#define IB_AETH_TYPE_MASK       0xe0
#define IB_AETH_ACK             0x00
#define IB_AETH_RNR_NAK         0x20
#define IB_AETH_NAK             0x60
#define IB_AETH_CREDIT_INVALID  0x1f
#define IB_NAK_PSN_SEQ          ERNIC_NAK_PSN_SEQ
#define IB_NAK_INVALID_REQ      ERNIC_NAK_INVALID_REQ
#define IB_NAK_REMOTE_ACCESS    ERNIC_NAK_REMOTE_ACCESS
#define IB_NAK_REMOTE_OP        ERNIC_NAK_REMOTE_OP

/* Which extension headers an opcode carries (IBTA Table 36). */
#define ERNIC_OPF_VALID         (1u << 0)
#define ERNIC_OPF_REQ           (1u << 1)   /* request (to responder) */
#define ERNIC_OPF_RESP          (1u << 2)   /* response (to requester) */
#define ERNIC_OPF_FIRST         (1u << 3)
#define ERNIC_OPF_MIDDLE        (1u << 4)
#define ERNIC_OPF_LAST          (1u << 5)
#define ERNIC_OPF_RETH          (1u << 6)
#define ERNIC_OPF_AETH          (1u << 7)
#define ERNIC_OPF_IMM           (1u << 8)
#define ERNIC_OPF_IETH          (1u << 9)
#define ERNIC_OPF_PAYLOAD       (1u << 10)
#define ERNIC_OPF_SEND          (1u << 11)
#define ERNIC_OPF_WRITE         (1u << 12)
#define ERNIC_OPF_READ          (1u << 13)
#define ERNIC_OPF_DETH          (1u << 14)
#define ERNIC_OPF_ATOMICACKETH  (1u << 15)
#define ERNIC_OPF_UC            (1u << 16)  /* parsed for a UC QP */
#define ERNIC_OPF_ATOMICETH     (1u << 17)  /* parsed with ERNIC-X ATOMIC */
#define ERNIC_OPF_PLACE         (1u << 18)  /* FLUSH, ATOMIC WRITE (PLACE) */

uint32_t ernic_wire_opcode_flags(uint8_t opcode);

/* The addressing of one QP's packets, from its registers. */
typedef struct ErnicPath {
    uint8_t src_mac[6];
    uint8_t dst_mac[6];
    bool ipv6;
    uint8_t src_ip[16];         /* IPv4 in the first 4 bytes */
    uint8_t dst_ip[16];
    uint8_t tclass;
    uint8_t ttl;
    uint16_t sport;
    uint16_t pkey;
    uint32_t dqpn;
    uint8_t opclass;            /* IB_OPC_XRC for an XRC QP, else 0 */
} ErnicPath;

/*
 * A parsed frame. Offsets are into the frame; hdr_len covers everything up
 * to the payload, which is followed by pad and ICRC.
 */
typedef struct ErnicPkt {
    const uint8_t *frame;
    size_t len;
    bool ipv6;
    size_t l3;                  /* IP header offset */
    size_t bth;                 /* BTH offset */
    size_t ext;                 /* first header after BTH (and XRCETH) */
    uint8_t opcode;
    uint32_t flags;             /* ERNIC_OPF_* of opcode */
    uint8_t padcnt;
    uint8_t tver;
    uint16_t pkey;
    uint32_t dqpn;
    uint32_t psn;
    bool ackreq;
    uint64_t va;                /* RETH */
    uint32_t rkey;
    uint32_t dmalen;
    uint8_t syndrome;           /* AETH */
    uint32_t msn;
    uint32_t imm;               /* ImmDt or IETH */
    uint32_t deth_qkey;
    uint32_t deth_sqpn;
    uint64_t swap_add;          /* AtomicETH, with va and rkey */
    uint64_t compare;
    uint64_t orig;              /* AtomicAckETH */
    uint32_t feth;              /* FETH */
    uint32_t xrc_srqn;          /* XRCETH */
    const uint8_t *payload;
    uint32_t paylen;            /* payload without pad */
} ErnicPkt;

/*
 * Write Ethernet, IP, UDP and BTH for a packet of @ext_len bytes of
 * extension headers and @paylen bytes of payload; returns the BTH's end.
 * The caller appends the rest and then calls ernic_wire_finish().
 */
/* Bytes of extension headers (RETH, AETH, ...) an opcode's flags carry. */
size_t ernic_wire_ext_len(uint32_t flags);
size_t ernic_wire_build(uint8_t *frame, const ErnicPath *p, uint8_t opcode,
                        uint32_t psn, bool ackreq, size_t ext_len,
                        uint32_t paylen);
/* Pad, ICRC; returns the frame length. */
size_t ernic_wire_finish(uint8_t *frame, size_t hdr_end, uint32_t paylen,
                         bool ipv6);
/*
 * The same for a frame sent as iovecs: headers at @frame up to @hdr_end,
 * the payload in @pay; writes pad and ICRC to @tail and returns their
 * length.
 */
size_t ernic_wire_finish_iov(const uint8_t *frame, size_t hdr_end,
                             const struct iovec *pay, unsigned n,
                             uint32_t paylen, bool ipv6, uint8_t *tail);

void ernic_wire_put_reth(uint8_t *p, uint64_t va, uint32_t rkey,
                         uint32_t len);
void ernic_wire_put_aeth(uint8_t *p, uint8_t syndrome, uint32_t msn);
void ernic_wire_put_atomiceth(uint8_t *p, uint64_t va, uint32_t rkey,
                              uint64_t swap_add, uint64_t compare);

/* ICRC of a RoCEv2 frame whose IP header starts at @l3 (RoCEv2 A17.3.3). */
uint32_t ernic_wire_icrc(const uint8_t *frame, size_t l3, size_t len,
                         bool ipv6);
/* zlib's crc32(), faster (ernic_crc32.c). */
uint32_t ernic_crc32(uint32_t crc, const uint8_t *p, size_t len);

/*
 * Parse and check a frame up to the BTH: the syndrome bits of PG332 Table
 * 2-3 found (0 if none) that depend neither on QP state nor on the ICRC
 * (the receive path checks that; the QP1 transmit path computes it);
 * @is_roce tells whether the frame is RoCEv2 at all (UDP port 4791).
 */
uint32_t ernic_wire_parse(const uint8_t *frame, size_t len, ErnicPkt *pkt,
                          bool *is_roce);
/*
 * An IP address and the four registers that hold it as PG332 lays out
 * IPv6XADD1..4 and IPDESADDR1..4 (pp.33, 44): @regs[0] is the first,
 * holding an IPv4 address whole; @regs[3] holds IPv6 bits [127:96].
 */
void ernic_wire_ip_from_regs(uint8_t *ip, const uint32_t *regs, bool ipv6);
void ernic_wire_ip_to_regs(uint32_t *regs, const uint8_t *ip, bool ipv6);

/*
 * Parse @pkt's headers again as a UC opcode's, for a UC QP; false when
 * it is none or the frame cannot hold its headers.
 */
bool ernic_wire_parse_uc(ErnicPkt *pkt);
/*
 * Parse @pkt's headers again as an atomic request's (CmpSwap or
 * FetchAdd with its AtomicETH and no payload), for a QP with ERNIC-X
 * ATOMIC; false when it is none or the frame does not hold exactly that.
 */
bool ernic_wire_parse_atomic(ErnicPkt *pkt);
/*
 * Parse @pkt's headers again as a FLUSH (FETH, RETH, no payload) or an
 * ATOMIC WRITE (RETH, 8 bytes of payload), for a QP with ERNIC-X PLACE;
 * false when it is neither or the frame does not hold exactly that.
 */
bool ernic_wire_parse_place(ErnicPkt *pkt);
/*
 * Parse @pkt's headers again as an XRC opcode's (IBTA 9.1: an RC opcode
 * with transport bits 101), for an XRC QP: @pkt gets the RC opcode and
 * its flags, and a request its XRCETH; false when it is none or the
 * frame cannot hold its headers.
 */
bool ernic_wire_parse_xrc(ErnicPkt *pkt);
bool ernic_wire_stray_payload(const ErnicPkt *pkt);

#endif /* HW_RDMA_ERNIC_WIRE_H */
