/*
 * QTest: ERNIC-X UD QPs and address handles (docs/extension.md, "UD
 * QPs"). QP A of device 0 and QP B of device 1 are UD QPs; frames are
 * checked byte for byte against the rig's own builder, and injected by
 * the test as device 0's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/rdma/ernic_ext_regs.h"
#include "ernic-rig.h"

#define UD_FEAT         (ERNIC_EXT_F_MR | ERNIC_EXT_F_XWQE | \
                         ERNIC_EXT_F_RXMETA | ERNIC_EXT_F_RXWQE | \
                         ERNIC_EXT_F_UD)
#define UD_CONF         (ERNIC_EXTQPCONF_RXMETA | ERNIC_EXTQPCONF_XWQE | \
                         ERNIC_EXTQPCONF_RXWQE | ERNIC_EXTQPCONF_UD)
#define QKEY_A          0x11111111u
#define QKEY_B          0x22222222u
#define AH_B            7               /* device 0's AH for device 1 */
#define META_OFF        (MR_OFF + 0x80000)
#define RXBUF           (DEV_BASE(1) + MR_OFF + 0x10000)
#define IMM             0xabcdef01u
#define OPC_UD_SEND     0x64
#define OPC_UD_SEND_IMM 0x65
#define OPC_RC_SEND     0x04

/* QP @qpn of device @i a UD QP with @qkey, before the rig enables it. */
static void ud_qp(ErnicRig *r, int i, uint32_t qpn, uint32_t feat,
                  uint32_t qkey)
{
    uint32_t x = ERNIC_EXT_QP_OFFSET(qpn);

    ernic_rig_wr(r, i, ERNIC_EXTCTRL, feat);
    ernic_rig_wr(r, i, x + ERNIC_RXMETABA, DEV_BASE(i) + META_OFF);
    ernic_rig_wr(r, i, x + ERNIC_EXTQPCONF, UD_CONF);
    ernic_rig_wr(r, i, x + ERNIC_QKEY, qkey);
}

/* Device @i's AH @idx: to device @to, of @pd. */
static uint32_t put_ah(ErnicRig *r, int i, uint32_t idx, int to, uint32_t pd,
                       uint32_t conf)
{
    const QErnic *p = &r->d[to].e;

    ernic_rig_wr(r, i, ERNIC_AHIDX, idx);
    ernic_rig_wr(r, i, ERNIC_AHPD, pd);
    ernic_rig_wr(r, i, ERNIC_AHMACMSB, lduw_be_p(p->mac));
    ernic_rig_wr(r, i, ERNIC_AHMACLSB, ldl_be_p(p->mac + 2));
    ernic_rig_wr(r, i, ERNIC_AHIP1, p->ip);
    ernic_rig_wr(r, i, ERNIC_AHCONF, conf);
    ernic_rig_wr(r, i, ERNIC_AHCMD, ERNIC_AHCMD_WRITE);
    return ernic_rig_rd(r, i, ERNIC_AHSTS);
}

#define AH_OK           (ERNIC_AHCONF_VALID | TTL)

/* Both QPs UD, device 0's AH_B to device 1 (@feat on both). */
static ErnicRig *ud_pair(uint32_t feat)
{
    ErnicRig *r = ernic_rig_start(NULL);

    ud_qp(r, 0, QPN_A, feat, QKEY_A);
    ud_qp(r, 1, QPN_B, feat, QKEY_B);
    g_assert_cmpuint(put_ah(r, 0, AH_B, 1, PD_NUM, AH_OK), ==,
                     ERNIC_AHSTS_OK);
    ernic_rig_connect_pair(r, &ernic_rig_default_cfg);
    return r;
}

/*
 * A UD SEND WQE of device 0's QP A: @len bytes from SRC_OFF (one SGE,
 * L_Key 0) to @dqpn with @qkey through AH @ah; rung.
 */
