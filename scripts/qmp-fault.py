#!/usr/bin/env python3
"""Run a guest and carry out what it asks of the host
(scripts/guest-fault-test.sh; docs/debugging.md).

usage: qmp-fault.py CONSOLE TMPDIR DEVICE_ID -- QEMU_COMMAND...
                    [--- CONSOLE TMPDIR DEVICE_ID -- QEMU_COMMAND...]

Starts QEMU_COMMAND with its console appended to CONSOLE, a QMP socket
and a second serial port (the guest's ttyS1) whose host end is the
answer channel; with a second guest (after "---", its own TMPDIR), both
(scripts/guest-fault-pair-test.sh). Follows the consoles; for each
request line of a guest:

  guest: fault: inject CMD     qom-set of the device's "fault" property
  guest: fault: link off|on    set_link on the device
  guest: fault: migrate        migrate to a file, quit, start a new QEMU
                               that loads it (-S -incoming), run it
  guest: fault: savevm         snapshot-save (a qcow2 node made here)
  guest: fault: loadvm         snapshot-load of it
  guest: fault: peer REQUEST   an inject or link REQUEST carried out on
                               the other guest's device (DEVICE_ID: its
                               ernic, or for link requests any NIC)

it writes "guest: host: did ..." or "guest: host: FAIL ...: why" to
the requester's CONSOLE and answers on its ttyS1 with one line: "ok",
"saved", "loaded", or "fail". Ends when each guest has printed its RESULT
line or its QEMU has exited; prints the device's fault-stats, taken at
the program's last line ("guest: fault: N failed") and summed over the
QEMUs a migration left (injection state does not migrate), as one JSON
line; with two guests, one JSON object of both, by DEVICE_ID.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
Qmp = __import__("qmp-migrate").Qmp


class Guest:
    def __init__(self, console, tmp, dev, cmd):
        self.console, self.tmp, self.dev, self.cmd = console, tmp, dev, cmd
        self.qmp_path = os.path.join(tmp, "qmp.sock")
        self.ack_path = os.path.join(tmp, "ack.sock")
        self.state = os.path.join(tmp, "state")
        self.snap = False
        self.stats_line = None  # fault-stats at the program's last line
        self.counts = {}        # fault-stats of the QEMUs that went
        self.launch([])

    def launch(self, extra):
        for p in (self.qmp_path, self.ack_path):
            if os.path.exists(p):
                os.unlink(p)
        out = open(self.console, "a")
        self.proc = subprocess.Popen(
            self.cmd + ["-qmp", f"unix:{self.qmp_path},server=on,wait=off",
                        "-chardev", f"socket,id=ack,path={self.ack_path},"
                        "server=on,wait=off",
                        "-device", "isa-serial,chardev=ack"] + extra,
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        self.qmp = Qmp(self.qmp_path)
        self.ack = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.ack.connect(self.ack_path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def answer(self, word):
        self.ack.sendall((word + "\n").encode())

    def wait(self, what, cond, limit=120):
        deadline = time.monotonic() + limit
        while not cond():
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            time.sleep(0.02)

    def migration_done(self):
        st = self.qmp.cmd("query-migrate").get("status")
        if st == "failed":
            raise RuntimeError("migration failed")
        return st == "completed"

    def migrate(self):
        self.qmp.cmd("migrate", uri="file:" + self.state)
        self.wait("the migration", self.migration_done)
        info = self.qmp.cmd("query-migrate")
        # Injection state is not migrated: keep the counts of this QEMU.
        for k, v in self.qmp.cmd(
                "qom-get", path=f"/machine/peripheral/{self.dev}",
                property="fault-stats").items():
            self.counts[k] = self.counts.get(k, 0) + v
        self.qmp.cmd("quit")
        self.proc.wait(timeout=60)
        self.launch(["-S", "-incoming", "file:" + self.state])
        self.wait("the incoming migration", self.migration_done)
        self.qmp.cmd("cont")
        return (f"migrate: total {info.get('total-time')} ms, downtime "
                f"{info.get('downtime')} ms")

    def job(self, execute, **args):
        self.qmp.cmd(execute, **args)
        jid = args["job-id"]

        def concluded():
            for j in self.qmp.cmd("query-jobs"):
                if j["id"] == jid and j["status"] == "concluded":
                    if "error" in j:
                        raise RuntimeError(f"{execute}: {j['error']}")
                    return True
            return False
        self.wait(execute, concluded)
        self.qmp.cmd("job-dismiss", id=jid)

    def snapshot_disk(self):
        path = os.path.join(self.tmp, "snap.qcow2")
        self.job("blockdev-create", **{"job-id": "c1", "options": {
            "driver": "file", "filename": path, "size": 0}})
        self.qmp.cmd("blockdev-add", driver="file", filename=path,
                     **{"node-name": "f"})
        self.job("blockdev-create", **{"job-id": "c2", "options": {
            "driver": "qcow2", "file": "f", "size": 16 << 20}})
        self.qmp.cmd("blockdev-add", driver="qcow2", file="f",
                     **{"node-name": "snap"})
        self.snap = True

    def snapshot(self, execute):
        if not self.snap:
            self.snapshot_disk()
        self.job(execute, **{"job-id": "s", "tag": "s1", "vmstate": "snap",
                             "devices": ["snap"]})

    def carry_out(self, what):
        """Do what the guest asked; the answer word and the log text."""
        if what.startswith("inject "):
            self.qmp.cmd("qom-set", path=f"/machine/peripheral/{self.dev}",
                         property="fault", value=what[len("inject "):])
            return "ok", what
        if what in ("link off", "link on"):
            self.qmp.cmd("set_link", name=self.dev, up=what.endswith("on"))
            return "ok", what
        if what == "migrate":
            return "ok", self.migrate()
        if what == "savevm":
            self.snapshot("snapshot-save")
            return "saved", what
        if what == "loadvm":
            self.snapshot("snapshot-load")
            return "loaded", what
        raise RuntimeError("unknown request")

    def stats(self):
        """fault-stats summed over every QEMU the guest ran in."""
        now = self.qmp.cmd("qom-get", path=f"/machine/peripheral/{self.dev}",
                           property="fault-stats")
        return json.dumps({k: v + self.counts.get(k, 0)
                           for k, v in sorted(now.items())})


class Follower:
    """The whole lines written to a file so far, as they come."""

    def __init__(self, path):
        self.f = open(path, "r", errors="replace")
        self.part = ""

    def lines(self):
        out = []
        while True:
            chunk = self.f.readline()
            if not chunk:
                return out
            self.part += chunk
            if self.part.endswith("\n"):
                out.append(self.part.rstrip("\r\n"))
                self.part = ""


def note(console, line):
    with open(console, "a") as f:
        f.write(line + "\n")


def parse(argv):
    """(CONSOLE, TMPDIR, DEVICE_ID, COMMAND) for each guest of argv."""
    guests, cur = [], []
    for a in argv + ["---"]:
        if a != "---":
            cur.append(a)
            continue
        sep = cur.index("--")
        if sep != 3:
            sys.exit(__doc__)
        guests.append((cur[0], cur[1], cur[2], cur[sep + 1:]))
        cur = []
    if len(guests) > 2:
        sys.exit(__doc__)
    return guests


def main():
    # A timeout's SIGTERM ends the run through the finally below, which
    # takes QEMU with it rather than leaving it running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    guests = []
    try:
        for console, tmp, dev, cmd in parse(sys.argv[1:]):
            guests.append(Guest(console, tmp, dev, cmd))
        run(guests)
    finally:
        for g in guests:
            if g.proc.poll() is None:
                g.proc.kill()


def request(guests, g, what):
    """Carry out a request of guest g; (answer word, log text)."""
    if what.startswith("peer "):
        others = [o for o in guests if o is not g]
        what = what[len("peer "):]
        if not others or not what.startswith(("inject ", "link ")):
            raise RuntimeError("no peer, or not a request for it")
        word, done = others[0].carry_out(what)
        return word, f"peer {done}"
    return g.carry_out(what)


def all_stats(guests):
    if len(guests) == 1:
        return guests[0].stats()
    out = {}
    for g in guests:
        try:
            out[g.dev] = json.loads(g.stats())
        except Exception:  # noqa: BLE001 - a NIC that is not an ernic
            out[g.dev] = None
    return json.dumps(out)


def handle(guests, g, line):
    """One console line of guest g; True once it is the guest's last."""
    if "guest: RESULT" in line:
        return True
    if not line.startswith("guest: fault: "):
        return False
    if line.endswith(" failed"):
        # The program's last line: the counters while QEMU still runs.
        g.stats_line = all_stats(guests)
        return False
    what = line[len("guest: fault: "):].strip()
    try:
        word, done = request(guests, g, what)
        note(g.console, f"guest: host: did {done}")
    except Exception as e:  # noqa: BLE001 - any failure is reported
        word = "fail"
        note(g.console, f"guest: host: FAIL {what}: {e}")
    try:
        g.answer(word)
    except OSError as e:
        note(g.console, f"guest: host: FAIL answering {what}: {e}")
    return False


def run(guests):
    followers = {id(g): Follower(g.console) for g in guests}
    ended = set()
    while len(ended) < len(guests):
        busy = False
        for g in guests:
            if id(g) in ended:
                continue
            lines = followers[id(g)].lines()
            busy |= bool(lines)
            for line in lines:
                if handle(guests, g, line):
                    ended.add(id(g))
                    break
            if not lines and g.proc.poll() is not None:
                ended.add(id(g))
        if not busy:
            time.sleep(0.02)
    for g in guests:
        g.proc.wait(timeout=120)
    print(next((g.stats_line for g in guests if g.stats_line), "{}"))


if __name__ == "__main__":
    main()
