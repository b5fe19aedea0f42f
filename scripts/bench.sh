#!/usr/bin/env bash
# Run the engine benchmark (bench/ernic-bench.c): RDMA WRITE, SEND and READ
# throughput and latency between two ernic devices without a guest, next
# to the raw cost of the same frames on the same netdev. Not a test.
# --engine: the devices with nothing of the bench's between them (two
# QEMUs on -netdev stream over AF_UNIX, then two devices on one hub), the
# QEMUs' CPU time per frame, and the host's memcpy, CRC-32 and AF_UNIX
# frame pump in the same run (docs/engine.md, "The engine alone").
# --tap (with --engine, as root): also two QEMUs on tap devices of one
# Linux bridge, made for the run (ernbr0, ernt0, ernt1, MTU 9000, tap
# queues of 10 000 frames: at 1 000 the bridge drops frames) and
# removed after it.
#
# Usage: scripts/bench.sh [--engine [--tap]] [MiB per point, default 64]
set -euo pipefail
. "$(dirname "$0")/common.sh"

tap_down() {
    ip link del ernt0 2>/dev/null || true
    ip link del ernt1 2>/dev/null || true
    ip link del ernbr0 2>/dev/null || true
}

tap_up() {
    [ "$(id -u)" = 0 ] || die "--tap makes a bridge and taps: run as root"
    tap_down
    trap tap_down EXIT
    ip link add ernbr0 type bridge
    ip link set ernbr0 mtu 9000 up
    for t in ernt0 ernt1; do
        ip tuntap add "$t" mode tap
        ip link set "$t" mtu 9000 txqueuelen 10000 master ernbr0 up
    done
    export ERNIC_BENCH_TAP=ernt0,ernt1
}

"$ERNIC_ROOT/scripts/build.sh" "$ERNIC_ROOT/build" qemu
bld="$ERNIC_ROOT/build/qemu-build"
if [ "${1:-}" = --engine ]; then
    export ERNIC_BENCH_ENGINE=1
    shift
    if [ "${1:-}" = --tap ]; then
        tap_up
        shift
    fi
fi
export ERNIC_BENCH_MB=${1:-64}
export QTEST_QEMU_BINARY="$bld/qemu-system-x86_64"
log "benchmark: $ERNIC_BENCH_MB MiB per point"
"$bld/tests/qtest/ernic-bench" | grep -v '^# [SE]\|^# random\|^1\.\.\|^ok '