static void post_ud(ErnicRig *r, uint16_t wrid, uint8_t opcode, uint32_t len,
                    uint32_t ah, uint32_t dqpn, uint32_t qkey)
{
    uint8_t w[ERNIC_XWQE_SIZE] = { 0 };
    ErnicRigDev *d = &r->d[0];
    uint8_t *g = &w[ERNIC_XWQE_SGE];

    stw_le_p(&w[ERNIC_WQE_WRID], wrid);
    w[ERNIC_WQE_OPCODE] = opcode;
    w[ERNIC_XWQE_NSGE] = 1;
    stl_le_p(&w[ERNIC_WQE_LENGTH], len);
    stl_le_p(&w[ERNIC_WQE_UD_DQPN], dqpn);
    stl_le_p(&w[ERNIC_WQE_UD_QKEY], qkey);
    stl_le_p(&w[ERNIC_WQE_UD_AH], ah);
    stl_le_p(&w[ERNIC_WQE_IMMDT], IMM);
    stq_le_p(g + ERNIC_SGE_ADDR, DEV_BASE(0) + SRC_OFF);
    stl_le_p(g + ERNIC_SGE_LEN, len);
    qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF +
                   (d->sqpi % SQ_DEPTH) * ERNIC_XWQE_SIZE, w, sizeof(w));
    d->sqpi++;
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, d->sqpi % SQ_DEPTH);
}

/* Receive WQE @slot of device 1's QP B: one SGE of 4 KiB at RXBUF. */
static void put_rwqe(ErnicRig *r, uint32_t slot)
{
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

    stq_le_p(&w[ERNIC_SGE_ADDR], RXBUF + slot * 0x1000);
    stl_le_p(&w[ERNIC_SGE_LEN], 0x1000);
    qtest_memwrite(r->qts, DEV_BASE(1) + RQ_OFF + slot * ERNIC_RWQE_SIZE, w,
                   sizeof(w));
}

/* DETH (and ImmDt) of a UD SEND from QP A. */
static size_t deth(uint8_t *ext, uint32_t qkey, bool imm)
{
    stl_be_p(ext, qkey);
    stl_be_p(ext + 4, QPN_A);
    if (imm) {
        stl_be_p(ext + 8, IMM);
    }
    return imm ? 12 : 8;
}

/* The window writes an entry and reads it back; bad index and command. */
static void test_ah_window(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    g_assert_cmpuint(put_ah(r, 0, 5, 1, 0x123456, AH_OK | 0x2a00), ==,
                     ERNIC_AHSTS_OK);
    for (uint32_t a = ERNIC_AHPD; a <= ERNIC_AHCONF; a += 4) {
        ernic_rig_wr(r, 0, a, 0);
    }
    ernic_rig_wr(r, 0, ERNIC_AHCMD, ERNIC_AHCMD_READ);
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_AHSTS), ==, ERNIC_AHSTS_OK);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_AHPD), ==, 0x123456);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_AHIP1), ==, r->d[1].e.ip);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_AHMACLSB), ==,
                    ldl_be_p(r->d[1].e.mac + 2));
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_AHCONF), ==, AH_OK | 0x2a00);
    ernic_rig_wr(r, 0, ERNIC_AHIDX, 0xffff);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_AHIDX), ==, 0xfff);
    ernic_rig_wr(r, 0, ERNIC_AHIDX, 0);
    ernic_rig_wr(r, 0, ERNIC_AHCMD, 9);
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_AHSTS), ==,
                     ERNIC_AHSTS_BAD_COMMAND);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_AHCMD), ==, 0);
    ernic_rig_stop(r);
}

/*
 * A UD SEND with Immediate goes as one UD SEND ONLY packet, the frame
 * the rig builds byte for byte (addresses from the AH, DETH with the
 * WQE's Q_Key and QP A), and its WQE completes at once.
 */
static void test_send_frame(void)
{
    ErnicRig *r = ud_pair(UD_FEAT);
    g_autofree uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF,
                                                  300, 5);
    uint8_t f[FRAME_MAX], want[FRAME_MAX], ext[12];
    size_t len, wlen;

    post_ud(r, 4, ERNIC_OP_SEND_IMM, 300, AH_B, 0x77, 0x12345678);
    len = ernic_rig_wire_wait(r, 0, f);
    wlen = ernic_rig_frame(want, &r->d[0], &r->d[1], OPC_UD_SEND_IMM, 0x77,
                           PSN_A, false, ext, deth(ext, 0x12345678, true),
                           p, 300);
    /* The device's UDP source port is XRNICCONF's, as for RC. */
    stw_be_p(want + F_UDP, UDP_SPORT);
    stl_le_p(want + wlen - 4, qernic_icrc(want, wlen));
    g_assert_cmpmem(f, len, want, wlen);
    ernic_rig_poll_cqhead(r, 0, QPN_A);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND_IMM, 4));
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_SQPSN), ==, PSN_A + 1);
    ernic_rig_stop(r);
}

