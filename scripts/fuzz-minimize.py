#!/usr/bin/env python3
"""Minimise a failing ernic-fuzz run to a short list of actions.

usage: fuzz-minimize.py FUZZER ARGS...   (the ARGS of the failing run)

Action i of a run depends only on (seed, i), so a subset of the actions
is replayed with --keep. The failing run is replayed with --print to find
the action it failed at, then delta debugging (ddmin) drops chunks of
actions while the failure of the same kind (died / hang / spin) stays.
Prints the reproducer command line and its actions.
"""

import os
import re
import subprocess
import sys
import time

BUDGET_S = 20 * 60


def kind(fuzzer, args, timeout=600):
    """Run the fuzzer; return (failure kind or None, output)."""
    try:
        p = subprocess.run([fuzzer] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout,
                           text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return "hang", ""
    out = p.stdout
    if "FUZZ-HANG" in out:
        return "hang", out
    if "FUZZ-SPIN" in out:
        return "spin", out
    if p.returncode != 0 or re.search(r"runtime error|AddressSanitizer|"
                                      r"SUMMARY: ", out):
        return "died", out
    return None, out


def ranges(keep):
    """[1,2,3,7] -> '1-3,7'"""
    out, start, prev = [], None, None
    for i in keep + [None]:
        if start is not None and (i is None or i != prev + 1):
            out.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return ",".join(out)


def main():
    fuzzer, args = sys.argv[1], sys.argv[2:]
    base = []
    skip = False
    for k, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in ("--seconds", "--actions", "--keep"):
            skip = True
            continue
        if a != "--print":
            base.append(a)
    seconds = args[args.index("--seconds") + 1] if "--seconds" in args \
        else None
    first = base + (["--seconds", seconds] if seconds else
                    args[args.index("--actions"):args.index("--actions") + 2])
    want, out = kind(fuzzer, first + ["--print"])
    if not want:
        print("minimize: the run does not fail again (not reproducible)")
        return 1
    last = [int(m) for m in re.findall(r"^A(\d+) ", out, re.M)]
    m = re.search(r"FUZZ-(?:HANG action|SPIN after action) (\d+)", out)
    n = int(m.group(1)) + 1 if m else (max(last) + 1 if last else 1)
    keep = list(range(n))
    print(f"minimize: {want} at action {n - 1}; {n} actions to reduce")
    t0, chunks = time.time(), 2
    # Most findings need only the last few actions: try short tails first.
    for w in (1, 10, 100, 1000, 10000):
        if w >= n:
            break
        tail = list(range(n - w, n))
        got, _ = kind(fuzzer, base + ["--actions", str(n),
                                      "--keep", ranges(tail)])
        if got == want:
            keep = tail
            print(f"minimize: the last {w} actions are enough")
            break
    while len(keep) > 1 and time.time() - t0 < BUDGET_S:
        size = max(1, len(keep) // chunks)
        reduced = False
        for start in range(0, len(keep), size):
            trial = keep[:start] + keep[start + size:]
            if not trial:
                continue
            got, _ = kind(fuzzer, base + ["--actions", str(n),
                                          "--keep", ranges(trial)])
            if got == want:
                keep, reduced = trial, True
                print(f"minimize: {len(keep)} actions left")
                break
        if not reduced:
            if size == 1:
                break
            chunks = min(len(keep), chunks * 2)
    repro = base + ["--actions", str(n), "--keep", ranges(keep)]
    print("REPRODUCER: " + os.path.basename(fuzzer) + " " + " ".join(repro))
    _, out = kind(fuzzer, repro + ["--print"])
    print("\n".join(l for l in out.splitlines()
                    if re.match(r"^A\d+ |FUZZ-|ERROR|runtime error|"
                                r"AddressSanitizer|#\d+ ", l)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
