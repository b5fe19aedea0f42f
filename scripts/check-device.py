#!/usr/bin/env python3
"""The shape of the device's code (docs/engine.md, "Layers"), as TAP.

usage: check-device.py ROOT [functions|layers|rules]

With "functions", the first two checks; with "layers", the third; with
"rules", the last.

- functions: no function of hw/rdma/*.c is longer than 60 lines, from
  the line that names it to its closing brace;
- prefixes: every function of hw/rdma/ernic_X.c is named ernic_X or
  ernic_X_* (ernic.c, the PCI glue, ernic_*);
- layers: a file calls (or takes the address of) only functions of the
  files after it in docs/engine.md's table of layers, read top row first
  and left to right; every file of hw/rdma is in the table once;
- rules: QEMU's rules for device code (docs/security.md, rule 4): no
  file of hw/rdma releases or takes the BQL, yields its thread, or
  reads or writes a re-entrancy guard; the device's guard appears only
  as the argument QEMU's constructors take (qemu_new_nic(),
  qemu_bh_new_guarded()), as in igb and nvme.

Functions and where they are defined come from universal-ctags; the
names a file uses are the identifiers of its code without comments and
strings. Static functions of one file never count as another's.
"""
import json
import os
import re
import subprocess
import sys

MAX_LINES = 60


def tags(root, files):
    out = subprocess.run(['ctags', '--output-format=json', '--fields=+ne',
                          '--kinds-C=f', '-f', '-'] + files, cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def code_names(path):
    with open(path) as f:
        s = f.read()
    s = re.sub(r'/\*.*?\*/', ' ', s, flags=re.S)
    s = re.sub(r'//[^\n]*', ' ', s)
    s = re.sub(r'"(\\.|[^"\\])*"', '""', s)
    s = re.sub(r"'(\\.|[^'\\])'", "''", s)
    return set(re.findall(r'\b[A-Za-z_]\w*\b', s))


def layer_order(root):
    """The files of the table of layers, highest first."""
    with open(os.path.join(root, 'docs', 'engine.md')) as f:
        text = f.read()
    sec = text.split('\n## Layers\n', 1)[1].split('\n## ', 1)[0]
    order = []
    for line in sec.splitlines():
        if line.startswith('| ') and not line.startswith('| layer') and \
           not line.startswith('|---'):
            cells = line.split('|')
            order += re.findall(r'`([\w.]+\.c)`', cells[2])
    return order


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def point(self, ok, name, why=()):
        self.n += 1
        print(f'{"ok" if ok else "not ok"} {self.n} - {name}')
        for w in why:
            print(f'# {w}')
        if not ok:
            self.failed += 1


def main():
    root = sys.argv[1]
    which = sys.argv[2] if len(sys.argv) > 2 else 'all'
    ddir = os.path.join(root, 'hw', 'rdma')
    files = sorted(f for f in os.listdir(ddir) if f.endswith('.c'))
    rows = tags(ddir, files)
    exported = {r['name']: r['path'] for r in rows if not r.get('file')}
    tap = Tap()

    if which in ('all', 'functions'):
        check_functions(tap, files, rows)
    if which in ('all', 'layers'):
        check_layers(tap, root, ddir, files, exported)
    if which in ('all', 'rules'):
        check_rules(tap, ddir, files)
    print(f'1..{tap.n}')
    return 1 if tap.failed else 0


def check_functions(tap, files, rows):
    for f in files:
        long = [f'{r["name"]}(): {r["end"] - r["line"] + 1} lines'
                for r in rows if r['path'] == f and
                r['end'] - r['line'] + 1 > MAX_LINES]
        tap.point(not long, f'functions {f}: at most {MAX_LINES} lines',
                  long)

    for f in files:
        prefix = f[:-2]
        bad = [r['name'] for r in rows if r['path'] == f and
               f != 'ernic.c' and r['name'] != prefix and
               not r['name'].startswith(prefix + '_')]
        tap.point(not bad, f'prefixes {f}: {prefix}_*',
                  [f'{n}() lacks the prefix' for n in bad])


FORBIDDEN = re.compile(r'\b(bql_unlock|bql_lock|BQL_LOCK_GUARD|'
                       r'qemu_mutex_unlock_iothread|engaged_in_io|'
                       r'g_thread_yield|sched_yield)\b')
GUARD = re.compile(r'mem_reentrancy_guard')
GUARD_ARG = re.compile(r'(qemu_new_nic|qemu_bh_new_guarded)\s*\([^;]*'
                       r'&\s*(DEVICE\(\w+\)|\w+)->mem_reentrancy_guard'
                       r'[^;]*;', re.S)


def code_text(path):
    with open(path) as f:
        s = f.read()
    s = re.sub(r'/\*.*?\*/', ' ', s, flags=re.S)
    s = re.sub(r'//[^\n]*', ' ', s)
    return re.sub(r'"(\\.|[^"\\])*"', '""', s)


def check_rules(tap, ddir, files):
    for f in files:
        s = code_text(os.path.join(ddir, f))
        why = [f'uses {m}' for m in sorted(set(FORBIDDEN.findall(s)))]
        rest = GUARD_ARG.sub(' ', s)
        rest = re.sub(r'MemReentrancyGuard\s*\*\s*\w+\s*=\s*'
                      r'&DEVICE\(\w+\)->mem_reentrancy_guard;', ' ', rest)
        n = len(GUARD.findall(rest))
        if n:
            why.append(f'touches mem_reentrancy_guard {n} time(s) other '
                       'than as a constructor argument')
        tap.point(not why, f'rules {f}: no BQL release, no guard touched',
                  why)


def check_layers(tap, root, ddir, files, exported):
    order = layer_order(root)
    missing = sorted(set(files) - set(order))
    extra = sorted(set(order) - set(files))
    dup = sorted({f for f in order if order.count(f) > 1})
    tap.point(not (missing or extra or dup),
              'layers: docs/engine.md lists every file once',
              [f'not in the table: {m}' for m in missing] +
              [f'no such file: {e}' for e in extra] +
              [f'listed twice: {d}' for d in dup])
    rank = {f: i for i, f in enumerate(order)}
    for f in files:
        why = []
        for name in sorted(code_names(os.path.join(ddir, f))):
            g = exported.get(name)
            if g and g != f and rank.get(g, -1) <= rank.get(f, -1):
                why.append(f'{name}() of {g} is not below {f}')
        tap.point(not why, f'layers {f}: calls go down', why)


if __name__ == '__main__':
    sys.exit(main())