/*
 * A UD SEND of at most 16 bytes with no SGE carries SDATA (PG332 Table
 * 2-1), as an RC SEND does: what a provider's inline SEND writes.
 */
static void test_send_sdata(void)
{
    ErnicRig *r = ud_pair(UD_FEAT);
    uint8_t w[ERNIC_XWQE_SIZE] = { 0 }, f[FRAME_MAX], want[FRAME_MAX];
    uint8_t ext[12], sdata[12];
    size_t len, wlen;

    ernic_rig_fill(sdata, sizeof(sdata), 42);
    stw_le_p(&w[ERNIC_WQE_WRID], 3);
    w[ERNIC_WQE_OPCODE] = ERNIC_OP_SEND;
    stl_le_p(&w[ERNIC_WQE_LENGTH], sizeof(sdata));
    stl_le_p(&w[ERNIC_WQE_UD_DQPN], 0x99);
    stl_le_p(&w[ERNIC_WQE_UD_QKEY], QKEY_B);
    stl_le_p(&w[ERNIC_WQE_UD_AH], AH_B);
    memcpy(&w[ERNIC_WQE_SDATA], sdata, sizeof(sdata));
    qtest_memwrite(r->qts, DEV_BASE(0) + SQ_OFF, w, sizeof(w));
    r->d[0].sqpi++;
    ernic_rig_qwr(r, 0, QPN_A, ERNIC_SQPI, 1);
    len = ernic_rig_wire_wait(r, 0, f);
    wlen = ernic_rig_frame(want, &r->d[0], &r->d[1], OPC_UD_SEND, 0x99,
                           PSN_A, false, ext, deth(ext, QKEY_B, false),
                           sdata, sizeof(sdata));
    stw_be_p(want + F_UDP, UDP_SPORT);
    stl_le_p(want + wlen - 4, qernic_icrc(want, wlen));
    g_assert_cmpmem(f, len, want, wlen);
    ernic_rig_stop(r);
}

/*
 * A UD SEND with the QP's Q_Key takes the receive WQE: the GRH area (20
 * zero bytes, the IPv4 header), then the payload; the metadata says the
 * length with the area, the ImmDt and the source QP. No ACK is sent.
 */
static void test_receive(void)
{
    ErnicRig *r = ud_pair(UD_FEAT);
    uint8_t f[FRAME_MAX], ext[12], m[ERNIC_RXMETA_SIZE], zero[20] = { 0 };
    uint8_t pay[200];
    size_t len;

    put_rwqe(r, 0);
    len = ernic_rig_inject(r, f, OPC_UD_SEND_IMM, QPN_B, 0x5555,
                           ext, deth(ext, QKEY_B, true), 200);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_poll_reg(r, 1, QOFF(QPN_B, ERNIC_STATRQPIDB), 0xffff, 1);
    ernic_rig_assert_mem(r, RXBUF, zero, 20);
    ernic_rig_assert_mem(r, RXBUF + 20, f + F_IP, 20);
    ernic_rig_fill(pay, sizeof(pay), 0x5555);
    ernic_rig_assert_mem(r, RXBUF + 40, pay, sizeof(pay));
    qtest_memread(r->qts, DEV_BASE(1) + META_OFF, m, sizeof(m));
    g_assert_cmpuint(ldl_le_p(&m[ERNIC_RXMETA_LEN]), ==, 240);
    g_assert_cmphex(m[ERNIC_RXMETA_OPCODE], ==, OPC_UD_SEND_IMM);
    g_assert_cmphex(m[ERNIC_RXMETA_FLAGS], ==, ERNIC_RXMETA_F_IMM);
    g_assert_cmphex((uint32_t)ldl_le_p(&m[ERNIC_RXMETA_DATA]), ==, IMM);
    g_assert_cmphex(ldl_le_p(&m[ERNIC_RXMETA_SQPN]), ==, QPN_A);
    ernic_rig_assert_idle(r->qts, 50);
    g_assert_false(ernic_rig_wire_read(r->d[1].fd, f, &len));
    ernic_rig_stop(r);
}

