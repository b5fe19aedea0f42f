#!/usr/bin/env python3
"""Migrate a QEMU to a file through its QMP socket, then quit it.

usage: qmp-migrate.py QMP_SOCKET FILE

Prints one line: the total time, the downtime and the RAM sent, as
query-migrate reports them. Exits 1 if the migration fails.
(scripts/guest-migrate-test.sh; docs/migration.md)
"""
import json
import socket
import sys
import time


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.rd = self.sock.makefile("r")
        json.loads(self.rd.readline())          # the greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        self.sock.sendall(json.dumps({"execute": name,
                                      "arguments": args}).encode())
        while True:
            msg = json.loads(self.rd.readline())
            if "event" in msg:
                continue
            if "error" in msg:
                raise RuntimeError(f"{name}: {msg['error']['desc']}")
            return msg["return"]


def main():
    qmp = Qmp(sys.argv[1])
    qmp.cmd("migrate", uri="file:" + sys.argv[2])
    deadline = time.monotonic() + 120
    while True:
        st = qmp.cmd("query-migrate")
        if st.get("status") == "completed":
            break
        if st.get("status") == "failed" or time.monotonic() > deadline:
            print("migration failed:", st.get("error-desc", st))
            sys.exit(1)
        time.sleep(0.05)
    ram = st.get("ram", {})
    print(f"total {st.get('total-time')} ms, downtime {st.get('downtime')} "
          f"ms, {ram.get('transferred', 0) // 1024} KiB sent")
    try:
        qmp.cmd("quit")
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    main()
