#!/usr/bin/env bash
# Board software's time budgets against ernic (docs/boards.md, "Time
# budgets"), between two TCG guests with layout=reconic:
#  1. RecoNIC's patience: reconic-rdma's matrix (READ, WRITE, SEND of
#     128 B, 4 KiB, 64 KiB, to and from card and host memory, 30 single
#     operations) 20 times, each completion within RecoNIC's 1000 reads of
#     CQHEADi (poll_cq_cidb()'s TIMEOUT_THRESHOLD), RUNS times;
#  2. the engine's latencies over 1020 operations from both QEMUs' traces
#     (scripts/trace-latency.py): doorbell to first frame, ACK to CQE;
#  3. first touch: the first operation into untouched card memory against
#     the later ones, with preallocated card memory and with a lazily
#     backed memory backend.
# Prints what it measured; exits non-zero if an operation of step 1 went
# over the budget. Takes about a minute per run of step 1.
# usage: board-timing.sh [--runs N] WORKDIR
set -euo pipefail
. "$(dirname "$0")/common.sh"

runs=3
if [ "${1:-}" = --runs ]; then
    runs=$2
    shift 2
fi
[ $# -eq 1 ] || die "usage: board-timing.sh [--runs N] WORKDIR"
work=$(cd "$1" && pwd)
test_sh=$ERNIC_ROOT/scripts/guest-reconic-test.sh
dir=$work/guest/reconic
bad=0

matrix_line() {
    grep -h 'reconic: matrix:' "$dir/client" | sed 's/^guest: reconic: //'
}

log "1. RecoNIC's budget of 1000 CQHEADi reads, 600 operations, $runs runs"
for r in $(seq 1 "$runs"); do
    "$test_sh" --reps 20 --budget 1000 "$work" >/dev/null 2>&1 || true
    line=$(matrix_line)
    echo "run $r: $line"
    case $line in
    *" 0 over a budget"*) ;;
    *) bad=1 ;;
    esac
done

log "2. latencies over 1020 operations (traces of both QEMUs)"
"$test_sh" --reps 34 --budget 1000 --trace "$work" >/dev/null 2>&1 || true
matrix_line
python3 "$ERNIC_ROOT/scripts/trace-latency.py" "$dir/client.trace" \
    "$dir/server.trace"

log "3. first touch of card memory (first operation against later ones)"
for card in own lazy; do
    "$test_sh" --reps 5 --budget 0 --card "$card" "$work" >/dev/null 2>&1 ||
        true
    echo "card memory $card:"
    grep -hE 'matrix (write|read) [a-z]+->card' \
        "$dir/client" | sed 's/^guest: reconic: /  /;s/, CQHEADi.*//'
done
exit "$bad"
