#!/usr/bin/env bash
# Fuzz the ernic device (docs/fuzzing.md): the structure-aware fuzzer
# (qtest/ernic-fuzz.c) against an ASan+UBSan build of QEMU, in runs of
# fixed, logged seeds over several configurations (num-qp 8/32/256, wire
# and hub topologies, layout=reconic with its card memory).
#
# usage: scripts/fuzz.sh [SECONDS] [-j JOBS] [--seed BASE] [--chunk SECONDS]
#                        [--no-minimize] [--no-build] [--build DIR]
#        scripts/fuzz.sh --replay 'ARGS'    run one fuzzer command line again
#        scripts/fuzz.sh --generic [SECONDS] [--seed N]
#                        QEMU's own libFuzzer generic fuzzer, target
#                        generic-fuzz-ernic (clang build, build/qemu-fuzz)
#
# Every run's command line is in the log (build/fuzz/fuzz-*.log); a failing
# one is replayed and minimised (scripts/fuzz-minimize.py) to a short list
# of actions. Ends with "N passed, N failed" (one per run). Exit 1 on any
# finding: QEMU died (sanitizer report, abort, signal), a hang (a qtest
# command not answered within 20 s), or a spin (the main loop busy with
# nothing to do).
set -euo pipefail
. "$(dirname "$0")/common.sh"

seconds=120 jobs=2 base=1 chunk=60 minimize=1 replay= build=1 generic=0
work=$ERNIC_ROOT/build
while [ $# -gt 0 ]; do
    case $1 in
    --no-build) build=0; shift ;;
    --generic) generic=1; shift ;;
    --build) work=$(cd "$2" && pwd); shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --seed) base=$2; shift 2 ;;
    --chunk) chunk=$2; shift 2 ;;
    --no-minimize) minimize=0; shift ;;
    --replay) replay=$2; shift 2 ;;
    [0-9]*) seconds=$1; shift ;;
    *) die "usage: scripts/fuzz.sh [SECONDS] [-j JOBS] [--seed BASE] [--chunk S] [--no-minimize] | --replay 'ARGS'" ;;
    esac
done

if [ "$generic" = 1 ]; then
    # QEMU's generic fuzzer: MMIO/PIO and DMA patterns from libFuzzer, the
    # "ernic" configuration overlaid into generic_fuzz_configs.h.
    "$ERNIC_ROOT/scripts/build.sh" "$work" >&2
    "$ERNIC_ROOT/scripts/build-qemu-fuzz.sh" "$work"
    outdir=$work/fuzz/generic
    mkdir -p "$outdir/corpus"
    log "generic-fuzz-ernic for ${seconds} s, seed $base, artifacts in $outdir"
    rc=0
    ASAN_OPTIONS=detect_leaks=0 \
        "$work/qemu-fuzz/qemu-fuzz-x86_64" --fuzz-target=generic-fuzz-ernic \
        -seed="$base" -max_total_time="$seconds" \
        -artifact_prefix="$outdir/" "$outdir/corpus" || rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "1 passed, 0 failed"
    else
        log "finding: replay with $work/qemu-fuzz/qemu-fuzz-x86_64 --fuzz-target=generic-fuzz-ernic $outdir/crash-*"
        echo "0 passed, 1 failed"
    fi
    exit "$rc"
fi
if [ "$build" = 1 ]; then
    "$ERNIC_ROOT/scripts/build.sh" "$work" >&2
    "$ERNIC_ROOT/scripts/build-qemu-asan.sh" "$work"
fi
fuzzer=$work/qemu-build/tests/qtest/ernic-fuzz
export QTEST_QEMU_BINARY=$work/qemu-asan/qemu-system-x86_64
# Sanitizers stop at the first report; leaks at exit are QEMU's, not ours.
export_sanitizer_options

outdir=$work/fuzz
mkdir -p "$outdir"
log=$outdir/fuzz-$(date +%Y%m%d-%H%M%S).log