/*
 * End to end: QP A's UD SEND reaches QP B's WQE through the wire; then
 * one with another Q_Key is dropped, as are an RC SEND to the UD QP and
 * a UD SEND with no receive WQE left: the QP stays in service.
 */
static void test_send_receive(void)
{
    ErnicRig *r = ud_pair(UD_FEAT);
    g_autofree uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF,
                                                  1000, 9);
    uint8_t f[FRAME_MAX], ext[12];
    size_t len;

    put_rwqe(r, 0);
    put_rwqe(r, 1);
    /* Two free RQ slots (STATRQPIDBi 0, RQCIi 3 of a depth of 4). */
    ernic_rig_qwr(r, 1, QPN_B, ERNIC_RQCI, 3);
    post_ud(r, 1, ERNIC_OP_SEND, 1000, AH_B, QPN_B, QKEY_B);
    post_ud(r, 2, ERNIC_OP_SEND, 1000, AH_B, QPN_B, QKEY_B + 1);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    for (int k = 0; k < 50; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_assert_mem(r, RXBUF + 40, p, 1000);
    len = ernic_rig_inject(r, f, OPC_RC_SEND, QPN_B, 0x10, NULL, 0, 64);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    post_ud(r, 3, ERNIC_OP_SEND, 8, AH_B, QPN_B, QKEY_B);
    len = ernic_rig_inject(r, f, OPC_UD_SEND, QPN_B, 0x11, ext,
                           deth(ext, QKEY_B, false), 16);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    for (int k = 0; k < 50; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 2);
    g_assert_false(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    /* QKEYi changes while the QP is enabled (IBTA: in any state). */
    ernic_rig_wr(r, 1, ERNIC_EXT_QP_OFFSET(QPN_B) + ERNIC_QKEY, QKEY_A);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXT_QP_OFFSET(QPN_B) +
                                 ERNIC_QKEY), ==, QKEY_A);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 1), ==, CQE(ERNIC_OP_SEND, 2));
    ernic_rig_stop(r);
}

/* Device @i's IPv6 address (IPv6XADD4 holds bits [127:96], PG332 p.33). */
static void set_ipv6(ErnicRig *r, int i, const uint8_t *ip)
{
    for (int k = 0; k < 4; k++) {
        ernic_rig_wr(r, i, ERNIC_IPv6XADD4 - 4 * k, ldl_be_p(ip + 4 * k));
    }
}

/*
 * A UD QP talks to IPv4 and IPv6 peers alike: the IP version of a packet
 * is its AH's, not QPCONFi's. QP A (an IPv4 QP) sends through an IPv6 AH:
 * an IPv6 frame from device 0's IPv6 address, hop limit the AH's TTL,
 * with a valid ICRC. Given to device 1, QP B (IPv4 too) receives it: the
 * GRH area is the IPv6 header and the metadata says so.
 */
