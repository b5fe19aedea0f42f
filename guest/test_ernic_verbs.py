# SPDX-License-Identifier: GPL-2.0-or-later
"""
Verbs that a device without SRQ or atomics must still accept, because
common software asks for them (issue 32): an RC QP that only sends or
only receives (max_recv_wr or max_send_wr 0, as qperf creates), and an
MR with IBV_ACCESS_REMOTE_ATOMIC (as UCX, libfabric and qperf register).
They hold on rxe as on ernic.

Not one of rdma-core's tests: guest/init-pyverbs.sh copies this file into
rdma-core's tests/ after rdma-core's own run and runs it on its own with
run_tests.py, so that the count of rdma-core's tests stays theirs.
"""
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE, SendWR
from pyverbs.qp import QPAttr, QPCap
import pyverbs.enums as e

from tests.base import RCResources, RDMATestCase
import tests.utils as u


class OneWayRC(RCResources):
    """An RC QP without a receive queue (@sender) or without a send queue."""

    def __init__(self, dev_name, ib_port, gid_index, sender):
        self.sender = sender
        super().__init__(dev_name, ib_port, gid_index)

    def create_qp_cap(self):
        if self.sender:
            return QPCap(max_send_wr=self.num_msgs, max_recv_wr=0)
        return QPCap(max_send_wr=0, max_recv_wr=self.num_msgs)


class InlineRC(RCResources):
    """An RC QP asking for @inline bytes of inline data, remote writable."""

    def __init__(self, dev_name, ib_port, gid_index, inline):
        self.inline = inline
        super().__init__(dev_name, ib_port, gid_index)

    def create_mr(self):
        self.mr = MR(self.pd, self.msg_size, e.IBV_ACCESS_LOCAL_WRITE |
                     e.IBV_ACCESS_REMOTE_WRITE)

    def create_qp_cap(self):
        return QPCap(max_recv_wr=self.num_msgs, max_inline_data=self.inline)

    def create_qp_attr(self):
        attr = QPAttr(port_num=self.ib_port)
        attr.qp_access_flags = (e.IBV_ACCESS_LOCAL_WRITE |
                                e.IBV_ACCESS_REMOTE_WRITE)
        return attr


class ErnicVerbsTest(RDMATestCase):
    # unittest -v prints a test's docstring in place of its name, and the
    # guest test looks for the names: comments, not docstrings, here.

    # A send-only QP SENDs to a receive-only QP, which ACKs without a send
    # queue; each message is checked byte for byte.
    def test_one_way_rc_qps(self):
        self.client = OneWayRC(**self.dev_info, sender=True)
        self.server = OneWayRC(**self.dev_info, sender=False)
        self.pre_run()
        for i in range(self.iters):
            u.post_recv(self.server, u.get_recv_wr(self.server))
            send_wr, _ = u.get_send_elements(self.client, False)
            u.post_send(self.client, send_wr)
            u.poll_cq(self.client.cq)
            u.poll_cq(self.server.cq)
            got = self.server.mr.read(self.server.msg_size, 0)
            self.assertEqual(got, b'c' * self.server.msg_size,
                             f'message {i}')
            self.server.mr.write('s' * self.server.msg_size,
                                 self.server.msg_size)

    # An MR with remote atomic access registers, whether or not the device
    # has atomics (atomic_caps), and so do reregs from and to it.
    def test_reg_mr_remote_atomic(self):
        access = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
                  e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
        with Context(name=self.dev_name) as ctx:
            with PD(ctx) as pd:
                with MR(pd, 4096, access) as mr:
                    mr.rereg(flags=e.IBV_REREG_MR_CHANGE_ACCESS, pd=pd,
                             access=e.IBV_ACCESS_LOCAL_WRITE)
                    mr.rereg(flags=e.IBV_REREG_MR_CHANGE_ACCESS, pd=pd,
                             access=access)
                    self.assertNotEqual(mr.rkey, 0)

    # What ibv_query_qp reports as max_inline_data holds for an RDMA WRITE
    # as for a SEND: asked for none and asked for 16 bytes, an inline
    # WRITE of the reported size lands (qperf's rc_rdma_write_poll_lat
    # posts one).
    def test_inline_write_within_cap(self):
        for asked in (0, 16):
            self.client = InlineRC(**self.dev_info, inline=asked)
            self.server = InlineRC(**self.dev_info, inline=asked)
            self.pre_run()
            self.sync_remote_attr()
            _, init = self.client.qp.query(e.IBV_QP_CAP)
            size = min(init.cap.max_inline_data, self.client.msg_size)
            self.assertGreaterEqual(size, asked)
            if not size:
                continue
            self.client.mem_write('w' * size, size)
            sge = SGE(self.client.mr.buf, size, self.client.mr.lkey)
            wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[sge],
                        send_flags=e.IBV_SEND_SIGNALED | e.IBV_SEND_INLINE)
            wr.set_wr_rdma(int(self.client.rkey), int(self.client.raddr))
            u.post_send(self.client, wr)
            u.poll_cq(self.client.cq)
            self.assertEqual(self.server.mr.read(size, 0), b'w' * size,
                             f'max_inline_data asked {asked}')