# A run failed if the fuzzer failed or QEMU printed a sanitizer report.
run_failed() {
    local rc=$1 out=$2
    [ "$rc" -ne 0 ] && return 0
    grep -qE 'runtime error|AddressSanitizer|LeakSanitizer|SUMMARY: ' "$out"
}

if [ -n "$replay" ]; then
    out=$(mktemp)
    # shellcheck disable=SC2086
    "$fuzzer" $replay --print >"$out" 2>&1 && rc=0 || rc=$?
    cat "$out"
    run_failed "$rc" "$out" && { rm -f "$out"; exit 1; }
    rm -f "$out"
    exit 0
fi

# The configurations, in turn; seed = BASE + run number.
configs=("--num-qp 8" "--num-qp 32" "--num-qp 256" "--num-qp 32 --hub"
         "--num-qp 256 --hub" "--num-qp 64" "--num-qp 32 --reconic")
log "fuzzing for ${seconds} s, $jobs jobs, base seed $base, log $log"
echo "# ernic fuzz: ${seconds} s, $jobs jobs, base seed $base, QEMU $QTEST_QEMU_BINARY" >"$log"

pass=0 fail=0 actions=0 frames=0 n=0
failed_args=()
end=$(( $(date +%s) + seconds ))
declare -A pids=() outs=() argsof=()
while :; do
    now=$(date +%s)
    # Start runs while there is time and a free job slot.
    while [ "${#pids[@]}" -lt "$jobs" ] && [ "$now" -lt "$end" ]; do
        left=$(( end - now ))
        len=$(( left < chunk ? left : chunk ))
        [ "$len" -lt 5 ] && break
        seed=$(( base + n ))
        args="--seed $seed ${configs[n % ${#configs[@]}]} --seconds $len"
        out=$outdir/run-$seed.out
        echo "RUN $args" >>"$log"
        # shellcheck disable=SC2086
        "$fuzzer" $args >"$out" 2>&1 &
        pids[$n]=$!
        outs[$n]=$out
        argsof[$n]=$args
        n=$(( n + 1 ))
    done
    [ "${#pids[@]}" -eq 0 ] && break
    # Reap the runs that ended.
    for k in "${!pids[@]}"; do
        if ! kill -0 "${pids[$k]}" 2>/dev/null; then
            wait "${pids[$k]}" && rc=0 || rc=$?
            out=${outs[$k]}
            cat "$out" >>"$log"
            read -r a f < <(awk '/^FUZZ-DONE/ { print $5, $7 }' "$out"; echo)
            actions=$(( actions + ${a:-0} ))
            frames=$(( frames + ${f:-0} ))
            if run_failed "$rc" "$out"; then
                fail=$(( fail + 1 ))
                failed_args+=("${argsof[$k]}")
                log "FINDING (exit $rc): ${argsof[$k]}; output in $out"
                echo "FINDING exit $rc: ${argsof[$k]}" >>"$log"
            else
                pass=$(( pass + 1 ))
                rm -f "$out"
            fi
            unset "pids[$k]" "outs[$k]" "argsof[$k]"
        fi
    done
    sleep 1
    now=$(date +%s)
    [ $(( now % 30 )) -eq 0 ] && log "progress: $pass runs passed, $fail failed, $actions actions, $frames frames"
done

summary="fuzz: $n runs, $actions actions, $frames frames, seeds $base..$(( base + n - 1 )), $fail findings"
log "$summary"
echo "$summary" >>"$log"
if [ "$fail" -gt 0 ] && [ "$minimize" = 1 ]; then
    for a in "${failed_args[@]}"; do
        log "minimising: $a"
        "$ERNIC_PYTHON" "$ERNIC_ROOT/scripts/fuzz-minimize.py" "$fuzzer" $a \
            2>&1 | tee -a "$log" >&2 || true
    done
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
