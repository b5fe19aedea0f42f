#!/usr/bin/env python3
"""Compare the frames two runs of scripts/wire-dump-qemu-system-x86_64 recorded.

usage: wire-compare.py BEFORE [BEFORE2 ...] AFTER

Every pcap of a run is matched with the pcap of the same name (launch
order, netdev) of the other, and the frames each source MAC address sent
are compared byte for byte, in order; timestamps, and how the two
directions of a netdev interleave, are ignored. A run that stopped
earlier (the test ended before the last frames were relayed) has a
prefix of the other's frames: that is counted, not a difference. Given
two or more runs before, a pcap that already differs between them
depends on timing (a real netdev, a wall clock) and is left out. Prints
one line per file that differs and a summary; exits 1 if any differs.
"""
import os
import struct
import sys


def frames(path):
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = struct.unpack('<I', data[:4])[0]
    endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + 'IIII', data[off:off + 16])
        off += 16
        out.append(data[off:off + incl])
        off += incl
    return out


def by_source(fs):
    """The frames of each source MAC address, in order."""
    out = {}
    for f in fs:
        out.setdefault(f[6:12], []).append(f)
    return out


def load(d, n):
    path = os.path.join(d, n)
    return by_source(frames(path)) if os.path.exists(path) else None


def compare(fa, fb):
    """None if the same, 'prefix' if one run stopped earlier, else why."""
    why = None
    for src in sorted(set(fa) | set(fb)):
        x, y = fa.get(src, []), fb.get(src, [])
        if x == y:
            continue
        k = min(len(x), len(y))
        if x[:k] == y[:k]:
            why = why or 'prefix'
            continue
        first = next(i for i in range(k) if x[i] != y[i])
        return (f'from {src.hex(":")}: {len(x)} frames before, {len(y)} '
                f'after; first difference at frame {first}')
    return why


def main():
    befores, b = sys.argv[1:-1], sys.argv[-1]
    a = befores[0]
    names = sorted(n for n in set(os.listdir(a)) | set(os.listdir(b))
                   if n.endswith('.pcap'))
    bad = total = unstable = prefix = 0
    for n in names:
        if any(compare(load(x, n), load(a, n)) not in (None, 'prefix')
               for x in befores[1:]):
            unstable += 1
            continue
        fa, fb = load(a, n), load(b, n)
        if fa is None or fb is None:
            print(f'{n}: only in {"after" if fa is None else "before"}')
            bad += 1
            continue
        total += sum(len(v) for v in fa.values())
        why = compare(fa, fb)
        if why == 'prefix':
            prefix += 1
        elif why:
            bad += 1
            print(f'{n}: {why}')
    print(f'{len(names)} pcaps, {total} frames compared: {bad} differ'
          f' ({unstable} timing-dependent, left out; {prefix} the same up'
          f' to where one run stopped)')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
