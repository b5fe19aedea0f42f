#!/usr/bin/env bash
# Run the engine benchmark (bench/ernic-bench.c): RDMA WRITE, SEND and READ
# throughput and latency between two ernic devices without a guest, next
# to the raw cost of the same frames on the same netdev. Not a test.
# --engine: the devices with nothing of the bench's between them (two
# QEMUs on -netdev stream over AF_UNIX, then two devices on one hub), the
# QEMUs' CPU time per frame, and the host's memcpy, CRC-32 and AF_UNIX
# frame pump in the same run (docs/engine.md, "The engine alone").
#
# Usage: scripts/bench.sh [--engine] [MiB per point, default 64]
set -euo pipefail
. "$(dirname "$0")/common.sh"

"$ERNIC_ROOT/scripts/build.sh"
bld="$ERNIC_ROOT/build/qemu-build"
if [ "${1:-}" = --engine ]; then
    export ERNIC_BENCH_ENGINE=1
    shift
fi
export ERNIC_BENCH_MB=${1:-64}
export QTEST_QEMU_BINARY="$bld/qemu-system-x86_64"
log "benchmark: $ERNIC_BENCH_MB MiB per point"
"$bld/tests/qtest/ernic-bench" | grep -v '^# [SE]\|^# random\|^1\.\.\|^ok '
