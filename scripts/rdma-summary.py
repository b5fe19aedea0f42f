#!/usr/bin/env python3
"""Condense the two-guest RDMA transcript (scripts/guest-rdma-test.sh)
into the summary that the README's main command prints.

usage: rdma-summary.py SECONDS < transcript
"""
import re
import sys


def main():
    secs = float(sys.argv[1])
    lines = [l.rstrip('\n') for l in sys.stdin]
    client = [l[len('client: '):] for l in lines if l.startswith('client: ')]
    server = [l[len('server: '):] for l in lines if l.startswith('server: ')]

    rounds, cur = [], None
    for l in client:
        if l.startswith('round '):
            cur = []
            rounds.append(cur)
        elif cur is not None:
            cur.append(l)

    print('ernic two-guest RDMA demo: two TCG guests with -device ernic, '
          'joined by -netdev stream on 127.0.0.1')
    print('  server 10.1.0.1  <== RoCEv2 over the emulated ERNICs ==>  '
          'client 10.1.0.2')
    for n, r in enumerate(rounds, 1):
        print()
        print('Round %d%s' % (n, '' if n == 1 else
                               ' (after rmmod/insmod of ernic and ernic_test)'))
        show_round(r)
    print()
    fatal = [l for l in server if 'FATAL, code' in l]
    print('Server: %s; its QP went FATAL %d time(s) (%s) and was recovered '
          'each time' % (
              next((l for l in server if l.startswith('server served')),
                   'served ?'),
              len(fatal),
              ', '.join(sorted({re.sub(r'.*(code 0x..).*', r'\1', l)
                                for l in fatal})) or 'none'))
    ok = sum(1 for l in client if l.startswith('ok '))
    bad = [l for l in client + server if l.startswith('FAIL')]
    cres = 'PASS' if 'RESULT PASS' in client else 'FAIL'
    sres = 'PASS' if 'RESULT PASS' in server else 'FAIL'
    print('Result: client %s (%d checks passed, %d failed), server %s; '
          'both unloaded their modules without kernel warnings: %s; '
          '%.1f s' % (cres, ok, len(bad), sres,
                      'yes' if cres == sres == 'PASS' else 'see above', secs))
    for l in bad:
        print('  ' + l)
    return 0 if cres == sres == 'PASS' else 1


def status(r, pat):
    for l in r:
        if re.match(r'(ok|FAIL) ' + pat, l):
            return 'ok' if l.startswith('ok') else 'FAIL'
    return '-'


def show_frwr(r):
    if any('no fast registration' in l for l in r):
        print('  fast registration (ERNIC-X): not offered, skipped')
        return
    fr = [l for l in r if re.match(
        r'(ok|FAIL) (ib_alloc_mr|REG_MR|server (WRITE|READ) of \d+ B '
        r'through|LOCAL_INV|ib_dereg_mr)', l)]
    print('  fast registration (ERNIC-X): %d of %d checks ok (REG_MR of 4 '
          'scattered pages, the server WRITEs and READs through the key, '
          'LOCAL_INV, twice)' % (sum(l.startswith('ok') for l in fr),
                                 len(fr)))


def show_round(r):
    conn = next((l for l in r if 'rdma_cm connected' in l), None)
    qp = next((l for l in r if l.startswith('local QP')), '')
    if not conn or conn.startswith('FAIL'):
        print('  rdma_cm: ' + (conn or 'no connection'))
        return
    print('  rdma_cm connected (CM MADs over QP1); %s' % qp)
    sizes = []
    for l in r:
        m = re.match(r'(ok|FAIL) WRITE (\d+) B', l)
        if m:
            sizes.append(m.group(2))
    print('  data, checked byte for byte:')
    print('    %8s  %5s  %5s  %9s  %9s' % ('bytes', 'WRITE', 'READ',
                                           'SEND c>s', 'SEND s>c'))
    for s in sizes:
        print('    %8s  %5s  %5s  %9s  %9s' % (
            s, status(r, 'WRITE %s B' % s), status(r, 'READ %s B' % s),
            status(r, 'SEND %s B client' % s),
            status(r, 'SEND %s B server' % s)))
    print('  WRITE_IMM %s, SEND_IMM %s, SEND_INV %s (3000 B)' % (
        status(r, 'WRITE_IMM'), status(r, 'SEND_IMM'), status(r, 'SEND_INV')))
    show_frwr(r)
    walk = [l for l in r if re.match(r'(ok|FAIL) [A-Z]+ -> [A-Z]+', l)]
    legal = [l for l in walk if 'refused' not in l]
    refused = [l for l in walk if 'refused' in l]
    posts = [l for l in r if re.match(r'(ok|FAIL) post_(send|recv) in', l)]
    flush = [l for l in r if 'flush' in l.lower() and
             l.startswith(('ok', 'FAIL'))]
    print('  IBTA state walk: %d legal transitions taken, %d illegal or '
          'incomplete ones refused, %d posting checks, %d flush checks%s' % (
              sum(l.startswith('ok') for l in legal),
              sum(l.startswith('ok') for l in refused),
              sum(l.startswith('ok') for l in posts),
              sum(l.startswith('ok') for l in flush),
              '' if all(l.startswith('ok') for l in walk + posts + flush)
              else ' (FAILURES)'))
    drv = [l for l in r if 'FATAL, code' in l]
    print('  bad R_Key WRITE: %s; no event on the requester %s; '
          'driver: %s' % (
        status(r, 'WRITE with a bad R_Key completes with IB_WC_REM_ACCESS_ERR'),
        status(r, 'no async event on the requester'),
        re.sub(r'.*(QP\d+ FATAL.*)', r'\1', drv[0]) if drv else '?'))
    print('  recovery (ERR -> RESET runs PG332 fatal recovery -> RTS): %s; '
          'QP reused: ping %s, WRITE 64 KiB %s, READ 64 KiB %s' % (
              status(r, 'QP recovered'), status(r, 'QP reused: ping'),
              status(r, 'QP reused: WRITE'), status(r, 'QP reused: READ')))


if __name__ == '__main__':
    sys.exit(main())