static void test_ipv6(void)
{
    static const uint8_t ip0[16] = { 0xfe, 0x80, [14] = 0xaa, 0x01 };
    static const uint8_t ip1[16] = { 0xfe, 0x80, [14] = 0xbb, 0x02 };
    ErnicRig *r = ud_pair(UD_FEAT);
    g_autofree uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF,
                                                  500, 11);
    uint8_t f[FRAME_MAX], m[ERNIC_RXMETA_SIZE];
    size_t len;

    set_ipv6(r, 0, ip0);
    set_ipv6(r, 1, ip1);
    g_assert_cmpuint(put_ah(r, 0, AH_B + 1, 1, PD_NUM,
                            AH_OK | ERNIC_AHCONF_IPV6), ==, ERNIC_AHSTS_OK);
    for (int k = 0; k < 4; k++) {
        ernic_rig_wr(r, 0, ERNIC_AHIP4 - 4 * k, ldl_be_p(ip1 + 4 * k));
    }
    ernic_rig_wr(r, 0, ERNIC_AHCMD, ERNIC_AHCMD_WRITE);
    put_rwqe(r, 0);
    post_ud(r, 6, ERNIC_OP_SEND, 500, AH_B + 1, QPN_B, QKEY_B);
    len = ernic_rig_wire_wait(r, 0, f);
    g_assert_cmpuint(len, ==, 14 + 40 + 8 + 12 + 8 + 500 + 4);
    g_assert_cmphex(lduw_be_p(f + 12), ==, 0x86dd);
    g_assert_cmphex(f[14] >> 4, ==, 6);
    g_assert_cmpuint(f[14 + 6], ==, 17);            /* UDP */
    g_assert_cmpuint(f[14 + 7], ==, TTL);
    g_assert_cmpmem(f + 14 + 8, 16, ip0, 16);
    g_assert_cmpmem(f + 14 + 24, 16, ip1, 16);
    g_assert_cmphex(lduw_be_p(f + 54 + 2), ==, 4791);
    g_assert_cmphex(f[62], ==, OPC_UD_SEND);
    g_assert_cmpmem(f + 62 + 12 + 8, 500, p, 500);
    g_assert_cmphex(ldl_le_p(f + len - 4), ==, qernic_icrc(f, len));
    ernic_rig_poll_cqhead(r, 0, QPN_A);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0), ==, CQE(ERNIC_OP_SEND, 6));

    ernic_rig_wire_write(r->d[1].fd, f, len);
    ernic_rig_poll_reg(r, 1, QOFF(QPN_B, ERNIC_STATRQPIDB), 0xffff, 1);
    ernic_rig_assert_mem(r, RXBUF, f + 14, 40);
    ernic_rig_assert_mem(r, RXBUF + 40, p, 500);
    qtest_memread(r->qts, DEV_BASE(1) + META_OFF, m, sizeof(m));
    g_assert_cmpuint(ldl_le_p(&m[ERNIC_RXMETA_LEN]), ==, 540);
    g_assert_cmphex(m[ERNIC_RXMETA_FLAGS], ==, ERNIC_RXMETA_F_IPV6);
    g_assert_false(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATQP) &
                   ERNIC_STATQP_FATAL);
    ernic_rig_stop(r);
}

typedef struct UdRefusal {
    const char *name;
    uint8_t opcode;
    uint32_t len;
    uint32_t ah;
    uint32_t ah_pd;
} UdRefusal;

static const UdRefusal ud_refusals[] = {
    { "write", ERNIC_OP_WRITE, 64, AH_B, PD_NUM },
    { "longer-than-pmtu", ERNIC_OP_SEND, 1025, AH_B, PD_NUM },
    { "ah-invalid", ERNIC_OP_SEND, 64, AH_B + 1, PD_NUM },
    { "ah-past-table", ERNIC_OP_SEND, 64, ERNIC_AH_ENTRIES, PD_NUM },
    { "ah-other-pd", ERNIC_OP_SEND, 64, AH_B, PD_NUM + 1 },
};

/* Each refused UD WQE: ERRFLAG, FATAL 0x05, nothing sent. */
static void test_refused(const void *opaque)
{
    const UdRefusal *t = opaque;
    ErnicRig *r = ud_pair(UD_FEAT);
    uint8_t f[FRAME_MAX];
    size_t len;

    put_ah(r, 0, AH_B, 1, t->ah_pd, AH_OK);
    post_ud(r, 6, t->opcode, t->len, t->ah, QPN_B, QKEY_B);
    ernic_rig_poll_reg(r, 0, QOFF(QPN_A, ERNIC_STATQP), ERNIC_STATQP_FATAL,
                       ERNIC_STATQP_FATAL);
    g_assert_cmphex(ernic_rig_fatal_entry(r, 0, 0), ==,
                    (QPN_A << 16) | ERNIC_FATAL_WQE_PROCESSOR);
    ernic_rig_poll_cqhead(r, 0, QPN_A);
    g_assert_cmphex(ernic_rig_cqe(r, 0, 0) & ERRFLAG, ==, ERRFLAG);
    ernic_rig_assert_idle(r->qts, 50);
    g_assert_false(ernic_rig_wire_read(r->d[0].fd, f, &len));
    ernic_rig_stop(r);
}

