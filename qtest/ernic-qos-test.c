/*
 * ernic on the qos graph (docs/qos.md): the examples a user starts from
 * to write register-level tests with the libqos driver
 * (qtest/libqos/ernic.h). Run inside QEMU's qos-test:
 *   qos-test -p /x86_64/pc/i440FX-pcihost/pci-bus-pc/pci-bus/ernic
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/socket.h>
#include "libqtest.h"
#include "qemu/bswap.h"
#include "qemu/module.h"
#include "libqos/qgraph.h"
#include "libqos/ernic.h"

static const uint8_t dev_mac[6] = { 0x52, 0x54, 0x00, 0xe3, 0x32, 0x50 };
static const uint8_t peer_mac[6] = { 0x52, 0x54, 0x00, 0xe3, 0x32, 0x51 };
#define DEV_IP          0x0a000001
#define PEER_IP         0x0a000002
#define PD              1
#define MR_VA           0x10000000ULL

static uint32_t cqe(uint8_t opcode, uint16_t wrid)
{
    return (uint32_t)opcode << ERNIC_CQE_OPCODE_SHIFT | wrid;
}

static void pattern(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = seed + i * 7;
    }
}

/* The device's netdev: a socket whose other end is the test's. */
static void *ernic_wire(GString *cmd_line, void *arg)
{
    int *sv = g_new(int, 2);

    g_assert_cmpint(socketpair(PF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    g_string_append_printf(cmd_line, " -netdev socket,fd=%d,id=hs0 ", sv[1]);
    g_test_queue_destroy(g_free, sv);
    return sv;
}

/* Two QPs of the device in loopback: a WRITE, then a SEND, checked. */
static void test_loopback(void *obj, void *data, QGuestAllocator *alloc)
{
    QErnic *e = &((QErnicPCI *)obj)->ernic;
    uint64_t src = guest_alloc(alloc, 4096), dst = guest_alloc(alloc, 4096);
    uint8_t want[4096], got[4096];
    QErnicPeer to3, to2;
    uint32_t rkey;
    uint64_t rq;

    qernic_init(e, dev_mac, DEV_IP);
    rkey = qernic_mr(e, 1, PD, MR_VA, dst, 4096, 0x42);
    to3 = qernic_self(e, 3, 100, 200);
    to2 = qernic_self(e, 2, 200, 100);
    qernic_qp_connect(e, 2, PD, &to3);
    qernic_qp_connect(e, 3, PD, &to2);

    pattern(want, sizeof(want), 1);
    qtest_memwrite(e->qts, src, want, sizeof(want));
    qernic_post(e, 2, ERNIC_OP_WRITE, 1, src, 4096, MR_VA, rkey);
    g_assert_cmphex(qernic_wait_cqe(e, 2), ==, cqe(ERNIC_OP_WRITE, 1));
    qtest_memread(e->qts, dst, got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), want, sizeof(want));

    qernic_post(e, 2, ERNIC_OP_SEND, 2, src, 100, 0, 0);
    rq = qernic_wait_recv(e, 3);
    qtest_memread(e->qts, rq, got, 100);
    g_assert_cmpmem(got, 100, want, 100);
    g_assert_cmphex(qernic_wait_cqe(e, 2), ==, cqe(ERNIC_OP_SEND, 2));
}

/*
 * The test is the peer on the wire: a SEND injected with the PSN the QP
 * expects is received and acknowledged; a SEND posted leaves as a frame
 * with a valid ICRC.
 */
static void test_wire(void *obj, void *data, QGuestAllocator *alloc)
{
    QErnic *e = &((QErnicPCI *)obj)->ernic;
    int fd = ((int *)data)[0];
    QErnicPeer peer = { .qpn = 9, .ip = PEER_IP, .sq_psn = 10,
                        .rq_psn = 20 };
    uint8_t f[QERNIC_FRAME_MAX], pay[64], got[64];
    uint64_t src = guest_alloc(alloc, 64);
    size_t len;

    memcpy(peer.mac, peer_mac, 6);
    qernic_init(e, dev_mac, DEV_IP);
    qernic_qp_connect(e, 2, PD, &peer);

    pattern(pay, sizeof(pay), 9);
    len = qernic_frame(f, peer_mac, PEER_IP, dev_mac, DEV_IP, 0x04, 2, 20,
                       true, NULL, 0, pay, sizeof(pay));
    qernic_wire_send(fd, f, len);
    qtest_memread(e->qts, qernic_wait_recv(e, 2), got, sizeof(got));
    g_assert_cmpmem(got, sizeof(got), pay, sizeof(pay));
    len = qernic_wire_recv(e, fd, f);
    g_assert_cmphex(f[42], ==, 0x11);                   /* ACK */
    g_assert_cmphex((uint32_t)ldl_be_p(f + 50) & 0xffffff, ==, 20);
    g_assert_cmphex((uint32_t)ldl_le_p(f + len - 4), ==, qernic_icrc(f, len));

    qtest_memwrite(e->qts, src, pay, sizeof(pay));
    qernic_post(e, 2, ERNIC_OP_SEND, 3, src, sizeof(pay), 0, 0);
    len = qernic_wire_recv(e, fd, f);
    g_assert_cmphex(f[42], ==, 0x04);                   /* SEND ONLY */
    g_assert_cmphex((uint32_t)ldl_be_p(f + 46) & 0xffffff, ==, peer.qpn);
    g_assert_cmphex((uint32_t)ldl_be_p(f + 50) & 0xffffff, ==, 10);
    g_assert_cmpmem(f + 54, sizeof(pay), pay, sizeof(pay));
    g_assert_cmphex((uint32_t)ldl_le_p(f + len - 4), ==, qernic_icrc(f, len));
}

static void register_ernic_test(void)
{
    QOSGraphTestOptions opts = {
        .before = ernic_wire,
    };

    qos_add_test("loopback", "ernic", test_loopback, &opts);
    qos_add_test("wire", "ernic", test_wire, &opts);
}

libqos_init(register_ernic_test);
