#!/usr/bin/env python3
"""Migrate a QEMU to a file through its QMP socket, then quit it; or
start the QEMU that loaded it once its link is up.

usage: qmp-migrate.py [--peer PEER_QMP] QMP_SOCKET FILE
       qmp-migrate.py --resume QMP_SOCKET NETDEV [PEER_QMP]

The first prints one line: the total time, the downtime and the RAM
sent, as query-migrate reports them. Exits 1 if the migration fails.
The second waits for the incoming migration of a QEMU started with -S to
complete and for its -netdev stream NETDEV to be connected, then runs
the VM ("cont"): the guest's timers do not run while its link is still
down. (scripts/guest-migrate-test.sh; docs/migration.md)

With a peer (the other guest's QMP socket), the peer is stopped as soon
as the migration has stopped the VM, and run again right after the new
QEMU: its timers do not run through the gap either. For a peer whose
requests have less retry time than the gap (ibv_rc_pingpong's: timeout
14 and 7 retries, about 0.5 s, against a gap of 0.3 to 1.5 s).
"""
import json
import socket
import sys
import time


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.sock.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.rd = self.sock.makefile("r")
        json.loads(self.rd.readline())          # the greeting
        self.cmd("qmp_capabilities")

    def cmd(self, execute, **args):
        self.sock.sendall(json.dumps({"execute": execute,
                                      "arguments": args}).encode())
        while True:
            msg = json.loads(self.rd.readline())
            if "event" in msg:
                continue
            if "error" in msg:
                raise RuntimeError(f"{execute}: {msg['error']['desc']}")
            return msg["return"]


def wait_for(what, cond):
    deadline = time.monotonic() + 120
    while not cond():
        if time.monotonic() > deadline:
            print("timed out waiting for", what)
            sys.exit(1)
        time.sleep(0.02)


def resume(path, netdev, peer):
    start = time.monotonic()
    qmp = Qmp(path)

    def loaded():
        st = qmp.cmd("query-migrate").get("status")
        if st == "failed":
            print("incoming migration failed")
            sys.exit(1)
        return st == "completed"

    def linked():
        info = qmp.cmd("human-monitor-command",
                       **{"command-line": "info network"})
        # " \ n0: index=0,type=stream,unix:PATH" once connected
        return any(f" {netdev}: " in ln and "type=stream,unix:" in ln
                   for ln in info.splitlines())

    try:
        wait_for("the load", loaded)
        wait_for("the link", linked)
        qmp.cmd("cont")
    finally:
        # Whatever happened here, the peer is not left stopped.
        if peer:
            Qmp(peer).cmd("cont")
    print(f"loaded and linked in {int((time.monotonic() - start) * 1000)} "
          "ms, running" + (", peer running" if peer else ""))


def migrate(path, dest, peer):
    qmp = Qmp(path)
    peer_qmp = Qmp(peer) if peer else None
    qmp.cmd("migrate", uri="file:" + dest)
    deadline = time.monotonic() + 120
    while True:
        st = qmp.cmd("query-migrate")
        status = st.get("status")
        if status == "completed":
            break
        if status == "failed" or time.monotonic() > deadline:
            print("migration failed:", st.get("error-desc", st))
            sys.exit(1)
        # Past "setup" and "active" the VM is stopped: the gap has begun.
        time.sleep(0.05 if status in ("setup", "active") else 0.005)
    if peer_qmp:
        peer_qmp.cmd("stop")
    ram = st.get("ram", {})
    print(f"total {st.get('total-time')} ms, downtime {st.get('downtime')} "
          f"ms, {ram.get('transferred', 0) // 1024} KiB sent"
          + (", peer stopped" if peer_qmp else ""))
    try:
        qmp.cmd("quit")
    except (OSError, ValueError):
        pass


def main():
    args = sys.argv[1:]
    if args[0] == "--resume":
        resume(args[1], args[2], args[3] if len(args) > 3 else None)
        return
    peer = None
    if args[0] == "--peer":
        peer, args = args[1], args[2:]
    migrate(args[0], args[1], peer)


if __name__ == "__main__":
    main()