/*
 * Multicast (docs/extension.md, "Multicast"): group MC_IDX of device 1
 * is MC_IP; QP B, and QP C when there is one, are attached to it.
 */
#define MC_FEAT         (UD_FEAT | ERNIC_EXT_F_MCAST)
#define MC_IDX          5
#define MC_IP           0xef010203u         /* 239.1.2.3 */
#define MC_AH           9
#define QPN_C           4                   /* device 1's second UD QP */
#define QBASE_C         (DEV_BASE(1) + 0x2000000)
#define RXBUF_C         (QBASE_C + MR_OFF)

static const uint8_t mc_mac[6] = { 0x01, 0x00, 0x5e, 0x01, 0x02, 0x03 };

/* Device @i's group @idx: IPv4 @ip, @valid, QPs @qps0 (MCQP0). */
static uint32_t put_mcg(ErnicRig *r, int i, uint32_t idx, uint32_t ip,
                        bool valid, uint32_t qps0)
{
    ernic_rig_wr(r, i, ERNIC_MCIDX, idx);
    ernic_rig_wr(r, i, ERNIC_MCIP1, ip);
    ernic_rig_wr(r, i, ERNIC_MCCONF, valid ? ERNIC_MCCONF_VALID : 0);
    ernic_rig_wr(r, i, ERNIC_MCQP0, qps0);
    ernic_rig_wr(r, i, ERNIC_MCCMD, ERNIC_MCCMD_WRITE);
    return ernic_rig_rd(r, i, ERNIC_MCSTS);
}

#define QPBIT(qpn)      (1u << ((qpn) - 1))

/*
 * The UD pair with @feat, QP C too, device 0's AH MC_AH to the group
 * (its IP and the MAC RFC 1112 maps it to) and device 1's group with
 * QP B and QP C attached.
 */
static ErnicRig *mc_pair(uint32_t feat)
{
    ErnicRig *r = ud_pair(feat);
    uint8_t w[ERNIC_RWQE_SIZE] = { 0 };

    ud_qp(r, 1, QPN_C, feat, QKEY_B);
    ernic_rig_wr(r, 1, ERNIC_EXT_QP_OFFSET(QPN_C) + ERNIC_RXMETABA,
                 QBASE_C + META_OFF);
    ernic_rig_setup_qp(r, 1, QPN_C, 0, QPN_A, PSN_B, PSN_A,
                       &ernic_rig_default_cfg, QBASE_C);
    stq_le_p(&w[ERNIC_SGE_ADDR], RXBUF_C);
    stl_le_p(&w[ERNIC_SGE_LEN], 0x1000);
    qtest_memwrite(r->qts, QBASE_C + RQ_OFF, w, sizeof(w));
    put_rwqe(r, 0);
    ernic_rig_wr(r, 0, ERNIC_AHIDX, MC_AH);
    ernic_rig_wr(r, 0, ERNIC_AHPD, PD_NUM);
    ernic_rig_wr(r, 0, ERNIC_AHMACMSB, lduw_be_p(mc_mac));
    ernic_rig_wr(r, 0, ERNIC_AHMACLSB, ldl_be_p(mc_mac + 2));
    ernic_rig_wr(r, 0, ERNIC_AHIP1, MC_IP);
    ernic_rig_wr(r, 0, ERNIC_AHCONF, AH_OK);
    ernic_rig_wr(r, 0, ERNIC_AHCMD, ERNIC_AHCMD_WRITE);
    g_assert_cmpuint(put_mcg(r, 1, MC_IDX, MC_IP, true,
                             QPBIT(QPN_B) | QPBIT(QPN_C)), ==,
                     ERNIC_MCSTS_OK);
    return r;
}

