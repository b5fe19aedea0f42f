#!/usr/bin/env python3
"""The engine's latencies from two QEMUs' timestamped traces.

usage: trace-latency.py REQUESTER.trace RESPONDER.trace [QPN]

Each trace is QEMU's log backend with -msg timestamp=on (lines
"tid@sec.usec:event args") of ernic_sq_doorbell, ernic_tx_req,
ernic_tx_ack, ernic_tx_read_resp, ernic_rx and ernic_sq_complete, as
scripts/guest-reconic-test.sh --trace writes them. Both QEMUs run on one
host, so their gettimeofday() timestamps compare. For the requester's QP
(default 2), operations one at a time:

- doorbell: from an SQPIi write that moved SQPIi (a kick from elsewhere
  repeats the old value) to the next request frame the QP sends;
- ack: from the responder's last ACK or READ response frame before a
  completion to that completion's CQE and CQHEADi update, and the part
  of it before the requester's ernic_rx of that frame (the frame waiting
  for the main loop).

Prints p50/p99/max in microseconds and how many of each were measured.
"""
import re
import sys

LINE = re.compile(r'^(\d+)@(\d+)\.(\d+):(ernic_\w+) (.*)$')


def events(path):
    out = []
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                t = int(m.group(2)) * 1000000 + int(m.group(3))
                out.append((t, m.group(4), m.group(5), int(m.group(1))))
    return out


def qp_of(args):
    m = re.match(r'QP(\d+)', args)
    return int(m.group(1)) if m else -1


def doorbells(req, qpn):
    lat, last, pending = [], None, None
    for t, ev, args, _ in req:
        if qp_of(args) != qpn:
            continue
        if ev == 'ernic_sq_doorbell':
            sqpi = args.split()[-1]
            if sqpi != last and last is not None and pending is None:
                pending = t
            last = sqpi
        elif ev == 'ernic_tx_req' and pending is not None:
            lat.append(t - pending)
            pending = None
    return lat


def acks(req, resp, qpn):
    sent = [t for t, ev, args, _ in resp
            if ev in ('ernic_tx_ack', 'ernic_tx_read_resp') and
            qp_of(args) == qpn]
    rx = [t for t, ev, args, _ in req
          if ev == 'ernic_rx' and qp_of(args) == qpn]
    total, waiting = [], []
    i = j = 0
    for t, ev, args, _ in req:
        if ev != 'ernic_sq_complete' or qp_of(args) != qpn:
            continue
        while i + 1 < len(sent) and sent[i + 1] <= t:
            i += 1
        while j + 1 < len(rx) and rx[j + 1] <= t:
            j += 1
        if sent and sent[i] <= t:
            total.append(t - sent[i])
            if rx and sent[i] <= rx[j] <= t:
                waiting.append(rx[j] - sent[i])
    return total, waiting


def pct(v, p):
    v = sorted(v)
    return v[(len(v) - 1) * p // 100] if v else float('nan')


def show(name, v):
    print(f'{name}: n={len(v)} p50 {pct(v, 50)} us p99 {pct(v, 99)} us '
          f'max {pct(v, 100)} us')


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    req, resp = events(sys.argv[1]), events(sys.argv[2])
    qpn = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    show('doorbell to first frame', doorbells(req, qpn))
    total, waiting = acks(req, resp, qpn)
    show('ACK or READ response sent to CQE and CQHEADi', total)
    show('  of which the frame waited to be received', waiting)


if __name__ == '__main__':
    main()