/* The group window writes an entry and reads it back; a bad command. */
static void test_mcast_window(void)
{
    ErnicRig *r = ernic_rig_start(NULL);

    g_assert_cmpuint(put_mcg(r, 0, 63, MC_IP, true, 0x80000004), ==,
                     ERNIC_MCSTS_OK);
    ernic_rig_wr(r, 0, ERNIC_MCIP1, 0);
    ernic_rig_wr(r, 0, ERNIC_MCQP0, 0);
    ernic_rig_wr(r, 0, ERNIC_MCCMD, ERNIC_MCCMD_READ);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MCIP1), ==, MC_IP);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MCQP0), ==, 0x80000004);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MCCONF), ==,
                    ERNIC_MCCONF_VALID);
    ernic_rig_wr(r, 0, ERNIC_MCIDX, 0xffff);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MCIDX), ==, 63);
    ernic_rig_wr(r, 0, ERNIC_MCCMD, 7);
    g_assert_cmpuint(ernic_rig_rd(r, 0, ERNIC_MCSTS), ==,
                     ERNIC_MCSTS_BAD_COMMAND);
    g_assert_cmphex(ernic_rig_rd(r, 0, ERNIC_MCCMD), ==, 0);
    ernic_rig_stop(r);
}

/* Send QP A's UD SEND @wrid to the group; pump until it is done. */
static void mc_send(ErnicRig *r, uint16_t wrid, uint32_t len)
{
    post_ud(r, wrid, ERNIC_OP_SEND, len, MC_AH, ERNIC_MC_QPN, QKEY_B);
    ERNIC_RIG_PUMP(r, NULL, ernic_rig_all_done(r, 0, QPN_A));
    for (int k = 0; k < 50; k++) {
        ernic_rig_pump_once(r, NULL);
    }
}

/*
 * QP A's UD SEND to the group (DestQP 0xFFFFFF, the group's IP and MAC)
 * reaches both attached QPs of device 1, each in its own WQE with the
 * sender's QP number in its metadata, and through the loopback QP A
 * itself, attached to the group on device 0.
 */
static void test_mcast_fanout(void)
{
    ErnicRig *r = mc_pair(MC_FEAT);
    g_autofree uint8_t *p = ernic_rig_put_pattern(r, DEV_BASE(0) + SRC_OFF,
                                                  700, 11);
    uint8_t m[ERNIC_RXMETA_SIZE], w[ERNIC_RWQE_SIZE] = { 0 };
    uint64_t self = DEV_BASE(0) + MR_OFF + 0x10000;

    stq_le_p(&w[ERNIC_SGE_ADDR], self);
    stl_le_p(&w[ERNIC_SGE_LEN], 0x1000);
    qtest_memwrite(r->qts, DEV_BASE(0) + RQ_OFF, w, sizeof(w));
    g_assert_cmpuint(put_mcg(r, 0, MC_IDX, MC_IP, true, QPBIT(QPN_A)), ==,
                     ERNIC_MCSTS_OK);
    ernic_rig_wr(r, 0, ERNIC_EXT_QP_OFFSET(QPN_A) + ERNIC_QKEY, QKEY_B);
    mc_send(r, 1, 700);
    g_assert_cmphex(ernic_rig_qrd(r, 0, QPN_A, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_assert_mem(r, self + 40, p, 700);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 1);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_C, ERNIC_STATRQPIDB), ==, 1);
    ernic_rig_assert_mem(r, RXBUF + 40, p, 700);
    ernic_rig_assert_mem(r, RXBUF_C + 40, p, 700);
    /* The GRH area holds the IPv4 header: its destination is the group. */
    g_assert_cmphex(qtest_readl(r->qts, RXBUF_C + 20 + 16), ==,
                    cpu_to_le32(cpu_to_be32(MC_IP)));
    qtest_memread(r->qts, QBASE_C + META_OFF, m, sizeof(m));
    g_assert_cmpuint(ldl_le_p(&m[ERNIC_RXMETA_LEN]), ==, 740);
    g_assert_cmphex(ldl_le_p(&m[ERNIC_RXMETA_SQPN]), ==, QPN_A);
    ernic_rig_stop(r);
}

/*
 * Only the groups in the table, at their MAC, for the attached QPs: a
 * group not there, the group's IP at another MAC, a group whose QPs
 * were detached and one no longer valid place nothing, and each is
 * logged as a Table 2-3 address error.
 */
static void test_mcast_filter(void)
{
    ErnicRig *r = mc_pair(MC_FEAT);
    ErnicRigDev to = r->d[1];
    uint8_t f[FRAME_MAX], ext[12];
    uint32_t errs = ernic_rig_rd(r, 1, ERNIC_ERRBUFWPTR);
    size_t len;

    to.e.ip = MC_IP + 1;
    memcpy(to.e.mac, mc_mac, 6);
    to.e.mac[5]++;
    len = ernic_rig_frame(f, &r->d[0], &to, OPC_UD_SEND, ERNIC_MC_QPN, 1,
                          false, ext, deth(ext, QKEY_B, false), NULL, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    to.e.ip = MC_IP;
    len = ernic_rig_frame(f, &r->d[0], &to, OPC_UD_SEND, ERNIC_MC_QPN, 2,
                          false, ext, deth(ext, QKEY_B, false), NULL, 0);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    for (int k = 0; k < 50; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_ERRBUFWPTR), ==, errs + 2);
    put_mcg(r, 1, MC_IDX, MC_IP, true, QPBIT(QPN_C + 1));
    mc_send(r, 1, 64);
    put_mcg(r, 1, MC_IDX, MC_IP, false, QPBIT(QPN_B) | QPBIT(QPN_C));
    mc_send(r, 2, 64);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_C, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_ERRBUFWPTR), ==, errs + 3);
    ernic_rig_stop(r);
}

/* Without EXTCTRL.MCAST a packet to QP 0xFFFFFF is for no QP at all. */
static void test_mcast_off(void)
{
    ErnicRig *r = mc_pair(UD_FEAT);

    mc_send(r, 1, 64);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_C, ERNIC_STATRQPIDB), ==, 0);
    ernic_rig_stop(r);
}

/*
 * Without EXTCTRL.UD the QP's bit does nothing: it is an RC QP, which
 * places no UD SEND.
 */
static void test_off(void)
{
    ErnicRig *r = ud_pair(UD_FEAT & ~ERNIC_EXT_F_UD);
    uint8_t f[FRAME_MAX], ext[12];
    size_t len;

    g_assert_cmphex(ernic_rig_rd(r, 1, ERNIC_EXTCTRL), ==,
                    UD_FEAT & ~ERNIC_EXT_F_UD);
    put_rwqe(r, 0);
    len = ernic_rig_inject(r, f, OPC_UD_SEND, QPN_B, 0x33, ext,
                           deth(ext, QKEY_B, false), 16);
    ernic_rig_wire_write(r->d[1].fd, f, len);
    for (int k = 0; k < 50; k++) {
        ernic_rig_pump_once(r, NULL);
    }
    g_assert_cmphex(ernic_rig_qrd(r, 1, QPN_B, ERNIC_STATRQPIDB), ==, 0);
    ernic_rig_stop(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ernic/ud/ah-window", test_ah_window);
    qtest_add_func("/ernic/ud/send-frame", test_send_frame);
    qtest_add_func("/ernic/ud/send-sdata", test_send_sdata);
    qtest_add_func("/ernic/ud/receive", test_receive);
    qtest_add_func("/ernic/ud/send-receive", test_send_receive);
    qtest_add_func("/ernic/ud/ipv6", test_ipv6);
    qtest_add_func("/ernic/ud/off", test_off);
    qtest_add_func("/ernic/ud/mcast-window", test_mcast_window);
    qtest_add_func("/ernic/ud/mcast-fanout", test_mcast_fanout);
    qtest_add_func("/ernic/ud/mcast-filter", test_mcast_filter);
    qtest_add_func("/ernic/ud/mcast-off", test_mcast_off);
    for (size_t k = 0; k < ARRAY_SIZE(ud_refusals); k++) {
        g_autofree char *path = g_strdup_printf("/ernic/ud/refused/%s",
                                                ud_refusals[k].name);

        qtest_add_data_func(path, &ud_refusals[k], test_refused);
    }
    return g_test_run();
}
